/* SPDX-License-Identifier: MIT
 *
 * view.c: views. A view is a schema object holding only its CREATE VIEW
 * text, as SQLite keeps it: sqlite3CreateView() stores the statement from
 * the view's name on ("CREATE VIEW v AS SELECT ...") and checks nothing of
 * the SELECT, which is resolved each time a query names the view
 * (sqlite3ViewGetColumnNames, selectExpander). So a view on a missing table
 * is made, and fails when used.
 *
 * A query that names a view reads it as a FROM subquery of the view's
 * SELECT, parsed again from the text into the statement's plan arena and
 * called by the view's name; a column list names its columns. A view met
 * again while its own SELECT is being planned is "circularly defined".
 *
 * Views share the catalog's name space with tables and indexes and go
 * through the undo log (ROLLBACK undoes a CREATE VIEW), the redo log and
 * the main file's catalog like them. A TEMP view is the handle's own, as
 * SQLite's temp schema is the connection's: it is neither logged nor
 * written, sqlite_schema does not list it, and it lasts until the handle
 * closes (a reload of the catalog keeps it).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cte.h"
#include "engine_int.h"
#include "plan.h"

static struct engine_view *find_in(const struct engine_db *db, const char *name,
                                   bool temporary)
{
    for (size_t i = 0; i < db->view_count; i++) {
        if (db->views[i]->temporary == temporary &&
            strcasecmp(db->views[i]->name, name) == 0) {
            return db->views[i];
        }
    }
    return NULL;
}

struct engine_view *engine__view_find_main(const struct engine_db *db,
                                           const char *name)
{
    return find_in(db, name, false);
}

/* A bare name looks in the temp schema first (sqlite3LocateTable): a TEMP
 * view hides a main one of its name. */
struct engine_view *engine__view_find(const struct engine_db *db,
                                      const char *name)
{
    struct engine_view *view = find_in(db, name, true);

    return view != NULL ? view : find_in(db, name, false);
}

void engine__view_destroy(struct engine_view *view)
{
    if (view != NULL) {
        common_free(view->name);
        common_free(view->sql);
        common_free(view);
    }
}

void engine__view_clear(struct engine_db *db, bool temporary_too)
{
    size_t kept = 0;

    for (size_t i = 0; i < db->view_count; i++) {
        if (db->views[i]->temporary && !temporary_too) {
            db->views[kept++] = db->views[i];
        } else {
            engine__view_destroy(db->views[i]);
        }
    }
    db->view_count = kept;
}

static int reserve(struct engine_db *db)
{
    size_t capacity;
    struct engine_view **views;

    if (db->view_count < db->view_capacity) {
        return 0;
    }
    capacity = db->view_capacity ? db->view_capacity * 2 : 8;
    views = common_realloc_array(db->views, capacity, sizeof(*views));
    if (views == NULL) {
        return COMMON_ENOMEM;
    }
    db->views = views;
    db->view_capacity = capacity;
    return 0;
}

/* Puts view back in creation order: the array never shrinks, so there is
 * room (an undone DROP VIEW cannot fail). */
void engine__view_restore(struct engine_db *db, struct engine_view *view)
{
    size_t at = db->view_count;

    ASSERT(db->view_count < db->view_capacity);
    while (at > 0 && db->views[at - 1]->sequence > view->sequence) {
        db->views[at] = db->views[at - 1];
        at--;
    }
    db->views[at] = view;
    db->view_count++;
    db->schema_version++;
}

void engine__view_remove(struct engine_db *db, struct engine_view *view)
{
    for (size_t i = 0; i < db->view_count; i++) {
        if (db->views[i] == view) {
            memmove(&db->views[i], &db->views[i + 1],
                    (db->view_count - i - 1) * sizeof(*db->views));
            db->view_count--;
            db->schema_version++;
            return;
        }
    }
}

/* sqlite_schema's text: "CREATE VIEW " and the statement from the name
 * on, without a ';' that ends it or the space before (sqlite3CreateView). */
static char *schema_text(const char *sql, size_t name_offset)
{
    static const char prefix[] = "CREATE VIEW ";
    size_t size = strlen(sql);
    char *text;

    if (size > name_offset && sql[size - 1] == ';') {
        size--;
    }
    while (size > name_offset && strchr(" \t\n\f\r", sql[size - 1]) != NULL) {
        size--;
    }
    text = common_malloc(sizeof(prefix) + size - name_offset);
    if (text != NULL) {
        memcpy(text, prefix, sizeof(prefix) - 1);
        memcpy(text + sizeof(prefix) - 1, sql + name_offset,
               size - name_offset);
        text[sizeof(prefix) - 1 + size - name_offset] = '\0';
    }
    return text;
}

/* SQLite's sqlite3StartTable() checks, in its order: a reserved name, an
 * existing table or view, an existing index; each in the new view's own
 * schema (tables and indexes are all main). */
static int check_name(struct engine_db *db, const struct ast_create_view *def,
                      bool *exists)
{
    const char *name = def->name;
    struct engine_table *table =
        def->temporary ? NULL : engine__catalog_find(db, name);
    bool system = engine__system_is_name(name) && !db->change_capture.system;

    *exists = false;
    if (strncasecmp(name, "sqlite_", 7) == 0 || system) {
        return engine__db_error(
            db, ENGINE_ESQL, "object name reserved for internal use: %s", name);
    }
    if (table != NULL || find_in(db, name, def->temporary) != NULL) {
        *exists = def->if_not_exists;
        return *exists
                   ? 0
                   : engine__db_error(db, ENGINE_ESQL, "%s %s already exists",
                                      table != NULL ? "table" : "view", name);
    }
    for (size_t t = 0; !def->temporary && t < db->table_count; t++) {
        for (size_t i = 0; i < db->tables[t]->index_count; i++) {
            if (strcasecmp(db->tables[t]->indexes[i].name, name) == 0) {
                return engine__db_error(db, ENGINE_ESQL,
                                        "there is already an index named %s",
                                        name);
            }
        }
    }
    return engine__view_shadow_check(db, name, def->temporary);
}

/* SQLite lets a TEMP view take the name of a main table or view, and a
 * bare name then finds the TEMP one; sinew's name lookups are not all
 * schema-aware (a replicated DROP VIEW would find the TEMP view), so the
 * pair is refused. */
int engine__view_shadow_check(struct engine_db *db, const char *name,
                              bool temporary)
{
    bool clash = temporary ? engine__catalog_find(db, name) != NULL ||
                                 find_in(db, name, false) != NULL
                           : find_in(db, name, true) != NULL;

    return clash ? engine__db_error(db, ENGINE_ESQL,
                                    "a TEMP view and a main table or view "
                                    "both named %s are not supported yet",
                                    name)
                 : 0;
}

static int oom(struct engine_db *db)
{
    return engine__db_error(db, COMMON_ENOMEM, "out of memory");
}

int engine__view_create(struct engine_stmt *stmt)
{
    const struct ast_create_view *def = &stmt->ast->u.create_view;
    struct engine_db *db = stmt->db;
    struct engine_view *view;
    bool exists;
    int rc = check_name(db, def, &exists);

    if (rc != 0 || exists) {
        return rc;
    }
    view = common_calloc(1, sizeof(*view));
    if (view == NULL || reserve(db) != 0) {
        common_free(view);
        return oom(db);
    }
    view->name = common_malloc(strlen(def->name) + 1);
    view->sql = schema_text(stmt->sql, def->name_offset);
    view->temporary = def->temporary;
    if (view->name == NULL || view->sql == NULL ||
        engine__undo_record(db, ENGINE_UNDO_CREATE_VIEW, NULL, 0) != 0) {
        engine__view_destroy(view);
        return oom(db);
    }
    strcpy(view->name, def->name);
    view->sequence = ++db->object_sequence;
    db->undo[db->undo_count - 1].view = view;
    engine__view_restore(db, view);
    /* From here the undo record owns the view. A TEMP view is this
     * handle's alone: not logged, not in the main file, not captured. */
    return view->temporary || engine__redo_schema(db, stmt->sql) == 0 ? 0
                                                                      : oom(db);
}

int engine__view_drop(struct engine_stmt *stmt)
{
    const struct ast_drop *drop = &stmt->ast->u.drop;
    struct engine_db *db = stmt->db;
    bool known_schema = drop->schema == NULL ||
                        strcasecmp(drop->schema, "main") == 0 ||
                        strcasecmp(drop->schema, "temp") == 0;
    struct engine_view *view =
        known_schema ? engine__view_find(db, drop->name) : NULL;

    if (view == NULL && known_schema &&
        engine__catalog_find(db, drop->name) != NULL) {
        return engine__db_error(
            db, ENGINE_ESQL, "use DROP TABLE to delete table %s", drop->name);
    }
    if (view == NULL) {
        return drop->if_exists
                   ? 0
                   : engine__db_error(db, ENGINE_ESQL, "no such view: %s%s%s",
                                      drop->schema ? drop->schema : "",
                                      drop->schema ? "." : "", drop->name);
    }
    /* Its INSTEAD OF triggers go first, as a table's do
     * (sqlite3CodeDropTable). */
    if (engine__trigger_drop_for_table(db, view->name) != 0) {
        return db->errcode;
    }
    if (engine__undo_record(db, ENGINE_UNDO_DROP_VIEW, NULL, 0) != 0) {
        return oom(db);
    }
    db->undo[db->undo_count - 1].view = view;
    engine__view_remove(db, view);
    return view->temporary || engine__redo_schema(db, stmt->sql) == 0 ? 0
                                                                      : oom(db);
}

/* ---- planning ---- */

bool engine__view_inside(const struct engine_db *db)
{
    for (size_t i = 0; i < db->view_count; i++) {
        if (db->views[i]->expanding > 0 && !db->views[i]->temporary) {
            return true;
        }
    }
    return false;
}

/* The most views one query may read through one another: each level
 * plans its body recursively, and a chain of thousands would exhaust the
 * stack (SQLite has no limit and fails near 20,000); as deep as the
 * parser lets one expression nest. */
#define ENGINE__VIEW_DEPTH_MAX 1000

/* How many views are being planned now, one inside another. */
static int views_expanding(const struct engine_db *db)
{
    int depth = 0;

    for (size_t i = 0; i < db->view_count; i++) {
        depth += db->views[i]->expanding > 0;
    }
    return depth;
}

int engine__view_use(struct engine_stmt *stmt, const struct ast_from_item *item,
                     struct engine_view_use *use)
{
    struct engine_db *db = stmt->db;
    char errmsg[ENGINE__ERRMSG_SIZE];
    struct ast_stmt *ast = NULL;
    size_t tail, error_offset;
    int rc;

    memset(use, 0, sizeof(*use));
    use->view = item->table != NULL ? engine__view_find(db, item->table) : NULL;
    /* A main view or trigger reads only main objects (sqlite3FixSrcList
     * qualifies its names "main."): a TEMP view is not there for it. */
    if (use->view != NULL && use->view->temporary &&
        (engine__view_inside(db) || db->trigger_main)) {
        use->view = engine__view_find_main(db, item->table);
    }
    if (use->view == NULL) {
        return 0;
    }
    if (use->view->expanding > 0) {
        return engine__db_error(
            db, ENGINE_ESQL, "view %s is circularly defined", use->view->name);
    }
    if (views_expanding(db) >= ENGINE__VIEW_DEPTH_MAX) {
        return engine__db_error(db, ENGINE_ESQL,
                                "views nested too deeply (maximum depth %d)",
                                ENGINE__VIEW_DEPTH_MAX);
    }
    rc =
        engine__parse(&stmt->plan_arena, use->view->sql, strlen(use->view->sql),
                      &ast, &tail, errmsg, sizeof(errmsg), &error_offset);
    if (rc == 0 && (ast == NULL || ast->kind != AST_STMT_CREATE_VIEW)) {
        rc = ENGINE_ECORRUPT;
        snprintf(errmsg, sizeof(errmsg), "malformed view %s", use->view->name);
    }
    if (rc != 0) {
        return rc == COMMON_ENOMEM ? oom(db)
                                   : engine__db_error(db, rc, "%s", errmsg);
    }
    /* The body's own WITH clauses (plan_cte_bind.c). */
    rc = engine__plan_cte_bind_select(stmt, ast->u.create_view.select);
    if (rc != 0) {
        return rc;
    }
    use->item = *item;
    use->item.table = NULL;
    use->item.select = ast->u.create_view.select;
    use->item.alias = item->alias != NULL ? item->alias : use->view->name;
    use->columns = ast->u.create_view.columns;
    use->column_count = ast->u.create_view.column_count;
    return 0;
}

int engine__view_name_columns(struct engine_stmt *stmt,
                              const struct engine_view_use *use,
                              struct engine_scope *scope)
{
    char **names;
    int rc;

    if (use->column_count == 0) {
        return 0;
    }
    if (use->column_count != scope->column_count) {
        return engine__db_error(
            stmt->db, ENGINE_ESQL, "expected %zu columns for '%s' but got %zu",
            use->column_count, use->view->name, scope->column_count);
    }
    names = engine__plan_alloc(stmt, use->column_count * sizeof(*names));
    if (names == NULL) {
        return COMMON_ENOMEM;
    }
    memcpy(names, use->columns, use->column_count * sizeof(*names));
    rc = engine__plan_unique_names(stmt, names, use->column_count);
    for (size_t i = 0; rc == 0 && i < use->column_count; i++) {
        scope->columns[i].name = names[i];
    }
    return rc;
}

/* ---- replication ---- */

int engine__view_apply_is_noop(struct engine_db *db, const char *sql,
                               bool *noop)
{
    struct engine_arena arena;
    struct ast_stmt *ast = NULL;
    char errmsg[ENGINE__ERRMSG_SIZE];
    size_t tail, error_offset;
    int rc;

    *noop = false;
    engine__arena_init(&arena);
    rc = engine__parse(&arena, sql, strlen(sql), &ast, &tail, errmsg,
                       sizeof(errmsg), &error_offset);
    if (rc == 0 && ast != NULL && ast->kind == AST_STMT_CREATE_VIEW) {
        /* Replicated views are main ones: a TEMP view of the same name
         * and text is another object. */
        const struct engine_view *view =
            engine__view_find_main(db, ast->u.create_view.name);
        char *text = view != NULL
                         ? schema_text(sql, ast->u.create_view.name_offset)
                         : NULL;

        rc = view != NULL && text == NULL ? COMMON_ENOMEM : 0;
        *noop = text != NULL && strcmp(text, view->sql) == 0;
        common_free(text);
    } else if (rc == 0 && ast != NULL && ast->kind == AST_STMT_DROP_VIEW) {
        *noop = engine__view_find_main(db, ast->u.drop.name) == NULL &&
                engine__catalog_find(db, ast->u.drop.name) == NULL;
    }
    engine__arena_close(&arena);
    return rc == COMMON_ENOMEM ? rc : 0;
}
