#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# cluster_bench.sh: the replication benchmark against peers (issue 12; make
# bench-replication). On this machine, in one run, on loopback:
#   quorum  3 `sinew serve --mode quorum` nodes: single-row INSERTs on the
#           leader at each --clients count (latency p50/p99, writes/s);
#   crdt    3 crdt nodes: INSERTs on one node at each --crdt-clients count,
#           then the time until both peers hold every row;
#   leader  3 leader-mode nodes: a writer at --lag-rate rows/s, the lag
#           until each follower sees each row, and the catch-up after;
#   etcd    3 etcd 3.4 members: a put of a fresh key per row (its JSON
#           gateway), at each --clients count;
#   dqlite  3 dqlite-demo nodes (go-dqlite): a PUT of a fresh key per row
#           (one INSERT OR REPLACE through dqlite), at each --clients count.
# Each cluster starts once (fresh temporary directories, free ports), runs
# --repeat rounds, and stops; the report holds medians. A peer that is not
# installed is reported absent (scripts/setup-bench-peers.sh installs it).
# The load client and report writer is bench_cluster (bench_cluster.c).
#
#   cluster_bench.sh --sinew PATH --tool PATH [--out DIR] [--seconds S]
#       [--warmup S] [--repeat N] [--clients 1,16,64] [--crdt-clients 1,16]
#       [--lag-rate R] [--lag-seconds S] [--value-bytes N]
#       [--only quorum,crdt,leader,etcd,dqlite]
#
# Every process started here is stopped by its PID on every exit path, and
# the temporary directory removed.
set -uo pipefail

SINEW=
TOOL=
OUT=bench-results
SECONDS_PER_RUN=3
WARMUP=0.5
REPEAT=3
CLIENTS=1,16,64
CRDT_CLIENTS=1,16
LAG_RATE=500
LAG_SECONDS=4
VALUE_BYTES=100
ONLY=quorum,crdt,leader,etcd,dqlite
READY_TIMEOUT_S=60

usage() {
    sed -n '/^#   cluster_bench.sh/,/^#       \[--only/p' "$0" | sed 's/^# *//' >&2
    exit 2
}

die() {
    printf 'cluster_bench: error: %s\n' "$*" >&2
    exit 1
}

say() { printf 'cluster_bench: %s\n' "$*" >&2; }

while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || usage
    case $1 in
    --sinew) SINEW=$2 ;;
    --tool) TOOL=$2 ;;
    --out) OUT=$2 ;;
    --seconds) SECONDS_PER_RUN=$2 ;;
    --warmup) WARMUP=$2 ;;
    --repeat) REPEAT=$2 ;;
    --clients) CLIENTS=$2 ;;
    --crdt-clients) CRDT_CLIENTS=$2 ;;
    --lag-rate) LAG_RATE=$2 ;;
    --lag-seconds) LAG_SECONDS=$2 ;;
    --value-bytes) VALUE_BYTES=$2 ;;
    --only) ONLY=$2 ;;
    *) usage ;;
    esac
    shift 2
done
[ -x "$SINEW" ] || die "--sinew: '$SINEW' is not an executable"
[ -x "$TOOL" ] || die "--tool: '$TOOL' is not an executable"
[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "--repeat: a positive integer"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sinew-cluster-bench.XXXXXX") ||
    die "cannot make a temporary directory"
PIDS=()

# Stops every process started here: SIGTERM, up to 10 s, then SIGKILL.
stop_all() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null
    done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 100); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    PIDS=()
}

cleanup() {
    stop_all
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

wants() { [[ ",$ONLY," == *",$1,"* ]]; }

# free_ports N: prints the first of N consecutive free TCP ports on
# 127.0.0.1, from a random start in 20000-59999 (others on the machine use
# fixed ports below 10000).
free_ports() {
    local n=$1 base port used
    used=$(ss -Htan 2>/dev/null | awk '{ n = split($4, a, ":"); print a[n] }')
    for _ in $(seq 50); do
        base=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        for ((port = base; port < base + n; port++)); do
            grep -qx "$port" <<<"$used" && continue 2
        done
        echo "$base"
        return 0
    done
    die "no $n consecutive free ports found"
}

RAW=
record() { printf '%s\n' "$*" >>"$RAW"; }

# run_tool ARGS...: one measurement; its result line goes to the raw file.
run_tool() {
    local line
    line=$("$TOOL" "$@") || return 1
    printf '  %s\n' "$line" >&2
    record "$line"
}

# sinew_up DIR MODE EXTRA...: starts one node (its out/log in DIR).
sinew_up() {
    local dir=$1
    shift
    "$SINEW" serve --data "$dir/data" --key "$dir/node.key" \
        --cluster-secret-file "$WORK/sinew/cluster.secret" --log-level warn \
        --log-file "$dir/node.log" "$@" >"$dir/node.out" 2>"$dir/node.err" &
    PIDS+=($!)
}

wait_sinew_sql() {
    "$TOOL" sql --url "$1" --retry-s "$READY_TIMEOUT_S" "$2" 2>>"$WORK/ready.log" ||
        die "node $1 did not answer '$2' in ${READY_TIMEOUT_S}s (logs: see above)"
}

# start_sinew MODE: three nodes N1..N3 with URLs in URL[1..3].
declare -a URL ID
start_sinew() {
    local mode=$1 base i j dir args
    base=$(free_ports 6)
    rm -rf "$WORK/sinew" && mkdir -p "$WORK/sinew"
    "$SINEW" keygen --secret --out "$WORK/sinew/cluster.secret" >/dev/null ||
        die "sinew keygen failed"
    for i in 1 2 3; do
        mkdir -p "$WORK/sinew/n$i"
        ID[i]=$("$SINEW" keygen --out "$WORK/sinew/n$i/node.key") ||
            die "sinew keygen failed"
        URL[i]=http://127.0.0.1:$((base + i - 1))
    done
    for i in 1 2 3; do
        dir=$WORK/sinew/n$i
        args=(--mode "$mode" --http "127.0.0.1:$((base + i - 1))"
            --listen "127.0.0.1:$((base + 2 + i))")
        if [ "$mode" = quorum ]; then
            [ "$i" -gt 1 ] && args+=(--join "${URL[1]}")
        else
            for j in 1 2 3; do
                [ "$j" = "$i" ] || args+=(--peer "${ID[$j]}@127.0.0.1:$((base + 2 + j))")
            done
            [ "$mode" = leader ] && args+=(--writer "${ID[1]}")
        fi
        sinew_up "$dir" "${args[@]}"
        [ "$i" = 1 ] && wait_sinew_sql "${URL[1]}" "SELECT 1"
    done
    if [ "$mode" = quorum ]; then
        for i in $(seq "$READY_TIMEOUT_S"); do
            [ "$("$SINEW" cluster status --node "${URL[1]}" 2>/dev/null |
                grep -c voter)" = 3 ] && break
            sleep 1
        done
        [ "$i" -lt "$READY_TIMEOUT_S" ] || die "quorum: 3 voters not reached"
    fi
    wait_sinew_sql "${URL[1]}" "CREATE TABLE bench(id INTEGER PRIMARY KEY, v TEXT)"
    if [ "$mode" != quorum ]; then
        # The table reaching both peers shows replication is up.
        wait_sinew_sql "${URL[2]}" "SELECT count(*) FROM bench"
        wait_sinew_sql "${URL[3]}" "SELECT count(*) FROM bench"
    fi
}

# Every measurement writes ids (keys) of its own: past ID_BASE, which
# next_load raises (in this shell, not a subshell) with the options shared
# by every write load, in LOAD.
ID_BASE=0
LOAD=()
next_load() {
    ID_BASE=$((ID_BASE + 1000000000))
    LOAD=(--seconds "$SECONDS_PER_RUN" --warmup "$WARMUP"
        --value-bytes "$VALUE_BYTES" --id-base "$ID_BASE")
}

bench_sinew_quorum() {
    local rep c
    say "sinew quorum: 3 nodes"
    start_sinew quorum
    for rep in $(seq "$REPEAT"); do
        for c in ${CLIENTS//,/ }; do
            next_load
            run_tool write --proto hrana --url "${URL[1]}" --clients "$c" \
                "${LOAD[@]}" --tag "system=quorum rep=$rep" ||
                die "sinew quorum, $c clients failed"
        done
    done
    stop_all
}

bench_sinew_crdt() {
    local rep c
    say "sinew crdt: 3 nodes, writes on one"
    start_sinew crdt
    for rep in $(seq "$REPEAT"); do
        for c in ${CRDT_CLIENTS//,/ }; do
            next_load
            run_tool write --proto hrana --url "${URL[1]}" --clients "$c" \
                "${LOAD[@]}" --converge "${URL[2]}" --converge "${URL[3]}" \
                --tag "system=crdt rep=$rep" ||
                die "sinew crdt, $c clients failed"
        done
    done
    stop_all
}

bench_sinew_leader() {
    local rep
    say "sinew leader: 3 nodes, follower lag at $LAG_RATE writes/s"
    start_sinew leader
    for rep in $(seq "$REPEAT"); do
        next_load
        run_tool lag --url "${URL[1]}" --follower "${URL[2]}" \
            --follower "${URL[3]}" --rate "$LAG_RATE" \
            --seconds "$LAG_SECONDS" --value-bytes "$VALUE_BYTES" \
            --id-base "$ID_BASE" --tag "system=leader rep=$rep" ||
            die "sinew leader lag failed"
    done
    stop_all
}

bench_etcd() {
    local base i cluster="" endpoints="" leader rep c dir
    if ! command -v etcd >/dev/null || ! command -v etcdctl >/dev/null; then
        say "etcd: absent (install: scripts/setup-bench-peers.sh, as root)"
        record "system=etcd kind=absent reason=install: scripts/setup-bench-peers.sh"
        return 0
    fi
    say "etcd: 3 members"
    base=$(free_ports 6)
    for i in 1 2 3; do
        cluster+="${cluster:+,}e$i=http://127.0.0.1:$((base + 2 * i - 1))"
        endpoints+="${endpoints:+,}127.0.0.1:$((base + 2 * i - 2))"
    done
    for i in 1 2 3; do
        dir=$WORK/etcd/e$i
        mkdir -p "$dir"
        etcd --name "e$i" --data-dir "$dir/data" \
            --listen-client-urls "http://127.0.0.1:$((base + 2 * i - 2))" \
            --advertise-client-urls "http://127.0.0.1:$((base + 2 * i - 2))" \
            --listen-peer-urls "http://127.0.0.1:$((base + 2 * i - 1))" \
            --initial-advertise-peer-urls "http://127.0.0.1:$((base + 2 * i - 1))" \
            --initial-cluster "$cluster" --initial-cluster-state new \
            --initial-cluster-token "sinew-bench-$$" >"$dir/etcd.log" 2>&1 &
        PIDS+=($!)
    done
    for i in $(seq "$READY_TIMEOUT_S"); do
        ETCDCTL_API=3 timeout 10 etcdctl --endpoints="$endpoints" \
            endpoint health >/dev/null 2>&1 && break
        sleep 1
    done
    [ "$i" -lt "$READY_TIMEOUT_S" ] || die "etcd did not become healthy"
    # The leader's endpoint: clients write there, as they do on sinew's.
    leader=$(ETCDCTL_API=3 timeout 10 etcdctl --endpoints="$endpoints" \
        endpoint status 2>/dev/null | awk -F', ' '$5 == "true" { print $1 }')
    [ -n "$leader" ] || die "etcd: no leader found"
    record "note etcd: $(etcd --version | head -n 1 | sed 's/etcd Version: //'), writes to the leader's client URL"
    for rep in $(seq "$REPEAT"); do
        for c in ${CLIENTS//,/ }; do
            next_load
            run_tool write --proto etcd --url "http://$leader" --clients "$c" \
                "${LOAD[@]}" --tag "system=etcd rep=$rep" ||
                die "etcd, $c clients failed"
        done
    done
    stop_all
}

dqlite_voters() {
    timeout 5 dqlite -s "$1" bench .cluster 2>/dev/null | grep -c voter
}

bench_dqlite() {
    local base i rep c dir
    if ! command -v dqlite-demo >/dev/null || ! command -v dqlite >/dev/null; then
        say "dqlite: absent (install: scripts/setup-bench-peers.sh, as root)"
        record "system=dqlite kind=absent reason=install: scripts/setup-bench-peers.sh"
        return 0
    fi
    say "dqlite: 3 dqlite-demo nodes"
    base=$(free_ports 6)
    for i in 1 2 3; do
        dir=$WORK/dqlite/q$i
        mkdir -p "$dir"
        args=(--api "127.0.0.1:$((base + i - 1))" --db "127.0.0.1:$((base + 2 + i))"
            -D "$dir/data")
        [ "$i" -gt 1 ] && args+=(--join "127.0.0.1:$((base + 3))")
        dqlite-demo "${args[@]}" >"$dir/demo.log" 2>&1 &
        PIDS+=($!)
        [ "$i" = 1 ] && sleep 1
    done
    for i in $(seq "$READY_TIMEOUT_S"); do
        [ "$(dqlite_voters "127.0.0.1:$((base + 3))")" = 3 ] && break
        sleep 1
    done
    [ "$i" -lt "$READY_TIMEOUT_S" ] || die "dqlite: 3 voters not reached"
    record "note dqlite: go-dqlite $(dpkg-query -W -f='${Version}' go-dqlite 2>/dev/null) dqlite-demo, libdqlite0 $(dpkg-query -W -f='${Version}' libdqlite0 2>/dev/null); writes to node 1's demo API (the first leader)"
    for rep in $(seq "$REPEAT"); do
        for c in ${CLIENTS//,/ }; do
            next_load
            run_tool write --proto dqlite --url "http://127.0.0.1:$base" \
                --clients "$c" "${LOAD[@]}" --tag "system=dqlite rep=$rep" ||
                die "dqlite, $c clients failed"
        done
    done
    stop_all
}

mkdir -p "$OUT" || die "cannot make $OUT"
RAW=$OUT/replication-raw.txt
: >"$RAW"
record "note Machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r); temporary directories in ${TMPDIR:-/tmp}. sinew: $("$SINEW" --version 2>/dev/null | head -n 1)$(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null | sed 's/^/, commit /')."
record "note Each cell: the median of $REPEAT runs of ${SECONDS_PER_RUN} s after ${WARMUP} s of warm-up; every client its own keep-alive HTTP connection, one ${VALUE_BYTES}-byte row (or key) per request, the next sent when the answer came; p50/p99: client-side latency of one request. Servers and the load client share the machine."
start=$(date +%s)
wants quorum && bench_sinew_quorum
wants crdt && bench_sinew_crdt
wants leader && bench_sinew_leader
wants etcd && bench_etcd
wants dqlite && bench_dqlite
record "note Wall time of the run: $(($(date +%s) - start)) s."
"$TOOL" report --raw "$RAW" --out "$OUT" || die "report failed"
say "wrote $OUT/replication.md, replication.csv, replication.svg (raw: $RAW)"
