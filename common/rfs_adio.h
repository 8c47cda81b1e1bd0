/*
 * What the drivers that speak the rfs protocol (rfs:, rdma:) share with
 * ROMIO: access modes as OPEN flags, ROMIO's lock calls as LOCK
 * arguments, and failures as MPI error codes with a message that says
 * who failed, doing what, and why.
 */
#ifndef RFS_ADIO_H_INCLUDED
#define RFS_ADIO_H_INCLUDED

#include "adio.h"
#include "proto/rfs_auth.h"
#include "proto/rfs_client.h"
#include "proto/rfs_proto.h"
#include "mount/mount_desc.h"

/* Environment defaults of the security hints (docs/security.md). */
#define RFS_ADIO_KEY_FILE_ENV  "ROMIO_RFS_KEY_FILE"
#define RFS_ADIO_TRANSPORT_ENV "ROMIO_RFS_TRANSPORT"
#define RFS_ADIO_TLS_CA_ENV    "ROMIO_RFS_TLS_CA"

/* How a file's connections to rfsd are secured: the key it proves and
 * the TLS configuration (NULL: plain TCP). */
struct rfs_adio_security {
    struct rfs_key key;
    int has_key;
    struct net_tls *tls;
};

/*
 * SetInfo: rfs_transport, rfs_key_file and rfs_tls_ca (one table, as
 * adio_hints_install) from users_info, the environment filling what it
 * leaves out, so that MPI_File_get_info reports what is in effect (a
 * path, never a secret). They act at open only.
 */
int rfs_adio_security_install(ADIO_File fd, MPI_Info users_info, const char *myname);
/* Open: load the key and set up TLS as info (or, with MPI_INFO_NULL, the
 * environment) says. MPI_SUCCESS or an MPI error code; an rfs_transport
 * other than tcp or tls is MPI_ERR_INFO_VALUE: a typo must not fall back
 * to plain TCP. */
int rfs_adio_security_init(MPI_Info info, const char *myname, struct rfs_adio_security *sec);
void rfs_adio_security_fini(struct rfs_adio_security *sec);
void rfs_adio_connect_opts(const struct rfs_adio_security *sec, int timeout_ms,
                           struct rfs_connect_opts *o);

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

/*
 * Paths on an rfs-mount (mount_adio.c): the name to open is NAME's name in
 * the namespace of `prefix` ("rdma:" or "rfs:", without the prefix) when
 * NAME lies on an rfs-mount, and the mount's hints (server list, key, TLS)
 * go into *info (created when MPI_INFO_NULL): the file is reached as the
 * mount reaches it. Else it is NAME itself. *out is the caller's to
 * ADIOI_Free. MPI_SUCCESS, or MPI_ERR_BAD_FILE for a path of another
 * driver's mount, a malformed description, or a mount that cannot be
 * asked. The collective form takes rank 0's view, so that every process
 * of comm opens one file.
 */
int rfs_adio_mount_name(const char *name, const char *prefix, const char *myname, char **out,
                        MPI_Info *info);
int rfs_adio_mount_name_coll(MPI_Comm comm, const char *name, const char *prefix,
                             const char *myname, char **out, MPI_Info *info);
/* A driver's Delete: delete_named(name, info, error_code) on FILENAME's
 * name as rfs_adio_mount_name resolves it (info: the mount's hints, or
 * MPI_INFO_NULL), freed after. */
typedef void (*rfs_adio_delete_fn)(char *name, MPI_Info info, int *error_code);
void rfs_adio_mount_delete(const char *filename, const char *prefix, const char *myname,
                           rfs_adio_delete_fn delete_named, int *error_code);

#endif /* RFS_ADIO_H_INCLUDED */
