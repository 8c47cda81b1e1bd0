/*
 * One run of bytes between memory and a file, for the request engine and
 * the collective calls alike. No MPI here.
 */
#ifndef RFS_MOVE_H_INCLUDED
#define RFS_MOVE_H_INCLUDED

#include <stdint.h>

/* pread or pwrite all of [off, off + len) of fd (a read stops at end of
 * file); returns the bytes moved or -errno. */
int64_t rfs_move_run(int fd, int is_write, uint8_t *p, int64_t off, int64_t len);

#endif /* RFS_MOVE_H_INCLUDED */
