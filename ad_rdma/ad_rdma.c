/*
 * The rdma: driver's ADIO function table. Contiguous and noncontiguous
 * independent I/O, size, resize, sync, delete and locks are ours;
 * blocking collective I/O is disk-directed (each process's request
 * straight to the servers, which merge them: ad_rdma_coll.c) or ROMIO's
 * two-phase with file domains aligned to the stripe unit (Open sets
 * striping_unit), by rdma_coll; nonblocking collectives are ROMIO's
 * two-phase; nonblocking calls complete at once through ROMIO's generic code.
 * ROMIO's generic feature set holds: object 0's server keeps the locks
 * (atomic mode, data-sieving writes, shared file pointer), and one
 * process truncates every object, so resize needs no deferred open.
 */
#include "ad_rdma.h"

struct ADIOI_Fns_struct ADIO_RDMA_operations = {
    ADIOI_RDMA_Open,                /* Open */
    ADIOI_RDMA_OpenColl,            /* OpenColl */
    ADIOI_RDMA_ReadContig,          /* ReadContig */
    ADIOI_RDMA_WriteContig,         /* WriteContig */
    ADIOI_RDMA_ReadStridedColl,     /* ReadStridedColl */
    ADIOI_RDMA_WriteStridedColl,    /* WriteStridedColl */
    ADIOI_GEN_SeekIndividual,       /* SeekIndividual */
    ADIOI_RDMA_Fcntl,               /* Fcntl */
    ADIOI_RDMA_SetInfo,             /* SetInfo */
    ADIOI_RDMA_ReadStrided,         /* ReadStrided */
    ADIOI_RDMA_WriteStrided,        /* WriteStrided */
    ADIOI_RDMA_Close,               /* Close */
    ADIOI_FAKE_IreadContig,         /* IreadContig */
    ADIOI_FAKE_IwriteContig,        /* IwriteContig */
    ADIOI_FAKE_IODone,              /* ReadDone (unused under MPICH) */
    ADIOI_FAKE_IODone,              /* WriteDone (unused under MPICH) */
    ADIOI_FAKE_IOComplete,          /* ReadComplete (unused under MPICH) */
    ADIOI_FAKE_IOComplete,          /* WriteComplete (unused under MPICH) */
    ADIOI_GEN_IreadStrided,         /* IreadStrided */
    ADIOI_GEN_IwriteStrided,        /* IwriteStrided */
    ADIOI_RDMA_Flush,               /* Flush */
    ADIOI_RDMA_Resize,              /* Resize */
    ADIOI_RDMA_Delete,              /* Delete */
    ADIOI_GEN_Feature,              /* Feature */
    "RDMA: striped parallel file system client (romio-drivers suite)",
    ADIOI_GEN_IreadStridedColl,     /* IreadStridedColl */
    ADIOI_GEN_IwriteStridedColl,    /* IwriteStridedColl */
    ADIOI_RDMA_SetLock              /* SetLock */
};
