#include "mem_transport.h"

#include <errno.h>
#include <string.h>

static int mem_writev(struct net_conn *conn, const struct iovec *iov, int iovcnt)
{
    struct mem_conn *c = (struct mem_conn *) conn;
    for (int i = 0; i < iovcnt; i++)
        c->written += iov[i].iov_len;
    return 0;
}

static int mem_readn(struct net_conn *conn, void *buf, size_t len)
{
    struct mem_conn *c = (struct mem_conn *) conn;
    if (len > c->len - c->pos) {
        c->pos = c->len;
        return -ECONNRESET;
    }
    memcpy(buf, c->in + c->pos, len);
    c->pos += len;
    return 0;
}

static int mem_readv(struct net_conn *conn, const struct iovec *iov, int iovcnt)
{
    for (int i = 0; i < iovcnt; i++) {
        int rc = mem_readn(conn, iov[i].iov_base, iov[i].iov_len);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void mem_close(struct net_conn *conn)
{
    (void) conn;
}

static void mem_shutdown(struct net_conn *conn)
{
    (void) conn;
}

static const struct net_transport mem_transport = {
    .name = "memory", .writev = mem_writev, .readn = mem_readn, .close = mem_close,
    .readv = mem_readv, .shutdown = mem_shutdown,
};

void mem_conn_init(struct mem_conn *c, const uint8_t *in, size_t len)
{
    memset(c, 0, sizeof *c);
    c->base.transport = &mem_transport;
    c->in = in;
    c->len = len;
}
