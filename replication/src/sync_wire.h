/* SPDX-License-Identifier: MIT
 *
 * sync_wire.h: the replication messages besides change-set chunks, in
 * bytes and back (docs/formats.md, "Replication messages").
 *
 *   HELLO    what a node is: its site id, mode and the epoch it knows
 *   SUMMARY  what it holds: per origin the contiguous head (its version
 *            vector), clock evidence per site it knows; in leader mode the
 * epoch, whether it is the writer, and the writer's fence (what the writer held
 * of every other origin when it took over) CHUNK    one change-set chunk,
 * exactly as changeset_codec.h made it SNAPSHOT a slice of a snapshot
 * (sync_snapshot.c)
 *
 * All integers little-endian, fixed width; every message starts with the
 * protocol version byte. Decoding trusts nothing: counts are checked
 * against the bytes that carry them before anything is allocated.
 */
#ifndef SINEW_REPLICATION_SYNC_WIRE_H
#define SINEW_REPLICATION_SYNC_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "replication.h"

#define REPLICATION__SYNC_PROTOCOL 1

enum replication__message {
    REPLICATION__MSG_HELLO = REPLICATION_MESSAGE_FIRST + 1,
    REPLICATION__MSG_SUMMARY = REPLICATION_MESSAGE_FIRST + 2,
    REPLICATION__MSG_CHUNK = REPLICATION_MESSAGE_FIRST + 3,
    REPLICATION__MSG_SNAPSHOT = REPLICATION_MESSAGE_FIRST + 4,
};

struct replication__hello {
    uint8_t site[REPLICATION_SITE_ID_BYTES];
    uint8_t mode; /* enum replication_mode */
    uint64_t epoch;
};

/* One origin's head (a version vector entry, or a fence entry). */
struct replication__head {
    uint8_t site[REPLICATION_SITE_ID_BYTES];
    uint64_t head;
};

/* SUMMARY flags. */
#define REPLICATION__SUMMARY_WRITER 0x01u      /* the sender is the writer */
#define REPLICATION__SUMMARY_FENCE_KNOWN 0x02u /* fence holds epoch's fence */

/* Clock evidence for a site: its HLC had passed hlc when it had made
 * version versions, so every write of it stamped below hlc is among
 * versions 1..version, and every later one is stamped above hlc
 * (sync_history.c: tombstone collection). */
struct replication__evidence {
    uint8_t site[REPLICATION_SITE_ID_BYTES];
    uint64_t hlc;
    uint64_t version;
};

struct replication__summary {
    uint64_t epoch; /* leader mode: the highest epoch the sender knows */
    uint8_t flags;
    const struct replication__head *heads; /* the version vector */
    size_t head_count;
    const struct replication__head *fence; /* FENCE_KNOWN: epoch's fence */
    size_t fence_count;
    /* The best clock evidence the sender has, per site it knows (its own
     * included, current). */
    const struct replication__evidence *evidence;
    size_t evidence_count;
};

/* Appends the message to out (borrowed): 0 or COMMON_ENOMEM. */
int replication__hello_encode(const struct replication__hello *hello,
                              struct common_buf *out);
int replication__summary_encode(const struct replication__summary *summary,
                                struct common_buf *out);

/* Decodes size bytes (borrowed). REPLICATION_EFORMAT when malformed,
 * REPLICATION_EVERSION for another protocol version. A decoded summary's
 * arrays are common_malloc'd, freed by replication__summary_release(). */
int replication__hello_decode(const uint8_t *bytes, size_t size,
                              struct replication__hello *out);
int replication__summary_decode(const uint8_t *bytes, size_t size,
                                struct replication__summary *out);
void replication__summary_release(struct replication__summary *summary);

#endif /* SINEW_REPLICATION_SYNC_WIRE_H */
