/* Reads: contiguous (ad_rdma_common.c) and noncontiguous (ad_rdma_strided.c,
 * or ROMIO's data sieving with rdma_io_method=sieve). */
#include "ad_rdma.h"

void ADIOI_RDMA_ReadContig(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                           int *error_code)
{
    ADIOI_RDMA_Contig_io(fd, buf, count, datatype, file_ptr_type, offset, status, 0,
                         error_code);
}

void ADIOI_RDMA_ReadStrided(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                            int *error_code)
{
    ADIOI_RDMA_File *f = fd->fs_ptr;
    if (f->method == ADIOI_RDMA_SIEVE)
        ADIOI_GEN_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                              error_code);
    else
        ADIOI_RDMA_Strided_io(fd, buf, count, datatype, file_ptr_type, offset, status, 0,
                              error_code);
}
