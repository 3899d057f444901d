-- SPDX-License-Identifier: MIT
--
-- difftest_regressions.sql: SQL scripts that once showed sinew differing
-- from SQLite 3.40. engine_difftest runs them first on every run, each
-- statement compared with libsqlite3 as the random statements are. A line
-- "-- case: <name>" starts a case on fresh databases; a statement runs when
-- it is complete (sqlite3_complete()). Rows are compared in order when the
-- statement has an ORDER BY, as a multiset otherwise.

-- case: smoke
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT COLLATE NOCASE, c);
INSERT INTO t VALUES (1, 'x', 1.5), (2, 'Y', NULL);
SELECT a, b, typeof(c) FROM t ORDER BY 2;
