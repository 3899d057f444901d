/* SPDX-License-Identifier: MIT
 *
 * history.c: what clients did and learned (chaos-design.md §7): one
 * struct sim_op per operation, invoked and completed at history times
 * t * 10^6 + seq (ns, strictly increasing, so every order is total), and
 * its export as JSON lines (--history).
 */
#include <inttypes.h>
#include <string.h>

#include "sim_int.h"

int64_t sim_history_now_ns(struct sim *sim)
{
    sim->seq++;
    ASSERT(sim->seq < 1000000);
    return (int64_t)sim->now_ms * 1000000 + (int64_t)sim->seq;
}

size_t sim_history_invoke(struct sim *sim, const struct sim_op *op)
{
    struct sim_op *slot;

    if (sim->history_count == sim->history_capacity) {
        size_t capacity =
            sim->history_capacity ? sim->history_capacity * 2 : 1024;
        struct sim_op *grown =
            common_realloc(sim->history, capacity * sizeof(*grown));

        ASSERT(grown != NULL);
        sim->history = grown;
        sim->history_capacity = capacity;
    }
    slot = &sim->history[sim->history_count];
    *slot = *op;
    slot->index = sim->history_count;
    slot->outcome = SIM_PENDING;
    slot->invoke_ns = sim_history_now_ns(sim);
    slot->complete_ns = 0;
    return sim->history_count++;
}

struct sim_op *sim_history_op(struct sim *sim, size_t index)
{
    ASSERT(index < sim->history_count);
    return &sim->history[index];
}

void sim_history_complete(struct sim *sim, size_t index,
                          enum sim_outcome outcome, int64_t result)
{
    struct sim_op *op = sim_history_op(sim, index);

    ASSERT(op->outcome == SIM_PENDING);
    ASSERT(outcome != SIM_PENDING);
    op->outcome = outcome;
    op->complete_ns = sim_history_now_ns(sim);
    if (op->kind == SIM_OP_READ && outcome == SIM_OK) {
        op->value = result;
    }
    sim_trace(sim, (int)op->node, "done", index, (uint64_t)outcome);
}

void sim_history_unknown_on(struct sim *sim, unsigned node)
{
    for (size_t i = 0; i < sim->history_count; i++) {
        if (sim->history[i].outcome == SIM_PENDING &&
            sim->history[i].node == node) {
            sim_history_complete(sim, i, SIM_UNKNOWN, 0);
        }
    }
}

static const char *kind_name(enum sim_op_kind kind)
{
    static const char *const names[] = {
        "read",        "write",       "cas",    "elem_insert", "cell_insert",
        "cell_update", "cell_delete", "append", "log_read",
    };

    return (size_t)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

static const char *outcome_name(enum sim_outcome outcome)
{
    static const char *const names[] = {"pending", "ok", "fail", "unknown"};

    return names[outcome];
}

int sim_history_write(const struct sim *sim, const char *path)
{
    FILE *f = fopen(path, "w");

    if (f == NULL) {
        return SIM_EIO;
    }
    for (size_t i = 0; i < sim->history_count; i++) {
        const struct sim_op *op = &sim->history[i];
        char site[2 * SIM_SITE_BYTES + 1];

        for (size_t b = 0; b < SIM_SITE_BYTES; b++) {
            snprintf(site + 2 * b, 3, "%02x", op->site[b]);
        }
        fprintf(f,
                "{\"i\":%zu,\"client\":%" PRId64 ",\"kind\":\"%s\","
                "\"node\":%u,\"key\":%" PRId64 ",\"value\":%" PRId64
                ",\"columns\":%u,\"cells\":[%" PRId64 ",%" PRId64 ",%" PRId64
                "],\"txn\":%" PRIu64 ",\"hlc\":%" PRIu64
                ",\"site\":\"%s\",\"epoch\":%" PRIu64 ",\"invoke\":%" PRId64
                ",\"complete\":%" PRId64 ",\"outcome\":\"%s\"}\n",
                op->index, op->client, kind_name(op->kind), op->node, op->key,
                op->value, op->columns, op->cells[0], op->cells[1],
                op->cells[2], op->txn, op->hlc, site, op->epoch, op->invoke_ns,
                op->complete_ns, outcome_name(op->outcome));
    }
    return fclose(f) == 0 ? 0 : SIM_EIO;
}
