/* SPDX-License-Identifier: MIT
 *
 * fuzz_wire.c: libFuzzer target for the Raft message codec (src/wire.h):
 * arbitrary bytes, as a peer could send them, into
 * consensus__wire_decode().
 *
 * Checked: no crash, leak or undefined behaviour (the sanitizers); decode
 * fails only with CONSENSUS_EPROTO (COMMON_ENOMEM cannot happen: every
 * allocation is bounded by the input's size); a message that decodes has
 * the memory layout libraft's receive path expects (one batch shared by
 * every entry); it encodes back to exactly the input bytes (the encoding
 * is canonical), and those decode again to an equal message.
 */
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int ok)
{
    if (!ok) {
        abort();
    }
}

static bool buffers_equal(const struct raft_buffer *a,
                          const struct raft_buffer *b)
{
    return a->len == b->len &&
           (a->len == 0 || memcmp(a->base, b->base, a->len) == 0);
}

static bool entries_equal(const struct raft_append_entries *a,
                          const struct raft_append_entries *b)
{
    if (a->version != b->version || a->term != b->term ||
        a->prev_log_index != b->prev_log_index ||
        a->prev_log_term != b->prev_log_term ||
        a->leader_commit != b->leader_commit || a->n_entries != b->n_entries) {
        return false;
    }
    for (unsigned i = 0; i < a->n_entries; i++) {
        const struct raft_entry *x = &a->entries[i];
        const struct raft_entry *y = &b->entries[i];

        if (x->term != y->term || x->type != y->type ||
            !buffers_equal(&x->buf, &y->buf)) {
            return false;
        }
    }
    return true;
}

static bool snapshots_equal(const struct raft_install_snapshot *a,
                            const struct raft_install_snapshot *b)
{
    if (a->version != b->version || a->term != b->term ||
        a->last_index != b->last_index || a->last_term != b->last_term ||
        a->conf_index != b->conf_index || a->conf.n != b->conf.n ||
        !buffers_equal(&a->data, &b->data)) {
        return false;
    }
    for (unsigned i = 0; i < a->conf.n; i++) {
        const struct raft_server *x = &a->conf.servers[i];
        const struct raft_server *y = &b->conf.servers[i];

        if (x->id != y->id || x->role != y->role ||
            strcmp(x->address, y->address) != 0) {
            return false;
        }
    }
    return true;
}

/* The fields of the four types without memory. */
static bool small_equal(const struct raft_message *a,
                        const struct raft_message *b)
{
    const struct raft_append_entries_result *r = &a->append_entries_result;
    const struct raft_append_entries_result *s = &b->append_entries_result;
    const struct raft_request_vote *v = &a->request_vote;
    const struct raft_request_vote *w = &b->request_vote;
    const struct raft_request_vote_result *x = &a->request_vote_result;
    const struct raft_request_vote_result *y = &b->request_vote_result;
    const struct raft_timeout_now *t = &a->timeout_now;
    const struct raft_timeout_now *u = &b->timeout_now;

    switch (a->type) {
    case RAFT_APPEND_ENTRIES_RESULT:
        return r->version == s->version && r->term == s->term &&
               r->rejected == s->rejected &&
               r->last_log_index == s->last_log_index &&
               r->features == s->features && r->capacity == s->capacity;
    case RAFT_REQUEST_VOTE:
        return v->version == w->version && v->term == w->term &&
               v->candidate_id == w->candidate_id &&
               v->last_log_index == w->last_log_index &&
               v->last_log_term == w->last_log_term &&
               v->disrupt_leader == w->disrupt_leader &&
               v->pre_vote == w->pre_vote;
    case RAFT_REQUEST_VOTE_RESULT:
        return x->version == y->version && x->term == y->term &&
               x->vote_granted == y->vote_granted &&
               x->pre_vote == y->pre_vote && x->features == y->features &&
               x->capacity == y->capacity;
    default:
        return a->type == RAFT_TIMEOUT_NOW && t->version == u->version &&
               t->term == u->term && t->last_log_index == u->last_log_index &&
               t->last_log_term == u->last_log_term;
    }
}

static bool messages_equal(const struct raft_message *a,
                           const struct raft_message *b)
{
    if (a->type != b->type) {
        return false;
    }
    switch (a->type) {
    case RAFT_APPEND_ENTRIES:
        return entries_equal(&a->append_entries, &b->append_entries);
    case RAFT_INSTALL_SNAPSHOT:
        return snapshots_equal(&a->install_snapshot, &b->install_snapshot);
    default:
        return small_equal(a, b);
    }
}

/* What libraft's receive path relies on (legacy.c recvCb, entry.c
 * entryBatchesDestroy, recv_append_entries.c). */
static void check_layout(const struct raft_message *m)
{
    const struct raft_append_entries *args = &m->append_entries;

    must(m->server_id == 0 && m->server_address == NULL);
    if (m->type != RAFT_APPEND_ENTRIES) {
        return;
    }
    must((args->n_entries == 0) == (args->entries == NULL));
    for (unsigned i = 0; i < args->n_entries; i++) {
        must(args->entries[i].batch != NULL);
        must(args->entries[i].batch == args->entries[0].batch);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct raft_message first;
    struct raft_message second;
    struct common_buf buf;
    int rc;

    rc = consensus__wire_decode(data, size, &first);
    if (rc != 0) {
        must(rc == CONSENSUS_EPROTO);
        return 0;
    }
    check_layout(&first);
    common_buf_init(&buf, SIZE_MAX);
    must(consensus__wire_encode(&first, &buf) == 0);
    must(buf.size == size && memcmp(buf.data, data, size) == 0);
    must(consensus__wire_decode(buf.data, buf.size, &second) == 0);
    check_layout(&second);
    must(messages_equal(&first, &second));
    consensus__wire_message_release(&first);
    consensus__wire_message_release(&second);
    common_buf_close(&buf);
    return 0;
}
