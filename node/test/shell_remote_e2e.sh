#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# shell_remote_e2e.sh SINEW [SERVER]: `sinew shell http://...` against a
# running node prints what `sinew shell FILE` prints. It starts
# `SERVER serve --data TMP/data --http 127.0.0.1:0` (SERVER defaults to
# SINEW), waits up to 20 s for its "sinew: serving http://..." line, then
# pipes the same input through `SINEW shell URL` and `SINEW shell
# TMP/local.sinew` and compares standard output, standard error and the
# exit status: every output mode with and without headers, values of every
# storage class, errors (the next statement still runs), BEGIN / INSERT /
# COMMIT and ROLLBACK as separate statements, .tables and .schema, -c.
# The two databases see the same statements in the same order, so they
# hold the same rows throughout. The server gets SIGTERM at the end; the
# temporary directory is removed by a trap. Exits 1 if any case failed.
set -uo pipefail

SINEW=${1:?usage: shell_remote_e2e.sh PATH_TO_SINEW [PATH_TO_SERVER]}
SERVER=${2:-$SINEW}
work=$(mktemp -d)
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then
        kill -TERM "$server_pid" 2>/dev/null
        wait "$server_pid" 2>/dev/null
    fi
    rm -rf "$work"
}
trap cleanup EXIT
failures=0
cases=0

fail() {
    printf 'FAIL %s\n' "$1"
    failures=$((failures + 1))
}

mkdir -p "$work/data"
"$SERVER" serve --data "$work/data" --http 127.0.0.1:0 \
    >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
url=""
for _ in $(seq 1 200); do
    url=$(sed -n 's|^sinew: serving \(http://[^ ]*\).*|\1|p' "$work/server.out" | head -1)
    [ -n "$url" ] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then
        break
    fi
    sleep 0.1
done
if [ -z "$url" ]; then
    echo "shell_remote_e2e: the server did not print its URL within 20 s"
    tail -20 "$work/server.out" "$work/server.err"
    exit 1
fi
local_db="$work/local.sinew"

# same NAME INPUT OPTIONS...: remote and local runs of INPUT agree on
# stdout, stderr and exit status.
same() {
    local name=$1 input=$2
    shift 2
    cases=$((cases + 1))
    printf '%s' "$input" | "$SINEW" shell "$@" "$url" >"$work/r.out" 2>"$work/r.err"
    local remote_status=$?
    printf '%s' "$input" | "$SINEW" shell "$@" "$local_db" >"$work/l.out" 2>"$work/l.err"
    local local_status=$?
    if ! cmp -s "$work/r.out" "$work/l.out"; then
        fail "$name: stdout differs (sinew shell $* URL)"
        diff -u "$work/l.out" "$work/r.out" | head -20
    fi
    if ! cmp -s "$work/r.err" "$work/l.err"; then
        fail "$name: stderr differs"
        diff -u "$work/l.err" "$work/r.err" | head -10
    fi
    if [ "$remote_status" != "$local_status" ]; then
        fail "$name: exit status $remote_status remotely, $local_status locally"
    fi
}

same "create" "CREATE TABLE t(i INTEGER, r REAL, s TEXT, b BLOB, n);
INSERT INTO t VALUES (1, 0.1, 'a|b', x'00ff', NULL),
  (-9223372036854775808, -0.0, 'comma,quote\"', x'414243', 1e300),
  (9223372036854775807, 2.5, 'line
break', x'', 'tab	here'),
  (0, 1e-7, 'é日本', NULL, '');
"
query="SELECT * FROM t;
SELECT i, r * 2 AS doubled, s || '!' AS shout FROM t WHERE i >= 0 ORDER BY i;
SELECT count(*), sum(i), avg(r), max(s), typeof(b) FROM t;
SELECT 1 WHERE 0;
SELECT 'x'; SELECT 'y', 2, 1.0/3, 1e15, 123456789012345678.0;
"
for mode in list csv json box table; do
    same "mode $mode" "$query" "-$mode"
    same "mode $mode header" "$query" "-$mode" -header
done
same "separator and nullvalue" "$query" -separator ' ; ' -nullvalue NIL -header

same "errors continue" "SELECT 1;
SELEC 2;
SELECT * FROM nope;
SELECT 3;
CREATE TABLE nn(a NOT NULL);
INSERT INTO nn VALUES (NULL);
SELECT 4;
"

same "transaction across statements" "BEGIN;
INSERT INTO t(i, s) VALUES (10, 'in tx');
SELECT count(*) FROM t;
INSERT INTO t(i, s) VALUES (11, 'also in tx');
COMMIT;
SELECT i, s FROM t WHERE i >= 10 ORDER BY i;
"
same "rollback" "BEGIN;
DELETE FROM t;
SELECT count(*) FROM t;
ROLLBACK;
SELECT count(*) FROM t;
"
same "transaction spanning input lines" "BEGIN
;
UPDATE t SET s = 'updated' WHERE i = 10
;
COMMIT;
SELECT s FROM t WHERE i = 10;
"
same "error inside a transaction" "BEGIN;
INSERT INTO t(i) VALUES (12);
INSERT INTO nope VALUES (1);
COMMIT;
SELECT count(*) FROM t WHERE i = 12;
"

same "dot commands" "CREATE TABLE alpha(a); CREATE TABLE beta(b TEXT, c);
CREATE TABLE gamma_with_a_long_name(x);
INSERT INTO beta VALUES ('one', NULL), ('two
lines', 2);
.tables
.tables b%
.schema beta
.schema
.mode csv
.headers on
SELECT * FROM beta;
.mode box
SELECT printf('%.70c', 'w') AS wide, * FROM beta;
.mode list
.separator :
.nullvalue (null)
SELECT * FROM beta;
SELECT b
  , c
  FROM beta -- a comment; still the same statement
  WHERE c IS /* ; */ NULL;
# a comment line
.quit
SELECT 'not reached';
"
same "comments and empty statements" "SELECT 1; -- trailing comment
/* block */ ;
SELECT 2;;
-- only a comment at the end"
same "unterminated last statement" "SELECT 1;
SELECT 2"

cases=$((cases + 1))
c_sql="SELECT count(*) FROM t; SELEC; SELECT max(i) FROM t;"
"$SINEW" shell -header -c "$c_sql" "$url" >"$work/r.out" 2>"$work/r.err"
remote_status=$?
"$SINEW" shell -header -c "$c_sql" "$local_db" >"$work/l.out" 2>"$work/l.err"
if [ "$remote_status" != "$?" ] || ! cmp -s "$work/r.out" "$work/l.out" ||
    ! cmp -s "$work/r.err" "$work/l.err"; then
    fail "-c with several statements"
fi

# What only a URL can get wrong.
https_url="https${url#http}"
cases=$((cases + 1))
"$SINEW" shell "$https_url" </dev/null >"$work/out" 2>"$work/err"
status=$?
if [ "$status" != 1 ] || ! grep -q 'https is not supported' "$work/err"; then
    fail "https URL: status $status, stderr: $(head -c 200 "$work/err")"
fi
cases=$((cases + 1))
echo "SELECT 1;" | "$SINEW" shell http://127.0.0.1:1/ >"$work/out" 2>"$work/err"
status=$?
if [ "$status" != 1 ] || ! grep -q '^Error: unable to open database' "$work/err"; then
    fail "unreachable node: status $status, stderr: $(head -c 200 "$work/err")"
fi

cases=$((cases + 1))
"$SINEW" cluster status --node "$url" >"$work/out" 2>"$work/err"
status=$?
if [ "$status" != 0 ] || ! grep -Eq '^node +[0-9a-f]{64}$' "$work/out" ||
    ! grep -Eq '^mode +(single|crdt|leader|quorum)$' "$work/out"; then
    fail "cluster status: status $status"
    head -5 "$work/out" "$work/err"
fi
cases=$((cases + 1))
"$SINEW" cluster add >"$work/out" 2>"$work/err"
[ "$?" = 2 ] || fail "cluster add without arguments: not a usage error"

# The server ends cleanly on SIGTERM.
cases=$((cases + 1))
kill -TERM "$server_pid"
for _ in $(seq 1 100); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
if kill -0 "$server_pid" 2>/dev/null; then
    fail "server still running 10 s after SIGTERM"
else
    wait "$server_pid"
    server_status=$?
    [ "$server_status" = 0 ] || fail "server exit status $server_status after SIGTERM"
fi
server_pid=""

printf 'shell_remote_e2e: %d cases, %d failed\n' "$cases" "$failures"
[ "$failures" -eq 0 ]
