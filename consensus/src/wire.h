/* SPDX-License-Identifier: MIT
 *
 * wire.h: the bytes of one Raft RPC (struct raft_message of libraft 0.22.1)
 * as sinew sends it inside one transport message.
 *
 * The transport already frames, authenticates and encrypts; this is only
 * the payload. The sender's identity is not in it: io.c takes server_id and
 * server_address from the authenticated peer. Every byte is validated on
 * decode; a message decode accepts never trips one of libraft's assertions
 * on the fields it checks (listed under "Checks").
 *
 * Layout (all integers "varint" are unsigned LEB128 in shortest form, as
 * common.h's varints; "u8" one byte; "u16le" two bytes little-endian;
 * nothing is padded or aligned; the message ends exactly where its last
 * field ends, trailing bytes are an error):
 *
 *   offset 0  u8  format version, CONSENSUS_WIRE_FORMAT_VERSION (1)
 *   offset 1  u8  type: enum raft_message_type (1 to 6)
 *   offset 2  u8  the message's own `version` field, carried verbatim
 *   offset 3  the body of the type:
 *
 *   1 AppendEntries
 *     varint term, varint prev_log_index, varint prev_log_term,
 *     varint leader_commit, varint n_entries,
 *     n_entries times: varint entry term, u8 entry type (1 RAFT_COMMAND,
 *       2 RAFT_BARRIER, 3 RAFT_CHANGE), varint payload size;
 *     then the n_entries payloads back to back, in entry order.
 *   2 AppendEntriesResult
 *     varint term, varint rejected, varint last_log_index,
 *     u16le features, u16le capacity
 *   3 RequestVote
 *     varint term, varint candidate_id, varint last_log_index,
 *     varint last_log_term, u8 flags (bit 0 disrupt_leader, bit 1 pre_vote)
 *   4 RequestVoteResult
 *     varint term, u8 flags (bit 0 vote_granted, bit 1 pre_vote),
 *     u16le features, u16le capacity
 *   5 InstallSnapshot
 *     varint term, varint last_index, varint last_term, varint conf_index,
 *     varint n_servers, n_servers times: varint id, u8 role (0 RAFT_STANDBY,
 *       1 RAFT_VOTER, 2 RAFT_SPARE), varint address size, the address bytes
 *       (no terminating NUL);
 *     varint data size, the data bytes.
 *   6 TimeoutNow
 *     varint term, varint last_log_index, varint last_log_term
 *
 * Flag bits not named above must be 0. Varints and flags being canonical,
 * a message has exactly one encoding: encoding what decode returned gives
 * back the very bytes decoded.
 *
 * Checks (decode refuses with CONSENSUS_EPROTO, encode refuses with
 * CONSENSUS_EPROTO, so encode never writes what decode would refuse):
 *   - AppendEntries: prev_log_index is 0 exactly when prev_log_term is 0
 *     (libraft asserts it, replication.c checkLogMatchingProperty); entry
 *     terms are > 0 (log.c asserts it); a RAFT_CHANGE entry's payload is a
 *     valid libraft configuration encoding (format 1, 1 to
 *     CONSENSUS_WIRE_SERVERS_MAX servers, non-zero distinct ids, distinct
 *     NUL-terminated addresses of at most CONSENSUS_WIRE_ADDRESS_SIZE_MAX
 *     bytes, valid roles, then fewer than 8 zero bytes), because libraft
 *     decodes it with configurationDecode(), which reads past the end of
 *     bad bytes and asserts on an empty buffer.
 *   - RequestVote: candidate_id > 0 (0 would read as "voted for nobody").
 *   - InstallSnapshot: last_index and last_term > 0 (libraft asserts them,
 *     replicationInstallSnapshot); 1 to CONSENSUS_WIRE_SERVERS_MAX servers,
 *     ids > 0 and distinct, addresses distinct, without NUL, at most
 *     CONSENSUS_WIRE_ADDRESS_SIZE_MAX bytes.
 * Sizes over the limits below: encode returns COMMON_ETOOBIG, decode
 * CONSENSUS_EPROTO.
 */
#ifndef SINEW_CONSENSUS_WIRE_H
#define SINEW_CONSENSUS_WIRE_H

#include <raft.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "consensus.h"

/* The first byte of every message; a receiver refuses any other value. */
#define CONSENSUS_WIRE_FORMAT_VERSION 1

/* The most payload bytes one message may carry: the sum of an
 * AppendEntries' entry payloads, or an InstallSnapshot's data. libraft
 * 0.22.1 sends a snapshot whole, in one message, so this also bounds the
 * snapshot size; the transport's frame limit must be at least this plus a
 * few KiB of headers for snapshots this large to travel. */
#define CONSENSUS_WIRE_PAYLOAD_SIZE_MAX ((size_t)1 << 30)

/* The most servers in a configuration. libraft checks duplicates in
 * O(n^2) as it adds servers; real clusters have a handful. */
#define CONSENSUS_WIRE_SERVERS_MAX 256

/* The longest server address, in bytes, without its NUL. sinew's addresses
 * are "<64 hex digits>@<dial address>". */
#define CONSENSUS_WIRE_ADDRESS_SIZE_MAX 1024

/* Appends message's encoding to out. message is borrowed for the call (its
 * entries, configuration and data are copied into out; server_id and
 * server_address are ignored). On failure out is left as it was.
 * Returns 0, CONSENSUS_EPROTO (unknown type, or a message decode would
 * refuse: see "Checks"), COMMON_ETOOBIG (a limit above, or out's size_max),
 * COMMON_ENOMEM. */
int consensus__wire_encode(const struct raft_message *message,
                           struct common_buf *out);

/* Decodes the size bytes at bytes (borrowed for the call; nothing of the
 * result points into them) into *out, which is written on success only.
 *
 * On success, out->server_id is 0 and out->server_address NULL (io.c fills
 * them), and the memory of *out follows what libraft's legacy receive path
 * (legacy.c recvCb) expects of a raft_io, exactly as raft_uv decodes
 * (uv_encoding.c, uv_recv.c):
 *   - RAFT_APPEND_ENTRIES with n_entries > 0: `entries` is one raft_malloc'd
 *     array of n_entries; every entry's buf points into ONE raft_malloc'd
 *     block (at least 1 byte, even when every payload is empty) and every
 *     entry's `batch` points at that block; an empty payload has buf.base
 *     NULL. With n_entries == 0, entries is NULL and nothing is allocated.
 *   - RAFT_INSTALL_SNAPSHOT: conf is built with raft_configuration_add()
 *     (servers array and each address raft_malloc'd, freed by
 *     raft_configuration_close()); data.base is raft_malloc'd, or NULL when
 *     data.len is 0.
 *   - the other types own no memory.
 * Ownership: handing *out to libraft's recv callback transfers all of this
 * to libraft (recvCb frees the entries array and, through the log, the
 * batch; the snapshot's conf and data become libraft's or are freed by it);
 * the caller must not touch it afterwards. The struct raft_message itself
 * stays the caller's (libraft reads it during the call only). A decoded
 * message not handed to libraft is freed with consensus__wire_message_release.
 *
 * Returns 0, CONSENSUS_EPROTO (malformed: unknown format version or type,
 * truncated, trailing bytes, counts or sizes larger than the bytes left or
 * than the limits, a configuration that does not decode, zero ids, unknown
 * entry types or roles, a check of "Checks" that fails), COMMON_ENOMEM. On
 * failure nothing stays allocated. */
int consensus__wire_decode(const uint8_t *bytes, size_t size,
                           struct raft_message *out);

/* Frees what consensus__wire_decode() allocated in *message (which must be
 * a decoded message libraft was not given) and clears those fields, so a
 * second call frees nothing. */
void consensus__wire_message_release(struct raft_message *message);

/* ------------------------------------------------------------------------
 * Between wire*.c only: the bodies of the two message types that carry
 * memory. Each encoder appends to out (undoing is the caller's), each
 * decoder reads from reader up to its end, fills *out on success only and
 * frees what it allocated on failure. Decoders return COMMON_ECORRUPT when
 * the bytes end too soon (the reader's code), CONSENSUS_EPROTO for other
 * malformations, COMMON_ENOMEM; consensus__wire_decode() reports the first
 * two as CONSENSUS_EPROTO.
 * ------------------------------------------------------------------------ */

STATIC_ASSERT(sizeof(raft_index) == sizeof(uint64_t),
              "raft's 64-bit fields travel as varints");

/* common_reader_varint() into one of raft's unsigned long long fields. */
static inline int consensus__wire_read_varint(struct common_reader *reader,
                                              unsigned long long *out)
{
    uint64_t value;
    int rc;

    rc = common_reader_varint(reader, &value);
    if (rc == 0) {
        *out = value;
    }
    return rc;
}

/* Whether role is one of libraft's server roles. */
static inline bool consensus__wire_is_role(uint64_t role)
{
    return role == RAFT_STANDBY || role == RAFT_VOTER || role == RAFT_SPARE;
}

/* wire_entries.c */
int consensus__wire_entries_encode(const struct raft_append_entries *args,
                                   struct common_buf *out);
int consensus__wire_entries_decode(struct common_reader *reader,
                                   struct raft_append_entries *out);

/* wire_snapshot.c */
int consensus__wire_snapshot_encode(const struct raft_install_snapshot *args,
                                    struct common_buf *out);
int consensus__wire_snapshot_decode(struct common_reader *reader,
                                    struct raft_install_snapshot *out);

/* wire_entries.c: whether the bytes at payload are a configuration as
 * libraft's configurationDecode() reads it (see "Checks"). */
bool consensus__wire_change_is_valid(const uint8_t *payload, size_t size);

#endif /* SINEW_CONSENSUS_WIRE_H */
