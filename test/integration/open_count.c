/*
 * The collective open of rdma: (issue 32): one process reads the headers
 * and the others take the layout from it; a process's files share one
 * connection per server.
 *
 *   open_count PREFIX FACTOR   (FACTOR 0: no striping hint, for rfs:)
 *
 * Every process creates PREFIX/count.dat collectively (striping_factor
 * FACTOR), writes its 64 KiB block, closes; opens it again read-only and
 * reads its neighbour's block back, checked byte by byte, while two more
 * files are created, written and read back beside it; reports the layout
 * every process sees. Then the errors every process must share
 * whatever process found them: MPI_MODE_EXCL on the existing file
 * (MPI_ERR_FILE_EXISTS) and a missing file (MPI_ERR_NO_SUCH_FILE). The
 * runner sets ROMIO_RDMA_STATS and adds up the "header reads" of every
 * close: 1 for each creation (object 0 found empty) and FACTOR for the
 * reopen, FACTOR + 3 whatever the number of processes; and the process's
 * connections at every close must be FACTOR (the servers) at most, with
 * three files open. The same over rfs: (ROMIO_RFS_STATS): one connection.
 */
#include "itest.h"

#define BLOCK (64 * 1024)

static unsigned char pattern(int rank, int i)
{
    return (unsigned char) (rank * 131 + i * 7 + (i >> 9));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 3, "usage: open_count PREFIX FACTOR");
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char name[1024], missing[1024];
    snprintf(name, sizeof name, "%scount.dat", argv[1]);
    snprintf(missing, sizeof missing, "%snone.dat", argv[1]);
    int striped = strcmp(argv[2], "0") != 0;
    MPI_Info info;
    MPI_Info_create(&info);
    if (striped)
        MPI_Info_set(info, "striping_factor", argv[2]);
    unsigned char *buf = malloc(BLOCK);
    CHECK(buf != NULL, "out of memory");
    for (int i = 0; i < BLOCK; i++)
        buf[i] = pattern(rank, i);

    MPI_File fh;
    MPI_Status st;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    if (striped)
        info_expect(fh, "striping_factor", argv[2]);
    CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset) rank * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_close(&fh));

    int peer = (rank + 1) % np;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    if (striped)
        info_expect(fh, "striping_factor", argv[2]);
    MPI_File more[2];
    for (int k = 0; k < 2; k++) {
        char other[1100];
        snprintf(other, sizeof other, "%smore%d.dat", argv[1], k);
        CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR, info,
                                &more[k]));
        for (int i = 0; i < BLOCK; i++)
            buf[i] = pattern(rank + 7 * (k + 1), i);
        CHECK_MPI(MPI_File_write_at(more[k], (MPI_Offset) rank * BLOCK, buf, BLOCK, MPI_BYTE,
                                    &st));
    }
    CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) peer * BLOCK, buf, BLOCK, MPI_BYTE, &st));
    for (int i = 0; i < BLOCK; i++)
        CHECK(buf[i] == pattern(peer, i), "byte %d of block %d: %u, expected %u", i, peer,
              buf[i], pattern(peer, i));
    for (int k = 0; k < 2; k++) {
        CHECK_MPI(MPI_File_read_at(more[k], (MPI_Offset) rank * BLOCK, buf, BLOCK, MPI_BYTE,
                                   &st));
        for (int i = 0; i < BLOCK; i++)
            CHECK(buf[i] == pattern(rank + 7 * (k + 1), i), "file %d byte %d: %u", k, i, buf[i]);
        CHECK_MPI(MPI_File_close(&more[k]));
    }
    CHECK_MPI(MPI_File_close(&fh));

    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL |
                              MPI_MODE_RDWR, info, &fh), MPI_ERR_FILE_EXISTS);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_NO_SUCH_FILE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf(" No Errors\n");
    free(buf);
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
