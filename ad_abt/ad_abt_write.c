/*
 * WriteContig copies into the engine and returns; atomic mode and writes
 * under a lock (shared file pointer, data sieving) go through the inner
 * driver after everything before them. WriteStrided queues the view's file
 * runs itself; so does WriteStridedColl where the runs are large enough,
 * else it is ROMIO's generic two-phase into the buffers. Both run between
 * output-phase marks, which tell the engine when the application computes;
 * a collective write goes through the inner driver's own collective instead
 * when that was measured faster.
 */
#include "ad_abt.h"
#include "dtype_view.h"

static void write_through(ADIO_File fd, const void *buf, romio_count_t count, MPI_Datatype datatype,
                          ADIO_Offset off, ADIO_Status *status, int *error_code)
{
    static char myname[] = "ADIOI_ABT_WRITECONTIG";
    ADIOI_ABT_File *a = fd->fs_ptr;
    *error_code = ADIOI_ABT_Hand_over(fd, myname);
    if (*error_code != MPI_SUCCESS)
        return;
    ADIO_WriteContig(a->inner, buf, count, datatype, ADIO_EXPLICIT_OFFSET, off, status,
                     error_code);
}

void ADIOI_ABT_WriteContig(ADIO_File fd, const void *buf, romio_count_t count,
                           MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                           ADIO_Status *status, int *error_code)
{
    static char myname[] = "ADIOI_ABT_WRITECONTIG";
    ADIOI_ABT_File *a = fd->fs_ptr;
    ADIO_Offset off;
    ADIO_Offset len = ADIOI_ABT_Extent(fd, count, datatype, file_ptr_type, offset, &off);

    if (ADIOI_ABT_Buffering(fd)) {
        /* what another handle of the file still holds of the range lands first */
        *error_code = ADIOI_ABT_Drain_range(fd, ADIOI_ABT_OTHERS, (uint64_t) off,
                                            (uint64_t) len, myname);
        if (*error_code == MPI_SUCCESS)
            *error_code = ADIOI_ABT_Lease_begin(fd, (uint64_t) off, (uint64_t) len, myname);
        if (*error_code != MPI_SUCCESS)
            return;
        abt_phase_begin(a->engine);
        int rc = abt_write(a->engine, (uint64_t) off, buf, (uint64_t) len);
        abt_phase_end(a->engine);
        ADIOI_ABT_Lease_end(fd);
        *error_code = rc ? ADIOI_ABT_Error(rc, myname, fd->filename) : MPI_SUCCESS;
#ifdef HAVE_STATUS_SET_BYTES
        if (*error_code == MPI_SUCCESS && status)
            MPIR_Status_set_bytes(status, datatype, len);
#endif
    } else {
        write_through(fd, buf, count, datatype, off, status, error_code);
    }
    if (*error_code == MPI_SUCCESS && file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind = fd->fp_sys_posn = off + len;
    ADIOI_COMPAT_WROTE(fd);
}

static int queue_run(ADIO_File fd, int64_t off, const char *data, int64_t len,
                     const char *myname)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    int rc = abt_write(a->engine, (uint64_t) off, data, (uint64_t) len);
    return rc ? ADIOI_ABT_Error(rc, myname, fd->filename) : MPI_SUCCESS;
}

/*
 * A collective write's runs shorter than this on average (in the file
 * view) buffer better through ROMIO's exchange, which merges them into
 * the aggregators' large pieces: a run buffered by its own process is a
 * record of the engine and, over rfs:, a 16-byte pair of a list write.
 * Memory runs this long are copied into the buffers where they lie,
 * without being packed first.
 */
#define ADIOI_ABT_MIN_OWN_RUN 256

/* The next data byte of a move: in segment seg[0], whose `left` bytes
 * from `data` on are still to go; `more` segments follow it. */
struct mem_cursor {
    const struct iovec *seg;
    int more;
    const char *data;
    int64_t left;
};

/* Queues the file run [off, off + len) from the cursor on, a piece for
 * each memory segment it spans. */
static int queue_file_run(ADIO_File fd, int64_t off, int64_t len, struct mem_cursor *c,
                          const char *myname)
{
    int err = MPI_SUCCESS;
    while (err == MPI_SUCCESS && len > 0) {
        while (c->left == 0 && c->more > 0) {
            c->seg++;
            c->more--;
            c->data = c->seg->iov_base;
            c->left = (int64_t) c->seg->iov_len;
        }
        if (c->left == 0)
            return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                        MPI_ERR_INTERN, "**io", "**io %s",
                                        "memory segments shorter than the data");
        int64_t piece = len < c->left ? len : c->left;
        err = queue_run(fd, off, c->data, piece, myname);
        off += piece;
        len -= piece;
        c->data += piece;
        c->left -= piece;
    }
    return err;
}

/* The file runs of data bytes [pos, pos + n) of the view (NULL: the file
 * from the displacement), from the cursor on. */
static int queue_view_move(ADIO_File fd, const struct dtype *file, int64_t n, int64_t pos,
                           struct mem_cursor *c, const char *myname)
{
    struct dtype_iter it;
    int64_t off, len;
    int err = MPI_SUCCESS;
    if (!file)
        err = queue_file_run(fd, fd->disp + pos, n, c, myname);
    else if (dtype_iter_init(&it, file, (pos + n) / file->size + 1, fd->disp, pos, pos + n) < 0)
        err = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                   MPI_ERR_ARG, "**io", "**io %s",
                                   "the view's file offsets do not fit in 63 bits");
    else
        while (err == MPI_SUCCESS && dtype_iter_next(&it, &off, &len))
            err = queue_file_run(fd, off, len, c, myname);
    return err;
}

/* One move of a strided write (dtype_view_ops): the view's file runs of
 * data bytes [pos, pos + n), lying in memory segments in order, copied
 * into the engine where a file run and a segment meet (64-bit lengths),
 * after what another handle of the file holds of their span has landed
 * and, in a leased file, under a lease on the span. This driver's error
 * codes are MPI error codes. */
static int queue_segments(ADIO_File fd, const struct dtype *file, const struct iovec *mem,
                          int nmem, int64_t n, int64_t pos, int is_write, uint64_t *got)
{
    static char myname[] = "ADIOI_ABT_WRITESTRIDED";
    struct mem_cursor c = { mem, nmem - 1, mem[0].iov_base, (int64_t) mem[0].iov_len };
    ADIO_Offset start, span;
    (void) is_write;
    *got = 0;
    dtype_view_span(fd, file, pos, n, &start, &span);
    int err = ADIOI_ABT_Drain_range(fd, ADIOI_ABT_OTHERS, (uint64_t) start, (uint64_t) span,
                                    myname);
    if (err == MPI_SUCCESS)
        err = ADIOI_ABT_Lease_begin(fd, (uint64_t) start, (uint64_t) span, myname);
    if (err != MPI_SUCCESS)
        return err;
    err = queue_view_move(fd, file, n, pos, &c, myname);
    ADIOI_ABT_Lease_end(fd);
    if (err == MPI_SUCCESS)
        *got = (uint64_t) n;
    return err;
}

/* The same, the data packed (or contiguous in memory). */
static int queue_runs(ADIO_File fd, const struct dtype *file, char *data, int64_t n,
                      int64_t pos, int is_write, uint64_t *got)
{
    struct iovec mem = { .iov_base = data, .iov_len = (size_t) n };
    return queue_segments(fd, file, &mem, 1, n, pos, is_write, got);
}

static int64_t own_runs_from(ADIO_File fd)
{
    (void) fd;
    return ADIOI_ABT_MIN_OWN_RUN;
}

static int no_view_to_prepare(ADIO_File fd, const struct dtype *file)
{
    (void) fd, (void) file;
    return 0;
}

static int mpi_error(ADIO_File fd, int err, int is_write)
{
    (void) fd, (void) is_write;
    return err;
}

static const struct dtype_view_ops abt_view_ops = {
    .prepare = no_view_to_prepare, .move = queue_runs, .error = mpi_error,
    .move_segments = queue_segments, .segments_from = own_runs_from
};

/* Not buffering (atomic mode, a lock held): the inner driver's own strided
 * write, after everything buffered before it. */
static void write_strided_through(ADIO_File fd, const void *buf, romio_count_t count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Status *status, int *error_code)
{
    static char myname[] = "ADIOI_ABT_WRITESTRIDED";
    ADIOI_ABT_File *a = fd->fs_ptr;
    *error_code = ADIOI_ABT_Hand_over(fd, myname);
    if (*error_code != MPI_SUCCESS)
        return;
    ADIO_WriteStrided(a->inner, buf, count, datatype, file_ptr_type, offset, status,
                      error_code);
    fd->fp_ind = a->inner->fp_ind;
    fd->fp_sys_posn = -1;
}

/* The view's file runs into the engine one by one (dtype_view.c walks the
 * view and packs a noncontiguous memory side). ROMIO's
 * ADIOI_GEN_WriteStrided_naive is not used: it places data wrongly for
 * resized filetypes and asserts on a run over 2 GiB. */
static void queue_view_runs(ADIO_File fd, const void *buf, romio_count_t count,
                            MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                            ADIO_Status *status, int *error_code)
{
    dtype_view_strided_io(fd, (void *) buf, count, datatype, file_ptr_type, offset, status, 1,
                          &abt_view_ops, error_code);
}

/* The view's runs are queued, unless data sieving is asked for: the runs
 * are copied anyway, and sieving reads back what the buffers hold. */
void ADIOI_ABT_WriteStrided(ADIO_File fd, const void *buf, romio_count_t count,
                            MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                            ADIO_Status *status, int *error_code)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    if (!ADIOI_ABT_Buffering(fd)) {
        write_strided_through(fd, buf, count, datatype, file_ptr_type, offset, status,
                              error_code);
    } else {
        abt_phase_begin(a->engine);
        if (fd->hints->ds_write == ADIOI_HINT_ENABLE)
            ADIOI_GEN_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
        else
            queue_view_runs(fd, buf, count, datatype, file_ptr_type, offset, status,
                            error_code);
        abt_phase_end(a->engine);
    }
    ADIOI_COMPAT_WROTE(fd);
}

/* The collective writes numbered 16, 32, 64, ... are buffered whatever
 * the rates say, so that the buffered rate follows the machine's; the
 * intervals double because a buffered write where through is faster
 * costs the difference once more each time. */
#define ADIOI_ABT_REMEASURE_FIRST 16

static int remeasure(unsigned n)
{
    return n >= ADIOI_ABT_REMEASURE_FIRST && (n & (n - 1)) == 0;
}

/*
 * Should this collective write go through the inner driver's own collective
 * (rfs: ships the view to the server) rather than be buffered by `path`?
 * Yes when this process measured it at least as fast as that: where the
 * inner driver drains as fast as abt can copy, the copy (and the exchange)
 * are all buffering adds. Before through has been measured the drain's
 * rate stands for it, with a margin, against the exchange: a wrong try
 * costs one write at the inner driver's pace. Not against own runs, a
 * local copy: the drain is one process's sink, alone and in the
 * background, where through is every process's at once; on loopback it
 * said 2-8 times through's rate and sent every periodic writer's second
 * snapshot through.
 */
static int vote_through(ADIOI_ABT_File *a, int path)
{
    if (remeasure(a->coll_writes))
        return 0;
    double buffered = a->coll_rate[path].bytes_per_s;
    double through = a->coll_rate[ADIOI_ABT_THROUGH].bytes_per_s;
    if (buffered <= 0)
        return 0;
    if (through > 0)
        return through >= buffered;
    return path == ADIOI_ABT_EXCHANGE && abt_drain_rate(a->engine) >= 2 * buffered;
}

/* Are the view's runs (the filetype's, not counting the zero-length
 * pairs that mark its bounds) ADIOI_ABT_MIN_OWN_RUN bytes or more on
 * average? A contiguous filetype is one run per access, however small
 * the type (the default view's is one byte). */
static int view_runs_large(ADIO_File fd)
{
    int contig;
    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    if (contig)
        return 1;
    ADIOI_Flatlist_node *flat = ADIOI_Flatten_and_find(fd->filetype);
    ADIO_Offset bytes = 0, runs = 0;
    for (MPI_Count i = 0; i < flat->count; i++) {
        bytes += flat->blocklens[i];
        runs += flat->blocklens[i] > 0;
    }
    return runs == 0 || bytes / runs >= ADIOI_ABT_MIN_OWN_RUN;
}

/*
 * This process's choice of path for a collective write, unless the
 * abt_coll_write hint names one: through in a read-write file written
 * through (ADIOI_ABT_Rdwr_through), or when that was measured faster;
 * else its own runs, copied straight into its own buffers, when they are
 * large enough and a thread drains them (the application thread would
 * drain them one by one through the inner driver); else the exchange.
 * Never its own runs when not buffering (atomic mode, a lock held): the
 * exchange then writes through, in WriteContig.
 */
static int coll_path_vote(ADIO_File fd)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    int own_runs_ok = ADIOI_ABT_Buffering(fd);
    if (a->coll_write != ADIOI_ABT_COLL_AUTO)
        return a->coll_write == ADIOI_ABT_OWN_RUNS && !own_runs_ok ? ADIOI_ABT_EXCHANGE
                                                                   : a->coll_write;
    if (ADIOI_ABT_Rdwr_through(fd))
        return ADIOI_ABT_THROUGH;
    int buffered = own_runs_ok && a->background && view_runs_large(fd) ? ADIOI_ABT_OWN_RUNS
                                                                       : ADIOI_ABT_EXCHANGE;
    return vote_through(a, buffered) ? ADIOI_ABT_THROUGH : buffered;
}

/* The inner driver's collective write on the shadow; its file pointer
 * comes back to the user's file. */
static void write_coll_inner(ADIO_File fd, const void *buf, romio_count_t count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             ADIO_Status *status, int *error_code)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    ADIOI_ABT_Sync_shadow(fd);
    a->inner->fns->ADIOI_xxx_WriteStridedColl(a->inner, buf, count, datatype, file_ptr_type,
                                              offset, status, error_code);
    fd->fp_ind = a->inner->fp_ind;
    fd->fp_sys_posn = a->inner->fp_sys_posn;
    ADIOI_COMPAT_WROTE(fd);
}

/* A buffered collective write in a file opened read-write without leases
 * (abt_buffer_rdwr=enable where the servers keep none): every process's
 * share lands before any process returns (HDF5 reads, at once and without
 * sync, what others wrote collectively), and all agree on failure. With
 * leases the servers hold such reads until the data has landed. */
static int land_before_return(ADIO_File fd, int err, const char *myname)
{
    if (err == MPI_SUCCESS)
        err = ADIOI_ABT_Drain(fd, myname);
    return ADIOI_ABT_Agree(fd->comm, err, myname);
}

/* Collective: the writes of every process that the call's accesses meet
 * land first (ad_abt_order.c); then the call's own writes are buffered
 * (each process its own runs, or through the exchange), or all processes
 * write through the inner driver (coll_path_vote). Buffered in a
 * write-only file (periodic output); in a file opened read-write without
 * leases (buffered only with abt_buffer_rdwr=enable) every process's land
 * before any returns: HDF5 reads back, independently and
 * without sync, what other processes wrote collectively (its parallel
 * filtered writes read each chunk filled at the dataset's creation; its
 * irregular selections, testphdf5's ccontw). */
void ADIOI_ABT_WriteStridedColl(ADIO_File fd, const void *buf, romio_count_t count,
                                MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                ADIO_Status *status, int *error_code)
{
    static char myname[] = "ADIOI_ABT_WRITESTRIDEDCOLL";
    ADIOI_ABT_File *a = fd->fs_ptr;
    int path = a->engine ? coll_path_vote(fd) : ADIOI_ABT_EXCHANGE;
    *error_code = ADIOI_ABT_Order_collective(fd, count, datatype, file_ptr_type, offset,
                                             &path, myname);
    if (*error_code != MPI_SUCCESS) {
        a->coll_call = 0;
        return;
    }
    if (a->engine == NULL) {
        ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
        return;
    }
    int through = path == ADIOI_ABT_THROUGH;
    abt_phase_begin(a->engine);
    double t0 = abt_now();
    if (through)
        write_coll_inner(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    else if (path == ADIOI_ABT_OWN_RUNS)
        queue_view_runs(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    else
        ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
    if (!through && (fd->access_mode & ADIO_RDWR) && !ADIOI_ABT_Leasing(fd))
        *error_code = land_before_return(fd, *error_code, myname);
    double dt = abt_now() - t0;
    abt_phase_end(a->engine);
    a->coll_call = 0;
    MPI_Count size;
    MPI_Type_size_x(datatype, &size);
    if (*error_code == MPI_SUCCESS)
        abt_rate_observe(&a->coll_rate[path], (uint64_t) size * (uint64_t) count, dt);
    a->coll_writes++;
}
