/* Resize (collective): one process truncates on the server, everyone
 * learns the outcome. */
#include "ad_rfs.h"

void ADIOI_RFS_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_RFS_RESIZE";
    ADIOI_RFS_File *f = fd->fs_ptr;
    int rank, rc = 0;

    MPI_Comm_rank(fd->comm, &rank);
    if (rank == fd->hints->ranklist[0]) {
        rc = ADIOI_RFS_Ready(f);
        rfs_shared_wrote(&f->conn);
        if (rc == 0)
            rc = rfs_ftruncate(f->conn.client, f->conn.handle, (uint64_t) size);
    }
    MPI_Bcast(&rc, 1, MPI_INT, fd->hints->ranklist[0], fd->comm);
    *error_code = ADIOI_RFS_Error(rc, myname, f, "truncate");
}
