/*
 * The abt: driver: active buffering with threads over any other driver.
 * abt:NAME opens NAME with the driver ROMIO picks for it (abt:rfs:h:p:/f,
 * abt:ufs:/f, abt:/f) as a shadow ADIO file of that driver; writes are
 * copied into the engine of adio/abt and drained in the background into
 * a sink of the same file that needs no MPI (posix for ufs/nfs, an rfs
 * connection of its own for rfs), or, for other drivers, drained through
 * the inner driver on the application thread. Everything else is
 * forwarded to the inner driver after the pending writes it could see are
 * drained. See docs/abt.md.
 *
 * Every write path of ROMIO ends in this driver's WriteContig (the table
 * uses ROMIO's fd-agnostic generic collective write code) or its
 * WriteStrided, which copies the view's file runs into the engine (a
 * collective write with runs large enough does the same); reads
 * drain what they could see and then are the inner driver's.
 */
#ifndef AD_ABT_H_INCLUDED
#define AD_ABT_H_INCLUDED

#include "adio.h"
#include "romio_compat.h"
#include "abt/abt.h"
#include "abt/abt_model.h"

/* Set: every close prints the file's buffering statistics (stderr). */
#define ADIOI_ABT_STATS_ENV "ROMIO_ABT_STATS"
/* Under ROMIO_FSTYPE_FORCE=abt:, the inner driver's prefix for plain names
 * (for example rfs:, with ROMIO_RFS_SERVER); default: the file system's. */
#define ADIOI_ABT_INNER_ENV "ROMIO_ABT_INNER"

/* How a collective write goes (ad_abt_write.c). Every process takes the
 * largest that any of them asks for, so all take the same. */
enum ADIOI_ABT_Coll_path {
    ADIOI_ABT_OWN_RUNS,         /* each process buffers its own runs of the view */
    ADIOI_ABT_EXCHANGE,         /* ROMIO's two-phase exchange into the aggregators' buffers */
    ADIOI_ABT_THROUGH,          /* the inner driver's own collective write */
    ADIOI_ABT_COLL_AUTO         /* abt_coll_write=auto: chosen per call */
};

typedef struct ADIOI_ABT_File {
    ADIO_File inner;            /* the shadow file of the inner driver */
    struct abt_engine *engine;  /* NULL when the file cannot be written */
    int locks_held;             /* SetLock locks held: writes go through */
    int defer_close;
    int coll_write;             /* abt_coll_write: enum ADIOI_ABT_Coll_path */
    int buffer_rdwr;            /* abt_buffer_rdwr: enum ADIOI_ABT_Rdwr */
    uint64_t lease_owner;       /* this handle's token on the inner file's servers;
                                 * 0: no leases (ad_abt_sink.c) */
    uint64_t lease_id;          /* the newest lease taken */
    uint64_t coll_call;         /* the collective write under way, alike in its
                                 * processes (ADIOI_ABT_Order_collective); 0: none */
    int visibility_reported;    /* romio_visibility_immediate as last reported; -1: not yet */
    int background;             /* the sink drains on abt's thread */
    int print_stats;
    char *stage_dir;
    ADIO_File fd;               /* the user's file, while registered */
    MPI_Comm open_comm;         /* the processes that opened it together (ROMIO's
                                 * create step opens alone, over MPI_COMM_SELF) */
    struct abt_rate coll_rate[ADIOI_ABT_COLL_AUTO];    /* this process's collective
                                                         * writes by each path, bytes/s */
    unsigned coll_writes;       /* collective writes so far, as in every process */
    struct ADIOI_ABT_File *next;    /* the process's open abt: files (ad_abt_order.c) */
} ADIOI_ABT_File;

/* abt_buffer_rdwr: writes to a file opened read-write are written through,
 * buffered, or buffered where the inner file's servers keep leases. */
enum ADIOI_ABT_Rdwr { ADIOI_ABT_RDWR_DISABLE, ADIOI_ABT_RDWR_ENABLE, ADIOI_ABT_RDWR_AUTO };

/* What the abt_* hints say (docs/abt.md) */
typedef struct ADIOI_ABT_Hints {
    struct abt_config cfg;      /* but stage_dir */
    int defer_close;
    int stats;
    int coll_write;
    int buffer_rdwr;
    char stage_dir[MPI_MAX_INFO_VAL + 1];   /* none: no staging */
} ADIOI_ABT_Hints;

/* Which handles of a file in this process ADIOI_ABT_Drain_range drains. */
enum { ADIOI_ABT_THIS = 1, ADIOI_ABT_OTHERS = 2, ADIOI_ABT_ALL_HANDLES = 3 };

/* ad_abt_common.c */
int ADIOI_ABT_Resolve_inner(const char *name, int *type, ADIOI_Fns **ops, const char **inner);
void ADIOI_ABT_Sync_shadow(ADIO_File fd);
int ADIOI_ABT_Hand_over(ADIO_File fd, const char *myname);
int ADIOI_ABT_Rdwr_through(ADIO_File fd);
int ADIOI_ABT_Buffering(ADIO_File fd);
void ADIOI_ABT_Report_visibility(ADIO_File fd);
int ADIOI_ABT_Error(int rc, const char *myname, const char *filename);
ADIO_Offset ADIOI_ABT_Extent(ADIO_File fd, romio_count_t count, MPI_Datatype datatype,
                             int file_ptr_type,
                             ADIO_Offset offset, ADIO_Offset *start);
void ADIOI_ABT_Print_stats(const char *name, struct abt_engine *e);
/* ad_abt_order.c */
void ADIOI_ABT_Register(ADIO_File fd);
void ADIOI_ABT_Unregister(ADIO_File fd);
int ADIOI_ABT_Drain_range(ADIO_File fd, int which, uint64_t off, uint64_t len,
                          const char *myname);
int ADIOI_ABT_Drain(ADIO_File fd, const char *myname);
void ADIOI_ABT_Pending(ADIO_File fd, uint64_t *lo, uint64_t *hi);
int ADIOI_ABT_Agree(MPI_Comm comm, int err, const char *myname);
int ADIOI_ABT_Order_collective(ADIO_File fd, romio_count_t count, MPI_Datatype datatype,
                               int file_ptr_type, ADIO_Offset offset, int *path,
                               const char *myname);
/* ad_abt_sink.c: the sink, and leases on the inner file's servers
 * (rfs:, rdma:) where abt_buffer_rdwr allows them and the servers keep
 * them: a->lease_owner is set then */
int ADIOI_ABT_Open_sink(ADIO_File fd, struct abt_sink *sink);
int ADIOI_ABT_Lease_begin(ADIO_File fd, uint64_t off, uint64_t len, const char *myname);
void ADIOI_ABT_Lease_end(ADIO_File fd);
int ADIOI_ABT_Leasing(ADIO_File fd);
/* ad_abt_hints.c: the abt_* hints of fd->info (MPI_SUCCESS or
 * MPI_ERR_INFO_VALUE), then what they configure */
int ADIOI_ABT_Get_hints(ADIO_File fd, ADIOI_ABT_Hints *h, const char *myname);
void ADIOI_ABT_Configure(const ADIOI_ABT_Hints *h, struct abt_config *cfg, ADIOI_ABT_File *a);
/* ad_abt_close.c */
void ADIOI_ABT_Finish_deferred(const char *name);

void ADIOI_ABT_Open(ADIO_File fd, int *error_code);
void ADIOI_ABT_Close(ADIO_File fd, int *error_code);
void ADIOI_ABT_ReadContig(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                          int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                          int *error_code);
void ADIOI_ABT_WriteContig(ADIO_File fd, const void *buf, romio_count_t count,
                           MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                           ADIO_Status *status, int *error_code);
void ADIOI_ABT_ReadStrided(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                           int *error_code);
void ADIOI_ABT_ReadStridedColl(ADIO_File fd, void *buf, romio_count_t count, MPI_Datatype datatype,
                               int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                               int *error_code);
void ADIOI_ABT_WriteStrided(ADIO_File fd, const void *buf, romio_count_t count,
                            MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                            ADIO_Status *status, int *error_code);
void ADIOI_ABT_WriteStridedColl(ADIO_File fd, const void *buf, romio_count_t count,
                                MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                ADIO_Status *status, int *error_code);
void ADIOI_ABT_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t *fcntl_struct, int *error_code);
void ADIOI_ABT_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
void ADIOI_ABT_Flush(ADIO_File fd, int *error_code);
void ADIOI_ABT_Delete(const char *filename, int *error_code);
void ADIOI_ABT_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
int ADIOI_ABT_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                      ADIO_Offset len);
int ADIOI_ABT_Feature(ADIO_File fd, int flag);

#endif /* AD_ABT_H_INCLUDED */
