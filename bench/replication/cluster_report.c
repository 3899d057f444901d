/* SPDX-License-Identifier: MIT
 *
 * cluster_report.c: the replication benchmark's outputs, from the raw
 * result lines bench_cluster printed during the run (one per measurement
 * and repeat, key=value fields): replication.md (three tables: replicated
 * writes of sinew quorum mode beside etcd and dqlite at each client count,
 * crdt mode's write rate and convergence lag, leader mode's follower lag;
 * every number the median of the repeats), replication.csv (the same
 * medians) and replication.svg (writes per second per client count and
 * system, grouped bars on a log scale, drawn here as bench/engine/report.c
 * does, so no plotting tool is needed).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_bench.h"

#define MAX_SAMPLES 1024
#define MAX_NOTES 16

enum field {
    F_TPUT,
    F_P50,
    F_P99,
    F_ERRORS,
    F_CONVERGE,
    F_LAG_P50,
    F_LAG_P99,
    F_LAG_MAX,
    F_CATCHUP,
    F_ROWS,
    F_RETRIES,
    F_COUNT
};

static const char *const field_names[F_COUNT] = {
    "tput",        "p50_ms",     "p99_ms",     "errors",
    "converge_ms", "lag_p50_ms", "lag_p99_ms", "lag_max_ms",
    "catchup_ms",  "rows",       "retries"};

struct sample {
    char system[16];
    char kind[16];
    int clients;
    double rate;
    double value[F_COUNT];
    unsigned char has[F_COUNT];
};

struct raw {
    struct sample samples[MAX_SAMPLES];
    size_t count;
    char notes[MAX_NOTES][512];
    size_t note_count;
    char absent[4][512]; /* "etcd: absent (...)" */
    size_t absent_count;
};

/* The systems of the write table and the chart, in column order. */
static const char *const write_systems[] = {"quorum", "crdt", "etcd", "dqlite"};
static const char *const write_labels[] = {"sinew quorum", "sinew crdt", "etcd",
                                           "dqlite"};
static const char *const write_colors[] = {"#2b7bba", "#7fb3dc", "#e08a1e",
                                           "#5a9e4b"};

static void parse_field(struct sample *s, const char *key, const char *value)
{
    int f;

    if (strcmp(key, "system") == 0) {
        snprintf(s->system, sizeof s->system, "%s", value);
    } else if (strcmp(key, "kind") == 0) {
        snprintf(s->kind, sizeof s->kind, "%s", value);
    } else if (strcmp(key, "clients") == 0) {
        s->clients = atoi(value);
    } else if (strcmp(key, "rate") == 0) {
        s->rate = atof(value);
    }
    for (f = 0; f < F_COUNT; f++) {
        if (strcmp(key, field_names[f]) == 0) {
            s->value[f] = atof(value);
            s->has[f] = 1;
        }
    }
}

static void parse_line(struct raw *raw, char *line)
{
    struct sample s;
    char *save = NULL, *token, *reason;

    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, "note ", 5) == 0) {
        if (raw->note_count < MAX_NOTES) {
            snprintf(raw->notes[raw->note_count++], sizeof raw->notes[0],
                     "%.500s", line + 5);
        }
        return;
    }
    reason = strstr(line, " reason=");
    if (strstr(line, "kind=absent") != NULL && reason != NULL) {
        char system[16] = "";

        sscanf(line, "system=%15s", system);
        if (raw->absent_count < 4) {
            snprintf(raw->absent[raw->absent_count++], sizeof raw->absent[0],
                     "%s: absent (%.400s)", system, reason + 8);
        }
        return;
    }
    memset(&s, 0, sizeof s);
    for (token = strtok_r(line, " ", &save); token != NULL;
         token = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(token, '=');

        if (eq != NULL) {
            *eq = '\0';
            parse_field(&s, token, eq + 1);
        }
    }
    if (s.system[0] != '\0' && s.kind[0] != '\0' && raw->count < MAX_SAMPLES) {
        raw->samples[raw->count++] = s;
    }
}

/* The median of field f over the samples of one system, kind and client
 * count (or rate, for lag); NAN when there are none. */
static double median(const struct raw *raw, const char *system,
                     const char *kind, int clients, double rate, enum field f,
                     int *runs)
{
    double values[MAX_SAMPLES];
    size_t n = 0, i;

    for (i = 0; i < raw->count; i++) {
        const struct sample *s = &raw->samples[i];

        if (strcmp(s->system, system) == 0 && strcmp(s->kind, kind) == 0 &&
            s->clients == clients && s->rate == rate && s->has[f]) {
            values[n++] = s->value[f];
        }
    }
    if (runs != NULL) {
        *runs = (int)n;
    }
    if (n == 0) {
        return NAN;
    }
    qsort(values, n, sizeof *values, bc_compare_double);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* The distinct client counts (kind=write) or rates (kind=lag), sorted. */
static size_t distinct(const struct raw *raw, const char *kind, double *out,
                       size_t max)
{
    size_t n = 0, i, j;

    for (i = 0; i < raw->count; i++) {
        const struct sample *s = &raw->samples[i];
        double key = strcmp(kind, "lag") == 0 ? s->rate : s->clients;

        if (strcmp(s->kind, kind) != 0) {
            continue;
        }
        for (j = 0; j < n && out[j] != key; j++) {
        }
        if (j == n && n < max) {
            out[n++] = key;
        }
    }
    qsort(out, n, sizeof *out, bc_compare_double);
    return n;
}

/* 12345.6 -> "12,346" */
static void format_count(double value, char *out, size_t size)
{
    long long v = llround(value);

    if (v >= 1000000) {
        snprintf(out, size, "%lld,%03lld,%03lld", v / 1000000, v / 1000 % 1000,
                 v % 1000);
    } else if (v >= 1000) {
        snprintf(out, size, "%lld,%03lld", v / 1000, v % 1000);
    } else {
        snprintf(out, size, "%lld", v);
    }
}

static void format_ms(double ms, char *out, size_t size)
{
    if (isnan(ms)) {
        snprintf(out, size, "—");
    } else {
        snprintf(out, size,
                 ms >= 100  ? "%.0f"
                 : ms >= 10 ? "%.1f"
                            : "%.2f",
                 ms);
    }
}

/* Writes per second, with the failed writes when there were any. */
static void format_tput(const struct raw *raw, const char *system, int clients,
                        char *out, size_t size)
{
    double tput = median(raw, system, "write", clients, 0, F_TPUT, NULL);
    double errors = median(raw, system, "write", clients, 0, F_ERRORS, NULL);
    double retries = median(raw, system, "write", clients, 0, F_RETRIES, NULL);
    char count[24], more[24];

    if (isnan(tput)) {
        snprintf(out, size, "—");
        return;
    }
    format_count(tput, count, sizeof count);
    snprintf(out, size, "%s", count);
    if (retries > 0) {
        format_count(retries, more, sizeof more);
        snprintf(out + strlen(out), size - strlen(out), " (%s busy retries)",
                 more);
    }
    if (errors > 0) {
        format_count(errors, more, sizeof more);
        snprintf(out + strlen(out), size - strlen(out), " (%s failed)", more);
    }
}

static void format_ratio(const struct raw *raw, const char *peer, int clients,
                         char *out, size_t size)
{
    double sinew = median(raw, "quorum", "write", clients, 0, F_TPUT, NULL);
    double other = median(raw, peer, "write", clients, 0, F_TPUT, NULL);

    if (isnan(sinew) || isnan(other) || other <= 0) {
        snprintf(out, size, "—");
    } else {
        snprintf(out, size, "%.2f×", sinew / other);
    }
}

static void write_tables(const struct raw *raw, FILE *to)
{
    double keys[32];
    size_t n, i, k;

    for (i = 0; i < raw->note_count; i++) {
        fprintf(to, "%s\n", raw->notes[i]);
    }
    fprintf(to, "\n#### Replicated single-row writes, 3 nodes on loopback "
                "(quorum: a majority has it)\n\n");
    fprintf(to, "| clients | sinew quorum writes/s | p50 ms | p99 ms | etcd "
                "puts/s | p50 ms | p99 ms | dqlite writes/s | p50 ms | p99 "
                "ms | sinew/etcd | sinew/dqlite |\n");
    fprintf(to, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
                "---: | ---: | ---: | ---: |\n");
    n = distinct(raw, "write", keys, 32);
    for (i = 0; i < n; i++) {
        const char *systems[] = {"quorum", "etcd", "dqlite"};
        char cells[3][3][80], ratio_etcd[24], ratio_dqlite[24];
        int clients = (int)keys[i];

        for (k = 0; k < 3; k++) {
            format_tput(raw, systems[k], clients, cells[k][0], 80);
            format_ms(median(raw, systems[k], "write", clients, 0, F_P50, NULL),
                      cells[k][1], 80);
            format_ms(median(raw, systems[k], "write", clients, 0, F_P99, NULL),
                      cells[k][2], 80);
        }
        if (strcmp(cells[0][0], "—") == 0 && strcmp(cells[1][0], "—") == 0 &&
            strcmp(cells[2][0], "—") == 0) {
            continue; /* a crdt-only client count */
        }
        format_ratio(raw, "etcd", clients, ratio_etcd, sizeof ratio_etcd);
        format_ratio(raw, "dqlite", clients, ratio_dqlite, sizeof ratio_dqlite);
        fprintf(to,
                "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
                "|\n",
                clients, cells[0][0], cells[0][1], cells[0][2], cells[1][0],
                cells[1][1], cells[1][2], cells[2][0], cells[2][1], cells[2][2],
                ratio_etcd, ratio_dqlite);
    }
    fprintf(to, "\nsinew/etcd, sinew/dqlite: sinew quorum's writes/s over "
                "the peer's (above 1, sinew is faster). Busy retries: writes "
                "refused as \"database is locked\" and tried again after 1 ms "
                "(latency counts from the first try).\n");
    for (i = 0; i < raw->absent_count; i++) {
        fprintf(to, "\n%s\n", raw->absent[i]);
    }
    fprintf(to, "\n#### crdt mode: writes on one node, replicated to 2 "
                "peers\n\n");
    fprintf(to, "| clients | writes/s | p50 ms | p99 ms | convergence lag "
                "ms (both peers) |\n| ---: | ---: | ---: | ---: | ---: |\n");
    for (i = 0; i < n; i++) {
        int clients = (int)keys[i];
        char tput[80], p50[24], p99[24], lag[24];

        format_tput(raw, "crdt", clients, tput, sizeof tput);
        if (strcmp(tput, "—") == 0) {
            continue;
        }
        format_ms(median(raw, "crdt", "write", clients, 0, F_P50, NULL), p50,
                  sizeof p50);
        format_ms(median(raw, "crdt", "write", clients, 0, F_P99, NULL), p99,
                  sizeof p99);
        format_ms(median(raw, "crdt", "write", clients, 0, F_CONVERGE, NULL),
                  lag, sizeof lag);
        fprintf(to, "| %d | %s | %s | %s | %s |\n", clients, tput, p50, p99,
                lag);
    }
    fprintf(to, "\n#### leader mode: follower lag (writer at a steady rate, "
                "2 followers)\n\n");
    fprintf(to, "| offered writes/s | rows | lag p50 ms | lag p99 ms | lag "
                "max ms | catch-up after the load ms |\n| ---: | ---: | ---: "
                "| ---: | ---: | ---: |\n");
    n = distinct(raw, "lag", keys, 32);
    for (i = 0; i < n; i++) {
        char cells[4][24], rows[32];
        enum field f[4] = {F_LAG_P50, F_LAG_P99, F_LAG_MAX, F_CATCHUP};

        for (k = 0; k < 4; k++) {
            format_ms(median(raw, "leader", "lag", 0, keys[i], f[k], NULL),
                      cells[k], sizeof cells[k]);
        }
        format_count(median(raw, "leader", "lag", 0, keys[i], F_ROWS, NULL),
                     rows, sizeof rows);
        fprintf(to, "| %.0f | %s | %s | %s | %s | %s |\n", keys[i], rows,
                cells[0], cells[1], cells[2], cells[3]);
    }
    fprintf(to, "\n");
}

static int write_csv(const struct raw *raw, const char *path)
{
    FILE *to = fopen(path, "w");
    size_t i, j;
    int f, rc;

    if (to == NULL) {
        return -errno;
    }
    fprintf(to, "system,kind,clients,rate,runs");
    for (f = 0; f < F_COUNT; f++) {
        fprintf(to, ",%s", field_names[f]);
    }
    fprintf(to, "\n");
    /* One row per group, in the order the groups first appear. */
    for (i = 0; i < raw->count; i++) {
        const struct sample *s = &raw->samples[i];
        int runs = 0;

        for (j = 0; j < i; j++) {
            const struct sample *t = &raw->samples[j];

            if (strcmp(s->system, t->system) == 0 &&
                strcmp(s->kind, t->kind) == 0 && s->clients == t->clients &&
                s->rate == t->rate) {
                break;
            }
        }
        if (j < i) {
            continue;
        }
        median(raw, s->system, s->kind, s->clients, s->rate,
               strcmp(s->kind, "lag") == 0 ? F_LAG_P50 : F_TPUT, &runs);
        fprintf(to, "%s,%s,%d,%.0f,%d", s->system, s->kind, s->clients, s->rate,
                runs);
        for (f = 0; f < F_COUNT; f++) {
            double v = median(raw, s->system, s->kind, s->clients, s->rate,
                              (enum field)f, NULL);

            if (isnan(v)) {
                fprintf(to, ",");
            } else {
                fprintf(to, ",%.3f", v);
            }
        }
        fprintf(to, "\n");
    }
    rc = ferror(to) ? -EIO : 0;
    return fclose(to) != 0 ? -EIO : rc;
}

/* ---- SVG: writes/s per client count, one bar per system, log scale ---- */

#define SVG_W 760
#define SVG_H 420
#define SVG_LEFT 70
#define SVG_TOP 60
#define SVG_BOTTOM 360

static double svg_y(double value, double lo, double hi)
{
    double t = (log10(value) - lo) / (hi - lo);

    return SVG_BOTTOM - t * (SVG_BOTTOM - SVG_TOP);
}

static int write_svg(const struct raw *raw, const char *path)
{
    FILE *to = fopen(path, "w");
    double keys[32], lo = 1e300, hi = 0, group_w, bar_w, e;
    size_t n, i, k, systems = sizeof write_systems / sizeof *write_systems;
    int rc;

    if (to == NULL) {
        return -errno;
    }
    n = distinct(raw, "write", keys, 32);
    for (i = 0; i < n; i++) {
        for (k = 0; k < systems; k++) {
            double v = median(raw, write_systems[k], "write", (int)keys[i], 0,
                              F_TPUT, NULL);

            if (!isnan(v) && v > 0) {
                lo = v < lo ? v : lo;
                hi = v > hi ? v : hi;
            }
        }
    }
    lo = hi > 0 ? floor(log10(lo)) : 1;
    hi = hi > 0 ? ceil(log10(hi)) : 2;
    if (hi <= lo) {
        hi = lo + 1;
    }
    fprintf(to,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"10\" y=\"20\" font-size=\"14\">Replicated single-row "
            "writes per second, 3 nodes on loopback (log scale; higher is "
            "better)</text>\n",
            SVG_W, SVG_H);
    for (k = 0; k < systems; k++) {
        fprintf(to,
                "<rect x=\"%zu\" y=\"32\" width=\"10\" height=\"9\" "
                "fill=\"%s\"/><text x=\"%zu\" y=\"41\">%s</text>\n",
                10 + k * 150, write_colors[k], 24 + k * 150, write_labels[k]);
    }
    for (e = lo; e <= hi; e += 1) {
        double y = svg_y(pow(10, e), lo, hi);

        fprintf(to,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                "stroke=\"#ddd\"/>\n<text x=\"%d\" y=\"%.1f\" "
                "text-anchor=\"end\">%.0f</text>\n",
                SVG_LEFT, y, SVG_W - 10, y, SVG_LEFT - 6, y + 4, pow(10, e));
    }
    group_w = n ? (double)(SVG_W - SVG_LEFT - 20) / (double)n : 1;
    bar_w = group_w * 0.8 / (double)systems;
    for (i = 0; i < n; i++) {
        double x0 = SVG_LEFT + (double)i * group_w + group_w * 0.1;

        fprintf(to,
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d "
                "client%s</text>\n",
                x0 + group_w * 0.4, SVG_BOTTOM + 18, (int)keys[i],
                keys[i] == 1 ? "" : "s");
        for (k = 0; k < systems; k++) {
            double v = median(raw, write_systems[k], "write", (int)keys[i], 0,
                              F_TPUT, NULL);
            double x = x0 + (double)k * bar_w, y;

            if (isnan(v) || v <= 0) {
                continue;
            }
            y = svg_y(v < pow(10, lo) ? pow(10, lo) : v, lo, hi);
            fprintf(to,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                    "height=\"%.1f\" fill=\"%s\"/>\n<text x=\"%.1f\" "
                    "y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">"
                    "%.0f</text>\n",
                    x, y, bar_w - 2, SVG_BOTTOM - y, write_colors[k],
                    x + bar_w / 2 - 1, y - 3, v);
        }
    }
    fprintf(to,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n"
            "<text x=\"10\" y=\"%d\">sinew crdt: writes on one node, "
            "acknowledged at its local commit (replication after); the others "
            "acknowledge once a majority has the write.</text>\n</svg>\n",
            SVG_LEFT, SVG_BOTTOM, SVG_W - 10, SVG_BOTTOM, SVG_H - 20);
    rc = ferror(to) ? -EIO : 0;
    return fclose(to) != 0 ? -EIO : rc;
}

int bc_report(const char *raw_path, const char *out_dir)
{
    struct raw *raw = calloc(1, sizeof *raw);
    char line[2048], path[1024];
    FILE *in, *md = NULL;
    int rc = 0;

    if (raw == NULL) {
        return -ENOMEM;
    }
    in = fopen(raw_path, "r");
    if (in == NULL) {
        fprintf(stderr, "bench_cluster: %s: %s\n", raw_path, strerror(errno));
        free(raw);
        return -errno;
    }
    while (fgets(line, sizeof line, in) != NULL) {
        parse_line(raw, line);
    }
    fclose(in);
    snprintf(path, sizeof path, "%s/replication.md", out_dir);
    md = fopen(path, "w");
    if (md == NULL) {
        rc = -errno;
        fprintf(stderr, "bench_cluster: %s: %s\n", path, strerror(errno));
        goto cleanup;
    }
    write_tables(raw, md);
    write_tables(raw, stdout);
    rc = fclose(md) != 0 ? -EIO : 0;
    snprintf(path, sizeof path, "%s/replication.csv", out_dir);
    if (rc == 0) {
        rc = write_csv(raw, path);
    }
    snprintf(path, sizeof path, "%s/replication.svg", out_dir);
    if (rc == 0) {
        rc = write_svg(raw, path);
    }
    if (rc != 0) {
        fprintf(stderr, "bench_cluster: writing %s: %s\n", path, strerror(-rc));
    }
cleanup:
    free(raw);
    return rc;
}
