/* Flush (MPI_File_sync): fsync on every object's server. */
#include "ad_rdma.h"

void ADIOI_RDMA_Flush(ADIO_File fd, int *error_code)
{
    ADIOI_RDMA_File *f = fd->fs_ptr;
    *error_code = ADIOI_RDMA_Error(stripe_sync(&f->sf), "ADIOI_RDMA_FLUSH", f, "sync");
}
