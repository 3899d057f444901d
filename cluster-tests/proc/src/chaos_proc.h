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
 * (namespaces, bridge, partitions, cleanup), node.c (the node processes),
 * http.c (a blocking HTTP client with deadlines, Hrana statements),
 * workload.c (client threads, histories), nemesis.c (the fault schedule),
 * verdict.c (checks), report.c (report.md, report.json), run.c (one run),
 * main.c (options and profiles).
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

enum chaos_mode { CHAOS_MODE_QUORUM = 0, CHAOS_MODE_CRDT = 1 };

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

/* Removes the cut. */
int chaos_topology_heal(struct chaos_topology *t);

/* The fd of the client namespace for sockets, or -1 (loopback). Sockets
 * made by chaos_http_* are created in it. */
void chaos_http_set_netns(const char *netns);
void chaos_http_clear_netns(void);

/* ------------------------------------------------------------------------
 * node.c
 * ------------------------------------------------------------------------ */

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
};

struct chaos_cluster {
    enum chaos_mode mode;
    const char *binary; /* borrowed: the sinew executable */
    char dir[CHAOS_PATH_SIZE];
    size_t count;
    struct chaos_node nodes[CHAOS_NODES_MAX];
    int leader_hint; /* last node known to lead (quorum), -1 none */
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
void chaos_node_kill(struct chaos_cluster *c, size_t i);
void chaos_node_pause(struct chaos_cluster *c, size_t i);
void chaos_node_resume(struct chaos_cluster *c, size_t i);

/* Notes nodes that exited without being told to (0 or the count). */
int chaos_cluster_reap(struct chaos_cluster *c);

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
    CHAOS_FAULT_KILL = 0,    /* SIGKILL, restart at heal */
    CHAOS_FAULT_PAUSE = 1,   /* SIGSTOP, SIGCONT at heal */
    CHAOS_FAULT_HALVES = 2,  /* two random halves cannot talk */
    CHAOS_FAULT_ISOLATE = 3, /* one node (quorum: the leader) alone */
    CHAOS_FAULT_ONE_WAY = 4, /* a -> b dropped, b -> a flows */
    CHAOS_FAULT_KIND_COUNT = 5,
};

struct chaos_fault {
    enum chaos_fault_kind kind;
    int64_t start_ms;  /* planned, from the start of the workload */
    int64_t length_ms; /* planned */
    int target;        /* node, or -1 (partitions: see cut) */
    int other;         /* ONE_WAY: the receiving node */
    bool cut[CHAOS_NODES_MAX * CHAOS_NODES_MAX];
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

/* Plans faults over duration_ms from seed: fault 3-8 s, healthy 3-6 s,
 * the last fault running to the end. Returns the count (<=
 * CHAOS_FAULTS_MAX). */
size_t chaos_schedule_plan(uint64_t seed, int64_t duration_ms,
                           size_t node_count, struct chaos_fault *faults);

/* Applies fault f now (choosing targets with rng; the quorum leader for
 * ISOLATE), or marks it skipped with the reason. */
void chaos_fault_apply(struct chaos_fault *f, struct chaos_cluster *c,
                       struct chaos_topology *t, struct chaos_rng *rng);
/* Ends fault f: restart, resume, heal. */
void chaos_fault_heal(struct chaos_fault *f, struct chaos_cluster *c,
                      struct chaos_topology *t);

const char *chaos_fault_kind_name(enum chaos_fault_kind kind);

/* ------------------------------------------------------------------------
 * workload.c
 * ------------------------------------------------------------------------ */

/* One crdt insert: the unique id, where it went and how it ended. */
struct chaos_insert {
    int64_t id;
    int node;
    int64_t invoke_ns, complete_ns;
    enum chaos_sql_outcome outcome;
};

struct chaos_workload {
    enum chaos_mode mode;
    struct chaos_cluster *cluster; /* borrowed */
    size_t client_count;
    size_t key_count;
    int op_timeout_ms;
    uint64_t seed;
    volatile int stop; /* written by the supervisor, read by the clients */
    pthread_t threads[CHAOS_CLIENTS_MAX];
    size_t threads_started;
    pthread_mutex_t lock; /* guards everything below */
    struct check_op *ops; /* quorum history */
    size_t op_count, op_capacity;
    struct chaos_insert *inserts; /* crdt history */
    size_t insert_count, insert_capacity;
    size_t attempted, acknowledged, failed, unknown;
};

/* Creates the schema (table reg or items) through the cluster. */
int chaos_workload_prepare(struct chaos_workload *w, int timeout_ms);
int chaos_workload_start(struct chaos_workload *w);
void chaos_workload_stop(struct chaos_workload *w);
/* Quorum: reads every key through the leader, into the history. */
void chaos_workload_final_reads(struct chaos_workload *w, int timeout_ms);
void chaos_workload_release(struct chaos_workload *w);

/* ------------------------------------------------------------------------
 * verdict.c and report.c
 * ------------------------------------------------------------------------ */

struct chaos_run_config {
    enum chaos_mode mode;
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
    /* crdt */
    size_t lost, phantoms, divergent_at_heal, divergent_at_end;
    bool converged;
    int64_t convergence_ms;
    size_t final_rows;
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
/* Recovery after each heal and the longest outage, from the history. */
void chaos_verdict_recovery(struct chaos_run_result *r,
                            const struct chaos_workload *w,
                            int64_t workload_start_ns);

/* Writes dir/report.md and dir/report.json. 0 or -errno. */
int chaos_report_write(const struct chaos_run_result *r,
                       int64_t workload_start_ns);

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
