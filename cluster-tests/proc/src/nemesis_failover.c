/* SPDX-License-Identifier: MIT
 *
 * nemesis_failover.c: leader mode's failover, done the way an operator
 * does it, and the rebuild of the nodes it leaves diverged.
 *
 * sinew changes its writer only through start-up options: "--writer-epoch
 * N: raise it each time the writer changes" (docs/operations.md). So the
 * fault picks a running follower, stops it (SIGTERM) and starts it again
 * with --writer naming itself and the next epoch; at its first tick it
 * takes over and records the fence (docs/replication.md, "Leader mode":
 * "its heads of every other origin at that moment"), which reaches the
 * others in summaries. The clients follow it (chaos_cluster.writer: the
 * operator's routing). The old writer is, by a seeded draw, killed, or
 * left running with its old options, reachable (a split brain the fence
 * must contain) or cut off from the other nodes (not from the clients:
 * it keeps acknowledging appends that must never reach the final log).
 * A stale router keeps writing to it meanwhile (workload.c).
 *
 * At the heal the cut goes, and the old writer is restarted with the
 * options of the moment (a follower of the new writer). A node that
 * applied a deposed writer's change sets beyond the fence "reports
 * diverged in its stats ... and must be rebuilt from an empty database;
 * it then joins as a follower through a snapshot" (docs/replication.md):
 * chaos_leader_rebuild_diverged() does that for every node whose
 * /v1/status says diverged, and waits (bounded) until every follower's log
 * is a prefix of the writer's; a diverged node is never promoted. The
 * takeovers and rebuilds go to chaos_cluster.history for the verdict
 * (verdict_leader.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chaos_proc.h"
#include "common.h"

#define FAILOVER_STOP_MS 15000
#define FAILOVER_HEALTHY_MS 15000
#define FAILOVER_POLL_MS 200
/* A node restarted at the heal learns the fence from summaries (every
 * second): until then it cannot say it diverged, and its log may already
 * look like a prefix (the writer's rows overwrite fenced ones by seq). */
#define FAILOVER_LEARN_MS 3000

static void note_append(struct chaos_fault *f, const char *text)
{
    size_t used = strlen(f->what);
    snprintf(f->what + used, sizeof f->what - used, "%s", text);
}

static void skip(struct chaos_fault *f, const char *reason)
{
    f->is_skipped = true;
    snprintf(f->skip_reason, sizeof f->skip_reason, "%s", reason);
}

/* Removes path (borrowed) and, if a directory, everything below it;
 * symbolic links are removed, never followed. 0 or -errno. */
static int remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        return errno == ENOENT ? 0 : -errno;
    }
    if (!S_ISDIR(st.st_mode)) {
        return unlink(path) == 0 ? 0 : -errno;
    }
    DIR *dir = opendir(path);
    if (dir == NULL) {
        return -errno;
    }
    int rc = 0;
    struct dirent *entry;
    while (rc == 0 && (entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 ||
            strcmp(entry->d_name, "..") == 0) {
            continue;
        }
        char child[CHAOS_PATH_SIZE + 256];
        snprintf(child, sizeof child, "%s/%s", path, entry->d_name);
        rc = remove_tree(child);
    }
    closedir(dir);
    return rc == 0 && rmdir(path) != 0 ? -errno : rc;
}

static bool reports_diverged(const struct chaos_node *n)
{
    json_t *status = chaos_node_status(n, 1000);
    json_t *replication = json_object_get(status, "replication");
    bool diverged = json_is_true(json_object_get(replication, "diverged"));
    json_decref(status);
    return diverged;
}

/* Stops node i, empties its data directory and starts it again: an empty
 * database that joins as a follower. Recorded in c->history. */
static void rebuild(struct chaos_cluster *c, size_t i)
{
    struct chaos_node *n = &c->nodes[i];
    struct chaos_leader_history *h = &c->history;
    char path[CHAOS_PATH_SIZE + 16];
    if (chaos_node_stop(c, i, FAILOVER_STOP_MS) != 0) {
        fprintf(stderr, "chaos-proc: rebuilding n%zu: %s\n", i + 1,
                n->exit_note);
        n->exit_note[0] = '\0'; /* in c->unclean_note: run.c fails it */
    }
    snprintf(path, sizeof path, "%s/data", n->dir);
    int rc = remove_tree(path);
    if (rc != 0) {
        fprintf(stderr, "chaos-proc: removing %s: %s\n", path, strerror(-rc));
    }
    if (h->rebuild_count < CHAOS_REBUILDS_MAX) {
        h->rebuilds[h->rebuild_count++] =
            (struct chaos_rebuild){.node = (int)i, .at_ns = chaos_now_ns()};
    } else {
        h->rebuilds_unrecorded++;
    }
    printf("          n%zu reports diverged: rebuilt from an empty "
           "database\n",
           i + 1);
    fflush(stdout);
    if (chaos_node_start(c, i) != 0) {
        fprintf(stderr, "chaos-proc: restarting n%zu failed\n", i + 1);
    }
}

int chaos_leader_rebuild_if_diverged(struct chaos_cluster *c, size_t i)
{
    ASSERT(i < c->count);
    if (c->nodes[i].pid <= 0 || !reports_diverged(&c->nodes[i])) {
        return 0;
    }
    rebuild(c, i);
    return 1;
}

/* One look at every follower: those that report diverged are rebuilt
 * (their logs may look fine: the new writer's rows, keyed by the same
 * seq, overwrite the fenced ones, but their history still holds change
 * sets beyond the fence); *rebuilt grows by how many were. Returns true
 * when every follower answered, none had diverged and every log was a
 * prefix of the writer's (a node whose fenced rows still show has not
 * learned the fence yet, and will say it diverged once it has). */
static bool rebuild_pass(struct chaos_cluster *c, size_t *rebuilt)
{
    int64_t *logs[CHAOS_NODES_MAX] = {NULL};
    size_t counts[CHAOS_NODES_MAX] = {0};
    const char *sql = "SELECT v FROM log ORDER BY seq";
    int writer = c->writer;
    bool is_done = true;
    for (size_t i = 0; i < c->count; i++) {
        if ((int)i == writer || c->nodes[i].pid <= 0 || c->nodes[i].is_paused) {
            continue;
        }
        if (chaos_leader_rebuild_if_diverged(c, i) == 1) {
            ++*rebuilt;
            is_done = false;
        } else if (chaos_fetch_integers(&c->nodes[i], sql, &logs[i],
                                        &counts[i]) != 0) {
            is_done = false;
        }
    }
    /* The followers first, then the writer: its log only grows, so a
     * follower's prefix of it stays a prefix. */
    int64_t *writer_log = NULL;
    size_t writer_count = 0;
    is_done = chaos_fetch_integers(&c->nodes[writer], sql, &writer_log,
                                   &writer_count) == 0 &&
              is_done;
    for (size_t i = 0; is_done && i < c->count; i++) {
        size_t at = 0;
        is_done =
            logs[i] == NULL || check_prefix(writer_log, writer_count, logs[i],
                                            counts[i], false, &at) == 0;
    }
    for (size_t i = 0; i < c->count; i++) {
        common_free(logs[i]);
    }
    common_free(writer_log);
    return is_done;
}

size_t chaos_leader_rebuild_diverged(struct chaos_cluster *c, int timeout_ms)
{
    ASSERT(c->mode == CHAOS_MODE_LEADER);
    int64_t now = chaos_now_ns();
    int64_t deadline = now + (int64_t)timeout_ms * 1000000;
    int64_t learned = now + (int64_t)FAILOVER_LEARN_MS * 1000000;
    size_t rebuilt = 0;
    for (;;) {
        bool is_done = rebuild_pass(c, &rebuilt);
        now = chaos_now_ns();
        if ((is_done && now >= learned) || now >= deadline ||
            chaos_stop_requested) {
            return rebuilt;
        }
        chaos_sleep_ms(FAILOVER_POLL_MS);
    }
}

/* A running follower of the writer, from the seeded pick on, that does
 * not report diverged (an operator promotes none: its history holds a
 * deposed writer's fenced commits, which a takeover would make the new
 * epoch's); -1: none. */
static int pick_follower(const struct chaos_cluster *c, int pick)
{
    for (size_t step = 0; step < c->count; step++) {
        int i = (pick + (int)step) % (int)c->count;
        if (i != c->writer && c->nodes[i].pid > 0 && !c->nodes[i].is_paused &&
            !reports_diverged(&c->nodes[i])) {
            return i;
        }
    }
    return -1;
}

/* Cuts node off from every other node (the clients still reach it). */
static bool cut_off(struct chaos_fault *f, struct chaos_cluster *c,
                    struct chaos_topology *t, int node)
{
    size_t n = c->count;
    memset(f->cut, 0, sizeof f->cut);
    for (size_t j = 0; j < n; j++) {
        if ((int)j != node) {
            f->cut[(size_t)node * n + j] = true;
            f->cut[j * n + (size_t)node] = true;
        }
    }
    return chaos_topology_can_partition(t) &&
           chaos_topology_partition(t, f->cut) == 0;
}

/* What becomes of the old writer (fault f's target) until the heal.
 * Returns false when a cut was drawn but cannot be made here (no
 * namespaces or nft): the split brain then stays reachable. */
static bool old_writer_fate(struct chaos_fault *f, struct chaos_cluster *c,
                            struct chaos_topology *t, struct chaos_takeover *tk)
{
    tk->from_demoted_ns = INT64_MAX;
    if (f->failover_fate == CHAOS_FAILOVER_KILLED) {
        chaos_node_kill(c, (size_t)f->target);
        tk->from_demoted_ns = chaos_now_ns();
    } else if (f->failover_fate == CHAOS_FAILOVER_PARTITIONED &&
               !cut_off(f, c, t, f->target)) {
        f->failover_fate = CHAOS_FAILOVER_REACHABLE;
        return false;
    }
    return true;
}

/* Stops the new writer as a follower, reading its log first, and starts
 * it again as the writer at the next epoch; the clients follow. */
static void promote(struct chaos_fault *f, struct chaos_cluster *c,
                    struct chaos_takeover *tk)
{
    size_t to = (size_t)f->other;
    tk->has_held =
        chaos_fetch_integers(&c->nodes[to], "SELECT v FROM log ORDER BY seq",
                             &tk->held, &tk->held_count) == 0;
    if (chaos_node_stop(c, to, FAILOVER_STOP_MS) != 0) {
        char note[CHAOS_NOTE_SIZE + 16];
        snprintf(note, sizeof note, "; %s", c->nodes[to].exit_note);
        note_append(f, note);
        c->nodes[to].exit_note[0] = '\0'; /* reported: run.c fails it */
    }
    tk->stop_ns = chaos_now_ns();
    c->writer_epoch++;
    tk->epoch = c->writer_epoch;
    c->writer = (int)to;
    c->deposed = f->failover_fate == CHAOS_FAILOVER_KILLED ? -1 : f->target;
    if (chaos_node_start(c, to) != 0 ||
        chaos_node_wait_healthy(c, to, FAILOVER_HEALTHY_MS) != 0) {
        note_append(f, "; the new writer did not come up");
    }
}

void chaos_failover_apply(struct chaos_fault *f, struct chaos_cluster *c,
                          struct chaos_topology *t, struct chaos_rng *rng)
{
    /* Both draws always, so later draws do not depend on the cluster. */
    int pick = (int)chaos_rng_below(rng, c->count);
    uint64_t fate = chaos_rng_below(rng, 3);
    struct chaos_leader_history *h = &c->history;
    if (c->mode != CHAOS_MODE_LEADER) {
        skip(f, "failover is a leader-mode fault");
        return;
    }
    int to = pick_follower(c, pick);
    if (to < 0 || c->deposed >= 0 || h->takeover_count == CHAOS_TAKEOVERS_MAX) {
        skip(f, to < 0 ? "no follower was running and not diverged"
                       : "a failover is pending");
        return;
    }
    static const char *const fates[] = {
        "killed", "left running and reachable (split brain)",
        "left running, cut off from the other nodes"};
    f->target = c->writer;
    f->other = to;
    f->failover_fate = (enum chaos_failover_fate)fate;
    struct chaos_takeover *tk = &h->takeovers[h->takeover_count];
    memset(tk, 0, sizeof *tk);
    tk->from = f->target;
    tk->to = to;
    bool is_as_drawn = old_writer_fate(f, c, t, tk);
    snprintf(f->what, sizeof f->what,
             "n%d restarted as the writer at epoch %llu; old writer n%d %s%s",
             to + 1, (unsigned long long)c->writer_epoch + 1, f->target + 1,
             fates[f->failover_fate],
             is_as_drawn ? "" : " (a cut was drawn: none can be made here)");
    promote(f, c, tk);
    h->takeover_count++;
}

void chaos_failover_heal(struct chaos_fault *f, struct chaos_cluster *c,
                         struct chaos_topology *t, int timeout_ms)
{
    struct chaos_leader_history *h = &c->history;
    size_t old = (size_t)f->target;
    if (f->failover_fate == CHAOS_FAILOVER_PARTITIONED) {
        (void)chaos_topology_heal(t);
    }
    for (size_t k = h->takeover_count; k-- > 0;) {
        struct chaos_takeover *tk = &h->takeovers[k];
        if (tk->from == f->target && tk->to == f->other &&
            tk->from_demoted_ns == INT64_MAX) {
            /* It still has --writer itself: an operator reconfigures it. */
            if (chaos_node_stop(c, old, FAILOVER_STOP_MS) != 0) {
                char note[CHAOS_NOTE_SIZE + 16];
                snprintf(note, sizeof note, "; %s", c->nodes[old].exit_note);
                note_append(f, note);
                c->nodes[old].exit_note[0] = '\0'; /* as in promote() */
            }
            tk->from_demoted_ns = chaos_now_ns();
            break;
        }
    }
    c->deposed = -1;
    if (c->nodes[old].pid == 0 && chaos_node_start(c, old) != 0) {
        fprintf(stderr, "chaos-proc: restarting n%zu failed\n", old + 1);
    }
    size_t rebuilt = chaos_leader_rebuild_diverged(c, timeout_ms);
    char note[96];
    snprintf(note, sizeof note,
             "; healed: n%zu restarted as a follower, %zu diverged node%s "
             "rebuilt",
             old + 1, rebuilt, rebuilt == 1 ? "" : "s");
    note_append(f, note);
}
