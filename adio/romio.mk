##
## The shared core of the romio-drivers suite (this repository's adio/),
## linked into src/mpi/romio/adio/netcore. Only the client side is part of
## libromio; the server code is built into rfsd by the top-level Makefile.
##

if BUILD_NETCORE

AM_CPPFLAGS += -I$(top_srcdir)/adio/netcore

noinst_HEADERS +=                       \
    adio/netcore/net/net.h              \
    adio/netcore/net/net_endpoint.h     \
    adio/netcore/verbs/ogr.h            \
    adio/netcore/verbs/net_verbs.h      \
    adio/netcore/verbs/verbs_conn.h     \
    adio/netcore/verbs/verbs_proto.h    \
    adio/netcore/verbs/verbs_reg.h      \
    adio/netcore/verbs/regcache.h       \
    adio/netcore/proto/rfs_proto.h      \
    adio/netcore/proto/rfs_client.h     \
    adio/netcore/proto/rfs_shared.h     \
    adio/netcore/proto/rfs_auth.h       \
    adio/netcore/proto/wire_le.h        \
    adio/netcore/dtype/dtype.h          \
    adio/netcore/abt/abt.h                  \
    adio/netcore/abt/abt_pool.h             \
    adio/netcore/abt/abt_stage.h            \
    adio/netcore/abt/abt_model.h            \
    adio/netcore/abt/abt_sink.h             \
    adio/netcore/stripe/stripe.h            \
    adio/netcore/stripe/stripe_file.h       \
    adio/netcore/mount/mount_desc.h

romio_other_sources +=                  \
    adio/netcore/net/net_tcp.c          \
    adio/netcore/net/net_tls.c          \
    adio/netcore/net/net_endpoint.c     \
    adio/netcore/verbs/net_verbs.c      \
    adio/netcore/verbs/verbs_setup.c    \
    adio/netcore/verbs/verbs_listen.c   \
    adio/netcore/verbs/verbs_progress.c \
    adio/netcore/verbs/verbs_rdma.c     \
    adio/netcore/verbs/verbs_send.c     \
    adio/netcore/verbs/verbs_recv.c     \
    adio/netcore/verbs/verbs_proto.c    \
    adio/netcore/verbs/verbs_reg.c      \
    adio/netcore/verbs/ogr.c            \
    adio/netcore/verbs/regcache.c       \
    adio/netcore/proto/rfs_proto.c      \
    adio/netcore/proto/rfs_client.c     \
    adio/netcore/proto/rfs_shared.c     \
    adio/netcore/proto/rfs_auth.c       \
    adio/netcore/mount/mount_desc.c     \
    adio/netcore/dtype/dtype.c          \
    adio/netcore/dtype/dtype_iter.c     \
    adio/netcore/dtype/dtype_wire.c     \
    adio/netcore/abt/abt_pool.c         \
    adio/netcore/abt/abt_stage.c        \
    adio/netcore/abt/abt_model.c        \
    adio/netcore/abt/abt_engine.c       \
    adio/netcore/abt/abt_sink_posix.c   \
    adio/netcore/abt/abt_sink_rfs.c     \
    adio/netcore/abt/abt_sink_stripe.c  \
    adio/netcore/stripe/stripe.c        \
    adio/netcore/stripe/stripe_servers.c \
    adio/netcore/stripe/stripe_file.c   \
    adio/netcore/stripe/stripe_copies.c \
    adio/netcore/stripe/stripe_io.c

endif BUILD_NETCORE
