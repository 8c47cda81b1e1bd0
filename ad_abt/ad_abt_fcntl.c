/*
 * Fcntl: the size includes writes still buffered by any handle of the
 * file in this process; atomic mode drains and then writes through while
 * it lasts. Preallocation (rank 0 alone, while the other processes may
 * still be draining) must not rewrite data: over a local file it is
 * posix_fallocate, which never overwrites or shrinks, instead of ROMIO's
 * generic read-and-rewrite; rfs: and rdma: servers fallocate too.
 */
#include <errno.h>
#include <fcntl.h>

#include "ad_abt.h"

static void get_fsize(ADIO_File fd, ADIO_Fcntl_t *fcntl_struct, int *error_code)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    ADIOI_ABT_Sync_shadow(fd);
    a->inner->fns->ADIOI_xxx_Fcntl(a->inner, ADIO_FCNTL_GET_FSIZE, fcntl_struct, error_code);
    if (*error_code != MPI_SUCCESS)
        return;
    uint64_t lo, hi;
    ADIOI_ABT_Pending(fd, &lo, &hi);
    if (lo < hi && (ADIO_Offset) hi > fcntl_struct->fsize)
        fcntl_struct->fsize = (ADIO_Offset) hi;
}

/* 1 when done (error_code set), 0 when the inner driver must do it. */
static int allocate_local(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_ABT_FCNTL";
    ADIOI_ABT_File *a = fd->fs_ptr;
    if (a->inner->file_system != ADIO_UFS && a->inner->file_system != ADIO_NFS)
        return 0;
    int rc = posix_fallocate(a->inner->fd_sys, 0, (off_t) size);
    if (rc == EINVAL || rc == EOPNOTSUPP)
        return 0;               /* a file system without it */
    *error_code = rc ? ADIOI_Err_create_code(myname, fd->filename, rc) : MPI_SUCCESS;
    return 1;
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
    if (flag == ADIO_FCNTL_SET_DISKSPACE && allocate_local(fd, fcntl_struct->diskspace,
                                                          error_code))
        return;
    if (flag == ADIO_FCNTL_SET_ATOMICITY)
        fd->atomicity = fcntl_struct->atomicity ? 1 : 0;   /* Sync_shadow reports it */
    ADIOI_ABT_Sync_shadow(fd);
    a->inner->fns->ADIOI_xxx_Fcntl(a->inner, flag, fcntl_struct, error_code);
}
