/*
 * Descriptions of MPI datatypes against MPI itself: for every combiner and
 * many generated types, the engine's pack and unpack must give exactly
 * MPI_Pack's and MPI_Unpack's bytes (the oracle), and the described lb,
 * extent and size MPI's. Runs as one MPI process (built with our mpicc).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <cmocka.h>
#include <mpi.h>

#include "dtype_mpi.h"

static unsigned char label(int64_t off)
{
    uint64_t x = (uint64_t) off * 0x9e3779b97f4a7c15ull;
    return (unsigned char) ((x >> 56) | 1);     /* never 0 */
}

/*
 * Compare with MPI for `count` instances at the middle of a labelled
 * buffer: whole pack, pack of random windows, and unpack.
 */
static void check_type(MPI_Datatype type, int count)
{
    MPI_Count lb, extent, tlb, text, size;
    MPI_Type_get_extent_x(type, &lb, &extent);
    MPI_Type_get_true_extent_x(type, &tlb, &text);
    MPI_Type_size_x(type, &size);
    struct dtype *t;
    assert_int_equal(dtype_from_mpi(type, &t), 0);
    assert_int_equal(t->size, size);
    assert_int_equal(t->lb, lb);
    assert_int_equal(t->extent, extent);

    /* room for count instances whatever the signs of lb and extent */
    int64_t reach = (count - 1) * (extent < 0 ? -extent : extent);
    int64_t room = 2 * (reach + (tlb < 0 ? -tlb : tlb) + text) + 64;
    unsigned char *mem = malloc((size_t) room), *origin = mem + room / 2;
    for (int64_t i = 0; i < room; i++)
        mem[i] = label(i - room / 2);
    int64_t total = size * count;
    char *ours = malloc((size_t) total + 1), *theirs = malloc((size_t) total + 1);
    int pos = 0;
    MPI_Pack(origin, count, type, theirs, (int) total, &pos, MPI_COMM_SELF);
    assert_int_equal(pos, total);
    assert_int_equal(dtype_pack(t, count, (char *) origin, 0, total, ours), 0);
    assert_memory_equal(ours, theirs, (size_t) total);
    for (int w = 0; w < 10 && total > 0; w++) {
        int64_t a = rand() % total, b = a + rand() % (total - a + 1);
        assert_int_equal(dtype_pack(t, count, (char *) origin, a, b - a, ours), 0);
        assert_memory_equal(ours, theirs + a, (size_t) (b - a));
    }

    /* unpack: the same bytes land in the same places */
    unsigned char *mine = calloc(1, (size_t) room), *mpis = calloc(1, (size_t) room);
    pos = 0;
    MPI_Unpack(theirs, (int) total, &pos, mpis + room / 2, count, type, MPI_COMM_SELF);
    assert_int_equal(dtype_unpack(t, count, (char *) mine + room / 2, 0, total, theirs), 0);
    assert_memory_equal(mine, mpis, (size_t) room);
    free(mine);
    free(mpis);
    free(ours);
    free(theirs);
    free(mem);
    dtype_free(t);
}

static void check_and_free(MPI_Datatype *type, int count)
{
    MPI_Type_commit(type);
    check_type(*type, count);
    MPI_Type_free(type);
}

static void test_named(void **state)
{
    (void) state;
    MPI_Datatype named[] = { MPI_BYTE, MPI_CHAR, MPI_INT, MPI_DOUBLE, MPI_LONG_DOUBLE,
                             MPI_SHORT_INT, MPI_DOUBLE_INT, MPI_LONG_DOUBLE_INT,
                             MPI_FLOAT_INT, MPI_2INT, MPI_C_DOUBLE_COMPLEX };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        check_type(named[i], 3);
}

static void test_each_combiner(void **state)
{
    (void) state;
    MPI_Datatype t, u;
    int lens[] = { 2, 0, 3, 1 }, displs[] = { 5, 0, 12, -2 };
    MPI_Aint hdispls[] = { 40, 0, -16, 100 };
    MPI_Datatype types[] = { MPI_INT, MPI_DOUBLE, MPI_SHORT_INT, MPI_CHAR };

    MPI_Type_contiguous(5, MPI_SHORT, &t);
    check_and_free(&t, 3);
    MPI_Type_vector(4, 2, -3, MPI_INT, &t);
    check_and_free(&t, 2);
    MPI_Type_create_hvector(3, 2, 50, MPI_DOUBLE, &t);
    check_and_free(&t, 2);
    MPI_Type_indexed(4, lens, displs, MPI_INT, &t);
    check_and_free(&t, 3);
    MPI_Type_create_hindexed(4, lens, hdispls, MPI_SHORT_INT, &t);
    check_and_free(&t, 2);
    MPI_Type_create_indexed_block(4, 2, displs, MPI_DOUBLE, &t);
    check_and_free(&t, 2);
    MPI_Type_create_hindexed_block(4, 3, hdispls, MPI_CHAR, &t);
    check_and_free(&t, 2);
    MPI_Type_create_struct(4, lens, hdispls, types, &t);
    check_and_free(&t, 3);
    MPI_Type_vector(2, 1, 3, MPI_INT, &u);
    MPI_Type_create_resized(u, -8, 40, &t);
    MPI_Type_free(&u);
    check_and_free(&t, 4);
    MPI_Type_dup(MPI_LONG_DOUBLE_INT, &t);
    check_and_free(&t, 2);

    int sizes[] = { 6, 7, 5 }, subs[] = { 2, 3, 4 }, starts[] = { 3, 1, 1 };
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
    check_and_free(&t, 2);
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
    check_and_free(&t, 2);

    /* large-count constructors */
    MPI_Type_vector_c(3, 2, 5, MPI_INT, &t);
    check_and_free(&t, 2);
    MPI_Count clens[] = { 1, 2 }, cdispls[] = { 3, 0 };
    MPI_Type_indexed_c(2, clens, cdispls, MPI_DOUBLE, &t);
    check_and_free(&t, 2);
}

static MPI_Datatype random_mpi_type(int depth)
{
    MPI_Datatype old = depth > 0 && rand() % 3 ? random_mpi_type(depth - 1)
                     : (MPI_Datatype[]) { MPI_CHAR, MPI_INT, MPI_DOUBLE, MPI_SHORT_INT }[rand() % 4];
    MPI_Datatype t;
    int n = 1 + rand() % 4, lens[4], displs[4];
    MPI_Aint hd[4];
    MPI_Datatype kinds[4] = { old, MPI_INT, MPI_CHAR, old };
    for (int i = 0; i < 4; i++) {
        lens[i] = rand() % 3;
        displs[i] = rand() % 20 - 3;
        hd[i] = rand() % 200 - 20;
    }
    switch (rand() % 7) {
    case 0: MPI_Type_contiguous(1 + rand() % 3, old, &t); break;
    case 1: MPI_Type_vector(n, 1 + rand() % 2, rand() % 5 - 1, old, &t); break;
    case 2: MPI_Type_indexed(n, lens, displs, old, &t); break;
    case 3: MPI_Type_create_hindexed_block(n, 1 + rand() % 2, hd, old, &t); break;
    case 4: MPI_Type_create_struct(n, lens, hd, kinds, &t); break;
    case 5: MPI_Type_create_resized(old, rand() % 8 - 4, 8 + rand() % 64, &t); break;
    default: {
        int sizes[2] = { 3 + rand() % 3, 2 + rand() % 4 }, subs[2] = { 1 + rand() % 3, 1 + rand() % 2 };
        int starts[2] = { rand() % (sizes[0] - subs[0] + 1), rand() % (sizes[1] - subs[1] + 1) };
        MPI_Type_create_subarray(2, sizes, subs, starts, rand() % 2 ? MPI_ORDER_C
                                 : MPI_ORDER_FORTRAN, old, &t);
    }
    }
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(old, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED)
        MPI_Type_free(&old);
    return t;
}

static void test_generated(void **state)
{
    (void) state;
    for (unsigned seed = 1; seed <= 400; seed++) {
        srand(seed);
        MPI_Datatype t = random_mpi_type(3);
        MPI_Count size;
        MPI_Type_size_x(t, &size);
        if (getenv("DTYPE_SEED_TRACE")) fprintf(stderr, "seed %u\n", seed);
        if (size > 0 && size < 100000)
            check_and_free(&t, 1 + seed % 3);
        else
            MPI_Type_free(&t);
    }
}

/* Whether element `idx` (its place in memory, in elements) of a darray
 * is this process's: in every distributed dimension its one block
 * (block) or one of the blocks dealt to it round-robin (cyclic). The
 * process grid is row-major whatever the array order. */
static int darray_owns(int nd, const int *g, const int *distribs, const int *dargs,
                       const int *psizes, int rank, int order, int64_t idx)
{
    for (int j = 0; j < nd; j++) {
        int dim = order == MPI_ORDER_C ? nd - 1 - j : j, coord = rank;
        int64_t x = idx % g[dim], p = psizes[dim], blk;
        idx /= g[dim];
        for (int i = dim + 1; i < nd; i++)
            coord /= psizes[i];
        coord %= psizes[dim];
        if (distribs[dim] == MPI_DISTRIBUTE_BLOCK) {
            blk = dargs[dim] == MPI_DISTRIBUTE_DFLT_DARG ? (g[dim] + p - 1) / p : dargs[dim];
            if (x / blk != coord)
                return 0;
        } else if (distribs[dim] == MPI_DISTRIBUTE_CYCLIC) {
            blk = dargs[dim] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[dim];
            if (x / blk % p != coord)
                return 0;
        }
    }
    return 1;
}

/*
 * A darray against its definition: the elements this process owns, in
 * memory order, each packed by the element type's own description. Not
 * against MPI_Pack: MPICH 4.0.2's darray type map puts the blocks of a
 * cyclic dimension over a block dimension next to each other (the bug of
 * pmodels/mpich#4943), while ROMIO's file views, which rebuild darrays
 * themselves, follow the definition; so do we.
 */
static void check_darray(MPI_Datatype t, MPI_Datatype elem, int nd, const int *g,
                         const int *distribs, const int *dargs, const int *psizes, int rank,
                         int order)
{
    MPI_Count lb, extent, size, elb, eext;
    MPI_Type_get_extent_x(t, &lb, &extent);
    MPI_Type_size_x(t, &size);
    MPI_Type_get_extent_x(elem, &elb, &eext);
    struct dtype *d, *e;
    assert_int_equal(dtype_from_mpi(t, &d), 0);
    assert_int_equal(dtype_from_mpi(elem, &e), 0);
    assert_int_equal(d->size, size);
    assert_int_equal(d->lb, lb);
    assert_int_equal(d->extent, extent);
    int64_t n = 1, room = 2 * (extent + 64), at = 0;
    for (int i = 0; i < nd; i++)
        n *= g[i];
    unsigned char *mem = malloc((size_t) room), *origin = mem + room / 2;
    for (int64_t i = 0; i < room; i++)
        mem[i] = label(i - room / 2);
    char *ours = malloc((size_t) size + 1), *expect = malloc((size_t) size + 1);
    for (int64_t idx = 0; idx < n; idx++)
        if (darray_owns(nd, g, distribs, dargs, psizes, rank, order, idx)) {
            assert_int_equal(dtype_pack(e, 1, (char *) origin + idx * eext, 0, e->size,
                                        expect + at), 0);
            at += e->size;
        }
    assert_int_equal(at, size);
    assert_int_equal(dtype_pack(d, 1, (char *) origin, 0, size, ours), 0);
    assert_memory_equal(ours, expect, (size_t) size);
    free(ours);
    free(expect);
    free(mem);
    dtype_free(d);
    dtype_free(e);
}

/* MPI_Type_create_darray in every combination of order, distribution
 * (block, cyclic with and without a short last block, none), block
 * size, process grid and rank, over element types whose extent is not
 * their size; and one far beyond what packing could probe. */
static void test_darray(void **state)
{
    (void) state;
    MPI_Datatype elems[3], u;
    elems[0] = MPI_INT;
    elems[1] = MPI_SHORT_INT;
    MPI_Type_vector(2, 1, 3, MPI_INT, &u);
    MPI_Type_create_resized(u, 0, 20, &elems[2]);
    MPI_Type_free(&u);
    MPI_Type_commit(&elems[2]);
    int distrib[3] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE };
    for (unsigned seed = 1; seed <= 300; seed++) {
        srand(seed);
        int nd = 1 + rand() % 3, g[3], distribs[3], dargs[3], psizes[3], nprocs = 1;
        for (int i = 0; i < nd; i++) {
            g[i] = 1 + rand() % 9;
            distribs[i] = distrib[rand() % 3];
            psizes[i] = distribs[i] == MPI_DISTRIBUTE_NONE ? 1 : 1 + rand() % 3;
            int least = (g[i] + psizes[i] - 1) / psizes[i];
            dargs[i] = rand() % 2 ? MPI_DISTRIBUTE_DFLT_DARG
                     : distribs[i] == MPI_DISTRIBUTE_BLOCK ? least + rand() % 2
                                                          : 1 + rand() % 3;
            nprocs *= psizes[i];
        }
        int order = rand() % 2 ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        MPI_Datatype elem = elems[rand() % 3];
        for (int rank = 0; rank < nprocs; rank++) {
            MPI_Datatype t;
            assert_int_equal(MPI_Type_create_darray(nprocs, rank, nd, g, distribs, dargs,
                                                    psizes, order, elem, &t), MPI_SUCCESS);
            MPI_Type_commit(&t);
            check_darray(t, elem, nd, g, distribs, dargs, psizes, rank, order);
            MPI_Type_free(&t);
        }
    }
    MPI_Type_free(&elems[2]);

    /* 32768 x 32768 ints cyclic(16) x block over 4 x 2: 4 GiB of extent */
    int g[] = { 32768, 32768 }, distribs[] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK };
    int dargs[] = { 16, MPI_DISTRIBUTE_DFLT_DARG }, psizes[] = { 4, 2 };
    MPI_Datatype t;
    MPI_Type_create_darray(8, 5, 2, g, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    struct dtype *d;
    assert_int_equal(dtype_from_mpi(t, &d), 0);
    assert_int_equal(d->size, INT64_C(32768) * 32768 / 8 * 4);
    assert_int_equal(d->extent, INT64_C(32768) * 32768 * 4);
    assert_true(d->nodes < 10);
    dtype_free(d);
    MPI_Type_free(&t);
}

/*
 * Over 2^31 bytes of extent: 3 ints 3 GiB apart, packed from a sparse
 * mapping. Only the labelled places hold data, so a wrong offset reads a
 * zero page and differs from MPI_Pack.
 */
static void test_large_extent(void **state)
{
    (void) state;
    int64_t stride = INT64_C(3) << 30, room = 3 * stride + 64;
    MPI_Datatype t;
    MPI_Type_create_hvector(3, 1, stride, MPI_INT, &t);
    MPI_Type_commit(&t);
    struct dtype *d;
    assert_int_equal(dtype_from_mpi(t, &d), 0);
    assert_int_equal(d->extent, 2 * stride + 4);
    unsigned char *mem = mmap(NULL, (size_t) room, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    assert_true(mem != MAP_FAILED);
    for (int k = 0; k < 3; k++)
        for (int b = 0; b < 4; b++)
            mem[k * stride + b] = label(k * stride + b);
    char ours[12], theirs[12];
    int pos = 0;
    MPI_Pack(mem, 1, t, theirs, 12, &pos, MPI_COMM_SELF);
    assert_int_equal(dtype_pack(d, 1, (char *) mem, 0, 12, ours), 0);
    assert_memory_equal(ours, theirs, 12);
    assert_int_equal(theirs[11], (char) label(2 * stride + 3));
    munmap(mem, (size_t) room);
    dtype_free(d);
    MPI_Type_free(&t);
}

/* The cache: a derived type is described once, and freed with the type. */
static void test_cache(void **state)
{
    (void) state;
    MPI_Datatype t;
    const struct dtype *a, *b;
    int owned;
    MPI_Type_vector(3, 1, 4, MPI_INT, &t);
    MPI_Type_commit(&t);
    assert_int_equal(dtype_mpi_get(t, &a, &owned), 0);
    assert_int_equal(owned, 0);
    assert_int_equal(dtype_mpi_get(t, &b, &owned), 0);
    assert_ptr_equal(a, b);
    MPI_Type_free(&t);                  /* the description goes with it */
    assert_int_equal(dtype_mpi_get(MPI_INT, &a, &owned), 0);
    assert_int_equal(owned, 1);
    assert_int_equal(a->size, 4);
    dtype_free((struct dtype *) a);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named),
        cmocka_unit_test(test_each_combiner),
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_darray),
        cmocka_unit_test(test_large_extent),
        cmocka_unit_test(test_cache),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    MPI_Finalize();
    return rc;
}
