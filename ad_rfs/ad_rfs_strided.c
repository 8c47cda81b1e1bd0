/*
 * Native noncontiguous I/O (RFS paper; datatype I/O paper): the view is
 * shipped to the server once per MPI_File_set_view (riding on the next
 * request) and applied there by the datatype iterator, so data crosses
 * the network once, with no read-modify-write. Packing, positions and
 * locks are dtype_view.c's.
 */
#include "ad_rfs.h"
#include "adio_extern.h"
#include "dtype_view.h"

/* The server has the view once set_view (or set_info) has not changed it
 * since it was last queued. */
static int rfs_prepare(ADIO_File fd, const struct dtype *file)
{
    ADIOI_RFS_File *f = fd->fs_ptr;
    int rc = ADIOI_RFS_Ready(f);
    if (rc != 0 || !file || !f->view_stale)
        return rc;
    size_t n = dtype_serialize(file, NULL);
    uint8_t *enc = ADIOI_Malloc(n);
    dtype_serialize(file, enc);
    rc = rfs_set_view(f->conn.client, f->conn.handle, (uint64_t) fd->disp, enc, n);
    ADIOI_Free(enc);
    if (rc == 0)
        f->view_stale = 0;
    return rc;
}

static int rfs_move(ADIO_File fd, const struct dtype *file, char *data, int64_t n, int64_t pos,
                    int is_write, uint64_t *got)
{
    ADIOI_RFS_File *f = fd->fs_ptr;
    uint64_t at = (uint64_t) pos;
    if (is_write) {
        *got = (uint64_t) n;
        rfs_shared_wrote(&f->conn);
        return file ? rfs_vwrite(f->conn.client, f->conn.handle, data, n, at)
                    : rfs_pwrite(f->conn.client, f->conn.handle, data, n, fd->disp + at);
    }
    return file ? rfs_vread(f->conn.client, f->conn.handle, data, n, at, got)
                : rfs_pread(f->conn.client, f->conn.handle, data, n, fd->disp + at, got);
}

static int rfs_error(ADIO_File fd, int rc, int is_write)
{
    return ADIOI_RFS_Error(rc, "ADIOI_RFS_STRIDED_IO", fd->fs_ptr, is_write ? "write" : "read");
}

static const struct dtype_view_ops rfs_view_ops = {
    .prepare = rfs_prepare, .move = rfs_move, .error = rfs_error, .max_view = RFS_MAX_VIEW
};

void ADIOI_RFS_Strided_io(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                          int is_write, int *error_code)
{
    dtype_view_strided_io(fd, buf, count, datatype, file_ptr_type, offset, status, is_write,
                          &rfs_view_ops, error_code);
}
