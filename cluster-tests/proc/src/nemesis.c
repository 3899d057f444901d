/* SPDX-License-Identifier: MIT
 *
 * nemesis.c: the fault schedule of a run and the faults themselves.
 *
 * The schedule is a function of the seed alone (chaos.md §3.2: "fault for
 * 5-15 s, heal for 5-15 s", shortened here so a 60 s CI run sees several):
 * alternating faults of 3-8 s and healthy gaps of 3-6 s; the last fault
 * lasts to the end of the workload, so the final heal (after which crdt
 * convergence and quorum recovery are measured) heals something. Targets that
 * depend on the cluster's state (the quorum leader) are chosen when the fault
 * starts, so a seed reproduces the schedule, not the whole run (kernel
 * scheduling is not ours to replay; the simulator is). The kinds drawn can
 * be narrowed with CHAOS_PROC_FAULTS=kind,kind (chaos_fault_kinds_allow).
 *
 * Faults: KILL (SIGKILL, restart at heal: recovery from real files; half
 * the time with the node's wall clock stepped back 1-10 s or 1 h for its
 * first second back, the "clock stepped back across a restart" of §4.1),
 * PAUSE (SIGSTOP of the node's process group, SIGCONT at heal: a stall
 * longer than the election timeout), HALVES (a random minority cannot
 * reach the majority, both directions), ISOLATE (one node alone; in quorum
 * mode the leader, the case of a client writing to an isolated old
 * leader), ONE_WAY (frames from a to b dropped, b to a flowing; over TCP
 * this stalls the connection both ways, chaos.md §1.4), RING (majorities
 * ring, nemesis_cut.c; with 3 nodes a bridge), KILL_ALL (every node
 * SIGKILLed at once, all restarted at heal: acknowledged writes must come
 * back from the files alone), DELAY_LOSS (one node's outgoing peer packets
 * held 20-150 ms plus up to 100 ms of jitter, 0-10 % dropped, by chaos-nfq:
 * topo_delay.c), CLOCK_SKEW (one node's wall clock, sometimes a second
 * node's the other way, jumped by 1-10 s through libfaketime, preload.c;
 * the heal's return to +0 is itself a jump, backward after a forward
 * skew, which the HLC must survive), DISK (a node's fsync and fdatasync
 * fail, or a seeded 5-30 % of its pwrites, through libfiu; exiting with
 * an error is then allowed, a crash is not), FAILOVER (leader mode only:
 * a follower restarted as the writer at the next epoch, the old writer
 * killed or left running, reachable or cut off: nemesis_failover.c; a
 * leader-mode schedule that allows it has at least one, so every ci run
 * fails over). Partitions and delays need
 * the namespace topology (nft, iptables); clock and disk faults need the
 * preload libraries; without them a fault is skipped, and the report says
 * why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos_proc.h"

#define NEMESIS_FIU_TIMEOUT_MS 5000
#define NEMESIS_RESTART_HEALTHY_MS 15000
#define NEMESIS_STEPPED_BACK_MS 1000 /* served with the clock stepped back */
/* A failover's heal: how long it waits for a node holding a deposed
 * writer's commits to say it diverged (it learns the fence from the next
 * summaries, sent every second) before the schedule goes on; the final
 * convergence waits longer. */
#define NEMESIS_REBUILD_WAIT_MS 8000

static const char *const kind_names[CHAOS_FAULT_KIND_COUNT] = {
    "kill",
    "pause",
    "partition-halves",
    "partition-isolate",
    "partition-one-way",
    "partition-ring",
    "kill-all",
    "packet-delay-loss",
    "clock-skew",
    "disk-fault",
    "failover"};

static uint32_t allowed_mask;
static bool is_mask_set;

uint64_t chaos_rng_next(struct chaos_rng *rng)
{
    /* splitmix64 (Steele, Lea, Flood 2014): tiny, and every seed is good. */
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

uint64_t chaos_rng_below(struct chaos_rng *rng, uint64_t bound)
{
    return bound == 0 ? 0 : chaos_rng_next(rng) % bound;
}

const char *chaos_fault_kind_name(enum chaos_fault_kind kind)
{
    return (unsigned)kind < CHAOS_FAULT_KIND_COUNT ? kind_names[kind] : "?";
}

int chaos_fault_kinds_parse(const char *list, uint32_t *mask)
{
    uint32_t out = 0;
    for (const char *word = list; *word != '\0';) {
        size_t size = strcspn(word, ",");
        int kind = -1;
        for (int k = 0; k < CHAOS_FAULT_KIND_COUNT && size > 0; k++) {
            if (strlen(kind_names[k]) == size &&
                strncmp(word, kind_names[k], size) == 0) {
                kind = k;
            }
        }
        if (kind < 0) {
            return -EINVAL;
        }
        out |= 1u << kind;
        word += size + (word[size] == ',');
    }
    if (out == 0) {
        return -EINVAL;
    }
    *mask = out;
    return 0;
}

void chaos_fault_kinds_allow(uint32_t mask)
{
    allowed_mask = mask;
    is_mask_set = true;
}

/* Whether kind may be drawn in mode: FAILOVER is leader mode's. */
static bool is_kind_of_mode(int kind, enum chaos_mode mode)
{
    return kind != CHAOS_FAULT_FAILOVER || mode == CHAOS_MODE_LEADER;
}

/* The kinds to draw from in mode, in kind order; their count. When the
 * mask leaves none (CHAOS_PROC_FAULTS=failover in another mode), the
 * masked kinds anyway: the faults are then skipped with the reason. */
static size_t allowed_kinds(enum chaos_mode mode, enum chaos_fault_kind *kinds)
{
    const char *list = getenv("CHAOS_PROC_FAULTS");
    if (!is_mask_set && list != NULL && list[0] != '\0') {
        if (chaos_fault_kinds_parse(list, &allowed_mask) != 0) {
            fprintf(stderr,
                    "chaos-proc: CHAOS_PROC_FAULTS=%s: not a list "
                    "of fault kinds; the kinds are:",
                    list);
            for (int k = 0; k < CHAOS_FAULT_KIND_COUNT; k++) {
                fprintf(stderr, " %s", kind_names[k]);
            }
            fprintf(stderr, "\n");
            exit(2);
        }
    }
    is_mask_set = true;
    size_t count = 0;
    for (int pass = 0; pass < 2 && count == 0; pass++) {
        for (int k = 0; k < CHAOS_FAULT_KIND_COUNT; k++) {
            bool is_masked =
                allowed_mask == 0 || (allowed_mask & (1u << k)) != 0;
            if (is_masked && (pass == 1 || is_kind_of_mode(k, mode))) {
                kinds[count++] = (enum chaos_fault_kind)k;
            }
        }
    }
    return count;
}

/* A leader-mode schedule that may fail over but drew no failover gets
 * one, in place of a seeded fault that is not the last (the last runs to
 * the end, and a failover wants faults after it): a ci run's one leader
 * run would otherwise miss it about half the time. One draw, after all
 * the others, so the rest of the schedule is the seed's as before. */
static void ensure_failover(struct chaos_fault *faults, size_t count,
                            const enum chaos_fault_kind *kinds,
                            size_t kind_count, struct chaos_rng *rng)
{
    bool is_allowed = false, has_one = false;
    for (size_t k = 0; k < kind_count; k++) {
        is_allowed = is_allowed || kinds[k] == CHAOS_FAULT_FAILOVER;
    }
    for (size_t i = 0; i < count; i++) {
        has_one = has_one || faults[i].kind == CHAOS_FAULT_FAILOVER;
    }
    if (is_allowed && !has_one && count > 0) {
        size_t at = count > 1 ? chaos_rng_below(rng, count - 1) : 0;
        faults[at].kind = CHAOS_FAULT_FAILOVER;
    }
}

/* The seeded parameters of f, the same number of draws for every kind. */
static void plan_params(struct chaos_fault *f, struct chaos_rng *rng)
{
    int64_t skew_ms = 1000 + (int64_t)chaos_rng_below(rng, 9001);
    int64_t other_ms = 1000 + (int64_t)chaos_rng_below(rng, 9001);
    bool is_forward = chaos_rng_below(rng, 2) == 0;
    bool has_other = chaos_rng_below(rng, 2) == 0;
    f->skew_ms = is_forward ? skew_ms : -skew_ms;
    f->other_skew_ms = !has_other ? 0 : is_forward ? -other_ms : other_ms;
    uint64_t back = chaos_rng_below(rng, 4);
    int64_t back_ms = 1000 + (int64_t)chaos_rng_below(rng, 9001);
    f->restart_back_ms = back < 2 ? 0 : back == 2 ? -back_ms : -3600000;
    f->delay_ms = 20 + (int)chaos_rng_below(rng, 131);
    f->jitter_ms = (int)chaos_rng_below(rng, 101);
    f->loss_percent = (int)chaos_rng_below(rng, 11);
    bool is_fsync = chaos_rng_below(rng, 2) == 0;
    int write_percent = 5 + (int)chaos_rng_below(rng, 26);
    f->disk_write_percent = is_fsync ? 0 : write_percent;
}

size_t chaos_schedule_plan(uint64_t seed, int64_t duration_ms,
                           size_t node_count, enum chaos_mode mode,
                           struct chaos_fault *faults)
{
    struct chaos_rng rng = {seed};
    enum chaos_fault_kind kinds[CHAOS_FAULT_KIND_COUNT];
    size_t kind_count = allowed_kinds(mode, kinds);
    size_t count = 0;
    int64_t at_ms = 2000 + (int64_t)chaos_rng_below(&rng, 2000);
    while (count < CHAOS_FAULTS_MAX) {
        int64_t length_ms = 3000 + (int64_t)chaos_rng_below(&rng, 5001);
        bool is_last = at_ms + length_ms > duration_ms - 8000;
        if (is_last && at_ms > duration_ms - 3000 && count > 0) {
            /* No room for one more: the previous fault runs to the end. */
            faults[count - 1].length_ms =
                duration_ms - faults[count - 1].start_ms;
            break;
        }
        if (is_last) {
            length_ms = duration_ms - at_ms; /* healed by the final heal */
        }
        struct chaos_fault *f = &faults[count++];
        memset(f, 0, sizeof *f);
        f->kind = kinds[chaos_rng_below(&rng, kind_count)];
        f->start_ms = at_ms;
        f->length_ms = length_ms;
        f->target = (int)chaos_rng_below(&rng, node_count);
        f->other =
            (f->target + 1 + (int)chaos_rng_below(&rng, node_count - 1)) %
            (int)node_count;
        plan_params(f, &rng);
        f->recovery_ms = -1;
        at_ms += length_ms + 3000 + (int64_t)chaos_rng_below(&rng, 3001);
        if (is_last) {
            break;
        }
    }
    if (mode == CHAOS_MODE_LEADER && node_count > 1) {
        ensure_failover(faults, count, kinds, kind_count, &rng);
    }
    return count;
}

static bool is_partition(enum chaos_fault_kind kind)
{
    return kind == CHAOS_FAULT_HALVES || kind == CHAOS_FAULT_ISOLATE ||
           kind == CHAOS_FAULT_ONE_WAY || kind == CHAOS_FAULT_RING;
}

static void skip(struct chaos_fault *f, const char *reason)
{
    f->is_skipped = true;
    snprintf(f->skip_reason, sizeof f->skip_reason, "%s", reason);
}

static void apply_partition(struct chaos_fault *f, struct chaos_cluster *c,
                            struct chaos_topology *t, struct chaos_rng *rng)
{
    if (!chaos_topology_can_partition(t)) {
        skip(f, t->kind != CHAOS_TOPOLOGY_NETNS
                    ? "loopback topology: partitions need the namespace "
                      "topology (run as root)"
                    : "nft not installed (apt-get install nftables)");
        return;
    }
    chaos_fault_plan_cut(f, c->count, rng);
    if (chaos_topology_partition(t, f->cut) != 0) {
        skip(f, "nft refused the rules (see stderr)");
    }
}

static void apply_kill_all(struct chaos_fault *f, struct chaos_cluster *c)
{
    snprintf(f->what, sizeof f->what,
             "SIGKILL all %zu nodes at once, all restarted at heal", c->count);
    for (size_t i = 0; i < c->count; i++) {
        chaos_node_kill(c, i);
    }
}

static void apply_delay(struct chaos_fault *f, struct chaos_cluster *c,
                        struct chaos_topology *t, struct chaos_rng *rng)
{
    const char *why = chaos_topology_delay_unavailable(t);
    if (why != NULL) {
        skip(f, why);
        return;
    }
    struct chaos_nfq_config config = {.queue = CHAOS_NFQ_QUEUE,
                                      .delay_ms = f->delay_ms,
                                      .jitter_ms = f->jitter_ms,
                                      .loss_percent = f->loss_percent,
                                      .seed = chaos_rng_next(rng)};
    char log_path[CHAOS_PATH_SIZE + 16];
    snprintf(log_path, sizeof log_path, "%s/nfq.log", c->nodes[f->target].dir);
    if (chaos_topology_delay(t, (size_t)f->target, &config, log_path) != 0) {
        skip(f, "the NFQUEUE helper or its iptables rules failed (see "
                "stderr and nfq.log)");
        return;
    }
    snprintf(f->what, sizeof f->what,
             "n%d's peer packets held %d ms + U[0,%d) ms, %d%% dropped",
             f->target + 1, f->delay_ms, f->jitter_ms, f->loss_percent);
}

static void apply_clock(struct chaos_fault *f, struct chaos_cluster *c)
{
    const char *why = chaos_preload_faketime_missing(&c->preload);
    if (why != NULL) {
        skip(f, why);
        return;
    }
    char text[2][32];
    chaos_preload_clock_format(f->skew_ms, text[0], sizeof text[0]);
    chaos_preload_clock_format(f->other_skew_ms, text[1], sizeof text[1]);
    if (chaos_node_set_clock(c, (size_t)f->target, f->skew_ms) != 0 ||
        (f->other_skew_ms != 0 &&
         chaos_node_set_clock(c, (size_t)f->other, f->other_skew_ms) != 0)) {
        skip(f, "writing a faketime.rc file failed");
        return;
    }
    int size = snprintf(f->what, sizeof f->what, "n%d's clock %s",
                        f->target + 1, text[0]);
    if (f->other_skew_ms != 0 && size > 0) {
        snprintf(f->what + size, sizeof f->what - (size_t)size, ", n%d's %s",
                 f->other + 1, text[1]);
    }
}

/* Switches on f's failure points in its node (libfiu's remote control). */
static int disk_enable(const struct chaos_fault *f,
                       const struct chaos_cluster *c)
{
    const struct chaos_node *n = &c->nodes[f->target];
    char command[128];
    int rc = 0;
    if (f->disk_write_percent > 0) {
        snprintf(command, sizeof command,
                 "enable_random name=posix/io/rw/pwrite,probability=0.%02d",
                 f->disk_write_percent);
        return chaos_preload_fiu_command(n->dir, n->pid, command,
                                         NEMESIS_FIU_TIMEOUT_MS);
    }
    /* The engine's WAL syncs with fsync, the Raft log with fdatasync. */
    const char *const points[] = {"posix/io/sync/fsync",
                                  "posix/io/sync/fdatasync"};
    for (size_t i = 0; i < 2 && rc == 0; i++) {
        snprintf(command, sizeof command, "enable name=%s", points[i]);
        rc = chaos_preload_fiu_command(n->dir, n->pid, command,
                                       NEMESIS_FIU_TIMEOUT_MS);
    }
    return rc;
}

static void apply_disk(struct chaos_fault *f, struct chaos_cluster *c)
{
    struct chaos_node *n = &c->nodes[f->target];
    const char *why = chaos_preload_fiu_missing(&c->preload);
    if (why != NULL || n->pid <= 0) {
        skip(f, why != NULL ? why : "the node is not running");
        return;
    }
    n->is_disk_faulted = true;
    n->fault_exit_note[0] = '\0';
    f->disk_pid = n->pid;
    int rc = disk_enable(f, c);
    if (rc != 0) {
        n->is_disk_faulted = false;
        snprintf(f->skip_reason, sizeof f->skip_reason,
                 "libfiu's control FIFO of n%d did not take the command: %s",
                 f->target + 1, strerror(-rc));
        f->is_skipped = true;
        return;
    }
    if (f->disk_write_percent > 0) {
        snprintf(f->what, sizeof f->what, "n%d: %d%% of pwrite() fail",
                 f->target + 1, f->disk_write_percent);
    } else {
        snprintf(f->what, sizeof f->what, "n%d: fsync() and fdatasync() fail",
                 f->target + 1);
    }
}

/* Clocks left stepped (by nothing now: a safety net) go back to +0. */
static void restore_clocks(struct chaos_cluster *c)
{
    for (size_t i = 0; i < c->count; i++) {
        if (c->nodes[i].clock_offset_ms != 0) {
            (void)chaos_node_set_clock(c, i, 0);
        }
    }
}

void chaos_fault_apply(struct chaos_fault *f, struct chaos_cluster *c,
                       struct chaos_topology *t, struct chaos_rng *rng)
{
    size_t n = c->count;
    bool to_leader =
        f->kind == CHAOS_FAULT_ISOLATE ||
        (f->kind != CHAOS_FAULT_ONE_WAY && chaos_rng_below(rng, 2) == 0);
    if (c->mode == CHAOS_MODE_QUORUM && to_leader && c->leader_hint >= 0) {
        f->target = c->leader_hint;
        if (f->other == f->target) {
            f->other = (f->target + 1) % (int)n;
        }
    }
    restore_clocks(c);
    if (is_partition(f->kind)) {
        apply_partition(f, c, t, rng);
    } else if (f->kind == CHAOS_FAULT_KILL) {
        snprintf(f->what, sizeof f->what, "SIGKILL n%d, restart at heal",
                 f->target + 1);
        chaos_node_kill(c, (size_t)f->target);
    } else if (f->kind == CHAOS_FAULT_PAUSE) {
        snprintf(f->what, sizeof f->what, "SIGSTOP n%d, SIGCONT at heal",
                 f->target + 1);
        chaos_node_pause(c, (size_t)f->target);
    } else if (f->kind == CHAOS_FAULT_KILL_ALL) {
        apply_kill_all(f, c);
    } else if (f->kind == CHAOS_FAULT_DELAY_LOSS) {
        apply_delay(f, c, t, rng);
    } else if (f->kind == CHAOS_FAULT_CLOCK_SKEW) {
        apply_clock(f, c);
    } else if (f->kind == CHAOS_FAULT_FAILOVER) {
        chaos_failover_apply(f, c, t, rng);
    } else {
        apply_disk(f, c);
    }
    if (!f->is_skipped) {
        f->applied_ns = chaos_now_ns();
    }
}

/* Appends text to f->what, as far as it fits. */
static void what_append(struct chaos_fault *f, const char *text)
{
    size_t used = strlen(f->what);
    snprintf(f->what + used, sizeof f->what - used, "%s", text);
}

static void restart(struct chaos_cluster *c, size_t i)
{
    if (c->nodes[i].pid == 0 && chaos_node_start(c, i) != 0) {
        fprintf(stderr, "chaos-proc: restarting n%zu failed\n", i + 1);
    }
}

/* KILL's heal: restart, with the clock stepped back when the schedule
 * says so and libfaketime is there; the clock returns to +0 once the
 * node has served NEMESIS_STEPPED_BACK_MS (left back longer, every peer's
 * change sets would look too far ahead to a crdt node and wait). */
static void heal_kill(struct chaos_fault *f, struct chaos_cluster *c)
{
    size_t i = (size_t)f->target;
    bool is_back = f->restart_back_ms != 0 &&
                   chaos_node_set_clock(c, i, f->restart_back_ms) == 0;
    restart(c, i);
    if (!is_back) {
        return;
    }
    char text[32], note[96];
    chaos_preload_clock_format(f->restart_back_ms, text, sizeof text);
    bool is_up = chaos_node_wait_healthy(c, i, NEMESIS_RESTART_HEALTHY_MS) == 0;
    if (is_up) {
        chaos_sleep_ms(NEMESIS_STEPPED_BACK_MS);
    }
    (void)chaos_node_set_clock(c, i, 0);
    snprintf(note, sizeof note, "; restarted with its clock %s%s", text,
             is_up ? " for 1 s" : " (did not come up)");
    what_append(f, note);
}

/* DISK's heal. The node latches a failed sync (it refuses every later
 * write, by design: the style guide's EFATAL), so disabling the failure
 * points would leave it useless; it is restarted instead, as an operator
 * would after a disk error. */
static void heal_disk(struct chaos_fault *f, struct chaos_cluster *c)
{
    struct chaos_node *n = &c->nodes[f->target];
    /* An exit with a status not yet seen happened during the fault; a
     * death by signal is left to run.c's reaping, which reports it. */
    chaos_node_reap_expected(c, (size_t)f->target);
    if (n->pid > 0 && n->pid == f->disk_pid) {
        chaos_node_kill(c, (size_t)f->target);
        what_append(f, "; restarted at heal");
    }
    n->is_disk_faulted = false;
    if (n->fault_exit_note[0] != '\0') {
        char note[CHAOS_NOTE_SIZE + 32];
        snprintf(note, sizeof note, "; %s (restarted at heal)",
                 n->fault_exit_note);
        what_append(f, note);
        n->fault_exit_note[0] = '\0';
    }
    restart(c, (size_t)f->target);
}

void chaos_fault_heal(struct chaos_fault *f, struct chaos_cluster *c,
                      struct chaos_topology *t)
{
    if (f->is_skipped || f->applied_ns == 0 || f->healed_ns != 0) {
        return;
    }
    if (is_partition(f->kind)) {
        (void)chaos_topology_heal(t);
    } else if (f->kind == CHAOS_FAULT_KILL) {
        heal_kill(f, c);
    } else if (f->kind == CHAOS_FAULT_PAUSE) {
        chaos_node_resume(c, (size_t)f->target);
    } else if (f->kind == CHAOS_FAULT_KILL_ALL) {
        for (size_t i = 0; i < c->count; i++) {
            restart(c, i);
        }
    } else if (f->kind == CHAOS_FAULT_DELAY_LOSS) {
        chaos_topology_delay_heal(t);
    } else if (f->kind == CHAOS_FAULT_CLOCK_SKEW) {
        restore_clocks(c);
    } else if (f->kind == CHAOS_FAULT_FAILOVER) {
        chaos_failover_heal(f, c, t, NEMESIS_REBUILD_WAIT_MS);
    } else {
        heal_disk(f, c);
    }
    f->healed_ns = chaos_now_ns();
}
