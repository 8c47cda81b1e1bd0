##
## The rdma: driver (a file striped over several rfsd I/O servers).
## Part of the romio-drivers suite; linked into src/mpi/romio/adio/ad_rdma.
##

if BUILD_AD_RDMA

noinst_HEADERS += adio/ad_rdma/ad_rdma.h

romio_other_sources +=              \
    adio/ad_rdma/ad_rdma.c          \
    adio/ad_rdma/ad_rdma_common.c   \
    adio/ad_rdma/ad_rdma_open.c     \
    adio/ad_rdma/ad_rdma_close.c    \
    adio/ad_rdma/ad_rdma_read.c     \
    adio/ad_rdma/ad_rdma_write.c    \
    adio/ad_rdma/ad_rdma_strided.c  \
    adio/ad_rdma/ad_rdma_coll.c     \
    adio/ad_rdma/ad_rdma_fcntl.c    \
    adio/ad_rdma/ad_rdma_resize.c   \
    adio/ad_rdma/ad_rdma_flush.c    \
    adio/ad_rdma/ad_rdma_delete.c   \
    adio/ad_rdma/ad_rdma_hints.c    \
    adio/ad_rdma/ad_rdma_lock.c

endif BUILD_AD_RDMA
