/* Disk-directed collective calls against the real request engine: four
 * participants, each on its own connection and thread, send COLL and a
 * list request for interleaved blocks; the server merges them into few
 * large accesses (its counters say how many), the file holds every byte,
 * hot buffers serve a repeated collective read until a write drops them,
 * and a participant that never comes fails the call after the timeout. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "proto/rfs_client.h"
#include "server/rfs_coll.h"
#include "server/rfs_move.h"
#include "unit_util.h"

#define PARTS 4
#define BLOCK 4096
#define BLOCKS 16               /* per participant, interleaved: block k*PARTS + rank */

static struct test_server ts;
static pthread_barrier_t phase;

static int setup(void **state)
{
    (void) state;
    test_server_start(&ts);
    return 0;
}

static int teardown(void **state)
{
    (void) state;
    test_server_stop(&ts);
    return 0;
}

struct part {
    int rank;
    uint64_t call;
    int is_write, keep;
    int status;
    uint8_t data[BLOCKS * BLOCK];
};

static int coll_list_io(struct rfs_client *c, struct part *p)
{
    uint8_t pairs[BLOCKS * RFS_PAIR_SIZE];
    for (int k = 0; k < BLOCKS; k++)
        rfs_pair_encode((uint64_t) (k * PARTS + p->rank) * BLOCK, BLOCK,
                        pairs + k * RFS_PAIR_SIZE);
    struct rfs_req coll = { .handle = 0, .flags = (uint32_t) p->rank, .aux = PARTS,
                            .offset = p->call, .length = 0xfeedULL,
                            .mode = p->keep ? RFS_COLL_KEEP : 0 };
    struct rfs_req io = { .handle = 0, .aux = BLOCKS, .length = sizeof p->data };
    struct iovec out[2] = { { pairs, sizeof pairs }, { p->data, sizeof p->data } };
    struct rfs_inflight a, b;
    struct rfs_rep rep;
    uint64_t got = 0;
    int rc = rfs_send(c, RFS_OP_COLL, &coll, NULL, 0, &a);
    if (rc == 0)
        rc = rfs_send(c, p->is_write ? RFS_OP_LWRITE : RFS_OP_LREAD, &io, out,
                      p->is_write ? 2 : 1, &b);
    if (rc == 0)
        rc = rfs_recv(c, &a, NULL, 0, &rep, &got);
    if (rc == 0)
        rc = rfs_recv(c, &b, p->data, p->is_write ? 0 : sizeof p->data, &rep, &got);
    if (rc == 0 && (p->is_write ? rep.value : got) != sizeof p->data)
        rc = -EIO;
    return rc;
}

static void *participant(void *arg)
{
    struct part *p = arg;
    struct rfs_client c;
    struct rfs_stat st;
    p->status = rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", ts.port, 10000);
    if (p->status == 0)
        p->status = rfs_open(&c, 0, "/coll", RFS_O_RDWR | RFS_O_CREAT, 0600, &st);
    pthread_barrier_wait(&phase);
    if (p->status == 0)
        p->status = coll_list_io(&c, p);
    rfs_client_close(&c);
    return NULL;
}

/* One collective call of PARTS participants; returns the server's counters. */
static void run_call(uint64_t call, int is_write, int keep, struct part parts[PARTS],
                     struct rfs_coll_stats *after)
{
    pthread_t t[PARTS];
    pthread_barrier_init(&phase, NULL, PARTS);
    for (int i = 0; i < PARTS; i++) {
        parts[i].rank = i;
        parts[i].call = call;
        parts[i].is_write = is_write;
        parts[i].keep = keep;
        assert_int_equal(pthread_create(&t[i], NULL, participant, &parts[i]), 0);
    }
    for (int i = 0; i < PARTS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(parts[i].status, 0);
    }
    pthread_barrier_destroy(&phase);
    rfs_coll_table_stats(ts.srv.coll, after);
}

static void test_merged_write_and_hot_read(void **state)
{
    (void) state;
    static struct part parts[PARTS];
    struct rfs_coll_stats s0, s1, s2, s3;
    char path[4200];
    rfs_coll_table_stats(ts.srv.coll, &s0);
    for (int i = 0; i < PARTS; i++)
        fill_random(parts[i].data, sizeof parts[i].data, 100 + (unsigned) i);
    run_call(1, 1, 0, parts, &s1);
    /* 64 interleaved blocks, adjacent once sorted: one write of 256 KiB */
    assert_int_equal(s1.calls - s0.calls, 1);
    assert_int_equal(s1.pieces - s0.pieces, PARTS * BLOCKS);
    assert_int_equal(s1.accesses - s0.accesses, 1);
    size_t len;
    uint8_t *file = read_file(test_path(&ts, "coll", path, sizeof path), &len);
    assert_int_equal(len, PARTS * BLOCKS * BLOCK);
    for (int k = 0; k < BLOCKS; k++)
        for (int i = 0; i < PARTS; i++)
            assert_memory_equal(file + (size_t) (k * PARTS + i) * BLOCK,
                                parts[i].data + (size_t) k * BLOCK, BLOCK);

    /* No hot buffer yet and none asked for: the merged read goes straight
     * into the participants' memory, one vector read of the 64 blocks,
     * past the cache (no miss counted). */
    static struct part back[PARTS];
    run_call(2, 0, 0, back, &s2);
    assert_int_equal(s2.accesses - s1.accesses, 1);
    assert_int_equal(s2.cache_misses - s1.cache_misses, 0);
    for (int i = 0; i < PARTS; i++)
        assert_memory_equal(back[i].data, parts[i].data, sizeof back[i].data);
    memset(back, 0, sizeof back);
    s1 = s2;

    run_call(3, 0, 1, back, &s2);
    assert_int_equal(s2.cache_misses - s1.cache_misses, 1);
    for (int i = 0; i < PARTS; i++)
        assert_memory_equal(back[i].data, parts[i].data, sizeof back[i].data);
    run_call(4, 0, 1, back, &s3);
    assert_int_equal(s3.cache_hits - s2.cache_hits, 1);
    assert_int_equal(s3.cache_misses - s2.cache_misses, 0);
    for (int i = 0; i < PARTS; i++)
        assert_memory_equal(back[i].data, parts[i].data, sizeof back[i].data);

    /* A plain write drops the hot buffer: the next read sees it. */
    struct rfs_client c;
    struct rfs_stat st;
    uint8_t block[BLOCK];
    memset(block, 0x5a, sizeof block);
    assert_int_equal(rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", ts.port, 10000), 0);
    assert_int_equal(rfs_open(&c, 0, "/coll", RFS_O_RDWR, 0, &st), 0);
    assert_int_equal(rfs_pwrite(&c, 0, block, BLOCK, 2 * BLOCK), 0);    /* rank 2, k 0 */
    rfs_client_close(&c);
    run_call(5, 0, 1, back, &s0);
    assert_int_equal(s0.cache_hits - s3.cache_hits, 0);
    assert_memory_equal(back[2].data, block, BLOCK);
    assert_memory_equal(back[2].data + BLOCK, parts[2].data + BLOCK, BLOCK);

    free(file);
}

/* rfs_move_vector over more buffers than one system call takes (IOV_MAX),
 * written and read back in a run that ends inside a buffer: a read stops
 * at the end of the file, with every byte before it in place. */
static void test_move_vector(void **state)
{
    (void) state;
    enum { BUFS = 4000, EACH = 7, FILE_LEN = 3 * 1024 * EACH + 3 };
    static uint8_t src[BUFS * EACH], back[BUFS * EACH];
    struct iovec iov[BUFS];
    char path[4200];
    fill_random(src, sizeof src, 5);
    int fd = open(test_path(&ts, "vector", path, sizeof path), O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    for (int i = 0; i < BUFS; i++)
        iov[i] = (struct iovec) { src + i * EACH, EACH };
    assert_int_equal(rfs_move_vector(fd, 1, iov, BUFS, 0), sizeof src);
    assert_int_equal(ftruncate(fd, FILE_LEN), 0);
    for (int i = 0; i < BUFS; i++)
        iov[i] = (struct iovec) { back + i * EACH, EACH };
    assert_int_equal(rfs_move_vector(fd, 0, iov, BUFS, 0), FILE_LEN);
    assert_memory_equal(back, src, FILE_LEN);
    assert_int_equal(back[FILE_LEN], 0);
    close(fd);
}

static void test_missing_participant_times_out(void **state)
{
    (void) state;
    struct rfs_client c;
    struct rfs_stat st;
    struct rfs_coll_stats before, after;
    static struct part p = { .rank = 1, .call = 99, .is_write = 1 };
    rfs_coll_table_stats(ts.srv.coll, &before);
    assert_int_equal(rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", ts.port, 10000), 0);
    assert_int_equal(rfs_open(&c, 0, "/coll", RFS_O_RDWR | RFS_O_CREAT, 0600, &st), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(coll_list_io(&c, &p), RFS_E_IO);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_true(waited >= 1.9 && waited < 10);      /* the server's 2 s */
    /* the connection goes on */
    assert_int_equal(rfs_fstat(&c, 0, &st), 0);
    rfs_client_close(&c);
    rfs_coll_table_stats(ts.srv.coll, &after);
    assert_int_equal(after.timeouts - before.timeouts, 1);
}

/* Pieces over the server's 8 MiB staging buffer: one participant writes
 * 9 MiB in one piece and asks to keep it hot, then every participant
 * reads the same 9 MiB (overlapping pieces, the first one alone too big). */
#define BIG (9u << 20)

struct big_part {
    int rank, parts, is_write, keep;
    uint64_t call;
    uint8_t *data;
    int status;
};

static void *big_io(void *arg)
{
    struct big_part *p = arg;
    struct rfs_client c;
    struct rfs_stat st;
    uint8_t pair[RFS_PAIR_SIZE];
    rfs_pair_encode(0, BIG, pair);
    struct rfs_req coll = { .flags = (uint32_t) p->rank, .aux = (uint32_t) p->parts,
                            .offset = p->call, .length = 0xb16,
                            .mode = p->keep ? RFS_COLL_KEEP : 0 };
    struct rfs_req io = { .aux = 1, .length = BIG };
    struct iovec out[2] = { { pair, sizeof pair }, { p->data, BIG } };
    struct rfs_inflight a, b;
    struct rfs_rep rep;
    uint64_t got = 0;
    p->status = rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", ts.port, 10000);
    if (p->status == 0)
        p->status = rfs_open(&c, 0, "/big", RFS_O_RDWR | RFS_O_CREAT, 0600, &st);
    if (p->status == 0)
        p->status = rfs_send(&c, RFS_OP_COLL, &coll, NULL, 0, &a);
    if (p->status == 0)
        p->status = rfs_send(&c, p->is_write ? RFS_OP_LWRITE : RFS_OP_LREAD, &io, out,
                             p->is_write ? 2 : 1, &b);
    if (p->status == 0)
        p->status = rfs_recv(&c, &a, NULL, 0, &rep, &got);
    if (p->status == 0)
        p->status = rfs_recv(&c, &b, p->data, p->is_write ? 0 : BIG, &rep, &got);
    if (p->status == 0 && (p->is_write ? rep.value : got) != BIG)
        p->status = -EIO;
    rfs_client_close(&c);
    return NULL;
}

static void test_pieces_over_the_staging_buffer(void **state)
{
    (void) state;
    struct big_part w = { .parts = 1, .is_write = 1, .keep = 1, .data = malloc(BIG) };
    fill_random(w.data, BIG, 77);
    big_io(&w);
    assert_int_equal(w.status, 0);
    struct big_part p[PARTS];
    pthread_t t[PARTS];
    for (int i = 0; i < PARTS; i++) {
        p[i] = (struct big_part) { .rank = i, .parts = PARTS, .call = 1, .data = malloc(BIG) };
        assert_int_equal(pthread_create(&t[i], NULL, big_io, &p[i]), 0);
    }
    for (int i = 0; i < PARTS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(p[i].status, 0);
        assert_memory_equal(p[i].data, w.data, BIG);
        free(p[i].data);
    }
    free(w.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merged_write_and_hot_read),
        cmocka_unit_test(test_missing_participant_times_out),
        cmocka_unit_test(test_pieces_over_the_staging_buffer),
        cmocka_unit_test(test_move_vector),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
