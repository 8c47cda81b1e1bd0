/*
 * Resize (collective): every process's buffered writes land before the
 * new size is set, as their order says; the agreement waits for all of
 * them, so that a process that drains late cannot grow the file again
 * after another one truncated it, and a failed drain stops every process
 * before the inner driver's resize (collective for most drivers).
 */
#include "ad_abt.h"

void ADIOI_ABT_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_ABT_RESIZE";
    ADIOI_ABT_File *a = fd->fs_ptr;
    *error_code = ADIOI_ABT_Agree(fd->comm, ADIOI_ABT_Drain(fd, myname), myname);
    if (*error_code != MPI_SUCCESS)
        return;
    ADIOI_ABT_Sync_shadow(fd);
    a->inner->fns->ADIOI_xxx_Resize(a->inner, size, error_code);
}
