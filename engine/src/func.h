/* SPDX-License-Identifier: MIT
 *
 * func.h: SQLite's built-in scalar and aggregate functions, and the LIKE
 * and GLOB matchers, over struct engine_value (value.h).
 *
 * Each function behaves as SQLite 3.40's (lang_corefunc.html,
 * lang_aggfunc.html, func.c), value for value and type for type; the
 * differential tests hold them to it. The executor calls a scalar function
 * once per row of a batch, and an aggregate's step once per row of a group.
 * DISTINCT and FILTER are the executor's work: a step sees only the rows
 * that pass them.
 *
 * Errors: a function returns 0, or a negative code with a message (SQLite's
 * words, e.g. "integer overflow", "string or blob too big") written into
 * ctx->errmsg.
 */
#ifndef SINEW_ENGINE_FUNC_H
#define SINEW_ENGINE_FUNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "value.h"

/* What a function may need besides its arguments. */
struct engine_func_context {
    struct engine_arena *arena;      /* where results' bytes go */
    enum engine_collation collation; /* of the arguments (min, max, ...) */
    int64_t changes;                 /* for changes() */
    int64_t total_changes;           /* for total_changes() */
    int64_t last_insert_rowid;       /* for last_insert_rowid() */
    uint64_t *random_state;          /* for random(), randomblob(); advanced */
    /* 'now' of the running step as a julian day times 86400000 (date.c's
     * iJD), read from the clock by its first use and kept until the next
     * engine_step() sets it back to 0 (SQLite: sqlite3StmtCurrentTime);
     * NULL: every use reads the clock. */
    int64_t *now_jd_ms;
    char *errmsg; /* room for errmsg_size bytes */
    size_t errmsg_size;
    /* Set by min() and max() steps that kept their old value (SQLite's
     * sqlite3SkipAccumulatorLoad()): the row then does not become the one
     * whose values bare columns of an aggregate query show. */
    bool skip_accumulator_load;
};

typedef int (*engine_scalar_fn)(struct engine_func_context *ctx, int argc,
                                const struct engine_value *argv,
                                struct engine_value *out);

struct engine_scalar_def {
    const char *name; /* lower case */
    int arg_min;
    int arg_max;        /* -1: any number */
    bool deterministic; /* false for random(), changes(), ... */
    engine_scalar_fn fn;
};

struct engine_aggregate_def {
    const char *name; /* lower case */
    int arg_min;
    int arg_max;
    size_t state_size; /* bytes of state the executor provides per group */
    /* Sets up a zeroed state. */
    void (*init)(void *state);
    int (*step)(struct engine_func_context *ctx, void *state, int argc,
                const struct engine_value *argv);
    /* The result; may be called once. Bytes go to ctx->arena. */
    int (*final)(struct engine_func_context *ctx, void *state,
                 struct engine_value *out);
    /* Frees what the state owns (NULL if nothing). Called after final or
     * instead of it. */
    void (*destroy)(void *state);
    /* Optional (NULL if absent): the same effect as step() on each listed
     * row of a typed column, in order, as one tight loop: values[rows[i]]
     * for i < count (rows NULL: rows 0..count-1), skipping rows whose
     * nulls[] byte is set. For count, values NULL counts the rows
     * themselves (count(*)). These are the executor's fast path for
     * aggregates over INT64 and DOUBLE vectors. */
    void (*step_int64s)(void *state, const int64_t *values,
                        const uint8_t *nulls, const uint32_t *rows,
                        uint32_t count);
    void (*step_doubles)(void *state, const double *values,
                         const uint8_t *nulls, const uint32_t *rows,
                         uint32_t count);
    /* For window functions (func_window.c). inverse: undoes the step() of
     * the oldest row still in the state (SQLite's xInverse), so a sliding
     * frame costs one step and one inverse per row; NULL when there is
     * none (the frame is then aggregated afresh for each row).
     * final_keeps_state: final() leaves the state as it was and may be
     * called after every step (SQLite's xValue). */
    int (*inverse)(struct engine_func_context *ctx, void *state, int argc,
                   const struct engine_value *argv);
    bool final_keeps_state;
};

/* Looks a function up by name (case-insensitive, size bytes). Returns the
 * definition, or NULL when no function of that name exists. Whether argc
 * fits is checked with engine__func_arity_ok(). */
const struct engine_scalar_def *engine__scalar_lookup(const char *name,
                                                      size_t size);
const struct engine_aggregate_def *engine__aggregate_lookup(const char *name,
                                                            size_t size);

/* True if argc is within the definition's arity. */
bool engine__func_arity_ok(int arg_min, int arg_max, int argc);

/* x LIKE pattern [ESCAPE escape]: SQLite's patternCompare with '%' and '_',
 * ASCII case folding (case_sensitive false, the default), an escape
 * character (0 for none). Text is UTF-8: '_' matches one character. */
bool engine__like_match(const uint8_t *pattern, size_t pattern_size,
                        const uint8_t *text, size_t text_size, uint32_t escape,
                        bool case_sensitive);

/* x GLOB pattern: '*', '?', '[...]' with ranges and '^', case-sensitive. */
bool engine__glob_match(const uint8_t *pattern, size_t pattern_size,
                        const uint8_t *text, size_t text_size);

/* splitmix64 (Steele et al. 2014) over *state: random(), randomblob()
 * and the random rowids of a full table are deterministic given the
 * state (func_blob.c). */
uint64_t engine__random_next(uint64_t *state);

#endif /* SINEW_ENGINE_FUNC_H */
