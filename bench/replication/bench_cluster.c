/* SPDX-License-Identifier: MIT
 *
 * bench_cluster: the load client and report writer of the replication
 * benchmark (bench/replication/cluster_bench.sh starts the clusters: sinew
 * serve in quorum, crdt and leader mode, etcd, dqlite-demo). Each command
 * prints one result line of key=value fields, prefixed with --tag, which
 * the script collects into a raw file; `report` turns that file into the
 * markdown table, CSV and SVG chart (medians over the repeats).
 *
 *   bench_cluster write --proto hrana|etcd|dqlite --url URL --clients N
 *                 [--seconds S] [--warmup S] [--id-base N]
 *                 [--value-bytes N] [--converge URL]... [--tag TEXT]
 *   bench_cluster lag --url WRITER --follower URL... --rate R
 *                 [--seconds S] [--id-base N] [--poll-us N] [--tag TEXT]
 *   bench_cluster sql --url URL [--retry-s S] SQL
 *   bench_cluster report --raw FILE --out DIR
 */
#define _GNU_SOURCE /* usleep */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_bench.h"

#define CONVERGE_TIMEOUT_S 120.0

struct options {
    const char *proto, *url, *tag, *raw, *out, *sql;
    const char *followers[4];
    int follower_count;
    int clients, value_bytes, poll_us;
    double seconds, warmup, rate, retry_s;
    int64_t id_base;
};

static int usage(void)
{
    fprintf(stderr,
            "usage: bench_cluster write --proto hrana|etcd|dqlite --url URL "
            "--clients N\n"
            "                     [--seconds S] [--warmup S] [--id-base N] "
            "[--value-bytes N]\n"
            "                     [--converge URL]... [--tag TEXT]\n"
            "       bench_cluster lag --url WRITER --follower URL... --rate R "
            "[--seconds S]\n"
            "                     [--id-base N] [--poll-us N] [--tag TEXT]\n"
            "       bench_cluster sql --url URL [--retry-s S] SQL\n"
            "       bench_cluster report --raw FILE --out DIR\n");
    return 2;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    int i;

    *o = (struct options){.clients = 1,
                          .value_bytes = 100,
                          .poll_us = 1000,
                          .seconds = 3,
                          .warmup = 0.5,
                          .tag = ""};
    for (i = 2; i < argc; i++) {
        const char *name = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;

        if (name[0] != '-' && o->sql == NULL) {
            o->sql = name;
            continue;
        }
        if (value == NULL) {
            fprintf(stderr, "bench_cluster: %s needs a value\n", name);
            return -EINVAL;
        }
        i++;
        if (strcmp(name, "--proto") == 0) {
            o->proto = value;
        } else if (strcmp(name, "--url") == 0) {
            o->url = value;
        } else if (strcmp(name, "--tag") == 0) {
            o->tag = value;
        } else if (strcmp(name, "--raw") == 0) {
            o->raw = value;
        } else if (strcmp(name, "--out") == 0) {
            o->out = value;
        } else if (strcmp(name, "--converge") == 0 ||
                   strcmp(name, "--follower") == 0) {
            if (o->follower_count == 4) {
                fprintf(stderr, "bench_cluster: at most 4 %s\n", name);
                return -EINVAL;
            }
            o->followers[o->follower_count++] = value;
        } else if (strcmp(name, "--clients") == 0) {
            o->clients = atoi(value);
        } else if (strcmp(name, "--value-bytes") == 0) {
            o->value_bytes = atoi(value);
        } else if (strcmp(name, "--poll-us") == 0) {
            o->poll_us = atoi(value);
        } else if (strcmp(name, "--seconds") == 0) {
            o->seconds = atof(value);
        } else if (strcmp(name, "--warmup") == 0) {
            o->warmup = atof(value);
        } else if (strcmp(name, "--rate") == 0) {
            o->rate = atof(value);
        } else if (strcmp(name, "--retry-s") == 0) {
            o->retry_s = atof(value);
        } else if (strcmp(name, "--id-base") == 0) {
            o->id_base = strtoll(value, NULL, 10);
        } else {
            fprintf(stderr, "bench_cluster: unknown option %s\n", name);
            return -EINVAL;
        }
    }
    if (o->clients < 1 || o->clients > 1024 || o->value_bytes < 16 ||
        o->value_bytes > 1024 || o->seconds <= 0 || o->warmup < 0) {
        fprintf(stderr, "bench_cluster: --clients 1..1024, --value-bytes "
                        "16..1024, --seconds > 0\n");
        return -EINVAL;
    }
    return 0;
}

static int parse_url(const char *text, struct bc_url *url)
{
    if (text == NULL || bc_url_parse(text, url) != 0) {
        fprintf(stderr, "bench_cluster: not an http://HOST:PORT URL: %s\n",
                text ? text : "(none)");
        return -EINVAL;
    }
    return 0;
}

static int cmd_write(const struct options *o)
{
    struct bc_load load = {.clients = o->clients,
                           .warmup_s = o->warmup,
                           .seconds = o->seconds,
                           .id_base = o->id_base,
                           .value_bytes = o->value_bytes};
    struct bc_url peers[4];
    struct bc_load_result result;
    double converge_ms = -1;
    int i, rc;

    if (o->proto == NULL || parse_url(o->url, &load.url) != 0) {
        return usage();
    }
    if (strcmp(o->proto, "hrana") == 0) {
        load.proto = BC_HRANA;
    } else if (strcmp(o->proto, "etcd") == 0) {
        load.proto = BC_ETCD;
    } else if (strcmp(o->proto, "dqlite") == 0) {
        load.proto = BC_DQLITE;
    } else {
        return usage();
    }
    for (i = 0; i < o->follower_count; i++) {
        if (parse_url(o->followers[i], &peers[i]) != 0) {
            return 2;
        }
    }
    rc = bc_run_load(&load, &result);
    if (rc != 0) {
        fprintf(stderr, "bench_cluster: load: %s\n", strerror(-rc));
        return 1;
    }
    if (result.ops == 0) {
        fprintf(stderr,
                "bench_cluster: no write was acknowledged (%" PRId64
                " refused)\n",
                result.errors);
        return 1;
    }
    if (o->follower_count > 0) {
        struct bc_conn conn;
        int64_t count = 0, max_id = 0;

        /* What the writer holds is what its peers must reach. */
        bc_conn_init(&conn, &load.url);
        rc = bc_query_count(&conn, &count, &max_id);
        bc_conn_close(&conn);
        if (rc == 0) {
            rc = bc_wait_converged(peers, o->follower_count, count,
                                   result.last_ack, CONVERGE_TIMEOUT_S,
                                   &converge_ms);
        }
        if (rc != 0) {
            fprintf(stderr, "bench_cluster: peers did not converge: %s\n",
                    strerror(-rc));
            return 1;
        }
    }
    printf("%s%skind=write clients=%d ops=%" PRId64 " errors=%" PRId64
           " retries=%" PRId64 " seconds=%.3f tput=%.1f p50_ms=%.3f"
           " p99_ms=%.3f",
           o->tag, o->tag[0] ? " " : "", o->clients, result.ops, result.errors,
           result.retries, result.seconds, (double)result.ops / result.seconds,
           result.p50_ms, result.p99_ms);
    if (converge_ms >= 0) {
        printf(" converge_ms=%.1f", converge_ms);
    }
    printf("\n");
    return 0;
}

static int cmd_lag(const struct options *o)
{
    struct bc_lag lag = {.rate = o->rate,
                         .seconds = o->seconds,
                         .id_base = o->id_base,
                         .value_bytes = o->value_bytes,
                         .poll_us = o->poll_us,
                         .follower_count = o->follower_count};
    struct bc_lag_result result;
    int i, rc;

    if (parse_url(o->url, &lag.writer) != 0 || o->follower_count < 1 ||
        o->rate <= 0) {
        return usage();
    }
    for (i = 0; i < o->follower_count; i++) {
        if (parse_url(o->followers[i], &lag.followers[i]) != 0) {
            return 2;
        }
    }
    rc = bc_run_lag(&lag, &result);
    if (rc != 0) {
        fprintf(stderr, "bench_cluster: lag: %s\n", strerror(-rc));
        return 1;
    }
    printf("%s%skind=lag rate=%.0f rows=%" PRId64 " errors=%" PRId64
           " tput=%.1f lag_p50_ms=%.3f lag_p99_ms=%.3f lag_max_ms=%.3f "
           "catchup_ms=%.3f\n",
           o->tag, o->tag[0] ? " " : "", o->rate, result.rows, result.errors,
           result.tput, result.lag_p50_ms, result.lag_p99_ms, result.lag_max_ms,
           result.catchup_ms);
    return 0;
}

/* Runs the SQL, retrying for --retry-s while the node is not ready. */
static int cmd_sql(const struct options *o)
{
    struct bc_url url;
    double until = bc_now() + o->retry_s;

    if (parse_url(o->url, &url) != 0 || o->sql == NULL) {
        return usage();
    }
    while (bc_exec_sql(&url, o->sql) != 0) {
        if (bc_now() >= until) {
            return 1;
        }
        usleep(200000);
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct options o;

    if (argc < 2 || parse_options(argc, argv, &o) != 0) {
        return usage();
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(argv[1], "write") == 0) {
        return cmd_write(&o);
    }
    if (strcmp(argv[1], "lag") == 0) {
        return cmd_lag(&o);
    }
    if (strcmp(argv[1], "sql") == 0) {
        return cmd_sql(&o);
    }
    if (strcmp(argv[1], "report") == 0) {
        if (o.raw == NULL || o.out == NULL) {
            return usage();
        }
        return bc_report(o.raw, o.out) == 0 ? 0 : 1;
    }
    return usage();
}
