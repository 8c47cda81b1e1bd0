/*
 * HOST:PORT (net_endpoint.h).
 */
#include "net/net_endpoint.h"

#include <errno.h>
#include <string.h>

/* The host of s[0, len): [IPv6] or up to the first ':'. Sets *end past it
 * (at the ':' before the port); -EINVAL when there is no such ':'. */
static int host_part(const char *s, size_t len, const char **host, size_t *hl, size_t *end)
{
    const char *colon;
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close || close + 1 >= s + len || close[1] != ':')
            return -EINVAL;
        *host = s + 1;
        *hl = (size_t) (close - s - 1);
        *end = (size_t) (close + 1 - s);
        return 0;
    }
    if (!(colon = memchr(s, ':', len)))
        return -EINVAL;
    *host = s;
    *hl = (size_t) (colon - s);
    *end = (size_t) (colon - s);
    return 0;
}

int net_endpoint_parse(const char *s, size_t len, struct net_endpoint *e)
{
    const char *host;
    size_t hl, at;
    if (host_part(s, len, &host, &hl, &at) < 0 || hl == 0 || hl >= sizeof e->host)
        return -EINVAL;
    const char *port = s + at + 1;
    size_t pl = 0;
    unsigned long value = 0;
    while (at + 1 + pl < len && port[pl] >= '0' && port[pl] <= '9' && pl < sizeof e->port)
        value = value * 10 + (unsigned long) (port[pl++] - '0');
    size_t end = at + 1 + pl;
    if (pl == 0 || pl >= sizeof e->port || value == 0 || value > 65535 ||
        (end < len && s[end] != ':'))
        return -EINVAL;
    memcpy(e->host, host, hl);
    e->host[hl] = '\0';
    memcpy(e->port, port, pl);
    e->port[pl] = '\0';
    return (int) end;
}
