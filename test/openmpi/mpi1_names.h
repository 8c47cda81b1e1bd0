/*
 * MPI_LB and MPI_UB, removed in MPI-3.0, for ROMIO's tests that still use
 * them (noncontig, noncontig_coll, noncontig_coll2, i_noncontig): Debian's
 * Open MPI, built without --enable-mpi1-compatibility, does not declare
 * them, but its libmpi still defines both. These are the lines its mpi.h
 * has under that option. Forced in by test/romio/run.sh (-include).
 */
struct ompi_predefined_datatype_t;
extern struct ompi_predefined_datatype_t ompi_mpi_lb, ompi_mpi_ub;
#define MPI_LB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_lb)
#define MPI_UB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_ub)
