/*
 * Feature: what the inner driver can do, except that buffered data is not
 * immediately visible to other processes, and that abt opens the ROMIO way
 * (GEN_OpenColl), whatever the inner driver's own open does. Before Open
 * the inner driver is found from the name.
 */
#include "ad_abt.h"

int ADIOI_ABT_Feature(ADIO_File fd, int flag)
{
    ADIOI_ABT_File *a = fd->fs_ptr;
    switch (flag) {
    case ADIO_SCALABLE_OPEN:
    case ADIO_SCALABLE_RESIZE:
        return 0;
    case ADIO_IMMEDIATELY_VISIBLE:
        return a == NULL || !ADIOI_ABT_Buffering(fd);
    default:
        break;
    }
    if (a) {
        ADIOI_ABT_Sync_shadow(fd);
        return a->inner->fns->ADIOI_xxx_Feature(a->inner, flag);
    }
    int type;
    ADIOI_Fns *ops;
    const char *name;
    if (ADIOI_ABT_Resolve_inner(fd->filename, &type, &ops, &name) != MPI_SUCCESS)
        return 0;
    return ops->ADIOI_xxx_Feature(fd, flag);
}
