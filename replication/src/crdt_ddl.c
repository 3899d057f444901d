/* SPDX-License-Identifier: MIT
 *
 * crdt_ddl.c: how a replicated schema change (a SCHEMA record: one CREATE
 * or DROP of a table or index, as the origin's commit hook saw it) is run
 * by a receiver whose schema may differ (crdt.md §6.8: "schema changes
 * themselves are coordinated (admin-driven rollout) ... mixed versions
 * must interoperate through the quarantine rule").
 *
 * Schemas are made by administrators on each node, so a receiver may
 * already have what a SCHEMA record makes, or lack what it names. The
 * rules, none of which stops the merge:
 *
 *   CREATE TABLE t, t exists     same shape (columns by name with their
 *                                declared type, NOT NULL, DEFAULT and key
 *                                position): a no-op. Another shape: refused
 *                                (a no-op, logged at ERROR); the rows that
 *                                follow merge by column name, and their
 *                                columns this t lacks are kept
 *                                (crdt_quarantine.c).
 *   CREATE INDEX i, i exists     a no-op.
 *   DROP TABLE/INDEX x, no x     a no-op (logged at WARN): it is gone
 *                                already, or its CREATE has not arrived
 *                                (DDL of different origins is applied as it
 *                                arrives, not in causal order).
 *   anything else that fails     kept, with the set's other kept records,
 *                                and tried again when the schema changes
 *                                (a CREATE INDEX on a table not here yet).
 *
 * A shape is compared by creating the incoming table under a scratch
 * system name in the merge's transaction and reading both with PRAGMA
 * table_info, so the comparison is the engine's reading of both
 * statements, not their text. Statements are recognized with a small
 * tokenizer (keywords, quoted or bare names, comments) that only needs the
 * statement's head: its kind and the name it creates or drops.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "crdt_int.h"

/* The largest name the tokenizer reads; longer ones make the statement
 * "other" (run as it is, kept if it fails). */
#define DDL_NAME_MAX 256
#define DDL_SCRATCH "sinew_crdt_shape"

enum ddl_kind {
    DDL_OTHER,
    DDL_CREATE_TABLE,
    DDL_CREATE_INDEX,
    DDL_DROP_TABLE,
    DDL_DROP_INDEX,
};

/* The head of a DDL statement. */
struct ddl {
    enum ddl_kind kind;
    size_t name_at;          /* the name's first byte in the statement */
    size_t name_size;        /* its bytes there: quotes and schema prefix too */
    char name[DDL_NAME_MAX]; /* unquoted, without the schema prefix */
};

struct lexer {
    const char *s;
    size_t at;
};

static bool is_name_byte(unsigned char c)
{
    return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

static void skip_space(struct lexer *lx)
{
    const char *s = lx->s;

    for (;;) {
        if (isspace((unsigned char)s[lx->at])) {
            lx->at++;
        } else if (s[lx->at] == '-' && s[lx->at + 1] == '-') {
            while (s[lx->at] != '\0' && s[lx->at] != '\n') {
                lx->at++;
            }
        } else if (s[lx->at] == '/' && s[lx->at + 1] == '*') {
            const char *end = strstr(s + lx->at + 2, "*/");
            lx->at = end ? (size_t)(end - s) + 2 : strlen(s);
        } else {
            return;
        }
    }
}

/* Consumes word (upper case) when it comes next, case-insensitively. */
static bool keyword(struct lexer *lx, const char *word)
{
    size_t n = strlen(word), i;

    skip_space(lx);
    for (i = 0; i < n; i++) {
        if (toupper((unsigned char)lx->s[lx->at + i]) != word[i]) {
            return false;
        }
    }
    if (is_name_byte((unsigned char)lx->s[lx->at + n])) {
        return false;
    }
    lx->at += n;
    return true;
}

/* One name, bare or quoted ("", ``, [], ''), unquoted into out: false when
 * there is none or it does not fit. */
static bool name(struct lexer *lx, char *out, size_t size)
{
    const char *s = lx->s;
    char close = s[lx->at] == '[' ? ']' : s[lx->at];
    size_t n = 0;

    if (close == '"' || close == '`' || close == ']' || close == '\'') {
        for (lx->at++; s[lx->at] != '\0'; lx->at++) {
            if (s[lx->at] == close && s[lx->at + 1] == close && close != ']') {
                lx->at++;
            } else if (s[lx->at] == close) {
                break;
            }
            if (n + 1 >= size) {
                return false;
            }
            out[n++] = s[lx->at];
        }
        if (s[lx->at] != close) {
            return false;
        }
        lx->at++;
    } else {
        while (is_name_byte((unsigned char)s[lx->at])) {
            if (n + 1 >= size) {
                return false;
            }
            out[n++] = s[lx->at++];
        }
    }
    out[n] = '\0';
    return n > 0;
}

/* [schema.]name into d: false when it is not there. */
static bool qualified_name(struct lexer *lx, struct ddl *d)
{
    skip_space(lx);
    d->name_at = lx->at;
    if (!name(lx, d->name, sizeof(d->name))) {
        return false;
    }
    skip_space(lx);
    if (lx->s[lx->at] == '.') {
        lx->at++;
        skip_space(lx);
        if (!name(lx, d->name, sizeof(d->name))) {
            return false;
        }
    }
    d->name_size = lx->at - d->name_at;
    return true;
}

static enum ddl_kind create_kind(struct lexer *lx)
{
    if (!keyword(lx, "TEMP")) {
        (void)keyword(lx, "TEMPORARY");
    }
    if (keyword(lx, "TABLE")) {
        return DDL_CREATE_TABLE;
    }
    (void)keyword(lx, "UNIQUE");
    return keyword(lx, "INDEX") ? DDL_CREATE_INDEX : DDL_OTHER;
}

static void parse(const char *sql, struct ddl *d)
{
    struct lexer lx = {sql, 0};

    memset(d, 0, sizeof(*d));
    if (keyword(&lx, "CREATE")) {
        d->kind = create_kind(&lx);
        if (d->kind != DDL_OTHER && keyword(&lx, "IF") &&
            !(keyword(&lx, "NOT") && keyword(&lx, "EXISTS"))) {
            d->kind = DDL_OTHER;
        }
    } else if (keyword(&lx, "DROP")) {
        d->kind = keyword(&lx, "TABLE")   ? DDL_DROP_TABLE
                  : keyword(&lx, "INDEX") ? DDL_DROP_INDEX
                                          : DDL_OTHER;
        if (d->kind != DDL_OTHER && keyword(&lx, "IF") &&
            !keyword(&lx, "EXISTS")) {
            d->kind = DDL_OTHER;
        }
    }
    if (d->kind != DDL_OTHER && !qualified_name(&lx, d)) {
        d->kind = DDL_OTHER;
    }
}

bool replication__crdt_ddl_drops_table(const char *sql, char *out, size_t size)
{
    struct ddl d;

    ASSERT(sql != NULL);
    parse(sql, &d);
    if (d.kind != DDL_DROP_TABLE ||
        (size_t)snprintf(out, size, "%s", d.name) >= size) {
        return false;
    }
    return true;
}

/* Whether sqlite_schema has an object of type named name (names compare
 * without regard to ASCII case, as SQL's do). */
static int object_exists(struct engine_db *db, const char *type,
                         const char *name, bool *out)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(db,
                        "SELECT count(*) FROM sqlite_schema WHERE type = ?1"
                        " AND lower(name) = lower(?2)",
                        -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_bind_text(stmt, 1, type, -1);
    }
    if (rc == 0) {
        rc = engine_bind_text(stmt, 2, name, -1);
    }
    if (rc == 0) {
        rc = engine_step(stmt);
    }
    if (rc == ENGINE_ROW) {
        *out = engine_column_int64(stmt, 0) > 0;
        rc = 0;
    }
    engine_finalize(stmt);
    return rc;
}

/* Appends one PRAGMA table_info row (cid, name, type, notnull,
 * dflt_value, pk) as "name|TYPE|notnull|dflt|pk" plus a NUL. */
static int append_column(struct engine_stmt *stmt, struct common_buf *out)
{
    const char *name = engine_column_text(stmt, 1);
    const char *type = engine_column_text(stmt, 2);
    const char *dflt = engine_column_text(stmt, 4);
    char number[48];
    int rc;

    rc = common_buf_append(out, name ? name : "", name ? strlen(name) : 0);
    rc = rc == 0 ? common_buf_append_byte(out, '|') : rc;
    for (; rc == 0 && type != NULL && *type != '\0'; type++) {
        rc =
            common_buf_append_byte(out, (uint8_t)toupper((unsigned char)*type));
    }
    snprintf(number, sizeof(number), "|%" PRId64 "|",
             engine_column_int64(stmt, 3));
    rc = rc == 0 ? common_buf_append(out, number, strlen(number)) : rc;
    rc = rc == 0
             ? common_buf_append(out, dflt ? dflt : "", dflt ? strlen(dflt) : 0)
             : rc;
    snprintf(number, sizeof(number), "|%" PRId64, engine_column_int64(stmt, 5));
    rc = rc == 0 ? common_buf_append(out, number, strlen(number)) : rc;
    return rc == 0 ? common_buf_append_byte(out, '\0') : rc;
}

/* The table's columns, each as append_column() writes it, into out. */
static int shape_of(struct engine_db *db, const char *table,
                    struct common_buf *out, size_t *count)
{
    char sql[DDL_NAME_MAX + 32];
    struct engine_stmt *stmt = NULL;
    int rc;

    *count = 0;
    if (strchr(table, '"') != NULL) {
        return 0; /* never a replicated table's name (crdt_table.c) */
    }
    snprintf(sql, sizeof(sql), "PRAGMA table_info(\"%s\")", table);
    rc = engine_prepare(db, sql, -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = append_column(stmt, out);
        (*count)++;
    }
    engine_finalize(stmt);
    return rc == ENGINE_DONE ? 0 : rc;
}

/* Whether every column text of a (count of them) is one of b's. */
static bool columns_within(const struct common_buf *a, size_t count,
                           const struct common_buf *b)
{
    size_t at = 0, i;

    for (i = 0; i < count; i++) {
        const char *col = (const char *)a->data + at;
        size_t bt = 0;
        bool found = false;

        while (!found && bt < b->size) {
            found = strcmp(col, (const char *)b->data + bt) == 0;
            bt += strlen((const char *)b->data + bt) + 1;
        }
        if (!found) {
            return false;
        }
        at += strlen(col) + 1;
    }
    return true;
}

/* Whether d's CREATE TABLE (sql) makes a table shaped like the one this
 * database has under its name: the statement runs under a scratch name. */
static int same_shape(struct engine_db *db, const char *sql,
                      const struct ddl *d, bool *same)
{
    struct common_buf scratch, here, there;
    size_t here_count = 0, there_count = 0;
    int rc;

    *same = false;
    common_buf_init(&scratch, SIZE_MAX);
    common_buf_init(&here, SIZE_MAX);
    common_buf_init(&there, SIZE_MAX);
    rc = common_buf_append(&scratch, sql, d->name_at);
    rc = rc == 0 ? common_buf_append(&scratch, DDL_SCRATCH, strlen(DDL_SCRATCH))
                 : rc;
    rc = rc == 0
             ? common_buf_append(&scratch, sql + d->name_at + d->name_size,
                                 strlen(sql + d->name_at + d->name_size) + 1)
             : rc;
    if (rc == 0 &&
        engine_exec_system(db, (const char *)scratch.data, NULL, NULL) == 0) {
        rc = shape_of(db, d->name, &here, &here_count);
        rc = rc == 0 ? shape_of(db, DDL_SCRATCH, &there, &there_count) : rc;
        *same = rc == 0 && here_count == there_count &&
                columns_within(&here, here_count, &there);
        rc = rc == 0
                 ? engine_exec_system(db, "DROP TABLE " DDL_SCRATCH, NULL, NULL)
                 : rc;
    }
    common_buf_close(&scratch);
    common_buf_close(&here);
    common_buf_close(&there);
    return rc;
}

static void log_outcome(struct replication__crdt *crdt,
                        const struct replication__changeset *cs, int level,
                        const char *what, const char *name)
{
    const uint8_t *o = cs->origin;

    LOGF(&crdt->log, level,
         "schema change %s name=%s origin=%02x%02x%02x%02x version=%" PRIu64,
         what, name, o[0], o[1], o[2], o[3], cs->version);
}

/* The rules for a statement whose object's presence decides (file
 * comment): *skip when it is a no-op here. */
static int precheck(struct replication__crdt *crdt,
                    const struct replication__changeset *cs, const char *sql,
                    const struct ddl *d, bool *skip)
{
    bool table = d->kind == DDL_CREATE_TABLE || d->kind == DDL_DROP_TABLE;
    bool exists = false, same = false;
    int rc;

    *skip = false;
    if (d->kind == DDL_OTHER) {
        return 0;
    }
    rc = object_exists(crdt->db, table ? "table" : "index", d->name, &exists);
    if (rc != 0) {
        return rc;
    }
    if (d->kind == DDL_DROP_TABLE || d->kind == DDL_DROP_INDEX) {
        *skip = !exists;
        if (*skip) {
            log_outcome(crdt, cs, COMMON_LOG_WARN,
                        "skipped: nothing here to drop", d->name);
        }
        return 0;
    }
    if (!exists) {
        return 0;
    }
    *skip = true;
    if (d->kind == DDL_CREATE_INDEX) {
        log_outcome(crdt, cs, COMMON_LOG_DEBUG, "skipped: index exists",
                    d->name);
        return 0;
    }
    rc = same_shape(crdt->db, sql, d, &same);
    if (rc == 0 && same) {
        log_outcome(crdt, cs, COMMON_LOG_DEBUG,
                    "skipped: table exists with the same shape", d->name);
    } else if (rc == 0) {
        log_outcome(crdt, cs, COMMON_LOG_ERROR,
                    "refused: table exists here with another shape (its"
                    " rows merge by column name; columns missing here are"
                    " kept)",
                    d->name);
    }
    return rc;
}

int replication__crdt_ddl_merge(struct replication__crdt *crdt,
                                const struct replication__changeset *cs,
                                const char *sql,
                                enum replication__ddl_result *out)
{
    struct engine_change change = {.kind = ENGINE_CHANGE_SCHEMA, .sql = sql};
    struct ddl d;
    bool skip;
    int rc;

    ASSERT(crdt != NULL);
    ASSERT(sql != NULL);
    parse(sql, &d);
    rc = precheck(crdt, cs, sql, &d, &skip);
    if (rc != 0 || skip) {
        *out = REPLICATION__DDL_SKIPPED;
        return rc;
    }
    /* A statement of ours left on a row (they are reset when the
     * transaction ends) reads the schema, and the engine, as SQLite,
     * refuses to drop a table or index while one does ("database table
     * is locked"). */
    replication__crdt_stmts_close(crdt);
    rc = engine_apply_change(crdt->db, &change);
    if (rc == ENGINE_ESQL || rc == ENGINE_ECONSTRAINT) {
        log_outcome(crdt, cs, COMMON_LOG_WARN, "kept: it fails here",
                    engine_errmsg(crdt->db));
        *out = REPLICATION__DDL_KEEP;
        return 0;
    }
    if (rc == 0 && d.kind == DDL_DROP_TABLE) {
        rc = replication__crdt_schema_forget(crdt, d.name);
    }
    if (rc == 0) {
        rc = replication__crdt_schema_sync(crdt);
    }
    *out = REPLICATION__DDL_APPLIED;
    return rc;
}
