/* SPDX-License-Identifier: MIT
 *
 * linearizable.c: check_linearizable(), the checker's entry point. It
 * validates the history, drops what constrains nothing (unknown-outcome
 * reads, chaos.md §3.3), splits the rest by key (linearizability is local:
 * Herlihy and Wing, TOPLAS 1990, §3.5), searches each key in ascending key
 * order (search.c), and turns the first violation into a verdict that can
 * explain itself: the longest linearizable prefix and the operations that
 * could not come after it.
 */
#include "check_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* An operation to check, as a sort key: by key, then invocation, then its
 * index in the caller's array, which breaks every tie. */
struct linearizable_entry {
    int64_t key;       /* the register */
    int64_t invoke_ns; /* invocation time */
    size_t index;      /* into the caller's ops */
};

void check_options_init(struct check_options *options)
{
    options->initial_value = CHECK_ABSENT;
    options->steps_max = CHECK_STEPS_MAX_DEFAULT;
    options->time_ms_max = CHECK_TIME_MS_MAX_DEFAULT;
    options->memory_bytes_max = CHECK_MEMORY_BYTES_MAX_DEFAULT;
}

int check_op_validate(const struct check_op *op)
{
    if (op->kind != CHECK_READ && op->kind != CHECK_WRITE &&
        op->kind != CHECK_CAS) {
        return -EINVAL;
    }
    if (op->outcome == CHECK_OUTCOME_UNKNOWN) {
        return 0;
    }
    if (op->outcome != CHECK_OUTCOME_OK) {
        return -EINVAL;
    }
    return op->complete_ns >= op->invoke_ns ? 0 : -EINVAL;
}

const char *check_result_name(enum check_result result)
{
    switch (result) {
    case CHECK_LINEARIZABLE:
        return "linearizable";
    case CHECK_NOT_LINEARIZABLE:
        return "not linearizable";
    case CHECK_UNKNOWN:
        return "unknown";
    }
    return "?";
}

void check_verdict_close(struct check_verdict *verdict)
{
    common_free(verdict->prefix);
    common_free(verdict->unplaced);
    verdict->prefix = NULL;
    verdict->unplaced = NULL;
    verdict->prefix_count = 0;
    verdict->unplaced_count = 0;
}

static int linearizable_entry_compare(const void *a, const void *b)
{
    const struct linearizable_entry *x = a;
    const struct linearizable_entry *y = b;

    if (x->key != y->key) {
        return x->key < y->key ? -1 : 1;
    }
    if (x->invoke_ns != y->invoke_ns) {
        return x->invoke_ns < y->invoke_ns ? -1 : 1;
    }
    if (x->index != y->index) {
        return x->index < y->index ? -1 : 1;
    }
    return 0;
}

/* Validates options and ops; 0 or -EINVAL. */
static int linearizable_validate(const struct check_op *ops, size_t count,
                                 const struct check_options *options)
{
    if (options->steps_max == 0 || options->time_ms_max == 0 ||
        options->memory_bytes_max == 0 || count > CHECK_OPS_MAX) {
        return -EINVAL;
    }
    for (size_t i = 0; i < count; i++) {
        if (check_op_validate(&ops[i]) != 0) {
            return -EINVAL;
        }
    }
    return 0;
}

/* Returns the indexes of the operations that constrain the history (all
 * but unknown-outcome reads) sorted by (key, invocation, index), and their
 * count; NULL when out of memory. */
static size_t *linearizable_order(const struct check_op *ops, size_t count,
                                  size_t *order_count)
{
    struct linearizable_entry *entries;
    size_t *order;
    size_t n = 0;

    entries = common_malloc_array(count + 1, sizeof(*entries));
    order = common_malloc_array(count + 1, sizeof(*order));
    if (entries == NULL || order == NULL) {
        common_free(entries);
        common_free(order);
        return NULL;
    }
    for (size_t i = 0; i < count; i++) {
        if (ops[i].kind == CHECK_READ &&
            ops[i].outcome == CHECK_OUTCOME_UNKNOWN) {
            continue;
        }
        entries[n++] =
            (struct linearizable_entry){ops[i].key, ops[i].invoke_ns, i};
    }
    qsort(entries, n, sizeof(*entries), linearizable_entry_compare);
    for (size_t i = 0; i < n; i++) {
        order[i] = entries[i].index;
    }
    common_free(entries);
    *order_count = n;
    return order;
}

static int64_t linearizable_deadline_ns(uint64_t time_ms_max)
{
    int64_t now = check__now_ns();
    uint64_t room_ms = (uint64_t)(INT64_MAX - now) / 1000000;

    if (time_ms_max >= room_ms) {
        return INT64_MAX;
    }
    return now + (int64_t)time_ms_max * 1000000;
}

/* Fills the verdict for a violation on key. */
static int linearizable_violation(const struct check__key *key,
                                  const struct check__key_result *found,
                                  struct check_verdict *v)
{
    v->result = CHECK_NOT_LINEARIZABLE;
    v->key = key->key;
    v->exhausted = CHECK_BUDGET_NONE;
    v->key_ops_count = key->count;
    v->state = found->state;
    v->prefix =
        common_malloc_array(found->prefix_count + 1, sizeof(*v->prefix));
    if (v->prefix == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < found->prefix_count; i++) {
        v->prefix[i] = key->index[found->prefix[i]];
    }
    v->prefix_count = found->prefix_count;
    v->unplaced =
        common_malloc_array(found->unplaced_count + 1, sizeof(*v->unplaced));
    if (v->unplaced == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < found->unplaced_count; i++) {
        v->unplaced[i] = key->index[found->unplaced[i]];
    }
    v->unplaced_count = found->unplaced_count;
    v->blocking = key->index[found->blocking];
    v->blocking_ns = found->blocking_ns;
    v->is_prefix_pruned = found->is_prefix_pruned;
    return 0;
}

/* Searches one key and folds its result into v. Returns 0, 1 to stop (a
 * violation), or a negative error. */
static int linearizable_key(const struct check__key *key,
                            const struct check__budget *budget,
                            struct check_verdict *v)
{
    struct check__key_result found;
    int rc;

    rc = check__search(key, budget, &found);
    if (rc != 0) {
        return rc;
    }
    v->steps += found.steps;
    v->keys_checked++;
    if (found.result == CHECK_UNKNOWN) {
        if (v->keys_undecided++ == 0) {
            v->result = CHECK_UNKNOWN;
            v->key = key->key;
            v->exhausted = found.exhausted;
        }
        return 0;
    }
    if (found.result == CHECK_LINEARIZABLE) {
        return 0;
    }
    rc = linearizable_violation(key, &found, v);
    common_free(found.prefix);
    common_free(found.unplaced);
    return rc == 0 ? 1 : rc;
}

/* Counts the distinct keys of the sorted order. */
static size_t linearizable_keys_count(const struct check_op *ops,
                                      const size_t *order, size_t n)
{
    size_t keys = 0;

    for (size_t i = 0; i < n; i++) {
        if (i == 0 || ops[order[i]].key != ops[order[i - 1]].key) {
            keys++;
        }
    }
    return keys;
}

/* Runs the search over every key group of order; fills v. */
static int linearizable_keys(const struct check_op *ops, const size_t *order,
                             size_t n, const struct check_options *options,
                             struct check_verdict *v)
{
    struct check__budget budget = {
        .steps_max = options->steps_max,
        .memory_bytes_max = options->memory_bytes_max,
        .deadline_ns = linearizable_deadline_ns(options->time_ms_max),
    };
    size_t end;
    int rc;

    v->keys_count = linearizable_keys_count(ops, order, n);
    for (size_t start = 0; start < n; start = end) {
        struct check__key key = {
            .ops = ops,
            .index = order + start,
            .key = ops[order[start]].key,
            .initial_value = options->initial_value,
        };

        for (end = start; end < n && ops[order[end]].key == key.key; end++) {
        }
        key.count = end - start;
        rc = linearizable_key(&key, &budget, v);
        if (rc != 0) {
            return rc < 0 ? rc : 0;
        }
    }
    return 0;
}

int check_linearizable(const struct check_op *ops, size_t count,
                       const struct check_options *options,
                       struct check_verdict *out)
{
    struct check_options defaults;
    struct check_verdict v;
    size_t *order;
    size_t n = 0;
    int rc;

    ASSERT(ops != NULL || count == 0);
    ASSERT(out != NULL);
    if (options == NULL) {
        check_options_init(&defaults);
        options = &defaults;
    }
    rc = linearizable_validate(ops, count, options);
    if (rc != 0) {
        return rc;
    }
    order = linearizable_order(ops, count, &n);
    if (order == NULL) {
        return COMMON_ENOMEM;
    }
    memset(&v, 0, sizeof(v));
    v.result = CHECK_LINEARIZABLE;
    rc = linearizable_keys(ops, order, n, options, &v);
    common_free(order);
    if (rc != 0) {
        check_verdict_close(&v);
        return rc;
    }
    *out = v;
    return 0;
}
