/* SPDX-License-Identifier: MIT
 *
 * chaos_proc.h: the internals of chaos-proc, the real-process tier of
 * sinew's chaos suite (issue 9; chaos.md §3.2). It starts real `sinew
 * serve` processes, in network namespaces joined by a bridge when it runs
 * as root (chaos.md §1.3) or on loopback otherwise, drives a workload over
 * the nodes' HTTP API while a seeded schedule of faults (nemeses) runs, and
 * judges the recorded history with the suite's checkers (check.h).
 *
 * Files: exec.c (running ip/nft/ss and entering namespaces), topo.c
 * (namespaces, bridge, partitions, cleanup), topo_delay.c (packet delay
 * through chaos-nfq, nfq.c, and nfq_plan.c), node.c (the node processes),
 * preload.c (libfaketime and libfiu under every node), nemesis_cut.c
 * (partition shapes), nemesis_failover.c (leader mode's failover and
 * the rebuild of diverged nodes),
 * http.c (a blocking HTTP client with deadlines, Hrana statements),
 * workload.c (client threads, histories), nemesis.c (the fault schedule),
 * verdict.c (checks), verdict_leader.c (leader mode's checks), scenario.c
 * (the targeted scenarios: fixed schedules with explicit expectations),
 * report.c (report.md, report.json), run.c (one run), main.c (options and
 * profiles).
 */
#ifndef SINEW_CHAOS_PROC_H
#define SINEW_CHAOS_PROC_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "check.h"

#define CHAOS_NODES_MAX 7
#define CHAOS_CLIENTS_MAX 16
#define CHAOS_FAULTS_MAX 128
#define CHAOS_PATH_SIZE 512
#define CHAOS_NAME_SIZE 64
#define CHAOS_NOTE_SIZE 256

/* The test subnet: node i is 10.77.0.i, the client namespace
 * 10.77.0.CHAOS_CLIENT_HOST; nothing else is ever addressed. */
#define CHAOS_SUBNET "10.77.0."
#define CHAOS_CLIENT_HOST 250
#define CHAOS_NETNS_HTTP_PORT 8080
#define CHAOS_NETNS_PEER_PORT 7000

/* Every namespace the suite creates starts with this, then the
 * supervisor's pid: stale ones (pid gone) are removed at start. */
#define CHAOS_NETNS_PREFIX "chx"

/* Set by main.c's signal handlers (defined in run.c): the run stops,
 * cleans up and fails. */
extern volatile sig_atomic_t chaos_stop_requested;

enum chaos_mode {
    CHAOS_MODE_QUORUM = 0,
    CHAOS_MODE_CRDT = 1,
    CHAOS_MODE_LEADER = 2, /* n1 (CHAOS_LEADER_WRITER) writes first */
    CHAOS_MODE_COUNT = 3,
};

/* The first writer of a leader-mode cluster, at epoch 1. The product
 * changes writers only through start-up options (--writer and
 * --writer-epoch, docs/operations.md), so the failover fault does what an
 * operator does: it restarts a follower as the writer at a higher epoch
 * (nemesis_failover.c); chaos_cluster.writer says who writes now. */
#define CHAOS_LEADER_WRITER 0

enum chaos_topology_kind {
    CHAOS_TOPOLOGY_AUTO = 0,
    CHAOS_TOPOLOGY_LOOPBACK = 1,
    CHAOS_TOPOLOGY_NETNS = 2,
};

/* ------------------------------------------------------------------------
 * exec.c
 * ------------------------------------------------------------------------ */

/* Monotonic nanoseconds (CLOCK_MONOTONIC): every time in a history. */
int64_t chaos_now_ns(void);
void chaos_sleep_ms(int64_t ms);

/* Finds the executable name in $PATH, /usr/sbin and /sbin; its absolute
 * path goes to out. 0 or -ENOENT. */
int chaos_tool_find(const char *name, char *out, size_t out_size);

/* Runs argv (borrowed; argv[0] an absolute path) in the named network
 * namespace (NULL: the supervisor's), with input (borrowed, NULL: none) on
 * its standard input and its standard output and error, up to output_size
 * - 1 bytes, in output (NULL: discarded). Kills it after timeout_ms.
 * Returns its exit status (0..255), or -ETIMEDOUT, -errno. */
int chaos_exec(const char *netns, const char *const argv[], const char *input,
               char *output, size_t output_size, int timeout_ms);

/* In a forked child only: enters the named network namespace. 0 or -1. */
int chaos_netns_enter(const char *netns);

/* ------------------------------------------------------------------------
 * topo.c
 * ------------------------------------------------------------------------ */

struct chaos_topology {
    enum chaos_topology_kind kind; /* LOOPBACK or NETNS once set up */
    char why[CHAOS_NOTE_SIZE];     /* why this kind (e.g. not root) */
    char prefix[32];               /* chx<pid>r<run> */
    size_t node_count;
    bool is_up;          /* namespaces exist (NETNS) */
    bool is_partitioned; /* the bridge table exists */
    char ip[CHAOS_PATH_SIZE], nft[CHAOS_PATH_SIZE], ss[CHAOS_PATH_SIZE];
    bool has_nft;
    char iptables[CHAOS_PATH_SIZE]; /* "" when not installed */
    char nfq[CHAOS_PATH_SIZE];      /* chaos-nfq beside chaos-proc, or "" */
    pid_t nfq_pid;                  /* the running delay helper, 0: none */
    int nfq_node;                   /* the node it delays, -1: none */
};

/* Deletes namespaces named chx<pid>... whose pid no longer runs, killing
 * what runs inside them first. Silent when there are none. */
void chaos_topology_clean_stale(void);

/* Sets t up for node_count nodes: namespaces when requested is NETNS or
 * AUTO and the supervisor is root and `ip netns add` works, else loopback
 * (AUTO) or an error (NETNS). run_index makes the prefix unique. */
int chaos_topology_setup(struct chaos_topology *t,
                         enum chaos_topology_kind requested, size_t node_count,
                         unsigned run_index);

/* Removes every namespace and rule of t; idempotent. */
void chaos_topology_teardown(struct chaos_topology *t);

/* The namespace of node i (0-based) into out; "" for loopback. */
void chaos_topology_node_netns(const struct chaos_topology *t, size_t i,
                               char *out, size_t out_size);

/* True when partitions can be made (NETNS with nft). */
bool chaos_topology_can_partition(const struct chaos_topology *t);

/* Drops every frame from node a to node b where cut[a][b] (0-based,
 * node_count squared, row-major), replacing the previous cut atomically,
 * then kills the TCP connections across the cut (ss -K) so that the
 * partition breaks sessions (chaos.md §1.7). */
int chaos_topology_partition(struct chaos_topology *t, const bool *cut);

/* Removes the cut and any packet delay (chaos_topology_delay_heal). */
int chaos_topology_heal(struct chaos_topology *t);

/* ------------------------------------------------------------------------
 * topo_delay.c and nfq_plan.c: packet delay and loss (chaos.md §1.6)
 * ------------------------------------------------------------------------ */

#define CHAOS_NFQ_QUEUE 7            /* queue numbers are per namespace */
#define CHAOS_NFQ_DELAY_MS_MAX 60000 /* per packet, base or jitter */

/* What chaos-nfq does with each packet of its queue: drop loss_percent of
 * them, hold the others delay_ms + U[0, jitter_ms) ms, then accept them
 * (later packets may overtake earlier ones: reordering). */
struct chaos_nfq_config {
    unsigned queue;   /* NFQUEUE number, 0..65535 */
    int delay_ms;     /* 0..CHAOS_NFQ_DELAY_MS_MAX */
    int jitter_ms;    /* 0..CHAOS_NFQ_DELAY_MS_MAX */
    int loss_percent; /* 0..100 */
    uint64_t seed;
};

/* Parses chaos-nfq's arguments (argv borrowed; argv[0] the program):
 * --queue N --delay-ms N --jitter-ms N --loss-percent N --seed N, each
 * once, all required. 0, or -EINVAL with the reason in error. */
int chaos_nfq_args_parse(int argc, const char *const *argv,
                         struct chaos_nfq_config *out, char *error,
                         size_t error_size);
/* The arguments for config after argv[0] into argv (12 slots, NULL-
 * terminated), their text in storage. */
void chaos_nfq_args_format(const struct chaos_nfq_config *config,
                           const char **argv, char storage[5][24]);

struct chaos_rng;
/* The next packet's fate: -1 to drop it, else its delay in ms. */
int chaos_nfq_packet_delay_ms(const struct chaos_nfq_config *config,
                              struct chaos_rng *rng);

/* Why packet delay cannot be made on t (loopback, no iptables, chaos-nfq
 * not built), or NULL when it can. */
const char *chaos_topology_delay_unavailable(const struct chaos_topology *t);

/* Starts chaos-nfq in node's namespace with config (borrowed), waits until
 * it has bound its queue, then sends the node's outgoing peer traffic
 * (TCP to or from the peer port) to it with iptables NFQUEUE
 * --queue-bypass (a helper gone lets packets through). One delay at a
 * time: an earlier one is healed first. The helper's messages go to
 * log_path (borrowed). */
int chaos_topology_delay(struct chaos_topology *t, size_t node,
                         const struct chaos_nfq_config *config,
                         const char *log_path);
/* Deletes the rules, stops the helper (SIGTERM: it accepts what it holds;
 * SIGKILL after 2 s). Idempotent; teardown and chaos_topology_heal() call
 * it. */
void chaos_topology_delay_heal(struct chaos_topology *t);

/* The fd of the client namespace for sockets, or -1 (loopback). Sockets
 * made by chaos_http_* are created in it. */
void chaos_http_set_netns(const char *netns);
void chaos_http_clear_netns(void);

/* ------------------------------------------------------------------------
 * node.c
 * ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------
 * preload.c: the libraries every node is started under when installed
 * ------------------------------------------------------------------------ */

struct chaos_preload {
    char faketime[CHAOS_PATH_SIZE];  /* libfaketimeMT.so.1, "" missing */
    char fiu_run[CHAOS_PATH_SIZE];   /* fiu_run_preload.so, "" missing */
    char fiu_posix[CHAOS_PATH_SIZE]; /* fiu_posix_preload.so, "" missing */
};

/* Finds the libraries (CHAOS_PROC_PRELOAD=0 in the environment: none). */
void chaos_preload_detect(struct chaos_preload *p);
/* Why a clock skew or a disk fault cannot be injected, or NULL. */
const char *chaos_preload_faketime_missing(const struct chaos_preload *p);
const char *chaos_preload_fiu_missing(const struct chaos_preload *p);

#define CHAOS_PRELOAD_ENV_EXTRA 8 /* variables chaos_preload_env adds */

/* The environment of a node whose directory is node_dir (borrowed):
 * environ without the variables below, then LD_PRELOAD, FAKETIME_* (the
 * timestamp file node_dir/faketime.rc), FIU_CTRL_FIFO (node_dir/fiu),
 * FIU_ENABLE and ASAN_OPTIONS (verify_asan_link_order=0: the preloads
 * come before a sanitizer's runtime). *env is owned by the caller
 * (common_free; one block, strings included), NULL-terminated. */
int chaos_preload_env(const struct chaos_preload *p, const char *node_dir,
                      char ***env);

/* libfaketime's text for an offset: "+0", "+2.500s", "-3600s". */
void chaos_preload_clock_format(int64_t offset_ms, char *out, size_t out_size);
/* Writes offset_ms into node_dir/faketime.rc (write aside, rename: a
 * reader never sees half a file). 0 or -errno. */
int chaos_preload_clock_write(const char *node_dir, int64_t offset_ms);

/* Sends command (borrowed, one libfiu remote-control line, e.g. "enable
 * name=posix/io/sync/fsync") to process pid through its FIFOs
 * node_dir/fiu-<pid>.in and .out, the protocol of fiu-ctrl, waiting at
 * most timeout_ms. 0, -EIO when libfiu refused it, -ETIMEDOUT, -errno. */
int chaos_preload_fiu_command(const char *node_dir, pid_t pid,
                              const char *command, int timeout_ms);

struct chaos_node {
    size_t index; /* 0-based; named n<index+1> */
    pid_t pid;    /* 0: not running */
    bool is_paused;
    char netns[CHAOS_NAME_SIZE]; /* "" on loopback */
    char host[64];               /* the address it binds */
    int http_port;
    int peer_port;
    char id[65]; /* node id, 64 hex digits */
    char dir[CHAOS_PATH_SIZE];
    int unexpected_exits;
    char exit_note[CHAOS_NOTE_SIZE];
    int64_t clock_offset_ms; /* what its faketime.rc holds */
    /* A disk fault is on: an exit with a status is then expected (not a
     * crash by signal); chaos_cluster_reap notes it in fault_exit_note. */
    bool is_disk_faulted;
    char fault_exit_note[CHAOS_NOTE_SIZE];
};

/* Leader mode: one failover, as the verdict needs it (verdict_leader.c).
 * Its times are monotonic ns; from_demoted_ns <= stop_ns when the old
 * writer was killed, so it never wrote while deposed. */
struct chaos_takeover {
    int from;                /* the deposed writer */
    int to;                  /* the new writer */
    uint64_t epoch;          /* the new writer's */
    int64_t stop_ns;         /* the new writer stopped as a follower */
    int64_t from_demoted_ns; /* the old one killed or restarted as a
                                follower (INT64_MAX: never) */
    /* The new writer's log read just before its stop: a lower bound of
     * what it held when it took over (owned: chaos_cluster_release). */
    int64_t *held;
    size_t held_count;
    bool has_held; /* the read answered */
};

/* Leader mode: a diverged node wiped and restarted as a follower. */
struct chaos_rebuild {
    int node;
    int64_t at_ns; /* monotonic: when its database was wiped */
};

#define CHAOS_TAKEOVERS_MAX CHAOS_FAULTS_MAX
#define CHAOS_REBUILDS_MAX (4 * CHAOS_FAULTS_MAX)

/* Leader mode's failovers and rebuilds of a run, in time order. */
struct chaos_leader_history {
    struct chaos_takeover takeovers[CHAOS_TAKEOVERS_MAX];
    size_t takeover_count;
    struct chaos_rebuild rebuilds[CHAOS_REBUILDS_MAX];
    size_t rebuild_count;
    size_t rebuilds_unrecorded; /* past CHAOS_REBUILDS_MAX */
};

struct chaos_cluster {
    enum chaos_mode mode;
    const char *binary; /* borrowed: the sinew executable */
    char dir[CHAOS_PATH_SIZE];
    size_t count;
    struct chaos_node nodes[CHAOS_NODES_MAX];
    int leader_hint; /* last node known to lead (quorum), -1 none */
    struct chaos_preload preload; /* what every node runs under */
    /* Leader mode, written by the supervisor and read by the clients (the
     * operator's routing): the writer a (re)started node's --writer names
     * and its --writer-epoch, and a deposed writer still running with its
     * old options (-1: none), which a stale router keeps writing to. */
    volatile int writer;
    volatile int deposed;
    uint64_t writer_epoch;
    struct chaos_leader_history history;
    /* Stops during the run (chaos_node_stop) that did not end in exit 0,
     * and the first one's note: run.c fails the run for them. */
    int unclean_stops;
    char unclean_note[CHAOS_NOTE_SIZE];
};

/* Makes keys and the cluster secret in dir (borrowed) and chooses the
 * addresses: the namespace addresses, or free loopback ports. */
int chaos_cluster_init(struct chaos_cluster *c, enum chaos_mode mode,
                       const char *binary, const char *dir, size_t count,
                       const struct chaos_topology *t);

/* Starts every node and waits until it serves (and, in quorum mode, until
 * every node is a voter), up to timeout_ms. */
int chaos_cluster_start(struct chaos_cluster *c, int timeout_ms);

int chaos_node_start(struct chaos_cluster *c, size_t i);
/* SIGTERM to node i (SIGCONT first), waiting up to timeout_ms, then
 * SIGKILL: 0 when it exited 0, 1 otherwise (its exit_note says how; also
 * counted in c->unclean_stops). */
int chaos_node_stop(struct chaos_cluster *c, size_t i, int timeout_ms);
/* Frees what the cluster owns (the leader history's logs). */
void chaos_cluster_release(struct chaos_cluster *c);
/* Writes node i's clock offset (chaos_preload_clock_write); -ENOTSUP
 * without libfaketime. */
int chaos_node_set_clock(struct chaos_cluster *c, size_t i, int64_t offset_ms);
/* Waits until node i serves /health: 0, or -ETIMEDOUT after timeout_ms. */
int chaos_node_wait_healthy(struct chaos_cluster *c, size_t i, int timeout_ms);
void chaos_node_kill(struct chaos_cluster *c, size_t i);
void chaos_node_pause(struct chaos_cluster *c, size_t i);
void chaos_node_resume(struct chaos_cluster *c, size_t i);

/* Notes nodes that exited without being told to (0 or the count). */
int chaos_cluster_reap(struct chaos_cluster *c);
/* The same for node i alone: 1 when it exited unexpectedly, else 0 (also
 * when it exited with a status during a disk fault: fault_exit_note). */
int chaos_node_reap(struct chaos_cluster *c, size_t i);
/* Reaps node i only if it exited with a status during a disk fault (a
 * death by signal stays for chaos_cluster_reap to report). */
void chaos_node_reap_expected(struct chaos_cluster *c, size_t i);

/* SIGTERM to every node, waiting up to timeout_ms; returns how many did
 * not exit 0 (those are then killed). */
int chaos_cluster_stop(struct chaos_cluster *c, int timeout_ms);

/* SIGKILL to every node still running (cleanup path). */
void chaos_cluster_kill_all(struct chaos_cluster *c);

/* The node whose /v1/status says it leads and is ready, or -1. */
int chaos_cluster_find_leader(struct chaos_cluster *c, int timeout_ms);

/* ------------------------------------------------------------------------
 * http.c
 * ------------------------------------------------------------------------ */

enum chaos_http_outcome {
    CHAOS_HTTP_OK = 0,       /* a whole response arrived */
    CHAOS_HTTP_NOT_SENT = 1, /* connecting failed: the node saw nothing */
    CHAOS_HTTP_UNKNOWN = 2,  /* failed after the request may have arrived */
};

/* One HTTP/1.1 request with Connection: close to host:port (borrowed),
 * bounded by timeout_ms in all. body NULL makes it a GET. On CHAOS_HTTP_OK
 * *status and *response (owned by the caller, common_free) are set. */
enum chaos_http_outcome chaos_http_request(const char *host, int port,
                                           const char *path, const char *body,
                                           int timeout_ms, int *status,
                                           char **response);

enum chaos_sql_outcome {
    CHAOS_SQL_OK = 0,
    CHAOS_SQL_FAILED = 1,  /* definitely not applied */
    CHAOS_SQL_UNKNOWN = 2, /* may or may not have been applied */
};

struct chaos_sql_result {
    enum chaos_sql_outcome outcome;
    json_t *rows;     /* OK: the rows array, owned (json_decref) */
    int64_t affected; /* OK: affected_row_count */
    char code[48];    /* FAILED/UNKNOWN: the error code or "" */
    char message[CHAOS_NOTE_SIZE];
};

/* Runs sql (borrowed) with arg_count integer arguments on node (borrowed)
 * as one Hrana pipeline [execute, close]. NOT_LEADER, SQLITE_BUSY,
 * SERVER_SHUTTING_DOWN, statement errors and refused connections are
 * FAILED; timeouts, resets and TRANSACTION_UNKNOWN are UNKNOWN. */
void chaos_sql(const struct chaos_node *node, const char *sql,
               const int64_t *args, size_t arg_count, int timeout_ms,
               struct chaos_sql_result *out);
void chaos_sql_result_release(struct chaos_sql_result *result);

/* GET /v1/status of node as JSON (owned), or NULL. */
json_t *chaos_node_status(const struct chaos_node *node, int timeout_ms);

/* ------------------------------------------------------------------------
 * nemesis.c
 * ------------------------------------------------------------------------ */

enum chaos_fault_kind {
    CHAOS_FAULT_KILL = 0,       /* SIGKILL, restart at heal */
    CHAOS_FAULT_PAUSE = 1,      /* SIGSTOP, SIGCONT at heal */
    CHAOS_FAULT_HALVES = 2,     /* two random halves cannot talk */
    CHAOS_FAULT_ISOLATE = 3,    /* one node (quorum: the leader) alone */
    CHAOS_FAULT_ONE_WAY = 4,    /* a -> b dropped, b -> a flows */
    CHAOS_FAULT_RING = 5,       /* majorities ring (3 nodes: a bridge) */
    CHAOS_FAULT_KILL_ALL = 6,   /* SIGKILL every node, restart all at heal */
    CHAOS_FAULT_DELAY_LOSS = 7, /* a node's peer packets delayed, dropped */
    CHAOS_FAULT_CLOCK_SKEW = 8, /* wall clock of one or two nodes stepped */
    CHAOS_FAULT_DISK = 9,       /* a node's fsync or pwrite fails */
    CHAOS_FAULT_FAILOVER = 10,  /* leader: a follower becomes the writer */
    CHAOS_FAULT_KIND_COUNT = 11,
};

/* FAILOVER: what becomes of the old writer until the heal. */
enum chaos_failover_fate {
    CHAOS_FAILOVER_KILLED = 0,      /* SIGKILL, restarted at heal */
    CHAOS_FAILOVER_REACHABLE = 1,   /* left running: split brain */
    CHAOS_FAILOVER_PARTITIONED = 2, /* left running, cut off from the nodes */
};

struct chaos_fault {
    enum chaos_fault_kind kind;
    int64_t start_ms;  /* planned, from the start of the workload */
    int64_t length_ms; /* planned */
    int target;        /* node, or -1 (partitions: see cut) */
    int other;         /* ONE_WAY: the receiving node */
    bool cut[CHAOS_NODES_MAX * CHAOS_NODES_MAX];
    /* Seeded parameters, drawn for every fault whatever its kind (so the
     * schedule's draws do not depend on the kinds): */
    int64_t skew_ms;         /* CLOCK_SKEW: target's offset, +-1..10 s */
    int64_t other_skew_ms;   /* CLOCK_SKEW: other's offset, 0: untouched */
    int64_t restart_back_ms; /* KILL: clock offset at restart, <= 0 */
    int delay_ms, jitter_ms; /* DELAY_LOSS: base + U[0, jitter) */
    int loss_percent;        /* DELAY_LOSS: 0..10 */
    int disk_write_percent;  /* DISK: 0: fsync fails, else pwrite's odds */
    pid_t disk_pid;          /* DISK: the process failing, as applied */
    /* FAILOVER, as applied: target is the old writer, other the new
     * one. */
    enum chaos_failover_fate failover_fate;
    char what[CHAOS_NOTE_SIZE]; /* as applied, e.g. "n1 | n2 n3" */
    bool is_skipped;
    char skip_reason[CHAOS_NOTE_SIZE];
    int64_t applied_ns; /* monotonic, 0 if never */
    int64_t healed_ns;
    int64_t recovery_ms; /* first acknowledged op after heal; -1 none */
};

struct chaos_rng {
    uint64_t state;
};
uint64_t chaos_rng_next(struct chaos_rng *rng);
/* Uniform in [0, bound). */
uint64_t chaos_rng_below(struct chaos_rng *rng, uint64_t bound);

/* Parses a comma-separated list of kind names ("kill,clock-skew") into a
 * mask (bit 1 << kind). 0, or -EINVAL when a word is no kind. */
int chaos_fault_kinds_parse(const char *list, uint32_t *mask);
/* Restricts the kinds chaos_schedule_plan() draws from to mask (0: all).
 * Unless called, the environment variable CHAOS_PROC_FAULTS (a list as
 * above) sets it; an invalid value stops the program with a message. */
void chaos_fault_kinds_allow(uint32_t mask);

/* Fills f->cut with the majorities ring (Jepsen's partition-majorities-
 * ring): with the nodes on a ring in the order given by ring (a
 * permutation of 0..n-1), each node keeps the links to the nodes at most
 * chaos_ring_reach(n) steps away: a majority, and no two nodes the same
 * one. With 3 nodes the ring is complete, so the rule cuts the one link
 * ring[0]-ring[1] (a bridge: ring[2] sees both sides). */
void chaos_ring_cut(struct chaos_fault *f, size_t n, const size_t *ring);
size_t chaos_ring_reach(size_t n);
/* Fills f->cut and f->what for a partition kind (HALVES, ISOLATE,
 * ONE_WAY, RING), drawing from rng (nemesis_cut.c). */
void chaos_fault_plan_cut(struct chaos_fault *f, size_t n,
                          struct chaos_rng *rng);

/* Plans faults over duration_ms from seed: fault 3-8 s, healthy 3-6 s,
 * the last fault running to the end. FAILOVER is drawn in leader mode
 * only, and a leader-mode schedule that allows it has at least one.
 * Returns the count (<= CHAOS_FAULTS_MAX). */
size_t chaos_schedule_plan(uint64_t seed, int64_t duration_ms,
                           size_t node_count, enum chaos_mode mode,
                           struct chaos_fault *faults);

/* Applies fault f now (choosing targets with rng; the quorum leader for
 * ISOLATE), or marks it skipped with the reason. */
void chaos_fault_apply(struct chaos_fault *f, struct chaos_cluster *c,
                       struct chaos_topology *t, struct chaos_rng *rng);
/* Ends fault f: restart, resume, heal. */
void chaos_fault_heal(struct chaos_fault *f, struct chaos_cluster *c,
                      struct chaos_topology *t);

const char *chaos_fault_kind_name(enum chaos_fault_kind kind);

/* nemesis_failover.c. Applies a FAILOVER (leader mode): picks a running
 * follower (rng), kills the old writer or leaves it running, reachable or
 * cut off from the other nodes, reads the follower's log, stops it and
 * restarts it with --writer itself at the next epoch; the clients follow
 * (c->writer). Records the takeover in c->history. */
void chaos_failover_apply(struct chaos_fault *f, struct chaos_cluster *c,
                          struct chaos_topology *t, struct chaos_rng *rng);
/* Heals it: the cut removed, the old writer restarted as a follower of
 * the new one, then every node that reports diverged rebuilt
 * (chaos_leader_rebuild_diverged, up to timeout_ms). */
void chaos_failover_heal(struct chaos_fault *f, struct chaos_cluster *c,
                         struct chaos_topology *t, int timeout_ms);
/* Leader mode: polls the followers' /v1/status and logs until none
 * reports diverged and each log is a prefix of the writer's, rebuilding
 * (stop, empty data directory, restart: docs/replication.md, "Leader
 * mode") every node that reports diverged, up to timeout_ms. Returns how
 * many it rebuilt. */
size_t chaos_leader_rebuild_diverged(struct chaos_cluster *c, int timeout_ms);
/* Rebuilds node i if /v1/status says it diverged: 1 when it did. */
int chaos_leader_rebuild_if_diverged(struct chaos_cluster *c, size_t i);

/* ------------------------------------------------------------------------
 * workload.c
 * ------------------------------------------------------------------------ */

/* One crdt insert or leader-mode append: the unique id (the value
 * appended), the node it went to and how it ended. */
struct chaos_insert {
    int64_t id;
    int node;
    int64_t invoke_ns, complete_ns;
    enum chaos_sql_outcome outcome;
};

/* One leader-mode read of a follower's whole log (SELECT v FROM log ORDER
 * BY seq): its length and the chaos_log_digest() of its values in order.
 * The reads are too many and too long to keep whole; the verdict compares
 * each with the digest of the writer's final log's prefix of that length
 * (verdict_leader.c). */
struct chaos_follower_read {
    int node;
    int64_t invoke_ns, complete_ns;
    size_t count;    /* rows read */
    uint64_t digest; /* of their values, in log order */
};

struct chaos_workload {
    enum chaos_mode mode;
    struct chaos_cluster *cluster; /* borrowed */
    size_t client_count;
    size_t key_count;
    int op_timeout_ms;
    uint64_t seed;
    volatile int stop;      /* written by the supervisor, read by the clients */
    bool has_pinned_client; /* quorum: one more client (scenarios) */
    /* Written by the supervisor: the node the pinned client sends every
     * request to, following no hint (-1: it idles). */
    volatile int pinned_node;
    /* Written by the pinned client only (read after it stopped): how its
     * requests ended, and the first refusal ("CODE: message"). */
    size_t pinned_ok, pinned_failed, pinned_unknown;
    size_t pinned_self_hints; /* NOT_LEADER naming the node asked */
    char pinned_refusal[CHAOS_NOTE_SIZE + 64]; /* code, message */
    pthread_t threads[CHAOS_CLIENTS_MAX + 1];
    size_t threads_started;
    pthread_mutex_t lock; /* guards everything below */
    struct check_op *ops; /* quorum history */
    int *op_nodes;        /* quorum: the node of ops[i]; same count */
    size_t op_count, op_capacity;
    struct chaos_insert *inserts; /* crdt inserts, leader appends */
    size_t insert_count, insert_capacity;
    struct chaos_follower_read *reads; /* leader: follower log reads */
    size_t read_count, read_capacity;
    size_t attempted, acknowledged, failed, unknown;
};

/* Adds op (copied), which went to node, to the quorum history. Any
 * thread. */
void chaos_workload_record(struct chaos_workload *w, const struct check_op *op,
                           int node);

/* The integers of the first column sql (borrowed) returns on node, in its
 * order, into *values (owned by the caller: common_free) and *count. 0,
 * or -1 when the node did not answer (then *values is NULL). */
int chaos_fetch_integers(const struct chaos_node *node, const char *sql,
                         int64_t **values, size_t *count);

/* Creates the schema (table reg, items or log) through the cluster. */
int chaos_workload_prepare(struct chaos_workload *w, int timeout_ms);
int chaos_workload_start(struct chaos_workload *w);
void chaos_workload_stop(struct chaos_workload *w);
/* Quorum: reads every key through the leader, into the history. */
void chaos_workload_final_reads(struct chaos_workload *w, int timeout_ms);
void chaos_workload_release(struct chaos_workload *w);

/* ------------------------------------------------------------------------
 * verdict.c and report.c
 * ------------------------------------------------------------------------ */

struct chaos_scenario;

struct chaos_run_config {
    enum chaos_mode mode;
    /* borrowed (static): a targeted scenario's fixed schedule and
     * expectation instead of the seeded schedule; NULL: none */
    const struct chaos_scenario *scenario;
    size_t node_count;
    size_t client_count;
    uint64_t seed;
    int64_t duration_ms;
    enum chaos_topology_kind topology;
    const char *binary; /* borrowed */
    char dir[CHAOS_PATH_SIZE];
    unsigned run_index;
};

struct chaos_run_result {
    struct chaos_run_config config;
    struct chaos_topology topology;
    struct chaos_fault faults[CHAOS_FAULTS_MAX];
    size_t fault_count;
    size_t attempted, acknowledged, failed, unknown;
    /* quorum */
    enum check_result linearizable;
    bool has_linearizable;
    char linearizable_note[CHAOS_NOTE_SIZE];
    size_t phantom_reads;
    /* crdt and leader (leader: judged on the writer's final log; lag and
     * convergence are the followers' to the writer's log) */
    size_t lost, phantoms, divergent_at_heal, divergent_at_end;
    bool converged;
    int64_t convergence_ms;
    size_t final_rows;
    /* leader */
    size_t follower_writes_acked;   /* appends a follower took: must be 0 */
    size_t follower_writes_refused; /* appends a follower refused */
    size_t follower_reads;          /* reads of a follower's whole log */
    size_t reads_not_prefix;        /* of them, not a prefix: must be 0 */
    size_t stale_reads;       /* missing an append acknowledged before them */
    int64_t max_staleness_ms; /* the oldest such append's age, at the read */
    char prefix_note[CHAOS_NOTE_SIZE]; /* the first log not a prefix */
    /* leader failover (verdict_leader.c) */
    size_t failovers;
    size_t fenced_late;      /* a deposed writer's acks, not in the log */
    size_t fenced_unshipped; /* an earlier writer's acks the next one never
                                held at takeover, not in the log */
    size_t fence_breaches;   /* a deposed writer's acks invoked after the new
                                writer's first ack, in the log: must be 0 */
    size_t rebuilt;          /* diverged nodes wiped and restarted */
    size_t reads_unjudged;   /* reads of a node later rebuilt */
    size_t reads_not_prefix_rebuilt; /* of reads_not_prefix, those of a
                                        node rebuilt before the read */
    /* scenario */
    bool has_scenario;
    bool is_skipped; /* its fault could not be made (say why: failures) */
    char expectation[CHAOS_NOTE_SIZE];  /* what it must see */
    char observed[4 * CHAOS_NOTE_SIZE]; /* what it saw */
    /* both */
    int64_t longest_outage_ms; /* longest time with no acknowledged op */
    int unexpected_exits;
    int unclean_stops;
    char failures[8][CHAOS_NOTE_SIZE]; /* why the run failed */
    size_t failure_count;
    bool is_passed;
    int64_t elapsed_ms;
};

void chaos_result_fail(struct chaos_run_result *r, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Judges the quorum history (linearizability, phantom reads) and writes
 * it to dir/history.txt. */
void chaos_verdict_quorum(struct chaos_run_result *r,
                          const struct chaos_workload *w);
/* Crdt: lost and phantom ids in the converged state (borrowed ids,
 * sorted). */
void chaos_verdict_crdt(struct chaos_run_result *r,
                        const struct chaos_workload *w, const int64_t *ids,
                        size_t id_count);
/* Leader: writer_log (borrowed, in log order) is the final writer's final
 * log, h (borrowed) the run's failovers and rebuilds. lost and phantom
 * appends (check_set: the final writer's acks in its epoch and every ack
 * the final writer held at takeover must be in it, and every row must be
 * an acknowledged or unknown append), fenced appends (an earlier writer's
 * acks missing from it: allowed), fence breaches (a deposed writer's acks
 * made after the takeover that are in it), appends a follower
 * acknowledged, and every follower read judged against it (but those of
 * a node later rebuilt): a prefix (its digest equals that of the writer's
 * prefix of its length), and stale when it misses an append acknowledged
 * before it was invoked (measured, not failed: replication is
 * asynchronous). */
void chaos_verdict_leader(struct chaos_run_result *r,
                          const struct chaos_workload *w,
                          const struct chaos_leader_history *h,
                          const int64_t *writer_log, size_t writer_count);

/* Node's log (borrowed) against the writer's, with check_prefix: 0 when
 * equal, 1 when a shorter prefix (behind), -1 when not a prefix (a note
 * naming node and row goes to r->prefix_note, unless one is there). */
int chaos_verdict_follower_log(struct chaos_run_result *r, int node,
                               const int64_t *writer_log, size_t writer_count,
                               const int64_t *log, size_t count);

/* The digest of a log: CHAOS_LOG_DIGEST_INIT folded with each value in
 * order by chaos_log_digest(). Equal logs have equal digests; unequal ones
 * collide with probability about 2^-64. */
#define CHAOS_LOG_DIGEST_INIT 0xcbf29ce484222325u
uint64_t chaos_log_digest(uint64_t digest, int64_t value);

/* Recovery after each heal and the longest outage, from the history. */
void chaos_verdict_recovery(struct chaos_run_result *r,
                            const struct chaos_workload *w,
                            int64_t workload_start_ns);

/* "FAIL" when r failed, else "SKIP" for a scenario that could not be
 * made (its fault was skipped), else "PASS". */
const char *chaos_verdict_name(const struct chaos_run_result *r);

/* Writes dir/report.md and dir/report.json. 0 or -errno. */
int chaos_report_write(const struct chaos_run_result *r,
                       int64_t workload_start_ns);

/* ------------------------------------------------------------------------
 * scenario.c
 * ------------------------------------------------------------------------ */

#define CHAOS_SCENARIO_FAULTS_MAX 4

/* One fault of a scenario's fixed schedule. */
struct chaos_scenario_fault {
    enum chaos_fault_kind kind;
    int64_t start_ms;  /* from the start of the workload */
    int64_t length_ms; /* the last one may run to the end (final heal) */
    bool to_leader;    /* quorum: the leader when it starts */
    int target;        /* else this node (0-based) */
};

enum chaos_scenario_step {
    CHAOS_SCENARIO_APPLIED = 0, /* the fault was just applied or skipped */
    CHAOS_SCENARIO_HEALING = 1, /* it is about to be healed */
    CHAOS_SCENARIO_HEALED = 2,  /* it was just healed */
};

/* What a scenario's hook and judge see: the run in progress (borrowed). */
struct chaos_scenario_run {
    const struct chaos_scenario *scenario;
    struct chaos_cluster *cluster;
    struct chaos_workload *workload;
    struct chaos_run_result *result;
    /* The scenario's own: one common_malloc'd block (no threads left
     * running in it after HEALED), from its hook to its judge; run.c
     * frees it after the run. */
    void *state;
};

/* A targeted scenario (chaos.md §4.1, "Targeted, scripted scenarios"): a
 * fixed fault schedule run by run.c in place of chaos_schedule_plan()'s,
 * a hook around each fault, and a judge of the scenario's explicit
 * expectation on top of the mode's usual verdict. */
struct chaos_scenario {
    const char *name;
    enum chaos_mode mode;
    int64_t duration_ms;
    const char *expectation; /* one sentence, for the report */
    bool has_pinned_client;  /* the workload gets its pinned client */
    size_t fault_count;
    struct chaos_scenario_fault faults[CHAOS_SCENARIO_FAULTS_MAX];
    /* NULL, or called on the supervisor's thread at each step of each
     * fault (also of a skipped one: see f->is_skipped). */
    void (*hook)(struct chaos_scenario_run *run, struct chaos_fault *f,
                 enum chaos_scenario_step step);
    /* Called after the mode's verdict: fills run->result->observed and
     * fails the run when the expectation does not hold, or sets
     * run->result->is_skipped when the scenario could not be made. */
    void (*judge)(struct chaos_scenario_run *run);
};

/* Every scenario, in the order the profiles run them. */
extern const struct chaos_scenario chaos_scenarios[];
extern const size_t chaos_scenario_count;

/* The scenario called name (borrowed), or NULL. */
const struct chaos_scenario *chaos_scenario_find(const char *name);

/* ------------------------------------------------------------------------
 * run.c
 * ------------------------------------------------------------------------ */

/* One whole run; fills *r. 0 when it ran (passed or not), negative when
 * the harness itself could not set up (also reported in r). */
int chaos_run(const struct chaos_run_config *config,
              struct chaos_run_result *r);

const char *chaos_mode_name(enum chaos_mode mode);

/* The cluster and topology chaos_cleanup_now() removes if the supervisor
 * exits in the middle of a run (NULL, NULL when none); main.c registers
 * chaos_cleanup_now() with atexit(). */
void chaos_cleanup_track(struct chaos_cluster *cluster,
                         struct chaos_topology *topology);
void chaos_cleanup_now(void);
const char *chaos_topology_name(enum chaos_topology_kind kind);

#endif /* SINEW_CHAOS_PROC_H */
