/*
 * Striping arithmetic and the object header.
 *
 * Header (little-endian): "ROMIOSTR", version u32, index u32, factor u32,
 * replicas u32 (version 1: 0, one copy), unit u64, file_id u64, and a u64
 * check that is the FNV-1a hash of the 40 bytes before it, so that an
 * object whose first bytes happen to start with the magic is not taken
 * for a header. A client that knows only version 1 refuses a file of
 * several copies rather than write one of them.
 *
 * Replica state, at STRIPE_STATE_OFFSET: "ROMIOREP", epoch u64, stale u64,
 * resyncing u64, FNV-1a check of the 32 bytes before it.
 */
#include "stripe/stripe.h"
#include "proto/wire_le.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define STRIPE_MAGIC   "ROMIOSTR"
#define STRIPE_VERSION_ONE_COPY 1u
#define STRIPE_VERSION_COPIES   2u
#define STRIPE_STATE_MAGIC "ROMIOREP"

int stripe_layout_check(const struct stripe_layout *l)
{
    if (l->unit == 0 || l->unit > STRIPE_MAX_UNIT || l->factor == 0 ||
        l->factor > STRIPE_MAX_FACTOR || stripe_copies(l) > l->factor ||
        stripe_copies(l) > STRIPE_MAX_REPLICAS)
        return -EINVAL;
    return 0;
}

int stripe_copy_path(const char *path, uint32_t copy, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t) (slash - path) + 1 : 0;
    int n = copy == 0 ? snprintf(out, size, "%s", path)
                      : snprintf(out, size, "%.*s.%s.copy%u", (int) dir, path, path + dir, copy);
    return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

int stripe_read_copy(const struct stripe_layout *l, uint32_t object, uint64_t avoid)
{
    for (uint32_t c = 0; c < stripe_copies(l); c++)
        if (!(avoid >> stripe_copy_server(l, object, c) & 1))
            return (int) c;
    return -1;
}

uint64_t stripe_local_size(const struct stripe_layout *l, uint32_t i, uint64_t size)
{
    uint64_t full = size / l->unit, rem = size % l->unit;
    uint64_t rounds = full / l->factor, extra = full % l->factor;
    uint64_t local = rounds * l->unit;
    if (i < extra)
        local += l->unit;
    else if (i == extra)
        local += rem;
    return local;
}

uint64_t stripe_logical_end(const struct stripe_layout *l, uint32_t i, uint64_t local)
{
    if (local == 0)
        return 0;
    uint64_t last = local - 1;
    uint64_t k = (last / l->unit) * l->factor + i;
    return k * l->unit + last % l->unit + 1;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * UINT64_C(1099511628211);
    return h;
}

void stripe_header_encode(const struct stripe_header *h, uint8_t out[STRIPE_HDR_USED])
{
    uint32_t copies = stripe_copies(&h->layout);
    memcpy(out, STRIPE_MAGIC, 8);
    le_put32(out + 8, copies > 1 ? STRIPE_VERSION_COPIES : STRIPE_VERSION_ONE_COPY);
    le_put32(out + 12, h->index);
    le_put32(out + 16, h->layout.factor);
    le_put32(out + 20, copies > 1 ? copies : 0);
    le_put64(out + 24, h->layout.unit);
    le_put64(out + 32, h->layout.file_id);
    le_put64(out + 40, fnv1a(out, 40));
}

int stripe_header_decode(const uint8_t *in, size_t len, struct stripe_header *h)
{
    if (len < STRIPE_HDR_USED || memcmp(in, STRIPE_MAGIC, 8) != 0 ||
        le_get64(in + 40) != fnv1a(in, 40))
        return -EINVAL;
    uint32_t version = le_get32(in + 8), copies = le_get32(in + 20);
    if (!(version == STRIPE_VERSION_ONE_COPY && copies == 0) &&
        !(version == STRIPE_VERSION_COPIES && copies > 1))
        return -EINVAL;
    h->index = le_get32(in + 12);
    h->layout.factor = le_get32(in + 16);
    h->layout.replicas = copies ? copies : 1;
    h->layout.unit = le_get64(in + 24);
    h->layout.file_id = le_get64(in + 32);
    if (stripe_layout_check(&h->layout) < 0 || h->index >= h->layout.factor)
        return -EINVAL;
    return 0;
}

void stripe_state_encode(const struct stripe_state *s, uint8_t out[STRIPE_STATE_SIZE])
{
    memcpy(out, STRIPE_STATE_MAGIC, 8);
    le_put64(out + 8, s->epoch);
    le_put64(out + 16, s->stale);
    le_put64(out + 24, s->resyncing);
    le_put64(out + 32, fnv1a(out, 32));
}

int stripe_state_decode(const uint8_t *in, size_t len, struct stripe_state *s)
{
    static const uint8_t never[STRIPE_STATE_SIZE];
    *s = (struct stripe_state) { 0 };
    if (len < STRIPE_STATE_SIZE)
        return len == 0 ? -ENOENT : -EINVAL;
    if (memcmp(in, never, STRIPE_STATE_SIZE) == 0)
        return -ENOENT;
    if (memcmp(in, STRIPE_STATE_MAGIC, 8) != 0 || le_get64(in + 32) != fnv1a(in, 32))
        return -EINVAL;
    s->epoch = le_get64(in + 8);
    s->stale = le_get64(in + 16);
    s->resyncing = le_get64(in + 24) & s->stale;
    return 0;
}

void stripe_state_merge(const struct stripe_state *a, const struct stripe_state *b,
                        struct stripe_state *out)
{
    if (a->epoch != b->epoch) {
        *out = a->epoch > b->epoch ? *a : *b;
        return;
    }
    uint64_t stale = a->stale | b->stale;
    /* resyncing only where every side that calls it stale says so */
    uint64_t plain = (a->stale & ~a->resyncing) | (b->stale & ~b->resyncing);
    *out = (struct stripe_state) { .epoch = a->epoch, .stale = stale,
                                   .resyncing = stale & ~plain };
}
