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

-- case: UPDATE ... RETURNING of a column set to its own text value
CREATE TABLE t2(a DEFAULT 0);
INSERT INTO t2 VALUES ('-3.5'), (-8.30), ('1e5'), ('x'), (x'00ff');
UPDATE t2 SET a = a WHERE a RETURNING a, (- a), (CAST(a AS INT));
UPDATE t2 SET a = a RETURNING *;
SELECT rowid, * FROM t2;

-- case: UPDATE copying text between columns of the same row
CREATE TABLE t1(a REAL, b NUMERIC UNIQUE, c REAL DEFAULT 0.5, d);
INSERT INTO t1 VALUES (8, ' ', 10, 'ab'), ('-3.5', 18, '', 18), (1, 'A_B', 2, x'00ff');
UPDATE t1 SET a = 2.0e0, c = b, d = a, b = d;
SELECT rowid, * FROM t1;
UPDATE t1 SET d = c, c = d RETURNING *;
SELECT rowid, * FROM t1;

-- case: IS NULL and NOT NULL of a real literal are not negations
SELECT (7.74 IS NULL), (1.5 IS NOT NULL), (0.1 NOTNULL), -(1.5 ISNULL);

-- case: a function of a NOCASE column sorts, groups and dedups as BINARY
CREATE TABLE t(c COLLATE NOCASE, d);
INSERT INTO t VALUES ('A', 1), ('\', 2), ('a', 3), ('Ab ', 4), ('b', 5);
SELECT ltrim(c) FROM t ORDER BY 1;
SELECT DISTINCT lower(c) FROM t ORDER BY 1;
SELECT c FROM t ORDER BY max(c, d);
SELECT lower(c COLLATE RTRIM) = 'a   ', max(d, c), min(c, 'B') FROM t;
SELECT upper(c) AS u, count(*) FROM t GROUP BY u ORDER BY 1;
SELECT min(lower(c)), max(lower(c)), max(c) FROM t;

-- case: the UNIQUE key declared last is checked and reported first
CREATE TABLE t2(a, b DEFAULT '', c UNIQUE, PRIMARY KEY(b, c));
INSERT INTO t2(a, c) VALUES (1, 3), (2, 4);
UPDATE t2 SET c = 'Ab ', b = 'x';
INSERT INTO t2 VALUES (3, '', 3);
CREATE TABLE t3(a UNIQUE, b UNIQUE);
INSERT INTO t3 VALUES (1, 2);
INSERT INTO t3 VALUES (1, 2);

-- case: comparison affinity between two columns, and IN lists
CREATE TABLE t(a TEXT, b, c BLOB, d INT, e COLLATE NOCASE);
INSERT INTO t VALUES ('1', 1, 1, '1', 'A');
SELECT a = b, a = c, b = a, a = +b, a = 1, b = '1', d = a, a = d, +a = d FROM t;
SELECT a IN (b), b IN (a), 1 IN (a), a IN (1), 1 IN (a, 2), CAST(1 AS TEXT) IN (1) FROM t;
SELECT a IN (SELECT b FROM t), a IN (SELECT 1), a = (SELECT b FROM t), a = CAST(1 AS BLOB) FROM t;
SELECT 'a' IN (e), e IN ('a'), 'a' = e, 'a' IN (e, 'x'), 'a' IN ('A' COLLATE NOCASE) FROM t;
SELECT 'a' IN ('A' COLLATE NOCASE, 'b'), 14 IN (CAST('14' AS INT)), 1 IN (SELECT a FROM t) FROM t;

-- case: a column assigned twice by UPDATE takes the last value only
CREATE TABLE t(a INTEGER PRIMARY KEY, b);
INSERT INTO t VALUES (3, 2), (9, 1);
UPDATE t SET a = -1.14, a = a;
UPDATE t SET b = abs(-9223372036854775808), b = 5 RETURNING *;
UPDATE t SET a = 1.5, a = 7 WHERE a <= '_';
UPDATE t SET rowid = 20, a = 30 RETURNING *;
DELETE FROM t WHERE a = 9;
UPDATE t SET a = 40, rowid = 50, b = a RETURNING *;

-- case: coalesce, ifnull and iif evaluate only the arguments they need
SELECT ifnull(1, abs(-9223372036854775808)), coalesce(1, abs(-9223372036854775808));
SELECT iif(1, 2, abs(-9223372036854775808)), coalesce(NULL, NULL, 3), ifnull(NULL, 'x');
SELECT iif(0, 1, NULL), iif(NULL, 1, 2), coalesce(NULL, NULL), iif('1e1', 'a', 'b');
CREATE TABLE t(a, b);
INSERT INTO t VALUES (NULL, 1), (2, NULL), (NULL, NULL);
SELECT coalesce(a, b, 'z'), ifnull(b, a), iif(a, b, 'n') FROM t;
UPDATE t SET b = 0.1 WHERE coalesce(9, like('a', 'b', a));
SELECT rowid, * FROM t;
SELECT coalesce(a, like('a', 'b', 'xy')) FROM t;

-- case: an error inside a CASE WHEN keeps its own message
CREATE TABLE t(a, d);
INSERT INTO t VALUES ('ab', 1), ('c', 18);
SELECT CASE WHEN d = 18 THEN 1 WHEN like('x', 'y', a) THEN 2 END FROM t;
SELECT CASE d WHEN 1 THEN 1 WHEN abs(-9223372036854775807 - d) THEN 2 END FROM t;
DELETE FROM t WHERE (CASE d WHEN 18 THEN 1 WHEN like('x', 'y', a) THEN 2 END) NOTNULL;

-- case: EXISTS does not compute its subquery's result columns
CREATE TABLE t(a, b);
INSERT INTO t VALUES ('xy', 1);
SELECT EXISTS (SELECT like('a', 'b', a) FROM t), NOT EXISTS (SELECT * FROM t WHERE b > 1);
SELECT EXISTS (SELECT max(b) FROM t WHERE 0), EXISTS (SELECT DISTINCT abs(-9223372036854775808) FROM t);
SELECT EXISTS (SELECT 1 FROM t WHERE b = 2), EXISTS (SELECT a FROM t WHERE b = 1);

-- case: x IN () is a constant; x is neither resolved nor evaluated
SELECT nosuch IN (), abs(-9223372036854775808) NOT IN (), NULL IN ();
CREATE TABLE t(a);
INSERT INTO t VALUES ('xy');
SELECT (like('a', 'b', a) IN ()) FROM t;

-- case: LIKE checks its ESCAPE before its operands
SELECT NULL LIKE 'a' ESCAPE 'xy';
SELECT 'a' LIKE NULL ESCAPE 'xy';
SELECT 'a' LIKE 'a' ESCAPE NULL, NULL LIKE 'a' ESCAPE NULL, 'a' LIKE NULL;
SELECT like(NULL, 'a', 'xy');

-- case: AND and OR compute both operands, except where they decide a jump
CREATE TABLE t(a);
INSERT INTO t VALUES (0), (1), (NULL);
SELECT a AND abs(-9223372036854775808) FROM t;
SELECT 1 OR abs(-9223372036854775808) FROM t;
SELECT a FROM t WHERE a AND abs(a - 9223372036854775807 - 1);
SELECT a FROM t WHERE NOT (a OR abs(a - 9223372036854775807 - 2));
SELECT CASE WHEN a AND abs(a - 9223372036854775807 - 1) THEN 1 END FROM t;
SELECT iif(a AND abs(a - 9223372036854775807 - 1), 1, 2) FROM t;
SELECT count(*) FILTER (WHERE a AND abs(a - 9223372036854775807 - 1)) FROM t;
DELETE FROM t WHERE a AND abs(a - 9223372036854775807 - 1) RETURNING a;

-- case: OR REPLACE stores a NOT NULL column's DEFAULT under its affinity
CREATE TABLE t1(a NUMERIC NOT NULL DEFAULT '12', b REAL NOT NULL DEFAULT 3, c TEXT NOT NULL DEFAULT 5);
INSERT INTO t1 VALUES (1, 1, 1);
UPDATE OR REPLACE t1 SET a = NULL, b = NULL, c = NULL;
INSERT OR REPLACE INTO t1 VALUES (NULL, NULL, NULL);
SELECT a, typeof(a), b, typeof(b), c, typeof(c) FROM t1;

-- case: the next rowid follows the largest one even when it is negative
CREATE TABLE t(a INTEGER PRIMARY KEY, b);
INSERT INTO t VALUES (-7, 1), (-3, 1);
UPDATE t SET a = -10 WHERE a = -3;
INSERT INTO t(b) VALUES (2);
DELETE FROM t WHERE a = -6;
INSERT INTO t(b) VALUES (3);
SELECT * FROM t;
CREATE TABLE u(b);
INSERT INTO u(rowid, b) VALUES (-9, 1);
BEGIN;
DELETE FROM u;
INSERT INTO u VALUES (5);
ROLLBACK;
INSERT INTO u VALUES (6), (7), (8);
SELECT rowid, * FROM u;

-- case: x IN () is the keyword FALSE, so IS turns into a truth test
SELECT ((+-1) IS DISTINCT FROM ('-0' NOT IN ())), 5 IS (1 IN ()), 0 IS NOT (2 NOT IN ());
SELECT NULL IS (3 IN ()) COLLATE NOCASE, 2 IS TRUE COLLATE NOCASE;

-- case: columns of a FROM subquery keep their collation
CREATE TABLE t1(d COLLATE NOCASE, e REAL);
INSERT INTO t1 VALUES ('a', -0.0), ('Ab ', 0), ('B', NULL);
SELECT d FROM (SELECT * FROM t1) AS t1 ORDER BY 1;
SELECT d FROM (SELECT * FROM t1) ORDER BY d;
SELECT min(' ', d), d = 'A' FROM (SELECT * FROM t1);
SELECT x FROM (SELECT lower(d) AS x FROM t1) ORDER BY 1;

-- case: negative zero
CREATE TABLE t(e REAL, f, g INT);
INSERT INTO t VALUES (-0.0, -0.0, -0.0), (0, 0.0, 0);
SELECT e, f, g, CAST(e AS FLOAT), -e, e + 0, e * 1 FROM t;
SELECT DISTINCT e FROM t;
SELECT DISTINCT f FROM t;
SELECT e, count(*) FROM t GROUP BY e;
SELECT f, count(*) FROM t GROUP BY f;
SELECT sum(f), total(f), min(f), max(f), avg(f) FROM t;
SELECT CAST('-0' AS REAL), CAST('-0.0' AS REAL), CAST(-0.0 AS TEXT), -0.0 || '';

-- case: an explicit COLLATE reaches the expressions above it
CREATE TABLE t(b);
INSERT INTO t VALUES ('a '), ('A'), ('B');
SELECT ('' || (b COLLATE RTRIM)) = 'a', trim(b COLLATE NOCASE) = 'a', (b COLLATE NOCASE) || '' = 'A ' FROM t;
SELECT CASE WHEN 1 THEN b COLLATE NOCASE END = 'A ', (trim('' || (b COLLATE RTRIM), b) >= ' ') FROM t;
SELECT upper(b COLLATE NOCASE) AS u FROM t ORDER BY lower(b COLLATE RTRIM) DESC;
SELECT DISTINCT lower(b) COLLATE NOCASE FROM t ORDER BY 1;

-- case: an ON CONFLICT target is checked first; DO UPDATE always ABORTs
CREATE TABLE t2(a UNIQUE, b UNIQUE, e);
INSERT INTO t2 VALUES (1, 'x', 0), (2, 'y', 0);
INSERT INTO t2 VALUES (1, 'y', 5) ON CONFLICT(b) DO UPDATE SET e = 9 RETURNING *;
INSERT INTO t2 VALUES (2, 'x', 5) ON CONFLICT(a) DO UPDATE SET e = 7 RETURNING *;
INSERT INTO t2 VALUES (2, 'x', 5) ON CONFLICT(b) DO NOTHING ON CONFLICT(a) DO UPDATE SET e = 8;
SELECT * FROM t2;
INSERT OR IGNORE INTO t2 VALUES (1, 'z', 3) ON CONFLICT(a) DO UPDATE SET b = 'y';
INSERT OR REPLACE INTO t2 VALUES (1, 'z', 3) ON CONFLICT(a) DO UPDATE SET b = 'y';
SELECT * FROM t2;

-- case: an IN (subquery) result has no affinity of its own
CREATE TABLE t1(d VARCHAR(10), e);
INSERT INTO t1 VALUES ('%', 1), ('2', 2), (NULL, 3);
SELECT d, d > (e NOT IN (SELECT rowid FROM t1)), d > (e IN (SELECT 5)) FROM t1;
SELECT (e IN (SELECT d FROM t1)), ('2' IN (SELECT e FROM t1)), (2 IN (SELECT d FROM t1)) FROM t1;

-- case: constant calls of a WHERE or HAVING run before the first row
CREATE TABLE t(a);
SELECT a FROM t WHERE abs(-9223372036854775808);
SELECT a FROM t WHERE a = 1 AND abs(-9223372036854775808) > a;
UPDATE t SET a = 1 WHERE CASE WHEN abs(-9223372036854775808) THEN 1 ELSE 0 END;
SELECT count(*) FROM t GROUP BY a HAVING abs(-9223372036854775808);
SELECT a FROM t WHERE 'a' LIKE 'b' ESCAPE 'xy';
INSERT INTO t VALUES (1);
SELECT a FROM t WHERE CASE WHEN a = 5 THEN abs(-9223372036854775808) END;
SELECT a FROM t WHERE ifnull(a, abs(-9223372036854775808) + 1);
SELECT a FROM t WHERE a > coalesce(a, abs(-9223372036854775808));
SELECT a FROM t WHERE CASE WHEN 0 THEN abs(-9223372036854775808) ELSE 1 END;
SELECT a FROM t WHERE nullif(a, abs(-9223372036854775808));
DELETE FROM t WHERE a = 7;
SELECT a FROM t WHERE a = 1 AND abs(-9223372036854775808) > a;
DELETE FROM t WHERE a = 1 AND abs(-9223372036854775808) > a;
SELECT a FROM t WHERE substr(abs(-9223372036854775808), a) < a;
SELECT a FROM t WHERE CASE WHEN abs(-9223372036854775808) = a THEN 1 END;
SELECT a FROM t WHERE a IS abs(-9223372036854775808);

-- case: IN list items are evaluated in order until one matches
CREATE TABLE t(a, b);
INSERT INTO t VALUES (1, NULL);
SELECT a FROM t WHERE a IN (1, abs(-9223372036854775808));
SELECT a IN (2, 1, 3, abs(-9223372036854775808)) FROM t;
SELECT a NOT IN (NULL, 1), a IN (NULL, 2), NULL IN (1, 2), a IN (b, 1), 3 NOT IN (a, b, 7) FROM t;

-- case: EXISTS still resolves its subquery's columns
CREATE TABLE t1(a);
SELECT EXISTS (SELECT (SELECT 1 FROM t2) FROM t1);
SELECT EXISTS (SELECT nosuch FROM t1);

-- case: negative zero through affinities and CAST
CREATE TABLE t1(e INT, f, g REAL, h TEXT, i NUMERIC);
INSERT INTO t1 VALUES (-0.0, -0.0, -0.0, -0.0, -0.0);
SELECT e, f, g, h, i, CAST(e AS REAL), CAST(f AS REAL), CAST(h AS REAL), CAST(i AS REAL) FROM t1;
SELECT CAST('-0' AS REAL), CAST('-0.0' AS NUMERIC), CAST(-0.0 AS INT), -0.0 + 0, 0 - 0.0 FROM t1;

-- case: REAL -2^63 and INTEGER -2^63 are the same UNIQUE key
CREATE TABLE t(d NUMERIC UNIQUE);
INSERT INTO t VALUES (CAST(-9223372036854775808 AS REAL));
INSERT OR IGNORE INTO t VALUES (-9223372036854775808), (9223372036854775807), (9223372036854775807.0);
SELECT rowid, d FROM t;
SELECT -9223372036854775808 = CAST(-9223372036854775808 AS REAL), d IN (-9223372036854775808) FROM t;

-- case: COLLATE over a comparison does not change the comparison
SELECT ('b' | (('BAz' <= 'a%b') COLLATE NOCASE)), (('BAz' <= 'a%b') COLLATE NOCASE);
SELECT ('a' = 'A') COLLATE NOCASE, ('a' = 'A' COLLATE NOCASE), (1 < 2) COLLATE RTRIM = 1;

-- case: a query stops testing rows at its LIMIT (EXISTS and scalar: 1)
CREATE TABLE t(a);
INSERT INTO t VALUES (5), (7), (-9223372036854775808), (3);
SELECT EXISTS (SELECT 1 FROM t WHERE abs(a));
SELECT a FROM t WHERE abs(a) LIMIT 1;
SELECT a FROM t WHERE abs(a) LIMIT 1 OFFSET 1;
SELECT EXISTS (SELECT 1 FROM t WHERE a > 100), EXISTS (SELECT 1 FROM t WHERE a > 0 LIMIT 0);
SELECT (SELECT a FROM t WHERE abs(a) > 1), (SELECT max(a) FROM t), (SELECT a FROM t WHERE a > 6);
SELECT a FROM t WHERE a IN (SELECT a FROM t WHERE abs(a) < 6);

-- case: f(*) is f with no argument; only count(*) is an aggregate so
CREATE TABLE t(a);
INSERT INTO t VALUES (1), (2);
SELECT sum(*) FROM t;
SELECT max(*);
SELECT abs(*) FROM t;
SELECT count(*), count(*) FILTER (WHERE a > 1), typeof(random(*)) FROM t;

-- case: a runtime error keeps earlier rows in a transaction under OR FAIL
CREATE TABLE t(a INTEGER PRIMARY KEY, b);
INSERT INTO t VALUES (7, 9), (17, 0), (20, 'x'), (30, 5);
UPDATE OR IGNORE t SET a = b;
SELECT rowid, * FROM t;
BEGIN;
UPDATE t SET a = b;
SELECT rowid, * FROM t;
UPDATE OR IGNORE t SET a = b;
SELECT rowid, * FROM t;
UPDATE OR FAIL t SET a = b + 100;
UPDATE OR ROLLBACK t SET a = b + 200;
SELECT rowid, * FROM t;
INSERT OR REPLACE INTO t SELECT b, a FROM t ORDER BY rowid;
SELECT rowid, * FROM t;
COMMIT;
SELECT rowid, * FROM t;

-- case: HAVING terms without aggregates move to the WHERE (havingToWhere)
CREATE TABLE t(a, b TEXT COLLATE NOCASE);
INSERT INTO t VALUES (9223372036854775807, 'x'), (9223372036854775807, 'x');
INSERT INTO t VALUES (1, 'y'), (0, ''), (0, '');
SELECT a, sum(a) FROM t GROUP BY a HAVING a;
SELECT a, sum(a) FROM t GROUP BY a HAVING 'A_B';
SELECT a, sum(a) FROM t GROUP BY a HAVING a < 5 AND count(*) > 0;
SELECT b, sum(a) FROM t GROUP BY b HAVING b = 'y';
SELECT a, sum(a) FROM t GROUP BY a HAVING 0;

-- case: an aggregate row skipped by OFFSET computes no result column
CREATE TABLE t(a INTEGER);
INSERT INTO t VALUES (9223372036854775807), (1);
SELECT (SELECT sum(a) FROM t), count(*) FROM t ORDER BY 1 LIMIT 3 OFFSET 1;
SELECT count(*), (SELECT sum(a) FROM t) FROM t ORDER BY 2 DESC LIMIT 1 OFFSET 2;
SELECT max(a) FROM t ORDER BY (SELECT sum(a) FROM t) LIMIT 1;
SELECT DISTINCT count(*) FROM t LIMIT 1 OFFSET 1;

-- case: a FILTER is tested before the aggregate's arguments are computed
CREATE TABLE t(a INTEGER, d);
INSERT INTO t VALUES (9223372036854775807, 1), (1, 2);
SELECT total((SELECT sum(a) FROM t)) FILTER (WHERE d IN ()) FROM t;
SELECT total(abs(d - 9223372036854775807 - 2)) FILTER (WHERE d > 5) FROM t;
SELECT total((SELECT sum(a) FROM t)) FILTER (WHERE d > 5) FROM t;

-- case: NOCASE stops at a NUL: equal-length texts equal up to it are equal
CREATE TABLE t(a TEXT COLLATE NOCASE UNIQUE, b);
INSERT OR IGNORE INTO t VALUES (char(0, 1, 2), 1), (char(0, 3, 4), 2);
INSERT OR IGNORE INTO t VALUES (char(65, 0, 9), 3), (char(97, 0, 7), 4);
INSERT OR IGNORE INTO t VALUES (char(97, 0), 5), (char(98, 0, 7), 6);
SELECT hex(a), b FROM t ORDER BY b;
SELECT count(DISTINCT a), count(*) FROM t;
SELECT count(*) FROM t GROUP BY a COLLATE NOCASE ORDER BY 1;

-- case: x IN (SELECT y) compares under y's collation when x has none
CREATE TABLE t(a NUMERIC, d TEXT COLLATE RTRIM, e TEXT COLLATE NOCASE);
INSERT INTO t VALUES (1, '1 ', 'X'), (2, 'b', 'y'), (3, 'B  ', 'x');
SELECT a, lower(a) IN (SELECT d FROM t), upper(d) IN (SELECT e FROM t) FROM t;
SELECT a, 'x' IN (SELECT e FROM t), 'x' COLLATE BINARY IN (SELECT e FROM t) FROM t;
SELECT a, d IN (SELECT e FROM t), 'b' IN (SELECT d FROM t), 'b' IN (VALUES ('b ')) FROM t;

-- case: RETURNING columns take the first column's REAL affinity (3.40)
CREATE TABLE t(a REAL, b INT, c TEXT, d);
CREATE TABLE u(b INT, a REAL, d);
INSERT INTO t VALUES (1, 2, '3', 4) RETURNING a, b, c, d, rowid, d + 0, +b;
UPDATE t SET d = 5 RETURNING a, b, c, d, rowid, -b, b COLLATE NOCASE;
INSERT INTO u VALUES (2, 1, 4) RETURNING a, b, d, rowid;
DELETE FROM u RETURNING a, b, d, rowid;
DELETE FROM t RETURNING *, typeof(b);

-- case: a function call, or a constraint that may ABORT, gives the statement
-- a journal (sqlite3MayAbort): a runtime error inside a transaction then
-- undoes the statement even under OR ROLLBACK, FAIL or REPLACE
CREATE TABLE s(x);
CREATE TABLE t(a INTEGER PRIMARY KEY, b);
CREATE TABLE u(a INTEGER PRIMARY KEY, b NOT NULL DEFAULT 'd');
CREATE TABLE v(a INTEGER PRIMARY KEY, b CHECK (b <> 'zzz'));
CREATE TABLE w(a INTEGER PRIMARY KEY, b, c CHECK (c <> 'zzz'));
INSERT INTO s VALUES (1), (2.5);
INSERT INTO w VALUES (1, 1, 1), (2, 2, 2);
BEGIN;
INSERT OR ROLLBACK INTO t SELECT x, 1 FROM s;
SELECT * FROM t;
INSERT OR ROLLBACK INTO t SELECT x + 10, abs(x) FROM s;
SELECT * FROM t;
INSERT OR FAIL INTO t SELECT x + 20, x LIKE 'a' FROM s;
SELECT * FROM t;
INSERT OR FAIL INTO t SELECT x + 30, coalesce(x, 1) FROM s;
SELECT * FROM t;
INSERT OR FAIL INTO t SELECT x + 40, 1 FROM s RETURNING typeof(b);
SELECT * FROM t;
INSERT OR REPLACE INTO u SELECT x, 'new' FROM s;
SELECT * FROM u;
INSERT OR REPLACE INTO v SELECT x, 'new' FROM s;
SELECT * FROM v;
UPDATE OR REPLACE w SET a = CASE a WHEN 1 THEN 7 ELSE 'z' END;
SELECT * FROM w;
UPDATE OR REPLACE w SET a = CASE a WHEN 7 THEN 8 ELSE 'z' END, c = c;
SELECT * FROM w;
COMMIT;

-- case: IN (SELECT) under REAL affinity keeps wide integers as doubles
CREATE TABLE t(a REAL, b BLOB);
INSERT INTO t VALUES (13, '9007199254740993'), (1, 2);
SELECT a, b FROM t WHERE CAST(b AS REAL) NOT IN (SELECT (1 | b) FROM t);
CREATE TABLE r(x REAL, y);
INSERT INTO r VALUES (9007199254740992.0, 9007199254740993);
SELECT x IN (SELECT y FROM r), CAST(y AS REAL) IN (SELECT y + 0 FROM r) FROM r;
SELECT y IN (SELECT x FROM r), '9007199254740993' IN (SELECT x FROM r) FROM r;

-- case: "x AND 0" is the integer 0 from the parser on (sqlite3ExprAnd)
CREATE TABLE t(a);
SELECT (avg(DISTINCT a) AND 0) FROM t;
SELECT count(*) AND 0, 0 AND max(a) FROM t;
SELECT nosuch AND 0, 1 AND (0), 1 AND 0x0 FROM t;
SELECT max(a) AND 0.0 FROM t;
INSERT INTO t VALUES (-9223372036854775808);
SELECT abs(a) AND 0, 0 AND abs(a), (abs(a) AND 0) AND 5 FROM t;
SELECT -(abs(a) AND 0), 1 AND -0 FROM t;
SELECT abs(a) AND 0.0 FROM t;

-- case: excluded.x has no affinity or collation of its own
CREATE TABLE t(a UNIQUE, b, d ANY COLLATE RTRIM);
INSERT INTO t VALUES (3, 1, 1);
INSERT INTO t VALUES (3, 16, '3.0e0') ON CONFLICT(a) DO UPDATE SET b = 5 WHERE excluded.d <= '0.000000e+00';
SELECT * FROM t;
INSERT INTO t VALUES (3, 16, 'x ') ON CONFLICT(a) DO UPDATE SET b = excluded.d = 'x';
SELECT * FROM t;

-- case: IN (SELECT c FROM t) over t's rowid or a UNIQUE c sees the
-- statement's own writes to t (sqlite3FindInIndex)
CREATE TABLE t(a, d UNIQUE);
INSERT INTO t VALUES (1, 2), (2, 3), (3, NULL), (4, 1);
DELETE FROM t WHERE a IN (SELECT d FROM t);
SELECT * FROM t;
CREATE TABLE u(a INTEGER PRIMARY KEY, b UNIQUE);
INSERT INTO u(b) VALUES (1), (2) RETURNING 2 IN (SELECT b FROM u);
DELETE FROM u RETURNING (SELECT count(*) FROM u);
INSERT INTO u VALUES (1, 1), (2, 2), (3, NULL);
UPDATE OR REPLACE u SET b = (b + 1) NOT IN (SELECT b FROM u);
SELECT * FROM u;
UPDATE u SET b = (a + 1) IN (SELECT rowid FROM u) RETURNING *;

-- case: replace() with an empty pattern returns its number argument with a
-- text form too (sqlite3_value_text), which a TEXT comparison keeps
CREATE TABLE t(b TEXT);
INSERT INTO t VALUES ('0.0'), ('5');
SELECT b <= replace(0.5, '', 'x'), b = replace(5, '', 'x') FROM t;
INSERT INTO t VALUES (replace(7, '', 'x'));
SELECT b, typeof(b), b = 7 FROM t;

-- case: COLLATE around IN (SELECT) does not change the IN's comparison
SELECT ('a' IN (SELECT 'a ')) COLLATE RTRIM, ('A' IN (SELECT 'a')) COLLATE NOCASE;
SELECT (('a' IN (SELECT 'a ')) COLLATE NOCASE || 'A') = '0a';

-- case: a constant WHERE term that is false skips the loop: no other term
-- runs (sqlite3WhereBegin)
CREATE TABLE t(c);
INSERT INTO t VALUES (-9223372036854775808);
SELECT 1 FROM t WHERE abs(c) AND 1 = 2;
SELECT count(*) FROM t WHERE abs(c) AND NULL;
SELECT 1 FROM t WHERE 1 = 2 AND c = abs(-9223372036854775808);
SELECT 1 FROM t WHERE abs(-9223372036854775808) AND 1 = 2;
DELETE FROM t WHERE abs(c) AND 1 = 2;
UPDATE t SET c = 1 WHERE abs(c) AND 'x';
SELECT * FROM t;

-- case: UPDATE runs in one pass unless the rowid changes, REPLACE may
-- resolve a conflict, or it has RETURNING: an earlier row's error comes
-- before a later row's WHERE error, and a live IN sees earlier rows
CREATE TABLE t(a, d UNIQUE);
INSERT INTO t VALUES (1, 2), (2, 3), (3, NULL), (4, 1);
UPDATE t SET d = d + 10 WHERE a IN (SELECT d FROM t);
SELECT * FROM t;
CREATE TABLE u(a NOT NULL, c);
INSERT INTO u VALUES (1, 1), (2, -9223372036854775808);
UPDATE u SET a = NULL WHERE abs(c);
UPDATE u SET a = NULL WHERE abs(c) RETURNING a;
UPDATE u SET a = NULL WHERE abs(c) AND c IN (SELECT 1);
UPDATE OR REPLACE u SET a = NULL WHERE abs(c);
UPDATE u SET a = NULL, rowid = rowid WHERE abs(c);
SELECT * FROM u;

-- case: INTEGER PRIMARY KEY ON CONFLICT decides a rowid conflict
CREATE TABLE t(a INTEGER PRIMARY KEY ON CONFLICT REPLACE, b);
INSERT INTO t VALUES (1, 'x');
INSERT INTO t VALUES (1, 'y');
SELECT * FROM t;
INSERT OR IGNORE INTO t VALUES (1, 'z');
SELECT * FROM t;

-- case: INSERT streams its source (a coroutine): each row goes in before
-- the next is computed, unless the source reads the table written
CREATE TABLE s(x);
CREATE TABLE t(a UNIQUE, b);
INSERT INTO s VALUES (1), (1), (-9223372036854775808);
INSERT INTO t SELECT x, abs(x) FROM s;
SELECT * FROM t;
INSERT INTO t VALUES (5, 1), (5, 2), (6, abs(-9223372036854775808));
SELECT * FROM t;
INSERT INTO t SELECT a + 100, abs(a - 9223372036854775807 - 2) FROM t;
SELECT * FROM t;
BEGIN;
INSERT OR FAIL INTO t SELECT x + 10, CASE WHEN x < 0 THEN abs(x) END FROM s;
SELECT * FROM t;
COMMIT;

-- case: UPDATE computes the new rowid first, then the other SET values in
-- table column order (sqlite3Update)
CREATE TABLE t(a INTEGER PRIMARY KEY, b, c);
INSERT INTO t VALUES (1, 2, -9223372036854775808);
UPDATE t SET c = abs(c), a = 'x';
UPDATE t SET c = abs(c), b = zeroblob(10000000000 + b - b);
UPDATE t SET b = abs(c), b = 5, c = c + 1;
SELECT * FROM t;

-- case: past the largest rowid, new rowids are random unused ones
CREATE TABLE t(a INTEGER PRIMARY KEY, b);
INSERT INTO t VALUES (9223372036854775807, 1);
INSERT INTO t(b) VALUES (2), (3);
SELECT count(*), min(a) > 0, count(DISTINCT a) FROM t;

-- case: a one-pass statement's subquery over its own table runs when a row
-- first reaches it, after the earlier rows changed (OP_Once)
CREATE TABLE t(a, b);
INSERT INTO t VALUES (1, 1), (2, 0), (3, 0);
DELETE FROM t WHERE CASE WHEN b THEN 1 WHEN (SELECT count(*) FROM t) < 3 THEN 1 END;
SELECT * FROM t;
INSERT INTO t VALUES (1, 1), (2, 0), (3, 0);
UPDATE t SET b = 5 WHERE CASE WHEN b THEN 1 WHEN (SELECT max(b) FROM t) > 1 THEN 1 END;
SELECT * FROM t;

-- case: in a jump, a NULL left operand of AND decides as false does
-- (sqlite3ExprIfFalse with SQLITE_JUMPIFNULL), under NOT it does not
CREATE TABLE t(d, e);
INSERT INTO t VALUES (5, 1), (NULL, -9223372036854775808);
SELECT 1 FROM t WHERE (d AND abs(e)) COLLATE RTRIM;
SELECT 2 FROM t WHERE d AND abs(e);
SELECT 3 FROM t WHERE NOT (d AND abs(e));
SELECT 4 FROM t WHERE (d AND abs(e)) IS NOT TRUE;
SELECT 5 FROM t WHERE (d AND abs(e)) IS NOT FALSE;
SELECT CASE WHEN d AND abs(e) THEN 1 ELSE 0 END FROM t;
SELECT count(*) FILTER (WHERE d AND abs(e)) FROM t;
CREATE TABLE c(d, e, CHECK (d AND abs(e)));
INSERT INTO c VALUES (NULL, -9223372036854775808);
INSERT INTO c VALUES (0, -9223372036854775808);
SELECT * FROM c;

-- case: a GROUP BY column shows the row min() or max() loaded
CREATE TABLE t(d, e);
INSERT INTO t VALUES (1, 'b'), (1.0, 'a');
SELECT d, min(e) FROM t GROUP BY d;
SELECT d, max(e) FROM t GROUP BY d;
SELECT d, min(DISTINCT 'x') FROM t GROUP BY d;

-- case: COLLATE over a comparison collates what reads it
CREATE TABLE t(a, b);
INSERT INTO t VALUES ('a_c', 1), ('B0', 1);
SELECT CASE WHEN (1 = 1) COLLATE NOCASE THEN a END FROM t ORDER BY 1;
SELECT ((1 = 1) COLLATE NOCASE || 'A') = '1a';

-- case: COLLATE on BETWEEN's left operand reaches its readers; an INTEGER
-- PRIMARY KEY has no collation of its own
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT COLLATE NOCASE, e COLLATE RTRIM);
INSERT INTO t VALUES (1, '1', 'a'), (2, 'x', 'b'), (3, 'Ab ', '_- z');
SELECT e FROM t ORDER BY max((7 COLLATE NOCASE) BETWEEN 1 AND 2, e) DESC;
SELECT e FROM t ORDER BY ((7 COLLATE NOCASE) BETWEEN 1 AND 2) || e DESC;
SELECT e FROM t ORDER BY (7 BETWEEN (1 COLLATE NOCASE) AND 2) || e DESC;
SELECT a = b, b = a, max(a, e, 'a '), max(a, 'a ', e) FROM t;

-- case: a SET value that a later one for the same column replaces is never
-- coded, so its function call gives no statement journal
CREATE TABLE t(a INTEGER PRIMARY KEY, b);
INSERT INTO t VALUES (3, 100), (9, 7), (31, '21 b');
BEGIN;
UPDATE OR REPLACE t SET a = lower(-2), a = b WHERE b;
SELECT * FROM t;
UPDATE t SET b = nosuch, b = 1;
COMMIT;

-- case: an INSERT with RETURNING computes all of its source first
CREATE TABLE s(x);
CREATE TABLE t(a UNIQUE, b);
INSERT INTO s VALUES (1), (1), (-9223372036854775808);
INSERT INTO t SELECT 1, abs(x) FROM s RETURNING a;
INSERT INTO t VALUES (5, 1), (5, 2), (6, abs(-9223372036854775808)) RETURNING b;
SELECT * FROM t;

-- case: a FROM subquery of * with a WHERE is flattened: its WHERE joins
-- the outer one's, first (flattenSubquery)
CREATE TABLE t(a INTEGER PRIMARY KEY, b, e);
INSERT INTO t VALUES (1, 'x', 5), (2, 'y', -9223372036854775808);
SELECT b FROM (SELECT * FROM t WHERE x'') AS t WHERE abs(-9223372036854775808);
SELECT b FROM (SELECT * FROM t WHERE e > 0) AS u WHERE abs(u.e);
SELECT b FROM (SELECT * FROM t WHERE abs(e)) AS t WHERE 0;
SELECT rowid FROM (SELECT * FROM t);

-- case: a term "rowid = constant" runs first, as SQLite's rowid lookup
CREATE TABLE t(a INTEGER PRIMARY KEY, b, e);
INSERT INTO t VALUES (1, 'x', 5), (2, 'y', -9223372036854775808);
SELECT b FROM t WHERE abs(e) AND a = 1;
SELECT b FROM t WHERE abs(e) AND rowid IS 1;
SELECT b FROM t WHERE abs(e) AND '_' IS a;
SELECT b FROM (SELECT * FROM t WHERE abs(e)) AS t WHERE ('_' IS t.a);
UPDATE t SET b = 'z' WHERE abs(e) AND a = 1;
DELETE FROM t WHERE abs(e) AND 1 = rowid;
SELECT * FROM t;
SELECT b FROM t WHERE abs(e) AND +a = 1;

-- case: "x IN ()" is FALSE from the parser on, so "x IN () AND y" is 0
-- and y is never resolved
SELECT (nosuch IN ()) AND nosuch_either, 1 WHERE (1 IN ()) AND abs(-9223372036854775808);
SELECT (2 IN ()) AND length((EXISTS (SELECT 1 FROM no_table)));

-- case: a live IN decides at its first use whether to look for a NULL in
-- its table (OP_Once), then finds one only while the table still holds it
CREATE TABLE t(a, f UNIQUE);
INSERT INTO t VALUES ('ab', 7) RETURNING 'ABC' IN (SELECT f FROM t);
INSERT INTO t VALUES ('cd', NULL), ('ef', 8) RETURNING 'ABC' IN (SELECT f FROM t);
UPDATE t SET a = 'x' || ('ABC' IN (SELECT f FROM t)) RETURNING a;

-- case: a constant without EP_HasFunc (a COLLATE or BETWEEN's low/high
-- hides it) where SQLite factors it runs before any row (pConstExpr)
CREATE TABLE t(e);
SELECT substr(e, abs(-9223372036854775808) COLLATE NOCASE) FROM t;
SELECT e + -(abs(-9223372036854775808) COLLATE NOCASE) FROM t;
SELECT e = -(abs(-9223372036854775808) COLLATE NOCASE) FROM t;
SELECT e + CAST(abs(-9223372036854775808) COLLATE NOCASE AS INT) FROM t;
SELECT substr(e, 1 BETWEEN 0 AND abs(-9223372036854775808)) FROM t;
SELECT NOT -(abs(-9223372036854775808) COLLATE NOCASE) FROM t;
SELECT max(e, abs(-9223372036854775808) COLLATE NOCASE) FROM t;
SELECT e LIKE (abs(-9223372036854775808) COLLATE NOCASE) FROM t;
SELECT e + (abs(-9223372036854775808) COLLATE NOCASE) FROM t;
SELECT printf('%d', abs(-9223372036854775808) COLLATE NOCASE) FROM t;
SELECT coalesce(e, abs(-9223372036854775808) COLLATE NOCASE) FROM t;
SELECT CASE WHEN e THEN -(abs(-9223372036854775808) COLLATE NOCASE) END FROM t;
SELECT abs(-9223372036854775808) COLLATE NOCASE FROM t;
SELECT 1 FROM t WHERE 1 = 2 AND e = -(abs(-9223372036854775808) COLLATE NOCASE);
SELECT 1 FROM t LIMIT 0;
SELECT e FROM t ORDER BY e + -(abs(-9223372036854775808) COLLATE NOCASE);
UPDATE t SET e = e + -(abs(-9223372036854775808) COLLATE NOCASE);
DELETE FROM t WHERE e = -(abs(-9223372036854775808) COLLATE NOCASE);
SELECT (SELECT e + -(abs(-9223372036854775808) COLLATE NOCASE) FROM t);
SELECT e FROM t WHERE e IN (1, -(abs(-9223372036854775808) COLLATE NOCASE));
SELECT e FROM t WHERE e IN (1, 2, -(abs(-9223372036854775808) COLLATE NOCASE));
SELECT count(*) FROM t HAVING count(*) = -(abs(-9223372036854775808) COLLATE NOCASE);
SELECT sum(-(abs(-9223372036854775808) COLLATE NOCASE)) FROM t;
SELECT sum(e + -(abs(-9223372036854775808) COLLATE NOCASE)) FROM t;

-- case: a live IN in DELETE ... RETURNING after each row is gone
CREATE TABLE t(a, f UNIQUE);
INSERT INTO t VALUES ('ab', 7), ('cd', NULL), ('ef', 8);
DELETE FROM t RETURNING a, 'ABC' IN (SELECT f FROM t), 8 IN (SELECT f FROM t);

-- case: the constant side of "column op constant" runs before the loop
-- only where another term "column = value" fixes the column
-- (propagateConstants); BETWEEN is one term
CREATE TABLE e(c);
SELECT * FROM e WHERE c = abs(-9223372036854775808);
SELECT * FROM e WHERE c > abs(-9223372036854775808);
SELECT * FROM e WHERE abs(-9223372036854775808) < c;
SELECT * FROM e WHERE c = abs(-9223372036854775808) AND c > 100;
SELECT * FROM e WHERE c BETWEEN abs(-9223372036854775808) AND 5;
SELECT * FROM e WHERE 0 BETWEEN c AND abs(-9223372036854775808);
INSERT INTO e VALUES (1);
SELECT * FROM e WHERE c = abs(-9223372036854775808);
SELECT * FROM e WHERE c > abs(-9223372036854775808);
SELECT * FROM e WHERE (0 BETWEEN 1 AND abs(-9223372036854775808));
SELECT * FROM e WHERE (c BETWEEN 5 AND abs(-9223372036854775808));
SELECT * FROM e WHERE ((1e-5 IS NULL) BETWEEN (rowid AND 0.5) AND abs(-9223372036854775808));

-- case: a SELECT looks up every table it names before any column, FROM
-- first, then result columns, WHERE, GROUP BY, HAVING, ORDER BY
CREATE TABLE t(a);
SELECT (SELECT 1 FROM nosuch1), a FROM t WHERE (SELECT 1 FROM nosuch2);
SELECT nosuch_column FROM t WHERE (SELECT 1 FROM nosuch3);
SELECT a FROM (SELECT * FROM nosuch4) WHERE (SELECT 1 FROM nosuch5);
SELECT a FROM t GROUP BY (SELECT 1 FROM nosuch6) HAVING (SELECT 1 FROM nosuch7) ORDER BY (SELECT 1 FROM nosuch8);
SELECT a FROM t ORDER BY (SELECT 1 FROM nosuch9) LIMIT (SELECT 1 FROM nosuch10);
SELECT (SELECT 1 FROM nosuch11) IN (), 2 WHERE (SELECT 1 FROM nosuch12) NOT IN ();

-- case: OFFSET and LIMIT skip a row's results where no sort is needed: no
-- ORDER BY, or one led by the rowid ascending (selectInnerLoop)
CREATE TABLE t(a INTEGER PRIMARY KEY, b, e);
INSERT INTO t VALUES (1, 1, -9223372036854775808), (2, 2, 5), (3, 3, 6), (4, 4, 7);
SELECT a, abs(e) FROM t LIMIT 2 OFFSET 1;
SELECT a, abs(e) FROM t ORDER BY a LIMIT 2 OFFSET 1;
SELECT a, abs(e) FROM t ORDER BY rowid, abs(e) LIMIT 2 OFFSET 1;
SELECT a, abs(e) FROM t ORDER BY b LIMIT 2 OFFSET 1;
SELECT DISTINCT a, abs(e) FROM t LIMIT 2 OFFSET 1;
SELECT a, abs(e) FROM t WHERE b > 0 ORDER BY 1 NULLS FIRST, 2 LIMIT 2 OFFSET 1;
SELECT a, abs(e) FROM t ORDER BY a NULLS LAST LIMIT 2 OFFSET 1;
SELECT a, abs(e) FROM t ORDER BY a DESC LIMIT 2 OFFSET 1;
INSERT INTO t VALUES (0, 9, 1);
DELETE FROM t WHERE a = 3;
SELECT a, b FROM t ORDER BY a DESC;
SELECT a FROM t WHERE b > 1 ORDER BY rowid DESC, b;

-- case: under NOCASE texts tie up to a NUL, so their order is free
CREATE TABLE t(d);
INSERT INTO t VALUES (0), (4.9e-324), ('abc'), (1), (2.0);
SELECT hex(char((d COLLATE NOCASE), lower(d))) FROM t ORDER BY char((d COLLATE NOCASE), lower(d));

-- case: a lookup through a UNIQUE key gives its value the index's affinity
-- as OP_Affinity does: an INTEGER stays one even for a REAL column, whose
-- stored 9007199254740992.0 is not 9007199254740993 (seeds 3419, 15582)
CREATE TABLE t(a INTEGER PRIMARY KEY, b REAL UNIQUE COLLATE RTRIM, d REAL UNIQUE);
INSERT INTO t VALUES (1, 9007199254740992.0, -9223372036854775807), (2, '5', 2.5), (3, 'x', '7');
SELECT a FROM t WHERE 9007199254740993 IS NOT DISTINCT FROM b;
SELECT a FROM t WHERE b = 9007199254740992;
SELECT a FROM t WHERE d IS NOT DISTINCT FROM -9223372036854775807;
SELECT a FROM t WHERE d = -9223372036854775808;
SELECT a FROM t WHERE b = '5.0';
SELECT a FROM t WHERE d = '7';
SELECT a FROM t WHERE d = 2.5 AND b = 5;

-- case: lookups by rowid, key and range: SeekRowid's NUMERIC affinity,
-- bounds past the int64 range, and the other terms run only on the rows
-- found
CREATE TABLE t(a INTEGER PRIMARY KEY, u TEXT UNIQUE, n INT);
INSERT INTO t VALUES (-9223372036854775808, 'a', -9223372036854775808), (2, 'b', 5), (3, 'c', 7), (9223372036854775807, 'z', 1);
SELECT a FROM t WHERE a = '2.0';
SELECT a FROM t WHERE a = -9223372036854775808.0;
SELECT a FROM t WHERE a <= -9223372036854775808.0;
SELECT a FROM t WHERE a > 9223372036854775806.5;
SELECT a FROM t WHERE a < 1e300 AND a > -1e300;
SELECT a FROM t WHERE abs(n) AND u = 'b';
SELECT a FROM t WHERE abs(n) AND a BETWEEN 2 AND 3;
SELECT a FROM t WHERE abs(n) AND a = 3;
UPDATE t SET n = n + 1 WHERE u = 'c';
DELETE FROM t WHERE a > 2 AND abs(n) > 0;

-- case: rowid lookups while rowids ascend with the slots, and after a row
-- breaks the order (table_key.c leaves the search for a hash)
CREATE TABLE t(a INTEGER PRIMARY KEY, b);
INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (10, 'd'), (12, 'e');
SELECT b FROM t WHERE a = 10;
SELECT b FROM t WHERE a = 11;
DELETE FROM t WHERE a = 12;
INSERT INTO t VALUES (12, 'f');
SELECT b FROM t WHERE a = 12;
INSERT INTO t VALUES (12, 'g');
BEGIN;
UPDATE t SET b = 'h' WHERE a = 2;
UPDATE t SET a = 20 WHERE a = 3;
SELECT a, b FROM t WHERE a IN (2, 3, 20) ORDER BY a;
ROLLBACK;
SELECT a, b FROM t WHERE a IN (2, 3, 20) ORDER BY a;
INSERT INTO t VALUES (-5, 'i'), (4, 'j');
SELECT a, b FROM t WHERE a = -5 OR a = 4 OR a = 1 ORDER BY a;
INSERT INTO t(b) VALUES ('k');
SELECT a, b FROM t WHERE a = 13;
SELECT count(*) FROM t WHERE a > 3;

-- case: zone maps skip a block only when no row of it passes (zone.h)
CREATE TABLE t(a INTEGER, b REAL, c, d TEXT, e NUMERIC);
INSERT INTO t VALUES (9007199254740992, -0.0, '5', 1, '1e3'), (1, 9007199254740993, x'01', NULL, -9223372036854775808), (NULL, 1e308, 2.5, 'x', NULL);
SELECT rowid FROM t WHERE a = 9007199254740993;
SELECT rowid FROM t WHERE a = 9007199254740992.0 OR a = 9007199254740993.0;
SELECT rowid FROM t WHERE a >= 9007199254740993.0;
SELECT rowid FROM t WHERE b = 9007199254740992;
SELECT rowid FROM t WHERE b > 9007199254740992 AND b < 1e308;
SELECT rowid FROM t WHERE b = 0 AND b <= -0.0;
SELECT rowid FROM t WHERE a < '10' AND '0' < a;
SELECT rowid FROM t WHERE a > 'abc' OR a < x'00';
SELECT rowid FROM t WHERE c > 4;
SELECT rowid FROM t WHERE c = '5';
SELECT rowid FROM t WHERE c < CAST(3 AS TEXT);
SELECT rowid FROM t WHERE d < 5;
SELECT rowid FROM t WHERE e = '1000' AND e BETWEEN 999.5 AND '1000.5';
SELECT rowid FROM t WHERE a IS NULL;
SELECT rowid FROM t WHERE a IS 1;
SELECT rowid FROM t WHERE a = NULL;
SELECT rowid FROM t WHERE e > 1e308 AND abs(e) >= 0;
SELECT rowid FROM t WHERE abs(e) >= 0 AND e > 1e308;
UPDATE t SET a = 'x' WHERE rowid = 2;
SELECT rowid FROM t WHERE a > 100;
BEGIN;
UPDATE t SET a = 5000 WHERE a < 10;
SELECT rowid, a FROM t WHERE a > 100;
DELETE FROM t WHERE a > 100 AND b < 1;
ROLLBACK;
SELECT rowid, a FROM t WHERE a > 100 AND a < 9007199254740992.5;

-- case: parameters in a CHECK, a DEFAULT or a partial index's WHERE are
-- refused at CREATE (once accepted, then read past the statement's
-- parameters at INSERT: found by fuzz_engine)
CREATE TABLE v(p INTEGER PRIMARY KEY, r CHECK (? > 1));
CREATE TABLE v2(p, CHECK (p > ?1));
CREATE TABLE w(r DEFAULT (?));
CREATE TABLE y(a);
CREATE INDEX yi ON y(a) WHERE a > ?;
INSERT INTO v(r) VALUES (1);
INSERT INTO w DEFAULT VALUES;
INSERT INTO y VALUES (5);
SELECT a FROM y;

-- case: "x IN ()" is the integer 0 to SQLite's parser, so an aggregate
-- inside x makes no aggregate query, and a correlated x gives no
-- aggregate to the outer query
CREATE TABLE t(a, b);
INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, NULL);
SELECT count(*) IN () FROM t;
SELECT a, count(*) NOT IN () FROM t;
SELECT max(a), count(*) IN () FROM t;
SELECT a FROM t WHERE (SELECT count(DISTINCT (t.b NOT IN ())) FROM t AS u);

-- case: an aggregate a nested subquery gives to an EXISTS subquery makes
-- it an aggregate query, which has a row even over an empty table
CREATE TABLE t1(a, e);
CREATE TABLE t2(c);
INSERT INTO t1 VALUES (1, 1), (2, 0), (3, NULL);
SELECT a FROM t1 WHERE EXISTS (SELECT (SELECT group_concat(DISTINCT t2.c) FROM t1 WHERE e) FROM t2);
DELETE FROM t1 WHERE EXISTS (SELECT (SELECT count(t2.c) FROM t1) FROM t2);
SELECT count(*) FROM t1;

-- case: a subquery's WHERE term that reads only the outer query's columns
-- runs once before its loop, even over an empty table (sqlite3WhereBegin
-- codes terms with no prerequisite table first)
CREATE TABLE t1(a);
CREATE TABLE t2(b);
INSERT INTO t1 VALUES (-9223372036854775808), (5);
SELECT EXISTS (SELECT 1 FROM t2 WHERE abs(t1.a)) FROM t1;
SELECT (SELECT count(*) FROM t2 WHERE t1.a > 0) FROM t1;
SELECT a FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t2 WHERE abs(t1.a) AND b);
INSERT INTO t2 VALUES (1);
SELECT a, (SELECT count(*) FROM t2 WHERE t1.a > 0 AND b = 1) FROM t1 WHERE a > 0;

-- case: a statement whose changes are undone reports none: changes() is 0
-- after an ABORT or ROLLBACK failure, the rows kept after an OR FAIL one
-- (sqlite3VdbeHalt)
CREATE TABLE t(a CHECK (a > 0));
INSERT INTO t VALUES (1);
INSERT INTO t VALUES (2), (3), (0);
SELECT changes(), total_changes();
INSERT OR FAIL INTO t VALUES (4), (5), (0);
SELECT changes(), total_changes();
BEGIN;
UPDATE t SET a = a - 2;
SELECT changes(), total_changes();
INSERT OR ROLLBACK INTO t VALUES (6), (0);
SELECT changes(), total_changes();
SELECT a FROM t ORDER BY a;
