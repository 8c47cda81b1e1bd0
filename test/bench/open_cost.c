/*
 * The cost of a collective open, for make bench-scale:
 *
 *   open_cost OPENS FILE...
 *
 * For each FILE (ufs:/..., rfs:HOST:PORT:/..., rdma:/...): rank 0 removes
 * it, one untimed open creates it; then in OPENS rounds every process
 * opens each FILE in turn collectively (MPI_COMM_WORLD, MPI_MODE_CREATE |
 * MPI_MODE_RDWR) and closes it. Each open is timed from a barrier to its
 * return on the slowest process; rank 0 prints one line a file:
 *
 *   RESULT file=FILE np=P opens=N open_ms=MEDIAN min_ms=MIN max_ms=MAX
 *
 * and first the same for a barrier alone in each round (file=barrier): with more
 * processes than cores, every collective waits for the scheduler, and the
 * barrier is that cost without any I/O.
 *
 * The messages come from the drivers' own counters (ROMIO_RDMA_STATS,
 * ROMIO_RFS_STATS: lines on stderr at every close), added up by the
 * runner. The creating open is left out of them: it does more than an open
 * of an existing file (the header is written, not read), and the timed
 * opens are the steady state. Every MPI call is checked.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv, strdup */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_NAME "open_cost"
#include "bench_check.h"

static int rank, nprocs;

/* The drivers' statistics switches: both read with getenv, rdma:'s at open,
 * rfs:'s at close. */
static const char *const stats_env[] = { "ROMIO_RDMA_STATS", "ROMIO_RFS_STATS" };
#define NSTATS (sizeof stats_env / sizeof stats_env[0])

/* Turns the drivers' statistics off (saving the values in saved) or back
 * on: the untimed creating open must not print counters the runner would
 * add to the timed opens'. */
static void stats_off(char *saved[NSTATS])
{
    for (size_t i = 0; i < NSTATS; i++) {
        const char *v = getenv(stats_env[i]);
        saved[i] = v ? strdup(v) : NULL;
        unsetenv(stats_env[i]);
    }
}

static void stats_on(char *saved[NSTATS])
{
    for (size_t i = 0; i < NSTATS; i++)
        if (saved[i]) {
            setenv(stats_env[i], saved[i], 1);
            free(saved[i]);
        }
}

/* A fresh file: rank 0 removes what an earlier run left (a missing file is
 * fine), then one collective open creates it, counters off. */
static void create_fresh(const char *name)
{
    if (rank == 0) {
        int rc = MPI_File_delete(name, MPI_INFO_NULL), cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            CHECK(MPI_Error_class(rc, &cls), "error class");
        if (cls != MPI_SUCCESS && cls != MPI_ERR_NO_SUCH_FILE)
            die("delete", rc);
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    char *saved[NSTATS];
    stats_off(saved);
    MPI_File fh;
    CHECK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh), "creating open");
    CHECK(MPI_File_close(&fh), "close");
    stats_on(saved);
}

/* One collective open, seconds on this process. The barrier first: every
 * process starts together, so the time is the open's, not the previous
 * close's stragglers. The close is not timed. */
static double timed_open(const char *name)
{
    MPI_File fh;
    CHECK(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    double t0 = MPI_Wtime();
    CHECK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh), "open");
    double t = MPI_Wtime() - t0;
    CHECK(MPI_File_close(&fh), "close");
    return t;
}

/* One barrier, seconds on this process, after a barrier that lines the
 * processes up (as timed_open's). */
static double timed_barrier(void)
{
    CHECK(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    double t0 = MPI_Wtime();
    CHECK(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    return MPI_Wtime() - t0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* The RESULT line of N times in t, this process's: each becomes the
 * slowest process's (one reduction for all, not one between the timed
 * calls), then their median (the lower middle of an even count, as
 * test/lib.sh's median), minimum and maximum. */
static void report(const char *what, int n, double *t, double *slowest)
{
    CHECK(MPI_Allreduce(t, slowest, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "allreduce");
    qsort(slowest, (size_t) n, sizeof *slowest, by_value);
    if (rank == 0) {
        printf("RESULT file=%s np=%d opens=%d open_ms=%.3f min_ms=%.3f max_ms=%.3f\n", what,
               nprocs, n, 1e3 * slowest[(n - 1) / 2], 1e3 * slowest[0], 1e3 * slowest[n - 1]);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    CHECK(MPI_Init(&argc, &argv), "init");
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "rank");
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs), "size");
    int opens = argc >= 3 ? atoi(argv[1]) : 0;
    if (opens < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: open_cost OPENS FILE...\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* t[f * opens + i]: round i of file f, file 0 the barrier; the
     * last row is report's scratch */
    int nt = argc - 1;
    double *t = malloc((size_t) (nt + 1) * (size_t) opens * sizeof *t);
    if (!t) {
        fprintf(stderr, "open_cost: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int f = 2; f < argc; f++)
        create_fresh(argv[f]);
    /* Round by round, every file in turn: a stretch where the scheduler
     * or another program holds the cores up shows in every column alike,
     * not in one file's. */
    for (int i = 0; i < opens; i++) {
        t[i] = timed_barrier();
        for (int f = 2; f < argc; f++)
            t[(f - 1) * opens + i] = timed_open(argv[f]);
    }
    report("barrier", opens, t, t + nt * opens);
    for (int f = 2; f < argc; f++)
        report(argv[f], opens, t + (f - 1) * opens, t + nt * opens);
    free(t);
    CHECK(MPI_Finalize(), "finalize");
    return 0;
}
