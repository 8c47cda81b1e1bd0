#!/usr/bin/env bash
# Run the cmocka unit tests; count their tests.
#   run-unit.sh BINDIR RESULTS TEST...   (a wrapper such as valgrind in $UNIT_WRAPPER)
set -u
bindir=$1
results=$2
shift 2
passed=0 failed=0
echo "unit tests${UNIT_WRAPPER:+ under $UNIT_WRAPPER}"
for t in "$@"; do
    log=$(mktemp)
    # shellcheck disable=SC2086
    timeout --kill-after=10 600 ${UNIT_WRAPPER:-} "$bindir/$t" > "$log" 2>&1
    rc=$?
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log")
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log")
    p=${p:-0} f=${f:-0}
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1     # crashed, or the wrapper found an error
    fi
    passed=$((passed + p)) failed=$((failed + f))
    printf '  %-14s %3d passed, %d failed\n' "$t" "$p" "$f"
    [ "$f" -eq 0 ] || grep -vE 'rfsd\[[0-9]+\] (info|debug)' "$log" | tail -30 | sed 's/^/       | /'
    rm -f "$log"
done
echo "$passed $failed 0" > "$results"
