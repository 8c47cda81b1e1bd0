/*
 * The sink of local files: its own descriptor, so the drain never touches
 * the descriptor ROMIO uses on the application thread.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "abt/abt_sink.h"

struct posix_sink {
    int fd;
};

static int posix_pwrite(void *ctx, const void *buf, uint64_t len, uint64_t offset)
{
    struct posix_sink *p = ctx;
    const char *c = buf;
    while (len > 0) {
        ssize_t n = pwrite(p->fd, c, len, (off_t) offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -EIO;
        c += n;
        len -= (uint64_t) n;
        offset += (uint64_t) n;
    }
    return 0;
}

static void posix_close(void *ctx)
{
    struct posix_sink *p = ctx;
    close(p->fd);
    free(p);
}

static const struct abt_sink_ops posix_ops = {
    "posix", 1, posix_pwrite, NULL, posix_close, NULL
};

int abt_sink_posix_open(struct abt_sink *s, const char *path)
{
    struct posix_sink *p = malloc(sizeof(*p));
    if (p == NULL)
        return -ENOMEM;
    p->fd = open(path, O_WRONLY | O_CLOEXEC);
    if (p->fd < 0) {
        int err = -errno;
        free(p);
        return err;
    }
    s->ops = &posix_ops;
    s->ctx = p;
    return 0;
}
