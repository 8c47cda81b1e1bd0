/*
 * The request engine's namespace operations (rfs_nsops.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_nsops.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/rfs_log.h"
#include "server/rfs_path.h"

static uint32_t type_of(mode_t mode)
{
    return S_ISREG(mode) ? RFS_TYPE_REG : S_ISDIR(mode) ? RFS_TYPE_DIR : RFS_TYPE_OTHER;
}

/* ns since the epoch; times past 2262 (or before 1678) are clamped */
static int64_t ns_of(struct timespec t)
{
    const int64_t limit = INT64_MAX / 1000000000 - 1;
    if (t.tv_sec > limit)
        return INT64_MAX;
    if (t.tv_sec < -limit)
        return INT64_MIN;
    return (int64_t) t.tv_sec * 1000000000 + t.tv_nsec;
}

static int stat_path(struct rfs_session *ss, const char *path, struct rfs_result *res)
{
    struct stat st;
    int rc = rfs_path_stat(ss->root_fd, path, &st);
    if (rc < 0)
        return rc;
    struct rfs_stat_rec rec = {
        .type = type_of(st.st_mode), .perm = (uint32_t) (st.st_mode & 07777),
        .size = (uint64_t) st.st_size, .blocks = (uint64_t) st.st_blocks,
        .atime_ns = ns_of(st.st_atim), .mtime_ns = ns_of(st.st_mtim),
        .ctime_ns = ns_of(st.st_ctim),
    };
    if (rfs_session_reserve(ss, RFS_STAT_SIZE) < 0)
        return -ENOMEM;
    rfs_stat_encode(&rec, ss->buf);
    res->data_len = RFS_STAT_SIZE;
    res->rep.value = rec.size;
    res->rep.blksize = st.st_blksize > 0 ? (uint32_t) st.st_blksize : 4096;
    return 0;
}

/* A link's type is its target's, which only a STAT of it finds (within
 * the symlink rule): the listing says "other". */
static uint32_t entry_type(const struct dirent *e)
{
    return e->d_type == DT_REG ? RFS_TYPE_REG : e->d_type == DT_DIR ? RFS_TYPE_DIR
                                                                   : RFS_TYPE_OTHER;
}

/* Entries from index r->offset on ("." and ".." not counted), as many as
 * fit in r->length bytes; value: the index after the last one sent. */
static int list_dir(struct rfs_session *ss, const char *path, const struct rfs_req *r,
                    struct rfs_result *res)
{
    if (rfs_session_reserve(ss, r->length) < 0)
        return -ENOMEM;
    int fd = rfs_path_open_listing(ss->root_fd, path);
    if (fd < 0)
        return fd;
    DIR *d = fdopendir(fd);
    if (!d) {
        int err = errno;
        close(fd);
        return -err;
    }
    uint64_t index = 0, used = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || n > RFS_MAX_NAME)
            continue;
        if (index++ < r->offset)
            continue;
        if (used + RFS_DIRENT_FIXED + n > r->length) {
            index--;
            break;
        }
        used += rfs_dirent_encode(entry_type(e), e->d_name, n, ss->buf + used);
    }
    int rc = errno && !e ? -errno : 0;
    closedir(d);
    if (rc == 0 && used == 0 && e)
        rc = -ENAMETOOLONG;         /* not even one entry fits the client's room */
    res->data_len = rc == 0 ? used : 0;
    /* a directory that shrank since the last page ends here: no entry,
     * and an index the client may go on from */
    res->rep.value = index > r->offset ? index : r->offset;
    return rc;
}

static int set_attributes(struct rfs_session *ss, const char *path, const struct rfs_req *r)
{
    mode_t mode = (mode_t) r->mode;
    struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT } };
    const uint32_t set[2] = { RFS_SET_ATIME, RFS_SET_MTIME };
    const uint32_t now[2] = { RFS_SET_ATIME_NOW, RFS_SET_MTIME_NOW };
    const uint64_t at[2] = { r->offset, r->length };
    int any_time = 0;
    for (int i = 0; i < 2; i++) {
        if (r->flags & now[i])
            times[i].tv_nsec = UTIME_NOW;
        else if (r->flags & set[i])
            times[i] = (struct timespec) { .tv_sec = (time_t) (at[i] / 1000000000),
                                           .tv_nsec = (long) (at[i] % 1000000000) };
        any_time |= (r->flags & (now[i] | set[i])) != 0;
    }
    return rfs_path_setattr(ss->root_fd, path, r->flags & RFS_SET_MODE ? &mode : NULL,
                            any_time ? times : NULL);
}

static int changes(uint16_t op)
{
    return op == RFS_OP_MKDIR || op == RFS_OP_RMDIR || op == RFS_OP_RENAME ||
           op == RFS_OP_SETATTR;
}

void rfs_ns_op(struct rfs_session *ss, uint16_t op, const struct rfs_req *r,
               struct rfs_result *res)
{
    char path[RFS_MAX_PATH + 1], to[RFS_MAX_PATH + 1] = "";
    memcpy(path, ss->buf, r->aux);
    path[r->aux] = '\0';
    if (op == RFS_OP_RENAME) {
        memcpy(to, ss->buf + r->aux, r->length);
        to[r->length] = '\0';
    }
    if (ss->read_only && changes(op)) {
        res->status = RFS_E_ACCES;
        rfs_log(RFS_LOG_WARN, "%s: %s %s refused: key '%s' is read-only", ss->peer,
                rfs_op_name(op), path, ss->auth.name);
        return;
    }
    int rc;
    switch (op) {
    case RFS_OP_STAT:
        rc = stat_path(ss, path, res);
        break;
    case RFS_OP_READDIR:
        rc = list_dir(ss, path, r, res);
        break;
    case RFS_OP_MKDIR:
        rc = rfs_path_mkdir(ss->root_fd, path, (mode_t) (r->mode & 07777));
        break;
    case RFS_OP_RMDIR:
        rc = rfs_path_rmdir(ss->root_fd, path);
        break;
    case RFS_OP_RENAME:
        rc = rfs_path_rename(ss->root_fd, path, to, r->flags & RFS_RENAME_NOREPLACE);
        break;
    default:
        rc = set_attributes(ss, path, r);
        break;
    }
    res->status = rfs_status_of_errno(rc);
    rfs_log(RFS_LOG_DEBUG, "%s: %s %s%s%s: %s", ss->peer, rfs_op_name(op), path,
            *to ? " to " : "", to, rfs_status_str(res->status));
}
