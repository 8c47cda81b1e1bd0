# Registering this suite's drivers in a ROMIO source tree: what MPICH's ROMIO
# (apply.sh) and Open MPI's (apply-openmpi.sh) have in common. Sourced; the
# caller sets the anchors of its ROMIO version and defines register_prefix.
#
#   ANCHOR_FS_LIST  sed regex (one group) of the start of configure.ac's
#                   known_filesystems list, the new name goes after it
#   ANCHOR_MK       adio/Makefile.mk line the driver includes go after
#   ANCHOR_ADIO_H   adio/include/adio.h line the ADIO_NAME constants go after
#   ANCHOR_PROTO    adioi_fs_proto.h line the operations' externs go before
#   register_prefix ROMIO NAME NAME_UPPER: the "name:" prefix in ad_fstype.c
#                   (register_prefix_rows3 or _rows4 where the prefixes are a
#                   table; table_anchors sets that generation's anchors)
#
# Each edit checks that its anchor exists, so another ROMIO version fails
# loudly instead of half-patching. The caller runs `autoreconf -vif -I confdb`
# in the ROMIO tree afterwards.

die() { echo "romio-patch: $*" >&2; exit 1; }
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/apt-source.sh"

# insert_after FILE ANCHOR-REGEX TEXT: insert TEXT after the first line matching ANCHOR.
insert_after() {
    insert_at "$@" 1
}

# insert_before FILE ANCHOR-REGEX TEXT
insert_before() {
    insert_at "$@" 0
}

# insert_at FILE ANCHOR-REGEX TEXT AFTER(0|1)
insert_at() {
    grep -qE "$2" "$1" || die "anchor '$2' not found in $1"
    python3 - "$1" "$2" "$3" "$4" <<'PY'
import re, sys
path, anchor, text, after = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
lines = open(path).read().split('\n')
for i, line in enumerate(lines):
    if re.search(anchor, line):
        lines[i + after:i + after] = text.split('\n')
        break
open(path, 'w').write('\n'.join(lines))
PY
}

# register_drivers ROMIO REPO: every driver of drivers (beside this file)
# whose ad_NAME/ exists in REPO, then the shared core and glue.
register_drivers() {
    local romio=$1 repo=$2 here netcore_names="" name value libs NAME define lib
    here=$(dirname "${BASH_SOURCE[0]}")
    [ -f "$romio/configure.ac" ] || die "$romio/configure.ac: no ROMIO source tree"
    if grep -q "romio-drivers-suite" "$romio/configure.ac"; then
        die "$romio is already patched"
    fi
    while read -r name value libs; do
        case "$name" in ''|'#'*) continue ;; esac
        [ -d "$repo/ad_$name" ] || continue
        NAME=$(echo "$name" | tr '[:lower:]' '[:upper:]')
        echo "romio-patch: registering $name (ADIO_$NAME = $value)"

        sed -i -E "s/^($ANCHOR_FS_LIST)/\1 $name/" "$romio/configure.ac"
        grep -qE "${ANCHOR_FS_LIST##* } $name" "$romio/configure.ac" \
            || die "known_filesystems list not found"

        define="if test -n \"\$file_system_$name\"; then
    AC_DEFINE(ROMIO_$NAME,1,[Define for ROMIO with $NAME (romio-drivers-suite)])"
        for lib in $libs; do
            define="$define
    PAC_APPEND_FLAG([-l$lib],[LIBS])"
        done
        define="$define
fi"
        insert_before "$romio/configure.ac" '^if test -n "\$file_system_testfs"; then' "$define"

        insert_after "$romio/adio/Makefile.mk" "$ANCHOR_MK" \
            "include \$(top_srcdir)/adio/ad_$name/Makefile.mk"

        insert_after "$romio/adio/include/adio.h" "$ANCHOR_ADIO_H" \
            "#define ADIO_$NAME $(printf '%*s' $((17 - ${#NAME})) '')$value    /* romio-drivers-suite */"

        insert_before "$romio/adio/include/adioi_fs_proto.h" "$ANCHOR_PROTO" \
            "#ifdef ROMIO_$NAME
extern struct ADIOI_Fns_struct ADIO_${NAME}_operations;
/* prototypes are in adio/ad_$name/ad_$name.h */
#endif
"
        register_prefix "$romio" "$name" "$NAME"
        netcore_names="$netcore_names \$file_system_$name"
    done < "$here/drivers"

    [ -n "$netcore_names" ] || die "no driver of $here/drivers has a directory in $repo"

    # The shared core (adio/ of this repository) and the drivers' shared ROMIO
    # glue (common/) are compiled into libromio when any of the drivers is built.
    insert_before "$romio/configure.ac" '^if test -n "\$file_system_testfs"; then' \
        "AM_CONDITIONAL([BUILD_NETCORE],[test -n \"$(echo $netcore_names | tr -d ' ')\"])  dnl romio-drivers-suite"
    insert_after "$romio/adio/Makefile.mk" "$ANCHOR_MK" \
        "include \$(top_srcdir)/adio/netcore/romio.mk
include \$(top_srcdir)/adio/suite_common/romio.mk"
    link_drivers "$romio" "$repo"
}

# table_anchors: the anchors of the ROMIO of MPICH 3.4 to 5.0 (MPICH's own,
# and Open MPI 5's romio341), whose prefixes are a table in ad_fstype.c.
table_anchors() {
    ANCHOR_FS_LIST=' *\[daos nfs ufs pvfs2 testfs xfs panfs lustre gpfs ime quobytefs'
    ANCHOR_MK='^include \$\(top_srcdir\)/adio/ad_quobytefs/Makefile.mk'
    ANCHOR_ADIO_H='^#define ADIO_QUOBYTEFS'
    ANCHOR_PROTO='^#endif /\* ADIOI_FS_PROTO_H_INCLUDED \*/'
}

# register_prefix_rows3 ROMIO NAME NAME_UPPER: the prefix's row of three
# fields, up to MPICH 4.1 (and in romio341).
register_prefix_rows3() {
    insert_before "$1/adio/common/ad_fstype.c" '^ *\{0, 0, 0\} +/\* guard entry \*/' \
        "#ifdef ROMIO_$3
    {&ADIO_${3}_operations, ADIO_$3, \"$2:\"},
#endif"
}

# register_prefix_rows4 ROMIO NAME NAME_UPPER: from MPICH 4.2 a row has the
# file system's magic number too, and a second list (fstype_prefix) names
# every prefix ROMIO strips: a name whose prefix is not there is opened as a
# local path. From 4.3 a row without operations ("fuse", for statfs) ends
# the table's lookups, so the rows go before it.
register_prefix_rows4() {
    local table_end='^ *\{0, 0, 0, 0\} +/\* guard entry \*/'
    grep -qE '^ *\{NULL, 0, "fuse", FUSE_SUPER_MAGIC\},' "$1/adio/common/ad_fstype.c" &&
        table_end="^ */\\* we don't have a FUSE ADIO driver"
    insert_before "$1/adio/common/ad_fstype.c" "$table_end" \
        "#ifdef ROMIO_$3
    {&ADIO_${3}_operations, ADIO_$3, \"$2:\", 0},
#endif"
    insert_before "$1/adio/common/ad_fstype.c" '^ *NULL +/\* guard entry \*/' \
        "    \"$2\",    /* romio-drivers-suite */"
}

# hook_mount_detection ROMIO: ROMIO's file system detection asks the suite
# first whether a plain path lies on an rfs-mount (common/mount_adio.c): such
# a path goes to the rdma: or rfs: driver as if it had the prefix. One anchor
# in every ROMIO this patch knows: the body of ADIO_FileSysType_fncall.
hook_mount_detection() {
    local f=$1/adio/common/ad_fstype.c
    python3 - "$f" <<'PY' || die "ADIO_FileSysType_fncall's body not found in $f"
import re, sys
path = sys.argv[1]
lines = open(path).read().split('\n')
sig = re.compile(r'^static void ADIO_FileSysType_fncall\(const char \*filename, int \*fstype,')
for i, line in enumerate(lines):
    if sig.match(line) and not line.rstrip().endswith(';') and \
            not lines[i + 1].rstrip().endswith(';'):
        body = next(j for j in range(i, i + 3) if lines[j].strip() == '{')
        lines[body + 1:body + 1] = [
            '#if defined(ROMIO_RDMA) || defined(ROMIO_RFS) /* romio-drivers-suite */',
            '    {',
            '        extern int ADIOI_Suite_mount_fstype(const char *filename);',
            '        int suite_fstype = ADIOI_Suite_mount_fstype(filename);',
            '        if (suite_fstype >= 0) {',
            '            *fstype = suite_fstype;',
            '            *error_code = MPI_SUCCESS;',
            '            return;',
            '        }',
            '    }',
            '#endif',
        ]
        open(path, 'w').write('\n'.join(lines))
        sys.exit(0)
sys.exit(1)
PY
}

# mark_version ROMIO VERSION: ROMIO_SUITE_MPICH_VERSION in romioconf.h, the
# MPICH release the ROMIO tree comes from as MAJOR*10000+MINOR*100+PATCH
# (Open MPI's romio321 is MPICH 3.2.1's): what common/romio_compat.h tells
# ROMIO's interfaces apart by (ROMIO_VERSION has been 126 since MPICH 3.3).
mark_version() {
    local romio=$1 major minor patch
    IFS=. read -r major minor patch <<< "$2"
    insert_before "$romio/configure.ac" '^if test -n "\$file_system_testfs"; then' \
        "AC_DEFINE(ROMIO_SUITE_MPICH_VERSION,$((major * 10000 + minor * 100 + ${patch:-0})),[MPICH release of this ROMIO (romio-drivers-suite)])"
}

# link_drivers ROMIO REPO: the driver directories, the core and the glue in
# the ROMIO tree, links into REPO (editing a driver needs no re-patching).
# A link that already leads there is left alone, so that make sees no change.
link_drivers() {
    local romio=$1 repo=$2 name _
    while read -r name _; do
        case "$name" in ''|'#'*) continue ;; esac
        [ -d "$repo/ad_$name" ] && link "$romio/adio/ad_$name" "$repo/ad_$name"
    done < "$(dirname "${BASH_SOURCE[0]}")/drivers"
    link "$romio/adio/netcore" "$repo/adio"
    link "$romio/adio/suite_common" "$repo/common"
}

# link NAME TARGET: the symlink NAME to TARGET, left alone when it is one.
link() {
    [ "$(readlink "$1")" = "$2" ] || ln -sfn "$2" "$1"
}

# file_systems: ROMIO's --with-file-system value, BASE plus every driver
# of drivers whose directory exists in REPO.
#   file_systems BASE REPO
file_systems() {
    local fs=$1 repo=$2 name _
    while read -r name _; do
        case "$name" in ''|'#'*) continue ;; esac
        [ -d "$repo/ad_$name" ] && fs="$fs+$name"
    done < "$(dirname "${BASH_SOURCE[0]}")/drivers"
    echo "$fs"
}

# mpich_version: MPICH's version from maint/version.m4 on stdin.
mpich_version() {
    sed -n 's/^m4_define(\[MPICH_VERSION_m4\],\[\([0-9.]*\)\].*/\1/p'
}

# patched_source DIR PACKAGE VERSION APPLY ROMIO [SOURCE]: PACKAGE's source
# unpacked as DIR/src/PACKAGE-VERSION, patched by APPLY (SRC REPO, REPO being
# $repo), and ROMIO (relative to the tree) autoreconf'ed (log in
# DIR/autoreconf.log). SOURCE: a tarball or a tree of the user's (a tree is
# copied: the patch never edits it); without it, the upstream tarball of
# Debian's source package (apt-get source). For the build scripts.
patched_source() {
    local dir=$1 package=$2 version=$3 apply=$4 romio=$5 source=${6:-} tarball top hint=""
    mkdir -p "$dir/src"
    if [ -d "$source" ]; then
        echo "romio-patch: copying $source"
        cp -a "$source/." "$dir/src/$package-$version"
    else
        if [ -n "$source" ]; then
            tarball=$source
        else
            echo "romio-patch: fetching $package $version with apt-get source"
            [ "$package" != mpich ] ||
                hint=": name one with make MPICH_SOURCE=PATH (a release tarball or tree)"
            tarball=$(apt_source_fetch "$package" "$dir/src") || die "apt-get source $package gave" \
                "no source (the archive's files may be unreachable)$hint"
        fi
        rm -rf "$dir/src/unpack"; mkdir "$dir/src/unpack"
        tar -C "$dir/src/unpack" -xf "$tarball"
        top=("$dir/src/unpack"/*)
        [ ${#top[@]} = 1 ] && [ -d "${top[0]}" ] || die "$tarball: not one source tree"
        mv "${top[0]}" "$dir/src/$package-$version" && rmdir "$dir/src/unpack"
    fi
    "$apply" "$dir/src/$package-$version" "$repo"
    echo "romio-patch: autoreconf in $romio"
    (cd "$dir/src/$package-$version/$romio" && autoreconf -vif -I confdb) > "$dir/autoreconf.log" 2>&1 \
        || { tail -30 "$dir/autoreconf.log"; die "autoreconf failed"; }
}
