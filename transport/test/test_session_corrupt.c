/* SPDX-License-Identifier: MIT
 *
 * test_session_corrupt.c: the session against damaged, replayed,
 * reordered, truncated and oversize input. Goal: every such input fails
 * with TRANSPORT_EPROTO (frames) or TRANSPORT_EAUTH (the handshake's
 * proofs), delivers nothing, latches the session, and never makes it
 * buffer more than the largest frame allowed; truncated input just waits.
 * Method: sessions wired back to back (session_test.h); each damaged copy
 * goes to a fresh pair; plaintext-mode frames are written by hand to reach
 * the checks behind the cipher; a counting heap records the largest block.
 */
#include "session_test.h"

#include <lz4.h>

static struct test_keys keys;

static int group_setup(void **state)
{
    common_test_group_setup(state);
    test_keys_make(&keys);
    return 0;
}

/* The frame sides a and b would exchange for a message of size bytes
 * (compressible or random), with or without padding. */
struct frame_case {
    size_t size;
    bool compressible;
    bool pad;
};

static void pair_open_case(struct test_side *a, struct test_side *b,
                           const struct frame_case *c)
{
    test_side_init(a, &keys, true);
    test_side_init(b, &keys, false);
    a->config.pad_frames = c->pad;
    test_side_open(a);
    test_side_open(b);
    test_handshake(a, b);
    assert_true(transport__session_established(b->session));
}

static void case_seal(struct test_side *a, const struct frame_case *c)
{
    uint8_t bytes[8192];

    for (size_t i = 0; i < c->size; i++) {
        bytes[i] = c->compressible ? (uint8_t)(i % 7) : (uint8_t)(i * 167);
    }
    assert_true(c->size <= sizeof(bytes));
    assert_int_equal(
        transport__session_seal(a->session, 42, bytes, c->size, &a->out), 0);
}

/* Flips each bit of a frame in turn, each into a fresh pair: EPROTO and
 * nothing delivered, every time; then the session refuses more input. */
static void flips_run(const struct frame_case *c)
{
    struct test_side a;
    struct test_side b;
    size_t frame_size;

    pair_open_case(&a, &b, c);
    case_seal(&a, c);
    frame_size = a.out.size;
    test_side_close(&a);
    test_side_close(&b);
    for (size_t bit = 0; bit < 8 * frame_size; bit++) {
        pair_open_case(&a, &b, c);
        case_seal(&a, c);
        assert_int_equal(a.out.size, frame_size);
        a.out.data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(test_carry(&a, &b), TRANSPORT_EPROTO);
        assert_int_equal(b.inbox.count, 0);
        case_seal(&a, c);
        assert_int_equal(test_carry(&a, &b), TRANSPORT_EPROTO);
        assert_int_equal(b.inbox.count, 0);
        test_side_close(&a);
        test_side_close(&b);
    }
}

static void bit_flips_small_frame(void **state)
{
    const struct frame_case c = {.size = 20};

    (void)state;
    flips_run(&c);
}

static void bit_flips_compressed_frame(void **state)
{
    const struct frame_case c = {.size = 8000, .compressible = true};

    (void)state;
    flips_run(&c);
}

static void bit_flips_padded_frame(void **state)
{
    const struct frame_case c = {.size = 5, .pad = true};

    (void)state;
    flips_run(&c);
}

/* Seals messages 0, 1 and 2 from a, each a frame of its own: their
 * offsets in a.out go to ends[]. */
static void three_frames(struct test_side *a, size_t *ends)
{
    for (uint16_t i = 0; i < 3; i++) {
        assert_int_equal(
            transport__session_seal(a->session, i, "abc", 3, &a->out), 0);
        ends[i] = a->out.size;
    }
}

static void replayed_frame(void **state)
{
    struct test_side a;
    struct test_side b;
    size_t ends[3];

    (void)state;
    test_pair_open(&a, &b, &keys);
    three_frames(&a, ends);
    assert_int_equal(test_side_feed(&b, a.out.data, ends[0]), 0);
    assert_int_equal(test_side_feed(&b, a.out.data, ends[0]), TRANSPORT_EPROTO);
    assert_int_equal(b.inbox.count, 1);
    /* Latched: even the genuine next frame is refused now. */
    assert_int_equal(
        test_side_feed(&b, a.out.data + ends[0], ends[1] - ends[0]),
        TRANSPORT_EPROTO);
    assert_int_equal(b.inbox.count, 1);
    assert_int_equal(transport__session_seal(b.session, 1, "x", 1, &b.out),
                     TRANSPORT_EPROTO);
    test_side_close(&a);
    test_side_close(&b);
}

static void reordered_frame(void **state)
{
    struct test_side a;
    struct test_side b;
    size_t ends[3];

    (void)state;
    test_pair_open(&a, &b, &keys);
    three_frames(&a, ends);
    assert_int_equal(
        test_side_feed(&b, a.out.data + ends[0], ends[1] - ends[0]),
        TRANSPORT_EPROTO);
    assert_int_equal(b.inbox.count, 0);
    test_side_close(&a);
    test_side_close(&b);
}

static void dropped_frame(void **state)
{
    struct test_side a;
    struct test_side b;
    size_t ends[3];

    (void)state;
    test_pair_open(&a, &b, &keys);
    three_frames(&a, ends);
    assert_int_equal(test_side_feed(&b, a.out.data, ends[0]), 0);
    assert_int_equal(
        test_side_feed(&b, a.out.data + ends[1], ends[2] - ends[1]),
        TRANSPORT_EPROTO);
    assert_int_equal(b.inbox.count, 1);
    test_side_close(&a);
    test_side_close(&b);
}

static void truncated_frame_waits(void **state)
{
    struct test_side a;
    struct test_side b;

    (void)state;
    test_pair_open(&a, &b, &keys);
    assert_int_equal(transport__session_seal(a.session, 4, "hello", 5, &a.out),
                     0);
    for (size_t size = 0; size < a.out.size; size++) {
        struct test_side c;
        struct test_side d;

        test_pair_open(&c, &d, &keys);
        assert_int_equal(
            transport__session_seal(c.session, 4, "hello", 5, &c.out), 0);
        assert_int_equal(test_side_feed(&d, c.out.data, size), 0);
        assert_int_equal(d.inbox.count, 0);
        assert_int_equal(
            test_side_feed(&d, c.out.data + size, c.out.size - size), 0);
        assert_int_equal(d.inbox.count, 1);
        test_side_close(&c);
        test_side_close(&d);
    }
    test_side_close(&a);
    test_side_close(&b);
}

/* The largest block allocated while the counting heap is installed. */
static size_t largest_block;

static void *counting_malloc(void *ctx, size_t size)
{
    (void)ctx;
    largest_block = size > largest_block ? size : largest_block;
    return test_malloc(size);
}

static void *counting_realloc(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    largest_block = size > largest_block ? size : largest_block;
    return test_realloc(ptr, size);
}

static void counting_free(void *ctx, void *ptr)
{
    (void)ctx;
    test_free(ptr);
}

static const struct common_heap counting_heap = {
    .malloc = counting_malloc,
    .realloc = counting_realloc,
    .free = counting_free,
};

/* A peer allowed larger messages sends one past the receiver's bound: the
 * receiver refuses the header, before the body, allocating no more than
 * its own bound. */
static void oversize_frame_refused(void **state)
{
    size_t size = 300000;
    struct common_heap saved;
    struct test_side a;
    struct test_side b;
    uint8_t *bytes = test_malloc(size);

    (void)state;
    randombytes_buf(bytes, size);
    test_side_init(&a, &keys, true);
    test_side_init(&b, &keys, false);
    b.config.max_message_bytes = 65536;
    test_side_open(&a);
    test_side_open(&b);
    test_handshake(&a, &b);
    assert_int_equal(transport__session_seal(a.session, 1, bytes, size, &a.out),
                     0);
    common_heap_get(&saved);
    common_heap_set(&counting_heap);
    largest_block = 0;
    assert_int_equal(
        test_side_feed(&b, a.out.data, SESSION_HEADER_SIZE + SESSION_TAG_BYTES),
        TRANSPORT_EPROTO);
    common_heap_set(&saved);
    assert_true(largest_block <= 65536 + 2 * SESSION_PAD_STEP);
    assert_int_equal(b.inbox.count, 0);
    test_free(bytes);
    test_side_close(&a);
    test_side_close(&b);
}

/* Two plaintext sessions past their hellos: b receives what the test
 * writes by hand. */
static void plain_pair_open(struct test_side *a, struct test_side *b)
{
    test_side_init(a, &keys, true);
    test_side_init(b, &keys, false);
    a->config.plaintext = true;
    b->config.plaintext = true;
    b->config.max_message_bytes = 65536;
    test_side_open(a);
    test_side_open(b);
    test_handshake(a, b);
    assert_true(transport__session_established(b->session));
}

static size_t plain_frame(uint8_t *out, uint32_t body, uint32_t payload,
                          uint16_t type, uint8_t flags)
{
    common_put_u32le(out, body);
    common_put_u32le(out + 4, payload);
    common_put_u16le(out + 8, type);
    out[10] = flags;
    return SESSION_HEADER_SIZE;
}

/* A header claiming a 4 GiB body is refused at once, nothing buffered. */
static void plaintext_oversize_length(void **state)
{
    struct common_heap saved;
    struct test_side a;
    struct test_side b;
    uint8_t frame[SESSION_HEADER_SIZE];

    (void)state;
    plain_pair_open(&a, &b);
    plain_frame(frame, UINT32_MAX, UINT32_MAX, 1, 0);
    common_heap_get(&saved);
    common_heap_set(&counting_heap);
    largest_block = 0;
    assert_int_equal(test_side_feed(&b, frame, sizeof(frame)),
                     TRANSPORT_EPROTO);
    common_heap_set(&saved);
    assert_true(largest_block < 1024);
    test_side_close(&a);
    test_side_close(&b);
}

/* Headers and bodies the sealing side never writes, one per fresh pair. */
static void plaintext_malformed(void **state)
{
    uint8_t lz4_block[64];
    uint8_t zeros[100] = {0};
    int lz4_size =
        LZ4_compress_default((const char *)zeros, (char *)lz4_block, 100, 64);
    struct {
        uint32_t body, payload;
        uint16_t type;
        uint8_t flags;
        uint32_t original; /* for COMPRESSED: written first in the body */
        uint8_t pad_byte;  /* written into the padding */
    } cases[] = {
        {10, 10, 1, 8, 0, 0},       /* unknown flag */
        {10, 4, 1, 0, 0, 0},        /* padding without PADDED */
        {10, 11, 1, 2, 0, 0},       /* payload past the body */
        {64, 0, 1, 4 | 2, 0, 0},    /* ping with a type */
        {5, 5, 0, 4, 0, 0},         /* ping with a payload */
        {4, 4, 1, 1, 100, 0},       /* compressed, no block */
        {70000, 70000, 1, 0, 0, 0}, /* past max_message_bytes */
        {64, 10, 1, 2, 0, 1},       /* non-zero padding */
        {(uint32_t)lz4_size + 4, (uint32_t)lz4_size + 4, 1, 1, 0, 0},
        {(uint32_t)lz4_size + 4, (uint32_t)lz4_size + 4, 1, 1, 99, 0},
        {(uint32_t)lz4_size + 4, (uint32_t)lz4_size + 4, 1, 1, 70000, 0},
    };

    (void)state;
    assert_true(lz4_size > 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint8_t frame[SESSION_HEADER_SIZE + 128] = {0};
        struct test_side a;
        struct test_side b;
        size_t body_size = cases[i].body <= 128 ? cases[i].body : 128;

        plain_pair_open(&a, &b);
        plain_frame(frame, cases[i].body, cases[i].payload, cases[i].type,
                    cases[i].flags);
        if (cases[i].flags & SESSION_FLAG_COMPRESSED) {
            common_put_u32le(frame + SESSION_HEADER_SIZE, cases[i].original);
            memcpy(frame + SESSION_HEADER_SIZE + 4, lz4_block,
                   (size_t)lz4_size);
        }
        frame[SESSION_HEADER_SIZE + body_size - 1] |= cases[i].pad_byte;
        assert_int_equal(
            test_side_feed(&b, frame, SESSION_HEADER_SIZE + body_size),
            TRANSPORT_EPROTO);
        assert_int_equal(b.inbox.count, 0);
        test_side_close(&a);
        test_side_close(&b);
    }
}

/* The same hand-written compressed frame with the right original size is
 * accepted: the cases above fail for their one defect. */
static void plaintext_compressed_accepted(void **state)
{
    uint8_t frame[SESSION_HEADER_SIZE + 128] = {0};
    uint8_t zeros[100] = {0};
    struct test_side a;
    struct test_side b;
    int lz4_size;

    (void)state;
    lz4_size = LZ4_compress_default(
        (const char *)zeros, (char *)frame + SESSION_HEADER_SIZE + 4, 100, 64);
    assert_true(lz4_size > 0);
    plain_frame(frame, (uint32_t)lz4_size + 4, (uint32_t)lz4_size + 4, 1, 1);
    common_put_u32le(frame + SESSION_HEADER_SIZE, 100);
    plain_pair_open(&a, &b);
    assert_int_equal(
        test_side_feed(&b, frame, SESSION_HEADER_SIZE + 4 + (size_t)lz4_size),
        0);
    assert_int_equal(b.inbox.count, 1);
    assert_int_equal(b.inbox.sizes[0], 100);
    assert_memory_equal(b.inbox.bytes[0], zeros, 100);
    test_side_close(&a);
    test_side_close(&b);
}

/* Every bit of the reply flipped: the initiator refuses it (EAUTH); every
 * bit of the proof: the acceptor does. */
static void handshake_bit_flips(void **state)
{
    (void)state;
    for (size_t bit = 0; bit < 8 * SESSION_REPLY_SIZE; bit++) {
        struct test_side a;
        struct test_side b;

        test_side_init(&a, &keys, true);
        test_side_init(&b, &keys, false);
        test_side_open(&a);
        test_side_open(&b);
        assert_int_equal(transport__session_start(a.session, &a.out), 0);
        assert_int_equal(test_carry(&a, &b), 0);
        b.out.data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(test_carry(&b, &a), TRANSPORT_EAUTH);
        assert_int_equal(a.out.size, 0);
        test_side_close(&a);
        test_side_close(&b);
    }
    for (size_t bit = 0; bit < 8 * SESSION_PROOF_SIZE; bit++) {
        struct test_side a;
        struct test_side b;

        test_side_init(&a, &keys, true);
        test_side_init(&b, &keys, false);
        test_side_open(&a);
        test_side_open(&b);
        assert_int_equal(transport__session_start(a.session, &a.out), 0);
        assert_int_equal(test_carry(&a, &b), 0);
        assert_int_equal(test_carry(&b, &a), 0);
        a.out.data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(test_carry(&a, &b), TRANSPORT_EAUTH);
        assert_false(transport__session_established(b.session));
        test_side_close(&a);
        test_side_close(&b);
    }
}

/* A hello with a wrong magic or version is EPROTO; one whose ephemeral is
 * a low-order point (zero) is EAUTH. */
static void handshake_bad_hello(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++) {
        struct test_side a;
        struct test_side b;

        test_side_init(&a, &keys, true);
        test_side_init(&b, &keys, false);
        test_side_open(&a);
        test_side_open(&b);
        assert_int_equal(transport__session_start(a.session, &a.out), 0);
        if (i == 0) {
            a.out.data[0] ^= 1;
        } else if (i == 1) {
            a.out.data[SESSION_MAGIC_SIZE] = 2;
        } else {
            memset(a.out.data + SESSION_MAGIC_SIZE + 1, 0, SESSION_DH_BYTES);
        }
        assert_int_equal(test_carry(&a, &b),
                         i < 2 ? TRANSPORT_EPROTO : TRANSPORT_EAUTH);
        assert_int_equal(b.out.size, 0);
        test_side_close(&a);
        test_side_close(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bit_flips_small_frame),
        cmocka_unit_test(bit_flips_compressed_frame),
        cmocka_unit_test(bit_flips_padded_frame),
        cmocka_unit_test(replayed_frame),
        cmocka_unit_test(reordered_frame),
        cmocka_unit_test(dropped_frame),
        cmocka_unit_test(truncated_frame_waits),
        cmocka_unit_test(oversize_frame_refused),
        cmocka_unit_test(plaintext_oversize_length),
        cmocka_unit_test(plaintext_malformed),
        cmocka_unit_test(plaintext_compressed_accepted),
        cmocka_unit_test(handshake_bit_flips),
        cmocka_unit_test(handshake_bad_hello),
    };

    return cmocka_run_group_tests(tests, group_setup, NULL);
}
