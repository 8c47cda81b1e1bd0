/*
 * Disk-directed collective I/O on the server (seed 003): every participant
 * of a collective call sends its own request for the whole call straight
 * to the server (a COLL in front of a VREAD/VWRITE/LREAD/LWRITE); the
 * server holds the pieces until all participants have arrived, sorts them
 * by file offset and moves them with few large sequential accesses, so the
 * data crosses the network once. The call is complete when `parts`
 * requests with the same (group, call) have arrived: the client counts the
 * calls of a file alike on every process, and the processes agree, call by
 * call, how many of them have data on each server; only those send it a
 * request (a server no process has data on hears nothing of the call).
 *
 * Hot collective buffers: with a cache (rfsd --coll-cache), the extents a
 * collective call asked to keep (read, or just written) stay in memory, so
 * that a following collective read of the same data is served from it. Every write on the
 * server drops what it overlaps (rfs_coll_invalidate), and each block of a
 * striped file has exactly one server, so there is a single copy. No MPI.
 */
#ifndef RFS_COLL_H_INCLUDED
#define RFS_COLL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

struct rfs_coll_table;

/* What a COLL request says about the request behind it. */
struct rfs_coll_key {
    uint64_t group;             /* the file's collective group (random, per open) */
    uint64_t call;              /* the collective call's number in the group */
    uint32_t parts;             /* participants: requests to wait for */
    uint32_t rank;              /* this participant */
    int keep;                   /* keep the call's extents hot */
};

/* One participant's pieces, in its own order (its data's order). */
struct rfs_coll_piece {
    int64_t off, len;
    uint8_t *data;
    int64_t got;                /* after the call: bytes moved */
};

struct rfs_coll_part {
    struct rfs_coll_piece *pieces;
    size_t count, cap;
};

struct rfs_coll_stats {
    uint64_t calls, pieces, accesses, access_bytes, cache_hits, cache_misses, timeouts;
};

/* cache_bytes 0: no hot buffers. 0 or -ENOMEM. */
int rfs_coll_table_new(struct rfs_coll_table **out, uint64_t cache_bytes);
void rfs_coll_table_free(struct rfs_coll_table *t);
void rfs_coll_table_stats(struct rfs_coll_table *t, struct rfs_coll_stats *out);

/* 0 or -ENOMEM. */
int rfs_coll_add(struct rfs_coll_part *p, int64_t off, int64_t len, uint8_t *data);
void rfs_coll_part_free(struct rfs_coll_part *p);

/*
 * Arrive with PART's pieces on the file fd; the last participant to arrive
 * does the call's I/O for everyone. Waits until then; while participants
 * are missing at most timeout_ms (then the call fails for all that came:
 * -ETIMEDOUT). Returns 0 (each piece's got is set), -ETIMEDOUT, the -errno
 * of the I/O, or -EPROTO when this request does not fit the call (late,
 * one too many, another direction). *joined says whether it took part:
 * then, and only then, rfs_coll_wait_turn and rfs_coll_leave follow.
 */
int rfs_coll_run(struct rfs_coll_table *t, const struct rfs_coll_key *key, int fd,
                 int is_write, struct rfs_coll_part *part, int timeout_ms, int *joined);

/*
 * The decentralised schedule for replies (seed 003): at step j, server i
 * answers the participant at position (i + j) mod parts in ascending rank
 * order (the ranks are distinct, not necessarily 0..parts-1). Wait for
 * this participant's step
 * (bounded like rfs_coll_run), then, once the reply is sent, leave.
 */
void rfs_coll_wait_turn(struct rfs_coll_table *t, const struct rfs_coll_key *key,
                        uint32_t server_index, int timeout_ms);
void rfs_coll_leave(struct rfs_coll_table *t, const struct rfs_coll_key *key);

/* A write of [off, off + len) on fd (any path): drop hot buffers it overlaps. */
void rfs_coll_invalidate(struct rfs_coll_table *t, int fd, int64_t off, int64_t len);

#endif /* RFS_COLL_H_INCLUDED */
