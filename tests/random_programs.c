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
 * Random legal RMA programs checked against a sequential model of MPI's
 * semantics.  From a seed every rank generates the same whole program: a
 * window flavor, then epochs of every kind (fence, PSCW with the exact
 * groups, lock shared/exclusive per target, lock_all) holding random
 * operations (put, get, accumulate with SUM/REPLACE, get_accumulate with
 * SUM/REPLACE/NO_OP, fetch_and_op, compare_and_swap) of random sizes and
 * target datatypes (contiguous or strided), with flushes, flush_alls and
 * flush_locals in passive epochs.  Each rank runs its own part; every rank
 * keeps the model of every window and checks every fetched value (at the
 * flush or epoch end that completes it) and, after every epoch, its own
 * window's contents.
 *
 * What keeps a random program legal and its outcome unique: origin o only
 * touches its own region of each target's window, and within one segment
 * (up to a flush of that target or the end of the epoch) an element gets a
 * single put, or a single get, or a sequence of accumulate-family
 * operations (which MPI orders and makes atomic); besides, every origin adds
 * into a common area with MPI_SUM only (the order does not matter).
 *
 * Any rank count: a window holds one region per origin (at least 8, so the
 * programs up to 8 ranks are the same as ever) and the common area.
 *
 * Seeds: NEWRMA_SEEDS="1 2 3" (default 1 to 48: about 0.1 s); NEWRMA_RANDOM_VERBOSE=1
 * prints each program.  A longer soak: contrib/random-soak.sh.
 *
 * newrma-test: np>=1
 */
#include "common.h"

#define REGION 32                   /* int64 elements per origin per target */
#define COMMON 8                    /* the common MPI_SUM area */
#define MIN_SLOTS 8                 /* origin regions per window at least (the layout up to 8 ranks) */
#define MAX_COUNT 4

enum { EP_FENCE, EP_PSCW, EP_LOCK, EP_LOCK_ALL, EP_KINDS };
static const char *const epoch_names[EP_KINDS] = { "fence", "pscw", "lock", "lock_all" };
enum { OP_PUT, OP_GET, OP_ACC, OP_GET_ACC, OP_FOP, OP_CAS, OP_COMMON, OP_KINDS };
static const char *const op_names[OP_KINDS] = { "put", "get", "acc", "get_acc", "fop", "cas", "common_acc" };
enum { EL_FREE, EL_PUT, EL_GET, EL_ACC };

static int rank, nprocs, verbose;
static int slots;                   /* origin regions per window: max(nprocs, MIN_SLOTS) */
static int64_t *model;              /* [target][element], slots * REGION + COMMON elements per target */
static unsigned char *state;        /* this segment's use, [target][element], slots * REGION per target */
#define WIN_ELEMS (slots * REGION + COMMON)
#define MODEL(t, e) model[(size_t) (t) * (size_t) WIN_ELEMS + (size_t) (e)]
#define STATE(t, e) state[(size_t) (t) * (size_t) (slots * REGION) + (size_t) (e)]
static int errors_before;

/* ---- deterministic generator ------------------------------------------ */

static uint64_t rng;
static uint64_t next_random(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int pick(int n) { return (int) (next_random() % (uint64_t) n); }

/* ---- pending checks of fetched values ------------------------------------ */

typedef struct {
    int64_t *buf;                   /* result buffer (owned) */
    int64_t expected[MAX_COUNT];
    int count, target;
    char what[96];
} fetch_check_t;

/* both grow with the program: an epoch holds more operations at more ranks */
static fetch_check_t *pending;
static int npending, max_pending;
static void **origin_bufs;
static int norigin_bufs, max_origin_bufs;

static void *arena(size_t bytes)
{
    void *p = calloc(1, bytes);
    if (norigin_bufs == max_origin_bufs) {
        max_origin_bufs = max_origin_bufs ? 2 * max_origin_bufs : 256;
        origin_bufs = realloc(origin_bufs, (size_t) max_origin_bufs * sizeof *origin_bufs);
    }
    origin_bufs[norigin_bufs++] = p;
    return p;
}

static fetch_check_t *new_pending(void)
{
    if (npending == max_pending) {
        max_pending = max_pending ? 2 * max_pending : 256;
        pending = realloc(pending, (size_t) max_pending * sizeof *pending);
    }
    return &pending[npending++];
}

/* Check (and forget) the fetches of `target` (-1: all) that are complete. */
static void check_fetches(int target)
{
    int kept = 0;
    for (int i = 0 ; i < npending ; ++i) {
        fetch_check_t *c = &pending[i];
        if (target >= 0 && c->target != target) {
            pending[kept++] = *c;
            continue;
        }
        for (int k = 0 ; k < c->count ; ++k) {
            CHECK(c->buf[k] == c->expected[k], "%s: element %d fetched %lld, the model says %lld", c->what, k,
                  (long long) c->buf[k], (long long) c->expected[k]);
        }
        free(c->buf);
    }
    npending = kept;
}

/* A segment of `origin` (-1: every origin's) at `target` (-1: all) ends:
 * its elements are free again. */
static void segment_ends(int origin, int target)
{
    for (int t = 0 ; t < nprocs ; ++t) {
        if (target >= 0 && t != target) {
            continue;
        }
        if (origin < 0) {
            memset(&STATE(t, 0), EL_FREE, (size_t) (slots * REGION));
        } else {
            memset(&STATE(t, origin * REGION), EL_FREE, REGION);
        }
    }
}

static void release_origin_buffers(void)
{
    for (int i = 0 ; i < norigin_bufs ; ++i) {
        free(origin_bufs[i]);
    }
    norigin_bufs = 0;
}

/* ---- one operation ----------------------------------------------------- */

typedef struct {
    int kind, target, first, count, stride;   /* elements first, first+stride, ... of the region */
    MPI_Op op;
} op_t;

static const char *op_label(MPI_Op op)
{
    return MPI_SUM == op ? "sum" : MPI_REPLACE == op ? "replace" : MPI_NO_OP == op ? "no_op" : "-";
}

/* The elements an operation touches, as window indices at the target. */
static int element(const op_t *op, int origin, int k)
{
    return OP_COMMON == op->kind ? slots * REGION + op->first + k : origin * REGION + op->first + k * op->stride;
}

/* Whether the op may join the current segment, and mark it. */
static int claim(const op_t *op, int origin)
{
    int use = OP_PUT == op->kind ? EL_PUT : OP_GET == op->kind ? EL_GET : EL_ACC;
    if (OP_COMMON == op->kind) {
        return 1;
    }
    for (int k = 0 ; k < op->count ; ++k) {
        unsigned char s = STATE(op->target, element(op, origin, k));
        if (EL_FREE != s && !(EL_ACC == s && EL_ACC == use)) {
            return 0;
        }
    }
    for (int k = 0 ; k < op->count ; ++k) {
        STATE(op->target, element(op, origin, k)) = (unsigned char) use;
    }
    return 1;
}

static int64_t combine(MPI_Op op, int64_t old, int64_t value)
{
    return MPI_SUM == op ? old + value : MPI_REPLACE == op ? value : old;
}

/* Generate the next operation of `origin` in the program; NULL-kind (-1) if
 * it would conflict. */
static op_t generate_op(int origin, const int *targets, int ntargets)
{
    static const MPI_Op acc_ops[] = { MPI_SUM, MPI_REPLACE };
    static const MPI_Op fetch_ops[] = { MPI_SUM, MPI_REPLACE, MPI_NO_OP };
    op_t op = { .kind = pick(OP_KINDS), .target = targets[pick(ntargets)], .stride = 1 + pick(2) };

    op.count = OP_FOP == op.kind || OP_CAS == op.kind ? 1 : 1 + pick(MAX_COUNT);
    op.first = pick(REGION - (op.count - 1) * op.stride);
    op.op = OP_ACC == op.kind ? acc_ops[pick(2)] : OP_GET_ACC == op.kind || OP_FOP == op.kind ? fetch_ops[pick(3)]
          : OP_COMMON == op.kind ? MPI_SUM : MPI_OP_NULL;
    if (OP_COMMON == op.kind) {
        op.first = pick(COMMON - op.count + 1);
        op.stride = 1;
    }
    if (!claim(&op, origin)) {
        op.kind = -1;
    }
    return op;
}

/* The model's effect of the op; `fetched` gets what it returns. */
static void model_apply(const op_t *op, int origin, const int64_t *values, int64_t compare, int64_t *fetched)
{
    for (int k = 0 ; k < op->count ; ++k) {
        int64_t *e = &MODEL(op->target, element(op, origin, k));
        fetched[k] = *e;
        switch (op->kind) {
        case OP_PUT: *e = values[k]; break;
        case OP_GET: break;
        case OP_CAS: if (*e == compare) *e = values[k]; break;
        default: *e = combine(op->op, *e, values[k]);
        }
    }
}

/* A target datatype covering the op's elements. */
static MPI_Datatype target_type(const op_t *op, int *count)
{
    MPI_Datatype t;
    if (1 == op->stride || 1 == op->count) {
        *count = op->count;
        return MPI_INT64_T;
    }
    MPI_Type_vector(op->count, 1, op->stride, MPI_INT64_T, &t);
    MPI_Type_commit(&t);
    *count = 1;
    return t;
}

/* Every rank applies the op to the model; the origin also makes the MPI call. */
static void run_op(const op_t *op, test_win_t *tw, int origin, int seed, int epoch, int index)
{
    int64_t values[MAX_COUNT], expected[MAX_COUNT], compare = 0;
    int tcount;

    for (int k = 0 ; k < op->count ; ++k) {
        values[k] = (int64_t) (next_random() % 1000) - 500;
    }
    if (OP_CAS == op->kind) {
        compare = pick(2) ? MODEL(op->target, element(op, origin, 0)) : values[0] + 1;
    }
    model_apply(op, origin, values, compare, expected);
    if (verbose && 0 == rank) {
        printf("  seed %d epoch %d: %d %s %s -> %d [%d x%d /%d]\n", seed, epoch, origin, op_names[op->kind],
               op_label(op->op), op->target, op->first, op->count, op->stride);
    }
    if (origin != rank) {
        return;
    }
    int64_t *src = arena(sizeof(values));
    memcpy(src, values, sizeof(values));
    int64_t *cmp = arena(sizeof(int64_t));
    *cmp = compare;
    int64_t *result = NULL;
    if (OP_PUT != op->kind && OP_ACC != op->kind && OP_COMMON != op->kind) {
        fetch_check_t *c = new_pending();
        result = c->buf = malloc(sizeof(values));
        memset(result, 0x5a, sizeof(values));
        memcpy(c->expected, expected, sizeof(expected));
        c->count = op->count;
        c->target = op->target;
        snprintf(c->what, sizeof(c->what), "seed %d epoch %d op %d (%s %s -> %d [%d x%d /%d], %s)", seed, epoch, index,
                 op_names[op->kind], op_label(op->op), op->target, op->first, op->count, op->stride,
                 flavor_names[tw->flavor]);
    }
    MPI_Datatype tdt = target_type(op, &tcount);
    MPI_Aint disp = test_disp(tw, op->target, element(op, origin, 0), 8);
    switch (op->kind) {
    case OP_PUT:
        MPI_OK(MPI_Put(src, op->count, MPI_INT64_T, op->target, disp, tcount, tdt, tw->win));
        break;
    case OP_GET:
        if (NULL != result)
            MPI_OK(MPI_Get(result, op->count, MPI_INT64_T, op->target, disp, tcount, tdt, tw->win));
        break;
    case OP_ACC:
    case OP_COMMON:
        MPI_OK(MPI_Accumulate(src, op->count, MPI_INT64_T, op->target, disp, tcount, tdt, op->op, tw->win));
        break;
    case OP_GET_ACC:
        if (NULL != result)
            MPI_OK(MPI_Get_accumulate(src, op->count, MPI_INT64_T, result, op->count, MPI_INT64_T, op->target, disp,
                                      tcount, tdt, op->op, tw->win));
        break;
    case OP_FOP:
        if (NULL != result)
            MPI_OK(MPI_Fetch_and_op(src, result, MPI_INT64_T, op->target, disp, op->op, tw->win));
        break;
    case OP_CAS:
        if (NULL != result)
            MPI_OK(MPI_Compare_and_swap(src, cmp, result, MPI_INT64_T, op->target, disp, tw->win));
        break;
    }
    if (MPI_INT64_T != tdt) {
        MPI_Type_free(&tdt);
    }
}

/* ---- epochs ------------------------------------------------------------- */

/* Every origin's operations of one epoch to its allowed targets; in passive
 * epochs, random flushes between them. */
static void run_ops(test_win_t *tw, int kind, int origin, const int *targets, int ntargets, int seed, int epoch)
{
    int nops = pick(9);
    for (int i = 0 ; i < nops ; ++i) {
        op_t op = generate_op(origin, targets, ntargets);
        if (op.kind >= 0) {
            run_op(&op, tw, origin, seed, epoch, i);
        }
        if (EP_LOCK_ALL == kind && 0 == pick(5)) {
            int how = pick(3), t = targets[pick(ntargets)];
            if (origin == rank) {
                if (0 == how) MPI_OK(MPI_Win_flush(t, tw->win));
                else if (1 == how) MPI_OK(MPI_Win_flush_all(tw->win));
                else MPI_OK(MPI_Win_flush_local_all(tw->win));
                check_fetches(0 == how ? t : -1);   /* locally complete: results are in */
            }
            if (how < 2) {
                segment_ends(origin, 0 == how ? t : -1);
            }
        }
    }
}

static MPI_Group group_of(const int *ranks, int n)
{
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, n, ranks, &g);
    MPI_Group_free(&world);
    return g;
}

static void run_epoch(test_win_t *tw, int seed, int epoch)
{
    int kind = pick(EP_KINDS);
    int *target_list = malloc((size_t) nprocs * (size_t) nprocs * sizeof(int));
    int *ntargets = malloc((size_t) nprocs * sizeof(int));
#define TARGETS(o) (target_list + (size_t) (o) * (size_t) nprocs)
    /* which targets each origin uses this epoch */
    for (int o = 0 ; o < nprocs ; ++o) {
        ntargets[o] = 0;
        for (int t = 0 ; t < nprocs ; ++t) {
            if (pick(3) > 0 || t == (o + 1) % nprocs) {
                TARGETS(o)[ntargets[o]++] = t;
            }
        }
    }
    if (verbose && 0 == rank) {
        printf(" seed %d epoch %d: %s\n", seed, epoch, epoch_names[kind]);
    }
    switch (kind) {
    case EP_FENCE:
        MPI_OK(MPI_Win_fence(0, tw->win));
        for (int o = 0 ; o < nprocs ; ++o) run_ops(tw, kind, o, TARGETS(o), ntargets[o], seed, epoch);
        MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, tw->win));
        break;
    case EP_PSCW: {
        int *origins = malloc((size_t) nprocs * sizeof(int)), norigins = 0;
        for (int o = 0 ; o < nprocs ; ++o)
            for (int j = 0 ; j < ntargets[o] ; ++j)
                if (TARGETS(o)[j] == rank) origins[norigins++] = o;
        MPI_Group post = group_of(origins, norigins), start = group_of(TARGETS(rank), ntargets[rank]);
        free(origins);
        MPI_OK(MPI_Win_post(post, 0, tw->win));
        MPI_OK(MPI_Win_start(start, 0, tw->win));
        for (int o = 0 ; o < nprocs ; ++o) run_ops(tw, kind, o, TARGETS(o), ntargets[o], seed, epoch);
        MPI_OK(MPI_Win_complete(tw->win));
        MPI_OK(MPI_Win_wait(tw->win));
        MPI_Group_free(&post);
        MPI_Group_free(&start);
        break;
    }
    case EP_LOCK: {
        int *exclusive = malloc((size_t) nprocs * (size_t) nprocs * sizeof(int));
        for (int o = 0 ; o < nprocs ; ++o)
            for (int j = 0 ; j < ntargets[o] ; ++j) exclusive[o * nprocs + j] = pick(2);
        for (int o = 0 ; o < nprocs ; ++o) {
            for (int j = 0 ; j < ntargets[o] ; ++j) {
                int t = TARGETS(o)[j];
                if (o == rank)
                    MPI_OK(MPI_Win_lock(exclusive[o * nprocs + j] ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t, 0, tw->win));
                run_ops(tw, kind, o, &TARGETS(o)[j], 1, seed, epoch);
                int flush_first = pick(2);
                if (o == rank && flush_first) {
                    MPI_OK(MPI_Win_flush(t, tw->win));
                    check_fetches(t);
                }
                segment_ends(o, t);   /* the unlock (or flush) completes everything */
                if (o == rank) {
                    MPI_OK(MPI_Win_unlock(t, tw->win));
                    check_fetches(t);
                }
            }
        }
        free(exclusive);
        break;
    }
    case EP_LOCK_ALL:
        MPI_OK(MPI_Win_lock_all(0, tw->win));
        for (int o = 0 ; o < nprocs ; ++o) run_ops(tw, kind, o, TARGETS(o), ntargets[o], seed, epoch);
        MPI_OK(MPI_Win_unlock_all(tw->win));
        break;
    }
#undef TARGETS
    free(target_list);
    free(ntargets);
    check_fetches(-1);
    segment_ends(-1, -1);
    release_origin_buffers();
    /* everyone's epoch is over: my window must be the model's */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, tw->win));
    const int64_t *mem = tw->mem;
    for (int e = 0 ; e < nprocs * REGION + COMMON ; ++e) {
        int idx = e < nprocs * REGION ? e : slots * REGION + (e - nprocs * REGION);
        CHECK(mem[idx] == MODEL(rank, idx), "seed %d epoch %d (%s, %s): element %d of my window is %lld, the model "
              "says %lld", seed, epoch, epoch_names[kind], flavor_names[tw->flavor], idx, (long long) mem[idx],
              (long long) MODEL(rank, idx));
    }
    MPI_OK(MPI_Win_unlock(rank, tw->win));
}

/* Collective: whether any rank failed a check since the program began. */
static int program_failed(void)
{
    int mine = test_errors != errors_before, any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    return any;
}

static void run_program(int seed)
{
    static const int flavors[] = { FLAVOR_CREATE, FLAVOR_ALLOCATE, FLAVOR_DYNAMIC, FLAVOR_SHARED };
    test_win_t tw;
    rng = (uint64_t) seed * 0x2545f4914f6cdd1dull;
    int flavor = flavors[pick(4)];
    /* across nodes no allocate_shared window exists: the seed's program
     * runs on an allocate window (the same draws, so the same program) */
    if (FLAVOR_SHARED == flavor && test_world_spans_nodes()) flavor = FLAVOR_ALLOCATE;
    int epochs = 4 + pick(8);
    memset(model, 0, (size_t) nprocs * (size_t) WIN_ELEMS * sizeof *model);
    errors_before = test_errors;
    test_win_create(&tw, flavor, (size_t) WIN_ELEMS * sizeof *model, 8, MPI_INFO_NULL, MPI_COMM_WORLD);
    if (verbose && 0 == rank) {
        printf("seed %d: %s window, %d epochs\n", seed, flavor_names[flavor], epochs);
    }
    for (int e = 0 ; e < epochs ; ++e) {
        run_epoch(&tw, seed, e);
        if (program_failed()) {
            break;     /* the first wrong epoch says it all */
        }
    }
    test_win_free(&tw);
}

int main(int argc, char **argv)
{
    test_init(&argc, &argv);
    rank = test_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    verbose = NULL != getenv("NEWRMA_RANDOM_VERBOSE");
    slots = nprocs > MIN_SLOTS ? nprocs : MIN_SLOTS;
    model = malloc((size_t) nprocs * (size_t) WIN_ELEMS * sizeof *model);
    state = malloc((size_t) nprocs * (size_t) (slots * REGION));
    memset(state, EL_FREE, (size_t) nprocs * (size_t) (slots * REGION));
    const char *seeds = getenv("NEWRMA_SEEDS");
    if (NULL == seeds) {
        for (int s = 1 ; s <= 48 ; ++s) run_program(s);
    } else {
        char *copy = strdup(seeds), *save = NULL;
        for (char *tok = strtok_r(copy, " ,", &save) ; tok ; tok = strtok_r(NULL, " ,", &save)) {
            run_program(atoi(tok));
        }
        free(copy);
    }
    free(model);
    free(state);
    free(pending);
    free(origin_bufs);
    return test_finalize("random_programs");
}
