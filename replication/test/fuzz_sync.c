/* SPDX-License-Identifier: MIT
 *
 * fuzz_sync.c: libFuzzer target for what a peer can send a replica: the
 * HELLO and SUMMARY decoders (sync_wire.h) and the whole receiving path
 * of replication.h. The first input byte picks a mode:
 *
 *   0  the rest is a HELLO: decode; whatever decodes encodes back to the
 *      same bytes;
 *   1  the rest is a SUMMARY: the same;
 *   2  the rest is messages (u16 little-endian length, u8 type offset
 *      from REPLICATION_MESSAGE_FIRST, bytes) delivered by
 *      replication_received() to a replica in leader mode (0) or crdt mode
 *      (any other second byte) whose peer has said a valid HELLO: reaches
 *      the summary cursors, the fence, the reassembler and the merge.
 *
 * Checked: no crash, leak or undefined behaviour (the sanitizers), and
 * the round trips above. The transport is a stub that takes every send.
 */
#include <stdlib.h>
#include <string.h>

#include "replication.h"
#include "sync_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must(int ok)
{
    if (!ok) {
        abort();
    }
}

static void hello_round_trip(const uint8_t *data, size_t size)
{
    struct replication__hello hello;
    struct common_buf buf;

    if (replication__hello_decode(data, size, &hello) != 0) {
        return;
    }
    common_buf_init(&buf, SIZE_MAX);
    must(replication__hello_encode(&hello, &buf) == 0);
    must(buf.size == size && memcmp(buf.data, data, size) == 0);
    common_buf_close(&buf);
}

static void summary_round_trip(const uint8_t *data, size_t size)
{
    struct replication__summary summary;
    struct common_buf buf;

    if (replication__summary_decode(data, size, &summary) != 0) {
        return;
    }
    common_buf_init(&buf, SIZE_MAX);
    must(replication__summary_encode(&summary, &buf) == 0);
    must(buf.size == size && memcmp(buf.data, data, size) == 0);
    common_buf_close(&buf);
    replication__summary_release(&summary);
}

/* ---- a replica with a stub transport ---- */

static int stub_send(struct transport *t, const struct transport_node_id *peer,
                     uint16_t type, const void *bytes, size_t size)
{
    (void)t;
    (void)peer;
    (void)type;
    (void)bytes;
    (void)size;
    return 0;
}

static const struct transport_ops stub_ops = {.send = stub_send};

static uint64_t fixed_now(void *ctx)
{
    (void)ctx;
    return UINT64_C(1764686000000);
}

static int site_bytes(void *ctx, uint8_t *out, size_t size)
{
    (void)ctx;
    memset(out, 0xaa, size);
    return 0;
}

static bool writer(void *ctx, uint64_t *epoch)
{
    (void)ctx;
    *epoch = 1;
    return false;
}

static void deliver(struct replication *r, const struct transport_node_id *peer,
                    const uint8_t *data, size_t size)
{
    uint64_t next;

    while (size >= 3) {
        size_t length = (size_t)data[0] | (size_t)data[1] << 8;
        uint16_t type = (uint16_t)(REPLICATION_MESSAGE_FIRST + data[2]);

        data += 3;
        size -= 3;
        length = length < size ? length : size;
        replication_received(r, peer, type, data, length);
        data += length;
        size -= length;
    }
    (void)replication_tick(r, &next);
}

static void replica(const uint8_t *data, size_t size)
{
    struct transport transport = {.ops = &stub_ops, .impl = NULL};
    struct replication_config config = {0};
    struct transport_node_id peer;
    struct replication__hello hello = {.mode = REPLICATION_MODE_CRDT};
    struct replication *r = NULL;
    struct engine_db *db = NULL;
    struct common_buf buf;

    if (size < 1) {
        return;
    }
    config.mode =
        data[0] == 0 ? REPLICATION_MODE_LEADER : REPLICATION_MODE_CRDT;
    must(engine_open(NULL, &db) == 0);
    must(engine_exec(db,
                     "CREATE TABLE t(id TEXT PRIMARY KEY, a, b DEFAULT 'd');"
                     "INSERT INTO t VALUES ('x', 1, 2)",
                     NULL, NULL) == 0);
    config.db = db;
    config.transport = &transport;
    config.clock.now_ms = fixed_now;
    config.random_bytes = site_bytes;
    config.is_writer = writer;
    must(replication_open(&config, &r) == 0);
    memset(peer.key, 7, sizeof(peer.key));
    replication_connected(r, &peer);
    memset(hello.site, 0xbb, sizeof(hello.site));
    hello.mode = (uint8_t)config.mode;
    common_buf_init(&buf, SIZE_MAX);
    must(replication__hello_encode(&hello, &buf) == 0);
    replication_received(r, &peer, REPLICATION__MSG_HELLO, buf.data, buf.size);
    common_buf_close(&buf);
    deliver(r, &peer, data + 1, size - 1);
    replication_disconnected(r, &peer);
    replication_close(r);
    engine_close(db);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    switch (data[0] % 3) {
    case 0:
        hello_round_trip(data + 1, size - 1);
        break;
    case 1:
        summary_round_trip(data + 1, size - 1);
        break;
    default:
        replica(data + 1, size - 1);
    }
    return 0;
}
