# Where each Open MPI release this suite knows keeps ROMIO and its io
# component, and the name the drivers' component is chosen by (mpirun --mca
# io NAME, its file mca_io_NAME.so). Sourced by apply.sh,
# scripts/build-openmpi.sh and test/romio/run.sh.
#
#   openmpi_layout VERSION   sets OMPI_ROMIO (ROMIO's tree) and OMPI_COMPONENT
#                            (the component's directory), both relative to
#                            the source tree, and OMPI_IO; fails for a
#                            release not listed
#   openmpi_version TREE     the release of an Open MPI source tree

# 4.1 builds its components as DSOs and loads the first of a name it finds:
# ours replaces romio321. 5.0 builds every component into libmpi, which keeps
# its own romio341 whatever the component path says: ours is a component of
# another name.
openmpi_layout() {
    case $1 in
        4.1.*) OMPI_ROMIO=ompi/mca/io/romio321/romio OMPI_COMPONENT=ompi/mca/io/romio321
               OMPI_IO=romio321 ;;
        5.0.*) OMPI_ROMIO=3rd-party/romio341 OMPI_COMPONENT=ompi/mca/io/romio341
               OMPI_IO=romiodrivers ;;
        *) return 1 ;;
    esac
}

# from its VERSION file's major=, minor= and release= lines
openmpi_version() {
    awk -F= '$1 == "major" { a = $2 } $1 == "minor" { b = $2 } $1 == "release" { c = $2 }
             END { if (a != "") print a "." b "." c }' "$1/VERSION" 2>/dev/null
}
