/*
 * Encoding, decoding and validation of rfs protocol messages.
 */
#include "proto/rfs_proto.h"
#include "proto/rfs_auth.h"
#include "proto/wire_le.h"
#include "stripe/stripe.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

void rfs_hdr_encode(const struct rfs_hdr *h, uint8_t out[RFS_HDR_SIZE])
{
    le_put32(out, h->magic);
    le_put16(out + 4, h->version);
    le_put16(out + 6, h->op);
    le_put32(out + 8, h->tag);
    le_put32(out + 12, (uint32_t) h->status);
    le_put64(out + 16, h->len);
}

int rfs_hdr_decode(const uint8_t in[RFS_HDR_SIZE], struct rfs_hdr *h)
{
    h->magic = le_get32(in);
    h->version = le_get16(in + 4);
    h->op = le_get16(in + 6);
    h->tag = le_get32(in + 8);
    h->status = (int32_t) le_get32(in + 12);
    h->len = le_get64(in + 16);
    if (h->magic != RFS_MAGIC || h->version != RFS_VERSION)
        return RFS_E_PROTO;
    return RFS_OK;
}

void rfs_req_encode(const struct rfs_req *r, uint8_t out[RFS_REQ_FIXED])
{
    le_put32(out, r->handle);
    le_put32(out + 4, r->flags);
    le_put32(out + 8, r->mode);
    le_put32(out + 12, r->aux);
    le_put64(out + 16, r->offset);
    le_put64(out + 24, r->length);
}

void rfs_req_decode(const uint8_t in[RFS_REQ_FIXED], struct rfs_req *r)
{
    r->handle = le_get32(in);
    r->flags = le_get32(in + 4);
    r->mode = le_get32(in + 8);
    r->aux = le_get32(in + 12);
    r->offset = le_get64(in + 16);
    r->length = le_get64(in + 24);
}

void rfs_rep_encode(const struct rfs_rep *r, uint8_t out[RFS_REP_FIXED])
{
    le_put64(out, r->value);
    le_put32(out + 8, r->blksize);
    le_put32(out + 12, r->reserved);
}

void rfs_rep_decode(const uint8_t in[RFS_REP_FIXED], struct rfs_rep *r)
{
    r->value = le_get64(in);
    r->blksize = le_get32(in + 8);
    r->reserved = le_get32(in + 12);
}

void rfs_pair_encode(uint64_t offset, uint64_t length, uint8_t out[RFS_PAIR_SIZE])
{
    le_put64(out, offset);
    le_put64(out + 8, length);
}

void rfs_pair_decode(const uint8_t in[RFS_PAIR_SIZE], uint64_t *offset, uint64_t *length)
{
    *offset = le_get64(in);
    *length = le_get64(in + 8);
}

/* offset + length must stay a valid off_t. */
static int range_ok(uint64_t offset, uint64_t length)
{
    return offset <= (uint64_t) INT64_MAX && length <= (uint64_t) INT64_MAX - offset;
}

void rfs_stat_encode(const struct rfs_stat_rec *s, uint8_t out[RFS_STAT_SIZE])
{
    le_put32(out, s->type);
    le_put32(out + 4, s->perm);
    le_put64(out + 8, s->size);
    le_put64(out + 16, s->blocks);
    le_put64(out + 24, (uint64_t) s->atime_ns);
    le_put64(out + 32, (uint64_t) s->mtime_ns);
    le_put64(out + 40, (uint64_t) s->ctime_ns);
}

int rfs_stat_decode(const uint8_t in[RFS_STAT_SIZE], struct rfs_stat_rec *s)
{
    s->type = le_get32(in);
    s->perm = le_get32(in + 4);
    s->size = le_get64(in + 8);
    s->blocks = le_get64(in + 16);
    s->atime_ns = (int64_t) le_get64(in + 24);
    s->mtime_ns = (int64_t) le_get64(in + 32);
    s->ctime_ns = (int64_t) le_get64(in + 40);
    if (s->type < RFS_TYPE_REG || s->type > RFS_TYPE_OTHER || s->perm & ~07777u ||
        s->size > (uint64_t) INT64_MAX || s->blocks > (uint64_t) INT64_MAX)
        return RFS_E_PROTO;
    return RFS_OK;
}

size_t rfs_dirent_encode(uint32_t type, const char *name, size_t name_len, uint8_t *out)
{
    out[0] = (uint8_t) type;
    le_put16(out + 1, (uint16_t) name_len);
    memcpy(out + RFS_DIRENT_FIXED, name, name_len);
    return RFS_DIRENT_FIXED + name_len;
}

size_t rfs_dirent_decode(const uint8_t *in, size_t avail, uint32_t *type, const char **name,
                         size_t *name_len)
{
    if (avail < RFS_DIRENT_FIXED)
        return 0;
    size_t n = le_get16(in + 1);
    const char *s = (const char *) in + RFS_DIRENT_FIXED;
    if (in[0] < RFS_TYPE_REG || in[0] > RFS_TYPE_OTHER || n == 0 || n > RFS_MAX_NAME ||
        n > avail - RFS_DIRENT_FIXED || memchr(s, '/', n) || memchr(s, '\0', n) ||
        (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
        return 0;
    *type = in[0];
    *name = s;
    *name_len = n;
    return RFS_DIRENT_FIXED + n;
}

int rfs_op_is_ns(unsigned op)
{
    return op >= RFS_OP_FIRST_NS && op <= RFS_OP_LAST_NS;
}

int rfs_op_has_path(unsigned op)
{
    return op == RFS_OP_OPEN || op == RFS_OP_UNLINK || rfs_op_is_ns(op);
}

/* The namespace operations' own checks; the path lengths were checked. */
static int validate_ns(const struct rfs_hdr *h, const struct rfs_req *r)
{
    switch (h->op) {
    case RFS_OP_READDIR:
        if (r->length == 0 || r->length > RFS_MAX_DATA || r->offset > (uint64_t) INT64_MAX)
            return RFS_E_INVAL;
        break;
    case RFS_OP_RENAME:
        if (r->flags & ~RFS_RENAME_NOREPLACE)
            return RFS_E_INVAL;
        break;
    case RFS_OP_SETATTR:
        if (r->flags & ~RFS_SET_KNOWN || r->flags == 0 || r->mode & ~07777u ||
            r->offset > (uint64_t) INT64_MAX || r->length > (uint64_t) INT64_MAX)
            return RFS_E_INVAL;
        break;
    default:
        break;
    }
    return RFS_OK;
}

int rfs_req_validate(const struct rfs_hdr *h, const struct rfs_req *r)
{
    if (h->op & RFS_REPLY || h->op == 0 || h->op >= RFS_OP_END || h->status != 0)
        return RFS_E_PROTO;
    if (h->len < RFS_REQ_FIXED)
        return RFS_E_PROTO;
    uint64_t var = h->len - RFS_REQ_FIXED;

    if (rfs_op_is_ns(h->op)) {
        /* RENAME's two paths: `aux` and `length` bytes; the others' one: `aux` */
        uint64_t second = h->op == RFS_OP_RENAME ? r->length : 0;
        if (r->aux > RFS_MAX_PATH || second > RFS_MAX_PATH)
            return RFS_E_TOOBIG;
        if (var != r->aux + second || r->aux == 0 || (h->op == RFS_OP_RENAME && second == 0))
            return RFS_E_PROTO;
        return validate_ns(h, r);
    }
    switch (h->op) {
    case RFS_OP_OPEN:
    case RFS_OP_UNLINK:
        if (var > RFS_MAX_PATH)
            return RFS_E_TOOBIG;
        if (var != r->aux)
            return RFS_E_PROTO;
        if (h->op == RFS_OP_OPEN && (r->flags & ~RFS_O_KNOWN ||
                                     (r->flags & RFS_O_ACCMODE) == RFS_O_ACCMODE))
            return RFS_E_INVAL;
        break;
    case RFS_OP_SETVIEW:
        if (var > RFS_MAX_VIEW)
            return RFS_E_TOOBIG;
        if (var != r->length || var == 0)
            return RFS_E_PROTO;
        break;
    case RFS_OP_PWRITE:
        if (var > RFS_MAX_DATA)
            return RFS_E_TOOBIG;
        if (var != r->length)
            return RFS_E_PROTO;
        break;
    case RFS_OP_VWRITE:
        /* the server checks that the data is exactly its share */
        if (var > RFS_MAX_DATA || r->length > RFS_MAX_DATA)
            return RFS_E_TOOBIG;
        if (var > r->length)
            return RFS_E_PROTO;
        break;
    case RFS_OP_LREAD:
    case RFS_OP_LWRITE:
        if (r->aux > RFS_MAX_PAIRS || r->length > RFS_MAX_DATA)
            return RFS_E_TOOBIG;
        if (r->aux == 0 || var != (uint64_t) r->aux * RFS_PAIR_SIZE +
                                  (h->op == RFS_OP_LWRITE ? r->length : 0))
            return RFS_E_PROTO;
        break;
    case RFS_OP_AUTH:
        if (r->flags == RFS_AUTH_HELLO ? r->aux == 0 || r->aux > RFS_AUTH_MAX_NAME ||
                                             var != r->aux + RFS_AUTH_NONCE
            : r->flags == RFS_AUTH_PROOF ? r->aux != 0 || var != RFS_AUTH_MAC : 1)
            return RFS_E_PROTO;
        break;
    case RFS_OP_COLL:
        if (var != 0)
            return RFS_E_PROTO;
        if (r->aux == 0 || r->aux > RFS_COLL_MAX_PARTS || r->flags >= RFS_COLL_MAX_PARTS ||
            r->mode & ~RFS_COLL_KEEP)
            return RFS_E_INVAL;
        break;
    case RFS_OP_LEASE:
        if (r->flags < RFS_LEASE_TAKE || r->flags > RFS_LEASE_DRAIN)
            return RFS_E_INVAL;
        if (var != (r->flags == RFS_LEASE_DRAIN ? 0 : RFS_LEASE_DATA))
            return RFS_E_PROTO;
        break;
    case RFS_OP_LAYOUT:
        if (var != 0)
            return RFS_E_PROTO;
        if (r->aux == 0 || r->aux > STRIPE_MAX_FACTOR || r->flags >= r->aux ||
            r->length == 0 || r->length > STRIPE_MAX_UNIT || r->offset > STRIPE_MAX_UNIT)
            return RFS_E_INVAL;
        break;
    default:
        if (var != 0)
            return RFS_E_PROTO;
        break;
    }

    if (h->op != RFS_OP_UNLINK && r->handle >= RFS_MAX_HANDLES)
        return RFS_E_BADF;
    if ((h->op == RFS_OP_PREAD || h->op == RFS_OP_VREAD) && r->length > RFS_MAX_DATA)
        return RFS_E_TOOBIG;
    if (!range_ok(r->offset, h->op == RFS_OP_FTRUNCATE || h->op == RFS_OP_SETVIEW ||
                             h->op == RFS_OP_LAYOUT || h->op == RFS_OP_LREAD ||
                             h->op == RFS_OP_LWRITE || h->op == RFS_OP_COLL ? 0 : r->length))
        return RFS_E_INVAL;
    if (h->op == RFS_OP_FTRUNCATE && r->length > (uint64_t) INT64_MAX)
        return RFS_E_INVAL;
    if (h->op == RFS_OP_LOCK && (r->flags < RFS_LOCK_READ || r->flags > RFS_LOCK_UNLOCK))
        return RFS_E_INVAL;
    return RFS_OK;
}

int rfs_path_validate(const char *path, size_t len)
{
    if (len == 0)
        return RFS_E_INVAL;
    if (memchr(path, '\0', len))
        return RFS_E_INVAL;
    return RFS_OK;
}

int rfs_rep_validate(const struct rfs_hdr *rep, uint16_t op, uint32_t tag, uint64_t max_data)
{
    if (rep->op != (op | RFS_REPLY) || rep->tag != tag)
        return RFS_E_PROTO;
    if (rep->status < 0 || rep->status >= RFS_E_END)
        return RFS_E_PROTO;
    if (rep->len < RFS_REP_FIXED || rep->len - RFS_REP_FIXED > max_data)
        return RFS_E_PROTO;
    return RFS_OK;
}

int rfs_status_from_errno(int err)
{
    switch (err) {
    case 0: return RFS_OK;
    case ENOENT: return RFS_E_NOENT;
    case EACCES: case EPERM: return RFS_E_ACCES;
    case EEXIST: return RFS_E_EXIST;
    case ENOSPC: return RFS_E_NOSPC;
    case EDQUOT: return RFS_E_DQUOT;
    case EROFS: return RFS_E_ROFS;
    case EISDIR: return RFS_E_ISDIR;
    case ENOTDIR: return RFS_E_NOTDIR;
    case ENAMETOOLONG: return RFS_E_NAMETOOLONG;
    case EINVAL: return RFS_E_INVAL;
    case EBADF: return RFS_E_BADF;
    case EXDEV: case ELOOP: return RFS_E_ESCAPE;
    case ENOLCK: case EAGAIN: return RFS_E_NOLCK;
    case EDEADLK: return RFS_E_DEADLK;
    case ENOMEM: return RFS_E_NOMEM;
    case EFBIG: return RFS_E_FBIG;
    case ENOTEMPTY: return RFS_E_NOTEMPTY;
    default: return RFS_E_IO;
    }
}

int rfs_errno_from_status(int status)
{
    static const int err[RFS_E_END] = {
        [RFS_OK] = 0, [RFS_E_NOENT] = ENOENT, [RFS_E_ACCES] = EACCES, [RFS_E_EXIST] = EEXIST,
        [RFS_E_NOSPC] = ENOSPC, [RFS_E_DQUOT] = EDQUOT, [RFS_E_ROFS] = EROFS,
        [RFS_E_ISDIR] = EISDIR, [RFS_E_NOTDIR] = ENOTDIR, [RFS_E_NAMETOOLONG] = ENAMETOOLONG,
        [RFS_E_INVAL] = EINVAL, [RFS_E_BADF] = EBADF, [RFS_E_IO] = EIO, [RFS_E_PROTO] = EPROTO,
        [RFS_E_TOOBIG] = EMSGSIZE, [RFS_E_ESCAPE] = EXDEV, [RFS_E_NOLCK] = ENOLCK,
        [RFS_E_DEADLK] = EDEADLK, [RFS_E_NOMEM] = ENOMEM, [RFS_E_FBIG] = EFBIG,
        [RFS_E_BUSY] = EBUSY, [RFS_E_AUTH] = EACCES, [RFS_E_NOTEMPTY] = ENOTEMPTY,
        [RFS_E_HELD] = ETIMEDOUT, [RFS_E_LOST] = EIO,
    };
    return status >= 0 && status < RFS_E_END ? err[status] : EIO;
}

const char *rfs_status_str(int status)
{
    static const char *const names[RFS_E_END] = {
        [RFS_OK] = "success",
        [RFS_E_NOENT] = "no such file or directory",
        [RFS_E_ACCES] = "permission denied",
        [RFS_E_EXIST] = "file exists",
        [RFS_E_NOSPC] = "no space left on the server",
        [RFS_E_DQUOT] = "quota exceeded on the server",
        [RFS_E_ROFS] = "read-only file system on the server",
        [RFS_E_ISDIR] = "is a directory",
        [RFS_E_NOTDIR] = "not a directory",
        [RFS_E_NAMETOOLONG] = "file name too long",
        [RFS_E_INVAL] = "invalid argument",
        [RFS_E_BADF] = "bad file handle or access mode",
        [RFS_E_IO] = "I/O error on the server",
        [RFS_E_PROTO] = "protocol error",
        [RFS_E_TOOBIG] = "message over a protocol limit",
        [RFS_E_ESCAPE] = "path leaves the server's export root",
        [RFS_E_NOLCK] = "lock not available",
        [RFS_E_DEADLK] = "lock would deadlock",
        [RFS_E_NOMEM] = "server out of memory",
        [RFS_E_FBIG] = "file too large",
        [RFS_E_BUSY] = "server busy: connection limit reached",
        [RFS_E_AUTH] = "authentication failed: no key, an unknown key or a wrong secret",
        [RFS_E_NOTEMPTY] = "directory not empty",
        [RFS_E_HELD] = "range still held by another process's buffered writes "
                       "(their holder did not land them within the server's lease timeout)",
        [RFS_E_LOST] = "another process's buffered writes to the range were lost "
                       "(it ended before they landed)",
    };
    return status >= 0 && status < RFS_E_END ? names[status] : "unknown status";
}

const char *rfs_op_name(unsigned op)
{
    static const char *const names[RFS_OP_END] = {
        [RFS_OP_OPEN] = "open", [RFS_OP_CLOSE] = "close", [RFS_OP_PREAD] = "read",
        [RFS_OP_PWRITE] = "write", [RFS_OP_FSTAT] = "stat", [RFS_OP_FTRUNCATE] = "truncate",
        [RFS_OP_FSYNC] = "sync", [RFS_OP_UNLINK] = "unlink", [RFS_OP_PREALLOC] = "preallocate",
        [RFS_OP_LOCK] = "lock", [RFS_OP_SETVIEW] = "set view", [RFS_OP_VREAD] = "view read",
        [RFS_OP_VWRITE] = "view write", [RFS_OP_LAYOUT] = "layout",
        [RFS_OP_LREAD] = "list read", [RFS_OP_LWRITE] = "list write", [RFS_OP_AUTH] = "auth",
        [RFS_OP_COLL] = "collective", [RFS_OP_STAT] = "stat by path",
        [RFS_OP_READDIR] = "read directory", [RFS_OP_MKDIR] = "make directory",
        [RFS_OP_RMDIR] = "remove directory", [RFS_OP_RENAME] = "rename",
        [RFS_OP_SETATTR] = "set attributes", [RFS_OP_LEASE] = "lease",
    };
    op &= ~RFS_REPLY;
    return op > 0 && op < RFS_OP_END ? names[op] : "unknown";
}
