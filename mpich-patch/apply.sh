#!/usr/bin/env bash
# Register this suite's ROMIO drivers in an MPICH source tree: 4.0.x, 4.2.x,
# 4.3.x or 5.0.x (the ROMIO generations whose anchors this file knows).
#
#   apply.sh MPICH_SRC REPO
#
# Source-level edits only (configure.ac, Makefile.mk, adio.h, adioi_fs_proto.h,
# ad_fstype.c; lib.sh); the caller runs `autoreconf -vif -I confdb` in
# src/mpi/romio afterwards. The driver directories are linked into the ROMIO
# tree, so editing a driver needs no re-patching. Each edit checks that its
# anchor exists, and an MPICH version not listed below is refused, so another
# MPICH fails loudly instead of half-patching.
set -euo pipefail

src=$1
repo=$(cd "$2" && pwd)
. "$(dirname "$0")/lib.sh"

ANCHOR_FS_LIST=' *\[daos nfs ufs pvfs2 testfs xfs panfs lustre gpfs ime quobytefs'
ANCHOR_MK='^include \$\(top_srcdir\)/adio/ad_quobytefs/Makefile.mk'
ANCHOR_ADIO_H='^#define ADIO_QUOBYTEFS'
ANCHOR_PROTO='^#endif /\* ADIOI_FS_PROTO_H_INCLUDED \*/'

version=$(mpich_version < "$src/maint/version.m4" 2>/dev/null || true)
[ -n "$version" ] || die "$src: no maint/version.m4 with MPICH's version (not an MPICH source tree?)"

# ROMIO's prefixes are a table, one row per driver. From 4.2 a row has the
# file system's magic number too, and a second list (fstype_prefix) names
# every prefix ROMIO strips: a name whose prefix is not there is opened as a
# local path. From 4.3 a row without operations ("fuse", for statfs) ends
# the table's lookups, so the rows go before it.
case $version in
    4.0.*)
        register_prefix() {
            insert_before "$1/adio/common/ad_fstype.c" '^ *\{0, 0, 0\} +/\* guard entry \*/' \
                "#ifdef ROMIO_$3
    {&ADIO_${3}_operations, ADIO_$3, \"$2:\"},
#endif"
        } ;;
    4.2.*|4.3.*|5.0.*)
        register_prefix() {
            local table_end='^ *\{0, 0, 0, 0\} +/\* guard entry \*/'
            grep -qE '^ *\{NULL, 0, "fuse", FUSE_SUPER_MAGIC\},' "$1/adio/common/ad_fstype.c" &&
                table_end="^ */\\* we don't have a FUSE ADIO driver"
            insert_before "$1/adio/common/ad_fstype.c" "$table_end" \
                "#ifdef ROMIO_$3
    {&ADIO_${3}_operations, ADIO_$3, \"$2:\", 0},
#endif"
            insert_before "$1/adio/common/ad_fstype.c" '^ *NULL +/\* guard entry \*/' \
                "    \"$2\",    /* romio-drivers-suite */"
        } ;;
    *) die "MPICH $version: its ROMIO is not one this patch knows (4.0.x, 4.2.x, 4.3.x, 5.0.x)" ;;
esac
echo "romio-patch: MPICH $version"

register_drivers "$src/src/mpi/romio" "$repo"
mark_version "$src/src/mpi/romio" "$version"
