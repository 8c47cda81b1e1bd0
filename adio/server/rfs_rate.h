/*
 * rfsd --rate-limit: a link of limited bandwidth, shared by all
 * connections. No MPI here.
 */
#ifndef RFS_RATE_H_INCLUDED
#define RFS_RATE_H_INCLUDED

#include <pthread.h>
#include <stdint.h>

struct rfs_rate {
    pthread_mutex_t mu;
    double bytes_per_s;
    double busy_until;          /* when the bytes taken so far have crossed */
};

void rfs_rate_init(struct rfs_rate *r, double bytes_per_s);
/* Blocks until `bytes` more have crossed the link. */
void rfs_rate_take(struct rfs_rate *r, uint64_t bytes);

#endif /* RFS_RATE_H_INCLUDED */
