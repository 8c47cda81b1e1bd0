/* Fcntl: file size and preallocation from the server; atomicity is a
 * flag here, made good by the server-side locks ROMIO takes. */
#include "ad_rfs.h"
#include "adio_extern.h"

void ADIOI_RFS_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t *fcntl_struct, int *error_code)
{
    static char myname[] = "ADIOI_RFS_FCNTL";
    ADIOI_RFS_File *f = fd->fs_ptr;
    struct rfs_stat st;
    int rc;

    switch (flag) {
    case ADIO_FCNTL_GET_FSIZE:
        rc = ADIOI_RFS_Ready(f);
        if (rc == 0)
            rc = rfs_fstat(f->conn.client, f->conn.handle, &st);
        if (rc == 0)
            fcntl_struct->fsize = (ADIO_Offset) st.size;
        *error_code = ADIOI_RFS_Error(rc, myname, f, "stat");
        break;
    case ADIO_FCNTL_SET_DISKSPACE:
        rc = ADIOI_RFS_Ready(f);
        rfs_shared_wrote(&f->conn);
        if (rc == 0)
            rc = rfs_prealloc(f->conn.client, f->conn.handle, 0,
                              (uint64_t) fcntl_struct->diskspace);
        *error_code = ADIOI_RFS_Error(rc, myname, f, "preallocate");
        break;
    case ADIO_FCNTL_SET_ATOMICITY:
        fd->atomicity = fcntl_struct->atomicity ? 1 : 0;
        *error_code = MPI_SUCCESS;
        break;
    default:
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_ARG, "**flag", "**flag %d", flag);
        break;
    }
}
