/*
 * rfsd's request engine (rfs_server.h): the export root, and one session
 * per connection, served request by request (rfs_frame.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/rfs_frame.h"
#include "server/rfs_lease.h"
#include "server/rfs_path.h"
#include "server/rfs_session.h"

int rfs_server_init(struct rfs_server *s, const char *root)
{
    s->rate = NULL;
    s->keys = NULL;
    s->max_data = RFS_MAX_DATA;
    s->lease_timeout_ms = RFS_LEASE_TIMEOUT_MS_DEFAULT;
    s->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (s->root_fd < 0)
        return -errno;
    int rc = rfs_lease_table_new(&s->leases);
    if (rc < 0) {
        close(s->root_fd);
        s->root_fd = -1;
    }
    return rc;
}

int rfs_server_check_keys(const struct rfs_server *s, char *err, size_t errlen)
{
    for (size_t i = 0; s->keys && i < s->keys->count; i++) {
        const struct rfs_key *k = &s->keys->keys[i];
        int fd = k->root ? rfs_path_open_dir(s->root_fd, k->root) : 0;
        if (fd < 0) {
            snprintf(err, errlen, "key '%s': root=%s: %s", k->name, k->root, strerror(-fd));
            return fd;
        }
        if (k->root)
            close(fd);
    }
    return 0;
}

void rfs_server_fini(struct rfs_server *s)
{
    if (s->root_fd >= 0)
        close(s->root_fd);
    s->root_fd = -1;
    rfs_lease_table_free(s->leases);
    s->leases = NULL;
}

int rfs_session_reserve(struct rfs_session *ss, uint64_t len)
{
    if (len <= ss->cap)
        return 0;
    if (len > ss->server->max_data)
        return -ENOMEM;
    uint8_t *p = realloc(ss->buf, (size_t) len);
    if (!p)
        return -ENOMEM;
    ss->buf = p;
    ss->cap = (size_t) len;
    return 0;
}

struct rfs_session *rfs_session_new(const struct rfs_server *s, struct net_conn *conn,
                                    const char *peer)
{
    struct rfs_session *ss = calloc(1, sizeof *ss);
    if (!ss)
        return NULL;
    *ss = (struct rfs_session) { .server = s, .conn = conn, .peer = peer, .root_fd = s->root_fd,
                                 .key_root_fd = -1, .auth.done = !s->keys };
    for (int i = 0; i < RFS_MAX_HANDLES; i++)
        ss->fd[i] = -1;
    return ss;
}

int rfs_session_serve_one(struct rfs_session *ss)
{
    return rfs_frame_serve_one(ss);
}

int rfs_session_authenticated(const struct rfs_session *ss)
{
    return ss->auth.done;
}

void rfs_session_idle(struct rfs_session *ss)
{
    free(ss->buf);
    ss->buf = NULL;
    ss->cap = 0;
}

void rfs_session_free(struct rfs_session *ss)
{
    if (!ss)
        return;
    for (int i = 0; i < RFS_MAX_HANDLES; i++) {
        if (ss->fd[i] >= 0) {
            rfs_lease_drop(ss->server->leases, &ss->file[i]);
            close(ss->fd[i]);
        }
        dtype_free(ss->view[i]);
    }
    if (ss->key_root_fd >= 0)
        close(ss->key_root_fd);
    free(ss->buf);
    free(ss);
}

int rfs_serve_connection(const struct rfs_server *s, struct net_conn *conn, const char *peer)
{
    struct rfs_session *ss = rfs_session_new(s, conn, peer);
    if (!ss)
        return -ENOMEM;
    int rc;
    while ((rc = rfs_session_serve_one(ss)) == 0)
        ;
    rfs_session_free(ss);
    return rc == 1 ? 0 : rc;
}
