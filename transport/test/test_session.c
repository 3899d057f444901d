/* SPDX-License-Identifier: MIT
 *
 * test_session.c: the secure session between two honest or misconfigured
 * peers. Goal: the handshake completes both ways when admission allows it
 * (authorized keys, cluster secret, both) and fails with TRANSPORT_EAUTH
 * on the side that must notice (wrong key, unlisted key, wrong secret,
 * wrong expected peer), delivering nothing; then every message size (0, 1,
 * compressible, incompressible, exactly the maximum) arrives whole, in
 * order and typed, however the bytes are split, padded or not, and in
 * plaintext mode. Method: two sessions wired back to back in memory
 * (session_test.h); random splits print their seed.
 */
#include "session_test.h"

static struct test_keys keys;

static int group_setup(void **state)
{
    common_test_group_setup(state);
    test_keys_make(&keys);
    return 0;
}

static void handshake_authorized_keys(void **state)
{
    struct test_side a;
    struct test_side b;

    (void)state;
    test_pair_open(&a, &b, &keys);
    assert_true(transport_node_id_equal(transport__session_peer(a.session),
                                        &keys.b.id));
    assert_true(transport_node_id_equal(transport__session_peer(b.session),
                                        &keys.a.id));
    test_side_close(&a);
    test_side_close(&b);
}

static void handshake_cluster_secret(void **state)
{
    struct test_side a;
    struct test_side b;

    (void)state;
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    a.admission = (struct transport_admission){.cluster_secret = keys.secret};
    b.admission = (struct transport_admission){.cluster_secret = keys.secret};
    test_side_open(&a);
    test_side_open(&b);
    test_handshake(&a, &b);
    assert_true(transport__session_established(a.session));
    assert_true(transport__session_established(b.session));
    assert_true(transport_node_id_equal(transport__session_peer(b.session),
                                        &keys.a.id));
    test_side_close(&a);
    test_side_close(&b);
}

static void handshake_secret_and_list(void **state)
{
    struct test_side a;
    struct test_side b;

    (void)state;
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    a.admission.cluster_secret = keys.secret;
    b.admission.cluster_secret = keys.secret;
    test_side_open(&a);
    test_side_open(&b);
    test_handshake(&a, &b);
    assert_true(transport__session_established(a.session));
    assert_true(transport__session_established(b.session));
    test_side_close(&a);
    test_side_close(&b);
}

/* Runs a handshake expected to fail: code on the initiator and acceptor
 * (0: that side saw no failure), nothing established on the failing side
 * and nothing delivered anywhere. */
static void handshake_refused(struct test_side *a, struct test_side *b,
                              int initiator_rc, int acceptor_rc)
{
    test_side_open(a);
    test_side_open(b);
    test_handshake(a, b);
    assert_int_equal(a->rc, initiator_rc);
    assert_int_equal(b->rc, acceptor_rc);
    assert_false(transport__session_established(b->session));
    if (initiator_rc != 0) {
        assert_false(transport__session_established(a->session));
        assert_null(transport__session_peer(a->session));
    }
    assert_null(transport__session_peer(b->session));
    assert_int_equal(a->inbox.count, 0);
    assert_int_equal(b->inbox.count, 0);
    test_side_close(a);
    test_side_close(b);
}

static void handshake_wrong_expected_peer(void **state)
{
    struct test_side a;
    struct test_side b;

    (void)state;
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    a.config.expected_peer = &keys.c.id;
    test_side_open(&a);
    test_side_open(&b);
    test_handshake(&a, &b);
    /* The acceptor checks nothing in plaintext mode; the initiator still
     * refuses a peer that names itself other than the one it dialed. */
    assert_int_equal(a.rc, TRANSPORT_EAUTH);
    assert_false(transport__session_established(a.session));
    assert_null(transport__session_peer(a.session));
    test_side_close(&a);
    test_side_close(&b);
}

static void handshake_unlisted_initiator(void **state)
{
    struct test_side a;
    struct test_side b;

    (void)state;
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    b.authorized[0] = keys.c.id;
    handshake_refused(&a, &b, 0, TRANSPORT_EAUTH);
}

static void handshake_unlisted_acceptor(void **state)
{
    struct test_side a;
    struct test_side b;

    (void)state;
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    a.authorized[1] = keys.c.id;
    handshake_refused(&a, &b, TRANSPORT_EAUTH, 0);
}

/* C claims A's id but holds C's secret: its proof fails. */
static void handshake_wrong_initiator_key(void **state)
{
    struct transport_identity impostor = keys.c;
    struct test_side a;
    struct test_side b;

    (void)state;
    impostor.id = keys.a.id;
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    a.config.identity = &impostor;
    handshake_refused(&a, &b, 0, TRANSPORT_EAUTH);
}

/* C answers as B with C's secret: its signature fails. */
static void handshake_wrong_acceptor_key(void **state)
{
    struct transport_identity impostor = keys.c;
    struct test_side a;
    struct test_side b;

    (void)state;
    impostor.id = keys.b.id;
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    b.config.identity = &impostor;
    handshake_refused(&a, &b, TRANSPORT_EAUTH, 0);
}

static void handshake_wrong_cluster_secret(void **state)
{
    struct test_side a;
    struct test_side b;

    (void)state;
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    a.admission = (struct transport_admission){.cluster_secret = keys.secret};
    b.admission =
        (struct transport_admission){.cluster_secret = keys.other_secret};
    handshake_refused(&a, &b, TRANSPORT_EAUTH, 0);

    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    b.admission.cluster_secret = keys.secret; /* only one side has one */
    handshake_refused(&a, &b, TRANSPORT_EAUTH, 0);
}

/* size bytes: compressible (a short repeating pattern) or not (random). */
static uint8_t *message_make(size_t size, bool compressible)
{
    uint8_t *bytes = test_malloc(size + 1);

    if (compressible) {
        for (size_t i = 0; i < size; i++) {
            bytes[i] = (uint8_t)("sinew change set "[i % 17]);
        }
    } else {
        randombytes_buf(bytes, size);
    }
    return bytes;
}

static void inbox_check(const struct test_inbox *inbox, size_t index,
                        uint16_t type, const uint8_t *bytes, size_t size)
{
    assert_true(index < inbox->count);
    assert_int_equal(inbox->types[index], type);
    assert_int_equal(inbox->sizes[index], size);
    assert_memory_equal(inbox->bytes[index], bytes, size);
}

/* Sends each size from one side to the other and back, checking order,
 * types and bytes; compressible ones must travel smaller. */
static void messages_both_ways(struct test_side *a, struct test_side *b)
{
    static const size_t sizes[] = {0,    1,     100,           4095,
                                   4096, 65536, (1u << 20) - 1};
    size_t count = sizeof(sizes) / sizeof(sizes[0]);

    for (size_t i = 0; i < 2 * count; i++) {
        bool compressible = i % 2 == 0;
        size_t size = sizes[i % count];
        uint8_t *bytes = message_make(size, compressible);
        struct test_side *from = i < count ? a : b;
        struct test_side *to = i < count ? b : a;

        assert_int_equal(transport__session_seal(from->session,
                                                 (uint16_t)(i + 7), bytes, size,
                                                 &from->out),
                         0);
        if (compressible && size >= 4096) {
            assert_true(from->out.size < size / 4);
        }
        assert_int_equal(test_carry(from, to), 0);
        inbox_check(&to->inbox, i % count, (uint16_t)(i + 7), bytes, size);
        test_free(bytes);
    }
}

static void messages_sizes(void **state)
{
    struct test_side a;
    struct test_side b;
    uint8_t *bytes = message_make((1u << 20) + 1, false);

    (void)state;
    test_pair_open(&a, &b, &keys);
    messages_both_ways(&a, &b);
    assert_int_equal(
        transport__session_seal(a.session, 1, bytes, 1u << 20, &a.out), 0);
    assert_int_equal(test_carry(&a, &b), 0);
    inbox_check(&b.inbox, 7, 1, bytes, 1u << 20);
    assert_int_equal(
        transport__session_seal(a.session, 1, bytes, (1u << 20) + 1, &a.out),
        TRANSPORT_ETOOBIG);
    assert_int_equal(a.out.size, 0);
    /* The refusal is not a failure: the session goes on. */
    assert_int_equal(transport__session_seal(a.session, 2, bytes, 3, &a.out),
                     0);
    assert_int_equal(test_carry(&a, &b), 0);
    inbox_check(&b.inbox, 8, 2, bytes, 3);
    test_free(bytes);
    test_side_close(&a);
    test_side_close(&b);
}

static void messages_never_compressed(void **state)
{
    struct test_side a;
    struct test_side b;
    uint8_t *bytes = message_make(100000, true);

    (void)state;
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    a.config.compress_min_bytes = SIZE_MAX;
    test_side_open(&a);
    test_side_open(&b);
    test_handshake(&a, &b);
    assert_int_equal(
        transport__session_seal(a.session, 5, bytes, 100000, &a.out), 0);
    assert_int_equal(a.out.size,
                     100000 + SESSION_HEADER_SIZE + 2 * SESSION_TAG_BYTES);
    assert_int_equal(test_carry(&a, &b), 0);
    inbox_check(&b.inbox, 0, 5, bytes, 100000);
    test_free(bytes);
    test_side_close(&a);
    test_side_close(&b);
}

/* The handshake and a few messages, fed to each side in pieces of sizes
 * chosen by chunk(), must give the same result as whole buffers. */
static void feed_in_pieces(struct test_side *from, struct test_side *to,
                           struct common_test_rng *rng)
{
    size_t offset = 0;

    while (offset < from->out.size) {
        size_t left = from->out.size - offset;
        size_t piece = rng == NULL ? 1 : 1 + common_test_rng_below(rng, 300);

        piece = piece < left ? piece : left;
        assert_int_equal(test_side_feed(to, from->out.data + offset, piece), 0);
        offset += piece;
    }
    from->out.size = 0;
}

static void split_run(struct common_test_rng *rng)
{
    struct test_side a;
    struct test_side b;
    uint8_t *big = message_make(20000, true);
    uint8_t *noise = message_make(5000, false);

    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    test_side_open(&a);
    test_side_open(&b);
    assert_int_equal(transport__session_start(a.session, &a.out), 0);
    feed_in_pieces(&a, &b, rng);
    feed_in_pieces(&b, &a, rng);
    assert_true(transport__session_established(a.session));
    for (uint16_t i = 0; i < 3; i++) {
        assert_int_equal(
            transport__session_seal(a.session, i, big, 20000 - i, &a.out), 0);
        assert_int_equal(transport__session_seal_ping(a.session, &a.out), 0);
        assert_int_equal(
            transport__session_seal(a.session, 10, noise, i, &a.out), 0);
    }
    feed_in_pieces(&a, &b, rng);
    assert_true(transport__session_established(b.session));
    assert_int_equal(b.inbox.count, 6);
    for (uint16_t i = 0; i < 3; i++) {
        inbox_check(&b.inbox, 2 * (size_t)i, i, big, 20000 - (size_t)i);
        inbox_check(&b.inbox, 2 * (size_t)i + 1, 10, noise, i);
    }
    test_free(big);
    test_free(noise);
    test_side_close(&a);
    test_side_close(&b);
}

static void split_one_byte_at_a_time(void **state)
{
    (void)state;
    split_run(NULL);
}

static void split_random(void **state)
{
    struct common_test_rng rng;

    (void)state;
    common_test_rng_seed(&rng, "split_random");
    for (int i = 0; i < 20; i++) {
        split_run(&rng);
    }
}

static void ping_delivers_nothing(void **state)
{
    struct test_side a;
    struct test_side b;

    (void)state;
    test_pair_open(&a, &b, &keys);
    assert_int_equal(transport__session_seal_ping(b.session, &b.out), 0);
    assert_true(b.out.size > 0);
    assert_int_equal(test_carry(&b, &a), 0);
    assert_int_equal(a.inbox.count, 0);
    test_side_close(&a);
    test_side_close(&b);
}

static bool is_bucket(size_t body)
{
    if (body > SESSION_PAD_STEP) {
        return body % SESSION_PAD_STEP == 0;
    }
    return body >= SESSION_PAD_MIN && (body & (body - 1)) == 0;
}

/* With padding, a frame's length on the wire is a bucket plus the fixed
 * overhead, whatever the message's size; the receiver strips it. */
static void padding_hides_sizes(void **state)
{
    static const size_t sizes[] = {0,    1,     63,    64,    65,
                                   1000, 40000, 65537, 200000};
    size_t overhead = SESSION_HEADER_SIZE + 2 * SESSION_TAG_BYTES;
    struct test_side a;
    struct test_side b;

    (void)state;
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    a.config.pad_frames = true;
    test_side_open(&a);
    test_side_open(&b);
    test_handshake(&a, &b);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint8_t *bytes = message_make(sizes[i], false);

        assert_int_equal(
            transport__session_seal(a.session, 3, bytes, sizes[i], &a.out), 0);
        assert_true(is_bucket(a.out.size - overhead));
        assert_int_equal(test_carry(&a, &b), 0);
        inbox_check(&b.inbox, i, 3, bytes, sizes[i]);
        test_free(bytes);
    }
    assert_int_equal(transport__session_seal_ping(a.session, &a.out), 0);
    assert_int_equal(a.out.size, SESSION_PAD_MIN + overhead);
    test_side_close(&a);
    test_side_close(&b);
}

static void plaintext_mode(void **state)
{
    struct test_side a;
    struct test_side b;
    uint8_t *bytes = message_make(50000, true);

    (void)state;
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    a.config.plaintext = true;
    a.config.admission = NULL;
    b.config.plaintext = true;
    b.config.admission = NULL;
    test_side_open(&a);
    test_side_open(&b);
    test_handshake(&a, &b);
    assert_true(transport__session_established(a.session));
    assert_true(transport__session_established(b.session));
    assert_true(transport_node_id_equal(transport__session_peer(a.session),
                                        &keys.b.id));
    assert_true(transport_node_id_equal(transport__session_peer(b.session),
                                        &keys.a.id));
    assert_int_equal(
        transport__session_seal(a.session, 9, bytes, 50000, &a.out), 0);
    assert_int_equal(transport__session_seal(a.session, 8, bytes, 10, &a.out),
                     0);
    assert_int_equal(transport__session_seal(a.session, 7, NULL, 0, &a.out), 0);
    feed_in_pieces(&a, &b, NULL);
    inbox_check(&b.inbox, 0, 9, bytes, 50000);
    inbox_check(&b.inbox, 1, 8, bytes, 10);
    inbox_check(&b.inbox, 2, 7, bytes, 0);
    test_free(bytes);
    test_side_close(&a);
    test_side_close(&b);

    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    a.config.plaintext = true;
    b.config.plaintext = true;
    a.config.expected_peer = &keys.c.id;
    test_side_open(&a);
    test_side_open(&b);
    test_handshake(&a, &b);
    /* The acceptor checks nothing in plaintext mode; the initiator still
     * refuses a peer that names itself other than the one it dialed. */
    assert_int_equal(a.rc, TRANSPORT_EAUTH);
    assert_false(transport__session_established(a.session));
    assert_null(transport__session_peer(a.session));
    test_side_close(&a);
    test_side_close(&b);
}

/* Every allocation of a handshake and two messages made to fail in turn:
 * each failure is COMMON_ENOMEM, latched or refused, and leaks nothing. */
static void out_of_memory(void **state)
{
    struct common_heap saved;
    uint8_t *bytes = message_make(9000, true);

    (void)state;
    common_heap_get(&saved);
    for (uint64_t fail_at = 1; fail_at < 40; fail_at++) {
        struct common_heap_fault fault;
        struct common_heap heap;
        struct test_side a;
        struct test_side b;
        int rc;

        test_side_init(&a, &keys, true);
        test_side_init(&b, &keys, false);
        test_side_open(&a);
        test_side_open(&b);
        common_heap_fault_init(&fault, fail_at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        rc = transport__session_start(a.session, &a.out);
        for (int step = 0; step < 3 && rc == 0; step++) {
            rc = step % 2 == 0 ? test_carry(&a, &b) : test_carry(&b, &a);
        }
        if (rc == 0) {
            rc = transport__session_seal(a.session, 1, bytes, 9000, &a.out);
        }
        if (rc == 0) {
            rc = test_carry(&a, &b);
        }
        common_heap_set(&saved);
        assert_true(rc == 0 || rc == COMMON_ENOMEM);
        assert_true(rc == COMMON_ENOMEM || b.inbox.count == 1);
        test_side_close(&a);
        test_side_close(&b);
    }
    test_free(bytes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(handshake_authorized_keys),
        cmocka_unit_test(handshake_cluster_secret),
        cmocka_unit_test(handshake_secret_and_list),
        cmocka_unit_test(handshake_wrong_expected_peer),
        cmocka_unit_test(handshake_unlisted_initiator),
        cmocka_unit_test(handshake_unlisted_acceptor),
        cmocka_unit_test(handshake_wrong_initiator_key),
        cmocka_unit_test(handshake_wrong_acceptor_key),
        cmocka_unit_test(handshake_wrong_cluster_secret),
        cmocka_unit_test(messages_sizes),
        cmocka_unit_test(messages_never_compressed),
        cmocka_unit_test(split_one_byte_at_a_time),
        cmocka_unit_test(split_random),
        cmocka_unit_test(ping_delivers_nothing),
        cmocka_unit_test(padding_hides_sizes),
        cmocka_unit_test(plaintext_mode),
        cmocka_unit_test(out_of_memory),
    };

    return cmocka_run_group_tests(tests, group_setup, NULL);
}
