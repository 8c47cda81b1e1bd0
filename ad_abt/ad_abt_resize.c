/*
 * Resize (collective): every process's buffered writes land before the
 * new size is set, as their order says; the barrier keeps a process that
 * drains late from growing the file again after another one truncated it.
 */
#include "ad_abt.h"

void ADIOI_ABT_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_ABT_RESIZE";
    ADIOI_ABT_File *a = fd->fs_ptr;
    *error_code = ADIOI_ABT_Drain(fd, myname);
    int barrier = MPI_Barrier(fd->comm);
    if (*error_code != MPI_SUCCESS)
        return;
    if (barrier != MPI_SUCCESS) {
        *error_code = barrier;
        return;
    }
    ADIOI_ABT_Sync_shadow(fd);
    a->inner->fns->ADIOI_xxx_Resize(a->inner, size, error_code);
}
