/* Small helpers of the MPI integration tests. A failed check prints the
 * place and aborts the job, so the runner sees a non-zero exit. */
#ifndef ITEST_H_INCLUDED
#define ITEST_H_INCLUDED

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fprintf(stderr, "\n");                                                \
            MPI_Abort(MPI_COMM_WORLD, 1);                                         \
        }                                                                         \
    } while (0)

static inline const char *err_string(int rc)
{
    static char s[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, s, &len);
    return s;
}

#define CHECK_MPI(call)                                                           \
    do {                                                                          \
        int rc_ = (call);                                                         \
        CHECK(rc_ == MPI_SUCCESS, "%s", err_string(rc_));                        \
    } while (0)

/* The call must fail with this error class. */
#define CHECK_CLASS(call, expected)                                               \
    do {                                                                          \
        int rc_ = (call), class_ = MPI_SUCCESS;                                   \
        if (rc_ != MPI_SUCCESS)                                                   \
            MPI_Error_class(rc_, &class_);                                        \
        CHECK(class_ == (expected), "class %d, expected %d (%s)", class_,         \
              (expected), rc_ ? err_string(rc_) : "success");                     \
    } while (0)

/* The byte at file offset `off` of the test pattern `seed`. */
static inline unsigned char pattern_byte(uint64_t off, unsigned seed)
{
    uint64_t x = (off + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    return (unsigned char) (x >> 29);
}

static inline void pattern_fill(unsigned char *buf, uint64_t len, uint64_t off, unsigned seed)
{
    for (uint64_t i = 0; i < len; i++)
        buf[i] = pattern_byte(off + i, seed);
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline int64_t pattern_check(const unsigned char *buf, uint64_t len, uint64_t off,
                                    unsigned seed)
{
    for (uint64_t i = 0; i < len; i++)
        if (buf[i] != pattern_byte(off + i, seed))
            return (int64_t) i;
    return -1;
}

#endif
