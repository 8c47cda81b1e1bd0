/*
 * rfsd against hostile clients (no MPI). Every bad client has a raw TCP
 * connection of its own and sends one kind of malformed, truncated,
 * oversized or out-of-order input; the answer docs/protocol.md promises is
 * checked: an error reply and the connection goes on (proved by a full
 * open/write/read/close on it afterwards), an error reply and the server
 * closes, or a close without a reply. Meanwhile a well-behaved client (the
 * client library) writes and reads back verified data without pause; after
 * every bad client it must complete two more rounds within 20 s, so a
 * server that crashes, hangs or stops serving fails the test.
 *
 *   rfsd_hostile PORT LIMITED_PORT
 *
 * LIMITED_PORT: an rfsd started with --max-connections 2 --max-data 1 that
 * nobody else uses: the third connection must be refused (RFS_E_BUSY, from
 * the client library too), reads and writes over 1 MiB get RFS_E_TOOBIG.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "proto/rfs_client.h"

#define IO_TIMEOUT_S 10         /* a reply or a close must come within this */
#define GOOD_BLOCK (256u << 10) /* the good client's writes: spliced by the server */

static const char *port, *limited_port;
static int failures;

/* ---- the well-behaved client ---- */

static atomic_int good_rounds, good_failed, good_stop;

static unsigned char pattern(uint64_t off, unsigned seed)
{
    return (unsigned char) (((off + 1) * 0x9E3779B97F4A7C15ull +
                             (uint64_t) seed * 0xD1B54A32D192ED03ull) >> 29);
}

static int fill_check(unsigned char *buf, uint64_t len, unsigned seed, int check)
{
    for (uint64_t i = 0; i < len; i++) {
        if (!check)
            buf[i] = pattern(i, seed);
        else if (buf[i] != pattern(i, seed))
            return -1;
    }
    return 0;
}

static void *good_client(void *arg)
{
    (void) arg;
    struct rfs_client c;
    struct rfs_stat st;
    unsigned char *out = malloc(GOOD_BLOCK + 8), *in = malloc(GOOD_BLOCK + 8);
    int rc = out && in ? rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", port, 30000)
                       : -ENOMEM;
    if (rc == 0)
        rc = rfs_open(&c, 0, "/hostile/good", RFS_O_RDWR | RFS_O_CREAT, 0644, &st);
    for (unsigned r = 0; rc == 0 && !atomic_load(&good_stop); r++) {
        /* Odd lengths and varying offsets, an fsync now and then. */
        uint64_t len = GOOD_BLOCK + r % 7, off = (uint64_t) (r % 8) * (GOOD_BLOCK + 4096), got;
        fill_check(out, len, r, 0);
        if ((rc = rfs_pwrite(&c, 0, out, len, off)) != 0 ||
            (r % 10 == 0 && (rc = rfs_fsync(&c, 0)) != 0) ||
            (rc = rfs_pread(&c, 0, in, len, off, &got)) != 0)
            break;
        if (got != len || fill_check(in, len, r, 1) != 0) {
            fprintf(stderr, "good client: round %u read back wrong data\n", r);
            rc = -EIO;
            break;
        }
        atomic_fetch_add(&good_rounds, 1);
    }
    if (rc != 0) {
        fprintf(stderr, "good client: %d (%s)\n", rc,
                rc > 0 ? rfs_status_str(rc) : strerror(-rc));
        atomic_store(&good_failed, 1);
    }
    if (out && in)
        rfs_client_close(&c);
    free(out);
    free(in);
    return NULL;
}

/* The good client completes two rounds that start after this call. */
static int good_progresses(void)
{
    int start = atomic_load(&good_rounds);
    for (int i = 0; i < 2000 && !atomic_load(&good_failed); i++) {
        if (atomic_load(&good_rounds) >= start + 2)
            return 0;
        usleep(10000);
    }
    return -1;
}

/* ---- raw connections ---- */

static int raw_connect(const char *p)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) atoi(p)) };
    struct timeval tv = { .tv_sec = IO_TIMEOUT_S };
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 ||
        connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    return fd;
}

static int send_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

/* 1 at end of stream (or a reset: the server closed on unread data). */
static int recv_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == ECONNRESET ? 1 : -errno;
        if (n == 0)
            return 1;
        p += n;
        len -= (size_t) n;
    }
    return 0;
}

/* A request header and fixed part, with every field the caller's. */
struct frame {
    uint8_t b[RFS_HDR_SIZE + RFS_REQ_FIXED];
};

static struct frame frame_raw(uint32_t magic, uint16_t version, uint16_t op, uint32_t tag,
                              int32_t status, uint64_t len, struct rfs_req r)
{
    struct frame f;
    struct rfs_hdr h = { .magic = magic, .version = version, .op = op, .tag = tag,
                         .status = status, .len = len };
    rfs_hdr_encode(&h, f.b);
    rfs_req_encode(&r, f.b + RFS_HDR_SIZE);
    return f;
}

/* A well-formed frame for `var` bytes after the fixed part. */
static struct frame frame_of(uint16_t op, uint32_t tag, uint64_t var, struct rfs_req r)
{
    return frame_raw(RFS_MAGIC, RFS_VERSION, op, tag, 0, RFS_REQ_FIXED + var, r);
}

static int bad(const char *name, const char *fmt, long a, long b)
{
    fprintf(stderr, "FAIL %s: ", name);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return -1;
}

/* Reads one reply: it must answer (op, tag) with `status`; its data is
 * returned in `data` (at most `max`). */
static int expect_reply(const char *name, int fd, uint16_t op, uint32_t tag, int status,
                        void *data, uint64_t max)
{
    uint8_t hb[RFS_HDR_SIZE], fixed[RFS_REP_FIXED];
    struct rfs_hdr h;
    int rc = recv_all(fd, hb, sizeof hb);
    if (rc != 0)
        return bad(name, rc > 0 ? "closed instead of a reply to op %ld (%ld)"
                                : "no reply to op %ld within the timeout (%ld)", op, rc);
    if (rfs_hdr_decode(hb, &h) != RFS_OK)
        return bad(name, "reply with bad magic or version (%ld %ld)", h.magic, h.version);
    if (h.op != (op | RFS_REPLY) || h.tag != tag)
        return bad(name, "reply op/tag %ld/%ld do not match", h.op, h.tag);
    if (h.status != status)
        return bad(name, "status %ld, expected %ld", h.status, status);
    if (h.len < RFS_REP_FIXED || h.len - RFS_REP_FIXED > max)
        return bad(name, "reply length %ld (at most %ld data)", (long) h.len, (long) max);
    if (recv_all(fd, fixed, sizeof fixed) != 0 ||
        (h.len > RFS_REP_FIXED && recv_all(fd, data, h.len - RFS_REP_FIXED) != 0))
        return bad(name, "reply cut short (%ld bytes)", (long) h.len, 0);
    return 0;
}

/* The server ends the connection (no more bytes) within the timeout. */
static int expect_closed(const char *name, int fd)
{
    char c;
    ssize_t n = recv(fd, &c, 1, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET))
        return 0;
    return bad(name, n > 0 ? "bytes after the end (%ld)" : "not closed within the timeout (%ld)",
               (long) n, 0);
}

/* The server ends the connection, whatever it answered before. */
static int expect_closed_eventually(const char *name, int fd)
{
    char buf[4096];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return 0;
        if (n < 0)
            return bad(name, "not closed within the timeout (%ld)", errno, 0);
    }
}

/* The connection is still in step: open, write, read back, close. */
static int probe(const char *name, int fd)
{
    static atomic_int serial;
    char path[64], data[13] = "probe-payload", back[sizeof data];
    int n = snprintf(path, sizeof path, "/hostile/probe.%d", atomic_fetch_add(&serial, 1));
    struct frame f = frame_of(RFS_OP_OPEN, 901, (uint64_t) n,
                              (struct rfs_req) { .handle = 0, .flags = RFS_O_RDWR | RFS_O_CREAT,
                                                 .mode = 0644, .aux = (uint32_t) n });
    struct frame w = frame_of(RFS_OP_PWRITE, 902, sizeof data,
                              (struct rfs_req) { .handle = 0, .length = sizeof data });
    struct frame r = frame_of(RFS_OP_PREAD, 903, 0,
                              (struct rfs_req) { .handle = 0, .length = sizeof data });
    struct frame c = frame_of(RFS_OP_CLOSE, 904, 0, (struct rfs_req) { .handle = 0 });
    if (send_all(fd, f.b, sizeof f.b) || send_all(fd, path, (size_t) n) ||
        send_all(fd, w.b, sizeof w.b) || send_all(fd, data, sizeof data) ||
        send_all(fd, r.b, sizeof r.b) || send_all(fd, c.b, sizeof c.b))
        return bad(name, "probe not sent (%ld)", errno, 0);
    if (expect_reply(name, fd, RFS_OP_OPEN, 901, RFS_OK, NULL, 0) ||
        expect_reply(name, fd, RFS_OP_PWRITE, 902, RFS_OK, NULL, 0) ||
        expect_reply(name, fd, RFS_OP_PREAD, 903, RFS_OK, back, sizeof back) ||
        expect_reply(name, fd, RFS_OP_CLOSE, 904, RFS_OK, NULL, 0))
        return -1;
    return memcmp(back, data, sizeof data) ? bad(name, "probe read back wrong data", 0, 0) : 0;
}

/* ---- the bad clients ---- */

enum outcome {
    GOES_ON,                    /* error replies, then the connection still works */
    REPLY_CLOSE,                /* one error reply, then the server closes */
    CLOSE,                      /* the server closes without a reply */
    HALF_SENT,                  /* we stop sending mid-message: the server closes */
};

struct msg {
    struct frame f;
    const void *var;            /* bytes after the fixed part (not all of them: truncation) */
    size_t var_len;
    size_t cut;                 /* HALF_SENT: bytes of f sent (0: all) */
    int status;                 /* the expected reply's status */
};

#define MAXMSG 8
struct bad_case {
    const char *name;
    enum outcome outcome;
    int nmsg;
    struct msg m[MAXMSG];
};

/* The fields of a frame we built (its magic and version may be bad: the
 * decoder fills them in all the same). */
static struct rfs_hdr hdr_of(const struct frame *f)
{
    struct rfs_hdr h;
    rfs_hdr_decode(f->b, &h);
    return h;
}

static int run_case(const struct bad_case *k)
{
    int fd = raw_connect(port), rc = 0;
    if (fd < 0)
        return bad(k->name, "cannot connect (%ld)", fd, 0);
    for (int i = 0; i < k->nmsg && rc == 0; i++) {
        const struct msg *m = &k->m[i];
        size_t flen = m->cut ? m->cut : sizeof m->f.b;
        /* The server may close before it has read everything sent after a
         * fatal error: a failed send is then expected, not a failure. */
        if (send_all(fd, m->f.b, flen) || (m->var_len && send_all(fd, m->var, m->var_len)))
            if (k->outcome == GOES_ON || k->outcome == HALF_SENT)
                rc = bad(k->name, "send failed (%ld)", errno, 0);
    }
    if (rc == 0) {
        switch (k->outcome) {
        case GOES_ON:
            for (int i = 0; i < k->nmsg && rc == 0; i++)
                rc = expect_reply(k->name, fd, hdr_of(&k->m[i].f).op, hdr_of(&k->m[i].f).tag,
                                  k->m[i].status, NULL, 0);
            if (rc == 0)
                rc = probe(k->name, fd);
            break;
        case REPLY_CLOSE:
            rc = expect_reply(k->name, fd, hdr_of(&k->m[0].f).op & ~RFS_REPLY,
                              hdr_of(&k->m[0].f).tag, k->m[0].status, NULL, 0);
            if (rc == 0)
                rc = expect_closed(k->name, fd);
            break;
        case CLOSE:
            rc = expect_closed(k->name, fd);
            break;
        case HALF_SENT:
            shutdown(fd, SHUT_WR);
            rc = expect_closed(k->name, fd);
            break;
        }
    }
    close(fd);
    return rc;
}

#define REQ(...) ((struct rfs_req) { __VA_ARGS__ })
/* A message whose variable part (v_len bytes, all sent) comes from vbuf. */
#define M(op_, tag_, v_len, st, ...) \
    { .f = frame_of(op_, tag_, v_len, REQ(__VA_ARGS__)), .var = vbuf, .var_len = v_len, \
      .status = st }

static char vbuf[1u << 20];     /* bytes after fixed parts: data, paths, views */

static int bad_cases(void)
{
    static const char path[] = "hostile/x", nul_path[] = "hostile/a\0b", up[] = "../../etc/passwd";
    const uint64_t big = (uint64_t) RFS_MAX_DATA + 1;
    const struct rfs_req none = { 0 };
    const struct bad_case cases[] = {
        /* The header itself */
        { "bad magic", CLOSE, 1, { { .f = frame_raw(0x464c457fu, 1, RFS_OP_FSTAT, 1, 0, 32,
                                                     none) } } },
        { "bad version", REPLY_CLOSE, 1,
          { { .f = frame_raw(RFS_MAGIC, 2, RFS_OP_FSTAT, 2, 0, 32, none),
              .status = RFS_E_PROTO } } },
        { "unknown op", REPLY_CLOSE, 1,
          { { .f = frame_of(200, 3, 0, none), .status = RFS_E_PROTO } } },
        { "op 0", REPLY_CLOSE, 1, { { .f = frame_of(0, 4, 0, none), .status = RFS_E_PROTO } } },
        { "reply op in a request", REPLY_CLOSE, 1,
          { { .f = frame_of(RFS_OP_PREAD | RFS_REPLY, 5, 0, REQ(.length = 8)),
              .status = RFS_E_PROTO } } },
        { "status set in a request", REPLY_CLOSE, 1,
          { { .f = frame_raw(RFS_MAGIC, 1, RFS_OP_FSTAT, 6, 7, 32, none),
              .status = RFS_E_PROTO } } },
        { "len shorter than the fixed part", REPLY_CLOSE, 1,
          { { .f = frame_raw(RFS_MAGIC, 1, RFS_OP_FSTAT, 7, 0, 8, none), .cut = RFS_HDR_SIZE,
              .status = RFS_E_PROTO } } },
        /* Lengths that disagree or exceed the limits */
        { "path length disagrees with aux", REPLY_CLOSE, 1,
          { { .f = frame_of(RFS_OP_OPEN, 8, 5, REQ(.aux = 10)), .var = path, .var_len = 5,
              .status = RFS_E_PROTO } } },
        { "data on an op without data", REPLY_CLOSE, 1,
          { { .f = frame_of(RFS_OP_FSTAT, 9, 8, none), .var = vbuf, .var_len = 8,
              .status = RFS_E_PROTO } } },
        { "write length disagrees with len", REPLY_CLOSE, 1,
          { { .f = frame_of(RFS_OP_PWRITE, 10, 100, REQ(.length = 99)), .var = vbuf,
              .var_len = 100, .status = RFS_E_PROTO } } },
        { "oversized write", REPLY_CLOSE, 1,
          { { .f = frame_of(RFS_OP_PWRITE, 11, big, REQ(.length = big)),
              .status = RFS_E_TOOBIG } } },
        { "len 2^64-1", REPLY_CLOSE, 1,
          { { .f = frame_raw(RFS_MAGIC, 1, RFS_OP_PWRITE, 12, 0, UINT64_MAX,
                             REQ(.length = UINT64_MAX - RFS_REQ_FIXED)),
              .status = RFS_E_TOOBIG } } },
        { "oversized view", REPLY_CLOSE, 1,
          { { .f = frame_of(RFS_OP_SETVIEW, 13, big, REQ(.length = big)),
              .status = RFS_E_TOOBIG } } },
        /* Well-formed requests with bad arguments: error replies, go on */
        { "read over the limit", GOES_ON, 1,
          { M(RFS_OP_PREAD, 20, 0, RFS_E_TOOBIG, .handle = 0, .length = big) } },
        { "I/O on never-opened handles", GOES_ON, 8,
          { M(RFS_OP_PREAD, 21, 0, RFS_E_BADF, .handle = 3, .length = 10),
            M(RFS_OP_PWRITE, 22, 100, RFS_E_BADF, .handle = 4, .length = 100),
            M(RFS_OP_PWRITE, 23, sizeof vbuf, RFS_E_BADF, .handle = 5,
              .length = sizeof vbuf),
            M(RFS_OP_FSYNC, 24, 0, RFS_E_BADF, .handle = 6),
            M(RFS_OP_CLOSE, 25, 0, RFS_E_BADF, .handle = 7),
            M(RFS_OP_LOCK, 26, 0, RFS_E_BADF, .handle = 8, .flags = RFS_LOCK_WRITE),
            M(RFS_OP_VREAD, 27, 0, RFS_E_BADF, .handle = 9, .length = 10),
            M(RFS_OP_FTRUNCATE, 28, 0, RFS_E_BADF, .handle = 10) } },
        { "handle out of range", GOES_ON, 2,
          { M(RFS_OP_PREAD, 30, 0, RFS_E_BADF, .handle = RFS_MAX_HANDLES, .length = 1),
            M(RFS_OP_FSTAT, 31, 0, RFS_E_BADF, .handle = UINT32_MAX) } },
        { "open twice, view I/O without a view, bad view, bad lock, I/O after close", GOES_ON, 8,
          { { .f = frame_of(RFS_OP_OPEN, 40, 9, REQ(.handle = 1, .flags = RFS_O_RDWR |
                                                     RFS_O_CREAT, .aux = 9)),
              .var = path, .var_len = 9, .status = RFS_OK },
            { .f = frame_of(RFS_OP_OPEN, 41, 9, REQ(.handle = 1, .flags = RFS_O_RDWR, .aux = 9)),
              .var = path, .var_len = 9, .status = RFS_E_BADF },
            M(RFS_OP_VREAD, 42, 0, RFS_E_INVAL, .handle = 1, .length = 10),
            M(RFS_OP_SETVIEW, 43, 40, RFS_E_INVAL, .handle = 1, .length = 40),
            M(RFS_OP_LOCK, 44, 0, RFS_E_INVAL, .handle = 1, .flags = 9),
            M(RFS_OP_PREAD, 45, 0, RFS_E_INVAL, .handle = 1, .offset = INT64_MAX,
              .length = 100),
            M(RFS_OP_CLOSE, 46, 0, RFS_OK, .handle = 1),
            M(RFS_OP_PWRITE, 47, 100, RFS_E_BADF, .handle = 1, .length = 100) } },
        { "bad paths and flags", GOES_ON, 4,
          { { .f = frame_of(RFS_OP_OPEN, 50, sizeof nul_path - 1,
                            REQ(.aux = sizeof nul_path - 1)),
              .var = nul_path, .var_len = sizeof nul_path - 1, .status = RFS_E_INVAL },
            { .f = frame_of(RFS_OP_OPEN, 51, sizeof up - 1, REQ(.aux = sizeof up - 1)),
              .var = up, .var_len = sizeof up - 1, .status = RFS_E_ESCAPE },
            { .f = frame_of(RFS_OP_OPEN, 52, 9, REQ(.flags = 0x400, .aux = 9)), .var = path,
              .var_len = 9, .status = RFS_E_INVAL },
            { .f = frame_of(RFS_OP_UNLINK, 53, sizeof up - 1, REQ(.aux = sizeof up - 1)),
              .var = up, .var_len = sizeof up - 1, .status = RFS_E_ESCAPE } } },
        /* Half-sent messages: we stop mid-message and close our side */
        { "half a header", HALF_SENT, 1, { { .f = frame_of(RFS_OP_FSTAT, 60, 0, none),
                                             .cut = 10 } } },
        { "header without the fixed part", HALF_SENT, 1,
          { { .f = frame_of(RFS_OP_FSTAT, 61, 0, none), .cut = RFS_HDR_SIZE + 10 } } },
        { "open without all of its path", HALF_SENT, 1,
          { { .f = frame_of(RFS_OP_OPEN, 62, 9, REQ(.aux = 9)), .var = path, .var_len = 4 } } },
        { "small write without all of its data", HALF_SENT, 1,
          { { .f = frame_of(RFS_OP_PWRITE, 63, 1000, REQ(.length = 1000)), .var = vbuf,
              .var_len = 600 } } },
        { "spliced write without all of its data", HALF_SENT, 1,
          { { .f = frame_of(RFS_OP_PWRITE, 64, 4u << 20, REQ(.length = 4u << 20)),
              .var = vbuf, .var_len = sizeof vbuf } } },
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = run_case(&cases[i]);
        if (rc == 0 && good_progresses() != 0)
            rc = bad(cases[i].name, "the good client made no progress afterwards", 0, 0);
        printf("%s %s\n", rc ? "FAIL" : "ok  ", cases[i].name);
        failed += rc != 0;
    }
    return failed;
}

/* An open spliced write cut off: the file handle is open on the server. */
static int half_sent_with_open_file(void)
{
    const char *name = "write cut off with a file open";
    static const char path[] = "hostile/cut";
    int fd = raw_connect(port);
    if (fd < 0)
        return bad(name, "cannot connect (%ld)", fd, 0);
    struct frame o = frame_of(RFS_OP_OPEN, 70, 11, REQ(.handle = 2, .flags = RFS_O_RDWR |
                                                       RFS_O_CREAT, .aux = 11));
    struct frame w = frame_of(RFS_OP_PWRITE, 71, 8u << 20, REQ(.handle = 2, .length = 8u << 20));
    int rc = send_all(fd, o.b, sizeof o.b) || send_all(fd, path, 11) ? -1 : 0;
    if (rc == 0)
        rc = expect_reply(name, fd, RFS_OP_OPEN, 70, RFS_OK, NULL, 0);
    if (rc == 0 && (send_all(fd, w.b, sizeof w.b) || send_all(fd, vbuf, sizeof vbuf)))
        rc = bad(name, "send failed (%ld)", errno, 0);
    if (rc == 0) {
        shutdown(fd, SHUT_WR);
        rc = expect_closed(name, fd);
    }
    close(fd);
    return rc;
}

/* Random bytes, some behind a valid header; seeded, so a failure repeats. */
static int garbage(void)
{
    unsigned seed = 12345;
    int failed = 0;
    for (int i = 0; i < 16; i++) {
        char name[32];
        snprintf(name, sizeof name, "garbage %d", i);
        size_t len = 1 + (size_t) rand_r(&seed) % 4096;
        for (size_t j = 0; j < len; j++)
            vbuf[j] = (char) rand_r(&seed);
        if (i % 2) {
            struct frame f = frame_of((uint16_t) (1 + rand_r(&seed) % 16), 80, len,
                                      REQ(.handle = (uint32_t) rand_r(&seed) % 70,
                                          .flags = (uint32_t) rand_r(&seed) % 4,
                                          .aux = (uint32_t) len, .length = len));
            memcpy(vbuf, f.b, sizeof f.b < len ? sizeof f.b : len);
        }
        int fd = raw_connect(port), rc;
        if (fd < 0)
            rc = bad(name, "cannot connect (%ld)", fd, 0);
        else if (send_all(fd, vbuf, len) != 0 && errno != EPIPE && errno != ECONNRESET)
            rc = bad(name, "send failed (%ld)", errno, 0);
        else {
            shutdown(fd, SHUT_WR);
            rc = expect_closed_eventually(name, fd);
        }
        if (fd >= 0)
            close(fd);
        if (rc == 0 && good_progresses() != 0)
            rc = bad(name, "the good client made no progress afterwards", 0, 0);
        printf("%s %s\n", rc ? "FAIL" : "ok  ", name);
        failed += rc != 0;
    }
    return failed;
}

/* Many requests in one write, replies read only afterwards; then a client
 * that stops reading its replies and goes away. */
static int pipelined(void)
{
    const char *name = "1000 pipelined bad requests";
    enum { N = 1000 };
    static struct frame f[N];
    int fd = raw_connect(port), rc = 0;
    if (fd < 0)
        return bad(name, "cannot connect (%ld)", fd, 0);
    for (int i = 0; i < N; i++)
        f[i] = frame_of(RFS_OP_FSTAT, (uint32_t) (1000 + i), 0, REQ(.handle = 11));
    if (send_all(fd, f, sizeof f) != 0)
        rc = bad(name, "send failed (%ld)", errno, 0);
    for (int i = 0; i < N && rc == 0; i++)
        rc = expect_reply(name, fd, RFS_OP_FSTAT, (uint32_t) (1000 + i), RFS_E_BADF, NULL, 0);
    if (rc == 0)
        rc = probe(name, fd);
    close(fd);
    printf("%s %s\n", rc ? "FAIL" : "ok  ", name);
    if (rc)
        return 1;

    /* 64 reads of 1 MiB nobody reads: the server blocks in send until we
     * close, then must notice and go on. */
    name = "replies never read";
    static const char path[] = "hostile/good";
    if ((fd = raw_connect(port)) < 0)
        return bad(name, "cannot connect (%ld)", fd, 0), 1;
    struct frame o = frame_of(RFS_OP_OPEN, 90, 12, REQ(.aux = 12));
    rc = send_all(fd, o.b, sizeof o.b) || send_all(fd, path, 12) ? -1 : 0;
    if (rc == 0)
        rc = expect_reply(name, fd, RFS_OP_OPEN, 90, RFS_OK, NULL, 0);
    for (int i = 0; i < 64 && rc == 0; i++) {
        struct frame r = frame_of(RFS_OP_PREAD, (uint32_t) (91 + i), 0, REQ(.length = 1u << 20));
        rc = send_all(fd, r.b, sizeof r.b);
    }
    usleep(200000);
    close(fd);
    if (rc == 0 && good_progresses() != 0)
        rc = bad(name, "the good client made no progress afterwards", 0, 0);
    printf("%s %s\n", rc ? "FAIL" : "ok  ", name);
    return rc != 0;
}

/* The limited server: --max-connections 2 --max-data 1. */
static int limits(void)
{
    const char *name = "connection limit";
    int a = raw_connect(limited_port), b = raw_connect(limited_port), d = -1, rc = 0;
    struct rfs_client c;
    struct rfs_stat st;
    if (a < 0 || b < 0)
        rc = bad(name, "cannot connect (%ld %ld)", a, b);
    /* Both served: the probe gets its replies. */
    if (rc == 0 && (probe(name, a) || probe(name, b)))
        rc = -1;
    /* A third: refused at once, and the client library says so. */
    if (rc == 0) {
        time_t t0 = time(NULL);
        int r = rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", limited_port, 30000);
        if (r == 0)
            r = rfs_open(&c, 0, "/limit", RFS_O_RDWR | RFS_O_CREAT, 0644, &st);
        if (r != RFS_E_BUSY)
            rc = bad(name, "third connection: %ld, expected RFS_E_BUSY (%ld)", r, RFS_E_BUSY);
        else if (rfs_fstat(&c, 0, &st) != -ENOTCONN)
            rc = bad(name, "a refused client must stay unusable", 0, 0);
        else if (time(NULL) - t0 > 5)
            rc = bad(name, "the refusal took %ld s", (long) (time(NULL) - t0), 0);
        rfs_client_close(&c);
    }
    /* The refusal frame on the wire. */
    if (rc == 0 && (d = raw_connect(limited_port)) < 0)
        rc = bad(name, "cannot connect (%ld)", d, 0);
    if (rc == 0) {
        struct frame f = frame_of(RFS_OP_FSTAT, 5, 0, REQ(.handle = 0));
        uint8_t hb[RFS_HDR_SIZE + RFS_REP_FIXED];
        struct rfs_hdr h = { 0 };
        if (send_all(d, f.b, sizeof f.b) != 0 || recv_all(d, hb, sizeof hb) != 0 ||
            rfs_hdr_decode(hb, &h) != RFS_OK || h.op != RFS_REFUSAL_OP || h.tag != 0 ||
            h.status != RFS_E_BUSY || h.len != RFS_REP_FIXED)
            rc = bad(name, "no refusal frame on the wire (op %ld status %ld)", h.op, h.status);
        else
            rc = expect_closed(name, d);
    }
    if (d >= 0)
        close(d);
    /* The held connections still work; then one goes and its slot is
     * taken again (the worker ends asynchronously: retry while busy). */
    if (rc == 0 && probe(name, a) != 0)
        rc = -1;
    if (a >= 0)
        close(a);
    printf("%s %s\n", rc ? "FAIL" : "ok  ", name);
    if (rc == 0) {
        name = "a slot freed is taken again; data over --max-data in 1 MiB pieces";
        int r = RFS_E_BUSY;
        for (int i = 0; i < 100 && r == RFS_E_BUSY; i++) {
            if (i)
                usleep(100000);
            if ((r = rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", limited_port,
                                        30000)) == 0 &&
                (r = rfs_open(&c, 0, "/limit", RFS_O_RDWR | RFS_O_CREAT, 0644, &st)) != 0)
                rfs_client_close(&c);
        }
        if (r != 0)
            rc = bad(name, "not served again: %ld", r, 0);
        else {
            /* 3 MiB: more than --max-data, fine as the client's 1 MiB pieces. */
            uint64_t len = 3u << 20, got;
            unsigned char *buf = malloc(len);
            fill_check(buf, len, 77, 0);
            if ((r = rfs_pwrite(&c, 0, buf, len, 0)) != 0 || (memset(buf, 0, len),
                (r = rfs_pread(&c, 0, buf, len, 0, &got))) != 0 || got != len ||
                fill_check(buf, len, 77, 1) != 0)
                rc = bad(name, "3 MiB write and read back: %ld", r, 0);
            free(buf);
            rfs_client_close(&c);
        }
        printf("%s %s\n", rc ? "FAIL" : "ok  ", name);
    }
    if (rc == 0) {
        /* One message over --max-data: a read is refused and the
         * connection goes on; a write is refused and the server closes. */
        name = "--max-data 1";
        struct frame r = frame_of(RFS_OP_PREAD, 6, 0, REQ(.length = (1u << 20) + 1));
        struct frame w = frame_of(RFS_OP_PWRITE, 7, 2u << 20, REQ(.length = 2u << 20));
        if (send_all(b, r.b, sizeof r.b) != 0 ||
            expect_reply(name, b, RFS_OP_PREAD, 6, RFS_E_TOOBIG, NULL, 0) != 0 ||
            probe(name, b) != 0)
            rc = -1;
        else if (send_all(b, w.b, sizeof w.b) != 0 ||
                 expect_reply(name, b, RFS_OP_PWRITE, 7, RFS_E_TOOBIG, NULL, 0) != 0 ||
                 expect_closed(name, b) != 0)
            rc = -1;
        printf("%s %s\n", rc ? "FAIL" : "ok  ", name);
    }
    if (b >= 0)
        close(b);
    return rc != 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return fprintf(stderr, "usage: rfsd_hostile PORT LIMITED_PORT\n"), 2;
    port = argv[1];
    limited_port = argv[2];
    pthread_t good;
    if (pthread_create(&good, NULL, good_client, NULL) != 0)
        return fprintf(stderr, "pthread_create failed\n"), 1;
    if (good_progresses() != 0) {
        fprintf(stderr, "the good client does not get going\n");
        failures++;
    } else {
        failures += bad_cases();
        failures += half_sent_with_open_file() != 0;
        failures += garbage();
        failures += pipelined();
        failures += limits();
    }
    atomic_store(&good_stop, 1);
    pthread_join(good, NULL);
    printf("good client: %d verified rounds%s\n", atomic_load(&good_rounds),
           atomic_load(&good_failed) ? ", then FAILED" : "");
    failures += atomic_load(&good_failed);

    /* And a new connection is still served after all of that. */
    struct rfs_client c;
    struct rfs_stat st;
    char back[5];
    uint64_t got;
    int rc = rfs_client_connect(&c, &net_tcp_transport, "127.0.0.1", port, 30000);
    if (rc == 0 && (rc = rfs_open(&c, 0, "/hostile/after", RFS_O_RDWR | RFS_O_CREAT, 0644,
                                  &st)) == 0 &&
        (rc = rfs_pwrite(&c, 0, "after", 5, 0)) == 0 &&
        (rc = rfs_pread(&c, 0, back, 5, 0, &got)) == 0 && (got != 5 || memcmp(back, "after", 5)))
        rc = -EIO;
    if (rc != 0) {
        fprintf(stderr, "FAIL a new connection afterwards: %d\n", rc);
        failures++;
    }
    rfs_client_close(&c);
    if (failures) {
        printf("%d failed\n", failures);
        return 1;
    }
    printf(" No Errors\n");
    return 0;
}
