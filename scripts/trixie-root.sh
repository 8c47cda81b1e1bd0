#!/usr/bin/env bash
# Make a Debian 13 "trixie" root in which the project builds and tests:
#
#   trixie-root.sh DIR
#
# Nothing to do when DIR/.complete exists. Otherwise a DIR left half made
# by an earlier run is removed, debootstrap (minbase) makes the root from the
# mirror this host's apt uses, apt inside gets trixie (and trixie-updates and
# the security archive where this host has their bookworm twins, deb and
# deb-src) and installs PACKAGES. DIR/.complete is written last, so only a
# root that got everything counts. Commands run inside with in-root.sh.
set -euo pipefail

PACKAGES=(build-essential autoconf automake libtool m4 pkg-config dpkg-dev python3
    libcmocka-dev libhwloc-dev valgrind patchelf libssl-dev openssl libibverbs-dev
    librdmacm-dev zlib1g-dev libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools
    libmpich-dev mpich git ca-certificates procps iproute2 file libfuse3-dev fuse3 netcdf-bin)
SUITE=trixie

here=$(cd "$(dirname "$0")" && pwd)
log() { echo "trixie-root: $*"; }
die() { echo "trixie-root: $*" >&2; exit 1; }

[ $# -eq 1 ] || { echo "usage: trixie-root.sh DIR" >&2; exit 2; }
dir=$(realpath -m -- "$1")
[ "$dir" != / ] || die "DIR must not be /"

# timed WHAT CMD...: CMD, then how long it took
timed() {
    local what=$1 start=$SECONDS
    shift
    "$@"
    log "$what took $((SECONDS - start)) s"
}

# host_sources: "URI SUITE" for each deb (not deb-src) entry of this host's
# apt sources, one-line and deb822 alike (continuation lines are not read)
host_sources() {
    awk '$1 == "deb" { sub(/\[[^]]*\][ \t]*/, ""); print $2, $3 }' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true
    awk -v RS= -F '\n' '{
        types = uris = suites = ""; enabled = "yes"
        for (i = 1; i <= NF; i++) {
            if ($i ~ /^#/) continue
            split($i, kv, ":"); key = tolower(kv[1]); val = substr($i, length(kv[1]) + 2)
            gsub(/^[ \t]+|[ \t]+$/, "", val)
            if (key == "types") types = val
            else if (key == "uris") uris = val
            else if (key == "suites") suites = val
            else if (key == "enabled") enabled = tolower(val)
        }
        if (enabled == "no" || (" " types " ") !~ / deb /) next
        nu = split(uris, u, /[ \t]+/); ns = split(suites, s, /[ \t]+/)
        for (a = 1; a <= nu; a++) for (b = 1; b <= ns; b++) print u[a], s[b]
    }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
}

# host_uri PATTERN: the first host source whose suite matches, without its
# trailing slash (empty when none does)
host_uri() {
    host_sources | awk -v re="$1" '$2 ~ re { sub(/\/+$/, "", $1); print $1; exit }'
}

# mounts_under DIR: the mount points inside DIR (a root that has any is not
# removed: rm -rf would go through a bind mount into the host)
mounts_under() {
    awk -v d="$1/" '{ m = $5; gsub(/\\040/, " ", m)
                      if (index(m "/", d) == 1) print m }' /proc/self/mountinfo
}

# stanza URI SUITES: one deb822 entry, binaries and sources of main
stanza() {
    printf 'Types: deb deb-src\nURIs: %s\nSuites: %s\nComponents: main\n' "$1" "$2"
    echo "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
}

# sources_file MIRROR UPDATES SECURITY: the root's apt sources; trixie-updates
# (from MIRROR) when UPDATES is not empty, trixie-security when SECURITY is not
sources_file() {
    stanza "$1" "$SUITE${2:+ $SUITE-updates}"
    [ -z "$3" ] || { echo; stanza "$3" "$SUITE-security"; }
}

# bootstrap MIRROR: debootstrap in a mount namespace of its own, so that the
# /proc and /sys it mounts in DIR go away even if it is killed
bootstrap() {
    unshare --mount --propagation private -- \
        debootstrap --variant=minbase "$SUITE" "$dir" "$1"
}

# configure MIRROR UPDATES SECURITY: apt sources and no service started by a
# package's maintainer script (the root has no init)
configure() {
    rm -f "$dir/etc/apt/sources.list"
    sources_file "$@" > "$dir/etc/apt/sources.list.d/debian.sources"
    printf '#!/bin/sh\nexit 101\n' > "$dir/usr/sbin/policy-rc.d"
    chmod 755 "$dir/usr/sbin/policy-rc.d"
}

inroot() { bash "$here/in-root.sh" "$dir" -- env DEBIAN_FRONTEND=noninteractive "$@"; }

# check_packages: fails naming each of PACKAGES that trixie does not have
check_packages() {
    local missing
    # shellcheck disable=SC2016 # $p is the inner shell's
    missing=$(inroot sh -c 'for p; do
        apt-cache show --no-all-versions "$p" >/dev/null 2>&1 || echo "$p"; done' \
        sh "${PACKAGES[@]}")
    [ -z "$missing" ] || die "not in $SUITE: ${missing//$'\n'/ }"
}

install_packages() {
    inroot apt-get install -y -q --no-install-recommends "${PACKAGES[@]}"
    inroot apt-get clean
}

mkdir -p "$(dirname "$dir")"
exec 9> "$dir.lock"
flock 9
if [ -e "$dir/.complete" ]; then
    log "$dir is complete"
    exit 0
fi
if [ -e "$dir" ]; then
    [ -z "$(mounts_under "$dir")" ] ||
        die "$dir is half made and has mounts inside: $(mounts_under "$dir" | tr '\n' ' ')"
    timed "removing the half-made $dir" rm -rf --one-file-system -- "$dir"
fi
command -v debootstrap >/dev/null ||
    die "no debootstrap: scripts/install-deps.sh trixie installs it"

mirror=$(host_uri '^[a-z]+$')
updates=$(host_uri '-updates$')
security=$(host_uri '-security$')
[ -n "$mirror" ] || die "no Debian mirror in this host's apt sources"
log "mirror $mirror${updates:+, updates}${security:+, security $security}"

total=$SECONDS
timed "debootstrap" bootstrap "$mirror"
configure "$mirror" "$updates" "$security"
timed "apt-get update" inroot apt-get update -q
check_packages
timed "installing the packages" install_packages
touch "$dir/.complete"
log "$dir made in $((SECONDS - total)) s ($(du -sh "$dir" | cut -f1))"
