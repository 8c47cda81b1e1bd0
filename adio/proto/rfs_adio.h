/*
 * What the drivers that speak the rfs protocol (rfs:, rdma:) share with
 * ROMIO: access modes as OPEN flags, ROMIO's lock calls as LOCK
 * arguments, and failures as MPI error codes with a message that says
 * who failed, doing what, and why.
 */
#ifndef RFS_ADIO_H_INCLUDED
#define RFS_ADIO_H_INCLUDED

#include "adio.h"
#include "proto/rfs_proto.h"

uint32_t rfs_adio_open_flags(int access_mode);
/* Permissions of a created file: MPI's perm, else 0666 (the server's umask applies). */
uint32_t rfs_adio_create_mode(ADIO_File fd);
/* ROMIO's SetLock arguments as an rfs lock kind and wait flag; 0, or
 * RFS_E_INVAL for a range the server cannot take. */
int rfs_adio_lock_args(int cmd, int type, ADIO_Offset offset, int whence, ADIO_Offset len,
                       uint32_t *kind, int *wait);

/*
 * The MPI error code of rc: 0 (MPI_SUCCESS), an rfs_status the server
 * answered, or a negative errno of the transport. The message reads
 * "WHO: WHAT PATH: REASON"; REASON is `reason` when given, else the
 * status or the transport failure (a timeout names the hint
 * `timeout_hint`).
 */
int rfs_adio_error(int rc, const char *myname, const char *who, const char *what,
                   const char *path, const char *timeout_hint, const char *reason);

#endif /* RFS_ADIO_H_INCLUDED */
