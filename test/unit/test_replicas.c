/* Replicated striped files: the placement rule and the replica state's
 * rules (encoding against corruption, merging, the read and write quorums)
 * against brute force; and files of two copies on four live servers
 * (rfs_loop on loopback): every copy's bytes as they sit in its server's
 * root, a server lost while the file is open (reads and writes go on,
 * the server is marked stale on the others), a later open that must not
 * read the stale server once it is back, and a resync. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include "stripe/stripe_file.h"
#include "unit_util.h"

#define NSERVERS 4
#define UNIT 1000
#define SIZE (NSERVERS * UNIT * 7 + 123)    /* 7 rows and a bit, odd sizes */

static struct test_server ts[NSERVERS];
static struct stripe_servers sv;
static const struct rfs_connect_opts tcp_1s = { .net.timeout_ms = 1000 };

static int setup(void **state)
{
    (void) state;
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
        test_server_stop(&ts[i]);
    return 0;
}

static void test_placement(void **state)
{
    (void) state;
    for (uint32_t factor = 1; factor <= 9; factor++)
        for (uint32_t r = 1; r <= STRIPE_MAX_REPLICAS; r++) {
            struct stripe_layout l = { .unit = 4096, .factor = factor, .replicas = r };
            if (r > factor) {
                assert_int_equal(stripe_layout_check(&l), -EINVAL);
                continue;
            }
            assert_int_equal(stripe_layout_check(&l), 0);
            uint32_t held[16] = { 0 };
            for (uint32_t o = 0; o < factor; o++) {
                uint64_t seen = 0;
                for (uint32_t c = 0; c < r; c++) {
                    uint32_t s = stripe_copy_server(&l, o, c);
                    assert_true(s < factor);
                    assert_false(seen >> s & 1);        /* no two copies on one server */
                    seen |= UINT64_C(1) << s;
                    held[s]++;
                }
                /* copy 0 where the file of one copy has the object */
                assert_int_equal(stripe_copy_server(&l, o, 0), o);
                /* a lost server: the object is read from its next copy */
                uint64_t avoid = UINT64_C(1) << o;
                assert_int_equal(stripe_read_copy(&l, o, avoid), r > 1 ? 1 : -1);
                assert_int_equal(stripe_read_copy(&l, o, seen), -1);
            }
            for (uint32_t s = 0; s < factor; s++)
                assert_int_equal(held[s], r);   /* every server alike */
            /* a change reaches a server that every later read hears */
            assert_true(stripe_state_writes(&l) + stripe_state_reads(&l) > factor);
        }
    struct stripe_layout one = { .unit = 1, .factor = 4, .replicas = STRIPE_MAX_REPLICAS + 1 };
    assert_int_equal(stripe_layout_check(&one), -EINVAL);
    char name[64];
    assert_int_equal(stripe_copy_path("/d/f.nc", 0, name, sizeof name), 0);
    assert_string_equal(name, "/d/f.nc");
    assert_int_equal(stripe_copy_path("/d/f.nc", 2, name, sizeof name), 0);
    assert_string_equal(name, "/d/.f.nc.copy2");
    assert_int_equal(stripe_copy_path("f", 1, name, sizeof name), 0);
    assert_string_equal(name, ".f.copy1");
    assert_int_equal(stripe_copy_path("/d/f", 1, name, 8), -ENAMETOOLONG);
}

static void test_header_versions(void **state)
{
    (void) state;
    struct stripe_header h = { .layout = { .unit = 65536, .factor = 4, .replicas = 1,
                                           .file_id = 7 }, .index = 2 }, back;
    uint8_t buf[STRIPE_HDR_USED];
    stripe_header_encode(&h, buf);
    assert_int_equal(buf[8], 1);                /* one copy: version 1, as before */
    assert_int_equal(buf[20], 0);
    assert_int_equal(stripe_header_decode(buf, sizeof buf, &back), 0);
    assert_int_equal(back.layout.replicas, 1);
    h.layout.replicas = 3;
    stripe_header_encode(&h, buf);
    assert_int_equal(buf[8], 2);
    assert_int_equal(stripe_header_decode(buf, sizeof buf, &back), 0);
    assert_int_equal(back.layout.replicas, 3);
    assert_int_equal(back.index, 2);
    h.layout.replicas = 5;                      /* beyond the factor: refused */
    stripe_header_encode(&h, buf);
    assert_int_equal(stripe_header_decode(buf, sizeof buf, &back), -EINVAL);
}

static void test_state_rules(void **state)
{
    (void) state;
    struct stripe_state s = { .epoch = 9, .stale = 0x6, .resyncing = 0x2 }, back, m;
    uint8_t buf[STRIPE_STATE_SIZE] = { 0 };
    assert_int_equal(stripe_state_decode(buf, sizeof buf, &back), -ENOENT);
    assert_int_equal(back.epoch, 0);
    assert_int_equal(stripe_state_decode(buf, 0, &back), -ENOENT);
    stripe_state_encode(&s, buf);
    assert_int_equal(stripe_state_decode(buf, sizeof buf, &back), 0);
    assert_int_equal(back.epoch, 9);
    assert_int_equal(back.stale, 0x6);
    assert_int_equal(back.resyncing, 0x2);
    assert_int_equal(stripe_state_decode(buf, sizeof buf - 1, &back), -EINVAL);
    for (size_t i = 0; i < sizeof buf; i++)
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (uint8_t) (1 << bit);
            assert_int_equal(stripe_state_decode(buf, sizeof buf, &back), -EINVAL);
            buf[i] ^= (uint8_t) (1 << bit);
        }
    /* the higher epoch holds, whatever the other says */
    struct stripe_state older = { .epoch = 8, .stale = 0x1 }, newer = { .epoch = 10 };
    stripe_state_merge(&s, &older, &m);
    assert_int_equal(m.epoch, 9);
    assert_int_equal(m.stale, 0x6);
    stripe_state_merge(&s, &newer, &m);
    assert_int_equal(m.stale, 0);
    /* equal epochs: the union, a server stale on one side and resyncing on
     * the other stays stale */
    struct stripe_state other = { .epoch = 9, .stale = 0x3, .resyncing = 0x0 };
    stripe_state_merge(&s, &other, &m);
    assert_int_equal(m.stale, 0x7);
    assert_int_equal(m.resyncing, 0x0);
    struct stripe_state both = { .epoch = 9, .stale = 0x2, .resyncing = 0x2 };
    stripe_state_merge(&s, &both, &m);
    assert_int_equal(m.resyncing, 0x2);
}

static void open_copies(struct stripe_file *f, const char *path, uint32_t flags)
{
    struct stripe_open_args a = { .flags = flags, .mode = 0644, .unit = UNIT,
                                  .replicas = 2, .connect = tcp_1s, .share = 1 };
    assert_int_equal(stripe_open(f, &sv, path, &a), 0);
    assert_int_equal(stripe_copies(&f->layout), 2);
}

/* Every copy of every object holds `expect` as the layout places it. */
static void check_copies(const struct stripe_layout *l, const char *name, const uint8_t *expect,
                         uint64_t size, uint64_t skip_servers)
{
    for (uint32_t o = 0; o < l->factor; o++)
        for (uint32_t c = 0; c < stripe_copies(l); c++) {
            uint32_t s = stripe_copy_server(l, o, c);
            char rel[256], path[4400];
            size_t len;
            if (skip_servers >> s & 1)
                continue;
            assert_int_equal(stripe_copy_path(name, c, rel, sizeof rel), 0);
            uint8_t *all = read_file(test_path(&ts[s], rel, path, sizeof path), &len);
            assert_non_null(all);
            struct stripe_header h;
            assert_int_equal(stripe_header_decode(all, len, &h), 0);
            assert_int_equal(h.index, o);
            assert_int_equal(len - STRIPE_HDR_SIZE, stripe_local_size(l, o, size));
            for (uint64_t off = 0; off < size; off++)
                if (stripe_object_of(l, off) == o)
                    assert_int_equal(all[STRIPE_HDR_SIZE + stripe_local_of(l, off)],
                                     expect[off]);
            free(all);
        }
}

static void read_all_methods(struct stripe_file *f, const uint8_t *expect)
{
    static uint8_t back[SIZE];
    struct stripe_view whole = { 0 };
    uint64_t moved;
    for (int m = STRIPE_NAIVE; m < STRIPE_METHODS; m++) {
        memset(back, 0, sizeof back);
        assert_int_equal(stripe_io(f, (enum stripe_method) m, &whole, 0, SIZE, (char *) back, 0,
                                   &moved), 0);
        assert_int_equal(moved, SIZE);
        assert_memory_equal(back, expect, SIZE);
    }
}

static void test_copies_written(void **state)
{
    (void) state;
    static uint8_t data[SIZE];
    struct stripe_file f;
    struct stripe_view whole = { 0 };
    uint64_t moved, size;
    fill_random(data, SIZE, 3);
    open_copies(&f, "/w", RFS_O_RDWR | RFS_O_CREAT | RFS_O_EXCL);
    assert_int_equal(stripe_io(&f, STRIPE_LIST, &whole, 0, SIZE, (char *) data, 1, &moved), 0);
    assert_int_equal(stripe_sync(&f), 0);
    check_copies(&f.layout, "w", data, SIZE, 0);
    read_all_methods(&f, data);
    assert_int_equal(stripe_truncate(&f, 5000), 0);
    assert_int_equal(stripe_size(&f, &size), 0);
    assert_int_equal(size, 5000);
    check_copies(&f.layout, "w", data, 5000, 0);
    assert_int_equal(stripe_close(&f), 0);
    assert_int_equal(stripe_unlink(&tcp_1s, &sv, "/w"), 0);
    char path[4400];
    for (int s = 0; s < NSERVERS; s++) {
        assert_null(read_file(test_path(&ts[s], "w", path, sizeof path), &moved));
        assert_null(read_file(test_path(&ts[s], ".w.copy1", path, sizeof path), &moved));
    }
}

/* The state as server s's copy 0 holds it. */
static struct stripe_state state_on(int s, const char *name)
{
    char path[4400];
    size_t len;
    struct stripe_state st;
    uint8_t *all = read_file(test_path(&ts[s], name, path, sizeof path), &len);
    assert_non_null(all);
    int rc = stripe_state_decode(all + STRIPE_STATE_OFFSET, STRIPE_STATE_SIZE, &st);
    assert_true(rc == 0 || rc == -ENOENT);
    free(all);
    return st;
}

static void test_server_lost_and_back(void **state)
{
    (void) state;
    static uint8_t old[SIZE], now[SIZE];
    struct stripe_file f, g;
    struct stripe_view whole = { 0 };
    uint64_t moved, servers, copied;
    fill_random(old, SIZE, 5);
    fill_random(now, SIZE, 6);
    open_copies(&f, "/l", RFS_O_RDWR | RFS_O_CREAT);
    assert_int_equal(stripe_io(&f, STRIPE_LIST, &whole, 0, SIZE, (char *) old, 1, &moved), 0);
    assert_int_equal(stripe_sync(&f), 0);

    /* server 1 lost: reads from the other copies, a write goes on */
    test_server_pause(&ts[1]);
    read_all_methods(&f, old);
    assert_int_equal(stripe_io(&f, STRIPE_DATATYPE, &whole, 0, SIZE, (char *) now, 1, &moved), 0);
    assert_int_equal(stripe_io(&f, STRIPE_LIST, &whole, 0, SIZE, (char *) now, 1, &moved), 0);
    assert_int_equal(stripe_sync(&f), 0);
    assert_true(f.down >> 1 & 1);
    read_all_methods(&f, now);
    for (int s = 0; s < NSERVERS; s++)
        if (s != 1)
            assert_int_equal(state_on(s, "l").stale, 0x2);     /* marked on the others */
    assert_int_equal(state_on(1, "l").stale, 0);   /* the lost one cannot know */
    assert_int_equal(stripe_close(&f), 0);

    /* a new open while it is gone, and once it is back with its old bytes */
    open_copies(&g, "/l", RFS_O_RDWR);
    read_all_methods(&g, now);
    assert_int_equal(stripe_close(&g), 0);
    test_server_resume(&ts[1]);
    check_copies(&f.layout, "l", old, SIZE, ~UINT64_C(0x2));   /* server 1: still old */
    open_copies(&g, "/l", RFS_O_RDWR);
    assert_int_equal(g.state.stale, 0x2);
    assert_int_equal(g.down, 0);
    read_all_methods(&g, now);                  /* never the stale copies */

    /* resync: server 1 current again, byte for byte */
    assert_int_equal(stripe_resync(&g, &servers, &copied), 0);
    assert_int_equal(servers, 0x2);
    assert_true(copied >= 2 * (SIZE / NSERVERS));
    assert_int_equal(g.state.stale, 0);
    check_copies(&g.layout, "l", now, SIZE, 0);
    assert_int_equal(stripe_resync(&g, &servers, &copied), 0);     /* nothing left */
    assert_int_equal(servers, 0);
    assert_int_equal(stripe_close(&g), 0);

    /* then server 2 lost: objects 1 and 2 are read from server 1 and 3 */
    test_server_pause(&ts[2]);
    open_copies(&g, "/l", RFS_O_RDONLY);
    read_all_methods(&g, now);
    assert_int_equal(stripe_close(&g), 0);
    test_server_resume(&ts[2]);

    /* a server lost that this open never needed since: its close goes on */
    open_copies(&g, "/l", RFS_O_RDONLY);
    test_server_pause(&ts[3]);
    assert_int_equal(stripe_close(&g), 0);
    test_server_resume(&ts[3]);
}

/* A view of 40 blocks of 37 bytes every 150, written by each method to
 * both copies and read back by each: runs that do not divide the unit. */
static void test_methods_through_a_view(void **state)
{
    (void) state;
    struct dtype *t = dtype_vector(40, 37, 150, NULL);
    assert_non_null(t);
    size_t enc_len = dtype_serialize(t, NULL);
    uint8_t *enc = malloc(enc_len);
    dtype_serialize(t, enc);
    struct stripe_view v = { .type = t, .disp = 11, .enc = enc, .enc_len = enc_len };
    const uint64_t data = 50 * (uint64_t) t->size;
    uint8_t *src = malloc(data), *dst = malloc(data);
    uint64_t moved;
    for (int w = STRIPE_NAIVE; w < STRIPE_METHODS; w++) {
        struct stripe_file f;
        open_copies(&f, "/v", RFS_O_RDWR | RFS_O_CREAT);
        fill_random(src, data, (unsigned) w + 1);
        assert_int_equal(stripe_io(&f, (enum stripe_method) w, &v, 0, data, (char *) src, 1,
                                   &moved), 0);
        assert_int_equal(f.down, 0);
        for (int r = STRIPE_NAIVE; r < STRIPE_METHODS; r++) {
            memset(dst, 0, data);
            assert_int_equal(stripe_io(&f, (enum stripe_method) r, &v, 0, data, (char *) dst, 0,
                                       &moved), 0);
            assert_memory_equal(dst, src, data);
        }
        assert_int_equal(stripe_close(&f), 0);
    }
    free(src);
    free(dst);
    free(enc);
    dtype_free(t);
}

/* A writer that cannot write a server being resynced makes it plain
 * stale again, and the resync's end then leaves it stale: it missed that
 * write. */
static void test_resync_undone_by_a_skipping_writer(void **state)
{
    (void) state;
    static uint8_t data[SIZE];
    struct stripe_file w, tool;
    struct stripe_view whole = { 0 };
    uint64_t moved;
    open_copies(&w, "/r", RFS_O_RDWR | RFS_O_CREAT);
    test_server_pause(&ts[1]);
    assert_int_equal(stripe_io(&w, STRIPE_LIST, &whole, 0, SIZE, (char *) data, 1, &moved), 0);
    test_server_resume(&ts[1]);
    open_copies(&tool, "/r", RFS_O_RDWR);
    assert_int_equal(tool.state.stale, 0x2);
    assert_int_equal(stripe_state_change(&tool, 0, 0x2, 0), 0);    /* a resync begins */
    w.readmit_ms = UINT64_MAX;          /* the writer cannot take server 1 back */
    assert_int_equal(stripe_io(&w, STRIPE_LIST, &whole, 0, SIZE, (char *) data, 1, &moved), 0);
    assert_int_equal(w.state.stale & ~w.state.resyncing, 0x2);     /* plain stale again */
    assert_int_equal(stripe_state_change(&tool, 0, 0, 0x2), 0);    /* the resync's end */
    assert_int_equal(tool.state.stale, 0x2);
    assert_int_equal(stripe_close(&w), 0);
    assert_int_equal(stripe_close(&tool), 0);
}

/* Delete removes the copies a file has, not a user's file of such a name. */
static void test_delete_only_copies(void **state)
{
    (void) state;
    struct stripe_file f;
    struct stripe_open_args one = { .flags = RFS_O_RDWR | RFS_O_CREAT, .mode = 0644,
                                    .unit = UNIT, .connect = tcp_1s };
    char path[4400];
    size_t len;
    assert_int_equal(stripe_open(&f, &sv, "/u", &one), 0);
    assert_int_equal(stripe_close(&f), 0);
    FILE *own = fopen(test_path(&ts[1], ".u.copy1", path, sizeof path), "w");
    assert_non_null(own);
    fclose(own);
    assert_int_equal(stripe_unlink(&tcp_1s, &sv, "/u"), 0);
    uint8_t *left = read_file(path, &len);
    assert_non_null(left);
    free(left);
}

static void test_every_copy_lost(void **state)
{
    (void) state;
    static uint8_t data[SIZE];
    struct stripe_file f;
    struct stripe_view whole = { 0 };
    uint64_t moved;
    open_copies(&f, "/e", RFS_O_RDWR | RFS_O_CREAT);
    assert_int_equal(stripe_io(&f, STRIPE_LIST, &whole, 0, SIZE, (char *) data, 1, &moved), 0);
    /* servers 1 and 2 hold both copies of object 1 */
    test_server_pause(&ts[1]);
    test_server_pause(&ts[2]);
    int rc = stripe_io(&f, STRIPE_LIST, &whole, 0, SIZE, (char *) data, 0, &moved);
    assert_true(rc != 0);
    assert_true(f.failed == 1 || f.failed == 2);
    assert_non_null(f.why);
    rc = stripe_io(&f, STRIPE_LIST, &whole, 0, SIZE, (char *) data, 1, &moved);
    assert_true(rc != 0);
    stripe_close(&f);
    test_server_resume(&ts[1]);
    test_server_resume(&ts[2]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_placement),
        cmocka_unit_test(test_header_versions),
        cmocka_unit_test(test_state_rules),
        cmocka_unit_test_setup_teardown(test_copies_written, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_lost_and_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_methods_through_a_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resync_undone_by_a_skipping_writer, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_delete_only_copies, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_copy_lost, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
