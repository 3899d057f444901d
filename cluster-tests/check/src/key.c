/* SPDX-License-Identifier: MIT
 *
 * key.c: check__search(), the verdict on one key and, for a violation,
 * its explanation (chaos.md §3.3, Porcupine's partial linearizations):
 * the longest linearizable prefix the search found, and the operations
 * none of which can come after it.
 *
 * The verdict comes from a search with every pruning on. One of them, the
 * far-doom pruning (search.c), refutes a stale read as soon as its value
 * is overwritten, long before the read itself, so the prefix it leaves
 * ends at that overwrite. For a prefix that ends at the culprit, the key
 * is searched again without it, within a small budget; if that search
 * does not finish, the first explanation stands (it still names the
 * doomed operation).
 */
#include "search.h"

#include <string.h>

/* The explanation search may take this many steps, or ten times what the
 * verdict took, whichever is more (but never more than steps_max): enough
 * for any history the verdict search found easy. */
#define KEY_EXPLAIN_STEPS_MIN ((uint64_t)1000000)

/* The first required operation not in the best prefix to reach its
 * deadline: the one the prefix cannot get past. */
static size_t key_blocking(const struct search *s, const bool *placed)
{
    size_t first = SEARCH_NONE;

    for (size_t op = 0; op < s->key->count; op++) {
        if (!placed[op] && s->plans[op].cls == CHECK__REQUIRED &&
            (first == SEARCH_NONE ||
             s->plans[op].return_ns < s->plans[first].return_ns)) {
            first = op;
        }
    }
    ASSERT(first != SEARCH_NONE);
    return first;
}

/* Whether, after the best prefix, nothing left can write its final value
 * again: then every required operation that must still see that value is
 * doomed, and the far-doom pruning (search.c) may have stopped the
 * prefix at the overwrite rather than at the doomed operation. */
static bool key_is_best_value_final(const struct search *s, const bool *placed)
{
    for (size_t op = 0; op < s->key->count; op++) {
        if (!placed[op] && s->plans[op].cls != CHECK__DROPPED &&
            s->plans[op].write_id == s->best_state_id) {
            return false;
        }
    }
    return true;
}

/* Whether op belongs in the explanation after the best prefix. */
static bool key_is_unplaced(const struct search *s, const bool *placed,
                            bool is_final, int64_t blocking_ns, size_t op)
{
    if (placed[op] || s->plans[op].cls != CHECK__REQUIRED) {
        return false;
    }
    return check__search_op(s, op)->invoke_ns <= blocking_ns ||
           (is_final && s->plans[op].observe_id == s->best_state_id);
}

/* Fills out's explanation of a violation: the best prefix, and the
 * required operations that could come after it (not in it, invoked no
 * later than the blocking operation's deadline), none of which leads
 * anywhere, plus the later ones that need a value gone for good.
 * Floating unknown-outcome operations are left out: they could come next
 * at any time, and listing them all would bury the culprit. */
static int key_explain(struct search *s, struct check__key_result *out)
{
    bool is_final;
    bool *placed = common_calloc(s->key->count + 1, sizeof(*placed));
    size_t *unplaced =
        common_malloc_array(s->key->count + 1, sizeof(*unplaced));
    size_t n = 0;

    if (placed == NULL || unplaced == NULL) {
        common_free(placed);
        common_free(unplaced);
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < s->best_count; i++) {
        placed[s->best[i]] = true;
    }
    out->blocking = key_blocking(s, placed);
    out->blocking_ns = s->plans[out->blocking].return_ns;
    is_final = key_is_best_value_final(s, placed);
    for (size_t op = 0; op < s->key->count; op++) {
        if (key_is_unplaced(s, placed, is_final, out->blocking_ns, op)) {
            unplaced[n++] = op;
        }
    }
    common_free(placed);
    out->unplaced = unplaced;
    out->unplaced_count = n;
    out->prefix = s->best;
    out->prefix_count = s->best_count;
    out->state = s->best_state;
    s->best = NULL;
    return 0;
}

/* Searches again, without the far-doom pruning, for a better
 * explanation; replaces out's if it finds one. The verdict cannot change
 * (both searches are exact), and that is asserted. */
static int key_explain_again(const struct check__key *key,
                             const struct check__budget *budget,
                             struct check__key_result *out)
{
    struct check__budget again = *budget;
    struct check__key_result better;
    enum check_budget exhausted;
    struct search s;
    int rc;

    again.steps_max = 10 * out->steps > KEY_EXPLAIN_STEPS_MIN
                          ? 10 * out->steps
                          : KEY_EXPLAIN_STEPS_MIN;
    if (again.steps_max > budget->steps_max) {
        again.steps_max = budget->steps_max;
    }
    rc = check__search_init(&s, key, &again, false);
    if (rc != 0) {
        return rc;
    }
    rc = check__search_run(&s, &exhausted);
    ASSERT(rc != CHECK_LINEARIZABLE);
    out->steps += s.steps;
    out->is_prefix_pruned = rc != CHECK_NOT_LINEARIZABLE;
    if (rc == CHECK_NOT_LINEARIZABLE) {
        memset(&better, 0, sizeof(better));
        rc = key_explain(&s, &better);
        if (rc == 0) {
            common_free(out->prefix);
            common_free(out->unplaced);
            better.result = CHECK_NOT_LINEARIZABLE;
            better.steps = out->steps;
            *out = better;
        }
    }
    check__search_close(&s);
    return rc < 0 ? rc : 0;
}

int check__search(const struct check__key *key,
                  const struct check__budget *budget,
                  struct check__key_result *out)
{
    enum check_budget exhausted = CHECK_BUDGET_NONE;
    struct check__key_result found;
    struct search s;
    int rc;

    ASSERT(key->count < SEARCH_NONE / 2);
    ASSERT(budget->steps_max > 0);
    rc = check__search_init(&s, key, budget, true);
    if (rc != 0) {
        return rc;
    }
    rc = check__search_run(&s, &exhausted);
    memset(&found, 0, sizeof(found));
    found.steps = s.steps;
    found.result = (enum check_result)rc;
    found.exhausted = exhausted;
    if (rc == CHECK_NOT_LINEARIZABLE) {
        rc = key_explain(&s, &found);
    }
    check__search_close(&s);
    if (rc == 0 && found.result == CHECK_NOT_LINEARIZABLE) {
        rc = key_explain_again(key, budget, &found);
    }
    if (rc < 0) {
        common_free(found.prefix);
        common_free(found.unplaced);
        return rc;
    }
    *out = found;
    return 0;
}
