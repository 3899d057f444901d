/* SPDX-License-Identifier: MIT
 *
 * nfq_plan.c: what chaos-nfq (nfq.c) is told and what it decides, kept
 * apart from libnetfilter_queue so the unit test can check it: its
 * command line, written by the supervisor (topo_delay.c) and parsed by the
 * helper, and the fate of each packet, drawn from the seeded generator of
 * the schedule (nemesis.c). netem is absent on this kernel, so a held
 * verdict is the only delay there is (chaos.md §1.6, Appendix B).
 *
 * The arguments come from our own supervisor, but they are still input:
 * every value is range-checked and a bad one is an error, never a crash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos_proc.h"

enum { NFQ_QUEUE, NFQ_DELAY, NFQ_JITTER, NFQ_LOSS, NFQ_SEED, NFQ_OPTIONS };

static const char *const nfq_option_names[NFQ_OPTIONS] = {
    "--queue", "--delay-ms", "--jitter-ms", "--loss-percent", "--seed"};
static const uint64_t nfq_option_max[NFQ_OPTIONS] = {
    65535, CHAOS_NFQ_DELAY_MS_MAX, CHAOS_NFQ_DELAY_MS_MAX, 100, UINT64_MAX};

/* A decimal number in [0, max]: 0 or -EINVAL. */
static int parse_decimal(const char *text, uint64_t max, uint64_t *out)
{
    char *end = NULL;
    if (text[0] < '0' || text[0] > '9') {
        return -EINVAL; /* strtoull would accept "-1" and " 1" */
    }
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0' || value > max) {
        return -EINVAL;
    }
    *out = value;
    return 0;
}

static int option_index(const char *name)
{
    for (int i = 0; i < NFQ_OPTIONS; i++) {
        if (strcmp(name, nfq_option_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

int chaos_nfq_args_parse(int argc, const char *const *argv,
                         struct chaos_nfq_config *out, char *error,
                         size_t error_size)
{
    uint64_t values[NFQ_OPTIONS] = {0};
    bool seen[NFQ_OPTIONS] = {false};
    for (int i = 1; i < argc; i += 2) {
        int option = option_index(argv[i]);
        if (option < 0 || seen[option]) {
            snprintf(error, error_size, "%s: %s", argv[i],
                     option < 0 ? "unknown option" : "given twice");
            return -EINVAL;
        }
        if (i + 1 >= argc || parse_decimal(argv[i + 1], nfq_option_max[option],
                                           &values[option]) != 0) {
            snprintf(error, error_size, "%s needs a number from 0 to %llu",
                     argv[i], (unsigned long long)nfq_option_max[option]);
            return -EINVAL;
        }
        seen[option] = true;
    }
    for (int option = 0; option < NFQ_OPTIONS; option++) {
        if (!seen[option]) {
            snprintf(error, error_size, "%s is required",
                     nfq_option_names[option]);
            return -EINVAL;
        }
    }
    out->queue = (unsigned)values[NFQ_QUEUE];
    out->delay_ms = (int)values[NFQ_DELAY];
    out->jitter_ms = (int)values[NFQ_JITTER];
    out->loss_percent = (int)values[NFQ_LOSS];
    out->seed = values[NFQ_SEED];
    return 0;
}

void chaos_nfq_args_format(const struct chaos_nfq_config *config,
                           const char **argv, char storage[5][24])
{
    uint64_t values[NFQ_OPTIONS] = {
        config->queue, (uint64_t)config->delay_ms, (uint64_t)config->jitter_ms,
        (uint64_t)config->loss_percent, config->seed};
    size_t a = 0;
    for (int option = 0; option < NFQ_OPTIONS; option++) {
        snprintf(storage[option], sizeof storage[option], "%llu",
                 (unsigned long long)values[option]);
        argv[a++] = nfq_option_names[option];
        argv[a++] = storage[option];
    }
    argv[a] = NULL;
}

int chaos_nfq_packet_delay_ms(const struct chaos_nfq_config *config,
                              struct chaos_rng *rng)
{
    /* Both draws always happen, so one packet's fate does not shift the
     * sequence of the next packets' delays. */
    bool is_lost = chaos_rng_below(rng, 100) < (uint64_t)config->loss_percent;
    int jitter_ms = (int)chaos_rng_below(rng, (uint64_t)config->jitter_ms);
    return is_lost ? -1 : config->delay_ms + jitter_ms;
}
