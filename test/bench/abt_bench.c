/*
 * The RFS paper's ABT experiment (seed 004, section 4): the periodic-output
 * program of periodic.h writing every snapshot as a collective write of the
 * grid through a subarray view, at snapshot k * grid size of one file
 * opened write-only. With -c the snapshot is written as IOR's contiguous
 * pattern instead: each process its block of the snapshot, contiguous, in
 * independent 1 MiB writes.
 *
 *   abt_bench [-c] FILE COMPUTE_S|@SWEEPS SNAPSHOTS N [HINT=VALUE...]
 *
 * Prints periodic.h's report.
 */
#include "periodic.h"

#define CONTIG_TRANSFER (1 << 20)

struct mpiio {
    const char *name;
    MPI_Info info;
    struct block *b;
    int contig;
    MPI_Datatype filetype, memtype;
    MPI_File fh;
};

/* IOR's contiguous pattern: this process's block of the snapshot at `at`,
 * in transfers of CONTIG_TRANSFER bytes from the grid's memory. */
static void write_contig(struct mpiio *f, MPI_Offset at)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Offset share = (MPI_Offset) f->b->n * f->b->n * f->b->n * sizeof(double);
    const char *src = (const char *) f->b->grid;
    for (MPI_Offset done = 0; done < share; done += CONTIG_TRANSFER) {
        int len = (int) (share - done < CONTIG_TRANSFER ? share - done : CONTIG_TRANSFER);
        MPI_File_write_at(f->fh, at + rank * share + done, src + done, len, MPI_BYTE,
                          MPI_STATUS_IGNORE);
    }
}

static void mpiio_open(void *ctx)
{
    struct mpiio *f = ctx;
    int rc = MPI_File_open(MPI_COMM_WORLD, f->name, MPI_MODE_CREATE | MPI_MODE_WRONLY, f->info,
                           &f->fh);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "open %s: %s\n", f->name, msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_set_errhandler(f->fh, MPI_ERRORS_ARE_FATAL);
}

static void mpiio_prepare(void *ctx, int s)
{
    struct mpiio *f = ctx;
    if (!f->contig)
        MPI_File_set_view(f->fh, s * snapshot_bytes(f->b), MPI_DOUBLE, f->filetype, "native",
                          f->info);
}

static void mpiio_write(void *ctx, int s)
{
    struct mpiio *f = ctx;
    if (f->contig)
        write_contig(f, s * snapshot_bytes(f->b));
    else
        MPI_File_write_all(f->fh, f->b->grid, 1, f->memtype, MPI_STATUS_IGNORE);
}

static void mpiio_close(void *ctx)
{
    MPI_File_close(&((struct mpiio *) ctx)->fh);
}

static const struct output mpiio_output = { mpiio_open, mpiio_prepare, mpiio_write, mpiio_close };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int contig = argc > 1 && strcmp(argv[1], "-c") == 0;
    argc -= contig;
    argv += contig;
    if (argc < 5) {
        if (rank == 0)
            fprintf(stderr, "usage: abt_bench [-c] FILE COMPUTE_S|@SWEEPS SNAPSHOTS N [HINT=VALUE...]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct block b;
    block_init(&b, atoi(argv[4]));
    struct mpiio f = { .name = argv[1], .info = info_from_args(argc - 5, argv + 5), .b = &b,
                       .contig = contig, .memtype = block_memtype(&b) };
    int lsizes[3] = { b.n, b.n, b.n };
    MPI_Type_create_subarray(3, b.gsizes, lsizes, b.starts, MPI_ORDER_C, MPI_DOUBLE, &f.filetype);
    MPI_Type_commit(&f.filetype);

    periodic_run(&b, atoi(argv[3]), phase_sweeps(&b, argv[2]), &mpiio_output, &f);
    MPI_Type_free(&f.filetype);
    MPI_Type_free(&f.memtype);
    MPI_Info_free(&f.info);
    block_free(&b);
    MPI_Finalize();
    return 0;
}
