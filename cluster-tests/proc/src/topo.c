/* SPDX-License-Identifier: MIT
 *
 * topo.c: where the nodes live. As root, each node gets its own network
 * namespace, joined by a veth pair to a bridge in a "switch" namespace,
 * with one more namespace for the clients (chaos.md §1.3):
 *
 *   chx<pid>r<run>sw   bridge br0; veth vn<i> to node i, vc to the clients
 *   chx<pid>r<run>n<i> eth0 10.77.0.<i>/24, lo; no default route
 *   chx<pid>r<run>c    eth0 10.77.0.250/24: the workload's sockets
 *
 * Nothing is created in the root namespace, and 10.77/24 exists only
 * inside these namespaces. Partitions are one bridge-family nft table
 * "chaos" in the switch namespace (a rule per cut direction), so healing
 * is deleting the table and one place sees every frame (chaos.md §1.4).
 * The client namespace is never cut: it plays the Jepsen control node.
 *
 * Packet delay and loss are iptables NFQUEUE rules in one node's
 * namespace and a helper process (topo_delay.c).
 *
 * Without root (or when `ip netns add` fails) the topology is loopback:
 * 127.0.0.1 and free ports; partitions and delays are then skipped, and
 * reported so.
 *
 * Namespaces outlive a supervisor that dies (they are bind mounts under
 * /run/netns), hence the pid in the prefix: a later run deletes those
 * whose pid no longer runs (chaos_topology_clean_stale), and main.c tears
 * down at exit and on SIGINT/SIGTERM/SIGHUP.
 */
#define _GNU_SOURCE /* setns(2) */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chaos_proc.h"

#define TOPO_TIMEOUT_MS 10000

static int run_ip(const struct chaos_topology *t, const char *netns,
                  const char *const *words)
{
    const char *argv[24];
    size_t n = 0;
    argv[n++] = t->ip;
    for (size_t i = 0; words[i] != NULL && n + 1 < 24; i++) {
        argv[n++] = words[i];
    }
    argv[n] = NULL;
    char output[512];
    int rc =
        chaos_exec(netns, argv, NULL, output, sizeof output, TOPO_TIMEOUT_MS);
    if (rc != 0) {
        fprintf(stderr, "chaos-proc: ip %s %s: %s", words[0],
                words[1] ? words[1] : "", output[0] ? output : "failed\n");
    }
    return rc == 0 ? 0 : -EIO;
}

static void ns_name(const struct chaos_topology *t, const char *suffix,
                    char *out, size_t out_size)
{
    snprintf(out, out_size, "%s%s", t->prefix, suffix);
}

void chaos_topology_node_netns(const struct chaos_topology *t, size_t i,
                               char *out, size_t out_size)
{
    if (t->kind != CHAOS_TOPOLOGY_NETNS) {
        out[0] = '\0';
        return;
    }
    snprintf(out, out_size, "%sn%zu", t->prefix, i + 1);
}

/* Kills every process in the namespace (ip netns pids), then deletes it. */
static void netns_delete(const char *ip, const char *name)
{
    const char *pids_argv[] = {ip, "netns", "pids", name, NULL};
    char pids[4096];
    if (chaos_exec(NULL, pids_argv, NULL, pids, sizeof pids, TOPO_TIMEOUT_MS) ==
        0) {
        char *save = NULL;
        for (char *word = strtok_r(pids, " \n", &save); word != NULL;
             word = strtok_r(NULL, " \n", &save)) {
            long pid = strtol(word, NULL, 10);
            if (pid > 1) {
                kill((pid_t)pid, SIGKILL);
            }
        }
    }
    const char *del_argv[] = {ip, "netns", "del", name, NULL};
    (void)chaos_exec(NULL, del_argv, NULL, NULL, 0, TOPO_TIMEOUT_MS);
}

/* One pass over /run/netns; returns how many namespaces it deleted. */
static int clean_stale_pass(const char *ip)
{
    DIR *dir = opendir("/run/netns");
    if (dir == NULL) {
        return 0;
    }
    int deleted = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        const char *name = entry->d_name;
        size_t prefix_size = strlen(CHAOS_NETNS_PREFIX);
        if (strncmp(name, CHAOS_NETNS_PREFIX, prefix_size) != 0) {
            continue;
        }
        char *end = NULL;
        long pid = strtol(name + prefix_size, &end, 10);
        if (end == name + prefix_size || pid <= 0 ||
            (kill((pid_t)pid, 0) == 0 || errno != ESRCH)) {
            continue; /* not ours, or its supervisor still runs */
        }
        fprintf(stderr, "chaos-proc: removing stale namespace %s\n", name);
        netns_delete(ip, name);
        deleted++;
    }
    closedir(dir);
    return deleted;
}

void chaos_topology_clean_stale(void)
{
    char ip[CHAOS_PATH_SIZE];
    if (chaos_tool_find("ip", ip, sizeof ip) != 0) {
        return;
    }
    /* Entries removed while the directory is read may make readdir skip
     * others: pass again until a pass finds nothing. */
    for (int pass = 0; pass < 8 && clean_stale_pass(ip) > 0; pass++) {
    }
}

/* Creates the switch, client and node namespaces and their links. */
static int netns_build(struct chaos_topology *t)
{
    char sw[CHAOS_NAME_SIZE], cl[CHAOS_NAME_SIZE], node[CHAOS_NAME_SIZE];
    char veth[16], addr[32];
    ns_name(t, "sw", sw, sizeof sw);
    ns_name(t, "c", cl, sizeof cl);
    t->is_up = true; /* from here on, teardown has something to remove */
    const char *add_sw[] = {"netns", "add", sw, NULL};
    const char *add_cl[] = {"netns", "add", cl, NULL};
    const char *br[] = {"link", "add", "br0", "type", "bridge", NULL};
    const char *br_up[] = {"link", "set", "br0", "up", NULL};
    if (run_ip(t, NULL, add_sw) || run_ip(t, NULL, add_cl) ||
        run_ip(t, sw, br) || run_ip(t, sw, br_up)) {
        return -EIO;
    }
    for (size_t i = 0; i <= t->node_count; i++) {
        bool is_client = i == t->node_count;
        if (is_client) {
            snprintf(node, sizeof node, "%s", cl);
            snprintf(veth, sizeof veth, "vc");
            snprintf(addr, sizeof addr, CHAOS_SUBNET "%d/24",
                     CHAOS_CLIENT_HOST);
        } else {
            chaos_topology_node_netns(t, i, node, sizeof node);
            snprintf(veth, sizeof veth, "vn%zu", i + 1);
            snprintf(addr, sizeof addr, CHAOS_SUBNET "%zu/24", i + 1);
            const char *add[] = {"netns", "add", node, NULL};
            if (run_ip(t, NULL, add)) {
                return -EIO;
            }
        }
        const char *pair[] = {"link", "add",  veth,    "type", "veth", "peer",
                              "name", "eth0", "netns", node,   NULL};
        const char *master[] = {"link", "set", veth, "master", "br0", NULL};
        const char *up[] = {"link", "set", veth, "up", NULL};
        const char *lo[] = {"link", "set", "lo", "up", NULL};
        const char *ad[] = {"addr", "add", addr, "dev", "eth0", NULL};
        const char *eth[] = {"link", "set", "eth0", "up", NULL};
        if (run_ip(t, sw, pair) || run_ip(t, sw, master) || run_ip(t, sw, up) ||
            run_ip(t, node, lo) || run_ip(t, node, ad) ||
            run_ip(t, node, eth)) {
            return -EIO;
        }
    }
    return 0;
}

/* chaos-nfq in the directory of the running executable, or "". */
static void find_nfq(char *out, size_t out_size)
{
    char self[CHAOS_PATH_SIZE];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    out[0] = '\0';
    if (n <= 0) {
        return;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL) {
        return;
    }
    *slash = '\0';
    int size = snprintf(out, out_size, "%s/chaos-nfq", self);
    if (size < 0 || (size_t)size >= out_size || access(out, X_OK) != 0) {
        out[0] = '\0';
    }
}

int chaos_topology_setup(struct chaos_topology *t,
                         enum chaos_topology_kind requested, size_t node_count,
                         unsigned run_index)
{
    memset(t, 0, sizeof *t);
    t->node_count = node_count;
    t->nfq_node = -1;
    (void)chaos_tool_find("iptables", t->iptables, sizeof t->iptables);
    find_nfq(t->nfq, sizeof t->nfq);
    snprintf(t->prefix, sizeof t->prefix, CHAOS_NETNS_PREFIX "%ldr%u",
             (long)getpid(), run_index);
    t->has_nft = chaos_tool_find("nft", t->nft, sizeof t->nft) == 0;
    (void)chaos_tool_find("ss", t->ss, sizeof t->ss);
    bool has_ip = chaos_tool_find("ip", t->ip, sizeof t->ip) == 0;
    if (requested == CHAOS_TOPOLOGY_LOOPBACK) {
        t->kind = CHAOS_TOPOLOGY_LOOPBACK;
        snprintf(t->why, sizeof t->why, "requested (--topology loopback)");
        return 0;
    }
    const char *missing = geteuid() != 0 ? "not root"
                          : !has_ip      ? "no ip(8) (install iproute2)"
                                         : NULL;
    if (missing == NULL) {
        t->kind = CHAOS_TOPOLOGY_NETNS;
        if (netns_build(t) == 0) {
            snprintf(t->why, sizeof t->why,
                     "root: a namespace per node, bridged; partitions %s",
                     t->has_nft ? "by nft" : "unavailable (no nft)");
            char client[CHAOS_NAME_SIZE];
            ns_name(t, "c", client, sizeof client);
            chaos_http_set_netns(client);
            return 0;
        }
        chaos_topology_teardown(t);
        missing = "creating network namespaces failed";
    }
    if (requested == CHAOS_TOPOLOGY_NETNS) {
        fprintf(stderr, "chaos-proc: --topology netns: %s\n", missing);
        return -EPERM;
    }
    t->kind = CHAOS_TOPOLOGY_LOOPBACK;
    snprintf(t->why, sizeof t->why, "loopback fallback: %s", missing);
    return 0;
}

void chaos_topology_teardown(struct chaos_topology *t)
{
    if (t->kind != CHAOS_TOPOLOGY_NETNS || !t->is_up) {
        return;
    }
    chaos_http_clear_netns();
    chaos_topology_delay_heal(t);
    char name[CHAOS_NAME_SIZE];
    for (size_t i = 0; i < t->node_count; i++) {
        chaos_topology_node_netns(t, i, name, sizeof name);
        netns_delete(t->ip, name);
    }
    ns_name(t, "c", name, sizeof name);
    netns_delete(t->ip, name);
    ns_name(t, "sw", name, sizeof name); /* the table goes with it */
    netns_delete(t->ip, name);
    t->is_up = false;
    t->is_partitioned = false;
}

bool chaos_topology_can_partition(const struct chaos_topology *t)
{
    return t->kind == CHAOS_TOPOLOGY_NETNS && t->is_up && t->has_nft;
}

static int heal_cut(struct chaos_topology *t);

/* ss -K in node a's namespace for every socket to or from node b. */
static void kill_connections(const struct chaos_topology *t, size_t a, size_t b)
{
    if (t->ss[0] == '\0') {
        return;
    }
    char netns[CHAOS_NAME_SIZE], peer[32];
    chaos_topology_node_netns(t, a, netns, sizeof netns);
    snprintf(peer, sizeof peer, CHAOS_SUBNET "%zu", b + 1);
    const char *dst[] = {t->ss, "-K", "-t", "dst", peer, NULL};
    (void)chaos_exec(netns, dst, NULL, NULL, 0, TOPO_TIMEOUT_MS);
}

int chaos_topology_partition(struct chaos_topology *t, const bool *cut)
{
    if (!chaos_topology_can_partition(t)) {
        return -ENOTSUP;
    }
    char rules[4096];
    size_t used = (size_t)snprintf(
        rules, sizeof rules,
        "table bridge chaos {\n  chain nemesis {\n"
        "    type filter hook forward priority 0; policy accept;\n");
    size_t n = t->node_count;
    for (size_t a = 0; a < n; a++) {
        for (size_t b = 0; b < n; b++) {
            if (cut[a * n + b] && used < sizeof rules) {
                used +=
                    (size_t)snprintf(rules + used, sizeof rules - used,
                                     "    ip saddr " CHAOS_SUBNET
                                     "%zu ip daddr " CHAOS_SUBNET "%zu drop\n",
                                     a + 1, b + 1);
            }
        }
    }
    if (used + 16 >= sizeof rules) {
        return -E2BIG;
    }
    snprintf(rules + used, sizeof rules - used, "  }\n}\n");
    char sw[CHAOS_NAME_SIZE], output[512];
    ns_name(t, "sw", sw, sizeof sw);
    (void)heal_cut(t); /* replace, never stack, cuts */
    const char *argv[] = {t->nft, "-f", "-", NULL};
    int rc =
        chaos_exec(sw, argv, rules, output, sizeof output, TOPO_TIMEOUT_MS);
    if (rc != 0) {
        fprintf(stderr, "chaos-proc: nft: %s", output);
        return -EIO;
    }
    t->is_partitioned = true;
    for (size_t a = 0; a < n; a++) {
        for (size_t b = 0; b < n; b++) {
            if (cut[a * n + b]) {
                kill_connections(t, a, b);
                kill_connections(t, b, a);
            }
        }
    }
    return 0;
}

static int heal_cut(struct chaos_topology *t)
{
    if (!t->is_partitioned) {
        return 0;
    }
    char sw[CHAOS_NAME_SIZE];
    ns_name(t, "sw", sw, sizeof sw);
    const char *argv[] = {t->nft, "delete", "table", "bridge", "chaos", NULL};
    int rc = chaos_exec(sw, argv, NULL, NULL, 0, TOPO_TIMEOUT_MS);
    t->is_partitioned = false;
    return rc == 0 ? 0 : -EIO;
}

int chaos_topology_heal(struct chaos_topology *t)
{
    chaos_topology_delay_heal(t);
    return heal_cut(t);
}
