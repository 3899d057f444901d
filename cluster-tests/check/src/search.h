/* SPDX-License-Identifier: MIT
 *
 * search.h: the state of one key's search, shared by search.c (the
 * search itself) and key.c (the verdict and its explanation).
 */
#ifndef SINEW_CHECK_SEARCH_H
#define SINEW_CHECK_SEARCH_H

#include "check_int.h"

/* No event: the end of the list, or a call without a return. */
#define SEARCH_NONE SIZE_MAX

/* The wall clock is read once per this many steps. */
#define SEARCH_CLOCK_STEPS 4096

struct search_event {
    size_t op;    /* local operation index (into key->index) */
    size_t prev;  /* list neighbours: event indexes, or the head */
    size_t next;  /* SEARCH_NONE at the end */
    size_t match; /* a call's return event, or SEARCH_NONE */
    bool is_call; /* call or return */
};

struct search_frame {
    size_t call;     /* the call event that was lifted */
    int64_t state;   /* the register value before it */
    size_t state_id; /* its number (check__values) */
    bool forced;     /* placed as the only choice (search_place_forced) */
};

/* The search of one key. events has events_count + 1 entries, the last
 * being the list head (a sentinel that is never lifted). The bitset and
 * bits_hash always describe exactly the operations on the stack. */
struct search {
    const struct check__key *key;       /* borrowed */
    const struct check__budget *budget; /* borrowed */
    struct check__plan *plans;          /* owned; one per operation */
    struct check__values values;        /* the numbering of values */
    size_t *writers_left;               /* owned; per value: unplaced ops
                                           that could write it */
    size_t *observers_left;             /* owned; per value: unplaced
                                           required ops that must see it */
    size_t state_id;                    /* the number of state */
    bool doom_far;                      /* see search_is_dooming() */
    struct search_event *events;        /* owned */
    size_t head;                        /* the sentinel's index */
    uint64_t *bits;                     /* owned; placed operations */
    size_t words_count;                 /* words in bits */
    uint64_t bits_hash;                 /* Zobrist hash of bits */
    struct search_frame *stack;         /* owned; key->count entries */
    size_t depth;                       /* frames on the stack */
    int64_t state;                      /* current register value */
    size_t required;                    /* required ops not placed */
    size_t best_required;               /* required ops left at best */
    struct check__cache cache;          /* the memo */
    size_t *best;                       /* owned; longest prefix found */
    size_t best_count;                  /* its length */
    int64_t best_state;                 /* value after it */
    size_t best_state_id;               /* its number */
    bool has_best;                      /* a dead end was recorded */
    size_t low_water;                   /* lowest depth since the copy */
    uint64_t steps;                     /* loop iterations */
};

static inline const struct check_op *check__search_op(const struct search *s,
                                                      size_t op)
{
    return &s->key->ops[s->key->index[op]];
}

/* Sets up the search of key (borrowed) within budget (borrowed), with the
 * far-doom pruning on or off (search_is_dooming() in search.c). Returns 0
 * or COMMON_ENOMEM. */
int check__search_init(struct search *s, const struct check__key *key,
                       const struct check__budget *budget, bool doom_far);

void check__search_close(struct search *s);

/* Runs the search: returns a verdict, with *exhausted set for
 * CHECK_UNKNOWN, or a negative error. */
int check__search_run(struct search *s, enum check_budget *exhausted);

#endif /* SINEW_CHECK_SEARCH_H */
