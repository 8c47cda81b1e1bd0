/* mpi_copy NAME LOCAL: copies the file NAME, read through MPI-IO (so
 * through whatever driver its name or ROMIO_FSTYPE_FORCE selects), to the
 * local file LOCAL, written with stdio. A file striped by rdma: has no POSIX
 * path of its own: this is how a serial tool of an application's test suite
 * (PnetCDF's ncvalidator) checks it. One process. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { CHUNK = 4 << 20 };

static void die(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (err != MPI_SUCCESS)
        MPI_Error_string(err, msg, &len);
    else
        snprintf(msg, sizeof msg, "failed");
    fprintf(stderr, "mpi_copy: %s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* NAME through MPI-IO into the stream out */
static void get(const char *name, FILE *out, char *buf)
{
    MPI_File fh;
    MPI_Offset size, off = 0;
    int err = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS)
        die(name, err);
    if ((err = MPI_File_get_size(fh, &size)) != MPI_SUCCESS)
        die("get_size", err);
    while (off < size) {
        int n = size - off < CHUNK ? (int)(size - off) : CHUNK, got;
        MPI_Status st;
        if ((err = MPI_File_read_at(fh, off, buf, n, MPI_BYTE, &st)) != MPI_SUCCESS)
            die("read_at", err);
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (got != n || fwrite(buf, 1, (size_t)n, out) != (size_t)n)
            die("short read or write", MPI_SUCCESS);
        off += n;
    }
    MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
    char *buf = malloc(CHUNK);
    FILE *local;

    MPI_Init(&argc, &argv);
    if (!buf || argc != 3) {
        fprintf(stderr, "usage: mpi_copy NAME LOCAL\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!(local = fopen(argv[2], "wb")))
        die(argv[2], MPI_SUCCESS);
    get(argv[1], local, buf);
    if (fclose(local) != 0)
        die("closing the local file", MPI_SUCCESS);
    free(buf);
    MPI_Finalize();
    return 0;
}
