/* abt_lease PREFIX [MBPS]: a file opened read-write over abt:rfs: or
 * abt:rdma: with the default hints is buffered under leases (docs/abt.md
 * "Read-write files"), and the order libraries build on a barrier holds:
 * - the hints say so (abt_buffer_rdwr auto, romio_visibility_immediate
 *   true);
 * - rank 0 writes a block, barrier, every other rank reads it at once:
 *   with MBPS (the servers' rate-limit, all of them together) rank 0's
 *   write returns in a quarter of the time the servers take to answer
 *   for the block (it was buffered: not the first, which measures the
 *   drain written through; rfsd's --rate-limit delays the reply, not the
 *   data), and the readers get it (the servers held their reads until
 *   it had landed);
 * - HDF5's fill: rank 0 fills a dataset's region, barrier, every rank
 *   writes its block over it, barrier, each reads its neighbour's block:
 *   data, never fill, and so after close and reopen.
 * Without the server's leases both readers see what was there before. */
#include "itest.h"

enum { BLOCK = 1 << 20, ROUNDS = 3 };

static unsigned char byte_of(int round, int r, MPI_Offset i)
{
    return (unsigned char)(round * 37 + r * 11 + i % 249 + 1);
}

static void check_block(const unsigned char *got, int round, int owner, const char *when)
{
    for (MPI_Offset i = 0; i < BLOCK; i++)
        CHECK(got[i] == byte_of(round, owner, i),
              "%s, round %d: byte %lld of rank %d's block is %d, expected %d", when, round,
              (long long)i, owner, got[i], byte_of(round, owner, i));
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_File fh;
    char name[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 2 || argc == 3, "usage: abt_lease PREFIX [MBPS]");
    double through_s = argc == 3 ? BLOCK / (1e6 * atof(argv[2])) : 0;
    snprintf(name, sizeof name, "%slease", argv[1]);
    unsigned char *mine = malloc(BLOCK), *got = malloc(BLOCK);
    CHECK(mine && got, "out of memory");
    MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    info_expect(fh, "abt_buffer_rdwr", "auto");
    info_expect(fh, "romio_visibility_immediate", "true");

    /* one writer, every other rank reads at once */
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Offset at = (MPI_Offset)round * BLOCK;
        if (rank == 0) {
            for (MPI_Offset i = 0; i < BLOCK; i++)
                mine[i] = byte_of(round, 0, i);
            double t0 = MPI_Wtime();
            CHECK_MPI(MPI_File_write_at(fh, at, mine, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
            double dt = MPI_Wtime() - t0;
            /* the first large write measures the drain, written through */
            CHECK(through_s == 0 || round == 0 || dt < through_s / 4,
                  "round %d: the write took %.3f s, the servers answer for it in %.3f s: "
                  "not buffered", round, dt, through_s);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank != 0) {
            CHECK_MPI(MPI_File_read_at(fh, at, got, BLOCK, MPI_BYTE, MPI_STATUS_IGNORE));
            check_block(got, round, 0, "read after the writer's barrier");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* HDF5's fill, then every rank's data over it */
    MPI_Offset base = (MPI_Offset)ROUNDS * BLOCK;
    if (rank == 0) {
        unsigned char *fill = malloc((size_t)nprocs * BLOCK);
        CHECK(fill, "out of memory");
        memset(fill, 0xfe, (size_t)nprocs * BLOCK);
        CHECK_MPI(MPI_File_write_at(fh, base, fill, nprocs * BLOCK, MPI_BYTE,
                                    MPI_STATUS_IGNORE));
        free(fill);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (MPI_Offset i = 0; i < BLOCK; i++)
        mine[i] = byte_of(ROUNDS, rank, i);
    CHECK_MPI(MPI_File_write_at(fh, base + (MPI_Offset)rank * BLOCK, mine, BLOCK, MPI_BYTE,
                                MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    int next = (rank + 1) % nprocs;
    CHECK_MPI(MPI_File_read_at(fh, base + (MPI_Offset)next * BLOCK, got, BLOCK, MPI_BYTE,
                               MPI_STATUS_IGNORE));
    check_block(got, ROUNDS, next, "neighbour's block over the fill");
    CHECK_MPI(MPI_File_close(&fh));

    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (int r = 0; r < nprocs; r++) {
        CHECK_MPI(MPI_File_read_at(fh, base + (MPI_Offset)r * BLOCK, got, BLOCK, MPI_BYTE,
                                   MPI_STATUS_IGNORE));
        check_block(got, ROUNDS, r, "after reopening");
    }
    CHECK_MPI(MPI_File_close(&fh));
    free(mine);
    free(got);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
