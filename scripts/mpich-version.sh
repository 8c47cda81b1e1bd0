#!/usr/bin/env bash
# The MPICH version `make` builds: that of MPICH_SOURCE when one is named (a
# release tarball mpich-X.Y.Z.tar.*, or a source tree), else that of the
# Debian release's own source package (apt-get source mpich).
#
#   mpich-version.sh [MPICH_SOURCE]
#
# Prints the version, or "unknown-..." (which the build then refuses with
# the reason) so that the Makefile can still be read.
set -euo pipefail
. "$(dirname "$0")/../mpich-patch/lib.sh"

src=${1:-}
if [ -z "$src" ]; then
    codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
    case $codename in
        bookworm) echo 4.0.2 ;;
        trixie) echo 4.2.1 ;;     # mpich 4.3.0+really4.2.1
        *) echo "unknown-debian-${codename:-release}" ;;
    esac
elif [ -d "$src" ]; then
    mpich_version < "$src/maint/version.m4" 2>/dev/null | grep . || echo unknown-tree
else
    case ${src##*/} in
        mpich-[0-9]*.tar.*) v=${src##*/mpich-}; echo "${v%.tar.*}" ;;
        *) tar -xOf "$src" --wildcards '*/maint/version.m4' 2>/dev/null | mpich_version | grep . ||
               echo unknown-tarball ;;
    esac
fi
