/*
 * Noncontiguous I/O through file views (dtype_view.h): ROMIO's view and
 * file pointer semantics on top of a driver's "move n data bytes at view
 * position p".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "adio.h"
#include "adio_extern.h"
#include "dtype_mpi.h"
#include "dtype_view.h"

/* A description of an MPI type, freed after use if not cached. */
struct described {
    const struct dtype *t;
    int owned;
};

static void release(struct described *d)
{
    if (d->owned)
        dtype_free((struct dtype *) d->t);
    d->t = NULL;
}

/* The file offset just past data byte `pos` of the view, and of its first
 * data byte at or after `pos`. */
static ADIO_Offset view_offset(ADIO_File fd, const struct dtype *file, int64_t pos, int after)
{
    struct dtype_iter it;
    int64_t off = fd->disp, len;
    int64_t first = after ? pos - 1 : pos;
    if (!file)
        return fd->disp + pos;
    if (dtype_iter_init(&it, file, first / file->size + 1, fd->disp, first, first + 1) == 0)
        dtype_iter_next(&it, &off, &len);
    return after ? off + 1 : off;
}

/*
 * The data position of the view at file offset `at` (the individual file
 * pointer): the data bytes of the runs before it. Views are monotonic
 * (ROMIO checks), so only the runs of the instance holding `at` are
 * walked. ROMIO's ADIOI_Get_position gets types whose lb lies above their
 * first data byte wrong (a resized MPI_INT, in MPICH's test/mpi/io).
 */
static int64_t view_position(ADIO_File fd, const struct dtype *file, ADIO_Offset at)
{
    struct dtype_iter it;
    int64_t off, len, k, pos;
    if (!file)
        return at > fd->disp ? at - fd->disp : 0;
    k = file->extent > 0 ? (at - fd->disp - file->true_lb) / file->extent - 1 : 0;
    if (k < 0)
        k = 0;
    pos = k * file->size;
    if (dtype_iter_init(&it, file, k + 3, fd->disp, pos, (k + 3) * file->size) < 0)
        return pos;
    while (dtype_iter_next(&it, &off, &len) && off < at)
        pos += at - off < len ? at - off : len;
    return pos;
}

void dtype_view_span(ADIO_File fd, const struct dtype *file, int64_t pos, int64_t len,
                     ADIO_Offset *start, ADIO_Offset *span)
{
    *start = view_offset(fd, file, pos, 0);
    *span = view_offset(fd, file, pos + len, 1) - *start;
}

/* Atomic mode: a server lock over the file bytes the access touches. */
static void lock_span(ADIO_File fd, const struct dtype *file, int64_t pos, int64_t len,
                      int is_write, ADIO_Offset *start, ADIO_Offset *span)
{
    dtype_view_span(fd, file, pos, len, start, span);
    if (is_write)
        ADIOI_WRITE_LOCK(fd, *start, SEEK_SET, *span);
    else
        ADIOI_READ_LOCK(fd, *start, SEEK_SET, *span);
}

static int describe(MPI_Datatype type, struct described *d)
{
    int contig;
    MPI_Count size, lb, extent;
    d->t = NULL;
    d->owned = 0;
    /* contiguous and tiling without gaps: a resized contiguous type is not */
    ADIOI_Datatype_iscontig(type, &contig);
    MPI_Type_size_x(type, &size);
    MPI_Type_get_extent_x(type, &lb, &extent);
    if (contig && size == extent)
        return 0;
    return dtype_mpi_get(type, &d->t, &d->owned);
}

/* The view's filetype, described if the driver takes its wire form. */
static int describe_view(ADIO_File fd, const struct dtype_view_ops *ops, struct described *d)
{
    if (describe(fd->filetype, d) < 0)
        return -1;
    if (d->t && ops->max_view && dtype_serialize(d->t, NULL) > ops->max_view) {
        release(d);
        return -1;
    }
    return 0;
}

/* The memory side: the typed buffer, its MPI type and its description. */
struct memory {
    char *buf;
    MPI_Datatype type;
    romio_count_t count;
    const struct dtype *t;      /* NULL: contiguous */
};

/*
 * Pack or unpack the data bytes [at, at + n) of the typed buffer. Whole
 * instances go through MPI_Pack/MPI_Unpack: MPICH's own pack engine
 * beats walking the runs one by one where they are small (8-byte runs
 * of the FLASH pattern: about 3x); a window that cuts an instance (a type
 * larger than a piece, or the end of the file) is walked by the engine.
 */
static void pack_window(const struct memory *m, int64_t at, int64_t n, char *packed,
                        int is_pack)
{
    int64_t size = m->t->size;
    if (at % size == 0 && n % size == 0) {
        char *base = m->buf + (at / size) * m->t->extent;
        int pos = 0;
        if (is_pack)
            MPI_Pack(base, (int) (n / size), m->type, packed, (int) n, &pos, MPI_COMM_SELF);
        else
            MPI_Unpack(packed, (int) n, &pos, base, (int) (n / size), m->type, MPI_COMM_SELF);
    } else if (is_pack) {
        dtype_pack(m->t, m->count, m->buf, at, n, packed);
    } else {
        dtype_unpack(m->t, m->count, m->buf, at, n, packed);
    }
}

/* The data bytes of one move for a noncontiguous memory type: whole
 * instances where one fits in DTYPE_VIEW_PIECE. */
static int64_t most_per_move(const struct dtype *t)
{
    return t->size <= DTYPE_VIEW_PIECE ? DTYPE_VIEW_PIECE / t->size * t->size : DTYPE_VIEW_PIECE;
}

/* Whether the driver takes this memory as segments: the average run of
 * its first window (at most 256 of the runs asked for) is long enough. */
static int segments_pay(ADIO_File fd, const struct dtype_view_ops *ops, const struct memory *m,
                        int64_t total)
{
    int64_t from = ops->move_segments ? ops->segments_from(fd) : INT64_MAX, off, len;
    if (!m->t || from == INT64_MAX)
        return 0;
    if (from <= 1)
        return 1;
    int64_t window = total < 256 * from ? total : 256 * from, runs = 0;
    struct dtype_iter it;
    if (dtype_iter_init(&it, m->t, m->count, 0, 0, window) < 0)
        return 0;
    while (dtype_iter_next(&it, &off, &len))
        runs++;
    return runs * from <= window;
}

/* The memory of data bytes [at, at + most) as segments, at most
 * DTYPE_VIEW_SEGS of them: their count in *nseg, the bytes they cover
 * returned. */
static int64_t memory_segments(const struct memory *m, int64_t at, int64_t most,
                               struct iovec *seg, int *nseg)
{
    struct dtype_iter it;
    int64_t off, len, covered = 0;
    *nseg = 0;
    if (dtype_iter_init(&it, m->t, m->count, 0, at, at + most) < 0)
        return 0;
    while (*nseg < DTYPE_VIEW_SEGS && dtype_iter_next(&it, &off, &len)) {
        seg[(*nseg)++] = (struct iovec) { m->buf + off, (size_t) len };
        covered += len;
    }
    return covered;
}

/* One move of the *n data bytes from data byte `at` of the typed buffer:
 * packed through `piece`, as segments (`seg` not NULL: *n becomes the
 * bytes of at most DTYPE_VIEW_SEGS of them), or straight from a
 * contiguous buffer. */
static int move_piece(ADIO_File fd, const struct dtype_view_ops *ops, const struct memory *m,
                      const struct dtype *file, int64_t pos, int64_t at, int64_t *n,
                      char *piece, struct iovec *seg, int is_write, uint64_t *got)
{
    int rc, nseg;
    if (seg) {
        *n = memory_segments(m, at, *n, seg, &nseg);
        return *n > 0 ? ops->move_segments(fd, file, seg, nseg, *n, pos + at, is_write, got)
                      : -EINVAL;
    }
    if (!m->t)
        return ops->move(fd, file, m->buf + at, *n, pos + at, is_write, got);
    if (is_write)
        pack_window(m, at, *n, piece, 1);
    rc = ops->move(fd, file, piece, *n, pos + at, is_write, got);
    if (rc == 0 && !is_write)
        pack_window(m, at, (int64_t) *got, piece, 0);
    return rc;
}

/* Move `total` data bytes between the typed buffer and the view from data
 * position `pos`: packed in pieces of whole instances where one fits in
 * DTYPE_VIEW_PIECE, or as segments; *moved gets the bytes moved (short
 * only at end of file). */
static int transfer(ADIO_File fd, const struct dtype_view_ops *ops, const struct memory *m,
                    const struct dtype *file, int64_t pos, int64_t total, int is_write,
                    int64_t *moved)
{
    struct iovec *seg = NULL;
    char *piece = NULL;
    int64_t most = m->t ? most_per_move(m->t) : total;
    int rc = 0;
    *moved = 0;
    if (segments_pay(fd, ops, m, total)) {
        seg = ADIOI_Malloc(DTYPE_VIEW_SEGS * sizeof *seg);
        most = DTYPE_VIEW_PIECE;
    } else if (m->t) {
        piece = ADIOI_Malloc(total < most ? total : most);
    }
    while (rc == 0 && *moved < total) {
        int64_t n = total - *moved < most ? total - *moved : most;
        uint64_t got = 0;
        rc = move_piece(fd, ops, m, file, pos, *moved, &n, piece, seg, is_write, &got);
        if (rc == 0)
            *moved += (int64_t) got;
        if ((int64_t) got < n)
            break;                      /* end of file */
    }
    if (piece)
        ADIOI_Free(piece);
    if (seg)
        ADIOI_Free(seg);
    return rc;
}

int dtype_view_describable(ADIO_File fd, MPI_Datatype datatype,
                           const struct dtype_view_ops *ops, int64_t *most)
{
    struct described mem, file;
    int ok = describe(datatype, &mem) == 0 && describe_view(fd, ops, &file) == 0;
    *most = ok && mem.t ? most_per_move(mem.t) : INT64_MAX;
    release(&mem);
    if (ok)
        release(&file);
    return ok;
}

void dtype_view_strided_io(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                           int is_write, const struct dtype_view_ops *ops, int *error_code)
{
    struct described mem, file;
    MPI_Count type_size;
    int64_t moved = 0;

    if (describe(datatype, &mem) < 0 || describe_view(fd, ops, &file) < 0) {
        release(&mem);
        if (is_write)
            ADIOI_GEN_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
        else
            ADIOI_GEN_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                                  error_code);
        return;
    }
    MPI_Type_size_x(datatype, &type_size);
    int64_t total = (int64_t) type_size * count;
    struct memory m = { .buf = buf, .type = datatype, .count = count, .t = mem.t };
    int64_t pos = file_ptr_type == ADIO_INDIVIDUAL ? view_position(fd, file.t, fd->fp_ind)
                                                   : offset * fd->etype_size;

    int rc = 0;
    if (total > 0) {
        ADIO_Offset lock_start = 0, lock_len = 0;
        rc = ops->prepare(fd, file.t);
        if (rc == 0 && fd->atomicity)
            lock_span(fd, file.t, pos, total, is_write, &lock_start, &lock_len);
        if (rc == 0)
            rc = transfer(fd, ops, &m, file.t, pos, total, is_write, &moved);
        if (fd->atomicity && lock_len > 0)
            ADIOI_UNLOCK(fd, lock_start, SEEK_SET, lock_len);
    }
    if (rc == 0 && moved > 0 && file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind = view_offset(fd, file.t, pos + moved, 1);
    fd->fp_sys_posn = -1;               /* unknown after a noncontiguous access */
    release(&mem);
    release(&file);
    if (rc != 0) {
        *error_code = ops->error(fd, rc, is_write);
        return;
    }
#ifdef HAVE_STATUS_SET_BYTES
    MPIR_Status_set_bytes(status, datatype, (MPI_Count) moved);
#endif
    *error_code = MPI_SUCCESS;
}

void dtype_view_contig_done(ADIO_File fd, MPI_Datatype datatype, int file_ptr_type,
                            ADIO_Offset offset, uint64_t done, ADIO_Status *status)
{
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind += (ADIO_Offset) done;
    fd->fp_sys_posn = offset + (ADIO_Offset) done;
#ifdef HAVE_STATUS_SET_BYTES
    MPIR_Status_set_bytes(status, datatype, (MPI_Count) done);
#else
    (void) datatype;
    (void) status;
#endif
}
