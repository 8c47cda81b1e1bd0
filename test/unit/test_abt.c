/*
 * The ABT engine without MPI: random overlapping writes through a small
 * pool (foreground staging, waiting for space, write-through) compared
 * byte for byte with the same writes applied in order to memory; an output
 * phase larger than the pool written through once the queue has drained
 * (and staged instead where the cache file is faster than the sink and a
 * computation is to come; before one, only the memory's worth); a writer
 * that never pauses written through once the sink is within a tenth of
 * the copy's rate, also after pauses that drain nothing; writes merged
 * into records of 1 MiB at most;
 * background staging during a computation phase; small records drained in
 * batches of pieces; the staging model; a failing sink
 * (the error is kept and returned, nothing hangs); a full cache file
 * (EFBIG under RLIMIT_FSIZE); and the rfs sink against a live server.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <cmocka.h>

#include "abt/abt.h"
#include "abt/abt_model.h"
#include "proto/rfs_client.h"
#include "unit_util.h"

#define FILE_SPAN (4u << 20)

struct fixture {
    char dir[64];
    char path[128];
    char stage[128];
    uint8_t *expect;            /* the file as the writes so far make it */
    uint64_t end;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    strcpy(f->dir, "/tmp/test_abt.XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->path, sizeof(f->path), "%s/file", f->dir);
    snprintf(f->stage, sizeof(f->stage), "%s", f->dir);
    int fd = open(f->path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
    f->expect = calloc(1, FILE_SPAN);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    remove_tree(f->dir);
    free(f->expect);
    free(f);
    return 0;
}

/* A sink for faults and slowness: the posix sink underneath, failing with
 * EIO from the fail_after-th write on, sleeping delay_us per write. */
struct faulty {
    struct abt_sink inner;
    int writes, fail_after;
    long delay_us;
};

static int faulty_pwrite(void *ctx, const void *buf, uint64_t len, uint64_t off)
{
    struct faulty *t = ctx;
    if (t->fail_after >= 0 && t->writes++ >= t->fail_after)
        return -EIO;
    if (t->delay_us) {
        struct timespec ts = { 0, t->delay_us * 1000 };
        nanosleep(&ts, NULL);
    }
    return t->inner.ops->pwrite(t->inner.ctx, buf, len, off);
}

static void faulty_close(void *ctx)
{
    struct faulty *t = ctx;
    t->inner.ops->close(t->inner.ctx);
    free(t);
}

static const struct abt_sink_ops faulty_ops = {
    "faulty", 1, faulty_pwrite, NULL, faulty_close, NULL
};

/* Batches of the pieces sink, and the pieces in them. */
static int batches, batched_pieces;

/* The pieces of one call must not overlap (the engine promises it): they
 * are written last first, so a batch that relied on their order would
 * leave the wrong bytes in the file. The delay is once per call, as a
 * round trip is. Only the drain thread calls it. */
static int pieces_pwrite(void *ctx, const struct abt_piece *p, int n)
{
    struct faulty *t = ctx;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (p[i].offset < p[j].offset + p[j].len && p[j].offset < p[i].offset + p[i].len)
                return -EINVAL;
    batches++;
    batched_pieces += n;
    struct timespec ts = { 0, t->delay_us * 1000 };
    nanosleep(&ts, NULL);
    for (int i = n - 1; i >= 0; i--) {
        int rc = t->inner.ops->pwrite(t->inner.ctx, p[i].data, p[i].len, p[i].offset);
        if (rc)
            return rc;
    }
    return 0;
}

static const struct abt_sink_ops pieces_ops = {
    "pieces", 1, faulty_pwrite, pieces_pwrite, faulty_close, NULL
};

static struct abt_sink sink_with(const struct abt_sink_ops *ops, const char *path,
                                 int fail_after, long delay_us)
{
    struct faulty *t = calloc(1, sizeof(*t));
    assert_int_equal(abt_sink_posix_open(&t->inner, path), 0);
    t->fail_after = fail_after;
    t->delay_us = delay_us;
    return (struct abt_sink) { ops, t };
}

static struct abt_sink faulty_sink(const char *path, int fail_after, long delay_us)
{
    return sink_with(&faulty_ops, path, fail_after, delay_us);
}

static struct abt_config config(uint64_t buffer, uint64_t memory, const char *stage)
{
    return (struct abt_config) { .buffer_size = buffer, .max_memory = memory,
                                 .stage_dir = stage, .phase_gap = 0.001 };
}

/* n random writes (some overlapping, some adjacent) into the engine and
 * into f->expect. */
static void random_writes(struct abt_engine *e, struct fixture *f, int n, uint64_t maxlen,
                          unsigned seed)
{
    uint8_t *src = malloc(maxlen);
    srand(seed);
    uint64_t next = 0;
    for (int i = 0; i < n; i++) {
        uint64_t len = 1 + (uint64_t) rand() % maxlen;
        uint64_t off = (i % 3 == 0) ? next : (uint64_t) rand() % (FILE_SPAN - len);
        if (off + len > FILE_SPAN)
            off = 0;
        fill_random(src, len, seed + (unsigned) i);
        assert_int_equal(abt_write(e, off, src, len), 0);
        memcpy(f->expect + off, src, len);
        next = off + len;
        f->end = off + len > f->end ? off + len : f->end;
    }
    free(src);
}

static void check_file(const struct fixture *f)
{
    size_t len;
    uint8_t *got = read_file(f->path, &len);
    assert_non_null(got);
    assert_int_equal(len, f->end);
    assert_memory_equal(got, f->expect, f->end);
    free(got);
}

/* Drains and destroys e, then checks the file; *st: the engine's last stats. */
static void finish(struct abt_engine *e, const struct fixture *f, struct abt_stats *st)
{
    assert_int_equal(abt_flush(e), 0);
    abt_get_stats(e, st);
    abt_engine_destroy(e);
    check_file(f);
}

/* delay_us: each write of the sink takes that long, so the pool fills. */
static void run_random(struct fixture *f, struct abt_config cfg, long delay_us,
                       struct abt_stats *st)
{
    struct abt_engine *e;
    assert_int_equal(abt_engine_create(&e, &cfg, faulty_sink(f->path, -1, delay_us)), 0);
    random_writes(e, f, 1500, 96 << 10, 7);
    assert_int_equal(abt_flush(e), 0);
    uint64_t lo, hi;
    assert_int_equal(abt_pending(e, &lo, &hi), 0);
    assert_int_equal(hi, 0);
    abt_get_stats(e, st);
    abt_engine_destroy(e);
    check_file(f);
}

static void test_random_writes_in_order(void **state)
{
    struct fixture *f = *state;
    struct abt_stats st;
    run_random(f, config(1 << 20, 64 << 20, NULL), 0, &st);
    assert_int_equal(st.bytes_staged_fg, 0);
    assert_true(st.bytes_drained > 0);
}

/* Runs of a view: 512 bytes every KiB, in three passes each 100 bytes
 * further on, so a pass overlaps the one before it. */
static void strided_writes(struct abt_engine *e, struct fixture *f)
{
    uint8_t src[512];
    for (int i = 0; i < 3000; i++) {
        uint64_t off = (uint64_t) (i % 1000) * 1024 + (uint64_t) (i / 1000) * 100;
        fill_random(src, sizeof src, (unsigned) i);
        assert_int_equal(abt_write(e, off, src, sizeof src), 0);
        memcpy(f->expect + off, src, sizeof src);
        f->end = off + sizeof src > f->end ? off + sizeof src : f->end;
    }
}

/* A view's small runs to a sink that takes several pieces a call (rfs: one
 * list request) and is slow, so records queue up: they drain in batches,
 * and the file is as the writes made it in order although each batch is
 * written backwards (the passes overlap). */
static void test_batched_drain(void **state)
{
    struct fixture *f = *state;
    struct abt_config cfg = config(64 << 10, 8 << 20, NULL);
    struct abt_engine *e;
    batches = batched_pieces = 0;
    assert_int_equal(abt_engine_create(&e, &cfg, sink_with(&pieces_ops, f->path, -1, 2000)),
                     0);
    strided_writes(e, f);
    struct abt_stats st;
    finish(e, f, &st);
    assert_true(batches > 0);
    assert_true(batched_pieces > 2 * batches);
    assert_true(st.sink_writes < st.writes / 2);
}

/* A phase of 512-byte runs that fills a small pool and a slow batching
 * sink: what is staged to the cache file drains in batches read back
 * together, and once the phase writes through, the runs are still
 * buffered (they wait for room) rather than written one a call. A few
 * tens of sink calls for 600 runs; one per run if either were not so. */
static void test_small_runs_batched(void **state)
{
    struct fixture *f = *state;
    struct abt_config cfg = config(16 << 10, 32 << 10, f->stage);
    struct abt_engine *e;
    uint8_t run[512];
    batches = batched_pieces = 0;
    assert_int_equal(abt_engine_create(&e, &cfg, sink_with(&pieces_ops, f->path, -1, 2000)),
                     0);
    abt_phase_begin(e);
    for (uint64_t i = 0; i < 600; i++) {
        fill_random(run, sizeof run, (unsigned) i);
        assert_int_equal(abt_write(e, i * 1024, run, sizeof run), 0);
        memcpy(f->expect + i * 1024, run, sizeof run);
    }
    abt_phase_end(e);
    f->end = 599 * 1024 + sizeof run;
    struct abt_stats st;
    finish(e, f, &st);
    assert_true(st.bytes_staged_fg > 0);
    assert_int_equal(st.bytes_through, 0);
    assert_true(st.sink_writes < 60);
}

/* Inside a write call the drain thread is not woken record by record:
 * runs into a buffer that does not fill reach the sink after the call
 * (abt_phase_end), in one batch. A first write, drained, leaves the
 * thread asleep, so that only a wake-up could start it. */
static void test_drain_after_call(void **state)
{
    struct fixture *f = *state;
    struct abt_config cfg = config(1 << 20, 8 << 20, NULL);
    struct abt_engine *e;
    uint8_t run[512];
    assert_int_equal(abt_engine_create(&e, &cfg, sink_with(&pieces_ops, f->path, -1, 0)), 0);
    for (uint64_t i = 0; i <= 256; i++) {
        if (i == 1)
            abt_phase_begin(e);
        fill_random(run, sizeof run, (unsigned) i);
        assert_int_equal(abt_write(e, i * 1024, run, sizeof run), 0);
        memcpy(f->expect + i * 1024, run, sizeof run);
        if (i == 0) {
            assert_int_equal(abt_flush(e), 0);
            batches = batched_pieces = 0;
        }
    }
    f->end = 256 * 1024 + sizeof run;
    struct timespec ts = { 0, 50 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    struct abt_stats st;
    abt_get_stats(e, &st);
    assert_int_equal(st.sink_writes, 1);     /* the first write's */
    abt_phase_end(e);
    assert_int_equal(abt_flush(e), 0);
    abt_engine_destroy(e);
    check_file(f);
    assert_int_equal(batches, 1);
    assert_int_equal(batched_pieces, 256);
}

/* A pool of four 32 KiB buffers, a sink slower than the writer and a cache
 * file: data is staged (a fast sink left it to the scheduler's luck). No
 * gap between writes counts as computation: a writer the scheduler paused
 * for a millisecond (TSan on a loaded machine) let the drain thread stage
 * in the background, so nothing was left to stage in the foreground. */
static void test_foreground_staging(void **state)
{
    struct fixture *f = *state;
    struct abt_stats st;
    struct abt_config cfg = config(32 << 10, 128 << 10, f->stage);
    cfg.phase_gap = 60;
    run_random(f, cfg, 500, &st);
    assert_true(st.bytes_staged_fg > 0);
    assert_false(st.stage_failed);
    assert_true(st.peak_memory <= 128 << 10);
}

/* No cache file: the application waits for the drain; a write larger
 * than all the memory goes through buffer by buffer. */
static void test_cap_smaller_than_write(void **state)
{
    struct fixture *f = *state;
    struct abt_stats st;
    run_random(f, config(1 << 20, 48 << 10, NULL), 0, &st);
    assert_true(st.peak_memory <= 48 << 10);
    assert_int_equal(st.buffer_size, 48 << 10);
}

/* No memory at all and no cache file: write-through. */
static void test_zero_memory(void **state)
{
    struct fixture *f = *state;
    struct abt_stats st;
    run_random(f, config(1 << 20, 0, NULL), 0, &st);
    assert_int_equal(st.bytes_buffered, 0);
}

/* Two files served by the one drain thread, written alternately, the
 * second one destroyed (and the thread kept for the first) midway. */
static void test_two_files(void **state)
{
    struct fixture *f = *state;
    char other[160];
    snprintf(other, sizeof other, "%s/other", f->dir);
    int fd = open(other, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
    struct abt_config cfg = config(64 << 10, 256 << 10, NULL);
    struct abt_engine *a, *b;
    assert_int_equal(abt_engine_create(&a, &cfg, faulty_sink(f->path, -1, 50)), 0);
    assert_int_equal(abt_engine_create(&b, &cfg, faulty_sink(other, -1, 50)), 0);
    uint8_t buf[10000];
    for (int i = 0; i < 200; i++) {
        fill_random(buf, sizeof buf, (unsigned) i);
        assert_int_equal(abt_write(a, (uint64_t) i * sizeof buf, buf, sizeof buf), 0);
        memcpy(f->expect + i * sizeof buf, buf, sizeof buf);
        if (i < 100)
            assert_int_equal(abt_write(b, (uint64_t) i, buf, 1), 0);
        if (i == 100)
            abt_engine_destroy(b);
    }
    f->end = 200 * sizeof buf;
    assert_int_equal(abt_flush(a), 0);
    abt_engine_destroy(a);
    check_file(f);
    size_t len;
    uint8_t *got = read_file(other, &len);
    assert_int_equal(len, 100);
    free(got);
}

/* The bounds of what is queued, as the driver's ordering of handles and
 * processes uses them; the slow sink keeps both records queued. */
static void test_pending_bounds(void **state)
{
    struct fixture *f = *state;
    struct abt_config cfg = config(4096, 1 << 20, NULL);
    struct abt_engine *e;
    char data[100];
    uint64_t lo, hi;
    memset(data, 7, sizeof data);
    assert_int_equal(abt_engine_create(&e, &cfg, faulty_sink(f->path, -1, 50000)), 0);
    assert_int_equal(abt_pending(e, &lo, &hi), 0);
    assert_int_equal(abt_write(e, 100, data, sizeof data), 0);
    assert_int_equal(abt_write(e, 1000000, data, sizeof data), 0);
    assert_int_equal(abt_pending(e, &lo, &hi), 1);
    assert_int_equal(lo, 100);
    assert_int_equal(hi, 1000100);
    assert_true(abt_overlaps(e, 50, 51));
    assert_false(abt_overlaps(e, 50, 50));
    assert_true(abt_overlaps(e, 0, UINT64_MAX));
    assert_false(abt_overlaps(e, 1000100, UINT64_MAX - 1000100));
    assert_true(abt_overlaps(e, 1000099, UINT64_MAX - 1000099));
    assert_int_equal(abt_flush(e), 0);
    assert_int_equal(abt_pending(e, &lo, &hi), 0);
    assert_false(abt_overlaps(e, 0, UINT64_MAX));
    abt_engine_destroy(e);
}

static void test_failing_sink(void **state)
{
    struct fixture *f = *state;
    struct abt_config cfg = config(4 << 10, 16 << 10, NULL);
    struct abt_engine *e;
    assert_int_equal(abt_engine_create(&e, &cfg, faulty_sink(f->path, 3, 0)), 0);
    uint8_t buf[3000];
    memset(buf, 1, sizeof(buf));
    int rc = 0;
    for (int i = 0; i < 200 && rc == 0; i++)
        rc = abt_write(e, (uint64_t) i * 5000, buf, sizeof(buf));
    assert_true(rc == 0 || rc == -EIO);
    assert_int_equal(abt_flush(e), -EIO);
    assert_int_equal(abt_write(e, 0, buf, 10), -EIO);
    assert_int_equal(abt_error(e), -EIO);
    abt_engine_destroy(e);
}

/* Written through (no memory for buffers), a failing sink call fails the
 * write that made it and every later one, at once: the engine before the
 * fix then waited for a drain that had nothing to do, for ever. */
static void test_failing_sink_through(void **state)
{
    struct fixture *f = *state;
    struct abt_config cfg = config(4 << 10, 0, NULL);
    struct abt_engine *e;
    assert_int_equal(abt_engine_create(&e, &cfg, faulty_sink(f->path, 2, 0)), 0);
    uint8_t buf[3000];
    memset(buf, 1, sizeof(buf));
    assert_int_equal(abt_write(e, 0, buf, sizeof(buf)), 0);
    assert_int_equal(abt_write(e, 5000, buf, sizeof(buf)), 0);
    assert_int_equal(abt_write(e, 10000, buf, sizeof(buf)), -EIO);
    assert_int_equal(abt_write(e, 15000, buf, sizeof(buf)), -EIO);
    assert_int_equal(abt_flush(e), -EIO);
    abt_engine_destroy(e);
}

/* The cache file cannot grow past RLIMIT_FSIZE (EFBIG, as a full disk
 * would give ENOSPC): staging stops and the data waits for memory. */
static void test_stage_full(void **state)
{
    struct fixture *f = *state;
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = FILE_SPAN;   /* the file itself stays below it */
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    struct abt_config cfg = config(16 << 10, 64 << 10, f->stage);
    struct abt_engine *e;
    /* the drain (16 MB/s) far slower than staging: the cache file fills */
    assert_int_equal(abt_engine_create(&e, &cfg, faulty_sink(f->path, -1, 1000)), 0);
    random_writes(e, f, 300, 64 << 10, 11);
    assert_int_equal(abt_flush(e), 0);
    struct abt_stats st;
    abt_get_stats(e, &st);
    abt_engine_destroy(e);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    check_file(f);
    assert_true(st.bytes_staged_fg > 0);
    assert_true(st.stage_failed);
    assert_true(st.wait_seconds > 0);
}

/* One output phase fills the pool; during the computation after it the
 * thread stages buffers to the cache file (the next output is expected in
 * 1 ms and the sink is slow), and the data still arrives intact. */
static void test_background_staging(void **state)
{
    struct fixture *f = *state;
    struct abt_config cfg = config(16 << 10, 256 << 10, f->stage);
    cfg.compute_interval = 0.001;
    cfg.output_size = 256 << 10;
    struct abt_engine *e;
    assert_int_equal(abt_engine_create(&e, &cfg, faulty_sink(f->path, -1, 2000)), 0);
    abt_phase_begin(e);
    random_writes(e, f, 64, 8 << 10, 13);
    abt_phase_end(e);
    struct timespec ts = { 0, 50 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    struct abt_stats st;
    finish(e, f, &st);
    assert_true(st.bytes_staged_bg > 0);
}

/* An output phase larger than the pool with no cache file: once the pool
 * is full the rest of the phase goes straight to the sink after the queue
 * (so the writes keep their order); the next phase buffers again. */
static void test_write_through_phase(void **state)
{
    struct fixture *f = *state;
    struct abt_config cfg = config(16 << 10, 64 << 10, NULL);
    struct abt_engine *e;
    assert_int_equal(abt_engine_create(&e, &cfg, faulty_sink(f->path, -1, 500)), 0);
    abt_phase_begin(e);
    random_writes(e, f, 300, 8 << 10, 17);
    abt_phase_end(e);
    struct abt_stats st;
    abt_get_stats(e, &st);
    assert_true(st.bytes_through > 0);
    assert_true(st.peak_memory <= 64 << 10);
    struct timespec ts = { 0, 20 * 1000 * 1000 };  /* computation: past phase_gap */
    nanosleep(&ts, NULL);
    uint64_t buffered = st.bytes_buffered;
    abt_phase_begin(e);
    random_writes(e, f, 4, 4 << 10, 19);
    abt_phase_end(e);
    abt_get_stats(e, &st);
    assert_true(st.bytes_buffered > buffered);
    assert_int_equal(abt_flush(e), 0);
    abt_engine_destroy(e);
    check_file(f);
}

/* A sink into memory (the test's), each write a copy after a delay spent
 * on the core. */
struct mem_sink {
    uint8_t *data;
    uint64_t size;
    long delay_us;
    uint64_t writes, longest;   /* sink calls, and the longest */
    /* leases: lease i (from 1) writes piece bytes of expect at (i - 1) * piece */
    const uint8_t *expect;
    uint64_t piece, released;
    int early;                  /* a release came before its writes landed */
    atomic_int hold;            /* the drain thread waits while set */
    pthread_t app;              /* the test's thread, never held */
};

static int mem_pwrite(void *ctx, const void *buf, uint64_t len, uint64_t off)
{
    struct mem_sink *m = ctx;
    if (off > m->size || len > m->size - off)
        return -EFBIG;
    while (atomic_load(&m->hold) && !pthread_equal(pthread_self(), m->app)) {
        struct timespec ts = { 0, 100 * 1000 };
        nanosleep(&ts, NULL);
    }
    double until = abt_now() + 1e-6 * (double) m->delay_us;
    while (abt_now() < until)
        ;                       /* a sleep here could last a timer tick */
    memcpy(m->data + off, buf, len);
    m->writes++;
    m->longest = len > m->longest ? len : m->longest;
    return 0;
}

static void mem_close(void *ctx)
{
    free(ctx);
}

static const struct abt_sink_ops mem_ops = { "memory", 1, mem_pwrite, NULL, mem_close, NULL };

static int mem_release(void *ctx, uint64_t upto)
{
    struct mem_sink *m = ctx;
    if (upto <= m->released || memcmp(m->data, m->expect, upto * m->piece) != 0)
        m->early = 1;
    m->released = upto;
    return 0;
}

static const struct abt_sink_ops lease_ops = {
    "leases", 1, mem_pwrite, NULL, mem_close, mem_release
};

/* A memory sink of size bytes, touched so that its copies fault no page
 * in; the caller frees its data after the engine has closed it. */
static struct mem_sink *mem_sink_new(uint64_t size)
{
    struct mem_sink *m = calloc(1, sizeof *m);
    m->size = size;
    m->data = malloc(size);
    memset(m->data, 0, size);
    return m;
}

/* size bytes of test data, made before the writes so that the writer is
 * as fast as its copies: seed i + 1 for the i-th MiB. */
static uint8_t *mib_data(uint64_t size)
{
    uint8_t *src = malloc(size);
    for (uint64_t at = 0; at < size; at += 1 << 20)
        fill_random(src + at, size - at < (1 << 20) ? size - at : 1 << 20,
                    (unsigned) (at >> 20) + 1);
    return src;
}

/* Microseconds to copy len bytes between pages already touched, as the
 * engine copies into the buffers it allocates here (the process's earlier
 * tests leave malloc reusing touched memory): the median of five tries. A
 * sink that takes five times that and a copy of its own is 3-6 times
 * slower than the engine's copies (2-3 GB/s against 9 here). */
static long copy_us(uint8_t *dst, const uint8_t *src, uint64_t len)
{
    double t[5];
    for (int i = 0; i < 5; i++) {
        double t0 = abt_now();
        memcpy(dst, src, len);
        t[i] = abt_now() - t0;
        assert_int_equal(dst[len - 1], src[len - 1]);
    }
    for (int i = 1; i < 5; i++)     /* insertion sort */
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return (long) (1e6 * t[2]) + 1;
}

/* A writer that never pauses (IOR's pattern: 1 MiB calls back to back, no
 * computation seen) to a sink 3-6 times slower than the copy: once both
 * rates are measured the rest of the phase goes through, since buffering
 * would only add the copy to the drain's work. The rule before (through
 * only where the sink is as fast as the copy) buffered all of it. */
static void test_no_computation_through(void **state)
{
    (void) state;
    enum { MIB = 1 << 20, WRITES = 32 };
    uint8_t *src = mib_data((uint64_t) WRITES * MIB);
    struct mem_sink *m = mem_sink_new((uint64_t) WRITES * MIB);
    uint8_t *file = m->data;
    m->delay_us = 5 * copy_us(file, src, MIB);
    struct abt_config cfg = config(MIB, 64 * MIB, NULL);
    struct abt_engine *e;
    assert_int_equal(abt_engine_create(&e, &cfg, (struct abt_sink) { &mem_ops, m }), 0);
    abt_phase_begin(e);
    for (uint64_t at = 0; at < (uint64_t) WRITES * MIB; at += MIB) {
        assert_int_equal(abt_write(e, at, src + at, MIB), 0);
        if (at == 0)
            assert_int_equal(abt_flush(e), 0);      /* the drain's rate measured */
    }
    abt_phase_end(e);
    assert_int_equal(abt_flush(e), 0);
    struct abt_stats st;
    abt_get_stats(e, &st);
    abt_engine_destroy(e);
    assert_int_equal(st.bytes_through, (uint64_t) (WRITES - 1) * MIB);
    assert_memory_equal(file, src, (size_t) WRITES * MIB);
    free(file);
    free(src);
}

/* Before any rate is known and any computation seen, the first large
 * write of a phase goes to the sink from the caller and measures the
 * drain; a small one (its rate says nothing) is buffered, and so is the
 * first large write of a writer that says it computes. */
static void test_first_write_measures_drain(void **state)
{
    (void) state;
    enum { MIB = 1 << 20, SMALL = 4 << 10 };
    uint8_t *src = mib_data(2 * MIB);
    for (int says_computes = 0; says_computes < 2; says_computes++) {
        struct mem_sink *m = mem_sink_new(2 * MIB);
        uint8_t *file = m->data;
        struct abt_config cfg = config(MIB, 8 * MIB, NULL);
        cfg.compute_interval = says_computes ? 1.0 : 0;
        struct abt_engine *e;
        assert_int_equal(abt_engine_create(&e, &cfg, (struct abt_sink) { &mem_ops, m }), 0);
        abt_phase_begin(e);
        assert_int_equal(abt_write(e, 0, src, SMALL), 0);
        assert_int_equal(abt_flush(e), 0);
        assert_true(abt_drain_rate(e) == 0);    /* too small to measure */
        assert_int_equal(abt_write(e, MIB, src + MIB, MIB), 0);
        struct abt_stats st;
        abt_get_stats(e, &st);
        assert_int_equal(st.bytes_through, says_computes ? 0 : MIB);
        assert_int_equal(st.bytes_buffered, says_computes ? SMALL + MIB : SMALL);
        assert_int_equal(abt_write(e, SMALL, src + SMALL, MIB - SMALL), 0);
        abt_phase_end(e);
        assert_int_equal(abt_flush(e), 0);
        assert_true(abt_drain_rate(e) > 0);
        abt_engine_destroy(e);
        assert_memory_equal(file, src, 2 * MIB);
        free(file);
    }
    free(src);
}

/* A writer whose pauses do not drain what it buffered (IOR's processes
 * waiting at their snapshots' barriers; here the sink holds the drain
 * during the pauses): after a pause the next phase still finds the last
 * one queued, so that pause does not count as computation, and with the
 * sink within a tenth of the copy's rate the phase goes through. Before,
 * any pause longer than abt_phase_gap did, and a fast process buffered
 * every snapshot. */
static void test_pause_without_drain_through(void **state)
{
    (void) state;
    enum { MIB = 1 << 20, BURST = 24, WRITES = 2 * BURST + 1 };
    uint8_t *src = mib_data((uint64_t) WRITES * MIB);
    struct mem_sink *m = mem_sink_new((uint64_t) WRITES * MIB);
    uint8_t *file = m->data;
    m->delay_us = 5 * copy_us(file, src, MIB);
    struct abt_config cfg = config(MIB, 64 * MIB, NULL);
    struct abt_engine *e;
    assert_int_equal(abt_engine_create(&e, &cfg, (struct abt_sink) { &mem_ops, m }), 0);
    uint64_t at = 0;
    m->app = pthread_self();
    struct abt_stats before;
    for (int phase = 0; phase < 3; phase++) {
        abt_get_stats(e, &before);
        abt_phase_begin(e);
        atomic_store(&m->hold, 0);
        for (int i = 0; i < (phase == 0 ? 1 : BURST); i++, at += MIB)
            assert_int_equal(abt_write(e, at, src + at, MIB), 0);
        abt_phase_end(e);
        if (phase == 0)
            assert_int_equal(abt_flush(e), 0);      /* both rates measured, nothing queued */
        atomic_store(&m->hold, 1);  /* the pause drains nothing */
        struct timespec pause = { 0, 2 * 1000 * 1000 };     /* past abt_phase_gap */
        nanosleep(&pause, NULL);
    }
    atomic_store(&m->hold, 0);
    assert_int_equal(abt_flush(e), 0);
    struct abt_stats st;
    abt_get_stats(e, &st);
    abt_engine_destroy(e);
    assert_int_equal(st.bytes_through - before.bytes_through, (uint64_t) BURST * MIB);
    assert_memory_equal(file, src, (size_t) WRITES * MIB);
    free(file);
    free(src);
}

/* 4 MiB of 64 KiB writes one after the other, in one 4 MiB buffer, in one
 * phase (the drain, asleep after the first, waits for the buffer to
 * fill): they merge into records, each a sink call, of 1 MiB at most, not
 * one of 4 MiB (large writes to one file from several processes made the
 * kernel spin on its lock). */
static void test_records_merge_bounded(void **state)
{
    (void) state;
    enum { MIB = 1 << 20, PIECE = 64 << 10 };
    uint8_t *src = mib_data(4 * MIB);
    struct mem_sink *m = mem_sink_new(4 * MIB);
    uint8_t *file = m->data;
    m->delay_us = 20000;        /* slow: buffering pays, nothing goes through */
    struct abt_config cfg = config(4 * MIB, 4 * MIB, NULL);
    struct abt_engine *e;
    assert_int_equal(abt_engine_create(&e, &cfg, (struct abt_sink) { &mem_ops, m }), 0);
    assert_int_equal(abt_write(e, 0, src, PIECE), 0);
    assert_int_equal(abt_flush(e), 0);      /* the thread asleep now */
    m->writes = m->longest = 0;
    abt_phase_begin(e);
    for (uint64_t at = PIECE; at < 4 * MIB; at += PIECE)
        assert_int_equal(abt_write(e, at, src + at, PIECE), 0);
    abt_phase_end(e);
    assert_int_equal(abt_flush(e), 0);
    uint64_t writes = m->writes, longest = m->longest;
    abt_engine_destroy(e);
    assert_int_equal(longest, MIB);
    assert_int_equal(writes, 4);            /* 16, 16, 16 and 15 of them */
    assert_memory_equal(file, src, 4 * MIB);
    free(file);
    free(src);
}

/* Leases: each is released once every write made under it, and under the
 * ones before it, has landed (buffered, staged or written through from a
 * full pool), never before; abt_flush returns after the last release. */
static void test_leases_released_after_landing(void **state)
{
    struct fixture *f = *state;
    enum { PIECE = 64 << 10, LEASES = 48 };
    uint8_t *src = mib_data(LEASES * PIECE);
    struct mem_sink *m = mem_sink_new(LEASES * PIECE);
    uint8_t *file = m->data;
    m->delay_us = 2000;
    m->expect = src;
    m->piece = PIECE;
    struct abt_config cfg = config(64 << 10, 256 << 10, f->stage);
    struct abt_engine *e;
    assert_int_equal(abt_engine_create(&e, &cfg, (struct abt_sink) { &lease_ops, m }), 0);
    for (uint64_t i = 0; i < LEASES; i++) {
        abt_lease_begin(e, i + 1);
        abt_phase_begin(e);
        assert_int_equal(abt_write(e, i * PIECE, src + i * PIECE, PIECE / 2), 0);
        assert_int_equal(abt_write(e, i * PIECE + PIECE / 2, src + i * PIECE + PIECE / 2,
                                   PIECE / 2), 0);
        abt_phase_end(e);
        abt_lease_end(e);
    }
    assert_int_equal(abt_flush(e), 0);
    assert_int_equal(m->released, LEASES);
    assert_false(m->early);
    abt_engine_destroy(e);
    assert_memory_equal(file, src, LEASES * PIECE);
    free(file);
    free(src);
}

/* One output phase of 300 writes through a 64 KiB pool to a slow sink,
 * with a cache file faster than the sink; compute_interval: the
 * computation expected after it (0: none seen). */
static void stage_phase(struct fixture *f, double compute_interval, struct abt_stats *st)
{
    struct abt_config cfg = config(16 << 10, 64 << 10, f->stage);
    cfg.compute_interval = compute_interval;
    struct abt_engine *e;
    assert_int_equal(abt_engine_create(&e, &cfg, faulty_sink(f->path, -1, 2000)), 0);
    abt_phase_begin(e);
    random_writes(e, f, 300, 8 << 10, 23);
    abt_phase_end(e);
    finish(e, f, st);
}

/* The same with a cache file that takes data faster than the slow sink and
 * a computation to come, in which the drain empties it: staging helps, so
 * the phase stages rather than writing through. */
static void test_staging_not_through(void **state)
{
    struct abt_stats st;
    stage_phase(*state, 100.0, &st);
    assert_true(st.bytes_staged_fg > 0);
    assert_int_equal(st.bytes_through, 0);
}

/* No computation seen (the first output, or IOR's writer that never
 * stops): the phase stages the memory's worth at most, then writes
 * through; staging more would only be drained at close, with two copies
 * more of every byte. */
static void test_staging_bounded(void **state)
{
    struct abt_stats st;
    stage_phase(*state, 0, &st);
    assert_true(st.bytes_staged_fg > 0);
    assert_true(st.bytes_staged_fg < (64 << 10) + (16 << 10));
    assert_true(st.bytes_through > 0);
}

static void test_model(void **state)
{
    (void) state;
    /* enough free already, or the drain frees it in time: nothing */
    assert_int_equal(abt_model_stage_bytes(100, 100, 80, 1.0, 10, 100), 0);
    assert_int_equal(abt_model_stage_bytes(100, 0, 80, 10.0, 10, 100), 0);
    /* need 80, 20 free, 1 s at 10 B/s drains 10: (80-20-10)/(1-10/100) = 55.5 */
    assert_int_equal(abt_model_stage_bytes(100, 20, 80, 1.0, 10, 100), 55);
    /* min(ABSmax, N): a 1000-byte output needs only the 100 bytes of buffers */
    assert_int_equal(abt_model_stage_bytes(100, 20, 1000, 1.0, 10, 100), 77);
    /* the cache file no faster than the network: staging cannot help */
    assert_int_equal(abt_model_stage_bytes(100, 20, 80, 1.0, 10, 10), 0);
    /* phases: two outputs 0.5 s apart, 0.2 s into the computation */
    struct abt_phases p;
    abt_phases_init(&p, 0.01);
    abt_phases_begin(&p, 1.0);
    p.bytes += 10;
    abt_phases_end(&p, 1.1);
    assert_true(abt_phases_time_left(&p, 1.2) < 0);
    abt_phases_begin(&p, 1.6);
    abt_phases_begin(&p, 1.6);  /* nested: the same phase */
    abt_phases_end(&p, 1.65);
    abt_phases_end(&p, 1.7);
    assert_int_equal(p.last_bytes, 10);
    double left = abt_phases_time_left(&p, 1.9);
    assert_true(left > 0.29 && left < 0.31);
}

static const struct rfs_connect_opts tcp_5s = { .net.timeout_ms = 5000 };

static void test_rfs_sink(void **state)
{
    struct fixture *f = *state;
    struct test_server ts;
    test_server_start(&ts);
    char local[4200];
    test_path(&ts, "abt.dat", local, sizeof(local));
    int fd = open(local, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    close(fd);
    struct abt_sink sink;
    assert_int_equal(abt_sink_rfs_open(&sink, "127.0.0.1", ts.port, "/abt.dat", &tcp_5s, 0), 0);
    struct abt_config cfg = config(64 << 10, 1 << 20, f->stage);
    struct abt_engine *e;
    assert_int_equal(abt_engine_create(&e, &cfg, sink), 0);
    random_writes(e, f, 300, 64 << 10, 17);
    /* small runs, queued faster than a round trip: list writes */
    strided_writes(e, f);
    assert_int_equal(abt_flush(e), 0);
    struct abt_stats st;
    abt_get_stats(e, &st);
    abt_engine_destroy(e);
    assert_true(st.sink_writes < st.writes);
    size_t len;
    uint8_t *got = read_file(local, &len);
    assert_int_equal(len, f->end);
    assert_memory_equal(got, f->expect, f->end);
    free(got);
    /* a file the server does not have */
    assert_int_equal(abt_sink_rfs_open(&sink, "127.0.0.1", ts.port, "/missing", &tcp_5s, 0),
                     -ENOENT);
    test_server_stop(&ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_random_writes_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batched_drain, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drain_after_call, setup, teardown),
        cmocka_unit_test_setup_teardown(test_small_runs_batched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreground_staging, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cap_smaller_than_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_zero_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failing_sink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failing_sink_through, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stage_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_background_staging, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_through_phase, setup, teardown),
        cmocka_unit_test_setup_teardown(test_staging_not_through, setup, teardown),
        cmocka_unit_test_setup_teardown(test_staging_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_computation_through, setup, teardown),
        cmocka_unit_test(test_first_write_measures_drain),
        cmocka_unit_test(test_pause_without_drain_through),
        cmocka_unit_test(test_records_merge_bounded),
        cmocka_unit_test_setup_teardown(test_leases_released_after_landing, setup, teardown),
        cmocka_unit_test(test_model),
        cmocka_unit_test_setup_teardown(test_rfs_sink, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
