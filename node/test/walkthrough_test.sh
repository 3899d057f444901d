#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# walkthrough_test.sh SINEW_BINARY DOC NAME: runs the walkthrough NAME of
# DOC (docs/getting-started.md) word for word, so the documented commands
# cannot rot. A ```sh block right after a line "<!-- test: NAME -->" is a
# step; a ``` block right after "<!-- expect: NAME -->" is the output the
# step before it must print (standard output), and with "(eventually)" the
# step is retried for up to 30 s until it does (replication takes a
# moment). Every step runs in one shell, in a temporary directory, with
# `sinew` on PATH; background servers are killed at the end, also on
# failure.
set -euo pipefail

binary=$(realpath "$1")
doc=$(realpath "$2")
name=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/sinew-walkthrough.XXXXXX")
mkdir -p "$work/bin"
ln -s "$binary" "$work/bin/sinew"

cleanup() {
    pkill -TERM -P $$ 2>/dev/null || true
    for pid in $(jobs -p 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    sleep 0.5
    pkill -KILL -f "$work/bin/sinew serve" 2>/dev/null || true
    if [ "${failed:-0}" = 1 ]; then
        [ -n "${current:-}" ] && report_step "$current"
        for log in $(find "$work" -name '*.log'); do
            echo "---- $log (last 20 lines)"
            tail -n 20 "$log"
        done
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# Splits the walkthrough into step files: NN.sh, and NN.expect (+
# NN.eventually) for the step an expect block follows.
awk -v want="$name" -v dir="$work" '
    function flush_name(n) { return sprintf("%s/%02d", dir, n) }
    /^<!-- test: / {
        split($0, f, /[: ]+/); pending = (f[3] == want) ? "sh" : ""; next
    }
    /^<!-- expect: / {
        split($0, f, /[: ]+/)
        pending = (f[3] == want) ? "expect" : ""
        eventually = index($0, "(eventually)") > 0
        next
    }
    /^```/ {
        if (inblock) { inblock = 0; next }
        if (pending == "sh") { step++; out = flush_name(step) ".sh"; inblock = 1 }
        else if (pending == "expect") {
            out = flush_name(step) ".expect"; inblock = 1
            if (eventually) print "" > (flush_name(step) ".eventually")
        } else { out = "/dev/null"; inblock = 1 }
        printf "" > out
        pending = ""
        next
    }
    inblock { print >> out; next }
    { pending = "" }
' "$doc"

steps=$(ls "$work"/*.sh 2>/dev/null | wc -l)
if [ "$steps" -eq 0 ]; then
    echo "walkthrough '$name' has no steps in $doc" >&2
    failed=1
    exit 1
fi

export PATH="$work/bin:$PATH"
cd "$work"
failed=1
report_step() {
    echo "walkthrough '$name': step $(basename "$1") failed:" >&2
    cat "$1.sh" >&2
    echo "---- stdout" >&2; cat "$1.out" >&2 || true
    echo "---- stderr" >&2; cat "$1.err" >&2 || true
    if [ -f "$1.expect" ]; then
        echo "---- expected" >&2; cat "$1.expect" >&2
    fi
}

for script in "$work"/[0-9][0-9].sh; do
    step=${script%.sh}
    current=$step
    if [ ! -f "$step.eventually" ]; then
        # In this shell, not a subshell: variables, `cd` and background
        # jobs carry over to the next step, as in a terminal. A failing
        # command ends the test (set -e), and cleanup reports the step.
        . "$script" >"$step.out" 2>"$step.err" </dev/null
        if [ -f "$step.expect" ] && ! diff -u "$step.expect" "$step.out" >&2; then
            report_step "$step"
            exit 1
        fi
    else
        # A check retried until replication caught up: in a subshell, so a
        # failing try ends only itself.
        for try in $(seq 1 30); do
            if (set -e; . "$script") >"$step.out" 2>"$step.err" </dev/null &&
                diff -q "$step.expect" "$step.out" >/dev/null; then
                break
            fi
            if [ "$try" -eq 30 ]; then
                report_step "$step"
                exit 1
            fi
            sleep 1
        done
    fi
    current=
    echo "ok: step $(basename "$step")"
done
failed=0
echo "walkthrough '$name': $steps steps passed"
