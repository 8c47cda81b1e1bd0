/* abt_coll_visible PREFIX: what HDF5's parallel filtered writes do
 * (t_filters_parallel: the chunks filled collectively at dataset creation,
 * then each chunk's owner reads its chunk back, independently and without
 * sync, before writing it). Over abt: with a file opened read-write, a
 * collective write lands before it returns; the driver before the fix kept
 * it buffered, and another process's read found zeros. Several rounds, each
 * process reading the block its neighbour wrote in the round's collective
 * write; then, after a barrier, the whole file. */
#include "itest.h"

enum { BLOCK = 1 << 20, ROUNDS = 8 };

static unsigned char byte_of(int round, int r, MPI_Offset i)
{
    return (unsigned char)(round * 31 + r * 7 + i % 251 + 1);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_File fh;
    char name[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 2, "usage: abt_coll_visible PREFIX");
    snprintf(name, sizeof name, "%scoll_visible", argv[1]);
    unsigned char *mine = malloc(BLOCK), *got = malloc(BLOCK);
    CHECK(mine && got, "out of memory");

    /* buffered, as a read-write file is only with abt_buffer_rdwr=enable */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "abt_buffer_rdwr", "enable");
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Offset base = (MPI_Offset)round * nprocs * BLOCK;
        for (MPI_Offset i = 0; i < BLOCK; i++)
            mine[i] = byte_of(round, rank, i);
        CHECK_MPI(MPI_File_write_at_all(fh, base + (MPI_Offset)rank * BLOCK, mine, BLOCK,
                                        MPI_BYTE, MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
        int next = (rank + 1) % nprocs;
        CHECK_MPI(MPI_File_read_at(fh, base + (MPI_Offset)next * BLOCK, got, BLOCK, MPI_BYTE,
                                   MPI_STATUS_IGNORE));
        for (MPI_Offset i = 0; i < BLOCK; i++)
            CHECK(got[i] == byte_of(round, next, i),
                  "round %d: byte %lld of rank %d's block is %d, expected %d", round,
                  (long long)i, next, got[i], byte_of(round, next, i));
    }
    CHECK_MPI(MPI_File_close(&fh));
    free(mine);
    free(got);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
