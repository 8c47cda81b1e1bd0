/*
 * Blocking collective I/O by rdma_coll (docs/rdma.md):
 * - two_phase: ROMIO's two-phase, file domains aligned to the stripe unit;
 * - disk_directed (seed 003): each process sends its own request for the
 *   whole call straight to every server (datatype I/O behind a COLL), and
 *   the servers merge and sort what arrives and move it in large
 *   sequential accesses: the data crosses the network once, and no
 *   process exchanges data with another;
 * - auto: disk_directed where it applies.
 * Disk-directed does not apply in atomic mode (two-phase gives the
 * locking) or to a type the datatype engine cannot describe; then every
 * process takes two-phase, as they decide together.
 *
 * The servers count participants: a call is rounds of at most
 * STRIPE_CHUNK data bytes each, and every process takes part in every
 * round, with nothing once its own data is done. In each round the
 * processes agree, in one MPI_Allreduce, how many of them have data on
 * each server (only those send it a request: a server waits for no
 * process that has nothing for it and hears nothing of a round nobody has
 * data for there) and whether any of them has data for a further round;
 * in the first round also whether any of them cannot take disk-directed
 * I/O, and then, no request sent yet, they all take two-phase. So a call
 * of one round costs one small MPI_Allreduce and no other collective.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "ad_rdma.h"
#include "adio_extern.h"
#include "dtype_view.h"

static int dd_move(ADIO_File fd, const struct dtype *file, char *data, int64_t n, int64_t pos,
                   int is_write, uint64_t *got)
{
    ADIOI_RDMA_File *f = fd->fs_ptr;
    struct stripe_view view = { .type = file, .disp = (uint64_t) fd->disp,
                                .enc = f->view_enc, .enc_len = f->view_len };
    int rc = 0;
    *got = 0;
    for (int64_t done = 0; rc == 0 && done < n;) {
        if (f->coll_rounds_done > 0 && !f->coll_more)
            return -EPROTO;             /* more rounds than this process foretold */
        uint64_t len = (uint64_t) (n - done) < STRIPE_CHUNK ? (uint64_t) (n - done) : STRIPE_CHUNK;
        uint64_t moved = 0;
        struct stripe_coll round = f->coll_now;
        round.call += f->coll_rounds_done++;
        rc = stripe_coll_io(&f->sf, &view, (uint64_t) (pos + done), len, data + done, is_write,
                            &round, &moved);
        *got += moved;
        done += (int64_t) len;
        if (moved < len)
            break;                      /* end of file */
    }
    return rc;
}

/* stripe_coll's agreement: its counters, and after them those with data
 * for a later round and those that cannot take disk-directed I/O.
 * -ECANCELED: the first round found one of the latter, nothing was sent,
 * and all take two-phase. */
static int dd_agree(void *arg, const uint64_t *mine, uint64_t *sum, uint32_t count)
{
    ADIO_File fd = arg;
    ADIOI_RDMA_File *f = fd->fs_ptr;
    uint64_t in[STRIPE_COLL_AGREE_MAX + 2], all[STRIPE_COLL_AGREE_MAX + 2];
    memcpy(in, mine, count * sizeof *mine);
    in[count] = f->coll_rounds_done < f->coll_mine;    /* this round is already counted */
    in[count + 1] = (uint64_t) f->coll_vote_two_phase;
    f->coll_more = 0;
    if (MPI_Allreduce(in, all, (int) count + 2, MPI_UINT64_T, MPI_SUM, fd->comm) != MPI_SUCCESS)
        return -EIO;
    if (f->coll_rounds_done == 1 && all[count + 1] > 0) {
        f->coll_fallback = 1;
        return -ECANCELED;
    }
    memcpy(sum, all, count * sizeof *sum);
    f->coll_more = all[count] > 0;
    return 0;
}

/* No error when the call goes to two-phase instead. */
static int dd_error(ADIO_File fd, int rc, int is_write)
{
    ADIOI_RDMA_File *f = fd->fs_ptr;
    return f->coll_fallback ? MPI_SUCCESS : ADIOI_RDMA_View_error(fd, rc, is_write);
}

static const struct dtype_view_ops dd_ops = {
    .prepare = ADIOI_RDMA_Prepare_view, .move = dd_move, .error = dd_error,
    .max_view = RFS_MAX_VIEW
};

/* Rounds this process's request takes, or -1 when disk-directed cannot
 * move it. */
static int64_t rounds_needed(ADIO_File fd, romio_count_t count, MPI_Datatype datatype)
{
    MPI_Count size;
    int64_t most;
    if (!dtype_view_describable(fd, datatype, &dd_ops, &most))
        return -1;
    MPI_Type_size_x(datatype, &size);
    int64_t total = (int64_t) size * count;
    if (most > (int64_t) STRIPE_CHUNK)
        return (total + (int64_t) STRIPE_CHUNK - 1) / (int64_t) STRIPE_CHUNK;
    /* moves of `most` bytes, one round each */
    return (total + most - 1) / most;
}

/* One collective group per open file, so that calls of other opens never
 * mix with ours: rank 0 draws it in the first disk-directed call. */
static void join_group(ADIO_File fd)
{
    ADIOI_RDMA_File *f = fd->fs_ptr;
    uint64_t g = 0;
    int rank;
    if (f->coll_group)
        return;
    MPI_Comm_rank(fd->comm, &rank);
    while (rank == 0 && g == 0)
        if (getrandom(&g, sizeof g, 0) != sizeof g)
            g = (uint64_t) rand() << 32 ^ (uint64_t) rand();
    MPI_Bcast(&g, 1, MPI_UINT64_T, 0, fd->comm);
    f->coll_group = g;
}

/* With a deferred open (romio_no_indep_rw) only the aggregators have the
 * file open: that is two-phase's own arrangement; in atomic mode two-phase
 * gives the locking. Hint and mode are the same on every process, so they
 * all decide alike. */
static int use_disk_directed(ADIO_File fd)
{
    ADIOI_RDMA_File *f = fd->fs_ptr;
    return !fd->hints->deferred_open && !fd->atomicity && f &&
        f->coll != ADIOI_RDMA_COLL_TWO_PHASE;
}

/* 0, or -1 when the processes agreed on two-phase instead (nothing moved). */
static int disk_directed(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                         int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                         int is_write, int *error_code)
{
    ADIOI_RDMA_File *f = fd->fs_ptr;
    int64_t mine = rounds_needed(fd, count, datatype);
    int rank;
    join_group(fd);
    MPI_Comm_rank(fd->comm, &rank);
    f->coll_now = (struct stripe_coll) {
        .group = f->coll_group, .call = f->coll_next, .rank = (uint32_t) rank,
        .keep = f->coll_keep, .merge_from = STRIPE_COLL_MERGE_FROM,
        .merge_runs_below = STRIPE_COLL_MERGE_RUNS_BELOW, .agree = dd_agree, .agree_arg = fd
    };
    f->coll_rounds_done = 0;
    f->coll_mine = mine > 0 ? (uint64_t) mine : 0;
    f->coll_vote_two_phase = mine < 0;
    f->coll_more = 0;
    f->coll_fallback = 0;
    *error_code = MPI_SUCCESS;
    if (mine > 0)
        dtype_view_strided_io(fd, buf, count, datatype, file_ptr_type, offset, status,
                              is_write, &dd_ops, error_code);
    /* The rounds the others still have (and the first, if this process
     * had no data, cannot take disk-directed, or failed before it): this
     * one takes part in their agreements with nothing, and foretells no
     * more of its own. */
    f->coll_mine = f->coll_rounds_done;
    struct stripe_view none = { .type = NULL, .disp = (uint64_t) fd->disp };
    while (f->coll_rounds_done == 0 || f->coll_more) {
        struct stripe_coll round = f->coll_now;
        uint64_t moved;
        round.call += f->coll_rounds_done++;
        int rc = stripe_coll_io(&f->sf, &none, 0, 0, NULL, is_write, &round, &moved);
        if (rc != 0 && *error_code == MPI_SUCCESS)
            *error_code = dd_error(fd, rc, is_write);
    }
    f->coll_next += f->coll_rounds_done;
    return f->coll_fallback ? -1 : 0;
}

void ADIOI_RDMA_ReadStridedColl(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                                int *error_code)
{
    if (!use_disk_directed(fd) ||
        disk_directed(fd, buf, count, datatype, file_ptr_type, offset, status, 0,
                      error_code) < 0)
        ADIOI_GEN_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                  error_code);
}

void ADIOI_RDMA_WriteStridedColl(ADIO_File fd, const void *buf, romio_count_t count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Status *status, int *error_code)
{
    if (!use_disk_directed(fd) ||
        disk_directed(fd, (void *) buf, count, datatype, file_ptr_type, offset, status, 1,
                      error_code) < 0)
        ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
}
