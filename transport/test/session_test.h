/* SPDX-License-Identifier: MIT
 *
 * session_test.h: what the session tests share: identities made once, two
 * sessions wired back to back in memory, a recorder of what each delivers,
 * and the pump that carries one side's bytes to the other.
 */
#ifndef SINEW_TRANSPORT_SESSION_TEST_H
#define SINEW_TRANSPORT_SESSION_TEST_H

#include <string.h>

#include "common_test.h"
#include "session_int.h"

#define TEST_MESSAGES_MAX 64

/* What one side delivered, in order (copies, test_malloc'd). */
struct test_inbox {
    size_t count;
    uint16_t types[TEST_MESSAGES_MAX];
    size_t sizes[TEST_MESSAGES_MAX];
    uint8_t *bytes[TEST_MESSAGES_MAX];
};

static inline void test_inbox_deliver(void *ctx, uint16_t type,
                                      const uint8_t *bytes, size_t size)
{
    struct test_inbox *inbox = ctx;

    assert_non_null(bytes);
    assert_true(inbox->count < TEST_MESSAGES_MAX);
    inbox->types[inbox->count] = type;
    inbox->sizes[inbox->count] = size;
    inbox->bytes[inbox->count] = test_malloc(size + 1);
    memcpy(inbox->bytes[inbox->count], bytes, size);
    inbox->count++;
}

static inline void test_inbox_clear(struct test_inbox *inbox)
{
    for (size_t i = 0; i < inbox->count; i++) {
        test_free(inbox->bytes[i]);
    }
    inbox->count = 0;
}

/* The identities: A dials, B accepts, C is a bystander. */
struct test_keys {
    struct transport_identity a;
    struct transport_identity b;
    struct transport_identity c;
    uint8_t secret[TRANSPORT_CLUSTER_SECRET_BYTES];
    uint8_t other_secret[TRANSPORT_CLUSTER_SECRET_BYTES];
};

static inline void test_keys_make(struct test_keys *keys)
{
    assert_int_equal(transport_identity_generate(&keys->a), 0);
    assert_int_equal(transport_identity_generate(&keys->b), 0);
    assert_int_equal(transport_identity_generate(&keys->c), 0);
    randombytes_buf(keys->secret, sizeof(keys->secret));
    randombytes_buf(keys->other_secret, sizeof(keys->other_secret));
}

/* One side: its session, admission, what it received and must send. */
struct test_side {
    struct transport__session *session;
    struct transport_admission admission;
    struct transport_node_id authorized[2];
    struct transport__session_config config;
    struct test_inbox inbox;
    struct common_buf out; /* bytes to carry to the other side */
    int rc;                /* the last receive()'s code */
};

/* A side with defaults: admits A and B by list, 1 MiB messages, lz4 from
 * 4 KiB, no padding. Tests change config and admission before
 * test_side_open(). */
static inline void test_side_init(struct test_side *side,
                                  const struct test_keys *keys, bool initiator)
{
    memset(side, 0, sizeof(*side));
    side->authorized[0] = keys->a.id;
    side->authorized[1] = keys->b.id;
    side->admission.authorized = side->authorized;
    side->admission.authorized_count = 2;
    side->config.identity = initiator ? &keys->a : &keys->b;
    side->config.admission = &side->admission;
    side->config.initiator = initiator;
    side->config.expected_peer = initiator ? &keys->b.id : NULL;
    side->config.max_message_bytes = 1u << 20;
    side->config.compress_min_bytes = 4096;
    common_buf_init(&side->out, SIZE_MAX);
}

static inline void test_side_open(struct test_side *side)
{
    assert_int_equal(transport__session_new(&side->config, &side->session), 0);
}

static inline void test_side_close(struct test_side *side)
{
    transport__session_free(side->session);
    side->session = NULL;
    common_buf_close(&side->out);
    test_inbox_clear(&side->inbox);
}

/* Feeds size bytes to side, recording its code. */
static inline int test_side_feed(struct test_side *side, const uint8_t *bytes,
                                 size_t size)
{
    side->rc =
        transport__session_receive(side->session, bytes, size, &side->out,
                                   test_inbox_deliver, &side->inbox);
    return side->rc;
}

/* Moves everything from's out holds into to; returns to's code. */
static inline int test_carry(struct test_side *from, struct test_side *to)
{
    int rc = 0;

    if (from->out.size > 0) {
        rc = test_side_feed(to, from->out.data, from->out.size);
        from->out.size = 0;
    }
    return rc;
}

/* Runs the handshake until no side has anything to say or one fails. */
static inline void test_handshake(struct test_side *initiator,
                                  struct test_side *acceptor)
{
    assert_int_equal(
        transport__session_start(acceptor->session, &acceptor->out), 0);
    assert_int_equal(acceptor->out.size, 0);
    assert_int_equal(
        transport__session_start(initiator->session, &initiator->out), 0);
    while (initiator->out.size > 0 || acceptor->out.size > 0) {
        if (test_carry(initiator, acceptor) != 0) {
            break;
        }
        if (test_carry(acceptor, initiator) != 0) {
            break;
        }
    }
}

/* Both sides with defaults, opened and shaken hands. */
static inline void test_pair_open(struct test_side *a, struct test_side *b,
                                  const struct test_keys *keys)
{
    test_side_init(a, keys, true);
    test_side_init(b, keys, false);
    test_side_open(a);
    test_side_open(b);
    test_handshake(a, b);
    assert_true(transport__session_established(a->session));
    assert_true(transport__session_established(b->session));
}

#endif /* SINEW_TRANSPORT_SESSION_TEST_H */
