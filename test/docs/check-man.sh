#!/usr/bin/env bash
# check-man.sh REPO [PAGE]: man/romio-drivers.7 (or PAGE) against the code,
# so that the page cannot drift from it (issue 35):
# - every hint of the drivers' tables (the .name = "..." entries of each
#   `struct adio_hint NAME[] =` table under ad_*/ and common/) has an entry
#   (.TP, then .B NAME) in the page's HINTS section;
# - every environment variable the drivers read (ad_*/, common/, adio/ but
#   rfsd's adio/server/: getenv("X"), getenv(MACRO), .env = "X" or MACRO in
#   a hint table, and wrappers such as env_u32("X", ...); a MACRO is looked
#   up in its #define) has an entry in its ENVIRONMENT section;
# - every hint entry of the page is in a table, or is a ROMIO hint the
#   drivers' code names ("striping_unit", ...); every environment entry is
#   read by the drivers, or is ROMIO's own (ROMIO_ALSO below);
# - the page renders without a warning (MANWIDTH=80 man -l --warnings).
# Prints "PASS man.romio-drivers", or a "FAIL man.romio-drivers: why" line
# per problem and exits 1.
set -u
repo=${1:?usage: check-man.sh REPO [PAGE]}
page=${2:-$repo/man/romio-drivers.7}
name=man.romio-drivers
# variables the page documents that ROMIO itself reads, not the drivers
ROMIO_ALSO="ROMIO_HINTS"
failed=0

fail() {
    echo "FAIL $name: $*"
    failed=1
}

if [ ! -r "$page" ]; then
    fail "no page $page"
    exit 1
fi
cd "$repo" || exit 1

# --- the code ---------------------------------------------------------------
mapfile -t sources < <(find ad_* common adio -path adio/server -prune -o -type f \
    \( -name '*.c' -o -name '*.h' \) -print 2>/dev/null | sort)
mapfile -t drivers < <(printf '%s\n' "${sources[@]}" | grep -E '^(ad_[^/]+|common)/')
mapfile -t tables < <(grep -lE 'struct adio_hint [A-Za-z0-9_]+\[\] *=' "${drivers[@]}" /dev/null)
[ "${#tables[@]}" -gt 0 ] || fail "no hint tables (struct adio_hint NAME[] =) under ad_*/ and common/"
code_hints=$(sed -nE 's/.*\.name = "([A-Za-z0-9_]+)".*/\1/p' "${tables[@]}" /dev/null | sort -u)
[ -n "$code_hints" ] || fail "no .name = \"...\" entries in ${tables[*]}"

# getenv(ARG), wrapper_env(ARG), .env = ARG: ARG a "LITERAL" or a MACRO
env_args=$(grep -hoE '(\b[a-z_0-9]*env[a-z_0-9]*\( *|\.env = )("[A-Za-z_][A-Za-z0-9_]*"|[A-Z][A-Z0-9_]*\b)' \
    "${sources[@]}" /dev/null | sed -E 's/.*(\(|=) *//' | sort -u)
code_env=""
for arg in $env_args; do
    case $arg in
    \"*) code_env="$code_env ${arg//\"/}" ;;
    *)
        val=$(sed -nE "s/^[[:space:]]*#[[:space:]]*define[[:space:]]+${arg}[[:space:]]+\"([A-Za-z0-9_]+)\".*/\1/p" \
            "${sources[@]}" /dev/null | sort -u)
        if [ "$(echo "$val" | grep -c .)" -eq 1 ]; then
            code_env="$code_env $val"
        else
            fail "environment variable macro $arg: no single #define $arg \"NAME\" under ad_*/ common/ adio/"
        fi
        ;;
    esac
done
# shellcheck disable=SC2086  # split on purpose: one name a line
code_env=$(printf '%s\n' $code_env | grep . | sort -u)
[ -n "$code_env" ] || fail "no environment variables found (getenv) in the drivers"

# --- the page: the tag (the line after .TP) of each entry of a section ------
entries() {     # entries SECTION: the first word of each tag, quotes and =... removed
    awk -v want="$1" '
        /^\.SH/ { sec = $0; sub(/^\.SH +/, "", sec); gsub(/"/, "", sec); next }
        sec != want { tp = 0; next }
        /^\.TP/ { tp = 1; next }
        tp { tp = 0
             if ($1 ~ /^\.(B|BI|BR|I|IB|IR|RB)$/) { w = $2; gsub(/"/, "", w); sub(/=.*/, "", w)
                                                  gsub(/\\f[BIRP]/, "", w); print w } }
    ' "$page" | sort -u
}
page_hints=$(entries HINTS)
page_env=$(entries ENVIRONMENT)

missing=$(comm -23 <(echo "$code_hints") <(echo "$page_hints") | tr '\n' ' ')
[ -z "$missing" ] || fail "hints of the code's tables without an entry under HINTS: $missing"
for h in $(comm -13 <(echo "$code_hints") <(echo "$page_hints")); do
    # a ROMIO hint the drivers read or report is named as a string in their code
    grep -qF "\"$h\"" "${drivers[@]}" /dev/null \
        || fail "the page's hint $h is in no hint table and not named by the drivers' code"
done

missing=$(comm -23 <(echo "$code_env") <(echo "$page_env") | tr '\n' ' ')
[ -z "$missing" ] || fail "environment variables the drivers read without an entry under ENVIRONMENT: $missing"
for v in $(comm -13 <(echo "$code_env") <(echo "$page_env")); do
    case " $ROMIO_ALSO " in
    *" $v "*) ;;
    *) fail "the page's environment variable $v is read by none of the drivers" ;;
    esac
done

# --- rendering --------------------------------------------------------------
if command -v man > /dev/null; then
    warnings=$(MANWIDTH=80 man -l --warnings "$page" 2>&1 > /dev/null)
    rc=$?
elif command -v groff > /dev/null; then
    warnings=$(groff -man -t -ww -Tutf8 -z "$page" 2>&1)
    rc=$?
else
    warnings="neither man nor groff is installed" rc=1
fi
if [ "$rc" -ne 0 ] || [ -n "$warnings" ]; then
    fail "rendering (exit $rc): $(echo "$warnings" | head -5 | tr '\n' ' ')"
fi

if [ "$failed" -eq 0 ]; then
    echo "PASS $name ($(echo "$code_hints" | wc -l) hints, $(echo "$code_env" | wc -l) environment variables)"
fi
exit "$failed"
