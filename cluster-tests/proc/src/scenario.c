/* SPDX-License-Identifier: MIT
 *
 * scenario.c: the targeted scenarios of the real-process tier (chaos.md
 * §4.1, "Targeted, scripted scenarios run in both tiers, each a few
 * seconds"). Each is a fixed fault schedule (existing fault kinds, aimed
 * at the node that leads when the fault starts) run by run.c in place of
 * the seeded one, a hook around each fault, and a judge of one explicit
 * expectation, checked and reported on top of the mode's usual verdict
 * (linearizability, phantom reads).
 *
 * isolated-old-leader: the leader is cut off from the other nodes (not
 * from the clients) for 10 s while the pinned client keeps sending
 * requests to it and the other clients move to the majority. Raft §5.2,
 * §5.4: the old leader cannot commit without a majority, and
 * docs/replication.md ("a minority side of a partition neither commits
 * nor reads"), so nothing it answers during the cut may be acknowledged
 * (it must end refused or unknown), and the majority must elect a leader
 * and acknowledge a write within SCENARIO_TAKEOVER_BOUND_MS of the cut.
 *
 * paused-leader-stale-read: the leader is stopped (SIGSTOP) for 6 s, well
 * past the election timeout, while the others elect a leader and take
 * writes; reads of every key are sent to the stopped node just before
 * SIGCONT (they wait in its socket buffers, so it sees them the moment it
 * runs, before its timers notice it was deposed) and again just after.
 * docs/replication.md: "a read waits for a barrier entry committed in the
 * leader's term, so a deposed leader that does not know it yet" cannot
 * serve a stale value: each probe must be refused (NOT_LEADER) or end
 * unknown, or return a value that the linearizability check accepts. A
 * probe is also counted stale by a direct test: its value was overwritten
 * by a write acknowledged before the probe was sent.
 *
 * Adding a scenario is adding a row to chaos_scenarios[] (below): see the
 * note there for clock-stepped-back-restart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos_proc.h"
#include "common.h"

/* Raft's election timeout is 0.5-1 s, 2 s with a split vote (docs/
 * replication.md, "the leader crashes or is cut off"); a client stuck on
 * the old leader learns after its 2 s timeout. 5 s covers both with
 * room for a loaded 2-core machine. */
#define SCENARIO_TAKEOVER_BOUND_MS 5000

/* A probe read waits this long: past SIGCONT, the node must answer. */
#define SCENARIO_PROBE_TIMEOUT_MS 5000

/* Time for the probes sent before SIGCONT to reach the stopped node's
 * socket buffers (connect and send need only its kernel). */
#define SCENARIO_PROBE_SETTLE_MS 300

/* Probe client ids: far above every workload client's. */
#define SCENARIO_PROBE_CLIENT_ID ((int64_t)2000000)

#define SCENARIO_KEYS_MAX 8
#define SCENARIO_PROBES_MAX (2 * SCENARIO_KEYS_MAX)

/* ---- shared ---------------------------------------------------------- */

static bool is_update(const struct check_op *op)
{
    return op->kind == CHECK_WRITE ||
           (op->kind == CHECK_CAS && op->cas_succeeded);
}

/* The first completion of an acknowledged update on a node other than
 * avoid, invoked in [from_ns, to_ns); INT64_MAX when none. */
static int64_t first_majority_write(const struct chaos_workload *w, int avoid,
                                    int64_t from_ns, int64_t to_ns)
{
    int64_t first = INT64_MAX;
    for (size_t i = 0; i < w->op_count; i++) {
        const struct check_op *op = &w->ops[i];
        if (op->outcome == CHECK_OUTCOME_OK && op->kind != CHECK_READ &&
            w->op_nodes[i] != avoid && op->invoke_ns >= from_ns &&
            op->invoke_ns < to_ns && op->complete_ns < first) {
            first = op->complete_ns;
        }
    }
    return first;
}

/* Marks the scenario not made (its fault was skipped): neither passed nor
 * failed, unless something else failed the run. */
static void skip(struct chaos_run_result *r, const struct chaos_fault *f)
{
    r->is_skipped = true;
    snprintf(r->observed, sizeof r->observed, "not run: %s", f->skip_reason);
}

/* ---- isolated-old-leader --------------------------------------------- */

static void isolated_hook(struct chaos_scenario_run *run, struct chaos_fault *f,
                          enum chaos_scenario_step step)
{
    if (step == CHAOS_SCENARIO_APPLIED && !f->is_skipped) {
        run->workload->pinned_node = f->target;
    } else if (step == CHAOS_SCENARIO_HEALING) {
        run->workload->pinned_node = -1;
    }
}

/* What the isolated node did with what it got during the cut. */
struct isolated_tally {
    size_t acked_writes;     /* updates acknowledged before the heal */
    size_t acked_reads;      /* reads acknowledged before the heal */
    size_t acked_after_heal; /* acknowledged after it (linearizability) */
};

static void isolated_count(const struct chaos_workload *w,
                           const struct chaos_fault *f,
                           struct isolated_tally *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < w->op_count; i++) {
        const struct check_op *op = &w->ops[i];
        if (w->op_nodes[i] != f->target || op->invoke_ns < f->applied_ns ||
            op->invoke_ns >= f->healed_ns) {
            continue;
        }
        if (op->outcome != CHECK_OUTCOME_OK) {
            continue;
        }
        bool before = op->complete_ns < f->healed_ns;
        t->acked_writes += before && op->kind != CHECK_READ;
        t->acked_reads += before && op->kind == CHECK_READ;
        t->acked_after_heal += !before;
    }
}

static void isolated_judge(struct chaos_scenario_run *run)
{
    struct chaos_run_result *r = run->result;
    const struct chaos_fault *f = &r->faults[0];
    if (f->is_skipped || f->healed_ns == 0) {
        skip(r, f);
        return;
    }
    const struct chaos_workload *w = run->workload;
    struct isolated_tally t;
    isolated_count(w, f, &t);
    size_t pinned = w->pinned_ok + w->pinned_failed + w->pinned_unknown;
    int64_t first =
        first_majority_write(w, f->target, f->applied_ns, f->healed_ns);
    int64_t takeover_ms =
        first == INT64_MAX ? -1 : (first - f->applied_ns) / 1000000;
    snprintf(r->observed, sizeof r->observed,
             "n%d cut off for %lld ms; the pinned client sent it %zu "
             "requests: %zu refused (first: %s), %zu unknown, %zu "
             "acknowledged; of all clients' requests to it, %zu writes and "
             "%zu reads were acknowledged during the cut, %zu after the heal; "
             "the majority acknowledged its first write %lld ms after the "
             "cut (bound %d ms)",
             f->target + 1,
             (long long)((f->healed_ns - f->applied_ns) / 1000000), pinned,
             w->pinned_failed, w->pinned_refusal, w->pinned_unknown,
             w->pinned_ok, t.acked_writes, t.acked_reads, t.acked_after_heal,
             (long long)takeover_ms, SCENARIO_TAKEOVER_BOUND_MS);
    if (t.acked_writes + t.acked_reads > 0) {
        chaos_result_fail(r,
                          "the isolated old leader acknowledged %zu writes "
                          "and %zu reads while cut off",
                          t.acked_writes, t.acked_reads);
    }
    if (pinned == 0) {
        chaos_result_fail(r, "not exercised: the pinned client sent the "
                             "isolated node nothing");
    }
    if (w->pinned_self_hints > 0) {
        chaos_result_fail(r,
                          "%zu NOT_LEADER refusals named the refusing node "
                          "itself as the leader (a client following the "
                          "hint would loop)",
                          w->pinned_self_hints);
    }
    if (takeover_ms < 0 || takeover_ms > SCENARIO_TAKEOVER_BOUND_MS) {
        chaos_result_fail(r,
                          "the majority acknowledged no write within %d ms "
                          "of the cut (first: %lld ms)",
                          SCENARIO_TAKEOVER_BOUND_MS, (long long)takeover_ms);
    }
}

/* ---- paused-leader-stale-read ---------------------------------------- */

struct probe {
    struct chaos_workload *w; /* borrowed */
    int node;
    int64_t key;
    int64_t client_id;
    enum chaos_sql_outcome outcome;
    char code[48];
    pthread_t thread;
    bool is_started;
};

struct probe_state {
    struct probe probes[SCENARIO_PROBES_MAX];
    size_t count;
    int64_t sent_before_ns; /* when the first wave was sent */
};

/* One read of probe->key on probe->node, into the history. */
static void *probe_main(void *arg)
{
    struct probe *p = arg;
    struct check_op op = {
        .client_id = p->client_id, .kind = CHECK_READ, .key = p->key};
    struct chaos_sql_result result;
    op.invoke_ns = chaos_now_ns();
    chaos_sql(&p->w->cluster->nodes[p->node], "SELECT v FROM reg WHERE k = ?",
              &p->key, 1, SCENARIO_PROBE_TIMEOUT_MS, &result);
    op.complete_ns = chaos_now_ns();
    p->outcome = result.outcome;
    snprintf(p->code, sizeof p->code, "%s", result.code);
    if (result.outcome == CHAOS_SQL_OK) {
        json_t *cell = json_array_get(json_array_get(result.rows, 0), 0);
        const char *text = json_string_value(json_object_get(cell, "value"));
        op.value =
            text != NULL ? (int64_t)strtoll(text, NULL, 10) : CHECK_ABSENT;
        chaos_workload_record(p->w, &op, p->node);
    } else if (result.outcome == CHAOS_SQL_UNKNOWN) {
        op.outcome = CHECK_OUTCOME_UNKNOWN;
        chaos_workload_record(p->w, &op, p->node);
    }
    chaos_sql_result_release(&result);
    return NULL;
}

/* Starts a read of every key on node (a wave of probes). */
static void probe_wave(struct probe_state *s, struct chaos_workload *w,
                       int node)
{
    size_t keys =
        w->key_count < SCENARIO_KEYS_MAX ? w->key_count : SCENARIO_KEYS_MAX;
    for (size_t k = 0; k < keys && s->count < SCENARIO_PROBES_MAX; k++) {
        struct probe *p = &s->probes[s->count];
        *p = (struct probe){.w = w,
                            .node = node,
                            .key = (int64_t)k,
                            .client_id =
                                SCENARIO_PROBE_CLIENT_ID + (int64_t)s->count,
                            .outcome = CHAOS_SQL_UNKNOWN};
        p->is_started = pthread_create(&p->thread, NULL, probe_main, p) == 0;
        s->count++;
    }
}

static void paused_hook(struct chaos_scenario_run *run, struct chaos_fault *f,
                        enum chaos_scenario_step step)
{
    struct probe_state *s = run->state;
    if (f->is_skipped || f->applied_ns == 0) {
        return;
    }
    if (step == CHAOS_SCENARIO_HEALING && s == NULL) {
        s = common_calloc(1, sizeof *s);
        ASSERT(s != NULL); /* a harness: no OOM path */
        run->state = s;
        s->sent_before_ns = chaos_now_ns();
        probe_wave(s, run->workload, f->target);
        chaos_sleep_ms(SCENARIO_PROBE_SETTLE_MS);
    } else if (step == CHAOS_SCENARIO_HEALED && s != NULL) {
        probe_wave(s, run->workload, f->target);
        for (size_t i = 0; i < s->count; i++) {
            if (s->probes[i].is_started) {
                pthread_join(s->probes[i].thread, NULL);
                s->probes[i].is_started = false;
            }
        }
    }
}

/* True when read (a probe) returned a value that an update acknowledged
 * before the read was invoked had replaced: the update started after the
 * value's own write completed (values are unique; 0 is the initial one). */
static bool is_stale(const struct chaos_workload *w,
                     const struct check_op *read)
{
    int64_t written_ns = INT64_MIN; /* the initial value: before all */
    for (size_t i = 0; i < w->op_count && read->value != 0; i++) {
        const struct check_op *op = &w->ops[i];
        if (op->key == read->key && op->kind != CHECK_READ &&
            op->value == read->value) {
            written_ns =
                op->outcome == CHECK_OUTCOME_OK ? op->complete_ns : INT64_MAX;
        }
    }
    for (size_t i = 0; i < w->op_count && written_ns != INT64_MAX; i++) {
        const struct check_op *op = &w->ops[i];
        if (op->key == read->key && op->outcome == CHECK_OUTCOME_OK &&
            is_update(op) && op->invoke_ns > written_ns &&
            op->complete_ns < read->invoke_ns) {
            return true;
        }
    }
    return false;
}

static void paused_judge(struct chaos_scenario_run *run)
{
    struct chaos_run_result *r = run->result;
    const struct chaos_workload *w = run->workload;
    const struct chaos_fault *f = &r->faults[0];
    const struct probe_state *s = run->state;
    if (f->is_skipped || f->healed_ns == 0 || s == NULL) {
        skip(r, f);
        return;
    }
    size_t answered = 0, refused = 0, unknown = 0, stale = 0;
    for (size_t i = 0; i < w->op_count; i++) {
        const struct check_op *op = &w->ops[i];
        bool is_probe = op->client_id >= SCENARIO_PROBE_CLIENT_ID;
        answered += is_probe && op->outcome == CHECK_OUTCOME_OK;
        stale += is_probe && op->outcome == CHECK_OUTCOME_OK && is_stale(w, op);
    }
    for (size_t i = 0; i < s->count; i++) {
        refused += s->probes[i].outcome == CHAOS_SQL_FAILED;
        unknown += s->probes[i].outcome == CHAOS_SQL_UNKNOWN;
    }
    int64_t first =
        first_majority_write(w, f->target, f->applied_ns, f->healed_ns);
    snprintf(
        r->observed, sizeof r->observed,
        "n%d stopped for %lld ms; the others acknowledged a write %lld ms "
        "into it; %zu probe reads through n%d around SIGCONT: %zu "
        "answered (%zu stale), %zu refused (first code: %s), %zu "
        "unknown; history %s",
        f->target + 1, (long long)((f->healed_ns - f->applied_ns) / 1000000),
        first == INT64_MAX ? -1LL
                           : (long long)((first - f->applied_ns) / 1000000),
        s->count, f->target + 1, answered, stale, refused,
        s->count > 0 ? s->probes[0].code : "", unknown,
        r->has_linearizable ? check_result_name(r->linearizable)
                            : "not checked");
    if (stale > 0) {
        chaos_result_fail(r,
                          "%zu probe reads through the resumed old leader "
                          "returned an overwritten value",
                          stale);
    }
    if (first == INT64_MAX) {
        chaos_result_fail(r, "not exercised: no write was acknowledged by the "
                             "others while the leader was stopped");
    }
}

/* ---- the table ------------------------------------------------------- */

/* A row per scenario, in the order the profiles run them. To add one:
 * a fixed schedule of fault kinds (a fault aimed at the leader takes the
 * node that leads when it starts), a hook if something must happen at a
 * fault's edges, and a judge. clock-stepped-back-restart (chaos.md §4.1:
 * "a clock stepped back 1 h across a restart: the HLC stays monotonic")
 * is meant to be such a row once nemesis.c has a clock-step fault: crdt
 * mode, {clock step of n2 back 1 h, then KILL n2 with restart}, judged by
 * the mode's verdict plus a judge reading n2's HLC (GET /v1/status) before
 * and after the restart. */
const struct chaos_scenario chaos_scenarios[] = {
    {.name = "isolated-old-leader",
     .mode = CHAOS_MODE_QUORUM,
     .duration_ms = 20000,
     .expectation = "writes and reads sent to a leader cut off from the "
                    "majority end refused or unknown, never acknowledged "
                    "during the cut; the majority elects a leader and "
                    "acknowledges a write within 5 s; the history is "
                    "linearizable",
     .has_pinned_client = true,
     .fault_count = 1,
     .faults = {{.kind = CHAOS_FAULT_ISOLATE,
                 .start_ms = 3000,
                 .length_ms = 10000,
                 .to_leader = true}},
     .hook = isolated_hook,
     .judge = isolated_judge},
    {.name = "paused-leader-stale-read",
     .mode = CHAOS_MODE_QUORUM,
     .duration_ms = 16000,
     .expectation = "reads through a leader stopped past the election "
                    "timeout, sent just before and after SIGCONT, are "
                    "refused (NOT_LEADER), unknown, or not stale; the "
                    "history is linearizable",
     .fault_count = 1,
     .faults = {{.kind = CHAOS_FAULT_PAUSE,
                 .start_ms = 3000,
                 .length_ms = 6000,
                 .to_leader = true}},
     .hook = paused_hook,
     .judge = paused_judge},
};

const size_t chaos_scenario_count =
    sizeof chaos_scenarios / sizeof chaos_scenarios[0];

const struct chaos_scenario *chaos_scenario_find(const char *name)
{
    for (size_t i = 0; i < chaos_scenario_count; i++) {
        if (strcmp(chaos_scenarios[i].name, name) == 0) {
            return &chaos_scenarios[i];
        }
    }
    return NULL;
}
