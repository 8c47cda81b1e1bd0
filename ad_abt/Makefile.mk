##
## The abt: driver (active buffering with threads, stackable over any driver).
## Part of the romio-drivers suite; linked into src/mpi/romio/adio/ad_abt.
##

if BUILD_AD_ABT

noinst_HEADERS += adio/ad_abt/ad_abt.h

romio_other_sources +=              \
    adio/ad_abt/ad_abt.c            \
    adio/ad_abt/ad_abt_common.c     \
    adio/ad_abt/ad_abt_order.c      \
    adio/ad_abt/ad_abt_sink.c       \
    adio/ad_abt/ad_abt_open.c       \
    adio/ad_abt/ad_abt_close.c      \
    adio/ad_abt/ad_abt_read.c       \
    adio/ad_abt/ad_abt_write.c      \
    adio/ad_abt/ad_abt_fcntl.c      \
    adio/ad_abt/ad_abt_resize.c     \
    adio/ad_abt/ad_abt_flush.c      \
    adio/ad_abt/ad_abt_delete.c     \
    adio/ad_abt/ad_abt_hints.c      \
    adio/ad_abt/ad_abt_lock.c       \
    adio/ad_abt/ad_abt_features.c

endif BUILD_AD_ABT
