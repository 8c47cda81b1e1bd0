/*
 * A client host's link cut while its ranks are in the middle of something
 * the other ranks depend on (the lab: the runner cuts the link, the ranks
 * keep running). The ranks on the host CUT_ADDR (LAB_HOST, from the lab's
 * launcher) are the cut ones, the others the rest; the runner has slowed
 * the cut host's link, so that its data is still on the way at the cut.
 *   lock: rfs:, atomic mode. The first cut rank writes all of region A
 *         under the lock its atomic write takes; the others then write into A and
 *         must get the lock or an error (MPI_ERR_IO) within rfs_timeout.
 *   coll: rdma:, a disk-directed MPI_File_write_all with the cut ranks'
 *         data on the way, the others' data on a server theirs goes to:
 *         the others must get an error (or the call done)
 *         within rdma_timeout (the servers' --coll-timeout the same).
 * In both, the cut must have come while the cut ranks were in their call.
 * After the runner has brought the link back: every call of the cut ranks
 * has returned; a new open works, the data written and synced before
 * (region B) is intact, and a new write (under the lock, or collective)
 * reads back.
 * Handshake through files in DIR: the program makes DIR/entered (a cut
 * rank is about to start) and DIR/checked (the others have their answer),
 * the runner DIR/down (the link is down).
 *   lab_clientcut lock|coll PREFIX DIR CUT_ADDR TIMEOUT
 */
#include "lab_handshake.h"

#define PART (4 << 20)          /* each rank's share of region A */
#define B_BLOCK (1 << 20)       /* each rank's block of region B */
#define SMALL 65536             /* what the others write into A */

static const char *dir, *mode, *timeout;
static int rank, nprocs, cut;
static double limit;
static MPI_Comm side;           /* the ranks on the same side of the cut */

static int is_coll(void)
{
    return strcmp(mode, "coll") == 0;
}

static MPI_File open_file(const char *prefix)
{
    char full[4096];
    MPI_File fh;
    MPI_Info info;
    snprintf(full, sizeof full, "%scut-%s", prefix, mode);
    MPI_Info_create(&info);
    if (is_coll()) {
        MPI_Info_set(info, "rdma_coll", "disk_directed");
        /* every round behind a COLL that makes the servers wait for all its
         * participants, whatever its runs: the contiguous shares here
         * (large runs) would otherwise go as plain requests, which nobody
         * waits for (docs/rdma.md) */
        MPI_Info_set(info, "rdma_coll_cache", "enable");
        MPI_Info_set(info, "rdma_timeout", timeout);
        MPI_Info_set(info, "striping_unit", "65536");
    } else {
        MPI_Info_set(info, "rfs_timeout", timeout);
    }
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, full, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    return fh;
}

/* Region A: [0, nprocs * PART), region B after it. */
static MPI_Offset region_b(void)
{
    return (MPI_Offset) nprocs * PART;
}

static void write_b(MPI_File fh)
{
    unsigned char *buf = malloc(B_BLOCK);
    MPI_Offset off = region_b() + (MPI_Offset) rank * B_BLOCK;
    pattern_fill(buf, B_BLOCK, (uint64_t) off, 3);
    CHECK_MPI(MPI_File_write_at_all(fh, off, buf, B_BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_File_sync(fh));
    free(buf);
}

static void check_b(MPI_File fh)
{
    unsigned char *buf = malloc(B_BLOCK);
    for (int r = 0; r < nprocs; r++) {
        MPI_Offset off = region_b() + (MPI_Offset) r * B_BLOCK;
        memset(buf, 0, B_BLOCK);
        CHECK_MPI(MPI_File_read_at(fh, off, buf, B_BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
        CHECK(pattern_check(buf, B_BLOCK, (uint64_t) off, 3) < 0,
              "block %d of the data synced before the cut differs", r);
    }
    free(buf);
}

/*
 * A call's answer: done or MPI_ERR_IO, not before the link went down (else
 * the cut came too late to test anything); the others' within the limit.
 */
static void judge(int rc, double took, const char *what)
{
    int class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &class);
    CHECK(class == MPI_SUCCESS || class == MPI_ERR_IO, "%s: class %d (%s)", what, class,
          err_string(rc));
    CHECK(lab_exists(dir, "down"), "%s: answered (%s) before the link went down", what,
          class == MPI_SUCCESS ? "done" : "error");
    CHECK(cut || took <= limit, "%s: answered after %.1f s, more than the timeout + margin "
          "(%.0f s)", what, took, limit);
    printf("rank %d%s: %s: %s after %.1f s%s%s\n", rank, cut ? " (cut host)" : "", what,
           class == MPI_SUCCESS ? "done" : "MPI_ERR_IO", took, rc ? ": " : "",
           rc ? err_string(rc) : "");
}

/* lock: the first cut rank holds A's lock in its atomic write at the cut. */
static void during_lock(MPI_File fh, unsigned char *a)
{
    int first_cut, r = cut ? rank : nprocs;
    MPI_Allreduce(&r, &first_cut, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    double t0;
    int rc;
    if (rank == first_cut) {
        pattern_fill(a, region_b(), 0, 5);
        lab_mark(dir, "entered");
        t0 = lab_now();
        rc = MPI_File_write_at(fh, 0, a, (int) region_b(), MPI_BYTE, MPI_STATUS_IGNORE);
        judge(rc, lab_now() - t0, "atomic write holding the lock");
    } else if (!cut) {
        lab_await(dir, "down");
        pattern_fill(a, SMALL, 0, 6);
        t0 = lab_now();
        rc = MPI_File_write_at(fh, 0, a, SMALL, MPI_BYTE, MPI_STATUS_IGNORE);
        judge(rc, lab_now() - t0, "atomic write into the held range");
    }
}

/* coll: the cut ranks' data is on the way when the link goes down. */
static void during_coll(MPI_File fh, unsigned char *a)
{
    /* the cut ranks write PART each into A, the others SMALL each at the
     * start of their part: on a server the cut ranks' data goes to, whose
     * merge makes them wait for it (a process with nothing for a server
     * does not wait for that server, so with nothing at all they would
     * be done before the cut) */
    int len = cut ? PART : SMALL;
    MPI_Offset off = (MPI_Offset) rank * PART;
    pattern_fill(a, PART, (uint64_t) off, 5);
    if (rank == 0)
        lab_mark(dir, "entered");
    double t0 = lab_now();
    int rc = MPI_File_write_at_all(fh, off, a, len, MPI_BYTE, MPI_STATUS_IGNORE);
    judge(rc, lab_now() - t0, "disk-directed write_all");
}

/* After the link is back: a new write reads back (the lock is free again). */
static void after(MPI_File fh, unsigned char *a, unsigned char *back)
{
    if (is_coll()) {
        MPI_Offset off = (MPI_Offset) rank * PART;
        pattern_fill(a, PART, (uint64_t) off, 7);
        CHECK_MPI(MPI_File_write_at_all(fh, off, a, PART, MPI_BYTE, MPI_STATUS_IGNORE));
        CHECK_MPI(MPI_File_read_at_all(fh, off, back, PART, MPI_BYTE, MPI_STATUS_IGNORE));
        CHECK(pattern_check(back, PART, (uint64_t) off, 7) < 0, "the new collective write "
              "reads back wrong");
        return;
    }
    CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    if (rank == 0) {
        double t0 = lab_now();
        pattern_fill(a, SMALL, 0, 7);
        CHECK_MPI(MPI_File_write_at(fh, 0, a, SMALL, MPI_BYTE, MPI_STATUS_IGNORE));
        double took = lab_now() - t0;
        CHECK(took <= limit, "the lock took %.1f s after the link came back", took);
        CHECK_MPI(MPI_File_read_at(fh, 0, back, SMALL, MPI_BYTE, MPI_STATUS_IGNORE));
        CHECK(pattern_check(back, SMALL, 0, 7) < 0, "the write under the lock reads back wrong");
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 6, "usage: lab_clientcut lock|coll PREFIX DIR CUT_ADDR TIMEOUT");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    mode = argv[1];
    dir = argv[3];
    timeout = argv[5];
    limit = atof(timeout) + 5;
    CHECK(is_coll() || strcmp(mode, "lock") == 0, "mode %s: lock or coll", mode);
    const char *host = getenv("LAB_HOST");
    CHECK(host != NULL, "no LAB_HOST: run through the lab's mpiexec");
    cut = strcmp(host, argv[4]) == 0;
    int cuts;
    MPI_Allreduce(&cut, &cuts, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(cuts > 0 && cuts < nprocs, "%d of %d ranks on the cut host %s", cuts, nprocs, argv[4]);
    MPI_Comm_split(MPI_COMM_WORLD, cut, rank, &side);
    alarm(240);                 /* a hang fails the test */
    unsigned char *a = malloc((size_t) region_b()), *back = malloc(PART);
    CHECK(a && back, "out of memory");

    MPI_File fh = open_file(argv[2]);
    write_b(fh);
    if (!is_coll())
        CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    if (is_coll())
        during_coll(fh, a);
    else
        during_lock(fh, a);
    /* the others have their answers: the runner brings the link back */
    MPI_Barrier(side);
    if (rank == 0)
        lab_mark(dir, "checked");
    MPI_Barrier(MPI_COMM_WORLD);
    /* a handle whose connection broke fails its close */
    int rc = MPI_File_close(&fh), class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &class);
    CHECK(class == MPI_SUCCESS || class == MPI_ERR_IO, "close: %s", err_string(rc));

    fh = open_file(argv[2]);
    check_b(fh);
    after(fh, a, back);
    CHECK_MPI(MPI_File_close(&fh));
    free(a);
    free(back);
    MPI_Comm_free(&side);
    MPI_Finalize();
    if (rank == 0)
        printf(" No Errors\n");
    return 0;
}
