/*
 * Noncontiguous I/O through ROMIO file views with the datatype engine,
 * shared by the drivers that move views natively (rfs:, rdma:): the
 * memory side is packed (writes) or unpacked (reads) here in pieces of
 * at most DTYPE_VIEW_PIECE bytes; the driver moves each piece to or
 * from the data positions of the view. Positions, file pointers, atomic
 * mode locks and the status follow MPI. A type the engine cannot
 * describe goes to ROMIO's generic strided code instead. A driver whose
 * transport gathers and scatters (the rdma: driver over verbs) may take
 * the memory side as segments instead, where its runs are long enough.
 */
#ifndef DTYPE_VIEW_H_INCLUDED
#define DTYPE_VIEW_H_INCLUDED

#include <sys/uio.h>

#include "adio.h"
#include "dtype/dtype.h"

#define DTYPE_VIEW_PIECE (32 << 20)

struct dtype_view_ops {
    /* Before data moves; `file` is the view's filetype (NULL: the file's
     * bytes from the displacement on). 0 or a driver error code. */
    int (*prepare)(ADIO_File fd, const struct dtype *file);
    /* Move n data bytes at view data position pos; *got gets the bytes
     * moved (fewer only at the end of the file). 0 or a driver error code. */
    int (*move)(ADIO_File fd, const struct dtype *file, char *data, int64_t n, int64_t pos,
                int is_write, uint64_t *got);
    /* The MPI error code of a driver error code. */
    int (*error)(ADIO_File fd, int rc, int is_write);
    /* Optional (NULL: memory is always packed): as move, the data lying
     * in memory segments in order instead of packed... */
    int (*move_segments)(ADIO_File fd, const struct dtype *file, const struct iovec *mem,
                         int nmem, int64_t n, int64_t pos, int is_write, uint64_t *got);
    /* ...for a memory type whose runs are this long on average at least
     * (0: always, INT64_MAX: never). */
    int64_t (*segments_from)(ADIO_File fd);
    /* The longest wire form (dtype_serialize) of a filetype the driver
     * takes (0: any); a longer one goes to ROMIO's generic strided code,
     * as a type the engine cannot describe does. */
    size_t max_view;
};

#define DTYPE_VIEW_SEGS (16 << 10)      /* memory segments of one move at most */

/* Whether dtype_view_strided_io with these ops moves this datatype through
 * the view of fd itself (else it hands the call to ROMIO's generic code);
 * *most gets the data bytes of its moves (INT64_MAX: one move for all). */
int dtype_view_describable(ADIO_File fd, MPI_Datatype datatype,
                           const struct dtype_view_ops *ops, int64_t *most);

void dtype_view_strided_io(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                           int is_write, const struct dtype_view_ops *ops, int *error_code);

/* The file bytes [*start, *start + *span) from the first to the last of
 * the view's data bytes [pos, pos + len) (len > 0; `file` as for move). */
void dtype_view_span(ADIO_File fd, const struct dtype *file, int64_t pos, int64_t len,
                     ADIO_Offset *start, ADIO_Offset *span);

/* After a contiguous transfer of `done` bytes from byte `offset` of the
 * file: the file pointers and the status, as ROMIO expects them. */
void dtype_view_contig_done(ADIO_File fd, MPI_Datatype datatype, int file_ptr_type,
                            ADIO_Offset offset, uint64_t done, ADIO_Status *status);

#endif /* DTYPE_VIEW_H_INCLUDED */
