/*
 * WriteContig copies into the engine and returns; atomic mode and writes
 * under a lock (shared file pointer, data sieving) go through the inner
 * driver after everything before them. WriteStrided and WriteStridedColl
 * are ROMIO's generic code between output-phase marks, which tell the
 * engine when the application computes; a collective write goes through
 * the inner driver's own collective instead when that was measured faster.
 */
#include "ad_abt.h"

static void write_through(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                          ADIO_Offset off, ADIO_Status *status, int *error_code)
{
    static char myname[] = "ADIOI_ABT_WRITECONTIG";
    ADIOI_ABT_File *a = fd->fs_ptr;
    *error_code = ADIOI_ABT_Drain(fd, myname);
    if (*error_code != MPI_SUCCESS)
        return;
    ADIOI_ABT_Sync_shadow(fd);
    ADIO_WriteContig(a->inner, buf, count, datatype, ADIO_EXPLICIT_OFFSET, off, status,
                     error_code);
}

void ADIOI_ABT_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                           int *error_code)
{
    static char myname[] = "ADIOI_ABT_WRITECONTIG";
    ADIOI_ABT_File *a = fd->fs_ptr;
    ADIO_Offset off;
    ADIO_Offset len = ADIOI_ABT_Extent(fd, count, datatype, file_ptr_type, offset, &off);

    if (ADIOI_ABT_Buffering(fd)) {
        /* what another handle of the file still holds of the range lands first */
        *error_code = ADIOI_ABT_Drain_range(fd, ADIOI_ABT_OTHERS, (uint64_t) off,
                                            (uint64_t) len, myname);
        if (*error_code != MPI_SUCCESS)
            return;
        abt_phase_begin(a->engine);
        int rc = abt_write(a->engine, (uint64_t) off, buf, (uint64_t) len);
        abt_phase_end(a->engine);
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

/* Piece by piece unless data sieving is asked for: the pieces are copied
 * anyway, and sieving would read back what the buffers hold. */
void ADIOI_ABT_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                            int *error_code)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    if (a->engine)
        abt_phase_begin(a->engine);
    if (fd->hints->ds_write == ADIOI_HINT_ENABLE)
        ADIOI_GEN_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status,
                               error_code);
    else
        ADIOI_GEN_WriteStrided_naive(fd, buf, count, datatype, file_ptr_type, offset, status,
                                     error_code);
    if (a->engine)
        abt_phase_end(a->engine);
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
 * (rfs: ships the view to the server) rather than through ROMIO's two-phase
 * exchange into the buffers? Yes when this process measured it at least as
 * fast as buffering: where the inner driver drains as fast as abt can copy,
 * the exchange and the copy are all buffering adds. Before through has been
 * measured the drain's rate stands for it, with a margin: a wrong try costs
 * one write at the inner driver's pace.
 */
static int vote_through(ADIOI_ABT_File *a)
{
    if (a->engine == NULL || remeasure(a->coll_writes))
        return 0;
    double buffered = a->coll_rate[0].bytes_per_s, through = a->coll_rate[1].bytes_per_s;
    if (buffered <= 0)
        return 0;
    if (through > 0)
        return through >= buffered;
    return abt_drain_rate(a->engine) >= 2 * buffered;
}

/* The inner driver's collective write on the shadow; its file pointer
 * comes back to the user's file. */
static void write_coll_inner(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                             int *error_code)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    ADIOI_ABT_Sync_shadow(fd);
    a->inner->fns->ADIOI_xxx_WriteStridedColl(a->inner, buf, count, datatype, file_ptr_type,
                                              offset, status, error_code);
    fd->fp_ind = a->inner->fp_ind;
    fd->fp_sys_posn = a->inner->fp_sys_posn;
    fd->dirty_write = 1;
}

/* Collective: the writes of every process that the call's accesses meet
 * land first (ad_abt_order.c); then the call's own writes are buffered, or
 * all processes write through the inner driver (vote_through). Buffered in
 * a write-only file (periodic output); in a file opened read-write they
 * land before the call returns: HDF5 reads back, independently and without
 * sync, what other processes wrote collectively (its parallel filtered
 * writes read each chunk filled at the dataset's creation). */
void ADIOI_ABT_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                ADIO_Status *status, int *error_code)
{
    static char myname[] = "ADIOI_ABT_WRITESTRIDEDCOLL";
    ADIOI_ABT_File *a = fd->fs_ptr;
    int through = vote_through(a);
    *error_code = ADIOI_ABT_Order_collective(fd, count, datatype, file_ptr_type, offset,
                                             &through, myname);
    if (*error_code != MPI_SUCCESS)
        return;
    if (a->engine == NULL) {
        ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
        return;
    }
    abt_phase_begin(a->engine);
    double t0 = abt_now();
    if (through)
        write_coll_inner(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    else
        ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
    if (*error_code == MPI_SUCCESS && !through && (fd->access_mode & ADIO_RDWR))
        *error_code = ADIOI_ABT_Drain(fd, myname);
    double dt = abt_now() - t0;
    abt_phase_end(a->engine);
    MPI_Count size;
    MPI_Type_size_x(datatype, &size);
    if (*error_code == MPI_SUCCESS)
        abt_rate_observe(&a->coll_rate[through], (uint64_t) size * (uint64_t) count, dt);
    a->coll_writes++;
}
