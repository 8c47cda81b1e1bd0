/*
 * Milliseconds of the monotonic clock: deadlines, timeouts and retry times
 * of the core's clients and servers. No MPI here.
 */
#ifndef NET_TIME_H_INCLUDED
#define NET_TIME_H_INCLUDED

#include <stdint.h>
#include <time.h>

static inline int64_t net_monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#endif /* NET_TIME_H_INCLUDED */
