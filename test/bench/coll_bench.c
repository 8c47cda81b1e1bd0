/*
 * Collective I/O patterns of seed 003, timed:
 *   coll_bench FILE block3d N  MODE REPS   N^3 ints, block-block-block over a
 *                                           3-D process grid (coll_perf's shape)
 *   coll_bench FILE cyclic2d N K MODE REPS N^2 ints, CYCLIC(K) x CYCLIC(K) over
 *                                           a 2-D process grid
 * MODE: dd (rdma_coll=disk_directed), 2p (two_phase), indep (independent
 * datatype I/O, MPI_File_write/read with rdma_io_method=datatype), or
 * hot (disk_directed with rdma_coll_cache=enable: the read is repeated,
 * and the second one is reported). Prints the medians over REPS of the
 * slowest process: "write S" and "read S", and checks every value read.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "coll_bench"
#include "bench_check.h"

static int rank, nprocs;

/*
 * The file type of this process, its displacement and the number of ints
 * it holds: a darray, as applications write these distributions (the
 * datatype engine decomposes darrays itself, so what is timed is the
 * I/O). block3d: BLOCK in three dimensions (coll_perf's shape); cyclic:
 * CYCLIC(k) x CYCLIC(k).
 */
static MPI_Datatype make_view(const char *pattern, int n, int k, int *count, MPI_Offset *disp)
{
    MPI_Datatype t;
    int ndims = strcmp(pattern, "block3d") == 0 ? 3 : 2, dims[3] = { 0, 0, 0 };
    int gsizes[3] = { n, n, n }, distribs[3], dargs[3];
    MPI_Dims_create(nprocs, ndims, dims);
    for (int d = 0; d < ndims; d++) {
        distribs[d] = ndims == 3 ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
        dargs[d] = ndims == 3 ? MPI_DISTRIBUTE_DFLT_DARG : k;
    }
    MPI_Type_create_darray(nprocs, rank, ndims, gsizes, distribs, dargs, dims, MPI_ORDER_C,
                           MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Count size;
    MPI_Type_size_x(t, &size);
    *disp = 0;
    *count = (int) (size / (MPI_Count) sizeof(int));
    return t;
}

/* Values unique per repetition, process and element: a read that brings
 * another process's or another pass's data is caught. */
static void fill(int *buf, int count, int seed)
{
    for (int i = 0; i < count; i++)
        buf[i] = seed * 1000003 + rank * 7919 + i;
}

static double timed_io(MPI_File fh, int *buf, int count, int is_write, int collective)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (is_write)
        CHECK(collective ? MPI_File_write_at_all(fh, 0, buf, count, MPI_INT, MPI_STATUS_IGNORE)
                         : MPI_File_write_at(fh, 0, buf, count, MPI_INT, MPI_STATUS_IGNORE),
              "write");
    else
        CHECK(collective ? MPI_File_read_at_all(fh, 0, buf, count, MPI_INT, MPI_STATUS_IGNORE)
                         : MPI_File_read_at(fh, 0, buf, count, MPI_INT, MPI_STATUS_IGNORE),
              "read");
    double t = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int cyclic = argc == 7 && strcmp(argv[2], "cyclic2d") == 0;
    if (!(argc == 6 && strcmp(argv[2], "block3d") == 0) && !cyclic) {
        if (rank == 0)
            fprintf(stderr, "usage: coll_bench FILE block3d N MODE REPS | "
                            "FILE cyclic2d N K MODE REPS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int n = atoi(argv[3]), k = cyclic ? atoi(argv[4]) : 0, reps = atoi(argv[argc - 1]), count;
    const char *mode = argv[argc - 2];
    int collective = strcmp(mode, "indep") != 0, hot = strcmp(mode, "hot") == 0;
    MPI_Offset disp;
    MPI_Datatype view = make_view(argv[2], n, k, &count, &disp);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "rdma_coll", strcmp(mode, "2p") == 0 ? "two_phase" : "disk_directed");
    MPI_Info_set(info, "rdma_io_method", "datatype");
    if (hot)
        MPI_Info_set(info, "rdma_coll_cache", "enable");
    int *buf = malloc((size_t) count * sizeof *buf), *back = malloc((size_t) count * sizeof *back);
    double *w = malloc((size_t) reps * sizeof *w), *r = malloc((size_t) reps * sizeof *r);

    for (int rep = 0; rep < reps; rep++) {
        MPI_File fh;
        CHECK(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
              "open");
        CHECK(MPI_File_set_view(fh, disp, MPI_INT, view, "native", info), "set_view");
        fill(buf, count, rep);
        w[rep] = timed_io(fh, buf, count, 1, collective);
        r[rep] = timed_io(fh, back, count, 0, collective);
        if (hot)
            r[rep] = timed_io(fh, back, count, 0, collective);
        for (int i = 0; i < count; i++)
            if (back[i] != buf[i]) {
                fprintf(stderr, "coll_bench: rank %d: int %d read %d, wrote %d\n", rank, i,
                        back[i], buf[i]);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        CHECK(MPI_File_close(&fh), "close");
    }
    qsort(w, (size_t) reps, sizeof *w, by_value);
    qsort(r, (size_t) reps, sizeof *r, by_value);
    if (rank == 0)
        printf("write %.4f\nread %.4f\n", w[reps / 2], r[reps / 2]);
    if (rank == 0)
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Info_free(&info);
    MPI_Type_free(&view);
    free(buf);
    free(back);
    free(w);
    free(r);
    MPI_Finalize();
    return 0;
}
