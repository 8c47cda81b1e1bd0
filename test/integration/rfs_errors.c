/*
 * Failures reach the application as the right MPI error class, with a
 * message naming the server, and never hang:
 *
 *   rfs_errors HOST PORT DEAD_PORT KILL_PORT KILL_PID STOP_PORT STOP_PID BUSY_PORT
 *
 * PORT is a healthy server whose root holds a symlink "escape" -> /etc and
 * a file "existing"; DEAD_PORT has no server; the servers at KILL_PORT and
 * STOP_PORT get SIGKILL and SIGSTOP in the middle of the test; BUSY_PORT
 * serves one connection at most (--max-connections 1) and its root holds a
 * file "existing".
 */
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

static char name_buf[8][512];

static const char *name(int slot, const char *host, const char *port, const char *path)
{
    snprintf(name_buf[slot], sizeof name_buf[slot], "rfs:%s:%s:%s", host, port, path);
    return name_buf[slot];
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* kill(SIGSTOP) returns before the target has stopped: wait until the
 * kernel reports it stopped (state T), for at most 10 s. */
static int wait_stopped(pid_t pid)
{
    char path[64], stat[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
    for (int i = 0; i < 10000; i++) {
        FILE *f = fopen(path, "r");
        if (!f)
            return 0;
        size_t n = fread(stat, 1, sizeof stat - 1, f);
        fclose(f);
        stat[n] = '\0';
        const char *state = strrchr(stat, ')');
        if (state && state[1] == ' ' && state[2] == 'T')
            return 1;
        usleep(1000);
    }
    return 0;
}

static void check_message_names_server(int rc, const char *port)
{
    const char *msg = err_string(rc);
    CHECK(strstr(msg, port) != NULL, "message does not name the server: %s", msg);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 9, "usage: rfs_errors HOST PORT DEAD_PORT KILL_PORT KILL_PID STOP_PORT STOP_PID "
          "BUSY_PORT");
    const char *host = argv[1], *port = argv[2], *dead = argv[3];
    MPI_File fh;
    MPI_Status st;
    char buf[4096];
    int rc;

    /* bad input */
    CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, name(0, host, port, "/missing"), MPI_MODE_RDONLY,
                              MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, name(0, host, port, "/existing"),
                              MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                MPI_ERR_FILE_EXISTS);
    CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, name(0, host, port, "/../outside"),
                              MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_ACCESS);
    CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, name(0, host, port, "/escape/passwd"),
                              MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_ACCESS);
    CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, name(0, host, port, "/"), MPI_MODE_RDONLY,
                              MPI_INFO_NULL, &fh), MPI_ERR_BAD_FILE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, "rfs:127.0.0.1:/no-port", MPI_MODE_RDONLY,
                              MPI_INFO_NULL, &fh), MPI_ERR_BAD_FILE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, name(0, host, port, "relative"), MPI_MODE_RDONLY,
                              MPI_INFO_NULL, &fh), MPI_ERR_BAD_FILE);
    CHECK_CLASS(MPI_File_delete(name(0, host, port, "/missing"), MPI_INFO_NULL),
                MPI_ERR_NO_SUCH_FILE);
    CHECK_CLASS(MPI_File_delete(name(0, host, port, "/escape/passwd"), MPI_INFO_NULL),
                MPI_ERR_ACCESS);

    /* no server at all */
    rc = MPI_File_open(MPI_COMM_SELF, name(0, host, dead, "/f"), MPI_MODE_CREATE | MPI_MODE_RDWR,
                       MPI_INFO_NULL, &fh);
    CHECK_CLASS(rc, MPI_ERR_IO);
    check_message_names_server(rc, dead);
    CHECK_CLASS(MPI_File_delete(name(0, host, dead, "/f"), MPI_INFO_NULL), MPI_ERR_IO);

    /* server at its connection limit: refused at once, and the message
     * says why. The second open asks for another timeout, so it cannot
     * share the first one's connection. */
    MPI_File held;
    MPI_Info other_timeout;
    MPI_Info_create(&other_timeout);
    MPI_Info_set(other_timeout, "rfs_timeout", "30");
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, name(1, host, argv[8], "/existing"), MPI_MODE_RDWR,
                            MPI_INFO_NULL, &held));
    double t_busy = now();
    rc = MPI_File_open(MPI_COMM_SELF, name(2, host, argv[8], "/existing"), MPI_MODE_RDONLY,
                       other_timeout, &fh);
    MPI_Info_free(&other_timeout);
    CHECK_CLASS(rc, MPI_ERR_IO);
    check_message_names_server(rc, argv[8]);
    CHECK(strstr(err_string(rc), "connection limit") != NULL, "refusal not reported: %s",
          err_string(rc));
    CHECK(now() - t_busy < 5, "the refusal took %.1f s", now() - t_busy);
    CHECK_MPI(MPI_File_close(&held));

    /* server killed while the file is open: the next calls fail, at once */
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, name(0, host, argv[4], "/victim"),
                            MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    memset(buf, 'x', sizeof buf);
    CHECK_MPI(MPI_File_write_at(fh, 0, buf, sizeof buf, MPI_BYTE, &st));
    pid_t pid = (pid_t) atoi(argv[5]);
    /* The dying server's sockets close as it exits: whatever the read
     * catches (a reset or the end of the stream) is an error. */
    CHECK(kill(pid, SIGKILL) == 0, "cannot kill the server");
    double t0 = now();
    rc = MPI_File_read_at(fh, 0, buf, sizeof buf, MPI_BYTE, &st);
    CHECK_CLASS(rc, MPI_ERR_IO);
    check_message_names_server(rc, argv[4]);
    CHECK_CLASS(MPI_File_sync(fh), MPI_ERR_IO);
    CHECK_CLASS(MPI_File_write_at(fh, 0, buf, sizeof buf, MPI_BYTE, &st), MPI_ERR_IO);
    CHECK(now() - t0 < 10, "errors took %.1f s", now() - t0);
    CHECK_CLASS(MPI_File_close(&fh), MPI_ERR_IO);

    /* server stopped (hung): the timeout hint bounds the wait */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "rfs_timeout", "2");
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, name(0, host, argv[6], "/hung"),
                            MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    pid = (pid_t) atoi(argv[7]);
    CHECK(kill(pid, SIGSTOP) == 0 && wait_stopped(pid), "cannot stop the server");
    t0 = now();
    CHECK_CLASS(MPI_File_write_at(fh, 0, buf, sizeof buf, MPI_BYTE, &st), MPI_ERR_IO);
    double waited = now() - t0;
    CHECK(waited >= 1.5 && waited < 10, "a hung server was noticed after %.1f s", waited);
    kill(pid, SIGCONT);
    MPI_File_close(&fh);
    MPI_Info_free(&info);

    MPI_Finalize();
    printf(" No Errors\n");
    return 0;
}
