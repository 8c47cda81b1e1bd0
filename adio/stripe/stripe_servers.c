/*
 * The server list of the striped file system: from a string (the
 * rdma_servers hint, $ROMIO_RDMA_SERVERS) or a configuration file.
 */
#include "stripe/stripe_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int add_endpoint(struct stripe_servers *out, const char *s, size_t len)
{
    if (out->n >= STRIPE_MAX_FACTOR)
        return -EINVAL;
    int took = net_endpoint_parse(s, len, &out->at[out->n]);
    if (took < 0 || (size_t) took != len)
        return -EINVAL;
    out->n++;
    return 0;
}

int stripe_servers_parse(const char *list, struct stripe_servers *out)
{
    out->n = 0;
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        int rc = add_endpoint(out, p, len);
        if (rc < 0)
            return rc;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

int stripe_servers_load(const char *path, struct stripe_servers *out)
{
    char line[512];
    int rc = 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return errno == ENOENT ? -ENOENT : -EINVAL;
    out->n = 0;
    while (rc == 0 && fgets(line, sizeof line, fp)) {
        char *p = line + strspn(line, " \t");
        size_t len = strcspn(p, "#\r\n");
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len == 0)
            continue;
        if (len < 7 || strncmp(p, "server", 6) != 0 || (p[6] != ' ' && p[6] != '\t')) {
            rc = -EINVAL;
            break;
        }
        size_t skip = 6 + strspn(p + 6, " \t");
        rc = add_endpoint(out, p + skip, len - skip);
    }
    fclose(fp);
    if (rc == 0 && out->n == 0)
        rc = -EINVAL;
    return rc;
}

int stripe_servers_format(const struct stripe_servers *s, char *out, size_t size)
{
    size_t used = 0;
    if (size == 0)
        return -ENOSPC;
    out[0] = '\0';
    for (uint32_t i = 0; i < s->n; i++) {
        int bracket = strchr(s->at[i].host, ':') != NULL;
        int n = snprintf(out + used, size - used, "%s%s%s%s:%s", i ? "," : "",
                         bracket ? "[" : "", s->at[i].host, bracket ? "]" : "", s->at[i].port);
        if (n < 0 || (size_t) n >= size - used)
            return -ENOSPC;
        used += (size_t) n;
    }
    return 0;
}
