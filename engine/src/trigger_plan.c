/* SPDX-License-Identifier: MIT
 *
 * trigger_plan.c: the trigger programs an INSERT, UPDATE or DELETE may
 * run, planned when it is (SQLite codes them into the statement,
 * sqlite3CodeRowTrigger, so a step on a missing table fails the prepare
 * of every statement that may fire it, even one that changes no row).
 *
 * A program is the trigger's text parsed again into the top-level
 * statement's plan arena, its WHEN planned as "SELECT when" and each step
 * as a statement of its own (a nested statement: never in the handle's
 * list, run by trigger_exec.c, freed with the top-level plan, its plan
 * arena counted against that plan's budget). NEW.x and OLD.x compile to
 * parameters with the column's collation, as SQLite's TK_TRIGGER references
 * have (an INTEGER PRIMARY KEY reads the rowid). A program is planned once
 * per top-level statement for each (trigger, table, conflict mode), the
 * key of SQLite's getRowTrigger, and shared by every statement in it that
 * fires the trigger: planned at each site, a chain of triggers each firing
 * the next from two steps took 2^n plans.
 *
 * Which triggers: those on the table for the statement's event, TEMP ones
 * on a main table first, then the table's own newest first, an UPDATE OF
 * trigger only when the UPDATE sets one of its columns
 * (checkColumnOverlap). A trigger whose own program is running does not
 * fire (recursive_triggers off): trigger_exec.c leaves it out then, so
 * the program is the same wherever it fires. An upsert's DO UPDATE has
 * programs of its own: the UPDATE triggers its SET list fires.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "trigger.h"

/* A node the statement frees (expr_compile.c's new_expr). */
static struct engine_expr *node(struct engine_compile *ctx,
                                enum engine_expr_op op)
{
    struct engine_expr *e = engine__plan_alloc(ctx->stmt, sizeof(*e));

    if (e == NULL) {
        return NULL;
    }
    e->op = op;
    e->affinity = ENGINE_AFFINITY_BLOB;
    e->collation = ENGINE_COLLATION_BINARY;
    if (engine__vector_init(&e->result, ENGINE_VECTOR_VALUES) != 0 ||
        engine__stmt_own_expr(ctx->stmt, e) != 0) {
        engine__vector_close(&e->result);
        engine__db_error(ctx->stmt->db, COMMON_ENOMEM, "out of memory");
        return NULL;
    }
    return e;
}

int engine__trigger_compile_ref(struct engine_compile *ctx,
                                const struct ast_expr *ast,
                                struct engine_expr **out)
{
    const struct engine_trigger_scope *scope = ctx->stmt->trigger;
    const char *which = ast->u.column.table;
    const struct engine_table *table;
    bool is_new;
    ptrdiff_t column;
    struct engine_expr *e;

    if (scope == NULL || which == NULL) {
        return 1;
    }
    is_new = strcasecmp(which, "new") == 0;
    if ((!is_new && strcasecmp(which, "old") != 0) ||
        (is_new && scope->event == AST_TRIGGER_DELETE) ||
        (!is_new && scope->event == AST_TRIGGER_INSERT)) {
        return 1;
    }
    table = scope->table;
    column = engine__table_column_index(table, ast->u.column.name);
    if (column < 0 && !engine__table_is_rowid_name(ast->u.column.name)) {
        return 1;
    }
    if (column == table->rowid_alias) {
        column = -1;
    }
    if (is_new && column >= 0 && scope->new_used != NULL) {
        scope->new_used[column] = true;
    }
    e = node(ctx, ENGINE_EXPR_PARAMETER);
    if (e == NULL) {
        return COMMON_ENOMEM;
    }
    /* A TK_TRIGGER reference has its column's collation
     * (sqlite3ExprCollSeq) but no affinity (sqlite3ExprAffinity knows
     * only TK_COLUMN): "new.a = '5'" compares an INTEGER with TEXT. The
     * rowid is the exception: lookupName gives it INTEGER affinity. */
    if (column < 0) {
        column = (ptrdiff_t)table->column_count;
        e->affinity = ENGINE_AFFINITY_INTEGER;
        e->has_affinity = true;
    } else {
        e->collation = table->columns[column].collation;
        e->has_collation = true;
    }
    e->u.parameter = is_new ? ENGINE__TRIGGER_NEW(table, column)
                            : ENGINE__TRIGGER_OLD(table, column);
    *out = e;
    return 0;
}

int engine__trigger_compile_raise(struct engine_compile *ctx,
                                  const struct ast_expr *ast,
                                  struct engine_expr **out)
{
    const char *message = ast->u.raise.message;
    struct engine_expr *e, *text;

    if (ctx->stmt->trigger == NULL) {
        return engine__db_error(ctx->stmt->db, ENGINE_ESQL,
                                "RAISE() may only be used within a "
                                "trigger-program");
    }
    /* The message is the node's one operand, a constant. */
    e = node(ctx, ENGINE_EXPR_RAISE);
    text = e != NULL ? node(ctx, ENGINE_EXPR_CONSTANT) : NULL;
    if (text != NULL) {
        e->args = engine__plan_alloc(ctx->stmt, sizeof(*e->args));
    }
    if (text == NULL || e->args == NULL) {
        return COMMON_ENOMEM;
    }
    text->u.constant = message != NULL
                           ? engine__value_text(message, strlen(message))
                           : engine__value_null();
    e->args[0] = text;
    e->arg_count = 1;
    e->u.raise = ast->u.raise.action;
    *out = e;
    return 0;
}

/* ---- programs ---- */

static void finalize(struct engine_stmt *nested)
{
    if (nested == NULL) {
        return;
    }
    /* The parameters view the firing row: not the statement's to free. */
    for (int i = 0; nested->parameters != NULL && i <= nested->parameter_count;
         i++) {
        nested->parameters[i] = engine__value_null();
    }
    engine_finalize(nested);
}

/* Frees every program's statements with the top-level statement's plan:
 * each is finalized once, however many statements fire it. */
static void cache_destroy(struct engine_op *op)
{
    struct engine_trigger_cache *cache = op->state;

    for (struct engine_trigger_program *program = cache->programs;
         program != NULL; program = program->next) {
        finalize(program->when);
        for (size_t s = 0; s < program->step_count; s++) {
            finalize(program->steps[s]);
        }
    }
    engine__op_destroy_default(op);
}

static const struct engine_op_ops cache_ops = {
    .destroy = cache_destroy,
};

/* The cache of stmt's top-level statement: made with stmt when it is one
 * (stmt->trigger NULL), its programs' scope otherwise. */
static struct engine_trigger_cache *cache_of(struct engine_stmt *stmt)
{
    struct engine_op *holder;
    struct engine_trigger_cache *cache;

    if (stmt->trigger != NULL) {
        return stmt->trigger->cache;
    }
    holder = engine__op_new(stmt, &cache_ops, NULL, sizeof(*cache), 0, false);
    if (holder == NULL) {
        return NULL;
    }
    cache = holder->state;
    cache->root = stmt;
    return cache;
}

/* A nested statement for ast, planned against scope; its plan arena
 * counts against the top-level statement's budget. */
static int nested_plan(struct engine_stmt *root, struct ast_stmt *ast,
                       const struct engine_trigger_scope *scope,
                       struct engine_stmt **out)
{
    struct engine_db *db = root->db;
    struct engine_stmt *stmt = common_calloc(1, sizeof(*stmt));
    int count = 2 * ((int)scope->table->column_count + 1);
    int rc;

    *out = stmt;
    if (stmt == NULL) {
        return COMMON_ENOMEM;
    }
    stmt->db = db;
    engine__arena_init(&stmt->plan_arena);
    engine__arena_share(&stmt->plan_arena, root->plan_arena.budget);
    engine__arena_init(&stmt->result_arena);
    engine__arena_init(&stmt->column_arena);
    stmt->ast = ast;
    stmt->trigger = scope;
    stmt->sql = common_malloc(1);
    stmt->parameters =
        common_calloc((size_t)count + 1, sizeof(*stmt->parameters));
    if (stmt->sql == NULL || stmt->parameters == NULL) {
        return COMMON_ENOMEM;
    }
    stmt->sql[0] = '\0';
    stmt->parameter_count = count;
    for (int i = 0; i <= count; i++) {
        stmt->parameters[i] = engine__value_null();
    }
    stmt->exec.db = db;
    stmt->exec.stmt = stmt;
    stmt->exec.parameters = stmt->parameters;
    stmt->exec.parameter_count = count;
    stmt->schema_version = db->schema_version;
    rc = engine__plan(stmt);
    return rc == 0 ? engine__prologue_plan(stmt) : rc;
}

/* "SELECT when" over no table. */
static struct ast_stmt *when_select(struct engine_stmt *stmt,
                                    struct ast_expr *when)
{
    struct ast_stmt *ast = engine__plan_alloc(stmt, sizeof(*ast));
    struct ast_select *select = engine__plan_alloc(stmt, sizeof(*select));
    struct ast_result_column *column =
        engine__plan_alloc(stmt, sizeof(*column));
    const char **names = engine__plan_alloc(stmt, sizeof(*names));

    if (ast == NULL || select == NULL || column == NULL || names == NULL) {
        return NULL;
    }
    column->kind = AST_RESULT_EXPR;
    column->expr = when;
    column->position = when->position;
    select->columns = column;
    select->column_count = 1;
    select->position = when->position;
    ast->kind = AST_STMT_SELECT;
    ast->position = when->position;
    ast->u.select = select;
    ast->parameter_names = names;
    return ast;
}

/* Parses the trigger's text again, into the statement's plan arena. */
static int parse_trigger(struct engine_stmt *stmt,
                         const struct engine_trigger *trigger,
                         struct ast_create_trigger **out)
{
    char errmsg[ENGINE__ERRMSG_SIZE];
    struct ast_stmt *ast = NULL;
    size_t tail, error_offset;
    int rc =
        engine__parse(&stmt->plan_arena, trigger->sql, strlen(trigger->sql),
                      &ast, &tail, errmsg, sizeof(errmsg), &error_offset);

    if (rc != 0 || ast == NULL || ast->kind != AST_STMT_CREATE_TRIGGER) {
        return rc == COMMON_ENOMEM
                   ? engine__db_error(stmt->db, rc, "out of memory")
                   : engine__db_error(stmt->db, ENGINE_ECORRUPT,
                                      "malformed database schema (%s)",
                                      trigger->name);
    }
    *out = ast->u.create_trigger;
    return 0;
}

/* A step's table is looked up in the trigger's schema (sqlite3FixSrcList):
 * SQLite names it "main.x" when it is missing. */
static int qualify_error(struct engine_db *db)
{
    static const char prefix[] = "no such table: ";
    char message[ENGINE__ERRMSG_SIZE];

    if (strncmp(db->errmsg, prefix, sizeof(prefix) - 1) == 0 &&
        strncmp(db->errmsg + sizeof(prefix) - 1, "main.", 5) != 0) {
        snprintf(message, sizeof(message), "%s",
                 db->errmsg + sizeof(prefix) - 1);
        return engine__db_error(db, ENGINE_ESQL, "%smain.%s", prefix, message);
    }
    return ENGINE_ESQL;
}

/* Plans the trigger's WHEN and steps into the program, its statements
 * nested in the top-level root. */
static int program_plan(struct engine_stmt *root,
                        struct engine_trigger_program *program)
{
    struct engine_trigger *trigger = program->trigger;
    const struct engine_trigger_scope *scope = &program->scope;
    struct ast_create_trigger *def;
    struct ast_stmt *when;
    bool main_only;
    int rc = parse_trigger(root, trigger, &def);

    if (rc != 0) {
        return rc;
    }
    program->steps = engine__plan_alloc(root, (def->step_count + 1) *
                                                  sizeof(*program->steps));
    if (program->steps == NULL) {
        return COMMON_ENOMEM;
    }
    root->db->trigger_depth++;
    main_only = root->db->trigger_main;
    root->db->trigger_main = !trigger->temporary;
    if (def->when != NULL) {
        when = when_select(root, def->when);
        rc = when == NULL ? COMMON_ENOMEM
                          : nested_plan(root, when, scope, &program->when);
    }
    for (size_t s = 0; rc == 0 && s < def->step_count; s++) {
        def->steps[s]->parameter_names =
            engine__plan_alloc(root, sizeof(char *));
        rc = def->steps[s]->parameter_names == NULL
                 ? COMMON_ENOMEM
                 : nested_plan(root, def->steps[s], scope, &program->steps[s]);
        program->step_count = s + 1;
    }
    root->db->trigger_depth--;
    root->db->trigger_main = main_only;
    /* A TEMP trigger's names are left as written. */
    return rc == ENGINE_ESQL && !trigger->temporary ? qualify_error(root->db)
                                                    : rc;
}

/* Whether a program planned for table a serves table b: a table is one
 * object of the catalog; a view (the only thing an INSTEAD OF trigger is
 * on) is given a table of its own by each statement that writes it
 * (dml_view.c), the same by name. */
static bool same_table(const struct engine_trigger *trigger,
                       const struct engine_table *a,
                       const struct engine_table *b)
{
    return a == b || (trigger->timing == AST_TRIGGER_INSTEAD_OF &&
                      a->column_count == b->column_count &&
                      strcasecmp(a->name, b->name) == 0);
}

/* The program of trigger for table and orconf: the cache's, or planned
 * now. SQLite's codeRowTrigger links a new TriggerPrg into the top-level
 * Parse before it codes the steps, so a step that fires the trigger again
 * (itself, or around a cycle of triggers) finds the program being made;
 * OP_Program then keeps it from running inside itself. Whether an UPDATE
 * OF trigger fires is decided by each firing statement (fires()), not
 * kept with the program. */
static int program_get(struct engine_trigger_cache *cache,
                       struct engine_trigger *trigger,
                       const struct engine_table *table,
                       enum ast_conflict orconf,
                       struct engine_trigger_program **out)
{
    struct engine_stmt *root = cache->root;
    size_t columns = table->column_count + 1;
    struct engine_trigger_program *program;

    for (program = cache->programs; program != NULL; program = program->next) {
        if (program->trigger == trigger && program->scope.orconf == orconf &&
            same_table(trigger, program->scope.table, table)) {
            *out = program;
            return 0;
        }
    }
    program = engine__plan_alloc(root, sizeof(*program));
    if (program == NULL) {
        return COMMON_ENOMEM;
    }
    memset(program, 0, sizeof(*program));
    program->scope.new_used = engine__plan_alloc(root, columns * sizeof(bool));
    if (program->scope.new_used == NULL) {
        return COMMON_ENOMEM;
    }
    memset(program->scope.new_used, 0, columns * sizeof(bool));
    program->trigger = trigger;
    program->scope.table = table;
    program->scope.event = trigger->event;
    program->scope.orconf = orconf;
    program->scope.cache = cache;
    program->next = cache->programs;
    cache->programs = program;
    *out = program;
    return program_plan(root, program);
}

/* checkColumnOverlap: an UPDATE OF trigger fires when the UPDATE sets one
 * of its columns (by name as written). */
static bool overlaps(const struct ast_create_trigger *def,
                     const struct ast_assignment *assignments, size_t count)
{
    if (def->column_count == 0) {
        return true;
    }
    for (size_t a = 0; a < count; a++) {
        const struct ast_assignment *set = &assignments[a];

        for (size_t i = 0; i < set->column_count; i++) {
            for (size_t c = 0; c < def->column_count; c++) {
                if (strcasecmp(set->columns[i], def->columns[c]) == 0) {
                    return true;
                }
            }
        }
    }
    return false;
}

static enum ast_trigger_event event_of(enum ast_stmt_kind kind)
{
    return kind == AST_STMT_INSERT   ? AST_TRIGGER_INSERT
           : kind == AST_STMT_UPDATE ? AST_TRIGGER_UPDATE
                                     : AST_TRIGGER_DELETE;
}

/* What a statement (or an upsert's DO UPDATE) fires triggers for. */
struct firing {
    const struct engine_table *table;
    enum ast_trigger_event event;
    const struct ast_assignment *assignments; /* UPDATE's SET list */
    size_t assignment_count;
};

/* Whether trigger may fire for what (UPDATE OF needs its text). One
 * whose program is running when what runs is left out then
 * (trigger_exec.c), as SQLite's OP_Program does, not here: the program
 * planned is the same wherever it fires. */
static int fires(struct engine_stmt *stmt, const struct firing *what,
                 struct engine_trigger *trigger, bool *out)
{
    struct ast_create_trigger *def;
    int rc;

    *out = trigger->event == what->event &&
           strcasecmp(trigger->table, what->table->name) == 0;
    if (!*out || what->event != AST_TRIGGER_UPDATE) {
        return 0;
    }
    rc = parse_trigger(stmt, trigger, &def);
    *out = rc == 0 && overlaps(def, what->assignments, what->assignment_count);
    return rc;
}

static void firing_of(const struct engine_stmt *stmt,
                      const struct engine_dml *dml, struct firing *out)
{
    out->table = dml->table;
    out->event = event_of(dml->kind);
    out->assignments = NULL;
    out->assignment_count = 0;
    if (dml->kind == AST_STMT_UPDATE) {
        out->assignments = stmt->ast->u.update.assignments;
        out->assignment_count = stmt->ast->u.update.assignment_count;
    }
}

int engine__trigger_instead_of(struct engine_stmt *stmt,
                               const struct engine_dml *dml, bool *out)
{
    struct engine_db *db = stmt->db;
    struct firing what;
    int rc = 0;

    firing_of(stmt, dml, &what);
    *out = false;
    /* SQLite sees the trigger whatever runs (sqlite3TriggersExist): one
     * whose own program writes the view makes it writable, and is only
     * kept from firing again (OP_Program's recursion check). */
    for (size_t i = 0; rc == 0 && !*out && i < db->trigger_count; i++) {
        rc = fires(stmt, &what, db->triggers[i], out);
        *out = *out && db->triggers[i]->timing == AST_TRIGGER_INSTEAD_OF;
    }
    return rc;
}

/* A TEMP trigger on a main table (not one on a TEMP view, which is its
 * view's own): sqlite3TriggerList() puts those before the table's. */
static bool is_temp_on_main(const struct engine_db *db,
                            const struct engine_trigger *trigger)
{
    const struct engine_view *view;

    if (!trigger->temporary) {
        return false;
    }
    view = engine__view_find(db, trigger->table);
    return view == NULL || !view->temporary;
}

/* The triggers in SQLite's firing order (sqlite3TriggerList): the TEMP
 * triggers on a main table first, oldest first (each is linked at the
 * head of a list walked newest first), then the table's own, newest first
 * (sqlite3FinishTrigger links a new one at the head). */
static struct engine_trigger **firing_order(struct engine_stmt *stmt)
{
    struct engine_db *db = stmt->db;
    struct engine_trigger **order =
        engine__plan_alloc(stmt, (db->trigger_count + 1) * sizeof(*order));
    size_t n = 0;

    if (order == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < db->trigger_count; i++) {
        if (is_temp_on_main(db, db->triggers[i])) {
            order[n++] = db->triggers[i];
        }
    }
    for (size_t i = db->trigger_count; i-- > 0;) {
        if (!is_temp_on_main(db, db->triggers[i])) {
            order[n++] = db->triggers[i];
        }
    }
    return order;
}

/* Plans the programs of the triggers that fire for what, with the
 * firing statement's conflict mode orconf, into *out (NULL when none). */
static int plan_programs(struct engine_stmt *stmt,
                         struct engine_trigger_cache *cache,
                         const struct firing *what, enum ast_conflict orconf,
                         struct engine_trigger_plan **out)
{
    struct engine_db *db = stmt->db;
    size_t columns = what->table->column_count + 1;
    struct engine_trigger **order = firing_order(stmt);
    struct engine_trigger_plan *plan;
    bool *new_used;
    int rc = 0;

    *out = NULL;
    plan = engine__plan_alloc(stmt, sizeof(*plan));
    new_used = engine__plan_alloc(stmt, columns * sizeof(bool));
    if (order == NULL || cache == NULL || plan == NULL || new_used == NULL) {
        return COMMON_ENOMEM;
    }
    plan->programs =
        engine__plan_alloc(stmt, db->trigger_count * sizeof(*plan->programs));
    if (plan->programs == NULL) {
        return COMMON_ENOMEM;
    }
    plan->count = 0;
    for (size_t i = 0; rc == 0 && i < db->trigger_count; i++) {
        bool fire = false;

        rc = fires(stmt, what, order[i], &fire);
        if (rc == 0 && fire) {
            rc = program_get(cache, order[i], what->table, orconf,
                             &plan->programs[plan->count++]);
        }
    }
    /* The NEW.x any program reads (a program still being planned around
     * this statement cannot run inside it: what it reads is moot here). */
    memset(new_used, 0, columns * sizeof(bool));
    for (size_t p = 0; rc == 0 && p < plan->count; p++) {
        for (size_t c = 0; c < columns; c++) {
            new_used[c] |= plan->programs[p]->scope.new_used[c];
        }
    }
    plan->new_used = new_used;
    if (rc == 0 && plan->count > 0) {
        *out = plan;
    }
    return rc;
}

/* The UPDATE triggers of each upsert's DO UPDATE: those its SET list
 * fires (sqlite3UpsertDoUpdate runs sqlite3Update with it). */
static int plan_upserts(struct engine_stmt *stmt,
                        struct engine_trigger_cache *cache,
                        struct engine_dml *dml, bool *any)
{
    const struct ast_insert *insert = &stmt->ast->u.insert;
    struct firing what = {.table = dml->table, .event = AST_TRIGGER_UPDATE};
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < dml->upsert_count; i++) {
        dml->upserts[i].triggers = NULL;
        if (insert->upserts[i].do_nothing) {
            continue;
        }
        what.assignments = insert->upserts[i].assignments;
        what.assignment_count = insert->upserts[i].assignment_count;
        rc = plan_programs(stmt, cache, &what, dml->conflict,
                           &dml->upserts[i].triggers);
        *any |= dml->upserts[i].triggers != NULL;
    }
    return rc;
}

int engine__trigger_plan(struct engine_stmt *stmt, struct engine_dml *dml)
{
    struct engine_db *db = stmt->db;
    struct engine_trigger_cache *cache;
    struct firing what;
    bool any = false;
    int rc = 0;

    dml->triggers = NULL;
    if (db->trigger_count == 0) {
        return 0;
    }
    if (db->trigger_depth >= ENGINE__TRIGGER_MAX_DEPTH) {
        return engine__db_error(db, ENGINE_ESQL,
                                "too many levels of trigger recursion");
    }
    /* A step's own OR clause gives way to the firing statement's
     * (lang_createtrigger.html; codeTriggerProgram's eOrconf), which the
     * programs this step fires inherit in turn. */
    if (stmt->trigger != NULL &&
        stmt->trigger->orconf != AST_CONFLICT_DEFAULT) {
        dml->conflict = stmt->trigger->orconf;
    }
    cache = cache_of(stmt);
    if (cache == NULL) {
        return COMMON_ENOMEM;
    }
    firing_of(stmt, dml, &what);
    rc = plan_programs(stmt, cache, &what, dml->conflict, &dml->triggers);
    any = dml->triggers != NULL;
    if (rc == 0 && dml->kind == AST_STMT_INSERT) {
        rc = plan_upserts(stmt, cache, dml, &any);
    }
    if (rc == 0 && dml->triggers != NULL) {
        /* SQLite reads every row before it changes one (no one-pass, the
         * INSERT's source into a temporary table first). */
        dml->one_pass = false;
        dml->source_streams = false;
    }
    if (rc == 0 && any) {
        dml->may_abort = true; /* the programs' statement journal */
    }
    return rc;
}
