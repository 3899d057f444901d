#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# transfer_e2e.sh SINEW: end-to-end check of `sinew import`, `sinew export`
# and `sinew keygen` as a script uses them (docs/import-export.md). A
# database made by /usr/bin/sqlite3 is imported, read back through `sinew
# shell` and exported, and /usr/bin/sqlite3 must print the same rows from
# the export as from the original; the summary line is exact, warnings name
# what was skipped, standard error holds no progress bar when it is not a
# terminal (and does when it is, under script(1)); refusals keep the
# existing file; bad usage exits 2. keygen: the id alone on standard
# output, the key file mode 0600, --show prints the same id, an existing
# file is refused untouched. Every failing case is named; exit 1 if any
# failed.
set -uo pipefail

SINEW=${1:?usage: transfer_e2e.sh PATH_TO_SINEW}
SQLITE3=${SQLITE3:-/usr/bin/sqlite3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
cases=0

fail() {
    printf 'FAIL %s\n' "$1"
    failures=$((failures + 1))
}

# run NAME WANT_STATUS COMMAND...: stdout in $work/out, stderr in $work/err.
run() {
    local name=$1 status=$2
    shift 2
    cases=$((cases + 1))
    "$@" >"$work/out" 2>"$work/err" </dev/null
    local got=$?
    if [ "$got" != "$status" ]; then
        fail "$name: exit status $got, want $status"
        head -5 "$work/err"
    fi
}

# check NAME CONDITION...: one more case that holds when CONDITION does.
check() {
    local name=$1
    shift
    cases=$((cases + 1))
    "$@" || fail "$name"
}

cd "$work" || exit 1
"$SQLITE3" src.db "
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v);
INSERT INTO t VALUES (1, 'one', 1.5), (4, 'four', x'00ff'), (9, NULL, -7);
DELETE FROM t WHERE id = 4;
INSERT INTO t VALUES (12, 'twelve', '');
CREATE TABLE kv(k TEXT, n INTEGER, PRIMARY KEY(k, n));
INSERT INTO kv VALUES ('a', 1), ('b', 2), ('é', 3);
CREATE INDEX t_name ON t(name);
CREATE VIEW names AS SELECT name FROM t;
CREATE TRIGGER odd AFTER DELETE ON t BEGIN
  SELECT * FROM main.kv;
END;"
rows="SELECT rowid, id, name, quote(v), typeof(v) FROM t ORDER BY rowid;
SELECT rowid, k, n FROM kv ORDER BY rowid;
SELECT name, sql FROM sqlite_schema WHERE type IN ('table', 'index', 'view')
  AND sql IS NOT NULL ORDER BY name;
SELECT name FROM names ORDER BY 1;"

# ---- import ----
run "import" 0 "$SINEW" import src.db app.sinew
check "import: summary line" [ "$(cat out)" = \
    "imported 2 tables, 1 index, 1 view, 6 rows into app.sinew (skipped 1 trigger)" ]
check "import: the refused trigger is named as skipped" \
    grep -q '^warning: skipped trigger odd: ' err
check "import: no progress bar off a terminal" \
    [ "$(grep -c $'\r' err)" = 0 ]
"$SQLITE3" src.db "$rows" >want
run "import: read back" 0 "$SINEW" shell -c "$rows" app.sinew
check "import: rows read back through sinew shell" cmp -s want out

# ---- export ----
run "export" 0 "$SINEW" export app.sinew back.db
check "export: summary line" [ "$(cat out)" = \
    "exported 2 tables, 1 index, 1 view, 6 rows into back.db" ]
"$SQLITE3" back.db "$rows" >got
check "export: sqlite3 reads the same rows and schema" cmp -s want got
check "export: integrity" [ "$("$SQLITE3" back.db 'PRAGMA integrity_check')" = ok ]

# ---- refusals ----
cp app.sinew app.copy
run "import over an existing file" 1 "$SINEW" import src.db app.sinew
check "existing target: message" grep -q 'app.sinew already exists' err
check "existing target: untouched" cmp -s app.sinew app.copy
run "export over an existing file" 1 "$SINEW" export app.sinew src.db
check "existing SQLite target: message" grep -q 'src.db already exists' err
printf 'not a database %.0s' $(seq 100) >junk.db
run "import of a non-database" 1 "$SINEW" import junk.db junk.sinew
check "non-database: message" grep -q 'junk.db: file is not a database' err
check "non-database: nothing left" test ! -e junk.sinew -a ! -e junk.sinew-wal
"$SQLITE3" norowid.db "CREATE TABLE w(k PRIMARY KEY) WITHOUT ROWID;"
run "import of an unsupported table" 1 "$SINEW" import norowid.db w.sinew
check "unsupported table: names it" grep -q 'table w: .*WITHOUT ROWID' err
check "unsupported table: nothing left" test ! -e w.sinew -a ! -e w.sinew-wal

# ---- usage ----
run "import without arguments" 2 "$SINEW" import
run "import with one argument" 2 "$SINEW" import src.db
run "import with three arguments" 2 "$SINEW" import src.db a.sinew b.sinew
run "import with an unknown option" 2 "$SINEW" import --fast src.db a.sinew
run "import --help" 0 "$SINEW" import --help
check "import --help: usage on stdout" grep -q '^Usage: sinew import' out
run "export --help" 0 "$SINEW" export --help
check "export --help: usage on stdout" grep -q '^Usage: sinew export' out

# ---- progress bar on a terminal ----
if command -v script >/dev/null; then
    cases=$((cases + 1))
    script -qec "'$SINEW' import src.db tty.sinew" /dev/null >tty.out 2>&1 </dev/null
    grep -q $'\rimporting t  \[#\+\]  100%  3/3 rows' tty.out ||
        fail "progress bar: not drawn on a terminal"
fi

# ---- keygen ----
run "keygen --out" 0 "$SINEW" keygen --out n1.key
id=$(cat out)
check "keygen: id is 64 hex digits alone" \
    test "$(grep -cE '^[0-9a-f]{64}$' out)" = 1 -a "$(wc -l <out)" = 1
check "keygen: key file mode 0600" [ "$(stat -c %a n1.key)" = 600 ]
run "keygen --show" 0 "$SINEW" keygen --show n1.key
check "keygen --show: same id" [ "$(cat out)" = "$id" ]
cp n1.key n1.copy
run "keygen over an existing file" 1 "$SINEW" keygen --out n1.key
check "keygen existing: message" grep -q 'n1.key already exists' err
check "keygen existing: untouched" cmp -s n1.key n1.copy
check "keygen existing: nothing on stdout" [ ! -s out ]
run "keygen --show of a missing file" 1 "$SINEW" keygen --show none.key
chmod 644 n1.copy
run "keygen --show of a group-readable key" 1 "$SINEW" keygen --show n1.copy
check "keygen group-readable: says chmod" grep -q 'chmod 600' err
run "keygen --show of a non-key" 1 "$SINEW" keygen --show src.db
run "keygen without arguments" 2 "$SINEW" keygen
run "keygen --out without a file" 2 "$SINEW" keygen --out
run "keygen --help" 0 "$SINEW" keygen --help
ID=$("$SINEW" keygen --out n2.key)
check "keygen: two keys differ" test -n "$ID" -a "$ID" != "$id"

printf 'transfer_e2e: %d cases, %d failed\n' "$cases" "$failures"
[ "$failures" -eq 0 ]
