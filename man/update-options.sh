#!/usr/bin/env bash
# Rewrites rfsd.8's OPTIONS section with what `rfsd --man-options` prints
# (rfsd.c's table of options): run it after changing an option.
#   man/update-options.sh [RFSD]    (default: build/obj/plain/rfsd)
# test/integration/rfsd_config.sh fails while the two differ.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rfsd=${1:-$here/../build/obj/plain/rfsd}
page=$here/rfsd.8
options=$(mktemp)
trap 'rm -f "$options" "$page.new"' EXIT
"$rfsd" --man-options > "$options"
awk -v options="$options" '
    /^\.\\" END rfsd --man-options/ { skip = 0 }
    !skip { print }
    /^\.\\" BEGIN rfsd --man-options/ {
        while ((getline line < options) > 0) print line
        skip = 1
    }' "$page" > "$page.new"
grep -q '^\.\\" END rfsd --man-options' "$page.new"
mv "$page.new" "$page"
