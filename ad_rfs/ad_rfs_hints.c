/*
 * SetInfo: the rfs_* hints (docs/rfs.md), stated once in the table below,
 * and the security hints (common/rfs_adio.c) land in fd->info, where Open
 * reads them (ADIOI_RFS_Get_hints) and MPI_File_get_info reports them;
 * ROMIO's generic hints follow. Called collectively, before Open (fs_ptr
 * NULL) and by MPI_File_set_info / set_view later. An invalid value is
 * MPI_ERR_INFO_VALUE: from set_info at once, from the open through Open.
 */
#include "ad_rfs.h"
#include "adio_hints.h"

static const char *const noncontig[] = { "romio", "native", NULL };

static const struct adio_hint rfs_hints[] = {
    { .name = "rfs_defer_open", .kind = ADIO_HINT_WORD, .words = adio_hint_switch,
      .dflt = "disable", .at_open = 1, .to = ADIO_HINT_TO(ADIOI_RFS_File, defer_open) },
    { .name = "rfs_defer_close", .kind = ADIO_HINT_WORD, .words = adio_hint_switch,
      .dflt = "disable", .to = ADIO_HINT_TO(ADIOI_RFS_File, defer_close) },
    { .name = "rfs_timeout", .kind = ADIO_HINT_COUNT, .min = 1, .max = 86400,
      .dflt = ADIO_HINT_STR(ADIOI_RFS_DEFAULT_TIMEOUT), .at_open = 1,
      .to = ADIO_HINT_TO(ADIOI_RFS_File, timeout_s) },
    { .name = "rfs_noncontig", .kind = ADIO_HINT_WORD, .words = noncontig, .dflt = "native",
      .to = ADIO_HINT_TO(ADIOI_RFS_File, noncontig_native) },
};

#define RFS_HINTS (sizeof rfs_hints / sizeof rfs_hints[0])

/* Open (fd->fs_ptr NULL) takes every hint; an open file those that act at once. */
int ADIOI_RFS_Get_hints(ADIO_File fd, ADIOI_RFS_File *f, const char *myname)
{
    return adio_hints_decode(fd->info, rfs_hints, RFS_HINTS, fd->fs_ptr != NULL, f, myname);
}

void ADIOI_RFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static char myname[] = "ADIOI_RFS_SETINFO";
    int err = rfs_adio_security_install(fd, users_info, myname);
    if (err == MPI_SUCCESS)
        err = adio_hints_install(fd, users_info, rfs_hints, RFS_HINTS, myname);
    if (fd->fs_ptr) {
        ADIOI_RFS_File *f = fd->fs_ptr;
        *error_code = err;
        if (err != MPI_SUCCESS)
            return;             /* an open file keeps its hints */
        ADIOI_RFS_Get_hints(fd, f, myname);    /* checked by the install */
        f->view_stale = 1;      /* set_view comes through here */
    }
    /* before Open, ROMIO's hints are set up all the same: its open goes on */
    ADIOI_GEN_SetInfo(fd, users_info, error_code);
    if (err != MPI_SUCCESS)
        *error_code = err;
}
