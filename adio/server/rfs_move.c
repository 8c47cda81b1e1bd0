/*
 * One run of bytes between memory and a file (rfs_move.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "server/rfs_move.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>

int64_t rfs_move_run(int fd, int is_write, uint8_t *p, int64_t off, int64_t len)
{
    struct iovec one = { .iov_base = p, .iov_len = (size_t) len };
    return rfs_move_vector(fd, is_write, &one, 1, off);
}

int64_t rfs_move_vector(int fd, int is_write, struct iovec *iov, int n, int64_t off)
{
    int64_t got = 0;
    int i = 0;
    while (i < n && iov[i].iov_len == 0)
        i++;
    while (i < n) {
        int batch = n - i < IOV_MAX ? n - i : IOV_MAX;
        ssize_t r = is_write ? pwritev(fd, iov + i, batch, (off_t) (off + got))
                             : preadv(fd, iov + i, batch, (off_t) (off + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            break;
        got += r;
        /* past the buffers done, into the one done in part */
        for (; i < n && (size_t) r >= iov[i].iov_len; i++)
            r -= (ssize_t) iov[i].iov_len;
        if (i < n) {
            iov[i].iov_base = (uint8_t *) iov[i].iov_base + r;
            iov[i].iov_len -= (size_t) r;
        }
    }
    return got;
}
