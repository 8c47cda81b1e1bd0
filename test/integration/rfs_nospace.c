/*
 * A server whose file system is full: writes and preallocation fail with
 * MPI_ERR_NO_SPACE, and the file stays usable for what fits.
 *
 *   rfs_nospace rfs:HOST:PORT:/PATH      (the server's root holds 1 MiB)
 */
#include "itest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 2, "usage: rfs_nospace rfs:HOST:PORT:/PATH");
    size_t len = 4u << 20;
    unsigned char *buf = malloc(len), in[1000];
    MPI_File fh;
    MPI_Status st;
    pattern_fill(buf, len, 0, 2);
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    CHECK_CLASS(MPI_File_write_at(fh, 0, buf, (int) len, MPI_BYTE, &st), MPI_ERR_NO_SPACE);
    CHECK_CLASS(MPI_File_preallocate(fh, 8 << 20), MPI_ERR_NO_SPACE);
    CHECK_MPI(MPI_File_set_size(fh, 0));
    CHECK_MPI(MPI_File_write_at(fh, 0, buf, sizeof in, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_read_at(fh, 0, in, sizeof in, MPI_BYTE, &st));
    CHECK(pattern_check(in, sizeof in, 0, 2) < 0, "data after a full disk differs");
    CHECK_MPI(MPI_File_close(&fh));
    free(buf);
    MPI_Finalize();
    printf(" No Errors\n");
    return 0;
}
