/*
 * Datatype descriptions from MPI datatypes: the only part of the engine
 * that calls MPI (MPI_Type_get_envelope/contents and friends).
 */
#ifndef DTYPE_MPI_H_INCLUDED
#define DTYPE_MPI_H_INCLUDED

#include "romio_compat.h"     /* mpi.h, or MPI 5 ABI's names in ROMIO */

#include "dtype/dtype.h"

/*
 * Describe `type` (every combiner; named, darray and anything else that
 * does not decompose are described from MPI_Pack's own view of them), with
 * lb, extent and size as MPI says, then optimised. Returns 0, -ENOTSUP for
 * a type that cannot be described within the engine's limits, or -ENOMEM.
 */
int dtype_from_mpi(MPI_Datatype type, struct dtype **out);

/*
 * The description of `type`, cached on the type as an attribute and freed
 * with it, so a type is described once however often it is used. For a
 * type that takes no attribute *owned is set and the caller frees.
 */
int dtype_mpi_get(MPI_Datatype type, const struct dtype **out, int *owned);

#endif /* DTYPE_MPI_H_INCLUDED */
