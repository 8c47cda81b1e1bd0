/*
 * The datatype engine without MPI: the iterator against a naive expansion
 * of the same description, the optimiser against the unoptimised runs,
 * the wire form against hostile bytes, and offsets beyond 2^31.
 * (test_dtype_mpi.c checks descriptions of MPI types against MPI_Pack.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "dtype/dtype.h"

/* ---- a naive reference: every data byte's offset, in type-map order ---- */

struct offsets {
    int64_t *at;
    int64_t n, cap;
};

static void add_offset(struct offsets *o, int64_t off)
{
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 256;
        o->at = realloc(o->at, (size_t) o->cap * sizeof *o->at);
        assert_non_null(o->at);
    }
    o->at[o->n++] = off;
}

static void expand(const struct dtype *t, int64_t base, struct offsets *o)
{
    if (!t) {
        add_offset(o, base);
        return;
    }
    for (int64_t i = 0; i < t->count; i++) {
        const struct dtype *c = t->kind == DTYPE_STRUCT ? t->children[i] : t->child;
        int64_t d = t->kind == DTYPE_CONTIG ? 0 : t->kind == DTYPE_VECTOR ? i * t->stride
                  : t->displs[i];
        int64_t len = t->kind == DTYPE_INDEXED || t->kind == DTYPE_STRUCT ? t->blocklens[i]
                    : t->blocklen;
        for (int64_t j = 0; j < len; j++)
            expand(c, base + t->disp + d + j * (c ? c->extent : 1), o);
    }
}

static struct offsets reference(const struct dtype *t, int64_t count, int64_t disp)
{
    struct offsets o = { 0 };
    for (int64_t k = 0; k < count; k++)
        expand(t, disp + k * t->extent, &o);
    return o;
}

/* The iterator's runs of [first, last), checked against the reference
 * byte by byte, and checked to be merged (no run continues the previous). */
static void check_window(const struct dtype *t, int64_t count, int64_t disp,
                         const struct offsets *ref, int64_t first, int64_t last)
{
    struct dtype_iter it;
    int64_t off, len, pos = first, prev_end = INT64_MIN;
    assert_int_equal(dtype_iter_init(&it, t, count, disp, first, last), 0);
    while (dtype_iter_next(&it, &off, &len)) {
        assert_true(len > 0);
        assert_true(off != prev_end);
        for (int64_t b = 0; b < len; b++)
            assert_int_equal(off + b, ref->at[pos + b]);
        pos += len;
        prev_end = off + len;
    }
    assert_int_equal(pos, last);
}

static void check_all_windows(const struct dtype *t, int64_t count, int64_t disp, unsigned seed)
{
    struct offsets ref = reference(t, count, disp);
    assert_int_equal(ref.n, count * t->size);
    check_window(t, count, disp, &ref, 0, ref.n);
    srand(seed);
    for (int w = 0; w < 40 && ref.n > 0; w++) {
        int64_t a = rand() % (ref.n + 1), b = rand() % (ref.n + 1);
        check_window(t, count, disp, &ref, a < b ? a : b, a < b ? b : a);
    }
    free(ref.at);
}

/* ---- random descriptions ---- */

static int64_t *random_array(int64_t n, int64_t lo, int64_t hi)
{
    int64_t *a = malloc((size_t) (n + 1) * sizeof *a);
    for (int64_t i = 0; i < n; i++)
        a[i] = lo + rand() % (hi - lo + 1);
    return a;
}

static struct dtype *random_type(int depth)
{
    struct dtype *c = depth > 0 && rand() % 3 ? random_type(depth - 1) : dtype_bytes(1 + rand() % 8);
    int64_t n = 1 + rand() % 5, ext = c ? c->extent : 1;
    struct dtype *t;
    switch (rand() % 6) {
    case 0:
        t = dtype_contig(1 + rand() % 4, c);
        break;
    case 1:
        t = dtype_vector(n, rand() % 3, (1 + rand() % 4) * ext * (rand() % 4 ? 1 : -1), c);
        break;
    case 2:
        t = dtype_blockindexed(n, 1 + rand() % 2, random_array(n, -40, 200), c);
        break;
    case 3:
        t = dtype_indexed(n, random_array(n, 0, 3), random_array(n, -40, 200), c);
        break;
    case 4: {
        struct dtype **kids = calloc((size_t) n, sizeof *kids);
        kids[0] = c;
        for (int64_t i = 1; i < n; i++)
            kids[i] = rand() % 2 ? dtype_bytes(1 + rand() % 6)
                    : depth > 0 ? random_type(depth - 1) : NULL;
        t = dtype_struct(n, random_array(n, 0, 2), random_array(n, -30, 300), kids);
        break;
    }
    default:
        t = dtype_resize(c, -(rand() % 16), ext + rand() % 64);
        break;
    }
    assert_non_null(t);
    return t;
}

static struct dtype *copy_of(const struct dtype *t)
{
    size_t n = dtype_serialize(t, NULL);
    uint8_t *buf = malloc(n);
    struct dtype *out;
    assert_int_equal(dtype_serialize(t, buf), n);
    assert_int_equal(dtype_deserialize(buf, n, &out), 0);
    free(buf);
    return out;
}

/* ---- tests ---- */

static void test_vector_runs(void **state)
{
    (void) state;
    /* 3 blocks of 2 ints, stride 5 ints, 2 instances */
    struct dtype *t = dtype_vector(3, 2, 20, dtype_bytes(4));
    assert_int_equal(t->size, 24);
    assert_int_equal(t->extent, 48);
    check_all_windows(t, 2, 100, 1);

    struct dtype_iter it;
    int64_t off, len;
    assert_int_equal(dtype_iter_init(&it, t, 2, 0, 0, 48), 0);
    int64_t expect[][2] = { { 0, 8 }, { 20, 8 }, { 40, 16 }, { 68, 8 }, { 88, 8 } };
    for (int i = 0; i < 5; i++) {
        assert_int_equal(dtype_iter_next(&it, &off, &len), 1);
        assert_int_equal(off, expect[i][0]);    /* 40+8 and 48 merge across instances */
        assert_int_equal(len, expect[i][1]);
    }
    assert_int_equal(dtype_iter_next(&it, &off, &len), 0);
    dtype_free(t);
}

static void test_zero_length_blocks(void **state)
{
    (void) state;
    int64_t *lens = malloc(5 * sizeof *lens), *displs = malloc(5 * sizeof *displs);
    int64_t l[] = { 0, 3, 0, 0, 2 }, d[] = { 50, 10, 0, 7, -4 };
    memcpy(lens, l, sizeof l);
    memcpy(displs, d, sizeof d);
    struct dtype *t = dtype_indexed(5, lens, displs, dtype_bytes(2));
    assert_int_equal(t->size, 10);
    assert_int_equal(t->true_lb, -4);
    check_all_windows(t, 3, 8, 2);
    dtype_free(t);
}

/* The random type of a seed, or NULL when it holds no data or more than
 * 4 KiB (every window of it is checked). */
static struct dtype *random_small_type(unsigned seed)
{
    srand(seed);
    struct dtype *t = random_type(3);
    if (t->size > 0 && t->size <= 4096)
        return t;
    dtype_free(t);
    return NULL;
}

static void test_random_types(void **state)
{
    (void) state;
    for (unsigned seed = 1; seed <= 300; seed++) {
        struct dtype *t = random_small_type(seed);
        if (!t)
            continue;
        check_all_windows(t, 1 + seed % 3, (int64_t) (seed % 7) * 1000, seed);
        dtype_free(t);
    }
}

/* The optimised description has the same runs, lb, extent and size. */
static void test_optimize_keeps_runs(void **state)
{
    (void) state;
    for (unsigned seed = 1; seed <= 300; seed++) {
        struct dtype *t = random_small_type(seed);
        if (!t)
            continue;
        struct dtype *o = dtype_optimize(copy_of(t));
        assert_non_null(o);
        assert_int_equal(o->size, t->size);
        assert_int_equal(o->lb, t->lb);
        assert_int_equal(o->extent, t->extent);
        assert_true(o->nodes <= t->nodes);
        struct offsets ref = reference(t, 2, 64);
        check_window(o, 2, 64, &ref, 0, ref.n);
        free(ref.at);
        dtype_free(o);
        dtype_free(t);
    }
}

static void test_optimize_shapes(void **state)
{
    (void) state;
    /* contig of contiguous bytes: one CONTIG node of bytes */
    struct dtype *t = dtype_optimize(dtype_contig(10, dtype_contig(3, dtype_bytes(4))));
    assert_int_equal(t->kind, DTYPE_CONTIG);
    assert_null(t->child);
    assert_int_equal(t->blocklen, 120);
    dtype_free(t);

    /* struct of ints at regular places: a vector of bytes */
    int64_t *lens = malloc(3 * sizeof *lens), *displs = malloc(3 * sizeof *displs);
    struct dtype **kids = malloc(3 * sizeof *kids);
    for (int i = 0; i < 3; i++) {
        lens[i] = 2;
        displs[i] = 16 * i;
        kids[i] = dtype_bytes(4);
    }
    t = dtype_optimize(dtype_struct(3, lens, displs, kids));
    assert_int_equal(t->kind, DTYPE_VECTOR);
    assert_null(t->child);
    assert_int_equal(t->blocklen, 8);
    assert_int_equal(t->stride, 16);
    dtype_free(t);

    /* adjacent indexed blocks merge */
    lens = malloc(3 * sizeof *lens);
    displs = malloc(3 * sizeof *displs);
    int64_t l[] = { 2, 3, 1 }, d[] = { 0, 16, 72 };
    memcpy(lens, l, sizeof l);
    memcpy(displs, d, sizeof d);
    t = dtype_optimize(dtype_indexed(3, lens, displs, dtype_bytes(8)));
    assert_int_equal(t->kind, DTYPE_INDEXED);
    assert_int_equal(t->count, 2);
    assert_int_equal(t->blocklens[0], 40);
    dtype_free(t);
}

/* Offsets and counts past 2^31: a 2-D column of a 2^20 x 2^20 array of
 * doubles (8 TiB of extent), and a window deep in 2^40 instances. */
static void test_large(void **state)
{
    (void) state;
    int64_t row = INT64_C(1) << 23;    /* bytes per row */
    struct dtype *col = dtype_vector(INT64_C(1) << 20, 1, row, dtype_bytes(8));
    assert_non_null(col);
    assert_int_equal(col->size, INT64_C(8) << 20);
    struct dtype_iter it;
    int64_t off, len, first = (INT64_C(1) << 20) * 8 - 16;
    assert_int_equal(dtype_iter_init(&it, col, 1, 0, first, first + 16), 0);
    assert_int_equal(dtype_iter_next(&it, &off, &len), 1);
    assert_int_equal(off, ((INT64_C(1) << 20) - 2) * row);
    assert_int_equal(len, 8);
    assert_int_equal(dtype_iter_next(&it, &off, &len), 1);
    assert_int_equal(off, ((INT64_C(1) << 20) - 1) * row);
    assert_int_equal(dtype_iter_next(&it, &off, &len), 0);
    dtype_free(col);

    struct dtype *t = dtype_resize(dtype_bytes(3), 0, 10);
    int64_t count = INT64_C(1) << 40;
    assert_int_equal(dtype_iter_init(&it, t, count, 5, 3 * (count - 1) + 1, 3 * count), 0);
    assert_int_equal(dtype_iter_next(&it, &off, &len), 1);
    assert_int_equal(off, 5 + 10 * (count - 1) + 1);
    assert_int_equal(len, 2);
    /* windows beyond the instances, or offsets over 62 bits, are refused */
    assert_int_equal(dtype_iter_init(&it, t, count, 0, 0, 3 * count + 1), -EINVAL);
    assert_int_equal(dtype_iter_init(&it, t, INT64_C(1) << 61, 0, 0, 1), -EINVAL);
    dtype_free(t);

    /* optimising 2^40 blocks costs nothing per block: padded ints become bytes */
    t = dtype_optimize(dtype_vector(INT64_C(1) << 40, 1, 16,
                                    dtype_resize(dtype_bytes(4), 0, 8)));
    assert_non_null(t);
    assert_int_equal(t->kind, DTYPE_VECTOR);
    assert_null(t->child);
    assert_int_equal(t->blocklen, 4);
    assert_int_equal(t->size, INT64_C(4) << 40);
    dtype_free(t);

    /* a description whose offsets would overflow is not built */
    assert_null(dtype_vector(INT64_C(1) << 40, 1, INT64_C(1) << 40, NULL));
}

static void test_pack_unpack(void **state)
{
    (void) state;
    struct dtype *t = dtype_vector(4, 3, -7, dtype_bytes(1));
    char mem[64], packed[12], back[64];
    for (int i = 0; i < 64; i++)
        mem[i] = (char) i;
    memset(back, 0, sizeof back);
    /* base in the middle: the stride is negative */
    assert_int_equal(dtype_pack(t, 1, mem + 32, 0, 12, packed), 0);
    char expect[] = { 32, 33, 34, 25, 26, 27, 18, 19, 20, 11, 12, 13 };
    assert_memory_equal(packed, expect, 12);
    assert_int_equal(dtype_unpack(t, 1, back + 32, 2, 7, packed + 2), 0);
    assert_int_equal(back[34], 34);
    assert_int_equal(back[20], 20);
    assert_int_equal(back[11], 0);      /* outside the window */
    assert_int_equal(back[32], 0);
    dtype_free(t);
}

static void test_wire_roundtrip(void **state)
{
    (void) state;
    for (unsigned seed = 1; seed <= 200; seed++) {
        srand(seed);
        struct dtype *t = random_type(4);
        struct dtype *u = copy_of(t);
        size_t n = dtype_serialize(t, NULL);
        uint8_t *a = malloc(n), *b = malloc(n);
        dtype_serialize(t, a);
        assert_int_equal(dtype_serialize(u, NULL), n);
        dtype_serialize(u, b);
        assert_memory_equal(a, b, n);
        assert_int_equal(u->size, t->size);
        assert_int_equal(u->true_lb, t->true_lb);
        free(a);
        free(b);
        dtype_free(u);
        dtype_free(t);
    }
}

/* Truncations, bit flips and absurd counts: refused or accepted, never a
 * crash (this runs under ASan and valgrind in make check-sanitize). */
static void test_wire_hostile(void **state)
{
    (void) state;
    struct dtype *out;
    for (unsigned seed = 1; seed <= 100; seed++) {
        srand(seed);
        struct dtype *t = random_type(3);
        size_t n = dtype_serialize(t, NULL);
        uint8_t *buf = malloc(n);
        dtype_serialize(t, buf);
        for (size_t cut = 0; cut < n; cut++) {
            assert_int_equal(dtype_deserialize(buf, cut, &out), -EINVAL);
            assert_null(out);
        }
        for (int flip = 0; flip < 200; flip++) {
            size_t at = (size_t) rand() % n;
            uint8_t old = buf[at];
            buf[at] ^= (uint8_t) (1u << (rand() % 8));
            if (dtype_deserialize(buf, n, &out) == 0) {
                struct dtype_iter it;
                int64_t off, len, k = 0;
                /* a window as large as one request's data (the server's case) */
                int64_t last = out->size < (1 << 20) ? out->size : (1 << 20);
                if (dtype_iter_init(&it, out, 2, 0, 0, last) == 0)
                    while (k++ < 10000 && dtype_iter_next(&it, &off, &len))
                        ;
                dtype_free(out);
            }
            buf[at] = old;
        }
        free(buf);
        dtype_free(t);
    }
    /* an indexed node claiming 2^40 blocks in 60 bytes */
    uint8_t evil[64] = { DTYPE_INDEXED };
    evil[5] = 1;                        /* count = 2^32 * 256 */
    assert_int_equal(dtype_deserialize(evil, sizeof evil, &out), -EINVAL);
    /* nesting deeper than the limit */
    size_t deep_len = (DTYPE_MAX_DEPTH + 2) * 50;
    uint8_t *deep = calloc(1, deep_len), *p = deep;
    for (int d = 0; d < DTYPE_MAX_DEPTH + 1; d++) {
        *p = DTYPE_CONTIG;
        p[1] = 1;                       /* count 1 */
        p[9] = 1;                       /* blocklen 1 */
        p[49] = 1;                      /* a child follows */
        p += 50;
    }
    assert_int_equal(dtype_deserialize(deep, (size_t) (p - deep), &out), -EINVAL);
    free(deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vector_runs),
        cmocka_unit_test(test_zero_length_blocks),
        cmocka_unit_test(test_random_types),
        cmocka_unit_test(test_optimize_keeps_runs),
        cmocka_unit_test(test_optimize_shapes),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_pack_unpack),
        cmocka_unit_test(test_wire_roundtrip),
        cmocka_unit_test(test_wire_hostile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
