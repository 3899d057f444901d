/* SPDX-License-Identifier: MIT
 *
 * generate.c: histories for the checker's tests, recorded from a simulated
 * linearizable map of registers. Each operation gets an interval from its
 * client's timeline and a linearization point inside it (Jepsen's and
 * chaos.md §3.3's generator); the results come from applying the
 * operations to the map in linearization-point order, so every generated
 * history is linearizable by construction, whatever the checker thinks.
 */
#include "check_test.h"

#include <stdlib.h>

/* A generated operation's instant of effect. */
struct generate_point {
    int64_t at_ns; /* the linearization point */
    size_t index;  /* into ops; breaks ties */
    bool applies;  /* false: an unknown operation that never happened */
};

static int generate_point_compare(const void *a, const void *b)
{
    const struct generate_point *x = a;
    const struct generate_point *y = b;

    if (x->at_ns != y->at_ns) {
        return x->at_ns < y->at_ns ? -1 : 1;
    }
    return x->index < y->index ? -1 : x->index > y->index;
}

static int64_t generate_below(struct common_test_rng *rng, int64_t bound)
{
    return (int64_t)common_test_rng_below(rng, (uint64_t)bound);
}

/* The client free earliest (lowest index on ties). */
static size_t generate_next_client(const int64_t *free_at, size_t clients)
{
    size_t best = 0;

    for (size_t c = 1; c < clients; c++) {
        if (free_at[c] < free_at[best]) {
            best = c;
        }
    }
    return best;
}

/* Draws op i's shape and interval, and its point of effect. */
static void generate_op(const struct check_test_config *config,
                        struct common_test_rng *rng, int64_t *free_at,
                        int64_t *client_ids, size_t i, struct check_op *op,
                        struct generate_point *point)
{
    size_t c = generate_next_client(free_at, config->clients);
    int64_t duration = 1 + generate_below(rng, config->duration_max);
    unsigned roll = (unsigned)common_test_rng_below(rng, 100);

    op->client_id = client_ids[c];
    op->kind = roll < config->read_percent ? CHECK_READ
               : roll < config->read_percent + config->cas_percent
                   ? CHECK_CAS
                   : CHECK_WRITE;
    op->key = generate_below(rng, (int64_t)config->keys);
    op->invoke_ns = free_at[c] + 1 + generate_below(rng, config->gap_max + 1);
    op->complete_ns = op->invoke_ns + duration;
    op->outcome = common_test_rng_below(rng, 100) < config->unknown_percent
                      ? CHECK_OUTCOME_UNKNOWN
                      : CHECK_OUTCOME_OK;
    free_at[c] = op->complete_ns;
    point->index = i;
    point->applies = true;
    point->at_ns = op->invoke_ns + generate_below(rng, duration + 1);
    if (op->outcome == CHECK_OUTCOME_UNKNOWN) {
        /* It may take effect long after the client gave up, or never; the
         * client carries on under a new identity, as Jepsen's do. */
        point->applies =
            op->kind != CHECK_READ && common_test_rng_below(rng, 2) == 0;
        point->at_ns = op->invoke_ns + generate_below(rng, 3 * duration + 1);
        op->complete_ns = CHECK_TIME_NONE;
        client_ids[c] += (int64_t)config->clients;
    }
}

/* Applies op to its register, which holds *state, recording its result. */
static void generate_apply(struct common_test_rng *rng, size_t i,
                           struct check_op *op, int64_t *state,
                           int64_t *previous)
{
    int64_t fresh = 1000 + (int64_t)i;

    switch (op->kind) {
    case CHECK_READ:
        op->value = op->outcome == CHECK_OUTCOME_OK ? *state : 0;
        return;
    case CHECK_WRITE:
        op->value = fresh;
        break;
    case CHECK_CAS:
        op->value = fresh;
        op->expected = common_test_rng_below(rng, 2) == 0 ? *state : *previous;
        if (op->expected == *state && common_test_rng_below(rng, 4) == 0) {
            op->expected = 999;
        }
        op->cas_succeeded =
            op->outcome == CHECK_OUTCOME_OK && op->expected == *state;
        if (op->expected != *state) {
            return;
        }
        break;
    }
    *previous = *state;
    *state = op->value;
}

void check_test_generate(const struct check_test_config *config, uint64_t seed,
                         struct check_op *ops)
{
    struct common_test_rng rng = {seed};
    size_t n = config->ops_count;
    int64_t *free_at = common_calloc(config->clients, sizeof(*free_at));
    int64_t *client_ids = common_calloc(config->clients, sizeof(*client_ids));
    int64_t *states = common_calloc(config->keys, sizeof(*states));
    int64_t *previous = common_calloc(config->keys, sizeof(*previous));
    struct generate_point *points = common_calloc(n + 1, sizeof(*points));

    ASSERT(free_at != NULL && client_ids != NULL && states != NULL);
    ASSERT(previous != NULL && points != NULL);
    for (size_t c = 0; c < config->clients; c++) {
        client_ids[c] = (int64_t)c;
    }
    for (size_t k = 0; k < config->keys; k++) {
        states[k] = CHECK_ABSENT;
        previous[k] = CHECK_ABSENT;
    }
    for (size_t i = 0; i < n; i++) {
        ops[i] = (struct check_op){0};
        generate_op(config, &rng, free_at, client_ids, i, &ops[i], &points[i]);
    }
    qsort(points, n, sizeof(*points), generate_point_compare);
    for (size_t p = 0; p < n; p++) {
        struct check_op *op = &ops[points[p].index];

        if (points[p].applies) {
            generate_apply(&rng, points[p].index, op, &states[op->key],
                           &previous[op->key]);
        } else if (op->kind != CHECK_READ) {
            op->value = 1000 + (int64_t)points[p].index;
            op->expected = 999;
        }
    }
    common_free(points);
    common_free(previous);
    common_free(states);
    common_free(client_ids);
    common_free(free_at);
}

/* Whether op certainly set its register to op->value. */
static bool corrupt_is_effective_write(const struct check_op *op)
{
    return op->outcome == CHECK_OUTCOME_OK &&
           (op->kind == CHECK_WRITE ||
            (op->kind == CHECK_CAS && op->cas_succeeded));
}

/* A value the read r cannot return: written by w, overwritten by w2 with
 * w before w2 before r in real time; or the initial CHECK_ABSENT once any
 * w2 precedes r. Returns false if there is none. */
static bool corrupt_stale_value(const struct check_op *ops, size_t count,
                                const struct check_op *r, int64_t *stale)
{
    bool found = false;

    for (size_t j = 0; j < count; j++) {
        const struct check_op *w2 = &ops[j];

        if (w2->key != r->key || !corrupt_is_effective_write(w2) ||
            w2->complete_ns >= r->invoke_ns) {
            continue;
        }
        *stale = CHECK_ABSENT;
        found = true;
        for (size_t k = 0; k < count; k++) {
            const struct check_op *w = &ops[k];

            if (w->key == r->key && corrupt_is_effective_write(w) &&
                w->complete_ns < w2->invoke_ns) {
                *stale = w->value;
                return true;
            }
        }
    }
    return found;
}

size_t check_test_corrupt_read(struct check_op *ops, size_t count,
                               struct common_test_rng *rng, int64_t key_min,
                               int64_t key_max)
{
    size_t start = (size_t)common_test_rng_below(rng, count);

    for (size_t j = 0; j < count; j++) {
        size_t i = (start + j) % count;
        struct check_op *r = &ops[i];
        int64_t stale;

        if (r->kind != CHECK_READ || r->outcome != CHECK_OUTCOME_OK ||
            r->key < key_min || r->key > key_max) {
            continue;
        }
        if (corrupt_stale_value(ops, count, r, &stale)) {
            ASSERT(stale != r->value);
            r->value = stale;
            return i;
        }
    }
    return SIZE_MAX;
}
