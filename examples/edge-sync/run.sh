#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run.sh SINEW: two sinew nodes in crdt mode that write while cut off from
# each other, reconnect and converge, narrated step by step
# (examples/edge-sync/README.md). SINEW is the path of the sinew binary.
#
# Everything happens in a temporary directory, on loopback: the nodes'
# HTTP ports are chosen by the system (--http 127.0.0.1:0, the URL read from
# the "sinew: serving" line), and their peer ports are two free ports found
# at start. While apart, node 2 runs without --peer and listens on a port
# node 1 does not know, so neither can reach the other. The script exits 0
# once both nodes hold the same rows, and those are the rows the conflict
# rules predict; any failure exits 1 with a message. Every node it started
# is stopped, and the directory removed, on every exit path.
set -uo pipefail

SINEW=${1:?usage: run.sh PATH_TO_SINEW}
READY_TIMEOUT_S=20
STOP_TIMEOUT_S=10
CONVERGE_TIMEOUT_S=30

work=
declare -A pid=() url=()

say() {
    printf '\n== %s\n' "$*"
}

die() {
    printf 'edge-sync: FAIL %s\n' "$*" >&2
    exit 1
}

show_logs() {
    local node
    for node in n1 n2; do
        [ -f "$work/$node.log" ] || continue
        printf -- '--- %s log (last lines):\n' "$node" >&2
        tail -n 15 "$work/$node.log" >&2
    done
}

# is_running PID: true while PID exists and is not a zombie (kill -0 also
# succeeds on a zombie).
is_running() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

cleanup() {
    local node
    for node in "${!pid[@]}"; do
        kill -KILL "${pid[$node]}" 2>/dev/null
        wait "${pid[$node]}" 2>/dev/null
    done
    [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# free_ports N: N distinct free TCP ports on loopback, one a line. All are
# held open until all are chosen, so they differ from one another.
free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    held.append(s)
for s in held:
    print(s.getsockname()[1])
PY
}

# start NODE LISTEN [serve options...]: starts `sinew serve` in crdt mode
# for NODE (data in $work/NODE, key $work/NODE.key) and waits for its
# "sinew: serving http://..." line; url[NODE] is then its HTTP address.
start() {
    local node=$1 listen=$2 deadline
    shift 2
    : >"$work/$node.out"
    "$SINEW" serve --mode crdt --cluster-secret-file "$work/cluster.secret" \
        --data "$work/$node" --key "$work/$node.key" --http 127.0.0.1:0 \
        --listen "$listen" "$@" >"$work/$node.out" 2>>"$work/$node.log" &
    pid[$node]=$!
    url[$node]=
    deadline=$((SECONDS + READY_TIMEOUT_S))
    while [ -z "${url[$node]}" ]; do
        url[$node]=$(sed -n 's|^sinew: serving \(http://[^ ]*\).*|\1|p' \
            "$work/$node.out" | head -n 1)
        [ -n "${url[$node]}" ] && break
        if ! is_running "${pid[$node]}"; then
            unset "pid[$node]"
            show_logs
            die "$node exited before it was ready"
        fi
        [ "$SECONDS" -lt "$deadline" ] ||
            die "$node printed no 'sinew: serving' line in ${READY_TIMEOUT_S} s"
        sleep 0.1
    done
    if [ "${listen##*:}" = 0 ]; then
        echo "   $node is up: ${url[$node]}, on a peer port nobody dials"
    else
        echo "   $node is up: ${url[$node]}, peers reach it at $listen"
    fi
}

# stop NODE: SIGTERM, and a clean exit (status 0) within STOP_TIMEOUT_S.
stop() {
    local node=$1 status deadline=$((SECONDS + STOP_TIMEOUT_S))
    kill -TERM "${pid[$node]}"
    while is_running "${pid[$node]}"; do
        [ "$SECONDS" -lt "$deadline" ] ||
            die "$node still running ${STOP_TIMEOUT_S} s after SIGTERM"
        sleep 0.1
    done
    wait "${pid[$node]}"
    status=$?
    unset "pid[$node]"
    [ "$status" -eq 0 ] || {
        show_logs
        die "$node exited with status $status after SIGTERM, want 0"
    }
    echo "   $node stopped"
}

# sql NODE SQL: runs SQL on NODE through `sinew shell`, echoing both, and
# prints the result rows (as the shell does: columns joined by '|').
sql() {
    local node=$1 text=$2 out
    printf '   %s> %s\n' "$node" "$text"
    out=$(printf '%s\n' "$text" | "$SINEW" shell "${url[$node]}" 2>&1) ||
        die "on $node: $text: $out"
    [ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/     /'
}

# query NODE SQL: the rows SQL returns on NODE, quietly; empty on failure.
query() {
    printf '%s\n' "$2" | "$SINEW" shell "${url[$1]}" 2>/dev/null
}

# converge SQL WANT: waits up to CONVERGE_TIMEOUT_S until SQL returns
# WANT, the rows the conflict rules predict, on both nodes, and prints them.
converge() {
    local text=$1 want=$2 a b deadline=$((SECONDS + CONVERGE_TIMEOUT_S))
    while :; do
        a=$(query n1 "$text")
        b=$(query n2 "$text")
        [ "$a" = "$want" ] && [ "$b" = "$want" ] && break
        if [ "$SECONDS" -ge "$deadline" ]; then
            printf -- '--- n1:\n%s\n--- n2:\n%s\n--- want:\n%s\n' \
                "$a" "$b" "$want" >&2
            show_logs
            [ "$a" = "$b" ] &&
                die "the nodes agree, but not on the rows the rules predict"
            die "the nodes did not converge within ${CONVERGE_TIMEOUT_S} s"
        fi
        sleep 0.2
    done
    printf '   both nodes: %s\n' "$text"
    printf '%s\n' "$a" | sed 's/^/     /'
}

[ -x "$SINEW" ] || die "$SINEW is not an executable"
command -v python3 >/dev/null 2>&1 || die "python3 not found (used to find free ports)"
work=$(mktemp -d "${TMPDIR:-/tmp}/sinew-edge-sync.XXXXXX") || die "mktemp failed"

say "keys: one shared cluster secret, one key pair (and node id) per node"
"$SINEW" keygen --secret --out "$work/cluster.secret" >/dev/null ||
    die "sinew keygen --secret failed"
ID1=$("$SINEW" keygen --out "$work/n1.key") || die "sinew keygen failed"
ID2=$("$SINEW" keygen --out "$work/n2.key") || die "sinew keygen failed"
echo "   n1 is ${ID1:0:16}..., n2 is ${ID2:0:16}..."
ports=$(free_ports 2) || die "cannot find free ports"
L1=127.0.0.1:$(sed -n 1p <<<"$ports")
L2=127.0.0.1:$(sed -n 2p <<<"$ports")

say "start n1 and n2 in crdt mode, each with the other as --peer"
start n1 "$L1" --peer "$ID2@$L2"
start n2 "$L2" --peer "$ID1@$L1"

say "create a table on n1 and write two rows; they replicate to n2"
sql n1 "CREATE TABLE tasks(id INTEGER PRIMARY KEY, title TEXT, status TEXT);"
sql n1 "INSERT INTO tasks VALUES (1, 'buy milk', 'todo'), (2, 'fix bike', 'todo');"
converge "SELECT * FROM tasks ORDER BY id;" "1|buy milk|todo
2|fix bike|todo"

say "n2 goes offline (SIGTERM); n1 keeps taking writes"
stop n2
sql n1 "UPDATE tasks SET status = 'done' WHERE id = 1;"
sql n1 "UPDATE tasks SET title = 'fix bike brakes' WHERE id = 2;"
sql n1 "INSERT INTO tasks VALUES (3, 'written on n1 while apart', 'todo');"

say "n2 is offline; writing on both (n2 restarts cut off: no --peer, and a peer port n1 does not dial)"
start n2 127.0.0.1:0
sql n2 "SELECT * FROM tasks ORDER BY id;"
[ "$(query n2 "SELECT count(*) FROM tasks WHERE id = 3;")" = 0 ] ||
    die "n2 got n1's writes while they were apart"
echo "   n2 has none of n1's writes. Now n2 changes the column of row 1 that"
echo "   n1 changed, another column of row 2 than n1 did, and adds row 4:"
sql n2 "UPDATE tasks SET status = 'cancelled' WHERE id = 1;"
sql n2 "UPDATE tasks SET status = 'doing' WHERE id = 2;"
sql n2 "INSERT INTO tasks VALUES (4, 'written on n2 while apart', 'todo');"
sql n1 "SELECT * FROM tasks ORDER BY id;"
[ "$(query n1 "SELECT status FROM tasks WHERE id = 1;")" = "done" ] ||
    die "n1 saw n2's write while they were apart"

say "reconnect: n2 restarts on its own peer port with n1 as --peer"
stop n2
start n2 "$L2" --peer "$ID1@$L1"

say "wait (at most ${CONVERGE_TIMEOUT_S} s) until both nodes hold the same rows"
echo "   The rule (docs/replication.md, \"Conflict rules (crdt)\"): every column"
echo "   of every row is its own last-writer-wins register, ordered by the"
echo "   hybrid logical clock of the write (the larger site id breaks a tie)."
echo "   Row 1: both changed status; n2 wrote later, so 'cancelled' wins."
echo "   Row 2: n1 changed title, n2 changed status: both changes survive."
echo "   Rows 3 and 4: each side's insert arrives at the other."
converge "SELECT * FROM tasks ORDER BY id;" "1|buy milk|cancelled
2|fix bike brakes|doing
3|written on n1 while apart|todo
4|written on n2 while apart|todo"

say "done: the nodes converged; stopping them"
stop n1
stop n2
