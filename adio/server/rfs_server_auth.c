/*
 * The server's side of the challenge-response (rfs_server_auth.h,
 * docs/security.md): nothing secret crosses the wire.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_server_auth.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/rfs_log.h"
#include "server/rfs_path.h"

/* Guards the keys of every keyring a server authenticates with: a proof
 * reads its key whole under it, and rfs_server_auth_swap_keys replaces the
 * keys between two proofs, never under one. Held for a lookup and two
 * MACs (microseconds), so proofs wait little for each other. */
static pthread_mutex_t keys_lock = PTHREAD_MUTEX_INITIALIZER;

/* HELLO: remember the client's name and nonce, answer with ours. The key
 * is looked up at the proof: an unknown name is not told apart here, so
 * names cannot be probed, and keys read again in between (SIGHUP) are the
 * ones the proof meets. */
static void auth_hello(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
{
    struct rfs_auth_state *a = &ss->auth;
    memcpy(a->name, ss->buf, r->aux);
    a->name[r->aux] = '\0';
    memcpy(a->client_nonce, ss->buf + r->aux, RFS_AUTH_NONCE);
    if (rfs_auth_nonce(a->server_nonce) < 0) {
        res->status = RFS_E_IO;
        return;
    }
    a->hello_seen = 1;
    memcpy(ss->buf, a->server_nonce, RFS_AUTH_NONCE);
    res->data_len = RFS_AUTH_NONCE;
}

/* What a proof took from its key, under keys_lock: the keys may be
 * replaced once it is released. */
struct proof {
    int found, ok, read_only;
    char *root;                 /* the key's root=, NULL: the whole export */
};

/* Check the client's MAC in ss->buf; if right, put the server's there. */
static void check_proof(struct rfs_session *ss, const uint8_t *binding, size_t blen,
                        struct proof *p)
{
    struct rfs_auth_state *a = &ss->auth;
    uint8_t expect[RFS_AUTH_MAC];
    pthread_mutex_lock(&keys_lock);
    const struct rfs_key *k = a->hello_seen ? rfs_keyring_find(ss->server->keys, a->name,
                                                               strlen(a->name)) : NULL;
    p->found = k != NULL;
    if (k) {
        rfs_auth_mac(k, 'C', a->client_nonce, a->server_nonce, binding, blen, expect);
        p->ok = rfs_auth_mac_equal(expect, ss->buf);
    }
    if (p->ok) {
        rfs_auth_mac(k, 'S', a->client_nonce, a->server_nonce, binding, blen, ss->buf);
        p->read_only = k->read_only;
        p->root = k->root ? strdup(k->root) : NULL;
        p->ok = p->root || !k->root ? 1 : -ENOMEM;
    }
    pthread_mutex_unlock(&keys_lock);
}

/* The session takes the key's root and rights: 0, or -EIO when its root
 * cannot be opened. */
static int take_key(struct rfs_session *ss, const struct proof *p)
{
    struct rfs_auth_state *a = &ss->auth;
    /* Opened per connection: a root made or moved after start counts. */
    if (p->root && (ss->key_root_fd = rfs_path_open_dir(ss->root_fd, p->root)) < 0) {
        rfs_log(RFS_LOG_ERROR, "%s: key '%s': root=%s: %s", ss->peer, a->name, p->root,
                strerror(-ss->key_root_fd));
        return -EIO;
    }
    a->done = 1;
    ss->read_only = p->read_only;
    if (p->root)
        ss->root_fd = ss->key_root_fd;
    rfs_log(RFS_LOG_INFO, "%s: authenticated with key '%s'%s", ss->peer, a->name,
            ss->read_only ? " (read-only)" : "");
    return 0;
}

/* PROOF: check the client's MAC, answer with the server's. Returns
 * -EACCES when the connection must end. */
static int auth_proof(struct rfs_session *ss, struct rfs_result *res)
{
    struct rfs_auth_state *a = &ss->auth;
    uint8_t binding[RFS_AUTH_BINDING];
    size_t blen = net_binding(ss->conn, binding, sizeof binding) == 0 ? sizeof binding : 0;
    struct proof p = { 0 };
    check_proof(ss, binding, blen, &p);
    if (p.ok == 0) {
        rfs_log(RFS_LOG_WARN, "%s: authentication failed: %s key '%s'", ss->peer,
                p.found ? "wrong proof for" : a->hello_seen ? "unknown" : "no name for",
                a->name);
        res->status = RFS_E_AUTH;
        return -EACCES;
    }
    if (p.ok < 0)
        rfs_log(RFS_LOG_ERROR, "%s: key '%s': out of memory", ss->peer, a->name);
    int rc = p.ok < 0 ? -EIO : take_key(ss, &p);
    free(p.root);
    if (rc < 0) {
        res->status = RFS_E_IO;
        return rc;
    }
    res->data_len = RFS_AUTH_MAC;
    return 0;
}

int rfs_server_auth(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
{
    if (!ss->server->keys || ss->auth.done) {
        res->status = RFS_E_INVAL;
        return 0;
    }
    if (r->flags == RFS_AUTH_HELLO) {
        auth_hello(ss, r, res);
        return 0;
    }
    return auth_proof(ss, res);
}

void rfs_server_auth_swap_keys(struct rfs_keyring *ring, struct rfs_keyring *fresh)
{
    pthread_mutex_lock(&keys_lock);
    struct rfs_keyring old = *ring;
    *ring = *fresh;
    *fresh = old;
    pthread_mutex_unlock(&keys_lock);
}
