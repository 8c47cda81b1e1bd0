/* Resize (collective): one process truncates every object to its share
 * of the new size, everyone learns the outcome and which server failed.
 * (With a deferred open the others may not have opened the file.) */
#include "ad_rdma.h"

void ADIOI_RDMA_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_RDMA_RESIZE";
    ADIOI_RDMA_File *f = fd->fs_ptr;
    int rank, outcome[2] = { 0, -1 };   /* rc, the server that failed */

    MPI_Comm_rank(fd->comm, &rank);
    if (rank == fd->hints->ranklist[0]) {
        outcome[0] = stripe_truncate(&f->sf, (uint64_t) size);
        outcome[1] = f->sf.failed;
    }
    MPI_Bcast(outcome, 2, MPI_INT, fd->hints->ranklist[0], fd->comm);
    if (f)
        f->sf.failed = outcome[1];
    *error_code = ADIOI_RDMA_Error(outcome[0], myname, f, "truncate");
}
