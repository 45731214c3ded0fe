/*
 * newrma build shim (out-of-tree builds only).
 *
 * ompi/op/op.h includes this Fortran-binding header, which Debian's
 * libopenmpi-dev does not install.  op.h itself uses none of its
 * conversion macros, and newrma has no Fortran bindings, so an empty
 * header with the same guard is all a C component needs.  The guard name
 * matches Open MPI's so that a real copy, if one is ever on the include
 * path first, wins without redefinition errors.
 */
#ifndef OMPI_FORTRAN_BASE_FINT_2_INT_H
#define OMPI_FORTRAN_BASE_FINT_2_INT_H
#endif
