#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# embedded_test.sh EXAMPLE: runs examples/embedded.c's program in a fresh
# temporary directory and requires its output, value for value, to be the
# one below (the database path shown as DIR). It runs twice on the same
# directory: the second run opens the file the first left and must print
# the same. The directory is removed on every exit path.
set -uo pipefail

EXAMPLE=${1:?usage: embedded_test.sh PATH_TO_EXAMPLE_EMBEDDED}
work=

cleanup() {
    [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

die() {
    printf 'embedded_test: FAIL %s\n' "$*" >&2
    exit 1
}

expected='fruit with qty >= 10:
  apple     12  worth 6.0
  banana    30  worth 7.5
duplicate insert refused: UNIQUE constraint failed: fruit.name
after reopening DIR/embedded.db:
  rows=3 total=46'

[ -x "$EXAMPLE" ] || die "$EXAMPLE is not an executable"
work=$(mktemp -d "${TMPDIR:-/tmp}/sinew-embedded.XXXXXX") || die "mktemp failed"

for run in 1 2; do
    output=$("$EXAMPLE" "$work" 2>"$work/stderr")
    status=$?
    if [ "$status" -ne 0 ]; then
        cat "$work/stderr" >&2
        die "run $run exited with status $status"
    fi
    output=${output//"$work"/DIR}
    if [ "$output" != "$expected" ]; then
        diff <(printf '%s\n' "$expected") <(printf '%s\n' "$output") >&2
        die "run $run: output differs from the expected (- want, + got)"
    fi
    [ -s "$work/embedded.db" ] || [ -s "$work/embedded.db-wal" ] ||
        die "run $run left no database file in $work"
done
printf 'embedded_test: passed\n'
