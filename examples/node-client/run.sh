#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run.sh SINEW: runs the Node.js example against a fresh node. It installs
# the pinned @libsql/client (package-lock.json) into a temporary directory
# with `npm ci`, starts `sinew serve` on a free port (--http 127.0.0.1:0; the
# URL comes from its "sinew: serving http://..." line), runs client.mjs
# against it, compares what the program printed with expected.txt, and stops
# the node with SIGTERM, which must end it cleanly (status 0). Exit 0 only
# if all of that holds; the node and the temporary directory are cleaned up
# on every exit path.
#
# npm uses its configured registry and cache (npm_config_cache may point the
# cache elsewhere); the lock records no registry host.
set -uo pipefail

SINEW=${1:?usage: run.sh PATH_TO_SINEW}
HERE=$(cd "$(dirname "$0")" && pwd)
READY_TIMEOUT_S=20
STOP_TIMEOUT_S=10

server_pid=
work=

die() {
    printf 'node-client: FAIL %s\n' "$*" >&2
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
    printf -- '--- sinew serve stderr (last 30 lines):\n' >&2
    tail -n 30 "$work/serve.err" >&2
}

# is_running PID: true while PID exists and is not a zombie (kill -0 also
# succeeds on a zombie, so it cannot tell that a child has exited).
is_running() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

command -v node >/dev/null 2>&1 || die "node not found: run scripts/setup.sh (it installs Node.js and npm)"
command -v npm >/dev/null 2>&1 || die "npm not found: run scripts/setup.sh (it installs Node.js and npm)"
[ -x "$SINEW" ] || die "$SINEW is not an executable"
SINEW=$(realpath "$SINEW")

work=$(mktemp -d "${TMPDIR:-/tmp}/sinew-node-client.XXXXXX") || die "mktemp failed"
# client.mjs must sit next to node_modules: an ES module resolves its
# imports from its own location, not from the working directory.
cp "$HERE/package.json" "$HERE/package-lock.json" "$HERE/client.mjs" "$work/" ||
    die "cannot copy the example to $work"

echo "== installing @libsql/client from package-lock.json (npm ci)"
if ! (cd "$work" && npm ci --no-audit --no-fund --silent --prefer-offline >"$work/npm.log" 2>&1); then
    tail -n 30 "$work/npm.log" >&2
    die "npm ci failed (no network and an empty npm cache?)"
fi

echo "== starting a single node on a free port"
mkdir -p "$work/data"
"$SINEW" serve --data "$work/data" --http 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.err" &
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
        die "no 'sinew: serving http://...' line within ${READY_TIMEOUT_S} s"
    fi
    sleep 0.1
done
echo "   node serving at $url"

echo "== node client.mjs $url"
(cd "$work" && node client.mjs "$url") >"$work/client.out" 2>"$work/client.err"
client_status=$?
sed 's/^/   | /' "$work/client.out"
if [ "$client_status" -ne 0 ]; then
    cat "$work/client.err" >&2
    show_server_log
    die "client.mjs exited with status $client_status"
fi
if ! diff -u "$HERE/expected.txt" "$work/client.out" >"$work/diff"; then
    cat "$work/diff" >&2
    die "client.mjs printed something other than expected.txt (diff above)"
fi
echo "   output matches expected.txt"

echo "== stopping the node (SIGTERM)"
is_running "$server_pid" || {
    show_server_log
    die "sinew serve died during the example"
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
[ "$status" -eq 0 ] || {
    show_server_log
    die "sinew serve exited with status $status after SIGTERM, want 0"
}
echo "node-client: passed"
