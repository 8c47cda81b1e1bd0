/*
 * The interleaved pattern of issue 21, as a standard I/O benchmark's
 * MPI-IO backend runs it, timed:
 *   interleave_bench FILE SEG NSEG LAYOUT ACCESS REPS [HINT=VALUE...]
 * Each process writes NSEG segments of SEG bytes, segment i of rank r at
 * byte (i * nprocs + r) * SEG, then reads those of its neighbour (rank
 * r + 1 mod nprocs). LAYOUT: seg (one call per segment, explicit
 * offsets, as IOR does) or view (all of a process's segments in one
 * call, through a vector filetype). ACCESS: coll (write_at_all,
 * read_at_all) or indep (write_at, read_at). The hints go into the
 * info of the open. Prints the medians over REPS of the slowest process:
 * "write S" and "read S"; checks every byte read. Also "barrier S": the
 * median time of one MPI_Barrier among the same processes, the least any
 * collective call waits for the others on these cores, whatever the
 * driver.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "interleave_bench"
#include "bench_check.h"

static int rank, nprocs;

struct pattern {
    int seg, nseg, by_view, collective;
};

/* The segments of `owner` as a file view: NSEG blocks of SEG bytes, a
 * stride of nprocs segments, from the owner's first segment on. */
static void set_view(MPI_File fh, const struct pattern *p, int owner, MPI_Info info)
{
    MPI_Datatype vec, tiled;
    MPI_Type_vector(p->nseg, p->seg, p->seg * nprocs, MPI_BYTE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint) p->seg * nprocs * p->nseg, &tiled);
    MPI_Type_commit(&tiled);
    CHECK(MPI_File_set_view(fh, (MPI_Offset) owner * p->seg, MPI_BYTE, tiled, "native", info),
          "set_view");
    MPI_Type_free(&vec);
    MPI_Type_free(&tiled);
}

static int io_at(MPI_File fh, const struct pattern *p, MPI_Offset off, char *buf, int n,
                 int is_write)
{
    if (is_write)
        return p->collective ? MPI_File_write_at_all(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE)
                             : MPI_File_write_at(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
    return p->collective ? MPI_File_read_at_all(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE)
                         : MPI_File_read_at(fh, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE);
}

/* All segments of `owner` to or from buf; seconds of the slowest process. */
static double timed_io(MPI_File fh, const struct pattern *p, int owner, char *buf, int is_write,
                       MPI_Info info)
{
    if (p->by_view)
        set_view(fh, p, owner, info);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (p->by_view)
        CHECK(io_at(fh, p, 0, buf, p->seg * p->nseg, is_write), is_write ? "write" : "read");
    else
        for (int i = 0; i < p->nseg; i++) {
            MPI_Offset off = ((MPI_Offset) i * nprocs + owner) * p->seg;
            CHECK(io_at(fh, p, off, buf + (size_t) i * p->seg, p->seg, is_write),
                  is_write ? "write" : "read");
        }
    double t = MPI_Wtime() - t0, slowest;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* Seconds of one MPI_Barrier, over as many as a call per segment makes. */
static double barrier_time(int n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    double t = (MPI_Wtime() - t0) / n, slowest;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

/* Byte j of owner's data in repetition rep. */
static char value(int owner, int rep, size_t j)
{
    return (char) (owner * 131 + rep * 17 + j * 7 + j / 4093);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: interleave_bench FILE SEG NSEG seg|view coll|indep REPS "
                        "[HINT=VALUE...]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 7)
        usage();
    struct pattern p = { .seg = atoi(argv[2]), .nseg = atoi(argv[3]),
                         .by_view = strcmp(argv[4], "view") == 0,
                         .collective = strcmp(argv[5], "coll") == 0 };
    int reps = atoi(argv[6]);
    if (p.seg <= 0 || p.nseg <= 0 || reps <= 0 || (size_t) p.seg * p.nseg > 1u << 30)
        usage();
    MPI_Info info;
    MPI_Info_create(&info);
    for (int a = 7; a < argc; a++) {
        char *eq = strchr(argv[a], '=');
        if (!eq)
            usage();
        *eq = '\0';
        MPI_Info_set(info, argv[a], eq + 1);
    }
    size_t bytes = (size_t) p.seg * p.nseg;
    int next = (rank + 1) % nprocs;
    char *mine = malloc(bytes), *back = malloc(bytes);
    double *w = malloc((size_t) reps * sizeof *w), *r = malloc((size_t) reps * sizeof *r);
    double *b = malloc((size_t) reps * sizeof *b);
    for (int rep = 0; rep < reps; rep++) {
        b[rep] = barrier_time(p.nseg);
        MPI_File fh;
        for (size_t j = 0; j < bytes; j++)
            mine[j] = value(rank, rep, j);
        CHECK(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
              "open");
        w[rep] = timed_io(fh, &p, rank, mine, 1, info);
        r[rep] = timed_io(fh, &p, next, back, 0, info);
        for (size_t j = 0; j < bytes; j++)
            if (back[j] != value(next, rep, j)) {
                fprintf(stderr, "interleave_bench: rank %d: byte %zu of rank %d's data wrong\n",
                        rank, j, next);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        CHECK(MPI_File_close(&fh), "close");
    }
    qsort(w, (size_t) reps, sizeof *w, by_value);
    qsort(r, (size_t) reps, sizeof *r, by_value);
    qsort(b, (size_t) reps, sizeof *b, by_value);
    if (rank == 0) {
        printf("write %.6f\nread %.6f\nbarrier %.7f\n", w[reps / 2], r[reps / 2], b[reps / 2]);
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    }
    MPI_Info_free(&info);
    free(mine);
    free(back);
    free(w);
    free(r);
    free(b);
    MPI_Finalize();
    return 0;
}
