/*
 * SetLock: a byte-range lock over logical offsets, held by the server of
 * the file's object 0 for this open, so ROMIO's atomic mode, data-sieving
 * writes and shared file pointer work across processes. Never ROMIO's
 * fcntl on fd_sys.
 */
#include <stdio.h>

#include "ad_rdma.h"
#include "rfs_adio.h"

int ADIOI_RDMA_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                       ADIO_Offset len)
{
    static char myname[] = "ADIOI_RDMA_SETLOCK";
    ADIOI_RDMA_File *f = fd->fs_ptr;
    uint32_t kind;
    int wait;
    int rc = rfs_adio_lock_args(cmd, type, offset, whence, len, &kind, &wait);

    if (rc == 0)
        rc = stripe_lock(&f->sf, kind, (uint64_t) offset, (uint64_t) len, wait);
    if (rc == 0)
        return MPI_SUCCESS;
    /* ROMIO's lock macros drop the return value; say it where it is seen. */
    fprintf(stderr, "rdma: lock of %s [%lld, +%lld) failed: %s\n", f->path, (long long) offset,
            (long long) len, rc > 0 ? rfs_status_str(rc) : "connection lost");
    return ADIOI_RDMA_Error(rc, myname, f, "lock");
}
