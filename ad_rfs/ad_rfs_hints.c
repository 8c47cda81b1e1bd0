/*
 * SetInfo: the rfs_* hints (docs/rfs.md) land in fd->info, where Open
 * reads them and MPI_File_get_info reports them; ROMIO's generic hints
 * follow. Called collectively, before Open (fs_ptr NULL) and by
 * MPI_File_set_info / set_view later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ad_rfs.h"
#include "hint_fns.h"

static void install_defaults(ADIO_File fd)
{
    char value[16];
    MPI_Info_create(&fd->info);
    ADIOI_Info_set(fd->info, "rfs_defer_open", "disable");
    ADIOI_Info_set(fd->info, "rfs_defer_close", "disable");
    ADIOI_Info_set(fd->info, "rfs_noncontig", "native");
    snprintf(value, sizeof value, "%d", ADIOI_RFS_DEFAULT_TIMEOUT);
    ADIOI_Info_set(fd->info, "rfs_timeout", value);
}

/* What is not a positive number of seconds means the default: say so. */
static void report_timeout_in_effect(ADIO_File fd)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    ADIOI_Info_get(fd->info, "rfs_timeout", MPI_MAX_INFO_VAL, value, &flag);
    if (!flag || atoi(value) <= 0) {
        snprintf(value, sizeof value, "%d", ADIOI_RFS_DEFAULT_TIMEOUT);
        ADIOI_Info_set(fd->info, "rfs_timeout", value);
    }
}

/* rfs_noncontig: native or romio; anything else keeps what is set. */
static void install_noncontig(ADIO_File fd, MPI_Info users_info)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    ADIOI_Info_get(users_info, "rfs_noncontig", MPI_MAX_INFO_VAL, value, &flag);
    if (flag && (strcmp(value, "native") == 0 || strcmp(value, "romio") == 0))
        ADIOI_Info_set(fd->info, "rfs_noncontig", value);
}

void ADIOI_RFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static char myname[] = "ADIOI_RFS_SETINFO";
    int ignored;

    *error_code = MPI_SUCCESS;
    if (fd->info == MPI_INFO_NULL)
        install_defaults(fd);
    if (users_info != MPI_INFO_NULL) {
        if (ADIOI_Info_check_and_install_enabled(fd, users_info, "rfs_defer_open", &ignored,
                                                 myname, error_code) < 0 ||
            ADIOI_Info_check_and_install_enabled(fd, users_info, "rfs_defer_close", &ignored,
                                                 myname, error_code) < 0 ||
            ADIOI_Info_check_and_install_int(fd, users_info, "rfs_timeout", &ignored, myname,
                                             error_code) < 0)
            return;
        install_noncontig(fd, users_info);
    }
    if (!fd->fs_ptr)
        rfs_adio_security_hints(fd, users_info);
    report_timeout_in_effect(fd);
    /* An open file takes rfs_defer_close at once; the others act at open. */
    if (fd->fs_ptr) {
        ADIOI_RFS_File *f = fd->fs_ptr;
        int defer_open = f->defer_open, timeout_s = f->timeout_s;
        ADIOI_RFS_Get_hints(fd, f);
        f->view_stale = 1;      /* set_view comes through here */
        f->defer_open = defer_open;
        f->timeout_s = timeout_s;
    }
    ADIOI_GEN_SetInfo(fd, users_info, error_code);
}
