/* The protocol's namespace extension against the real request engine over
 * loopback: every change is checked in the export root itself, listings
 * against what is there, the symlink rule both ways, and hostile input. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "proto/rfs_client.h"
#include "server/rfs_path.h"
#include "unit_util.h"

static struct test_server ts;

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

static int clean(void **state)
{
    (void) state;
    clear_dir(ts.root);
    return 0;
}

static void connect_client(struct rfs_client *c)
{
    assert_int_equal(rfs_client_connect(c, &net_tcp_transport, "127.0.0.1", ts.port, 10000), 0);
}

static void test_stat_mkdir_rename_rmdir(void **state)
{
    (void) state;
    struct rfs_client c;
    struct rfs_stat_rec st;
    struct stat real;
    char path[4200], other[4200];
    connect_client(&c);
    assert_int_equal(rfs_mkdir(&c, "/d", 0750), RFS_OK);
    assert_int_equal(stat(test_path(&ts, "d", path, sizeof path), &real), 0);
    assert_true(S_ISDIR(real.st_mode));
    assert_int_equal(real.st_mode & 0777, 0750 & ~umask(022));
    umask(022);
    assert_int_equal(rfs_mkdir(&c, "/d", 0755), RFS_E_EXIST);
    assert_int_equal(rfs_mkdir(&c, "/no/such", 0755), RFS_E_NOENT);

    struct rfs_stat s;
    assert_int_equal(rfs_open(&c, 0, "/d/f", RFS_O_RDWR | RFS_O_CREAT, 0640, &s), RFS_OK);
    assert_int_equal(rfs_pwrite(&c, 0, "hello", 5, 3), RFS_OK);
    assert_int_equal(rfs_close(&c, 0), RFS_OK);
    assert_int_equal(rfs_stat_path(&c, "/d/f", &st), RFS_OK);
    assert_int_equal(st.type, RFS_TYPE_REG);
    assert_int_equal(st.size, 8);
    assert_int_equal(st.perm, 0640);
    assert_int_equal(stat(test_path(&ts, "d/f", path, sizeof path), &real), 0);
    assert_true(st.mtime_ns == (int64_t) real.st_mtim.tv_sec * 1000000000 + real.st_mtim.tv_nsec);
    assert_int_equal(rfs_stat_path(&c, "/", &st), RFS_OK);
    assert_int_equal(st.type, RFS_TYPE_DIR);
    assert_int_equal(rfs_stat_path(&c, "/d/none", &st), RFS_E_NOENT);

    assert_int_equal(rfs_rmdir(&c, "/d"), RFS_E_NOTEMPTY);
    assert_int_equal(rfs_rename(&c, "/d/f", "/g", 0), RFS_OK);
    assert_int_equal(access(test_path(&ts, "d/f", path, sizeof path), F_OK), -1);
    size_t len;
    uint8_t *bytes = read_file(test_path(&ts, "g", other, sizeof other), &len);
    assert_int_equal(len, 8);
    assert_memory_equal(bytes + 3, "hello", 5);
    free(bytes);
    assert_int_equal(rfs_open(&c, 0, "/h", RFS_O_RDWR | RFS_O_CREAT, 0644, &s), RFS_OK);
    assert_int_equal(rfs_close(&c, 0), RFS_OK);
    assert_int_equal(rfs_rename(&c, "/g", "/h", RFS_RENAME_NOREPLACE), RFS_E_EXIST);
    assert_int_equal(rfs_rename(&c, "/g", "/h", 0), RFS_OK);
    assert_int_equal(rfs_stat_path(&c, "/h", &st), RFS_OK);
    assert_int_equal(st.size, 8);
    assert_int_equal(rfs_rename(&c, "/h", "/../out", 0), RFS_E_ESCAPE);
    assert_int_equal(rfs_rmdir(&c, "/d"), RFS_OK);
    assert_int_equal(access(test_path(&ts, "d", path, sizeof path), F_OK), -1);
    assert_int_equal(rfs_rmdir(&c, "/h"), RFS_E_NOTDIR);
    rfs_client_close(&c);
}

static void test_setattr(void **state)
{
    (void) state;
    struct rfs_client c;
    struct rfs_stat s;
    struct stat real;
    char path[4200];
    connect_client(&c);
    assert_int_equal(rfs_open(&c, 0, "/f", RFS_O_RDWR | RFS_O_CREAT, 0644, &s), RFS_OK);
    assert_int_equal(rfs_close(&c, 0), RFS_OK);
    int64_t at = 1000000000LL * 1234567 + 89, mt = 1000000000LL * 7654321 + 12;
    assert_int_equal(rfs_setattr(&c, "/f", RFS_SET_MODE | RFS_SET_ATIME | RFS_SET_MTIME, 0600,
                                 at, mt), RFS_OK);
    assert_int_equal(stat(test_path(&ts, "f", path, sizeof path), &real), 0);
    assert_int_equal(real.st_mode & 07777, 0600);
    assert_int_equal(real.st_atim.tv_sec, 1234567);
    assert_int_equal(real.st_atim.tv_nsec, 89);
    assert_int_equal(real.st_mtim.tv_sec, 7654321);
    assert_int_equal(real.st_mtim.tv_nsec, 12);
    /* mode alone leaves the times; times alone leave the mode */
    assert_int_equal(rfs_setattr(&c, "/f", RFS_SET_MODE, 0640, 0, 0), RFS_OK);
    assert_int_equal(rfs_setattr(&c, "/f", RFS_SET_MTIME_NOW, 0, 0, 0), RFS_OK);
    assert_int_equal(stat(path, &real), 0);
    assert_int_equal(real.st_mode & 07777, 0640);
    assert_int_equal(real.st_atim.tv_sec, 1234567);
    assert_true(real.st_mtim.tv_sec > 7654321);
    assert_int_equal(rfs_setattr(&c, "/nothing", RFS_SET_MODE, 0600, 0, 0), RFS_E_NOENT);
    assert_int_equal(rfs_setattr(&c, "/f", 0, 0, 0, 0), RFS_E_INVAL);
    rfs_client_close(&c);
}

/* Every name the listing gives, once, in pages of `room` bytes. */
static int list_all(struct rfs_client *c, const char *dir, uint64_t room, char names[][32],
                    uint32_t *types)
{
    uint8_t *buf = malloc(room);
    uint64_t index = 0, next, used;
    int n = 0;
    do {
        assert_int_equal(rfs_readdir(c, dir, index, buf, room, &next, &used), RFS_OK);
        for (uint64_t at = 0; at < used;) {
            uint32_t type;
            const char *name;
            size_t len;
            size_t took = rfs_dirent_decode(buf + at, used - at, &type, &name, &len);
            assert_true(took > 0 && len < 32);
            memcpy(names[n], name, len);
            names[n][len] = '\0';
            types[n++] = type;
            at += took;
        }
        index = next;
    } while (used > 0);
    free(buf);
    return n;
}

static void test_readdir_pages(void **state)
{
    (void) state;
    struct rfs_client c;
    struct rfs_stat s;
    char path[64], names[300][32];
    uint32_t types[300];
    connect_client(&c);
    assert_int_equal(rfs_mkdir(&c, "/many", 0755), RFS_OK);
    assert_int_equal(rfs_mkdir(&c, "/many/sub", 0755), RFS_OK);
    for (int i = 0; i < 199; i++) {
        snprintf(path, sizeof path, "/many/file-%03d", i);
        assert_int_equal(rfs_open(&c, 0, path, RFS_O_WRONLY | RFS_O_CREAT, 0644, &s), RFS_OK);
        assert_int_equal(rfs_close(&c, 0), RFS_OK);
    }
    const uint64_t rooms[] = { 17, 100, 65536 };
    for (size_t r = 0; r < 3; r++) {
        int n = list_all(&c, "/many", rooms[r], names, types);
        assert_int_equal(n, 200);
        int seen[200] = { 0 }, dirs = 0;
        for (int i = 0; i < n; i++) {
            int k;
            if (strcmp(names[i], "sub") == 0) {
                assert_int_equal(types[i], RFS_TYPE_DIR);
                dirs++;
                continue;
            }
            assert_int_equal(sscanf(names[i], "file-%03d", &k), 1);
            assert_int_equal(types[i], RFS_TYPE_REG);
            seen[k]++;
        }
        assert_int_equal(dirs, 1);
        for (int i = 0; i < 199; i++)
            assert_int_equal(seen[i], 1);
    }
    uint8_t tiny[8], page[4096];
    uint64_t next, used;
    /* past the end (the directory shrank since the last page): no entry */
    assert_int_equal(rfs_readdir(&c, "/many", 500, page, sizeof page, &next, &used), RFS_OK);
    assert_int_equal(used, 0);
    assert_int_equal(next, 500);
    assert_int_equal(rfs_readdir(&c, "/many", 0, tiny, sizeof tiny, &next, &used),
                     RFS_E_NAMETOOLONG);
    assert_int_equal(rfs_readdir(&c, "/many/file-001", 0, tiny, sizeof tiny, &next, &used),
                     RFS_E_NOTDIR);
    rfs_client_close(&c);
}

/* The symlink rule: an absolute link is followed when its target is
 * beneath the root's own location, refused otherwise. */
static void symlink_rule(void)
{
    struct rfs_client c;
    struct rfs_stat s;
    struct rfs_stat_rec st;
    char path[4200], target[4200];
    connect_client(&c);
    assert_int_equal(rfs_mkdir(&c, "/data", 0755), RFS_OK);
    assert_int_equal(rfs_open(&c, 0, "/data/x", RFS_O_RDWR | RFS_O_CREAT, 0644, &s), RFS_OK);
    assert_int_equal(rfs_pwrite(&c, 0, "abc", 3, 0), RFS_OK);
    assert_int_equal(rfs_close(&c, 0), RFS_OK);
    char *root = realpath(ts.root, NULL);
    snprintf(target, sizeof target, "%s/data", root);
    assert_int_equal(symlink(target, test_path(&ts, "abs", path, sizeof path)), 0);
    snprintf(target, sizeof target, "%s/../", root);
    assert_int_equal(symlink(target, test_path(&ts, "abs-up", path, sizeof path)), 0);
    snprintf(target, sizeof target, "%sx/data", root);      /* a sibling that shares the prefix */
    assert_int_equal(symlink(target, test_path(&ts, "abs-sibling", path, sizeof path)), 0);
    assert_int_equal(symlink("/etc", test_path(&ts, "abs-etc", path, sizeof path)), 0);
    free(root);

    assert_int_equal(rfs_open(&c, 0, "/abs/x", RFS_O_RDONLY, 0, &s), RFS_OK);
    assert_int_equal(s.size, 3);
    char got[4] = "";
    uint64_t done;
    assert_int_equal(rfs_pread(&c, 0, got, 3, 0, &done), RFS_OK);
    assert_memory_equal(got, "abc", 3);
    assert_int_equal(rfs_close(&c, 0), RFS_OK);
    assert_int_equal(rfs_stat_path(&c, "/abs", &st), RFS_OK);
    assert_int_equal(st.type, RFS_TYPE_DIR);
    assert_int_equal(rfs_stat_path(&c, "/abs/x", &st), RFS_OK);
    assert_int_equal(st.size, 3);
    assert_int_equal(rfs_open(&c, 0, "/abs-up/etc/passwd", RFS_O_RDONLY, 0, &s), RFS_E_ESCAPE);
    assert_int_equal(rfs_stat_path(&c, "/abs-sibling", &st), RFS_E_ESCAPE);
    assert_int_equal(rfs_stat_path(&c, "/abs-etc/passwd", &st), RFS_E_ESCAPE);
    /* removing or renaming a link acts on the link */
    assert_int_equal(rfs_rename(&c, "/abs", "/abs2", 0), RFS_OK);
    assert_int_equal(rfs_unlink(&c, "/abs2"), RFS_OK);
    assert_int_equal(access(test_path(&ts, "data/x", path, sizeof path), F_OK), 0);
    rfs_client_close(&c);
}

static void test_symlink_rule(void **state)
{
    (void) state;
    symlink_rule();
}

static void test_symlink_rule_walk(void **state)
{
    (void) state;
    rfs_path_use_openat2(0);
    symlink_rule();
    rfs_path_use_openat2(1);
}

static struct net_conn *raw_connect(void)
{
    struct net_conn *conn;
    struct net_opts opts = { .timeout_ms = 10000 };
    assert_int_equal(net_connect(&net_tcp_transport, "127.0.0.1", ts.port, &opts, &conn), 0);
    return conn;
}

/* One request with its variable part; the reply's status, its data read
 * and dropped. */
static int exchange(struct net_conn *conn, uint16_t op, const struct rfs_req *r,
                    const void *data, uint64_t len)
{
    uint8_t buf[RFS_HDR_SIZE + RFS_REQ_FIXED], rep[RFS_HDR_SIZE + RFS_REP_FIXED];
    struct rfs_hdr h = { RFS_MAGIC, RFS_VERSION, op, 7, 0, RFS_REQ_FIXED + len };
    rfs_hdr_encode(&h, buf);
    rfs_req_encode(r, buf + RFS_HDR_SIZE);
    assert_int_equal(net_writen(conn, buf, sizeof buf), 0);
    if (len)
        assert_int_equal(net_writen(conn, data, len), 0);
    assert_int_equal(net_readn(conn, rep, sizeof rep), 0);
    assert_int_equal(rfs_hdr_decode(rep, &h), RFS_OK);
    char sink[256];
    for (uint64_t left = h.len - RFS_REP_FIXED; left > 0;) {
        size_t n = left < sizeof sink ? left : sizeof sink;
        assert_int_equal(net_readn(conn, sink, n), 0);
        left -= n;
    }
    return h.status;
}

static void test_hostile_input(void **state)
{
    (void) state;
    struct net_conn *conn = raw_connect();
    struct rfs_req r = { .aux = 1, .length = 0 };
    assert_int_equal(exchange(conn, RFS_OP_READDIR, &r, "/", 1), RFS_E_INVAL);     /* no room */
    r = (struct rfs_req) { .aux = 1, .flags = 64 };
    assert_int_equal(exchange(conn, RFS_OP_SETATTR, &r, "/", 1), RFS_E_INVAL);
    r = (struct rfs_req) { .aux = 1, .flags = 2 };
    assert_int_equal(exchange(conn, RFS_OP_RENAME, &r, "/x", 2), RFS_E_PROTO);   /* closes */
    net_close(conn);

    conn = raw_connect();
    r = (struct rfs_req) { .aux = 2, .length = 3 };
    assert_int_equal(exchange(conn, RFS_OP_RENAME, &r, "/a/b\0c", 5), RFS_E_INVAL);
    r = (struct rfs_req) { .aux = RFS_MAX_PATH + 1 };
    /* refused, and the connection goes on */
    assert_int_equal(exchange(conn, RFS_OP_STAT, &r, NULL, 0), RFS_E_TOOBIG);
    r = (struct rfs_req) { .aux = 1 };
    assert_int_equal(exchange(conn, RFS_OP_STAT, &r, "/", 1), RFS_OK);
    net_close(conn);

    /* the entry decoder never reads past what it is given */
    uint8_t buf[64];
    for (unsigned seed = 1; seed < 20000; seed++) {
        fill_random(buf, sizeof buf, seed);
        size_t avail = seed % sizeof buf;
        uint8_t *copy = malloc(avail ? avail : 1);
        memcpy(copy, buf, avail);
        uint32_t type;
        const char *name;
        size_t len;
        size_t took = rfs_dirent_decode(copy, avail, &type, &name, &len);
        if (took)
            assert_true(took <= avail && len > 0 && !memchr(name, '/', len));
        free(copy);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_stat_mkdir_rename_rmdir, clean),
        cmocka_unit_test_teardown(test_setattr, clean),
        cmocka_unit_test_teardown(test_readdir_pages, clean),
        cmocka_unit_test_teardown(test_symlink_rule, clean),
        cmocka_unit_test_teardown(test_symlink_rule_walk, clean),
        cmocka_unit_test(test_hostile_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
