/*
 * The rfs: driver's ADIO function table. Everything that touches the file
 * is ours; the strided, collective and nonblocking-strided slots use
 * ROMIO's fd-agnostic generic code, which comes back through our contig
 * calls and our SetLock (romio-integration.md section 1).
 */
#include "ad_rfs.h"

struct ADIOI_Fns_struct ADIO_RFS_operations = {
    ADIOI_RFS_Open,                 /* Open */
    ADIOI_GEN_OpenColl,             /* OpenColl */
    ADIOI_RFS_ReadContig,           /* ReadContig */
    ADIOI_RFS_WriteContig,          /* WriteContig */
    ADIOI_GEN_ReadStridedColl,      /* ReadStridedColl */
    ADIOI_GEN_WriteStridedColl,     /* WriteStridedColl */
    ADIOI_GEN_SeekIndividual,       /* SeekIndividual */
    ADIOI_RFS_Fcntl,                /* Fcntl */
    ADIOI_RFS_SetInfo,              /* SetInfo */
    ADIOI_GEN_ReadStrided,          /* ReadStrided */
    ADIOI_GEN_WriteStrided,         /* WriteStrided */
    ADIOI_RFS_Close,                /* Close */
    ADIOI_RFS_IreadContig,          /* IreadContig */
    ADIOI_RFS_IwriteContig,         /* IwriteContig */
    ADIOI_FAKE_IODone,              /* ReadDone (unused under MPICH) */
    ADIOI_FAKE_IODone,              /* WriteDone (unused under MPICH) */
    ADIOI_FAKE_IOComplete,          /* ReadComplete (unused under MPICH) */
    ADIOI_FAKE_IOComplete,          /* WriteComplete (unused under MPICH) */
    ADIOI_GEN_IreadStrided,         /* IreadStrided */
    ADIOI_GEN_IwriteStrided,        /* IwriteStrided */
    ADIOI_RFS_Flush,                /* Flush */
    ADIOI_RFS_Resize,               /* Resize */
    ADIOI_RFS_Delete,               /* Delete */
    ADIOI_RFS_Feature,              /* Feature */
    "RFS: remote file access (romio-drivers suite)",
    ADIOI_GEN_IreadStridedColl,     /* IreadStridedColl */
    ADIOI_GEN_IwriteStridedColl,    /* IwriteStridedColl */
    ADIOI_RFS_SetLock               /* SetLock */
};
