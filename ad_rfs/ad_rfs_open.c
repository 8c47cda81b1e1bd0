/*
 * Open: parse HOST:PORT:/PATH, take a connection (the process's files on
 * a server share one), send OPEN (or queue it for the next request with
 * rfs_defer_open). Locks are per handle on the server (open file
 * description locks), as MPI expects of separate opens.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ad_rfs.h"
#include "adio_extern.h"
#include "rfs_adio.h"

/* An open must answer at once when its outcome is needed before any I/O:
 * creating (EXCL must fail here) and appending (needs the size). */
static int may_defer(const ADIOI_RFS_File *f, int access_mode)
{
    return f->defer_open && !(access_mode & (ADIO_CREATE | ADIO_EXCL | ADIO_APPEND));
}

static void discard(ADIOI_RFS_File *f)
{
    ADIOI_Free(f->name);
    ADIOI_Free(f);
}

void ADIOI_RFS_Open(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_RFS_OPEN";
    ADIOI_RFS_File *f = ADIOI_Calloc(1, sizeof *f);

    fd->fd_sys = -1;
    fd->fd_direct = -1;
    /* Every process reads a mount path's description itself (ROMIO's
     * generic collective open opens on each): each must see the mount. */
    *error_code = rfs_adio_mount_name(fd->filename, "rfs:", myname, &f->name, &fd->info);
    if (*error_code != MPI_SUCCESS) {
        ADIOI_Free(f);
        return;
    }
    if (ADIOI_RFS_Parse_name(f->name, f->host, sizeof f->host, f->port, sizeof f->port,
                             &f->path) != 0) {
        *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                           MPI_ERR_BAD_FILE, "**filename", "**filename %s",
                                           ADIOI_RFS_NAME_HELP);
        discard(f);
        return;
    }
    *error_code = ADIOI_RFS_Get_hints(fd, f, myname);
    if (*error_code == MPI_SUCCESS)
        *error_code = rfs_adio_security_init(fd->info, myname, &f->sec);
    if (*error_code != MPI_SUCCESS) {
        discard(f);
        return;
    }
    f->view_stale = 1;
    f->open_flags = rfs_adio_open_flags(fd->access_mode);
    f->open_mode = rfs_adio_create_mode(fd);

    int rc = 0;
    struct rfs_stat st = { 0, 0 };
    if (!may_defer(f, fd->access_mode)) {
        rc = ADIOI_RFS_Connect(f);
        if (rc == 0)
            rc = rfs_open(f->conn.client, f->conn.handle, f->path, f->open_flags, f->open_mode,
                          &st);
    }
    if (rc != 0) {
        *error_code = ADIOI_RFS_Error(rc, myname, f, "open");
        ADIOI_RFS_Disconnect(f);
        rfs_adio_security_fini(&f->sec);
        discard(f);
        return;
    }
    if (fd->access_mode & ADIO_APPEND)
        fd->fp_ind = fd->fp_sys_posn = (ADIO_Offset) st.size;
    fd->fs_ptr = f;
    *error_code = MPI_SUCCESS;
}
