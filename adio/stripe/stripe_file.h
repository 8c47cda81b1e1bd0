/*
 * A file striped over the objects of several rfsd servers (the rdma:
 * driver's core), as one client process sees it: the file is a handle on
 * a connection to each of its servers, and a process's files share those
 * connections (one per server and set of connection options; TLS ones are
 * the file's own). No MPI here.
 *
 * Every call returns 0, a positive enum rfs_status a server answered, or
 * a negative errno value (the transport failed, or -ENOMEM); after a
 * failure f->failed is the object it came from (-1: none in particular).
 */
#ifndef STRIPE_FILE_H_INCLUDED
#define STRIPE_FILE_H_INCLUDED

#include <stdint.h>
#include <sys/uio.h>

#include "dtype/dtype.h"
#include "net/net_endpoint.h"
#include "proto/rfs_client.h"
#include "proto/rfs_shared.h"
#include "stripe/stripe.h"

#define STRIPE_DEFAULT_UNIT  (64u << 10)   /* as PVFS */
#define STRIPE_DEFAULT_PAIRS 64            /* list I/O pairs per request, as PVFS */
#define STRIPE_REQ_DATA      (1u << 20)    /* data bytes of one list request at most */
#define STRIPE_WINDOW        16            /* requests in flight per object */
/* List and naive I/O's data bytes in flight over all objects of a process
 * at most (rdma_inflight; 0: no bound but STRIPE_WINDOW): several servers'
 * replies into one client link, or one process's requests to several
 * servers, burst into that link's queue at once; a bound keeps the burst
 * small. Off by default: it also holds back calls over few servers, where
 * the lab could not tell its cost from its noise (docs/performance.md). */
#define STRIPE_DEFAULT_INFLIGHT 0
/* Servers a process's list and naive requests go to at once at most
 * (rdma_inflight_servers; 0: all): 4 keeps the 8 requests of 512 KiB of a
 * 4 MiB call over 8 servers with 64 KiB stripes from bursting into the
 * client link's queue together, and leaves a call over 4 servers or fewer
 * (1 MiB stripes, or loopback's 4 servers) as it was. */
#define STRIPE_DEFAULT_INFLIGHT_SERVERS 4
#define STRIPE_CHUNK         (32u << 20)   /* data bytes of one datatype I/O round */

/* Servers of the file system, in order: object i of a file is on server i. */
struct stripe_servers {
    uint32_t n;
    struct net_endpoint at[STRIPE_MAX_FACTOR];
};

/* Where the rdma: driver and rdma-resync find the server list when not
 * told: this variable's list, else the configuration file this variable
 * names, else this file. */
#define STRIPE_SERVERS_ENV "ROMIO_RDMA_SERVERS"
#define STRIPE_CONFIG_ENV  "ROMIO_RDMA_CONFIG"
#define STRIPE_CONFIG_FILE "/etc/romio-rdma.conf"

/* "HOST:PORT,HOST:PORT,..." (HOST may be [IPv6]); 0 or -EINVAL. */
int stripe_servers_parse(const char *list, struct stripe_servers *out);
/* A configuration file: lines "server HOST:PORT", '#' comments. 0,
 * -ENOENT when it does not exist, -EINVAL when it is malformed. */
int stripe_servers_load(const char *path, struct stripe_servers *out);
/* The list as "HOST:PORT,..." (for MPI_File_get_info); 0 or -ENOSPC. */
int stripe_servers_format(const struct stripe_servers *s, char *out, size_t size);

enum stripe_method {
    STRIPE_NAIVE = 0,           /* one request per contiguous piece */
    STRIPE_LIST,                /* offset-length pairs, at most max_pairs per request */
    STRIPE_DATATYPE,            /* the view goes to the servers, one request per object */
    STRIPE_METHODS
};

struct stripe_stats {
    uint64_t calls[STRIPE_METHODS];     /* transfers by method */
    uint64_t data_requests;             /* requests that moved data, all methods */
    uint64_t list_requests, pairs;      /* list I/O requests and the pairs they carried */
    uint64_t segments;                  /* memory segments of naive and list requests */
    uint64_t view_requests;             /* datatype I/O requests */
    uint64_t coll_rounds, coll_requests;    /* disk-directed rounds, COLLs sent */
    uint64_t staged;                    /* datatype I/O bytes copied via the staging buffer */
    uint64_t bytes[2];                  /* data bytes read, written */
    uint64_t inflight_peak;             /* most list and naive data bytes in flight at once */
    uint32_t servers_peak;              /* most servers with list or naive requests at once */
    uint32_t header_reads;              /* objects' headers read at open */
};

/* Physical objects: slot c * factor + i is copy c of object i. */
#define STRIPE_LOST_AT_UNKNOWN UINT64_MAX
#define STRIPE_MAX_SLOTS (STRIPE_MAX_FACTOR * STRIPE_MAX_REPLICAS)

struct stripe_file {
    struct stripe_layout layout;
    struct rfs_shared_file obj[STRIPE_MAX_SLOTS];   /* a slot's connection, its handle there;
                                                     * client NULL: not open */
    struct net_endpoint at[STRIPE_MAX_FACTOR];      /* server s */
    /* how a broken connection's replacement opens the objects again */
    struct rfs_connect_opts connect;
    int share;
    uint32_t flags;
    char *path;
    uint32_t max_pairs;                 /* list I/O pairs per request */
    uint64_t max_inflight;              /* list I/O data bytes in flight, all objects; 0: any */
    uint32_t max_servers;               /* objects with list I/O in flight at once; 0: all */
    int failed;                         /* the server of the failure, -1: none in particular */
    const char *why;            /* a connection's TLS or authentication failure, or why a
                                 * replicated file cannot go on */
    /* replicas (stripe_copies.c): servers this open lost (bit s), and the
     * replica state as last read or written */
    uint64_t down;
    struct stripe_state state;
    uint64_t lost_at[STRIPE_MAX_FACTOR];    /* the state's epoch when server s was lost
                                             * (STRIPE_LOST_AT_UNKNOWN: not read since) */
    uint64_t readmit_ms;                    /* no new try to take a lost server back before */
    uint64_t skipped;                       /* servers the write under way did not write */
    struct stripe_stats stats;
    /* kept from call to call, freed by stripe_close: fresh pages on every
     * call cost more than the copies into them */
    char *staging;              /* datatype I/O's object shares, one after another */
    uint64_t staging_cap;       /* at most STRIPE_CHUNK */
    struct iovec *direct;       /* datatype I/O's shares straight in memory, per object */
    struct list_pipe *pipes;    /* list I/O's requests in flight, per slot */
    uint32_t pipes_objects, pipes_pairs;
    struct dtype *contig;       /* the view a collective call sends for a contiguous one */
    uint8_t *contig_enc;
    uint64_t contig_len;
};

struct stripe_open_args {
    struct rfs_connect_opts connect;    /* transport (NULL: TCP), timeout, key */
    /* Share connections with this process's other files opened so: their
     * calls must not overlap (the rdma: driver's do not, ROMIO runs one
     * MPI-IO call at a time); a lock wait then holds the connection. */
    int share;
    uint32_t flags;             /* RFS_O_* */
    uint32_t mode;              /* permissions of created objects */
    uint64_t unit;              /* for a new file; 0: STRIPE_DEFAULT_UNIT */
    uint32_t factor;            /* for a new file; 0: every server */
    uint32_t replicas;          /* for a new file; 0: 1 */
};

/*
 * Open (or create) PATH on the servers. A new file (created, or an empty
 * object 0 opened with RFS_O_CREAT) gets the layout of `a`, written to
 * the header of every object, object 0 last; an existing file keeps the
 * layout its headers hold, whatever `a` says, and every object's header
 * must agree with object 0's (else RFS_E_INVAL).
 */
int stripe_open(struct stripe_file *f, const struct stripe_servers *sv, const char *path,
                const struct stripe_open_args *a);
/*
 * Open PATH's objects with a layout another process read (a collective
 * open: stripe_open on one process, its layout broadcast): no header is
 * read and nothing is created (RFS_O_CREAT and RFS_O_EXCL are dropped).
 * A layout over more objects than sv has servers is RFS_E_INVAL.
 */
int stripe_open_known(struct stripe_file *f, const struct stripe_servers *sv, const char *path,
                      const struct stripe_open_args *a, const struct stripe_layout *layout);
/*
 * Objects whose connection broke (a call timed out, the server restarted
 * or closed it idle) move to a new one where they can (rfs_shared_revive:
 * not with a lock held or writes not synced); the others stay broken, so
 * that a call fails only if it needs one of them. The calls below begin so.
 */
void stripe_revive(struct stripe_file *f);
/* Every object written (stripe_io and stripe_coll_io say so themselves):
 * until a sync, a broken connection is not replaced silently. */
void stripe_wrote(struct stripe_file *f);
/* Closes every object; returns the first failure. */
int stripe_close(struct stripe_file *f);
int stripe_unlink(const struct rfs_connect_opts *o, const struct stripe_servers *sv,
                  const char *path);

int stripe_size(struct stripe_file *f, uint64_t *size);
int stripe_truncate(struct stripe_file *f, uint64_t size);
int stripe_sync(struct stripe_file *f);
int stripe_prealloc(struct stripe_file *f, uint64_t offset, uint64_t len);
/* Extent leases over logical offsets (rfs_lease in rfs_client.h): a TAKE
 * holds each object's share of [offset, offset + length) on every copy's
 * server; RELEASE and DRAIN (l NULL) go to every copy too. */
int stripe_lease(struct stripe_file *f, uint32_t kind, const struct rfs_lease_args *l);
/* A byte-range lock over logical offsets, held by object 0's server. */
int stripe_lock(struct stripe_file *f, uint32_t kind, uint64_t offset, uint64_t len, int wait);

/*
 * Move the data bytes [pos, pos + len) of a view (filetype `view` tiling
 * the file from `disp`; NULL: the file's bytes from disp on) between
 * `buf`, where they lie packed, and the objects. A datatype transfer sends
 * the view itself (`enc`, its dtype_serialize() form, `enc_len` bytes),
 * which each server remembers until it changes. *moved gets the bytes
 * moved: all of them for a write, for a read those before the end of
 * the file (holes read as zeros).
 */
struct stripe_view {
    const struct dtype *type;   /* NULL: contiguous */
    uint64_t disp;
    const uint8_t *enc;
    uint64_t enc_len;
};

int stripe_io(struct stripe_file *f, enum stripe_method method, const struct stripe_view *view,
              uint64_t pos, uint64_t len, char *buf, int is_write, uint64_t *moved);

/*
 * The same with the data bytes lying in order in nmem memory segments
 * (together exactly len bytes) instead of packed: list and naive requests
 * carry the segments themselves down to the transport, which gathers and
 * scatters them (over verbs: RDMA work requests of several SGEs, the
 * segments registered as groups); datatype I/O copies them into its
 * per-object shares.
 */
int stripe_iov_io(struct stripe_file *f, enum stripe_method method,
                  const struct stripe_view *view, uint64_t pos, uint64_t len,
                  const struct iovec *mem, int nmem, int is_write, uint64_t *moved);

/*
 * One round of a disk-directed collective call (seed 003; rfs_coll.h on
 * the server): this participant's data [pos, pos + len) of the view, at
 * most STRIPE_CHUNK bytes and possibly none. The participants first agree
 * how many of them have data on each object, how many bytes and in how
 * many runs (agree: every participant calls it once in every round, with
 * nothing where it has no data or failed); then each sends its share to
 * every object it has data on, in one request. Where the round brings an
 * object at least merge_from bytes in runs (of the object's adjacent
 * bytes, each participant's counted apart) that average under
 * merge_runs_below (or keep is asked), the request goes behind a COLL
 * that names the participants, so that the server waits for exactly
 * those and moves the merged, sorted pieces at once. Else it goes as a
 * plain request, served at once: a smaller part's round is bound by
 * latency, which waiting for the others adds to, while the merge would
 * save little (the kernel's block layer merges adjacent small requests
 * itself); and large runs are a large read or write each, merged or not,
 * so that merging them only makes the first participant wait for the
 * last (issue 21's interleaved segments of 64 KiB and more). A server
 * nobody has data on hears nothing of the round. Every participant calls
 * stripe_coll_io the same number of times with the same `call`. The sends
 * follow the decentralised schedule: object (rank + j) mod n at step j.
 * *moved as for stripe_io.
 */
#define STRIPE_COLL_MERGE_FROM (256u << 10)
#define STRIPE_COLL_MERGE_RUNS_BELOW (64u << 10)
/* The values of one agreement at most: participants, bytes and runs per
 * object. */
#define STRIPE_COLL_AGREE_MAX (5 * STRIPE_MAX_FACTOR)

/* mine: count values of this participant; sum gets their sums over all
 * participants. 0 or a negative errno. */
typedef int (*stripe_coll_agree_fn)(void *arg, const uint64_t *mine, uint64_t *sum,
                                    uint32_t count);

struct stripe_coll {
    uint64_t group;             /* the file's collective group, alike on every process */
    uint64_t call;              /* this round's number in the group */
    uint32_t rank;              /* distinct for every participant */
    int keep;                   /* the servers keep the round's data hot */
    uint64_t merge_from;        /* an object's least bytes in a round for a COLL (0: always) */
    uint64_t merge_runs_below;  /* and the most its runs may average (0: no bound) */
    stripe_coll_agree_fn agree;
    void *agree_arg;
};

int stripe_coll_io(struct stripe_file *f, const struct stripe_view *view, uint64_t pos,
                   uint64_t len, char *buf, int is_write, const struct stripe_coll *c,
                   uint64_t *moved);

/* For the calls that talk to several servers at once: the failure they
 * return is the first one, a transport failure (negative) before any
 * server's answer; *status and f->failed keep it and its server. */
static inline void stripe_keep_failure(struct stripe_file *f, int *status, uint32_t server,
                                       int rc)
{
    if (rc != 0 && (*status == 0 || (rc < 0 && *status > 0))) {
        *status = rc;
        f->failed = (int) server;
    }
}

/* --- replicas (stripe_copies.c; stripe.h has the placement) --- */

static inline uint32_t stripe_slots(const struct stripe_file *f)
{
    return f->layout.factor * stripe_copies(&f->layout);
}

static inline uint32_t stripe_slot(const struct stripe_layout *l, uint32_t object, uint32_t copy)
{
    return copy * l->factor + object;
}

static inline uint32_t stripe_slot_server(const struct stripe_layout *l, uint32_t slot)
{
    return stripe_copy_server(l, slot % l->factor, slot / l->factor);
}

/* Whether slot p's server is lost to this open (f->down). */
static inline int stripe_slot_lost(const struct stripe_file *f, uint32_t slot)
{
    return f->down >> stripe_slot_server(&f->layout, slot) & 1;
}

/* Which copies a call uses: alike on every participant of a collective
 * round (stripe_coll_io agrees on it). */
struct stripe_route {
    uint64_t avoid;             /* servers not read: lost, or stale */
    uint64_t skip;              /* servers not written: lost, or stale and not resyncing */
    uint64_t after;             /* servers written once the others hold the data: resyncing */
};

void stripe_route_of(const struct stripe_file *f, struct stripe_route *r);
/* The slot object o is read from, or -1 when no copy is left. */
int stripe_read_slot(const struct stripe_file *f, const struct stripe_route *r, uint32_t object);
/* Whether slot p is written in the pass `after` (0: the current copies,
 * 1: the resyncing ones, once the current ones hold the data). */
int stripe_write_slot(const struct stripe_file *f, const struct stripe_route *r, uint32_t slot,
                      int after);
/* A failure rc of slot p: for a replicated file, a transport failure
 * loses the slot's server to this open (f->down) and returns 1: the call
 * goes on with the other copies. Else stripe_keep_failure, and 0. */
int stripe_slot_failure(struct stripe_file *f, int *status, uint32_t slot, int rc);
/* A call on a replicated file begins by reading the replica state from
 * stripe_state_reads servers (0, else the failure; nothing to do for one
 * copy). */
int stripe_refresh(struct stripe_file *f);
/* A write-like call ends so: servers this open lost that the state does
 * not call stale yet become stale; then 0 if every object keeps a current
 * copy, else a failure naming a server of the object that has none. */
int stripe_settle_writes(struct stripe_file *f, int rc);
/* 0 if every object has a copy to read, else a failure naming one. */
int stripe_readable(struct stripe_file *f);
/* stale |= add_stale, resyncing |= add_resync, then both &= ~clear, the
 * epoch raised: written to every server this open reaches, under that
 * server's lock; 0 once at least stripe_state_writes servers hold it. */
int stripe_state_change(struct stripe_file *f, uint64_t add_stale, uint64_t add_resync,
                        uint64_t clear);
/* A lost server taken back (stripe_refresh does, for one being resynced
 * or resynced since): its slots opened anew. 0 or the failure. */
int stripe_readmit(struct stripe_file *f, uint32_t server);

/*
 * Resync (the rdma-resync tool): every stale server this open reaches is
 * marked resyncing, so that writers write it too (after the current
 * copies); then each of its copies is made equal to a current copy of the
 * same object, chunk by chunk, a chunk copied again while the current copy
 * changes under it; a second pass finds what calls already under way when
 * the resync began wrote; then the server is current again. *servers:
 * those made current (bits); *copied: data bytes written to them. An
 * interrupted resync is run again: chunks already equal are not written.
 */
#define STRIPE_RESYNC_CHUNK (4u << 20)
int stripe_resync(struct stripe_file *f, uint64_t *servers, uint64_t *copied);

/* Free what stripe_io keeps with the file (stripe_close does). */
void stripe_io_release(struct stripe_file *f);

/* Call fn for every piece of the view's window [pos, pos + len): the
 * object, its local data offset, the length, and the piece's place in
 * the packed data. Stops at fn's first nonzero return and returns it. */
typedef int (*stripe_piece_fn)(void *arg, const struct stripe_piece *p, uint64_t at);
int stripe_walk(const struct stripe_layout *l, const struct stripe_view *view, uint64_t pos,
                uint64_t len, stripe_piece_fn fn, void *arg);

#endif /* STRIPE_FILE_H_INCLUDED */
