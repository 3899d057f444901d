/* SPDX-License-Identifier: MIT
 *
 * search.c: the linearizability search of one key's history: Wing and
 * Gong's algorithm ("Testing and verifying concurrent objects", JPDC 1993)
 * with Lowe's just-in-time refinement and memo ("Testing for
 * linearizability", CCPE 2017), the algorithm of Porcupine's checkSingle.
 *
 * The history becomes a doubly linked list of events, each operation a call
 * at its invocation and (if it completed) a return at its completion,
 * sorted by time with calls before returns at equal times (touching
 * intervals are concurrent). The search walks the list from its head:
 *
 *   - at a call whose operation is legal in the current state and whose
 *     resulting configuration (placed set + {op}, new state) is not in the
 *     memo: record it, push (call, old state), lift the call and its return
 *     out of the list, and restart from the head;
 *   - at any other call: move on;
 *   - at a return: the operation it belongs to completed before everything
 *     later in the list was invoked, yet no order placed it; this is a dead
 *     end: pop the last placed operation, put its events back, and go on
 *     from the event after its call. An empty stack means that no
 *     linearization exists.
 *
 * Unknown-outcome writes and cas have no return event unless plan.c gave
 * them a deadline: nothing forces them into the order, so they take effect
 * when that helps, or never. The search succeeds when every required
 * operation is placed.
 *
 * Three prunings keep the memo from filling with configurations that
 * cannot matter; each is exact (argued where it is implemented):
 *   - a read-only operation that is legal now is placed without trying the
 *     alternatives (search_place_forced: a partial-order reduction);
 *   - a placement that overwrites, for good, a value some required
 *     operation must still see is refused (search_is_dooming), which cuts
 *     wrong orders of concurrent writes at once instead of at the return
 *     of the read they starve;
 *   - an unknown-outcome write whose value nobody sees is placed only
 *     where a failed cas needs it (search_is_gate_open, plan.c rule 2).
 * On a hot key with 16 clients they turn tens of millions of steps into
 * tens of thousands.
 *
 * Explanations (chaos.md §3.3, Porcupine's partial linearizations): at
 * each dead end that placed more required operations than any before,
 * the stack is copied as the longest linearizable prefix. Only the part
 * above the lowest depth popped since the last copy changes, so the
 * copies cost no more than the pushes.
 */
#include "search.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The order of events (time, call before return, operation) as a sort
 * key; the operation breaks every tie, so qsort's instability is harmless. */
struct search_sort_key {
    int64_t time_ns; /* invocation or completion */
    int is_return;   /* 0 for a call */
    size_t op;       /* local operation index */
};

int64_t check__now_ns(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + (int64_t)now.tv_nsec;
}

static int search_sort_compare(const void *a, const void *b)
{
    const struct search_sort_key *x = a;
    const struct search_sort_key *y = b;

    if (x->time_ns != y->time_ns) {
        return x->time_ns < y->time_ns ? -1 : 1;
    }
    if (x->is_return != y->is_return) {
        return x->is_return - y->is_return;
    }
    if (x->op != y->op) {
        return x->op < y->op ? -1 : 1;
    }
    return 0;
}

/* Fills keys with the calls of the operations that can matter and the
 * returns of the required ones; returns how many. */
static size_t search_sort_keys_fill(const struct search *s,
                                    struct search_sort_key *keys)
{
    size_t n = 0;

    for (size_t op = 0; op < s->key->count; op++) {
        const struct check__plan *plan = &s->plans[op];

        if (plan->cls == CHECK__DROPPED) {
            continue;
        }
        keys[n++] =
            (struct search_sort_key){check__search_op(s, op)->invoke_ns, 0, op};
        if (plan->cls == CHECK__REQUIRED) {
            keys[n++] = (struct search_sort_key){plan->return_ns, 1, op};
        }
    }
    return n;
}

/* Links the sorted events into the list and pairs calls with returns. */
static void search_events_link(struct search *s,
                               const struct search_sort_key *keys, size_t n,
                               size_t *call_of_op)
{
    for (size_t i = 0; i < n; i++) {
        struct search_event *e = &s->events[i];

        e->op = keys[i].op;
        e->is_call = keys[i].is_return == 0;
        e->prev = i == 0 ? s->head : i - 1;
        e->next = i + 1 == n ? SEARCH_NONE : i + 1;
        e->match = SEARCH_NONE;
        if (e->is_call) {
            call_of_op[e->op] = i;
        } else {
            s->events[call_of_op[e->op]].match = i;
        }
    }
    s->events[s->head] = (struct search_event){
        .op = SEARCH_NONE,
        .prev = SEARCH_NONE,
        .next = n == 0 ? SEARCH_NONE : 0,
        .match = SEARCH_NONE,
        .is_call = false,
    };
}

static int search_events_build(struct search *s)
{
    size_t n_max = 2 * s->key->count;
    struct search_sort_key *keys;
    size_t *call_of_op;
    size_t n;
    int rc = COMMON_ENOMEM;

    keys = common_malloc_array(n_max + 1, sizeof(*keys));
    if (keys == NULL) {
        goto out;
    }
    call_of_op = common_malloc_array(s->key->count + 1, sizeof(*call_of_op));
    if (call_of_op == NULL) {
        goto out_free_keys;
    }
    n = search_sort_keys_fill(s, keys);
    qsort(keys, n, sizeof(*keys), search_sort_compare);
    s->events = common_malloc_array(n + 1, sizeof(*s->events));
    if (s->events == NULL) {
        goto out_free_call_of_op;
    }
    s->head = n;
    search_events_link(s, keys, n, call_of_op);
    rc = 0;
out_free_call_of_op:
    common_free(call_of_op);
out_free_keys:
    common_free(keys);
out:
    return rc;
}

void check__search_close(struct search *s)
{
    check__cache_close(&s->cache);
    common_free(s->events);
    common_free(s->bits);
    common_free(s->stack);
    common_free(s->best);
    common_free(s->plans);
    common_free(s->writers_left);
    common_free(s->observers_left);
}

/* Counts the required operations, and per value the writers and the
 * required observers. */
static int search_counts_init(struct search *s)
{
    size_t n = s->values.count;

    s->writers_left = common_calloc(n, sizeof(*s->writers_left));
    s->observers_left = common_calloc(n, sizeof(*s->observers_left));
    if (s->writers_left == NULL || s->observers_left == NULL) {
        return COMMON_ENOMEM;
    }
    s->state_id = s->values.initial_id;
    for (size_t op = 0; op < s->key->count; op++) {
        const struct check__plan *plan = &s->plans[op];

        if (plan->cls == CHECK__REQUIRED) {
            s->required++;
        }
        if (plan->cls != CHECK__DROPPED &&
            plan->write_id != CHECK__VALUE_NONE) {
            s->writers_left[plan->write_id]++;
        }
        if (plan->observe_id != CHECK__VALUE_NONE) {
            s->observers_left[plan->observe_id]++;
        }
    }
    return 0;
}

int check__search_init(struct search *s, const struct check__key *key,
                       const struct check__budget *budget, bool doom_far)
{
    size_t slots = key->count + 1;

    memset(s, 0, sizeof(*s));
    s->key = key;
    s->budget = budget;
    s->doom_far = doom_far;
    s->state = key->initial_value;
    s->words_count = (key->count + 63) / 64;
    check__cache_init(&s->cache, budget->memory_bytes_max);
    s->bits = common_calloc(s->words_count + 1, sizeof(*s->bits));
    s->stack = common_malloc_array(slots, sizeof(*s->stack));
    s->best = common_malloc_array(slots, sizeof(*s->best));
    s->plans = common_malloc_array(slots, sizeof(*s->plans));
    if (s->bits == NULL || s->stack == NULL || s->best == NULL ||
        s->plans == NULL || check__plan_build(key, s->plans, &s->values) != 0 ||
        search_counts_init(s) != 0 || search_events_build(s) != 0) {
        check__search_close(s);
        return COMMON_ENOMEM;
    }
    return 0;
}

static void search_bit_flip(struct search *s, size_t op)
{
    s->bits[op / 64] ^= UINT64_C(1) << (op % 64);
    s->bits_hash ^= check__zobrist(op);
}

/* Takes event e out of the list; its own links stay, for unlinking
 * (Knuth's dancing links). */
static void search_event_remove(struct search *s, size_t e)
{
    struct search_event *ev = &s->events[e];

    s->events[ev->prev].next = ev->next;
    if (ev->next != SEARCH_NONE) {
        s->events[ev->next].prev = ev->prev;
    }
}

static void search_event_restore(struct search *s, size_t e)
{
    struct search_event *ev = &s->events[e];

    s->events[ev->prev].next = e;
    if (ev->next != SEARCH_NONE) {
        s->events[ev->next].prev = e;
    }
}

/* Whether call event e is a GATED write interchangeable with the others
 * (plan.c, rule 2). */
static bool search_is_interchangeable(const struct search *s, size_t e)
{
    return s->plans[s->events[e].op].is_interchangeable;
}

/* Whether the GATED operation of call event gated may be placed now
 * (plan.c, rule 2): only while a completed, failed cas that could come
 * next (its call is before the first return in the list) expects the
 * current value. Interchangeable gated writes serve every operation
 * equally (each is legal in any state, and no operation can tell their
 * values apart), so only the first one that could come next, the earliest
 * invoked, is tried: an exchange argument turns any linearization into one
 * that uses them in invocation order. Other gated operations are each
 * tried. */
static bool search_is_gate_open(const struct search *s, size_t gated)
{
    bool is_first = true;
    bool is_needed = false;

    for (size_t e = s->events[s->head].next;
         e != SEARCH_NONE && s->events[e].is_call; e = s->events[e].next) {
        const struct check_op *o = check__search_op(s, s->events[e].op);

        if (e < gated && search_is_interchangeable(s, e) &&
            search_is_interchangeable(s, gated)) {
            is_first = false;
        }
        if (o->kind == CHECK_CAS && o->outcome == CHECK_OUTCOME_OK &&
            !o->cas_succeeded && o->expected == s->state) {
            is_needed = true;
        }
    }
    return is_first && is_needed;
}

/* Whether placing the operation of call event placing, which changes the
 * value, would doom a required operation: one that must still see the
 * current value, which nothing left can write again. That branch could
 * only end at the doomed operation's return, so it is cut here, before it
 * is explored; this keeps wrong orders of concurrent writes from being
 * explored to the end.
 *
 * When the search runs for an explanation (doom_far false), only doomed
 * operations that could come next (their call is before the first
 * return) count: cutting at far ones stops the search at the first
 * overwrite of a stale read's value instead of at the stale read, and
 * the longest prefix would no longer lead to the culprit. */
static bool search_is_dooming(const struct search *s, size_t placing)
{
    size_t id = s->state_id;
    size_t observers = s->observers_left[id];

    if (s->plans[s->events[placing].op].observe_id == id) {
        observers--;
    }
    if (s->writers_left[id] > 0 || observers == 0) {
        return false;
    }
    if (s->doom_far) {
        return true;
    }
    for (size_t e = s->events[s->head].next;
         e != SEARCH_NONE && s->events[e].is_call; e = s->events[e].next) {
        const struct check__plan *plan = &s->plans[s->events[e].op];

        if (e != placing && plan->observe_id == id &&
            plan->cls == CHECK__REQUIRED) {
            return true;
        }
    }
    return false;
}

/* Updates the per-value counts for placing (delta -1) or unplacing (+1)
 * op. */
static void search_counts_update(struct search *s, size_t op, size_t delta)
{
    const struct check__plan *plan = &s->plans[op];

    if (plan->write_id != CHECK__VALUE_NONE) {
        s->writers_left[plan->write_id] += delta;
    }
    if (plan->observe_id != CHECK__VALUE_NONE) {
        s->observers_left[plan->observe_id] += delta;
    }
}

/* Tries to place the operation of call event e next. Returns 1 if placed,
 * 0 if illegal or already explored, COMMON_ETOOBIG if the memo is full, or
 * COMMON_ENOMEM. */
static int search_place(struct search *s, size_t e, bool forced)
{
    const struct search_event *ev = &s->events[e];
    int64_t next;
    int rc;

    if (!check__model_step(check__search_op(s, ev->op), s->state, &next)) {
        return 0;
    }
    if (s->plans[ev->op].cls == CHECK__GATED && !search_is_gate_open(s, e)) {
        return 0;
    }
    if (next != s->state && search_is_dooming(s, e)) {
        return 0;
    }
    search_bit_flip(s, ev->op);
    rc = check__cache_add(&s->cache, s->bits, s->words_count, s->bits_hash,
                          next);
    if (rc != 1) {
        search_bit_flip(s, ev->op);
        return rc;
    }
    ASSERT(s->depth < s->key->count);
    s->stack[s->depth++] =
        (struct search_frame){e, s->state, s->state_id, forced};
    if (next != s->state) {
        ASSERT(s->plans[ev->op].write_id != CHECK__VALUE_NONE);
        s->state_id = s->plans[ev->op].write_id;
    }
    s->state = next;
    search_counts_update(s, ev->op, (size_t)-1);
    search_event_remove(s, e);
    if (ev->match != SEARCH_NONE) {
        search_event_remove(s, ev->match);
        ASSERT(s->required > 0);
        s->required--;
    }
    return 1;
}

/* Undoes the last placement; returns the event to continue from, and
 * whether the placement was forced in *forced. */
static size_t search_backtrack(struct search *s, bool *forced)
{
    struct search_frame frame;
    const struct search_event *ev;

    ASSERT(s->depth > 0);
    frame = s->stack[--s->depth];
    *forced = frame.forced;
    ev = &s->events[frame.call];
    s->state = frame.state;
    s->state_id = frame.state_id;
    search_counts_update(s, ev->op, 1);
    search_bit_flip(s, ev->op);
    if (ev->match != SEARCH_NONE) {
        search_event_restore(s, ev->match);
        s->required++;
    }
    search_event_restore(s, frame.call);
    if (s->depth < s->low_water) {
        s->low_water = s->depth;
    }
    return ev->next;
}

/* Called at a dead end: keeps the stack if it places more required
 * operations than any dead end before. Optional placements do not count:
 * a branch that reached one step further only by placing an unknown write
 * is rarely the one that shows the culprit. */
static void search_record_best(struct search *s)
{
    if (s->has_best && s->required >= s->best_required) {
        return;
    }
    for (size_t i = s->low_water; i < s->depth; i++) {
        s->best[i] = s->events[s->stack[i].call].op;
    }
    s->best_count = s->depth;
    s->best_required = s->required;
    s->best_state = s->state;
    s->best_state_id = s->state_id;
    s->has_best = true;
    s->low_water = s->depth;
}

/* Whether a budget other than memory has run out; sets *exhausted. */
static bool search_is_over_budget(const struct search *s,
                                  enum check_budget *exhausted)
{
    if (s->steps >= s->budget->steps_max) {
        *exhausted = CHECK_BUDGET_STEPS;
        return true;
    }
    if (s->steps % SEARCH_CLOCK_STEPS == 0 &&
        check__now_ns() > s->budget->deadline_ns) {
        *exhausted = CHECK_BUDGET_TIME;
        return true;
    }
    return false;
}

/* Whether op leaves the value as it is: a read or a completed, failed
 * cas. */
static bool search_is_read_only(const struct check_op *op)
{
    return op->kind == CHECK_READ ||
           (op->kind == CHECK_CAS && op->outcome == CHECK_OUTCOME_OK &&
            !op->cas_succeeded);
}

enum search_forced {
    SEARCH_FORCED_NONE = 0,   /* no read-only operation is legal now */
    SEARCH_FORCED_PLACED = 1, /* one was placed */
    SEARCH_FORCED_DEAD = 2,   /* one is legal, and leads nowhere */
};

/* A partial-order reduction that keeps the memo from filling with every
 * subset of concurrent reads: a read-only operation that could come next
 * and is legal now may always be placed now. Any linearization from here
 * places it later; moving it forward keeps every operation legal (it does
 * not change the value) and respects real time (every operation that
 * completed before its invocation is already placed, because its call is
 * before the first return). So the search places it without trying the
 * alternatives, and a dead end after it is a dead end here too. Returns
 * an enum search_forced or a negative error. */
static int search_place_forced(struct search *s)
{
    for (size_t e = s->events[s->head].next;
         e != SEARCH_NONE && s->events[e].is_call; e = s->events[e].next) {
        const struct check_op *op = check__search_op(s, s->events[e].op);
        int64_t next;
        int rc;

        if (!search_is_read_only(op) ||
            !check__model_step(op, s->state, &next)) {
            continue;
        }
        rc = search_place(s, e, true);
        if (rc < 0) {
            return rc;
        }
        return rc == 1 ? SEARCH_FORCED_PLACED : SEARCH_FORCED_DEAD;
    }
    return SEARCH_FORCED_NONE;
}

/* At a dead end: backtracks past every forced placement and the choice
 * before them. Returns the event to continue from, or SEARCH_NONE when
 * nothing is left to try (not linearizable). */
static size_t search_dead_end(struct search *s)
{
    bool forced = true;
    size_t e = SEARCH_NONE;

    while (forced) {
        if (s->depth == 0) {
            return SEARCH_NONE;
        }
        e = search_backtrack(s, &forced);
    }
    return e;
}

/* What one step of the search did. */
enum search_step {
    SEARCH_STEP_SCAN = 0,    /* the ordinary scan goes on at the event */
    SEARCH_STEP_CHANGED = 1, /* an operation was placed */
    SEARCH_STEP_REFUTED = 2, /* nothing is left to try */
};

/* One step at a new configuration: the forced placement, if any. Sets *e
 * to where the ordinary scan continues. Returns an enum search_step or a
 * negative error. */
static int search_step_fresh(struct search *s, size_t *e)
{
    int rc = search_place_forced(s);

    if (rc == SEARCH_FORCED_PLACED) {
        return SEARCH_STEP_CHANGED;
    }
    if (rc == SEARCH_FORCED_DEAD) {
        *e = search_dead_end(s);
        return *e == SEARCH_NONE ? SEARCH_STEP_REFUTED : SEARCH_STEP_SCAN;
    }
    *e = s->events[s->head].next;
    return rc < 0 ? rc : SEARCH_STEP_SCAN;
}

/* One step of the ordinary scan at event *e. Returns an enum search_step
 * or a negative error. */
static int search_step_scan(struct search *s, size_t *e)
{
    int rc;

    ASSERT(*e != SEARCH_NONE);
    if (!s->events[*e].is_call) {
        search_record_best(s);
        *e = search_dead_end(s);
        return *e == SEARCH_NONE ? SEARCH_STEP_REFUTED : SEARCH_STEP_SCAN;
    }
    rc = search_place(s, *e, false);
    if (rc == 0) {
        *e = s->events[*e].next;
        return SEARCH_STEP_SCAN;
    }
    return rc < 0 ? rc : SEARCH_STEP_CHANGED;
}

int check__search_run(struct search *s, enum check_budget *exhausted)
{
    bool fresh = true;
    size_t e = SEARCH_NONE;
    int rc;

    while (s->required > 0) {
        if (search_is_over_budget(s, exhausted)) {
            return CHECK_UNKNOWN;
        }
        s->steps++;
        rc = fresh ? search_step_fresh(s, &e) : search_step_scan(s, &e);
        if (rc == COMMON_ETOOBIG) {
            *exhausted = CHECK_BUDGET_MEMORY;
            return CHECK_UNKNOWN;
        }
        if (rc < 0) {
            return rc;
        }
        if (rc == SEARCH_STEP_REFUTED) {
            return CHECK_NOT_LINEARIZABLE;
        }
        fresh = rc == SEARCH_STEP_CHANGED;
    }
    return CHECK_LINEARIZABLE;
}
