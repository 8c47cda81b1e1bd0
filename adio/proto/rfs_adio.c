/*
 * ROMIO glue of the rfs-protocol drivers (rfs_adio.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "adio.h"
#include "proto/rfs_adio.h"

uint32_t rfs_adio_open_flags(int access_mode)
{
    uint32_t flags = access_mode & ADIO_RDWR ? RFS_O_RDWR
                   : access_mode & ADIO_WRONLY ? RFS_O_WRONLY : RFS_O_RDONLY;
    if (access_mode & ADIO_CREATE)
        flags |= RFS_O_CREAT;
    if (access_mode & ADIO_EXCL)
        flags |= RFS_O_EXCL;
    return flags;
}

uint32_t rfs_adio_create_mode(ADIO_File fd)
{
    return fd->perm != ADIO_PERM_NULL ? (uint32_t) fd->perm : 0666;
}

int rfs_adio_lock_args(int cmd, int type, ADIO_Offset offset, int whence, ADIO_Offset len,
                       uint32_t *kind, int *wait)
{
    *kind = type == F_RDLCK ? RFS_LOCK_READ : type == F_WRLCK ? RFS_LOCK_WRITE : RFS_LOCK_UNLOCK;
    *wait = cmd == F_SETLKW
#ifdef F_SETLKW64
        || cmd == F_SETLKW64
#endif
        ;
    return whence != SEEK_SET || offset < 0 || len < 0 ? RFS_E_INVAL : 0;
}

static int class_of_status(int status, const char **key, const char **key_s)
{
    *key = "**io";
    *key_s = "**io %s";
    switch (status) {
    case RFS_E_NOENT:
    case RFS_E_NOTDIR:
        *key = "**filenoexist";
        *key_s = "**filenoexist %s";
        return MPI_ERR_NO_SUCH_FILE;
    case RFS_E_ACCES:
    case RFS_E_ESCAPE:
        *key = "**fileaccess";
        *key_s = "**fileaccess %s";
        return MPI_ERR_ACCESS;
    case RFS_E_EXIST: return MPI_ERR_FILE_EXISTS;
    case RFS_E_NOSPC: return MPI_ERR_NO_SPACE;
    case RFS_E_DQUOT: return MPI_ERR_QUOTA;
    case RFS_E_ROFS: return MPI_ERR_READ_ONLY;
    case RFS_E_ISDIR:
    case RFS_E_NAMETOOLONG:
    case RFS_E_INVAL:
        *key = "**filename";
        *key_s = "**filename %s";
        return MPI_ERR_BAD_FILE;
    case RFS_E_BADF: return MPI_ERR_AMODE;
    default: return MPI_ERR_IO;
    }
}

int rfs_adio_error(int rc, const char *myname, const char *who, const char *what,
                   const char *path, const char *timeout_hint, const char *reason)
{
    char msg[1024], timeout[64];
    const char *key = "**io", *key_s = "**io %s";
    int errclass = MPI_ERR_IO;
    if (rc == 0)
        return MPI_SUCCESS;
    if (rc > 0)
        errclass = class_of_status(rc, &key, &key_s);
    if (!reason && rc > 0)
        reason = rfs_status_str(rc);
    if (!reason) {
        snprintf(timeout, sizeof timeout, "no answer within %s", timeout_hint);
        reason = rc == -ETIMEDOUT ? timeout
               : rc == -ECONNRESET || rc == -ENOTCONN ? "connection lost" : strerror(-rc);
    }
    snprintf(msg, sizeof msg, "%s: %s %s: %s", who, what, path ? path : "", reason);
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__, errclass,
                                key, key_s, msg);
}
