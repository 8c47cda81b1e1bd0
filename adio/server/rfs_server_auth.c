/*
 * The server's side of the challenge-response (rfs_server_auth.h,
 * docs/security.md): nothing secret crosses the wire.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_server_auth.h"

#include <errno.h>
#include <string.h>

#include "server/rfs_log.h"
#include "server/rfs_path.h"

/* HELLO: remember the client's name and nonce, answer with ours. An
 * unknown name is not told apart here: that exchange fails at the proof,
 * so names cannot be probed. */
static void auth_hello(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res)
{
    struct rfs_auth_state *a = &ss->auth;
    memcpy(a->name, ss->buf, r->aux);
    a->name[r->aux] = '\0';
    a->key = rfs_keyring_find(ss->server->keys, a->name, r->aux);
    memcpy(a->client_nonce, ss->buf + r->aux, RFS_AUTH_NONCE);
    if (rfs_auth_nonce(a->server_nonce) < 0) {
        res->status = RFS_E_IO;
        return;
    }
    a->hello_seen = 1;
    memcpy(ss->buf, a->server_nonce, RFS_AUTH_NONCE);
    res->data_len = RFS_AUTH_NONCE;
}

/* PROOF: check the client's MAC, answer with the server's. Returns
 * -EACCES when the connection must end. */
static int auth_proof(struct rfs_session *ss, struct rfs_result *res)
{
    struct rfs_auth_state *a = &ss->auth;
    uint8_t binding[RFS_AUTH_BINDING], expect[RFS_AUTH_MAC];
    size_t blen = net_binding(ss->conn, binding, sizeof binding) == 0 ? sizeof binding : 0;
    int ok = a->hello_seen && a->key;
    if (ok) {
        rfs_auth_mac(a->key, 'C', a->client_nonce, a->server_nonce, binding, blen, expect);
        ok = rfs_auth_mac_equal(expect, ss->buf);
    }
    if (!ok) {
        rfs_log(RFS_LOG_WARN, "%s: authentication failed: %s key '%s'", ss->peer,
                a->key ? "wrong proof for" : a->hello_seen ? "unknown" : "no name for",
                a->name);
        res->status = RFS_E_AUTH;
        return -EACCES;
    }
    /* Opened per connection: a root made or moved after start counts. */
    if (a->key->root && (ss->key_root_fd = rfs_path_open_dir(ss->root_fd, a->key->root)) < 0) {
        rfs_log(RFS_LOG_ERROR, "%s: key '%s': root=%s: %s", ss->peer, a->name, a->key->root,
                strerror(-ss->key_root_fd));
        res->status = RFS_E_IO;
        return -EIO;
    }
    a->done = 1;
    ss->read_only = a->key->read_only;
    if (a->key->root)
        ss->root_fd = ss->key_root_fd;
    rfs_log(RFS_LOG_INFO, "%s: authenticated with key '%s'%s", ss->peer, a->name,
            ss->read_only ? " (read-only)" : "");
    rfs_auth_mac(a->key, 'S', a->client_nonce, a->server_nonce, binding, blen, ss->buf);
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
