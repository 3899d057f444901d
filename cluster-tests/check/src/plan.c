/* SPDX-License-Identifier: MIT
 *
 * plan.c: what each operation of a key obliges the search to do, worked
 * out before the search so that unknown-outcome writes do not make it
 * exponential.
 *
 * An unknown write or cas has no completion: left as it is, it "floats"
 * (the search may place it at any later point, or never), and k floating
 * operations multiply the configurations a failing search must exhaust by
 * up to 2^k. Two rules, both keeping the verdict exact, pin most of them:
 *
 *   1. Observed (chaos.md §3.3's "optional tightening", etcd's
 *      patch_history.go): if the value v it writes is written by no other
 *      operation and differs from the initial value, and a completed read
 *      returned v or a completed cas succeeded expecting v, it took effect
 *      before that observer completed. It becomes required, with the
 *      earliest such completion as its completion.
 *
 *   2. Unobserved: if no completed read returns v and no cas (completed
 *      and successful, or unknown) expects v, placing it can only matter
 *      by making a completed, failed cas fail: in any linearization it can
 *      be moved later, to just before the first failed cas that expects
 *      the value it overwrote, or removed when there is none (nothing
 *      between it and the next state change can depend on v). So it is
 *      GATED: the search places it only while some failed cas that could
 *      come next expects the current value. With no failed cas on the key
 *      at all it is DROPPED. A gated write whose value is moreover unique,
 *      not the initial value and not expected even by a failed cas is
 *      INTERCHANGEABLE with every other such write: no operation can tell
 *      their values apart, so the search uses them in invocation order.
 *
 * Everything else (a value observed only by unknown cas, or written twice)
 * stays OPTIONAL and floats.
 *
 * It also numbers the key's values densely (the initial value included),
 * and records for each operation the value it writes and the value it
 * observes, for the search's doomed-observer pruning.
 */
#include "check_int.h"

#include <stdlib.h>

enum plan_role {
    PLAN_WRITER = 0,   /* writes the value */
    PLAN_OBSERVED = 1, /* a completed read or successful cas saw it */
    PLAN_EXPECTED = 2, /* an unknown cas expects it */
    PLAN_INITIAL = 3,  /* the key's initial value */
    PLAN_FAILED = 4,   /* a completed, failed cas expected it */
};

struct plan_record {
    int64_t value; /* the value */
    int role;      /* enum plan_role */
    size_t op;     /* local operation index */
};

struct plan_value {
    size_t writers;   /* operations that write the value */
    bool is_observed; /* by a completed read or successful cas */
    bool is_expected; /* by an unknown cas */
    bool is_failed;   /* expected by a completed, failed cas */
    int64_t seen_ns;  /* the earliest completion of an observer */
};

static int plan_record_compare(const void *a, const void *b)
{
    const struct plan_record *x = a;
    const struct plan_record *y = b;

    if (x->value != y->value) {
        return x->value < y->value ? -1 : 1;
    }
    if (x->role != y->role) {
        return x->role - y->role;
    }
    return x->op < y->op ? -1 : x->op > y->op;
}

/* Sets op's default plan and appends its records; returns how many. */
static size_t plan_op_records(const struct check_op *o, size_t op,
                              struct check__plan *plan,
                              struct plan_record *records, bool *failed_cas)
{
    bool known = o->outcome == CHECK_OUTCOME_OK;
    size_t n = 0;

    plan->cls = known ? CHECK__REQUIRED : CHECK__OPTIONAL;
    plan->return_ns = known ? o->complete_ns : CHECK_TIME_NONE;
    plan->write_id = CHECK__VALUE_NONE;
    plan->observe_id = CHECK__VALUE_NONE;
    plan->is_interchangeable = false;
    if (o->kind == CHECK_READ) {
        records[n++] = (struct plan_record){o->value, PLAN_OBSERVED, op};
        return n;
    }
    if (o->kind == CHECK_CAS && known && !o->cas_succeeded) {
        *failed_cas = true;
        records[n++] = (struct plan_record){o->expected, PLAN_FAILED, op};
        return n;
    }
    records[n++] = (struct plan_record){o->value, PLAN_WRITER, op};
    if (o->kind == CHECK_CAS && !known) {
        records[n++] = (struct plan_record){o->expected, PLAN_EXPECTED, op};
    } else if (o->kind == CHECK_CAS) {
        records[n++] = (struct plan_record){o->expected, PLAN_OBSERVED, op};
    }
    return n;
}

/* Summarizes the records of one value, from first to end. */
static struct plan_value plan_value_summary(const struct check__key *key,
                                            const struct plan_record *records,
                                            size_t first, size_t end)
{
    struct plan_value v = {0, false, false, false, INT64_MAX};

    for (size_t i = first; i < end; i++) {
        const struct check_op *o;

        if (records[i].role == PLAN_INITIAL) {
            continue;
        }
        if (records[i].role == PLAN_FAILED) {
            v.is_failed = true;
            continue;
        }
        o = &key->ops[key->index[records[i].op]];
        if (records[i].role == PLAN_WRITER) {
            v.writers++;
        } else if (records[i].role == PLAN_EXPECTED) {
            v.is_expected = true;
        } else {
            v.is_observed = true;
            v.seen_ns = o->complete_ns < v.seen_ns ? o->complete_ns : v.seen_ns;
        }
    }
    return v;
}

/* Applies rules 1 and 2 to the unknown writers of one value. */
static void plan_value_apply(const struct check__key *key,
                             const struct plan_record *records, size_t first,
                             size_t end, bool failed_cas,
                             struct check__plan *plans)
{
    struct plan_value v = plan_value_summary(key, records, first, end);
    int64_t value = records[first].value;

    for (size_t i = first; i < end; i++) {
        const struct check_op *o;
        struct check__plan *plan;

        if (records[i].role != PLAN_WRITER) {
            continue;
        }
        o = &key->ops[key->index[records[i].op]];
        plan = &plans[records[i].op];
        if (o->outcome == CHECK_OUTCOME_OK) {
            continue;
        }
        if (v.writers == 1 && v.is_observed && value != key->initial_value) {
            plan->cls = CHECK__REQUIRED;
            plan->return_ns =
                v.seen_ns > o->invoke_ns ? v.seen_ns : o->invoke_ns;
        } else if (!v.is_observed && !v.is_expected) {
            plan->cls = failed_cas ? CHECK__GATED : CHECK__DROPPED;
            plan->is_interchangeable = o->kind == CHECK_WRITE &&
                                       v.writers == 1 && !v.is_failed &&
                                       value != key->initial_value;
        }
    }
}

/* Numbers the value of each group of records and stores it in the plans:
 * what each operation writes and observes. An unknown cas observes its
 * expected value only when rule 1 made it required (it must apply). */
static void plan_number(const struct plan_record *records, size_t n,
                        struct check__plan *plans, struct check__values *values)
{
    size_t id = 0;

    for (size_t i = 0; i < n; i++) {
        const struct plan_record *r = &records[i];

        if (i > 0 && r->value != records[i - 1].value) {
            id++;
        }
        if (r->role == PLAN_INITIAL) {
            values->initial_id = id;
        } else if (r->role == PLAN_WRITER) {
            plans[r->op].write_id = id;
        } else if (r->role == PLAN_OBSERVED ||
                   (r->role == PLAN_EXPECTED &&
                    plans[r->op].cls == CHECK__REQUIRED)) {
            plans[r->op].observe_id = id;
        }
    }
    values->count = id + 1;
}

int check__plan_build(const struct check__key *key, struct check__plan *plans,
                      struct check__values *values)
{
    struct plan_record *records;
    bool failed_cas = false;
    size_t n = 0;
    size_t end;

    records = common_malloc_array(2 * key->count + 1, sizeof(*records));
    if (records == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t op = 0; op < key->count; op++) {
        n += plan_op_records(&key->ops[key->index[op]], op, &plans[op],
                             records + n, &failed_cas);
    }
    records[n++] = (struct plan_record){key->initial_value, PLAN_INITIAL, 0};
    qsort(records, n, sizeof(*records), plan_record_compare);
    for (size_t first = 0; first < n; first = end) {
        for (end = first; end < n && records[end].value == records[first].value;
             end++) {
        }
        plan_value_apply(key, records, first, end, failed_cas, plans);
    }
    plan_number(records, n, plans, values);
    common_free(records);
    return 0;
}
