/*
 * Striping: how the bytes of a logical file are spread over the objects
 * of its I/O servers, and the header that makes every object describe
 * the file it belongs to. Pure arithmetic and encoding, no I/O, no MPI;
 * the client (stripe_file.h) and rfsd's datatype I/O both use it.
 *
 * Stripe k (logical bytes [k*unit, (k+1)*unit)) is on object k % factor,
 * at local data offset (k / factor) * unit. Each object starts with a
 * STRIPE_HDR_SIZE header; its data follows, so the local byte of an
 * object's data at d is at object offset STRIPE_HDR_SIZE + d.
 *
 * Replicas (docs/rdma.md "Replicas"): a file of r copies keeps copy c of
 * object i on server (i + c) % factor, so no two copies of an object
 * share a server; copy 0 is the file's path there, copy c >= 1 the hidden
 * sibling ".NAME.copyC". Every copy has the same header (index i) and the
 * same local layout, so a server serves a copy as the object itself.
 * Which servers missed writes (stale) is the replica state, kept in the
 * header of each server's copy 0 (object s on server s).
 */
#ifndef STRIPE_H_INCLUDED
#define STRIPE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#define STRIPE_HDR_SIZE    4096u        /* reserved at the start of every object */
#define STRIPE_HDR_USED    48u          /* of which the encoding uses this much */
#define STRIPE_MAX_FACTOR  64u          /* objects (servers) of one file */
#define STRIPE_MAX_UNIT    (UINT64_C(1) << 30)  /* fits ROMIO's int striping_unit */
#define STRIPE_MAX_OFFSET  (UINT64_C(1) << 62)  /* logical and local offsets stay below */
#define STRIPE_MAX_REPLICAS 4u          /* copies of each object */

struct stripe_layout {
    uint64_t unit;              /* bytes per stripe */
    uint32_t factor;            /* objects the file is spread over */
    uint32_t replicas;          /* copies of each object: 1 .. min(factor, STRIPE_MAX_REPLICAS);
                                 * 0 is taken for 1 */
    uint64_t file_id;           /* the same in every object of one file */
};

/* What the header of object `index` says. */
struct stripe_header {
    struct stripe_layout layout;
    uint32_t index;             /* which object of the file this is */
};

/* 0 if unit, factor and replicas are within the limits above, else -EINVAL. */
int stripe_layout_check(const struct stripe_layout *l);

static inline uint32_t stripe_copies(const struct stripe_layout *l)
{
    return l->replicas ? l->replicas : 1;
}

/* The server of copy c of object i. */
static inline uint32_t stripe_copy_server(const struct stripe_layout *l, uint32_t object,
                                          uint32_t copy)
{
    return (object + copy) % l->factor;
}

/* The name of copy c of PATH on its server: PATH itself for copy 0, else
 * ".NAME.copyC" beside it. 0, or -ENAMETOOLONG when out is too small. */
int stripe_copy_path(const char *path, uint32_t copy, char *out, size_t size);

static inline uint32_t stripe_object_of(const struct stripe_layout *l, uint64_t off)
{
    return (uint32_t) ((off / l->unit) % l->factor);
}

/* The local data offset of logical byte `off` in its object. */
static inline uint64_t stripe_local_of(const struct stripe_layout *l, uint64_t off)
{
    uint64_t k = off / l->unit;
    return (k / l->factor) * l->unit + off % l->unit;
}

/*
 * The part of the logical run [off, off + len) that lies in one stripe,
 * from its start: at most unit - off % unit bytes.
 */
struct stripe_piece {
    uint32_t object;
    uint64_t local;             /* local data offset in that object */
    uint64_t len;
};

static inline void stripe_piece_at(const struct stripe_layout *l, uint64_t off, uint64_t len,
                                   struct stripe_piece *p)
{
    uint64_t room = l->unit - off % l->unit;
    p->object = stripe_object_of(l, off);
    p->local = stripe_local_of(l, off);
    p->len = len < room ? len : room;
}

/* Bytes of logical [0, size) that object i holds: its local data size
 * when the file is `size` bytes long. */
uint64_t stripe_local_size(const struct stripe_layout *l, uint32_t i, uint64_t size);

/* The logical size implied by object i holding `local` data bytes: one
 * past the logical offset of its last byte (0 if it holds none). */
uint64_t stripe_logical_end(const struct stripe_layout *l, uint32_t i, uint64_t local);

/* Version 1 for one copy (as before replicas), 2 with the count of copies. */
void stripe_header_encode(const struct stripe_header *h, uint8_t out[STRIPE_HDR_USED]);
/* Decode len bytes of hostile input: 0, or -EINVAL if they are not a
 * header of this version with a layout within the limits. */
int stripe_header_decode(const uint8_t *in, size_t len, struct stripe_header *h);

/*
 * The replica state: server s is stale (missed writes: never read, never
 * written but by a resync) or resyncing (being brought up to date: written
 * after the current copies, still not read). Each change raises the epoch;
 * a change is written to at least factor - replicas + 1 servers and every
 * call reads it from at least `replicas` servers, so that a reader always
 * hears of the latest change from one of them. Of two states the one with
 * the higher epoch holds; at equal epochs (two processes changed it at
 * once) their union, stale winning over resyncing.
 */
#define STRIPE_STATE_OFFSET 64u         /* in the header, after the layout */
#define STRIPE_STATE_SIZE   40u

struct stripe_state {
    uint64_t epoch;
    uint64_t stale;             /* bit s: server s (of the file's servers) */
    uint64_t resyncing;         /* a subset of stale */
};

void stripe_state_encode(const struct stripe_state *s, uint8_t out[STRIPE_STATE_SIZE]);
/* 0; -ENOENT for a state never written (zeros: epoch 0, all current);
 * -EINVAL for hostile bytes. */
int stripe_state_decode(const uint8_t *in, size_t len, struct stripe_state *s);
/* a and b merged as above into *out (may be a or b). */
void stripe_state_merge(const struct stripe_state *a, const struct stripe_state *b,
                        struct stripe_state *out);
/* The servers a change must reach, and those a reader must hear from. */
static inline uint32_t stripe_state_writes(const struct stripe_layout *l)
{
    return l->factor - stripe_copies(l) + 1;
}

static inline uint32_t stripe_state_reads(const struct stripe_layout *l)
{
    return stripe_copies(l);
}

/* The copy of object i to read when the servers in `avoid` (bits) must not
 * be: the first in copy order, or -1 when none is left. */
int stripe_read_copy(const struct stripe_layout *l, uint32_t object, uint64_t avoid);

#endif /* STRIPE_H_INCLUDED */
