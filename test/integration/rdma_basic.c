/*
 * rdma: end to end. For each rdma_io_method (naive, list, datatype, sieve)
 * every process writes its interleaved blocks of a file through a
 * noncontiguous view from a noncontiguous buffer; the data is read back
 * by every process and, by rank 0, object by object from each server's
 * export root, where every stripe must sit where the layout says. Then
 * collective I/O, size, resize, preallocation, the layout a reopened file
 * keeps, what MPI_File_get_info reports (defaults, values given, values
 * refused with MPI_ERR_INFO_VALUE), delete, and errors.
 *   rdma_basic PREFIX UNIT FACTOR ROOT...   (servers: $ROMIO_RDMA_SERVERS)
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itest.h"
#include "stripe/stripe.h"

#define BLOCK 777               /* divides no stripe unit */
#define BLOCKS 40               /* per process */

static int rank, nprocs, nroots;
static char **roots;

/* Object `i` of PATH in root i: its header and data. */
static unsigned char *object(int i, const char *path, struct stripe_header *h, uint64_t *len)
{
    char full[4096];
    struct stat st;
    snprintf(full, sizeof full, "%s%s", roots[i], path);
    int fd = open(full, O_RDONLY);
    CHECK(fd >= 0 && fstat(fd, &st) == 0, "object %s: %s", full, strerror(errno));
    CHECK((uint64_t) st.st_size >= STRIPE_HDR_SIZE, "object %s has no header", full);
    unsigned char *all = malloc((size_t) st.st_size);
    CHECK(pread(fd, all, (size_t) st.st_size, 0) == st.st_size, "read %s", full);
    close(fd);
    CHECK(stripe_header_decode(all, (size_t) st.st_size, h) == 0, "bad header in %s", full);
    CHECK(h->index == (uint32_t) i, "%s holds object %u", full, h->index);
    *len = (uint64_t) st.st_size - STRIPE_HDR_SIZE;
    return all;
}

/* Rank 0: the logical bytes [0, size) hold the pattern `seed` (zeros from
 * `zero_from` on), each at its place in its object. */
static void check_placement(const char *path, uint64_t size, uint64_t zero_from, unsigned seed,
                            uint64_t unit, uint32_t factor)
{
    unsigned char *obj[64];
    uint64_t len[64], file_id = 0;
    if (rank != 0)
        return;
    for (uint32_t i = 0; i < factor; i++) {
        struct stripe_header h;
        obj[i] = object((int) i, path, &h, &len[i]);
        CHECK(h.layout.unit == unit && h.layout.factor == factor,
              "object %u: unit %llu factor %u", i, (unsigned long long) h.layout.unit,
              h.layout.factor);
        CHECK(i == 0 || h.layout.file_id == file_id, "object %u of another file", i);
        file_id = h.layout.file_id;
        CHECK(len[i] <= stripe_local_size(&h.layout, i, size), "object %u too long", i);
    }
    for (uint32_t i = factor; i < (uint32_t) nroots; i++) {
        char full[4096];
        snprintf(full, sizeof full, "%s%s", roots[i], path);
        CHECK(access(full, F_OK) != 0, "server %u holds an object of a %u-object file", i,
              factor);
    }
    struct stripe_layout l = { .unit = unit, .factor = factor };
    for (uint64_t off = 0; off < size; off++) {
        uint32_t o = stripe_object_of(&l, off);
        uint64_t local = stripe_local_of(&l, off);
        unsigned char got = local < len[o] ? obj[o][STRIPE_HDR_SIZE + local] : 0;
        unsigned char want = off < zero_from ? pattern_byte(off, seed) : 0;
        CHECK(got == want, "%s: logical byte %llu (object %u, local %llu) is %u, not %u",
              path, (unsigned long long) off, o, (unsigned long long) local, got, want);
    }
    for (uint32_t i = 0; i < factor; i++)
        free(obj[i]);
}

/* This process's blocks: BLOCK bytes every nprocs * BLOCK, from rank * BLOCK. */
static MPI_Datatype file_view(void)
{
    MPI_Datatype block, tiled;
    int len = BLOCK;
    MPI_Aint disp = (MPI_Aint) rank * BLOCK;
    MPI_Type_create_hindexed(1, &len, &disp, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint) nprocs * BLOCK, &tiled);
    MPI_Type_commit(&tiled);
    MPI_Type_free(&block);
    return tiled;
}

/* Memory: the data in runs of 111 bytes every 150. */
#define MEM_RUN 111             /* divides DATA */
#define MEM_STRIDE 150
#define DATA (BLOCK * BLOCKS)

static MPI_Datatype memory_type(void)
{
    MPI_Datatype t;
    MPI_Type_vector(DATA / MEM_RUN, MEM_RUN, MEM_STRIDE, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* The packed data of this process, as the pattern at its file offsets. */
static void my_data(unsigned char *packed, unsigned seed)
{
    for (int b = 0; b < BLOCKS; b++)
        pattern_fill(packed + (size_t) b * BLOCK, BLOCK,
                     ((uint64_t) b * nprocs + rank) * BLOCK, seed);
}

static void scatter(unsigned char *mem, const unsigned char *packed)
{
    for (int i = 0; i < DATA / MEM_RUN; i++)
        memcpy(mem + (size_t) i * MEM_STRIDE, packed + (size_t) i * MEM_RUN, MEM_RUN);
}

static void gather(unsigned char *packed, const unsigned char *mem)
{
    for (int i = 0; i < DATA / MEM_RUN; i++)
        memcpy(packed + (size_t) i * MEM_RUN, mem + (size_t) i * MEM_STRIDE, MEM_RUN);
}

static void method_case(const char *prefix, const char *method, const char *unit,
                        const char *factor, int collective, unsigned seed)
{
    char name[4096];
    MPI_File fh;
    MPI_Info info;
    MPI_Status st;
    int count;
    snprintf(name, sizeof name, "%s%s%s", prefix, method, collective ? ".coll" : "");
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", unit);
    MPI_Info_set(info, "striping_factor", factor);
    MPI_Info_set(info, "rdma_io_method", method);
    MPI_Info_set(info, "rdma_pack_threshold", "131072");
    MPI_Info_set(info, "rdma_memory_segments", "enable");
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    info_expect(fh, "striping_unit", unit);
    info_expect(fh, "striping_factor", factor);
    info_expect(fh, "rdma_io_method", method);
    info_expect(fh, "rdma_pack_threshold", "131072");
    info_expect(fh, "rdma_memory_segments", "enable");
    info_expect(fh, "rdma_servers", NULL);

    MPI_Datatype view = file_view(), mem = memory_type();
    size_t span = (size_t) (DATA / MEM_RUN) * MEM_STRIDE;
    unsigned char *packed = malloc(DATA), *buf = calloc(1, span), *back = malloc(DATA);
    my_data(packed, seed);
    scatter(buf, packed);
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, view, "native", MPI_INFO_NULL));
    if (collective)
        CHECK_MPI(MPI_File_write_at_all(fh, 0, buf, 1, mem, &st));
    else
        CHECK_MPI(MPI_File_write_at(fh, 0, buf, 1, mem, &st));
    MPI_Get_count(&st, mem, &count);
    CHECK(count == 1, "wrote %d memory types", count);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);

    uint64_t size = (uint64_t) DATA * nprocs;
    const char *path = strchr(name, ':') + 1;
    check_placement(path, size, size, seed, strtoull(unit, NULL, 10),
                    (uint32_t) atoi(factor));

    /* read back: from the neighbour's view too, so each process reads
     * data another one wrote */
    memset(buf, 0, span);
    if (collective)
        CHECK_MPI(MPI_File_read_at_all(fh, 0, buf, 1, mem, &st));
    else
        CHECK_MPI(MPI_File_read_at(fh, 0, buf, 1, mem, &st));
    gather(back, buf);
    CHECK(memcmp(back, packed, DATA) == 0, "%s: read back differs", name);
    MPI_Offset fsize;
    CHECK_MPI(MPI_File_get_size(fh, &fsize));
    CHECK((uint64_t) fsize == size, "size %lld, expected %llu", (long long) fsize,
          (unsigned long long) size);

    /* a read across the end: short, the status says how much */
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) size - 100, back, 1000, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == 100, "read %d bytes across the end, expected 100", count);
    CHECK(pattern_check(back, 100, size - 100, seed) < 0, "tail differs");

    /* shrink into a stripe, then grow: the rest reads as zeros */
    uint64_t cut = size / 2 + 3;
    CHECK_MPI(MPI_File_set_size(fh, (MPI_Offset) cut));
    CHECK_MPI(MPI_File_get_size(fh, &fsize));
    CHECK((uint64_t) fsize == cut, "size %lld after set_size %llu", (long long) fsize,
          (unsigned long long) cut);
    CHECK_MPI(MPI_File_preallocate(fh, (MPI_Offset) size));
    CHECK_MPI(MPI_File_get_size(fh, &fsize));
    CHECK((uint64_t) fsize == size, "size %lld after preallocate", (long long) fsize);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_placement(path, size, cut, seed, strtoull(unit, NULL, 10), (uint32_t) atoi(factor));
    CHECK_MPI(MPI_File_close(&fh));

    /* reopened with other wishes: the file keeps its layout */
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "12345");
    MPI_Info_set(info, "striping_factor", "1");
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, info, &fh));
    MPI_Info_free(&info);
    info_expect(fh, "striping_unit", unit);
    info_expect(fh, "striping_factor", factor);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < nroots; i++) {
        char full[4096];
        snprintf(full, sizeof full, "%s%s", roots[i], path);
        CHECK(access(full, F_OK) != 0, "%s still there after delete", full);
    }
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_NO_SUCH_FILE);
    MPI_Type_free(&view);
    MPI_Type_free(&mem);
    free(packed);
    free(buf);
    free(back);
}

/* Defaults, a value of each kind refused at open and by set_info, and
 * what an open file reports after set_info; the data still right. */
static void hint_values(const char *prefix, unsigned seed)
{
    char name[4096];
    MPI_File fh;
    MPI_Status st;
    unsigned char buf[BLOCK], in[BLOCK];
    static const struct hint_pair invalid[] = {
        { "rdma_io_method", "fast" }, { "rdma_memory_segments", "sometimes" },
        { "rdma_list_pairs", "0" }, { "rdma_list_pairs", "4097" },
        { "rdma_pack_threshold", "0" }, { "rdma_timeout", "soon" },
        { "rdma_inflight", "-1" }, { "rdma_inflight", "1073741825" },
        { "rdma_inflight_servers", "65" }, { "rfs_transport", "tsl" },
        { "rdma_tcp_rcvbuf", "-1" }, { "rdma_tcp_rcvbuf", "1073741825" },
    };
    static const struct hint_pair defaults[] = {
        { "rdma_io_method", "list" }, { "rdma_list_pairs", "64" }, { "rdma_timeout", "120" },
        { "rdma_stats", "disable" }, { "rdma_coll", "auto" }, { "rdma_coll_cache", "disable" },
        { "rdma_registration", "cached" }, { "rdma_memory_segments", "auto" },
        { "rdma_pack_threshold", "65536" }, { "rdma_inflight", "0" },
        { "rdma_inflight_servers", "4" }, { "rdma_tcp_rcvbuf", "262144" },
        { "rfs_transport", "tcp" },
    };
    snprintf(name, sizeof name, "%svalues", prefix);
    fh = open_checking_hints(name, HINT_PAIRS(invalid), HINT_PAIRS(defaults));
    set_info_refused(fh, "rdma_io_method", "fast", "list");
    set_info_refused(fh, "rdma_list_pairs", "many", "64");
    set_info_expect(fh, "rdma_io_method", "naive", "naive");
    set_info_expect(fh, "rdma_list_pairs", "8", "8");
    set_info_expect(fh, "rdma_inflight", "4096", "4096");     /* one request at a time */
    set_info_expect(fh, "rdma_inflight_servers", "1", "1");
    set_info_expect(fh, "rdma_timeout", "30", "120");   /* read at open: the file keeps its own */

    pattern_fill(buf, sizeof buf, (uint64_t) rank * sizeof buf, seed);
    CHECK_MPI(MPI_File_write_at_all(fh, rank * (MPI_Offset) sizeof buf, buf, sizeof buf,
                                    MPI_BYTE, &st));
    int peer = (rank + 1) % nprocs;
    CHECK_MPI(MPI_File_read_at_all(fh, peer * (MPI_Offset) sizeof in, in, sizeof in, MPI_BYTE,
                                   &st));
    int64_t bad = pattern_check(in, sizeof in, (uint64_t) peer * sizeof in, seed);
    CHECK(bad < 0, "data after set_info differs at %lld", (long long) bad);
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
}

static void error_cases(const char *prefix)
{
    char name[4096], one[600];
    MPI_File fh;
    MPI_Info info;
    const char *servers = getenv("ROMIO_RDMA_SERVERS");
    snprintf(name, sizeof name, "%serrors", prefix);

    open_refused(name, "rdma_servers", "no-port-here");
    MPI_Info_create(&info);
    MPI_Info_set(info, "rdma_servers", "127.0.0.1:1");      /* nobody listens */
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                MPI_ERR_IO);
    MPI_Info_free(&info);

    /* a file over every server, opened with a list of only the first */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_close(&fh));
    if (nroots > 1) {
        snprintf(one, sizeof one, "%.*s", (int) strcspn(servers, ","), servers);
        MPI_Info_create(&info);
        MPI_Info_set(info, "rdma_servers", one);
        CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, info, &fh),
                    MPI_ERR_BAD_FILE);
        MPI_Info_free(&info);
    }
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL |
                              MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_FILE_EXISTS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc >= 5, "usage: rdma_basic PREFIX UNIT FACTOR ROOT...");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    roots = argv + 4;
    nroots = argc - 4;
    const char *methods[] = { "naive", "list", "datatype", "sieve" };
    unsigned seed = 1;
    for (int m = 0; m < 4; m++)
        method_case(argv[1], methods[m], argv[2], argv[3], 0, seed++);
    method_case(argv[1], "list", argv[2], argv[3], 1, seed++);
    method_case(argv[1], "datatype", argv[2], argv[3], 1, seed++);
    hint_values(argv[1], seed++);
    error_cases(argv[1]);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
