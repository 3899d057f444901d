/* SPDX-License-Identifier: MIT
 *
 * crdt_vv.c: the version vector read whole or per origin, for the sync
 * layer's summaries and its covered-version checks (crdt.md §6.5 step 2).
 * Heads are contiguous: a set beyond a gap waits (crdt.c), so "head h"
 * means versions 1..h are all applied.
 */
#include <string.h>

#include "crdt_int.h"
#include "sync_wire.h"

int replication__crdt_head(struct replication__crdt *crdt,
                           const uint8_t *origin, uint64_t *head)
{
    int rc = replication__crdt_vv_get(crdt, origin, head);

    replication__crdt_stmts_close(crdt);
    return rc;
}

static int append_head(struct replication__head **heads, size_t *count,
                       struct engine_stmt *stmt)
{
    struct replication__head *grown;

    if (engine_column_bytes(stmt, 0) != REPLICATION__SITE_ID_BYTES) {
        return COMMON_ECORRUPT;
    }
    grown = common_realloc_array(*heads, *count + 1, sizeof(*grown));
    if (grown == NULL) {
        return COMMON_ENOMEM;
    }
    *heads = grown;
    memcpy(grown[*count].site, engine_column_blob(stmt, 0),
           REPLICATION__SITE_ID_BYTES);
    grown[*count].head = (uint64_t)engine_column_int64(stmt, 1);
    (*count)++;
    return 0;
}

int replication__crdt_vv_list(struct replication__crdt *crdt,
                              struct replication__head **heads, size_t *count)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    *heads = NULL;
    *count = 0;
    rc = engine_prepare(crdt->db,
                        "SELECT site, head FROM sinew_crdt_vv WHERE head > 0"
                        " ORDER BY site",
                        -1, &stmt, NULL);
    while (rc == 0 && (rc = engine_step(stmt)) == ENGINE_ROW) {
        rc = append_head(heads, count, stmt);
    }
    engine_finalize(stmt);
    if (rc != ENGINE_DONE) {
        common_free(*heads);
        *heads = NULL;
        *count = 0;
        return rc;
    }
    return 0;
}
