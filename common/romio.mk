##
## The drivers' shared ROMIO glue (this repository's common/): MPI datatypes
## and file views into the MPI-free core's descriptions, the rfs protocol's
## errors and hints in ROMIO's terms. Linked into src/mpi/romio/adio/suite_common;
## part of libromio only (nothing here runs in rfsd).
##

if BUILD_NETCORE

AM_CPPFLAGS += -I$(top_srcdir)/adio/suite_common

noinst_HEADERS +=                           \
    adio/suite_common/dtype_mpi.h           \
    adio/suite_common/dtype_view.h          \
    adio/suite_common/adio_hints.h          \
    adio/suite_common/rfs_adio.h            \
    adio/suite_common/romio_compat.h

romio_other_sources +=                      \
    adio/suite_common/dtype_mpi.c           \
    adio/suite_common/dtype_view.c          \
    adio/suite_common/adio_hints.c          \
    adio/suite_common/rfs_adio.c            \
    adio/suite_common/mount_adio.c          \
    adio/suite_common/romio_compat.c

endif BUILD_NETCORE
