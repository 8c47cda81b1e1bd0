/*
 * The MPI benchmarks' error handling: a failed MPI call ends the whole job
 * with its message. Define BENCH_NAME before including.
 */
#ifndef BENCH_CHECK_H_INCLUDED
#define BENCH_CHECK_H_INCLUDED

#include <mpi.h>
#include <stdio.h>

static void die(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, BENCH_NAME ": %s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CHECK(call, what)                     \
    do {                                      \
        int rc_ = (call);                     \
        if (rc_ != MPI_SUCCESS)               \
            die(what, rc_);                   \
    } while (0)

#endif /* BENCH_CHECK_H_INCLUDED */
