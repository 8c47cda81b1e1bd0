/*
 * The sink of the inner file: a thread-safe one without MPI where the
 * inner driver's file can be reached directly (ufs/nfs: the local file;
 * rfs: a second connection to the same server and path), else the inner
 * driver itself, drained on the application thread.
 */
#include <errno.h>

#include "ad_abt.h"
#ifdef ROMIO_RFS
#include "../ad_rfs/ad_rfs.h"
#endif

/* Large enough to need few calls, small enough for an int count. */
#define INNER_CHUNK (1u << 30)

static int errno_of_class(int error_code)
{
    int cls = MPI_ERR_IO;
    MPI_Error_class(error_code, &cls);
    switch (cls) {
    case MPI_ERR_NO_SPACE: return ENOSPC;
    case MPI_ERR_QUOTA: return EDQUOT;
    case MPI_ERR_ACCESS: return EACCES;
    case MPI_ERR_READ_ONLY: return EROFS;
    default: return EIO;
    }
}

static int inner_pwrite(void *ctx, const void *buf, uint64_t len, uint64_t offset)
{
    ADIO_File fd = ctx;
    ADIOI_ABT_File *a = fd->fs_ptr;
    const char *c = buf;
    ADIOI_ABT_Sync_shadow(fd);
    while (len > 0) {
        int n = (int) (len < INNER_CHUNK ? len : INNER_CHUNK), err;
        ADIO_Status status;
        ADIO_WriteContig(a->inner, c, n, MPI_BYTE, ADIO_EXPLICIT_OFFSET, (ADIO_Offset) offset,
                         &status, &err);
        if (err != MPI_SUCCESS)
            return -errno_of_class(err);
        c += n;
        len -= (uint64_t) n;
        offset += (uint64_t) n;
    }
    return 0;
}

static void inner_close(void *ctx)
{
    (void) ctx;                 /* the inner file is closed by ADIOI_ABT_Close */
}

static const struct abt_sink_ops inner_ops = {
    "inner driver", 0, inner_pwrite, NULL, inner_close
};

/* 0 or a negative errno. */
int ADIOI_ABT_Open_sink(ADIO_File fd, struct abt_sink *sink)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    ADIO_File in = a->inner;
    switch (in->file_system) {
    case ADIO_UFS:
    case ADIO_NFS:
        return abt_sink_posix_open(sink, in->filename);
#ifdef ROMIO_RFS
    case ADIO_RFS: {
        const char *host, *port, *path;
        struct rfs_connect_opts o;
        ADIOI_RFS_Reach(in, &host, &port, &path, &o);
        return abt_sink_rfs_open(sink, host, port, path, &o);
    }
#endif
    default:
        *sink = (struct abt_sink) { &inner_ops, fd };
        return 0;
    }
}
