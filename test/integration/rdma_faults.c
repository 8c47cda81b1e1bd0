/*
 * rdma: when servers fail. A file striped over four servers; one server
 * stopped (SIGSTOP: it answers nothing) and, on another file, one killed
 * (SIGKILL). Calls that need the failed server end with MPI_ERR_IO
 * naming it, within rdma_timeout, never hanging; calls that need only
 * live servers go on working and return correct data.
 *   rdma_faults PREFIX STOP_PID KILL_PID  (servers: $ROMIO_RDMA_SERVERS,
 *   the two PIDs those of servers 1 and 2)
 */
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "itest.h"

#define UNIT 65536
#define SIZE (16 * UNIT)

static void expect_io_error(int rc, const char *what, const char *server)
{
    int class = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_IO, "%s: class %d, expected MPI_ERR_IO", what, class);
    CHECK(strstr(err_string(rc), server) != NULL, "%s: the message does not name %s: %s",
          what, server, err_string(rc));
}

static MPI_File open_file(const char *prefix, const char *name)
{
    char full[4096];
    MPI_File fh;
    MPI_Info info;
    snprintf(full, sizeof full, "%s%s", prefix, name);
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "65536");
    MPI_Info_set(info, "striping_factor", "4");
    MPI_Info_set(info, "rdma_timeout", "2");
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, full, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    return fh;
}

/* Server `dead` failed after the file was written: stripes on the other
 * servers still read back; anything touching `dead` fails cleanly. */
static void after_failure(MPI_File fh, const unsigned char *data, int dead, unsigned seed)
{
    MPI_Status st;
    MPI_Offset size;
    unsigned char back[UNIT];
    char server[32];
    snprintf(server, sizeof server, "rdma server %d", dead);
    int live = (dead + 1) % 4;
    CHECK_MPI(MPI_File_read_at(fh, (MPI_Offset) live * UNIT, back, UNIT, MPI_BYTE, &st));
    CHECK(pattern_check(back, UNIT, (uint64_t) live * UNIT, seed) < 0,
          "stripe %d differs after server %d failed", live, dead);
    expect_io_error(MPI_File_read_at(fh, (MPI_Offset) dead * UNIT, back, UNIT, MPI_BYTE, &st),
                    "read of the failed server's stripe", server);
    expect_io_error(MPI_File_write_at(fh, 0, data, SIZE, MPI_BYTE, &st), "write across all",
                    server);
    expect_io_error(MPI_File_get_size(fh, &size), "get_size", server);
    expect_io_error(MPI_File_sync(fh), "sync", server);
    expect_io_error(MPI_File_close(&fh), "close", server);
}

/* kill() returns before the server's threads have all stopped: wait until
 * /proc says the process is stopped ("T"), so that no thread of it can
 * still answer the read that follows (at most 5 s). */
static void stop_server(const char *pid)
{
    char path[64], stat[256];
    CHECK(kill((pid_t) atol(pid), SIGSTOP) == 0, "cannot stop server 1");
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    for (int i = 0; i < 500; i++) {
        FILE *f = fopen(path, "r");
        const char *state = NULL;
        if (f && fgets(stat, sizeof stat, f))
            state = strrchr(stat, ')');
        if (f)
            fclose(f);
        if (state && state[1] == ' ' && state[2] == 'T')
            return;
        nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000 * 1000 }, NULL);
    }
    CHECK(0, "server 1 (pid %s) is not stopped 5 s after SIGSTOP", pid);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 4, "usage: rdma_faults PREFIX STOP_PID KILL_PID");
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    alarm(120);                 /* a hang fails the test */
    static unsigned char data[SIZE];
    MPI_Status st;

    MPI_File stopped = open_file(argv[1], "stopped"), killed = open_file(argv[1], "killed");
    pattern_fill(data, SIZE, 0, 5);
    CHECK_MPI(MPI_File_write_at(stopped, 0, data, SIZE, MPI_BYTE, &st));
    CHECK_MPI(MPI_File_write_at(killed, 0, data, SIZE, MPI_BYTE, &st));
    /* Synced, so that the files move to new connections where theirs broke
     * (the two share one per server: the stopped server's timeout breaks
     * the killed file's connection to it too, which must heal once that
     * server resumes). */
    CHECK_MPI(MPI_File_sync(stopped));
    CHECK_MPI(MPI_File_sync(killed));

    stop_server(argv[2]);
    after_failure(stopped, data, 1, 5);
    CHECK(kill((pid_t) atol(argv[2]), SIGCONT) == 0, "cannot resume server 1");

    CHECK(kill((pid_t) atol(argv[3]), SIGKILL) == 0, "cannot kill server 2");
    after_failure(killed, data, 2, 5);
    printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
