/* SPDX-License-Identifier: MIT
 *
 * wire_snapshot.c: the InstallSnapshot body (wire.h's layout, type 5): the
 * snapshot's configuration and its data.
 *
 * The configuration has its own encoding here rather than libraft's
 * raft_configuration_encode()/decode(): libraft's decoder is not safe on
 * arbitrary bytes (configuration.c configurationDecode asserts a non-empty
 * buffer and reads ids and the role byte without bounds checks). Decode
 * builds the configuration with raft_configuration_add(), so its memory is
 * exactly what raft_configuration_close() frees, and that function's own
 * checks (distinct ids and addresses, a known role) apply; ids of 0, which
 * it asserts against, are refused before.
 *
 * Raft's InstallSnapshot (Raft dissertation §5.3, figure 5.3) is one
 * message here: libraft 0.22.1 sends the whole snapshot at once (offset 0,
 * done), so there is no offset or done field to carry.
 */
#include "wire.h"

#include <string.h>

/* The smallest server: 1-byte id, role, 1-byte address size. */
#define SERVER_SIZE_MIN 3

/* ------------------------------------------------------------------------
 * Encode
 * ------------------------------------------------------------------------ */

/* Checks conf against wire.h's rules (the ones decode applies). */
static int conf_check(const struct raft_configuration *conf)
{
    if (conf->n == 0 || conf->n > CONSENSUS_WIRE_SERVERS_MAX) {
        return conf->n == 0 ? CONSENSUS_EPROTO : COMMON_ETOOBIG;
    }
    for (unsigned i = 0; i < conf->n; i++) {
        const struct raft_server *s = &conf->servers[i];

        ASSERT(s->address != NULL);
        if (s->id == 0 || s->role < 0 ||
            !consensus__wire_is_role((uint64_t)s->role)) {
            return CONSENSUS_EPROTO;
        }
        if (strnlen(s->address, CONSENSUS_WIRE_ADDRESS_SIZE_MAX + 1) >
            CONSENSUS_WIRE_ADDRESS_SIZE_MAX) {
            return COMMON_ETOOBIG;
        }
        for (unsigned j = 0; j < i; j++) {
            if (conf->servers[j].id == s->id ||
                strcmp(conf->servers[j].address, s->address) == 0) {
                return CONSENSUS_EPROTO;
            }
        }
    }
    return 0;
}

static int conf_encode(const struct raft_configuration *conf,
                       struct common_buf *out)
{
    int rc;

    rc = common_buf_append_varint(out, conf->n);
    for (unsigned i = 0; rc == 0 && i < conf->n; i++) {
        const struct raft_server *s = &conf->servers[i];
        size_t size = strlen(s->address);

        if ((rc = common_buf_append_varint(out, s->id)) != 0 ||
            (rc = common_buf_append_byte(out, (uint8_t)s->role)) != 0 ||
            (rc = common_buf_append_varint(out, size)) != 0) {
            break;
        }
        rc = common_buf_append(out, s->address, size);
    }
    return rc;
}

int consensus__wire_snapshot_encode(const struct raft_install_snapshot *args,
                                    struct common_buf *out)
{
    int rc;

    ASSERT(args->data.len == 0 || args->data.base != NULL);
    if (args->last_index == 0 || args->last_term == 0) {
        return CONSENSUS_EPROTO;
    }
    if (args->data.len > CONSENSUS_WIRE_PAYLOAD_SIZE_MAX) {
        return COMMON_ETOOBIG;
    }
    rc = conf_check(&args->conf);
    if (rc != 0) {
        return rc;
    }
    /* One growth for the data, which is the bulk of the message. */
    rc = common_buf_reserve(out, args->data.len);
    if (rc != 0) {
        return rc;
    }
    if ((rc = common_buf_append_varint(out, args->term)) != 0 ||
        (rc = common_buf_append_varint(out, args->last_index)) != 0 ||
        (rc = common_buf_append_varint(out, args->last_term)) != 0 ||
        (rc = common_buf_append_varint(out, args->conf_index)) != 0 ||
        (rc = conf_encode(&args->conf, out)) != 0 ||
        (rc = common_buf_append_varint(out, args->data.len)) != 0 ||
        (rc = common_buf_append(out, args->data.base, args->data.len)) != 0) {
        return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * Decode
 * ------------------------------------------------------------------------ */

/* Reads one server and adds it to conf. */
static int server_decode(struct common_reader *reader,
                         struct raft_configuration *conf)
{
    char address[CONSENSUS_WIRE_ADDRESS_SIZE_MAX + 1];
    const uint8_t *bytes;
    uint64_t size;
    uint64_t id;
    uint8_t role;
    int rc;

    if ((rc = common_reader_varint(reader, &id)) != 0 ||
        (rc = common_reader_byte(reader, &role)) != 0 ||
        (rc = common_reader_varint(reader, &size)) != 0) {
        return rc;
    }
    if (id == 0 || !consensus__wire_is_role(role) ||
        size > CONSENSUS_WIRE_ADDRESS_SIZE_MAX) {
        return CONSENSUS_EPROTO;
    }
    rc = common_reader_bytes(reader, (size_t)size, &bytes);
    if (rc != 0) {
        return rc;
    }
    if (memchr(bytes, 0, (size_t)size) != NULL) {
        return CONSENSUS_EPROTO;
    }
    memcpy(address, bytes, (size_t)size);
    address[size] = '\0';
    rc = raft_configuration_add(conf, id, address, role);
    if (rc != 0) {
        /* The other failures are a duplicate id or address. */
        return rc == RAFT_NOMEM ? COMMON_ENOMEM : CONSENSUS_EPROTO;
    }
    return 0;
}

/* Reads the configuration into conf (empty); on failure conf is left
 * empty. */
static int conf_decode(struct common_reader *reader,
                       struct raft_configuration *conf)
{
    uint64_t n;
    int rc;

    rc = common_reader_varint(reader, &n);
    if (rc != 0) {
        return rc;
    }
    if (n == 0 || n > CONSENSUS_WIRE_SERVERS_MAX ||
        n > common_reader_remaining(reader) / SERVER_SIZE_MIN) {
        return CONSENSUS_EPROTO;
    }
    for (uint64_t i = 0; i < n; i++) {
        rc = server_decode(reader, conf);
        if (rc != 0) {
            raft_configuration_close(conf);
            raft_configuration_init(conf);
            return rc;
        }
    }
    return 0;
}

/* Reads the data into a raft_malloc'd copy (NULL when empty). */
static int data_decode(struct common_reader *reader, struct raft_buffer *data)
{
    const uint8_t *bytes;
    uint64_t size;
    int rc;

    rc = common_reader_varint(reader, &size);
    if (rc != 0) {
        return rc;
    }
    if (size > CONSENSUS_WIRE_PAYLOAD_SIZE_MAX) {
        return CONSENSUS_EPROTO;
    }
    rc = common_reader_bytes(reader, (size_t)size, &bytes);
    if (rc != 0) {
        return rc;
    }
    data->base = NULL;
    data->len = (size_t)size;
    if (size > 0) {
        data->base = raft_malloc((size_t)size);
        if (data->base == NULL) {
            return COMMON_ENOMEM;
        }
        memcpy(data->base, bytes, (size_t)size);
    }
    return 0;
}

int consensus__wire_snapshot_decode(struct common_reader *reader,
                                    struct raft_install_snapshot *out)
{
    struct raft_install_snapshot args = {.version = out->version};
    int rc;

    if ((rc = consensus__wire_read_varint(reader, &args.term)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &args.last_index)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &args.last_term)) != 0 ||
        (rc = consensus__wire_read_varint(reader, &args.conf_index)) != 0) {
        return rc;
    }
    if (args.last_index == 0 || args.last_term == 0) {
        return CONSENSUS_EPROTO;
    }
    raft_configuration_init(&args.conf);
    rc = conf_decode(reader, &args.conf);
    if (rc != 0) {
        return rc;
    }
    rc = data_decode(reader, &args.data);
    if (rc != 0) {
        raft_configuration_close(&args.conf);
        return rc;
    }
    *out = args;
    return 0;
}
