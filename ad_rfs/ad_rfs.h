/*
 * The rfs: driver: MPI-IO on a file that lives on a remote rfsd server.
 * File names are rfs:HOST:PORT:/PATH (ROMIO strips "rfs:" before the
 * driver sees them). See docs/rfs.md.
 */
#ifndef AD_RFS_H_INCLUDED
#define AD_RFS_H_INCLUDED

#include "adio.h"
#include "romio_compat.h"
#include "rfs_adio.h"
#include "proto/rfs_client.h"
#include "proto/rfs_shared.h"

/* Hints of this driver (docs/rfs.md), with their defaults. */
#define ADIOI_RFS_DEFAULT_TIMEOUT 120   /* seconds */
/* Names without HOST:PORT: go to the server named here (HOST:PORT). */
#define ADIOI_RFS_SERVER_ENV "ROMIO_RFS_SERVER"
/* Set: every close prints what crossed the connection (stderr). */
#define ADIOI_RFS_STATS_ENV "ROMIO_RFS_STATS"
#define ADIOI_RFS_NAME_HELP "rfs: expected rfs:HOST:PORT:/PATH, or " ADIOI_RFS_SERVER_ENV "=HOST:PORT"

/* fd->fs_ptr: the file is a handle on a connection to its server that
 * the process's other rfs: files there share (rfs_shared.h), except with
 * TLS or rfs_defer_open. */
typedef struct ADIOI_RFS_File {
    struct rfs_shared_file conn;
    struct rfs_adio_security sec;   /* TLS and the key: rfs_transport, rfs_key_file */
    char host[256];
    char port[16];
    char *name;                 /* the name opened: fd->filename, or its name in the
                                 * namespace when it lies on an rfs-mount */
    const char *path;           /* in name, on the server */
    const char *why;            /* what went wrong setting up TLS or authentication */
    int connected;
    uint32_t open_flags;        /* RFS_O_* of the open */
    uint32_t open_mode;         /* permissions for a created file */
    int defer_open;             /* rfs_defer_open: OPEN rides on the next request */
    int defer_close;            /* rfs_defer_close: do not wait for CLOSE's reply */
    int timeout_s;              /* rfs_timeout */
    int noncontig_native;       /* rfs_noncontig=native (else ROMIO's generic code) */
    int view_stale;             /* the view may have changed since last queued */
} ADIOI_RFS_File;

/* ad_rfs_common.c */
int ADIOI_RFS_Parse_name(const char *name, char *host, size_t hostlen, char *port,
                         size_t portlen, const char **path);
int ADIOI_RFS_Connect(ADIOI_RFS_File *f);
void ADIOI_RFS_Disconnect(ADIOI_RFS_File *f);
/* An open rfs: file's server, its path there and how to connect (security,
 * rfs_timeout): what a second connection to it needs (abt's rfs sink). */
void ADIOI_RFS_Reach(ADIO_File fd, const char **host, const char **port, const char **path,
                     struct rfs_connect_opts *o);
/* abt's extent lease on the open file, taken through its connection
 * (docs/protocol.md "Leases"): an MPI error code. */
int ADIOI_RFS_Lease(ADIO_File fd, const struct rfs_lease_args *a, const char *myname);
int ADIOI_RFS_Ready(ADIOI_RFS_File *f);
int ADIOI_RFS_Error(int rc, const char *myname, const ADIOI_RFS_File *f, const char *what);
MPI_Offset ADIOI_RFS_Contig_io(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                               int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                               int is_write, int *error_code);
void ADIOI_RFS_Strided_io(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                          int is_write, int *error_code);
MPI_Offset ADIOI_RFS_Status_bytes(ADIO_Status *status, int error_code);
int ADIOI_RFS_Coll_sync(ADIO_File fd, int *error_code);

void ADIOI_RFS_Open(ADIO_File fd, int *error_code);
void ADIOI_RFS_Close(ADIO_File fd, int *error_code);
void ADIOI_RFS_ReadContig(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                          int *error_code);
void ADIOI_RFS_WriteContig(ADIO_File fd, const void *buf, romio_count_t count,
                           MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                           ADIO_Status *status, int *error_code);
void ADIOI_RFS_ReadStrided(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                           int *error_code);
void ADIOI_RFS_WriteStrided(ADIO_File fd, const void *buf, romio_count_t count,
                            MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                            ADIO_Status *status, int *error_code);
void ADIOI_RFS_ReadStridedColl(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                               int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                               int *error_code);
void ADIOI_RFS_WriteStridedColl(ADIO_File fd, const void *buf, romio_count_t count,
                                MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                ADIO_Status *status, int *error_code);
void ADIOI_RFS_IreadStridedColl(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, MPI_Request *request,
                                int *error_code);
void ADIOI_RFS_IwriteStridedColl(ADIO_File fd, const void *buf, romio_count_t count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 MPI_Request *request, int *error_code);
void ADIOI_RFS_IreadContig(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Request *request,
                           int *error_code);
void ADIOI_RFS_IwriteContig(ADIO_File fd, const void *buf, romio_count_t count,
                            MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                            ADIO_Request *request,
                            int *error_code);
void ADIOI_RFS_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t *fcntl_struct, int *error_code);
void ADIOI_RFS_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
void ADIOI_RFS_Flush(ADIO_File fd, int *error_code);
void ADIOI_RFS_Delete(const char *filename, int *error_code);
void ADIOI_RFS_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
/* ad_rfs_hints.c: the rfs_* hints of fd->info into f; MPI_SUCCESS or MPI_ERR_INFO_VALUE */
int ADIOI_RFS_Get_hints(ADIO_File fd, ADIOI_RFS_File *f, const char *myname);
int ADIOI_RFS_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                      ADIO_Offset len);
int ADIOI_RFS_Feature(ADIO_File fd, int flag);

#endif /* AD_RFS_H_INCLUDED */
