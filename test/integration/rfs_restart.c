/*
 * rfsd killed and restarted on the same port and root while files are open:
 *
 *   rfs_restart HOST PORT ROOT HANDSHAKE_DIR
 *
 * Every process writes its 4 MiB block of /restart.dat and the file is
 * synced (MPI_File_sync: acknowledged by the server's fsync); then its
 * block of /unsynced.dat, not synced. Rank 0 creates HANDSHAKE_DIR/synced;
 * the runner kills rfsd with SIGKILL, starts a new one on the same port and
 * root and creates HANDSHAKE_DIR/restarted. The synced file goes on through
 * the new server as if nothing happened (its connection replaced, the file
 * opened again); the other one's calls fail with MPI_ERR_IO naming the
 * server, within seconds, its close too (its writes since the sync may be
 * lost, had the host gone down). A new open must find every synced byte,
 * through the new server and in ROOT itself, and the new server must take
 * new writes.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

#define BLOCK (4u << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int wait_file(const char *path, int secs)
{
    for (int i = 0; i < secs * 20; i++) {
        if (access(path, F_OK) == 0)
            return 1;
        usleep(50000);
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 5, "usage: rfs_restart HOST PORT ROOT HANDSHAKE_DIR");
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    char name[512], path[1024];
    snprintf(name, sizeof name, "rfs:%s:%s:/restart.dat", argv[1], argv[2]);
    unsigned char *buf = malloc(BLOCK), *in = malloc(BLOCK);
    CHECK(buf && in, "out of memory");
    MPI_File fh;
    MPI_Status st;
    MPI_Info info;
    MPI_Info_create(&info);
    /* Bounds every wait on the dead server, should an error not come at once. */
    MPI_Info_set(info, "rfs_timeout", "10");
    MPI_Offset mine = (MPI_Offset) rank * BLOCK;

    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    pattern_fill(buf, BLOCK, (uint64_t) mine, 11);
    CHECK_MPI(MPI_File_write_at(fh, mine, buf, BLOCK, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_sync(fh));
    MPI_File dirty;
    char dirty_name[512];
    snprintf(dirty_name, sizeof dirty_name, "rfs:%s:%s:/unsynced.dat", argv[1], argv[2]);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, dirty_name, MPI_MODE_CREATE | MPI_MODE_RDWR, info,
                            &dirty));
    CHECK_MPI(MPI_File_write_at(dirty, mine, buf, BLOCK, MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/synced", argv[4]);
    if (rank == 0) {
        FILE *f = fopen(path, "w");
        CHECK(f && fclose(f) == 0, "cannot create %s", path);
    }
    snprintf(path, sizeof path, "%s/restarted", argv[4]);
    CHECK(wait_file(path, 60), "the runner did not restart rfsd within 60 s");

    /* The synced file goes on over a new connection... */
    memset(in, 0, BLOCK);
    CHECK_MPI(MPI_File_read_at(fh, mine, in, BLOCK, MPI_BYTE, &st));
    CHECK(pattern_check(in, BLOCK, (uint64_t) mine, 11) < 0, "synced block read back wrong");
    CHECK_MPI(MPI_File_write_at(fh, mine, buf, BLOCK, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_sync(fh));
    CHECK_MPI(MPI_File_close(&fh));
    /* ... the unsynced one says its writes may be lost, at once. */
    double t0 = now();
    int rc = MPI_File_read_at(dirty, mine, in, BLOCK, MPI_BYTE, &st);
    CHECK_CLASS(rc, MPI_ERR_IO);
    CHECK(strstr(err_string(rc), argv[2]) != NULL, "message does not name the server: %s",
          err_string(rc));
    CHECK_CLASS(MPI_File_sync(dirty), MPI_ERR_IO);
    CHECK_CLASS(MPI_File_close(&dirty), MPI_ERR_IO);
    CHECK(now() - t0 < 10, "the errors took %.1f s", now() - t0);

    /* Every synced block, through the new server... */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, info, &fh));
    MPI_Offset size;
    CHECK_MPI(MPI_File_get_size(fh, &size));
    CHECK(size == (MPI_Offset) np * BLOCK, "size %lld after the restart", (long long) size);
    for (int r = 0; r < np; r++) {
        int count;
        memset(in, 0, BLOCK);
        CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) r * BLOCK, in, BLOCK, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        int64_t bad = pattern_check(in, BLOCK, (uint64_t) r * BLOCK, 11);
        CHECK(count == BLOCK && bad < 0, "block %d: %d bytes, wrong at %lld", r, count,
              (long long) bad);
    }
    /* ... which takes new writes too (once every process has read every
     * block: the second pattern differs from the first) ... */
    MPI_Barrier(MPI_COMM_WORLD);
    pattern_fill(buf, BLOCK, (uint64_t) mine, 12);
    CHECK_MPI(MPI_File_write_at(fh, mine, buf, BLOCK, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_read_at(fh, mine, in, BLOCK, MPI_BYTE, &st));
    CHECK(memcmp(in, buf, BLOCK) == 0, "new write read back wrong");
    CHECK_MPI(MPI_File_close(&fh));

    /* ... and in the export root itself (the second pattern by now). */
    snprintf(path, sizeof path, "%s/restart.dat", argv[3]);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "cannot open %s", path);
    CHECK(pread(fd, in, BLOCK, mine) == (ssize_t) BLOCK, "short read of %s", path);
    CHECK(pattern_check(in, BLOCK, (uint64_t) mine, 12) < 0, "%s: wrong data", path);
    close(fd);

    MPI_Info_free(&info);
    free(buf);
    free(in);
    MPI_Finalize();
    if (rank == 0)
        printf(" No Errors\n");
    return 0;
}
