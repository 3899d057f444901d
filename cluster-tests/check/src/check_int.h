/* SPDX-License-Identifier: MIT
 *
 * check_int.h: what the checker's source files share: the register model's
 * step function, the memo of explored configurations (cache.c) and the
 * per-key search (search.c) that check_linearizable() (linearizable.c)
 * runs on each key.
 */
#ifndef SINEW_CHECK_INT_H
#define SINEW_CHECK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "common.h"

/* The register model's transition (chaos.md §3.3): whether op may take
 * effect when the register holds state, and the value after it. A completed
 * read must return state; a write always applies; a completed cas must
 * agree with state on whether it matched. An unknown-outcome cas or write
 * is "legal" only when it changes the value: placing one that would change
 * nothing is the same as never placing it, which the search always may
 * (it has no completion), so skipping it prunes without losing anything. */
static inline bool check__model_step(const struct check_op *op, int64_t state,
                                     int64_t *next)
{
    bool unknown = op->outcome == CHECK_OUTCOME_UNKNOWN;

    *next = state;
    switch (op->kind) {
    case CHECK_READ:
        return op->value == state;
    case CHECK_WRITE:
        *next = op->value;
        return !unknown || op->value != state;
    case CHECK_CAS:
        if (unknown) {
            *next = op->value;
            return op->expected == state && op->value != state;
        }
        if (op->cas_succeeded) {
            *next = op->value;
            return op->expected == state;
        }
        return op->expected != state;
    }
    return false;
}

/* ------------------------------------------------------------------------
 * Memo: a set of (bitset of placed operations, register value) pairs.
 *
 * A bitset is stored in canonical form: the count of leading all-ones
 * words, then the words up to the last nonzero one. The search places
 * operations roughly in invocation order (the order of the bits), so the
 * stored part is about as wide as the concurrency, not the history. The
 * set is keyed by a Zobrist hash of the bitset (maintained by the caller
 * in O(1) per placed operation) mixed with the value; a hash hit is
 * confirmed by comparing the words, so the memo is exact.
 * ------------------------------------------------------------------------ */

struct check__cache_slot {
    uint64_t hash;   /* bitset hash mixed with state; 0 marks a free slot */
    int64_t state;   /* register value */
    size_t offset;   /* first stored word in the cache's words */
    uint32_t lo;     /* leading all-ones words not stored */
    uint32_t length; /* words stored */
};

struct check__cache {
    struct check__cache_slot *slots; /* owned; capacity entries */
    size_t capacity;                 /* a power of two, or 0 */
    size_t count;                    /* occupied slots */
    uint64_t *words;                 /* owned; stored bitset words */
    size_t words_count;              /* words in use */
    size_t words_capacity;           /* words allocated */
    size_t bytes_max;                /* slots + words may not pass this */
};

void check__cache_init(struct check__cache *cache, size_t bytes_max);
void check__cache_close(struct check__cache *cache);

/* Adds (bits, state), where bits has words_count words and bits_hash is its
 * Zobrist hash. Returns 1 if added, 0 if already present, COMMON_ETOOBIG if
 * the memo would pass bytes_max, or COMMON_ENOMEM; on errors the memo is
 * unchanged. */
int check__cache_add(struct check__cache *cache, const uint64_t *bits,
                     size_t words_count, uint64_t bits_hash, int64_t state);

/* The random 64-bit word that stands for operation index in bitset
 * hashes (splitmix64 of the index: Steele, Lea and Flood, OOPSLA 2014). */
uint64_t check__zobrist(size_t index);

/* ------------------------------------------------------------------------
 * Per-key search
 * ------------------------------------------------------------------------ */

/* One key's sub-history: the operations the search must consider. */
struct check__key {
    const struct check_op *ops; /* the caller's whole array; borrowed */
    const size_t *index;        /* count indexes into ops, by invocation */
    size_t count;               /* operations on this key */
    int64_t key;                /* the key */
    int64_t initial_value;      /* its value before the history */
};

struct check__budget {
    uint64_t steps_max;      /* per key */
    size_t memory_bytes_max; /* per key */
    int64_t deadline_ns;     /* CLOCK_MONOTONIC time the check must end */
};

/* What the search of one key found. For CHECK_NOT_LINEARIZABLE, prefix
 * holds the longest linearizable prefix, in order, and unplaced (in
 * invocation order) the operations that could come next after it, all as
 * indexes into key->index (not into ops); state is the value after the
 * prefix, blocking the required operation that must take effect first,
 * by blocking_ns. Both arrays are owned (common_free). */
struct check__key_result {
    enum check_result result;    /* the key's verdict */
    enum check_budget exhausted; /* UNKNOWN: which budget */
    uint64_t steps;              /* steps spent */
    size_t *prefix;              /* NOT: owned */
    size_t prefix_count;         /* entries in prefix */
    int64_t state;               /* NOT: value after prefix */
    size_t *unplaced;            /* NOT: owned */
    size_t unplaced_count;       /* entries in unplaced, >= 1 */
    size_t blocking;             /* NOT: also in unplaced */
    int64_t blocking_ns;         /* NOT: when it must have taken effect */
    bool is_prefix_pruned;       /* NOT: the explanation search gave up */
};

/* What the search must do with an operation (plan.c explains the rules). */
enum check__class {
    CHECK__REQUIRED = 0, /* must be placed by return_ns */
    CHECK__OPTIONAL = 1, /* may be placed whenever legal, or never */
    CHECK__GATED = 2,    /* only while a failed cas expects the value */
    CHECK__DROPPED = 3,  /* can never matter */
};

/* Values are numbered densely per key (0 .. values_count - 1) so the
 * search can count, per value, the operations that could still write it
 * and those that still need to see it. */
#define CHECK__VALUE_NONE SIZE_MAX

struct check__plan {
    enum check__class cls;   /* see above */
    int64_t return_ns;       /* REQUIRED: the latest point of effect */
    size_t write_id;         /* the value it writes, or CHECK__VALUE_NONE */
    size_t observe_id;       /* the value that must be current when it is
                                placed (a completed read's result, a
                                succeeding cas's expected value), or NONE */
    bool is_interchangeable; /* GATED: see plan.c, rule 2 */
};

/* The numbering of a key's values. */
struct check__values {
    size_t count;      /* distinct values */
    size_t initial_id; /* the key's initial value */
};

/* Fills plans (key->count entries) and *values for key (borrowed).
 * Returns 0 or COMMON_ENOMEM. */
int check__plan_build(const struct check__key *key, struct check__plan *plans,
                      struct check__values *values);

/* Searches key (borrowed) for a linearization within budget (borrowed).
 * Returns 0 and fills *out, or COMMON_ENOMEM. */
int check__search(const struct check__key *key,
                  const struct check__budget *budget,
                  struct check__key_result *out);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t check__now_ns(void);

#endif /* SINEW_CHECK_INT_H */
