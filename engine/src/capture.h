/* SPDX-License-Identifier: MIT
 *
 * capture.h: change capture, the seam for replication (engine.h, "Change
 * capture"): the commit hook and the reading of a committing transaction's
 * changes (capture.c), the apply path (capture_apply.c), system tables and
 * the commit stamp they keep (system_table.c).
 *
 * The changes the hook reads are not copied: they are decoded, one at a
 * time, from the transaction's redo log (redo.c), which already holds them
 * in order, an UPDATE with only its changed columns, as the WAL record will.
 * For that the redo log names each row's key (docs/formats.md, "Commit
 * payload": the P and K entries) and records a key change as a delete and
 * an insert.
 */
#ifndef SINEW_ENGINE_CAPTURE_H
#define SINEW_ENGINE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* The commit payload's entries for keys (docs/formats.md, "Commit
 * payload"), beside storage_int.h's ENGINE__REDO_* kinds. */
#define ENGINE__REDO_PRIMARY_KEY 'P' /* after T: the table's key columns */
#define ENGINE__REDO_KEY 'K'         /* before U or D: the row's key */

/* How many statements engine_apply_change() keeps prepared: a merge
 * writes rows of a few shapes (a table and the columns written), each
 * shape one statement. */
#define ENGINE__APPLY_STMTS 64

struct ast_stmt;
struct engine_db;
struct engine_table;
struct engine_unique_key;

/* A connection's change capture state (struct engine_db.change_capture).
 * Invariants: committing is true only inside engine__capture_commit();
 * applying only inside engine_apply_transaction(), and apply_commit only
 * while that call commits; system only inside engine_exec_system(). None of
 * them outlives the call that set it, so no state leaks into a later
 * transaction however the current one ends. */
struct engine_capture {
    engine_commit_hook_cb hook; /* or NULL */
    void *hook_ctx;             /* borrowed */
    bool committing;            /* the hook (or the stamp's write) is running */
    bool applying;              /* engine_apply_transaction() is running */
    bool apply_commit;          /* ... and commits its transaction */
    uint64_t apply_stamp; /* the stamp engine_apply_transaction() was given */
    bool system;          /* engine_exec_system() is running */
    /* engine_apply_change()'s statements, each in the slot its SQL text
     * hashes to (capture_apply.c); NULL: empty. They are among the open
     * statements, so engine_close() finalizes them. */
    struct engine_stmt *apply_stmts[ENGINE__APPLY_STMTS];
};

/* Called by engine__transaction_commit() first: runs the commit hook over
 * the transaction's changes (unless engine_apply_transaction() commits)
 * and records the commit's stamp in the stamp table. On success *stamp is
 * the stamp for the WAL record (0: none). On failure (a veto, an error)
 * the whole transaction is rolled back here, the error is recorded on db,
 * and the code is returned: the commit must stop. */
int engine__capture_commit(struct engine_db *db, uint64_t *stamp);

/* The table's declared PRIMARY KEY when it is not the rowid (a table's
 * INTEGER PRIMARY KEY is the rowid), or NULL: then the rowid is the key. */
const struct engine_unique_key *
engine__capture_primary_key(const struct engine_table *table);

/* ---- system tables (system_table.c) ---- */

/* Whether name is a system object's name ("sinew_" prefix, any case). */
bool engine__system_is_name(const char *name);

/* Refuses a CREATE/DROP TABLE or INDEX that touches a system object
 * outside engine_exec_system(), with SQLite's message; 0 for any other
 * statement. The error is recorded on db. */
int engine__system_check_ddl(struct engine_db *db, const struct ast_stmt *ast);

/* Whether a schema change's text (a CREATE/DROP TABLE/INDEX statement, as
 * the redo log holds it) concerns a system object. false when it does not
 * parse; *is_system is set on success. 0 or COMMON_ENOMEM. */
int engine__system_is_ddl(const char *sql, size_t size, bool *is_system);

/* Records stamp as the open transaction's in the stamp table (creating
 * it at the first stamped commit). 0, or an error recorded on db. */
int engine__system_stamp_write(struct engine_db *db, uint64_t stamp);

#endif /* SINEW_ENGINE_CAPTURE_H */
