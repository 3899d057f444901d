/* SPDX-License-Identifier: MIT
 *
 * sim.c: one seed from start to verdict (chaos-design.md §5): set up the
 * nodes on a fault-free network, run the fault phase (workload + the
 * nemesis schedule + the swarm's link, clock and disk faults), heal
 * everything, run a light workload, wait (bounded) for the mode to
 * settle, then let the mode's checkers judge the history.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_int.h"

#define SIM_SETUP_MS 2000

const char *sim_mode_name(enum sim_mode mode)
{
    static const char *const names[] = {"crdt", "leader", "quorum", "all"};

    return (unsigned)mode <= SIM_MODE_ALL ? names[mode] : "?";
}

int sim_mode_parse(const char *text, enum sim_mode *out)
{
    for (int m = SIM_MODE_CRDT; m <= SIM_MODE_ALL; m++) {
        if (strcmp(text, sim_mode_name((enum sim_mode)m)) == 0) {
            *out = (enum sim_mode)m;
            return 0;
        }
    }
    return SIM_EFAILED;
}

int sim_fail(struct sim *sim, const char *checker, int64_t key,
             const char *format, ...)
{
    struct sim_result *r = sim->result;
    va_list ap;

    if (r->failed) {
        return SIM_EFAILED;
    }
    r->failed = true;
    snprintf(r->checker, sizeof(r->checker), "%s", checker);
    r->key = key;
    r->at_ms = sim->now_ms;
    va_start(ap, format);
    vsnprintf(r->message, sizeof(r->message), format, ap);
    va_end(ap);
    sim_tracef(sim, -1, "FAIL %s: %s", checker, r->message);
    return SIM_EFAILED;
}

bool sim_failed(const struct sim *sim)
{
    return sim->result->failed;
}

static uint64_t network_now(void *ctx)
{
    return ((struct sim *)ctx)->now_ms;
}

static uint64_t network_random(void *ctx)
{
    return sim_rng_next(&((struct sim *)ctx)->rng[SIM_RNG_NETWORK]);
}

void sim_remove_tree(const char *path)
{
    DIR *dir = opendir(path);
    struct dirent *entry;
    char child[1024];

    if (dir == NULL) {
        (void)unlink(path);
        return;
    }
    while ((entry = readdir(dir)) != NULL) {
        if (strcmp(entry->d_name, ".") == 0 ||
            strcmp(entry->d_name, "..") == 0) {
            continue;
        }
        snprintf(child, sizeof(child), "%s/%s", path, entry->d_name);
        sim_remove_tree(child);
    }
    closedir(dir);
    (void)rmdir(path);
}

static bool linked(const struct sim_config *c, unsigned a, unsigned b)
{
    unsigned lo = a < b ? a : b, hi = a < b ? b : a;

    switch (c->topology) {
    case SIM_TOPOLOGY_RING:
        return hi - lo == 1 || (lo == 0 && hi == c->nodes - 1);
    case SIM_TOPOLOGY_LINE:
        return hi - lo == 1;
    default:
        return true;
    }
}

static int init_nodes(struct sim *sim)
{
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        struct sim_node *node = &sim->nodes[i];

        node->sim = sim;
        node->index = i;
        memset(node->id.key, (int)(i + 1), sizeof(node->id.key));
        char run_dir[sizeof(sim->dir)];

        /* A copy: gcc takes members of one object (sim) for overlapping
         * arguments (-Wrestrict). */
        memcpy(run_dir, sim->dir, sizeof(run_dir));
        snprintf(node->address, sizeof(node->address), "n%u",
                 i % SIM_NODES_MAX);
        snprintf(node->dir, sizeof(node->dir), "%s/n%u", run_dir, i);
        snprintf(node->db_path, sizeof(node->db_path), "%s/n%u/db", run_dir, i);
        node->clock_wall = sim->config.mode != SIM_MODE_QUORUM;
        for (unsigned j = 0; j < sim->config.nodes; j++) {
            node->links[j] = j != i && linked(&sim->config, i, j);
        }
        if (mkdir(node->dir, 0700) != 0) {
            return SIM_EIO;
        }
    }
    for (unsigned c = 0; c < sim->config.clients; c++) {
        struct sim_client *client = &sim->clients[c];

        client->index = c;
        client->id = c + 1;
        client->node = c % sim->config.nodes;
    }
    return 0;
}

static const struct sim_mode_ops *mode_ops(enum sim_mode mode)
{
    switch (mode) {
    case SIM_MODE_CRDT:
        return &sim_crdt_ops;
    case SIM_MODE_LEADER:
        return &sim_leader_ops;
    default:
        return sim_quorum_ops.name != NULL ? &sim_quorum_ops : NULL;
    }
}

/* The canonical path of directory path, as /proc/self/fd names it (the
 * form the disk compares with), into out. */
static int canonical_dir(const char *path, char *out, size_t size)
{
    char link[64];
    ssize_t n;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0) {
        return SIM_EIO;
    }
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    n = readlink(link, out, size);
    close(fd);
    if (n <= 0 || (size_t)n >= size) {
        return SIM_EIO;
    }
    out[n] = '\0';
    return 0;
}

/* Makes the run's temp dir under options.tmp_dir, $TMPDIR or /tmp, and
 * stores its
 * canonical path: the disk names a file's owner by the path
 * /proc/self/fd gives, which has every symlink resolved, so a run dir
 * under a TMPDIR that is (or passes through) a symlink would own no file
 * and no crash would lose anything. */
static int make_run_dir(struct sim *sim)
{
    const char *tmp =
        sim->options.tmp_dir != NULL ? sim->options.tmp_dir : getenv("TMPDIR");
    char made[sizeof(sim->dir)];
    int n = snprintf(made, sizeof(made), "%s/sinew-sim-XXXXXX",
                     tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");

    if (n < 0 || (size_t)n >= sizeof(made) || mkdtemp(made) == NULL) {
        return SIM_EIO;
    }
    if (canonical_dir(made, sim->dir, sizeof(sim->dir)) != 0) {
        sim->dir[0] = '\0';
        (void)rmdir(made);
        return SIM_EIO;
    }
    return 0;
}

static int open_sim(struct sim *sim)
{
    const struct transport_clock clock = {.now_ms = network_now, .ctx = sim};
    const struct transport_random random = {.next = network_random, .ctx = sim};
    const struct transport_memory_link_faults perfect = {.delay_ms = 1};
    int rc = make_run_dir(sim);

    if (rc == 0) {
        rc = init_nodes(sim);
    }
    if (rc == 0) {
        rc = transport_memory_network_new(&clock, &random, &sim->net);
    }
    if (rc == 0) {
        rc = transport_memory_network_set_default_link(sim->net, &perfect);
    }
    if (rc == 0) {
        rc = sim_disk_open(sim, &sim->disk);
    }
    return rc;
}

static void close_sim(struct sim *sim)
{
    for (unsigned i = 0; i < sim->config.nodes; i++) {
        if (sim->nodes[i].up) {
            sim_node_stop(sim, i, false);
        }
    }
    if (sim->ops != NULL && sim->ops->teardown != NULL) {
        sim->ops->teardown(sim);
    }
    sim_nemesis_free(sim);
    if (sim->net != NULL) {
        transport_memory_network_free(sim->net);
    }
    sim_disk_close(sim->disk);
    if (sim->dir[0] != '\0' && !sim->options.keep) {
        sim_remove_tree(sim->dir);
    }
    for (size_t i = 0; i < sim->history_count; i++) {
        common_free(sim->history[i].read_values);
        common_free(sim->history[i].read_epochs);
    }
    common_free(sim->history);
}

static void clients_active(struct sim *sim, unsigned count)
{
    for (unsigned c = 0; c < sim->config.clients; c++) {
        sim->clients[c].active = c < count;
        sim->clients[c].due_ms =
            sim->now_ms + sim_rng_below(&sim->rng[SIM_RNG_WORKLOAD], 50);
    }
}

static int run_phases(struct sim *sim)
{
    int rc = sim->ops->setup(sim);

    if (rc == 0) {
        sim->phase = SIM_PHASE_SETUP;
        rc = sim_loop_run(sim, sim->now_ms + SIM_SETUP_MS);
    }
    if (rc == 0) {
        rc = transport_memory_network_set_default_link(sim->net,
                                                       &sim->config.link);
    }
    if (rc == 0) {
        rc = sim_nemesis_plan(sim);
    }
    if (rc != 0) {
        return rc;
    }
    sim->phase = SIM_PHASE_FAULT;
    sim_disk_faults(sim->disk, true);
    clients_active(sim, sim->config.clients);
    rc = sim_loop_run(sim, sim->now_ms + sim->config.fault_ms);
    if (rc == 0) {
        rc = sim_nemesis_heal(sim);
    }
    if (rc == 0) {
        rc = sim->ops->heal(sim);
    }
    if (rc != 0) {
        return rc;
    }
    sim->phase = SIM_PHASE_HEALED;
    sim->healed_at_ms = sim->now_ms;
    clients_active(sim, 1);
    rc = sim_loop_run(sim, sim->now_ms + sim->config.healed_ms);
    clients_active(sim, 0);
    if (rc == 0) {
        rc = sim_loop_until_settled(sim, sim->healed_at_ms +
                                             sim->config.liveness_ms);
    }
    if (rc != 0) {
        return rc;
    }
    sim->result->settle_ms = sim->now_ms - sim->healed_at_ms;
    sim->phase = SIM_PHASE_FINAL;
    return sim->ops->final_check(sim);
}

static void count_ops(struct sim *sim)
{
    for (size_t i = 0; i < sim->history_count; i++) {
        switch (sim->history[i].outcome) {
        case SIM_OK:
            sim->result->ops_ok++;
            break;
        case SIM_FAIL:
            sim->result->ops_fail++;
            break;
        default:
            sim->result->ops_unknown++;
            break;
        }
    }
}

int sim_run_seed(const struct sim_options *options, struct sim_result *result)
{
    struct sim *sim = common_calloc(1, sizeof(*sim));
    int rc;

    if (sim == NULL) {
        return COMMON_ENOMEM;
    }
    memset(result, 0, sizeof(*result));
    result->key = -1;
    sim->options = *options;
    sim->result = result;
    sim_rng_split(options->seed, sim->rng);
    sim_swarm_draw(options, &sim->rng[SIM_RNG_SWARM], &sim->config);
    sim_swarm_format(options->seed, &sim->config, result->config_line,
                     sizeof(result->config_line));
    if (options->trace) {
        printf("%s\n", result->config_line);
    }
    sim->ops = mode_ops(sim->config.mode);
    if (sim->ops == NULL) {
        common_free(sim);
        return SIM_ENOTBUILT;
    }
    rc = open_sim(sim);
    if (rc == 0) {
        rc = run_phases(sim);
        if (rc != 0 && !result->failed) {
            sim_fail(sim, "setup", -1, "the run stopped: %s",
                     common_strerror(rc));
        }
        rc = 0;
    }
    count_ops(sim);
    if (options->history_path != NULL) {
        (void)sim_history_write(sim, options->history_path);
    }
    result->sim_ms = sim->now_ms;
    result->trace_hash = sim->trace_hash;
    close_sim(sim);
    common_free(sim);
    return rc;
}

void sim_result_print(FILE *out, const char *argv0,
                      const struct sim_options *options,
                      const struct sim_result *r)
{
    if (!r->failed) {
        fprintf(
            out,
            "ok   mode=%s seed=0x%llx hash=%016llx sim=%llums ops=%llu/"
            "%llu/%llu crashes=%llu settle=%llums\n",
            sim_mode_name(options->mode), (unsigned long long)options->seed,
            (unsigned long long)r->trace_hash, (unsigned long long)r->sim_ms,
            (unsigned long long)r->ops_ok, (unsigned long long)r->ops_fail,
            (unsigned long long)r->ops_unknown, (unsigned long long)r->crashes,
            (unsigned long long)r->settle_ms);
        return;
    }
    fprintf(out,
            "FAIL mode=%s seed=0x%llx checker=%s key=%lld t=%llums: %s"
            "  replay: %s --mode %s --seed 0x%llx%s\n",
            sim_mode_name(options->mode), (unsigned long long)options->seed,
            r->checker, (long long)r->key, (unsigned long long)r->at_ms,
            r->message, argv0, sim_mode_name(options->mode),
            (unsigned long long)options->seed,
            options->profile == 1 ? " --profile ties" : "");
}
