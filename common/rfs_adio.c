/*
 * ROMIO glue of the rfs-protocol drivers (rfs_adio.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adio.h"
#include "rfs_adio.h"

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
    case RFS_E_AUTH:
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
    if (rc == -EKEYREJECTED) {
        errclass = MPI_ERR_ACCESS;
        key = "**fileaccess";
        key_s = "**fileaccess %s";
    }
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

/* The hint KEY of info into value (MPI_MAX_INFO_VAL + 1 bytes): 1 if set. */
static int hint_value(MPI_Info info, const char *key, char *value)
{
    int flag = 0;
    if (info != MPI_INFO_NULL)
        ADIOI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    return flag;
}

static const char *const security_hints[][2] = {
    { "rfs_transport", RFS_ADIO_TRANSPORT_ENV },
    { "rfs_key_file", RFS_ADIO_KEY_FILE_ENV },
    { "rfs_tls_ca", RFS_ADIO_TLS_CA_ENV },
};

void rfs_adio_security_hints(ADIO_File fd, MPI_Info users_info)
{
    char value[MPI_MAX_INFO_VAL + 1];
    for (size_t i = 0; i < sizeof security_hints / sizeof security_hints[0]; i++) {
        const char *key = security_hints[i][0], *env = getenv(security_hints[i][1]);
        if (hint_value(users_info, key, value))
            ADIOI_Info_set(fd->info, key, value);
        else if (env && *env && !hint_value(fd->info, key, value))
            ADIOI_Info_set(fd->info, key, env);
    }
    if (!hint_value(fd->info, "rfs_transport", value))
        ADIOI_Info_set(fd->info, "rfs_transport", "tcp");
}

static int security_error(const char *myname, const char *msg)
{
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                MPI_ERR_ACCESS, "**fileaccess", "**fileaccess %s", msg);
}

/* Without info (MPI_File_delete) the environment alone decides. */
static int security_setting(MPI_Info info, int which, char *value)
{
    const char *env = getenv(security_hints[which][1]);
    if (hint_value(info, security_hints[which][0], value))
        return 1;
    if (info != MPI_INFO_NULL || !env || !*env)
        return 0;
    snprintf(value, MPI_MAX_INFO_VAL + 1, "%s", env);
    return 1;
}

int rfs_adio_security_init(MPI_Info info, const char *myname, struct rfs_adio_security *sec)
{
    char transport[MPI_MAX_INFO_VAL + 1], key_file[MPI_MAX_INFO_VAL + 1];
    char ca[MPI_MAX_INFO_VAL + 1], err[1024];
    memset(sec, 0, sizeof *sec);
    int chosen = security_setting(info, 0, transport);
    int tls = chosen && strcmp(transport, "tls") == 0;
    if (chosen && !tls && strcmp(transport, "tcp") != 0)
        return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                    MPI_ERR_INFO_VALUE, "**infoval", 0);
    sec->has_key = security_setting(info, 1, key_file);
    if (sec->has_key && rfs_key_load(key_file, &sec->key, err, sizeof err) < 0)
        return security_error(myname, err);
    /* With a key, the key proves the server over the TLS channel binding;
     * without one, the certificate must. */
    int has_ca = security_setting(info, 2, ca);
    if (tls && net_tls_client_new(has_ca ? ca : NULL, has_ca || !sec->has_key, &sec->tls, err,
                                  sizeof err) < 0) {
        rfs_adio_security_fini(sec);
        return security_error(myname, err);
    }
    return MPI_SUCCESS;
}

void rfs_adio_security_fini(struct rfs_adio_security *sec)
{
    if (sec->has_key)
        rfs_key_wipe(&sec->key);
    net_tls_free(sec->tls);
    memset(sec, 0, sizeof *sec);
}

void rfs_adio_connect_opts(const struct rfs_adio_security *sec, int timeout_ms,
                           struct rfs_connect_opts *o)
{
    *o = (struct rfs_connect_opts) {
        .transport = sec->tls ? &net_tls_transport : &net_tcp_transport,
        .net = { .timeout_ms = timeout_ms, .tls = sec->tls },
        .key = sec->has_key ? &sec->key : NULL,
    };
}
