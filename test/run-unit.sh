#!/usr/bin/env bash
# Run the cmocka unit tests; count their tests: cmocka's passed, failed and
# skipped ones. A program that exits non-zero with no failed test (a crash,
# or a wrapper's error), or whose output holds a sanitizer or valgrind
# report, counts one failure more. A skipped test is printed with its
# reason: the "skipped: WHY" line the test prints before skip()
# (skip_because in test/unit/unit_util.h).
#   run-unit.sh BINDIR RESULTS TEST...   (a wrapper such as valgrind in $UNIT_WRAPPER)
set -u
. "$(dirname "$0")/lib.sh"
bindir=$1
results=$2
shift 2
passed=0 failed=0 skipped=0
echo "unit tests${UNIT_WRAPPER:+ under $UNIT_WRAPPER}"
for t in "$@"; do
    log=$(mktemp)
    # shellcheck disable=SC2086
    timeout --kill-after=10 600 ${UNIT_WRAPPER:-} "$bindir/$t" > "$log" 2>&1
    rc=$?
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log")
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log")
    # "TEST: WHY" for each test cmocka skipped, while the tests run (the
    # summary after "N test(s) run." lists the names again)
    skips=$(awk '
        /^\[==========\] [0-9]+ test\(s\) run\./ { exit }
        /^\[ RUN      \] / { why = "" }
        /^skipped: / { why = substr($0, 10) }
        /^\[  SKIPPED \] / { print $4 ": " (why != "" ? why : "(no reason given)") }' "$log")
    s=$(printf '%s' "$skips" | grep -c .)
    p=${p:-0} f=${f:-0}
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1     # crashed, or the wrapper found an error
    fi
    if [ "$f" -eq 0 ] && sanitizer_report "$log"; then
        f=1
        echo "  $t: a sanitizer or valgrind report in its output"
    fi
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    printf '  %-14s %3d passed, %d failed, %d skipped\n' "$t" "$p" "$f" "$s"
    [ -z "$skips" ] || printf '%s\n' "$skips" | sed "s/^/       SKIP $t./"
    if [ "$f" -ne 0 ]; then
        # each failed test's output (its assertion), then the log's end
        grep -vE 'rfsd\[[0-9]+\] (info|debug)' "$log" | awk '
            /^\[==========\] [0-9]+ test\(s\) run\./ { exit }
            /^\[ RUN      \] / { out = "" }
            { out = out $0 "\n" }
            /^\[  FAILED  \] / { printf "%s", out; out = "" }' | tail -60 | sed 's/^/       | /'
        echo "       | ..."
        grep -vE 'rfsd\[[0-9]+\] (info|debug)' "$log" | tail -15 | sed 's/^/       | /'
    fi
    rm -f "$log"
done
echo "$passed $failed $skipped" > "$results"
