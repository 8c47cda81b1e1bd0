/*
 * The ABT engine: per open file a FIFO of write records, each either in a
 * memory buffer or in the cache file, drained in order by the process's
 * one drain thread (or, for a sink that must stay on the application
 * thread, by the caller when it must wait). The thread serves the files
 * with pending records in turn, one record at a time; it exists while at
 * least one threaded engine does.
 *
 * Write-through: when an output phase finds the pool full and the cache
 * file would take the data no faster than the drain does, buffering cannot
 * shorten the phase any more (the application waits at the drain's pace
 * either way) and only adds a copy and a thread handoff: the rest of the
 * phase goes straight to the sink from the caller's buffer, once the
 * records before it have drained (so the order of the writes holds). The
 * next phase buffers again. The same when the sink takes data at least as
 * fast as the application copies it into the buffers (both measured), or
 * a tenth as fast where no computation has been seen to overlap the
 * drain: buffering then only adds work.
 *
 * Batches: where the sink writes several pieces in one call (rfs: one
 * list request, one round trip), the drain hands it the records from the
 * head that are in memory and lie one after the other in the file, up to
 * ABT_SINK_MAX_PIECES or ABT_BATCH_BYTES: a collective write buffered as each
 * process's own runs (hundreds of bytes each) drains at the link's pace,
 * not at one round trip per run. A record that goes back in the file ends
 * the batch, so overlapping writes still land in their order.
 *
 * Ownership: the application thread fills the current buffer (`fill`) and
 * appends records; the drain thread takes records from the head (the
 * batch, head to busy_last, while head_busy) and is the only one that
 * writes the sink, reads the cache file, stages buffers in
 * the background or discards records after a failure. A buffer goes back
 * to the pool when no record uses it and it is not being filled.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* SCHED_BATCH */
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "abt/abt.h"
#include "abt/abt_model.h"
#include "abt/abt_pool.h"
#include "abt/abt_stage.h"

/* Copies shorter than this are dominated by fixed costs: their rate says
 * nothing of bandwidth, and writing such pieces through one by one would
 * pay the sink's fixed cost for each. */
#define ABT_RATE_MIN_BYTES (64 << 10)

/* A rate (the copy's, the drain's, the cache file's) learns only from
 * moves of ABT_RATE_MIN_BYTES or more. Learning from the 512-byte stage
 * writes of a view's runs, it could say the cache file was slower than a
 * 5 MB/s drain, and phases waited for the drain instead of staging
 * (bench-abt's short computation behind 20 MB/s: 22-560 MB/s visible
 * from run to run, 560-820 since). */
static void observe(struct abt_rate *rate, uint64_t bytes, double seconds)
{
    if (bytes >= ABT_RATE_MIN_BYTES)
        abt_rate_observe(rate, bytes, seconds);
}

/* One sink call at most: ABT_SINK_MAX_PIECES records and a buffer's
 * worth of data. Only records under ABT_BATCH_RECORD_MAX join a batch: for
 * a larger one the round trip is small against the transfer, and a write
 * alone can go from the socket to the file without a copy (rfsd splices
 * a PWRITE of 64 KiB or more, not a list write). */
#define ABT_BATCH_BYTES (4u << 20)
#define ABT_BATCH_RECORD_MAX (64u << 10)

/* Writes that follow each other in a buffer and in the file make one
 * record up to this size, so small ones cost one sink call; larger ones
 * reach the sink as the application made them. 1 MiB writes merged into
 * 4 MiB records made IOR's pattern over abt:ufs: (4 processes, one file,
 * 2 cores) collapse to 200-500 MB/s in a quarter of the runs, the time in
 * the kernel spinning on the file's lock (`rwsem_spin_on_owner`); plain
 * ufs: does the same with 4 MiB writes (3 runs of 12), with 1 MiB records
 * none of 44 runs did. */
#define ABT_RECORD_MERGE_MAX (1u << 20)

struct abt_rec {
    uint64_t offset, len;
    uint64_t lease;             /* the lease of the write call that made it (abt.h) */
    struct abt_buf *buf;        /* NULL: the data is in the cache file */
    uint8_t *data;              /* in buf */
    uint64_t stage_at;          /* in the cache file */
    struct abt_rec *next;
};

/* The process's drain thread and the one lock of all engines. */
struct abt_drainer {
    pthread_mutex_t life;       /* serialises starting and joining the thread */
    pthread_mutex_t mu;
    pthread_cond_t work;        /* records queued, or stop */
    struct abt_engine *engines; /* threaded engines, a ring served in turn */
    struct abt_engine *cursor;  /* the engine served last */
    pthread_t thread;
    int running, stop;
};

static struct abt_drainer drainer = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
    NULL, NULL, 0, 0, 0
};

struct abt_engine {
    struct abt_engine *next_engine;
    pthread_cond_t progress;    /* a record drained, space freed, or a failure */
    struct abt_config cfg;
    struct abt_sink sink;
    struct abt_pool pool;
    struct abt_stage stage;
    int have_stage;
    struct abt_buf *fill;
    struct abt_rec *head, *tail;
    int head_busy;              /* the sink is being written (a batch, or through) */
    struct abt_rec *busy_last;  /* the batch is head .. busy_last */
    struct abt_piece *batch;    /* ABT_SINK_MAX_PIECES, for a sink with pwrite_pieces */
    uint64_t lo, hi;            /* bounds of the records not yet drained */
    int err;                    /* first failure, negative errno, sticky */
    int threaded;
    uint8_t *bounce;            /* staged records are read back into it */
    struct abt_phases phases;
    int through;                /* this phase writes through (above) */
    int began_drained;          /* this phase found nothing queued */
    uint64_t phase_staged;      /* put in the cache file by this phase's writes */
    struct abt_rate bx, bw, bc; /* drain, cache file, copy into buffers */
    /* Leases (abt_lease_begin): the write call's open, the newest taken,
     * the newest the sink released; drained bytes since that release. */
    uint64_t lease_open, lease_last, lease_released;
    uint64_t unreleased_bytes;
    struct abt_stats stats;
};

static void lock(struct abt_engine *e) { (void) e; pthread_mutex_lock(&drainer.mu); }
static void unlock(struct abt_engine *e) { (void) e; pthread_mutex_unlock(&drainer.mu); }

static void buf_put(struct abt_engine *e, struct abt_buf *b)
{
    if (--b->pending == 0 && b != e->fill) {
        abt_pool_release(&e->pool, b);
        pthread_cond_broadcast(&e->progress);
    }
}

static void append(struct abt_engine *e, struct abt_rec *r)
{
    r->next = NULL;
    r->lease = e->lease_open ? e->lease_open : e->lease_last;
    if (e->tail)
        e->tail->next = r;
    else
        e->head = r;
    e->tail = r;
    if (e->lo == e->hi) {
        e->lo = r->offset;
        e->hi = r->offset + r->len;
    } else {
        e->lo = r->offset < e->lo ? r->offset : e->lo;
        e->hi = r->offset + r->len > e->hi ? r->offset + r->len : e->hi;
    }
    /* Inside a write call the thread is woken by a full buffer, or by the
     * call's end (abt_phase_end) or wait: a view of 512-byte runs is
     * thousands of records, and a wake-up for each costs the writer a
     * futex call and the lock's hand-over to a thread with nothing to
     * send yet. */
    if (e->phases.depth == 0 || r->buf == NULL || r->buf->used == e->pool.buffer_size)
        pthread_cond_signal(&drainer.work);
}

/* Drops the head record (drained or discarded). */
static void pop_head(struct abt_engine *e)
{
    struct abt_rec *r = e->head;
    e->head = r->next;
    if (e->head == NULL) {
        e->tail = NULL;
        e->lo = e->hi = 0;
    }
    if (r->buf) {
        buf_put(e, r->buf);
    } else {
        e->stage.records--;
        abt_stage_reset_if_empty(&e->stage);
    }
    free(r);
}

static void fail(struct abt_engine *e, int rc)
{
    if (e->err == 0)
        e->err = rc;
    while (e->head)
        pop_head(e);
    pthread_cond_broadcast(&e->progress);
}

/* Can r join a batch after prev: small, where prev is (in memory, or in
 * the cache file right after prev's bytes, to be read back with them:
 * foreground staging puts a phase's records there one after another)? */
static int joins_batch(const struct abt_rec *r, const struct abt_rec *prev)
{
    if (r->len >= ABT_BATCH_RECORD_MAX || (r->buf == NULL) != (prev->buf == NULL))
        return 0;
    return r->buf || r->stage_at == prev->stage_at + prev->len;
}

/* Marks busy the records the drain writes in one sink call: the head and,
 * for a sink with pwrite_pieces and a small head, the small records after
 * it that join it, each past the previous one's end in the file, within
 * the batch limits (staged ones, the bounce buffer too). Lock held.
 * Returns their number; *bytes, their data. */
static int take_batch(struct abt_engine *e, uint64_t *bytes)
{
    struct abt_rec *r = e->head;
    int batching = e->batch && r->len < ABT_BATCH_RECORD_MAX, n = 0;
    /* a staged batch is read back into the bounce buffer (buffer_size) */
    uint64_t most = (r->buf || e->cfg.buffer_size > ABT_BATCH_BYTES) ? ABT_BATCH_BYTES
                                                                     : e->cfg.buffer_size;
    *bytes = 0;
    do {
        if (batching)
            e->batch[n] = (struct abt_piece) { r->data, r->len, r->offset };
        n++;
        *bytes += r->len;
        e->busy_last = r;
        r = r->next;
    } while (batching && r && joins_batch(r, e->busy_last) && n < ABT_SINK_MAX_PIECES &&
             r->len <= most - *bytes &&
             r->offset >= e->busy_last->offset + e->busy_last->len);
    return n;
}

/* Writes the head record, or the batch from it, into the sink (staged
 * records read back first, a batch's in one read); lock held on entry and
 * exit. */
static int write_head(struct abt_engine *e, int *records, uint64_t *bytes)
{
    struct abt_rec *r = e->head;
    *records = take_batch(e, bytes);
    e->head_busy = 1;
    unlock(e);
    int rc = 0;
    const void *data = r->data;
    if (r->buf == NULL) {
        rc = abt_stage_read(&e->stage, r->stage_at, e->bounce, *bytes);
        data = e->bounce;
        uint64_t at = 0;
        for (int i = 0; i < *records && *records > 1; i++) {
            e->batch[i].data = e->bounce + at;
            at += e->batch[i].len;
        }
    }
    if (rc == 0)
        rc = *records > 1 ? e->sink.ops->pwrite_pieces(e->sink.ctx, e->batch, *records)
                          : e->sink.ops->pwrite(e->sink.ctx, data, r->len, r->offset);
    lock(e);
    e->head_busy = 0;
    e->busy_last = NULL;
    return rc;
}

/* Drains the head record or batch; called with the lock held, by the one
 * thread that drains, and returns with it held. */
static void drain_head(struct abt_engine *e)
{
    int records;
    uint64_t bytes;
    double t0 = abt_now(), cpu0 = abt_thread_cpu();
    int rc = write_head(e, &records, &bytes);
    double dt = abt_now() - t0;
    e->stats.sink_writes++;
    e->stats.drain_seconds += dt;
    e->stats.background_cpu += e->threaded ? abt_thread_cpu() - cpu0 : 0;
    if (rc != 0) {
        fail(e, rc);
        return;
    }
    e->stats.bytes_drained += bytes;
    e->unreleased_bytes += bytes;
    observe(&e->bx, bytes, dt);
    while (records-- > 0)
        pop_head(e);
    pthread_cond_broadcast(&e->progress);
}

/* The newest lease whose writes have all landed: those before the open
 * write call's and the oldest queued record's (records drain in order). */
static uint64_t landed_lease(const struct abt_engine *e)
{
    uint64_t upto = e->lease_open ? e->lease_open - 1 : e->lease_last;
    if (e->head && e->head->lease <= upto)
        upto = e->head->lease ? e->head->lease - 1 : 0;
    return upto;
}

/* A release the sink should send: what landed since the last one, once
 * the queue is empty or ABT_BATCH_BYTES have drained (a release per batch
 * would cost a round trip each; a reader waits at most that much longer). */
static int release_due(const struct abt_engine *e)
{
    return e->sink.ops->release && !e->head_busy && e->err == 0 &&
           landed_lease(e) > e->lease_released &&
           (e->head == NULL || e->unreleased_bytes >= ABT_BATCH_BYTES);
}

/* Tells the sink's servers that the leases up to landed_lease have
 * landed; lock held on entry and exit, the sink in use meanwhile. */
static void release_landed(struct abt_engine *e)
{
    uint64_t upto = landed_lease(e);
    e->head_busy = 1;
    unlock(e);
    int rc = e->sink.ops->release(e->sink.ctx, upto);
    lock(e);
    e->head_busy = 0;
    if (rc != 0) {
        fail(e, rc);
        return;
    }
    e->lease_released = upto;
    e->unreleased_bytes = 0;
    e->stats.releases++;
    pthread_cond_broadcast(&e->progress);
}

/* The newest buffer that is complete and holds records. Only the drain
 * thread calls it, between its own sink writes: no record is busy. */
static struct abt_buf *stage_victim(struct abt_engine *e)
{
    struct abt_buf *victim = NULL;
    for (struct abt_rec *r = e->head; r; r = r->next)
        if (r->buf && r->buf != e->fill)
            victim = r->buf;
    return victim;
}

/* Moves the records of buffer b to the cache file (lock held on entry and
 * exit; only the drain thread changes these records meanwhile). */
static int stage_buffer(struct abt_engine *e, struct abt_buf *b)
{
    uint64_t total = 0;
    for (struct abt_rec *r = e->head; r; r = r->next)
        if (r->buf == b)
            total += r->len;
    uint64_t at = e->stage.end;
    e->stage.end += total;
    e->stage.writers++;
    unlock(e);
    double t0 = abt_now(), cpu0 = abt_thread_cpu();
    int rc = 0;
    uint64_t pos = at;
    for (struct abt_rec *r = e->head; r && rc == 0; r = r->next) {
        if (r->buf != b)
            continue;
        rc = abt_stage_write(&e->stage, pos, r->data, r->len);
        pos += r->len;
    }
    double dt = abt_now() - t0;
    lock(e);
    e->stats.background_cpu += abt_thread_cpu() - cpu0;
    e->stage.writers--;
    if (rc != 0) {
        e->stage.failed = 1;
        return rc;
    }
    observe(&e->bw, total, dt);
    pos = at;
    for (struct abt_rec *r = e->head; r; r = r->next) {
        if (r->buf != b)
            continue;
        r->buf = NULL;
        r->data = NULL;
        r->stage_at = pos;
        pos += r->len;
        e->stage.records++;
        buf_put(e, b);
    }
    e->stats.bytes_staged_bg += total;
    return 0;
}

/* Background staging: during computation, one buffer at a time while the
 * model says the next output would not fit (the paper spreads the staging
 * of x bytes over the computation phase, one buffer before each drain).
 * Not within abt_phase_gap of the last write call, where the output phase
 * may go on: IOR's writer, call after call, saw a fifth of its data staged
 * between its calls, a copy out and back in that only competed with it. */
static void maybe_stage(struct abt_engine *e)
{
    double now = abt_now();
    if (!e->have_stage || e->stage.failed || e->phases.depth > 0 ||
        now - e->phases.phase_end < e->phases.gap)
        return;
    double left = e->cfg.compute_interval > 0 ? e->cfg.compute_interval
                                              : abt_phases_time_left(&e->phases, now);
    uint64_t next = e->cfg.output_size ? e->cfg.output_size : e->phases.bytes;
    if (left < 0 || next == 0)
        return;
    uint64_t abs_max = e->pool.max_buffers * e->pool.buffer_size;
    uint64_t abs_now = abt_pool_free_bytes(&e->pool);
    if (e->fill)
        abs_now += e->pool.buffer_size - e->fill->used;
    if (abt_model_stage_bytes(abs_max, abs_now, next, left, e->bx.bytes_per_s,
                              e->bw.bytes_per_s) == 0)
        return;
    struct abt_buf *b = stage_victim(e);
    if (b)
        stage_buffer(e, b);
}

/* The next engine after the cursor with a record to drain, or NULL. */
static struct abt_engine *next_with_work(void)
{
    struct abt_engine *start = drainer.cursor && drainer.cursor->next_engine
                               ? drainer.cursor->next_engine : drainer.engines;
    struct abt_engine *e = start;
    do {
        if (e == NULL)
            return NULL;
        if ((e->head && !e->head_busy) || release_due(e))
            return drainer.cursor = e;
        e = e->next_engine ? e->next_engine : drainer.engines;
    } while (e != start);
    return NULL;
}

/* The drain thread never preempts the application when it wakes
 * (SCHED_BATCH: no wake-up preemption, and the same share of the cores as
 * any other thread). The end of a write call wakes it, and under the
 * default policy it took the caller's core before the call could return:
 * 5 ms of a 7 ms collective write, and bench-abt's periodic writer over
 * ufs: (2 processes on 2 cores) saw 630 MB/s against 1580 with this
 * policy (medians of 6 runs). A kernel that refuses the policy leaves the
 * thread as it was, which is still correct. */
static void no_wakeup_preemption(void)
{
    struct sched_param none = { 0 };
    (void) pthread_setschedparam(pthread_self(), SCHED_BATCH, &none);
}

static void *drain_thread(void *arg)
{
    (void) arg;
    no_wakeup_preemption();
    pthread_mutex_lock(&drainer.mu);
    for (;;) {
        struct abt_engine *e = next_with_work();
        if (e == NULL) {
            if (drainer.stop)
                break;
            pthread_cond_wait(&drainer.work, &drainer.mu);
            continue;
        }
        maybe_stage(e);
        if (e->head && !e->head_busy)
            drain_head(e);
        if (release_due(e))
            release_landed(e);
    }
    pthread_mutex_unlock(&drainer.mu);
    return NULL;
}

static int attach(struct abt_engine *e)
{
    int rc = 0;
    pthread_mutex_lock(&drainer.life);
    if (!drainer.running) {
        rc = -pthread_create(&drainer.thread, NULL, drain_thread, NULL);
        drainer.running = rc == 0;
    }
    if (rc == 0) {
        pthread_mutex_lock(&drainer.mu);
        e->next_engine = drainer.engines;
        drainer.engines = e;
        pthread_mutex_unlock(&drainer.mu);
    }
    pthread_mutex_unlock(&drainer.life);
    return rc;
}

/* Once the thread is done with e (drained, or failed); the last engine
 * out stops the thread. */
static void detach(struct abt_engine *e)
{
    pthread_mutex_lock(&drainer.life);
    pthread_mutex_lock(&drainer.mu);
    pthread_cond_signal(&drainer.work);     /* append may have left it asleep */
    while (e->head || e->head_busy)
        pthread_cond_wait(&e->progress, &drainer.mu);
    struct abt_engine **p = &drainer.engines;
    while (*p != e)
        p = &(*p)->next_engine;
    *p = e->next_engine;
    if (drainer.cursor == e)
        drainer.cursor = NULL;
    int last = drainer.engines == NULL;
    drainer.stop = last;
    pthread_cond_signal(&drainer.work);
    pthread_mutex_unlock(&drainer.mu);
    if (last) {
        pthread_join(drainer.thread, NULL);
        drainer.running = drainer.stop = 0;
    }
    pthread_mutex_unlock(&drainer.life);
}

int abt_engine_create(struct abt_engine **ep, const struct abt_config *cfg, struct abt_sink sink)
{
    struct abt_engine *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return -ENOMEM;
    e->cfg = *cfg;
    e->sink = sink;
    abt_pool_init(&e->pool, cfg->buffer_size, cfg->max_memory);
    uint64_t bounce = e->pool.buffer_size ? e->pool.buffer_size : cfg->buffer_size;
    e->stats.buffer_size = bounce;
    e->cfg.buffer_size = bounce;
    abt_phases_init(&e->phases, cfg->phase_gap);
    e->stage.fd = -1;
    int rc = -ENOMEM;
    e->bounce = malloc(bounce);
    if (e->bounce == NULL)
        goto fail_bounce;
    if (sink.ops->pwrite_pieces) {
        e->batch = malloc(ABT_SINK_MAX_PIECES * sizeof *e->batch);
        if (e->batch == NULL)
            goto fail_batch;
    }
    if (cfg->stage_dir) {
        rc = abt_stage_open(&e->stage, cfg->stage_dir);
        if (rc != 0)
            goto fail_stage;
        e->have_stage = 1;
    }
    e->cfg.stage_dir = NULL;    /* the caller's string: used only here */
    pthread_cond_init(&e->progress, NULL);
    e->threaded = sink.ops->thread_safe;
    if (e->threaded) {
        rc = attach(e);
        if (rc != 0)
            goto fail_thread;
    }
    *ep = e;
    return 0;

  fail_thread:
    pthread_cond_destroy(&e->progress);
    abt_stage_close(&e->stage);
  fail_stage:
    free(e->batch);
  fail_batch:
    free(e->bounce);
  fail_bounce:
    free(e);
    return rc;
}

/* Without a thread the caller drains; with one it waits for progress. */
static void wait_progress(struct abt_engine *e)
{
    double t0 = abt_now();
    pthread_cond_signal(&drainer.work);     /* append may have left it asleep */
    if (e->threaded)
        pthread_cond_wait(&e->progress, &drainer.mu);
    else if (e->head)
        drain_head(e);
    e->stats.wait_seconds += abt_now() - t0;
}

/* Has the application computed between its outputs (or said it will)?
 * Before that, nothing is known to overlap the drain: the first output,
 * or a writer that never pauses (IOR's pattern). */
static int computes(const struct abt_engine *e)
{
    return e->cfg.compute_interval > 0 || e->phases.interval >= 0;
}

/* Does the computation overlap the drain: the last one emptied the queue
 * before this phase began, and was long enough to drain the last phase's
 * output (which says so where that phase was written through)? A writer
 * that only waits for slower ones between its outputs (IOR's processes at
 * their snapshots' barriers) seems to compute, but its queue grows. */
static int drain_overlapped(const struct abt_engine *e)
{
    if (e->cfg.compute_interval > 0)
        return 1;
    return e->phases.interval >= 0 && e->began_drained &&
           e->phases.interval * e->bx.bytes_per_s >= (double) e->phases.last_bytes;
}

/* With nothing to overlap, a buffered byte costs its copy on top of its
 * drain, and where the drain shares the cores (loopback, a fast link) the
 * copy is then more than a tenth of the work unless it runs ten times as
 * fast. IOR's writer (1 MiB calls, 4 processes on 2 cores, loopback rfs:)
 * buffered everything and reached 0.6-0.75 of rfs: alone. */
#define ABT_COPY_OVER_DRAIN 10

/* Does buffering only add work: the sink takes data at least as fast as
 * the buffers do, or, where no computation has overlapped the drain, at a
 * tenth of their rate (both measured)? */
static int buffering_adds_work(const struct abt_engine *e)
{
    double bx = e->bx.bytes_per_s, bc = e->bc.bytes_per_s;
    return bx > 0 && bc > 0 && bx * (drain_overlapped(e) ? 1 : ABT_COPY_OVER_DRAIN) >= bc;
}

/* Can the cache file take data faster than the drain? Not measured yet:
 * try it (that measures it). */
static int staging_helps(const struct abt_engine *e)
{
    return e->have_stage && !e->stage.failed &&
           (e->bw.bytes_per_s <= 0 || e->bx.bytes_per_s < e->bw.bytes_per_s);
}

/*
 * Has this output phase staged all it should? Staging lets a phase end
 * sooner because the drain empties the cache file while the application
 * computes afterwards. Before any computation has been seen (the first
 * output, or a writer that never pauses, IOR's pattern) none is known to
 * come: a phase stages at most the memory's worth, then writes through,
 * rather than copy every byte twice more and drain it all at close.
 */
static int phase_staged_enough(const struct abt_engine *e)
{
    return e->phases.depth > 0 && !computes(e) &&
           e->phase_staged >= e->pool.max_buffers * e->pool.buffer_size;
}

/* Foreground staging of up to one buffer's worth; 0 if the cache file
 * cannot take it (the caller then waits for memory). */
static uint64_t stage_foreground(struct abt_engine *e, uint64_t offset, const void *buf,
                                 uint64_t len)
{
    if (!e->have_stage || e->stage.failed)
        return 0;
    struct abt_rec *r = malloc(sizeof(*r));
    if (r == NULL)
        return 0;
    uint64_t n = len < e->cfg.buffer_size ? len : e->cfg.buffer_size;
    uint64_t at = e->stage.end;
    e->stage.end += n;
    e->stage.writers++;
    unlock(e);
    double t0 = abt_now();
    int rc = abt_stage_write(&e->stage, at, buf, n);
    lock(e);
    e->stage.writers--;
    if (rc != 0 || e->err) {
        e->stage.failed |= rc != 0;
        free(r);
        return 0;
    }
    *r = (struct abt_rec) { .offset = offset, .len = n, .stage_at = at };
    e->stage.records++;
    e->stats.bytes_staged_fg += n;
    e->phase_staged += n;
    observe(&e->bw, n, abt_now() - t0);
    append(e, r);
    return n;
}

/* A new buffer to fill, or NULL at the cap. */
static struct abt_buf *next_fill(struct abt_engine *e)
{
    struct abt_buf *old = e->fill;
    e->fill = abt_pool_reserve(&e->pool);
    if (old && old->pending == 0)
        abt_pool_release(&e->pool, old);
    uint64_t mem = e->pool.allocated * e->pool.buffer_size;
    if (mem > e->stats.peak_memory)
        e->stats.peak_memory = mem;
    return e->fill;
}

/* Copies up to the room left in the fill buffer; 0 if there is none. */
static uint64_t buffer_piece(struct abt_engine *e, uint64_t offset, const void *buf,
                             uint64_t len)
{
    struct abt_buf *b = e->fill;
    if (b == NULL || b->used == e->pool.buffer_size)
        b = next_fill(e);
    if (b == NULL)
        return 0;
    struct abt_rec *r = malloc(sizeof(*r));
    if (r == NULL)
        return 0;
    uint64_t room = e->pool.buffer_size - b->used;
    uint64_t n = len < room ? len : room;
    uint8_t *dst = b->data + b->used;
    b->used += n;
    b->pending++;
    if (n >= ABT_RATE_MIN_BYTES) {  /* timed, the lock let go meanwhile */
        unlock(e);
        double t0 = abt_now();
        memcpy(dst, buf, n);
        double dt = abt_now() - t0;
        lock(e);
        observe(&e->bc, n, dt);
    } else {
        memcpy(dst, buf, n);
    }
    struct abt_rec *t = e->tail;
    if (t && t->buf == b && t->data + t->len == dst && t->offset + t->len == offset &&
        t->len + n <= ABT_RECORD_MERGE_MAX &&
        !(e->head_busy && t == e->busy_last)) {   /* the tail is in the batch */
        t->len += n;            /* contiguous in memory and in the file */
        e->hi = offset + n > e->hi ? offset + n : e->hi;
        b->pending--;
        free(r);
    } else {
        *r = (struct abt_rec) { .offset = offset, .len = n, .buf = b, .data = dst };
        append(e, r);
    }
    e->stats.bytes_buffered += n;
    return n;
}

/* Nothing queued to wait for, and no memory and no cache file (a pool of
 * zero buffers, a full stage directory) or a write-through phase: the
 * data goes straight to the sink, the drain being idle. */
static uint64_t write_through(struct abt_engine *e, uint64_t offset, const void *buf,
                              uint64_t len)
{
    e->head_busy = 1;
    unlock(e);
    double t0 = abt_now();
    int rc = e->sink.ops->pwrite(e->sink.ctx, buf, len, offset);
    double dt = abt_now() - t0;
    lock(e);
    e->head_busy = 0;
    e->stats.drain_seconds += dt;
    if (rc != 0) {
        fail(e, rc);
        return 0;
    }
    observe(&e->bx, len, dt);
    e->stats.bytes_drained += len;
    e->stats.bytes_through += len;
    e->stats.sink_writes++;
    return len;
}

/* Is this write the drain's first measurement: a large one in an output
 * phase, nothing queued, no rate known and no computation seen (the first
 * output, or a writer that never pauses)? It then goes to the sink from
 * the caller, at the cost it has without abt. Buffered instead, IOR's
 * writer (4 processes on 2 cores, loopback rfs:) filled its 64 MiB of
 * buffers before the drain thread got a core to measure anything, and
 * reached 0.84-0.87 of rfs: alone where writing through all of it gave
 * 0.99. A periodic writer pays one write at the sink's pace in its first
 * output (none where abt_compute_interval says it computes). */
static int measures_drain(const struct abt_engine *e, uint64_t len)
{
    return e->phases.depth > 0 && len >= ABT_RATE_MIN_BYTES && e->head == NULL &&
           !e->head_busy && e->bx.bytes_per_s <= 0 && !computes(e);
}

/* Copies into the buffers, or stages, or (e->through) writes through.
 * A write the drain would batch is buffered even while the phase writes
 * through, waiting for room: written through alone, each would cost the
 * sink's per-call round trip (a view of 512-byte runs over rfs:, 4096 of
 * them a call), where the drain sends thousands in one. */
int abt_write(struct abt_engine *e, uint64_t offset, const void *buf, uint64_t len)
{
    const uint8_t *src = buf;
    lock(e);
    e->stats.writes++;
    e->phases.bytes += len;
    if (e->phases.depth > 0 && len >= ABT_RATE_MIN_BYTES && buffering_adds_work(e))
        e->through = 1;
    int batched = e->batch && len < ABT_BATCH_RECORD_MAX;
    if (e->err == 0 && measures_drain(e, len))
        len -= write_through(e, offset, src, len);
    while (len > 0 && e->err == 0) {
        uint64_t n = e->through && !batched ? 0 : buffer_piece(e, offset, src, len);
        if (n == 0 && !e->through && (!staging_helps(e) || phase_staged_enough(e)))
            e->through = e->phases.depth > 0;
        if (n == 0 && !e->through)
            n = stage_foreground(e, offset, src, len);
        if (n == 0 && e->head == NULL && !e->head_busy)
            n = write_through(e, offset, src, len);
        if (n == 0) {
            if (e->err == 0)        /* a failed write through has nothing to wait for */
                wait_progress(e);
            continue;
        }
        offset += n;
        src += n;
        len -= n;
    }
    int rc = e->err;
    unlock(e);
    return rc;
}

int abt_overlaps(struct abt_engine *e, uint64_t offset, uint64_t len)
{
    lock(e);
    /* offset + len may not fit: compare the distance instead */
    int hit = e->head && offset < e->hi && (offset >= e->lo || len > e->lo - offset);
    unlock(e);
    return hit;
}

int abt_pending(struct abt_engine *e, uint64_t *lo, uint64_t *hi)
{
    lock(e);
    int pending = e->head != NULL;
    *lo = pending ? e->lo : 0;
    *hi = pending ? e->hi : 0;
    unlock(e);
    return pending;
}

/* Has everything written landed, and been released where leases are? */
static int landed(const struct abt_engine *e)
{
    return e->head == NULL && !(e->sink.ops->release && landed_lease(e) > e->lease_released);
}

int abt_flush(struct abt_engine *e)
{
    lock(e);
    while (!landed(e) && e->err == 0)
        wait_progress(e);
    int rc = e->err;
    unlock(e);
    return rc;
}

double abt_drain_rate(struct abt_engine *e)
{
    lock(e);
    double rate = e->bx.bytes_per_s;
    unlock(e);
    return rate;
}

int abt_error(struct abt_engine *e)
{
    lock(e);
    int rc = e->err;
    unlock(e);
    return rc;
}

void abt_phase_begin(struct abt_engine *e)
{
    lock(e);
    double begun = e->phases.phase_begin;
    abt_phases_begin(&e->phases, abt_now());
    if (e->phases.phase_begin != begun) {
        e->through = 0;         /* a new output phase: buffering may help again */
        e->began_drained = e->head == NULL;
        e->phase_staged = 0;
    }
    unlock(e);
}

void abt_phase_end(struct abt_engine *e)
{
    lock(e);
    abt_phases_end(&e->phases, abt_now());
    /* computation: staging may start, if there is anything to stage or
     * drain (woken after every call written through, for nothing, the
     * thread cost IOR's writer, 4 processes on 2 cores, 30% of its rate) */
    if (e->head)
        pthread_cond_signal(&drainer.work);
    unlock(e);
}

void abt_lease_begin(struct abt_engine *e, uint64_t id)
{
    lock(e);
    e->lease_open = e->lease_last = id;
    e->stats.leases++;
    unlock(e);
}

void abt_lease_end(struct abt_engine *e)
{
    lock(e);
    e->lease_open = 0;
    if (release_due(e))
        pthread_cond_signal(&drainer.work);
    unlock(e);
}

void abt_get_stats(struct abt_engine *e, struct abt_stats *st)
{
    lock(e);
    *st = e->stats;
    st->stage_failed = e->stage.failed;
    unlock(e);
}

void abt_engine_destroy(struct abt_engine *e)
{
    if (e->threaded)
        detach(e);
    lock(e);
    while (e->head)             /* unthreaded and never flushed */
        pop_head(e);
    unlock(e);
    e->sink.ops->close(e->sink.ctx);
    if (e->fill)
        abt_pool_release(&e->pool, e->fill);
    abt_pool_destroy(&e->pool);
    abt_stage_close(&e->stage);
    pthread_cond_destroy(&e->progress);
    free(e->batch);
    free(e->bounce);
    free(e);
}
