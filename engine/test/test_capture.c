/* SPDX-License-Identifier: MIT
 *
 * Goal: the change-capture seam (engine.h, "Change capture") does what the
 * replication layer relies on: the commit hook sees exactly the committed
 * changes in order (an UPDATE with only its changed columns, a key change
 * as DELETE + INSERT, rows keyed by their declared PRIMARY KEY, schema
 * changes), never what ROLLBACK TO or a failed statement undid, never its
 * own writes nor system tables; its writes commit with the transaction and
 * its veto rolls everything back; stamps are written and read back after a
 * reopen and a checkpoint; the apply path is atomic and unseen by the hook;
 * system tables are reserved, hidden and durable.
 * Method: a recording hook renders each change as a line of text, compared
 * with the expected lines; file databases live in a scratch directory and
 * are reopened to check what was made durable.
 */
#include "storage_test.h"

#include <fcntl.h>

/* ---- a recording hook ---- */

struct recorder {
    char log[8192];      /* one line per change of the last commit */
    size_t calls;        /* hook calls */
    int veto;            /* returned (after writing) when not 0 */
    const char *message; /* engine_commit_veto()'s, or NULL */
    const char *sql;     /* run by the hook before returning, or NULL */
    int sql_rc;          /* what it returned */
    uint64_t stamp;      /* given to the commit when not 0 */
    /* Deep copies of the last commit's changes, for engine_apply(). */
    struct engine_change changes[64];
    size_t change_count;
};

static void put_value(char *out, size_t size,
                      const struct engine_change_value *v)
{
    size_t used = strlen(out);

    switch (v->type) {
    case ENGINE_INTEGER:
        snprintf(out + used, size - used, "i:%lld", (long long)v->integer);
        break;
    case ENGINE_FLOAT:
        snprintf(out + used, size - used, "r:%g", v->real);
        break;
    case ENGINE_TEXT:
        snprintf(out + used, size - used, "t:%.*s", (int)v->size,
                 (const char *)v->bytes);
        break;
    case ENGINE_BLOB:
        snprintf(out + used, size - used, "b:%zu", v->size);
        break;
    default:
        snprintf(out + used, size - used, "n");
        break;
    }
}

static void append(char *out, size_t size, const char *text)
{
    size_t used = strlen(out);

    snprintf(out + used, size - used, "%s", text);
}

/* "I t (i:1) 0=i:1 1=t:a" */
static void render(const struct engine_change *change, char *out, size_t size)
{
    static const char kinds[] = "?IUDS";
    char head[64];

    if (change->kind == ENGINE_CHANGE_SCHEMA) {
        snprintf(head, sizeof(head), "S ");
        append(out, size, head);
        append(out, size, change->sql);
        append(out, size, "\n");
        return;
    }
    snprintf(head, sizeof(head), "%c %s (", kinds[change->kind], change->table);
    append(out, size, head);
    for (size_t i = 0; i < change->key_count; i++) {
        append(out, size, i > 0 ? "," : "");
        put_value(out, size, &change->key[i]);
    }
    append(out, size, ")");
    for (size_t i = 0; i < change->value_count; i++) {
        snprintf(head, sizeof(head), " %zu=", change->columns[i]);
        append(out, size, head);
        put_value(out, size, &change->values[i]);
    }
    append(out, size, "\n");
}

static void *dup_bytes(const void *bytes, size_t size)
{
    void *copy = test_malloc(size + 1);

    memcpy(copy, size > 0 ? bytes : "", size);
    ((char *)copy)[size] = '\0';
    return copy;
}

static struct engine_change_value *
dup_values(const struct engine_change_value *v, size_t count)
{
    struct engine_change_value *copy = test_malloc((count + 1) * sizeof(*copy));

    for (size_t i = 0; i < count; i++) {
        copy[i] = v[i];
        if (v[i].type == ENGINE_TEXT || v[i].type == ENGINE_BLOB) {
            copy[i].bytes = dup_bytes(v[i].bytes, v[i].size);
        }
    }
    return copy;
}

static void free_values(const struct engine_change_value *v, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (v[i].type == ENGINE_TEXT || v[i].type == ENGINE_BLOB) {
            test_free((void *)v[i].bytes);
        }
    }
    test_free((void *)v);
}

static void forget_changes(struct recorder *r)
{
    for (size_t i = 0; i < r->change_count; i++) {
        struct engine_change *c = &r->changes[i];

        test_free((void *)c->table);
        test_free((void *)c->sql);
        free_values(c->key, c->key_count);
        free_values(c->values, c->value_count);
        test_free((void *)c->columns);
    }
    r->change_count = 0;
}

static void keep_change(struct recorder *r, const struct engine_change *change)
{
    struct engine_change *c = &r->changes[r->change_count++];

    assert_true(r->change_count <= 64);
    *c = *change;
    c->table = change->table != NULL
                   ? dup_bytes(change->table, strlen(change->table))
                   : NULL;
    c->sql = change->sql != NULL ? dup_bytes(change->sql, strlen(change->sql))
                                 : NULL;
    c->key = dup_values(change->key, change->key_count);
    c->values = dup_values(change->values, change->value_count);
    c->columns = dup_bytes(change->columns,
                           change->value_count * sizeof(*change->columns));
}

static int record_cb(void *ctx, struct engine_db *db,
                     struct engine_commit *commit)
{
    struct recorder *r = ctx;
    struct engine_change change;
    int rc;

    r->calls++;
    r->log[0] = '\0';
    forget_changes(r);
    while ((rc = engine_commit_next(commit, &change)) == ENGINE_ROW) {
        render(&change, r->log, sizeof(r->log));
        keep_change(r, &change);
    }
    assert_int_equal(rc, ENGINE_DONE);
    if (r->stamp != 0) {
        engine_commit_set_stamp(commit, r->stamp);
    }
    if (r->sql != NULL) {
        r->sql_rc = engine_exec(db, r->sql, NULL, NULL);
    }
    if (r->veto != 0 && r->message != NULL) {
        return engine_commit_veto(commit, r->veto, "%s", r->message);
    }
    return r->veto;
}

static struct engine_db *open_recorded(const char *path, struct recorder *r)
{
    struct engine_db *db = storage_open(path);

    memset(r, 0, sizeof(*r));
    assert_int_equal(engine_commit_hook_set(db, record_cb, r), 0);
    return db;
}

static void close_recorded(struct engine_db *db, struct recorder *r)
{
    engine_close(db);
    forget_changes(r);
}

/* The rows of a query, "a|b\n" per row. */
static void query(struct engine_db *db, const char *sql, char *out, size_t size)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    out[0] = '\0';
    assert_int_equal(engine_prepare(db, sql, -1, &stmt, NULL), 0);
    while ((rc = engine_step(stmt)) == ENGINE_ROW) {
        for (int c = 0; c < engine_column_count(stmt); c++) {
            const char *text = engine_column_text(stmt, c);

            append(out, size, c > 0 ? "|" : "");
            append(out, size, text != NULL ? text : "NULL");
        }
        append(out, size, "\n");
    }
    assert_int_equal(rc, ENGINE_DONE);
    engine_finalize(stmt);
}

static void assert_query(struct engine_db *db, const char *sql,
                         const char *expected)
{
    char rows[4096];

    query(db, sql, rows, sizeof(rows));
    assert_string_equal(rows, expected);
}

/* ---- what the hook sees ---- */

static void capture_rows_and_schema_in_order(void **state)
{
    struct recorder r;
    struct engine_db *db = open_recorded(NULL, &r);

    (void)state;
    storage_exec(db, "BEGIN");
    storage_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, b, c REAL)");
    storage_exec(db, "INSERT INTO t VALUES (1, 'x', 10), (2, 'y', NULL)");
    storage_exec(db, "UPDATE t SET c = 11 WHERE id = 1");
    storage_exec(db, "UPDATE t SET b = 'x' WHERE id = 1"); /* no change */
    storage_exec(db, "DELETE FROM t WHERE id = 2");
    storage_exec(db, "CREATE INDEX t_b ON t(b)");
    assert_int_equal(r.calls, 0);
    storage_exec(db, "COMMIT");
    assert_int_equal(r.calls, 1);
    assert_string_equal(r.log,
                        "S CREATE TABLE t(id INTEGER PRIMARY KEY, b, c REAL)\n"
                        "I t (i:1) 0=i:1 1=t:x 2=r:10\n"
                        "I t (i:2) 0=i:2 1=t:y 2=n\n"
                        "U t (i:1) 2=r:11\n"
                        "D t (i:2)\n"
                        "S CREATE INDEX t_b ON t(b)\n");

    /* An autocommit statement is a commit of its own; one that changes
     * nothing does not call the hook. */
    storage_exec(db, "INSERT INTO t(b) VALUES ('z')");
    assert_int_equal(r.calls, 2);
    assert_string_equal(r.log, "I t (i:2) 0=i:2 1=t:z 2=n\n");
    storage_exec(db, "UPDATE t SET b = b WHERE id = 1");
    storage_exec(db, "SELECT * FROM t");
    assert_int_equal(r.calls, 2);
    close_recorded(db, &r);
}

static void capture_keys_and_key_changes(void **state)
{
    struct recorder r;
    struct engine_db *db = open_recorded(NULL, &r);

    (void)state;
    storage_exec(db, "CREATE TABLE p(k TEXT PRIMARY KEY, v)");
    storage_exec(db, "CREATE TABLE q(a, b, v, PRIMARY KEY(b, a))");
    storage_exec(db, "CREATE TABLE r(v)");
    storage_exec(db, "BEGIN");
    storage_exec(db, "INSERT INTO p VALUES ('x', 1)");
    storage_exec(db, "INSERT INTO q VALUES (1, 'b', 2)");
    storage_exec(db, "INSERT INTO r VALUES (3)");
    storage_exec(db, "UPDATE p SET v = 5");
    storage_exec(db, "UPDATE q SET v = 6");
    storage_exec(db, "UPDATE p SET k = 'y'");    /* key change */
    storage_exec(db, "UPDATE q SET a = 7");      /* part of the key */
    storage_exec(db, "UPDATE r SET rowid = 9");  /* the rowid is r's key */
    storage_exec(db, "UPDATE p SET rowid = 40"); /* not p's key */
    storage_exec(db, "DELETE FROM p");
    storage_exec(db, "DELETE FROM q");
    storage_exec(db, "COMMIT");
    assert_string_equal(r.log, "I p (t:x) 0=t:x 1=i:1\n"
                               "I q (t:b,i:1) 0=i:1 1=t:b 2=i:2\n"
                               "I r (i:1) 0=i:3\n"
                               "U p (t:x) 1=i:5\n"
                               "U q (t:b,i:1) 2=i:6\n"
                               "D p (t:x)\n"
                               "I p (t:y) 0=t:y 1=i:5\n"
                               "D q (t:b,i:1)\n"
                               "I q (t:b,i:7) 0=i:7 1=t:b 2=i:6\n"
                               "D r (i:1)\n"
                               "I r (i:9) 0=i:3\n"
                               "D p (t:y)\n"
                               "D q (t:b,i:7)\n");
    close_recorded(db, &r);
}

static void capture_skips_undone_changes(void **state)
{
    struct recorder r;
    struct engine_db *db = open_recorded(NULL, &r);

    (void)state;
    storage_exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE)");
    storage_exec(db, "BEGIN");
    storage_exec(db, "INSERT INTO t VALUES (1, 'a')");
    storage_exec(db, "SAVEPOINT s");
    storage_exec(db, "INSERT INTO t VALUES (2, 'b')");
    storage_exec(db, "UPDATE t SET b = 'c' WHERE a = 1");
    storage_exec(db, "ROLLBACK TO s");
    /* Fails on its second row: the first is undone with it. */
    assert_int_equal(
        engine_exec(db, "INSERT INTO t VALUES (3, 'c'), (4, 'a')", NULL, NULL),
        ENGINE_ECONSTRAINT);
    storage_exec(db, "INSERT INTO t VALUES (5, 'e')");
    storage_exec(db, "RELEASE s");
    storage_exec(db, "COMMIT");
    assert_string_equal(r.log, "I t (i:1) 0=i:1 1=t:a\n"
                               "I t (i:5) 0=i:5 1=t:e\n");

    /* A failed autocommit statement commits nothing. */
    r.calls = 0;
    assert_int_equal(
        engine_exec(db, "INSERT INTO t VALUES (6, 'a')", NULL, NULL),
        ENGINE_ECONSTRAINT);
    storage_exec(db, "BEGIN");
    storage_exec(db, "INSERT INTO t VALUES (7, 'g')");
    storage_exec(db, "ROLLBACK");
    assert_int_equal(r.calls, 0);
    close_recorded(db, &r);
}

static void capture_commit_next_rewinds(void **state)
{
    struct recorder r;
    struct engine_db *db = open_recorded(NULL, &r);

    (void)state;
    /* Every hook call starts at the first change. */
    storage_exec(db, "CREATE TABLE t(a)");
    assert_string_equal(r.log, "S CREATE TABLE t(a)\n");
    storage_exec(db, "INSERT INTO t VALUES (1)");
    assert_string_equal(r.log, "I t (i:1) 0=i:1\n");
    assert_int_equal(engine_commit_hook_set(db, NULL, NULL), 0);
    storage_exec(db, "INSERT INTO t VALUES (2)");
    assert_int_equal(r.calls, 2);
    close_recorded(db, &r);
}

/* ---- veto ---- */

static void capture_veto_rolls_back(void **state)
{
    struct recorder r;
    struct engine_db *db = open_recorded(NULL, &r);

    (void)state;
    storage_exec(db, "CREATE TABLE t(a)");
    storage_exec(db, "CREATE TABLE audit(x)");
    r.veto = -10300;
    r.message = "not the writer";
    r.sql = "INSERT INTO audit VALUES ('hook')";
    storage_exec(db, "BEGIN");
    storage_exec(db, "INSERT INTO t VALUES (1)");
    assert_int_equal(engine_exec(db, "COMMIT", NULL, NULL), -10300);
    assert_string_equal(engine_errmsg(db), "not the writer");
    assert_int_equal(r.sql_rc, 0);
    assert_false(engine_in_transaction(db));

    /* An autocommit statement, and a hook error without a message. */
    r.message = NULL;
    r.veto = ENGINE_EABORT;
    assert_int_equal(engine_exec(db, "INSERT INTO t VALUES (2)", NULL, NULL),
                     ENGINE_EABORT);
    assert_string_equal(engine_errmsg(db),
                        "commit hook failed: statement aborted");
    r.veto = 0;
    r.sql = NULL;
    assert_query(db, "SELECT count(*) FROM t", "0\n");
    assert_query(db, "SELECT count(*) FROM audit", "0\n");
    storage_exec(db, "INSERT INTO t VALUES (3)");
    assert_query(db, "SELECT a FROM t", "3\n");
    close_recorded(db, &r);
}

static void capture_veto_writes_nothing_to_file(void **state)
{
    struct scratch_dir dir;
    struct recorder r;
    struct engine_db *db;

    (void)state;
    scratch_dir_make(&dir);
    db = open_recorded(dir.db, &r);
    storage_exec(db, "CREATE TABLE t(a)");
    r.veto = ENGINE_ECONSTRAINT;
    r.message = "vetoed";
    storage_exec(db, "BEGIN");
    storage_exec(db, "INSERT INTO t VALUES (1)");
    storage_exec(db, "CREATE TABLE u(b)");
    assert_int_equal(engine_exec(db, "COMMIT", NULL, NULL), ENGINE_ECONSTRAINT);
    close_recorded(db, &r);

    db = storage_open(dir.db);
    assert_query(db, "SELECT count(*) FROM t", "0\n");
    assert_query(db, "SELECT name FROM sqlite_schema", "t\n");
    engine_close(db);
    scratch_dir_remove(&dir);
}

static void capture_hook_cannot_end_the_transaction(void **state)
{
    struct recorder r;
    struct engine_db *db = open_recorded(NULL, &r);

    (void)state;
    storage_exec(db, "CREATE TABLE t(a)");
    r.sql = "COMMIT";
    storage_exec(db, "BEGIN");
    storage_exec(db, "INSERT INTO t VALUES (1)");
    assert_int_equal(engine_exec(db, "COMMIT", NULL, NULL), ENGINE_EMISUSE);
    assert_int_equal(r.sql_rc, ENGINE_EMISUSE);
    assert_false(engine_in_transaction(db));
    r.sql = "ROLLBACK";
    assert_int_equal(engine_exec(db, "INSERT INTO t VALUES (2)", NULL, NULL),
                     ENGINE_EMISUSE);
    assert_string_equal(engine_errmsg(db),
                        "the commit hook ended the transaction");
    r.sql = NULL;
    assert_query(db, "SELECT count(*) FROM t", "0\n");

    /* Nor can the hook be changed inside a transaction. */
    storage_exec(db, "BEGIN");
    assert_int_equal(engine_commit_hook_set(db, NULL, NULL), ENGINE_EMISUSE);
    storage_exec(db, "ROLLBACK");
    close_recorded(db, &r);
}

/* ---- the hook's own writes ---- */

static void capture_hook_writes_commit_atomically(void **state)
{
    struct scratch_dir dir;
    struct recorder r;
    struct engine_db *db;

    (void)state;
    scratch_dir_make(&dir);
    db = open_recorded(dir.db, &r);
    assert_int_equal(engine_exec_system(db,
                                        "CREATE TABLE sinew_log(n INTEGER "
                                        "PRIMARY KEY, what)",
                                        NULL, NULL),
                     0);
    storage_exec(db, "CREATE TABLE t(a)");
    storage_exec(db, "CREATE TABLE audit(x)");
    r.sql = "INSERT INTO sinew_log(what) VALUES ('commit');"
            "INSERT INTO audit VALUES ('seen')";
    storage_exec(db, "INSERT INTO t VALUES (1)");
    assert_int_equal(r.sql_rc, 0);
    /* The hook saw its transaction's change only, once. */
    assert_int_equal(r.calls, 3);
    assert_string_equal(r.log, "I t (i:1) 0=i:1\n");
    assert_query(db, "SELECT n, what FROM sinew_log", "1|commit\n");
    assert_query(db, "SELECT x FROM audit", "seen\n");

    /* Written, then vetoed: gone with the rest. */
    r.veto = ENGINE_EABORT;
    assert_int_equal(engine_exec(db, "INSERT INTO t VALUES (2)", NULL, NULL),
                     ENGINE_EABORT);
    r.veto = 0;
    r.sql = NULL;
    close_recorded(db, &r);

    db = storage_open(dir.db);
    assert_query(db, "SELECT a FROM t", "1\n");
    assert_query(db, "SELECT n, what FROM sinew_log", "1|commit\n");
    assert_query(db, "SELECT x FROM audit", "seen\n");
    engine_close(db);
    scratch_dir_remove(&dir);
}

/* The hook's own rows are not the user's: changes(), total_changes() and
 * last_insert_rowid() say what the user's statement did (the HTTP API
 * returns them to clients). */
static void capture_hook_rows_leave_counters_alone(void **state)
{
    struct recorder r;
    struct engine_db *db;
    int64_t total;

    (void)state;
    db = open_recorded(NULL, &r);
    assert_int_equal(engine_exec_system(db,
                                        "CREATE TABLE sinew_log(n INTEGER "
                                        "PRIMARY KEY, what)",
                                        NULL, NULL),
                     0);
    storage_exec(db, "CREATE TABLE t(a)");
    r.sql = "INSERT INTO sinew_log(n, what) VALUES (900, 'a'), (901, 'b')";
    total = engine_total_changes(db);
    storage_exec(db, "INSERT INTO t(rowid, a) VALUES (42, 1)");
    assert_int_equal(r.sql_rc, 0);
    assert_int_equal(engine_last_insert_rowid(db), 42);
    assert_int_equal(engine_changes(db), 1);
    assert_int_equal(engine_total_changes(db), total + 1);
    assert_query(db, "SELECT count(*) FROM sinew_log", "2\n");
    r.sql = NULL;
    close_recorded(db, &r);
}

/* ---- stamps ---- */

/* The stamp field of the WAL's first record. */
static uint64_t first_record_stamp(const char *wal_path)
{
    uint8_t bytes[8];
    int fd = open(wal_path, O_RDONLY);

    assert_true(fd >= 0);
    assert_int_equal(pread(fd, bytes, sizeof(bytes), 32 + 16), 8);
    close(fd);
    return common_get_u64le(bytes);
}

static void capture_stamp_survives_reopen(void **state)
{
    struct scratch_dir dir;
    struct recorder r;
    struct engine_db *db;
    const uint64_t stamp = 0x0123456789abcdefu;

    (void)state;
    scratch_dir_make(&dir);
    db = open_recorded(dir.db, &r);
    assert_int_equal(engine_last_stamp(db), 0);
    r.stamp = stamp;
    storage_exec(db, "CREATE TABLE t(a)");
    assert_int_equal(engine_last_stamp(db), stamp);
    assert_int_equal(first_record_stamp(dir.wal), stamp);
    /* A vetoed commit leaves the last stamp as it was. */
    r.stamp = stamp + 1;
    r.veto = ENGINE_EABORT;
    assert_int_equal(engine_exec(db, "INSERT INTO t VALUES (1)", NULL, NULL),
                     ENGINE_EABORT);
    assert_int_equal(engine_last_stamp(db), stamp);
    r.veto = 0;
    storage_exec(db, "INSERT INTO t VALUES (1)");
    close_recorded(db, &r);

    db = storage_open(dir.db);
    assert_int_equal(engine_last_stamp(db), stamp + 1);
    assert_query(db, "SELECT name FROM sqlite_schema", "t\n");
    storage_exec(db, "VACUUM");
    engine_close(db);
    db = storage_open(dir.db);
    assert_int_equal(engine_last_stamp(db), stamp + 1);
    engine_close(db);
    scratch_dir_remove(&dir);
}

/* ---- the apply path ---- */

static void capture_apply_replays_captured_changes(void **state)
{
    struct recorder r, seen;
    struct engine_db *origin = open_recorded(NULL, &r);
    struct engine_db *replica = open_recorded(NULL, &seen);
    const char *tables = "CREATE TABLE p(k TEXT PRIMARY KEY, v, w REAL);"
                         "CREATE TABLE t(id INTEGER PRIMARY KEY, b);"
                         "CREATE TABLE r(x, y)";
    const char *check[] = {"SELECT * FROM p ORDER BY k",
                           "SELECT * FROM t ORDER BY id",
                           "SELECT rowid, * FROM r ORDER BY rowid"};
    char want[1024];

    (void)state;
    storage_exec(origin, "BEGIN");
    storage_exec(origin, tables);
    storage_exec(origin, "INSERT INTO p VALUES ('a', 1, 1.5), ('b', x'00', 2)");
    storage_exec(origin, "INSERT INTO t VALUES (5, 'five'), (6, NULL)");
    storage_exec(origin, "INSERT INTO r VALUES (1, 2), (3, 4)");
    storage_exec(origin, "UPDATE p SET w = 9 WHERE k = 'a'");
    storage_exec(origin, "UPDATE p SET k = 'c' WHERE k = 'b'");
    storage_exec(origin, "UPDATE t SET id = 7 WHERE id = 6");
    storage_exec(origin, "UPDATE r SET y = 'four' WHERE x = 3");
    storage_exec(origin, "DELETE FROM r WHERE x = 1");
    storage_exec(origin, "COMMIT");
    assert_int_equal(engine_apply(replica, r.changes, r.change_count, 42), 0);
    assert_int_equal(seen.calls, 0);
    assert_int_equal(engine_last_stamp(replica), 42);
    for (size_t i = 0; i < 3; i++) {
        query(origin, check[i], want, sizeof(want));
        assert_query(replica, check[i], want);
    }
    close_recorded(origin, &r);
    close_recorded(replica, &seen);
}

static void capture_apply_is_all_or_nothing(void **state)
{
    struct recorder seen;
    struct engine_db *db = open_recorded(NULL, &seen);
    struct engine_change_value one = {.type = ENGINE_INTEGER, .integer = 1};
    struct engine_change_value two = {.type = ENGINE_INTEGER, .integer = 2};
    struct engine_change_value text = {
        .type = ENGINE_TEXT, .bytes = "new", .size = 3};
    size_t column = 1;
    struct engine_change changes[] = {
        {.kind = ENGINE_CHANGE_INSERT,
         .table = "t",
         .key = &two,
         .key_count = 1,
         .values = (struct engine_change_value[]){two, text},
         .value_count = 2},
        {.kind = ENGINE_CHANGE_UPDATE,
         .table = "t",
         .key = &one,
         .key_count = 1,
         .columns = &column,
         .values = &text,
         .value_count = 1},
        {.kind = ENGINE_CHANGE_DELETE,
         .table = "t",
         .key = &two,
         .key_count = 1},
        {.kind = ENGINE_CHANGE_UPDATE,
         .table = "t",
         .key = &two,
         .key_count = 1,
         .columns = &column,
         .values = &text,
         .value_count = 1},
    };

    (void)state;
    storage_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, b)");
    storage_exec(db, "INSERT INTO t VALUES (1, 'old')");
    seen.calls = 0;
    /* The last change finds no row: none of them stays. */
    assert_int_equal(engine_apply(db, changes, 4, 7), ENGINE_ENOTFOUND);
    assert_string_equal(engine_errmsg(db), "no row with that key in t");
    assert_false(engine_in_transaction(db));
    assert_query(db, "SELECT * FROM t", "1|old\n");
    assert_int_equal(engine_last_stamp(db), 0);
    /* An insert whose key is taken fails the same way. */
    changes[2] = changes[0];
    assert_int_equal(engine_apply(db, changes, 3, 7), ENGINE_ECONSTRAINT);
    assert_query(db, "SELECT * FROM t", "1|old\n");
    assert_int_equal(engine_apply(db, changes, 2, 7), 0);
    assert_query(db, "SELECT * FROM t", "1|new\n2|new\n");
    assert_int_equal(seen.calls, 0);
    assert_int_equal(engine_last_stamp(db), 7);
    /* Inside a transaction, the apply path is refused. */
    storage_exec(db, "BEGIN");
    assert_int_equal(engine_apply(db, changes, 1, 8), ENGINE_EMISUSE);
    storage_exec(db, "ROLLBACK");
    close_recorded(db, &seen);
}

/* An UPDATE may name the INTEGER PRIMARY KEY among its columns (a merge
 * writes back every column of a row deleted and inserted again): it is
 * set to the value given, never left NULL. */
static void capture_apply_update_names_the_rowid_column(void **state)
{
    struct recorder seen;
    struct engine_db *db = open_recorded(NULL, &seen);
    struct engine_change_value one = {.type = ENGINE_INTEGER, .integer = 1};
    struct engine_change_value text = {
        .type = ENGINE_TEXT, .bytes = "new", .size = 3};
    size_t columns[] = {0, 1};
    struct engine_change change = {
        .kind = ENGINE_CHANGE_UPDATE,
        .table = "t",
        .key = &one,
        .key_count = 1,
        .columns = columns,
        .values = (struct engine_change_value[]){one, text},
        .value_count = 2};

    (void)state;
    storage_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, b)");
    storage_exec(db, "INSERT INTO t VALUES (1, 'old')");
    assert_int_equal(engine_apply(db, &change, 1, 5), 0);
    assert_query(db, "SELECT * FROM t", "1|new\n");
    close_recorded(db, &seen);
}

/* The apply path keeps its statements prepared: the same change after the
 * table was dropped and made again (other columns) writes the new table,
 * and many changes of one shape all land. */
static void capture_apply_statements_follow_the_schema(void **state)
{
    struct recorder seen;
    struct engine_db *db = open_recorded(NULL, &seen);
    struct engine_change_value values[2] = {
        {.type = ENGINE_INTEGER, .integer = 1},
        {.type = ENGINE_TEXT, .bytes = "x", .size = 1}};
    struct engine_change insert = {.kind = ENGINE_CHANGE_INSERT,
                                   .table = "t",
                                   .key = &values[0],
                                   .key_count = 1,
                                   .values = values,
                                   .value_count = 2};

    (void)state;
    storage_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, b)");
    assert_int_equal(engine_apply(db, &insert, 1, 1), 0);
    storage_exec(db, "DROP TABLE t; CREATE TABLE t(id INTEGER PRIMARY KEY,"
                     " b TEXT, c DEFAULT 'c')");
    values[1].bytes = "y";
    insert.value_count = 2;
    /* Two values for three columns: refused, as before the drop. */
    assert_int_equal(engine_apply(db, &insert, 1, 2), ENGINE_ESQL);
    storage_exec(db, "DROP TABLE t; CREATE TABLE t(id INTEGER PRIMARY KEY,"
                     " b TEXT)");
    assert_int_equal(engine_apply(db, &insert, 1, 2), 0);
    assert_query(db, "SELECT * FROM t", "1|y\n");
    for (int64_t i = 2; i <= 100; i++) {
        values[0].integer = i;
        assert_int_equal(engine_apply(db, &insert, 1, 3), 0);
    }
    assert_query(db, "SELECT count(*), sum(id) FROM t", "100|5050\n");
    close_recorded(db, &seen);
}

/* What comes from elsewhere is data and one DDL statement at a time:
 * never a second statement, never DML disguised as schema, never a write
 * to a module's system table. */
static void capture_apply_refuses_what_is_not_a_change(void **state)
{
    struct recorder seen;
    struct engine_db *db = open_recorded(NULL, &seen);
    struct engine_change_value one = {.type = ENGINE_INTEGER, .integer = 1};
    struct engine_change two_statements = {
        .kind = ENGINE_CHANGE_SCHEMA,
        .sql = "CREATE TABLE u(x); DELETE FROM t"};
    struct engine_change dml = {.kind = ENGINE_CHANGE_SCHEMA,
                                .sql = "DELETE FROM t"};
    struct engine_change ddl = {.kind = ENGINE_CHANGE_SCHEMA,
                                .sql = "CREATE TABLE u(x);"};
    struct engine_change system = {.kind = ENGINE_CHANGE_DELETE,
                                   .table = "sinew_engine_stamp",
                                   .key = &one,
                                   .key_count = 1};

    (void)state;
    storage_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, b)");
    storage_exec(db, "INSERT INTO t VALUES (1, 'old')");
    assert_int_equal(engine_apply(db, &two_statements, 1, 3), ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db),
                        "a schema change must be one CREATE or DROP of a "
                        "table, index, view or trigger, or one ALTER TABLE");
    assert_int_equal(engine_apply(db, &dml, 1, 3), ENGINE_ESQL);
    assert_query(db, "SELECT * FROM t", "1|old\n");
    assert_int_equal(engine_apply(db, &system, 1, 3), ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db),
                        "object name reserved for internal use: "
                        "sinew_engine_stamp");
    assert_int_equal(engine_apply(db, &ddl, 1, 3), 0);
    assert_query(db, "SELECT count(*) FROM u", "0\n");
    close_recorded(db, &seen);
}

struct merge {
    int64_t read;
};

/* A merge: reads the current row and the metadata, writes only the winning
 * column and its metadata. */
static int merge_cb(void *ctx, struct engine_db *db)
{
    struct merge *merge = ctx;
    struct engine_stmt *stmt = NULL;
    struct engine_change_value key = {.type = ENGINE_INTEGER, .integer = 1};
    struct engine_change_value value = {.type = ENGINE_INTEGER, .integer = 99};
    size_t column = 2;
    struct engine_change change = {.kind = ENGINE_CHANGE_UPDATE,
                                   .table = "t",
                                   .key = &key,
                                   .key_count = 1,
                                   .columns = &column,
                                   .values = &value,
                                   .value_count = 1};
    int rc =
        engine_prepare(db, "SELECT c FROM t WHERE id = 1", -1, &stmt, NULL);

    if (rc == 0 && engine_step(stmt) == ENGINE_ROW) {
        merge->read = engine_column_int64(stmt, 0);
    }
    engine_finalize(stmt);
    rc = rc ? rc : engine_apply_change(db, &change);
    return rc ? rc
              : engine_exec(db, "INSERT INTO sinew_clock VALUES (1, 2)", NULL,
                            NULL);
}

static void capture_apply_transaction_merges_unseen(void **state)
{
    struct recorder seen;
    struct engine_db *db = open_recorded(NULL, &seen);
    struct merge merge = {0};

    (void)state;
    assert_int_equal(engine_exec_system(
                         db, "CREATE TABLE sinew_clock(row, hlc)", NULL, NULL),
                     0);
    storage_exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, b, c)");
    storage_exec(db, "INSERT INTO t VALUES (1, 'b', 3)");
    seen.calls = 0;
    assert_int_equal(engine_apply_transaction(db, 5, merge_cb, &merge), 0);
    assert_int_equal(merge.read, 3);
    assert_int_equal(seen.calls, 0);
    assert_query(db, "SELECT * FROM t", "1|b|99\n");
    assert_query(db, "SELECT * FROM sinew_clock", "1|2\n");
    assert_int_equal(engine_last_stamp(db), 5);
    /* A local write afterwards is captured again. */
    storage_exec(db, "UPDATE t SET b = 'c'");
    assert_int_equal(seen.calls, 1);
    assert_string_equal(seen.log, "U t (i:1) 1=t:c\n");
    close_recorded(db, &seen);
}

/* ---- system tables ---- */

static void capture_system_tables_reserved_and_hidden(void **state)
{
    struct recorder r;
    struct engine_db *db = open_recorded(NULL, &r);

    (void)state;
    assert_int_equal(engine_exec(db, "CREATE TABLE sinew_x(a)", NULL, NULL),
                     ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db),
                        "object name reserved for internal use: sinew_x");
    assert_int_equal(engine_exec(db, "CREATE TABLE SINEW_X(a)", NULL, NULL),
                     ENGINE_ESQL);
    assert_int_equal(engine_exec_system(db,
                                        "CREATE TABLE sinew_x(a PRIMARY KEY, "
                                        "b);"
                                        "CREATE INDEX sinew_x_b ON sinew_x(b)",
                                        NULL, NULL),
                     0);
    assert_int_equal(engine_exec(db, "DROP TABLE sinew_x", NULL, NULL),
                     ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db), "table sinew_x may not be dropped");
    assert_int_equal(
        engine_exec(db, "CREATE INDEX i ON sinew_x(b)", NULL, NULL),
        ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db), "table sinew_x may not be indexed");
    assert_int_equal(engine_exec(db, "DROP INDEX sinew_x_b", NULL, NULL),
                     ENGINE_ESQL);
    storage_exec(db, "CREATE TABLE t(a)");
    assert_int_equal(
        engine_exec(db, "CREATE INDEX sinew_i ON t(a)", NULL, NULL),
        ENGINE_ESQL);
    assert_string_equal(engine_errmsg(db),
                        "object name reserved for internal use: sinew_i");
    assert_query(db, "SELECT type, name FROM sqlite_schema", "table|t\n");
    assert_query(db, "SELECT name FROM sqlite_master WHERE name LIKE 's%'", "");

    /* Readable and writable by name; the hook never sees them. */
    r.calls = 0;
    storage_exec(db, "INSERT INTO sinew_x VALUES (1, 'one')");
    storage_exec(db, "UPDATE sinew_x SET b = 'uno'");
    assert_int_equal(r.calls, 0);
    storage_exec(db, "BEGIN");
    storage_exec(db, "INSERT INTO sinew_x VALUES (2, 'two')");
    storage_exec(db, "INSERT INTO t VALUES (3)");
    storage_exec(db, "DELETE FROM sinew_x WHERE a = 1");
    storage_exec(db, "COMMIT");
    assert_string_equal(r.log, "I t (i:1) 0=i:3\n");
    assert_query(db, "SELECT a, b FROM sinew_x", "2|two\n");
    r.calls = 0;
    assert_int_equal(engine_exec_system(db, "DROP TABLE sinew_x", NULL, NULL),
                     0);
    assert_int_equal(r.calls, 0);
    close_recorded(db, &r);
}

static void capture_system_tables_persist(void **state)
{
    struct scratch_dir dir;
    struct engine_db *db;

    (void)state;
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    assert_int_equal(engine_exec_system(db,
                                        "CREATE TABLE sinew_meta(k PRIMARY "
                                        "KEY, v)",
                                        NULL, NULL),
                     0);
    storage_exec(db, "INSERT INTO sinew_meta VALUES ('site', x'0102')");
    engine_close(db);

    db = storage_open(dir.db);
    assert_query(db, "SELECT k, hex(v) FROM sinew_meta", "site|0102\n");
    storage_exec(db, "VACUUM");
    engine_close(db);
    db = storage_open(dir.db);
    assert_query(db, "SELECT k, hex(v) FROM sinew_meta", "site|0102\n");
    assert_query(db, "SELECT count(*) FROM sqlite_schema", "0\n");
    assert_int_equal(engine_exec(db, "CREATE TABLE sinew_meta(a)", NULL, NULL),
                     ENGINE_ESQL);
    engine_close(db);
    scratch_dir_remove(&dir);
}

/* The WAL replays the key entries (and key changes recorded as DELETE +
 * INSERT) of a captured transaction. */
static void capture_file_replay_with_keys(void **state)
{
    struct scratch_dir dir;
    struct recorder r;
    struct engine_db *db;

    (void)state;
    scratch_dir_make(&dir);
    db = open_recorded(dir.db, &r);
    storage_exec(db, "CREATE TABLE p(k TEXT PRIMARY KEY, v)");
    storage_exec(db, "INSERT INTO p VALUES ('a', 1), ('b', 2), ('c', 3)");
    storage_exec(db, "UPDATE p SET k = 'z' WHERE k = 'a'");
    storage_exec(db, "UPDATE p SET v = 20 WHERE k = 'b'");
    storage_exec(db, "DELETE FROM p WHERE k = 'c'");
    close_recorded(db, &r);
    db = storage_open(dir.db);
    assert_query(db, "SELECT * FROM p ORDER BY k", "b|20\nz|1\n");
    assert_query(db, "PRAGMA integrity_check", "ok\n");
    engine_close(db);
    scratch_dir_remove(&dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(capture_rows_and_schema_in_order),
        cmocka_unit_test(capture_keys_and_key_changes),
        cmocka_unit_test(capture_skips_undone_changes),
        cmocka_unit_test(capture_commit_next_rewinds),
        cmocka_unit_test(capture_veto_rolls_back),
        cmocka_unit_test(capture_veto_writes_nothing_to_file),
        cmocka_unit_test(capture_hook_cannot_end_the_transaction),
        cmocka_unit_test(capture_hook_writes_commit_atomically),
        cmocka_unit_test(capture_hook_rows_leave_counters_alone),
        cmocka_unit_test(capture_stamp_survives_reopen),
        cmocka_unit_test(capture_apply_replays_captured_changes),
        cmocka_unit_test(capture_apply_is_all_or_nothing),
        cmocka_unit_test(capture_apply_update_names_the_rowid_column),
        cmocka_unit_test(capture_apply_statements_follow_the_schema),
        cmocka_unit_test(capture_apply_refuses_what_is_not_a_change),
        cmocka_unit_test(capture_apply_transaction_merges_unseen),
        cmocka_unit_test(capture_system_tables_reserved_and_hidden),
        cmocka_unit_test(capture_system_tables_persist),
        cmocka_unit_test(capture_file_replay_with_keys),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
