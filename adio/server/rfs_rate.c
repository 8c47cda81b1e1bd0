/*
 * rfsd --rate-limit: every connection's requests and replies share one
 * timeline at the configured rate, as they would share a slow link; a
 * request waits until its bytes have "crossed" before it is answered.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_rate.h"

#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

void rfs_rate_init(struct rfs_rate *r, double bytes_per_s)
{
    pthread_mutex_init(&r->mu, NULL);
    r->bytes_per_s = bytes_per_s;
    r->busy_until = 0;
}

void rfs_rate_take(struct rfs_rate *r, uint64_t bytes)
{
    pthread_mutex_lock(&r->mu);
    double now = now_s();
    double start = r->busy_until > now ? r->busy_until : now;
    double until = start + (double) bytes / r->bytes_per_s;
    r->busy_until = until;
    pthread_mutex_unlock(&r->mu);
    double wait = until - now;
    if (wait > 0) {
        struct timespec ts = { (time_t) wait, (long) ((wait - (double) (time_t) wait) * 1e9) };
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
}
