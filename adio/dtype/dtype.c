/*
 * Building datatype descriptions: constructors, derived fields with
 * overflow checks, and the optimisations of the datatype I/O paper.
 */
#include "dtype/dtype.h"

#include <stdlib.h>
#include <string.h>

static int64_t imin(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t imax(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t iabs(int64_t a)
{
    return a == INT64_MIN ? INT64_MAX : a < 0 ? -a : a;
}

/* a * b + c within +-DTYPE_MAX_SPAN (sizes: within INT64_MAX / 2). */
static int mul_add(int64_t a, int64_t b, int64_t c, int64_t limit, int64_t *out)
{
    int64_t p;
    if (__builtin_mul_overflow(a, b, &p) || __builtin_add_overflow(p, c, out))
        return -1;
    return iabs(*out) <= limit ? 0 : -1;
}

void dtype_free(struct dtype *t)
{
    if (!t)
        return;
    if (t->kind == DTYPE_STRUCT && t->children)
        for (int64_t i = 0; i < t->count; i++)
            dtype_free(t->children[i]);
    free(t->children);
    dtype_free(t->child);
    free(t->blocklens);
    free(t->displs);
    free(t->prefix);
    free(t);
}

struct bounds {
    int64_t lo, hi, tlo, thi, span, size, end;
    int any, tany, contiguous;
};

/* Fold block (d, len elements of c) into the bounds; -1 on overflow. */
static int add_block(struct bounds *b, int64_t d, int64_t len, const struct dtype *c)
{
    int64_t e = ty_extent(c), first, last, bsize, bspan;
    if (len == 0)
        return 0;
    if (iabs(d) > DTYPE_MAX_SPAN)
        return -1;
    if (mul_add(len - 1, e, 0, DTYPE_MAX_SPAN, &last) < 0 ||
        mul_add(len, ty_size(c), b->size, INT64_MAX / 2, &bsize) < 0 ||
        mul_add(len - 1, iabs(e), iabs(d) + ty_span(c), DTYPE_MAX_SPAN, &bspan) < 0)
        return -1;
    first = imin(0, last);
    last = imax(0, last);
    b->lo = b->any ? imin(b->lo, d + ty_lb(c) + first) : d + ty_lb(c) + first;
    b->hi = b->any ? imax(b->hi, d + ty_lb(c) + e + last) : d + ty_lb(c) + e + last;
    b->any = 1;
    b->span = imax(b->span, bspan);
    if (ty_size(c) > 0) {
        int64_t start = d + ty_true_lb(c);
        int adjacent = ty_contiguous(c) && (len == 1 || e == ty_size(c));
        if (!adjacent || (b->tany && start != b->end))
            b->contiguous = 0;
        b->end = start + len * ty_size(c);
        b->tlo = b->tany ? imin(b->tlo, start + first) : start + first;
        b->thi = b->tany ? imax(b->thi, d + ty_true_ub(c) + last)
                         : d + ty_true_ub(c) + last;
        b->tany = 1;
    }
    b->size = bsize;
    return 0;
}

/* Blocks of a node, in closed form for CONTIG and VECTOR (their count may
 * be huge): the first and the last block bound everything between. */
static int collect_bounds(const struct dtype *t, struct bounds *b)
{
    *b = (struct bounds) { .contiguous = 1 };
    if (t->kind == DTYPE_CONTIG)
        return add_block(b, 0, t->blocklen, t->child);
    if (t->kind == DTYPE_VECTOR) {
        int64_t lastd, size1, total;
        if (t->count == 0)
            return 0;
        if (mul_add(t->count - 1, t->stride, 0, DTYPE_MAX_SPAN, &lastd) < 0 ||
            add_block(b, 0, t->blocklen, t->child) < 0)
            return -1;
        size1 = b->size;
        if (t->count == 1)
            return 0;
        if (add_block(b, lastd, t->blocklen, t->child) < 0 ||
            mul_add(size1, t->count, 0, INT64_MAX / 2, &total) < 0)
            return -1;
        b->size = total;
        /* blocks in between continue each other only at this stride */
        b->contiguous = ty_contiguous(t->child) &&
            (t->blocklen == 1 || ty_extent(t->child) == ty_size(t->child)) &&
            (size1 == 0 || t->stride == size1);
        return 0;
    }
    for (int64_t i = 0; i < t->count; i++)
        if (add_block(b, t->displs[i], blk_len(t, i), blk_type(t, i)) < 0)
            return -1;
    return 0;
}

/* Derived fields of t, its children being finished. Keeps lb and extent
 * unless `natural`. Returns 0, or -1 if t is over a limit. */
static int finish(struct dtype *t, int natural)
{
    struct bounds b;
    int depth = 0;
    int64_t nodes = 1;
    for (int64_t i = 0; i < (t->kind == DTYPE_STRUCT ? t->count : 1); i++) {
        const struct dtype *c = t->kind == DTYPE_STRUCT ? t->children[i] : t->child;
        if (c) {
            depth = c->depth > depth ? c->depth : depth;
            nodes += c->nodes;
        }
        if (nodes > DTYPE_MAX_NODES)
            return -1;
    }
    if (depth + 1 > DTYPE_MAX_DEPTH || collect_bounds(t, &b) < 0)
        return -1;
    t->depth = depth + 1;
    t->nodes = (int) nodes;
    if (natural) {
        t->lb = b.any ? t->disp + b.lo : t->disp;
        t->extent = b.any ? b.hi - b.lo : 0;
    }
    if (iabs(t->disp) > DTYPE_MAX_SPAN || iabs(t->lb) > DTYPE_MAX_SPAN ||
        iabs(t->extent) > DTYPE_MAX_SPAN)
        return -1;
    t->size = b.size;
    t->true_lb = b.tany ? t->disp + b.tlo : t->lb;
    t->true_ub = b.tany ? t->disp + b.thi : t->lb;
    t->span = iabs(t->disp) + b.span;
    t->contiguous = b.contiguous;
    if (t->span > DTYPE_MAX_SPAN)
        return -1;

    free(t->prefix);
    t->prefix = NULL;
    if (t->kind == DTYPE_INDEXED || t->kind == DTYPE_STRUCT) {
        t->prefix = malloc((size_t) (t->count + 1) * sizeof *t->prefix);
        if (!t->prefix)
            return -1;
        t->prefix[0] = 0;
        for (int64_t i = 0; i < t->count; i++)
            t->prefix[i + 1] = t->prefix[i] + blk_len(t, i) * ty_size(blk_type(t, i));
    }
    return 0;
}

static struct dtype *node_new(uint8_t kind, int64_t count, int64_t blocklen)
{
    struct dtype *t = calloc(1, sizeof *t);
    if (t) {
        t->kind = kind;
        t->count = count;
        t->blocklen = blocklen;
    }
    return t;
}

/* t with its derived fields (natural lb and extent if asked), or NULL with
 * t freed when it is over a limit. */
static struct dtype *finished(struct dtype *t, int natural)
{
    if (t && finish(t, natural) < 0) {
        dtype_free(t);
        return NULL;
    }
    return t;
}

static struct dtype *built(struct dtype *t)
{
    return finished(t, 1);
}

struct dtype *dtype_contig(int64_t n, struct dtype *child)
{
    struct dtype *t = n >= 0 ? node_new(DTYPE_CONTIG, 1, n) : NULL;
    if (!t) {
        dtype_free(child);
        return NULL;
    }
    t->child = child;
    return built(t);
}

struct dtype *dtype_bytes(int64_t n)
{
    return dtype_contig(n, NULL);
}

struct dtype *dtype_vector(int64_t count, int64_t blocklen, int64_t stride, struct dtype *child)
{
    struct dtype *t = count >= 0 && blocklen >= 0 ? node_new(DTYPE_VECTOR, count, blocklen) : NULL;
    if (!t) {
        dtype_free(child);
        return NULL;
    }
    t->stride = stride;
    t->child = child;
    return built(t);
}

struct dtype *dtype_blockindexed(int64_t count, int64_t blocklen, int64_t *displs,
                                 struct dtype *child)
{
    struct dtype *t = count >= 0 && blocklen >= 0 && (displs || count == 0)
        ? node_new(DTYPE_BLOCKINDEXED, count, blocklen) : NULL;
    if (!t) {
        free(displs);
        dtype_free(child);
        return NULL;
    }
    t->displs = displs;
    t->child = child;
    return built(t);
}

static int lengths_ok(int64_t count, const int64_t *blocklens)
{
    for (int64_t i = 0; i < count; i++)
        if (blocklens[i] < 0)
            return 0;
    return 1;
}

struct dtype *dtype_indexed(int64_t count, int64_t *blocklens, int64_t *displs,
                            struct dtype *child)
{
    struct dtype *t = count >= 0 && ((blocklens && displs) || count == 0) &&
        lengths_ok(count, blocklens) ? node_new(DTYPE_INDEXED, count, 0) : NULL;
    if (!t) {
        free(blocklens);
        free(displs);
        dtype_free(child);
        return NULL;
    }
    t->blocklens = blocklens;
    t->displs = displs;
    t->child = child;
    return built(t);
}

struct dtype *dtype_struct(int64_t count, int64_t *blocklens, int64_t *displs,
                           struct dtype **children)
{
    struct dtype *t = count >= 0 && ((blocklens && displs && children) || count == 0) &&
        lengths_ok(count, blocklens) ? node_new(DTYPE_STRUCT, count, 0) : NULL;
    if (!t) {
        for (int64_t i = 0; children && i < count; i++)
            dtype_free(children[i]);
        free(children);
        free(blocklens);
        free(displs);
        return NULL;
    }
    t->blocklens = blocklens;
    t->displs = displs;
    t->children = children;
    return built(t);
}

struct dtype *dtype_resize(struct dtype *t, int64_t lb, int64_t extent)
{
    if (!t && !(t = dtype_bytes(1)))
        return NULL;
    t->lb = lb;
    t->extent = extent;
    return finished(t, 0);
}

struct dtype *dtype_shift(struct dtype *t, int64_t by)
{
    if (!t && !(t = dtype_bytes(1)))
        return NULL;
    t->disp += by;
    t->lb += by;
    return finished(t, 0);
}

int64_t dtype_block_at(const struct dtype *t, int64_t p)
{
    if (!t->prefix) {
        int64_t bsize = t->blocklen * ty_size(t->child);
        return bsize ? p / bsize : 0;
    }
    /* the last block starting at or before p; it is not empty */
    int64_t lo = 0, hi = t->count - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (t->prefix[mid] <= p)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* ---- optimisation ---- */

static int dtype_equal(const struct dtype *a, const struct dtype *b)
{
    if (!a || !b)
        return a == b;
    if (a->kind != b->kind || a->count != b->count || a->blocklen != b->blocklen ||
        a->stride != b->stride || a->disp != b->disp || a->lb != b->lb ||
        a->extent != b->extent)
        return 0;
    size_t n = (size_t) a->count * sizeof(int64_t);
    if ((a->blocklens && memcmp(a->blocklens, b->blocklens, n)) ||
        (a->displs && memcmp(a->displs, b->displs, n)))
        return 0;
    if (a->kind != DTYPE_STRUCT)
        return dtype_equal(a->child, b->child);
    for (int64_t i = 0; i < a->count; i++)
        if (!dtype_equal(a->children[i], b->children[i]))
            return 0;
    return 1;
}

/* A struct whose blocks all have the same type is an indexed type. */
static void struct_to_indexed(struct dtype *t)
{
    for (int64_t i = 1; i < t->count; i++)
        if (!dtype_equal(t->children[0], t->children[i]))
            return;
    for (int64_t i = 1; i < t->count; i++)
        dtype_free(t->children[i]);
    t->child = t->count ? t->children[0] : NULL;
    free(t->children);
    t->children = NULL;
    t->kind = DTYPE_INDEXED;
}

/* Blocks of one contiguous element type become runs of bytes. */
static void contiguous_child_to_bytes(struct dtype *t)
{
    const struct dtype *c = t->child;
    if (t->kind == DTYPE_STRUCT || !c || !c->contiguous)
        return;
    /* only indexed blocks differ in length: no walk over a huge vector */
    if (c->extent != c->size) {
        for (int64_t i = 0; i < (t->kind == DTYPE_INDEXED ? t->count : 1); i++)
            if (blk_len(t, i) > 1)
                return;
    }
    int64_t s = c->size;
    t->disp += c->true_lb;
    if (t->blocklens)
        for (int64_t i = 0; i < t->count; i++)
            t->blocklens[i] *= s;
    t->blocklen *= s;
    dtype_free(t->child);
    t->child = NULL;
}

/* In a struct, the same per block. */
static void struct_children_to_bytes(struct dtype *t)
{
    for (int64_t i = 0; i < t->count; i++) {
        struct dtype *c = t->children[i];
        if (!c || !c->contiguous || (t->blocklens[i] > 1 && c->extent != c->size))
            continue;
        t->displs[i] += c->true_lb;
        t->blocklens[i] *= c->size;
        dtype_free(c);
        t->children[i] = NULL;
    }
}

/* Indexed: drop empty blocks, merge blocks that continue each other. */
static void merge_blocks(struct dtype *t)
{
    int64_t e = ty_extent(t->child), n = 0;
    int64_t *lens = t->blocklens;
    for (int64_t i = 0; i < t->count; i++) {
        if (lens[i] == 0 || ty_size(t->child) == 0)
            continue;
        if (n > 0 && t->displs[n - 1] + lens[n - 1] * e == t->displs[i]) {
            lens[n - 1] += lens[i];
            continue;
        }
        lens[n] = lens[i];
        t->displs[n] = t->displs[i];
        n++;
    }
    t->count = n;
}

/* Indexed with equal lengths -> blockindexed -> vector -> contig. */
static void regularise(struct dtype *t)
{
    if (t->kind == DTYPE_INDEXED && t->count > 0) {
        int64_t i = 1;
        while (i < t->count && t->blocklens[i] == t->blocklens[0])
            i++;
        if (i == t->count) {
            t->blocklen = t->blocklens[0];
            free(t->blocklens);
            t->blocklens = NULL;
            t->kind = DTYPE_BLOCKINDEXED;
        }
    }
    if (t->kind == DTYPE_BLOCKINDEXED && t->count > 0) {
        int64_t step = t->count > 1 ? t->displs[1] - t->displs[0] : 0, i = 1;
        while (i < t->count && t->displs[i] - t->displs[i - 1] == step)
            i++;
        if (i == t->count) {
            t->disp += t->displs[0];
            free(t->displs);
            t->displs = NULL;
            t->stride = step;
            t->kind = DTYPE_VECTOR;
        }
    }
    if (t->kind == DTYPE_VECTOR && (t->count == 1 ||
                                    t->stride == t->blocklen * ty_extent(t->child))) {
        t->blocklen *= t->count;
        t->count = 1;
        t->stride = 0;
        t->kind = DTYPE_CONTIG;
    }
}

/* CONTIG of one element: the element itself, with the wrapper's place and
 * tiling. CONTIG of n CONTIG or VECTOR elements that tile without gaps:
 * one loop. */
static struct dtype *fuse(struct dtype *t)
{
    struct dtype *c = t->child;
    if (t->kind != DTYPE_CONTIG || !c)
        return t;
    if (t->blocklen == 1) {
        c->disp += t->disp;
        c->lb = t->lb;
        c->extent = t->extent;
        t->child = NULL;
        dtype_free(t);
        return c;
    }
    int64_t inner_ext = c->kind == DTYPE_CONTIG ? c->blocklen * ty_extent(c->child)
                      : c->kind == DTYPE_VECTOR ? c->count * c->stride : -1;
    int64_t n;
    if (inner_ext != c->extent || __builtin_mul_overflow(t->blocklen, c->kind == DTYPE_CONTIG
                                                         ? c->blocklen : c->count, &n))
        return t;
    if (c->kind == DTYPE_CONTIG)
        c->blocklen = n;
    else
        c->count = n;
    c->disp += t->disp;
    c->lb = t->lb;
    c->extent = t->extent;
    t->child = NULL;
    dtype_free(t);
    return c;
}

struct dtype *dtype_optimize(struct dtype *t)
{
    if (!t)
        return NULL;
    if (t->kind == DTYPE_STRUCT) {
        for (int64_t i = 0; i < t->count; i++)
            if (t->children[i] && !(t->children[i] = dtype_optimize(t->children[i]))) {
                dtype_free(t);
                return NULL;
            }
        struct_children_to_bytes(t);
        struct_to_indexed(t);
    } else if (t->child && !(t->child = dtype_optimize(t->child))) {
        dtype_free(t);
        return NULL;
    }
    if (t->kind != DTYPE_STRUCT) {
        contiguous_child_to_bytes(t);
        if (t->kind == DTYPE_INDEXED)
            merge_blocks(t);
        regularise(t);
        t = fuse(t);
    }
    return finished(t, 0);
}
