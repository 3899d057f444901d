/* SPDX-License-Identifier: MIT
 *
 * bench_quorum.c: quorum mode's commit latency and throughput, three
 * members as processes on loopback TCP (node/test/quorum_member.c, driven
 * through node/test/proc_cluster.c), beside C SQLite committing the same
 * single-row inserts durably (synchronous=FULL, one fsync each) on one
 * node in the same run, for scale.
 *
 *   bench_quorum QUORUM_MEMBER [--count N]
 *
 * Each phase inserts N rows (default 2000) into a fresh key range: one
 * client (each insert waits for the previous one's commit), then 16 and 64
 * concurrent clients inside the leader process (so the numbers are the
 * node's, not the driver's pipe). A commit is acknowledged after a
 * majority fsynced it and the leader applied it. Latency p50/p99 and
 * throughput are printed with the goals (one client p50 <= 1 ms;
 * 64 clients >= 20,000 tx/s) and the ratio to SQLite's local rate.
 */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proc_cluster.h"

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* C SQLite: count single-row inserts, each its own durable transaction;
 * the rate per second. */
static double sqlite_rate(const char *dir, int count)
{
    char path[700];
    sqlite3 *db;
    sqlite3_stmt *insert;
    int64_t start;

    snprintf(path, sizeof path, "%s/sqlite.db", dir);
    if (sqlite3_open(path, &db) != SQLITE_OK ||
        sqlite3_exec(db,
                     "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                     "CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER)",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?, ?)", -1, &insert,
                           NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_quorum: sqlite: %s\n", sqlite3_errmsg(db));
        exit(1);
    }
    start = now_us();
    for (int k = 0; k < count; k++) {
        sqlite3_bind_int(insert, 1, k);
        sqlite3_bind_int(insert, 2, k);
        if (sqlite3_step(insert) != SQLITE_DONE) {
            fprintf(stderr, "bench_quorum: sqlite insert failed\n");
            exit(1);
        }
        sqlite3_reset(insert);
    }
    double rate = count / ((double)(now_us() - start) / 1e6);
    sqlite3_finalize(insert);
    sqlite3_close(db);
    return rate;
}

struct phase {
    unsigned clients;
    uint64_t errors, count, elapsed_us, p50_us, p99_us;
};

static void run_phase(struct pc_cluster *c, unsigned leader, struct phase *p,
                      uint64_t first_key)
{
    char args[128], reply[256];

    snprintf(args, sizeof args, "%u %" PRIu64 " %" PRIu64, p->clients, p->count,
             first_key);
    if (pc_command(c, leader, 'B', args, reply, sizeof reply, 600000) != 0 ||
        sscanf(reply,
               "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
               &p->errors, &p->count, &p->elapsed_us, &p->p50_us,
               &p->p99_us) != 5) {
        fprintf(stderr, "bench_quorum: load phase failed: %s\n", reply);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    struct phase phases[] = {{.clients = 1}, {.clients = 16}, {.clients = 64}};
    struct pc_cluster c;
    uint64_t count = 2000, first_key = 0;
    char reply[128];
    int leader;
    double sqlite;

    if (argc < 2) {
        fprintf(stderr, "usage: %s QUORUM_MEMBER [--count N]\n", argv[0]);
        return 2;
    }
    if (argc == 4 && strcmp(argv[2], "--count") == 0) {
        count = strtoull(argv[3], NULL, 10);
    }
    if (pc_init(&c, 3, argv[1]) != 0) {
        return 1;
    }
    for (unsigned i = 0; i < 3; i++) {
        if (pc_start(&c, i) != 0) {
            return 1;
        }
    }
    leader = pc_leader(&c, 10000);
    if (leader < 0 ||
        pc_command(&c, (unsigned)leader, 'W',
                   "CREATE TABLE t(k INTEGER PRIMARY KEY, v INTEGER)", reply,
                   sizeof reply, 10000) != 0 ||
        strncmp(reply, "0 ", 2) != 0) {
        fprintf(stderr, "bench_quorum: no leader or no table\n");
        pc_free(&c);
        return 1;
    }
    printf("# quorum mode: 3 members on loopback TCP, single-row INSERTs, "
           "%" PRIu64 " per phase\n\n",
           count);
    printf("| clients | commits/s | p50 ms | p99 ms | errors |\n");
    printf("| ---: | ---: | ---: | ---: | ---: |\n");
    for (size_t p = 0; p < sizeof phases / sizeof phases[0]; p++) {
        phases[p].count = count;
        run_phase(&c, (unsigned)leader, &phases[p], first_key);
        first_key += count;
        printf("| %u | %.0f | %.3f | %.3f | %" PRIu64 " |\n", phases[p].clients,
               (double)phases[p].count / ((double)phases[p].elapsed_us / 1e6),
               (double)phases[p].p50_us / 1000.0,
               (double)phases[p].p99_us / 1000.0, phases[p].errors);
        fflush(stdout);
    }
    sqlite = sqlite_rate(c.dir, (int)count);
    printf(
        "\nC SQLite, one node, synchronous=FULL, one client: %.0f commits/s\n",
        sqlite);
    printf("ratio quorum (1 client) / SQLite: %.2f\n",
           (double)phases[0].count / ((double)phases[0].elapsed_us / 1e6) /
               sqlite);
    printf("goals: 1 client p50 <= 1 ms (%s); 64 clients >= 20000/s (%s)\n",
           phases[0].p50_us <= 1000 ? "met" : "missed",
           (double)phases[2].count / ((double)phases[2].elapsed_us / 1e6) >=
                   20000
               ? "met"
               : "missed");
    pc_free(&c);
    return 0;
}
