/*
 * Features: the server's locks make atomic mode, data-sieving writes and
 * the shared file pointer work. Open and resize are not scalable (one
 * process creates, everyone connects), so ROMIO's generic OpenColl and
 * the forced open before set_size apply.
 */
#include "ad_rfs.h"

int ADIOI_RFS_Feature(ADIO_File fd, int flag)
{
    (void) fd;
    switch (flag) {
    case ADIO_LOCKS:
    case ADIO_SHARED_FP:
    case ADIO_ATOMIC_MODE:
    case ADIO_DATA_SIEVING_WRITES:
    case ADIO_UNLINK_AFTER_CLOSE:
    case ADIO_TWO_PHASE:
    case ADIO_IMMEDIATELY_VISIBLE:
        return 1;
    case ADIO_SCALABLE_OPEN:
    case ADIO_SCALABLE_RESIZE:
    default:
        return 0;
    }
}
