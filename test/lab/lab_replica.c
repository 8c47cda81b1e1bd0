/*
 * rdma: with rdma_replicas=2 when a server host is lost (issue 34). A file
 * striped over 4 servers (striping_unit 64 KiB), each object on two of them
 * (object i on servers i and i+1 mod 4); the runner cuts a server host's
 * link and kills its rfsd (SIGKILL) while the ranks are in the middle of a
 * phase of I/O. Every call must succeed, within 2 x rdma_timeout + 5 s, and
 * every byte must read back as the last write left it, compared byte by
 * byte, in the same open and in a new one while the server is still gone.
 * Every open must report rdma_replicas=2 (MPI_File_get_info).
 *
 *   lab_replica MODE FILE DIR TIMEOUT [GEN]
 *
 * MODE:
 *   write  independent writes: call i of rank r writes r's part of region
 *          i mod NREG (a part: 256 KiB, a unit on each object), generation
 *          i + 1, until every rank has seen the server go down and then
 *          2 x NREG calls more (every part written again after the loss);
 *          then sync, the whole file checked, a new open (read-write),
 *          checked again.
 *   read   the file written and synced first (generation 3, all servers
 *          up); then independent reads of the parts, each checked, until
 *          the server is down and every part has been read once more;
 *          then a new open (read-only) checks the whole file.
 *   coll   disk-directed collective writes (rdma_coll=disk_directed,
 *          MPI_File_write_at_all): round k writes region k mod NCREG
 *          (2 MiB, each rank's 4 KiB pieces interleaved through a file
 *          view, so that the servers merge them) with generation k + 1,
 *          until all ranks have seen the server go down and 2 x NCREG
 *          rounds more; then checked by independent reads, and in a new
 *          open by disk-directed collective reads.
 *   coll2p the same by ROMIO's two-phase (rdma_coll=two_phase).
 *   create GEN     (all servers up) the whole file written with GEN, synced.
 *   overwrite GEN  (a server down) the whole file written again with GEN,
 *                  synced, checked in the same open.
 *   verify GEN     a new open (read-only, with the hint rdma_replicas=1,
 *                  which an existing file ignores): every rank reads the
 *                  whole file, GEN everywhere.
 * In write, read and coll at least one call must have been in flight when
 * the server went down.
 * Handshake through files in DIR: rank 0 makes DIR/started (the phase is
 * under way: the runner may take the server down), the runner DIR/down
 * (the link is cut and rfsd killed).
 */
#include "lab_handshake.h"

#define UNIT 65536
#define FACTOR 4
#define CHUNK (FACTOR * UNIT)   /* a rank's part of a region: a unit on each object */
#define NREG 16                 /* write, read, create...: 16 regions of P parts */
#define PIECE 4096              /* coll: a rank's pieces in a region, interleaved */
#define CREGION (2 << 20)       /* coll: a round's region */
#define NCREG 8
#define KILL_WAIT 60.0          /* s the runner has to take the server down */

static const char *mode, *dir, *timeout_s;
static int rank, np;
static double call_limit;       /* s a call may take */

/* A phase's calls: how many, whether one was in flight when the server went
 * down (it started before DIR/down existed and ended after), the longest. */
struct phase {
    int calls, straddled;
    double longest, began;
};

static int is_down(void)
{
    return lab_exists(dir, "down");
}

static MPI_File open_file(const char *name, int amode)
{
    MPI_File fh;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_factor", "4");
    MPI_Info_set(info, "striping_unit", "65536");
    /* an existing file keeps the count it was created with */
    MPI_Info_set(info, "rdma_replicas", strcmp(mode, "verify") == 0 ? "1" : "2");
    MPI_Info_set(info, "rdma_timeout", timeout_s);
    if (strcmp(mode, "coll") == 0)
        MPI_Info_set(info, "rdma_coll", "disk_directed");
    if (strcmp(mode, "coll2p") == 0)
        MPI_Info_set(info, "rdma_coll", "two_phase");
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, amode, info, &fh));
    MPI_Info_free(&info);
    info_expect(fh, "rdma_replicas", "2");
    info_expect(fh, "striping_factor", "4");
    info_expect(fh, "striping_unit", "65536");
    return fh;
}

/* A call of the phase has returned (successfully: the caller checked). */
static void timed(struct phase *ph, double t0, int was_down, const char *what)
{
    double took = lab_now() - t0;
    CHECK(took <= call_limit, "%s %d took %.1f s, more than 2 x rdma_timeout + 5 s (%.0f s)",
          what, ph->calls, took, call_limit);
    if (took > ph->longest)
        ph->longest = took;
    if (!was_down && is_down())
        ph->straddled = 1;
    ph->calls++;
}

/* The runner must take the server down soon after DIR/started. */
static void not_forever(const struct phase *ph)
{
    CHECK(lab_now() - ph->began < KILL_WAIT + 30, "the server was not taken down (%d calls in "
          "%.0f s)", ph->calls, lab_now() - ph->began);
}

/* Every rank's phase, summed up; fails if no call met the loss. */
static void phase_report(const struct phase *ph, const char *what)
{
    int straddled;
    double longest;
    MPI_Allreduce(&ph->straddled, &straddled, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&ph->longest, &longest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int *calls = malloc(sizeof(int) * (size_t) np);
    MPI_Gather(&ph->calls, 1, MPI_INT, calls, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s: calls per rank", what);
        for (int r = 0; r < np; r++)
            printf(" %d", calls[r]);
        printf("; longest call %.1f s\n", longest);
    }
    free(calls);
    CHECK(straddled, "%s: no call was in flight when the server went down", what);
}

/* The part of rank r in region c: its offset. */
static MPI_Offset part_at(int c, int r)
{
    return ((MPI_Offset) c * np + r) * CHUNK;
}

/* Where a wrong byte lies: the object and the servers holding it. (Said
 * half a second before the abort: a message written just before MPI_Abort
 * can be lost with the job.) */
static void wrong(MPI_Offset off, int64_t bad, unsigned gen, const char *what)
{
    int object = (int) (((off + bad) / UNIT) % FACTOR);
    fprintf(stderr, "rank %d: %s: the byte at %lld is not generation %u's (object %d, copies on "
            "servers %d and %d)\n", rank, what, (long long) (off + bad), gen, object, object,
            (object + 1) % FACTOR);
    usleep(500000);
    CHECK(0, "%s: wrong data", what);
}

/* The reads of check_parts: how many, the longest, those over 1 s, their time. */
static struct {
    int reads, slow;
    double longest, total;
} checked;

/* Every part of rank (rank + shift) mod P, each of generation gens[c]. */
static void check_parts(MPI_File fh, const unsigned *gens, int shift, const char *what)
{
    static unsigned char buf[CHUNK];
    int r = (rank + shift) % np, count;
    MPI_Status st;
    for (int c = 0; c < NREG; c++) {
        MPI_Offset off = part_at(c, r);
        memset(buf, 0, CHUNK);
        double t0 = lab_now();
        CHECK_MPI(MPI_File_read_at(fh, off, buf, CHUNK, MPI_BYTE, &st));
        double took = lab_now() - t0;
        CHECK(took <= call_limit, "%s: a read took %.1f s, more than 2 x rdma_timeout + 5 s "
              "(%.0f s)", what, took, call_limit);
        checked.reads++;
        checked.slow += took > 1;
        checked.total += took;
        if (took > checked.longest)
            checked.longest = took;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == CHUNK, "%s: %d bytes of the part at %lld", what, count, (long long) off);
        int64_t bad = pattern_check(buf, CHUNK, (uint64_t) off, gens[c]);
        if (bad >= 0)
            wrong(off, bad, gens[c], what);
    }
}

static void check_size(MPI_File fh, MPI_Offset expect, const char *what)
{
    MPI_Offset size;
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == expect, "%s: size %lld, expected %lld", what, (long long) size,
          (long long) expect);
}

/* sync, barrier, sync: every rank's writes visible to every rank */
static void sync_all(MPI_File fh)
{
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
}

/* Generation of region c after n calls that cycled over `regions` regions,
 * call i writing generation i + 1 */
static unsigned last_gen(int n, int c, int regions)
{
    CHECK(n > c, "region %d never written (%d calls)", c, n);
    return (unsigned) ((n - 1 - c) / regions * regions + c + 1);
}

/* Writes of every part of this rank with generation gen. */
static void write_mine(MPI_File fh, unsigned gen)
{
    static unsigned char buf[CHUNK];
    MPI_Status st;
    for (int c = 0; c < NREG; c++) {
        pattern_fill(buf, CHUNK, (uint64_t) part_at(c, rank), gen);
        CHECK_MPI(MPI_File_write_at(fh, part_at(c, rank), buf, CHUNK, MPI_BYTE, &st));
    }
}

/* The generation of every part of rank r, for check_parts. */
static void gens_of(const int *calls, int r, unsigned *gens)
{
    for (int c = 0; c < NREG; c++)
        gens[c] = last_gen(calls[r], c, NREG);
}

static void run_write(const char *name)
{
    static unsigned char buf[CHUNK];
    MPI_Status st;
    struct phase ph = { .began = lab_now() };
    MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR);
    int stop = -1;
    for (int i = 0; stop < 0 || i < stop; i++) {
        int c = i % NREG, was_down = is_down();
        if (was_down && stop < 0)
            stop = i + 2 * NREG;
        pattern_fill(buf, CHUNK, (uint64_t) part_at(c, rank), (unsigned) i + 1);
        double t0 = lab_now();
        CHECK_MPI(MPI_File_write_at(fh, part_at(c, rank), buf, CHUNK, MPI_BYTE, &st));
        timed(&ph, t0, was_down, "write");
        if (rank == 0 && i == NREG - 1)
            lab_mark(dir, "started");
        not_forever(&ph);
    }
    phase_report(&ph, "independent writes");
    int *calls = malloc(sizeof(int) * (size_t) np);
    MPI_Allgather(&ph.calls, 1, MPI_INT, calls, 1, MPI_INT, MPI_COMM_WORLD);
    unsigned gens[NREG];
    sync_all(fh);
    gens_of(calls, (rank + 2) % np, gens);
    check_parts(fh, gens, 2, "same open");
    check_size(fh, part_at(NREG, 0), "same open");
    CHECK_MPI(MPI_File_close(&fh));
    fh = open_file(name, MPI_MODE_RDWR);
    gens_of(calls, (rank + 1) % np, gens);
    check_parts(fh, gens, 1, "new open");
    check_size(fh, part_at(NREG, 0), "new open");
    CHECK_MPI(MPI_File_close(&fh));
    free(calls);
}

static void run_read(const char *name)
{
    static unsigned char buf[CHUNK];
    const unsigned gen = 3;
    MPI_Status st;
    MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR);
    write_mine(fh, gen);
    sync_all(fh);
    struct phase ph = { .began = lab_now() };
    int stop = -1, count;
    for (int i = 0; stop < 0 || i < stop; i++) {
        int q = (rank * NREG + i) % (NREG * np), was_down = is_down();
        MPI_Offset off = (MPI_Offset) q * CHUNK;
        if (was_down && stop < 0)
            stop = i + NREG * np;
        memset(buf, 0, CHUNK);
        double t0 = lab_now();
        CHECK_MPI(MPI_File_read_at(fh, off, buf, CHUNK, MPI_BYTE, &st));
        timed(&ph, t0, was_down, "read");
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == CHUNK, "read %d: %d bytes at %lld", i, count, (long long) off);
        int64_t bad = pattern_check(buf, CHUNK, (uint64_t) off, gen);
        if (bad >= 0)
            wrong(off, bad, gen, "read phase");
        if (rank == 0 && i == NREG - 1)
            lab_mark(dir, "started");
        not_forever(&ph);
    }
    phase_report(&ph, "independent reads");
    CHECK_MPI(MPI_File_close(&fh));
    unsigned gens[NREG];
    for (int c = 0; c < NREG; c++)
        gens[c] = gen;
    fh = open_file(name, MPI_MODE_RDONLY);
    check_parts(fh, gens, 1, "new open");
    check_size(fh, part_at(NREG, 0), "new open");
    CHECK_MPI(MPI_File_close(&fh));
}

/* coll: rank r's pieces of region c, generation gen, packed */
static void coll_fill(unsigned char *buf, int r, int c, unsigned gen)
{
    int n = CREGION / PIECE / np;
    for (int j = 0; j < n; j++)
        pattern_fill(buf + (size_t) j * PIECE, PIECE,
                     (uint64_t) c * CREGION + ((uint64_t) j * np + r) * PIECE, gen);
}

/* coll: the view of rank r's pieces (every region: a filetype instance) */
static void coll_view(MPI_File fh, int r)
{
    MPI_Datatype vec, ft;
    MPI_Type_vector(CREGION / PIECE / np, PIECE, PIECE * np, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, CREGION, &ft);
    MPI_Type_commit(&ft);
    CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset) r * PIECE, MPI_BYTE, ft, "native",
                                MPI_INFO_NULL));
    MPI_Type_free(&vec);
    MPI_Type_free(&ft);
}

static void run_coll(const char *name)
{
    const int share = CREGION / np;
    unsigned char *buf = malloc(CREGION), *want = malloc((size_t) share);
    MPI_Status st;
    struct phase ph = { .began = lab_now() };
    MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR);
    coll_view(fh, rank);
    int stop = -1, k;
    for (k = 0; stop < 0 || k < stop; k++) {
        int c = k % NCREG, was_down = is_down(), all_down;
        coll_fill(buf, rank, c, (unsigned) k + 1);
        double t0 = lab_now();
        CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset) c * share, buf, share, MPI_BYTE, &st));
        timed(&ph, t0, was_down, "write_at_all");
        if (rank == 0 && k == NCREG - 1)
            lab_mark(dir, "started");
        not_forever(&ph);
        int seen = is_down();
        MPI_Allreduce(&seen, &all_down, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (all_down && stop < 0)
            stop = k + 1 + 2 * NCREG;
    }
    phase_report(&ph, strcmp(mode, "coll") == 0 ? "disk-directed write_at_all"
                                                : "two-phase write_at_all");
    /* the same open: independent reads of whole regions, another rank's each */
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    sync_all(fh);
    for (int c = 0; c < NCREG; c++) {
        if (c % np != (rank + 2) % np)
            continue;
        unsigned gen = last_gen(k, c, NCREG);
        memset(buf, 0, CREGION);
        CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) c * CREGION, buf, CREGION, MPI_BYTE, &st));
        int64_t bad = pattern_check(buf, CREGION, (uint64_t) c * CREGION, gen);
        if (bad >= 0)
            wrong((MPI_Offset) c * CREGION, bad, gen, "same open");
    }
    check_size(fh, (MPI_Offset) NCREG * CREGION, "same open");
    CHECK_MPI(MPI_File_close(&fh));
    /* a new open: collective reads (the same method), each rank another's pieces */
    int other = (rank + 2) % np;
    fh = open_file(name, MPI_MODE_RDONLY);
    coll_view(fh, other);
    for (int c = 0; c < NCREG; c++) {
        unsigned gen = last_gen(k, c, NCREG);
        memset(buf, 0, (size_t) share);
        CHECK_MPI(MPI_File_read_at_all(fh, (MPI_Offset) c * share, buf, share, MPI_BYTE, &st));
        coll_fill(want, other, c, gen);
        for (int j = 0; j < share; j++)
            if (buf[j] != want[j]) {
                MPI_Offset off = (MPI_Offset) c * CREGION
                    + ((MPI_Offset) (j / PIECE) * np + other) * PIECE;
                wrong(off, j % PIECE, gen, "new open, read_at_all");
            }
    }
    CHECK_MPI(MPI_File_close(&fh));
    free(buf);
    free(want);
}

static void run_create(const char *name, unsigned gen)
{
    MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR);
    write_mine(fh, gen);
    sync_all(fh);
    CHECK_MPI(MPI_File_close(&fh));
}

static void run_overwrite(const char *name, unsigned gen)
{
    unsigned gens[NREG];
    for (int c = 0; c < NREG; c++)
        gens[c] = gen;
    double t0 = lab_now();
    MPI_File fh = open_file(name, MPI_MODE_RDWR);
    write_mine(fh, gen);
    sync_all(fh);
    check_parts(fh, gens, 2, "same open");
    check_size(fh, part_at(NREG, 0), "same open");
    CHECK_MPI(MPI_File_close(&fh));
    if (rank == 0)
        printf("overwrite: open, write, sync, check and close in %.1f s\n", lab_now() - t0);
}

static void run_verify(const char *name, unsigned gen)
{
    unsigned gens[NREG];
    for (int c = 0; c < NREG; c++)
        gens[c] = gen;
    /* every rank the whole file: whichever copy a rank's reads go to, a
     * stale one is found */
    MPI_File fh = open_file(name, MPI_MODE_RDONLY);
    for (int shift = 0; shift < np; shift++)
        check_parts(fh, gens, shift, "new open");
    check_size(fh, part_at(NREG, 0), "new open");
    CHECK_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(argc == 5 || argc == 6, "usage: lab_replica MODE FILE DIR TIMEOUT [GEN]");
    mode = argv[1];
    dir = argv[3];
    timeout_s = argv[4];
    call_limit = 2 * atof(timeout_s) + 5;
    CHECK(np >= 2 && np <= 64 && CREGION % (PIECE * np) == 0, "2 to 64 ranks, a power of 2");
    alarm(240);                 /* a hang fails the test */
    unsigned gen = argc == 6 ? (unsigned) atoi(argv[5]) : 0;
    const char *name = argv[2];
    if (strcmp(mode, "write") == 0)
        run_write(name);
    else if (strcmp(mode, "read") == 0)
        run_read(name);
    else if (strcmp(mode, "coll") == 0 || strcmp(mode, "coll2p") == 0)
        run_coll(name);
    else if (strcmp(mode, "create") == 0 && gen)
        run_create(name, gen);
    else if (strcmp(mode, "overwrite") == 0 && gen)
        run_overwrite(name, gen);
    else if (strcmp(mode, "verify") == 0 && gen)
        run_verify(name, gen);
    else
        CHECK(0, "mode %s%s", mode, gen ? "" : " (GEN missing?)");
    double longest, total;
    int slow;
    MPI_Reduce(&checked.longest, &longest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&checked.total, &total, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&checked.slow, &slow, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && checked.reads)
        printf("checks: %d reads of %d KiB per rank, longest %.1f s, %d over 1 s (all ranks), "
               "at most %.1f s in them\n", checked.reads, CHUNK / 1024, longest, slow, total);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
