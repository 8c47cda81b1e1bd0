/*
 * The inner server dies while abt drains:
 *
 *   abt_faults NAME SERVER_PID
 *
 * NAME is an abt:rfs: file on a rate-limited rfsd (the drain takes
 * seconds). 32 MiB are written (buffered: abt_compute_interval says the
 * program computes, so its first large write is not written through to
 * measure the drain), the server is killed, and
 * MPI_File_sync and MPI_File_close must both report the loss as MPI_ERR_IO
 * (no hang: the runner's timeout; no silent success). A later write to
 * the broken file fails at once.
 */
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "itest.h"

#define LEN (32u << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 3, "usage: abt_faults NAME SERVER_PID");
    pid_t server = (pid_t) atol(argv[2]);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "abt_max_memory", "67108864");
    MPI_Info_set(info, "abt_compute_interval", "1");
    MPI_File fh;
    CHECK_MPI(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, info,
                            &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    unsigned char *buf = malloc(LEN);
    pattern_fill(buf, LEN, 0, 5);
    CHECK_MPI(MPI_File_write_at(fh, 0, buf, LEN, MPI_BYTE, MPI_STATUS_IGNORE));
    CHECK(kill(server, SIGKILL) == 0, "cannot kill the server");
    CHECK_CLASS(MPI_File_sync(fh), MPI_ERR_IO);
    CHECK_CLASS(MPI_File_write_at(fh, 0, buf, 4096, MPI_BYTE, MPI_STATUS_IGNORE), MPI_ERR_IO);
    CHECK_CLASS(MPI_File_close(&fh), MPI_ERR_IO);
    free(buf);
    MPI_Info_free(&info);
    printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
