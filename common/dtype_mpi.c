/*
 * MPI datatype -> description, by walking MPI_Type_get_envelope_c and
 * MPI_Type_get_contents_c (the large-count forms, which also answer for
 * types built with the int forms).
 */
#include "dtype_mpi.h"
#include "romio_compat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Types whose layout MPI_Pack is asked for: at most this many bytes of
 * true extent (each byte of the map is found by packing labelled bytes). */
#define PROBE_MAX_EXTENT (64 << 20)

static int describe(MPI_Datatype type, struct dtype **out);

static void free_handle(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED)
        MPI_Type_free(&t);
}

/* One instance of `type` as the runs MPI_Pack reads, found by packing a
 * buffer whose bytes are labelled with their offsets, one byte of the
 * label per pass. */
static int probe(MPI_Datatype type, struct dtype **out)
{
    MPI_Count size, tlb, text;
    MPI_Type_size_x(type, &size);
    MPI_Type_get_true_extent_x(type, &tlb, &text);
    if (text > PROBE_MAX_EXTENT || size > text)
        return -ENOTSUP;
    unsigned char *buf = malloc((size_t) text + 1), *packed = malloc((size_t) size + 1);
    int64_t *at = calloc((size_t) size + 1, sizeof *at);
    int64_t *lens = NULL, *displs = NULL, n = 0;
    int rc = buf && packed && at ? 0 : -ENOMEM;
    for (int shift = 0; rc == 0 && shift < 32 && (text - 1) >> shift; shift += 8) {
        int pos = 0;
        for (MPI_Count x = 0; x < text; x++)
            buf[x] = (unsigned char) (x >> shift);
        if (MPI_Pack(buf - tlb, 1, type, packed, (int) size, &pos, MPI_COMM_SELF) != MPI_SUCCESS)
            rc = -ENOTSUP;
        for (MPI_Count y = 0; rc == 0 && y < size; y++)
            at[y] |= (int64_t) packed[y] << shift;
    }
    if (rc == 0 && size > 0) {
        lens = malloc((size_t) size * sizeof *lens);
        displs = malloc((size_t) size * sizeof *displs);
        rc = lens && displs ? 0 : -ENOMEM;
    }
    for (MPI_Count y = 0; rc == 0 && y < size; y++) {
        if (n > 0 && displs[n - 1] + lens[n - 1] == tlb + at[y]) {
            lens[n - 1]++;
            continue;
        }
        displs[n] = tlb + at[y];
        lens[n++] = 1;
    }
    free(buf);
    free(packed);
    free(at);
    if (rc < 0) {
        free(lens);
        free(displs);
        return rc;
    }
    *out = dtype_indexed(n, lens, displs, NULL);
    return *out ? 0 : -ENOTSUP;
}

static int named(MPI_Datatype type, struct dtype **out)
{
    MPI_Count size, tlb, text;
    MPI_Type_size_x(type, &size);
    MPI_Type_get_true_extent_x(type, &tlb, &text);
    if (tlb != 0 || text != size)
        return probe(type, out);        /* pair types such as MPI_SHORT_INT */
    *out = dtype_bytes(size);
    return *out ? 0 : -ENOMEM;
}

/* The arguments of a constructor as one int64 list: the int and address
 * arguments in order, or the large counts of a type built with a _c call. */
struct contents {
    int combiner;
    MPI_Count ni, na, nc, nd;
    int *ints;
    MPI_Aint *addrs;
    MPI_Count *counts;
    MPI_Datatype *types;
    int64_t *v;
};

static int get_contents(MPI_Datatype type, struct contents *k)
{
    memset(k, 0, sizeof *k);
    MPI_Type_get_envelope_c(type, &k->ni, &k->na, &k->nc, &k->nd, &k->combiner);
    if (k->combiner == MPI_COMBINER_NAMED)
        return 0;
    k->ints = malloc((size_t) (k->ni + 1) * sizeof *k->ints);
    k->addrs = malloc((size_t) (k->na + 1) * sizeof *k->addrs);
    k->counts = malloc((size_t) (k->nc + 1) * sizeof *k->counts);
    k->types = malloc((size_t) (k->nd + 1) * sizeof *k->types);
    k->v = malloc((size_t) (k->ni + k->na + k->nc + 1) * sizeof *k->v);
    if (!k->ints || !k->addrs || !k->counts || !k->types || !k->v) {
        k->nd = 0;              /* no handles to free */
        return -ENOMEM;
    }
    MPI_Type_get_contents_c(type, k->ni, k->na, k->nc, k->nd, k->ints, k->addrs, k->counts,
                            k->types);
    MPI_Count n = 0;
    if (k->nc > 0) {
        for (MPI_Count i = 0; i < k->nc; i++)
            k->v[n++] = k->counts[i];
    } else {
        for (MPI_Count i = 0; i < k->ni; i++)
            k->v[n++] = k->ints[i];
        for (MPI_Count i = 0; i < k->na; i++)
            k->v[n++] = k->addrs[i];
    }
    return 0;
}

static void put_contents(struct contents *k)
{
    for (MPI_Count i = 0; k->types && i < k->nd; i++)
        free_handle(k->types[i]);
    free(k->ints);
    free(k->addrs);
    free(k->counts);
    free(k->types);
    free(k->v);
}

static int64_t *copy_scaled(const int64_t *src, int64_t n, int64_t scale)
{
    int64_t *a = malloc((size_t) (n + 1) * sizeof *a);
    for (int64_t i = 0; a && i < n; i++)
        a[i] = src[i] * scale;
    return a;
}

static int64_t extent_of(MPI_Datatype t)
{
    MPI_Count lb, extent;
    MPI_Type_get_extent_x(t, &lb, &extent);
    return extent;
}

/* SUBARRAY: nested vectors of the old type, shifted to the start corner. */
static struct dtype *subarray(const struct contents *k, struct dtype *old, int64_t ext)
{
    int nd = k->ints[0], order = k->nc > 0 ? k->ints[1] : k->ints[1 + 3 * nd];
    const int64_t *sizes = k->nc > 0 ? k->v : k->v + 1;
    const int64_t *subs = sizes + nd, *starts = sizes + 2 * nd;
    int64_t stride = ext, shift = 0;
    struct dtype *t = old;
    for (int i = 0; i < nd; i++) {
        int d = order == MPI_ORDER_C ? nd - 1 - i : i;
        t = i == 0 ? dtype_contig(subs[d], t) : dtype_vector(subs[d], 1, stride, t);
        shift += starts[d] * stride;
        stride *= sizes[d];
    }
    return t ? dtype_shift(t, shift) : NULL;
}

/* A second, independent description of t (NULL: a byte, or no memory). */
static struct dtype *copy_of(const struct dtype *t, int *failed)
{
    struct dtype *c = NULL;
    size_t n = t ? dtype_serialize(t, NULL) : 0;
    uint8_t *enc = n ? malloc(n) : NULL;
    *failed = t && (!enc || (dtype_serialize(t, enc), dtype_deserialize(enc, n, &c)) < 0);
    free(enc);
    return c;
}

/* DARRAY, one dimension of MPICH's construction (type_create_darray.c):
 * this process's part of dimension `dim`, distributed in blocks of
 * `blk` elements (cyclic: dealt round-robin), over `t`, the dimensions
 * inside it so far; resized to span the whole dimension. *first gets the
 * index of its first element, unless that is already in the type. */
struct darray {
    int ndims, fastest;         /* fastest: the innermost dimension */
    const int64_t *gsizes;
    int64_t oldext;             /* extent of the array's element type */
};

static int64_t darray_stride(const struct darray *a, int dim)
{
    int64_t stride = a->oldext;
    for (int i = 0; i < a->ndims; i++)
        if (a->fastest == 0 ? i < dim : i > dim)
            stride *= a->gsizes[i];
    return stride;
}

static struct dtype *darray_block(const struct darray *a, int dim, int64_t nprocs, int64_t rank,
                                  int64_t darg, struct dtype *t, int64_t *first)
{
    int64_t g = a->gsizes[dim], ext = ty_extent(t);
    int64_t blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + nprocs - 1) / nprocs : darg;
    int64_t mine = g - blk * rank < blk ? g - blk * rank : blk;
    if (mine < 0)
        mine = 0;
    *first = mine > 0 ? blk * rank : 0;
    t = dim == a->fastest ? dtype_contig(mine, t) : dtype_vector(mine, 1, darray_stride(a, dim), t);
    return dtype_resize(t, 0, g * ext);
}

static struct dtype *darray_cyclic(const struct darray *a, int dim, int64_t nprocs, int64_t rank,
                                   int64_t darg, struct dtype *t, int64_t *first)
{
    int64_t g = a->gsizes[dim], ext = ty_extent(t), mine = 0;
    int64_t blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg, start = rank * blk;
    if (start < g)
        mine = (g - start) / (nprocs * blk) * blk +
               ((g - start) % (nprocs * blk) < blk ? (g - start) % (nprocs * blk) : blk);
    int64_t count = mine / blk, rem = mine % blk, stride = nprocs * blk * darray_stride(a, dim);
    int failed = 0;
    struct dtype *old = rem ? copy_of(t, &failed) : NULL;
    struct dtype *v = dtype_vector(count, blk, stride, t);
    if (rem) {
        struct dtype **kids = malloc(2 * sizeof *kids);
        int64_t *lens = malloc(2 * sizeof *lens), *displs = malloc(2 * sizeof *displs);
        if (!kids || !lens || !displs || !v || failed) {
            free(kids);
            free(lens);
            free(displs);
            dtype_free(v);
            dtype_free(old);
            return NULL;
        }
        /* the last, shorter block: rem elements after the vector's blocks */
        kids[0] = v;
        kids[1] = old;
        lens[0] = 1;
        lens[1] = rem;
        displs[0] = 0;
        displs[1] = count * stride;
        v = dtype_struct(2, lens, displs, kids);
    }
    *first = mine > 0 ? start : 0;
    if (v && dim == a->fastest) {
        v = dtype_resize(dtype_shift(v, start * a->oldext), 0, a->oldext * g);
        *first = 0;
    }
    return dtype_resize(v, 0, g * ext);
}

/* DARRAY: the dimensions fastest first, then the whole shifted to this
 * process's first element and resized to the whole array. */
static struct dtype *darray(const struct contents *k, struct dtype *old, int64_t oldext)
{
    int nd = k->ints[2], big = k->nc > 0;
    const int64_t *gsizes = big ? k->v : k->v + 3;
    const int *distribs = k->ints + (big ? 3 : 3 + nd), *dargs = distribs + nd;
    const int *psizes = dargs + nd;
    int order = distribs[3 * nd];
    struct darray a = { .ndims = nd, .fastest = order == MPI_ORDER_C ? nd - 1 : 0,
                        .gsizes = gsizes, .oldext = oldext };
    int64_t procs = k->ints[0], rest = k->ints[1], shift = 0, scale = 1, all = oldext;
    struct dtype *t = old;
    for (int j = 0; j < nd && t; j++) {
        int dim = order == MPI_ORDER_C ? nd - 1 - j : j;
        /* the process grid is row-major whatever the array order */
        int64_t below = procs, coord, first = 0;
        for (int i = 0; i <= dim; i++)
            below /= psizes[i];
        coord = rest / below % psizes[dim];
        if (distribs[dim] == MPI_DISTRIBUTE_CYCLIC)
            t = darray_cyclic(&a, dim, psizes[dim], coord, dargs[dim], t, &first);
        else if (distribs[dim] == MPI_DISTRIBUTE_BLOCK)
            t = darray_block(&a, dim, psizes[dim], coord, dargs[dim], t, &first);
        else
            t = darray_block(&a, dim, 1, 0, MPI_DISTRIBUTE_DFLT_DARG, t, &first);
        shift += first * scale;
        scale *= gsizes[dim];
        all *= gsizes[dim];
    }
    return t ? dtype_resize(dtype_shift(t, shift * oldext), 0, all) : NULL;
}

static struct dtype *build(const struct contents *k, MPI_Datatype type, struct dtype **kids)
{
    const int64_t *v = k->v;
    int64_t n = v[0], ext = k->nd > 0 ? extent_of(k->types[0]) : 0;
    struct dtype *old = kids[0];
    kids[0] = NULL;
    switch (k->combiner) {
    case MPI_COMBINER_DUP:
        return old;
    case MPI_COMBINER_CONTIGUOUS:
        return dtype_contig(n, old);
    case MPI_COMBINER_VECTOR:
        return dtype_vector(n, v[1], v[2] * ext, old);
    case MPI_COMBINER_HVECTOR:
        return dtype_vector(n, v[1], v[2], old);
    case MPI_COMBINER_INDEXED:
        return dtype_indexed(n, copy_scaled(v + 1, n, 1), copy_scaled(v + 1 + n, n, ext), old);
    case MPI_COMBINER_HINDEXED:
        return dtype_indexed(n, copy_scaled(v + 1, n, 1), copy_scaled(v + 1 + n, n, 1), old);
    case MPI_COMBINER_INDEXED_BLOCK:
        return dtype_blockindexed(n, v[1], copy_scaled(v + 2, n, ext), old);
    case MPI_COMBINER_HINDEXED_BLOCK:
        return dtype_blockindexed(n, v[1], copy_scaled(v + 2, n, 1), old);
    case MPI_COMBINER_RESIZED:
        return dtype_resize(old, v[0], v[1]);
    case MPI_COMBINER_SUBARRAY:
        return subarray(k, old, ext);
    case MPI_COMBINER_DARRAY:
        return darray(k, old, ext);
    case MPI_COMBINER_STRUCT: {
        struct dtype **children = calloc((size_t) n + 1, sizeof *children);
        if (!children) {
            dtype_free(old);
            return NULL;
        }
        children[0] = old;
        for (int64_t i = 1; i < n; i++) {
            children[i] = kids[i];
            kids[i] = NULL;
        }
        return dtype_struct(n, copy_scaled(v + 1, n, 1), copy_scaled(v + 1 + n, n, 1),
                            children);
    }
    default:
        (void) type;
        dtype_free(old);
        return NULL;
    }
}

static int decomposes(int combiner)
{
    switch (combiner) {
    case MPI_COMBINER_DUP: case MPI_COMBINER_CONTIGUOUS: case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: case MPI_COMBINER_INDEXED: case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK: case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT: case MPI_COMBINER_SUBARRAY: case MPI_COMBINER_RESIZED:
    case MPI_COMBINER_DARRAY:
        return 1;
    default:                    /* F90_*: MPI_Pack tells */
        return 0;
    }
}

/* Every level gets MPI's lb and extent: they include the alignment
 * padding of structs, which the type map alone does not tell. */
static int encode(MPI_Datatype type, struct dtype **out)
{
    MPI_Count lb, extent;
    int rc = describe(type, out);
    if (rc < 0)
        return rc;
    MPI_Type_get_extent_x(type, &lb, &extent);
    *out = dtype_resize(*out, lb, extent);
    return *out ? 0 : -ENOTSUP;
}

static int describe(MPI_Datatype type, struct dtype **out)
{
    struct contents k;
    *out = NULL;
    int rc = get_contents(type, &k);
    if (rc == 0 && k.combiner == MPI_COMBINER_NAMED)
        return named(type, out);
    if (rc == 0 && !decomposes(k.combiner)) {
        put_contents(&k);
        return probe(type, out);
    }
    struct dtype **kids = rc == 0 ? calloc((size_t) k.nd + 1, sizeof *kids) : NULL;
    if (rc == 0 && !kids)
        rc = -ENOMEM;
    for (MPI_Count i = 0; rc == 0 && i < k.nd; i++)
        rc = encode(k.types[i], &kids[i]);
    if (rc == 0 && !(*out = build(&k, type, kids)))
        rc = -ENOTSUP;
    for (MPI_Count i = 0; kids && i < k.nd; i++)
        dtype_free(kids[i]);
    free(kids);
    put_contents(&k);
    return rc;
}

int dtype_from_mpi(MPI_Datatype type, struct dtype **out)
{
    MPI_Count size;
    int rc = encode(type, out);
    if (rc < 0)
        return rc;
    MPI_Type_size_x(type, &size);
    *out = dtype_optimize(*out);
    if (*out && (*out)->size != size) {
        dtype_free(*out);
        *out = NULL;
    }
    return *out ? 0 : -ENOTSUP;
}

static int cache_keyval = MPI_KEYVAL_INVALID;

static int cache_delete(MPI_Datatype type, int keyval, void *value, void *extra)
{
    (void) type;
    (void) keyval;
    (void) extra;
    dtype_free(value);
    return MPI_SUCCESS;
}

int dtype_mpi_get(MPI_Datatype type, const struct dtype **out, int *owned)
{
    struct dtype *t;
    void *value;
    int flag = 0, ni, na, nd, combiner;
    *owned = 0;
    /* predefined types are cheap to describe and may refuse attributes */
    MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED) {
        *owned = 1;
        int rc = dtype_from_mpi(type, &t);
        *out = t;
        return rc;
    }
    if (cache_keyval == MPI_KEYVAL_INVALID)
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, cache_delete, &cache_keyval, NULL);
    if (MPI_Type_get_attr(type, cache_keyval, &value, &flag) == MPI_SUCCESS && flag) {
        *out = value;
        return 0;
    }
    int rc = dtype_from_mpi(type, &t);
    if (rc < 0)
        return rc;
    *out = t;
    if (MPI_Type_set_attr(type, cache_keyval, t) != MPI_SUCCESS)
        *owned = 1;
    return 0;
}
