/*
 * Open: the inner driver opens the file through a shadow ADIO file (same
 * communicator, view, hints; its own descriptor and private data), then a
 * writable file gets an engine that drains into a sink of that file.
 * GEN_OpenColl runs this on rank 0 first when creating, like any driver.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ad_abt.h"

static ADIO_File open_shadow(ADIO_File fd, int type, ADIOI_Fns *ops, const char *name,
                             int *error_code)
{
    ADIO_File s = ADIOI_Malloc(sizeof *s);
    *s = *fd;
    s->fns = ops;
    s->file_system = type;
    s->filename = ADIOI_Strdup(name);
    s->fs_ptr = NULL;
    s->shared_fp_fd = NULL;
    ops->ADIOI_xxx_Open(s, error_code);
    if (*error_code != MPI_SUCCESS) {
        ADIOI_Free(s->filename);
        ADIOI_Free(s);
        return NULL;
    }
    return s;
}

static int start_engine(ADIO_File fd, ADIOI_ABT_File *a, const ADIOI_ABT_Hints *h)
{
    struct abt_config cfg;
    struct abt_sink sink;
    ADIOI_ABT_Configure(h, &cfg, a);
    int rc = ADIOI_ABT_Open_sink(fd, &sink);
    if (rc != 0)
        return rc;
    a->background = sink.ops->thread_safe;
    rc = abt_engine_create(&a->engine, &cfg, sink);
    if (rc != 0)
        sink.ops->close(sink.ctx);
    return rc;
}

void ADIOI_ABT_Open(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_ABT_OPEN";
    int type;
    ADIOI_Fns *ops;
    const char *name;
    ADIOI_ABT_Hints hints;

    *error_code = ADIOI_ABT_Resolve_inner(fd->filename, &type, &ops, &name);
    if (*error_code == MPI_SUCCESS)
        *error_code = ADIOI_ABT_Get_hints(fd, &hints, myname);
    if (*error_code != MPI_SUCCESS)
        return;
    ADIOI_ABT_Finish_deferred(fd->filename);    /* our own writes come first */
    ADIO_File s = open_shadow(fd, type, ops, name, error_code);
    if (s == NULL)
        return;
    fd->fd_sys = -1;
    fd->blksize = s->blksize;
    fd->fp_ind = s->fp_ind;     /* set by the inner open for ADIO_APPEND */
    fd->fp_sys_posn = s->fp_sys_posn;

    ADIOI_ABT_File *a = ADIOI_Calloc(1, sizeof *a);
    a->inner = s;
    a->open_comm = fd->comm;
    fd->fs_ptr = a;
    int rc = fd->access_mode & (ADIO_WRONLY | ADIO_RDWR) ? start_engine(fd, a, &hints) : 0;
    if (rc != 0) {
        int ignored;
        *error_code = ADIOI_ABT_Error(rc, myname, fd->filename);
        s->fns->ADIOI_xxx_Close(s, &ignored);
        ADIOI_Free(s->filename);
        ADIOI_Free(s);
        free(a->stage_dir);
        ADIOI_Free(a);
        fd->fs_ptr = NULL;
        return;
    }
    a->visibility_reported = -1;    /* by the first Sync_shadow, with the user's mode */
    ADIOI_ABT_Register(fd);     /* reads and writes of other handles follow its writes */
}
