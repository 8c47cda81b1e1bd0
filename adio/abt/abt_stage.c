#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "abt/abt_stage.h"

int abt_stage_open(struct abt_stage *s, const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/abt-stage-XXXXXX", dir) >= (int) sizeof(path))
        return -ENAMETOOLONG;
    s->fd = mkostemp(path, O_CLOEXEC);
    if (s->fd < 0)
        return -errno;
    unlink(path);
    s->end = 0;
    s->records = s->writers = 0;
    s->failed = 0;
    return 0;
}

int abt_stage_write(struct abt_stage *s, uint64_t at, const void *buf, uint64_t len)
{
    const char *c = buf;
    while (len > 0) {
        ssize_t n = pwrite(s->fd, c, len, (off_t) at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -ENOSPC;
        c += n;
        len -= (uint64_t) n;
        at += (uint64_t) n;
    }
    return 0;
}

int abt_stage_read(struct abt_stage *s, uint64_t at, void *buf, uint64_t len)
{
    char *c = buf;
    while (len > 0) {
        ssize_t n = pread(s->fd, c, len, (off_t) at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        c += n;
        len -= (uint64_t) n;
        at += (uint64_t) n;
    }
    return 0;
}

void abt_stage_reset_if_empty(struct abt_stage *s)
{
    if (s->records == 0 && s->writers == 0 && s->end > 0) {
        s->end = 0;
        if (ftruncate(s->fd, 0) != 0)
            s->failed = 1;
    }
}

void abt_stage_close(struct abt_stage *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}
