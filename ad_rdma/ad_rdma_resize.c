/* Resize (collective): one process truncates every object to its share
 * of the new size, everyone learns the outcome. */
#include "ad_rdma.h"

void ADIOI_RDMA_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_RDMA_RESIZE";
    ADIOI_RDMA_File *f = fd->fs_ptr;
    int rank, rc = 0;

    MPI_Comm_rank(fd->comm, &rank);
    if (rank == fd->hints->ranklist[0])
        rc = stripe_truncate(&f->sf, (uint64_t) size);
    MPI_Bcast(&rc, 1, MPI_INT, fd->hints->ranklist[0], fd->comm);
    *error_code = ADIOI_RDMA_Error(rc, myname, f, "truncate");
}
