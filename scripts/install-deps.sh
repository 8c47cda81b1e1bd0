#!/usr/bin/env bash
# Install the Debian packages the build and the tests need, and make sure a
# deb-src entry for this Debian release (bookworm or trixie) exists so that
# `apt-get source mpich` works.
# Idempotent: does nothing when every package is already installed.
set -euo pipefail

PACKAGES="build-essential autoconf automake libtool m4 pkg-config dpkg-dev
python3 libcmocka-dev libhwloc-dev valgrind patchelf libssl-dev openssl libibverbs-dev
librdmacm-dev zlib1g-dev groff-base libfuse3-dev fuse3 netcdf-bin hdf5-tools"
# `install-deps.sh fuzz`: also what make check-fuzz needs (libFuzzer)
[ "${1:-}" = fuzz ] && PACKAGES="$PACKAGES clang-14 libclang-rt-14-dev"
# `install-deps.sh rdma`: the verbs transport and make check-rdma (soft-RoCE in
# a qemu guest that boots Debian's kernel over a 9p view of this root)
[ "${1:-}" = rdma ] && PACKAGES="$PACKAGES qemu-system-x86 linux-image-amd64 rdma-core
ibverbs-providers ibverbs-utils rdmacm-utils perftest iproute2
busybox-static kmod"
# `install-deps.sh lab`: make check-lab's virtual cluster (test/lab/lab.sh:
# ip netns, veth, bridge and tc tbf from iproute2; kmod's modprobe, through
# which the kernel loads the veth, bridge and sch_tbf modules on first use)
[ "${1:-}" = lab ] && PACKAGES="$PACKAGES iproute2 kmod"
# `install-deps.sh bench-lab`: the lab, iperf3 (the links' baseline) and
# gnuplot (make bench-lab's plot)
[ "${1:-}" = bench-lab ] && PACKAGES="$PACKAGES iproute2 kmod iperf3 gnuplot-nox"

# `install-deps.sh install`: make check-install (Debian's Lmod loads the
# module file; man renders the pages; systemd-analyze verifies the unit)
[ "${1:-}" = install ] && PACKAGES="$PACKAGES lmod man-db groff-base systemd"

# `install-deps.sh trixie`: make check-trixie's root (scripts/trixie-root.sh)
[ "${1:-}" = trixie ] && PACKAGES="$PACKAGES debootstrap"

# `install-deps.sh openmpi`: Debian's Open MPI and its parallel HDF5 (make
# openmpi, make check-openmpi)
[ "${1:-}" = openmpi ] && PACKAGES="$PACKAGES libopenmpi-dev openmpi-bin libhdf5-openmpi-dev"

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done

have_src() {
    # grep -q answers 0 on a match even when some of the files are missing
    grep -qsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/*
}

codename=$(. /etc/os-release && echo "$VERSION_CODENAME")

# A deb-src twin of every "deb" source of this release already configured,
# so that apt-get source uses the same mirror the machine uses for packages.
add_src() {
    local out=/etc/apt/sources.list.d/romio-drivers-src
    awk -v release="$codename" 'BEGIN { RS = ""; ORS = "\n\n" }
         /(^|\n)Types:[^\n]*deb/ && $0 ~ "(^|\n)Suites:[^\n]*" release {
             sub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src"); sub(/^\n/, ""); print
         }' /etc/apt/sources.list.d/*.sources 2>/dev/null > "$out.sources" || true
    awk -v release="$codename" '$1 == "deb" && $0 ~ " " release { $1 = "deb-src"; print }' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null > "$out.list" || true
    [ -s "$out.sources" ] || rm -f "$out.sources"
    [ -s "$out.list" ] || rm -f "$out.list"
}

updated=0
if ! have_src; then
    echo "install-deps: adding deb-src entries for $codename"
    add_src
    have_src || { echo "install-deps: no $codename source to copy" >&2; exit 1; }
    apt-get update -qq
    updated=1
fi

if [ -n "$missing" ]; then
    echo "install-deps: installing$missing"
    [ $updated = 1 ] || apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
fi
