/* Fcntl: the file size from every object's size; preallocation on every
 * object; atomicity is a flag here, made good by the locks ROMIO takes. */
#include "ad_rdma.h"
#include "adio_extern.h"

void ADIOI_RDMA_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t *fcntl_struct, int *error_code)
{
    static char myname[] = "ADIOI_RDMA_FCNTL";
    ADIOI_RDMA_File *f = fd->fs_ptr;
    uint64_t size;
    int rc;

    switch (flag) {
    case ADIO_FCNTL_GET_FSIZE:
        rc = stripe_size(&f->sf, &size);
        if (rc == 0)
            fcntl_struct->fsize = (ADIO_Offset) size;
        *error_code = ADIOI_RDMA_Error(rc, myname, f, "stat");
        break;
    case ADIO_FCNTL_SET_DISKSPACE:
        rc = stripe_prealloc(&f->sf, 0, (uint64_t) fcntl_struct->diskspace);
        *error_code = ADIOI_RDMA_Error(rc, myname, f, "preallocate");
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
