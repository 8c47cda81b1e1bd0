#!/usr/bin/env bash
# Register this suite's ROMIO drivers in the ROMIO of an Open MPI source tree:
# 4.1.x (ROMIO 3.2.1 in ompi/mca/io/romio321/romio) or 5.0.x (ROMIO 3.4.1 in
# 3rd-party/romio341, its component ompi/mca/io/romio341): layout.sh. Another
# release is refused, so that it fails loudly instead of half-patching.
#
#   apply.sh OPENMPI_SRC REPO
#
# The same registration as MPICH's (../mpich-patch/lib.sh, one drivers list:
# ../mpich-patch/drivers) at each ROMIO's anchors, and per release:
#
# - 4.1: one backport. ROMIO 3.2.1 takes its byte-range locks by fcntl on
#   fd->fd_sys, which a remote file does not have; later ROMIO asks the
#   driver (the SetLock slot at the end of the function table). The slot is
#   added here, and a table without it (the drivers of ROMIO 3.2.1, which
#   leave it NULL) keeps fcntl.
# - 5.0: the component renamed (layout.sh says why) and linked -Bsymbolic,
#   and the caller's hints passed on to ROMIO (forward_hints).
#
# The caller runs `autoreconf -vif -I confdb` in the ROMIO tree afterwards.
set -euo pipefail

src=$1
repo=$(cd "$2" && pwd)
here=$(dirname "$0")
. "$here/../mpich-patch/lib.sh"
. "$here/layout.sh"

version=$(openmpi_version "$src")
[ -n "$version" ] || die "$src: no VERSION file with Open MPI's version (not an Open MPI source tree?)"
openmpi_layout "$version" ||
    die "Open MPI $version: its ROMIO is not one this patch knows (4.1.x, 5.0.x)"
romio=$src/$OMPI_ROMIO
[ -d "$romio" ] || die "$romio: no ROMIO in Open MPI $version"

# ROMIO 3.2.1's prefixes are an if-chain (name to type), then one test per
# type (type to function table).
register_prefix_chain() {
    insert_before "$1/adio/common/ad_fstype.c" '^    else if \(!strncmp\(filename, "gpfs:", 5\)' \
        "#ifdef ROMIO_$3
    else if (!strncmp(filename, \"$2:\", ${#2} + 1) || !strncmp(filename, \"$3:\", ${#2} + 1)) {
        *fstype = ADIO_$3;
    }
#endif"
    insert_before "$1/adio/common/ad_fstype.c" '^    if \(file_system == ADIO_TESTFS\) \{' \
        "#ifdef ROMIO_$3
    if (file_system == ADIO_$3)
        *ops = &ADIO_${3}_operations;
#endif"
}

backport_setlock() {
    local h=$romio/adio/include/adioi.h
    grep -q 'ADIOI_xxx_SetLock' "$h" && die "$h already has a SetLock slot"
    # after the last member, IwriteStridedColl (its declaration ends the struct)
    sed -i '/(\*ADIOI_xxx_IwriteStridedColl)/,/);$/{
/);$/a\    /* romio-drivers-suite: the driver'"'"'s byte-range locks (later ROMIO'"'"'s slot) */\
    int (*ADIOI_xxx_SetLock) (ADIO_File fd, int cmd, int type, ADIO_Offset offset,\
                              int whence, ADIO_Offset len);
}' "$h"
    grep -A3 'ADIOI_xxx_SetLock' "$h" | grep -q '^};' || die "SetLock slot not at the end of ADIOI_Fns_struct"
    insert_before "$h" '^/\* Unix-style file locking \*/' \
        "/* romio-drivers-suite: a driver's SetLock when its table has one, else fcntl */
#define ADIOI_Lock_fd(fd, cmd, type, offset, whence, len) \\
    ((fd)->fns->ADIOI_xxx_SetLock \\
     ? (fd)->fns->ADIOI_xxx_SetLock(fd, cmd, type, offset, whence, len) \\
     : ADIOI_Set_lock((fd)->fd_sys, cmd, type, offset, whence, len))
"
    local n
    n=$(grep -c 'ADIOI_Set_lock((fd)->fd_sys, F_SETLK' "$h")
    [ "$n" -ge 3 ] || die "$h: ROMIO's lock macros not found"
    sed -i 's/  ADIOI_Set_lock((fd)->fd_sys, F_SETLK/  ADIOI_Lock_fd((fd), F_SETLK/' "$h"
}

# rename_component DIR NAME: the io component in DIR becomes NAME: its
# symbol mca_io_NAME_component, its name, its library mca_io_NAME.la (both
# the Makefile.am and the Makefile.in made from it, so that make does not
# run automake). Linked -Bsymbolic: the DSO's calls to ROMIO (ADIO_Open...)
# bind to its own copy, not to the one libmpi exports, which comes first in
# the global scope a dlopen'ed component's symbols are looked up in.
rename_component() {
    local dir=$1 new=$2 old f
    old=$(basename "$dir")
    f=$dir/src/io_${old}_component.c
    grep -q "^ *\.mca_component_name = \"$old\"," "$f" || die "$f: no component named $old"
    sed -i "s/\bmca_io_${old}_component\b/mca_io_${new}_component/g" "$dir"/src/*.[ch]
    sed -i "s/^\( *\.mca_component_name = \)\"$old\",/\1\"$new\", \/* romio-drivers-suite *\//" "$f"
    for f in "$dir/Makefile.am" "$dir/Makefile.in"; do
        grep -q "^mca_io_${old}_la_LDFLAGS = -module -avoid-version\$" "$f" ||
            die "$f: no mca_io_${old}_la_LDFLAGS line to extend"
        sed -i "s/mca_io_$old/mca_io_$new/g; s/^mca_io_${new}_la_LDFLAGS = .*/& -Wl,-Bsymbolic/" "$f"
    done
}

# forward_hints DIR: the hints given to MPI_File_open, MPI_File_set_view and
# MPI_File_delete reach ROMIO. The component in DIR hands ROMIO a copy of
# Open MPI's info (opal_info_dup), whose keys count as never looked at, and
# ROMIO starts by MPI_Info_dup, which in Open MPI 5 keeps only keys that were
# (opal_info_dup_public): ROMIO saw none of the caller's hints (Debian's own
# romio341 ignores them alike). Each key of the copy is marked looked at.
forward_hints() {
    local dup='^ *opal_info_dup \(info, &opal_info\);$' n
    n=$(cat "$1"/src/*.c | grep -cE "$dup" || true)
    [ "$n" = 3 ] || die "$1/src: $n copies of the caller's info (opal_info_dup), expected 3"
    sed -i -E "s/($dup)/\1\n    OPAL_LIST_FOREACH_DECL (e, \&opal_info->super, opal_info_entry_t) \
e->ie_referenced++;    \/* romio-drivers-suite *\//" "$1"/src/*.c
}

case $version in
    4.1.*)
        ANCHOR_FS_LIST=' *\[nfs ufs pfs pvfs pvfs2 testfs xfs panfs gridftp lustre gpfs zoidfs hfs piofs sfs'
        ANCHOR_MK='^include \$\(top_srcdir\)/adio/ad_zoidfs/Makefile.mk'
        ANCHOR_ADIO_H='^#define ADIO_GPFS'
        ANCHOR_PROTO='^#ifdef ROMIO_ZOIDFS'
        register_prefix() { register_prefix_chain "$@"; }
        romio_version=3.2.1 ;;
    5.0.*)
        table_anchors       # ROMIO 3.4.1's prefixes: a table of three-field rows
        register_prefix() { register_prefix_rows3 "$@"; }
        romio_version=3.4.1 ;;
esac
echo "romio-patch: Open MPI $version, ROMIO $romio_version in $OMPI_ROMIO"

register_drivers "$romio" "$repo"
hook_mount_detection "$romio"
case $version in
    4.1.*) backport_setlock ;;
    5.0.*) rename_component "$src/$OMPI_COMPONENT" "$OMPI_IO"
           forward_hints "$src/$OMPI_COMPONENT" ;;
esac
mark_version "$romio" "$romio_version"
