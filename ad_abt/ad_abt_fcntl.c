/*
 * Fcntl: the size includes writes still buffered; preallocation drains
 * first (ROMIO's generic preallocation reads and rewrites what is there);
 * atomic mode drains and then writes through while it lasts.
 */
#include "ad_abt.h"

static void get_fsize(ADIO_File fd, ADIO_Fcntl_t *fcntl_struct, int *error_code)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    ADIOI_ABT_Sync_shadow(fd);
    a->inner->fns->ADIOI_xxx_Fcntl(a->inner, ADIO_FCNTL_GET_FSIZE, fcntl_struct, error_code);
    if (*error_code != MPI_SUCCESS || a->engine == NULL)
        return;
    ADIO_Offset pending = (ADIO_Offset) abt_pending_end(a->engine);
    if (pending > fcntl_struct->fsize)
        fcntl_struct->fsize = pending;
}

void ADIOI_ABT_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t *fcntl_struct, int *error_code)
{
    static char myname[] = "ADIOI_ABT_FCNTL";
    ADIOI_ABT_File *a = fd->fs_ptr;

    if (flag == ADIO_FCNTL_GET_FSIZE) {
        get_fsize(fd, fcntl_struct, error_code);
        return;
    }
    if (flag == ADIO_FCNTL_SET_DISKSPACE ||
        (flag == ADIO_FCNTL_SET_ATOMICITY && fcntl_struct->atomicity)) {
        *error_code = ADIOI_ABT_Drain(fd, myname);
        if (*error_code != MPI_SUCCESS)
            return;
    }
    if (flag == ADIO_FCNTL_SET_ATOMICITY) {
        fd->atomicity = fcntl_struct->atomicity ? 1 : 0;
        ADIOI_Info_set(fd->info, "romio_visibility_immediate",
                       fd->atomicity ? "true" : "false");
    }
    ADIOI_ABT_Sync_shadow(fd);
    a->inner->fns->ADIOI_xxx_Fcntl(a->inner, flag, fcntl_struct, error_code);
}
