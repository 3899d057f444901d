/* SPDX-License-Identifier: MIT
 *
 * dump.c: a replica's canonical dump (replication/test/cluster.c's): the
 * user tables row by row in key order, then the crdt registers and the
 * version vector, as text. Equal dumps = byte-identical replicas.
 */
#include <string.h>

#include "repl.h"

static const char *const dump_sql[] = {
    "SELECT 'cells', k, quote(a), quote(b), quote(c) FROM cells ORDER BY k",
    "SELECT 'elems', e, quote(origin) FROM elems ORDER BY e",
    "SELECT 'log', seq, quote(v), quote(epoch) FROM log ORDER BY seq",
    "SELECT 'ROW', tbl, hex(pk), alive, hlc, hex(site) FROM sinew_crdt_row"
    " ORDER BY tbl, pk",
    "SELECT 'CELL', tbl, hex(pk), col, hlc, hex(site), has_shadow,"
    " quote(shadow) FROM sinew_crdt_cell ORDER BY tbl, pk, col",
    "SELECT 'VV', hex(site), head FROM sinew_crdt_vv WHERE head > 0"
    " ORDER BY site",
};
#define DUMP_VV_INDEX 5 /* the version vector: the last query */

struct text {
    char *data;
    size_t size;
    size_t capacity;
};

static void append(struct text *t, const char *s)
{
    size_t n = strlen(s);

    if (t->size + n + 1 > t->capacity) {
        size_t capacity = (t->size + n + 1) * 2;
        char *grown = common_realloc(t->data, capacity);

        ASSERT(grown != NULL);
        t->data = grown;
        t->capacity = capacity;
    }
    memcpy(t->data + t->size, s, n + 1);
    t->size += n;
}

static int row(void *ctx, int count, char **values, char **names)
{
    struct text *t = ctx;

    (void)names;
    for (int i = 0; i < count; i++) {
        append(t, i > 0 ? "|" : "");
        append(t, values[i] != NULL ? values[i] : "NULL");
    }
    append(t, "\n");
    return 0;
}

static char *dump_from(struct engine_db *db, size_t first)
{
    struct text t = {0};

    append(&t, "");
    for (size_t i = first; i < sizeof(dump_sql) / sizeof(dump_sql[0]); i++) {
        /* A table this mode lacks (log in crdt mode) dumps nothing. */
        (void)engine_exec(db, dump_sql[i], row, &t);
    }
    return t.data;
}

char *repl_dump(struct engine_db *db)
{
    return dump_from(db, 0);
}

char *repl_dump_vv(struct engine_db *db)
{
    return dump_from(db, DUMP_VV_INDEX);
}
