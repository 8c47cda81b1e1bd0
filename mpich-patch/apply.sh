#!/usr/bin/env bash
# Register this suite's ROMIO drivers in an MPICH 4.0.2 source tree.
#
#   apply.sh MPICH_SRC REPO
#
# Source-level edits only (configure.ac, Makefile.mk, adio.h, adioi_fs_proto.h,
# ad_fstype.c; lib.sh); the caller runs `autoreconf -vif -I confdb` in
# src/mpi/romio afterwards. The driver directories are linked into the ROMIO
# tree, so editing a driver needs no re-patching. Each edit checks that its
# anchor exists, so a different MPICH version fails loudly instead of
# half-patching.
set -euo pipefail

src=$1
repo=$(cd "$2" && pwd)
. "$(dirname "$0")/lib.sh"

ANCHOR_FS_LIST=' *\[daos nfs ufs pvfs2 testfs xfs panfs lustre gpfs ime quobytefs'
ANCHOR_MK='^include \$\(top_srcdir\)/adio/ad_quobytefs/Makefile.mk'
ANCHOR_ADIO_H='^#define ADIO_QUOBYTEFS'
ANCHOR_PROTO='^#endif /\* ADIOI_FS_PROTO_H_INCLUDED \*/'

# ROMIO 4's prefixes are a table: one row per driver.
register_prefix() {
    insert_before "$1/adio/common/ad_fstype.c" '^ *\{0, 0, 0\} +/\* guard entry \*/' \
        "#ifdef ROMIO_$3
    {&ADIO_${3}_operations, ADIO_$3, \"$2:\"},
#endif"
}

register_drivers "$src/src/mpi/romio" "$repo"
