/* SPDX-License-Identifier: MIT
 *
 * expr.h: compiled expressions and their vectorized evaluation.
 *
 * The planner turns an AST expression into a tree of struct engine_expr
 * whose column references are resolved to input vector indexes, whose
 * functions are looked up, and whose affinity and collation are known
 * (SQLite's rules: a column carries its declared affinity and collation,
 * CAST its type's affinity, COLLATE its collation; datatype3 §4.2 decides
 * the conversions before a comparison).
 *
 * Evaluation works on a whole batch: each node computes its result for
 * every live row into its own result vector (columns and constants just
 * point at their data), typed kernels take INT64/DOUBLE vectors, and every
 * other case runs value.h's rules row by row, so results always equal
 * SQLite's.
 */
#ifndef SINEW_ENGINE_EXPR_H
#define SINEW_ENGINE_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ast.h"
#include "func.h"
#include "value.h"
#include "vector.h"

struct engine_exec;
struct engine_subquery;

enum engine_expr_op {
    ENGINE_EXPR_CONSTANT,  /* .constant */
    ENGINE_EXPR_PARAMETER, /* .parameter (1-based) */
    ENGINE_EXPR_COLUMN,    /* .column: input vector index */
    ENGINE_EXPR_NEGATE,
    ENGINE_EXPR_BIT_NOT,
    ENGINE_EXPR_NOT,
    ENGINE_EXPR_ARITH,   /* .arith; args[0] op args[1] */
    ENGINE_EXPR_CONCAT,  /* args[0] || args[1] */
    ENGINE_EXPR_COMPARE, /* .compare; args[0] op args[1] */
    ENGINE_EXPR_AND,
    ENGINE_EXPR_OR,
    ENGINE_EXPR_IS_NULL,
    ENGINE_EXPR_NOT_NULL,
    ENGINE_EXPR_CAST,     /* .cast_affinity */
    ENGINE_EXPR_CASE,     /* args: [operand] when then ... [else] */
    ENGINE_EXPR_LIKE,     /* .like; args: text, pattern, [escape] */
    ENGINE_EXPR_IN_LIST,  /* args[0] IN (args[1..]) */
    ENGINE_EXPR_IN_QUERY, /* args[0] IN (.subquery) */
    ENGINE_EXPR_SUBQUERY, /* scalar (.subquery) */
    ENGINE_EXPR_EXISTS,   /* EXISTS (.subquery) */
    ENGINE_EXPR_FUNCTION, /* .function(args) */
    ENGINE_EXPR_TRUTH,    /* args[0] IS [NOT] TRUE|FALSE: .truth, negated */
    ENGINE_EXPR_COALESCE, /* coalesce/ifnull(args), evaluated lazily */
    ENGINE_EXPR_RAISE,    /* RAISE(.raise, args[0]) in a trigger program */
    ENGINE_EXPR_OUTER,    /* .slot: a column of an enclosing query, as the
                             correlated subquery's current run sees it
                             (expr_outer.c) */
};

enum engine_compare_op {
    ENGINE_COMPARE_EQ,
    ENGINE_COMPARE_NE,
    ENGINE_COMPARE_LT,
    ENGINE_COMPARE_LE,
    ENGINE_COMPARE_GT,
    ENGINE_COMPARE_GE,
    ENGINE_COMPARE_IS,
    ENGINE_COMPARE_IS_NOT,
};

struct engine_expr {
    enum engine_expr_op op;
    enum engine_affinity affinity;   /* the expression's own affinity */
    bool has_affinity;               /* a column, CAST or subquery of one:
                                        SQLite's affinity > AFF_NONE (see
                                        engine__expr_compare_values) */
    bool set_has_affinity;           /* IN_QUERY: has_affinity of the
                                        subquery's column */
    enum engine_collation collation; /* for comparisons and sorting */
    bool has_collation;              /* set by COLLATE or a column */
    bool explicit_collation;         /* set by COLLATE */
    bool negated;                    /* NOT LIKE, NOT IN */
    bool has_case_operand;           /* CASE x WHEN ... */
    bool has_else;                   /* CASE ... ELSE */
    bool is_condition;               /* AND/OR deciding a jump: the right
                                        side only runs where needed */
    bool null_decides;               /* is_condition: a NULL left operand
                                        decides the jump too */
    bool is_between;                 /* the AND a BETWEEN compiles to: one
                                        WHERE term, not two */
    bool is_factored;                /* the root of a SELECT's WHERE: see
                                        engine__expr_prime() */
    bool is_where;                   /* the root of a WHERE (SELECT,
                                        UPDATE, DELETE): see
                                        engine__expr_prime() */
    bool is_satisfied;               /* COMPARE: a WHERE term the access
                                        path guarantees on every row it
                                        yields, set while it runs (access.h);
                                        true without evaluating its
                                        operands, as SQLite codes a term
                                        its loop uses no more (disableTerm) */
    bool is_row_by_row;              /* the root of a WHERE whose query
                                        stops at its LIMIT: rows are tested
                                        one at a time, as SQLite's loop
                                        does, so rows past the last one
                                        needed are never evaluated */
    bool carries_subtype;            /* a function call or an aggregate's
                                        result: its values keep
                                        json_subtype when passed to a
                                        function, as SQLite passes a
                                        result's subtype (value.h) */
    struct engine_expr **args;
    size_t arg_count;
    union {
        struct engine_value constant; /* bytes in the plan's arena */
        int parameter;
        size_t column;
        enum engine_arith_op arith;
        enum engine_compare_op compare;
        bool truth; /* TRUTH: compared with TRUE (or FALSE) */
        enum engine_affinity cast_affinity;
        enum ast_like_kind like;
        const struct engine_scalar_def *function;
        struct engine_subquery *subquery;
        const struct engine_value *slot; /* OUTER */
        int raise; /* RAISE: its action, an enum ast_conflict */
    } u;
    struct engine_vector result; /* owned; computed rows of the batch */
};

/* What evaluation needs from the running statement. */
struct engine_eval {
    struct engine_exec *exec;   /* parameters, subqueries, errors */
    struct engine_arena *arena; /* bytes of results; valid for the batch */
};

/* Evaluates expr for every live row of batch; *out points at a vector
 * holding the results at the rows' indexes (expr's own, or a column of the
 * batch). 0, or an error with the message in the statement. */
int engine__expr_eval(struct engine_expr *expr, struct engine_eval *eval,
                      const struct engine_batch *batch,
                      const struct engine_vector **out);

/* The value of expr, which reads no column (a literal, a parameter, an
 * expression of them), computed on no row; its bytes in arena. 0, or an
 * error with the message in the statement. */
int engine__expr_eval_constant(struct engine_expr *expr,
                               struct engine_exec *exec,
                               struct engine_arena *arena,
                               struct engine_value *out);

/* op with its operands swapped: "5 < x" is "x > 5". */
enum engine_compare_op engine__compare_commuted(enum engine_compare_op op);

/* Marks expr as a condition SQLite codes with jumps (WHERE, HAVING, ON,
 * FILTER, CASE WHEN: sqlite3ExprIfFalse with SQLITE_JUMPIFNULL): its
 * AND/OR, also under NOT and IS [NOT] TRUE|FALSE, skip their right
 * operand once the left decides the jump. Elsewhere SQLite computes both
 * operands (OP_And, OP_Or). */
void engine__expr_mark_condition(struct engine_expr *expr);
/* The same for a CHECK constraint, coded as sqlite3ExprIfTrue with
 * SQLITE_JUMPIFNULL (NULL passes). */
void engine__expr_mark_check(struct engine_expr *expr);

/* Evaluates once, on no row, the parts of a condition that SQLite computes
 * before the first row, whose errors ("integer overflow", a bad ESCAPE)
 * are then raised even when no row is tested: each constant term of its
 * top-level AND (sqlite3WhereBegin codes constant terms before the loop;
 * outside a WHERE only those that call a function can matter), then, when
 * is_factored (a SELECT's WHERE), the constant side of each term
 * "column op constant", a constraint on the column. *never is set when
 * the root is_where and a constant term is false or NULL: SQLite then
 * skips the loop, so no row passes and no other term runs. 0, or the
 * first error. */
int engine__expr_prime(struct engine_expr *expr, struct engine_eval *eval,
                       bool *never);

/* RAISE over the live rows of batch (trigger_exec.c): with any, the
 * trigger program stops with its action and message. */
int engine__trigger_eval_raise(struct engine_expr *expr,
                               struct engine_eval *eval,
                               const struct engine_batch *batch);

/* Frees the node's result vector (the node itself is in the plan arena;
 * the statement closes every node it registered). */
void engine__expr_close(struct engine_expr *expr);

/* Result of a comparison under SQLite's rules (after §4.2 conversions with
 * the operands' affinities): 1, 0, or -1 for NULL. */
int engine__expr_compare_values(const struct engine_expr *expr,
                                struct engine_value a, struct engine_value b,
                                struct engine_arena *arena, int *result);

#endif /* SINEW_ENGINE_EXPR_H */
