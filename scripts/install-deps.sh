#!/usr/bin/env bash
# Install the Debian packages the build and the tests need, and make sure a
# deb-src entry for bookworm main exists so that `apt-get source mpich` works.
# Idempotent: does nothing when every package is already installed.
set -euo pipefail

PACKAGES="build-essential autoconf automake libtool m4 pkg-config dpkg-dev
python3 libcmocka-dev libhwloc-dev valgrind patchelf"

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done

have_src() {
    # grep -q answers 0 on a match even when some of the files are missing
    grep -qsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/*
}

updated=0
if ! have_src; then
    echo "install-deps: adding a deb-src entry for bookworm main"
    cat > /etc/apt/sources.list.d/romio-drivers-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt-get update -qq
    updated=1
fi

if [ -n "$missing" ]; then
    echo "install-deps: installing$missing"
    [ $updated = 1 ] || apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi
