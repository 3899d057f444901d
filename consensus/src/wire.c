/* SPDX-License-Identifier: MIT
 *
 * wire.c: the Raft message codec's entry points (wire.h): the common
 * header, the four message types that own no memory, and release. The two
 * that carry entries or a snapshot live in wire_entries.c and
 * wire_snapshot.c.
 *
 * Sub-decoders report bytes that end too soon with the reader's
 * COMMON_ECORRUPT; consensus__wire_decode() reports every malformation as
 * CONSENSUS_EPROTO, so the caller sees one code for "this peer sent bad
 * bytes".
 */
#include "wire.h"

#include <limits.h>
#include <string.h>

STATIC_ASSERT(USHRT_MAX == 0xffff, "features and capacity travel as u16le");
STATIC_ASSERT(UCHAR_MAX == 0xff, "the message's version travels as a u8");

#define FLAG_DISRUPT_LEADER 0x01u /* RequestVote */
#define FLAG_VOTE_GRANTED 0x01u   /* RequestVoteResult */
#define FLAG_PRE_VOTE 0x02u       /* both */

/* ------------------------------------------------------------------------
 * Small field helpers
 * ------------------------------------------------------------------------ */

static int append_u16le(struct common_buf *out, unsigned short value)
{
    uint8_t bytes[2];

    common_put_u16le(bytes, (uint16_t)value);
    return common_buf_append(out, bytes, sizeof(bytes));
}

static int read_u16le(struct common_reader *reader, unsigned short *out)
{
    const uint8_t *bytes;
    int rc;

    rc = common_reader_bytes(reader, 2, &bytes);
    if (rc != 0) {
        return rc;
    }
    *out = (unsigned short)common_get_u16le(bytes);
    return 0;
}

/* Reads a flags byte; CONSENSUS_EPROTO if a bit outside known is set. */
static int read_flags(struct common_reader *reader, uint8_t known, uint8_t *out)
{
    int rc;

    rc = common_reader_byte(reader, out);
    if (rc != 0) {
        return rc;
    }
    if ((*out & (uint8_t)~known) != 0) {
        return CONSENSUS_EPROTO;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * The types without memory
 * ------------------------------------------------------------------------ */

static int
append_entries_result_encode(const struct raft_append_entries_result *p,
                             struct common_buf *out)
{
    int rc;

    if ((rc = common_buf_append_varint(out, p->term)) != 0 ||
        (rc = common_buf_append_varint(out, p->rejected)) != 0 ||
        (rc = common_buf_append_varint(out, p->last_log_index)) != 0 ||
        (rc = append_u16le(out, p->features)) != 0 ||
        (rc = append_u16le(out, p->capacity)) != 0) {
        return rc;
    }
    return 0;
}

static int append_entries_result_decode(struct common_reader *reader,
                                        struct raft_append_entries_result *p)
{
    int rc;

    if ((rc = consensus__wire_read_varint(reader, &p->term)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &p->rejected)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &p->last_log_index)) != 0 ||
        (rc = read_u16le(reader, &p->features)) != 0 ||
        (rc = read_u16le(reader, &p->capacity)) != 0) {
        return rc;
    }
    return 0;
}

static int request_vote_encode(const struct raft_request_vote *p,
                               struct common_buf *out)
{
    uint8_t flags = 0;
    int rc;

    if (p->candidate_id == 0) {
        return CONSENSUS_EPROTO;
    }
    flags |= p->disrupt_leader ? FLAG_DISRUPT_LEADER : 0;
    flags |= p->pre_vote ? FLAG_PRE_VOTE : 0;
    if ((rc = common_buf_append_varint(out, p->term)) != 0 ||
        (rc = common_buf_append_varint(out, p->candidate_id)) != 0 ||
        (rc = common_buf_append_varint(out, p->last_log_index)) != 0 ||
        (rc = common_buf_append_varint(out, p->last_log_term)) != 0 ||
        (rc = common_buf_append_byte(out, flags)) != 0) {
        return rc;
    }
    return 0;
}

static int request_vote_decode(struct common_reader *reader,
                               struct raft_request_vote *p)
{
    uint8_t flags;
    int rc;

    if ((rc = consensus__wire_read_varint(reader, &p->term)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &p->candidate_id)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &p->last_log_index)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &p->last_log_term)) != 0 ||
        (rc = read_flags(reader, FLAG_DISRUPT_LEADER | FLAG_PRE_VOTE,
                         &flags)) != 0) {
        return rc;
    }
    if (p->candidate_id == 0) {
        return CONSENSUS_EPROTO;
    }
    p->disrupt_leader = (flags & FLAG_DISRUPT_LEADER) != 0;
    p->pre_vote = (flags & FLAG_PRE_VOTE) != 0;
    return 0;
}

static int request_vote_result_encode(const struct raft_request_vote_result *p,
                                      struct common_buf *out)
{
    uint8_t flags = 0;
    int rc;

    flags |= p->vote_granted ? FLAG_VOTE_GRANTED : 0;
    flags |= p->pre_vote ? FLAG_PRE_VOTE : 0;
    if ((rc = common_buf_append_varint(out, p->term)) != 0 ||
        (rc = common_buf_append_byte(out, flags)) != 0 ||
        (rc = append_u16le(out, p->features)) != 0 ||
        (rc = append_u16le(out, p->capacity)) != 0) {
        return rc;
    }
    return 0;
}

static int request_vote_result_decode(struct common_reader *reader,
                                      struct raft_request_vote_result *p)
{
    uint8_t flags;
    int rc;

    if ((rc = consensus__wire_read_varint(reader, &p->term)) != 0 ||
        (rc = read_flags(reader, FLAG_VOTE_GRANTED | FLAG_PRE_VOTE, &flags)) !=
            0 ||
        (rc = read_u16le(reader, &p->features)) != 0 ||
        (rc = read_u16le(reader, &p->capacity)) != 0) {
        return rc;
    }
    p->vote_granted = (flags & FLAG_VOTE_GRANTED) != 0;
    p->pre_vote = (flags & FLAG_PRE_VOTE) != 0;
    return 0;
}

static int timeout_now_encode(const struct raft_timeout_now *p,
                              struct common_buf *out)
{
    int rc;

    if ((rc = common_buf_append_varint(out, p->term)) != 0 ||
        (rc = common_buf_append_varint(out, p->last_log_index)) != 0 ||
        (rc = common_buf_append_varint(out, p->last_log_term)) != 0) {
        return rc;
    }
    return 0;
}

static int timeout_now_decode(struct common_reader *reader,
                              struct raft_timeout_now *p)
{
    int rc;

    if ((rc = consensus__wire_read_varint(reader, &p->term)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &p->last_log_index)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &p->last_log_term)) != 0) {
        return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Entry points
 * ------------------------------------------------------------------------ */

/* The message's own version field, or -1 for an unknown type. */
static int message_version(const struct raft_message *message)
{
    switch (message->type) {
    case RAFT_APPEND_ENTRIES:
        return message->append_entries.version;
    case RAFT_APPEND_ENTRIES_RESULT:
        return message->append_entries_result.version;
    case RAFT_REQUEST_VOTE:
        return message->request_vote.version;
    case RAFT_REQUEST_VOTE_RESULT:
        return message->request_vote_result.version;
    case RAFT_INSTALL_SNAPSHOT:
        return message->install_snapshot.version;
    case RAFT_TIMEOUT_NOW:
        return message->timeout_now.version;
    default:
        return -1;
    }
}

static int body_encode(const struct raft_message *m, struct common_buf *out)
{
    switch (m->type) {
    case RAFT_APPEND_ENTRIES:
        return consensus__wire_entries_encode(&m->append_entries, out);
    case RAFT_APPEND_ENTRIES_RESULT:
        return append_entries_result_encode(&m->append_entries_result, out);
    case RAFT_REQUEST_VOTE:
        return request_vote_encode(&m->request_vote, out);
    case RAFT_REQUEST_VOTE_RESULT:
        return request_vote_result_encode(&m->request_vote_result, out);
    case RAFT_INSTALL_SNAPSHOT:
        return consensus__wire_snapshot_encode(&m->install_snapshot, out);
    case RAFT_TIMEOUT_NOW:
        return timeout_now_encode(&m->timeout_now, out);
    default:
        return CONSENSUS_EPROTO;
    }
}

int consensus__wire_encode(const struct raft_message *message,
                           struct common_buf *out)
{
    size_t size_before;
    int version;
    int rc;

    ASSERT(message != NULL);
    ASSERT(out != NULL);
    version = message_version(message);
    if (version < 0) {
        return CONSENSUS_EPROTO;
    }
    size_before = out->size;
    if ((rc = common_buf_append_byte(out, CONSENSUS_WIRE_FORMAT_VERSION)) !=
            0 ||
        (rc = common_buf_append_byte(out, (uint8_t)message->type)) != 0 ||
        (rc = common_buf_append_byte(out, (uint8_t)version)) != 0 ||
        (rc = body_encode(message, out)) != 0) {
        common_buf_truncate(out, size_before);
        return rc;
    }
    return 0;
}

/* Decodes the body of m->type (already set) from reader into m. */
static int body_decode(struct common_reader *reader, struct raft_message *m)
{
    switch (m->type) {
    case RAFT_APPEND_ENTRIES:
        return consensus__wire_entries_decode(reader, &m->append_entries);
    case RAFT_APPEND_ENTRIES_RESULT:
        return append_entries_result_decode(reader, &m->append_entries_result);
    case RAFT_REQUEST_VOTE:
        return request_vote_decode(reader, &m->request_vote);
    case RAFT_REQUEST_VOTE_RESULT:
        return request_vote_result_decode(reader, &m->request_vote_result);
    case RAFT_INSTALL_SNAPSHOT:
        return consensus__wire_snapshot_decode(reader, &m->install_snapshot);
    case RAFT_TIMEOUT_NOW:
        return timeout_now_decode(reader, &m->timeout_now);
    default:
        return CONSENSUS_EPROTO;
    }
}

/* Sets the version field of m's type (already set and known). */
static void message_version_set(struct raft_message *m, uint8_t version)
{
    switch (m->type) {
    case RAFT_APPEND_ENTRIES:
        m->append_entries.version = version;
        break;
    case RAFT_APPEND_ENTRIES_RESULT:
        m->append_entries_result.version = version;
        break;
    case RAFT_REQUEST_VOTE:
        m->request_vote.version = version;
        break;
    case RAFT_REQUEST_VOTE_RESULT:
        m->request_vote_result.version = version;
        break;
    case RAFT_INSTALL_SNAPSHOT:
        m->install_snapshot.version = version;
        break;
    default:
        ASSERT(m->type == RAFT_TIMEOUT_NOW);
        m->timeout_now.version = version;
        break;
    }
}

int consensus__wire_decode(const uint8_t *bytes, size_t size,
                           struct raft_message *out)
{
    struct common_reader reader;
    struct raft_message message;
    uint8_t header[3];
    int rc;

    ASSERT(bytes != NULL || size == 0);
    ASSERT(out != NULL);
    if (size < sizeof(header) || bytes[0] != CONSENSUS_WIRE_FORMAT_VERSION ||
        bytes[1] < RAFT_APPEND_ENTRIES || bytes[1] > RAFT_TIMEOUT_NOW) {
        return CONSENSUS_EPROTO;
    }
    memcpy(header, bytes, sizeof(header));
    memset(&message, 0, sizeof(message));
    message.type = (enum raft_message_type)header[1];
    message_version_set(&message, header[2]);
    common_reader_init(&reader, bytes + sizeof(header), size - sizeof(header));
    rc = body_decode(&reader, &message);
    if (rc == 0 && common_reader_remaining(&reader) != 0) {
        consensus__wire_message_release(&message);
        rc = CONSENSUS_EPROTO;
    }
    if (rc != 0) {
        return rc == COMMON_ENOMEM ? COMMON_ENOMEM : CONSENSUS_EPROTO;
    }
    *out = message;
    return 0;
}

void consensus__wire_message_release(struct raft_message *message)
{
    ASSERT(message != NULL);
    switch (message->type) {
    case RAFT_APPEND_ENTRIES: {
        struct raft_append_entries *args = &message->append_entries;

        if (args->n_entries > 0) {
            ASSERT(args->entries != NULL);
            raft_free(args->entries[0].batch);
        }
        raft_free(args->entries);
        args->entries = NULL;
        args->n_entries = 0;
        break;
    }
    case RAFT_INSTALL_SNAPSHOT:
        raft_configuration_close(&message->install_snapshot.conf);
        raft_configuration_init(&message->install_snapshot.conf);
        raft_free(message->install_snapshot.data.base);
        message->install_snapshot.data.base = NULL;
        message->install_snapshot.data.len = 0;
        break;
    default:
        break;
    }
}
