# Debian source packages, for the build scripts (sourced).

# apt_source_fetch PACKAGE DIR: Debian's source package PACKAGE downloaded
# into DIR with apt-get source; prints its upstream tarball, or returns 1
# when the archive gave none (its files may answer 404: trixie's MPICH and
# PnetCDF here). apt-get's own messages go to stderr.
apt_source_fetch() {
    local found
    (cd "$2" && apt-get source --download-only -qq "$1" 2>&1 \
        | grep -v '^W: Download is performed unsandboxed' || true) >&2
    found=("$2/${1}_"*.orig.tar.*)
    [ -f "${found[0]}" ] || return 1
    echo "${found[0]}"
}

# apt_source PACKAGE DIR: empties DIR, fetches Debian's source package
# PACKAGE into it, unpacks its upstream tarball and links DIR/src to the
# tree; returns 1 when the archive gave none. The Debian patches are not
# applied: the applications' own tests are run as upstream ships them.
apt_source() {
    local pkg=$1 dir=$2 tarball src
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "fetching $pkg with apt-get source"
    tarball=$(apt_source_fetch "$pkg" "$dir") || { echo "apt-get source did not give $pkg" >&2; return 1; }
    tar -C "$dir" -xf "$tarball"
    src=$(ls -d "$dir/$pkg"-*/ | head -1)
    ln -sfn "$src" "$dir/src"
}
