# apt_source PACKAGE DIR (sourced): empties DIR, fetches Debian's source
# package PACKAGE into it with apt-get source, unpacks its upstream tarball
# and links DIR/src to the tree. The Debian patches are not applied: the
# applications' own tests are run as upstream ships them.
apt_source() {
    local pkg=$1 dir=$2 tarball src
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "fetching $pkg with apt-get source"
    (cd "$dir" && apt-get source --download-only -qq "$pkg" 2>&1 \
        | grep -v '^W: Download is performed unsandboxed' || true)
    tarball=$(ls "$dir/${pkg}_"*.orig.tar.* 2>/dev/null | head -1)
    [ -n "$tarball" ] || { echo "apt-get source did not give $pkg" >&2; return 1; }
    tar -C "$dir" -xf "$tarball"
    src=$(ls -d "$dir/$pkg"-*/ | head -1)
    ln -sfn "$src" "$dir/src"
}
