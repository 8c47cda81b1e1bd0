/*
 * The rfs wire protocol, version 1 (specified in docs/protocol.md).
 *
 * Every message is a 24-byte header followed by a payload of `len` bytes.
 * A request payload is a 32-byte fixed part and then a path (OPEN, UNLINK)
 * or data (PWRITE); a reply payload is a 16-byte fixed part and then data
 * (PREAD). All integers are little-endian; offsets and sizes are 64-bit.
 * The decoders here treat their input as hostile: they check every field
 * against the limits below before anything is allocated or touched.
 * No MPI here.
 */
#ifndef RFS_PROTO_H_INCLUDED
#define RFS_PROTO_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define RFS_MAGIC          0x31534652u  /* "RFS1" on the wire */
#define RFS_VERSION        1
#define RFS_HDR_SIZE       24
#define RFS_REQ_FIXED      32
#define RFS_REP_FIXED      16
#define RFS_MAX_PATH       4096          /* bytes of a path, no NUL */
#define RFS_MAX_DATA       (64u << 20)   /* data bytes in one message */
#define RFS_MAX_HANDLES    64            /* open files per connection */
#define RFS_MAX_VIEW       (16u << 20)   /* bytes of an encoded file view */
#define RFS_REPLY          0x8000u       /* reply op = request op | RFS_REPLY */
#define RFS_MAX_PAIRS      4096          /* offset-length pairs of one LREAD/LWRITE */
#define RFS_PAIR_SIZE      16            /* a pair on the wire: offset u64, length u64 */
/* A server over its connection limit sends, instead of any reply, one
 * refusal: a reply header with op RFS_REPLY (op 0 is no request), tag 0,
 * status RFS_E_BUSY and an empty fixed part; then it closes. */
#define RFS_REFUSAL_OP     RFS_REPLY

enum rfs_op {
    RFS_OP_OPEN = 1,
    RFS_OP_CLOSE,
    RFS_OP_PREAD,
    RFS_OP_PWRITE,
    RFS_OP_FSTAT,
    RFS_OP_FTRUNCATE,
    RFS_OP_FSYNC,
    RFS_OP_UNLINK,
    RFS_OP_PREALLOC,
    RFS_OP_LOCK,
    RFS_OP_SETVIEW,         /* file view of a handle: disp + encoded filetype */
    RFS_OP_VREAD,           /* read through the view: offset = data position */
    RFS_OP_VWRITE,          /* write through the view */
    RFS_OP_LAYOUT,          /* the handle is object `flags` of a file striped over
                               `aux` objects, `length` bytes per stripe, data from
                               object offset `offset`: V* ops then move only this
                               object's part of the view */
    RFS_OP_LREAD,           /* list I/O: `aux` pairs (offset, length), `length` data bytes */
    RFS_OP_LWRITE,          /* the pairs, then their data in pair order */
    RFS_OP_AUTH,            /* shared-key challenge-response (rfs_auth.h): `flags`
                               is the step, `aux` the length of the key's name */
    RFS_OP_COLL,            /* the handle's next V* or L* request is part of collective
                               call `offset` of group `length`: `aux` participants, this
                               one is `flags`; mode RFS_COLL_KEEP: keep the call's data hot */
    /* The namespace extension (docs/protocol.md "Namespace operations"): by
     * path, no handle; a server without it answers RFS_E_PROTO and closes. */
    RFS_OP_STAT,            /* reply data: an RFS_STAT_SIZE record (rfs_stat_rec) */
    RFS_OP_READDIR,         /* entries from index `offset`, at most `length` bytes of them;
                               reply value: the index after the last one sent */
    RFS_OP_MKDIR,           /* mode: permissions */
    RFS_OP_RMDIR,
    RFS_OP_RENAME,          /* data: old path (`aux` bytes), new path (`length` bytes);
                               flags RFS_RENAME_NOREPLACE */
    RFS_OP_SETATTR,         /* flags RFS_SET_*: mode, atime `offset`, mtime `length` (ns) */
    /* Extent leases (docs/protocol.md "Leases"): flags is the kind
     * (RFS_LEASE_*); TAKE covers `length` bytes from `offset`; TAKE and
     * RELEASE carry RFS_LEASE_DATA bytes: the owner's token, the lease's
     * number (TAKE) or the last one released (RELEASE), and the collective
     * call the TAKE belongs to (0: none), u64 each. A server without
     * leases answers RFS_E_PROTO and closes. */
    RFS_OP_LEASE,
    RFS_OP_END
};

/* The ops of the namespace extension: a client asks for one before
 * relying on it, so that an old server's refusal names what is missing. */
#define RFS_OP_FIRST_NS RFS_OP_STAT
#define RFS_OP_LAST_NS  RFS_OP_SETATTR

/* LEASE kinds */
#define RFS_LEASE_TAKE    1u    /* wait until no other owner holds the range, then hold it */
#define RFS_LEASE_RELEASE 2u    /* the owner's writes up to a lease's number have landed */
#define RFS_LEASE_DRAIN   3u    /* the handle lands leased writes: its I/O never waits */
#define RFS_LEASE_DATA    24

/* RENAME flags */
#define RFS_RENAME_NOREPLACE 1u
/* SETATTR flags */
#define RFS_SET_MODE       1u
#define RFS_SET_ATIME      2u
#define RFS_SET_MTIME      4u
#define RFS_SET_ATIME_NOW  8u
#define RFS_SET_MTIME_NOW  16u
#define RFS_SET_KNOWN      31u

/* STAT's record: what a POSIX view of the file needs (owners are the
 * viewer's own: the server's are not meaningful to the client). */
#define RFS_STAT_SIZE 48
#define RFS_TYPE_REG   1u
#define RFS_TYPE_DIR   2u
#define RFS_TYPE_OTHER 3u
struct rfs_stat_rec {
    uint32_t type;          /* RFS_TYPE_* */
    uint32_t perm;          /* permission bits (07777) */
    uint64_t size;
    uint64_t blocks;        /* 512-byte blocks allocated */
    int64_t atime_ns, mtime_ns, ctime_ns;   /* since the epoch */
};
/* READDIR's entries: type u8, name length u16, the name (no NUL). */
#define RFS_DIRENT_FIXED 3
#define RFS_MAX_NAME     255

/* OPEN flags */
#define RFS_O_RDONLY   0u
#define RFS_O_WRONLY   1u
#define RFS_O_RDWR     2u
#define RFS_O_ACCMODE  3u
#define RFS_O_CREAT    0x10u
#define RFS_O_EXCL     0x20u
#define RFS_O_KNOWN    (RFS_O_ACCMODE | RFS_O_CREAT | RFS_O_EXCL)

/* COLL mode bits */
#define RFS_COLL_KEEP    1u
#define RFS_COLL_MAX_PARTS 65536u

/* LOCK: flags is the kind, aux is 1 to wait for a conflicting lock */
#define RFS_LOCK_READ    1u
#define RFS_LOCK_WRITE   2u
#define RFS_LOCK_UNLOCK  3u

/* Status of a reply. Values are part of the protocol. */
enum rfs_status {
    RFS_OK = 0,
    RFS_E_NOENT,            /* no such file or directory */
    RFS_E_ACCES,            /* permission denied */
    RFS_E_EXIST,            /* file exists (CREAT|EXCL) */
    RFS_E_NOSPC,            /* no space left on the server */
    RFS_E_DQUOT,            /* quota exceeded */
    RFS_E_ROFS,             /* read-only file system */
    RFS_E_ISDIR,            /* is a directory */
    RFS_E_NOTDIR,           /* a path component is not a directory */
    RFS_E_NAMETOOLONG,      /* path too long */
    RFS_E_INVAL,            /* invalid argument */
    RFS_E_BADF,             /* unknown handle, or access mode forbids it */
    RFS_E_IO,               /* other I/O error on the server */
    RFS_E_PROTO,            /* malformed message */
    RFS_E_TOOBIG,           /* message over a limit */
    RFS_E_ESCAPE,           /* path leaves the export root */
    RFS_E_NOLCK,            /* lock not available */
    RFS_E_DEADLK,           /* lock would deadlock */
    RFS_E_NOMEM,            /* server out of memory */
    RFS_E_FBIG,             /* file too large */
    RFS_E_BUSY,             /* server at its connection limit (the refusal frame) */
    RFS_E_AUTH,             /* not authenticated: no or wrong key (the server closes) */
    RFS_E_NOTEMPTY,         /* directory not empty (namespace extension) */
    RFS_E_HELD,             /* the range stayed leased past the server's lease timeout */
    RFS_E_LOST,             /* the range's holder went before its buffered writes landed */
    RFS_E_END
};

struct rfs_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t op;
    uint32_t tag;           /* echoed in the reply */
    int32_t status;         /* replies: enum rfs_status; requests: 0 */
    uint64_t len;           /* payload bytes after the header */
};

/* The fixed part of a request; which fields an op uses is in protocol.md. */
struct rfs_req {
    uint32_t handle;
    uint32_t flags;
    uint32_t mode;
    uint32_t aux;           /* OPEN/UNLINK: path length; LOCK: wait; L*: pairs;
                               LAYOUT: objects of the file */
    uint64_t offset;        /* SETVIEW: displacement; VREAD/VWRITE: data position */
    uint64_t length;        /* PREAD/PWRITE/PREALLOC/LOCK/L*: bytes; FTRUNCATE: size;
                               V*: bytes of the view's window (a striped VWRITE carries
                               only this object's share of them);
                               SETVIEW: bytes of the encoded filetype; LAYOUT: stripe unit */
};

struct rfs_rep {
    uint64_t value;         /* OPEN/FSTAT: file size; PWRITE: bytes written */
    uint32_t blksize;       /* OPEN/FSTAT: preferred I/O size */
    uint32_t reserved;
};

void rfs_hdr_encode(const struct rfs_hdr *h, uint8_t out[RFS_HDR_SIZE]);
/* 0, or an rfs_status explaining why the header is unacceptable. */
int rfs_hdr_decode(const uint8_t in[RFS_HDR_SIZE], struct rfs_hdr *h);

void rfs_req_encode(const struct rfs_req *r, uint8_t out[RFS_REQ_FIXED]);
void rfs_req_decode(const uint8_t in[RFS_REQ_FIXED], struct rfs_req *r);
void rfs_rep_encode(const struct rfs_rep *r, uint8_t out[RFS_REP_FIXED]);
void rfs_rep_decode(const uint8_t in[RFS_REP_FIXED], struct rfs_rep *r);
void rfs_pair_encode(uint64_t offset, uint64_t length, uint8_t out[RFS_PAIR_SIZE]);
void rfs_pair_decode(const uint8_t in[RFS_PAIR_SIZE], uint64_t *offset, uint64_t *length);
void rfs_stat_encode(const struct rfs_stat_rec *s, uint8_t out[RFS_STAT_SIZE]);
/* 0, or RFS_E_PROTO for a record no server sends. */
int rfs_stat_decode(const uint8_t in[RFS_STAT_SIZE], struct rfs_stat_rec *s);
/* One READDIR entry at out (room: RFS_DIRENT_FIXED + name length); the
 * bytes taken. */
size_t rfs_dirent_encode(uint32_t type, const char *name, size_t name_len, uint8_t *out);
/* The entry at in[0..avail): its type, name (not NUL-terminated) and
 * length; the bytes it takes, or 0 for a malformed one. */
size_t rfs_dirent_decode(const uint8_t *in, size_t avail, uint32_t *type, const char **name,
                         size_t *name_len);
/* Whether a request of op carries paths in its variable part. */
int rfs_op_has_path(unsigned op);
/* Whether op is one of the namespace extension's (by path, no handle). */
int rfs_op_is_ns(unsigned op);

/*
 * Server side: check a request header and fixed part together. Returns 0
 * if the request is well formed (then the variable part is exactly
 * hdr->len - RFS_REQ_FIXED bytes), else an rfs_status. RFS_E_PROTO and
 * RFS_E_TOOBIG for a bad frame mean the stream cannot be trusted any more.
 */
int rfs_req_validate(const struct rfs_hdr *h, const struct rfs_req *r);
/* Check a path received from the wire (length already validated). */
int rfs_path_validate(const char *path, size_t len);

/*
 * Client side: check a reply header against the request it answers;
 * `max_data` is the largest variable part acceptable (PREAD: the requested
 * length, else 0). Returns 0 or RFS_E_PROTO.
 */
int rfs_rep_validate(const struct rfs_hdr *rep, uint16_t op, uint32_t tag, uint64_t max_data);

int rfs_status_from_errno(int err);
/* The errno value closest to a status (EIO for unknown ones). */
int rfs_errno_from_status(int status);
const char *rfs_status_str(int status);
const char *rfs_op_name(unsigned op);

#endif /* RFS_PROTO_H_INCLUDED */
