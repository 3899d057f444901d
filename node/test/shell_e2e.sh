#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# shell_e2e.sh SINEW: end-to-end check of `sinew shell` against the sqlite3
# command-line shell. Each case pipes the same SQL (or -c text) through
# `SINEW shell ...` and through /usr/bin/sqlite3 with the same options and
# compares standard output byte for byte (list, csv, json, box, table, with
# and without -header, dot commands, statements spanning lines, -c). Errors
# are checked against sinew's own contract: "Error: <message>" on standard
# error, the next statement still runs, exit status 1. Every failing case is
# named and the script exits 1 if any failed.
set -uo pipefail

SINEW=${1:?usage: shell_e2e.sh PATH_TO_SINEW}
SQLITE3=${SQLITE3:-/usr/bin/sqlite3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
cases=0

fail() {
    printf 'FAIL %s\n' "$1"
    failures=$((failures + 1))
}

# same_stdout NAME INPUT OPTIONS...: stdout of sinew and sqlite3 on INPUT.
same_stdout() {
    local name=$1 input=$2
    shift 2
    cases=$((cases + 1))
    printf '%s' "$input" | "$SINEW" shell "$@" >"$work/got" 2>"$work/got.err"
    printf '%s' "$input" | "$SQLITE3" "$@" >"$work/want" 2>/dev/null
    if ! cmp -s "$work/got" "$work/want"; then
        fail "$name (sinew shell $*)"
        diff -u "$work/want" "$work/got" | head -20
        head -5 "$work/got.err"
    fi
}

# expect NAME WANT_STATUS WANT_STDERR_FILE COMMAND...: exit status and
# standard error of a sinew run whose stdin is $input.
expect() {
    local name=$1 status=$2 want_err=$3
    shift 3
    cases=$((cases + 1))
    printf '%s' "$input" | "$@" >"$work/out" 2>"$work/err"
    local got=$?
    if [ "$got" != "$status" ]; then
        fail "$name: exit status $got, want $status"
    fi
    if [ -n "$want_err" ] && ! cmp -s "$work/err" "$want_err"; then
        fail "$name: standard error differs"
        diff -u "$want_err" "$work/err" | head -20
    fi
}

# The issue's acceptance check.
accept="SELECT 1, 'a'||2, 7/2, 7.0/2, typeof(1e300*1e10), NULL;"
cases=$((cases + 1))
if ! cmp -s <(echo "$accept" | "$SINEW" shell) <(echo "$accept" | "$SQLITE3" -list); then
    fail "acceptance: $accept"
fi

values="CREATE TABLE t(i INTEGER, r REAL, s TEXT, b BLOB, n);
INSERT INTO t VALUES (1, 0.1, 'a|b', x'00ff', NULL),
  (-9223372036854775808, -0.0, 'comma,quote\"', x'414243', 1e300),
  (9223372036854775807, 2.5, 'line
break', x'', 'tab	here'),
  (0, 1e-7, 'é日本', NULL, '');
SELECT * FROM t;
SELECT i, r * 2 AS doubled,
       s || '!' AS shout
  FROM t
 WHERE i >= 0
 ORDER BY i;
SELECT count(*), sum(i), avg(r), max(s) FROM t;
SELECT 1 WHERE 0;
SELECT 'x'; SELECT 'y', 2;
"
for mode in list csv json box table; do
    same_stdout "mode $mode" "$values" "-$mode"
    same_stdout "mode $mode header" "$values" "-$mode" -header
done
same_stdout "separator and nullvalue" "$values" -separator ' ; ' -nullvalue NIL -header

dots="CREATE TABLE alpha(a); CREATE TABLE beta(b TEXT, c);
CREATE TABLE gamma_with_a_long_name(x);
INSERT INTO beta VALUES ('one', NULL), ('two
lines', 2);
.tables
.schema beta
.mode
.mode csv
.mode
.headers on
SELECT * FROM beta;
.mode box
.mode
SELECT printf('%.70c', 'w') AS wide, * FROM beta;
.mode table
SELECT * FROM beta;
.mode json
SELECT * FROM beta;
.mode list
.headers off
.separator :
.nullvalue (null)
SELECT * FROM beta;
.header on
SELECT b
  , c
  FROM beta -- a comment; still the same statement
  WHERE c IS /* ; */ NULL;
# a comment line
.quit
SELECT 'not reached';
"
same_stdout "dot commands" "$dots"

same_stdout "unterminated last statement" "SELECT 1;
SELECT 2"
same_stdout "semicolon inside strings" "SELECT ';', 'a;b'
  , \"x;y\" FROM (SELECT 1 AS \"x;y\");
"

cases=$((cases + 1))
c_sql="CREATE TABLE t(a); INSERT INTO t VALUES (1), (2); SELECT a, a*1.5 FROM t;"
if ! cmp -s <("$SINEW" shell -header -c "$c_sql") <("$SQLITE3" -header :memory: "$c_sql"); then
    fail "-c with several statements"
fi

# Errors: the message on stderr, the next statement runs, exit status 1.
input="SELECT 1;
SELEC 2;
SELECT * FROM nope;
SELECT 3;
"
printf 'Error: near "SELEC": syntax error\nError: no such table: nope\n' >"$work/want_err"
expect "errors continue" 1 "$work/want_err" "$SINEW" shell
printf '1\n3\n' >"$work/want_out"
cmp -s "$work/out" "$work/want_out" || fail "errors continue: stdout"
input=""
expect "-c error" 1 "$work/want_err" "$SINEW" shell -c "SELEC 2; SELECT * FROM nope; SELECT 3;"
printf '3\n' >"$work/want_out"
cmp -s "$work/out" "$work/want_out" || fail "-c error: stdout"
input="CREATE TABLE t(a NOT NULL);
INSERT INTO t VALUES (NULL);
"
printf 'Error: NOT NULL constraint failed: t.a\n' >"$work/want_err"
expect "runtime error" 1 "$work/want_err" "$SINEW" shell

# Dot command errors print what sqlite3 prints.
input=".bogus
.headers
.mode nosuch
SELECT 5;
"
printf '%s' "$input" | "$SQLITE3" 2>/dev/null >/dev/null
printf 'Error: unknown command or invalid arguments:  "bogus". Enter ".help" for help\nUsage: .headers on|off\nError: mode should be one of: box csv json list table\n' >"$work/want_err"
expect "dot command errors" 1 "$work/want_err" "$SINEW" shell
cmp -s "$work/out" <(printf '5\n') || fail "dot command errors: stdout"

input=".timer on
SELECT 1;
"
expect "timer" 0 "" "$SINEW" shell
grep -Eqx 'Run Time: real [0-9]+\.[0-9]{3} user [0-9]+\.[0-9]{6} sys [0-9]+\.[0-9]{6}' "$work/out" ||
    fail "timer: no Run Time line"

# The binary's own interface.
input=""
expect "--version" 0 "" "$SINEW" --version
grep -Eqx 'sinew [0-9]+\.[0-9]+\.[0-9]+' "$work/out" || fail "--version output"
expect "--help" 0 "" "$SINEW" --help
expect "unknown subcommand" 2 "" "$SINEW" frobnicate
expect "bad shell flag" 2 "" "$SINEW" shell -bogus
expect "flag without value" 2 "" "$SINEW" shell -separator
expect "no subcommand" 2 "" "$SINEW"
# A database file: created, closed, reopened with its data (issue 4's
# acceptance check), as sqlite3 would show it.
input="CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT); INSERT INTO t VALUES(1, 'x'), (2, 'y');"
expect "database file: create" 0 "" "$SINEW" shell "$work/db.sinew"
input="SELECT * FROM t; PRAGMA integrity_check;"
expect "database file: reopen" 0 "" "$SINEW" shell "$work/db.sinew"
printf '1|x\n2|y\nok\n' | cmp -s - "$work/out" ||
    fail "database file: reopened data differs"
# Not a database: refused with sqlite3's message, the file untouched.
echo "plain text" >"$work/notes.txt"
input="SELECT 1;"
expect "not a database" 1 "" "$SINEW" shell "$work/notes.txt"
grep -q '^Error: .*file is not a database' "$work/err" ||
    fail "not a database: no Error: line"
[ "$(cat "$work/notes.txt")" = "plain text" ] && [ ! -e "$work/notes.txt-wal" ] ||
    fail "not a database: file changed or a WAL left behind"

printf 'shell_e2e: %d cases, %d failed\n' "$cases" "$failures"
[ "$failures" -eq 0 ]
