/*
 * MPI-IO and POSIX on the same paths of an rfs-mount: plain names under the
 * mount go to the driver (ROMIO's detection, no prefix, no
 * ROMIO_FSTYPE_FORCE) while POSIX calls go through the mount, and each
 * sees what the other wrote once it closed (close-to-open).
 *   mount_io DIR DRIVER      (DRIVER rdma or rfs: what the driver must be)
 * Run with 4 processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "itest.h"

#define PART (1048576 + 12345)      /* each process's share: not a stripe's multiple */
#define POSIX_SIZE (3 * 1048576 + 7)

static int rank, nprocs;

/* The driver opened the file: a hint only it reports (where get_info
 * asks ROMIO at all: not under Open MPI 4.1). */
static void check_driver(MPI_File fh, const char *driver)
{
    if (!romio_info_reported())
        return;
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;
    CHECK_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, strcmp(driver, "rdma") == 0 ? "rdma_replicas" : "rfs_timeout",
                 MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag, "the %s: driver did not open the file (its hint is not reported)", driver);
    MPI_Info_free(&info);
}

static void posix_read_all(const char *path, unsigned char *buf, size_t len)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open %s through the mount: %s", path, strerror(errno));
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && (size_t) st.st_size == len,
          "%s through the mount: %lld bytes, expected %zu", path, (long long) st.st_size, len);
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        CHECK(n > 0, "read %s through the mount: %s", path, n ? strerror(errno) : "early end");
        got += (size_t) n;
    }
    close(fd);
}

/* MPI-IO writes, POSIX reads the same name. */
static void mpi_then_posix(const char *dir, const char *driver)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/mpi-written", dir);
    unsigned char *buf = malloc(PART);
    MPI_File fh;
    pattern_fill(buf, PART, (uint64_t) rank * PART, 11);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            MPI_INFO_NULL, &fh));
    check_driver(fh, driver);
    CHECK_MPI(MPI_File_write_at_all(fh, (MPI_Offset) rank * PART, buf, PART, MPI_BYTE,
                                    MPI_STATUS_IGNORE));
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        size_t len = (size_t) nprocs * PART;
        unsigned char *all = malloc(len);
        posix_read_all(path, all, len);
        int64_t bad = pattern_check(all, len, 0, 11);
        CHECK(bad < 0, "%s through the mount: byte %lld is not what MPI-IO wrote", path,
              (long long) bad);
        free(all);
    }
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* POSIX writes, MPI-IO reads; then MPI-IO overwrites and a new POSIX open
 * sees it; MPI_File_delete removes the name from the mount. */
static void posix_then_mpi(const char *dir, const char *driver)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/posix-written", dir);
    if (rank == 0) {
        unsigned char *all = malloc(POSIX_SIZE);
        pattern_fill(all, POSIX_SIZE, 0, 12);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        CHECK(fd >= 0, "create %s through the mount: %s", path, strerror(errno));
        for (size_t at = 0; at < POSIX_SIZE; at += 100000) {
            size_t n = POSIX_SIZE - at < 100000 ? POSIX_SIZE - at : 100000;
            CHECK(write(fd, all + at, n) == (ssize_t) n, "write %s: %s", path, strerror(errno));
        }
        CHECK(close(fd) == 0, "close %s: %s", path, strerror(errno));
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    MPI_Offset size;
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    check_driver(fh, driver);
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == POSIX_SIZE, "MPI_File_get_size of %s: %lld, expected %d", path,
          (long long) size, POSIX_SIZE);
    uint64_t share = POSIX_SIZE / (uint64_t) nprocs + 1, off = (uint64_t) rank * share;
    uint64_t len = off >= POSIX_SIZE ? 0 : POSIX_SIZE - off < share ? POSIX_SIZE - off : share;
    unsigned char *buf = malloc(share);
    CHECK_MPI(MPI_File_read_at_all(fh, (MPI_Offset) off, buf, (int) len, MPI_BYTE,
                                   MPI_STATUS_IGNORE));
    int64_t bad = pattern_check(buf, len, off, 12);
    CHECK(bad < 0, "MPI-IO read of %s: byte %lld is not what POSIX wrote", path,
          (long long) (off + (uint64_t) bad));
    /* an overwrite of the middle, seen by the next POSIX open */
    if (rank == 1) {
        pattern_fill(buf, 4096, 1000000, 13);
        CHECK_MPI(MPI_File_write_at(fh, 1000000, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    CHECK_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unsigned char *all = malloc(POSIX_SIZE);
        posix_read_all(path, all, POSIX_SIZE);
        CHECK(pattern_check(all + 1000000, 4096, 1000000, 13) < 0 &&
              pattern_check(all, 1000000, 0, 12) < 0,
              "%s: a POSIX open after MPI-IO's close does not see its overwrite", path);
        free(all);
        CHECK_MPI(MPI_File_delete(path, MPI_INFO_NULL));
        CHECK(access(path, F_OK) < 0 && errno == ENOENT,
              "%s is still on the mount after MPI_File_delete", path);
    }
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(argc == 3, "usage: mount_io DIR rdma|rfs");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    mpi_then_posix(argv[1], argv[2]);
    posix_then_mpi(argv[1], argv[2]);
    if (rank == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
