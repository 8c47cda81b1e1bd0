/*
 * The one place where the MPIs and ROMIOs the drivers are compiled into
 * differ for them: MPICH 4.0, 4.2, 4.3 and 5.0 (their ROMIO; 5.0's also
 * compiled for the MPI standard ABI), and Open MPI 4.1.4 and 5.0.7 (MPI
 * 3.1; ROMIO 3.2.1 and 3.4.1 in their io component). The drivers are
 * written to the newer interfaces; what the older ones lack is made up
 * here. A difference is detected by the feature where the preprocessor can
 * see it (MPI_VERSION, a NULL macro), else by ROMIO_SUITE_MPICH_VERSION, the
 * MPICH release of the ROMIO tree (MAJOR*10000+MINOR*100+PATCH), which the
 * patch defines in romioconf.h. (The function table's SetLock slot, which
 * ROMIO 3.2.1 lacks too, is backported by openmpi-patch: ROMIO's own lock
 * macros must reach it. ROMIO 3.4.1 has it.)
 * Included by every driver's ad_NAME.h after adio.h, and by common/'s MPI
 * code (which is also built without ROMIO: then only the MPI part applies).
 */
#ifndef ROMIO_COMPAT_H_INCLUDED
#define ROMIO_COMPAT_H_INCLUDED

/* MPICH 5 compiles ROMIO a second time for the MPI standard ABI (libmpi_abi):
 * then MPI's names come from ROMIO's romio_abi_internal.h, not mpi.h. */
#ifdef BUILD_MPI_ABI
#include "romio_abi_internal.h"
#else
#include <mpi.h>
#endif

/* MPI 3 has no large-count type decoding: the MPI-3 calls, whose counts all
 * come as int or address arguments (no type there was built by a _c call). */
#if MPI_VERSION < 4
static inline int MPI_Type_get_envelope_c(MPI_Datatype type, MPI_Count *ni, MPI_Count *na,
                                          MPI_Count *nc, MPI_Count *nd, int *combiner)
{
    int i, a, d, rc = MPI_Type_get_envelope(type, &i, &a, &d, combiner);

    *ni = i, *na = a, *nc = 0, *nd = d;
    return rc;
}

static inline int MPI_Type_get_contents_c(MPI_Datatype type, MPI_Count ni, MPI_Count na,
                                          MPI_Count nc, MPI_Count nd, int ints[],
                                          MPI_Aint addrs[], MPI_Count counts[],
                                          MPI_Datatype types[])
{
    (void) nc, (void) counts;
    return MPI_Type_get_contents(type, (int) ni, (int) na, (int) nd, ints, addrs, types);
}
#endif

/* ROMIO's adio.h included (its guard: ADIO_H_INCLUDED in ROMIO 4, ADIO_INCLUDE in 3.2.1) */
#if defined(ADIO_H_INCLUDED) || defined(ADIO_INCLUDE)

#ifndef ROMIO_SUITE_MPICH_VERSION
#error "romioconf.h has no ROMIO_SUITE_MPICH_VERSION: the ROMIO tree is not patched (mpich-patch/)"
#endif

/* ROMIO's I/O entry points take the element count as int up to MPICH 4.1,
 * as MPI_Aint from 4.2 (large counts); ADIOI_Calc_my_off_len counts the
 * pieces of an access as int up to 4.2, as MPI_Count from 4.3. */
#if ROMIO_SUITE_MPICH_VERSION >= 40200
typedef MPI_Aint romio_count_t;
#else
typedef int romio_count_t;
#endif
#if ROMIO_SUITE_MPICH_VERSION >= 40300
typedef MPI_Count romio_piece_count_t;
#else
typedef int romio_piece_count_t;
#endif

/* ROMIO 4's Flush syncs only a file this process wrote to (fd->dirty_write);
 * ROMIO 3's always syncs, and has no such field. */
#if ROMIO_SUITE_MPICH_VERSION < 40000
#define ADIOI_COMPAT_WROTE(fd) ((void) (fd))
#else
#define ADIOI_COMPAT_WROTE(fd) ((void) ((fd)->dirty_write = 1))
#endif

/* Another driver's lock (abt: over its inner file). ROMIO 4: the driver's
 * SetLock. ROMIO 3.2.1: its tables have no SetLock (ufs:, nfs:) unless
 * ours (the backported slot): openmpi-patch's ADIOI_Lock_fd takes either. */
#ifdef ADIOI_Lock_fd
#define ADIOI_COMPAT_SetLock ADIOI_Lock_fd
#else
#define ADIOI_COMPAT_SetLock(fd, cmd, type, offset, whence, len) \
    ((fd)->fns->ADIOI_xxx_SetLock((fd), (cmd), (type), (offset), (whence), (len)))
#endif

/* One process's error as the others can report it, sent by MPI_Bcast: an
 * error code names an entry of its own process's error ring, invalid
 * elsewhere (MPICH 5: "invalid error code", MPI_ERR_OTHER). Error_share fills
 * it from a code, Error_own makes a code of this process from it. */
struct adioi_shared_error {
    int error_class;
    char message[MPI_MAX_ERROR_STRING];
};
void ADIOI_COMPAT_Error_share(int error_code, struct adioi_shared_error *e);
int ADIOI_COMPAT_Error_own(const struct adioi_shared_error *e, const char *myname, int line);

/* ROMIO's generic collective open, the creator's error reported by every
 * process (romio_compat.c): the OpenColl of drivers without their own. */
void ADIOI_COMPAT_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);

/* A feature ROMIO 4 can ask a driver about (none of ROMIO's code does). */
#ifndef ADIO_IMMEDIATELY_VISIBLE
#define ADIO_IMMEDIATELY_VISIBLE 308
#endif

/* ROMIO 3 built without MPIX generalized-request extensions (Open MPI 4.1
 * and 5.0 as Debian builds them) has no nonblocking two-phase:
 * ADIOI_GEN_IreadStridedColl and ADIOI_GEN_IwriteStridedColl are defined
 * as NULL there. Then they are the blocking two-phase, its request
 * completed at once, as ROMIO's FAKE nonblocking calls complete theirs
 * (romio_compat.c). */
#ifdef ADIOI_GEN_IreadStridedColl
#undef ADIOI_GEN_IreadStridedColl
#undef ADIOI_GEN_IwriteStridedColl
#define ADIOI_GEN_IreadStridedColl ADIOI_COMPAT_IreadStridedColl
#define ADIOI_GEN_IwriteStridedColl ADIOI_COMPAT_IwriteStridedColl
void ADIOI_COMPAT_IreadStridedColl(ADIO_File fd, void *buf, romio_count_t count,
                                   MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                   MPI_Request *request, int *error_code);
void ADIOI_COMPAT_IwriteStridedColl(ADIO_File fd, const void *buf, romio_count_t count,
                                    MPI_Datatype datatype, int file_ptr_type,
                                    ADIO_Offset offset, MPI_Request *request, int *error_code);
#define ROMIO_COMPAT_BLOCKING_ICOLL 1
#endif

#endif /* adio.h */

#endif /* ROMIO_COMPAT_H_INCLUDED */
