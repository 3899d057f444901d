/* SPDX-License-Identifier: MIT
 *
 * consensus_int.h: the inside of a struct consensus, shared by the
 * module's files: consensus.c (lifecycle, tick, status), io.c (our
 * struct raft_io: the store for disk, the transport for messages, the
 * caller's clock; io_recv.c guards its receive path), fsm.c (struct raft_fsm:
 * commands and snapshots to the caller's state machine), propose.c (group
 * proposal, read barriers, leader readiness) and membership.c (the admin
 * calls).
 *
 * Every raft_* type stays inside consensus/ (consensus.h names none).
 */
#ifndef SINEW_CONSENSUS_INT_H
#define SINEW_CONSENSUS_INT_H

#include <raft.h>

#include "consensus.h"
#include "store.h"

/* An I/O request libraft made whose callback is due at the next tick
 * (a raft_io must never call back from inside the request). */
struct consensus__completion {
    enum {
        CONSENSUS__APPEND,
        CONSENSUS__SEND,
        CONSENSUS__SNAPSHOT_PUT,
        CONSENSUS__SNAPSHOT_GET,
    } kind;
    int status;
    struct raft_snapshot *snapshot; /* SNAPSHOT_GET: handed to raft */
    union {
        struct raft_io_append *append;
        struct raft_io_send *send;
        struct raft_io_snapshot_put *snapshot_put;
        struct raft_io_snapshot_get *snapshot_get;
    } req;
    union {
        raft_io_append_cb append;
        raft_io_send_cb send;
        raft_io_snapshot_put_cb snapshot_put;
        raft_io_snapshot_get_cb snapshot_get;
    } cb;
    struct consensus__completion *next;
};

/* A member we exchange messages with. */
struct consensus__peer {
    uint64_t id;
    struct transport_node_id node;
    char *address;      /* the dial address (after the '@') */
    bool connect_asked; /* transport_connect() was called */
    bool connected;
    /* io_recv.c, as leader: the highest index it acknowledged in acked_term
     * (stale rejections below it are dropped). */
    uint64_t acked_term;
    uint64_t acked_index;
    /* parts.c: a message too large for one transport message, being sent
     * in parts: its bytes, how many went, the part buffer. */
    uint8_t *out;
    size_t out_size;
    size_t out_sent;
    uint64_t out_checksum;
    uint8_t *out_message;
};

/* parts.c: a large message from one sender, being put together. */
struct consensus__assembly {
    bool used;
    struct transport_node_id from;
    struct common_buf bytes; /* what arrived, in order */
    size_t total;            /* the size announced */
    uint64_t checksum;       /* the whole's, announced */
};

/* A command waiting for the next entry. */
struct consensus__proposal {
    uint8_t *bytes;
    size_t size;
    consensus_done_cb done;
    void *ctx;
    uint64_t term; /* the leader's term when it was accepted */
    struct consensus__proposal *next;
};

/* One log entry of packed commands, proposed and not yet completed. */
struct consensus__batch {
    struct raft_apply req; /* req.data points back here */
    struct consensus *c;
    struct consensus__proposal *proposals; /* in packing order */
    size_t count;
    int *results; /* count outcomes, written by fsm.c's apply */
    bool applied; /* the state machine applied it here */
    struct consensus__batch *next;
};

/* Read requests sharing one barrier. */
struct consensus__reader {
    consensus_barrier_cb done;
    void *ctx;
    struct consensus__reader *next;
};

struct consensus__barrier {
    struct raft_barrier req;
    struct consensus *c;
    struct consensus__reader *readers; /* NULL: the readiness barrier */
    uint64_t term;
    struct consensus__barrier *next;
};

/* An admin request in progress (one at a time, as libraft allows). */
struct consensus__change {
    struct raft_change req;
    struct raft_transfer transfer;
    struct consensus *c;
    consensus_change_cb done;
    void *ctx;
    /* consensus_add: the steps after "spare": standby, then voter. */
    uint64_t id;
    int final_role;
    int step;
};

struct consensus {
    struct consensus_config config; /* address, data_dir: our copies */
    struct consensus_state_machine machine;
    struct consensus__store *store;

    struct raft raft;
    struct raft_io io;
    struct raft_fsm fsm;
    bool started;
    bool closing;
    bool closed; /* raft_close()'s callback ran */
    bool unavailable;

    /* io.c */
    raft_io_tick_cb tick_cb;
    raft_io_recv_cb recv_cb;
    raft_io_close_cb io_close_cb;
    uint64_t tick_ms;
    uint64_t next_tick_ms;
    bool sync_needed;
    struct consensus__completion *completions; /* FIFO */
    struct consensus__completion **completions_tail;
    struct consensus__peer *peers;
    size_t peer_count;
    struct common_buf send_buf;
    uint64_t messages_dropped;
    struct consensus__assembly *assemblies; /* parts.c; NULL until used */

    /* fsm.c */
    struct common_buf snapshot_buf;
    uint64_t snapshot_failed_ms; /* the last failed snapshot; 0: none */

    /* propose.c */
    struct consensus__proposal *queued; /* FIFO */
    struct consensus__proposal **queued_tail;
    size_t queued_count;
    size_t queued_bytes;
    struct consensus__batch *batches; /* in flight, in index order */
    size_t batch_count;
    struct consensus__reader *readers; /* waiting for the next barrier */
    struct consensus__barrier *barriers;
    uint64_t ready_term;    /* a barrier of this term was applied */
    uint64_t readying_term; /* a readiness barrier of it is in flight */

    /* membership.c */
    struct consensus__change *change;
};

/* io.c */
void consensus__io_init(struct consensus *c);
void consensus__io_close(struct consensus *c);
int consensus__io_run_completions(struct consensus *c);
/* Frees completions never run (after close). */
void consensus__io_drop_completions(struct consensus *c);
void consensus__io_fire_requests(struct consensus *c);
void consensus__io_received(struct consensus *c,
                            const struct transport_node_id *peer,
                            const uint8_t *bytes, size_t size);
void consensus__io_peer_state(struct consensus *c,
                              const struct transport_node_id *peer,
                              bool connected);
int consensus__io_connect_members(struct consensus *c);
uint64_t consensus__io_now(const struct consensus *c);

/* parts.c */
/* Sends whole (its bytes move to peer, whole is left empty) in parts. */
int consensus__parts_send(struct consensus *c, struct consensus__peer *peer,
                          struct common_buf *whole);
void consensus__parts_writable(struct consensus *c,
                               struct consensus__peer *peer);
void consensus__parts_forget(struct consensus__peer *peer);
void consensus__parts_disconnected(struct consensus *c,
                                   const struct transport_node_id *from);
/* A part from `from`: 0 (and *whole, the caller's to free, once the last
 * part completed it), or CONSENSUS_EPROTO / COMMON_ENOMEM (dropped). */
int consensus__parts_received(struct consensus *c,
                              const struct transport_node_id *from,
                              const uint8_t *bytes, size_t size,
                              uint8_t **whole, size_t *whole_size);
void consensus__parts_close(struct consensus *c);
void consensus__io_writable(struct consensus *c,
                            const struct transport_node_id *peer);
/* Whether node is a member we know (a peer, or in the configuration). */
bool consensus__io_knows(struct consensus *c,
                         const struct transport_node_id *node);
/* Whether node is in the configuration, under any id. */
bool consensus__io_knows_member(struct consensus *c,
                                const struct transport_node_id *node);

/* io_recv.c: io.c's receive path guards against libraft 0.22.1 bugs. */
/* Whether message (decoded from an authenticated sender; the caller's, its
 * contents libraft's once delivered) may go to libraft. When not, it has
 * been released, and either counted as dropped or the member stopped. */
bool consensus__io_recv_admit(struct consensus *c,
                              struct raft_message *message);
/* Whether message from peer (both the caller's) is a stale
 * AppendEntriesResult rejection, to be dropped; updates what peer
 * acknowledged. */
bool consensus__io_recv_stale(struct consensus *c, struct consensus__peer *peer,
                              const struct raft_message *message);

/* A configuration entry that an AppendEntries brings behind other new
 * entries, which libraft 0.22.1 records under the wrong index
 * (io_recv.c). */
struct consensus__recv_change {
    uint64_t first_new; /* the index libraft records; 0: nothing to repair */
    uint64_t index;     /* the last configuration entry's own index */
    uint64_t term;      /* its term */
};
/* Before message (the caller's, not yet delivered) goes to libraft:
 * writes *out and, when there is an entry to repair, lowers the
 * message's commit index below it so that libraft cannot apply it in
 * the same step. */
void consensus__io_recv_change_plan(struct consensus *c,
                                    struct raft_message *message,
                                    struct consensus__recv_change *out);
/* After the message went to libraft: records the entry under its own
 * index if libraft appended it. plan is borrowed for the call. */
void consensus__io_recv_change_repair(
    struct consensus *c, const struct consensus__recv_change *plan);

/* Raft addresses: "<64 hex digits of the node id>@<dial address>". */
int consensus__address_format(const struct transport_node_id *node,
                              const char *dial, char **out);
int consensus__address_parse(const char *address,
                             struct transport_node_id *node, const char **dial);

/* fsm.c */
void consensus__fsm_init(struct consensus *c);
/* The packed entry: commands[0..count) into one raft_malloc'd buffer. */
int consensus__entry_pack(const struct consensus__proposal *first, size_t count,
                          uint64_t term, struct raft_buffer *out);

/* propose.c */
void consensus__propose_tick(struct consensus *c);
void consensus__propose_fail_all(struct consensus *c, int status);
struct consensus__batch *consensus__batch_at(struct consensus *c,
                                             uint64_t index);

/* membership.c */
void consensus__change_fail(struct consensus *c, int status);

/* Stops the member after an error it cannot go on from (consensus.c):
 * logged, and consensus_tick() answers CONSENSUS_EUNAVAILABLE. */
void consensus__stop(struct consensus *c, const char *what, int rc);

/* Maps a libraft code to ours. */
int consensus__from_raft(int rv);

/* A common_malloc'd copy of text, or NULL. */
char *consensus__strdup(const char *text);

#endif /* SINEW_CONSENSUS_INT_H */
