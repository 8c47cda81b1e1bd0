/*
 * Flush (MPI_File_sync): the buffers drain into the inner file, then the
 * inner driver makes it durable. An error of any earlier buffered write
 * is reported here (MPI: errors of deferred work surface at sync/close).
 */
#include "ad_abt.h"

void ADIOI_ABT_Flush(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_ABT_FLUSH";
    ADIOI_ABT_File *a = fd->fs_ptr;
    *error_code = ADIOI_ABT_Hand_over(fd, myname);
    if (*error_code != MPI_SUCCESS)
        return;
    a->inner->fns->ADIOI_xxx_Flush(a->inner, error_code);
}
