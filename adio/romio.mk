##
## The shared core of the romio-drivers suite (this repository's adio/),
## linked into src/mpi/romio/adio/netcore. Only the client side is part of
## libromio; the server code is built into rfsd by the top-level Makefile.
##

if BUILD_NETCORE

AM_CPPFLAGS += -I$(top_srcdir)/adio/netcore

noinst_HEADERS +=                       \
    adio/netcore/net/net.h              \
    adio/netcore/proto/rfs_proto.h      \
    adio/netcore/proto/rfs_client.h     \
    adio/netcore/dtype/dtype.h          \
    adio/netcore/dtype/dtype_mpi.h

romio_other_sources +=                  \
    adio/netcore/net/net_tcp.c          \
    adio/netcore/proto/rfs_proto.c      \
    adio/netcore/proto/rfs_client.c     \
    adio/netcore/dtype/dtype.c          \
    adio/netcore/dtype/dtype_iter.c     \
    adio/netcore/dtype/dtype_wire.c     \
    adio/netcore/dtype/dtype_mpi.c

endif BUILD_NETCORE
