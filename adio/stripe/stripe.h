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

struct stripe_layout {
    uint64_t unit;              /* bytes per stripe */
    uint32_t factor;            /* objects the file is spread over */
    uint64_t file_id;           /* the same in every object of one file */
};

/* What the header of object `index` says. */
struct stripe_header {
    struct stripe_layout layout;
    uint32_t index;             /* which object of the file this is */
};

/* 0 if unit and factor are within the limits above, else -EINVAL. */
int stripe_layout_check(const struct stripe_layout *l);

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

void stripe_header_encode(const struct stripe_header *h, uint8_t out[STRIPE_HDR_USED]);
/* Decode len bytes of hostile input: 0, or -EINVAL if they are not a
 * header of this version with a layout within the limits. */
int stripe_header_decode(const uint8_t *in, size_t len, struct stripe_header *h);

#endif /* STRIPE_H_INCLUDED */
