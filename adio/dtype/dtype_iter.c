/*
 * The run iterator: a stack of loop positions, one frame per level of the
 * description, the innermost one always on a block of bytes. Seeking to
 * the first byte of the window divides by block sizes (binary search on
 * the prefix sums of indexed blocks), so a window deep inside a huge count
 * costs no more than one at the start.
 */
#include "dtype/dtype.h"

#include <errno.h>
#include <string.h>

static void push(struct dtype_iter *it, const struct dtype *t, int64_t block, int64_t elem,
                 int64_t base)
{
    it->stack[it->depth++] = (struct dtype_frame) { t, block, elem, base };
}

static int64_t element_base(const struct dtype_frame *f)
{
    const struct dtype *c = blk_type(f->t, f->block);
    return f->base + f->t->disp + blk_disp(f->t, f->block) + f->elem * ty_extent(c);
}

/* Frames from node t (placed at base) down to the byte block holding data
 * byte p of t. */
static void descend(struct dtype_iter *it, const struct dtype *t, int64_t base, int64_t p)
{
    for (;;) {
        int64_t i = dtype_block_at(t, p);
        int64_t rem = p - blk_before(t, i);
        const struct dtype *c = blk_type(t, i);
        int64_t j = rem / ty_size(c);
        push(it, t, i, j, base);
        if (!c)
            return;
        base = element_base(&it->stack[it->depth - 1]);
        p = rem - j * c->size;
        t = c;
    }
}

static int block_empty(const struct dtype *t, int64_t i)
{
    return blk_len(t, i) == 0 || ty_size(blk_type(t, i)) == 0;
}

/* Past the current byte block to the next one; 0 when none is left. */
static int advance(struct dtype_iter *it)
{
    while (it->depth > 0) {
        struct dtype_frame *f = &it->stack[it->depth - 1];
        const struct dtype *c = blk_type(f->t, f->block);
        if (c && ++f->elem < blk_len(f->t, f->block)) {
            descend(it, c, element_base(f), 0);
            return 1;
        }
        while (++f->block < f->t->count && block_empty(f->t, f->block))
            ;
        if (f->block < f->t->count) {
            f->elem = 0;
            c = blk_type(f->t, f->block);
            if (c)
                descend(it, c, element_base(f), 0);
            return 1;
        }
        it->depth--;
    }
    return 0;
}

int dtype_iter_init(struct dtype_iter *it, const struct dtype *t, int64_t count, int64_t disp,
                    int64_t first, int64_t last)
{
    int64_t total, reach;
    memset(it, 0, sizeof *it);
    if (count < 0 || first < 0 || first > last ||
        __builtin_mul_overflow(count, ty_size(t), &total) || last > total ||
        __builtin_mul_overflow(count, ty_extent(t) < 0 ? -ty_extent(t) : ty_extent(t), &reach) ||
        reach > INT64_MAX / 4 || disp < -(INT64_MAX / 4) || disp > INT64_MAX / 4)
        return -EINVAL;
    it->top = (struct dtype) {
        .kind = DTYPE_CONTIG, .count = 1, .blocklen = count, .disp = disp,
        .child = (struct dtype *) t, .size = total, .extent = reach
    };
    it->pos = first;
    it->last = last;
    if (first < last)
        descend(it, &it->top, 0, first);
    return 0;
}

int dtype_iter_next(struct dtype_iter *it, int64_t *off, int64_t *len)
{
    while (it->pos < it->last) {
        const struct dtype_frame *f = &it->stack[it->depth - 1];
        int64_t roff = element_base(f);
        int64_t rlen = blk_len(f->t, f->block) - f->elem;
        if (rlen > it->last - it->pos)
            rlen = it->last - it->pos;
        it->pos += rlen;
        if (it->pos < it->last)
            advance(it);
        if (it->run_len > 0 && it->run_off + it->run_len == roff) {
            it->run_len += rlen;
            continue;
        }
        int had = it->run_len > 0;
        *off = it->run_off;
        *len = it->run_len;
        it->run_off = roff;
        it->run_len = rlen;
        if (had)
            return 1;
    }
    if (it->run_len == 0)
        return 0;
    *off = it->run_off;
    *len = it->run_len;
    it->run_len = 0;
    return 1;
}

static int copy_runs(const struct dtype *t, int64_t count, char *base, int64_t first,
                     int64_t len, char *packed, int to_packed)
{
    struct dtype_iter it;
    int64_t off, n;
    int rc = dtype_iter_init(&it, t, count, 0, first, first + len);
    if (rc < 0)
        return rc;
    while (dtype_iter_next(&it, &off, &n)) {
        if (to_packed)
            memcpy(packed, base + off, (size_t) n);
        else
            memcpy(base + off, packed, (size_t) n);
        packed += n;
    }
    return 0;
}

int dtype_pack(const struct dtype *t, int64_t count, const char *base, int64_t first,
               int64_t len, char *packed)
{
    return copy_runs(t, count, (char *) base, first, len, packed, 1);
}

int dtype_unpack(const struct dtype *t, int64_t count, char *base, int64_t first, int64_t len,
                 const char *packed)
{
    return copy_runs(t, count, base, first, len, (char *) packed, 0);
}
