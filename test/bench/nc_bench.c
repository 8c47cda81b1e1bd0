/*
 * Noncontiguous patterns of the datatype I/O paper, every process through
 * its own file view with independent calls (MPI_File_write_at and
 * MPI_File_read_at), so that the driver's strided path is what is
 * measured, not a collective algorithm:
 *   tile2d   a 2-D array of N x N ints, block-block over the processes
 *            (the tile reader/writer);
 *   block3d  a 3-D array of N x N x N doubles, block-block-block;
 *   flash    the FLASH checkpoint: N blocks per process of 8^3 cells with
 *            4 guard cells on each side and 24 doubles per cell in memory
 *            (variable fastest), stored by variable in the file: memory
 *            and file both noncontiguous.
 * REPS passes of write then read; prints the median seconds of each, and
 * checks the data read back (and, for a local file, nothing else). On a
 * striped file (rdma:) rank 0 also prints the requests per call each
 * method should need for its view, by the rules of Table I of the
 * datatype I/O paper applied to this layout ("predict" line).
 *
 *   nc_bench NAME tile2d|block3d|flash N REPS [KEY=VALUE hints...]
 */
#include "../integration/itest.h"
#include "dtype_mpi.h"
#include "stripe/stripe_file.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

struct pattern {
    MPI_Datatype etype, view;   /* the file view */
    MPI_Datatype mem;           /* count of these in memory */
    int count;
    size_t span;                /* bytes of the memory buffer */
    size_t bytes;               /* data bytes per process */
};

/* Block distribution of an N^ndims array of etype over the processes. */
static void block_pattern(int ndims, int n, MPI_Datatype etype, int esize, int rank,
                          int nprocs, struct pattern *p)
{
    int dims[3] = { 0, 0, 0 }, sizes[3], subs[3], starts[3], rem = rank;
    MPI_Dims_create(nprocs, ndims, dims);
    for (int d = ndims - 1; d >= 0; d--) {
        CHECK(n % dims[d] == 0, "%d processes do not divide %d", nprocs, n);
        sizes[d] = n;
        subs[d] = n / dims[d];
        starts[d] = (rem % dims[d]) * subs[d];
        rem /= dims[d];
    }
    CHECK_MPI(MPI_Type_create_subarray(ndims, sizes, subs, starts, MPI_ORDER_C, etype,
                                       &p->view));
    MPI_Type_commit(&p->view);
    p->etype = p->mem = etype;
    p->count = 1;
    for (int d = 0; d < ndims; d++)
        p->count *= subs[d];
    p->bytes = p->span = (size_t) p->count * (size_t) esize;
}

#define FLASH_NXB 8
#define FLASH_GUARD 4
#define FLASH_SIDE (FLASH_NXB + 2 * FLASH_GUARD)
#define FLASH_VARS 24

/* FLASH: memory unk[block][z][y][x][var] with guard cells, file var-major
 * then process then block, interior cells only. */
static void flash_pattern(int blocks, int rank, int nprocs, struct pattern *p)
{
    MPI_Datatype var, cells;
    int sizes[4] = { blocks, FLASH_SIDE, FLASH_SIDE, FLASH_SIDE };
    int subs[4] = { blocks, FLASH_NXB, FLASH_NXB, FLASH_NXB };
    int starts[4] = { 0, FLASH_GUARD, FLASH_GUARD, FLASH_GUARD };
    MPI_Type_create_resized(MPI_DOUBLE, 0, FLASH_VARS * sizeof(double), &var);
    CHECK_MPI(MPI_Type_create_subarray(4, sizes, subs, starts, MPI_ORDER_C, var, &cells));
    CHECK_MPI(MPI_Type_create_hvector(FLASH_VARS, 1, sizeof(double), cells, &p->mem));
    MPI_Type_commit(&p->mem);
    MPI_Type_free(&var);
    MPI_Type_free(&cells);
    int run = blocks * FLASH_NXB * FLASH_NXB * FLASH_NXB;     /* doubles of one variable */
    MPI_Datatype contig;
    MPI_Type_contiguous(run, MPI_DOUBLE, &contig);
    CHECK_MPI(MPI_Type_create_resized(contig, 0, (MPI_Aint) nprocs * run * sizeof(double),
                                      &p->view));
    MPI_Type_free(&contig);
    MPI_Datatype shifted;
    int one = 1;
    MPI_Aint at = (MPI_Aint) rank * run * sizeof(double);
    CHECK_MPI(MPI_Type_create_hindexed(1, &one, &at, p->view, &shifted));
    MPI_Type_free(&p->view);
    CHECK_MPI(MPI_Type_create_resized(shifted, 0, (MPI_Aint) nprocs * run * sizeof(double),
                                      &p->view));
    MPI_Type_free(&shifted);
    MPI_Type_commit(&p->view);
    p->etype = MPI_DOUBLE;
    p->count = 1;
    p->bytes = (size_t) run * FLASH_VARS * sizeof(double);
    p->span = (size_t) blocks * FLASH_SIDE * FLASH_SIDE * FLASH_SIDE * FLASH_VARS *
              sizeof(double);
}

/* The data of a memory buffer, packed (what reaches the file). */
static unsigned char *packed(const struct pattern *p, const void *buf)
{
    unsigned char *out = malloc(p->bytes);
    int pos = 0;
    CHECK_MPI(MPI_Pack(buf, p->count, p->mem, out, (int) p->bytes, &pos, MPI_COMM_WORLD));
    return out;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* The pieces a set of runs makes in each object of a layout. */
struct tally {
    struct stripe_layout l;
    uint64_t pairs[STRIPE_MAX_FACTOR], bytes[STRIPE_MAX_FACTOR], end[STRIPE_MAX_FACTOR];
};

static void tally_init(struct tally *t, uint64_t unit, uint32_t factor)
{
    memset(t, 0, sizeof *t);
    t->l = (struct stripe_layout) { .unit = unit, .factor = factor };
    for (uint32_t i = 0; i < factor; i++)
        t->end[i] = UINT64_MAX;
}

/* A run cut at stripe boundaries; a piece adjacent in its object to the
 * one before joins its pair. */
static void tally_run(struct tally *t, uint64_t off, uint64_t len)
{
    while (len > 0) {
        struct stripe_piece piece;
        stripe_piece_at(&t->l, off, len, &piece);
        if (piece.local != t->end[piece.object])
            t->pairs[piece.object]++;
        t->end[piece.object] = piece.local + piece.len;
        t->bytes[piece.object] += piece.len;
        off += piece.len;
        len -= piece.len;
    }
}

/* Requests of at most `pairs` pairs and STRIPE_REQ_DATA bytes (0: one
 * per object touched, datatype I/O). */
static uint64_t tally_requests(const struct tally *t, uint64_t pairs)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < t->l.factor; i++) {
        uint64_t by_data = ceil_div(t->bytes[i], STRIPE_REQ_DATA);
        uint64_t by_pairs = pairs ? ceil_div(t->pairs[i], pairs) : t->bytes[i] > 0;
        n += pairs && by_data > by_pairs ? by_data : by_pairs;
    }
    return n;
}

/* Data sieving: every buffer of `buf` bytes over the extent is one
 * contiguous list access (`passes` of them: 2 for read-modify-write). */
static uint64_t sieve_requests(uint64_t unit, uint32_t factor, uint64_t first, uint64_t last,
                               uint64_t buf, int passes)
{
    uint64_t n = 0;
    for (uint64_t at = first; at < last; at += buf) {
        struct tally t;
        tally_init(&t, unit, factor);
        tally_run(&t, at, last - at < buf ? last - at : buf);
        n += (uint64_t) passes * tally_requests(&t, STRIPE_DEFAULT_PAIRS);
    }
    return n;
}

/*
 * Requests per call of one client, by the rules of Table I applied to
 * this layout: naive one per contiguous piece of an object (adjacent
 * ones merged, at most STRIPE_REQ_DATA each); list ceil(pairs / 64) per
 * object (or its data / STRIPE_REQ_DATA); datatype one per object
 * touched; data sieving ceil(extent / buffer) accesses of ROMIO's
 * default buffers (4 MiB reads; 512 KiB read-modify-writes), each a list
 * access: the mean of the read and the write call.
 */
static void predict(const struct pattern *p, uint64_t unit, uint32_t factor)
{
    struct dtype *t;
    struct dtype_iter it;
    struct tally all;
    uint64_t regions = 0, first = UINT64_MAX, last = 0;
    int64_t off, len;
    CHECK(dtype_from_mpi(p->view, &t) == 0, "cannot describe the view");
    int64_t data = (int64_t) p->bytes;
    CHECK(dtype_iter_init(&it, t, data / t->size + 1, 0, 0, data) == 0, "bad window");
    tally_init(&all, unit, factor);
    while (dtype_iter_next(&it, &off, &len)) {
        regions++;
        first = (uint64_t) off < first ? (uint64_t) off : first;
        last = (uint64_t) (off + len);
        tally_run(&all, (uint64_t) off, (uint64_t) len);
    }
    uint64_t sieve = sieve_requests(unit, factor, first, last, 4u << 20, 1) +
                     sieve_requests(unit, factor, first, last, 512u << 10, 2);
    printf("regions %llu\npredict naive %llu list %llu datatype %llu sieve %.1f\n",
           (unsigned long long) regions, (unsigned long long) tally_requests(&all, 1),
           (unsigned long long) tally_requests(&all, STRIPE_DEFAULT_PAIRS),
           (unsigned long long) tally_requests(&all, 0), (double) sieve / 2);
    dtype_free(t);
}

/* The layout the file has, as MPI_File_get_info reports it (rdma:). */
static int striping(MPI_File fh, uint64_t *unit, uint32_t *factor)
{
    MPI_Info info;
    char u[MPI_MAX_INFO_VAL + 1], f[MPI_MAX_INFO_VAL + 1], s[MPI_MAX_INFO_VAL + 1];
    int fu = 0, ff = 0, fs = 0;
    CHECK_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, "striping_unit", MPI_MAX_INFO_VAL, u, &fu);
    MPI_Info_get(info, "striping_factor", MPI_MAX_INFO_VAL, f, &ff);
    MPI_Info_get(info, "rdma_servers", MPI_MAX_INFO_VAL, s, &fs);
    MPI_Info_free(&info);
    *unit = strtoull(u, NULL, 10);
    *factor = (uint32_t) atoi(f);
    return fu && ff && fs && *unit > 0 && *factor > 0 && *factor <= STRIPE_MAX_FACTOR;
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc >= 5, "usage: nc_bench NAME tile2d|block3d|flash N REPS [KEY=VALUE...]");
    int n = atoi(argv[3]), reps = atoi(argv[4]);
    struct pattern pat;
    if (strcmp(argv[2], "flash") == 0)
        flash_pattern(n, rank, nprocs, &pat);
    else if (strcmp(argv[2], "block3d") == 0)
        block_pattern(3, n, MPI_DOUBLE, 8, rank, nprocs, &pat);
    else
        block_pattern(2, n, MPI_INT, 4, rank, nprocs, &pat);
    unsigned char *out = malloc(pat.span), *in = malloc(pat.span);
    pattern_fill(out, pat.span, (uint64_t) rank * pat.span, 11);
    unsigned char *expect = packed(&pat, out);

    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 5; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        CHECK(eq != NULL, "hint %s is not KEY=VALUE", argv[i]);
        *eq = '\0';
        MPI_Info_set(info, argv[i], eq + 1);
    }
    MPI_File fh;
    MPI_Status st;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_MPI(MPI_File_set_view(fh, 0, pat.etype, pat.view, "native", info));
    uint64_t unit;
    uint32_t factor;
    if (rank == 0 && striping(fh, &unit, &factor))
        predict(&pat, unit, factor);
    double *w = calloc((size_t) reps, sizeof *w), *r = calloc((size_t) reps, sizeof *r);
    for (int i = 0; i < reps; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        CHECK_MPI(MPI_File_write_at(fh, 0, out, pat.count, pat.mem, &st));
        CHECK_MPI(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        memset(in, 0, pat.span);
        CHECK_MPI(MPI_File_read_at(fh, 0, in, pat.count, pat.mem, &st));
        MPI_Barrier(MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        unsigned char *got = packed(&pat, in);
        CHECK(memcmp(got, expect, pat.bytes) == 0, "data read back differs (pass %d)", i);
        free(got);
        w[i] = t1 - t0;
        r[i] = t2 - t1;
    }
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(w, (size_t) reps, sizeof *w, cmp);
        qsort(r, (size_t) reps, sizeof *r, cmp);
        printf("bytes %zu\nwrite %.4f\nread %.4f\n", pat.bytes * (size_t) nprocs, w[reps / 2],
               r[reps / 2]);
        CHECK_MPI(MPI_File_delete(argv[1], MPI_INFO_NULL));
    }
    MPI_Info_free(&info);
    MPI_Type_free(&pat.view);
    if (pat.mem != pat.etype)
        MPI_Type_free(&pat.mem);
    free(out);
    free(in);
    free(expect);
    MPI_Finalize();
    return 0;
}
