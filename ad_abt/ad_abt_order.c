/*
 * The order of buffered writes, between the handles of one process and
 * between processes. Each open handle has an engine of its own that drains
 * in its own time, so without care a write buffered earlier can land after
 * one made later, or a read can miss it:
 * - within a process, a file open twice (PnetCDF opens every file over its
 *   communicator and again over MPI_COMM_SELF) behaves as one file does on
 *   the inner file system: a read or write through one handle first drains
 *   what the other handles still hold of its range;
 * - between processes, a collective call is an ordering point: every
 *   process's buffered writes that the call's accesses could touch land
 *   before any process accesses the file in it (a library fills a record
 *   collectively and then writes it collectively, with other aggregators).
 * Collective writes themselves stay buffered; sync, set_size and
 * preallocate drain every handle. In a read-write file whose servers keep
 * leases (ad_abt_sink.c) the servers order processes instead: a
 * collective call needs no drain. See docs/abt.md, "Order and visibility".
 */
#include <limits.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "ad_abt.h"
#include "adio_extern.h"

/* The open abt: files of this process. Only the application thread touches
 * the list (ROMIO's lock serialises MPI-IO calls). */
static ADIOI_ABT_File *open_files;

void ADIOI_ABT_Register(ADIO_File fd)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    a->fd = fd;
    a->next = open_files;
    open_files = a;
}

void ADIOI_ABT_Unregister(ADIO_File fd)
{
    ADIOI_ABT_File **p = &open_files;
    while (*p && *p != fd->fs_ptr)
        p = &(*p)->next;
    if (*p)
        *p = (*p)->next;
}

static int same_file(const ADIOI_ABT_File *g, ADIO_File fd)
{
    return g->engine != NULL && strcmp(g->fd->filename, fd->filename) == 0;
}

/* Every handle of fd's file in this process (`which`) that still buffers
 * bytes of [off, off + len) drains; an MPI error code. */
int ADIOI_ABT_Drain_range(ADIO_File fd, int which, uint64_t off, uint64_t len,
                          const char *myname)
{
    for (ADIOI_ABT_File *g = open_files; g; g = g->next) {
        int self = g == fd->fs_ptr;
        if (!same_file(g, fd) || !(which & (self ? ADIOI_ABT_THIS : ADIOI_ABT_OTHERS)))
            continue;
        int rc = abt_overlaps(g->engine, off, len) ? abt_flush(g->engine) : 0;
        if (rc)
            return ADIOI_ABT_Error(rc, myname, fd->filename);
    }
    return MPI_SUCCESS;
}

int ADIOI_ABT_Drain(ADIO_File fd, const char *myname)
{
    return ADIOI_ABT_Drain_range(fd, ADIOI_ABT_ALL_HANDLES, 0, UINT64_MAX, myname);
}

/* The bytes still buffered for fd's file by any handle of this process:
 * [*lo, *hi), empty when *lo >= *hi. */
void ADIOI_ABT_Pending(ADIO_File fd, uint64_t *lo, uint64_t *hi)
{
    *lo = UINT64_MAX;
    *hi = 0;
    for (ADIOI_ABT_File *g = open_files; g; g = g->next) {
        uint64_t l, h;
        if (same_file(g, fd) && abt_pending(g->engine, &l, &h)) {
            *lo = l < *lo ? l : *lo;
            *hi = h > *hi ? h : *hi;
        }
    }
}

/* [lo, hi) of this process's accesses in the call, empty when lo >= hi. */
static void call_span(ADIO_File fd, romio_count_t count, MPI_Datatype datatype, int file_ptr_type,
                      ADIO_Offset offset, long long *lo, long long *hi)
{
    ADIO_Offset *offs, *lens, start, end, fp_ind = fd->fp_ind;
    romio_piece_count_t pieces;
    ADIOI_Calc_my_off_len(fd, count, datatype, file_ptr_type, offset, &offs, &lens, &start,
                          &end, &pieces);
    fd->fp_ind = fp_ind;        /* it advances the individual pointer: the call has not run */
    ADIOI_Free(offs);           /* lens lives in the same allocation */
    *lo = pieces > 0 ? start : 0;
    *hi = pieces > 0 ? end + 1 : 0;
}

/* MPI_Test calls before a process that waits in one of abt's allreduces
 * naps; the first nap, and the longest (they double). */
#define ADIOI_ABT_POLLS_BEFORE_NAP 64
#define ADIOI_ABT_NAP_FIRST_NS 16000
#define ADIOI_ABT_NAP_MAX_NS 256000

/*
 * An allreduce whose waiting processes leave the cores to the others.
 * Where processes outnumber cores (4 on 2 in bench-abt), a process that
 * waits inside MPI_Allreduce polls and holds a core until its time slice
 * ends, while the process it waits for is runnable but not running: abt's
 * agreement at close cost IOR's writer 8-20 ms (multiples of the 4 ms
 * tick) in runs of 110 ms. Naps that double up to 256 us cost a process
 * on a core of its own at most about as long as it has already waited
 * (a quarter of a millisecond at most), and a long wait 5-10% of a core.
 */
static void allreduce_napping(const void *send, void *recv, int count, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm)
{
    struct timespec nap = { 0, ADIOI_ABT_NAP_FIRST_NS };
    MPI_Request req;
    int done = 0;
    MPI_Iallreduce(send, recv, count, type, op, comm, &req);
    for (int polls = 0; !done; polls++) {
        if (polls >= ADIOI_ABT_POLLS_BEFORE_NAP) {
            nanosleep(&nap, NULL);
            if (nap.tv_nsec < ADIOI_ABT_NAP_MAX_NS)
                nap.tv_nsec *= 2;
        }
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
}

/* A number for a collective write that no other call is likely to draw:
 * 62 random bits, not 0. */
static long long call_token(void)
{
    uint64_t t = 0;
    while ((t & INT64_MAX) == 0)
        if (getrandom(&t, sizeof t, 0) != sizeof t)
            t = 0;
    return (long long) (t & INT64_MAX);
}

/*
 * Called by every process of the communicator at the start of a collective
 * access. One allreduce tells each the span of the call over all processes
 * and the span of all buffered writes; when they meet, those writes drain
 * and a second allreduce both waits for every drain and agrees on failure,
 * so that no process goes on into the collective alone. The same allreduce
 * agrees on a collective write's *path (NULL: none; enum
 * ADIOI_ABT_Coll_path), this process's choice in, the largest of all out,
 * and on the write's number for its leases (a->coll_call).
 */
int ADIOI_ABT_Order_collective(ADIO_File fd, romio_count_t count, MPI_Datatype datatype,
                               int file_ptr_type, ADIO_Offset offset, int *path,
                               const char *myname)
{
    long long lo, hi, v[6];
    uint64_t plo, phi;
    call_span(fd, count, datatype, file_ptr_type, offset, &lo, &hi);
    ADIOI_ABT_Pending(fd, &plo, &phi);
    int pending = plo < phi;
    /* maxima of -lo and hi give the union's bounds */
    v[0] = lo < hi ? -lo : LLONG_MIN;
    v[1] = lo < hi ? hi : LLONG_MIN;
    v[2] = pending ? -(long long) plo : LLONG_MIN;
    v[3] = pending ? (long long) phi : LLONG_MIN;
    v[4] = path ? *path : 0;
    v[5] = path ? call_token() : 0;
    allreduce_napping(MPI_IN_PLACE, v, 6, MPI_LONG_LONG, MPI_MAX, fd->comm);
    if (path) {
        *path = (int) v[4];
        ((ADIOI_ABT_File *) fd->fs_ptr)->coll_call = (uint64_t) v[5];
    }
    if (v[1] == LLONG_MIN || v[3] == LLONG_MIN || -v[2] >= v[1] || v[3] <= -v[0])
        return MPI_SUCCESS;     /* nothing buffered anywhere meets the call */
    if (ADIOI_ABT_Leasing(fd))
        return MPI_SUCCESS;     /* the servers hold the call's accesses until it has landed */

    uint64_t span_lo = (uint64_t) -v[0], span_hi = (uint64_t) v[1];
    int err = ADIOI_ABT_Drain_range(fd, ADIOI_ABT_ALL_HANDLES, span_lo, span_hi - span_lo,
                                    myname);
    return ADIOI_ABT_Agree(fd->comm, err, myname);
}

/* Collective over comm: returns once every process has passed its `err`; a
 * process whose own err is MPI_SUCCESS gets an error too when another one
 * failed, so that all leave together rather than some going on into a
 * collective call that the others never enter. */
int ADIOI_ABT_Agree(MPI_Comm comm, int err, const char *myname)
{
    int failed = err != MPI_SUCCESS, any_failed = 0;
    allreduce_napping(&failed, &any_failed, 1, MPI_INT, MPI_MAX, comm);
    if (err != MPI_SUCCESS || !any_failed)
        return err;
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                MPI_ERR_IO, "**io", "**io %s",
                                "a buffered write of another process failed");
}
