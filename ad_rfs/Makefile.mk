##
## The rfs: driver (remote file access over a stream transport).
## Part of the romio-drivers suite; linked into src/mpi/romio/adio/ad_rfs.
##

if BUILD_AD_RFS

noinst_HEADERS += adio/ad_rfs/ad_rfs.h

romio_other_sources +=              \
    adio/ad_rfs/ad_rfs.c            \
    adio/ad_rfs/ad_rfs_common.c     \
    adio/ad_rfs/ad_rfs_open.c       \
    adio/ad_rfs/ad_rfs_close.c      \
    adio/ad_rfs/ad_rfs_read.c       \
    adio/ad_rfs/ad_rfs_write.c      \
    adio/ad_rfs/ad_rfs_strided.c    \
    adio/ad_rfs/ad_rfs_rdcoll.c     \
    adio/ad_rfs/ad_rfs_wrcoll.c     \
    adio/ad_rfs/ad_rfs_iread.c      \
    adio/ad_rfs/ad_rfs_iwrite.c     \
    adio/ad_rfs/ad_rfs_fcntl.c      \
    adio/ad_rfs/ad_rfs_resize.c     \
    adio/ad_rfs/ad_rfs_flush.c      \
    adio/ad_rfs/ad_rfs_delete.c     \
    adio/ad_rfs/ad_rfs_hints.c      \
    adio/ad_rfs/ad_rfs_lock.c       \
    adio/ad_rfs/ad_rfs_features.c

endif BUILD_AD_RFS
