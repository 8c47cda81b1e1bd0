#!/usr/bin/env bash
# make install / make uninstall: the drivers' MPICH (built once in the cache,
# relocated here), rfsd, the Open MPI component where built, man pages, the
# systemd unit, docs and a module file, into DESTDIR/PREFIX.
#   install.sh install REPO BUILD_PREFIX PREFIX [DESTDIR] [OPENMPI_COMPONENTS]
#   install.sh uninstall PREFIX [DESTDIR]
#
# The MPICH tree is built for the cache's prefix: its wrapper scripts,
# pkg-config and libtool files name that prefix, and two programs carry it
# as their run path. Those are rewritten to PREFIX (as Spack and conda
# relocate builds); PREFIX itself, not DESTDIR/PREFIX, since a packager's
# DESTDIR is a staging area. Every file installed is listed in
# PREFIX/share/romio-drivers/manifest: uninstall removes exactly those, and
# an install over an older one removes the older one's files first.
set -euo pipefail

manifest_rel=share/romio-drivers/manifest

uninstall() {
    local dest=$1 manifest=$1/$manifest_rel
    [ -f "$manifest" ] || return 0
    while IFS= read -r f; do
        rm -f "$dest/$f"
    done < "$manifest"
    rm -f "$manifest"
    # directories the install made and left empty (never the prefix itself)
    sort -r "$dest/.romio-drivers-dirs" 2>/dev/null | while IFS= read -r d; do
        rmdir "$dest/$d" 2>/dev/null || true
    done
    rm -f "$dest/.romio-drivers-dirs"
}

# put SRC DEST_REL MODE: one file, recorded in the manifest
put() {
    install -D -m "$3" "$1" "$dest/$2"
    echo "$2" >> "$new_manifest"
}

# The MPICH tree (rfsd is in its bin/), its build prefix rewritten.
install_mpich() {
    local build=$1 rel
    (cd "$build" && find . \( -type f -o -type l \) -printf '%P\n') | while IFS= read -r rel; do
        mkdir -p "$(dirname "$dest/$rel")"
        cp -P "$build/$rel" "$dest/$rel"
        echo "$rel" >> "$new_manifest"
        [ -L "$dest/$rel" ] && continue
        if grep -qI "$build" "$dest/$rel"; then
            sed -i "s|$build|$prefix|g" "$dest/$rel"
        elif readelf -d "$dest/$rel" 2>/dev/null | grep -qE "R(UN)?PATH.*$build"; then
            patchelf --set-rpath "$prefix/lib" "$dest/$rel"
        fi
    done
}

module_file() {
    local ompi=$1
    cat <<EOF
#%Module1.0
## romio-drivers: MPICH $mpich_version with the rfs:, rdma: and abt: ROMIO drivers,
## and rfsd (installed by romio-drivers' make install). Lmod and Environment
## Modules both read this Tcl form.
proc ModulesHelp { } {
    puts stderr "MPICH $mpich_version with the rfs:, rdma: and abt: drivers, and rfsd."
    puts stderr "man romio-drivers, man rfsd; docs in $prefix/share/doc/romio-drivers"
}
module-whatis "MPICH $mpich_version with the rfs:, rdma: and abt: ROMIO drivers, and rfsd"
conflict mpi
prepend-path PATH $prefix/bin
prepend-path LD_LIBRARY_PATH $prefix/lib
prepend-path MANPATH $prefix/share/man
EOF
    [ -z "$ompi" ] || cat <<EOF
## Open MPI's component path: the drivers' ROMIO io component first (docs/openmpi.md)
setenv OMPI_MCA_mca_base_component_path $prefix/lib/romio-drivers/openmpi:SYSTEM_DEFAULT
EOF
}

do_install() {
    local repo=$1 build=$2 ompi=${5:-}
    prefix=$3
    dest=${4:-}$prefix
    mpich_version=$("$build/bin/mpichversion" | sed -n "s/^MPICH Version:[[:space:]]*//p")
    mkdir -p "$dest"
    uninstall "$dest"
    new_manifest=$(mktemp)
    dirs_before=$(mktemp)
    (cd "$dest" && find . -type d -printf '%P\n' | sort) > "$dirs_before"
    install_mpich "$build"
    if [ -n "$ompi" ] && [ -d "$ompi" ]; then
        for so in "$ompi"/*.so; do
            put "$so" "lib/romio-drivers/openmpi/$(basename "$so")" 755
        done
    else
        ompi=""
    fi
    for page in "$repo"/man/*.[0-9]; do
        [ -e "$page" ] || continue
        put "$page" "share/man/man${page##*.}/$(basename "$page")" 644
    done
    # the unit runs the installed rfsd; sysusers makes its user
    sed "s|^ExecStart=/usr/local/bin/rfsd |ExecStart=$prefix/bin/rfsd |" \
        "$repo/dist/systemd/rfsd@.service" > "$new_manifest.unit"
    put "$new_manifest.unit" "lib/systemd/system/rfsd@.service" 644
    put "$repo/dist/systemd/rfsd.sysusers" "lib/sysusers.d/rfsd.conf" 644
    rm -f "$new_manifest.unit"
    for doc in "$repo"/README.md "$repo"/docs/*.md "$repo"/dist/*.example; do
        [ -e "$doc" ] || continue
        put "$doc" "share/doc/romio-drivers/$(basename "$doc")" 644
    done
    module_file "$ompi" > "$new_manifest.module"
    put "$new_manifest.module" "share/modulefiles/romio-drivers/mpich-$mpich_version" 644
    rm -f "$new_manifest.module"
    (cd "$dest" && find . -type d -printf '%P\n' | sort) | comm -13 "$dirs_before" - \
        > "$dest/.romio-drivers-dirs"
    sort -u "$new_manifest" > "$new_manifest.sorted"
    install -D -m 644 "$new_manifest.sorted" "$dest/$manifest_rel"
    rm -f "$new_manifest" "$new_manifest.sorted" "$dirs_before"
    echo "installed into $dest: $(wc -l < "$dest/$manifest_rel") files; module file" \
         "$prefix/share/modulefiles (module use $prefix/share/modulefiles;" \
         "module load romio-drivers)"
}

case ${1:-} in
install) shift; do_install "$@" ;;
uninstall) uninstall "${3:-}$2"; echo "uninstalled from ${3:-}$2" ;;
*) echo "usage: install.sh install REPO BUILD_PREFIX PREFIX [DESTDIR] [OMPI_DIR] |" \
        "uninstall PREFIX [DESTDIR]" >&2; exit 2 ;;
esac
