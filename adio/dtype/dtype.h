/*
 * Datatype engine: MPI datatypes as compact loop descriptions, their wire
 * form, and an iterator over the (offset, length) runs of any byte window.
 * No MPI here (dtype_mpi.h builds descriptions from MPI datatypes), so the
 * server and the unit tests use it as it is.
 *
 * A description is a tree of nodes. Every node is a list of blocks; block i
 * starts at byte disp + displacement(i) and holds blocklen(i) elements of
 * the child type, element j at j * extent(child). A NULL child is one byte.
 * The kinds only differ in how they store displacements and lengths:
 *
 *   CONTIG        one block of `blocklen` elements at 0
 *   VECTOR        `count` blocks of `blocklen` elements, i * stride apart
 *   BLOCKINDEXED  `count` blocks of `blocklen` elements at displs[i]
 *   INDEXED       `count` blocks of blocklens[i] elements at displs[i]
 *   STRUCT        as INDEXED, block i of type children[i]
 *
 * lb and extent are those of MPI (they say how consecutive instances
 * tile), size the data bytes of one instance. The order of the runs is the
 * order of the type map, which is what MPI_Pack produces.
 */
#ifndef DTYPE_H_INCLUDED
#define DTYPE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

enum dtype_kind {
    DTYPE_CONTIG = 1,
    DTYPE_VECTOR,
    DTYPE_BLOCKINDEXED,
    DTYPE_INDEXED,
    DTYPE_STRUCT,
    DTYPE_KIND_END
};

/* Limits on what is built or accepted from the wire. Offsets within one
 * instance stay below DTYPE_MAX_SPAN so that no iterator sum overflows. */
#define DTYPE_MAX_DEPTH   24
#define DTYPE_MAX_NODES   (1 << 16)
#define DTYPE_MAX_SPAN    (INT64_C(1) << 52)
#define DTYPE_MAX_WIRE    (64u << 20)    /* bytes of a serialised description */

struct dtype {
    uint8_t kind;
    int64_t count;              /* blocks */
    int64_t blocklen;           /* CONTIG, VECTOR, BLOCKINDEXED */
    int64_t stride;             /* VECTOR, bytes */
    int64_t disp;               /* bytes added to every block's displacement */
    int64_t *blocklens;         /* INDEXED, STRUCT */
    int64_t *displs;            /* BLOCKINDEXED, INDEXED, STRUCT: bytes */
    struct dtype *child;        /* all kinds but STRUCT; NULL: a byte */
    struct dtype **children;    /* STRUCT; NULL entries: a byte */
    int64_t lb, extent;         /* tiling of consecutive instances */
    /* derived by dtype_finish() */
    int64_t size;               /* data bytes of one instance */
    int64_t true_lb, true_ub;   /* first and one past the last byte touched */
    int64_t span;               /* largest |offset| reached within an instance */
    int contiguous;             /* the runs form one ascending run from true_lb */
    int64_t *prefix;            /* INDEXED, STRUCT: data bytes before block i */
    int depth;                  /* 1 + deepest child */
    int nodes;                  /* nodes in this tree */
};

/*
 * Constructors. Each takes ownership of its child (or children, and of the
 * arrays passed in, which must come from malloc) and returns NULL on
 * failure, freeing what it was given. Their lb and extent are MPI's natural
 * ones; dtype_resize() sets them explicitly.
 */
struct dtype *dtype_bytes(int64_t n);
struct dtype *dtype_contig(int64_t n, struct dtype *child);
struct dtype *dtype_vector(int64_t count, int64_t blocklen, int64_t stride, struct dtype *child);
struct dtype *dtype_blockindexed(int64_t count, int64_t blocklen, int64_t *displs,
                                 struct dtype *child);
struct dtype *dtype_indexed(int64_t count, int64_t *blocklens, int64_t *displs,
                            struct dtype *child);
struct dtype *dtype_struct(int64_t count, int64_t *blocklens, int64_t *displs,
                           struct dtype **children);
/* Give t the lb and extent of a resized type; t may be NULL (a byte). */
struct dtype *dtype_resize(struct dtype *t, int64_t lb, int64_t extent);
/* Shift every block of t by `by` bytes (lb moves with it). */
struct dtype *dtype_shift(struct dtype *t, int64_t by);
void dtype_free(struct dtype *t);

/*
 * Rewrite t into a cheaper equivalent description (same runs, same lb,
 * extent and size): contiguous children become bytes, nested loops fuse,
 * structs of one child type become indexed, adjacent blocks merge, regular
 * indexed blocks become vectors. Returns t or NULL on failure (t freed).
 */
struct dtype *dtype_optimize(struct dtype *t);

/* Serialise into buf (NULL: only measure); returns the length in bytes. */
size_t dtype_serialize(const struct dtype *t, uint8_t *buf);
/*
 * Rebuild a description from len bytes of hostile input. Returns 0 and
 * *out, or a negative errno (-EINVAL malformed or over a limit, -ENOMEM).
 */
int dtype_deserialize(const uint8_t *buf, size_t len, struct dtype **out);

/*
 * The runs of data bytes [first, last) of `count` instances of t placed at
 * byte `disp` (instance k at disp + k * extent), in type-map order, with
 * adjacent runs merged. Nothing is built in advance: the iterator holds a
 * stack of loop positions, so any window of any size costs only its runs.
 */
struct dtype_frame {
    const struct dtype *t;
    int64_t block, elem, base;
};

struct dtype_iter {
    struct dtype top;           /* count instances of t: a CONTIG node */
    int64_t pos, last;          /* next data byte, end of the window */
    int depth;
    struct dtype_frame stack[DTYPE_MAX_DEPTH + 1];
    int64_t run_off, run_len;   /* the merged run being built */
};

/* 0, or -EINVAL when the window lies outside the instances or the offsets
 * would leave 63 bits. */
int dtype_iter_init(struct dtype_iter *it, const struct dtype *t, int64_t count, int64_t disp,
                    int64_t first, int64_t last);
/* 1 and the next run, or 0 at the end of the window. */
int dtype_iter_next(struct dtype_iter *it, int64_t *off, int64_t *len);

/* Copy data between a typed buffer and a packed one, through the runs of
 * the window [first, first + len) of `count` instances at `base`. */
int dtype_pack(const struct dtype *t, int64_t count, const char *base, int64_t first,
               int64_t len, char *packed);
int dtype_unpack(const struct dtype *t, int64_t count, char *base, int64_t first, int64_t len,
                 const char *packed);

/* Block accessors for the engine's own files (a NULL type is one byte). */
static inline int64_t ty_size(const struct dtype *t)
{
    return t ? t->size : 1;
}

static inline int64_t ty_extent(const struct dtype *t)
{
    return t ? t->extent : 1;
}

static inline int64_t ty_lb(const struct dtype *t)
{
    return t ? t->lb : 0;
}

static inline int64_t ty_true_lb(const struct dtype *t)
{
    return t ? t->true_lb : 0;
}

static inline int64_t ty_true_ub(const struct dtype *t)
{
    return t ? t->true_ub : 1;
}

static inline int64_t ty_span(const struct dtype *t)
{
    return t ? t->span : 1;
}

static inline int ty_contiguous(const struct dtype *t)
{
    return t ? t->contiguous : 1;
}

static inline int64_t blk_disp(const struct dtype *t, int64_t i)
{
    switch (t->kind) {
    case DTYPE_CONTIG: return 0;
    case DTYPE_VECTOR: return i * t->stride;
    default: return t->displs[i];
    }
}

static inline int64_t blk_len(const struct dtype *t, int64_t i)
{
    return t->kind == DTYPE_INDEXED || t->kind == DTYPE_STRUCT ? t->blocklens[i] : t->blocklen;
}

static inline const struct dtype *blk_type(const struct dtype *t, int64_t i)
{
    return t->kind == DTYPE_STRUCT ? t->children[i] : t->child;
}

/* Data bytes of the blocks before block i. */
static inline int64_t blk_before(const struct dtype *t, int64_t i)
{
    if (t->prefix)
        return t->prefix[i];
    return i * t->blocklen * ty_size(t->child);
}

/* The block holding data byte p (0 <= p < t->size). */
int64_t dtype_block_at(const struct dtype *t, int64_t p);

#endif /* DTYPE_H_INCLUDED */
