/* Flush: MPI_File_sync makes the data durable on the server (fsync).
 * A process whose open ROMIO deferred (romio_no_indep_rw) has no
 * connection and nothing to flush. */
#include "ad_rfs.h"

void ADIOI_RFS_Flush(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_RFS_FLUSH";
    ADIOI_RFS_File *f = fd->fs_ptr;
    *error_code = MPI_SUCCESS;
    if (!fd->is_open || !f)
        return;
    int rc = ADIOI_RFS_Ready(f);
    if (rc == 0)
        rc = rfs_fsync(f->conn.client, f->conn.handle);
    if (rc == 0)
        rfs_shared_synced(&f->conn);
    *error_code = ADIOI_RFS_Error(rc, myname, f, "sync");
}
