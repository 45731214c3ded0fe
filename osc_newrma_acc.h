/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * Copyright (c) 2026 The newrma developers.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */
/*
 * osc/newrma: the accumulate family (osc_newrma_acc.c), for both tables.
 */

#ifndef OSC_NEWRMA_ACC_H
#define OSC_NEWRMA_ACC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ompi_win_t;
struct ompi_datatype_t;
struct ompi_op_t;

int osc_newrma_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                          int target, ptrdiff_t target_disp, int target_count,
                          struct ompi_datatype_t *target_dt, struct ompi_op_t *op, struct ompi_win_t *win);
int osc_newrma_get_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                              void *result_addr, int result_count, struct ompi_datatype_t *result_dt,
                              int target, ptrdiff_t target_disp, int target_count,
                              struct ompi_datatype_t *target_dt, struct ompi_op_t *op, struct ompi_win_t *win);
int osc_newrma_fetch_and_op(const void *origin_addr, void *result_addr, struct ompi_datatype_t *dt,
                            int target, ptrdiff_t target_disp, struct ompi_op_t *op, struct ompi_win_t *win);
int osc_newrma_compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                struct ompi_datatype_t *dt, int target, ptrdiff_t target_disp,
                                struct ompi_win_t *win);

/* The path-independent checks of an accumulate (epoch, sizes, one
 * predefined target type); *bytes: the target's bytes (0: nothing to do). */
int osc_newrma_acc_validate(struct ompi_win_t *win, const void *origin_addr, int origin_count,
                            struct ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                            struct ompi_datatype_t *result_dt, int target, int target_count,
                            struct ompi_datatype_t *target_dt, struct ompi_op_t *op, size_t *bytes);

/* At a target, with the AM lock held: combine packed origin data (NULL for
 * MPI_NO_OP) into `target`, old values packed into packed_result (or NULL). */
int osc_newrma_acc_apply_packed(void *target, int target_count, struct ompi_datatype_t *target_dt,
                                const void *packed_origin, size_t bytes, struct ompi_op_t *op,
                                void *packed_result);

/* Stripe shift for a granularity: log2 rounded up (a stripe covers a power
 * of two of bytes, at least the granularity asked for, so picking one is a
 * shift on every accumulate's path instead of a division). */
unsigned int osc_newrma_acc_shift(size_t granularity);

/* The accumulate stripes one operation holds: first .. first + count - 1
 * (mod the window's stripe count) of `rank`'s window. */
typedef struct {
    int rank;
    unsigned int first, count;
} osc_newrma_acc_locks_t;

/* At a target serving an assisted operation (osc_newrma_mailbox.c), on its
 * own window: take every accumulate stripe covering [offset, offset +
 * span) without waiting (false, holding none, if one is held: progress
 * must never wait, the holder may be this very thread), give them back;
 * combine n packed elements as every path does, old values out first (old
 * may not overlap origin). */
struct ompi_osc_newrma_module_t;
bool osc_newrma_acc_stripes_trylock(struct ompi_osc_newrma_module_t *module, uint64_t offset, size_t span,
                                    osc_newrma_acc_locks_t *locks);
void osc_newrma_acc_stripes_unlock(struct ompi_osc_newrma_module_t *module, const osc_newrma_acc_locks_t *locks);
void osc_newrma_acc_combine(struct ompi_op_t *op, struct ompi_datatype_t *dt, char *target, const void *origin,
                            void *old, size_t n, size_t esize);

/* An accumulate (old values into `result` if not NULL) or a
 * compare-and-swap of one `size`-byte element at range-checked `taddr`, by
 * the single-copy path alone: a withdrawn assisted one. */
int osc_newrma_acc_single_copy(struct ompi_osc_newrma_module_t *module, const void *origin, void *result,
                               int count, struct ompi_datatype_t *dt, int target, ptrdiff_t disp,
                               struct ompi_op_t *op);
int osc_newrma_cas_single_copy(struct ompi_osc_newrma_module_t *module, int target, uint64_t taddr,
                               const void *origin, const void *compare, void *result, size_t size);

bool osc_newrma_cas_type_ok(struct ompi_datatype_t *dt);

/* The simple case of an accumulate (origin, target and result `count`
 * elements of one predefined type packed at its size): whether it is, and
 * its combine in place at `target` (old values into `result` if not NULL),
 * the caller holding the stripes -- the mixed table's node route. */
bool osc_newrma_acc_simple(struct ompi_datatype_t *origin_dt, int origin_count, struct ompi_datatype_t *result_dt,
                           int result_count, int count, struct ompi_datatype_t *dt, struct ompi_op_t *op);
void osc_newrma_acc_combine_simple(struct ompi_op_t *op, struct ompi_datatype_t *dt, char *target, const void *origin,
                                   void *result, int count);
bool osc_newrma_fop_op_ok(struct ompi_op_t *op, struct ompi_datatype_t *dt);

#endif
