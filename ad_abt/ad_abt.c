/*
 * The abt: driver's ADIO function table. Only the calls that touch data or
 * file state are ours; collective writes and the nonblocking calls are
 * ROMIO's generic code, which comes back through our contig and strided
 * calls and our SetLock (romio-integration.md section 7, the funnel
 * property). Strided and collective reads are the inner driver's own.
 */
#include "ad_abt.h"

struct ADIOI_Fns_struct ADIO_ABT_operations = {
    ADIOI_ABT_Open,                 /* Open */
    ADIOI_COMPAT_OpenColl,          /* OpenColl */
    ADIOI_ABT_ReadContig,           /* ReadContig */
    ADIOI_ABT_WriteContig,          /* WriteContig */
    ADIOI_ABT_ReadStridedColl,      /* ReadStridedColl */
    ADIOI_ABT_WriteStridedColl,     /* WriteStridedColl */
    ADIOI_GEN_SeekIndividual,       /* SeekIndividual */
    ADIOI_ABT_Fcntl,                /* Fcntl */
    ADIOI_ABT_SetInfo,              /* SetInfo */
    ADIOI_ABT_ReadStrided,          /* ReadStrided */
    ADIOI_ABT_WriteStrided,         /* WriteStrided */
    ADIOI_ABT_Close,                /* Close */
    ADIOI_FAKE_IreadContig,         /* IreadContig */
    ADIOI_FAKE_IwriteContig,        /* IwriteContig */
    ADIOI_FAKE_IODone,              /* ReadDone (unused under MPICH) */
    ADIOI_FAKE_IODone,              /* WriteDone (unused under MPICH) */
    ADIOI_FAKE_IOComplete,          /* ReadComplete (unused under MPICH) */
    ADIOI_FAKE_IOComplete,          /* WriteComplete (unused under MPICH) */
    ADIOI_FAKE_IreadStrided,        /* IreadStrided */
    ADIOI_FAKE_IwriteStrided,       /* IwriteStrided */
    ADIOI_ABT_Flush,                /* Flush */
    ADIOI_ABT_Resize,               /* Resize */
    ADIOI_ABT_Delete,               /* Delete */
    ADIOI_ABT_Feature,              /* Feature */
    "ABT: active buffering with threads (romio-drivers suite)",
    ADIOI_GEN_IreadStridedColl,     /* IreadStridedColl */
    ADIOI_GEN_IwriteStridedColl,    /* IwriteStridedColl */
    ADIOI_ABT_SetLock               /* SetLock */
};
