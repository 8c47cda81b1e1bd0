/*
 * AUTH requests on the server: HELLO (names and nonces), then PROOF (the
 * client's MAC checked, the server's sent); the session then serves
 * requests with the key's root and rights. Internal to adio/server, but
 * for rfs_server_auth_swap_keys (rfsd's SIGHUP). No MPI here.
 */
#ifndef RFS_SERVER_AUTH_H_INCLUDED
#define RFS_SERVER_AUTH_H_INCLUDED

#include "server/rfs_session.h"

/* AUTH on a server without keys is a request it cannot serve (the client
 * then knows the server does not authenticate); once done, it is not
 * repeated. Returns -EACCES or -EIO when the connection must end, else 0. */
int rfs_server_auth(struct rfs_session *ss, const struct rfs_req *r, struct rfs_result *res);

/* Replace the keys of `ring` (a server's keys, being served) with those of
 * `fresh`, which gets the old ones for the caller to free. A proof meets
 * the one or the other, whole; connections that authenticated keep the
 * root and rights they were given. */
void rfs_server_auth_swap_keys(struct rfs_keyring *ring, struct rfs_keyring *fresh);

#endif /* RFS_SERVER_AUTH_H_INCLUDED */
