/*
 * SetLock: a byte-range lock over logical offsets, held by the server of
 * the file's object 0 for this open, so ROMIO's atomic mode, data-sieving
 * writes and shared file pointer work across processes. Never ROMIO's
 * fcntl on fd_sys.
 */
#include <fcntl.h>
#include <stdio.h>

#include "ad_rdma.h"

int ADIOI_RDMA_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                       ADIO_Offset len)
{
    static char myname[] = "ADIOI_RDMA_SETLOCK";
    ADIOI_RDMA_File *f = fd->fs_ptr;
    uint32_t kind = type == F_RDLCK ? RFS_LOCK_READ
                  : type == F_WRLCK ? RFS_LOCK_WRITE : RFS_LOCK_UNLOCK;
    int wait = cmd == F_SETLKW
#ifdef F_SETLKW64
        || cmd == F_SETLKW64
#endif
        ;
    int rc = RFS_E_INVAL;

    if (whence == SEEK_SET && offset >= 0 && len >= 0)
        rc = stripe_lock(&f->sf, kind, (uint64_t) offset, (uint64_t) len, wait);
    if (rc == 0)
        return MPI_SUCCESS;
    /* ROMIO's lock macros drop the return value; say it where it is seen. */
    fprintf(stderr, "rdma: lock of %s [%lld, +%lld) failed: %s\n", f->path, (long long) offset,
            (long long) len, rc > 0 ? rfs_status_str(rc) : "connection lost");
    return ADIOI_RDMA_Error(rc, myname, f, "lock");
}
