/*
 * One run of bytes between memory and a file (rfs_move.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_move.h"

#include <errno.h>
#include <unistd.h>

int64_t rfs_move_run(int fd, int is_write, uint8_t *p, int64_t off, int64_t len)
{
    int64_t got = 0;
    while (got < len) {
        ssize_t n = is_write ? pwrite(fd, p + got, (size_t) (len - got), (off_t) (off + got))
                             : pread(fd, p + got, (size_t) (len - got), (off_t) (off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        got += n;
    }
    return got;
}
