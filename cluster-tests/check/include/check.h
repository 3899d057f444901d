/* SPDX-License-Identifier: MIT
 *
 * check.h: the linearizability checker of sinew's chaos suite, and its
 * manual.
 *
 * It judges histories that clients of a quorum-mode cluster record, in the
 * deterministic simulator and against real processes: did every operation
 * appear to take effect atomically at one instant between its invocation and
 * its completion (Herlihy and Wing, "Linearizability", TOPLAS 1990)?
 *
 * Model. A map of registers, key (int64) -> value (int64). Before the
 * history every key holds the caller's initial value, CHECK_ABSENT unless
 * set. Operations:
 *
 *   read(k) -> v          returns the current value (CHECK_ABSENT: none)
 *   write(k, v)           sets the value (v = CHECK_ABSENT deletes)
 *   cas(k, e, n) -> ok    the value was e at the linearization point; now n
 *   cas(k, e, n) -> fail  the value was not e at that point; unchanged
 *
 * Outcomes. A completed operation has a result and a completion time. An
 * operation with an UNKNOWN outcome (timeout, lost leadership, connection
 * reset: the client never learned) is treated as chaos.md §3.3 and etcd's
 * patch_history.go say: an unknown write or cas may take effect at any
 * instant after its invocation, or never (its completion is +infinity and
 * its result free); an unknown read constrains nothing and is dropped. An
 * operation known NOT to have been applied (refused before proposing) must
 * not be in the history at all: record it as unknown if in doubt, since a
 * wrong "not applied" hides lost writes or invents violations.
 *
 * Time. Invocation and completion times come from one monotonic clock (any
 * unit; nanoseconds by convention). Intervals that touch (one completes at
 * the instant another is invoked) count as concurrent: the conservative
 * choice, which never reports a violation the clock cannot prove.
 *
 * Method. Linearizability is local (Herlihy and Wing §3.5; Horn and
 * Kroening, "Faster linearizability checking via P-compositionality", 2015):
 * a history is linearizable iff each key's sub-history is. Each key is
 * searched separately with Wing and Gong's algorithm as refined by Lowe
 * ("Testing for linearizability", 2017): operations are placed just in
 * time, in an order consistent with real time, backtracking on dead ends,
 * with a memo of every (set of placed operations, register value) already
 * explored, as Porcupine's checkSingle does, plus exact prunings for the
 * register model: legal reads are placed without alternatives, a write
 * that would overwrite for good a value some operation must still see is
 * never tried, and unknown-outcome writes are pinned down by who observed
 * their (unique) values or dropped when nobody could have. The search is
 * exact and usually linear; the worst case is exponential (the problem is
 * NP-complete), so every search has a budget, and a key whose search runs
 * out is UNDECIDED: the verdict is then CHECK_UNKNOWN, which a test suite
 * must treat as "not passed". Writing unique values makes histories far
 * cheaper to check (and violations easier to read).
 *
 * Keys are checked in ascending order; the first key found not linearizable
 * ends the check and is named in the verdict, with the longest linearizable
 * prefix the search found and the operations none of which could come next
 * (check_verdict_print() turns that into an explanation).
 *
 * Text format (check_history_read/write): one operation a line, fields
 * separated by spaces or tabs, '#' starts a comment line, blank lines are
 * skipped:
 *
 *   initial <v>                  optional, once, before every operation
 *   <client> <kind> <key> <value> <expected> <invoke> <complete> <outcome>
 *       <result>                 (one line; wrapped here)
 *
 *   client    int64
 *   kind      read | write | cas
 *   key       int64
 *   value     write: the value written; cas: the new value; read: -
 *   expected  cas: the expected value; otherwise -
 *   invoke    int64
 *   complete  int64 >= invoke; for outcome unknown: - or the time the
 *             client gave up (kept for explanations, never a constraint)
 *   outcome   ok | unknown
 *   result    outcome ok: read: the value read; write: ok; cas: ok | fail.
 *             outcome unknown: -
 *
 * A value is a decimal int64 or nil (CHECK_ABSENT). Example:
 *
 *   initial nil
 *   1 write 7 5 - 100 250 ok ok
 *   2 read 7 - - 120 300 ok 5
 *   3 cas 7 9 5 130 - unknown -
 *
 * Thread safety: no global state; concurrent calls on different data are
 * safe.
 */
#ifndef SINEW_CHECK_H
#define SINEW_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The "no value" of a register: what a read of a never-written (or deleted)
 * key returns. It is an ordinary int64 that histories must not use as data. */
#define CHECK_ABSENT INT64_MIN

/* complete_ns of an unknown-outcome operation when the client recorded no
 * give-up time. */
#define CHECK_TIME_NONE INT64_MAX

/* Longest line check_history_read() accepts, terminator included: nine
 * int64 fields and separators fit in 200 bytes; the rest is room for
 * comments. */
#define CHECK_LINE_SIZE_MAX 1024

/* Most operations one history may hold: 2^28 operations are several GiB of
 * memory, far beyond any test, so more means a runaway recorder. */
#define CHECK_OPS_MAX ((size_t)1 << 28)

/* Defaults of check_options_init(): enough for tens of thousands of
 * operations on one key with 16 concurrent clients (a few seconds), far
 * short of a hang. */
#define CHECK_STEPS_MAX_DEFAULT ((uint64_t)100 * 1000 * 1000)
#define CHECK_TIME_MS_MAX_DEFAULT ((uint64_t)60 * 1000)
#define CHECK_MEMORY_BYTES_MAX_DEFAULT ((size_t)1 << 30)

enum check_kind {
    CHECK_READ = 0,
    CHECK_WRITE = 1,
    CHECK_CAS = 2,
};

enum check_outcome {
    CHECK_OUTCOME_OK = 0,      /* completed: complete_ns and the result hold */
    CHECK_OUTCOME_UNKNOWN = 1, /* the client never learned the result */
};

/* One operation of a history. Fields a kind does not use are ignored. */
struct check_op {
    int64_t client_id;          /* who issued it; for explanations only */
    enum check_kind kind;       /* read, write or cas */
    int64_t key;                /* the register */
    int64_t value;              /* write: written; cas: new; read: returned */
    int64_t expected;           /* cas: the value it expects */
    int64_t invoke_ns;          /* when the client sent it */
    int64_t complete_ns;        /* when it learned the result (>= invoke) */
    enum check_outcome outcome; /* completed or unknown */
    bool cas_succeeded;         /* completed cas: ok (true) or fail */
};

enum check_result {
    CHECK_LINEARIZABLE = 0,     /* every key's history is linearizable */
    CHECK_NOT_LINEARIZABLE = 1, /* the key named in the verdict is not */
    CHECK_UNKNOWN = 2,          /* no violation found, a budget ran out */
};

enum check_budget {
    CHECK_BUDGET_NONE = 0,   /* no budget ran out */
    CHECK_BUDGET_STEPS = 1,  /* a key used steps_max search steps */
    CHECK_BUDGET_TIME = 2,   /* the check passed time_ms_max */
    CHECK_BUDGET_MEMORY = 3, /* a key's memo passed memory_bytes_max */
};

/* Every field is read; check_options_init() sets the defaults. A budget of
 * 0 is invalid: a search without a bound could hang a test suite. */
struct check_options {
    int64_t initial_value;   /* every key's value before the history */
    uint64_t steps_max;      /* search steps per key (a step places or
                                skips one operation or backtracks one) */
    uint64_t time_ms_max;    /* wall-clock budget of the whole check */
    size_t memory_bytes_max; /* memo bytes per key */
};

/* The outcome of check_linearizable().
 *
 * For CHECK_NOT_LINEARIZABLE: key is the first key (in ascending order)
 * whose history is not linearizable. prefix holds the longest linearizable
 * prefix of that key's history the search found, as indexes into the
 * caller's ops array in linearization order; state is the key's value after
 * it. unplaced holds, in invocation order, the operations that could come
 * next after the prefix in real-time order and must take effect, none of
 * which leads to a linearization (some are illegal in state, the others
 * lead only to dead ends; unknown-outcome writes that may take effect at
 * any time or never are not listed), and any later one that needs state,
 * which nothing left can write again; blocking, one of them, is the required
 * operation whose deadline comes first: it must take effect by blocking_ns,
 * which is its completion (or, for an unknown-outcome write whose unique value
 * a completed read returned, that read's completion), so before any operation
 * invoked later. is_prefix_pruned says that the search for the natural
 * prefix (the one that stops at the culprit) ran out of its budget, so the
 * prefix comes from the faster search and may stop early, at an overwrite
 * of a value that some later operation still needs (listed in unplaced
 * with that reason). For the other results those fields are empty/zero.
 *
 * For CHECK_UNKNOWN: key is the first key whose search was cut short and
 * exhausted says which budget ran out. */
struct check_verdict {
    enum check_result result;    /* the verdict */
    int64_t key;                 /* see above; 0 for LINEARIZABLE */
    enum check_budget exhausted; /* UNKNOWN: the budget that ran out */
    size_t keys_count;           /* distinct keys with ops to check */
    size_t keys_checked;         /* keys whose search ran (to any end) */
    size_t keys_undecided;       /* keys cut short by a budget */
    size_t key_ops_count;        /* NOT: operations on key searched */
    uint64_t steps;              /* search steps over all keys */
    int64_t state;               /* NOT: key's value after prefix */
    size_t *prefix;              /* NOT: owned by the verdict */
    size_t prefix_count;         /* entries in prefix */
    size_t *unplaced;            /* NOT: owned by the verdict */
    size_t unplaced_count;       /* entries in unplaced; >= 1 for NOT */
    size_t blocking;             /* NOT: an op index, also in unplaced */
    int64_t blocking_ns;         /* NOT: when blocking must have happened */
    bool is_prefix_pruned;       /* NOT: see above */
};

/* A history read from text. */
struct check_history {
    struct check_op *ops;  /* owned; in file order */
    size_t count;          /* entries in ops */
    int64_t initial_value; /* from the "initial" line, else CHECK_ABSENT */
};

/* Fills *options with the initial value CHECK_ABSENT and the default
 * budgets. */
void check_options_init(struct check_options *options);

/* Returns 0 if op is well formed: a known kind and outcome, and for a
 * completed operation complete_ns >= invoke_ns; else -EINVAL. */
int check_op_validate(const struct check_op *op);

/* Decides whether the count operations at ops (borrowed for the call; any
 * order) are linearizable under options (borrowed; NULL: defaults).
 * Returns 0 and fills *out (to be released with check_verdict_close), or
 * -EINVAL for a malformed operation or an option of 0, COMMON_ENOMEM, and
 * leaves *out untouched. Running out of a budget is not an error: it is
 * the verdict CHECK_UNKNOWN. */
int check_linearizable(const struct check_op *ops, size_t count,
                       const struct check_options *options,
                       struct check_verdict *out);

/* Frees what the verdict owns; it may be closed once. */
void check_verdict_close(struct check_verdict *verdict);

/* "linearizable", "not linearizable" or "unknown". */
const char *check_result_name(enum check_result result);

/* Writes a human-readable explanation of verdict, which came from checking
 * the count operations at ops (both borrowed for the call), to out: for a
 * violation the key, the last operations of the longest linearizable
 * prefix, the value after it, and each operation that could not be placed
 * next with the reason. Returns 0 or -EIO. */
int check_verdict_print(const struct check_verdict *verdict,
                        const struct check_op *ops, size_t count, FILE *out);

/* Reads a history in the text format above from in (borrowed). Returns 0
 * and fills *out (to be released with check_history_close); or, leaving
 * *out untouched, COMMON_ECORRUPT for a malformed line (errmsg, of
 * errmsg_size bytes, then says which line and field and why, e.g.
 * "line 7: field 6 (invoke): not an integer: 'x'"), COMMON_ETOOBIG for a
 * line longer than CHECK_LINE_SIZE_MAX or more than CHECK_OPS_MAX
 * operations, COMMON_ENOMEM, or -EIO. errmsg may be NULL. */
int check_history_read(FILE *in, struct check_history *out, char *errmsg,
                       size_t errmsg_size);

/* Writes the count operations at ops (borrowed) to out in the text format,
 * after an "initial" line for initial_value. check_history_read() reads it
 * back equal field for field, except fields the op's kind and outcome do
 * not use, which read back as 0 (false). Returns 0, -EINVAL if an op fails
 * check_op_validate() (nothing is written then), or -EIO. */
int check_history_write(FILE *out, const struct check_op *ops, size_t count,
                        int64_t initial_value);

/* Frees the operations; the history may be closed once. */
void check_history_close(struct check_history *history);

/* ==== sets: nothing acknowledged lost, no phantom (chaos-design.md §8) ====
 *
 * check_set() judges one replica's final read of a grow-only set: every
 * acknowledged element must be in it (else lost), and every element in it
 * must have been issued, acknowledged or with an unknown outcome (else a
 * phantom). Elements are int64; arrays are borrowed for the call and need
 * not be sorted. Returns the number of violations (0: passed); the first
 * lost and the first phantom element go to *first_lost / *first_phantom
 * (CHECK_ABSENT when none). */
size_t check_set(const int64_t *acked, size_t acked_count,
                 const int64_t *unknown, size_t unknown_count,
                 const int64_t *final, size_t final_count, int64_t *first_lost,
                 int64_t *first_phantom);

/* ==== crdt: the last-writer-wins oracle (crdt.md §6.4) ====
 *
 * Every acknowledged (or unknown-outcome) write of a crdt history, with its
 * K = (hlc, site), and the rows one replica holds at the end of a table
 * (key, CHECK_LWW_COLUMNS int64 columns). Per key, the INSERT or DELETE of
 * largest K decides whether the row exists; per column, the INSERT (every
 * column) or UPDATE of that column with the largest K gives the value. K
 * compares hlc, then the site's bytes (memcmp). An unknown write may or may
 * not have applied: a replica value is accepted when it is the oracle's
 * value over the acknowledged writes or that of an unknown write with a
 * larger K than it. */
#define CHECK_LWW_COLUMNS 3
#define CHECK_LWW_SITE_BYTES 16

enum check_lww_kind {
    CHECK_LWW_INSERT = 0,
    CHECK_LWW_UPDATE = 1,
    CHECK_LWW_DELETE = 2,
};

struct check_lww_write {
    enum check_lww_kind kind;
    int64_t key;
    unsigned columns; /* UPDATE: bit c = column c set */
    int64_t values[CHECK_LWW_COLUMNS];
    uint64_t hlc;
    uint8_t site[CHECK_LWW_SITE_BYTES];
    bool unknown; /* outcome unknown */
};

struct check_lww_row {
    int64_t key;
    int64_t values[CHECK_LWW_COLUMNS];
};

/* 0 when rows (sorted by key, each key once) are what the oracle allows;
 * else -1 with the first disagreement described in why (size bytes) and
 * its key in *bad_key. writes and rows are borrowed for the call. */
int check_lww(const struct check_lww_write *writes, size_t write_count,
              const struct check_lww_row *rows, size_t row_count,
              int64_t *bad_key, char *why, size_t size);

/* ==== leader: followers hold a prefix (chaos-design.md §8) ====
 *
 * check_prefix() judges one follower's log (values in log order) against
 * the writer's: 0 when it is a prefix of it (equal when complete), else -1
 * with the first position that differs in *at. */
int check_prefix(const int64_t *writer, size_t writer_count,
                 const int64_t *follower, size_t follower_count, bool complete,
                 size_t *at);

#endif /* SINEW_CHECK_H */
