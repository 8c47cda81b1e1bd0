#!/usr/bin/env bash
# make check-trixie: the project on Debian 13 trixie, in a trixie root made
# (once, cached) by scripts/trixie-root.sh and entered with scripts/in-root.sh.
# A clean clone of REPO's committed HEAD runs there what test/trixie/inside.sh
# says: the README's commands, then the tests under trixie's MPICH-built
# programs and under trixie's Open MPI.
#   run.sh REPO DIR [MPICH_SOURCE]
# DIR holds the roots (root-KEY, KEY: trixie-root.sh's hash). MPICH_SOURCE:
# MPICH 4.2.1's source for when the archive does not serve trixie's (it is
# bound into the root). Ends with "trixie: N passed, N failed, N skipped".
set -u
repo=$(cd "$1" && pwd)
dir=$2
source=${3:-}
root=$dir/root-$(sha256sum "$repo/scripts/trixie-root.sh" | cut -c1-12)

summary() {
    echo "trixie: $1 passed, $2 failed, $3 skipped"
    [ "$2" -eq 0 ]
}

if ! bash "$repo/scripts/trixie-root.sh" "$root"; then
    echo "  FAIL trixie.root (scripts/trixie-root.sh $root)"
    summary 0 1 0; exit
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/trixie.XXXXXX")
trap 'rm -rf "$work"' EXIT
git clone -q "$repo" "$work/romio-drivers" || { summary 0 1 0; exit; }

binds=(--bind "$work:/work")
inner_source=""
if [ -n "$source" ]; then
    inner_source=/sources/${source##*/}
    binds+=(--bind "$source:$inner_source")
fi
bash "$repo/scripts/in-root.sh" "$root" "${binds[@]}" -- \
    bash /work/romio-drivers/test/trixie/inside.sh /work/romio-drivers /work/run /work/res \
    "$inner_source"
read -r p f s < "$work/res" 2>/dev/null || { p=0 f=1 s=0; }
summary "$p" "$f" "$s"
