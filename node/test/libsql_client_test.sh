#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# libsql_client_test.sh SINEW SOURCE_DIR: end-to-end check that the real
# @libsql/client npm package (pinned in SOURCE_DIR/package-lock.json) works
# against `sinew serve` unchanged. The script installs the client into a
# temporary directory with `npm ci`, starts the node on a free port with a
# bearer token, waits for its "sinew: serving http://..." line, runs
# SOURCE_DIR/client_test.mjs (which prints one line per check) against that
# URL, then stops the node with SIGTERM and requires a clean exit (status 0)
# within 10 s. Any failure exits 1; the temporary directory and the node are
# cleaned up on every exit path.
#
# npm uses its configured registry and cache (npm_config_cache may point the
# cache elsewhere); the lock records no registry host.
set -uo pipefail

SINEW=${1:?usage: libsql_client_test.sh PATH_TO_SINEW SOURCE_DIR}
SOURCE_DIR=${2:?usage: libsql_client_test.sh PATH_TO_SINEW SOURCE_DIR}
READY_TIMEOUT_S=20
STOP_TIMEOUT_S=10

server_pid=
work=

die() {
    printf 'libsql_client_test: FAIL %s\n' "$*" >&2
    exit 1
}

cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -KILL "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
    if [ -n "$work" ]; then
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

show_server_log() {
    printf -- '--- sinew serve stdout:\n' >&2
    tail -n 20 "$work/serve.out" >&2
    printf -- '--- sinew serve stderr:\n' >&2
    tail -n 40 "$work/serve.err" >&2
}

# is_running PID: true while PID exists and is not yet a zombie (kill -0
# also succeeds on a zombie, so it cannot tell that a child has exited).
is_running() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

command -v node >/dev/null 2>&1 || die "node not found: run scripts/setup.sh (it installs Node.js and npm)"
command -v npm >/dev/null 2>&1 || die "npm not found: run scripts/setup.sh (it installs Node.js and npm)"
[ -x "$SINEW" ] || die "$SINEW is not an executable"
for file in package.json package-lock.json client_test.mjs; do
    [ -f "$SOURCE_DIR/$file" ] || die "$SOURCE_DIR/$file is missing"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/sinew-libsql.XXXXXX") || die "mktemp failed"
# client_test.mjs must sit next to node_modules: an ES module resolves its
# imports from its own location, not from the working directory.
cp "$SOURCE_DIR/package.json" "$SOURCE_DIR/package-lock.json" "$SOURCE_DIR/client_test.mjs" "$work/" ||
    die "cannot copy the test files to $work"

if ! (cd "$work" && npm ci --no-audit --no-fund --silent --prefer-offline >"$work/npm.log" 2>&1); then
    tail -n 30 "$work/npm.log" >&2
    die "npm ci failed (no network and an empty npm cache?)"
fi

token="sinew-test-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
# A trailing newline, as `echo TOKEN > file` leaves it: the server must not
# count it as part of the token.
printf '%s\n' "$token" >"$work/token"
chmod 600 "$work/token"
mkdir -p "$work/data"

"$SINEW" serve --data "$work/data" --http 127.0.0.1:0 --auth-token-file "$work/token" \
    >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!

url=
deadline=$((SECONDS + READY_TIMEOUT_S))
while [ -z "$url" ]; do
    url=$(sed -n 's|^sinew: serving \(http://[^ ]*\).*|\1|p' "$work/serve.out" | head -n 1)
    [ -n "$url" ] && break
    if ! is_running "$server_pid"; then
        wait "$server_pid"
        status=$?
        server_pid=
        show_server_log
        die "sinew serve exited with status $status before it was ready"
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
        show_server_log
        die "no 'sinew: serving http://...' line on stdout within ${READY_TIMEOUT_S} s"
    fi
    sleep 0.1
done
printf 'libsql_client_test: sinew serving at %s\n' "$url"

if ! (cd "$work" && SINEW_URL="$url" SINEW_AUTH_TOKEN="$token" node client_test.mjs); then
    show_server_log
    die "client_test.mjs failed (see the FAIL line above)"
fi

is_running "$server_pid" || {
    show_server_log
    die "sinew serve died during the test"
}
kill -TERM "$server_pid"
deadline=$((SECONDS + STOP_TIMEOUT_S))
while is_running "$server_pid"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
        show_server_log
        die "sinew serve still running ${STOP_TIMEOUT_S} s after SIGTERM"
    fi
    sleep 0.1
done
wait "$server_pid"
status=$?
server_pid=
if [ "$status" -ne 0 ]; then
    show_server_log
    die "sinew serve exited with status $status after SIGTERM, want 0"
fi

printf 'libsql_client_test: passed\n'
