#!/usr/bin/env bash
# verify-unit.sh UNIT PREFIX: systemd-analyze verify of an installed
# template unit (as instance "example"), with the installed man pages for
# its Documentation=; any output fails (verify exits 0 on unknown keys).
unit=$1 prefix=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cp "$unit" "$t/"
grep -q "^ExecStart=$prefix/bin/rfsd " "$t/$(basename "$unit")" ||
    { echo "ExecStart is not the installed rfsd"; exit 1; }
out=$(cd "$t" && MANPATH=$prefix/share/man systemd-analyze verify \
      "$t/$(basename "$unit" | sed 's/@\.service$/@example.service/')" 2>&1)
rc=$?
[ "$rc" -eq 0 ] && [ -z "$out" ] || { echo "systemd-analyze verify (exit $rc): $out"; exit 1; }
