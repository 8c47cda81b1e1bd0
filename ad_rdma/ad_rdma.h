/*
 * The rdma: driver: MPI-IO on a file striped over several rfsd I/O
 * servers (docs/rdma.md). File names are rdma:/PATH; the servers come
 * from the rdma_servers hint, $ROMIO_RDMA_SERVERS or a configuration
 * file, in that order. Data moves through the stream transports of
 * adio/net (TCP, TLS) or adio/verbs; noncontiguous requests go as naive,
 * list or datatype I/O (adio/stripe).
 */
#ifndef AD_RDMA_H_INCLUDED
#define AD_RDMA_H_INCLUDED

#include "adio.h"
#include "romio_compat.h"
#include "rfs_adio.h"
#include "stripe/stripe_file.h"

#define ADIOI_RDMA_DEFAULT_TIMEOUT 120  /* seconds */
/* Set: every close prints the file's request statistics (stderr). */
#define ADIOI_RDMA_STATS_ENV "ROMIO_RDMA_STATS"
/* rdma_memory_segments=auto: noncontiguous memory goes down to the
 * transport as segments (gathered, scattered, registered as groups) when
 * its runs are this long on average; shorter ones are packed. */
#define ADIOI_RDMA_SEGMENTS_FROM 1024
/* rdma_pack_threshold: at most the verbs transport's staging buffer */
#define ADIOI_RDMA_PACK_MOST    (4u << 20)
/* rdma_inflight: at most 1 GiB of a process's list I/O in flight */
#define ADIOI_RDMA_INFLIGHT_MOST (1u << 30)
/* rdma_tcp_rcvbuf: the receive buffer of each TCP connection to a server.
 * The servers' replies to one read share the client's link, and with the
 * kernel's autotuning each of them may have megabytes in flight toward it:
 * in the lab they overflowed the client links' queues, and 256 KiB keeps
 * every server sending without a drop (docs/rdma.md has the numbers). */
#define ADIOI_RDMA_TCP_RCVBUF   262144
#define ADIOI_RDMA_TCP_RCVBUF_MOST (1 << 30)

/* rdma_io_method: the stripe methods, and ROMIO's data sieving. */
#define ADIOI_RDMA_SIEVE STRIPE_METHODS

/* fd->fs_ptr */
typedef struct ADIOI_RDMA_File {
    struct stripe_file sf;
    struct stripe_servers servers;
    struct rfs_adio_security sec;   /* TLS and the key: rfs_transport, rfs_key_file */
    char *path;                 /* the name opened: fd->filename, or its name in the
                                 * namespace when it lies on an rfs-mount */
    int method;                 /* enum stripe_method or ADIOI_RDMA_SIEVE */
    int timeout_s;
    int replicas;               /* rdma_replicas: copies of each object of a new file */
    int stats;                  /* rdma_stats=enable or $ROMIO_RDMA_STATS */
    uint8_t *view_enc;          /* the view's filetype, encoded when it changes */
    uint64_t view_len;
    int view_stale;
    int transport;              /* rdma_transport asked: ADIOI_RDMA_TRANSPORT_* */
    int verbs;                  /* the connections are verbs (else TCP or TLS) */
    int registration;           /* rdma_registration: NET_REG_* */
    uint32_t pack_max;          /* rdma_pack_threshold: below, verbs packs (0: its default) */
    int tcp_rcvbuf;             /* rdma_tcp_rcvbuf: bytes, 0: the kernel's autotuning */
    int coll;                   /* rdma_coll: ADIOI_RDMA_COLL_* */
    int coll_keep;              /* rdma_coll_cache=enable: reads stay hot on the servers */
    int64_t segments_from;      /* rdma_memory_segments: the mean memory run sent as is */
    uint64_t coll_group;        /* 0 until the first disk-directed call agrees on one */
    uint64_t coll_next;         /* the next call number: alike on every process */
    struct stripe_coll coll_now;    /* the call under way, its round counted in call */
    uint64_t coll_rounds_done;
    uint64_t coll_mine;         /* rounds this process has data for in the call */
    int coll_vote_two_phase;    /* this process cannot take disk-directed I/O */
    int coll_more;              /* the last round's agreement: some process has more */
    int coll_fallback;          /* the first round's agreement: all take two-phase */
} ADIOI_RDMA_File;

enum { ADIOI_RDMA_COLL_TWO_PHASE, ADIOI_RDMA_COLL_DISK_DIRECTED, ADIOI_RDMA_COLL_AUTO };
enum { ADIOI_RDMA_TRANSPORT_TCP, ADIOI_RDMA_TRANSPORT_VERBS, ADIOI_RDMA_TRANSPORT_AUTO };

/* ad_rdma_common.c */
/* An open rdma: file's servers, path, layout and how to connect: what a
 * second open of it needs (abt's stripe sink). */
void ADIOI_RDMA_Reach(ADIO_File fd, const struct stripe_servers **sv, const char **path,
                      const struct stripe_layout **layout, struct rfs_connect_opts *o);
/* abt's extent lease on the open file, taken on its objects' servers
 * (docs/protocol.md "Leases"): an MPI error code. */
int ADIOI_RDMA_Lease(ADIO_File fd, const struct rfs_lease_args *a, const char *myname);
int ADIOI_RDMA_Servers(MPI_Info info, struct stripe_servers *sv, char *why, size_t whylen);
void ADIOI_RDMA_Report_layout(ADIO_File fd, const ADIOI_RDMA_File *f);
int ADIOI_RDMA_Error(int rc, const char *myname, const ADIOI_RDMA_File *f, const char *what);
void ADIOI_RDMA_Contig_io(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                          int is_write, int *error_code);
void ADIOI_RDMA_Strided_io(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                           int is_write, int *error_code);
/* ad_rdma_strided.c: the view's encoding for the servers, and errors */
int ADIOI_RDMA_Prepare_view(ADIO_File fd, const struct dtype *file);
int ADIOI_RDMA_View_error(ADIO_File fd, int rc, int is_write);

/* ad_rdma_coll.c: rdma_coll=two_phase (ROMIO's), disk_directed or auto */
void ADIOI_RDMA_ReadStridedColl(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                                int *error_code);
void ADIOI_RDMA_WriteStridedColl(ADIO_File fd, const void *buf, romio_count_t count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Status *status, int *error_code);

void ADIOI_RDMA_Open(ADIO_File fd, int *error_code);
void ADIOI_RDMA_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);
void ADIOI_RDMA_Close(ADIO_File fd, int *error_code);
void ADIOI_RDMA_ReadContig(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                           int *error_code);
void ADIOI_RDMA_WriteContig(ADIO_File fd, const void *buf, romio_count_t count,
                            MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                            ADIO_Status *status, int *error_code);
void ADIOI_RDMA_ReadStrided(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                            int *error_code);
void ADIOI_RDMA_WriteStrided(ADIO_File fd, const void *buf, romio_count_t count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             ADIO_Status *status, int *error_code);
void ADIOI_RDMA_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t *fcntl_struct, int *error_code);
void ADIOI_RDMA_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
void ADIOI_RDMA_Flush(ADIO_File fd, int *error_code);
void ADIOI_RDMA_Delete(const char *filename, int *error_code);
void ADIOI_RDMA_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
/* ad_rdma_hints.c: the rdma_* hints of fd->info into f; MPI_SUCCESS or MPI_ERR_INFO_VALUE */
int ADIOI_RDMA_Get_hints(ADIO_File fd, ADIOI_RDMA_File *f, const char *myname);
int ADIOI_RDMA_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                       ADIO_Offset len);

#endif /* AD_RDMA_H_INCLUDED */
