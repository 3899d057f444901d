/* SPDX-License-Identifier: MIT
 *
 * embedded.c: sinew as a library inside a program, with no server and no
 * network: the reference example for embedding. The engine's C API
 * (engine/include/engine.h, its manual) follows sqlite3's: a database
 * handle, statements that are prepared, bound, stepped and read, and
 * engine_exec() for scripts. Every call returns 0 or a negative code, and
 * engine_errmsg() then says what went wrong, in SQLite's words.
 *
 *     embedded [DIR]     the database is DIR/embedded.db (default: ".")
 *
 * The program fills a table in one transaction with a prepared INSERT,
 * queries it with a bound parameter, shows a constraint violation being
 * handled, then closes the database, opens it again and reads the rows
 * back from the file.
 */
#include <stdio.h>
#include <stdlib.h>

#include "engine.h"

static const struct {
    const char *name;
    int64_t qty;
    double price;
} fruit[] = {{"apple", 12, 0.5}, {"banana", 30, 0.25}, {"cherry", 4, 3.0}};

/* Reports a failed call: the engine's message for db, else (no handle) the
 * code's generic message. Returns rc so a caller can `return fail(...)`. */
static int fail(struct engine_db *db, int rc, const char *what)
{
    fprintf(stderr, "embedded: %s: %s\n", what,
            db ? engine_errmsg(db) : engine_strerror(rc));
    return rc;
}

/* Inserts every fruit in one transaction, with one prepared statement run
 * once per row: compiled once, bound and stepped many times. */
static int insert_all(struct engine_db *db)
{
    struct engine_stmt *stmt = NULL;
    int rc = engine_exec(db, "BEGIN", NULL, NULL);
    if (rc < 0) {
        return fail(db, rc, "BEGIN");
    }
    rc = engine_prepare(db,
                        "INSERT INTO fruit(name, qty, price) VALUES (?, ?, ?)",
                        -1, &stmt, NULL);
    for (size_t i = 0; rc == 0 && i < sizeof fruit / sizeof fruit[0]; i++) {
        /* Text is copied by the bind: the string need not outlive it. */
        rc = engine_bind_text(stmt, 1, fruit[i].name, -1);
        if (rc == 0) {
            rc = engine_bind_int64(stmt, 2, fruit[i].qty);
        }
        if (rc == 0) {
            rc = engine_bind_double(stmt, 3, fruit[i].price);
        }
        if (rc == 0 && (rc = engine_step(stmt)) == ENGINE_DONE) {
            rc = engine_reset(stmt); /* ready for the next row */
        }
    }
    engine_finalize(stmt);
    if (rc != 0) { /* an error, or (never for an INSERT) a row */
        fail(db, rc, "insert");
        engine_exec(db, "ROLLBACK", NULL, NULL); /* nothing half-written */
        return rc < 0 ? rc : ENGINE_EABORT;
    }
    rc = engine_exec(db, "COMMIT", NULL, NULL); /* durable once it returns */
    return rc < 0 ? fail(db, rc, "COMMIT") : 0;
}

/* Prints the fruit with at least min_qty in stock, by name. */
static int print_stock(struct engine_db *db, int64_t min_qty)
{
    struct engine_stmt *stmt = NULL;
    int rc = engine_prepare(db,
                            "SELECT name, qty, price * qty FROM fruit "
                            "WHERE qty >= :min ORDER BY name",
                            -1, &stmt, NULL);
    if (rc < 0) {
        return fail(db, rc, "prepare SELECT");
    }
    rc = engine_bind_int64(stmt, engine_bind_parameter_index(stmt, ":min"),
                           min_qty);
    printf("fruit with qty >= %lld:\n", (long long)min_qty);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        /* Column text is owned by the statement, valid until the next
         * step: copy it to keep it. The REAL prints as SQLite prints it. */
        printf("  %-8s %3lld  worth %s\n", engine_column_text(stmt, 0),
               (long long)engine_column_int64(stmt, 1),
               engine_column_text(stmt, 2));
        rc = 0;
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : fail(db, rc, "SELECT");
}

/* A second "apple" breaks the PRIMARY KEY: the statement fails, changes
 * nothing, and the handle goes on working. */
static int show_constraint_error(struct engine_db *db)
{
    int rc = engine_exec(db, "INSERT INTO fruit VALUES ('apple', 1, 9.99)",
                         NULL, NULL);
    if (rc != ENGINE_ECONSTRAINT) {
        fprintf(stderr, "embedded: duplicate key: want a constraint error\n");
        return rc < 0 ? rc : ENGINE_EMISUSE;
    }
    printf("duplicate insert refused: %s\n", engine_errmsg(db));
    return 0;
}

/* engine_exec()'s row callback: values arrive as text (NULL for NULL). */
static int print_row(void *ctx, int count, char **values, char **names)
{
    (void)ctx;
    for (int i = 0; i < count; i++) {
        printf("%s%s=%s", i ? " " : "  ", names[i],
               values[i] ? values[i] : "NULL");
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    char path[4096];
    struct engine_db *db = NULL;
    int rc;

    snprintf(path, sizeof path, "%s/embedded.db", argc > 1 ? argv[1] : ".");
    rc = engine_open(path, &db); /* created if missing */
    if (rc < 0) {
        fail(NULL, rc, path);
        return EXIT_FAILURE;
    }
    rc = engine_exec(db,
                     "DROP TABLE IF EXISTS fruit;"
                     "CREATE TABLE fruit(name TEXT PRIMARY KEY,"
                     " qty INTEGER NOT NULL, price REAL)",
                     NULL, NULL);
    if (rc < 0) {
        fail(db, rc, "CREATE TABLE");
        goto done;
    }
    if ((rc = insert_all(db)) < 0 || (rc = print_stock(db, 10)) < 0 ||
        (rc = show_constraint_error(db)) < 0) {
        goto done;
    }
    engine_close(db);

    /* Everything committed is in the file (and its write-ahead log,
     * embedded.db-wal): a new handle finds it. */
    rc = engine_open(path, &db);
    if (rc < 0) {
        fail(NULL, rc, path);
        return EXIT_FAILURE;
    }
    printf("after reopening %s:\n", path);
    rc =
        engine_exec(db, "SELECT count(*) AS rows, sum(qty) AS total FROM fruit",
                    print_row, NULL);
    if (rc < 0) {
        fail(db, rc, "SELECT after reopen");
    }
done:
    engine_close(db);
    return rc < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
