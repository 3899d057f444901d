/* SPDX-License-Identifier: MIT
 *
 * trigger.c: the triggers of the catalog: CREATE TRIGGER and DROP TRIGGER
 * with SQLite's checks and messages (sqlite3BeginTrigger,
 * sqlite3FinishTrigger, sqlite3DropTrigger), and the triggers a DROP TABLE
 * takes with it (sqlite3DropTriggerPtr for each). A trigger keeps only its
 * text, as sqlite_schema shows it ("CREATE TRIGGER " and the statement from
 * the trigger's name to END); the statements that may fire it parse it
 * again (trigger_plan.c). Nothing of the body is checked here: a step on a
 * missing table fails when a statement that fires it is prepared, as in
 * SQLite.
 *
 * Triggers have a name space of their own, and go through the undo log
 * (ROLLBACK undoes a CREATE TRIGGER), the redo log and the main file's
 * catalog like tables, indexes and views. A TEMP trigger (SQLite's temp
 * schema) is the handle's own, like a TEMP view: a name space apart,
 * neither logged nor written, kept when the catalog is loaded again.
 */
#include <string.h>
#include <strings.h>

#include "trigger.h"

void engine__trigger_destroy(struct engine_trigger *trigger)
{
    if (trigger != NULL) {
        common_free(trigger->name);
        common_free(trigger->table);
        common_free(trigger->sql);
        common_free(trigger);
    }
}

void engine__trigger_clear(struct engine_db *db, bool temporary_too)
{
    size_t kept = 0;

    for (size_t i = 0; i < db->trigger_count; i++) {
        if (db->triggers[i]->temporary && !temporary_too) {
            db->triggers[kept++] = db->triggers[i];
        } else {
            engine__trigger_destroy(db->triggers[i]);
        }
    }
    db->trigger_count = kept;
}

/* The trigger of name in schema ("main", "temp"), or in either, temp
 * first, when schema is NULL (sqlite3DropTrigger's search order). */
static struct engine_trigger *find(const struct engine_db *db, const char *name,
                                   const char *schema)
{
    bool want_temp = schema != NULL && strcasecmp(schema, "temp") == 0;

    for (int pass = 0; pass < 2; pass++) {
        bool temporary = pass == 0;

        if (schema != NULL && temporary != want_temp) {
            continue;
        }
        for (size_t i = 0; i < db->trigger_count; i++) {
            if (db->triggers[i]->temporary == temporary &&
                strcasecmp(db->triggers[i]->name, name) == 0) {
                return db->triggers[i];
            }
        }
    }
    return NULL;
}

static int reserve(struct engine_db *db)
{
    size_t capacity;
    struct engine_trigger **triggers;

    if (db->trigger_count < db->trigger_capacity) {
        return 0;
    }
    capacity = db->trigger_capacity ? db->trigger_capacity * 2 : 8;
    triggers = common_realloc_array(db->triggers, capacity, sizeof(*triggers));
    if (triggers == NULL) {
        return COMMON_ENOMEM;
    }
    db->triggers = triggers;
    db->trigger_capacity = capacity;
    return 0;
}

/* Puts trigger back in creation order; the array never shrinks, so an
 * undone DROP TRIGGER finds room. */
void engine__trigger_restore(struct engine_db *db,
                             struct engine_trigger *trigger)
{
    size_t at = db->trigger_count;

    ASSERT(db->trigger_count < db->trigger_capacity);
    while (at > 0 && db->triggers[at - 1]->sequence > trigger->sequence) {
        db->triggers[at] = db->triggers[at - 1];
        at--;
    }
    db->triggers[at] = trigger;
    db->trigger_count++;
    db->schema_version++;
}

void engine__trigger_remove(struct engine_db *db,
                            struct engine_trigger *trigger)
{
    for (size_t i = 0; i < db->trigger_count; i++) {
        if (db->triggers[i] == trigger) {
            memmove(&db->triggers[i], &db->triggers[i + 1],
                    (db->trigger_count - i - 1) * sizeof(*db->triggers));
            db->trigger_count--;
            db->schema_version++;
            return;
        }
    }
}

static char *copy_text(const char *text, size_t size)
{
    char *copy = common_malloc(size + 1);

    if (copy != NULL) {
        memcpy(copy, text, size);
        copy[size] = '\0';
    }
    return copy;
}

/* sqlite_schema's text: "CREATE TRIGGER " and the statement from the
 * (unqualified) name to END. */
static char *schema_text(const char *sql, const struct ast_create_trigger *def)
{
    static const char prefix[] = "CREATE TRIGGER ";
    size_t size = def->text_end - def->name_offset;
    char *text = common_malloc(sizeof(prefix) + size);

    if (text != NULL) {
        memcpy(text, prefix, sizeof(prefix) - 1);
        memcpy(text + sizeof(prefix) - 1, sql + def->name_offset, size);
        text[sizeof(prefix) - 1 + size] = '\0';
    }
    return text;
}

static bool is_schema_table(const char *name)
{
    return strcasecmp(name, "sqlite_schema") == 0 ||
           strcasecmp(name, "sqlite_master") == 0 ||
           strcasecmp(name, "sqlite_temp_schema") == 0 ||
           strcasecmp(name, "sqlite_temp_master") == 0;
}

/* Where the trigger goes and what its table is (sqlite3BeginTrigger): TEMP
 * or a "temp." name makes it TEMP, as does an unqualified name on a TEMP
 * view; a main trigger sees only main's tables and views, a TEMP one any
 * the ON clause's schema allows. *found: the table or view exists there. */
static int locate(struct engine_db *db, const struct ast_create_trigger *def,
                  bool *temporary, const struct engine_view **view, bool *found)
{
    const char *on = def->table_schema;
    const struct engine_view *v = engine__view_find(db, def->table);
    bool main_only, temp_only;

    *temporary = false;
    *view = NULL;
    *found = false;
    if (def->temporary && def->schema != NULL) {
        return engine__db_error(db, ENGINE_ESQL,
                                "temporary trigger may not have qualified "
                                "name");
    }
    *temporary = def->temporary ||
                 (def->schema != NULL && strcasecmp(def->schema, "temp") == 0);
    main_only = (on != NULL && strcasecmp(on, "main") == 0) ||
                (on == NULL && def->schema != NULL && !*temporary);
    temp_only = on != NULL && strcasecmp(on, "temp") == 0;
    if (v != NULL &&
        ((v->temporary && main_only) || (!v->temporary && temp_only))) {
        v = NULL;
    }
    *view = v;
    *found = v != NULL ||
             (!temp_only && (engine__catalog_find(db, def->table) != NULL ||
                             is_schema_table(def->table)));
    if (v != NULL && v->temporary && def->schema == NULL) {
        *temporary = true;
    }
    return 0;
}

/* sqlite3BeginTrigger's checks, in its order. *exists: IF NOT EXISTS met
 * a trigger of the name. */
static int check(struct engine_db *db, const struct ast_create_trigger *def,
                 bool *temporary, bool *exists)
{
    const char *timing = def->timing == AST_TRIGGER_BEFORE ? "BEFORE" : "AFTER";
    const struct engine_view *view;
    bool found;
    int rc = locate(db, def, temporary, &view, &found);

    *exists = false;
    if (rc != 0) {
        return rc;
    }
    if (!found) {
        /* A main trigger's names are bound to main (sqlite3FixSrcList); a
         * TEMP one's are left as written. */
        return *temporary
                   ? engine__db_error(db, ENGINE_ESQL, "no such table: %s%s%s",
                                      def->table_schema ? def->table_schema
                                                        : "",
                                      def->table_schema ? "." : "", def->table)
                   : engine__db_error(db, ENGINE_ESQL, "no such table: main.%s",
                                      def->table);
    }
    if (strncasecmp(def->name, "sqlite_", 7) == 0) {
        return engine__db_error(db, ENGINE_ESQL,
                                "object name reserved for internal use: %s",
                                def->name);
    }
    if (find(db, def->name, *temporary ? "temp" : "main") != NULL) {
        *exists = def->if_not_exists;
        return *exists
                   ? 0
                   : engine__db_error(db, ENGINE_ESQL,
                                      "trigger %s already exists", def->name);
    }
    if (strncasecmp(def->table, "sqlite_", 7) == 0 ||
        (engine__system_is_name(def->table) && !db->change_capture.system)) {
        return engine__db_error(db, ENGINE_ESQL,
                                "cannot create trigger on system table");
    }
    if (view != NULL && def->timing != AST_TRIGGER_INSTEAD_OF) {
        return engine__db_error(db, ENGINE_ESQL,
                                "cannot create %s trigger on view: %s", timing,
                                def->table);
    }
    if (view == NULL && def->timing == AST_TRIGGER_INSTEAD_OF) {
        return engine__db_error(db, ENGINE_ESQL,
                                "cannot create INSTEAD OF trigger on table: %s",
                                def->table);
    }
    return 0;
}

static int oom(struct engine_db *db)
{
    return engine__db_error(db, COMMON_ENOMEM, "out of memory");
}

int engine__trigger_create(struct engine_stmt *stmt)
{
    const struct ast_create_trigger *def = stmt->ast->u.create_trigger;
    struct engine_db *db = stmt->db;
    struct engine_trigger *trigger;
    bool temporary, exists;
    int rc = check(db, def, &temporary, &exists);

    if (rc != 0 || exists) {
        return rc;
    }
    trigger = common_calloc(1, sizeof(*trigger));
    if (trigger == NULL || reserve(db) != 0) {
        common_free(trigger);
        return oom(db);
    }
    trigger->name = copy_text(def->name, strlen(def->name));
    trigger->table = copy_text(def->table, strlen(def->table));
    trigger->sql = schema_text(stmt->sql, def);
    trigger->timing = def->timing;
    trigger->event = def->event;
    trigger->temporary = temporary;
    if (trigger->name == NULL || trigger->table == NULL ||
        trigger->sql == NULL ||
        engine__undo_record(db, ENGINE_UNDO_CREATE_TRIGGER, NULL, 0) != 0) {
        engine__trigger_destroy(trigger);
        return oom(db);
    }
    trigger->sequence = ++db->object_sequence;
    db->undo[db->undo_count - 1].trigger = trigger;
    engine__trigger_restore(db, trigger);
    /* From here the undo record owns the trigger. A TEMP trigger is this
     * handle's alone: not logged, not in the main file, not captured. */
    return temporary || engine__redo_schema(db, stmt->sql) == 0 ? 0 : oom(db);
}

/* Takes trigger out, its undo record keeping it until COMMIT. */
static int drop_one(struct engine_db *db, struct engine_trigger *trigger)
{
    if (engine__undo_record(db, ENGINE_UNDO_DROP_TRIGGER, NULL, 0) != 0) {
        return oom(db);
    }
    db->undo[db->undo_count - 1].trigger = trigger;
    engine__trigger_remove(db, trigger);
    return 0;
}

int engine__trigger_drop(struct engine_stmt *stmt)
{
    const struct ast_drop *drop = &stmt->ast->u.drop;
    struct engine_db *db = stmt->db;
    struct engine_trigger *trigger = find(db, drop->name, drop->schema);
    int rc;

    if (trigger == NULL) {
        return drop->if_exists
                   ? 0
                   : engine__db_error(db, ENGINE_ESQL,
                                      "no such trigger: %s%s%s",
                                      drop->schema ? drop->schema : "",
                                      drop->schema ? "." : "", drop->name);
    }
    rc = drop_one(db, trigger);
    if (rc == 0 && !trigger->temporary &&
        engine__redo_schema(db, stmt->sql) != 0) {
        rc = oom(db);
    }
    return rc;
}

int engine__trigger_drop_for_table(struct engine_db *db, const char *table)
{
    size_t i = db->trigger_count;

    while (i-- > 0) {
        if (strcasecmp(db->triggers[i]->table, table) == 0) {
            int rc = drop_one(db, db->triggers[i]);

            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}
