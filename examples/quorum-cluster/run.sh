#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run.sh SINEW: a three-node quorum (Raft) cluster on loopback loses its
# leader to SIGKILL in the middle of a write load, and no acknowledged
# write is lost.
#
# Steps, each narrated as it runs:
#   1. keys and a shared cluster secret in a temporary directory; node 1
#      starts a cluster of its own, nodes 2 and 3 --join it; wait until
#      `sinew cluster status` lists three voters;
#   2. WRITERS clients insert rows, one `sinew shell -c "INSERT ..."` per
#      row, each row with its own key. A row whose call exited 0 is
#      acknowledged, and its id is recorded. A failed call (not the leader,
#      connection refused, outcome unknown) is retried with the same row on
#      the next node: INSERT OR IGNORE makes the retry harmless when the
#      first try did commit;
#   3. once ROWS_BEFORE rows are acknowledged, the leader (the node whose
#      status says state=leader) is killed with SIGKILL; the survivors elect
#      a new one, the clients find it, and the load goes on until
#      ROWS_AFTER more rows are acknowledged;
#   4. the load stops; every acknowledged row must be on the new leader, the
#      other survivor must hold the same rows (leadership is handed to it to
#      read there: followers refuse reads), and the killed node, restarted
#      with its data, must catch up to the same rows.
# Exit 0 only if all of that holds. Every node, client and the temporary
# directory are cleaned up on every exit path (KEEP=1 keeps the directory).
#
# Peers need fixed --listen ports (a node advertises the port it was given):
# three free ones are picked from 20000-31999, below the kernel's ephemeral
# range. Clients use --http 127.0.0.1:0 and the URL each node prints.
set -uo pipefail

SINEW=${1:?usage: run.sh PATH_TO_SINEW}
WRITERS=${WRITERS:-3}
ROWS_BEFORE=${ROWS_BEFORE:-300}
ROWS_AFTER=${ROWS_AFTER:-300}
STEP_TIMEOUT_S=60

work=
node_pid=("" "" "" "")
node_url=("" "" "" "")
node_id=("" "" "" "")
writer_pids=()
listen_base=

say() { printf '== %s\n' "$*"; }
note() { printf '   %s\n' "$*"; }

show_logs() {
    local i
    for i in 1 2 3; do
        if [ -f "$work/n$i.log" ]; then
            printf -- '--- node %d log (last 15 lines)\n' "$i" >&2
            tail -n 15 "$work/n$i.log" >&2
        fi
    done
}

die() {
    printf 'quorum-cluster: FAIL %s\n' "$*" >&2
    [ -n "$work" ] && show_logs
    exit 1
}

stop_writers() {
    local pid
    [ -n "$work" ] && touch "$work/stop"
    for pid in "${writer_pids[@]}"; do
        wait "$pid" 2>/dev/null
    done
    writer_pids=()
}

cleanup() {
    local i
    # The nodes go first: a client blocked on one then fails at once.
    for i in 1 2 3; do
        if [ -n "${node_pid[$i]}" ]; then
            kill -KILL "${node_pid[$i]}" 2>/dev/null
            wait "${node_pid[$i]}" 2>/dev/null
        fi
    done
    stop_writers
    if [ -n "$work" ]; then
        if [ "${KEEP:-0}" = 1 ]; then
            printf 'quorum-cluster: kept %s\n' "$work" >&2
        else
            rm -rf "$work"
        fi
    fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# is_running PID: true while PID exists and is not a zombie.
is_running() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# port_is_free PORT: nothing listens on 127.0.0.1:PORT.
port_is_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Sets listen_base to a port P with P, P+1 and P+2 free.
pick_listen_ports() {
    local base
    for _ in $(seq 1 50); do
        base=$((20000 + RANDOM % 11997))
        if port_is_free "$base" && port_is_free $((base + 1)) && port_is_free $((base + 2)); then
            listen_base=$base
            return 0
        fi
    done
    die "found no three free ports in 20000-31999"
}

# start_node I [--join URL]: starts node I in the background and waits for
# its "sinew: serving http://..." line, which gives node_url[I].
start_node() {
    local i=$1 deadline
    shift
    : >"$work/n$i.out"
    "$SINEW" serve --mode quorum --cluster-secret-file "$work/cluster.secret" \
        --data "$work/n$i" --key "$work/n$i.key" --http 127.0.0.1:0 \
        --listen "127.0.0.1:$((listen_base + i - 1))" "$@" \
        >"$work/n$i.out" 2>>"$work/n$i.log" &
    node_pid[i]=$!
    node_url[i]=
    deadline=$((SECONDS + 20))
    while [ -z "${node_url[$i]}" ]; do
        node_url[i]=$(sed -n 's|^sinew: serving \(http://[^ ]*\).*|\1|p' "$work/n$i.out" | head -n 1)
        [ -n "${node_url[$i]}" ] && break
        is_running "${node_pid[$i]}" || die "node $i exited before it was ready"
        [ "$SECONDS" -lt "$deadline" ] || die "node $i printed no 'sinew: serving' line within 20 s"
        sleep 0.1
    done
}

# status I: `sinew cluster status` of node I (empty when it does not answer).
status() {
    timeout 5 "$SINEW" cluster status --node "${node_url[$1]}" 2>/dev/null
}

# raft_field I KEY: KEY of the "raft" line of node I's status (state, term,
# commit_index, applied_index).
raft_field() {
    status "$1" | awk -v key="$2" '$1 == "raft" {
        for (f = 2; f <= NF; f++) { split($f, kv, "="); if (kv[1] == key) print kv[2] } }'
}

# find_leader I...: prints which of the nodes I... says it is the leader.
find_leader() {
    local i
    for i in "$@"; do
        if [ "$(raft_field "$i" state)" = leader ]; then
            echo "$i"
            return 0
        fi
    done
    return 1
}

# wait_leader I...: waits until one of the nodes I... leads; prints it.
wait_leader() {
    local deadline=$((SECONDS + STEP_TIMEOUT_S)) leader
    until leader=$(find_leader "$@"); do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.1
    done
    echo "$leader"
}

acked_count() {
    cat "$work"/acked.* 2>/dev/null | wc -l
}

# writer W: one client. Row ids are W*1000000 + seq, so the clients never
# write the same row (quorum mode fails a write of a row that an in-flight
# transaction also writes: docs/replication.md, "Conflicts and isolation").
writer() {
    local w=$1 seq=0 node=$1 id
    while [ ! -e "$work/stop" ]; do
        id=$((w * 1000000 + seq))
        if timeout 10 "$SINEW" shell -c \
            "INSERT OR IGNORE INTO events(id, writer, seq) VALUES ($id, $w, $seq)" \
            "${node_url[$node]}" >/dev/null 2>>"$work/writer.$w.err"; then
            echo "$id" >>"$work/acked.$w"
            seq=$((seq + 1))
        else
            echo "$id" >>"$work/retried.$w"
            node=$((node % 3 + 1))
            sleep 0.05
        fi
    done
}

# wait_acked N: waits until N rows in all are acknowledged.
wait_acked() {
    local deadline=$((SECONDS + STEP_TIMEOUT_S))
    while [ "$(acked_count)" -lt "$1" ]; do
        [ "$SECONDS" -lt "$deadline" ] || die "only $(acked_count) of $1 rows acknowledged within ${STEP_TIMEOUT_S} s"
        sleep 0.1
    done
}

# read_ids I FILE: every row id, read on node I once it leads.
read_ids() {
    local deadline=$((SECONDS + STEP_TIMEOUT_S))
    until timeout 10 "$SINEW" shell -c "SELECT id FROM events ORDER BY id" \
        "${node_url[$1]}" >"$2" 2>"$work/read.err"; do
        [ "$SECONDS" -lt "$deadline" ] || die "cannot read the rows on node $1: $(cat "$work/read.err")"
        sleep 0.2
    done
}

# lead_and_read FROM TO FILE: hands leadership from node FROM to node TO,
# waits until TO leads, and reads its rows into FILE.
lead_and_read() {
    local from=$1 to=$2
    if [ "$from" != "$to" ]; then
        timeout 10 "$SINEW" cluster transfer "${node_id[$to]}" --node "${node_url[$from]}" >/dev/null ||
            die "cannot hand leadership from node $from to node $to"
        [ "$(wait_leader "$to")" = "$to" ] || die "node $to did not become the leader"
    fi
    read_ids "$to" "$3"
}

# wait_caught_up I INDEX: waits until node I has applied INDEX.
wait_caught_up() {
    local deadline=$((SECONDS + STEP_TIMEOUT_S)) applied
    while :; do
        applied=$(raft_field "$1" applied_index)
        [ -n "$applied" ] && [ "$applied" -ge "$2" ] && return 0
        [ "$SECONDS" -lt "$deadline" ] || die "node $1 applied ${applied:-nothing} of $2 within ${STEP_TIMEOUT_S} s"
        sleep 0.1
    done
}

[ -x "$SINEW" ] || die "$SINEW is not an executable"
SINEW=$(realpath "$SINEW")
work=$(mktemp -d "${TMPDIR:-/tmp}/sinew-quorum-example.XXXXXX") || die "mktemp failed"

say "1. keys, a shared cluster secret, and three nodes in quorum mode"
"$SINEW" keygen --secret --out "$work/cluster.secret" >/dev/null || die "keygen --secret failed"
for i in 1 2 3; do
    node_id[i]=$("$SINEW" keygen --out "$work/n$i.key") || die "keygen failed"
done
pick_listen_ports
start_node 1
leader=$(wait_leader 1) || die "node 1 did not bootstrap a cluster"
note "node 1 at ${node_url[1]} started a cluster of its own and leads it"
start_node 2 --join "${node_url[1]}"
start_node 3 --join "${node_url[1]}"
note "nodes 2 and 3 at ${node_url[2]} and ${node_url[3]} ask node 1 to add them"
deadline=$((SECONDS + STEP_TIMEOUT_S))
until [ "$(status 1 | grep -c 'role=voter')" = 3 ]; do
    [ "$SECONDS" -lt "$deadline" ] || die "the cluster has no three voters after ${STEP_TIMEOUT_S} s"
    sleep 0.2
done
note "sinew cluster status lists three voters"

"$SINEW" shell -c "CREATE TABLE events(id INTEGER PRIMARY KEY, writer INTEGER NOT NULL, seq INTEGER NOT NULL)" \
    "${node_url[1]}" || die "CREATE TABLE failed"

say "2. $WRITERS clients insert rows, each waiting for its commit before the next"
for w in $(seq 1 "$WRITERS"); do
    writer "$w" &
    writer_pids+=($!)
done
wait_acked "$ROWS_BEFORE"
note "$(acked_count) rows acknowledged so far"

say "3. SIGKILL the leader in the middle of the load"
leader=$(find_leader 1 2 3) || die "no node says it is the leader"
term=$(raft_field "$leader" term)
killed_at=$(acked_count)
started=$(date +%s%N)
kill -KILL "${node_pid[$leader]}"
wait "${node_pid[$leader]}" 2>/dev/null
node_pid[leader]=
survivors=()
for i in 1 2 3; do [ "$i" != "$leader" ] && survivors+=("$i"); done
killed=$leader
note "killed node $killed, the leader of term $term, with $killed_at rows acknowledged"
leader=$(wait_leader "${survivors[@]}") || die "the survivors elected no leader within ${STEP_TIMEOUT_S} s"
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
note "node $leader leads term $(raft_field "$leader" term), ${elapsed_ms} ms after the kill"
wait_acked $((killed_at + ROWS_AFTER))
note "the clients found the new leader: $(acked_count) rows acknowledged"

say "4. stop the load and check that no acknowledged row was lost"
stop_writers
sort -n "$work"/acked.* >"$work/acked"
total=$(wc -l <"$work/acked")
retried=$(cat "$work"/retried.* 2>/dev/null | wc -l)
note "$total rows acknowledged, $retried calls failed and were retried on another node"
read_ids "$leader" "$work/rows.$leader"
sort -n -c "$work/rows.$leader" 2>/dev/null || die "node $leader returned rows out of order"
lost=$(comm -23 "$work/acked" "$work/rows.$leader" | wc -l)
[ "$lost" -eq 0 ] || die "node $leader lacks $lost acknowledged rows, e.g. $(comm -23 "$work/acked" "$work/rows.$leader" | head -n 5 | tr '\n' ' ')"
extra=$(comm -13 "$work/acked" "$work/rows.$leader" | wc -l)
note "node $leader (the new leader) has all $total acknowledged rows, and $extra more"
[ "$extra" -eq 0 ] || note "(a write cut off by the kill can commit without the client hearing so: its rows are there, unacknowledged)"

commit=$(raft_field "$leader" commit_index)
for i in "${survivors[@]}"; do [ "$i" != "$leader" ] && other=$i; done
wait_caught_up "$other" "$commit"
lead_and_read "$leader" "$other" "$work/rows.$other"
cmp -s "$work/rows.$leader" "$work/rows.$other" || die "node $other holds other rows than node $leader"
note "node $other, the other survivor, holds the same $(wc -l <"$work/rows.$other") rows (read after handing it leadership)"

say "5. restart the killed node $killed with its data: it catches up"
if [ "$killed" = 1 ]; then start_node 1; else start_node "$killed" --join "${node_url[1]}"; fi
wait_caught_up "$killed" "$(raft_field "$other" commit_index)"
lead_and_read "$other" "$killed" "$work/rows.$killed"
cmp -s "$work/rows.$other" "$work/rows.$killed" || die "the restarted node $killed holds other rows than node $other"
note "node $killed holds the same $(wc -l <"$work/rows.$killed") rows (read after handing it leadership)"

say "stop the nodes (SIGTERM)"
for i in 1 2 3; do
    kill -TERM "${node_pid[$i]}"
done
for i in 1 2 3; do
    deadline=$((SECONDS + 15))
    while is_running "${node_pid[$i]}"; do
        [ "$SECONDS" -lt "$deadline" ] || die "node $i still runs 15 s after SIGTERM"
        sleep 0.1
    done
    wait "${node_pid[$i]}"
    status=$?
    node_pid[i]=
    [ "$status" -eq 0 ] || die "node $i exited with status $status after SIGTERM, want 0"
done
echo "quorum-cluster: passed: $total acknowledged writes, none lost across the leader's SIGKILL"
