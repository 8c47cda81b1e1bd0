/*
 * Contiguous I/O through rfs: with 1-4 processes: explicit offsets,
 * individual file pointers, nonblocking calls, size, resize, preallocate,
 * hints, ordered calls and the shared pointer, and the file as it sits in
 * the server's root.
 *
 *   rfs_contig rfs:HOST:PORT:/PATH SERVER_ROOT
 */
#include <fcntl.h>
#include <unistd.h>

#include "itest.h"

#define BLOCK ((1u << 20) + 4093)   /* not a power of two on purpose */

/* Rank 0 reads the file straight from the server's export root. */
static void check_server_copy(const char *root, const char *path, uint64_t size)
{
    char full[4096];
    snprintf(full, sizeof full, "%s%s", root, path);
    int fd = open(full, O_RDONLY);
    CHECK(fd >= 0, "cannot open %s in the server root", full);
    unsigned char *buf = malloc(size);
    uint64_t done = 0;
    ssize_t n;
    while (done < size && (n = pread(fd, buf + done, size - done, (off_t) done)) > 0)
        done += (uint64_t) n;
    CHECK(done == size, "%s holds %llu bytes, expected %llu", full, (unsigned long long) done,
          (unsigned long long) size);
    CHECK(pread(fd, buf, 1, (off_t) size) == 0, "%s is longer than %llu", full,
          (unsigned long long) size);
    int64_t bad = pattern_check(buf, size, 0, 7);
    CHECK(bad < 0, "server copy differs at byte %lld", (long long) bad);
    close(fd);
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nprocs;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 3, "usage: rfs_contig rfs:HOST:PORT:/PATH SERVER_ROOT");
    const char *name = argv[1], *path = strrchr(name, ':') + 1;

    MPI_File fh;
    MPI_Status st;
    int count;
    unsigned char *buf = malloc(2 * BLOCK), *in = malloc(2 * BLOCK);
    uint64_t mine = (uint64_t) rank * 2 * BLOCK;

    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh));
    info_expect(fh, "rfs_timeout", "120");
    info_expect(fh, "rfs_defer_open", "disable");

    /* first block: explicit offset; second: individual file pointer */
    pattern_fill(buf, 2 * BLOCK, mine, 7);
    CHECK_MPI(MPI_File_write_at(fh, (MPI_Offset) mine, buf, BLOCK, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == (int) BLOCK, "write_at status says %d bytes", count);
    CHECK_MPI(MPI_File_seek(fh, (MPI_Offset) (mine + BLOCK), MPI_SEEK_SET));
    CHECK_MPI(MPI_File_write(fh, buf + BLOCK, BLOCK, MPI_BYTE, &st));
    MPI_Offset pos;
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset) (mine + 2 * BLOCK), "position %lld", (long long) pos);
    CHECK_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_sync(fh));

    MPI_Offset size;
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == (MPI_Offset) nprocs * 2 * BLOCK, "size %lld", (long long) size);

    /* read the next rank's blocks, blocking and nonblocking */
    uint64_t theirs = (uint64_t) ((rank + 1) % nprocs) * 2 * BLOCK;
    MPI_Request req[2];
    memset(in, 0, 2 * BLOCK);
    CHECK_MPI(MPI_File_iread_at(fh, (MPI_Offset) theirs, in, BLOCK, MPI_BYTE, &req[0]));
    CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) (theirs + BLOCK), in + BLOCK, BLOCK, MPI_BYTE,
                               &st));
    CHECK_MPI(MPI_Wait(&req[0], &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == (int) BLOCK, "iread status says %d bytes", count);
    int64_t bad = pattern_check(in, 2 * BLOCK, theirs, 7);
    CHECK(bad < 0, "rank %d: data read back differs at byte %lld", rank, (long long) bad);

    /* a read past the end is short, and says so */
    CHECK_MPI(MPI_File_read_at(fh, size - 10, in, 100, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == 10, "read at EOF-10 returned %d bytes", count);

    /* nonblocking writes rewrite the own blocks with the same data */
    CHECK_MPI(MPI_File_iwrite_at(fh, (MPI_Offset) mine, buf, BLOCK, MPI_BYTE, &req[0]));
    CHECK_MPI(MPI_File_iwrite_at(fh, (MPI_Offset) (mine + BLOCK), buf + BLOCK, BLOCK, MPI_BYTE,
                                 &req[1]));
    MPI_Status sts[2];
    CHECK_MPI(MPI_Waitall(2, req, sts));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_close(&fh));
    if (rank == 0)
        check_server_copy(argv[2], path, (uint64_t) nprocs * 2 * BLOCK);
    MPI_Barrier(MPI_COMM_WORLD);

    /* resize and preallocate are collective and visible to all */
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_set_size(fh, 1000));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == 1000, "size after set_size %lld", (long long) size);
    CHECK_MPI(MPI_File_preallocate(fh, 5000));
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == 5000, "size after preallocate %lld", (long long) size);
    CHECK_MPI(MPI_File_read_at(fh, 0, in, 1000, MPI_BYTE, &st));
    bad = pattern_check(in, 1000, 0, 7);
    CHECK(bad < 0, "data below the new size changed at %lld", (long long) bad);
    CHECK_MPI(MPI_File_close(&fh));

    /* append mode starts at the end of the file */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_APPEND,
                            MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_get_position(fh, &pos));
    CHECK(pos == 5000, "append position %lld", (long long) pos);
    CHECK_MPI(MPI_File_close(&fh));

    /* ordered calls: every process's share of the shared pointer is in
     * before any returns, so seek_shared's 0 is not overwritten late and
     * read_ordered reads what write_ordered wrote */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_MPI(MPI_File_write_ordered(fh, &rank, 1, MPI_INT, &st));
    CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int got = -1;
    CHECK_MPI(MPI_File_read_ordered(fh, &got, 1, MPI_INT, &st));
    CHECK(got == rank, "rank %d: read_ordered after seek_shared read %d", rank, got);
    CHECK_MPI(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset) (nprocs * sizeof(int)), "shared position %lld after read_ordered",
          (long long) pos);
    CHECK_MPI(MPI_File_close(&fh));

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    free(buf);
    free(in);
    MPI_Finalize();
    if (rank == 0)
        printf(" No Errors\n");
    return 0;
}
