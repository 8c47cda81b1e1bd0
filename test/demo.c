/*
 * make demo: every process writes its part of one shared file through the
 * given MPI-IO name in 4 MiB requests, then reads another process's part
 * back and checks every byte; rank 0 also checks the file as it sits in
 * the server's root. Prints the aggregate throughput.
 *
 *   demo NAME SERVER_FILE MIB_PER_PROCESS
 */
#include <fcntl.h>
#include <unistd.h>

#include "integration/itest.h"

#define REQ (4u << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 4, "usage: demo NAME SERVER_FILE MIB_PER_PROCESS");
    uint64_t part = strtoull(argv[3], NULL, 10) << 20;
    unsigned char *buf = malloc(part);
    MPI_File fh;
    MPI_Status st;

    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    uint64_t mine = (uint64_t) rank * part;
    pattern_fill(buf, part, mine, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (uint64_t off = 0; off < part; off += REQ)
        CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset) (mine + off), buf + off, REQ, MPI_BYTE,
                                    &st));
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    CHECK_MPI(MPI_File_sync(fh));       /* see the others' writes */
    uint64_t theirs = (uint64_t) ((rank + 1) % nprocs) * part;
    memset(buf, 0, part);
    MPI_Barrier(MPI_COMM_WORLD);
    double t2 = MPI_Wtime();
    for (uint64_t off = 0; off < part; off += REQ)
        CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) (theirs + off), buf + off, REQ, MPI_BYTE,
                                   &st));
    MPI_Barrier(MPI_COMM_WORLD);
    double t3 = MPI_Wtime();
    int64_t bad = pattern_check(buf, part, theirs, 1);
    CHECK(bad < 0, "rank %d: byte %lld of rank %d's part is wrong", rank, (long long) bad,
          (rank + 1) % nprocs);
    CHECK_MPI(MPI_File_close(&fh));

    if (rank == 0) {
        int fd = open(argv[2], O_RDONLY);
        CHECK(fd >= 0, "cannot open %s", argv[2]);
        for (int r = 0; r < nprocs; r++) {
            uint64_t off = (uint64_t) r * part, done = 0;
            ssize_t n;
            while (done < part &&
                   (n = pread(fd, buf + done, part - done, (off_t) (off + done))) > 0)
                done += (uint64_t) n;
            CHECK(done == part && pattern_check(buf, part, off, 1) < 0,
                  "the server's copy of rank %d's part is wrong", r);
        }
        close(fd);
        double total = (double) part * nprocs / 1e6;
        printf("%d processes, %.0f MB in %u MiB requests: verified byte for byte "
               "(read back and in the server's root)\n", nprocs, total, REQ >> 20);
        printf("write (incl. sync): %8.1f MB/s\nread:               %8.1f MB/s\n",
               total / (t1 - t0), total / (t3 - t2));
        printf(" No Errors\n");
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
