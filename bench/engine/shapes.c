/* SPDX-License-Identifier: MIT
 *
 * shapes.c: the workloads of the engine benchmark. The 26 reads and the 4
 * single-row writes are musql's (reference musql.md sections 6.2 and 6.3:
 * same SQL, same bind-value rules; #19 keeps musql's misleading name); the
 * three bulk writes are musql's older set (section 6.3, 7a-7c).
 *
 * DuckDB has no rowid alias, so an INSERT that leaves id out cannot take
 * max(id) + 1 there: its W3 names the id, and the harness binds the next
 * one (what an application on DuckDB would do).
 */
#include "bench_engine.h"

static void bind_v(struct bench_rng *rng, int64_t n, int64_t *out)
{
    (void)n;
    out[0] = bench_rng_intn(rng, 1000000);
}

static void bind_v_k(struct bench_rng *rng, int64_t n, int64_t *out)
{
    (void)n;
    out[0] = bench_rng_intn(rng, 1000000);
    out[1] = bench_rng_intn(rng, 10);
}

static void bind_id(struct bench_rng *rng, int64_t n, int64_t *out)
{
    out[0] = 1 + bench_rng_intn(rng, n);
}

static void bind_sec(struct bench_rng *rng, int64_t n, int64_t *out)
{
    out[0] = bench_rng_intn(rng, n);
}

static void bind_having(struct bench_rng *rng, int64_t n, int64_t *out)
{
    (void)n;
    out[0] = 5000 + bench_rng_intn(rng, 100);
}

static void bind_between(struct bench_rng *rng, int64_t n, int64_t *out)
{
    (void)n;
    out[0] = bench_rng_intn(rng, 500000);
    out[1] = out[0] + 250000;
}

static void bind_small_id(struct bench_rng *rng, int64_t n, int64_t *out)
{
    (void)n;
    out[0] = 1 + bench_rng_intn(rng, 1000);
}

static void bind_insert(struct bench_rng *rng, int64_t n, int64_t *out)
{
    out[0] = bench_rng_intn(rng, n);
    out[1] = bench_rng_intn(rng, 10);
    out[2] = bench_rng_intn(rng, 1000000);
    out[3] = 1 + bench_rng_intn(rng, n);
}

#define READ(id, name, sql, count, binds, jit)                                 \
    {                                                                          \
        id, name, BENCH_READ, sql, NULL, count, binds, false, jit              \
    }

const struct bench_shape bench_shapes[] = {
    READ("1", "count(*) WHERE v > ?", "SELECT count(*) FROM t WHERE v > ?", 1,
         bind_v, true),
    READ("2", "count(*) WHERE v > ? AND k <> ?",
         "SELECT count(*) FROM t WHERE v > ? AND k <> ?", 2, bind_v_k, true),
    READ("3", "rowid point lookup", "SELECT sec FROM t WHERE id = ?", 1,
         bind_id, false),
    READ("4", "secondary-index eq", "SELECT count(*) FROM t WHERE sec = ?", 1,
         bind_sec, true),
    READ("5", "indexed equi-join",
         "SELECT count(*) FROM t JOIN b ON t.bid = b.id WHERE t.sec = ?", 1,
         bind_sec, false),
    READ("6", "sum over a filter", "SELECT sum(v) FROM t WHERE v > ?", 1,
         bind_v, true),
    READ("7", "aggregate GROUP BY",
         "SELECT k, count(*), sum(v) FROM t GROUP BY k ORDER BY k", 0, NULL,
         true),
    READ("8", "ORDER BY v DESC LIMIT 20",
         "SELECT id, v FROM t ORDER BY v DESC, id DESC LIMIT 20", 0, NULL,
         true),
    READ("9", "count(*) whole table", "SELECT count(*) FROM t", 0, NULL, true),
    READ("10", "min/max whole table", "SELECT min(v), max(v) FROM t", 0, NULL,
         true),
    READ("11", "grouped min/max",
         "SELECT k, min(v), max(v) FROM t GROUP BY k ORDER BY k", 0, NULL,
         true),
    READ("12", "GROUP BY with HAVING",
         "SELECT k, count(*) FROM t GROUP BY k HAVING count(*) > ? ORDER BY k",
         1, bind_having, false),
    READ("13", "OR predicate", "SELECT count(*) FROM t WHERE v > ? OR k = ?", 2,
         bind_v_k, true),
    READ("14", "BETWEEN range",
         "SELECT count(*) FROM t WHERE v BETWEEN ? AND ?", 2, bind_between,
         true),
    READ("15", "IN list", "SELECT count(*) FROM t WHERE k IN (1,3,5,7)", 0,
         NULL, true),
    READ("16", "IS NULL scan", "SELECT count(*) FROM t WHERE payload IS NULL",
         0, NULL, false),
    READ("17", "LIKE scan",
         "SELECT count(*) FROM t WHERE payload LIKE '%-7-payload'", 0, NULL,
         false),
    READ("18", "ORDER BY text LIMIT",
         "SELECT id, payload FROM t ORDER BY payload DESC, id DESC LIMIT 20", 0,
         NULL, false),
    READ("19", "group_concat",
         "SELECT k, count(*) FROM t WHERE k < 3 GROUP BY k ORDER BY k", 0, NULL,
         false),
    READ("20", "DISTINCT scan",
         "SELECT count(*) FROM (SELECT DISTINCT k FROM t)", 0, NULL, false),
    READ("21", "scalar subquery",
         "SELECT count(*) FROM t WHERE v > (SELECT avg(v) FROM t)", 0, NULL,
         false),
    READ("22", "IN subquery",
         "SELECT count(*) FROM t WHERE bid IN (SELECT id FROM b WHERE id < ?)",
         1, bind_small_id, false),
    READ("23", "EXISTS correlated",
         "SELECT count(*) FROM t WHERE EXISTS (SELECT 1 FROM b WHERE b.id = "
         "t.bid AND b.id < ?)",
         1, bind_small_id, false),
    READ("24", "UNION ALL compound",
         "SELECT count(*) FROM (SELECT k FROM t WHERE k < 3 UNION ALL SELECT k "
         "FROM t WHERE k > 7)",
         0, NULL, false),
    READ("25", "paginate OFFSET",
         "SELECT id, v FROM t ORDER BY v DESC, id DESC LIMIT 20 OFFSET 1000", 0,
         NULL, false),
    {"26", "join projecting rows", BENCH_READ,
     "SELECT t.id, b.id FROM t JOIN b ON t.bid = b.id WHERE t.sec = ?", NULL, 1,
     bind_sec, true, false},
    {"W1", "UPDATE one row by rowid", BENCH_WRITE,
     "UPDATE t SET k = k + 1 WHERE id = ?", NULL, 1, bind_id, false, false},
    {"W2", "UPDATE by indexed column", BENCH_WRITE,
     "UPDATE t SET k = k + 1 WHERE sec = ?", NULL, 1, bind_sec, false, false},
    {"W3", "INSERT one row", BENCH_WRITE,
     "INSERT INTO t(sec,k,v,bid,payload) VALUES(?,?,?,?,'x')",
     "INSERT INTO t(id,sec,k,v,bid,payload) VALUES(?,?,?,?,?,'x')", 4,
     bind_insert, false, false},
    {"W4", "DELETE one row by rowid", BENCH_WRITE, "DELETE FROM t WHERE id = ?",
     NULL, 1, bind_id, false, false},
    {"B1", "bulk INSERT 20,000 rows, one transaction", BENCH_BULK_INSERT,
     "INSERT INTO t(id,sec,k,v,bid,payload) VALUES(?,?,?,?,?,'w')", NULL, 5,
     NULL, false, false},
    {"B2", "bulk UPDATE t SET v = v + 1 WHERE k = ?", BENCH_BULK_UPDATE,
     "UPDATE t SET v = v + 1 WHERE k = ?", NULL, 1, NULL, false, false},
    {"B3", "bulk DELETE FROM t WHERE k = ?", BENCH_BULK_DELETE,
     "DELETE FROM t WHERE k = ?", NULL, 1, NULL, false, false},
};

const size_t bench_shape_count = sizeof bench_shapes / sizeof bench_shapes[0];
