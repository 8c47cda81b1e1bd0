/*
 * The RFS paper's periodic-output program (seed 004, section 4), shared by
 * abt_bench.c (MPI-IO) and lib_bench.c (HDF5, PnetCDF) so that both do the
 * same computation and report it alike. Each process owns an N^3 block of
 * a 3-D Jacobi grid (3-D block decomposition, a ghost layer around it in
 * memory); every snapshot is a computation phase (a fixed number of
 * sweeps, calibrated to COMPUTE_S seconds once at start, or given as
 * @SWEEPS: the same work in every run, so that runs compare their
 * computation times without the calibration's own noise) followed by the
 * program's write of the snapshot.
 *
 * The report (rank 0, one line, read by abt.sh and lab.sh): the
 * application-visible write throughput (bytes of all snapshots / the time
 * spent inside the write calls, the slowest process per call), the time of
 * the final close (which drains what is still buffered), the whole run,
 * the mean computation phase, the throughput with the close counted (IOR's
 * write figure: open to close), and the sweeps of a computation phase.
 */
#ifndef PERIODIC_H_INCLUDED
#define PERIODIC_H_INCLUDED

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct block {
    int n;                    /* the block's edge */
    double *grid, *next;      /* (n + 2)^3 cells each: the block and its ghost layer */
    int gsizes[3], starts[3]; /* the global grid, and this block's corner in it */
};

/* A program's file: what the run calls, with the program's own context. */
struct output {
    void (*open)(void *ctx);
    void (*prepare)(void *ctx, int snapshot); /* untimed, before the snapshot's barrier */
    void (*write)(void *ctx, int snapshot);   /* the snapshot's visible write */
    void (*close)(void *ctx);
};

static void block_init(struct block *b, int n)
{
    int rank, np, dims[3] = { 0, 0, 0 }, coords[3];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    size_t cells = (size_t) (n + 2) * (n + 2) * (n + 2);
    b->n = n;
    b->grid = calloc(cells, sizeof *b->grid);
    b->next = calloc(cells, sizeof *b->next);
    for (size_t c = 0; c < cells; c++)
        b->grid[c] = (double) (c % 97) + rank;
    MPI_Dims_create(np, 3, dims);
    coords[0] = rank / (dims[1] * dims[2]);
    coords[1] = (rank / dims[2]) % dims[1];
    coords[2] = rank % dims[2];
    for (int d = 0; d < 3; d++) {
        b->gsizes[d] = dims[d] * n;
        b->starts[d] = coords[d] * n;
    }
}

static void block_free(struct block *b)
{
    free(b->grid);
    free(b->next);
}

/* The block's N^3 interior within its (N + 2)^3 cells in memory. */
static MPI_Datatype block_memtype(const struct block *b)
{
    int sizes[3] = { b->n + 2, b->n + 2, b->n + 2 }, subs[3] = { b->n, b->n, b->n };
    int starts[3] = { 1, 1, 1 };
    MPI_Datatype t;
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

static MPI_Offset snapshot_bytes(const struct block *b)
{
    return (MPI_Offset) b->gsizes[0] * b->gsizes[1] * b->gsizes[2] * (MPI_Offset) sizeof(double);
}

static double at(const double *g, int n, int i, int j, int k)
{
    return g[((size_t) i * (n + 2) + j) * (n + 2) + k];
}

static void sweep(struct block *b)
{
    const double *g = b->grid;
    double *next = b->next;
    int n = b->n;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++)
            for (int k = 1; k <= n; k++)
                next[((size_t) i * (n + 2) + j) * (n + 2) + k] =
                    (at(g, n, i - 1, j, k) + at(g, n, i + 1, j, k) + at(g, n, i, j - 1, k) +
                     at(g, n, i, j + 1, k) + at(g, n, i, j, k - 1) + at(g, n, i, j, k + 1)) / 6;
    b->next = b->grid;
    b->grid = next;
}

/* Sweeps that take about `seconds` here, agreed by all (the slowest). */
static int calibrate(struct block *b, double seconds)
{
    double t0 = MPI_Wtime();
    int sweeps = 0;
    while (MPI_Wtime() - t0 < 0.2 || sweeps < 2) {
        sweep(b);
        sweeps++;
    }
    double rate = sweeps / (MPI_Wtime() - t0), slowest;
    MPI_Allreduce(&rate, &slowest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    int count = (int) (seconds * slowest + 0.5);
    return count > 0 ? count : (seconds > 0);
}

/* A computation phase's sweeps: COMPUTE_S calibrated, or @SWEEPS. */
static int phase_sweeps(struct block *b, const char *compute)
{
    return compute[0] == '@' ? atoi(compute + 1) : calibrate(b, atof(compute));
}

/* An info of the HINT=VALUE words among args (others are ignored). */
static MPI_Info info_from_args(int count, char **args)
{
    MPI_Info info;
    MPI_Info_create(&info);
    for (int a = 0; a < count; a++) {
        char *eq = strchr(args[a], '=');
        if (eq) {
            *eq = '\0';
            MPI_Info_set(info, args[a], eq + 1);
        }
    }
    return info;
}

/* The run: open, SNAPSHOTS computation phases each followed by the
 * snapshot's write, close; then the report. */
static void periodic_run(struct block *b, int snapshots, int sweeps, const struct output *out,
                         void *ctx)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double t_start = MPI_Wtime();
    out->open(ctx);
    double write_s = 0, compute_total = 0;
    for (int s = 0; s < snapshots; s++) {
        double t0 = MPI_Wtime();
        for (int w = 0; w < sweeps; w++)
            sweep(b);
        compute_total += MPI_Wtime() - t0;
        if (out->prepare)
            out->prepare(ctx, s);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        out->write(ctx, s);
        double mine = MPI_Wtime() - t0, slowest;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        write_s += slowest;
    }
    double t0 = MPI_Wtime();
    out->close(ctx);
    double close_s = MPI_Wtime() - t0, compute_max;
    MPI_Barrier(MPI_COMM_WORLD);
    double total_s = MPI_Wtime() - t_start, bytes = (double) snapshot_bytes(b);
    MPI_Allreduce(&compute_total, &compute_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("visible_MBps %.2f write_s %.4f close_s %.4f total_s %.3f compute_s %.4f "
               "snapshot_MB %.2f closed_MBps %.2f sweeps %d\n",
               1e-6 * bytes * snapshots / write_s, write_s, close_s, total_s,
               compute_max / snapshots, 1e-6 * bytes, 1e-6 * bytes * snapshots / (write_s + close_s),
               sweeps);
}

#endif /* PERIODIC_H_INCLUDED */
