/*
 * Stream transports: the four calls of the RFS paper (connect, write n
 * bytes, read n bytes, close) plus writev, behind a table so that another
 * transport can be dropped in under the same client and server code.
 * No MPI here. Every call returns 0 or a negative errno value; a peer that
 * closes the stream mid-message gives -ECONNRESET, an expired timeout
 * -ETIMEDOUT.
 */
#ifndef NET_H_INCLUDED
#define NET_H_INCLUDED

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct net_conn;
struct net_tls;                 /* a TLS configuration (net_tls.c) */

/* How the verbs transport registers caller memory (seed 000). */
enum { NET_REG_CACHED, NET_REG_OGR, NET_REG_INDIVIDUAL };

struct net_opts {
    int timeout_ms;             /* connect, send and receive timeout; <= 0: none */
    struct net_tls *tls;        /* net_tls_transport: the client configuration */
    int registration;           /* net_verbs_transport: NET_REG_* */
    uint32_t pack_max;          /* net_verbs_transport: a rendezvous below this many bytes is
                                 * packed/unpacked through the staging buffer; 0: the
                                 * default (64 KiB), at most 4 MiB; RFS_VERBS_PACK overrides */
    int rcvbuf;                 /* net_tcp_transport (and TLS over it): the socket's receive
                                 * buffer (SO_RCVBUF), which bounds what the peer has in
                                 * flight toward this end; 0: the kernel's autotuning */
};

struct net_transport {
    const char *name;
    int (*connect)(const char *host, const char *port, const struct net_opts *opts,
                   struct net_conn **out);
    int (*writev)(struct net_conn *conn, const struct iovec *iov, int iovcnt);
    int (*readn)(struct net_conn *conn, void *buf, size_t len);
    void (*close)(struct net_conn *conn);
    /*
     * Optional, for servers (NULL: copy through memory): consume exactly
     * len bytes of the stream and write them to fd at offset. Returns 0, a
     * negative errno if the stream failed, or a positive errno if the file
     * did (the stream is still consumed, so the connection stays in step).
     */
    int (*recv_to_file)(struct net_conn *conn, int fd, uint64_t offset, uint64_t len);
    /*
     * Optional (NULL: none): len bytes that both ends of this connection,
     * and only they, compute alike (the TLS exporter). Authentication mixes
     * them into its proofs so that a proof is bound to this connection.
     */
    int (*binding)(struct net_conn *conn, uint8_t *out, size_t len);
    /* Read exactly the bytes of the vector: a reply scattered straight into
     * the caller's segments (over verbs by RDMA READ where it pays). */
    int (*readv)(struct net_conn *conn, const struct iovec *iov, int iovcnt);
    /* From another thread: make calls blocked on conn fail soon (server exit). */
    void (*shutdown)(struct net_conn *conn);
    /*
     * Optional (NULL: nothing to do), best effort: memory that the next
     * transfers on conn will send from or (reading) receive into, in
     * pieces. Over verbs with the registration cache it is registered as
     * a whole now, so that each transfer finds its pieces cached instead
     * of registering them apart.
     */
    void (*pin)(struct net_conn *conn, const struct iovec *iov, int iovcnt, int reading);
    /* Optional (NULL: none): whether bytes of the stream already sit in
     * the transport's own memory (TLS records decrypted ahead), where a
     * poll of the socket cannot see them. */
    int (*buffered)(struct net_conn *conn);
    /* Optional (NULL: never known): whether the peer has closed its end,
     * seen without reading (the next call would fail). */
    int (*peer_closed)(struct net_conn *conn);
};

/* Every transport's connection starts with this. */
struct net_conn {
    const struct net_transport *transport;
};

extern const struct net_transport net_tcp_transport;
/* TLS 1.3 over TCP (OpenSSL); connect needs opts->tls from net_tls_client_new. */
extern const struct net_transport net_tls_transport;

static inline int net_connect(const struct net_transport *t, const char *host, const char *port,
                              const struct net_opts *opts, struct net_conn **out)
{
    return t->connect(host, port, opts, out);
}

static inline int net_writev(struct net_conn *c, const struct iovec *iov, int iovcnt)
{
    return c->transport->writev(c, iov, iovcnt);
}

static inline int net_writen(struct net_conn *c, const void *buf, size_t len)
{
    struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
    return c->transport->writev(c, &iov, 1);
}

static inline int net_readn(struct net_conn *c, void *buf, size_t len)
{
    return c->transport->readn(c, buf, len);
}

static inline int net_readv(struct net_conn *c, const struct iovec *iov, int iovcnt)
{
    return c->transport->readv(c, iov, iovcnt);
}

static inline void net_shutdown(struct net_conn *c)
{
    c->transport->shutdown(c);
}

static inline void net_pin(struct net_conn *c, const struct iovec *iov, int iovcnt, int reading)
{
    if (c && c->transport->pin)
        c->transport->pin(c, iov, iovcnt, reading);
}

static inline void net_close(struct net_conn *c)
{
    if (c)
        c->transport->close(c);
}

static inline int net_buffered(struct net_conn *c)
{
    return c->transport->buffered ? c->transport->buffered(c) : 0;
}

static inline int net_peer_closed(struct net_conn *c)
{
    return c->transport->peer_closed ? c->transport->peer_closed(c) : 0;
}

/* 0 and len bytes in out, or -ENOTSUP for a transport without a binding. */
static inline int net_binding(struct net_conn *c, uint8_t *out, size_t len)
{
    return c->transport->binding ? c->transport->binding(c, out, len) : -ENOTSUP;
}

/* TCP server side: listen on ADDR:PORT (port "0" picks a free one). */
int net_tcp_listen(const char *addr, const char *port, int *listen_fd, int *bound_port);
/* Wrap an accepted socket as a connection (takes ownership of fd). */
int net_tcp_wrap(int fd, const struct net_opts *opts, struct net_conn **out);
/* The socket under a TCP connection, for shutdown() at server exit. */
int net_tcp_fd(const struct net_conn *c);

/*
 * TLS configurations. A client verifies the server's certificate against
 * ca_file (and the host name it connects to), or against the system's
 * trust store when ca_file is NULL; verify 0 skips the check, for callers
 * that authenticate the server otherwise (a shared key bound to the
 * channel). Errors: a negative errno and a message in err.
 */
int net_tls_client_new(const char *ca_file, int verify, struct net_tls **out, char *err,
                       size_t errlen);
int net_tls_server_new(const char *cert_file, const char *key_file, struct net_tls **out,
                       char *err, size_t errlen);
void net_tls_free(struct net_tls *tls);
/* Server side: the TLS handshake on an accepted TCP connection, timeout_ms
 * in all however the peer paces it; the socket's own timeouts stay as they
 * were. Takes ownership of tcp, also on failure. */
int net_tls_accept(struct net_tls *tls, struct net_conn *tcp, int timeout_ms,
                   struct net_conn **out);

#endif /* NET_H_INCLUDED */
