/* SPDX-License-Identifier: MIT
 *
 * fuzz_frame.c: libFuzzer target for the session's receive side
 * (session.c, handshake.c, frame.c). The first input byte picks a role,
 * the second where to split the rest in two receive() calls:
 *
 *   0  a fresh encrypted acceptor gets the bytes as a hello and beyond;
 *   1  an initiator that sent its hello gets them as the reply;
 *   2  an established encrypted session gets them as frames;
 *   3  a plaintext acceptor, past the hello, gets them as frames: this
 *      reaches what lies behind the cipher (flags, padding, lz4);
 *   4  a script: an established pair where each step seals a genuine
 *      message, optionally damages one byte of it, and feeds it.
 *
 * Checked: no crash, leak or undefined behaviour (the sanitizers); in roles
 * 0-2 nothing is ever delivered (the fuzzer cannot forge a tag); in role 3
 * a delivery never exceeds the bound; in role 4 exactly the undamaged
 * messages sealed before the first damage arrive, in order, and after a
 * failure the session refuses everything.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session_int.h"

#define MESSAGE_MAX 4096

static struct transport_identity identity_a;
static struct transport_identity identity_b;
static struct transport_node_id listed[2];
static struct transport_admission admission = {
    .authorized = listed,
    .authorized_count = 2,
};

/* What a side expects to receive in role 4, and what it got. */
struct expect {
    bool forbid;     /* roles 0-2: any delivery is a failure */
    size_t count;    /* messages delivered */
    size_t expected; /* messages that may be delivered */
    uint8_t last[MESSAGE_MAX];
    size_t last_size;
    uint16_t last_type;
};

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_frame: %s\n", why);
    abort();
}

static void deliver(void *ctx, uint16_t type, const uint8_t *bytes, size_t size)
{
    struct expect *expect = ctx;

    if (expect->forbid) {
        fail("delivered without authentication");
    }
    if (size > MESSAGE_MAX || bytes == NULL) {
        fail("delivery past the bound");
    }
    expect->count++;
    expect->last_type = type;
    expect->last_size = size;
    memcpy(expect->last, bytes, size);
}

static void setup_once(void)
{
    static bool done;
    uint8_t seed[crypto_sign_SEEDBYTES];

    if (done) {
        return;
    }
    if (sodium_init() < 0) {
        fail("sodium_init");
    }
    memset(seed, 'a', sizeof(seed));
    crypto_sign_seed_keypair(identity_a.id.key, identity_a.secret, seed);
    memset(seed, 'b', sizeof(seed));
    crypto_sign_seed_keypair(identity_b.id.key, identity_b.secret, seed);
    listed[0] = identity_a.id;
    listed[1] = identity_b.id;
    done = true;
}

static struct transport__session *session_make(bool initiator, bool plain)
{
    struct transport__session_config config = {
        .identity = initiator ? &identity_a : &identity_b,
        .admission = &admission,
        .initiator = initiator,
        .expected_peer = initiator ? &identity_b.id : NULL,
        .max_message_bytes = MESSAGE_MAX,
        .compress_min_bytes = 64,
        .pad_frames = false,
        .plaintext = plain,
    };
    struct transport__session *session;

    if (transport__session_new(&config, &session) != 0) {
        fail("session_new");
    }
    return session;
}

static int feed(struct transport__session *session, const uint8_t *bytes,
                size_t size, struct common_buf *out, struct expect *expect)
{
    return transport__session_receive(session, bytes, size, out, deliver,
                                      expect);
}

/* A handshakes with B; out buffers emptied. */
static void pair_make(struct transport__session **a,
                      struct transport__session **b, bool plain)
{
    struct common_buf out_a;
    struct common_buf out_b;
    struct expect none = {.forbid = true};

    common_buf_init(&out_a, 1 << 16);
    common_buf_init(&out_b, 1 << 16);
    *a = session_make(true, plain);
    *b = session_make(false, plain);
    if (transport__session_start(*a, &out_a) != 0 ||
        feed(*b, out_a.data, out_a.size, &out_b, &none) != 0) {
        fail("handshake (hello)");
    }
    out_a.size = 0;
    if (feed(*a, out_b.data, out_b.size, &out_a, &none) != 0 ||
        feed(*b, out_a.data, out_a.size, &out_b, &none) != 0 ||
        !transport__session_established(*a) ||
        !transport__session_established(*b)) {
        fail("handshake");
    }
    common_buf_close(&out_a);
    common_buf_close(&out_b);
}

/* Feeds data to session in two pieces, split at cut (mod size + 1). */
static void feed_split(struct transport__session *session, uint8_t cut,
                       const uint8_t *data, size_t size, struct expect *expect)
{
    struct common_buf out;
    size_t first = size > 0 ? cut % (size + 1) : 0;
    int rc;

    common_buf_init(&out, 1 << 16);
    rc = feed(session, data, first, &out, expect);
    if (rc == 0) {
        rc = feed(session, data + first, size - first, &out, expect);
    }
    if (rc != 0 && feed(session, data, size, &out, expect) != rc) {
        fail("a failed session accepted more");
    }
    common_buf_close(&out);
}

/* Role 4: steps of [size, type, damage offset, damage xor, bytes...]. */
static void script_run(const uint8_t *data, size_t size)
{
    struct transport__session *a;
    struct transport__session *b;
    struct expect expect = {.forbid = false};
    struct common_buf out;
    struct common_buf reply;
    bool damaged = false;

    pair_make(&a, &b, false);
    common_buf_init(&out, 1 << 20);
    common_buf_init(&reply, 1 << 16);
    while (size >= 4) {
        size_t length = data[0] < size - 4 ? data[0] : size - 4;
        uint8_t *frame;
        int rc;

        out.size = 0;
        if (transport__session_seal(a, data[1], data + 4, length, &out)) {
            fail("seal");
        }
        frame = out.data;
        frame[data[2] % out.size] ^= data[3];
        damaged = damaged || data[3] != 0;
        rc = feed(b, out.data, out.size, &reply, &expect);
        if (!damaged && (rc != 0 || expect.count != ++expect.expected ||
                         expect.last_size != length ||
                         memcmp(expect.last, data + 4, length) != 0)) {
            fail("genuine message lost or changed");
        }
        if (damaged && (rc == 0 || expect.count != expect.expected)) {
            fail("damaged frame accepted");
        }
        data += 4 + length;
        size -= 4 + length;
    }
    common_buf_close(&out);
    common_buf_close(&reply);
    transport__session_free(a);
    transport__session_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct transport__session *a = NULL;
    struct transport__session *b = NULL;
    struct expect expect = {.forbid = true};
    struct common_buf out;

    setup_once();
    if (size < 2) {
        return 0;
    }
    common_buf_init(&out, 1 << 16);
    switch (data[0] % 5) {
    case 0:
        b = session_make(false, false);
        break;
    case 1:
        a = session_make(true, false);
        if (transport__session_start(a, &out) != 0) {
            fail("start");
        }
        break;
    case 2:
        pair_make(&a, &b, false);
        break;
    case 3:
        pair_make(&a, &b, true);
        expect.forbid = false;
        break;
    default:
        script_run(data + 1, size - 1);
        common_buf_close(&out);
        return 0;
    }
    feed_split(b != NULL ? b : a, data[1], data + 2, size - 2, &expect);
    common_buf_close(&out);
    transport__session_free(a);
    transport__session_free(b);
    return 0;
}
