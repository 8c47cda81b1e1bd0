/* The client calls against the real request engine over loopback, and a
 * live server fed malformed input. Data is checked byte for byte, also
 * as it sits in the export root. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
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

static void connect_client(struct rfs_client *c)
{
    assert_int_equal(rfs_client_connect(c, &net_tcp_transport, "127.0.0.1", ts.port, 10000), 0);
}

static void test_write_read_back(void **state)
{
    (void) state;
    struct rfs_client c;
    struct rfs_stat st;
    char path[4200];
    connect_client(&c);
    assert_int_equal(mkdir(test_path(&ts, "d", path, sizeof path), 0755), 0);
    assert_int_equal(rfs_open(&c, 0, "/d/data", RFS_O_RDWR | RFS_O_CREAT, 0644, &st), RFS_OK);
    assert_int_equal(st.size, 0);

    /* 40 MiB at offset 1000: more pieces than fit in the client's window. */
    size_t len = 40u << 20;
    uint8_t *src = malloc(len), *dst = malloc(len + 10);
    fill_random(src, len, 2);
    assert_int_equal(rfs_pwrite(&c, 0, src, len, 1000), RFS_OK);
    uint64_t done = 0;
    assert_int_equal(rfs_pread(&c, 0, dst, len + 10, 1000, &done), RFS_OK);
    assert_int_equal(done, len);                 /* short at end of file */
    assert_memory_equal(src, dst, len);
    assert_int_equal(rfs_pread(&c, 0, dst, 5u << 20, len + 1000 - 12345, &done), RFS_OK);
    assert_int_equal(done, 12345);               /* end of file inside the window */
    assert_memory_equal(dst, src + len - 12345, 12345);
    assert_int_equal(rfs_pread(&c, 0, dst, 3u << 20, len + 5000, &done), RFS_OK);
    assert_int_equal(done, 0);                   /* wholly past the end */
    assert_int_equal(rfs_fstat(&c, 0, &st), RFS_OK);
    assert_int_equal(st.size, len + 1000);
    assert_int_equal(rfs_fsync(&c, 0), RFS_OK);

    size_t flen;
    uint8_t *disk = read_file(test_path(&ts, "d/data", path, sizeof path), &flen);
    assert_non_null(disk);
    assert_int_equal(flen, len + 1000);
    for (size_t i = 0; i < 1000; i++)
        assert_int_equal(disk[i], 0);            /* the hole reads as zeros */
    assert_memory_equal(disk + 1000, src, len);

    assert_int_equal(rfs_ftruncate(&c, 0, 5), RFS_OK);
    assert_int_equal(rfs_fstat(&c, 0, &st), RFS_OK);
    assert_int_equal(st.size, 5);
    assert_int_equal(rfs_prealloc(&c, 0, 0, 1 << 20), RFS_OK);
    assert_int_equal(rfs_fstat(&c, 0, &st), RFS_OK);
    assert_int_equal(st.size, 1 << 20);
    assert_int_equal(rfs_close(&c, 0), RFS_OK);
    assert_int_equal(rfs_close(&c, 0), RFS_E_BADF);   /* no longer open */

    assert_int_equal(rfs_unlink(&c, "/d/data"), RFS_OK);
    assert_int_equal(rfs_open(&c, 0, "/d/data", RFS_O_RDONLY, 0, &st), RFS_E_NOENT);
    rfs_client_close(&c);
    free(disk);
    free(src);
    free(dst);
}

static void test_open_errors(void **state)
{
    (void) state;
    struct rfs_client c;
    struct rfs_stat st;
    char path[4200];
    connect_client(&c);
    assert_int_equal(rfs_open(&c, 1, "/missing", RFS_O_RDONLY, 0, &st), RFS_E_NOENT);
    assert_int_equal(rfs_open(&c, 1, "/x", RFS_O_WRONLY | RFS_O_CREAT | RFS_O_EXCL, 0600, &st),
                     RFS_OK);
    assert_int_equal(rfs_open(&c, 2, "/x", RFS_O_RDWR | RFS_O_CREAT | RFS_O_EXCL, 0600, &st),
                     RFS_E_EXIST);
    assert_int_equal(rfs_open(&c, 1, "/x", RFS_O_RDONLY, 0, &st), RFS_E_BADF); /* slot in use */
    uint64_t done;
    char b[4];
    assert_int_equal(rfs_pread(&c, 1, b, 4, 0, &done), RFS_E_BADF);     /* write-only */
    assert_int_equal(rfs_open(&c, 2, "/x", RFS_O_RDONLY, 0, &st), RFS_OK);
    assert_int_equal(rfs_pwrite(&c, 2, "abcd", 4, 0), RFS_E_BADF);       /* read-only */
    /* the same refusal on the in-kernel path of large writes leaves the
     * stream in step: the next request is understood */
    size_t big = 1u << 20;
    char *data = calloc(1, big);
    assert_int_equal(rfs_pwrite(&c, 2, data, big, 0), RFS_E_BADF);
    assert_int_equal(rfs_pwrite(&c, 9, data, big, 0), RFS_E_BADF);      /* not open */
    free(data);
    assert_int_equal(rfs_fstat(&c, 2, &st), RFS_OK);
    assert_int_equal(st.size, 0);
    assert_int_equal(rfs_ftruncate(&c, 2, 0), RFS_E_BADF);
    assert_int_equal(rfs_open(&c, 3, "/", RFS_O_RDONLY, 0, &st), RFS_E_ISDIR);
    assert_int_equal(rfs_open(&c, 3, "/x/y", RFS_O_RDONLY, 0, &st), RFS_E_NOTDIR);
    assert_int_equal(rfs_open(&c, RFS_MAX_HANDLES, "/x", RFS_O_RDONLY, 0, &st), RFS_E_BADF);
    assert_int_equal(mkfifo(test_path(&ts, "fifo", path, sizeof path), 0644), 0);
    assert_int_equal(rfs_open(&c, 3, "/fifo", RFS_O_RDONLY, 0, &st), RFS_E_INVAL);  /* no hang */
    /* a transport failure is sticky; protocol errors are not */
    assert_int_equal(rfs_fsync(&c, 2), RFS_OK);
    rfs_client_close(&c);
}

static void test_path_confinement(void **state)
{
    (void) state;
    struct rfs_client c;
    struct rfs_stat st;
    char path[4200];
    connect_client(&c);
    assert_int_equal(symlink("/etc/passwd", test_path(&ts, "to-passwd", path, sizeof path)), 0);
    assert_int_equal(symlink("/etc", test_path(&ts, "to-etc", path, sizeof path)), 0);
    assert_int_equal(symlink("../..", test_path(&ts, "up", path, sizeof path)), 0);
    assert_int_equal(mkdir(test_path(&ts, "a", path, sizeof path), 0755), 0);
    assert_int_equal(rfs_open(&c, 0, "/../outside", RFS_O_RDWR | RFS_O_CREAT, 0644, &st),
                     RFS_E_ESCAPE);
    assert_int_equal(rfs_open(&c, 0, "a/../../outside", RFS_O_RDONLY, 0, &st), RFS_E_ESCAPE);
    assert_int_equal(rfs_open(&c, 0, "/to-passwd", RFS_O_RDONLY, 0, &st), RFS_E_ESCAPE);
    assert_int_equal(rfs_open(&c, 0, "/to-etc/passwd", RFS_O_RDONLY, 0, &st), RFS_E_ESCAPE);
    assert_int_equal(rfs_open(&c, 0, "/up/x", RFS_O_RDWR | RFS_O_CREAT, 0644, &st),
                     RFS_E_ESCAPE);
    assert_int_equal(rfs_unlink(&c, "/to-etc/passwd"), RFS_E_ESCAPE);
    assert_int_equal(rfs_unlink(&c, "/.."), RFS_E_INVAL);
    /* a link to a file inside the root is fine, and unlinking removes the link */
    assert_int_equal(rfs_open(&c, 0, "/inside", RFS_O_RDWR | RFS_O_CREAT, 0644, &st), RFS_OK);
    assert_int_equal(symlink("inside", test_path(&ts, "link", path, sizeof path)), 0);
    assert_int_equal(rfs_open(&c, 1, "/link", RFS_O_RDONLY, 0, &st), RFS_OK);
    assert_int_equal(rfs_unlink(&c, "/to-passwd"), RFS_OK);
    assert_int_equal(access("/etc/passwd", F_OK), 0);
    rfs_client_close(&c);
}

/* The same checks through the portable resolver (kernels without
 * openat2, valgrind). */
static void test_path_confinement_walk(void **state)
{
    rfs_path_use_openat2(0);
    clear_dir(ts.root);
    test_path_confinement(state);
    rfs_path_use_openat2(1);
}

static void test_locks_between_connections(void **state)
{
    (void) state;
    struct rfs_client a, b;
    struct rfs_stat st;
    connect_client(&a);
    connect_client(&b);
    assert_int_equal(rfs_open(&a, 0, "/locked", RFS_O_RDWR | RFS_O_CREAT, 0644, &st), RFS_OK);
    assert_int_equal(rfs_open(&b, 0, "/locked", RFS_O_RDWR, 0, &st), RFS_OK);
    assert_int_equal(rfs_lock(&a, 0, RFS_LOCK_WRITE, 0, 100, 1), RFS_OK);
    assert_int_equal(rfs_lock(&b, 0, RFS_LOCK_WRITE, 50, 10, 0), RFS_E_NOLCK);
    assert_int_equal(rfs_lock(&b, 0, RFS_LOCK_READ, 100, 10, 0), RFS_OK);   /* disjoint */
    assert_int_equal(rfs_lock(&a, 0, RFS_LOCK_UNLOCK, 0, 100, 0), RFS_OK);
    assert_int_equal(rfs_lock(&b, 0, RFS_LOCK_WRITE, 50, 10, 0), RFS_OK);
    /* a client that goes away drops its locks */
    rfs_client_close(&b);
    connect_client(&b);
    assert_int_equal(rfs_open(&b, 0, "/locked", RFS_O_RDWR, 0, &st), RFS_OK);
    assert_int_equal(rfs_lock(&a, 0, RFS_LOCK_WRITE, 0, 0, 1), RFS_OK);      /* whole file */
    assert_int_equal(rfs_lock(&b, 0, RFS_LOCK_READ, 1 << 30, 1, 0), RFS_E_NOLCK);
    rfs_client_close(&a);
    rfs_client_close(&b);
}

static void test_deferred_open_and_close(void **state)
{
    (void) state;
    struct rfs_client c;
    struct rfs_stat st;
    uint64_t done;
    char buf[8];
    connect_client(&c);
    /* the OPEN rides with the write; its failure is the write's failure */
    assert_int_equal(rfs_open_deferred(&c, 0, "/nothere", RFS_O_RDWR, 0), 0);
    assert_int_equal(rfs_pwrite(&c, 0, "data", 4, 0), RFS_E_NOENT);
    assert_int_equal(rfs_open(&c, 0, "/deferred", RFS_O_RDWR | RFS_O_CREAT, 0644, &st), RFS_OK);
    assert_int_equal(rfs_close(&c, 0), RFS_OK);
    assert_int_equal(rfs_open_deferred(&c, 0, "/deferred", RFS_O_RDWR, 0), 0);
    /* several pieces: the first carries the OPEN, the rest follow pipelined */
    size_t big = 3u << 20;
    uint8_t *data = malloc(big), *back = malloc(big);
    fill_random(data, big, 9);
    assert_int_equal(rfs_pwrite(&c, 0, data, big, 8), RFS_OK);
    assert_int_equal(rfs_pread(&c, 0, back, big, 8, &done), RFS_OK);
    assert_int_equal(done, big);
    assert_memory_equal(data, back, big);
    free(data);
    free(back);
    assert_int_equal(rfs_pwrite(&c, 0, "deferred", 8, 0), RFS_OK);
    assert_int_equal(rfs_close_nowait(&c, 0), 0);
    assert_int_equal(c.unread_replies, 1);
    /* the next call skips the CLOSE's reply first */
    assert_int_equal(rfs_open(&c, 0, "/deferred", RFS_O_RDONLY, 0, &st), RFS_OK);
    assert_int_equal(c.unread_replies, 0);
    assert_int_equal(rfs_pread(&c, 0, buf, 8, 0, &done), RFS_OK);
    assert_int_equal(done, 8);
    assert_memory_equal(buf, "deferred", 8);
    rfs_client_close(&c);
}

/* Raw bytes to the server: each bad stream is answered or dropped, and
 * the server goes on serving everyone else. */
static struct net_conn *raw_connect(void)
{
    struct net_conn *conn;
    struct net_opts opts = { .timeout_ms = 10000 };
    assert_int_equal(net_connect(&net_tcp_transport, "127.0.0.1", ts.port, &opts, &conn), 0);
    return conn;
}

static void send_request(struct net_conn *conn, uint16_t op, uint64_t len,
                         const struct rfs_req *r)
{
    uint8_t buf[RFS_HDR_SIZE + RFS_REQ_FIXED];
    struct rfs_hdr h = { RFS_MAGIC, RFS_VERSION, op, 42, 0, len };
    rfs_hdr_encode(&h, buf);
    rfs_req_encode(r, buf + RFS_HDR_SIZE);
    assert_int_equal(net_writen(conn, buf, sizeof buf), 0);
}

static int reply_status(struct net_conn *conn)
{
    uint8_t buf[RFS_HDR_SIZE + RFS_REP_FIXED];
    struct rfs_hdr h;
    assert_int_equal(net_readn(conn, buf, sizeof buf), 0);
    assert_int_equal(rfs_hdr_decode(buf, &h), RFS_OK);
    assert_int_equal(h.tag, 42);
    return h.status;
}

static void still_serving(void)
{
    struct rfs_client c;
    struct rfs_stat st;
    connect_client(&c);
    assert_int_equal(rfs_open(&c, 0, "/alive", RFS_O_RDWR | RFS_O_CREAT, 0644, &st), RFS_OK);
    assert_int_equal(rfs_pwrite(&c, 0, "ok", 2, 0), RFS_OK);
    rfs_client_close(&c);
}

static void test_hostile_input(void **state)
{
    (void) state;
    char junk[64];
    struct rfs_req r = { 0 };

    /* garbage: dropped without a reply */
    struct net_conn *conn = raw_connect();
    fill_random(junk, sizeof junk, 3);
    assert_int_equal(net_writen(conn, junk, sizeof junk), 0);
    assert_int_equal(net_readn(conn, junk, 1), -ECONNRESET);
    net_close(conn);
    still_serving();

    /* an oversized write: refused, then dropped */
    conn = raw_connect();
    r.length = 1ull << 40;
    send_request(conn, RFS_OP_PWRITE, RFS_REQ_FIXED + r.length, &r);
    assert_int_equal(reply_status(conn), RFS_E_TOOBIG);
    assert_int_equal(net_readn(conn, junk, 1), -ECONNRESET);
    net_close(conn);

    /* an oversized read: refused, the connection stays usable */
    conn = raw_connect();
    r.length = (uint64_t) RFS_MAX_DATA + 1;
    send_request(conn, RFS_OP_PREAD, RFS_REQ_FIXED, &r);
    assert_int_equal(reply_status(conn), RFS_E_TOOBIG);
    memset(&r, 0, sizeof r);
    send_request(conn, RFS_OP_FSYNC, RFS_REQ_FIXED, &r);
    assert_int_equal(reply_status(conn), RFS_E_BADF);          /* nothing open */
    /* an unknown operation: protocol error, dropped */
    send_request(conn, 77, RFS_REQ_FIXED, &r);
    assert_int_equal(reply_status(conn), RFS_E_PROTO);
    assert_int_equal(net_readn(conn, junk, 1), -ECONNRESET);
    net_close(conn);

    /* a truncated message and a vanished client */
    conn = raw_connect();
    assert_int_equal(net_writen(conn, "RFS1", 4), 0);
    net_close(conn);
    /* a path with a NUL inside */
    conn = raw_connect();
    r.aux = 4;
    send_request(conn, RFS_OP_OPEN, RFS_REQ_FIXED + 4, &r);
    assert_int_equal(net_writen(conn, "a\0bc", 4), 0);
    assert_int_equal(reply_status(conn), RFS_E_INVAL);
    net_close(conn);
    still_serving();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_read_back),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_path_confinement),
        cmocka_unit_test(test_path_confinement_walk),
        cmocka_unit_test(test_locks_between_connections),
        cmocka_unit_test(test_deferred_open_and_close),
        cmocka_unit_test(test_hostile_input),
    };
    return cmocka_run_group_tests_name("server", tests, setup, teardown);
}
