/*
 * Nonblocking contiguous read: the transfer is done before returning and
 * the request is born complete (ROMIO's FAKE pattern, with a 64-bit byte
 * count). Overlap for writes is what the abt: driver adds on top.
 */
#include "ad_rfs.h"

void ADIOI_RFS_IreadContig(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Request *request,
                           int *error_code)
{
    ADIO_Status status;
    MPI_Offset done = ADIOI_RFS_Contig_io(fd, buf, count, datatype, file_ptr_type, offset,
                                          &status, 0, error_code);
    MPIO_Completed_request_create(&fd, done, error_code, request);
}
