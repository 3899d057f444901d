/* SPDX-License-Identifier: MIT
 *
 * consensus.c: a member's lifecycle (open, bootstrap, start, close), the
 * tick that drives it, and its status (consensus.h is the manual).
 *
 * libraft (the legacy API of 0.22: raft_init with our raft_io and
 * raft_fsm) does the algorithm; this file sets it up as raft.md §5.1 asks:
 * pre-vote on, and no automatic log recovery (our store has none: damage
 * fails the start).
 */
#include <string.h>

#include "consensus_int.h"

#define ELECTION_TIMEOUT_MS_DEFAULT 500
#define HEARTBEAT_MS_DEFAULT 100
#define SNAPSHOT_THRESHOLD_DEFAULT 1024
#define SNAPSHOT_TRAILING_DEFAULT 2048
#define MAX_ENTRY_BYTES_DEFAULT (1u << 20)
/* Room in a message for the envelope and an AppendEntries' headers. */
#define MESSAGE_OVERHEAD_BYTES (64u << 10)
#define RAFT_INFLIGHT_ENTRIES_MAX 32
#define MAX_INFLIGHT_ENTRIES_DEFAULT 8

char *consensus__strdup(const char *text)
{
    size_t size = strlen(text) + 1;
    char *copy = common_malloc(size);

    if (copy != NULL) {
        memcpy(copy, text, size);
    }
    return copy;
}

void consensus__stop(struct consensus *c, const char *what, int rc)
{
    if (!c->unavailable) {
        LOGF(c->config.log, COMMON_LOG_ERROR,
             "member stopped failed=\"%s\" error=\"%s\"", what,
             consensus_strerror(rc));
    }
    c->unavailable = true;
}

static int config_check(const struct consensus_config *config,
                        const struct consensus_state_machine *machine)
{
    if (config == NULL || machine == NULL || config->id == 0 ||
        config->address == NULL || config->data_dir == NULL ||
        config->transport == NULL || config->clock.now_ms == NULL ||
        config->random.next == NULL || machine->apply == NULL ||
        machine->snapshot == NULL || machine->restore == NULL) {
        return CONSENSUS_ECONFIG;
    }
    return 0;
}

static void config_defaults(struct consensus_config *config)
{
    if (config->election_timeout_ms == 0) {
        config->election_timeout_ms = ELECTION_TIMEOUT_MS_DEFAULT;
    }
    if (config->heartbeat_ms == 0) {
        config->heartbeat_ms = HEARTBEAT_MS_DEFAULT;
    }
    if (config->snapshot_threshold == 0) {
        config->snapshot_threshold = SNAPSHOT_THRESHOLD_DEFAULT;
    }
    if (config->snapshot_trailing == 0) {
        config->snapshot_trailing = SNAPSHOT_TRAILING_DEFAULT;
    }
    if (config->max_entry_bytes == 0) {
        config->max_entry_bytes = MAX_ENTRY_BYTES_DEFAULT;
    }
    if (config->max_inflight_entries == 0) {
        config->max_inflight_entries = MAX_INFLIGHT_ENTRIES_DEFAULT;
    }
    if (config->max_message_bytes == 0) {
        config->max_message_bytes = TRANSPORT_MESSAGE_MAX_BYTES_DEFAULT;
    }
}

static size_t raft_inflight_entries(const struct consensus *c)
{
    size_t fit = (c->config.max_message_bytes - MESSAGE_OVERHEAD_BYTES) /
                 c->config.max_entry_bytes;

    return fit < RAFT_INFLIGHT_ENTRIES_MAX ? fit : RAFT_INFLIGHT_ENTRIES_MAX;
}

static void raft_settings(struct consensus *c)
{
    struct raft *r = &c->raft;

    raft_set_election_timeout(r, c->config.election_timeout_ms);
    raft_set_heartbeat_timeout(r, c->config.heartbeat_ms);
    raft_set_pre_vote(r, true);
    raft_set_capacity_threshold(r, 0);
    raft_set_snapshot_threshold(r, c->config.snapshot_threshold);
    raft_set_snapshot_trailing(r, c->config.snapshot_trailing);
    /* libraft sends up to this many entries in one AppendEntries: as many
     * full entries as one transport message holds, or a lagging follower
     * would be sent a message the transport refuses, forever. */
    raft_set_max_inflight_entries(r, (unsigned)raft_inflight_entries(c));
    raft_seed(r, (unsigned)c->config.random.next(c->config.random.ctx));
}

int consensus_open(const struct consensus_config *config,
                   const struct consensus_state_machine *machine,
                   struct consensus **out)
{
    struct consensus *c;
    char *address = NULL;
    int rc = config_check(config, machine);

    if (rc != 0) {
        return rc;
    }
    if (config->heartbeat_ms != 0 &&
        config->heartbeat_ms >= (config->election_timeout_ms != 0
                                     ? config->election_timeout_ms
                                     : ELECTION_TIMEOUT_MS_DEFAULT)) {
        return CONSENSUS_ECONFIG;
    }
    c = common_calloc(1, sizeof *c);
    if (c == NULL) {
        return COMMON_ENOMEM;
    }
    c->config = *config;
    config_defaults(&c->config);
    if (c->config.max_message_bytes <
        c->config.max_entry_bytes + MESSAGE_OVERHEAD_BYTES) {
        common_free(c);
        return CONSENSUS_ECONFIG;
    }
    c->machine = *machine;
    c->queued_tail = &c->queued;
    c->config.address = consensus__strdup(config->address);
    c->config.data_dir = consensus__strdup(config->data_dir);
    rc = COMMON_ENOMEM;
    if (c->config.address == NULL || c->config.data_dir == NULL) {
        goto fail;
    }
    rc = consensus__address_format(&config->node, config->address, &address);
    if (rc != 0) {
        goto fail;
    }
    rc = consensus__store_open(c->config.data_dir, &c->store);
    if (rc != 0) {
        goto fail;
    }
    consensus__io_init(c);
    consensus__fsm_init(c);
    rc = raft_init(&c->raft, &c->io, &c->fsm, config->id, address);
    if (rc != 0) {
        rc = consensus__from_raft(rc);
        goto fail_io;
    }
    c->raft.data = c;
    raft_settings(c);
    raft_free(address);
    *out = c;
    return 0;
fail_io:
    consensus__io_close(c);
    consensus__store_close(c->store);
fail:
    raft_free(address);
    common_free((char *)c->config.address);
    common_free((char *)c->config.data_dir);
    common_free(c);
    return rc;
}

int consensus_bootstrap(struct consensus *c,
                        const struct consensus_member *members, size_t count)
{
    struct raft_configuration conf;
    int rc = 0;

    if (c->started || members == NULL || count == 0) {
        return CONSENSUS_ECONFIG;
    }
    raft_configuration_init(&conf);
    for (size_t i = 0; i < count && rc == 0; i++) {
        char *address = NULL;
        int role = members[i].role == CONSENSUS_VOTER     ? RAFT_VOTER
                   : members[i].role == CONSENSUS_STANDBY ? RAFT_STANDBY
                                                          : RAFT_SPARE;
        if (members[i].id == 0 || members[i].address == NULL) {
            rc = CONSENSUS_ECONFIG;
            break;
        }
        rc = consensus__address_format(&members[i].node, members[i].address,
                                       &address);
        if (rc == 0) {
            rc = raft_configuration_add(&conf, members[i].id, address, role);
            rc = rc == 0 ? 0 : CONSENSUS_ECONFIG;
        }
        raft_free(address);
    }
    if (rc == 0) {
        rc = consensus__from_raft(raft_bootstrap(&c->raft, &conf));
    }
    raft_configuration_close(&conf);
    return rc;
}

int consensus_start(struct consensus *c)
{
    int rc;

    if (c->started) {
        return CONSENSUS_ECONFIG;
    }
    rc = raft_start(&c->raft);
    if (rc != 0) {
        LOGF(c->config.log, COMMON_LOG_ERROR, "raft start failed error=\"%s\"",
             raft_errmsg(&c->raft));
        return consensus__from_raft(rc);
    }
    c->started = true;
    return consensus__io_connect_members(c);
}

static void raft_closed(struct raft *r)
{
    struct consensus *c = r->data;

    c->closed = true;
}

void consensus_close(struct consensus *c)
{
    if (c == NULL) {
        return;
    }
    c->closing = true;
    consensus__propose_fail_all(c, CONSENSUS_ESHUTDOWN);
    raft_close(&c->raft, raft_closed);
    consensus__io_fire_requests(c);
    /* Our raft_io finishes what is queued, then tells libraft it closed;
     * its requests fail with RAFT_SHUTDOWN meanwhile. */
    consensus__io_run_completions(c);
    if (c->io_close_cb != NULL) {
        c->io_close_cb(&c->io);
    }
    ASSERT(c->closed);
    consensus__io_drop_completions(c);
    consensus__change_fail(c, CONSENSUS_ESHUTDOWN);
    consensus__io_close(c);
    consensus__store_close(c->store);
    common_free((char *)c->config.address);
    common_free((char *)c->config.data_dir);
    common_free(c);
}

void consensus_connected(struct consensus *c,
                         const struct transport_node_id *peer)
{
    consensus__io_peer_state(c, peer, true);
}

void consensus_disconnected(struct consensus *c,
                            const struct transport_node_id *peer)
{
    consensus__io_peer_state(c, peer, false);
}

void consensus_writable(struct consensus *c,
                        const struct transport_node_id *peer)
{
    consensus__io_writable(c, peer);
}

void consensus_received(struct consensus *c,
                        const struct transport_node_id *peer, uint16_t type,
                        const uint8_t *bytes, size_t size)
{
    uint8_t *whole = NULL;
    size_t whole_size = 0;

    if (type == CONSENSUS_MESSAGE_RAFT) {
        consensus__io_received(c, peer, bytes, size);
    } else if (type == CONSENSUS_MESSAGE_RAFT_PART &&
               consensus__parts_received(c, peer, bytes, size, &whole,
                                         &whole_size) == 0) {
        if (whole != NULL) {
            consensus__io_received(c, peer, whole, whole_size);
            common_free(whole);
        }
    } else {
        c->messages_dropped++;
    }
}

/* Whether libraft's next timer (an election, a heartbeat) is due. Its
 * legacy layer only asks for a tick every heartbeat, which would round
 * every election timeout up to a heartbeat: two followers whose random
 * timeouts land in the same heartbeat stand together and split the vote
 * (the first clean-clone CI run saw a 2.7 s failover from it). We tick
 * when it is due. */
static bool timeout_due(struct consensus *c, uint64_t now)
{
    raft_time due = raft_timeout(&c->raft);

    return due != 0 && now >= due;
}

int consensus_tick(struct consensus *c, uint64_t *next_ms)
{
    uint64_t now = consensus__io_now(c);

    *next_ms = now;
    if (!c->started || c->closing) {
        return c->started ? CONSENSUS_ESHUTDOWN : CONSENSUS_ECONFIG;
    }
    if (!c->unavailable) {
        consensus__io_run_completions(c);
    }
    if (!c->unavailable && (now >= c->next_tick_ms || timeout_due(c, now))) {
        c->next_tick_ms = now + c->tick_ms;
        c->tick_cb(&c->io);
        consensus__io_fire_requests(c);
    }
    if (!c->unavailable) {
        consensus__io_connect_members(c);
    }
    consensus__propose_tick(c);
    consensus__io_fire_requests(c);
    if (!c->unavailable) {
        consensus__io_run_completions(c);
    }
    if (c->unavailable) {
        return CONSENSUS_EUNAVAILABLE;
    }
    *next_ms = c->next_tick_ms;
    if (raft_timeout(&c->raft) != 0 && raft_timeout(&c->raft) < *next_ms) {
        *next_ms = raft_timeout(&c->raft);
    }
    /* Work to do at once: completions, or proposals the in-flight window
     * has room for. Proposals waiting behind a full window wait for an
     * entry to apply, which only a message (or a timer) brings: asking to
     * be ticked now would spin (the chaos simulator found it). */
    if (c->completions != NULL ||
        (c->queued != NULL &&
         c->batch_count < c->config.max_inflight_entries)) {
        *next_ms = now;
    }
    return 0;
}

void consensus_status_get(struct consensus *c, struct consensus_status *out)
{
    raft_id leader_id = 0;
    const char *leader_address = NULL;
    int state = c->started ? (int)raft_state(&c->raft) : 0;

    memset(out, 0, sizeof *out);
    out->state = c->unavailable || !c->started ? CONSENSUS_UNAVAILABLE
                 : state == RAFT_LEADER        ? CONSENSUS_LEADER
                 : state == RAFT_CANDIDATE     ? CONSENSUS_CANDIDATE
                                               : CONSENSUS_FOLLOWER;
    out->term = raft_current_term(&c->raft);
    out->ready = out->state == CONSENSUS_LEADER && !c->closing &&
                 c->ready_term == out->term;
    if (c->started) {
        raft_leader(&c->raft, &leader_id, &leader_address);
    }
    out->leader_id = leader_id;
    if (leader_address != NULL) {
        struct transport_node_id node;
        const char *dial;
        if (consensus__address_parse(leader_address, &node, &dial) == 0) {
            snprintf(out->leader_address, sizeof out->leader_address, "%s",
                     dial);
        }
    }
    out->commit_index = raft_commit_index(&c->raft);
    out->applied_index = raft_last_applied(&c->raft);
    out->last_index = raft_last_index(&c->raft);
    out->proposals_queued = c->queued_count;
    out->entries_inflight = c->batch_count;
    out->messages_dropped = c->messages_dropped;
}

void consensus_members(struct consensus *c, struct consensus_member *out,
                       size_t capacity, size_t *count)
{
    const struct raft_configuration *conf = &c->raft.configuration;

    *count = conf->n;
    for (unsigned i = 0; i < conf->n && i < capacity; i++) {
        const struct raft_server *s = &conf->servers[i];
        const char *dial = "";
        struct transport_node_id node = {{0}};

        consensus__address_parse(s->address, &node, &dial);
        out[i] = (struct consensus_member){
            .id = s->id,
            .node = node,
            .address = dial,
            .role = s->role == RAFT_VOTER     ? CONSENSUS_VOTER
                    : s->role == RAFT_STANDBY ? CONSENSUS_STANDBY
                                              : CONSENSUS_SPARE,
        };
    }
}
