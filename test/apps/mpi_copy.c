/* mpi_copy get NAME LOCAL | mpi_copy put LOCAL NAME: copies a file between
 * NAME, read or written through MPI-IO (so through whatever driver its name
 * or ROMIO_FSTYPE_FORCE selects), and the local file LOCAL, read or written
 * with stdio. A file striped by rdma: has no POSIX path of its own: this is
 * how a serial tool of an application's test suite (PnetCDF's ncvalidator)
 * checks it, and how the suite's sample input files get onto it. One
 * process. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* the stream in through MPI-IO into NAME, created or truncated */
static void put(FILE *in, const char *name, char *buf)
{
    MPI_File fh;
    MPI_Offset off = 0;
    size_t n;
    int err = MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_WRONLY | MPI_MODE_CREATE,
                            MPI_INFO_NULL, &fh);
    if (err != MPI_SUCCESS)
        die(name, err);
    if ((err = MPI_File_set_size(fh, 0)) != MPI_SUCCESS)
        die("set_size", err);
    while ((n = fread(buf, 1, CHUNK, in)) > 0) {
        if ((err = MPI_File_write_at(fh, off, buf, (int)n, MPI_BYTE, MPI_STATUS_IGNORE)) !=
            MPI_SUCCESS)
            die("write_at", err);
        off += (MPI_Offset)n;
    }
    if (ferror(in))
        die("reading the local file", MPI_SUCCESS);
    if ((err = MPI_File_close(&fh)) != MPI_SUCCESS)
        die("close", err);
}

int main(int argc, char **argv)
{
    char *buf = malloc(CHUNK);
    int is_get = argc == 4 && strcmp(argv[1], "get") == 0;
    int is_put = argc == 4 && strcmp(argv[1], "put") == 0;
    FILE *local;

    MPI_Init(&argc, &argv);
    if (!buf || !(is_get || is_put)) {
        fprintf(stderr, "usage: mpi_copy get NAME LOCAL | mpi_copy put LOCAL NAME\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    local = fopen(is_get ? argv[3] : argv[2], is_get ? "wb" : "rb");
    if (!local)
        die(is_get ? argv[3] : argv[2], MPI_SUCCESS);
    if (is_get)
        get(argv[2], local, buf);
    else
        put(local, argv[3], buf);
    if (fclose(local) != 0)
        die("closing the local file", MPI_SUCCESS);
    free(buf);
    MPI_Finalize();
    return 0;
}
