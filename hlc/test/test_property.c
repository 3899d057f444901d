/* SPDX-License-Identifier: MIT
 *
 * Goal: in a seeded simulation of several nodes that stamp local events and
 * exchange stamped messages, with skewed, drifting and stepping-back
 * physical clocks, delayed and reordered delivery, and one node whose clock
 * sometimes runs away:
 *   1. every node's stamps strictly increase;
 *   2. every accepted receive is stamped above the matching send;
 *   3. happens-before is preserved: if event e happened before event f
 *      (Lamport's relation, tracked with vector clocks), hlc(e) < hlc(f);
 *   4. a refused message was really beyond the maximum offset, and moved
 *      nothing;
 *   5. no stamp runs more than the maximum offset ahead of the furthest
 *      physical clock reading (the bound of Kulkarni et al. 2014, §4).
 * Method: a discrete simulation on fake clocks; vector clocks per event; an
 * all-pairs check at the end of each run. The seed is printed.
 */
#include "hlc_test.h"

#include <string.h>

#define NODES 5
#define EVENTS_PER_RUN 2500
#define RUNS 20
#define MAX_OFFSET_MS 500
#define MESSAGES_IN_FLIGHT_MAX 256

struct sim_node {
    struct fake_clock fake;
    struct hlc clock;
    int64_t skew_ms;    /* this node's clock minus true time */
    hlc_ts last_stamp;  /* the node's largest stamp so far */
    uint32_t vc[NODES]; /* vector clock */
};

struct sim_message {
    int to;
    hlc_ts stamp;           /* the send event's stamp */
    uint64_t deliver_at_ms; /* true time it may arrive */
    uint32_t vc[NODES];     /* the send event's vector clock */
};

struct sim_event {
    hlc_ts stamp;
    uint32_t vc[NODES];
};

struct sim {
    struct common_test_rng rng;
    struct sim_node nodes[NODES];
    struct sim_message flight[MESSAGES_IN_FLIGHT_MAX];
    int flight_count;
    struct sim_event events[EVENTS_PER_RUN];
    int event_count;
    uint64_t true_ms;         /* true time */
    uint64_t max_physical_ms; /* furthest physical reading of any node */
    int refused;
    int accepted;
};

static uint64_t sim_physical(struct sim *sim, int node)
{
    uint64_t physical =
        (uint64_t)((int64_t)sim->true_ms + sim->nodes[node].skew_ms);

    if (physical > sim->max_physical_ms) {
        sim->max_physical_ms = physical;
    }
    return physical;
}

/* Records node's new stamp and checks properties 1 and 5. */
static void sim_record(struct sim *sim, int node, hlc_ts stamp)
{
    struct sim_node *n = &sim->nodes[node];
    struct sim_event *event = &sim->events[sim->event_count++];

    assert_true(stamp > n->last_stamp);
    assert_true(hlc_physical_ms(stamp) <= sim->max_physical_ms + MAX_OFFSET_MS);
    n->last_stamp = stamp;
    n->vc[node]++;
    event->stamp = stamp;
    memcpy(event->vc, n->vc, sizeof(event->vc));
}

static void sim_local_event(struct sim *sim, int node)
{
    struct sim_node *n = &sim->nodes[node];

    n->fake.now_ms = sim_physical(sim, node);
    sim_record(sim, node, must_now(&n->clock));
}

static void sim_send(struct sim *sim, int from)
{
    struct sim_node *n = &sim->nodes[from];
    struct sim_message *m;

    if (sim->flight_count == MESSAGES_IN_FLIGHT_MAX) {
        return;
    }
    sim_local_event(sim, from);
    m = &sim->flight[sim->flight_count++];
    m->to =
        (from + 1 + (int)common_test_rng_below(&sim->rng, NODES - 1)) % NODES;
    m->stamp = n->last_stamp;
    m->deliver_at_ms = sim->true_ms + common_test_rng_below(&sim->rng, 40);
    memcpy(m->vc, n->vc, sizeof(m->vc));
}

static void sim_accept(struct sim *sim, const struct sim_message *m,
                       hlc_ts stamp)
{
    struct sim_node *n = &sim->nodes[m->to];

    assert_true(stamp > m->stamp); /* property 2 */
    for (int i = 0; i < NODES; i++) {
        if (m->vc[i] > n->vc[i]) {
            n->vc[i] = m->vc[i];
        }
    }
    sim_record(sim, m->to, stamp);
    sim->accepted++;
}

static void sim_deliver(struct sim *sim, int index)
{
    struct sim_message m = sim->flight[index];
    struct sim_node *n = &sim->nodes[m.to];
    hlc_ts before = hlc_high_water(&n->clock);
    hlc_ts stamp = 0;
    int rc;

    sim->flight[index] = sim->flight[--sim->flight_count];
    n->fake.now_ms = sim_physical(sim, m.to);
    rc = hlc_update(&n->clock, m.stamp, &stamp);
    if (rc == 0) {
        sim_accept(sim, &m, stamp);
        return;
    }
    /* Property 4. */
    assert_int_equal(rc, HLC_EAHEAD);
    assert_true(hlc_physical_ms(m.stamp) > n->fake.now_ms + MAX_OFFSET_MS);
    assert_true(hlc_high_water(&n->clock) == before);
    sim->refused++;
}

/* Delivers one due message, chosen at random so delivery reorders. */
static void sim_deliver_one(struct sim *sim)
{
    int due[MESSAGES_IN_FLIGHT_MAX];
    int due_count = 0;

    for (int i = 0; i < sim->flight_count; i++) {
        if (sim->flight[i].deliver_at_ms <= sim->true_ms) {
            due[due_count++] = i;
        }
    }
    if (due_count > 0) {
        sim_deliver(sim,
                    due[common_test_rng_below(&sim->rng, (uint64_t)due_count)]);
    }
}

/* Clock faults: drift, a step back (NTP correcting a fast clock), a resync
 * to within 200 ms of true time, and node 0 running away ahead. */
static void sim_disturb_clock(struct sim *sim)
{
    int node = (int)common_test_rng_below(&sim->rng, NODES);
    uint64_t kind = common_test_rng_below(&sim->rng, 20);
    int64_t *skew_ms = &sim->nodes[node].skew_ms;

    if (kind < 10) {
        *skew_ms += (int64_t)common_test_rng_below(&sim->rng, 21) - 10;
    } else if (kind < 14) {
        *skew_ms -= (int64_t)common_test_rng_below(&sim->rng, 1000);
    } else if (kind < 19) {
        *skew_ms = (int64_t)common_test_rng_below(&sim->rng, 400) - 200;
    } else {
        sim->nodes[0].skew_ms = (int64_t)common_test_rng_below(&sim->rng, 3000);
    }
}

static void sim_step(struct sim *sim)
{
    uint64_t action = common_test_rng_below(&sim->rng, 100);
    int node = (int)common_test_rng_below(&sim->rng, NODES);

    if (action < 25) {
        sim_local_event(sim, node);
    } else if (action < 55) {
        sim_send(sim, node);
    } else if (action < 85) {
        sim_deliver_one(sim);
    } else if (action < 97) {
        sim->true_ms += common_test_rng_below(&sim->rng, 4);
    } else {
        sim_disturb_clock(sim);
    }
}

static bool happened_before(const struct sim_event *e,
                            const struct sim_event *f)
{
    bool strictly = false;

    for (int i = 0; i < NODES; i++) {
        if (e->vc[i] > f->vc[i]) {
            return false;
        }
        strictly = strictly || e->vc[i] < f->vc[i];
    }
    return strictly;
}

/* Property 3, over every ordered pair of events. */
static void sim_check_happens_before(const struct sim *sim)
{
    for (int i = 0; i < sim->event_count; i++) {
        for (int j = 0; j < sim->event_count; j++) {
            if (happened_before(&sim->events[i], &sim->events[j])) {
                assert_true(sim->events[i].stamp < sim->events[j].stamp);
            }
        }
    }
}

static void sim_run(struct sim *sim, uint64_t seed)
{
    memset(sim, 0, sizeof(*sim));
    sim->rng.state = seed;
    sim->true_ms = UINT64_C(1764686000000);
    for (int i = 0; i < NODES; i++) {
        sim->nodes[i].skew_ms =
            (int64_t)common_test_rng_below(&sim->rng, 400) - 200;
        fake_clock_hlc_init(&sim->nodes[i].clock, &sim->nodes[i].fake,
                            MAX_OFFSET_MS);
    }
    while (sim->event_count + 2 < EVENTS_PER_RUN) {
        sim_step(sim);
    }
    sim_check_happens_before(sim);
}

static void property_happens_before_is_preserved(void **state)
{
    static struct sim sim;
    struct common_test_rng seeds;
    int refused = 0;
    int accepted = 0;

    (void)state;
    common_test_rng_seed(&seeds, "property_happens_before_is_preserved");
    for (int run = 0; run < RUNS; run++) {
        sim_run(&sim, common_test_rng_next(&seeds));
        refused += sim.refused;
        accepted += sim.accepted;
    }
    /* The schedule must exercise both outcomes, or it proves little. */
    assert_true(accepted > 1000);
    assert_true(refused > 0);
    printf("runs=%d accepted=%d refused=%d\n", RUNS, accepted, refused);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(property_happens_before_is_preserved),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
