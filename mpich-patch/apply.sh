#!/usr/bin/env bash
# Register this suite's ROMIO drivers in an MPICH 4.0.2 source tree.
#
#   apply.sh MPICH_SRC REPO
#
# Source-level edits only (configure.ac, Makefile.mk, adio.h, adioi_fs_proto.h,
# ad_fstype.c); the caller runs `autoreconf -vif -I confdb` in src/mpi/romio
# afterwards. The driver directories are linked into the ROMIO tree, so
# editing a driver needs no re-patching. Each edit checks that its anchor
# exists, so a different MPICH version fails loudly instead of half-patching.
set -euo pipefail

src=$1
repo=$(cd "$2" && pwd)
romio=$src/src/mpi/romio
here=$(cd "$(dirname "$0")" && pwd)

die() { echo "mpich-patch: $*" >&2; exit 1; }

# insert_after FILE ANCHOR-REGEX TEXT: insert TEXT after the first line matching ANCHOR.
insert_after() {
    grep -qE "$2" "$1" || die "anchor '$2' not found in $1"
    python3 - "$1" "$2" "$3" <<'PY'
import re, sys
path, anchor, text = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(path).read().split('\n')
for i, line in enumerate(lines):
    if re.search(anchor, line):
        lines[i + 1:i + 1] = text.split('\n')
        break
open(path, 'w').write('\n'.join(lines))
PY
}

# insert_before FILE ANCHOR-REGEX TEXT
insert_before() {
    grep -qE "$2" "$1" || die "anchor '$2' not found in $1"
    python3 - "$1" "$2" "$3" <<'PY'
import re, sys
path, anchor, text = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(path).read().split('\n')
for i, line in enumerate(lines):
    if re.search(anchor, line):
        lines[i:i] = text.split('\n')
        break
open(path, 'w').write('\n'.join(lines))
PY
}

[ -f "$romio/configure.ac" ] || die "$romio/configure.ac: no ROMIO source tree"
if grep -q "romio-drivers-suite" "$romio/configure.ac"; then
    die "$src is already patched"
fi

netcore_names=""
while read -r name value libs; do
    case "$name" in ''|'#'*) continue ;; esac
    [ -d "$repo/ad_$name" ] || continue
    NAME=$(echo "$name" | tr '[:lower:]' '[:upper:]')
    echo "mpich-patch: registering $name (ADIO_$NAME = $value)"

    sed -i -E "s/^( *\[daos nfs ufs pvfs2 testfs xfs panfs lustre gpfs ime quobytefs)/\1 $name/" \
        "$romio/configure.ac"
    grep -qE "quobytefs $name" "$romio/configure.ac" || die "known_filesystems list not found"

    define="if test -n \"\$file_system_$name\"; then
    AC_DEFINE(ROMIO_$NAME,1,[Define for ROMIO with $NAME (romio-drivers-suite)])"
    for lib in $libs; do
        define="$define
    PAC_APPEND_FLAG([-l$lib],[LIBS])"
    done
    define="$define
fi"
    insert_before "$romio/configure.ac" '^if test -n "\$file_system_testfs"; then' "$define"

    insert_after "$romio/adio/Makefile.mk" '^include \$\(top_srcdir\)/adio/ad_quobytefs/Makefile.mk' \
        "include \$(top_srcdir)/adio/ad_$name/Makefile.mk"

    insert_after "$romio/adio/include/adio.h" '^#define ADIO_QUOBYTEFS' \
        "#define ADIO_$NAME $(printf '%*s' $((17 - ${#NAME})) '')$value    /* romio-drivers-suite */"

    insert_before "$romio/adio/include/adioi_fs_proto.h" '^#endif /\* ADIOI_FS_PROTO_H_INCLUDED \*/' \
        "#ifdef ROMIO_$NAME
extern struct ADIOI_Fns_struct ADIO_${NAME}_operations;
/* prototypes are in adio/ad_$name/ad_$name.h */
#endif
"
    insert_before "$romio/adio/common/ad_fstype.c" '^ *\{0, 0, 0\} +/\* guard entry \*/' \
        "#ifdef ROMIO_$NAME
    {&ADIO_${NAME}_operations, ADIO_$NAME, \"$name:\"},
#endif"

    ln -sfn "$repo/ad_$name" "$romio/adio/ad_$name"
    netcore_names="$netcore_names \$file_system_$name"
done < "$here/drivers"

[ -n "$netcore_names" ] || die "no driver of $here/drivers has a directory in $repo"

# The shared core (adio/ of this repository) and the drivers' shared ROMIO
# glue (common/) are compiled into libromio when any of the drivers is built.
insert_before "$romio/configure.ac" '^if test -n "\$file_system_testfs"; then' \
    "AM_CONDITIONAL([BUILD_NETCORE],[test -n \"$(echo $netcore_names | tr -d ' ')\"])  dnl romio-drivers-suite"
insert_after "$romio/adio/Makefile.mk" '^include \$\(top_srcdir\)/adio/ad_quobytefs/Makefile.mk' \
    "include \$(top_srcdir)/adio/netcore/romio.mk
include \$(top_srcdir)/adio/suite_common/romio.mk"
ln -sfn "$repo/adio" "$romio/adio/netcore"
ln -sfn "$repo/common" "$romio/adio/suite_common"
