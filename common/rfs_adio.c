/*
 * ROMIO glue of the rfs-protocol drivers (rfs_adio.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "adio.h"
#include "adio_hints.h"
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

/* What the security hints decode to: "" is no key file, no CA. */
struct security_settings {
    int tls;
    char key_file[MPI_MAX_INFO_VAL + 1];
    char ca[MPI_MAX_INFO_VAL + 1];
};

static const char *const transports[] = { "tcp", "tls", NULL };

static const struct adio_hint security_hints[] = {
    { .name = "rfs_transport", .kind = ADIO_HINT_WORD, .words = transports, .dflt = "tcp",
      .env = RFS_ADIO_TRANSPORT_ENV, .at_open = 1,
      .to = ADIO_HINT_TO(struct security_settings, tls) },
    { .name = "rfs_key_file", .kind = ADIO_HINT_TEXT, .accepted = "a key file's name",
      .env = RFS_ADIO_KEY_FILE_ENV, .at_open = 1,
      .to = ADIO_HINT_TO(struct security_settings, key_file) },
    { .name = "rfs_tls_ca", .kind = ADIO_HINT_TEXT, .accepted = "a PEM file's name",
      .env = RFS_ADIO_TLS_CA_ENV, .at_open = 1,
      .to = ADIO_HINT_TO(struct security_settings, ca) },
};

#define SECURITY_HINTS (sizeof security_hints / sizeof security_hints[0])

int rfs_adio_security_install(ADIO_File fd, MPI_Info users_info, const char *myname)
{
    return adio_hints_install(fd, users_info, security_hints, SECURITY_HINTS, myname);
}

static int security_error(const char *myname, const char *msg)
{
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                MPI_ERR_ACCESS, "**fileaccess", "**fileaccess %s", msg);
}

int rfs_adio_security_init(MPI_Info info, const char *myname, struct rfs_adio_security *sec)
{
    struct security_settings s = { 0, "", "" };
    char err[1024];
    memset(sec, 0, sizeof *sec);
    int rc = adio_hints_decode(info, security_hints, SECURITY_HINTS, 0, &s, myname);
    if (rc != MPI_SUCCESS)
        return rc;
    sec->has_key = s.key_file[0] != '\0';
    if (sec->has_key && rfs_key_load(s.key_file, &sec->key, err, sizeof err) < 0)
        return security_error(myname, err);
    /* With a key, the key proves the server over the TLS channel binding;
     * without one, the certificate must. */
    int has_ca = s.ca[0] != '\0';
    if (s.tls && net_tls_client_new(has_ca ? s.ca : NULL, has_ca || !sec->has_key, &sec->tls,
                                    err, sizeof err) < 0) {
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
