/* Writes: contiguous (ad_rfs_common.c) and noncontiguous (ad_rfs_strided.c). */
#include "ad_rfs.h"

void ADIOI_RFS_WriteContig(ADIO_File fd, const void *buf, romio_count_t count,
                           MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                           ADIO_Status *status, int *error_code)
{
    /* The transfer only reads from buf on writes. */
    ADIOI_RFS_Contig_io(fd, (void *) buf, count, datatype, file_ptr_type, offset, status, 1,
                        error_code);
}

void ADIOI_RFS_WriteStrided(ADIO_File fd, const void *buf, romio_count_t count,
                            MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                            ADIO_Status *status, int *error_code)
{
    ADIOI_RFS_File *f = fd->fs_ptr;
    if (f->noncontig_native)
        ADIOI_RFS_Strided_io(fd, (void *) buf, count, datatype, file_ptr_type, offset, status,
                             1, error_code);
    else
        ADIOI_GEN_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                               error_code);
}
