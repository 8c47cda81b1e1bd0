/*
 * Plain per-segment registration (verbs_reg.h).
 */
#include "net/verbs_reg.h"

#include <errno.h>
#include <stdlib.h>

int verbs_register_iov(struct ibv_pd *pd, const struct iovec *iov, int cnt, int access,
                       struct verbs_region *out, struct verbs_reg_stats *st)
{
    out->n = 0;
    out->mr = calloc(cnt > 0 ? (size_t) cnt : 1, sizeof *out->mr);
    if (!out->mr)
        return -ENOMEM;
    out->n = cnt;
    for (int i = 0; i < cnt; i++) {
        if (iov[i].iov_len == 0)
            continue;
        out->mr[i] = ibv_reg_mr(pd, iov[i].iov_base, iov[i].iov_len, access);
        if (!out->mr[i]) {
            int rc = errno ? -errno : -ENOMEM;
            verbs_deregister(out);
            return rc;
        }
        st->registrations++;
        st->registered_bytes += iov[i].iov_len;
    }
    return 0;
}

/* In reverse order of registration. */
void verbs_deregister(struct verbs_region *r)
{
    for (int i = r->n - 1; i >= 0; i--)
        if (r->mr[i])
            ibv_dereg_mr(r->mr[i]);
    free(r->mr);
    r->mr = NULL;
    r->n = 0;
}
