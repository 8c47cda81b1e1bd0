/* Nonblocking contiguous write: done at once, request born complete
 * (see ad_rfs_iread.c). */
#include "ad_rfs.h"

void ADIOI_RFS_IwriteContig(ADIO_File fd, const void *buf, romio_count_t count,
                            MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                            ADIO_Request *request,
                            int *error_code)
{
    ADIO_Status status;
    MPI_Offset done = ADIOI_RFS_Contig_io(fd, (void *) buf, count, datatype, file_ptr_type,
                                          offset, &status, 1, error_code);
    MPIO_Completed_request_create(&fd, done, error_code, request);
}
