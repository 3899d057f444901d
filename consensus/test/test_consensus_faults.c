/* SPDX-License-Identifier: MIT
 *
 * test_consensus_faults.c: members that cannot go on, on the simulated
 * cluster: a state machine that fails to apply, a Raft log whose disk
 * fails on the leader or a follower (also while a follower needs a
 * snapshot), a snapshot the state machine refuses at start, entries too
 * large to batch, and a member speaking for another. Each was a crash,
 * a hang or a wrong answer once (the review of the first version); the
 * member must stop cleanly instead, and the others go on.
 */
#include "consensus_int.h"
#include "raft_cluster.h"
#include "wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct consensus__store *store_of(struct rc_cluster *c, unsigned i)
{
    return c->nodes[i].consensus->store;
}

/* The state machine fails an entry: the member stops; its proposer hears
 * "unknown", not a failure (the entry is committed: found by chaos-proc,
 * a client told SQLITE_ERROR for a write it later read); a read behind
 * that entry is not answered as if the state were current; after a
 * restart the entry is applied. */
static void test_apply_failure_stops_member(void **state)
{
    struct rc_cluster c;
    struct rc_op op;
    struct rc_reads reads = {0};

    (void)state;
    rc_init(&c, 1, 31);
    rc_bootstrap(&c, 1);
    rc_start_all(&c);
    rc_commit(&c, 1);
    c.nodes[0].machine.fail_value = 99;
    assert_int_equal(rc_propose(&c, 0, 99, &op), 0);
    assert_int_equal(
        consensus_read_barrier(c.nodes[0].consensus, rc_read_done, &reads), 0);
    rc_run(&c, 500);
    assert_true(c.nodes[0].unavailable);
    assert_true(op.done);
    assert_int_equal(op.status, CONSENSUS_EUNKNOWN);
    assert_true(reads.done == 0 || reads.status == CONSENSUS_EUNAVAILABLE);
    rc_stop(&c, 0);
    assert_true(reads.done == 1 && reads.status != 0);
    c.nodes[0].machine.fail_value = 0;
    rc_start(&c, 0);
    rc_run(&c, 3000);
    assert_true(rc_has_value(&c, 0, 99));
    rc_free(&c);
}

/* The leader's log disk fails: it stops (sends nothing more), the others
 * elect a leader and commit; reopened, it follows again. */
static void test_leader_disk_failure(void **state)
{
    struct rc_cluster c;
    struct rc_op op;
    unsigned old;

    (void)state;
    rc_init(&c, 3, 32);
    rc_bootstrap(&c, 3);
    rc_start_all(&c);
    old = rc_wait_leader(&c, 5000);
    rc_commit(&c, 1);
    store_of(&c, old)->failed = CONSENSUS_EIO;
    assert_int_equal(rc_propose(&c, old, 2, &op), 0);
    rc_run(&c, 5000);
    assert_true(c.nodes[old].unavailable);
    assert_int_not_equal(rc_leader(&c), (int)old);
    rc_commit(&c, 3);
    rc_stop(&c, old);
    assert_true(op.done);
    assert_int_not_equal(op.status, 0);
    rc_start(&c, old);
    rc_run(&c, 3000);
    assert_true(rc_has_value(&c, old, 3));
    rc_check_safety(&c);
    rc_free(&c);
}

/* A follower's log disk fails: it stops; the other two go on. */
static void test_follower_disk_failure(void **state)
{
    struct rc_cluster c;
    unsigned follower;

    (void)state;
    rc_init(&c, 3, 33);
    rc_bootstrap(&c, 3);
    rc_start_all(&c);
    follower = (rc_wait_leader(&c, 5000) + 1) % 3;
    store_of(&c, follower)->failed = CONSENSUS_EIO;
    for (uint64_t v = 1; v <= 5; v++) {
        rc_commit(&c, v);
    }
    assert_true(c.nodes[follower].unavailable);
    rc_stop(&c, follower);
    rc_start(&c, follower);
    rc_run(&c, 3000);
    assert_true(rc_has_value(&c, follower, 5));
    rc_check_safety(&c);
    rc_free(&c);
}

/* The leader cannot read its snapshot for a follower that needs it: it
 * stops (libraft's failure path there would free garbage). */
static void test_leader_snapshot_read_failure(void **state)
{
    struct rc_cluster c;
    unsigned leader, lagging;

    (void)state;
    rc_init(&c, 3, 34);
    c.snapshot_threshold = 4;
    c.snapshot_trailing = 1;
    rc_bootstrap(&c, 3);
    rc_start_all(&c);
    leader = rc_wait_leader(&c, 5000);
    lagging = (leader + 1) % 3;
    rc_stop(&c, lagging);
    for (uint64_t v = 1; v <= 20; v++) {
        rc_commit(&c, v);
    }
    leader = (unsigned)rc_leader(&c);
    store_of(&c, leader)->failed = CONSENSUS_EIO;
    rc_start(&c, lagging);
    rc_run(&c, 3000);
    assert_true(c.nodes[leader].unavailable);
    rc_stop(&c, leader);
    rc_start(&c, leader);
    rc_run(&c, 5000);
    assert_true(rc_has_value(&c, lagging, 20));
    rc_check_safety(&c);
    rc_free(&c);
}

/* A snapshot the state machine refuses at start fails the start cleanly
 * (it was freed twice once). */
static void test_restore_failure_at_start(void **state)
{
    struct rc_cluster c;

    (void)state;
    rc_init(&c, 1, 35);
    c.snapshot_threshold = 4;
    c.snapshot_trailing = 1;
    rc_bootstrap(&c, 1);
    rc_start_all(&c);
    for (uint64_t v = 1; v <= 10; v++) {
        rc_commit(&c, v);
    }
    assert_true(c.nodes[0].machine.snapshots >= 1);
    rc_stop(&c, 0);
    rc_wipe_machine(&c, 0);
    c.nodes[0].machine.fail_restore = true;
    assert_int_equal(rc_try_start(&c, 0), CONSENSUS_ECORRUPT);
    c.nodes[0].machine.fail_restore = false;
    rc_start(&c, 0);
    rc_run(&c, 2000);
    assert_true(rc_has_value(&c, 0, 10));
    rc_free(&c);
}

/* Entries near max_entry_bytes: a follower that missed several catches
 * up (libraft once batched them past the transport's message limit,
 * which refused them forever). */
static void test_large_entries_catch_up(void **state)
{
    struct rc_cluster c;
    struct consensus_status leader_status, follower_status;
    static uint8_t command[(1u << 20) - 64];
    unsigned leader, lagging;
    int done = 0;

    (void)state;
    rc_init(&c, 3, 36);
    rc_bootstrap(&c, 3);
    rc_start_all(&c);
    leader = rc_wait_leader(&c, 5000);
    lagging = (leader + 1) % 3;
    rc_stop(&c, lagging);
    for (int k = 0; k < 20; k++) {
        struct rc_op op = {0};
        memset(command, k + 1, sizeof command);
        assert_int_equal(consensus_propose(c.nodes[leader].consensus, command,
                                           sizeof command, NULL, &op),
                         0);
        c.nodes[leader].next_tick_ms = 0;
        rc_run(&c, 50);
        done++;
    }
    rc_run(&c, 1000);
    rc_start(&c, lagging);
    rc_run(&c, 10000);
    consensus_status_get(c.nodes[leader].consensus, &leader_status);
    consensus_status_get(c.nodes[lagging].consensus, &follower_status);
    assert_int_equal(done, 20);
    assert_int_equal(follower_status.applied_index,
                     leader_status.applied_index);
    rc_free(&c);
}

/* A snapshot many times the transport's message limit, and larger than
 * its send queue, reaches a lagging member in parts. */
static void test_snapshot_in_parts(void **state)
{
    struct rc_cluster c;
    unsigned leader, lagging;

    (void)state;
    rc_init(&c, 3, 38);
    c.snapshot_threshold = 8;
    c.snapshot_trailing = 2;
    c.max_entry_bytes = 16 << 10;
    c.limits.max_message_bytes = 128 << 10;
    c.limits.send_queue_max_bytes = 256 << 10;
    for (unsigned i = 0; i < 3; i++) {
        c.nodes[i].machine.snapshot_padding = 4 << 20;
    }
    rc_bootstrap(&c, 3);
    rc_start_all(&c);
    /* In flight for a while, so the parts fill the send queue. */
    assert_int_equal(
        transport_memory_network_set_default_link(
            c.net, &(struct transport_memory_link_faults){.delay_ms = 5}),
        0);
    leader = rc_wait_leader(&c, 5000);
    lagging = (leader + 1) % 3;
    rc_stop(&c, lagging);
    rc_wipe_machine(&c, lagging);
    c.nodes[lagging].machine.snapshot_padding = 4 << 20;
    for (uint64_t v = 1; v <= 30; v++) {
        rc_commit(&c, v);
    }
    rc_start(&c, lagging);
    rc_run(&c, 5000);
    assert_true(c.nodes[lagging].machine.restores >= 1);
    assert_true(rc_has_value(&c, lagging, 30));
    rc_check_safety(&c);
    rc_free(&c);
}

/* A node already in the configuration cannot be added under another id;
 * removed first, it comes back under a new id with an empty log and is
 * heard again (its messages under the new id were once refused). */
static void test_member_back_under_new_id(void **state)
{
    struct rc_cluster c;
    struct rc_change ch = {0};
    struct consensus_member member;
    char command[700];
    unsigned leader, moved;

    (void)state;
    rc_init(&c, 3, 39);
    rc_bootstrap(&c, 3);
    rc_start_all(&c);
    leader = rc_wait_leader(&c, 5000);
    moved = (leader + 1) % 3;
    rc_commit(&c, 1);
    member = (struct consensus_member){.id = 9,
                                       .node = c.nodes[moved].node,
                                       .address = c.nodes[moved].address,
                                       .role = CONSENSUS_VOTER};
    assert_int_equal(
        consensus_add(c.nodes[leader].consensus, &member, rc_change_done, &ch),
        CONSENSUS_EBADID);
    assert_int_equal(consensus_remove(c.nodes[leader].consensus,
                                      c.nodes[moved].id, rc_change_done, &ch),
                     0);
    assert_true(rc_run_until(&c, rc_change_is_done, &ch, 5000));
    assert_int_equal(ch.status, 0);
    rc_stop(&c, moved);
    snprintf(command, sizeof command, "rm -rf '%s'", c.nodes[moved].dir);
    assert_int_equal(system(command), 0);
    rc_wipe_machine(&c, moved);
    c.nodes[moved].id = 9;
    rc_start(&c, moved);
    ch = (struct rc_change){0};
    assert_int_equal(
        consensus_add(c.nodes[leader].consensus, &member, rc_change_done, &ch),
        0);
    assert_true(rc_run_until(&c, rc_change_is_done, &ch, 10000));
    assert_int_equal(ch.status, 0);
    rc_commit(&c, 2);
    rc_run(&c, 500);
    assert_true(rc_has_value(&c, moved, 2));
    rc_check_safety(&c);
    rc_free(&c);
}

/* ---- a scripted leader: messages to a member as member `from` ---- */

/* Delivers message to member `to` as member `from` would send it. */
static void send_as(struct rc_cluster *c, unsigned from, unsigned to,
                    const struct raft_message *message)
{
    struct common_buf bytes;
    char *address;

    assert_int_equal(consensus__address_format(&c->nodes[from].node,
                                               c->nodes[from].address,
                                               &address),
                     0);
    common_buf_init(&bytes, SIZE_MAX);
    assert_int_equal(common_buf_append_u64le(&bytes, c->nodes[from].id), 0);
    assert_int_equal(common_buf_append_varint(&bytes, strlen(address)), 0);
    assert_int_equal(common_buf_append(&bytes, address, strlen(address)), 0);
    assert_int_equal(consensus__wire_encode(message, &bytes), 0);
    consensus_received(c->nodes[to].consensus, &c->nodes[from].node,
                       CONSENSUS_MESSAGE_RAFT, bytes.data, bytes.size);
    common_buf_close(&bytes);
    raft_free(address);
}

/* An AppendEntries from member 0 to member 1, in term 2 or the highest
 * term it names: count barrier entries of term entry_term after prev (of
 * term prev_term). */
static void append_as_leader(struct rc_cluster *c, uint64_t prev,
                             uint64_t prev_term, unsigned count,
                             uint64_t entry_term, uint64_t commit)
{
    static uint8_t payload[8];
    struct raft_entry entries[16];
    struct raft_message m = {.type = RAFT_APPEND_ENTRIES};
    uint64_t term = prev_term > entry_term ? prev_term : entry_term;

    term = term > 2 ? term : 2;
    assert_true(count <= 16);
    for (unsigned i = 0; i < count; i++) {
        entries[i] = (struct raft_entry){
            .term = entry_term,
            .type = RAFT_BARRIER,
            .buf = {.base = payload, .len = sizeof payload}};
    }
    m.append_entries = (struct raft_append_entries){.version = 0,
                                                    .term = term,
                                                    .prev_log_index = prev,
                                                    .prev_log_term = prev_term,
                                                    .leader_commit = commit,
                                                    .entries = entries,
                                                    .n_entries = count};
    send_as(c, 0, 1, &m);
}

/* Member 1 started alone, of a bootstrapped three, that member 0 will
 * lead in term 2 by script; snapshots every 4 entries. */
static void scripted_follower(struct rc_cluster *c, uint64_t seed)
{
    rc_init(c, 3, seed);
    c->snapshot_threshold = 4;
    c->snapshot_trailing = 1;
    rc_bootstrap(c, 3);
    rc_start(c, 1);
}

static void tick_member(struct rc_cluster *c, unsigned i)
{
    uint64_t next_ms;

    assert_int_equal(consensus_tick(c->nodes[i].consensus, &next_ms), 0);
}

/* An InstallSnapshot that arrives while the member's own snapshot is
 * being stored (its completion not yet run): libraft 0.22.1 parks the
 * install until the snapshot completes, then starts it through a pointer
 * it has just cleared (legacy.c, takeSnapshotCb: snapshot_pending is set
 * to NULL before it is read), a crash at the next tick (the chaos
 * simulator's SIGSEGV in a SNAPSHOT_PUT completion). The member must
 * install it instead. */
static void test_install_while_taking_snapshot(void **state)
{
    struct rc_cluster c;
    struct raft_message m = {.type = RAFT_INSTALL_SNAPSHOT};
    struct raft_install_snapshot *is = &m.install_snapshot;
    struct consensus_status status;
    uint8_t data[32] = {0};

    (void)state;
    scripted_follower(&c, 40);
    append_as_leader(&c, 1, 1, 8, 2, 1);
    tick_member(&c, 1);                  /* the entries are durable */
    append_as_leader(&c, 9, 2, 0, 2, 9); /* commits and applies 2..9 */
    append_as_leader(&c, 9, 2, 0, 2, 9); /* takes a snapshot at 9 */
    assert_true(c.nodes[1].consensus->raft.legacy.snapshot_taking);
    /* A snapshot at 20 (fsm.c's header, an empty test machine). */
    for (int b = 0; b < 8; b++) {
        data[b] = (uint8_t)(0x3154464152574e53ull >> (8 * b));
    }
    data[8] = 20;
    *is = (struct raft_install_snapshot){
        .version = 0,
        .term = 2,
        .last_index = 20,
        .last_term = 2,
        .conf_index = 1,
        .data = {.base = data, .len = sizeof data}};
    raft_configuration_init(&is->conf);
    for (unsigned i = 0; i < 3; i++) {
        char *address;
        assert_int_equal(consensus__address_format(
                             &c.nodes[i].node, c.nodes[i].address, &address),
                         0);
        assert_int_equal(raft_configuration_add(&is->conf, c.nodes[i].id,
                                                address, RAFT_VOTER),
                         0);
        raft_free(address);
    }
    send_as(&c, 0, 1, &m);
    raft_configuration_close(&is->conf);
    tick_member(&c, 1);
    tick_member(&c, 1);
    consensus_status_get(c.nodes[1].consensus, &status);
    assert_int_equal(status.last_index, 20);
    assert_int_equal(status.applied_index, 20);
    rc_free(&c);
}

/* A leader whose entries conflict with ones this member has committed:
 * libraft 0.22.1 answers RAFT_SHUTDOWN and frees the entries twice
 * (recv_append_entries.c frees the batch on its error path, then
 * legacy.c recvCb frees it again when the step failed: the chaos
 * simulator's double free under consensus__io_received). Both logs
 * cannot be right: the member stops, unharmed, and a restart (its commit
 * index forgotten) takes the leader's log. */
static void test_append_conflicting_committed(void **state)
{
    struct rc_cluster c;
    struct consensus_status status;
    uint64_t next_ms;

    (void)state;
    scripted_follower(&c, 41);
    append_as_leader(&c, 1, 1, 8, 2, 1);
    tick_member(&c, 1);
    append_as_leader(&c, 9, 2, 0, 2, 9); /* 2..9 committed */
    consensus_status_get(c.nodes[1].consensus, &status);
    assert_int_equal(status.commit_index, 9);
    /* Term 3 entries from 6 on, after a 5 of term 3: 5 was of term 2. */
    append_as_leader(&c, 5, 3, 2, 3, 9);
    assert_int_equal(consensus_tick(c.nodes[1].consensus, &next_ms),
                     CONSENSUS_EUNAVAILABLE);
    /* A conflict above the commit index is Raft's usual repair. */
    rc_stop(&c, 1);
    rc_start(&c, 1);
    append_as_leader(&c, 4, 2, 4, 3, 1);
    tick_member(&c, 1);
    consensus_status_get(c.nodes[1].consensus, &status);
    assert_int_equal(status.state, CONSENSUS_FOLLOWER);
    assert_int_equal(status.last_index, 8);
    rc_free(&c);
}

/* A rejection from a follower, reordered behind a later acknowledgement
 * and arriving while the leader probes that follower: libraft 0.22.1
 * (progress.c, progressMaybeDecrement, probe branch) checks only that it
 * rejects next_index - 1 and sets next_index to the follower's last index
 * + 1, which is then at or below match_index; replication.c
 * sendAppendEntries counts (next - match) - 1 entries in flight, which
 * wraps, so it sends only heartbeats, which move nothing: the follower
 * stalls for good (the chaos simulator, heavy reordering). The leader
 * must not see such a rejection. */
static void test_stale_rejection_ignored(void **state)
{
    struct rc_cluster c;
    struct raft_message m = {.type = RAFT_APPEND_ENTRIES_RESULT};
    struct consensus_status leader_status, follower_status;
    unsigned leader, follower;

    (void)state;
    rc_init(&c, 3, 42);
    rc_bootstrap(&c, 3);
    rc_start_all(&c);
    leader = rc_wait_leader(&c, 5000);
    follower = (leader + 1) % 3;
    for (uint64_t v = 1; v <= 3; v++) {
        rc_commit(&c, v);
    }
    rc_run(&c, 200);
    consensus_status_get(c.nodes[follower].consensus, &follower_status);
    consensus_status_get(c.nodes[leader].consensus, &leader_status);
    assert_int_equal(follower_status.last_index, leader_status.last_index);
    /* Unreachable for a while: the leader probes it again. */
    rc_stop(&c, follower);
    rc_run(&c, 3000);
    m.append_entries_result = (struct raft_append_entries_result){
        .version = 0,
        .term = leader_status.term,
        .rejected = follower_status.last_index,
        .last_log_index = follower_status.last_index - 1};
    send_as(&c, follower, leader, &m);
    rc_start(&c, follower);
    rc_commit(&c, 4);
    rc_run(&c, 3000);
    assert_true(rc_has_value(&c, follower, 4));
    rc_check_safety(&c);
    rc_free(&c);
}

/* Builds part k (of size part, the last may be shorter) of whole. */
static size_t make_part(const uint8_t *whole, size_t total, size_t part,
                        size_t k, uint64_t checksum, uint8_t *out)
{
    size_t offset = k * part;
    size_t n = total - offset < part ? total - offset : part;

    out[0] = (uint8_t)((k == 0 ? 1 : 0) | (offset + n == total ? 2 : 0));
    for (int b = 0; b < 8; b++) {
        out[1 + b] = (uint8_t)(total >> (8 * b));
        out[9 + b] = (uint8_t)(offset >> (8 * b));
        out[17 + b] = (uint8_t)(checksum >> (8 * b));
    }
    memcpy(out + 25, whole + offset, n);
    return 25 + n;
}

/* Parts out of order, missing, from a stranger, or not matching the
 * whole's checksum are refused; in order they make the whole. */
static void test_parts_checked(void **state)
{
    struct consensus c = {0};
    struct consensus__peer peer = {0};
    struct transport_node_id stranger;
    uint8_t whole[1000], part[400], *got;
    size_t sizes[4], got_size;
    uint64_t sum;

    (void)state;
    for (size_t i = 0; i < sizeof whole; i++) {
        whole[i] = (uint8_t)(i * 7);
    }
    sum = common_checksum64(whole, sizeof whole, 0);
    memset(peer.node.key, 3, sizeof peer.node.key);
    memset(stranger.key, 4, sizeof stranger.key);
    c.peers = &peer;
    c.peer_count = 1;
    /* Out of order: the second part before the first's successor. */
    sizes[0] = make_part(whole, sizeof whole, 300, 0, sum, part);
    assert_int_equal(consensus__parts_received(&c, &peer.node, part, sizes[0],
                                               &got, &got_size),
                     0);
    sizes[2] = make_part(whole, sizeof whole, 300, 2, sum, part);
    assert_int_equal(consensus__parts_received(&c, &peer.node, part, sizes[2],
                                               &got, &got_size),
                     CONSENSUS_EPROTO);
    /* A stranger's first part. */
    sizes[0] = make_part(whole, sizeof whole, 300, 0, sum, part);
    assert_int_equal(consensus__parts_received(&c, &stranger, part, sizes[0],
                                               &got, &got_size),
                     CONSENSUS_EPROTO);
    /* A checksum the bytes do not match: refused at the last part. */
    for (size_t k = 0; k < 4; k++) {
        size_t n = make_part(whole, sizeof whole, 300, k, sum + 1, part);
        int rc =
            consensus__parts_received(&c, &peer.node, part, n, &got, &got_size);
        assert_int_equal(rc, k < 3 ? 0 : CONSENSUS_EPROTO);
    }
    /* In order: the whole. */
    for (size_t k = 0; k < 4; k++) {
        size_t n = make_part(whole, sizeof whole, 300, k, sum, part);
        assert_int_equal(
            consensus__parts_received(&c, &peer.node, part, n, &got, &got_size),
            0);
        assert_true(k < 3 ? got == NULL : got != NULL);
    }
    assert_int_equal(got_size, sizeof whole);
    assert_memory_equal(got, whole, sizeof whole);
    common_free(got);
    consensus__parts_close(&c);
}

/* A member cannot speak as another: a RequestVote that names another
 * member's Raft id, sent by a node under its own identity, is dropped. */
static void test_spoofed_sender_dropped(void **state)
{
    struct rc_cluster c;
    struct consensus_status before, after;
    struct raft_message vote = {.type = RAFT_REQUEST_VOTE};
    struct common_buf bytes;
    char address[200];
    char hex[TRANSPORT_NODE_ID_TEXT_SIZE];
    unsigned target;

    (void)state;
    rc_init(&c, 3, 37);
    rc_bootstrap(&c, 3);
    rc_start_all(&c);
    target = rc_wait_leader(&c, 5000);
    rc_run(&c, 300);
    consensus_status_get(c.nodes[target].consensus, &before);
    /* Member (target + 1) claims to be member (target + 2)'s Raft id. */
    unsigned liar = (target + 1) % 3, victim = (target + 2) % 3;
    vote.request_vote =
        (struct raft_request_vote){.version = 2,
                                   .term = before.term + 5,
                                   .candidate_id = c.nodes[victim].id,
                                   .last_log_index = 1000,
                                   .last_log_term = before.term + 4,
                                   .disrupt_leader = true};
    transport_node_id_format(&c.nodes[liar].node, hex);
    snprintf(address, sizeof address, "%s@%s", hex, c.nodes[liar].address);
    common_buf_init(&bytes, SIZE_MAX);
    assert_int_equal(common_buf_append_u64le(&bytes, c.nodes[victim].id), 0);
    assert_int_equal(common_buf_append_varint(&bytes, strlen(address)), 0);
    assert_int_equal(common_buf_append(&bytes, address, strlen(address)), 0);
    assert_int_equal(consensus__wire_encode(&vote, &bytes), 0);
    consensus_received(c.nodes[target].consensus, &c.nodes[liar].node,
                       CONSENSUS_MESSAGE_RAFT, bytes.data, bytes.size);
    consensus_status_get(c.nodes[target].consensus, &after);
    assert_int_equal(after.messages_dropped, before.messages_dropped + 1);
    assert_int_equal(after.term, before.term);
    common_buf_close(&bytes);
    rc_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apply_failure_stops_member),
        cmocka_unit_test(test_leader_disk_failure),
        cmocka_unit_test(test_follower_disk_failure),
        cmocka_unit_test(test_leader_snapshot_read_failure),
        cmocka_unit_test(test_restore_failure_at_start),
        cmocka_unit_test(test_large_entries_catch_up),
        cmocka_unit_test(test_snapshot_in_parts),
        cmocka_unit_test(test_parts_checked),
        cmocka_unit_test(test_member_back_under_new_id),
        cmocka_unit_test(test_spoofed_sender_dropped),
        cmocka_unit_test(test_install_while_taking_snapshot),
        cmocka_unit_test(test_append_conflicting_committed),
        cmocka_unit_test(test_stale_rejection_ignored),
    };

    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
