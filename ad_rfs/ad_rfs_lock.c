/*
 * SetLock: a byte-range lock held by the server for this file handle (an
 * open-file-description lock on the server's open of the file), so ROMIO's
 * atomic mode, data-sieving writes and shared file pointer work across
 * processes and machines. Never ROMIO's fcntl on fd_sys.
 */
#include <stdio.h>

#include "ad_rfs.h"
#include "rfs_adio.h"

int ADIOI_RFS_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                      ADIO_Offset len)
{
    static char myname[] = "ADIOI_RFS_SETLOCK";
    ADIOI_RFS_File *f = fd->fs_ptr;
    uint32_t kind;
    int wait;
    int rc = rfs_adio_lock_args(cmd, type, offset, whence, len, &kind, &wait);

    if (rc == 0)
        rc = ADIOI_RFS_Ready(f);
    if (rc == 0)
        rc = rfs_lock(f->conn.client, f->conn.handle, kind, (uint64_t) offset, (uint64_t) len,
                      wait);
    if (rc == 0) {
        rfs_shared_locked(&f->conn, kind);
        return MPI_SUCCESS;
    }
    /* ROMIO's lock macros drop the return value; say it where it is seen. */
    fprintf(stderr, "rfs: lock of %s [%lld, +%lld) on %s:%s failed: %s\n", f->path,
            (long long) offset, (long long) len, f->host, f->port,
            rc > 0 ? rfs_status_str(rc) : "connection lost");
    return ADIOI_RFS_Error(rc, myname, f, "lock");
}
