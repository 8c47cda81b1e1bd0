/*
 * The background staging model of the RFS paper (seed 004, eq. 1) and the
 * observations it needs. With ABSmax bytes of buffers, ABSnow of them free,
 * N bytes expected at the next output in I seconds, Bx the drain bandwidth
 * and Bw the cache file's write bandwidth, staging x bytes now leaves
 * ABSnow + x + Bx (I - x / Bw) bytes free at the next output, so
 *     x >= (min(ABSmax, N) - ABSnow - I Bx) / (1 - Bx / Bw).
 */
#ifndef ABT_MODEL_H_INCLUDED
#define ABT_MODEL_H_INCLUDED

#include <stdint.h>

/* Bytes to stage now (0 when the drain alone frees enough in time, or when
 * staging is no faster than draining and so cannot help). */
uint64_t abt_model_stage_bytes(uint64_t abs_max, uint64_t abs_now, uint64_t next_output,
                               double interval, double bx, double bw);

/* A bandwidth estimate: a moving average of observed transfers. */
struct abt_rate {
    double bytes_per_s;         /* 0 until the first observation */
};
void abt_rate_observe(struct abt_rate *r, uint64_t bytes, double seconds);

/* Output phases as the application shows them: calls closer together than
 * `gap` seconds are one phase; the time between phases is computation. */
struct abt_phases {
    double gap;
    int depth;                  /* open output calls */
    double phase_begin, phase_end;  /* of the current or last phase */
    double interval;            /* last computation time observed, -1: none */
    uint64_t bytes;             /* written in the current or last phase */
    uint64_t last_bytes;        /* written in the last complete phase */
};
void abt_phases_init(struct abt_phases *p, double gap);
void abt_phases_begin(struct abt_phases *p, double now);
void abt_phases_end(struct abt_phases *p, double now);
/* Seconds until the next output is expected, -1 when unknown. */
double abt_phases_time_left(const struct abt_phases *p, double now);

double abt_now(void);
/* CPU seconds the calling thread has used. */
double abt_thread_cpu(void);

#endif /* ABT_MODEL_H_INCLUDED */
