/* Striping: the layout arithmetic against a brute-force model, the
 * object header against corruption, server lists, and striped files on
 * three live servers (real rfs_serve_connection threads on loopback):
 * every method's data checked as it sits in each server's object. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include "stripe/stripe_file.h"
#include "server/rfs_coll.h"
#include "unit_util.h"

#define NSERVERS 3

static struct test_server ts[NSERVERS];
static struct stripe_servers sv;
static const struct rfs_connect_opts tcp_10s = { .net.timeout_ms = 10000 };

/* The disk-directed merge's bounds of the collective tests (0: every
 * round merged on the servers, whatever its bytes and runs); each test
 * starts from 0, whatever a failed one left. */
static uint64_t coll_merge_from, coll_merge_runs_below;

/* The tests where several threads open one file: valgrind stops every
 * thread while one waits for the creation lock. */
static void skip_under_valgrind(void)
{
    if (getenv("UNIT_UNDER_VALGRIND"))
        skip_because("valgrind stops every thread while one waits in F_OFD_SETLKW "
                     "(the creation lock)");
}

static int setup(void **state)
{
    (void) state;
    coll_merge_from = coll_merge_runs_below = 0;
    sv.n = NSERVERS;
    for (int i = 0; i < NSERVERS; i++) {
        test_server_start(&ts[i]);
        snprintf(sv.at[i].host, sizeof sv.at[i].host, "127.0.0.1");
        snprintf(sv.at[i].port, sizeof sv.at[i].port, "%s", ts[i].port);
    }
    return 0;
}

static int teardown(void **state)
{
    (void) state;
    for (int i = 0; i < NSERVERS; i++)
        if (ts[i].root[0])
            test_server_stop(&ts[i]);
    return 0;
}

static void test_layout_math(void **state)
{
    (void) state;
    const uint64_t units[] = { 1, 3, 1000, 4096, 65536 };
    const uint32_t factors[] = { 1, 2, 3, 4, 7 };
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
        for (size_t k = 0; k < sizeof factors / sizeof factors[0]; k++) {
            struct stripe_layout l = { .unit = units[u], .factor = factors[k] };
            uint64_t count[8] = { 0 };
            /* byte by byte: where it goes, and the sizes that follow */
            for (uint64_t off = 0; off < 20000; off++) {
                uint32_t o = stripe_object_of(&l, off);
                assert_int_equal(o, (off / l.unit) % l.factor);
                assert_int_equal(stripe_local_of(&l, off), count[o]);
                count[o]++;
                uint64_t end = 0;
                for (uint32_t i = 0; i < l.factor; i++) {
                    uint64_t local = stripe_local_size(&l, i, off + 1);
                    assert_int_equal(local, count[i]);
                    uint64_t e = stripe_logical_end(&l, i, local);
                    end = e > end ? e : end;
                }
                assert_int_equal(end, off + 1);
            }
        }
    /* far beyond 4 GiB */
    struct stripe_layout big = { .unit = 1u << 20, .factor = 4 };
    uint64_t off = (UINT64_C(5) << 40) + 12345;
    assert_int_equal(stripe_logical_end(&big, stripe_object_of(&big, off),
                                        stripe_local_of(&big, off) + 1), off + 1);
}

static void test_header(void **state)
{
    (void) state;
    struct stripe_header h = { .layout = { .unit = 65536, .factor = 4, .file_id = 0x1234abcd },
                               .index = 3 }, back;
    uint8_t buf[STRIPE_HDR_USED];
    stripe_header_encode(&h, buf);
    assert_int_equal(stripe_header_decode(buf, sizeof buf, &back), 0);
    assert_int_equal(back.index, 3);
    assert_int_equal(back.layout.unit, 65536);
    assert_int_equal(back.layout.factor, 4);
    assert_int_equal(back.layout.file_id, 0x1234abcd);
    assert_int_equal(stripe_header_decode(buf, sizeof buf - 1, &back), -EINVAL);
    for (size_t i = 0; i < sizeof buf; i++)
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t) (1 << bit);
            assert_int_equal(stripe_header_decode(buf, sizeof buf, &back), -EINVAL);
            buf[i] ^= (uint8_t) (1 << bit);
        }
    h.index = 4;                        /* past the factor, though well encoded */
    stripe_header_encode(&h, buf);
    assert_int_equal(stripe_header_decode(buf, sizeof buf, &back), -EINVAL);
    h.index = 0;
    h.layout.unit = 0;
    stripe_header_encode(&h, buf);
    assert_int_equal(stripe_header_decode(buf, sizeof buf, &back), -EINVAL);
}

static void test_server_lists(void **state)
{
    (void) state;
    struct stripe_servers s;
    char text[512], path[] = "/tmp/stripe-conf-XXXXXX";
    assert_int_equal(stripe_servers_parse("a:1,[::1]:2,host.example:65535", &s), 0);
    assert_int_equal(s.n, 3);
    assert_string_equal(s.at[1].host, "::1");
    assert_string_equal(s.at[2].port, "65535");
    assert_int_equal(stripe_servers_format(&s, text, sizeof text), 0);
    assert_string_equal(text, "a:1,[::1]:2,host.example:65535");
    assert_int_equal(stripe_servers_format(&s, text, 10), -ENOSPC);
    const char *bad[] = { "", "a", "a:", ":1", "a:1,", "a:x", "[::1:2", "a:1,,b:2" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(stripe_servers_parse(bad[i], &s), -EINVAL);

    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char conf[] = "# I/O servers\n\nserver a:1   # first\n  server\t[::1]:2\n";
    assert_int_equal(write(fd, conf, sizeof conf - 1), (ssize_t) sizeof conf - 1);
    close(fd);
    assert_int_equal(stripe_servers_load(path, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.at[1].host, "::1");
    FILE *fp = fopen(path, "a");
    fputs("servers b:3\n", fp);
    fclose(fp);
    assert_int_equal(stripe_servers_load(path, &s), -EINVAL);
    unlink(path);
    assert_int_equal(stripe_servers_load(path, &s), -ENOENT);
}

static void open_file(struct stripe_file *f, const char *path, uint32_t flags, uint64_t unit,
                      uint32_t factor)
{
    struct stripe_open_args a = { .flags = flags, .mode = 0644, .unit = unit, .factor = factor,
                                  .connect.net.timeout_ms = 10000 };
    assert_int_equal(stripe_open(f, &sv, path, &a), 0);
}

/* The bytes of object i's data as they sit in server i's export root. */
static uint8_t *object_data(int i, const char *name, size_t *len)
{
    char path[4200];
    uint8_t *all = read_file(test_path(&ts[i], name, path, sizeof path), len);
    assert_non_null(all);
    assert_true(*len >= STRIPE_HDR_SIZE);
    struct stripe_header h;
    assert_int_equal(stripe_header_decode(all, *len, &h), 0);
    assert_int_equal(h.index, i);
    *len -= STRIPE_HDR_SIZE;
    memmove(all, all + STRIPE_HDR_SIZE, *len);
    return all;
}

/* Every logical byte of `expect` is where the layout says, in its object
 * (an object may end early where the file has a hole). */
static void check_placement(const struct stripe_layout *l, const char *name,
                            const uint8_t *expect, uint64_t size)
{
    uint8_t *obj[NSERVERS];
    size_t len[NSERVERS];
    for (uint32_t i = 0; i < l->factor; i++) {
        obj[i] = object_data((int) i, name, &len[i]);
        assert_true(len[i] <= stripe_local_size(l, i, size));
    }
    for (uint64_t off = 0; off < size; off++) {
        uint32_t o = stripe_object_of(l, off);
        uint64_t local = stripe_local_of(l, off);
        assert_int_equal(local < len[o] ? obj[o][local] : 0, expect[off]);
    }
    for (uint32_t i = 0; i < l->factor; i++)
        free(obj[i]);
}

static void test_contiguous_and_size(void **state)
{
    (void) state;
    struct stripe_file f;
    uint64_t size, moved;
    const uint64_t len = 3u << 20;
    uint8_t *src = malloc(len), *dst = malloc(len + 100);
    fill_random(src, len, 7);
    open_file(&f, "/c", RFS_O_RDWR | RFS_O_CREAT | RFS_O_EXCL, 1000, 0);
    assert_int_equal(f.layout.factor, NSERVERS);
    struct stripe_view whole = { 0 };
    assert_int_equal(stripe_io(&f, STRIPE_LIST, &whole, 0, len, (char *) src, 1, &moved), 0);
    assert_int_equal(moved, len);
    assert_int_equal(stripe_size(&f, &size), 0);
    assert_int_equal(size, len);
    assert_int_equal(stripe_sync(&f), 0);
    check_placement(&f.layout, "c", src, len);

    /* a read past the end: short, and only the bytes before it count */
    assert_int_equal(stripe_io(&f, STRIPE_LIST, &whole, len - 5000, 5100, (char *) dst, 0,
                               &moved), 0);
    assert_int_equal(moved, 5000);
    assert_memory_equal(dst, src + len - 5000, 5000);
    for (int m = STRIPE_NAIVE; m < STRIPE_METHODS; m++) {
        memset(dst, 0, len);
        assert_int_equal(stripe_io(&f, (enum stripe_method) m, &whole, 0, len, (char *) dst, 0,
                                   &moved), 0);
        assert_int_equal(moved, len);
        assert_memory_equal(dst, src, len);
    }

    /* shrink into the middle of a stripe, then grow: a hole of zeros */
    assert_int_equal(stripe_truncate(&f, 4321), 0);
    assert_int_equal(stripe_size(&f, &size), 0);
    assert_int_equal(size, 4321);
    assert_int_equal(stripe_truncate(&f, 10000), 0);
    assert_int_equal(stripe_size(&f, &size), 0);
    assert_int_equal(size, 10000);
    memset(src + 4321, 0, 10000 - 4321);
    check_placement(&f.layout, "c", src, 10000);
    assert_int_equal(stripe_prealloc(&f, 0, 50000), 0);
    assert_int_equal(stripe_size(&f, &size), 0);
    assert_int_equal(size, 50000);
    assert_int_equal(stripe_close(&f), 0);

    /* reopened with other wishes: the file keeps its own layout */
    open_file(&f, "/c", RFS_O_RDWR | RFS_O_CREAT, 65536, 1);
    assert_int_equal(f.layout.unit, 1000);
    assert_int_equal(f.layout.factor, NSERVERS);
    assert_int_equal(stripe_close(&f), 0);
    assert_int_equal(stripe_unlink(&tcp_10s, &sv, "/c"), 0);
    struct stripe_open_args a = { .flags = RFS_O_RDWR, .connect.net.timeout_ms = 10000 };
    assert_int_equal(stripe_open(&f, &sv, "/c", &a), RFS_E_NOENT);
    assert_int_equal(stripe_unlink(&tcp_10s, &sv, "/c"), RFS_E_NOENT);
    free(src);
    free(dst);
}

/* 40 blocks of 37 bytes every 150 from byte 11, encoded for the servers:
 * runs that do not divide the stripe unit. *t and *enc are the caller's. */
static struct stripe_view vector_view(struct dtype **t, uint8_t **enc)
{
    *t = dtype_vector(40, 37, 150, NULL);
    assert_non_null(*t);
    size_t enc_len = dtype_serialize(*t, NULL);
    *enc = malloc(enc_len);
    dtype_serialize(*t, *enc);
    return (struct stripe_view) { .type = *t, .disp = 11, .enc = *enc, .enc_len = enc_len };
}

/* A view of 40 blocks of 37 bytes every 150: runs that do not divide the
 * stripe unit, moved by each method, checked in the objects. */
static void test_methods_through_a_view(void **state)
{
    (void) state;
    struct dtype *t;
    uint8_t *enc;
    struct stripe_view v = vector_view(&t, &enc);
    const uint64_t ninst = 50, data = ninst * (uint64_t) t->size;
    uint64_t fsize = 11 + (ninst - 1) * (uint64_t) t->extent + (uint64_t) t->true_ub, moved;
    uint8_t *src = malloc(data), *dst = malloc(data), *expect = calloc(1, fsize);

    for (int m = STRIPE_NAIVE; m < STRIPE_METHODS; m++) {
        struct stripe_file f;
        char name[16];
        snprintf(name, sizeof name, "/v%d", m);
        open_file(&f, name, RFS_O_RDWR | RFS_O_CREAT, 256, 2);
        fill_random(src, data, (unsigned) m + 1);
        struct stripe_stats before = f.stats;
        assert_int_equal(stripe_io(&f, (enum stripe_method) m, &v, 0, data, (char *) src, 1,
                                   &moved), 0);
        assert_int_equal(moved, data);
        if (m == STRIPE_DATATYPE)   /* one request per object for the whole call */
            assert_int_equal(f.stats.view_requests - before.view_requests, 2);
        if (m == STRIPE_LIST)       /* 2000 runs, at most 2 pieces each, 64 pairs a request */
            assert_true(f.stats.list_requests - before.list_requests <= 2 * 4000 / 64 + 2);

        /* the expected file: the view's runs hold the data in order */
        memset(expect, 0, fsize);
        struct dtype_iter it;
        int64_t off, len, at = 0;
        assert_int_equal(dtype_iter_init(&it, t, (int64_t) ninst, 11, 0, (int64_t) data), 0);
        while (dtype_iter_next(&it, &off, &len)) {
            memcpy(expect + off, src + at, (size_t) len);
            at += len;
        }
        char bare[16];
        snprintf(bare, sizeof bare, "v%d", m);
        check_placement(&f.layout, bare, expect, fsize);

        /* read back by every method, from an offset inside the view */
        for (int r = STRIPE_NAIVE; r < STRIPE_METHODS; r++) {
            memset(dst, 0xee, data);
            assert_int_equal(stripe_io(&f, (enum stripe_method) r, &v, 100, data - 100,
                                       (char *) dst, 0, &moved), 0);
            assert_int_equal(moved, data - 100);
            assert_memory_equal(dst, src + 100, data - 100);
        }
        /* past the end of the file: short */
        assert_int_equal(stripe_io(&f, STRIPE_DATATYPE, &v, data - 10, 500, (char *) dst, 0,
                                   &moved), 0);
        assert_int_equal(moved, 10);
        assert_int_equal(stripe_close(&f), 0);
        assert_int_equal(stripe_unlink(&tcp_10s, &sv, name), 0);
    }
    dtype_free(t);
    free(enc);
    free(src);
    free(dst);
    free(expect);
}

/* Files opened with `share` take one connection per server between them
 * (each a handle on it), keep their data apart, and the last close ends
 * the connections; a handle taken again after a close gets its view sent
 * again (the server forgot the closed handle's). Without `share` each file
 * has its own. */
static void test_shared_connections(void **state)
{
    (void) state;
    struct dtype *t;
    uint8_t *enc;
    struct stripe_view v = vector_view(&t, &enc);
    const uint64_t data = 50 * (uint64_t) t->size;
    uint8_t *src = malloc(data), *dst = malloc(data);
    struct stripe_open_args a = { .flags = RFS_O_RDWR | RFS_O_CREAT, .mode = 0644, .unit = 256,
                                  .factor = NSERVERS, .connect.net.timeout_ms = 10000,
                                  .share = 1 };
    struct stripe_file f[3];
    uint64_t moved;
    const char *names[3] = { "/s0", "/s1", "/s2" };
    for (int k = 0; k < 3; k++) {
        assert_int_equal(stripe_open(&f[k], &sv, names[k], &a), 0);
        assert_int_equal(rfs_shared_count(), NSERVERS);
        assert_int_equal(f[k].obj[0].handle, (uint32_t) k);
        fill_random(src, data, (unsigned) k + 7);
        assert_int_equal(stripe_io(&f[k], STRIPE_DATATYPE, &v, 0, data, (char *) src, 1,
                                   &moved), 0);
    }
    struct stripe_file own;
    struct stripe_open_args apart = a;
    apart.share = 0;
    assert_int_equal(stripe_open(&own, &sv, "/own", &apart), 0);
    assert_int_equal(rfs_shared_count(), NSERVERS);   /* not among the shared */
    assert_int_equal(own.obj[0].handle, 0);
    assert_int_equal(stripe_close(&own), 0);
    /* handle 0's view the last one sent on each connection; the handle
     * given back and taken again with the same view: it is sent again */
    assert_int_equal(stripe_io(&f[0], STRIPE_DATATYPE, &v, 0, data, (char *) dst, 0, &moved),
                     0);
    assert_int_equal(stripe_close(&f[0]), 0);
    assert_int_equal(stripe_open(&f[0], &sv, names[0], &a), 0);
    assert_int_equal(f[0].obj[0].handle, 0);
    for (int k = 0; k < 3; k++) {
        fill_random(src, data, (unsigned) k + 7);
        memset(dst, 0xee, data);
        assert_int_equal(stripe_io(&f[k], STRIPE_DATATYPE, &v, 0, data, (char *) dst, 0,
                                   &moved), 0);
        assert_int_equal(moved, data);
        assert_memory_equal(dst, src, data);
    }
    for (int k = 0; k < 3; k++)
        assert_int_equal(stripe_close(&f[k]), 0);
    assert_int_equal(rfs_shared_count(), 0);
    dtype_free(t);
    free(enc);
    free(src);
    free(dst);
}

/* A server that closes its connections (a restart, its idle timeout):
 * each shared file moves to a new connection at its next call, its object
 * opened there again, and reads what it wrote; a file that is not shared
 * does the same on its own. One that wrote since its last sync stays on
 * the broken connection (its writes may be lost): its calls on that
 * server, its sync and its close fail. The broken connection ends with
 * the last file that leaves it. */
static void test_connections_revived(void **state)
{
    (void) state;
    struct stripe_open_args a = { .flags = RFS_O_RDWR | RFS_O_CREAT, .mode = 0644, .unit = 256,
                                  .factor = NSERVERS, .connect.net.timeout_ms = 10000,
                                  .share = 1 };
    struct stripe_open_args apart = a;
    apart.share = 0;
    struct stripe_file f[4];
    struct stripe_view whole = { 0 };
    char src[4][3000], dst[3000];
    uint64_t moved;
    for (int k = 0; k < 4; k++) {
        char name[8];
        snprintf(name, sizeof name, "/r%d", k);
        assert_int_equal(stripe_open(&f[k], &sv, name, k == 2 ? &apart : &a), 0);
        fill_random(src[k], sizeof src[k], (unsigned) k + 40);
        assert_int_equal(stripe_io(&f[k], STRIPE_LIST, &whole, 0, sizeof src[k], src[k], 1,
                                   &moved), 0);
        if (k < 3)
            assert_int_equal(stripe_sync(&f[k]), 0);
    }
    const struct rfs_shared *was = f[0].obj[1].conn;
    test_server_restart(&ts[1]);
    for (int k = 0; k < 3; k++) {
        memset(dst, 0, sizeof dst);
        assert_int_equal(stripe_io(&f[k], STRIPE_LIST, &whole, 0, sizeof dst, dst, 0, &moved),
                         0);
        assert_int_equal(moved, sizeof dst);
        assert_memory_equal(dst, src[k], sizeof dst);
        /* the broken connection to server 1 and its replacement */
        assert_int_equal(rfs_shared_count(), NSERVERS + 1);
    }
    assert_ptr_not_equal(f[0].obj[1].conn, was);
    assert_ptr_equal(f[0].obj[1].conn, f[1].obj[1].conn);
    assert_ptr_equal(f[0].obj[0].conn, f[1].obj[0].conn);
    assert_ptr_equal(f[3].obj[1].conn, was);
    assert_true(stripe_io(&f[3], STRIPE_LIST, &whole, 0, sizeof dst, dst, 0, &moved) < 0);
    assert_int_equal(f[3].failed, 1);
    assert_true(stripe_sync(&f[3]) < 0);
    assert_true(stripe_close(&f[3]) < 0);
    assert_int_equal(rfs_shared_count(), NSERVERS);
    for (int k = 0; k < 3; k++)
        assert_int_equal(stripe_close(&f[k]), 0);
    assert_int_equal(rfs_shared_count(), 0);
}

/* Segments of `lens` bytes spread over `arena`, each after a gap of 3 to
 * 77 bytes; returns their count. */
static int spread_segments(char *arena, const size_t *lens, int n, struct iovec *seg)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        at += 3 + (size_t) (i * 37) % 75;
        seg[i] = (struct iovec) { arena + at, lens[i] };
        at += lens[i];
    }
    return n;
}

/* Memory in segments (stripe_iov_io): every method writes from and reads
 * into segments of uneven sizes, zero-length ones among them, through a
 * view; the data must match a packed transfer and the gaps between the
 * segments stay untouched. */
static void test_memory_segments(void **state)
{
    (void) state;
    enum { NSEG = 300 };
    struct dtype *t;
    uint8_t *enc;
    struct stripe_view v = vector_view(&t, &enc);
    size_t lens[NSEG], data = 0;
    for (int i = 0; i < NSEG; i++)
        data += lens[i] = i % 7 == 3 ? 0 : (size_t) (i * 131) % 900 + 1;
    size_t arena_len = data + NSEG * 80;
    char *src = malloc(arena_len), *dst = malloc(arena_len), *packed = malloc(data);
    char *got = malloc(data);
    struct iovec sseg[NSEG], dseg[NSEG];
    spread_segments(src, lens, NSEG, sseg);
    spread_segments(dst, lens, NSEG, dseg);
    uint64_t moved;

    for (int m = STRIPE_NAIVE; m < STRIPE_METHODS; m++) {
        struct stripe_file f;
        char name[16];
        snprintf(name, sizeof name, "/s%d", m);
        open_file(&f, name, RFS_O_RDWR | RFS_O_CREAT, 256, 3);
        fill_random((uint8_t *) src, arena_len, (unsigned) m + 11);
        for (int i = 0, at = 0; i < NSEG; at += (int) lens[i++])
            memcpy(packed + at, sseg[i].iov_base, lens[i]);
        assert_int_equal(stripe_iov_io(&f, (enum stripe_method) m, &v, 0, data, sseg, NSEG, 1,
                                       &moved), 0);
        assert_int_equal(moved, data);
        assert_int_equal(stripe_io(&f, STRIPE_LIST, &v, 0, data, got, 0, &moved), 0);
        assert_int_equal(moved, data);
        assert_memory_equal(got, packed, data);

        /* read back into segments by every method, from inside the view */
        for (int r = STRIPE_NAIVE; r < STRIPE_METHODS; r++) {
            memset(dst, 0x5a, arena_len);
            assert_int_equal(stripe_iov_io(&f, (enum stripe_method) r, &v, 0, data, dseg, NSEG,
                                           0, &moved), 0);
            assert_int_equal(moved, data);
            for (int i = 0; i < NSEG; i++)
                assert_memory_equal(dseg[i].iov_base, sseg[i].iov_base, lens[i]);
            size_t at = 0;
            for (int i = 0; i < NSEG; i++) {
                for (char *p = dst + at; p < (char *) dseg[i].iov_base; p++)
                    assert_int_equal(*p, 0x5a);
                at = (size_t) ((char *) dseg[i].iov_base - dst) + lens[i];
            }
        }
        /* past the end of the file: short, the bytes after the end zeros */
        struct iovec tail[2] = { { dst + 5, 6 }, { dst + 100, 94 } };
        char zeros[94] = { 0 };
        memset(dst, 0x5a, arena_len);
        assert_int_equal(stripe_iov_io(&f, (enum stripe_method) m, &v, data - 10, 100, tail, 2,
                                       0, &moved), 0);
        assert_int_equal(moved, 10);
        assert_memory_equal(dst + 5, packed + data - 10, 6);
        assert_memory_equal(dst + 100, packed + data - 4, 4);
        assert_memory_equal(dst + 104, zeros, 90);
        assert_int_equal(stripe_close(&f), 0);
        assert_int_equal(stripe_unlink(&tcp_10s, &sv, name), 0);
    }
    dtype_free(t);
    free(enc);
    free(src);
    free(dst);
    free(packed);
    free(got);
}

/* Datatype I/O moves a share straight between memory and the connection
 * when its pieces are large (the interleaved segments of issue 21: 16 KiB
 * blocks every 48 KiB, unit 16 KiB, memory in two segments) and through
 * the staging buffer when they are small (37-byte runs): counted in
 * stats.staged, the data checked both ways, a short read's tail zeroed. */
static void test_datatype_direct_or_staged(void **state)
{
    (void) state;
    enum { BLOCK = 16384, NBLK = 24, DATA = BLOCK * NBLK };
    struct dtype *small;
    uint8_t *small_enc;
    struct stripe_view vsmall = vector_view(&small, &small_enc);
    struct dtype *big = dtype_vector(NBLK, BLOCK, 3 * BLOCK, NULL);
    size_t big_len = dtype_serialize(big, NULL);
    uint8_t *big_enc = malloc(big_len);
    dtype_serialize(big, big_enc);
    struct stripe_view vbig = { .type = big, .disp = BLOCK, .enc = big_enc, .enc_len = big_len };
    char *src = malloc(DATA), *dst = malloc(DATA + 100), *packed = malloc(DATA);
    uint64_t moved;
    struct stripe_file f;
    open_file(&f, "/direct", RFS_O_RDWR | RFS_O_CREAT, BLOCK, 3);
    fill_random((uint8_t *) src, DATA, 21);
    struct iovec halves[2] = { { src, DATA / 2 }, { src + DATA / 2, DATA / 2 } };
    assert_int_equal(stripe_iov_io(&f, STRIPE_DATATYPE, &vbig, 0, DATA, halves, 2, 1, &moved),
                     0);
    assert_int_equal(f.stats.staged, 0);
    assert_int_equal(stripe_io(&f, STRIPE_LIST, &vbig, 0, DATA, packed, 0, &moved), 0);
    assert_memory_equal(packed, src, DATA);
    memset(dst, 0x5a, DATA + 100);
    struct iovec into[2] = { { dst, DATA / 2 }, { dst + DATA / 2 + 100, DATA / 2 } };
    assert_int_equal(stripe_iov_io(&f, STRIPE_DATATYPE, &vbig, 0, DATA, into, 2, 0, &moved), 0);
    assert_int_equal(f.stats.staged, 0);
    assert_memory_equal(dst, src, DATA / 2);
    assert_memory_equal(dst + DATA / 2 + 100, src + DATA / 2, DATA / 2);
    for (int i = 0; i < 100; i++)
        assert_int_equal(dst[DATA / 2 + i], 0x5a);
    /* past the end: the last block, then zeros in the memory */
    memset(dst, 0x5a, DATA + 100);
    assert_int_equal(stripe_io(&f, STRIPE_DATATYPE, &vbig, DATA - BLOCK, 2 * BLOCK, dst, 0,
                               &moved), 0);
    assert_int_equal(moved, BLOCK);
    assert_memory_equal(dst, src + DATA - BLOCK, BLOCK);
    for (int i = BLOCK; i < 2 * BLOCK; i++)
        assert_int_equal(dst[i], 0);
    assert_int_equal(f.stats.staged, 0);

    assert_int_equal(stripe_io(&f, STRIPE_DATATYPE, &vsmall, 0, 37 * 40, src, 1, &moved), 0);
    assert_int_equal(f.stats.staged, 37 * 40);
    assert_int_equal(stripe_io(&f, STRIPE_DATATYPE, &vsmall, 0, 37 * 40, dst, 0, &moved), 0);
    assert_int_equal(f.stats.staged, 2 * 37 * 40);
    assert_memory_equal(dst, src, 37 * 40);
    assert_int_equal(stripe_close(&f), 0);
    assert_int_equal(stripe_unlink(&tcp_10s, &sv, "/direct"), 0);
    dtype_free(small);
    dtype_free(big);
    free(small_enc);
    free(big_enc);
    free(src);
    free(dst);
    free(packed);
}

/* Objects that do not belong together, or a list too short for the file. */
static void test_foreign_objects(void **state)
{
    (void) state;
    struct stripe_file f, g;
    char a[4200], b[4200];
    open_file(&f, "/x", RFS_O_RDWR | RFS_O_CREAT, 4096, 0);
    assert_int_equal(stripe_close(&f), 0);
    open_file(&g, "/y", RFS_O_RDWR | RFS_O_CREAT, 4096, 0);
    assert_int_equal(stripe_close(&g), 0);
    /* object 2 of /x replaced by object 2 of /y */
    assert_int_equal(rename(test_path(&ts[2], "y", b, sizeof b),
                            test_path(&ts[2], "x", a, sizeof a)), 0);
    struct stripe_open_args args = { .flags = RFS_O_RDWR, .connect.net.timeout_ms = 10000 };
    assert_int_equal(stripe_open(&f, &sv, "/x", &args), RFS_E_INVAL);
    assert_int_equal(f.failed, 2);
    struct stripe_servers two = sv;
    two.n = 2;
    assert_int_equal(stripe_open(&f, &two, "/y", &args), RFS_E_INVAL);
    assert_int_equal(f.failed, 0);
    /* a plain file is no striped file */
    FILE *fp = fopen(test_path(&ts[0], "plain", a, sizeof a), "w");
    fputs("hello", fp);
    fclose(fp);
    assert_int_equal(stripe_open(&f, &sv, "/plain", &args), RFS_E_INVAL);
}

struct creator {
    pthread_t thread;
    struct stripe_file f;
    int rc;
};

static void *create_same_file(void *arg)
{
    struct creator *c = arg;
    struct stripe_open_args a = { .flags = RFS_O_RDWR | RFS_O_CREAT, .mode = 0644,
                                  .unit = 512, .connect.net.timeout_ms = 10000 };
    c->rc = stripe_open(&c->f, &sv, "/shared", &a);
    return NULL;
}

/* Processes creating one file at once (as ROMIO creates its shared file
 * pointer's file) agree on one layout; a write-only open still finds it. */
static void test_concurrent_create(void **state)
{
    (void) state;
    struct creator c[5];
    /* valgrind 3.19 holds its lock while a thread blocks in F_OFD_SETLKW
     * (a server thread here), so the whole process stops, deaf even to
     * SIGTERM */
    skip_under_valgrind();
    for (int i = 0; i < 5; i++)
        assert_int_equal(pthread_create(&c[i].thread, NULL, create_same_file, &c[i]), 0);
    for (int i = 0; i < 5; i++) {
        pthread_join(c[i].thread, NULL);
        assert_int_equal(c[i].rc, 0);
        assert_int_equal(c[i].f.layout.file_id, c[0].f.layout.file_id);
        assert_int_equal(c[i].f.layout.unit, 512);
    }
    for (int i = 0; i < 5; i++)
        assert_int_equal(stripe_close(&c[i].f), 0);
    struct stripe_file f;
    open_file(&f, "/shared", RFS_O_WRONLY, 0, 0);
    assert_int_equal(f.layout.file_id, c[0].f.layout.file_id);
    assert_int_equal(stripe_close(&f), 0);
}

/* Disk-directed collective rounds: 4 participants, each with its own
 * open of one file, a view of blocks interleaved with the others' (rank r:
 * 300 bytes every 1200 from 300 r), two rounds where rank 0 alone has data
 * in the second: the file holds every byte, each server merged its pieces
 * into one access per round with data, only the participants with data
 * on a server sent it a request (the others nothing, not even empty
 * rounds), and a repeated collective read with `keep` comes from the hot
 * buffers. */
#define COLL_PARTS 4

struct participant {
    pthread_t thread;
    int rank, is_write, keep;
    int round;                  /* -1: both */
    uint64_t call;
    uint64_t len[2];            /* data bytes of each round */
    uint8_t data[2][30000];
    uint64_t coll_requests;     /* COLLs this participant sent */
    int rc;
};

static uint64_t coll_group;

/* The participants' agreement (MPI_Allreduce in the driver), by threads. */
static pthread_barrier_t agree_barrier;
static pthread_mutex_t agree_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t agree_sum[STRIPE_COLL_AGREE_MAX];

static int agree_threads(void *arg, const uint64_t *mine, uint64_t *sum, uint32_t count)
{
    (void) arg;
    pthread_mutex_lock(&agree_mu);
    for (uint32_t i = 0; i < count; i++)
        agree_sum[i] += mine[i];
    pthread_mutex_unlock(&agree_mu);
    pthread_barrier_wait(&agree_barrier);
    memcpy(sum, agree_sum, count * sizeof *sum);
    if (pthread_barrier_wait(&agree_barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
        memset(agree_sum, 0, sizeof agree_sum);
    pthread_barrier_wait(&agree_barrier);      /* nobody adds before the reset */
    return 0;
}

static void *coll_participant(void *arg)
{
    struct participant *p = arg;
    struct stripe_file f;
    struct stripe_open_args a = { .flags = RFS_O_RDWR | RFS_O_CREAT, .mode = 0644,
                                  .unit = 4096, .connect.net.timeout_ms = 10000 };
    struct dtype *t = dtype_resize(dtype_bytes(300), 0, 1200);
    size_t enc_len = dtype_serialize(t, NULL);
    uint8_t *enc = malloc(enc_len);
    dtype_serialize(t, enc);
    struct stripe_view v = { .type = t, .disp = (uint64_t) p->rank * 300, .enc = enc,
                             .enc_len = enc_len };
    p->rc = stripe_open(&f, &sv, "/coll", &a);
    for (int r = 0; p->rc == 0 && r < 2; r++) {
        if (p->round >= 0 && r != p->round)
            continue;
        struct stripe_coll c = { .group = coll_group, .call = p->call + (uint64_t) r,
                                 .rank = (uint32_t) p->rank, .keep = p->keep,
                                 .merge_from = coll_merge_from,
                                 .merge_runs_below = coll_merge_runs_below,
                                 .agree = agree_threads };
        uint64_t moved;
        p->rc = stripe_coll_io(&f, &v, (uint64_t) r * sizeof p->data[0], p->len[r],
                               (char *) p->data[r], p->is_write, &c, &moved);
        if (p->rc == 0 && moved != p->len[r])
            p->rc = -EIO;
    }
    p->coll_requests = f.stats.coll_requests;
    if (p->rc == 0)
        p->rc = stripe_close(&f);
    dtype_free(t);
    free(enc);
    return NULL;
}

/* Round 0: first_len[rank] bytes from each participant (first_len NULL:
 * all of data[0]); round 1: all of data[1] from rank 0 alone. */
static void coll_run(struct participant *p, uint64_t call, int is_write, int keep, int round,
                     const uint64_t *first_len)
{
    pthread_barrier_init(&agree_barrier, NULL, COLL_PARTS);
    for (int i = 0; i < COLL_PARTS; i++) {
        p[i].rank = i;
        p[i].len[0] = first_len ? first_len[i] : sizeof p[i].data[0];
        p[i].len[1] = i == 0 ? sizeof p[i].data[1] : 0;
        p[i].round = round;
        p[i].call = call;
        p[i].is_write = is_write;
        p[i].keep = keep;
        assert_int_equal(pthread_create(&p[i].thread, NULL, coll_participant, &p[i]), 0);
    }
    for (int i = 0; i < COLL_PARTS; i++) {
        pthread_join(p[i].thread, NULL);
        assert_int_equal(p[i].rc, 0);
    }
    pthread_barrier_destroy(&agree_barrier);
}

static void coll_stats(struct rfs_coll_stats *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < NSERVERS; i++) {
        struct rfs_coll_stats one;
        rfs_coll_table_stats(ts[i].srv.coll, &one);
        s->calls += one.calls;
        s->accesses += one.accesses;
        s->cache_hits += one.cache_hits;
    }
}

static void test_collective_rounds(void **state)
{
    (void) state;
    static struct participant w[COLL_PARTS], r[COLL_PARTS];
    struct rfs_coll_stats s0, s1, s2;
    skip_under_valgrind();
    coll_group = 0x1234;
    for (int i = 0; i < COLL_PARTS; i++)
        for (int k = 0; k < 2; k++)
            fill_random(w[i].data[k], sizeof w[i].data[k], (unsigned) (10 * i + k));
    coll_stats(&s0);
    /* round 0: 120000 bytes, 400 runs of 300 bytes from 4 participants:
     * once sorted, one access per server */
    coll_run(w, 10, 1, 0, 0, NULL);
    coll_stats(&s1);
    assert_int_equal(s1.calls - s0.calls, NSERVERS);
    assert_int_equal(s1.accesses - s0.accesses, NSERVERS);
    for (int i = 0; i < COLL_PARTS; i++)
        assert_int_equal(w[i].coll_requests, NSERVERS);
    /* round 1: rank 0 alone has data, and alone sends requests */
    coll_run(w, 11, 1, 0, 1, NULL);
    coll_stats(&s0);
    assert_int_equal(s0.calls - s1.calls, NSERVERS);
    assert_true(s0.accesses - s1.accesses >= 100);
    assert_int_equal(w[0].coll_requests, NSERVERS);
    for (int i = 1; i < COLL_PARTS; i++)
        assert_int_equal(w[i].coll_requests, 0);
    s1 = s0;

    coll_run(r, 20, 0, 1, -1, NULL);
    for (int i = 0; i < COLL_PARTS; i++)
        assert_memory_equal(r[i].data[0], w[i].data[0], sizeof w[i].data[0]);
    assert_memory_equal(r[0].data[1], w[0].data[1], sizeof w[0].data[1]);
    coll_run(r, 30, 0, 1, -1, NULL);
    coll_stats(&s2);
    assert_int_equal(s2.cache_hits - s1.cache_hits, 2 * NSERVERS);     /* both rounds */
    for (int i = 0; i < COLL_PARTS; i++)
        assert_memory_equal(r[i].data[0], w[i].data[0], sizeof w[i].data[0]);
}

/* Issue 21: a collective read whose data all lies on one server (each
 * participant's first 300 bytes, within the first stripe unit) is one
 * call on that server, and every participant sends one request, to it:
 * the other servers hear nothing and nobody waits for them. Then ranks 1
 * and 3 alone read: a call of two participants whose ranks are not 0, 1.
 * Last, the same read with the driver's merge threshold goes without a
 * call. */
static void test_collective_read_on_one_server(void **state)
{
    (void) state;
    static struct participant w[COLL_PARTS], r[COLL_PARTS];
    static const uint64_t all[COLL_PARTS] = { 300, 300, 300, 300 };
    static const uint64_t odd[COLL_PARTS] = { 0, 300, 0, 300 };
    struct rfs_coll_stats s0, s1;
    skip_under_valgrind();
    coll_group = 0x2121;
    for (int i = 0; i < COLL_PARTS; i++)
        fill_random(w[i].data[0], 300, (unsigned) (100 + i));
    coll_run(w, 10, 1, 0, 0, all);
    coll_stats(&s0);
    coll_run(r, 20, 0, 0, 0, all);
    coll_stats(&s1);
    assert_int_equal(s1.calls - s0.calls, 1);
    assert_int_equal(s1.accesses - s0.accesses, 1);     /* the 4 pieces merged */
    for (int i = 0; i < COLL_PARTS; i++) {
        assert_int_equal(r[i].coll_requests, 1);
        assert_memory_equal(r[i].data[0], w[i].data[0], 300);
    }
    memset(r, 0, sizeof r);
    coll_run(r, 30, 0, 0, 0, odd);
    coll_stats(&s0);
    assert_int_equal(s0.calls - s1.calls, 1);
    for (int i = 0; i < COLL_PARTS; i++) {
        assert_int_equal(r[i].coll_requests, (uint64_t) (i % 2));
        assert_memory_equal(r[i].data[0], w[i].data[0], odd[i]);
    }
    /* With the driver's threshold, 1200 bytes on one server are too few
     * to wait for each other: plain requests, no call on the server. */
    memset(r, 0, sizeof r);
    coll_merge_from = STRIPE_COLL_MERGE_FROM;
    coll_run(r, 40, 0, 0, 0, all);
    coll_merge_from = 0;
    coll_stats(&s1);
    assert_int_equal(s1.calls - s0.calls, 0);
    for (int i = 0; i < COLL_PARTS; i++) {
        assert_int_equal(r[i].coll_requests, 0);
        assert_memory_equal(r[i].data[0], w[i].data[0], 300);
    }
}

/* Issue 21: where the runs on a server average merge_runs_below or more,
 * the round goes as plain requests, whatever its bytes: the 300-byte
 * blocks (some cut in two at a stripe unit's end, so a little under 300
 * on average) go plain with a bound of 200 and are merged under the
 * driver's 64 KiB; the data is right both ways. */
static void test_collective_runs_bound(void **state)
{
    (void) state;
    static struct participant w[COLL_PARTS], r[COLL_PARTS];
    struct rfs_coll_stats s0, s1;
    skip_under_valgrind();
    coll_group = 0x2323;
    for (int i = 0; i < COLL_PARTS; i++)
        fill_random(w[i].data[0], sizeof w[i].data[0], (unsigned) (200 + i));
    coll_stats(&s0);
    coll_merge_runs_below = 200;
    coll_run(w, 10, 1, 0, 0, NULL);
    coll_run(r, 20, 0, 0, 0, NULL);
    coll_stats(&s1);
    assert_int_equal(s1.calls - s0.calls, 0);
    for (int i = 0; i < COLL_PARTS; i++) {
        assert_int_equal(w[i].coll_requests, 0);
        assert_int_equal(r[i].coll_requests, 0);
        assert_memory_equal(r[i].data[0], w[i].data[0], sizeof w[i].data[0]);
    }
    memset(r, 0, sizeof r);
    coll_merge_runs_below = STRIPE_COLL_MERGE_RUNS_BELOW;
    coll_run(r, 30, 0, 0, 0, NULL);
    coll_stats(&s0);
    assert_int_equal(s0.calls - s1.calls, NSERVERS);
    for (int i = 0; i < COLL_PARTS; i++) {
        assert_int_equal(r[i].coll_requests, NSERVERS);
        assert_memory_equal(r[i].data[0], w[i].data[0], sizeof w[i].data[0]);
    }
}

/* One server goes away: calls that need it fail, none hangs. */
/* The list path's bytes in flight over all objects stay within
 * max_inflight, at least one request going however small it is, and the
 * objects fed at once within max_servers; without a bound (0) every
 * object's window fills, more than the bound, and every object is fed.
 * Counted in stats.inflight_peak and servers_peak; the data checked after
 * each. */
static void test_inflight_bound(void **state)
{
    (void) state;
    struct stripe_file f;
    uint64_t moved;
    const uint64_t len = 8u << 20, bound = 3u << 19;    /* 1.5 MiB: one request of 1 MiB */
    const uint64_t bounds[] = { 0, bound, 1 };
    const uint64_t peaks[] = { len, bound, STRIPE_REQ_DATA };  /* at most; unbounded: exactly */
    const uint32_t servers[] = { 0, 2, 1 }, server_peaks[] = { NSERVERS, 2, 1 };
    uint8_t *src = malloc(len), *dst = malloc(len);
    fill_random(src, len, 11);
    open_file(&f, "/inflight", RFS_O_RDWR | RFS_O_CREAT, 256u << 10, 0);
    struct stripe_view whole = { 0 };
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++)
        for (int is_write = 1; is_write >= 0; is_write--) {
            f.max_inflight = bounds[i];
            f.max_servers = 0;
            f.stats.inflight_peak = 0;
            memset(dst, 0, len);
            assert_int_equal(stripe_io(&f, STRIPE_LIST, &whole, 0, len,
                                       (char *) (is_write ? src : dst), is_write, &moved), 0);
            assert_int_equal(moved, len);
            if (i == 0)
                assert_int_equal(f.stats.inflight_peak, len);
            else
                assert_true(f.stats.inflight_peak <= peaks[i]);
            if (!is_write)
                assert_memory_equal(dst, src, len);
        }
    for (size_t i = 0; i < sizeof servers / sizeof servers[0]; i++)
        for (int is_write = 1; is_write >= 0; is_write--) {
            f.max_inflight = 0;
            f.max_servers = servers[i];
            f.stats.servers_peak = 0;
            memset(dst, 0, len);
            assert_int_equal(stripe_io(&f, STRIPE_LIST, &whole, 0, len,
                                       (char *) (is_write ? src : dst), is_write, &moved), 0);
            assert_int_equal(moved, len);
            assert_int_equal(f.stats.servers_peak, server_peaks[i]);
            if (!is_write)
                assert_memory_equal(dst, src, len);
        }
    check_placement(&f.layout, "inflight", src, len);
    assert_int_equal(stripe_close(&f), 0);
    free(src);
    free(dst);
}

static void test_server_lost(void **state)
{
    (void) state;
    struct stripe_file f;
    uint64_t moved;
    char buf[10000];
    struct stripe_view whole = { 0 };
    open_file(&f, "/lost", RFS_O_RDWR | RFS_O_CREAT, 1000, 0);
    memset(buf, 'a', sizeof buf);
    assert_int_equal(stripe_io(&f, STRIPE_LIST, &whole, 0, sizeof buf, buf, 1, &moved), 0);
    test_server_stop(&ts[1]);
    ts[1].root[0] = '\0';
    assert_true(stripe_io(&f, STRIPE_LIST, &whole, 0, sizeof buf, buf, 1, &moved) < 0);
    assert_int_equal(f.failed, 1);
    uint64_t size;
    assert_true(stripe_size(&f, &size) != 0);
    assert_int_equal(f.failed, 1);
    stripe_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_math),
        cmocka_unit_test(test_header),
        cmocka_unit_test(test_server_lists),
        cmocka_unit_test_setup_teardown(test_contiguous_and_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_methods_through_a_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_connections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connections_revived, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_segments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_datatype_direct_or_staged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_objects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collective_rounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collective_runs_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collective_read_on_one_server, setup, teardown),
        cmocka_unit_test_setup_teardown(test_inflight_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_lost, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
