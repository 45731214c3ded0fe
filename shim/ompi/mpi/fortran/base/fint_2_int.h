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
 * newrma build shim (out-of-tree builds only).
 *
 * ompi/op/op.h includes this Fortran-binding header, which Debian's
 * libopenmpi-dev does not install.  op.h's inline ompi_op_reduce() converts
 * the element count for user-defined Fortran ops with OMPI_INT_2_FINT; that
 * is all a C component needs from it.  MPI_Fint is a C int in every Open MPI
 * build Debian ships (mpi.h: ompi_fortran_integer_t is int), so the
 * conversions are casts.  The guard name matches Open MPI's so that a real
 * copy, if one is ever on the include path first, wins.
 */
#ifndef OMPI_FORTRAN_BASE_FINT_2_INT_H
#define OMPI_FORTRAN_BASE_FINT_2_INT_H

#define OMPI_INT_2_FINT(a) ((MPI_Fint) (a))
#define OMPI_FINT_2_INT(a) ((int) (a))

#endif
