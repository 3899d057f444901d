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

-- case: IS TRUE / IS FALSE test truth, not equality with 1 or 0
SELECT '9007199254740993' IS TRUE, 19 IS TRUE, '1BA' IS TRUE, 0.5 IS TRUE;
SELECT 'x' IS NOT FALSE, NULL IS NOT TRUE, NULL IS FALSE, 0 IS FALSE;
SELECT 2 IS NOT DISTINCT FROM TRUE, 2 IS DISTINCT FROM FALSE, x'' IS FALSE;
CREATE TABLE t(b INT);
INSERT INTO t VALUES (19), (-1), ('1BA'), (NULL), (0);
SELECT b, b IS TRUE, b IS NOT TRUE, b IS FALSE, b IS NOT FALSE FROM t;
DELETE FROM t WHERE b IS NOT FALSE RETURNING b IS TRUE;

-- case: ORDER BY an ordinal or alias with COLLATE sorts under it
CREATE TABLE t(b TEXT);
INSERT INTO t VALUES ('0.19'), ('1'), ('Ab '), ('a '), ('B');
SELECT DISTINCT b FROM t ORDER BY 1 COLLATE NOCASE LIMIT 3;
SELECT b AS x FROM t ORDER BY x COLLATE NOCASE DESC;
SELECT b FROM t ORDER BY 1 COLLATE RTRIM, 1 COLLATE BINARY;
SELECT count(*) FROM t GROUP BY b COLLATE NOCASE ORDER BY 1;
SELECT upper(b), count(*) FROM t GROUP BY 1 COLLATE NOCASE ORDER BY 1;

-- case: -0.0 literals keep their sign
SELECT -0.0, (-0.0 COLLATE BINARY), +(-0.0), -(0.0);
VALUES (0.5, (-0.0 COLLATE BINARY)), (1, -0.0);
