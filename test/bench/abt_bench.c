/*
 * The RFS paper's ABT experiment (seed 004, section 4): a periodic-output
 * program. Each process owns an N^3 block of a 3-D Jacobi grid (3-D block
 * decomposition); every snapshot is a computation phase (a fixed number of
 * Jacobi sweeps, calibrated to COMPUTE_S seconds once at start, or given
 * as @SWEEPS: the same work in every run, so that runs compare their
 * computation times without the calibration's own noise) followed
 * by a collective write of the grid through a subarray view, at
 * snapshot k * grid size of one file. With -c the snapshot is written as
 * IOR's contiguous pattern instead: each process its block of the
 * snapshot, contiguous, in independent 1 MiB writes.
 *
 *   abt_bench [-c] FILE COMPUTE_S|@SWEEPS SNAPSHOTS N [HINT=VALUE...]
 *
 * Prints (rank 0): the application-visible write throughput (bytes of all
 * snapshots / the time spent inside the write calls, the slowest process
 * per call), the time of the final close (which drains what is still
 * buffered), the whole run, the mean computation phase, and the
 * throughput with the close counted (IOR's write figure: open to close),
 * and the sweeps of a computation phase.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *grid, *next;
static int n;

#define CONTIG_TRANSFER (1 << 20)

/* IOR's contiguous pattern: this process's block of the snapshot at `at`,
 * in transfers of CONTIG_TRANSFER bytes from the grid's memory. */
static void write_contig(MPI_File fh, MPI_Offset at, int rank)
{
    MPI_Offset share = (MPI_Offset) n * n * n * sizeof(double);
    const char *src = (const char *) grid;
    for (MPI_Offset done = 0; done < share; done += CONTIG_TRANSFER) {
        int len = (int) (share - done < CONTIG_TRANSFER ? share - done : CONTIG_TRANSFER);
        MPI_File_write_at(fh, at + rank * share + done, src + done, len, MPI_BYTE,
                          MPI_STATUS_IGNORE);
    }
}

static double at(const double *g, int i, int j, int k)
{
    return g[((size_t) i * (n + 2) + j) * (n + 2) + k];
}

static void sweep(void)
{
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= n; j++)
            for (int k = 1; k <= n; k++)
                next[((size_t) i * (n + 2) + j) * (n + 2) + k] =
                    (at(grid, i - 1, j, k) + at(grid, i + 1, j, k) + at(grid, i, j - 1, k) +
                     at(grid, i, j + 1, k) + at(grid, i, j, k - 1) + at(grid, i, j, k + 1)) / 6;
    double *t = grid;
    grid = next;
    next = t;
}

/* Sweeps that take about `seconds` here, agreed by all (the slowest). */
static int calibrate(double seconds)
{
    double t0 = MPI_Wtime();
    int sweeps = 0;
    while (MPI_Wtime() - t0 < 0.2 || sweeps < 2) {
        sweep();
        sweeps++;
    }
    double rate = sweeps / (MPI_Wtime() - t0), slowest;
    MPI_Allreduce(&rate, &slowest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    int count = (int) (seconds * slowest + 0.5);
    return count > 0 ? count : (seconds > 0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int contig = argc > 1 && strcmp(argv[1], "-c") == 0;
    argc -= contig;
    argv += contig;
    if (argc < 5) {
        if (rank == 0)
            fprintf(stderr, "usage: abt_bench [-c] FILE COMPUTE_S|@SWEEPS SNAPSHOTS N [HINT=VALUE...]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *compute = argv[2];
    int snapshots = atoi(argv[3]);
    n = atoi(argv[4]);
    MPI_Info info;
    MPI_Info_create(&info);
    for (int a = 5; a < argc; a++) {
        char *eq = strchr(argv[a], '=');
        if (eq) {
            *eq = '\0';
            MPI_Info_set(info, argv[a], eq + 1);
        }
    }

    size_t cells = (size_t) (n + 2) * (n + 2) * (n + 2);
    grid = calloc(cells, sizeof *grid);
    next = calloc(cells, sizeof *next);
    for (size_t c = 0; c < cells; c++)
        grid[c] = (double) (c % 97) + rank;

    int dims[3] = { 0, 0, 0 }, coords[3];
    MPI_Dims_create(np, 3, dims);
    coords[0] = rank / (dims[1] * dims[2]);
    coords[1] = (rank / dims[2]) % dims[1];
    coords[2] = rank % dims[2];
    int gsizes[3], lsizes[3] = { n, n, n }, starts[3];
    int mem_sizes[3] = { n + 2, n + 2, n + 2 }, mem_starts[3] = { 1, 1, 1 };
    for (int d = 0; d < 3; d++) {
        gsizes[d] = dims[d] * n;
        starts[d] = coords[d] * n;
    }
    MPI_Datatype filetype, memtype;
    MPI_Type_create_subarray(3, gsizes, lsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &filetype);
    MPI_Type_create_subarray(3, mem_sizes, lsizes, mem_starts, MPI_ORDER_C, MPI_DOUBLE, &memtype);
    MPI_Type_commit(&filetype);
    MPI_Type_commit(&memtype);
    MPI_Offset snapshot_bytes = (MPI_Offset) gsizes[0] * gsizes[1] * gsizes[2] * sizeof(double);

    int sweeps = compute[0] == '@' ? atoi(compute + 1) : calibrate(atof(compute));
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t_start = MPI_Wtime();
    int rc = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "open %s: %s\n", argv[1], msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_set_errhandler(fh, MPI_ERRORS_ARE_FATAL);
    double write_s = 0, compute_total = 0;
    for (int s = 0; s < snapshots; s++) {
        double t0 = MPI_Wtime();
        for (int w = 0; w < sweeps; w++)
            sweep();
        compute_total += MPI_Wtime() - t0;
        if (!contig)
            MPI_File_set_view(fh, s * snapshot_bytes, MPI_DOUBLE, filetype, "native", info);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (contig)
            write_contig(fh, s * snapshot_bytes, rank);
        else
            MPI_File_write_all(fh, grid, 1, memtype, MPI_STATUS_IGNORE);
        double mine = MPI_Wtime() - t0, slowest;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        write_s += slowest;
    }
    double t0 = MPI_Wtime();
    MPI_File_close(&fh);
    double close_s = MPI_Wtime() - t0, compute_max;
    MPI_Barrier(MPI_COMM_WORLD);
    double total_s = MPI_Wtime() - t_start;
    MPI_Allreduce(&compute_total, &compute_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("visible_MBps %.2f write_s %.4f close_s %.4f total_s %.3f compute_s %.4f "
               "snapshot_MB %.2f closed_MBps %.2f sweeps %d\n",
               1e-6 * (double) snapshot_bytes * snapshots / write_s, write_s, close_s, total_s,
               compute_max / snapshots, 1e-6 * (double) snapshot_bytes,
               1e-6 * (double) snapshot_bytes * snapshots / (write_s + close_s), sweeps);
    MPI_Type_free(&filetype);
    MPI_Type_free(&memtype);
    MPI_Info_free(&info);
    free(grid);
    free(next);
    MPI_Finalize();
    return 0;
}
