/*
 * SetLock: a byte-range lock held by the server for this file handle (an
 * open-file-description lock on the server's open of the file), so ROMIO's
 * atomic mode, data-sieving writes and shared file pointer work across
 * processes and machines. Never ROMIO's fcntl on fd_sys.
 */
#include <fcntl.h>
#include <stdio.h>

#include "ad_rfs.h"

int ADIOI_RFS_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                      ADIO_Offset len)
{
    static char myname[] = "ADIOI_RFS_SETLOCK";
    ADIOI_RFS_File *f = fd->fs_ptr;
    uint32_t kind = type == F_RDLCK ? RFS_LOCK_READ
                  : type == F_WRLCK ? RFS_LOCK_WRITE : RFS_LOCK_UNLOCK;
    int wait = cmd == F_SETLKW
#ifdef F_SETLKW64
        || cmd == F_SETLKW64
#endif
        ;
    int rc = 0;

    if (whence != SEEK_SET || offset < 0 || len < 0)
        rc = RFS_E_INVAL;
    if (rc == 0)
        rc = ADIOI_RFS_Ready(f);
    if (rc == 0)
        rc = rfs_lock(&f->client, ADIOI_RFS_HANDLE, kind, (uint64_t) offset, (uint64_t) len,
                      wait);
    if (rc == 0)
        return MPI_SUCCESS;
    /* ROMIO's lock macros drop the return value; say it where it is seen. */
    fprintf(stderr, "rfs: lock of %s [%lld, +%lld) on %s:%s failed: %s\n", f->path,
            (long long) offset, (long long) len, f->host, f->port,
            rc > 0 ? rfs_status_str(rc) : "connection lost");
    return ADIOI_RFS_Error(rc, myname, f, "lock");
}
