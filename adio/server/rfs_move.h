/*
 * One run of bytes between memory and a file, for the request engine and
 * the collective calls alike. No MPI here.
 */
#ifndef RFS_MOVE_H_INCLUDED
#define RFS_MOVE_H_INCLUDED

#include <stdint.h>
#include <sys/uio.h>

/* pread or pwrite all of [off, off + len) of fd (a read stops at end of
 * file); returns the bytes moved or -errno. */
int64_t rfs_move_run(int fd, int is_write, uint8_t *p, int64_t off, int64_t len);

/* The same for the run from off into (or from) the n buffers of iov, in
 * order, with as few system calls as the kernel allows; iov is used up. */
int64_t rfs_move_vector(int fd, int is_write, struct iovec *iov, int n, int64_t off);

#endif /* RFS_MOVE_H_INCLUDED */
