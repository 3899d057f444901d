/* SPDX-License-Identifier: MIT
 *
 * report.c: the engine benchmark's outputs: a markdown table per row count
 * (sinew's times with its JIT on and off, the peers' times, the ratios
 * sinew with JIT / SQLite and / DuckDB: below 1, sinew is faster, and the
 * JIT's speedup over the interpreter), a CSV file of the raw numbers, and
 * an SVG chart of the ratios on a log scale, drawn here so no plotting
 * tool is needed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_engine.h"

/* Three significant digits without a trailing point: 283 µs, 4.00 ms. */
static void format_scaled(double value, const char *unit, char *out,
                          size_t size)
{
    int decimals = value >= 100 ? 0 : value >= 10 ? 1 : 2;

    snprintf(out, size, "%.*f %s", decimals, value, unit);
}

void bench_format_ns(double ns, char *out, size_t size)
{
    if (ns < 1e3) {
        snprintf(out, size, "%.0f ns", ns);
    } else if (ns < 1e6) {
        format_scaled(ns / 1e3, "µs", out, size);
    } else if (ns < 1e9) {
        format_scaled(ns / 1e6, "ms", out, size);
    } else {
        format_scaled(ns / 1e9, "s", out, size);
    }
}

static void format_time(const struct bench_timing *timing, char *out,
                        size_t size)
{
    if (!timing->measured) {
        snprintf(out, size, "—");
        return;
    }
    bench_format_ns(timing->median_ns, out, size);
}

/* sinew's time over the peer's, written "0.05× (20× faster)". */
static void format_ratio(const struct bench_timing *sinew,
                         const struct bench_timing *peer, char *out,
                         size_t size)
{
    double ratio;

    if (!sinew->measured || !peer->measured || peer->median_ns <= 0) {
        snprintf(out, size, "—");
        return;
    }
    ratio = sinew->median_ns / peer->median_ns;
    if (ratio < 1) {
        snprintf(out, size, "%.3g (%.3g× faster)", ratio, 1 / ratio);
    } else {
        snprintf(out, size, "%.3g (%.3g× slower)", ratio, ratio);
    }
}

/* The interpreter's time over the JIT's: the JIT's speedup, "12.5×"
 * (below 1, the JIT-on arm was slower). */
static void format_speedup(const struct bench_timing *jit,
                           const struct bench_timing *interpreter, char *out,
                           size_t size)
{
    double speedup;

    if (!jit->measured || !interpreter->measured || jit->median_ns <= 0) {
        snprintf(out, size, "—");
        return;
    }
    speedup = interpreter->median_ns / jit->median_ns;
    /* %.3g would write 26,900 as 2.69e+04. */
    snprintf(out, size, speedup >= 1000 ? "%.0f×" : "%.3g×", speedup);
}

int bench_write_markdown(const struct bench_report *report, FILE *to)
{
    size_t i;

    fprintf(to, "### %lld rows\n\n", (long long)report->rows);
    fprintf(to, "Machine: %s. %s. Wall time of the run: %.0f s.\n\n",
            report->machine, report->versions, report->wall_s);
    fprintf(to, "| # | shape | sinew JIT | sinew interpreter | SQLite | DuckDB "
                "| JIT/SQLite | JIT/DuckDB | interpreter/JIT | JIT served "
                "|\n");
    fprintf(to, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
                "| --- |\n");
    for (i = 0; i < report->count; i++) {
        const struct bench_result *result = &report->results[i];
        char times[BENCH_ARMS][32], lite[48], duck[48], speedup[32];
        int arm;

        for (arm = 0; arm < BENCH_ARMS; arm++) {
            format_time(&result->arm[arm], times[arm], sizeof times[arm]);
        }
        format_ratio(&result->arm[ARM_SINEW], &result->arm[ARM_SQLITE], lite,
                     sizeof lite);
        format_ratio(&result->arm[ARM_SINEW], &result->arm[ARM_DUCKDB], duck,
                     sizeof duck);
        format_speedup(&result->arm[ARM_SINEW], &result->arm[ARM_SINEW_INTERP],
                       speedup, sizeof speedup);
        fprintf(to, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                result->shape->id, result->shape->name, times[ARM_SINEW],
                times[ARM_SINEW_INTERP], times[ARM_SQLITE], times[ARM_DUCKDB],
                lite, duck, speedup, result->jit_served);
    }
    fprintf(to, "\n");
    if (report->jit_stats != NULL && report->jit_stats[0] != '\0') {
        fprintf(to, "JIT counters: %s\n\n", report->jit_stats);
    }
    return ferror(to) ? -1 : 0;
}

int bench_write_csv(const struct bench_report *report, const char *path)
{
    static const char *const arms[BENCH_ARMS] = {"sinew_jit", "sqlite",
                                                 "duckdb", "sinew_interpreter"};
    FILE *to = fopen(path, "w");
    size_t i;
    int arm, rc;

    if (to == NULL) {
        return -1;
    }
    fprintf(to, "rows,shape,name,arm,median_ns,min_ns,iterations,"
                "jit_served\n");
    for (i = 0; i < report->count; i++) {
        const struct bench_result *result = &report->results[i];

        for (arm = 0; arm < BENCH_ARMS; arm++) {
            const struct bench_timing *timing = &result->arm[arm];

            if (!timing->measured) {
                continue;
            }
            fprintf(to, "%lld,%s,\"%s\",%s,%.0f,%.0f,%d,\"%s\"\n",
                    (long long)report->rows, result->shape->id,
                    result->shape->name, arms[arm], timing->median_ns,
                    timing->min_ns, timing->iterations, result->jit_served);
        }
    }
    rc = ferror(to) ? -1 : 0;
    return fclose(to) != 0 ? -1 : rc;
}

/* ---- SVG ---- */

#define SVG_WIDTH 900
#define SVG_LABEL 260 /* left column: shape names */
#define SVG_ROW 36    /* height per shape: three bars */
#define SVG_TOP 60
#define SVG_DECADES 3.0 /* the axis spans 10^-3 .. 10^3 */

/* x of a ratio on the log axis, clamped to the plot. */
static double svg_x(double ratio)
{
    double plot = SVG_WIDTH - SVG_LABEL - 20;
    double decades = log10(ratio);

    if (decades < -SVG_DECADES) {
        decades = -SVG_DECADES;
    }
    if (decades > SVG_DECADES) {
        decades = SVG_DECADES;
    }
    return SVG_LABEL + plot / 2 + decades / SVG_DECADES * plot / 2;
}

/* Shape names hold "<>" and ">": escaped for XML. */
static void svg_text(FILE *to, const char *text)
{
    for (; *text; text++) {
        switch (*text) {
        case '<':
            fputs("&lt;", to);
            break;
        case '>':
            fputs("&gt;", to);
            break;
        case '&':
            fputs("&amp;", to);
            break;
        default:
            fputc(*text, to);
        }
    }
}

static void svg_bar(FILE *to, const struct bench_timing *sinew,
                    const struct bench_timing *peer, double y,
                    const char *fill_fast, const char *fill_slow)
{
    double ratio, x0 = svg_x(1), x;

    if (!sinew->measured || !peer->measured || peer->median_ns <= 0) {
        return;
    }
    ratio = sinew->median_ns / peer->median_ns;
    x = svg_x(ratio);
    fprintf(to,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"9\" "
            "fill=\"%s\"/>\n",
            x < x0 ? x : x0, y, fabs(x - x0) < 1 ? 1 : fabs(x - x0),
            ratio < 1 ? fill_fast : fill_slow);
    fprintf(to,
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" "
            "text-anchor=\"%s\">%.3g</text>\n",
            x < x0 ? x - 3 : x + 3, y + 8, x < x0 ? "end" : "start", ratio);
}

int bench_write_svg(const struct bench_report *report, const char *path)
{
    FILE *to = fopen(path, "w");
    int height = SVG_TOP + (int)report->count * SVG_ROW + 40;
    double exponent;
    size_t i;
    int rc;

    if (to == NULL) {
        return -1;
    }
    fprintf(to,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            SVG_WIDTH, height);
    fprintf(to,
            "<text x=\"10\" y=\"20\" font-size=\"14\">sinew (JIT on) time / "
            "peer time, %lld rows (log scale; left of 1: sinew "
            "faster)</text>\n"
            "<rect x=\"10\" y=\"32\" width=\"10\" height=\"9\" "
            "fill=\"#2b7bba\"/><text x=\"24\" y=\"41\">vs C SQLite</text>\n"
            "<rect x=\"120\" y=\"32\" width=\"10\" height=\"9\" "
            "fill=\"#e08a1e\"/><text x=\"134\" y=\"41\">vs DuckDB (1 "
            "thread)</text>\n"
            "<rect x=\"270\" y=\"32\" width=\"10\" height=\"9\" "
            "fill=\"#9aa5b1\"/><text x=\"284\" y=\"41\">JIT off vs C "
            "SQLite</text>\n",
            (long long)report->rows);
    for (exponent = -SVG_DECADES; exponent <= SVG_DECADES; exponent += 1) {
        double x = svg_x(pow(10, exponent));

        fprintf(to,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                "stroke=\"%s\"/>\n"
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g×</text>\n",
                x, SVG_TOP - 8, x, height - 30,
                exponent == 0 ? "black" : "#ddd", x, height - 16,
                pow(10, exponent));
    }
    for (i = 0; i < report->count; i++) {
        const struct bench_result *result = &report->results[i];
        double y = SVG_TOP + (double)i * SVG_ROW;

        fprintf(to, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s ",
                SVG_LABEL - 6, y + 19, result->shape->id);
        svg_text(to, result->shape->name);
        fputs("</text>\n", to);
        svg_bar(to, &result->arm[ARM_SINEW], &result->arm[ARM_SQLITE], y,
                "#2b7bba", "#2b7bba");
        svg_bar(to, &result->arm[ARM_SINEW], &result->arm[ARM_DUCKDB], y + 11,
                "#e08a1e", "#e08a1e");
        svg_bar(to, &result->arm[ARM_SINEW_INTERP], &result->arm[ARM_SQLITE],
                y + 22, "#9aa5b1", "#9aa5b1");
    }
    fprintf(to, "</svg>\n");
    rc = ferror(to) ? -1 : 0;
    return fclose(to) != 0 ? -1 : rc;
}
