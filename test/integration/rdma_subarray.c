/*
 * Seed 000's registration case through MPI: an N x N array of ints (2048
 * in the paper) distributed block-block over the processes. Every process
 * keeps the whole array in memory and writes its block, one subarray
 * (N / rows rows of N / cols ints, each row a memory segment) into the
 * file contiguously at its own place; then it reads the block back into a
 * poisoned array through the same type. Data, places in the file and the
 * bytes between the rows are checked, with rdma_memory_segments auto,
 * enable and disable (what MPI_File_get_info reports, too). Run with
 * rdma_stats over verbs, the driver's counters show the rows gathered and
 * scattered by work requests of several SGEs and registered as groups
 * (test/rdma-vm/guest-tests.sh).
 *   rdma_subarray PREFIX [N]   (servers: $ROMIO_RDMA_SERVERS)
 */
#include "itest.h"

#define POISON (-7)

static int element(int n, int i, int j)
{
    return i * n + j;
}

static void run(const char *path, int n, const char *segments)
{
    int rank, nprocs, dims[2] = { 0, 0 }, period[2] = { 0, 0 }, coords[2];
    MPI_Comm grid;
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Dims_create(nprocs, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, period, 0, &grid);
    MPI_Comm_rank(grid, &rank);
    MPI_Cart_coords(grid, rank, 2, coords);
    int sizes[2] = { n, n }, sub[2] = { n / dims[0], n / dims[1] };
    int start[2] = { coords[0] * sub[0], coords[1] * sub[1] };
    MPI_Datatype block;
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &block);
    MPI_Type_commit(&block);

    size_t all = (size_t) n * (size_t) n, mine = (size_t) sub[0] * (size_t) sub[1];
    int *array = malloc(all * sizeof *array), *back = malloc(all * sizeof *back);
    int *file = malloc(mine * sizeof *file);
    CHECK(array && back && file, "out of memory for %d x %d", n, n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            array[(size_t) i * n + j] = element(n, i, j);

    MPI_Info info;
    MPI_File fh;
    MPI_Info_create(&info);
    MPI_Info_set(info, "rdma_memory_segments", segments);
    CHECK_MPI(MPI_File_open(grid, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    info_expect(fh, "rdma_memory_segments", segments);

    MPI_Offset at = (MPI_Offset) rank * (MPI_Offset) (mine * sizeof(int));
    MPI_Status st;
    int count;
    double t[3];
    MPI_Barrier(grid);
    t[0] = MPI_Wtime();
    CHECK_MPI(MPI_File_write_at(fh, at, array, 1, block, &st));
    t[1] = MPI_Wtime();
    MPI_Get_count(&st, block, &count);
    CHECK(count == 1, "wrote %d subarrays", count);

    for (size_t k = 0; k < all; k++)
        back[k] = POISON;
    CHECK_MPI(MPI_File_read_at(fh, at, back, 1, block, &st));
    t[2] = MPI_Wtime();
    MPI_Get_count(&st, block, &count);
    CHECK(count == 1, "read %d subarrays", count);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int in = i >= start[0] && i < start[0] + sub[0] && j >= start[1] &&
                     j < start[1] + sub[1];
            int want = in ? element(n, i, j) : POISON;
            CHECK(back[(size_t) i * n + j] == want, "%s: read back [%d][%d] = %d, not %d",
                  segments, i, j, back[(size_t) i * n + j], want);
        }

    /* the file holds the block's rows one after another */
    CHECK_MPI(MPI_File_read_at(fh, at, file, (int) mine, MPI_INT, &st));
    for (int r = 0; r < sub[0]; r++)
        for (int c = 0; c < sub[1]; c++)
            CHECK(file[(size_t) r * sub[1] + c] == element(n, start[0] + r, start[1] + c),
                  "%s: file row %d column %d holds %d", segments, r, c,
                  file[(size_t) r * sub[1] + c]);
    CHECK_MPI(MPI_File_close(&fh));
    /* the slowest process's times, the data of all (a report, not a check) */
    double took[2] = { t[1] - t[0], t[2] - t[1] }, most[2];
    MPI_Reduce(took, most, 2, MPI_DOUBLE, MPI_MAX, 0, grid);
    if (rank == 0)
        printf("subarray %s: %d processes, %.1f MiB: write %.1f MB/s, read %.1f MB/s\n",
               segments, nprocs, (double) nprocs * (double) mine * sizeof(int) / 1048576.0,
               (double) nprocs * (double) mine * sizeof(int) / 1e6 / most[0],
               (double) nprocs * (double) mine * sizeof(int) / 1e6 / most[1]);
    MPI_Barrier(grid);
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
    MPI_Type_free(&block);
    MPI_Comm_free(&grid);
    free(array);
    free(back);
    free(file);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc >= 2, "usage: rdma_subarray PREFIX [N]");
    int n = argc > 2 ? atoi(argv[2]) : 2048, rank;
    CHECK(n > 0 && n <= 16384, "N %d out of range", n);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static const char *const modes[] = { "auto", "enable", "disable" };
    for (int m = 0; m < 3; m++) {
        char path[4096];
        snprintf(path, sizeof path, "%ssubarray.%s", argv[1], modes[m]);
        run(path, n, modes[m]);
    }
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
