/*
 * What the abt: entry points share: finding the inner driver, keeping the
 * shadow file of the inner driver in step with the user's file, draining
 * before a call that must see the buffered writes, errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ad_abt.h"
#include "adio_extern.h"

/* The inner drivers abt can resolve without ROMIO when ROMIO_FSTYPE_FORCE
 * names abt: and would resolve every name, the inner one too, to abt. */
static const struct {
    const char *prefix;
    int type;
    ADIOI_Fns *ops;
} unforced[] = {
#ifdef ROMIO_UFS
    { "ufs:", ADIO_UFS, &ADIO_UFS_operations },
#endif
#ifdef ROMIO_NFS
    { "nfs:", ADIO_NFS, &ADIO_NFS_operations },
#endif
#ifdef ROMIO_RFS
    { "rfs:", ADIO_RFS, &ADIO_RFS_operations },
#endif
#ifdef ROMIO_RDMA
    { "rdma:", ADIO_RDMA, &ADIO_RDMA_operations },
#endif
};

static int forced_to_abt(void)
{
    const char *force = getenv("ROMIO_FSTYPE_FORCE");
    return force && strncasecmp(force, "abt:", 4) == 0;
}

/* The prefix a plain name gets under ROMIO_FSTYPE_FORCE=abt: the one of
 * ADIOI_ABT_INNER_ENV, else ufs: (over NFS, nfs: is asked for by name). */
static const char *plain_name_prefix(void)
{
    const char *inner = getenv(ADIOI_ABT_INNER_ENV);
    return inner && *inner ? inner : "ufs:";
}

static int resolve_unforced(const char *name, int *type, ADIOI_Fns **ops)
{
    const char *colon = strchr(name, ':');
    const char *prefix = colon > name + 1 ? name : plain_name_prefix();
    for (size_t i = 0; i < sizeof unforced / sizeof unforced[0]; i++) {
        size_t n = strlen(unforced[i].prefix);
        if (strncasecmp(prefix, unforced[i].prefix, n) == 0) {
            *type = unforced[i].type;
            *ops = unforced[i].ops;
            return MPI_SUCCESS;
        }
    }
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, "ADIOI_ABT_RESOLVE",
                                __LINE__, MPI_ERR_BAD_FILE, "**filename", "**filename %s",
                                "no inner driver for abt: under ROMIO_FSTYPE_FORCE "
                                "(ufs:, nfs:, rfs: or rdma: in the name or in "
                                ADIOI_ABT_INNER_ENV ")");
}

/*
 * The driver and the name the inner driver sees, as MPI_File_open would
 * find them for `name`: a prefix decides without communication; an
 * unprefixed name is looked at locally (MPI_COMM_SELF). abt over abt is
 * refused: the second layer would only copy the data twice.
 */
int ADIOI_ABT_Resolve_inner(const char *name, int *type, ADIOI_Fns **ops, const char **inner)
{
    int err = MPI_SUCCESS;
    if (forced_to_abt())
        err = resolve_unforced(name, type, ops);
    else
        ADIO_ResolveFileType(MPI_COMM_SELF, name, type, ops, &err);
    if (err != MPI_SUCCESS)
        return err;
    if (*type == ADIO_ABT)
        return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, "ADIOI_ABT_RESOLVE",
                                    __LINE__, MPI_ERR_BAD_FILE, "**filename", "**filename %s",
                                    "abt: cannot be stacked on abt:");
    /* strip the inner prefix as MPI_File_open does (open.c: not a drive letter) */
    const char *colon = strchr(name, ':');
    *inner = colon > name + 1 ? colon + 1 : name;
    return MPI_SUCCESS;
}

/* Before a call goes on to the inner driver: everything this file holds
 * lands first, then the shadow takes the file's state. MPI_SUCCESS or the
 * drain's error (the shadow untouched). */
int ADIOI_ABT_Hand_over(ADIO_File fd, const char *myname)
{
    int err = ADIOI_ABT_Drain(fd, myname);
    if (err == MPI_SUCCESS)
        ADIOI_ABT_Sync_shadow(fd);
    return err;
}

/*
 * The shadow takes the user's file state (view, pointers, atomicity,
 * hints) and keeps what belongs to the inner driver: its descriptor,
 * private data, table and name.
 */
void ADIOI_ABT_Sync_shadow(ADIO_File fd)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    ADIO_File s = a->inner;
    struct ADIOI_FileD own = *s;
    *s = *fd;
    s->fd_sys = own.fd_sys;
    s->null_fd = own.null_fd;
    s->fd_direct = own.fd_direct;
    s->blksize = own.blksize;
    s->fns = own.fns;
    s->filename = own.filename;
    s->file_system = own.file_system;
    s->fs_ptr = own.fs_ptr;
    s->shared_fp_fd = NULL;
    ADIOI_ABT_Report_visibility(fd);
}

/*
 * Writes are buffered unless the file is atomic, a lock is held (the data
 * must be in the file before the lock is released), or the file is open
 * read-write and abt_buffer_rdwr does not let them be (ADIOI_ABT_Rdwr_through).
 */
int ADIOI_ABT_Buffering(ADIO_File fd)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    return a->engine != NULL && !fd->atomicity && a->locks_held == 0 &&
           !ADIOI_ABT_Rdwr_through(fd);
}

/*
 * Opened read-write by the user, and written through: abt_buffer_rdwr is
 * disable, or auto where the inner file's servers keep no leases (ufs:,
 * nfs:, an rfsd without them). A file that is read back is one whose
 * libraries expect a write to be in the file when its call returns, as
 * file systems give, and order processes by that and a barrier, which abt
 * cannot see: HDF5 writes a dataset's fill values from one process, calls
 * MPI_Barrier, and then every process writes its data over them
 * (H5Dcontig.c); a fill still buffered would land over the data. Leases
 * give that order back: the servers hold every other access to bytes a
 * process still buffers until they have landed. Without them MPI
 * promises no more than sync, barrier, sync, which is what
 * abt_buffer_rdwr=enable relies on. Not to be asked inside Open: ROMIO
 * opens a write-only file read-write when its driver does data-sieving
 * writes, and gives fd the user's mode back after Open returns
 * (ADIOI_GEN_OpenColl).
 */
int ADIOI_ABT_Rdwr_through(ADIO_File fd)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    if (!(fd->access_mode & ADIO_RDWR))
        return 0;
    return a->buffer_rdwr == ADIOI_ABT_RDWR_DISABLE ||
           (a->buffer_rdwr == ADIOI_ABT_RDWR_AUTO && a->lease_owner == 0);
}

/* romio_visibility_immediate: is a write visible to every other access
 * when its call returns (atomic mode, a read-write file written through,
 * or one whose servers hold its buffered bytes under leases)? Before
 * Open (fs_ptr NULL) atomic mode alone decides; after it, the first
 * Sync_shadow (MPI_File_open asks for a feature of the open file) reports
 * with the user's access mode. */
void ADIOI_ABT_Report_visibility(ADIO_File fd)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    int immediate = fd->atomicity ||
                    (a && (ADIOI_ABT_Rdwr_through(fd) || ADIOI_ABT_Leasing(fd)));
    if (a && a->visibility_reported == immediate)
        return;
    if (a)
        a->visibility_reported = immediate;
    ADIOI_Info_set(fd->info, "romio_visibility_immediate", immediate ? "true" : "false");
}

/* A negative errno of the engine (possibly of a write drained long ago)
 * in ROMIO's error classes: no space, quota, access, ..., else MPI_ERR_IO. */
int ADIOI_ABT_Error(int rc, const char *myname, const char *filename)
{
    return ADIOI_Err_create_code(myname, filename, -rc);
}

/* The bytes of a contiguous access and where it starts in the file. */
ADIO_Offset ADIOI_ABT_Extent(ADIO_File fd, romio_count_t count, MPI_Datatype datatype,
                             int file_ptr_type,
                             ADIO_Offset offset, ADIO_Offset *start)
{
    MPI_Count size;
    MPI_Type_size_x(datatype, &size);
    *start = file_ptr_type == ADIO_EXPLICIT_OFFSET ? offset : fd->fp_ind;
    return (ADIO_Offset) size * count;
}

void ADIOI_ABT_Print_stats(const char *name, struct abt_engine *e)
{
    struct abt_stats st;
    abt_get_stats(e, &st);
    double mb = 1e-6;
    fprintf(stderr,
            "abt stats: %s: %llu writes, %.1f MB buffered (%llu bytes), "
            "%.1f MB staged in foreground, "
            "%.1f MB in background, %.1f MB drained in %llu writes at %.1f MB/s "
            "(%.1f MB written through), "
            "peak memory %.1f MB, waited %.3f s, drain thread CPU %.3f s, "
            "%llu leases, %llu releases%s\n", name,
            (unsigned long long) st.writes,
            mb * (double) st.bytes_buffered, (unsigned long long) st.bytes_buffered,
            mb * (double) st.bytes_staged_fg,
            mb * (double) st.bytes_staged_bg, mb * (double) st.bytes_drained,
            (unsigned long long) st.sink_writes,
            st.drain_seconds > 0 ? mb * (double) st.bytes_drained / st.drain_seconds : 0.0,
            mb * (double) st.bytes_through,
            mb * (double) st.peak_memory, st.wait_seconds, st.background_cpu,
            (unsigned long long) st.leases, (unsigned long long) st.releases,
            st.stage_failed ? " (the cache file filled up: staging stopped)" : "");
}
