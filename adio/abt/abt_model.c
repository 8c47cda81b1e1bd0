#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <time.h>

#include "abt/abt_model.h"

uint64_t abt_model_stage_bytes(uint64_t abs_max, uint64_t abs_now, uint64_t next_output,
                               double interval, double bx, double bw)
{
    double need = (double) (abs_max < next_output ? abs_max : next_output);
    double missing = need - (double) abs_now - interval * bx;
    if (missing <= 0)
        return 0;
    if (bw <= 0)                /* the cache file not measured yet: as fast as memory */
        return (uint64_t) missing;
    if (bx >= bw)
        return 0;
    return (uint64_t) (missing / (1.0 - bx / bw));
}

void abt_rate_observe(struct abt_rate *r, uint64_t bytes, double seconds)
{
    if (seconds <= 0 || bytes == 0)
        return;
    double rate = (double) bytes / seconds;
    r->bytes_per_s = r->bytes_per_s > 0 ? 0.7 * r->bytes_per_s + 0.3 * rate : rate;
}

void abt_phases_init(struct abt_phases *p, double gap)
{
    *p = (struct abt_phases) { .gap = gap, .interval = -1 };
}

void abt_phases_begin(struct abt_phases *p, double now)
{
    if (p->depth++ > 0)
        return;
    if (p->phase_end > 0 && now - p->phase_end < p->gap)
        return;                 /* the same output phase goes on */
    if (p->phase_end > 0) {
        p->interval = now - p->phase_end;
        p->last_bytes = p->bytes;
    }
    p->phase_begin = now;
    p->bytes = 0;
}

void abt_phases_end(struct abt_phases *p, double now)
{
    if (p->depth > 0 && --p->depth == 0)
        p->phase_end = now;
}

double abt_phases_time_left(const struct abt_phases *p, double now)
{
    if (p->interval < 0 || p->depth > 0)
        return -1;
    double left = p->interval - (now - p->phase_end);
    return left > 0 ? left : 0;
}

static double clock_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

double abt_now(void)
{
    return clock_seconds(CLOCK_MONOTONIC);
}

double abt_thread_cpu(void)
{
    return clock_seconds(CLOCK_THREAD_CPUTIME_ID);
}
