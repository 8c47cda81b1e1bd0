/*
 * The wire form of a description (docs/protocol.md, "Datatype
 * descriptions"): a node is its kind byte, six little-endian int64 fields
 * (count, blocklen, stride, disp, lb, extent), its arrays, then its child
 * or children, each behind a byte saying whether it is a node (1) or a
 * byte (0). The decoder checks every count against the bytes left before
 * allocating, and the rebuilt tree against the engine's limits.
 */
#include "dtype/dtype.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NODE_FIXED (1 + 6 * 8)

static uint8_t *put_i64(uint8_t *p, int64_t v)
{
    uint64_t u = (uint64_t) v;
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t) (u >> (8 * i));
    return p + 8;
}

static size_t put_array(uint8_t *buf, const int64_t *a, int64_t n)
{
    if (buf)
        for (int64_t i = 0; i < n; i++)
            buf = put_i64(buf, a[i]);
    return (size_t) n * 8;
}

static size_t put_child(const struct dtype *c, uint8_t *buf)
{
    if (buf)
        *buf = c != NULL;
    return 1 + (c ? dtype_serialize(c, buf ? buf + 1 : NULL) : 0);
}

size_t dtype_serialize(const struct dtype *t, uint8_t *buf)
{
    size_t n = NODE_FIXED;
    if (buf) {
        uint8_t *p = buf;
        *p++ = t->kind;
        p = put_i64(p, t->count);
        p = put_i64(p, t->blocklen);
        p = put_i64(p, t->stride);
        p = put_i64(p, t->disp);
        p = put_i64(p, t->lb);
        put_i64(p, t->extent);
    }
#define AT(n) (buf ? buf + (n) : NULL)
    if (t->kind == DTYPE_INDEXED || t->kind == DTYPE_STRUCT)
        n += put_array(AT(n), t->blocklens, t->count);
    if (t->kind == DTYPE_BLOCKINDEXED || t->kind == DTYPE_INDEXED || t->kind == DTYPE_STRUCT)
        n += put_array(AT(n), t->displs, t->count);
    if (t->kind != DTYPE_STRUCT)
        return n + put_child(t->child, AT(n));
    for (int64_t i = 0; i < t->count; i++)
        n += put_child(t->children[i], AT(n));
#undef AT
    return n;
}

struct reader {
    const uint8_t *p, *end;
    int nodes;
};

static int get_i64(struct reader *r, int64_t *v)
{
    if (r->end - r->p < 8)
        return -EINVAL;
    uint64_t u = 0;
    for (int i = 7; i >= 0; i--)
        u = (u << 8) | r->p[i];
    r->p += 8;
    *v = (int64_t) u;
    return 0;
}

static int get_array(struct reader *r, int64_t n, int64_t **out)
{
    *out = NULL;
    if (n > (r->end - r->p) / 8)
        return -EINVAL;
    if (n == 0)
        return 0;
    if (!(*out = malloc((size_t) n * sizeof **out)))
        return -ENOMEM;
    for (int64_t i = 0; i < n; i++)
        get_i64(r, &(*out)[i]);
    return 0;
}

static int read_node(struct reader *r, int depth, struct dtype **out);

static int read_child(struct reader *r, int depth, struct dtype **out)
{
    *out = NULL;
    if (r->p >= r->end || *r->p > 1)
        return -EINVAL;
    return *r->p++ ? read_node(r, depth + 1, out) : 0;
}

/* The kind-specific part: arrays and children, then the constructor. */
static int read_body(struct reader *r, int depth, uint8_t kind, int64_t count, int64_t blocklen,
                     int64_t stride, struct dtype **t)
{
    int64_t *lens = NULL, *displs = NULL;
    struct dtype *child = NULL, **children = NULL;
    int rc = 0;
    if (count < 0 || (kind == DTYPE_CONTIG && count != 1))
        return -EINVAL;
    if (kind == DTYPE_INDEXED || kind == DTYPE_STRUCT)
        rc = get_array(r, count, &lens);
    if (rc == 0 && kind != DTYPE_CONTIG && kind != DTYPE_VECTOR)
        rc = get_array(r, count, &displs);
    if (rc == 0 && kind == DTYPE_STRUCT) {
        if (count > r->end - r->p || !(children = calloc((size_t) count + 1, sizeof *children)))
            rc = count > r->end - r->p ? -EINVAL : -ENOMEM;
        for (int64_t i = 0; rc == 0 && i < count; i++)
            rc = read_child(r, depth, &children[i]);
    } else if (rc == 0) {
        rc = read_child(r, depth, &child);
    }
    if (rc < 0) {
        for (int64_t i = 0; children && i < count; i++)
            dtype_free(children[i]);
        free(children);
        dtype_free(child);
        free(lens);
        free(displs);
        return rc;
    }
    switch (kind) {
    case DTYPE_CONTIG: *t = dtype_contig(blocklen, child); break;
    case DTYPE_VECTOR: *t = dtype_vector(count, blocklen, stride, child); break;
    case DTYPE_BLOCKINDEXED: *t = dtype_blockindexed(count, blocklen, displs, child); break;
    case DTYPE_INDEXED: *t = dtype_indexed(count, lens, displs, child); break;
    default: *t = dtype_struct(count, lens, displs, children); break;
    }
    return *t ? 0 : -EINVAL;
}

static int read_node(struct reader *r, int depth, struct dtype **out)
{
    int64_t f[6];
    *out = NULL;
    if (depth >= DTYPE_MAX_DEPTH || ++r->nodes > DTYPE_MAX_NODES || r->p >= r->end)
        return -EINVAL;
    uint8_t kind = *r->p++;
    if (kind < DTYPE_CONTIG || kind >= DTYPE_KIND_END)
        return -EINVAL;
    for (int i = 0; i < 6; i++)
        if (get_i64(r, &f[i]) < 0)
            return -EINVAL;
    struct dtype *t;
    int rc = read_body(r, depth, kind, f[0], f[1], f[2], &t);
    if (rc < 0)
        return rc;
    t->disp = f[3];
    if (!(t = dtype_resize(t, f[4], f[5])))
        return -EINVAL;
    *out = t;
    return 0;
}

int dtype_deserialize(const uint8_t *buf, size_t len, struct dtype **out)
{
    struct reader r = { buf, buf + len, 0 };
    *out = NULL;
    if (len > DTYPE_MAX_WIRE)
        return -EINVAL;
    int rc = read_node(&r, 0, out);
    if (rc == 0 && r.p != r.end) {
        dtype_free(*out);
        *out = NULL;
        rc = -EINVAL;
    }
    return rc;
}
