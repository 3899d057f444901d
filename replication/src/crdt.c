/* SPDX-License-Identifier: MIT
 *
 * crdt.c: the crdt state's life (open, close, site id) and the delivery
 * rules around the merge (crdt.h): a change set is applied once, in
 * per-origin version order, and only when its stamp is within the maximum
 * clock offset (crdt.md §3.2, §6.4, §6.6; the HLC receive rule and its
 * offset guard are hlc_update()'s, Kulkarni et al. 2014).
 *
 * Change sets that cannot be applied yet are held, as owned copies in
 * memory and encoded in sinew_crdt_pending (crdt_pending.c) so they survive
 * a close and are reloaded on open: those after a gap in their origin's
 * versions until the gap is filled, those stamped too far ahead until the
 * physical clock catches up. Every successful apply, and
 * replication__crdt_retry(), retries them until no more progress is made.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/random.h>

#include "crdt_int.h"
#include "replication.h"

enum outcome { APPLIED, COVERED, WAITING, DEFERRED, FENCED };

static int system_random(void *ctx, uint8_t *out, size_t size)
{
    ssize_t got;

    (void)ctx;
    while (size > 0) {
        got = getrandom(out, size, 0);
        if (got < 0) {
            return -errno;
        }
        out += got;
        size -= (size_t)got;
    }
    return 0;
}

/* Adds an owned copy of cs (borrowed) to the held list, in memory only. */
static int hold_in_memory(struct replication__crdt *crdt,
                          const struct replication__changeset *cs,
                          bool deferred)
{
    struct replication__changeset **held;
    bool *flags;
    size_t n = crdt->held_count;
    int rc;

    if (n == REPLICATION__CRDT_HELD_MAX) {
        return COMMON_ETOOBIG;
    }
    held = common_realloc_array(crdt->held, n + 1, sizeof(*held));
    if (held == NULL) {
        return COMMON_ENOMEM;
    }
    crdt->held = held;
    flags = common_realloc_array(crdt->held_deferred, n + 1, sizeof(*flags));
    if (flags == NULL) {
        return COMMON_ENOMEM;
    }
    crdt->held_deferred = flags;
    rc = replication__crdt_changeset_clone(cs, &held[n]);
    if (rc != 0) {
        return rc;
    }
    flags[n] = deferred;
    crdt->held_count++;
    return 0;
}

static void unhold_in_memory(struct replication__crdt *crdt, size_t i)
{
    replication__crdt_changeset_free(crdt->held[i]);
    crdt->held_count--;
    memmove(&crdt->held[i], &crdt->held[i + 1],
            (crdt->held_count - i) * sizeof(*crdt->held));
    memmove(&crdt->held_deferred[i], &crdt->held_deferred[i + 1],
            (crdt->held_count - i) * sizeof(*crdt->held_deferred));
}

static int reload_cb(void *ctx, const struct replication__changeset *cs,
                     bool deferred)
{
    return hold_in_memory(ctx, cs, deferred);
}

/* Frees crdt and its held copies; the commit hook is the caller's. */
static void destroy(struct replication__crdt *crdt)
{
    size_t i;

    replication__crdt_stmts_free(crdt);
    replication__crdt_shapes_free(crdt);
    for (i = 0; i < crdt->held_count; i++) {
        replication__crdt_changeset_free(crdt->held[i]);
    }
    common_free(crdt->held);
    common_free(crdt->held_deferred);
    common_free(crdt);
}

/* Reads the site id, or makes and stores one. */
static int load_site(struct replication__crdt *crdt,
                     const struct replication__crdt_config *config)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    rc = engine_prepare(crdt->db,
                        "SELECT value FROM sinew_crdt_meta WHERE name = 'site'",
                        -1, &stmt, NULL);
    if (rc == 0) {
        rc = engine_step(stmt);
    }
    if (rc == ENGINE_ROW &&
        engine_column_bytes(stmt, 0) == REPLICATION__SITE_ID_BYTES) {
        memcpy(crdt->site, engine_column_blob(stmt, 0), sizeof(crdt->site));
        engine_finalize(stmt);
        return 0;
    }
    engine_finalize(stmt);
    if (rc != ENGINE_DONE) {
        return rc < 0 ? rc : COMMON_ECORRUPT;
    }
    rc = config->random_bytes
             ? config->random_bytes(config->random_ctx, crdt->site,
                                    sizeof(crdt->site))
             : system_random(NULL, crdt->site, sizeof(crdt->site));
    if (rc == 0) {
        rc = engine_prepare(crdt->db,
                            "INSERT INTO sinew_crdt_meta VALUES ('site', ?1)",
                            -1, &stmt, NULL);
    }
    if (rc == 0) {
        rc = engine_bind_blob(stmt, 1, crdt->site, sizeof(crdt->site));
        rc = rc == 0 ? replication__crdt_step_done(crdt, stmt) : rc;
        engine_finalize(stmt);
    }
    return rc;
}

int replication__crdt_open(const struct replication__crdt_config *config,
                           struct replication__crdt **out)
{
    struct replication__crdt *crdt;
    uint64_t high_water = 0;
    int rc;

    ASSERT(config != NULL);
    ASSERT(config->db != NULL);
    ASSERT(config->clock != NULL);
    crdt = common_calloc(1, sizeof(*crdt));
    if (crdt == NULL) {
        return COMMON_ENOMEM;
    }
    crdt->db = config->db;
    crdt->clock = config->clock;
    crdt->log = config->log;
    crdt->gate = config->gate;
    crdt->gate_ctx = config->gate_ctx;
    crdt->admit = config->admit;
    crdt->admit_ctx = config->admit_ctx;
    rc = replication__crdt_store_create(crdt->db);
    if (rc == 0) {
        rc = load_site(crdt, config);
    }
    if (rc == 0) {
        rc = replication__crdt_meta_get(crdt, "hlc", &high_water);
    }
    replication__crdt_stmts_close(crdt);
    if (rc == 0) {
        rc = replication__crdt_pending_load(crdt, reload_cb, crdt);
    }
    if (rc == 0) {
        rc = replication__crdt_kept_load(crdt);
    }
    if (rc == 0) {
        hlc_restore(crdt->clock, high_water);
        rc = replication__crdt_schema_resync(crdt);
    }
    if (rc == 0) {
        rc = replication__crdt_bootstrap(crdt);
    }
    if (rc == 0) {
        rc = engine_commit_hook_set(crdt->db, replication__crdt_capture_hook,
                                    crdt);
    }
    if (rc != 0) {
        destroy(crdt);
        return rc;
    }
    *out = crdt;
    return 0;
}

void replication__crdt_close(struct replication__crdt *crdt)
{
    if (crdt == NULL) {
        return;
    }
    (void)engine_commit_hook_set(crdt->db, NULL, NULL);
    destroy(crdt);
}

const uint8_t *replication__crdt_site(const struct replication__crdt *crdt)
{
    return crdt->site;
}

int replication__crdt_local_version(struct replication__crdt *crdt,
                                    uint64_t *out)
{
    int rc = replication__crdt_meta_get(crdt, "version", out);

    replication__crdt_stmts_close(crdt);
    return rc;
}

size_t replication__crdt_deferred_count(const struct replication__crdt *crdt)
{
    size_t i, n = 0;

    for (i = 0; i < crdt->held_count; i++) {
        n += crdt->held_deferred[i];
    }
    return n;
}

size_t replication__crdt_held_count(const struct replication__crdt *crdt)
{
    return crdt->held_count;
}

size_t replication__crdt_kept_count(const struct replication__crdt *crdt)
{
    return crdt->kept_count;
}

uint64_t replication__crdt_schema_hash(const struct replication__crdt *crdt)
{
    return crdt->schema_hash;
}

/* Asks the admit callback (crdt.h) about cs: 0 and *outcome APPLIED when
 * it may be merged, else the outcome that stops it. */
static int admit(const struct replication__crdt *crdt,
                 const struct replication__changeset *cs, enum outcome *outcome)
{
    int rc = crdt->admit != NULL ? crdt->admit(crdt->admit_ctx, cs) : 0;

    *outcome = APPLIED;
    if (rc == REPLICATION_EFENCED) {
        *outcome = FENCED;
        return 0;
    }
    if (rc == REPLICATION_EDEFERRED) {
        *outcome = WAITING;
        return 0;
    }
    return rc;
}

/* Applies cs if it is next for its origin, admitted, and within the clock
 * offset. The admission comes before hlc_update(): a refused set must not
 * move the clock either. */
static int apply_one(struct replication__crdt *crdt,
                     const struct replication__changeset *cs,
                     enum outcome *outcome)
{
    uint64_t head, stamp;
    int rc;

    rc = replication__crdt_vv_get(crdt, cs->origin, &head);
    replication__crdt_stmts_close(crdt);
    if (rc != 0) {
        return rc;
    }
    if (cs->version <= head) {
        *outcome = COVERED;
        return 0;
    }
    if (cs->version > head + 1) {
        *outcome = WAITING;
        return 0;
    }
    rc = admit(crdt, cs, outcome);
    if (rc != 0 || *outcome != APPLIED) {
        return rc;
    }
    rc = hlc_update(crdt->clock, cs->hlc, &stamp);
    if (rc == HLC_EAHEAD) {
        *outcome = DEFERRED;
        return 0;
    }
    if (rc == 0) {
        rc = replication__crdt_merge(crdt, cs, stamp);
    }
    *outcome = APPLIED;
    return rc;
}

bool replication__crdt_is_held(const struct replication__crdt *crdt,
                               const uint8_t *origin, uint64_t version)
{
    size_t i;

    for (i = 0; i < crdt->held_count; i++) {
        if (crdt->held[i]->version == version &&
            memcmp(crdt->held[i]->origin, origin, REPLICATION__SITE_ID_BYTES) ==
                0) {
            return true;
        }
    }
    return false;
}

static bool is_held(const struct replication__crdt *crdt,
                    const struct replication__changeset *cs)
{
    return replication__crdt_is_held(crdt, cs->origin, cs->version);
}

/* Keeps cs in memory and in sinew_crdt_pending; neither when it fails. */
static int hold(struct replication__crdt *crdt,
                const struct replication__changeset *cs, bool deferred)
{
    int rc;

    if (is_held(crdt, cs)) {
        return 0;
    }
    rc = hold_in_memory(crdt, cs, deferred);
    if (rc == 0) {
        rc = replication__crdt_pending_put(crdt, cs, deferred);
        if (rc != 0) {
            unhold_in_memory(crdt, crdt->held_count - 1);
        }
    }
    return rc;
}

/* Forgets held set i. An applied set's row went with its merge; any other
 * (covered, or failed and given up) is removed here. */
static int unhold(struct replication__crdt *crdt, size_t i, bool applied)
{
    int rc = 0;

    if (!applied) {
        rc = replication__crdt_pending_drop(crdt, crdt->held[i]);
    }
    unhold_in_memory(crdt, i);
    return rc;
}

/* Drops held set i, which the admit callback refused for good: held
 * before the fence moved past it (a deposed writer's), it must never be
 * merged, not even by the new writer that holds it (DESIGN.md, leader). */
static int drop_fenced(struct replication__crdt *crdt, size_t i)
{
    const struct replication__changeset *cs = crdt->held[i];

    LOGF(&crdt->log, COMMON_LOG_WARN,
         "held change set refused, beyond the writer's fence"
         " origin=%02x%02x%02x%02x version=%" PRIu64 " epoch=%" PRIu64,
         cs->origin[0], cs->origin[1], cs->origin[2], cs->origin[3],
         cs->version, cs->epoch);
    crdt->fenced++;
    return unhold(crdt, i, false);
}

uint64_t replication__crdt_fenced_count(const struct replication__crdt *crdt)
{
    return crdt->fenced;
}

/* One pass over the held change sets; *progress says whether any left. */
static int retry_pass(struct replication__crdt *crdt, bool *progress)
{
    enum outcome outcome;
    size_t i = 0;
    bool deferred;
    int rc, drop_rc;

    *progress = false;
    while (i < crdt->held_count) {
        rc = apply_one(crdt, crdt->held[i], &outcome);
        if (rc == 0 && outcome == FENCED) {
            rc = drop_fenced(crdt, i);
            *progress = true;
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        if (rc != 0 || outcome == APPLIED || outcome == COVERED) {
            drop_rc = unhold(crdt, i, rc == 0 && outcome == APPLIED);
            *progress = true;
            rc = rc != 0 ? rc : drop_rc;
            if (rc != 0) {
                return rc;
            }
            continue;
        }
        deferred = outcome == DEFERRED;
        if (crdt->held_deferred[i] != deferred) {
            rc = replication__crdt_pending_mark(crdt, crdt->held[i], deferred);
            if (rc != 0) {
                return rc;
            }
            crdt->held_deferred[i] = deferred;
        }
        i++;
    }
    return 0;
}

int replication__crdt_retry(struct replication__crdt *crdt)
{
    bool progress = true;
    int rc = 0;

    ASSERT(crdt != NULL);
    while (rc == 0 && progress) {
        rc = retry_pass(crdt, &progress);
    }
    return rc == 0 ? replication__crdt_kept_retry(crdt) : rc;
}

int replication__crdt_apply(struct replication__crdt *crdt,
                            const struct replication__changeset *cs)
{
    enum outcome outcome;
    int rc;

    ASSERT(crdt != NULL);
    ASSERT(cs != NULL);
    rc = apply_one(crdt, cs, &outcome);
    if (rc != 0) {
        return rc;
    }
    switch (outcome) {
    case APPLIED:
        return replication__crdt_retry(crdt);
    case COVERED:
        return 0;
    case FENCED:
        return REPLICATION_EFENCED;
    case WAITING:
        return hold(crdt, cs, false);
    default:
        LOGF(&crdt->log, COMMON_LOG_WARN,
             "change set deferred, stamped beyond the maximum clock offset"
             " origin=%02x%02x%02x%02x version=%" PRIu64 " stamp_ms=%" PRIu64,
             cs->origin[0], cs->origin[1], cs->origin[2], cs->origin[3],
             cs->version, hlc_physical_ms(cs->hlc));
        rc = hold(crdt, cs, true);
        return rc == 0 ? REPLICATION_EDEFERRED : rc;
    }
}

/* ---- batches (replication__crdt_apply_batch) ---- */

enum { BATCH_ALONE, BATCH_MERGED, BATCH_COVERED };

struct batch {
    struct replication__crdt *crdt;
    const struct replication__changeset *const *sets;
    uint8_t *ready; /* per set: BATCH_ALONE, BATCH_MERGED or BATCH_COVERED */
    size_t count;
    /* Heads as the batch moves them, per origin met. */
    struct replication__head_cache {
        uint8_t origin[REPLICATION__SITE_ID_BYTES];
        uint64_t head;
    } * heads;
    size_t head_count;
};

/* origin's head, as this batch has moved it so far. */
static int batch_head(struct batch *b, const uint8_t *origin,
                      struct replication__head_cache **out)
{
    struct replication__head_cache *grown;
    size_t i;
    int rc;

    for (i = 0; i < b->head_count; i++) {
        if (memcmp(b->heads[i].origin, origin, sizeof(b->heads[i].origin)) ==
            0) {
            *out = &b->heads[i];
            return 0;
        }
    }
    grown = common_realloc_array(b->heads, b->head_count + 1, sizeof(*grown));
    if (grown == NULL) {
        return COMMON_ENOMEM;
    }
    b->heads = grown;
    memcpy(grown[b->head_count].origin, origin, REPLICATION__SITE_ID_BYTES);
    rc = replication__crdt_vv_get(b->crdt, origin, &grown[b->head_count].head);
    replication__crdt_stmts_close(b->crdt);
    *out = &grown[b->head_count++];
    return rc;
}

static bool is_admitted(const struct replication__crdt *crdt,
                        const struct replication__changeset *cs)
{
    enum outcome outcome;

    return admit(crdt, cs, &outcome) == 0 && outcome == APPLIED;
}

/* Marks the sets that are next for their origin, admitted and within the
 * clock offset; *stamp: the last receive stamp. */
static int batch_plan(struct batch *b, uint64_t *stamp, size_t *ready)
{
    struct replication__head_cache *head;
    size_t i;
    int rc = 0;

    *ready = 0;
    for (i = 0; rc == 0 && i < b->count; i++) {
        const struct replication__changeset *cs = b->sets[i];

        rc = batch_head(b, cs->origin, &head);
        if (rc == 0 && cs->version <= head->head) {
            b->ready[i] = BATCH_COVERED; /* a duplicate: nothing to do */
            continue;
        }
        if (rc != 0 || cs->version != head->head + 1 ||
            !is_admitted(b->crdt, cs) ||
            hlc_update(b->crdt->clock, cs->hlc, stamp) != 0) {
            continue; /* early, unadmitted or ahead: one by one, below */
        }
        b->ready[i] = BATCH_MERGED;
        head->head = cs->version;
        (*ready)++;
    }
    return rc;
}

static int batch_cb(void *ctx, struct engine_db *db)
{
    struct batch *b = ctx;
    size_t i;
    int rc = 0;

    (void)db;
    for (i = 0; rc == 0 && i < b->count; i++) {
        if (b->ready[i] == BATCH_MERGED) {
            rc = replication__crdt_merge_batched(b->crdt, b->sets[i]);
        }
    }
    return rc;
}

int replication__crdt_apply_batch(
    struct replication__crdt *crdt,
    const struct replication__changeset *const *sets, size_t count,
    size_t *applied, replication__crdt_batch_error_cb on_error, void *ctx)
{
    struct batch b = {.crdt = crdt, .sets = sets, .count = count};
    uint64_t stamp = 0;
    size_t ready = 0, i;
    int rc, one;

    ASSERT(crdt != NULL);
    *applied = 0;
    b.ready = common_calloc(count + 1, sizeof(*b.ready));
    if (b.ready == NULL) {
        return COMMON_ENOMEM;
    }
    rc = batch_plan(&b, &stamp, &ready);
    if (rc == 0 && ready > 0) {
        rc = engine_apply_transaction(crdt->db, stamp, batch_cb, &b);
        if (rc == 0) {
            *applied = ready;
        } else {
            /* One set failed the whole transaction: every set goes again
             * alone below, so the others still apply. */
            (void)replication__crdt_kept_load(crdt);
            for (i = 0; i < count; i++) {
                b.ready[i] =
                    b.ready[i] == BATCH_MERGED ? BATCH_ALONE : b.ready[i];
            }
            rc = 0;
        }
    }
    for (i = 0; rc == 0 && i < count; i++) {
        if (b.ready[i] != BATCH_ALONE) {
            continue;
        }
        one = replication__crdt_apply(crdt, sets[i]);
        *applied += one == 0;
        if (one == 0 || one == REPLICATION_EDEFERRED) {
            continue;
        }
        if (on_error != NULL) {
            on_error(ctx, sets[i], one);
        }
    }
    if (rc == 0 && *applied > 0) {
        rc = replication__crdt_retry(crdt);
    }
    common_free(b.heads);
    common_free(b.ready);
    return rc;
}
