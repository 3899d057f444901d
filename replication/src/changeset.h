/* SPDX-License-Identifier: MIT
 *
 * changeset.h: one committed transaction as the replication layer ships
 * it, in memory (struct replication__changeset) and on the wire
 * (changeset_codec.c: msgpack, lz4 when large, a format version and a
 * checksum, split into chunks; docs/formats.md, "Change sets").
 *
 * The model is ../shared/reference/crdt.md §6: a replicated table is a
 * map from primary key to an existence register and one register per
 * column, each last-writer-wins by (hlc, origin site). A change set is one
 * origin transaction: one HLC, one gapless per-origin version, and its
 * records in order. INSERT gives ALIVE plus a SET of every column (defaults
 * explicitly); UPDATE a SET of each changed column; DELETE gives DEAD; a
 * primary key change is DEAD(old) + ALIVE(new) + every SET; DDL is SCHEMA.
 * Columns are named (not positions), so replicas whose column order
 * differs still agree.
 */
#ifndef SINEW_REPLICATION_CHANGESET_H
#define SINEW_REPLICATION_CHANGESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "engine.h"
#include "replication.h"

#define REPLICATION__SITE_ID_BYTES REPLICATION_SITE_ID_BYTES

enum replication__op {
    REPLICATION__OP_ALIVE = 1,  /* the row exists (INSERT) */
    REPLICATION__OP_DEAD = 2,   /* the row is deleted */
    REPLICATION__OP_SET = 3,    /* one cell's value */
    REPLICATION__OP_SCHEMA = 4, /* a DDL statement, applied in order */
};

/* A table a change set touches, and the columns its SET records name. */
struct replication__table {
    const char *name;
    const char *const *columns;
    size_t column_count;
};

struct replication__record {
    enum replication__op op;
    uint32_t table; /* index into tables (not SCHEMA) */
    /* The row's primary key values (declared PRIMARY KEY, else the rowid
     * as one INTEGER), in key order. */
    const struct engine_change_value *key;
    size_t key_count;
    uint32_t column;                  /* SET: index into its table's columns */
    struct engine_change_value value; /* SET */
    const char *sql;                  /* SCHEMA */
};

struct replication__changeset {
    uint8_t origin[REPLICATION__SITE_ID_BYTES]; /* the origin node's site */
    uint64_t version; /* gapless per origin, from 1: the sync cursor */
    uint64_t hlc;     /* the transaction's stamp (hlc.h's layout) */
    uint64_t epoch;   /* leader mode: the writer's epoch; 0 in crdt mode */
    /* The origin's schema when it committed: a hash of its tables and
     * indexes (crdt_schema.c, crdt.md §6.8 "every envelope carries
     * schema_version"); equal hashes mean equal schemas. 0: unknown. */
    uint64_t schema_hash;
    const struct replication__table *tables;
    size_t table_count;
    const struct replication__record *records;
    size_t record_count;
};

#endif /* SINEW_REPLICATION_CHANGESET_H */
