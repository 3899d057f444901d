/* SPDX-License-Identifier: MIT
 *
 * table_key.c: the hash indexes of a table: rowid -> slot, and each
 * PRIMARY KEY / UNIQUE key -> slot. Open addressing with linear probing;
 * removed entries leave a tombstone so probe chains stay intact, and the
 * table is rebuilt when live plus tombstones pass 3/4 of the buckets.
 *
 * Equal keys must hash alike under SQLite's comparison (datatype3 §4):
 * INTEGER 1 and REAL 1.0 are equal, so a REAL that is an exact integer
 * hashes as that integer; NOCASE folds ASCII case and RTRIM drops trailing
 * spaces before hashing, as the collations compare.
 */
#include "table.h"

#include <string.h>

#include "common.h"

#define BUCKET_EMPTY 0
#define BUCKET_REMOVED SIZE_MAX
#define BUCKETS_INITIAL 64

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    return x ^ (x >> 33);
}

static uint64_t hash_text(const struct engine_value *v,
                          enum engine_collation collation)
{
    size_t size = v->u.s.size;
    uint64_t h = UINT64_C(0xcbf29ce484222325);

    if (collation == ENGINE_COLLATION_RTRIM) {
        while (size > 0 && v->u.s.bytes[size - 1] == ' ') {
            size--;
        }
    }
    for (size_t i = 0; i < size; i++) {
        uint8_t c = v->u.s.bytes[i];

        if (collation == ENGINE_COLLATION_NOCASE && c >= 'A' && c <= 'Z') {
            c = (uint8_t)(c + ('a' - 'A'));
        }
        h = (h ^ c) * UINT64_C(0x100000001b3);
        /* NOCASE compares with sqlite3StrNICmp, a C-string routine that
         * stops at the first NUL: texts of one length that agree up to it
         * are equal, whatever follows, so only that prefix and the length
         * may be hashed. */
        if (collation == ENGINE_COLLATION_NOCASE && c == 0) {
            h = (h ^ (uint64_t)v->u.s.size) * UINT64_C(0x100000001b3);
            break;
        }
    }
    return mix64(h ^ (uint64_t)v->type);
}

uint64_t engine__value_hash(const struct engine_value *v,
                            enum engine_collation collation)
{
    int64_t exact;
    uint64_t bits;

    switch (v->type) {
    case ENGINE_INTEGER:
        return mix64((uint64_t)v->u.i);
    case ENGINE_FLOAT:
        if (engine__real_to_exact_int(v->u.r, &exact)) {
            return mix64((uint64_t)exact);
        }
        /* -2^63 equals INTEGER -9223372036854775808 (sqlite3IntFloatCompare
         * compares exactly), though no affinity turns one into the other. */
        if (v->u.r == -0x1p63) {
            return mix64((uint64_t)INT64_MIN);
        }
        memcpy(&bits, &v->u.r, sizeof(bits));
        return mix64(bits ^ UINT64_C(0x9e3779b97f4a7c15));
    case ENGINE_TEXT:
        return hash_text(v, collation);
    case ENGINE_BLOB:
        return hash_text(v, ENGINE_COLLATION_BINARY);
    default:
        return 0;
    }
}

/* ---- rowid index ---- */

static size_t rowid_probe_start(const struct engine_table *table, int64_t rowid)
{
    return (size_t)mix64((uint64_t)rowid) & (table->rowid_bucket_count - 1);
}

/* The slot holding rowid while rowids ascend with the slots: where the
 * rowids are dense (1, 2, 3 ... as SQLite hands them out) the first guess
 * is it; else a binary search. */
static ptrdiff_t find_ascending(const struct engine_table *table, int64_t rowid)
{
    size_t low = 0, high = table->slot_count;

    if (high > 0 && rowid >= table->rowids[0] &&
        (uint64_t)rowid - (uint64_t)table->rowids[0] < high) {
        size_t guess = (size_t)((uint64_t)rowid - (uint64_t)table->rowids[0]);

        if (table->rowids[guess] == rowid) {
            return table->deleted[guess] ? -1 : (ptrdiff_t)guess;
        }
    }
    while (low < high) {
        size_t middle = low + (high - low) / 2;

        if (table->rowids[middle] < rowid) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    if (low < table->slot_count && table->rowids[low] == rowid &&
        !table->deleted[low]) {
        return (ptrdiff_t)low;
    }
    return -1;
}

/* Without either structure (building the hash ran out of memory): every
 * slot, until the next insert builds it. */
static ptrdiff_t find_by_scan(const struct engine_table *table, int64_t rowid)
{
    for (size_t slot = 0; slot < table->slot_count; slot++) {
        if (table->rowids[slot] == rowid && !table->deleted[slot]) {
            return (ptrdiff_t)slot;
        }
    }
    return -1;
}

ptrdiff_t engine__table_find_rowid(const struct engine_table *table,
                                   int64_t rowid)
{
    size_t i;

    /* rowid_max is never below a live rowid (stale only ever above), so
     * the common insert of the next larger rowid looks no further. */
    if (rowid > table->rowid_max) {
        return -1;
    }
    if (table->rowids_ascending) {
        return find_ascending(table, rowid);
    }
    if (table->rowid_bucket_count == 0) {
        return find_by_scan(table, rowid);
    }
    i = rowid_probe_start(table, rowid);
    while (table->rowid_buckets[i] != BUCKET_EMPTY) {
        size_t entry = table->rowid_buckets[i];

        if (entry != BUCKET_REMOVED && table->rowids[entry - 1] == rowid &&
            !table->deleted[entry - 1]) {
            return (ptrdiff_t)(entry - 1);
        }
        i = (i + 1) & (table->rowid_bucket_count - 1);
    }
    return -1;
}

static void rowid_put(struct engine_table *table, size_t slot)
{
    size_t i = rowid_probe_start(table, table->rowids[slot]);

    while (table->rowid_buckets[i] != BUCKET_EMPTY &&
           table->rowid_buckets[i] != BUCKET_REMOVED) {
        i = (i + 1) & (table->rowid_bucket_count - 1);
    }
    if (table->rowid_buckets[i] == BUCKET_EMPTY) {
        table->rowid_bucket_used++;
    }
    table->rowid_buckets[i] = slot + 1;
}

static int rowid_grow(struct engine_table *table)
{
    size_t count = table->rowid_bucket_count == 0
                       ? BUCKETS_INITIAL
                       : table->rowid_bucket_count * 2;
    size_t *buckets;

    while (count / 2 < table->live_count + 1) {
        count *= 2;
    }
    buckets = common_calloc(count, sizeof(*buckets));
    if (buckets == NULL) {
        return COMMON_ENOMEM;
    }
    common_free(table->rowid_buckets);
    table->rowid_buckets = buckets;
    table->rowid_bucket_count = count;
    table->rowid_bucket_used = 0;
    for (size_t slot = 0; slot < table->slot_count; slot++) {
        if (!table->deleted[slot]) {
            rowid_put(table, slot);
        }
    }
    return 0;
}

/* Whether slot's rowid keeps the rowids ascending with the slots. */
static bool stays_ascending(const struct engine_table *table, size_t slot)
{
    int64_t rowid = table->rowids[slot];

    return (slot == 0 || table->rowids[slot - 1] < rowid) &&
           (slot + 1 >= table->slot_count || rowid < table->rowids[slot + 1]);
}

int engine__table_rowid_add(struct engine_table *table, size_t slot)
{
    if (table->rowids_ascending) {
        if (stays_ascending(table, slot)) {
            return 0;
        }
        /* From now on a hash: it indexes every live slot, this one too. */
        table->rowids_ascending = false;
        return rowid_grow(table);
    }
    if ((table->rowid_bucket_used + 1) * 4 > table->rowid_bucket_count * 3) {
        /* The rebuild indexes every live slot, this one included. */
        return rowid_grow(table);
    }
    rowid_put(table, slot);
    return 0;
}

void engine__table_rowid_remove(struct engine_table *table, size_t slot)
{
    size_t i;

    if (table->rowids_ascending || table->rowid_bucket_count == 0) {
        return; /* no hash (yet) */
    }
    i = rowid_probe_start(table, table->rowids[slot]);

    while (table->rowid_buckets[i] != BUCKET_EMPTY) {
        if (table->rowid_buckets[i] == slot + 1) {
            table->rowid_buckets[i] = BUCKET_REMOVED;
            return;
        }
        i = (i + 1) & (table->rowid_bucket_count - 1);
    }
}

/* ---- unique keys ---- */

static bool key_values_of_slot(const struct engine_table *table,
                               const struct engine_unique_key *key, size_t slot,
                               struct engine_value *values)
{
    for (size_t k = 0; k < key->column_count; k++) {
        values[k] = engine__table_get(table, slot, key->columns[k]);
        if (values[k].type == ENGINE_NULL) {
            return false;
        }
    }
    return true;
}

static uint64_t key_hash(const struct engine_table *table,
                         const struct engine_unique_key *key,
                         const struct engine_value *values)
{
    uint64_t h = 0;

    for (size_t k = 0; k < key->column_count; k++) {
        enum engine_collation collation =
            table->columns[key->columns[k]].collation;

        h = mix64(h ^ engine__value_hash(&values[k], collation));
    }
    return h;
}

static bool key_equal(const struct engine_table *table,
                      const struct engine_unique_key *key, size_t slot,
                      const struct engine_value *values)
{
    for (size_t k = 0; k < key->column_count; k++) {
        struct engine_value stored =
            engine__table_get(table, slot, key->columns[k]);
        enum engine_collation collation =
            table->columns[key->columns[k]].collation;

        if (engine__value_compare(&stored, &values[k], collation) != 0) {
            return false;
        }
    }
    return true;
}

ptrdiff_t engine__table_find_key(const struct engine_table *table,
                                 size_t key_index,
                                 const struct engine_value *values,
                                 ptrdiff_t skip_slot)
{
    const struct engine_unique_key *key = &table->keys[key_index];
    size_t i;

    for (size_t k = 0; k < key->column_count; k++) {
        if (values[k].type == ENGINE_NULL) {
            return -1; /* NULLs are distinct in UNIQUE */
        }
    }
    if (key->bucket_count == 0) {
        return -1;
    }
    i = (size_t)key_hash(table, key, values) & (key->bucket_count - 1);
    while (key->buckets[i] != BUCKET_EMPTY) {
        size_t entry = key->buckets[i];

        if (entry != BUCKET_REMOVED && (ptrdiff_t)(entry - 1) != skip_slot &&
            !table->deleted[entry - 1] &&
            key_equal(table, key, entry - 1, values)) {
            return (ptrdiff_t)(entry - 1);
        }
        i = (i + 1) & (key->bucket_count - 1);
    }
    return -1;
}

static void key_put(const struct engine_table *table,
                    struct engine_unique_key *key, size_t slot)
{
    struct engine_value values[ENGINE_MAX_COLUMNS];
    size_t i;

    if (!key_values_of_slot(table, key, slot, values)) {
        return;
    }
    i = (size_t)key_hash(table, key, values) & (key->bucket_count - 1);
    while (key->buckets[i] != BUCKET_EMPTY &&
           key->buckets[i] != BUCKET_REMOVED) {
        i = (i + 1) & (key->bucket_count - 1);
    }
    if (key->buckets[i] == BUCKET_EMPTY) {
        key->used++;
    }
    key->buckets[i] = slot + 1;
}

static int key_grow(const struct engine_table *table,
                    struct engine_unique_key *key)
{
    size_t count =
        key->bucket_count == 0 ? BUCKETS_INITIAL : key->bucket_count * 2;
    size_t *buckets;

    while (count / 2 < table->live_count + 1) {
        count *= 2;
    }
    buckets = common_calloc(count, sizeof(*buckets));
    if (buckets == NULL) {
        return COMMON_ENOMEM;
    }
    common_free(key->buckets);
    key->buckets = buckets;
    key->bucket_count = count;
    key->used = 0;
    for (size_t slot = 0; slot < table->slot_count; slot++) {
        if (!table->deleted[slot]) {
            key_put(table, key, slot);
        }
    }
    return 0;
}

int engine__table_keys_add_one(struct engine_table *table, size_t key_index,
                               size_t slot)
{
    struct engine_unique_key *key = &table->keys[key_index];

    if ((key->used + 1) * 4 > key->bucket_count * 3) {
        /* The rebuild indexes every live slot, this one included. */
        return key_grow(table, key);
    }
    key_put(table, key, slot);
    return 0;
}

int engine__table_key_rebuild(struct engine_table *table, size_t key_index)
{
    return key_grow(table, &table->keys[key_index]);
}

int engine__table_key_reindex(struct engine_table *table, size_t key_index)
{
    struct engine_unique_key *key = &table->keys[key_index];
    size_t bucket_count = key->bucket_count;
    int rc;

    /* Sized for the live rows alone, not doubled as a growth is. */
    key->bucket_count = 0;
    rc = key_grow(table, key);
    if (rc != 0) {
        key->bucket_count = bucket_count;
    }
    return rc;
}

int engine__table_keys_add(struct engine_table *table, size_t slot)
{
    for (size_t k = 0; k < table->key_count; k++) {
        int rc = engine__table_keys_add_one(table, k, slot);

        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

void engine__table_keys_remove(struct engine_table *table, size_t slot)
{
    struct engine_value values[ENGINE_MAX_COLUMNS];

    for (size_t k = 0; k < table->key_count; k++) {
        struct engine_unique_key *key = &table->keys[k];
        size_t i;

        if (key->bucket_count == 0 ||
            !key_values_of_slot(table, key, slot, values)) {
            continue;
        }
        i = (size_t)key_hash(table, key, values) & (key->bucket_count - 1);
        while (key->buckets[i] != BUCKET_EMPTY) {
            if (key->buckets[i] == slot + 1) {
                key->buckets[i] = BUCKET_REMOVED;
                break;
            }
            i = (i + 1) & (key->bucket_count - 1);
        }
    }
}

int engine__table_key_adopt(struct engine_table *table, size_t key_index,
                            size_t *buckets, size_t bucket_count)
{
    struct engine_unique_key *key = &table->keys[key_index];
    size_t used = 0;
    bool empty_seen = false;

    if (bucket_count == 0 || (bucket_count & (bucket_count - 1)) != 0) {
        return ENGINE_ECORRUPT;
    }
    for (size_t i = 0; i < bucket_count; i++) {
        size_t entry = buckets[i];

        if (entry != BUCKET_EMPTY && entry != BUCKET_REMOVED &&
            (entry > table->slot_count || table->deleted[entry - 1])) {
            return ENGINE_ECORRUPT;
        }
        used += entry != BUCKET_EMPTY;
        empty_seen = empty_seen || entry == BUCKET_EMPTY;
    }
    /* A probe stops at an empty bucket: there must be one. */
    if (!empty_seen) {
        return ENGINE_ECORRUPT;
    }
    common_free(key->buckets);
    key->buckets = buckets;
    key->bucket_count = bucket_count;
    key->used = used;
    return 0;
}
