/*
 * The rfs: driver's ADIO function table. Everything that touches the file
 * is ours, noncontiguous and collective I/O included (ROMIO's two-phase and
 * data sieving stay selectable by hint, and come back through our contig
 * calls and our SetLock); nonblocking strided calls complete at once
 * through ROMIO's fd-agnostic generic code (romio-integration.md section 1).
 */
#include "ad_rfs.h"

struct ADIOI_Fns_struct ADIO_RFS_operations = {
    ADIOI_RFS_Open,                 /* Open */
    ADIOI_COMPAT_OpenColl,          /* OpenColl */
    ADIOI_RFS_ReadContig,           /* ReadContig */
    ADIOI_RFS_WriteContig,          /* WriteContig */
    ADIOI_RFS_ReadStridedColl,      /* ReadStridedColl */
    ADIOI_RFS_WriteStridedColl,     /* WriteStridedColl */
    ADIOI_GEN_SeekIndividual,       /* SeekIndividual */
    ADIOI_RFS_Fcntl,                /* Fcntl */
    ADIOI_RFS_SetInfo,              /* SetInfo */
    ADIOI_RFS_ReadStrided,          /* ReadStrided */
    ADIOI_RFS_WriteStrided,         /* WriteStrided */
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
    ADIOI_RFS_IreadStridedColl,     /* IreadStridedColl */
    ADIOI_RFS_IwriteStridedColl,    /* IwriteStridedColl */
    ADIOI_RFS_SetLock               /* SetLock */
};
