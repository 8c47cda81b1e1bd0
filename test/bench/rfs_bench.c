/*
 * Contiguous throughput through an MPI-IO file name (rfs:, ufs:, ...):
 * every process writes its own BYTES (at rank * BYTES) in CHUNK-sized
 * MPI_File_write_at calls, then reads them back, REPS times; prints the
 * median MB/s of each, of all processes together (all bytes over the
 * slowest process's time), and checks the data once.
 *
 *   rfs_bench NAME BYTES CHUNK REPS
 */
#include <time.h>

#include "../integration/itest.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 5, "usage: rfs_bench NAME BYTES CHUNK REPS");
    uint64_t total = strtoull(argv[2], NULL, 0), chunk = strtoull(argv[3], NULL, 0);
    int reps = atoi(argv[4]), rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    total -= total % chunk;
    uint64_t base = (uint64_t) rank * total;
    unsigned char *buf = malloc(chunk);
    double *w = calloc((size_t) reps, sizeof *w), *r = calloc((size_t) reps, sizeof *r);
    MPI_File fh;
    MPI_Status st;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    pattern_fill(buf, chunk, 0, 5);
    for (int i = 0; i < reps; i++) {
        double t[3];
        MPI_Barrier(MPI_COMM_WORLD);
        t[0] = MPI_Wtime();
        for (uint64_t off = 0; off < total; off += chunk)
            CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset) (base + off), buf, (int) chunk,
                                        MPI_BYTE, &st));
        MPI_Barrier(MPI_COMM_WORLD);
        t[1] = MPI_Wtime();
        for (uint64_t off = 0; off < total; off += chunk)
            CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) (base + off), buf, (int) chunk,
                                       MPI_BYTE, &st));
        MPI_Barrier(MPI_COMM_WORLD);
        t[2] = MPI_Wtime();
        /* rank 0's clock times every process: the barriers bound the phases */
        MPI_Bcast(t, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        w[i] = (double) total * np / (t[1] - t[0]) / 1e6;
        r[i] = (double) total * np / (t[2] - t[1]) / 1e6;
    }
    int64_t bad = pattern_check(buf, chunk, 0, 5);
    CHECK(bad < 0, "data read back differs at %lld", (long long) bad);
    CHECK_MPI(MPI_File_close(&fh));
    if (rank == 0) {
        CHECK_MPI(MPI_File_delete(argv[1], MPI_INFO_NULL));
        qsort(w, (size_t) reps, sizeof *w, cmp);
        qsort(r, (size_t) reps, sizeof *r, cmp);
        printf("write %.1f\nread %.1f\n", w[reps / 2], r[reps / 2]);
    }
    MPI_Finalize();
    return 0;
}
