/* SPDX-License-Identifier: MIT
 *
 * expr_semi.c: running a decorrelated EXISTS (semi.h). At the first
 * enclosing row of an execution that reaches it, u's rows that pass the
 * terms over u are read once; each keeps the values of the equalities'
 * inner sides, bucketed by their hash as the comparisons see them (the
 * hash join's rule, engine__join_key_hash). Each enclosing row then
 * computes the outer sides, and EXISTS is true when a row of its bucket
 * passes every equality (tested with the comparison itself, so the hash
 * only has to agree with it). Were u changed since the read (a statement
 * writing u between its rows), it is read again first: what the
 * correlated subquery, run again for that row, would see.
 */
#include <string.h>

#include "expr_int.h"
#include "semi.h"
#include "table.h"

void engine__semi_forget(struct engine_semi *semi)
{
    common_free(semi->rows);
    common_free(semi->hashes);
    common_free(semi->next);
    common_free(semi->buckets);
    semi->rows = NULL;
    semi->hashes = NULL;
    semi->next = NULL;
    semi->buckets = NULL;
    semi->row_count = semi->row_capacity = 0;
    engine__arena_close(&semi->rows_arena);
    engine__arena_close(&semi->key_arena);
    semi->built = false;
}

static int grow_rows(struct engine_semi *semi, size_t more)
{
    size_t need = semi->row_count + more;
    size_t capacity = semi->row_capacity > 0 ? semi->row_capacity : 64;
    struct engine_value *rows;
    uint64_t *hashes;

    if (need <= semi->row_capacity) {
        return 0;
    }
    while (capacity < need) {
        capacity *= 2;
    }
    rows = common_realloc_array(semi->rows, capacity * semi->key_count,
                                sizeof(*rows));
    if (rows == NULL) {
        return COMMON_ENOMEM;
    }
    semi->rows = rows;
    hashes = common_realloc_array(semi->hashes, capacity, sizeof(*hashes));
    if (hashes == NULL) {
        return COMMON_ENOMEM;
    }
    semi->hashes = hashes;
    semi->row_capacity = capacity;
    return 0;
}

/* Keeps the live rows of one batch of the source whose keys can match
 * (a NULL key, as the comparison converts it, equals nothing). */
static int keep_batch(struct engine_semi *semi, struct engine_exec *exec,
                      const struct engine_batch *batch)
{
    struct engine_eval eval = {.exec = exec, .arena = &semi->key_arena};
    const struct engine_vector *keys[ENGINE__JOIN_KEY_MAX];
    int rc = grow_rows(semi, batch->selected);

    engine__arena_reset(&semi->key_arena);
    for (size_t k = 0; rc == 0 && k < semi->key_count; k++) {
        rc = engine__expr_eval(semi->keys[k].inner, &eval, batch, &keys[k]);
        if (rc != 0) {
            return rc; /* recorded on the statement */
        }
    }
    for (uint32_t i = 0; rc == 0 && i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        struct engine_value *out =
            &semi->rows[semi->row_count * semi->key_count];
        uint64_t hash = 0;
        bool null = false;

        for (size_t k = 0; rc == 0 && !null && k < semi->key_count; k++) {
            out[k] = engine__vector_get(keys[k], row);
            rc = engine__join_key_hash(semi->keys[k].compare,
                                       semi->keys[k].inner_arg, out[k],
                                       &semi->key_arena, &hash, &null);
            if (rc == 0 && !null) {
                rc = engine__value_keep(&semi->rows_arena, &out[k]);
            }
        }
        if (rc == 0 && !null) {
            semi->hashes[semi->row_count++] = hash;
        }
    }
    return rc == 0 ? 0 : engine__error(exec, rc, "out of memory");
}

/* Chains the rows of each bucket. */
static int build_buckets(struct engine_semi *semi)
{
    size_t count = 16;

    while (count < 2 * semi->row_count) {
        count *= 2;
    }
    semi->buckets = common_calloc(count, sizeof(*semi->buckets));
    semi->next = common_calloc(semi->row_count + 1, sizeof(*semi->next));
    if (semi->buckets == NULL || semi->next == NULL) {
        return COMMON_ENOMEM;
    }
    semi->bucket_mask = count - 1;
    for (size_t r = semi->row_count; r-- > 0;) {
        size_t b = (size_t)semi->hashes[r] & semi->bucket_mask;

        semi->next[r] = semi->buckets[b];
        semi->buckets[b] = r + 1;
    }
    return 0;
}

/* Reads u's rows that pass the terms over u. */
static int build(struct engine_semi *semi, struct engine_exec *exec)
{
    struct engine_op *source = semi->source;
    int rc;

    engine__semi_forget(semi);
    rc = source->ops->open(source, exec);
    while (rc == 0) {
        struct engine_batch *batch;

        rc = source->ops->next(source, exec, &batch);
        if (rc != 0 || batch == NULL) {
            break;
        }
        rc = keep_batch(semi, exec, batch);
    }
    if (rc != 0) {
        return rc;
    }
    if (build_buckets(semi) != 0) {
        return engine__error(exec, COMMON_ENOMEM, "out of memory");
    }
    semi->built = true;
    semi->built_changes = semi->table->change_count;
    semi->table->semi_builds++;
    return 0;
}

/* Whether inner row r passes every equality against the outer values. */
static int row_matches(struct engine_semi *semi, size_t r,
                       const struct engine_value *outer,
                       struct engine_arena *arena, bool *match)
{
    const struct engine_value *inner = &semi->rows[r * semi->key_count];

    *match = true;
    for (size_t k = 0; *match && k < semi->key_count; k++) {
        const struct engine_semi_key *key = &semi->keys[k];
        int equal = 0;
        int rc = key->inner_arg == 0
                     ? engine__expr_compare_values(key->compare, inner[k],
                                                   outer[k], arena, &equal)
                     : engine__expr_compare_values(key->compare, outer[k],
                                                   inner[k], arena, &equal);

        if (rc != 0) {
            return rc;
        }
        *match = equal > 0;
    }
    return 0;
}

/* EXISTS for one enclosing row whose outer sides are outer[]. */
static int probe(struct engine_semi *semi, const struct engine_value *outer,
                 struct engine_arena *arena, bool *found)
{
    uint64_t hash = 0;
    bool null = false;
    int rc = 0;

    *found = false;
    for (size_t k = 0; rc == 0 && !null && k < semi->key_count; k++) {
        rc = engine__join_key_hash(semi->keys[k].compare,
                                   1 - semi->keys[k].inner_arg, outer[k], arena,
                                   &hash, &null);
    }
    if (rc != 0 || null) {
        return rc;
    }
    for (size_t r = semi->buckets[(size_t)hash & semi->bucket_mask];
         rc == 0 && !*found && r != 0; r = semi->next[r - 1]) {
        if (semi->hashes[r - 1] == hash) {
            rc = row_matches(semi, r - 1, outer, arena, found);
        }
    }
    return rc;
}

int engine__semi_eval(struct engine_expr *e, struct engine_eval *eval,
                      const struct engine_batch *batch)
{
    struct engine_semi *semi = e->u.subquery->semi;
    const struct engine_vector *vectors[ENGINE__JOIN_KEY_MAX];
    struct engine_value outer[ENGINE__JOIN_KEY_MAX];
    int rc = 0;

    if (!semi->built || semi->built_changes != semi->table->change_count) {
        rc = build(semi, eval->exec);
    }
    for (size_t k = 0; rc == 0 && k < semi->key_count; k++) {
        rc = engine__expr_eval(semi->keys[k].outer, eval, batch, &vectors[k]);
    }
    if (rc != 0) {
        return rc;
    }
    e->result.kind = ENGINE_VECTOR_INT64;
    for (uint32_t i = 0; i < batch->selected; i++) {
        uint32_t row = engine__batch_row(batch, i);
        bool found = false;

        for (size_t k = 0; k < semi->key_count; k++) {
            outer[k] = engine__vector_get(vectors[k], row);
        }
        rc = probe(semi, outer, eval->arena, &found);
        if (rc != 0) {
            return engine__error(eval->exec, rc, "out of memory");
        }
        e->result.nulls[row] = false;
        e->result.data.i64[row] = found;
    }
    return 0;
}

uint64_t engine__semi_builds(const struct engine_db *db, const char *name)
{
    const struct engine_table *table = engine__catalog_find(db, name);

    return table != NULL ? table->semi_builds : 0;
}
