/* SPDX-License-Identifier: MIT
 *
 * io.c: our struct raft_io, the seam between libraft and the rest of
 * sinew. libraft's legacy API drives every disk write and every message
 * through these methods; we answer them with the store (store.c: the
 * durable log) and the caller's transport (messages ride sinew's own
 * authenticated, encrypted connections, never raft_uv's plain TCP), and
 * take time and randomness from the caller, so a simulated clock drives
 * Raft deterministically.
 *
 * The raft_io contract (raft.h; src/fixture.c of libraft is its simplest
 * statement): a request's callback never runs inside the request. Disk
 * writes are done at once and their callbacks queued; consensus_tick()
 * first syncs everything appended since the last sync (one fsync for the
 * whole batch: group commit) and only then runs the append callbacks,
 * because an append callback tells Raft the entries are durable, which is
 * what a vote or an acknowledgement promises.
 *
 * A message on the transport (type CONSENSUS_MESSAGE_RAFT) is the sender's
 * Raft id (u64 LE), its Raft address (varint length, bytes) and the RPC
 * (wire.c). The address names the sender's node id, which must be the
 * identity the transport authenticated, or the message is dropped: a
 * member cannot speak for another.
 */
#include <stddef.h>
#include <string.h>

#include "consensus_int.h"
#include "wire.h"

#define RAFT_ADDRESS_SIZE_MAX 1024

static struct consensus *consensus_of(struct raft_io *io)
{
    return io->impl;
}

uint64_t consensus__io_now(const struct consensus *c)
{
    return c->config.clock.now_ms(c->config.clock.ctx);
}

/* ---- addresses ---- */

int consensus__address_format(const struct transport_node_id *node,
                              const char *dial, char **out)
{
    char hex[TRANSPORT_NODE_ID_TEXT_SIZE];
    size_t dial_len = strlen(dial);
    char *text;

    if (dial_len + TRANSPORT_NODE_ID_TEXT_SIZE + 1 > RAFT_ADDRESS_SIZE_MAX) {
        return CONSENSUS_ECONFIG;
    }
    text = raft_malloc(TRANSPORT_NODE_ID_TEXT_SIZE + 1 + dial_len);
    if (text == NULL) {
        return COMMON_ENOMEM;
    }
    transport_node_id_format(node, hex);
    memcpy(text, hex, TRANSPORT_NODE_ID_TEXT_SIZE - 1);
    text[TRANSPORT_NODE_ID_TEXT_SIZE - 1] = '@';
    memcpy(text + TRANSPORT_NODE_ID_TEXT_SIZE, dial, dial_len + 1);
    *out = text;
    return 0;
}

int consensus__address_parse(const char *address,
                             struct transport_node_id *node, const char **dial)
{
    char hex[TRANSPORT_NODE_ID_TEXT_SIZE];
    size_t hex_len = TRANSPORT_NODE_ID_TEXT_SIZE - 1;

    if (address == NULL || strlen(address) <= hex_len ||
        address[hex_len] != '@') {
        return CONSENSUS_ECONFIG;
    }
    memcpy(hex, address, hex_len);
    hex[hex_len] = '\0';
    if (transport_node_id_parse(hex, node) != 0) {
        return CONSENSUS_ECONFIG;
    }
    *dial = address + hex_len + 1;
    return 0;
}

/* ---- peers ---- */

static struct consensus__peer *peer_by_id(struct consensus *c, uint64_t id)
{
    for (size_t i = 0; i < c->peer_count; i++) {
        if (c->peers[i].id == id) {
            return &c->peers[i];
        }
    }
    return NULL;
}

static struct consensus__peer *peer_by_node(struct consensus *c,
                                            const struct transport_node_id *n)
{
    for (size_t i = 0; i < c->peer_count; i++) {
        if (transport_node_id_equal(&c->peers[i].node, n)) {
            return &c->peers[i];
        }
    }
    return NULL;
}

/* The peer for Raft member (id, address), added (and dialled) if new. */
static struct consensus__peer *peer_ensure(struct consensus *c, uint64_t id,
                                           const char *address)
{
    struct consensus__peer *peer = peer_by_id(c, id);
    struct consensus__peer *grown;
    struct transport_node_id node;
    const char *dial;
    char *dial_copy;

    if (peer != NULL) {
        return peer;
    }
    if (id == c->config.id ||
        consensus__address_parse(address, &node, &dial) != 0) {
        return NULL;
    }
    dial_copy = consensus__strdup(dial);
    grown = common_realloc(c->peers, (c->peer_count + 1) * sizeof *grown);
    if (dial_copy == NULL || grown == NULL) {
        common_free(dial_copy);
        if (grown != NULL) {
            c->peers = grown;
        }
        return NULL;
    }
    c->peers = grown;
    peer = &c->peers[c->peer_count++];
    *peer =
        (struct consensus__peer){.id = id, .node = node, .address = dial_copy};
    if (transport_connect(c->config.transport, &node, dial_copy) == 0) {
        peer->connect_asked = true;
    }
    return peer;
}

static void peer_drop(struct consensus *c, size_t i)
{
    struct consensus__peer *peer = &c->peers[i];

    consensus__parts_forget(peer);
    if (peer->connect_asked) {
        transport_forget(c->config.transport, &peer->node);
    }
    common_free(peer->address);
    c->peers[i] = c->peers[--c->peer_count];
}

/* Drops the peer for id if it is bound to another node or dial address
 * than address names (the configuration changed it), so it is made
 * again. */
static void peer_rebind(struct consensus *c, uint64_t id, const char *address)
{
    struct transport_node_id node;
    const char *dial;

    for (size_t i = 0; i < c->peer_count; i++) {
        struct consensus__peer *peer = &c->peers[i];
        if (peer->id == id &&
            (consensus__address_parse(address, &node, &dial) != 0 ||
             !transport_node_id_equal(&peer->node, &node) ||
             strcmp(peer->address, dial) != 0)) {
            peer_drop(c, i);
            return;
        }
    }
}

int consensus__io_connect_members(struct consensus *c)
{
    const struct raft_configuration *conf = &c->raft.configuration;
    size_t i = 0;

    for (unsigned s = 0; s < conf->n; s++) {
        if (conf->servers[s].id != c->config.id) {
            peer_rebind(c, conf->servers[s].id, conf->servers[s].address);
            peer_ensure(c, conf->servers[s].id, conf->servers[s].address);
        }
    }
    /* Members removed from the configuration are forgotten. An empty
     * configuration (not yet loaded) forgets nobody. */
    while (conf->n > 0 && i < c->peer_count) {
        bool member = false;
        for (unsigned s = 0; s < conf->n; s++) {
            member = member || conf->servers[s].id == c->peers[i].id;
        }
        if (member) {
            i++;
        } else {
            peer_drop(c, i);
        }
    }
    return 0;
}

void consensus__io_peer_state(struct consensus *c,
                              const struct transport_node_id *node,
                              bool connected)
{
    struct consensus__peer *peer = peer_by_node(c, node);

    if (peer != NULL) {
        peer->connected = connected;
        if (!connected) {
            consensus__parts_forget(peer); /* its parts died with it */
        }
    }
    if (!connected) {
        consensus__parts_disconnected(c, node);
    }
}

void consensus__io_writable(struct consensus *c,
                            const struct transport_node_id *node)
{
    struct consensus__peer *peer = peer_by_node(c, node);

    if (peer != NULL && peer->out != NULL && !c->unavailable && !c->closing) {
        consensus__parts_writable(c, peer);
    }
}

/* ---- libraft's completed requests ----
 *
 * libraft's legacy layer does not run a request's callback itself: it
 * queues the finished request (its status and result filled in) on
 * raft->legacy.requests and leaves firing to the raft_io, which raft_uv
 * does from a libuv prepare/check handle and the fixture after every step,
 * both through LegacyFireCompletedRequests(), which libraft does not
 * export. We do the same from the queue's public layout (raft.h): every
 * request type starts with RAFT__REQUEST, whose `queue` links it and whose
 * `type` says which struct it is (RAFT_COMMAND, RAFT_BARRIER, RAFT_CHANGE,
 * and RAFT_CHANGE + 1 for a transfer, as src/membership.h defines). */

#define RAFT_REQUEST_TRANSFER (RAFT_CHANGE + 1)

void consensus__io_fire_requests(struct consensus *c)
{
    void **head = c->raft.legacy.requests;

    while (head[0] != NULL && head[0] != (void *)head) {
        void **link = head[0];
        struct raft_barrier *req =
            (struct raft_barrier *)(void *)((char *)link -
                                            offsetof(struct raft_barrier,
                                                     queue));

        /* Unlink it (QUEUE_REMOVE): prev->next = next, next->prev = prev. */
        ((void **)link[1])[0] = link[0];
        ((void **)link[0])[1] = link[1];
        switch (req->type) {
        case RAFT_COMMAND: {
            struct raft_apply *apply = (struct raft_apply *)(void *)req;
            apply->cb(apply, apply->status, apply->result);
            break;
        }
        case RAFT_BARRIER:
            req->cb(req, req->status);
            break;
        case RAFT_CHANGE: {
            struct raft_change *change = (struct raft_change *)(void *)req;
            change->cb(change, change->status);
            break;
        }
        case RAFT_REQUEST_TRANSFER: {
            struct raft_transfer *transfer =
                (struct raft_transfer *)(void *)req;
            transfer->cb(transfer);
            break;
        }
        default:
            ASSERT(false);
        }
    }
}

/* ---- completions ---- */

/* Queues a completion. Out of memory, the member stops (its requests
 * are then never completed, a small leak at close rather than a lie). */
static void completion_queue(struct consensus *c,
                             const struct consensus__completion *completion)
{
    struct consensus__completion *copy = common_malloc(sizeof *copy);

    if (copy == NULL) {
        consensus__stop(c, "queueing an I/O completion", COMMON_ENOMEM);
        return;
    }
    *copy = *completion;
    copy->next = NULL;
    *c->completions_tail = copy;
    c->completions_tail = &copy->next;
}

static void completion_fire(struct consensus__completion *done)
{
    switch (done->kind) {
    case CONSENSUS__APPEND:
        done->cb.append(done->req.append, done->status);
        break;
    case CONSENSUS__SEND:
        done->cb.send(done->req.send, done->status);
        break;
    case CONSENSUS__SNAPSHOT_PUT:
        done->cb.snapshot_put(done->req.snapshot_put, done->status);
        break;
    case CONSENSUS__SNAPSHOT_GET:
        done->cb.snapshot_get(done->req.snapshot_get, done->snapshot,
                              done->status);
        break;
    }
}

/* Syncs the appended entries, then runs every queued callback, and again
 * for those the callbacks queued, a bounded number of rounds. A member
 * that stopped runs none until it closes; then the disk writes complete
 * as canceled, which is the only failure libraft's legacy layer handles
 * (it drops any other status silently: its asserts are compiled out). */
int consensus__io_run_completions(struct consensus *c)
{
    for (int round = 0; round < 64 && c->completions != NULL; round++) {
        struct consensus__completion *list = c->completions;

        if (c->unavailable && !c->closing) {
            return 0;
        }
        c->completions = NULL;
        c->completions_tail = &c->completions;
        if (c->sync_needed && !c->closing) {
            int rc = consensus__store_sync(c->store);
            c->sync_needed = false;
            if (rc != 0) {
                /* Nothing appended since the last sync may count: put the
                 * list back untouched and stop. */
                consensus__stop(c, "syncing the Raft log", rc);
                *c->completions_tail = list;
                while (*c->completions_tail != NULL) {
                    c->completions_tail = &(*c->completions_tail)->next;
                }
                return 0;
            }
        }
        while (list != NULL) {
            struct consensus__completion *done = list;
            list = list->next;
            if (c->closing && (done->kind == CONSENSUS__APPEND ||
                               done->kind == CONSENSUS__SNAPSHOT_PUT)) {
                done->status = RAFT_CANCELED;
            }
            completion_fire(done);
            common_free(done);
            consensus__io_fire_requests(c);
        }
    }
    return 0;
}

void consensus__io_drop_completions(struct consensus *c)
{
    while (c->completions != NULL) {
        struct consensus__completion *done = c->completions;
        c->completions = done->next;
        common_free(done);
    }
    c->completions_tail = &c->completions;
}

/* ---- the raft_io methods ---- */

static int io_init(struct raft_io *io, raft_id id, const char *address)
{
    (void)io;
    (void)id;
    (void)address;
    return 0;
}

static void io_close(struct raft_io *io, raft_io_close_cb cb)
{
    consensus_of(io)->io_close_cb = cb;
}

static int raft_code(int rc)
{
    switch (rc) {
    case 0:
        return 0;
    case COMMON_ENOMEM:
        return RAFT_NOMEM;
    case CONSENSUS_ECORRUPT:
        return RAFT_CORRUPT;
    case CONSENSUS_ECANTBOOTSTRAP:
        return RAFT_CANTBOOTSTRAP;
    case CONSENSUS_ENOSPACE:
        return RAFT_NOSPACE;
    default:
        return RAFT_IOERR;
    }
}

static int io_load(struct raft_io *io, raft_term *term, raft_id *voted_for,
                   struct raft_snapshot **snapshot, raft_index *start_index,
                   struct raft_entry *entries[], size_t *n_entries)
{
    return raft_code(consensus__store_load(consensus_of(io)->store, term,
                                           voted_for, snapshot, start_index,
                                           entries, n_entries));
}

static int io_start(struct raft_io *io, unsigned msecs, raft_io_tick_cb tick,
                    raft_io_recv_cb recv)
{
    struct consensus *c = consensus_of(io);

    c->tick_ms = msecs;
    c->tick_cb = tick;
    c->recv_cb = recv;
    c->next_tick_ms = consensus__io_now(c) + msecs;
    return 0;
}

static int io_bootstrap(struct raft_io *io,
                        const struct raft_configuration *conf)
{
    return raft_code(consensus__store_bootstrap(consensus_of(io)->store, conf));
}

static int io_recover(struct raft_io *io, const struct raft_configuration *conf)
{
    return raft_code(consensus__store_recover(consensus_of(io)->store, conf));
}

/* A store error while running: libraft's legacy layer cannot take one
 * (it frees what it handed over, then its callers free it again; its
 * asserts are compiled out), so the member stops instead and tells libraft
 * all went well: a stopped member sends nothing and completes nothing, so
 * nothing it claims is ever believed (consensus_tick() reports
 * CONSENSUS_EUNAVAILABLE; the node restarts it, and the store refuses or
 * repairs what it finds). Before start, errors go back to raft_start(). */
static int store_result(struct consensus *c, const char *what, int rc)
{
    if (rc == 0 || !c->started) {
        return raft_code(rc);
    }
    consensus__stop(c, what, rc);
    return 0;
}

static int io_set_term(struct raft_io *io, raft_term term)
{
    struct consensus *c = consensus_of(io);

    return store_result(c, "storing the term",
                        consensus__store_set_term(c->store, term));
}

static int io_set_vote(struct raft_io *io, raft_id server_id)
{
    struct consensus *c = consensus_of(io);

    return store_result(c, "storing the vote",
                        consensus__store_set_vote(c->store, server_id));
}

/* Encodes the envelope and the RPC into c->send_buf. */
static int envelope_encode(struct consensus *c,
                           const struct raft_message *message)
{
    size_t address_len = strlen(c->raft.address);
    int rc;

    common_buf_truncate(&c->send_buf, 0);
    rc = common_buf_append_u64le(&c->send_buf, c->config.id);
    if (rc == 0) {
        rc = common_buf_append_varint(&c->send_buf, address_len);
    }
    if (rc == 0) {
        rc = common_buf_append(&c->send_buf, c->raft.address, address_len);
    }
    if (rc == 0) {
        rc = consensus__wire_encode(message, &c->send_buf);
    }
    return rc;
}

static int io_send(struct raft_io *io, struct raft_io_send *req,
                   const struct raft_message *message, raft_io_send_cb cb)
{
    struct consensus *c = consensus_of(io);
    struct consensus__peer *peer;
    struct consensus__completion done = {.kind = CONSENSUS__SEND,
                                         .req.send = req,
                                         .cb.send = cb,
                                         .status = RAFT_NOCONNECTION};
    int rc;

    req->cb = cb;
    peer = peer_ensure(c, message->server_id, message->server_address);
    if (c->unavailable || c->closing || peer == NULL ||
        (message->type == RAFT_INSTALL_SNAPSHOT && peer->out != NULL) ||
        envelope_encode(c, message) != 0) {
        /* Never sent (a stopped member says nothing): as a lost message,
         * which Raft resends at its next heartbeat. libraft ignores a
         * send's status, so this never fails the call. */
        completion_queue(c, &done);
        return 0;
    }
    if (c->send_buf.size > c->config.max_message_bytes) {
        /* A snapshot bigger than a transport message: in parts. */
        rc = consensus__parts_send(c, peer, &c->send_buf);
    } else {
        rc = transport_send(c->config.transport, &peer->node,
                            CONSENSUS_MESSAGE_RAFT, c->send_buf.data,
                            c->send_buf.size);
    }
    if (rc == TRANSPORT_ETOOBIG) {
        LOGF(c->config.log, COMMON_LOG_WARN,
             "raft message too large for the transport to=%llu bytes=%zu",
             (unsigned long long)peer->id, c->send_buf.size);
    }
    done.status = rc == 0 ? 0 : RAFT_NOCONNECTION;
    completion_queue(c, &done);
    return 0;
}

static int io_append(struct raft_io *io, struct raft_io_append *req,
                     const struct raft_entry entries[], unsigned n,
                     raft_io_append_cb cb)
{
    struct consensus *c = consensus_of(io);
    struct consensus__completion done = {
        .kind = CONSENSUS__APPEND, .req.append = req, .cb.append = cb};
    int rc;

    req->cb = cb;
    rc = store_result(c, "appending to the Raft log",
                      consensus__store_append(c->store, entries, n));
    if (rc != 0) {
        return rc;
    }
    c->sync_needed = true;
    completion_queue(c, &done);
    return 0;
}

static int io_truncate(struct raft_io *io, raft_index index)
{
    struct consensus *c = consensus_of(io);

    return store_result(c, "truncating the Raft log",
                        consensus__store_truncate(c->store, index));
}

static int io_snapshot_put(struct raft_io *io, unsigned trailing,
                           struct raft_io_snapshot_put *req,
                           const struct raft_snapshot *snapshot,
                           raft_io_snapshot_put_cb cb)
{
    struct consensus *c = consensus_of(io);
    struct consensus__completion done = {.kind = CONSENSUS__SNAPSHOT_PUT,
                                         .req.snapshot_put = req,
                                         .cb.snapshot_put = cb};
    int rc;

    req->cb = cb;
    rc = store_result(
        c, "storing a snapshot",
        consensus__store_snapshot_put(c->store, trailing, snapshot));
    if (rc != 0) {
        return rc;
    }
    completion_queue(c, &done);
    return 0;
}

/* An empty snapshot standing in for one the store could not read, so
 * that libraft's request completes through its success path (its failure
 * path frees fields it never set: legacy.c, legacyLoadSnapshotCb). The
 * member has stopped, so the InstallSnapshot it makes is never sent;
 * the index is the highest, which that path accepts. */
static struct raft_snapshot *stand_in_snapshot(void)
{
    struct raft_snapshot *snapshot = raft_calloc(1, sizeof *snapshot);

    if (snapshot == NULL) {
        return NULL;
    }
    snapshot->bufs = raft_calloc(1, sizeof *snapshot->bufs);
    if (snapshot->bufs != NULL) {
        snapshot->bufs[0].base = raft_malloc(1);
    }
    if (snapshot->bufs == NULL || snapshot->bufs[0].base == NULL) {
        if (snapshot->bufs != NULL) {
            raft_free(snapshot->bufs);
        }
        raft_free(snapshot);
        return NULL;
    }
    snapshot->index = UINT64_MAX;
    snapshot->bufs[0].len = 1;
    snapshot->n_bufs = 1;
    raft_configuration_init(&snapshot->configuration);
    return snapshot;
}

static int io_snapshot_get(struct raft_io *io, struct raft_io_snapshot_get *req,
                           raft_io_snapshot_get_cb cb)
{
    struct consensus *c = consensus_of(io);
    struct consensus__completion done = {.kind = CONSENSUS__SNAPSHOT_GET,
                                         .req.snapshot_get = req,
                                         .cb.snapshot_get = cb};
    int rc = consensus__store_snapshot_get(c->store, &done.snapshot);

    req->cb = cb;
    if (rc == 0 && done.snapshot == NULL) {
        rc = CONSENSUS_ECORRUPT; /* libraft asked for one it took */
    }
    if (rc != 0) {
        consensus__stop(c, "reading the snapshot", rc);
        done.snapshot = stand_in_snapshot();
        if (done.snapshot == NULL) {
            return 0; /* out of memory too: the request leaks */
        }
    }
    completion_queue(c, &done);
    return 0;
}

static raft_time io_time(struct raft_io *io)
{
    return consensus__io_now(consensus_of(io));
}

static int io_random(struct raft_io *io, int min, int max)
{
    struct consensus *c = consensus_of(io);
    uint64_t span = (uint64_t)((int64_t)max - (int64_t)min);

    if (span == 0) {
        return min;
    }
    return min + (int)(c->config.random.next(c->config.random.ctx) % span);
}

void consensus__io_init(struct consensus *c)
{
    c->io = (struct raft_io){
        .version = 2,
        /* libraft's "reserved capacity" check (in units its raft_uv
         * defines) is not how we handle a full disk: a write that fails
         * with ENOSPC fails the append (CONSENSUS_ENOSPACE). */
        .capacity = UINT16_MAX,
        .impl = c,
        .init = io_init,
        .close = io_close,
        .load = io_load,
        .start = io_start,
        .bootstrap = io_bootstrap,
        .recover = io_recover,
        .set_term = io_set_term,
        .set_vote = io_set_vote,
        .send = io_send,
        .append = io_append,
        .truncate = io_truncate,
        .snapshot_put = io_snapshot_put,
        .snapshot_get = io_snapshot_get,
        .time = io_time,
        .random = io_random,
    };
    c->completions_tail = &c->completions;
    common_buf_init(&c->send_buf, SIZE_MAX);
}

void consensus__io_close(struct consensus *c)
{
    while (c->peer_count > 0) {
        peer_drop(c, c->peer_count - 1);
    }
    common_free(c->peers);
    c->peers = NULL;
    common_buf_close(&c->send_buf);
    consensus__parts_close(c);
}

/* ---- receiving ---- */

/* Parses the envelope: the sender's id and address (into address, NUL
 * terminated) and where the RPC starts. */
static int envelope_decode(const uint8_t *bytes, size_t size, uint64_t *id,
                           char *address, size_t *rpc_offset)
{
    struct common_reader reader;
    const uint8_t *text;
    uint64_t len;

    common_reader_init(&reader, bytes, size);
    if (common_reader_u64le(&reader, id) != 0 || *id == 0 ||
        common_reader_varint(&reader, &len) != 0 ||
        len >= RAFT_ADDRESS_SIZE_MAX ||
        common_reader_bytes(&reader, (size_t)len, &text) != 0 ||
        memchr(text, '\0', (size_t)len) != NULL) {
        return CONSENSUS_EPROTO;
    }
    memcpy(address, text, (size_t)len);
    address[len] = '\0';
    *rpc_offset = reader.offset;
    return 0;
}

/* Whether transport identity node may speak as Raft id: the
 * configuration, when it names id, binds it to its node; an id it does not
 * name (a member being added, a leader our configuration does not know
 * yet) may not be one a peer we know binds to another node. A member can
 * never speak as another (libraft counts votes and acknowledgements only
 * from ids in the configuration, so an unknown id gains nothing). */
static bool id_is_node(struct consensus *c, uint64_t id,
                       const struct transport_node_id *node)
{
    const struct raft_configuration *conf = &c->raft.configuration;
    const struct consensus__peer *by_id = peer_by_id(c, id);

    if (id == c->config.id) {
        return false;
    }
    for (unsigned s = 0; s < conf->n; s++) {
        struct transport_node_id named;
        const char *dial;
        if (conf->servers[s].id == id) {
            return consensus__address_parse(conf->servers[s].address, &named,
                                            &dial) == 0 &&
                   transport_node_id_equal(&named, node);
        }
    }
    return by_id == NULL || transport_node_id_equal(&by_id->node, node);
}

bool consensus__io_knows(struct consensus *c,
                         const struct transport_node_id *node)
{
    return peer_by_node(c, node) != NULL || consensus__io_knows_member(c, node);
}

bool consensus__io_knows_member(struct consensus *c,
                                const struct transport_node_id *node)
{
    const struct raft_configuration *conf = &c->raft.configuration;

    for (unsigned s = 0; s < conf->n; s++) {
        struct transport_node_id named;
        const char *dial;
        if (consensus__address_parse(conf->servers[s].address, &named, &dial) ==
                0 &&
            transport_node_id_equal(&named, node)) {
            return true;
        }
    }
    return false;
}

void consensus__io_received(struct consensus *c,
                            const struct transport_node_id *from,
                            const uint8_t *bytes, size_t size)
{
    char address[RAFT_ADDRESS_SIZE_MAX];
    struct consensus__peer *peer;
    struct transport_node_id named;
    struct raft_message message;
    struct consensus__recv_change change;
    const char *dial;
    size_t offset;
    uint64_t id;

    if (c->recv_cb == NULL || c->closing || c->unavailable ||
        envelope_decode(bytes, size, &id, address, &offset) != 0 ||
        consensus__address_parse(address, &named, &dial) != 0 ||
        !transport_node_id_equal(&named, from) || !id_is_node(c, id, from) ||
        consensus__wire_decode(bytes + offset, size - offset, &message) != 0) {
        c->messages_dropped++;
        return;
    }
    if (!consensus__io_recv_admit(c, &message)) {
        return;
    }
    message.server_id = id;
    message.server_address = address;
    peer_rebind(c, id, address);
    peer = peer_ensure(c, id, address);
    if (peer != NULL && consensus__io_recv_stale(c, peer, &message)) {
        c->messages_dropped++;
        return;
    }
    consensus__io_recv_change_plan(c, &message, &change);
    c->recv_cb(&c->io, &message);
    consensus__io_recv_change_repair(c, &change);
    consensus__io_fire_requests(c);
}
