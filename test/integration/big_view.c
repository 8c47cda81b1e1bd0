/* big_view PREFIX: a file view whose description is over the protocol's
 * limit for an encoded view (RFS_MAX_VIEW, 16 MiB), as HDF5's point
 * selections make (t_bigio, "Dataset4 write point selection": one
 * hindexed_block entry per point). Each process's filetype is an hindexed
 * type of BLOCKS single ints (block-indexed once optimized: 8 bytes per
 * int in the wire form, over 16 MiB in all), one int of each row of nprocs
 * ints, which one drawn by a hash of the row (regular displacements would
 * become a vector). The drivers that ship views to rfsd failed such a call
 * with "message over a protocol limit"; it must move the data as any other
 * view does. A collective write through the view, a collective read back
 * through it, then every process reads the whole file without a view: int
 * k of the file holds k. */
#include "itest.h"

enum { BLOCKS = 2200000 };

/* The int of row i that process r writes: a rotation by a hash of i. */
static int slot(int i, int r, int nprocs)
{
    unsigned h = (unsigned) i * 2654435761u;
    return i * nprocs + (int) ((r + (h >> 16)) % (unsigned) nprocs);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    MPI_File fh;
    MPI_Datatype ftype;
    char name[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 2, "usage: big_view PREFIX");
    snprintf(name, sizeof name, "%sbig_view", argv[1]);

    int *lens = malloc(BLOCKS * sizeof *lens), *mine = malloc(BLOCKS * sizeof *mine);
    int *back = malloc(BLOCKS * sizeof *back);
    MPI_Aint *displs = malloc(BLOCKS * sizeof *displs);
    size_t all = (size_t) BLOCKS * (size_t) nprocs;
    int *file = malloc(all * sizeof *file);
    CHECK(lens && mine && back && displs && file, "out of memory");
    for (int i = 0; i < BLOCKS; i++) {
        int k = slot(i, rank, nprocs);
        lens[i] = 1;
        displs[i] = (MPI_Aint) k * (MPI_Aint) sizeof(int);
        mine[i] = k;
        back[i] = -1;
    }
    MPI_Type_create_hindexed(BLOCKS, lens, displs, MPI_INT, &ftype);
    MPI_Type_commit(&ftype);

    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, ftype, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_write_at_all(fh, 0, mine, BLOCKS, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_File_read_at_all(fh, 0, back, BLOCKS, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < BLOCKS; i++)
        CHECK(back[i] == mine[i], "read back int %d of the view: %d, not %d", i, back[i],
              mine[i]);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));

    CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CHECK_MPI(MPI_File_read_at(fh, 0, file, (int) (all * sizeof(int)), MPI_BYTE,
                               MPI_STATUS_IGNORE));
    for (size_t k = 0; k < all; k++)
        CHECK(file[k] == (int) k, "int %zu of the file: %d", k, file[k]);
    CHECK_MPI(MPI_File_close(&fh));

    MPI_Type_free(&ftype);
    free(lens);
    free(mine);
    free(back);
    free(displs);
    free(file);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
