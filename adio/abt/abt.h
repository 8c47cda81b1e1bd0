/*
 * Active buffering with threads (the RFS paper's ABT, seed 004 section 3.2):
 * a write is copied into a bounded pool of memory buffers and returns; a
 * background thread drains the buffers, in order, into a sink. When the
 * pool is full the data goes to a local cache file (foreground staging); in
 * the computation phases between outputs the thread moves whole buffers to
 * the cache file when the model of abt_model.h says the next output will
 * not fit otherwise (background staging).
 *
 * The engine knows nothing of MPI: its thread calls only the sink, the
 * cache file and pthreads. Errors of drained writes are kept (the first
 * one, as a negative errno) and returned by every later abt_write and
 * abt_flush, so a failure is never silent.
 */
#ifndef ABT_H_INCLUDED
#define ABT_H_INCLUDED

#include <stdint.h>

#include "abt/abt_sink.h"

struct abt_config {
    uint64_t buffer_size;       /* bytes per buffer */
    uint64_t max_memory;        /* bytes of buffers at most */
    const char *stage_dir;      /* cache file directory, NULL: no staging */
    double compute_interval;    /* seconds between outputs, 0: observe */
    uint64_t output_size;       /* bytes per output phase, 0: observe */
    double phase_gap;           /* output calls closer than this are one phase */
};

struct abt_stats {
    uint64_t writes;            /* abt_write calls */
    uint64_t bytes_buffered;    /* copied into memory buffers */
    uint64_t bytes_staged_fg;   /* written to the cache file by the application */
    uint64_t bytes_staged_bg;   /* moved to the cache file by the thread */
    uint64_t bytes_drained;     /* written into the sink */
    uint64_t bytes_through;     /* of them, by the application, unbuffered */
    uint64_t sink_writes;       /* sink write calls */
    double drain_seconds;       /* time inside sink writes */
    double background_cpu;      /* CPU seconds of the drain thread's sink writes and staging */
    double wait_seconds;        /* application time spent waiting for space */
    uint64_t peak_memory;       /* bytes of buffers allocated at most */
    uint64_t leases, releases;  /* abt_lease_begin calls, and the sink's releases */
    uint64_t buffer_size;       /* as configured (possibly clamped) */
    int stage_failed;           /* the cache file could not grow: staging stopped */
};

struct abt_engine;

/* Takes the sink (closed by abt_engine_destroy). A sink that is not
 * thread_safe is drained by the caller's thread inside abt_write (when the
 * pool is full) and abt_flush. Returns 0 or a negative errno. */
int abt_engine_create(struct abt_engine **e, const struct abt_config *cfg, struct abt_sink sink);
/* Copies len bytes bound for `offset`; the caller may reuse buf at once. */
int abt_write(struct abt_engine *e, uint64_t offset, const void *buf, uint64_t len);
/* Does any write not yet drained touch [offset, offset + len)? */
int abt_overlaps(struct abt_engine *e, uint64_t offset, uint64_t len);
/* Is anything not yet drained? Then [*lo, *hi) bounds it. */
int abt_pending(struct abt_engine *e, uint64_t *lo, uint64_t *hi);
/* Waits until everything written so far is in the sink. */
int abt_flush(struct abt_engine *e);
/* The sink's measured bandwidth (bytes/s), 0 before the first write. */
double abt_drain_rate(struct abt_engine *e);
/* The first error of deferred work, 0 if none. */
int abt_error(struct abt_engine *e);
/* Output phases: the writes between begin and end are one output of the
 * application (calls nest; the outermost counts). Background staging runs
 * only outside them. */
void abt_phase_begin(struct abt_engine *e);
void abt_phase_end(struct abt_engine *e);
/*
 * Leases (docs/abt.md "Read-write files"): the writes between
 * abt_lease_begin and abt_lease_end are those of the caller's lease `id`
 * (numbers grow), which it took on the sink's servers before the first;
 * once they have all landed, the drain thread tells the sink
 * (ops->release) and abt_flush waits for that too.
 */
void abt_lease_begin(struct abt_engine *e, uint64_t id);
void abt_lease_end(struct abt_engine *e);
void abt_get_stats(struct abt_engine *e, struct abt_stats *st);
/* Waits until the queue is drained (or failed), then frees all; the last
 * engine stops the drain thread. */
void abt_engine_destroy(struct abt_engine *e);

#endif /* ABT_H_INCLUDED */
