# -*- shell-script -*-
#
# Copyright (c) 2026 The newrma developers.  All rights reserved.
# $COPYRIGHT$
#
# Additional copyrights may follow
#
# $HEADER$
#
#
# In-tree build of osc/newrma (this directory copied to ompi/mca/osc/newrma
# in an Open MPI source tree).  Open MPI's autogen.pl includes this file;
# out-of-tree builds use configure.ac instead.

# MCA_ompi_osc_newrma_CONFIG([action-if-can-compile], [action-if-cant-compile])
# ------------------------------------------------------------------------------
AC_DEFUN([MCA_ompi_osc_newrma_CONFIG],[
    AC_CONFIG_FILES([ompi/mca/osc/newrma/Makefile])

    # newrma needs POSIX shared memory (opal/shmem) and nothing else to
    # build; UCX is optional and only adds the off-node transport.
    OMPI_CHECK_UCX([osc_newrma],
                   [osc_newrma_have_ucx=1],
                   [osc_newrma_have_ucx=0])
    AC_DEFINE_UNQUOTED([OSC_NEWRMA_HAVE_UCX], [$osc_newrma_have_ucx],
                       [Whether osc/newrma is built with UCX])

    # Link the DSO against libmpi, as every in-tree OMPI component does.
    osc_newrma_LIBADD='$(top_builddir)/ompi/lib$(OMPI_LIBMPI_NAME).la'
    osc_newrma_CFLAGS=

    AC_SUBST([osc_newrma_CPPFLAGS])
    AC_SUBST([osc_newrma_CFLAGS])
    AC_SUBST([osc_newrma_LDFLAGS])
    AC_SUBST([osc_newrma_LIBS])
    AC_SUBST([osc_newrma_LIBADD])

    # notified RMA's user library (libmpix_newrma, Makefile.am) is built
    # out of tree only: Open MPI's build has no place for it
    osc_newrma_mpix_lib=
    osc_newrma_mpix_headers=
    AC_SUBST([osc_newrma_mpix_lib])
    AC_SUBST([osc_newrma_mpix_headers])

    $1
])dnl
