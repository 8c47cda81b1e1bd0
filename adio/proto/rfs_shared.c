/*
 * The connections a process's files share (rfs_shared.h): a list under a
 * lock, which guards the list and the handle bits only; a connection's
 * calls are its files' business.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "proto/rfs_shared.h"
#include "net/net_time.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct rfs_shared {
    struct rfs_shared *next;
    struct rfs_client client;
    char *host, *port;
    struct rfs_connect_opts opts;       /* as connected; the key is not kept */
    struct rfs_key key;                 /* a copy; secret_len 0: none */
    uint64_t handles;                   /* bit h: handle h taken */
    int users;
    int listed;                         /* in the list: other files may take it */
    int pool;                           /* taken by files of this share value only */
};

_Static_assert(RFS_MAX_HANDLES == 64, "one bit of `handles` a handle");

static struct rfs_shared *conns;
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;

static int same_key(const struct rfs_key *kept, const struct rfs_key *k)
{
    if (!k)
        return kept->secret_len == 0;
    return kept->secret_len == k->secret_len && strcmp(kept->name, k->name) == 0 &&
           memcmp(kept->secret, k->secret, k->secret_len) == 0;
}

static int same_opts(const struct rfs_connect_opts *a, const struct rfs_connect_opts *b)
{
    const struct net_opts *x = &a->net, *y = &b->net;
    return a->transport == b->transport && x->timeout_ms == y->timeout_ms &&
           x->registration == y->registration && x->pack_max == y->pack_max &&
           x->rcvbuf == y->rcvbuf;
}

static int shareable(const struct rfs_shared *c, const char *host, const char *port,
                     const struct rfs_connect_opts *o, int pool)
{
    return !c->client.broken && ~c->handles != 0 && c->pool == pool &&
           strcmp(c->host, host) == 0 &&
           strcmp(c->port, port) == 0 && same_opts(&c->opts, o) && same_key(&c->key, o->key);
}

/* Under conns_lock. */
static void take_handle(struct rfs_shared *c, struct rfs_shared_file *out)
{
    out->handle = (uint32_t) __builtin_ctzll(~c->handles);
    c->handles |= 1ull << out->handle;
    c->users++;
    out->conn = c;
    out->client = &c->client;
    out->at_take = c->client.stats;
}

static struct rfs_shared *find_shared(const char *host, const char *port,
                                      const struct rfs_connect_opts *o, int pool)
{
    struct rfs_shared *c = conns;
    while (c && !shareable(c, host, port, o, pool))
        c = c->next;
    return c;
}

static void shared_free(struct rfs_shared *c)
{
    rfs_key_wipe(&c->key);
    free(c->host);
    free(c->port);
    free(c);
}

static struct rfs_shared *connect_new(const char *host, const char *port,
                                      const struct rfs_connect_opts *o, int *rc,
                                      const char **why)
{
    struct rfs_shared *c = calloc(1, sizeof *c);
    if (!c || !(c->host = strdup(host)) || !(c->port = strdup(port))) {
        if (c)
            shared_free(c);
        *rc = -ENOMEM;
        return NULL;
    }
    *rc = rfs_client_connect_with(&c->client, host, port, o);
    if (*rc != 0) {
        *why = c->client.why;
        shared_free(c);
        return NULL;
    }
    c->opts = *o;
    c->opts.key = NULL;
    if (o->key) {
        snprintf(c->key.name, sizeof c->key.name, "%s", o->key->name);
        memcpy(c->key.secret, o->key->secret, o->key->secret_len);
        c->key.secret_len = o->key->secret_len;
    }
    return c;
}

int rfs_shared_take(const char *host, const char *port, const struct rfs_connect_opts *o,
                    int share, struct rfs_shared_file *out, const char **why)
{
    share = o->net.tls ? 0 : share;
    pthread_mutex_lock(&conns_lock);
    struct rfs_shared *c = share ? find_shared(host, port, o, share) : NULL;
    if (c)
        take_handle(c, out);
    pthread_mutex_unlock(&conns_lock);
    if (c)
        return 0;
    int rc;
    /* Connected outside the lock: another file's connect need not wait. */
    if (!(c = connect_new(host, port, o, &rc, why)))
        return rc;
    pthread_mutex_lock(&conns_lock);
    take_handle(c, out);
    c->listed = share != 0;
    c->pool = share;
    if (share) {
        c->next = conns;
        conns = c;
    }
    pthread_mutex_unlock(&conns_lock);
    return 0;
}

static void add_stats(struct rfs_client_stats *sum, const struct rfs_client_stats *now,
                      const struct rfs_client_stats *then)
{
    sum->requests += now->requests - then->requests;
    sum->bytes_out += now->bytes_out - then->bytes_out;
    sum->bytes_in += now->bytes_in - then->bytes_in;
}

void rfs_shared_give_back(struct rfs_shared_file *f)
{
    struct rfs_shared *c = f->conn;
    if (!c)
        return;
    add_stats(&f->before, &c->client.stats, &f->at_take);
    f->conn = NULL;
    f->client = NULL;
    pthread_mutex_lock(&conns_lock);
    c->handles &= ~(1ull << f->handle);
    int last = --c->users == 0;
    for (struct rfs_shared **p = &conns; last && c->listed && *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    pthread_mutex_unlock(&conns_lock);
    if (!last)
        return;
    rfs_client_close(&c->client);
    shared_free(c);
}

int rfs_shared_revive(struct rfs_shared_file *f, const char *host, const char *port,
                      const struct rfs_connect_opts *o, int share, const char *path,
                      uint32_t flags, const char **why)
{
    int broken = rfs_client_check(f->client);
    if (broken == 0)
        return 0;
    uint64_t now = (uint64_t) net_monotonic_ms();
    if (f->unsynced || f->locks || now < f->retry_ms)
        return broken;
    f->retry_ms = now + (uint64_t) (o->net.timeout_ms > RFS_SHARED_RETRY_MS
                                    ? o->net.timeout_ms : RFS_SHARED_RETRY_MS);
    struct rfs_shared_file next = { 0 };
    int rc = rfs_shared_take(host, port, o, share, &next, why);
    if (rc != 0)
        return rc;
    rc = rfs_open(next.client, next.handle, path, flags & ~(RFS_O_CREAT | RFS_O_EXCL), 0,
                  NULL);
    if (rc != 0) {
        *why = next.client->why;
        rfs_shared_give_back(&next);
        return rc;
    }
    rfs_shared_give_back(f);            /* f->before counts the old connection now */
    next.before = f->before;
    *f = next;
    return 0;
}

void rfs_shared_wrote(struct rfs_shared_file *f)
{
    f->unsynced = 1;
}

void rfs_shared_synced(struct rfs_shared_file *f)
{
    f->unsynced = 0;
}

void rfs_shared_locked(struct rfs_shared_file *f, uint32_t kind)
{
    if (kind != RFS_LOCK_UNLOCK)
        f->locks++;
    else if (f->locks > 0)
        f->locks--;
}

void rfs_shared_stats(const struct rfs_shared_file *f, struct rfs_client_stats *out)
{
    *out = f->before;
    if (f->conn)
        add_stats(out, &f->client->stats, &f->at_take);
}

unsigned rfs_shared_count(void)
{
    unsigned n = 0;
    pthread_mutex_lock(&conns_lock);
    for (const struct rfs_shared *c = conns; c; c = c->next)
        n++;
    pthread_mutex_unlock(&conns_lock);
    return n;
}
