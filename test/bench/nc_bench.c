/*
 * Noncontiguous patterns of the datatype I/O paper, every process through
 * its own file view with independent calls (MPI_File_write_at and
 * MPI_File_read_at), so that the driver's strided path is what is
 * measured, not a collective algorithm:
 *   tile2d   a 2-D array of N x N ints, block-block over the processes
 *            (the tile reader/writer);
 *   block3d  a 3-D array of N x N x N doubles, block-block-block.
 * REPS passes of write then read; prints the median seconds of each, and
 * checks the data read back (and, for a local file, nothing else).
 *
 *   nc_bench NAME tile2d|block3d N REPS [KEY=VALUE hints...]
 */
#include "../integration/itest.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc >= 5, "usage: nc_bench NAME tile2d|block3d N REPS [KEY=VALUE...]");
    int three = strcmp(argv[2], "block3d") == 0, n = atoi(argv[3]), reps = atoi(argv[4]);
    int ndims = three ? 3 : 2, dims[3] = { 0, 0, 0 };
    MPI_Datatype etype = three ? MPI_DOUBLE : MPI_INT, view;
    MPI_Dims_create(nprocs, ndims, dims);
    int sizes[3], subs[3], starts[3], rem = rank;
    for (int d = ndims - 1; d >= 0; d--) {
        CHECK(n % dims[d] == 0, "%d processes do not divide %d", nprocs, n);
        sizes[d] = n;
        subs[d] = n / dims[d];
        starts[d] = (rem % dims[d]) * subs[d];
        rem /= dims[d];
    }
    CHECK_MPI(MPI_Type_create_subarray(ndims, sizes, subs, starts, MPI_ORDER_C, etype, &view));
    MPI_Type_commit(&view);
    int esize = three ? 8 : 4, count = 1;
    for (int d = 0; d < ndims; d++)
        count *= subs[d];
    size_t bytes = (size_t) count * (size_t) esize;
    unsigned char *out = malloc(bytes), *in = malloc(bytes);
    pattern_fill(out, bytes, (uint64_t) rank * bytes, 11);

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
    CHECK_MPI(MPI_File_set_view(fh, 0, etype, view, "native", info));
    double *w = calloc((size_t) reps, sizeof *w), *r = calloc((size_t) reps, sizeof *r);
    for (int i = 0; i < reps; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        CHECK_MPI(MPI_File_write_at(fh, 0, out, count, etype, &st));
        CHECK_MPI(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        memset(in, 0, bytes);
        CHECK_MPI(MPI_File_read_at(fh, 0, in, count, etype, &st));
        MPI_Barrier(MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        CHECK(memcmp(in, out, bytes) == 0, "data read back differs (pass %d)", i);
        w[i] = t1 - t0;
        r[i] = t2 - t1;
    }
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        qsort(w, (size_t) reps, sizeof *w, cmp);
        qsort(r, (size_t) reps, sizeof *r, cmp);
        printf("bytes %zu\nwrite %.4f\nread %.4f\n", bytes * (size_t) nprocs, w[reps / 2],
               r[reps / 2]);
        CHECK_MPI(MPI_File_delete(argv[1], MPI_INFO_NULL));
    }
    MPI_Info_free(&info);
    MPI_Type_free(&view);
    MPI_Finalize();
    return 0;
}
