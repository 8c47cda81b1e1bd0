#!/usr/bin/env bash
# The Open MPI version `make openmpi` builds for: the upstream version of
# Debian's libopenmpi-dev, the one installed, else the one apt would install
# (make openmpi installs it first). Prints "unknown" when apt knows none, so
# that the Makefile can still be read (build-openmpi.sh then refuses).
#
#   openmpi-version.sh
set -euo pipefail

v=$(dpkg-query -W -f='${db:Status-Status} ${Version}' libopenmpi-dev 2>/dev/null |
    awk '$1 == "installed" { print $2 }' || true)
[ -n "$v" ] || v=$(apt-cache policy libopenmpi-dev 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
v=${v#*:}       # no epoch
v=${v%-*}       # no Debian revision
case $v in
    ''|'(none)') echo unknown ;;
    *) echo "$v" ;;
esac
