/* SPDX-License-Identifier: MIT
 *
 * quorum_flight.c: the change sets a leader has executed but not yet
 * applied nor abandoned, and the rows they write, for first-committer-wins
 * conflict detection (snapshot isolation: Berenson et al. 1995, "A
 * Critique of ANSI SQL Isolation Levels", §4.2: a transaction aborts when
 * a concurrent one already wrote a row it writes).
 *
 * A row is named by a 64-bit hash of its table (ASCII case folded: SQL
 * names are case-insensitive) and its canonical key bytes (crdt_key.c). A
 * collision can only make two transactions conflict that did not: safe,
 * and rare (2^-64 per pair).
 *
 * The in-flight rows form one open-addressing hash set (linear probing,
 * deletion by backward shift, so no tombstones), kept at most half full;
 * each set's row list says what to remove when it leaves. Rows of two sets
 * in flight never overlap (that is the conflict), so a hash in the set
 * belongs to exactly one of them.
 */
#include <string.h>

#include "quorum.h"

uint64_t replication__quorum_row_hash(const char *table,
                                      const struct engine_change_value *key,
                                      size_t count, struct common_buf *scratch,
                                      int *rc)
{
    uint64_t hash;
    const char *p;

    common_buf_truncate(scratch, 0);
    for (p = table; *rc == 0 && *p != '\0'; p++) {
        char c = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
        *rc = common_buf_append_byte(scratch, (uint8_t)c);
    }
    if (*rc == 0) {
        *rc = common_buf_append_byte(scratch, 0);
    }
    if (*rc == 0) {
        *rc = replication__crdt_key_encode(key, count, scratch);
    }
    if (*rc != 0) {
        return 1;
    }
    hash = common_checksum64(scratch->data, scratch->size, 0);
    return hash == 0 ? 1 : hash;
}

static size_t slot_of(const struct replication__quorum_rowset *set,
                      uint64_t hash)
{
    size_t mask = set->capacity - 1;
    size_t i = (size_t)hash & mask;

    while (set->slots[i] != 0 && set->slots[i] != hash) {
        i = (i + 1) & mask;
    }
    return i;
}

static bool rowset_has(const struct replication__quorum_rowset *set,
                       uint64_t hash)
{
    return set->capacity > 0 && set->slots[slot_of(set, hash)] == hash;
}

static void rowset_put(struct replication__quorum_rowset *set, uint64_t hash)
{
    size_t i = slot_of(set, hash);

    ASSERT(2 * (set->count + 1) <= set->capacity);
    if (set->slots[i] == 0) {
        set->slots[i] = hash;
        set->count++;
    }
}

/* Removes hash, then moves later entries of its probe run back so every
 * entry stays reachable from its home slot (Knuth, TAOCP vol. 3, 6.4,
 * Algorithm R). */
static void rowset_remove(struct replication__quorum_rowset *set, uint64_t hash)
{
    size_t mask = set->capacity - 1;
    size_t hole;
    size_t i;

    if (!rowset_has(set, hash)) {
        return;
    }
    hole = slot_of(set, hash);
    set->slots[hole] = 0;
    set->count--;
    for (i = (hole + 1) & mask; set->slots[i] != 0; i = (i + 1) & mask) {
        size_t home = (size_t)set->slots[i] & mask;
        /* The entry may move back to the hole unless its home lies
         * cyclically in (hole, i]. */
        bool stays =
            hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
        if (!stays) {
            set->slots[hole] = set->slots[i];
            set->slots[i] = 0;
            hole = i;
        }
    }
}

/* Makes room for extra more hashes, rehashing into a larger table. */
static int rowset_reserve(struct replication__quorum_rowset *set, size_t extra)
{
    struct replication__quorum_rowset grown = {0};
    size_t capacity = set->capacity ? set->capacity : 64;

    while (2 * (set->count + extra) > capacity) {
        capacity *= 2;
    }
    if (capacity == set->capacity) {
        return 0;
    }
    grown.slots = common_calloc(capacity, sizeof(*grown.slots));
    if (grown.slots == NULL) {
        return COMMON_ENOMEM;
    }
    grown.capacity = capacity;
    for (size_t i = 0; i < set->capacity; i++) {
        if (set->slots[i] != 0) {
            rowset_put(&grown, set->slots[i]);
        }
    }
    common_free(set->slots);
    *set = grown;
    return 0;
}

static struct replication__quorum_flight *
flight_find(const struct replication_quorum *q, const uint8_t *txn_id)
{
    for (size_t i = 0; i < q->flight_count; i++) {
        if (memcmp(q->flights[i].txn_id, txn_id,
                   REPLICATION_QUORUM_TXN_ID_BYTES) == 0) {
            return &q->flights[i];
        }
    }
    return NULL;
}

int replication__quorum_flight_check(const struct replication_quorum *q,
                                     const struct replication__quorum_flight *f)
{
    ASSERT(q != NULL);
    ASSERT(f != NULL);
    if (flight_find(q, f->txn_id) != NULL) {
        return REPLICATION_EDUPLICATE;
    }
    if (q->flight_count >= REPLICATION_QUORUM_IN_FLIGHT_MAX ||
        f->row_count >
            REPLICATION_QUORUM_IN_FLIGHT_ROWS_MAX - q->rowset.count) {
        return COMMON_ETOOBIG;
    }
    if (q->schema_flights > 0 || (f->is_schema && q->flight_count > 0)) {
        return REPLICATION_ECONFLICT;
    }
    for (size_t i = 0; i < f->row_count; i++) {
        if (rowset_has(&q->rowset, f->rows[i])) {
            return REPLICATION_ECONFLICT;
        }
    }
    return 0;
}

static int flights_reserve(struct replication_quorum *q)
{
    struct replication__quorum_flight *grown;
    size_t capacity;

    if (q->flight_count < q->flight_capacity) {
        return 0;
    }
    capacity = q->flight_capacity ? 2 * q->flight_capacity : 8;
    grown = common_realloc_array(q->flights, capacity, sizeof(*grown));
    if (grown == NULL) {
        return COMMON_ENOMEM;
    }
    q->flights = grown;
    q->flight_capacity = capacity;
    return 0;
}

int replication__quorum_flight_add(struct replication_quorum *q,
                                   struct replication__quorum_flight *f)
{
    int rc;

    ASSERT(q != NULL);
    ASSERT(f != NULL);
    if (f->row_count == 0 && !f->is_schema) {
        return 0; /* nothing to hold (changes of system tables only) */
    }
    rc = flights_reserve(q);
    if (rc == 0) {
        rc = rowset_reserve(&q->rowset, f->row_count);
    }
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < f->row_count; i++) {
        rowset_put(&q->rowset, f->rows[i]);
    }
    q->flights[q->flight_count++] = *f;
    q->schema_flights += f->is_schema ? 1 : 0;
    memset(f, 0, sizeof(*f));
    return 0;
}

static void flight_release(struct replication_quorum *q,
                           struct replication__quorum_flight *f)
{
    for (size_t i = 0; i < f->row_count; i++) {
        rowset_remove(&q->rowset, f->rows[i]);
    }
    common_free(f->rows);
    q->schema_flights -= f->is_schema ? 1 : 0;
    *f = q->flights[--q->flight_count];
}

void replication_quorum_abandon(struct replication_quorum *q,
                                const uint8_t *txn_id)
{
    struct replication__quorum_flight *f;

    ASSERT(q != NULL);
    ASSERT(txn_id != NULL);
    f = flight_find(q, txn_id);
    if (f != NULL) {
        flight_release(q, f);
    }
}

void replication_quorum_abandon_all(struct replication_quorum *q)
{
    ASSERT(q != NULL);
    while (q->flight_count > 0) {
        flight_release(q, &q->flights[q->flight_count - 1]);
    }
    ASSERT(q->rowset.count == 0);
    ASSERT(q->schema_flights == 0);
}

void replication__quorum_flight_close(struct replication_quorum *q)
{
    replication_quorum_abandon_all(q);
    common_free(q->flights);
    common_free(q->rowset.slots);
    q->flights = NULL;
    q->flight_capacity = 0;
    q->rowset = (struct replication__quorum_rowset){0};
}
