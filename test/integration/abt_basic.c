/*
 * abt: over any driver, as an application sees it:
 *
 *   abt_basic NAME_PREFIX STAGE_DIR   (STAGE_DIR "-": $TMPDIR)
 *
 * NAME_PREFIX is prepended to the test files' names (abt:rfs:h:p:/dir/,
 * abt:ufs:/dir/). Every check is on data: read-after-write before any
 * sync, a write-only file buffered without asking, sizes with writes in
 * flight, a memory cap smaller than one write,
 * staging to STAGE_DIR (which may be full), collective writes through a
 * subarray view, deferred close, set_size/preallocate with data in
 * flight, the shared file pointer, delete; hints as MPI_File_get_info
 * reports them, and invalid values refused with MPI_ERR_INFO_VALUE.
 */
#include "itest.h"

#define BLOCK (64 * 1024)
#define BLOCKS 128              /* per process: 8 MiB */

static int rank, nprocs;
static const char *prefix, *stage_dir;

/* Do the inner file's servers keep leases (abt:rfs:, abt:rdma:)? */
static int leased(void)
{
    return strstr(prefix, "rfs:") || strstr(prefix, "rdma:");
}

static const char *fname(const char *base)
{
    static char name[1024];
    snprintf(name, sizeof name, "%s%s", prefix, base);
    return name;
}

static MPI_Info hints(const char *memory, const char *buffer, const char *extra_key,
                      const char *extra_value)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "abt_max_memory", memory);
    MPI_Info_set(info, "abt_buffer_size", buffer);
    MPI_Info_set(info, "abt_stage_dir", stage_dir);
    MPI_Info_set(info, "abt_buffer_rdwr", "enable");     /* the files are read-write */
    if (extra_key)
        MPI_Info_set(info, extra_key, extra_value);
    return info;
}

static MPI_File open_file(const char *base, int amode, MPI_Info info)
{
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, fname(base), amode, info, &fh));
    return fh;
}

/* Block i of every process, interleaved: process r owns blocks i*np + r. */
static MPI_Offset block_at(int i, int r)
{
    return ((MPI_Offset) i * nprocs + r) * BLOCK;
}

static void write_blocks(MPI_File fh, unsigned seed)
{
    unsigned char *buf = malloc(BLOCK);
    for (int i = 0; i < BLOCKS; i++) {
        pattern_fill(buf, BLOCK, (uint64_t) block_at(i, rank), seed);
        CHECK_MPI(MPI_File_write_at(fh, block_at(i, rank), buf, BLOCK, MPI_BYTE,
                                    MPI_STATUS_IGNORE));
    }
    free(buf);
}

/* Every process's blocks, read by this process. */
static void check_all_blocks(MPI_File fh, unsigned seed)
{
    unsigned char *buf = malloc(BLOCK);
    for (int r = 0; r < nprocs; r++)
        for (int i = 0; i < BLOCKS; i++) {
            CHECK_MPI(MPI_File_read_at(fh, block_at(i, r), buf, BLOCK, MPI_BYTE,
                                       MPI_STATUS_IGNORE));
            int64_t bad = pattern_check(buf, BLOCK, (uint64_t) block_at(i, r), seed);
            CHECK(bad < 0, "block %d of %d differs at %lld", i, r, (long long) bad);
        }
    free(buf);
}

static void test_read_after_write(void)
{
    MPI_Info info = hints("16777216", "1048576", NULL, NULL);
    MPI_File fh = open_file("raw", MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    write_blocks(fh, 1);
    /* own data, before any sync: read-after-write of one process */
    unsigned char *buf = malloc(BLOCK);
    for (int i = 0; i < BLOCKS; i += 7) {
        CHECK_MPI(MPI_File_read_at(fh, block_at(i, rank), buf, BLOCK, MPI_BYTE,
                                   MPI_STATUS_IGNORE));
        CHECK(pattern_check(buf, BLOCK, (uint64_t) block_at(i, rank), 1) < 0, "block %d", i);
    }
    free(buf);
    MPI_Offset size;
    CHECK_MPI(MPI_File_get_size(fh, &size));
    if (rank == nprocs - 1)
        CHECK(size == block_at(BLOCKS, 0), "size %lld with writes in flight", (long long) size);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    check_all_blocks(fh, 1);

    info_expect(fh, "abt_buffer_size", "1048576");
    info_expect(fh, "abt_max_memory", "16777216");
    /* buffered: visible to others at once only under the servers' leases */
    info_expect(fh, "romio_visibility_immediate", leased() ? "true" : "false");
    CHECK_MPI(MPI_File_set_atomicity(fh, 1));
    info_expect(fh, "romio_visibility_immediate", "true");
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
}

/* A write-only file is buffered without asking: ROMIO opens it read-write
 * inside Open (for data-sieving writes), and abt must judge by the user's
 * mode, not that one. */
static void test_write_only(void)
{
    MPI_File fh = open_file("wronly", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL);
    info_expect(fh, "romio_visibility_immediate", "false");
    write_blocks(fh, 3);
    info_expect(fh, "romio_visibility_immediate", "false");
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    fh = open_file("wronly", MPI_MODE_RDONLY, MPI_INFO_NULL);
    check_all_blocks(fh, 3);
    CHECK_MPI(MPI_File_close(&fh));
}

/* 64 KiB of buffers for an 8 MiB write, with and without a stage dir. */
static void test_small_memory(const char *base, const char *stage)
{
    MPI_Info info = hints("65536", "16384", "abt_stage_dir", stage);
    /* a program that says it computes buffers (and stages) its first write:
     * one that does not writes it through, to measure the drain */
    MPI_Info_set(info, "abt_compute_interval", "1");
    MPI_File fh = open_file(base, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    uint64_t len = (uint64_t) BLOCK * BLOCKS;
    unsigned char *buf = malloc(len);
    pattern_fill(buf, len, len * (uint64_t) rank, 2);
    CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset) (len * (uint64_t) rank), buf, (int) len,
                                MPI_BYTE, MPI_STATUS_IGNORE));
    memset(buf, 0, len);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    fh = open_file(base, MPI_MODE_RDONLY, MPI_INFO_NULL);
    int peer = (rank + 1) % nprocs;
    CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) (len * (uint64_t) peer), buf, (int) len,
                               MPI_BYTE, MPI_STATUS_IGNORE));
    int64_t bad = pattern_check(buf, len, len * (uint64_t) peer, 2);
    CHECK(bad < 0, "%s: data of %d differs at %lld", base, peer, (long long) bad);
    CHECK_MPI(MPI_File_close(&fh));
    free(buf);
    MPI_Info_free(&info);
}

/* A 2-D block decomposition written collectively through a subarray view. */
static void test_collective_view(void)
{
    enum { N = 480 };           /* divisible by the dims of 1..4 processes */
    int dims[2] = { 0, 0 };
    MPI_Dims_create(nprocs, 2, dims);
    int sizes[2] = { N, N }, sub[2] = { N / dims[0], N / dims[1] };
    int starts[2] = { (rank / dims[1]) * sub[0], (rank % dims[1]) * sub[1] };
    MPI_Datatype view;
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &view);
    MPI_Type_commit(&view);
    int n = sub[0] * sub[1];
    int *data = malloc((size_t) n * sizeof *data);
    for (int i = 0; i < sub[0]; i++)
        for (int j = 0; j < sub[1]; j++)
            data[i * sub[1] + j] = (starts[0] + i) * N + starts[1] + j;
    MPI_Info info = hints("1048576", "262144", NULL, NULL);
    MPI_File fh = open_file("coll", MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, view, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_write_all(fh, data, n, MPI_INT, MPI_STATUS_IGNORE));
    memset(data, 0xff, (size_t) n * sizeof *data);
    CHECK_MPI(MPI_File_read_at_all(fh, 0, data, n, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < sub[0]; i++)
        for (int j = 0; j < sub[1]; j++)
            CHECK(data[i * sub[1] + j] == (starts[0] + i) * N + starts[1] + j, "(%d,%d)", i, j);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int *all = malloc((size_t) N * N * sizeof *all);
        fh = NULL;
        CHECK_MPI(MPI_File_open(MPI_COMM_SELF, fname("coll"), MPI_MODE_RDONLY, MPI_INFO_NULL,
                                &fh));
        CHECK_MPI(MPI_File_read_at(fh, 0, all, N * N, MPI_INT, MPI_STATUS_IGNORE));
        for (int i = 0; i < N * N; i++)
            CHECK(all[i] == i, "element %d is %d", i, all[i]);
        CHECK_MPI(MPI_File_close(&fh));
        free(all);
    }
    free(data);
    MPI_Type_free(&view);
    MPI_Info_free(&info);
}

static void test_deferred_close(void)
{
    MPI_Info info = hints("16777216", "1048576", "abt_defer_close", "enable");
    MPI_File fh = open_file("deferred", MPI_MODE_CREATE | MPI_MODE_WRONLY, info);
    write_blocks(fh, 3);
    CHECK_MPI(MPI_File_close(&fh));
    /* the same name opened again: this process's deferred writes land first */
    fh = open_file("deferred", MPI_MODE_RDWR, info);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    check_all_blocks(fh, 3);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
}

static void test_resize_in_flight(void)
{
    MPI_Info info = hints("16777216", "1048576", NULL, NULL);
    MPI_File fh = open_file("resize", MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    write_blocks(fh, 4);
    MPI_Offset half = block_at(BLOCKS / 2, 0), size;
    CHECK_MPI(MPI_File_set_size(fh, half));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == half, "size %lld after set_size %lld", (long long) size, (long long) half);
    CHECK_MPI(MPI_File_preallocate(fh, 2 * half + 5));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == 2 * half + 5, "size %lld after preallocate", (long long) size);
    unsigned char *buf = malloc(BLOCK);
    for (int i = 0; i < BLOCKS / 2; i++) {
        CHECK_MPI(MPI_File_read_at(fh, block_at(i, rank), buf, BLOCK, MPI_BYTE,
                                   MPI_STATUS_IGNORE));
        CHECK(pattern_check(buf, BLOCK, (uint64_t) block_at(i, rank), 4) < 0, "block %d", i);
    }
    free(buf);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
}

/* Every process appends records through the shared pointer: each record
 * must be found exactly once. */
static void test_shared_pointer(void)
{
    enum { REC = 1000, RECS = 20 };
    MPI_Info info = hints("16777216", "1048576", NULL, NULL);
    MPI_File fh = open_file("shared", MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    int rec[REC / sizeof(int)];
    for (int k = 0; k < RECS; k++) {
        for (size_t i = 0; i < sizeof rec / sizeof rec[0]; i++)
            rec[i] = rank * RECS + k;
        CHECK_MPI(MPI_File_write_shared(fh, rec, (int) sizeof rec, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    if (rank == 0) {
        int total = nprocs * RECS;
        int *seen = calloc((size_t) total, sizeof *seen);
        for (int k = 0; k < total; k++) {
            CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) k * (MPI_Offset) sizeof rec, rec,
                                       (int) sizeof rec, MPI_BYTE, MPI_STATUS_IGNORE));
            CHECK(rec[0] >= 0 && rec[0] < total, "record %d holds %d", k, rec[0]);
            for (size_t i = 1; i < sizeof rec / sizeof rec[0]; i++)
                CHECK(rec[i] == rec[0], "record %d is torn", k);
            seen[rec[0]]++;
        }
        for (int k = 0; k < total; k++)
            CHECK(seen[k] == 1, "record %d seen %d times", k, seen[k]);
        free(seen);
    }
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
}

/* Defaults, a value of each kind refused at open (the inner driver's too)
 * and by set_info, and what an open file reports after set_info (all
 * abt_* hints act at open); the data still right. */
static void test_hint_values(void)
{
    const char *tmp = getenv("TMPDIR"), *name = fname("values");
    static const struct hint_pair invalid[] = {
        { "abt_defer_close", "maybe" }, { "abt_buffer_size", "100" },
        { "abt_buffer_size", "big" }, { "abt_phase_gap", "-1" },
        { "abt_compute_interval", "soon" }, { "abt_coll_write", "fast" },
        { "abt_buffer_rdwr", "yes" },
    };
    static const struct hint_pair defaults[] = {
        { "abt_buffer_size", "4194304" }, { "abt_max_memory", "67108864" },
        { "abt_defer_close", "disable" }, { "abt_compute_interval", "0" },
        { "abt_output_size", "0" }, { "abt_phase_gap", "0.05" }, { "abt_stats", "disable" },
        { "abt_coll_write", "auto" }, { "abt_buffer_rdwr", "auto" },
    };
    if (strstr(prefix, "rfs:"))
        open_refused(name, "rfs_timeout", "soon");
    if (strstr(prefix, "rdma:"))
        open_refused(name, "rdma_io_method", "fast");
    MPI_File fh = open_checking_hints(name, HINT_PAIRS(invalid), HINT_PAIRS(defaults));
    info_expect(fh, "abt_stage_dir", tmp && *tmp ? tmp : "/tmp");
    /* read-write without abt_buffer_rdwr: every write lands before it returns,
     * or is held by the servers until it has */
    info_expect(fh, "romio_visibility_immediate", "true");
    set_info_refused(fh, "abt_buffer_size", "100", "4194304");
    set_info_refused(fh, "abt_stats", "on", "disable");
    set_info_expect(fh, "abt_buffer_size", "65536", "4194304");    /* in effect: the open's */
    write_blocks(fh, 9);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));
    check_all_blocks(fh, 9);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_delete(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        const char *bases[] = { "raw", "wronly", "small", "staged", "coll", "deferred", "resize", "shared" };
        for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++)
            CHECK_MPI(MPI_File_delete(fname(bases[i]), MPI_INFO_NULL));
        MPI_File fh;
        CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, fname("raw"), MPI_MODE_RDONLY, MPI_INFO_NULL,
                                  &fh), MPI_ERR_NO_SUCH_FILE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 3, "usage: abt_basic NAME_PREFIX STAGE_DIR");
    prefix = argv[1];
    /* "-": $TMPDIR (abt:'s default; in the lab, each client host's own) */
    stage_dir = strcmp(argv[2], "-") == 0 && getenv("TMPDIR") ? getenv("TMPDIR") : argv[2];
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    test_read_after_write();
    test_hint_values();
    test_write_only();
    test_small_memory("small", "none");
    test_small_memory("staged", stage_dir);
    test_collective_view();
    test_deferred_close();
    test_resize_in_flight();
    test_shared_pointer();
    test_delete();
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
