/*
 * A program as a user builds it with the installed mpicc (make
 * check-install): for every file name given, each process writes its
 * 1 MiB block collectively opened, syncs, and reads its neighbour's block
 * back, compared byte by byte; then the file is deleted.
 *   installed_io NAME...
 */
#include "../integration/itest.h"

#define BLOCK (1 << 20)

static unsigned char pattern(int rank, int i, int file)
{
    return (unsigned char) (rank * 131 + i * 7 + file * 29 + (i >> 11));
}

static void write_and_check(const char *name, int file, int rank, int np, unsigned char *buf)
{
    MPI_File fh;
    MPI_Status st;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    for (int i = 0; i < BLOCK; i++)
        buf[i] = pattern(rank, i, file);
    CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset) rank * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    int peer = (rank + 1) % np;
    memset(buf, 0, BLOCK);
    CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) peer * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    for (int i = 0; i < BLOCK; i++)
        CHECK(buf[i] == pattern(peer, i, file), "%s: byte %d of block %d: %u", name, i, peer,
              buf[i]);
    CHECK_MPI(MPI_File_close(&fh));
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    if (rank == 0)
        printf("%s: %d blocks written and read back\n", name, np);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    unsigned char *buf = malloc(BLOCK);
    CHECK(buf != NULL && argc > 1, "usage: installed_io NAME...");
    for (int k = 1; k < argc; k++)
        write_and_check(argv[k], k, rank, np, buf);
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
