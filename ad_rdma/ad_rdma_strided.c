/*
 * Noncontiguous independent I/O by rdma_io_method: naive, list or
 * datatype I/O (adio/stripe/stripe_io.c) under ROMIO's view semantics
 * (dtype_view.c, which packs the memory side, or hands it down as
 * segments: rdma_memory_segments). A datatype transfer sends
 * the encoded view, which each server keeps until set_view changes it.
 */
#include "ad_rdma.h"
#include "adio_extern.h"
#include "dtype_view.h"

int ADIOI_RDMA_Prepare_view(ADIO_File fd, const struct dtype *file)
{
    ADIOI_RDMA_File *f = fd->fs_ptr;
    if (!file || !f->view_stale)
        return 0;
    size_t n = dtype_serialize(file, NULL);
    if (f->view_enc)
        ADIOI_Free(f->view_enc);
    f->view_enc = ADIOI_Malloc(n);
    dtype_serialize(file, f->view_enc);
    f->view_len = n;
    f->view_stale = 0;
    return 0;
}

static int rdma_move_segments(ADIO_File fd, const struct dtype *file, const struct iovec *mem,
                              int nmem, int64_t n, int64_t pos, int is_write, uint64_t *got)
{
    ADIOI_RDMA_File *f = fd->fs_ptr;
    struct stripe_view view = { .type = file, .disp = (uint64_t) fd->disp,
                                .enc = f->view_enc, .enc_len = f->view_len };
    return stripe_iov_io(&f->sf, (enum stripe_method) f->method, &view, (uint64_t) pos,
                         (uint64_t) n, mem, nmem, is_write, got);
}

static int rdma_move(ADIO_File fd, const struct dtype *file, char *data, int64_t n, int64_t pos,
                     int is_write, uint64_t *got)
{
    struct iovec mem = { .iov_base = data, .iov_len = (size_t) n };
    return rdma_move_segments(fd, file, &mem, 1, n, pos, is_write, got);
}

static int64_t rdma_segments_from(ADIO_File fd)
{
    return ((ADIOI_RDMA_File *) fd->fs_ptr)->segments_from;
}

int ADIOI_RDMA_View_error(ADIO_File fd, int rc, int is_write)
{
    return ADIOI_RDMA_Error(rc, "ADIOI_RDMA_STRIDED_IO", fd->fs_ptr, is_write ? "write" : "read");
}

static const struct dtype_view_ops rdma_view_ops = {
    .prepare = ADIOI_RDMA_Prepare_view, .move = rdma_move, .error = ADIOI_RDMA_View_error,
    .move_segments = rdma_move_segments, .segments_from = rdma_segments_from,
    .max_view = RFS_MAX_VIEW
};

void ADIOI_RDMA_Strided_io(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                           int is_write, int *error_code)
{
    dtype_view_strided_io(fd, buf, count, datatype, file_ptr_type, offset, status, is_write,
                          &rdma_view_ops, error_code);
}
