/* SPDX-License-Identifier: MIT
 *
 * Goal: the Raft message codec (src/wire.h) gives back every field of every
 * message type, lays out decoded memory exactly as libraft's receive path
 * frees it, and refuses malformed bytes with CONSENSUS_EPROTO without
 * crashing, leaking or allocating what the bytes merely claim.
 * Method: round trips with every field set away from its default, compared
 * field by field and byte for byte; every truncation, trailing bytes and
 * hand-made bad encodings; libraft's heap routed to cmocka's test_malloc
 * (leaks and double frees fail the test) with a countdown that makes the
 * Nth raft_malloc fail; frees done the way libraft's legacy.c recvCb,
 * recv_append_entries.c and recv_install_snapshot.c do them.
 */
#include "common_test.h"

#include <string.h>

#include "wire.h"

/* ------------------------------------------------------------------------
 * libraft's heap on cmocka's allocator, with a failure countdown
 * ------------------------------------------------------------------------ */

static uint64_t raft_allocations; /* raft_malloc/calloc/realloc calls */
static uint64_t raft_fail_at;     /* the call to fail, 1-based; 0: none */

static bool raft_heap_should_fail(void)
{
    raft_allocations++;
    return raft_fail_at != 0 && raft_allocations == raft_fail_at;
}

static void *heap_malloc(void *data, size_t size)
{
    (void)data;
    return raft_heap_should_fail() ? NULL : test_malloc(size);
}

static void heap_free(void *data, void *ptr)
{
    (void)data;
    test_free(ptr);
}

static void *heap_calloc(void *data, size_t count, size_t size)
{
    (void)data;
    return raft_heap_should_fail() ? NULL : test_calloc(count, size);
}

static void *heap_realloc(void *data, void *ptr, size_t size)
{
    (void)data;
    return raft_heap_should_fail() ? NULL : test_realloc(ptr, size);
}

static void *heap_aligned_alloc(void *data, size_t alignment, size_t size)
{
    (void)data;
    (void)alignment;
    (void)size;
    fail_msg("the codec never asks for aligned memory");
    return NULL;
}

static void heap_aligned_free(void *data, size_t alignment, void *ptr)
{
    (void)data;
    (void)alignment;
    (void)ptr;
    fail_msg("the codec never asks for aligned memory");
}

static struct raft_heap test_raft_heap = {
    .data = NULL,
    .malloc = heap_malloc,
    .free = heap_free,
    .calloc = heap_calloc,
    .realloc = heap_realloc,
    .aligned_alloc = heap_aligned_alloc,
    .aligned_free = heap_aligned_free,
};

static int setup(void **state)
{
    (void)state;
    common_test_install();
    raft_heap_set(&test_raft_heap);
    raft_allocations = 0;
    raft_fail_at = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    raft_heap_set_default();
    return 0;
}

/* ------------------------------------------------------------------------
 * Sample messages, every field away from its default
 * ------------------------------------------------------------------------ */

static uint8_t command_bytes[1000];
static uint8_t barrier_bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};

static const char *const addresses[3] = {
    "a1@10.0.0.1:7001",
    "",
    "c3@[fe80::1]:7003",
};

static void conf_sample(struct raft_configuration *conf)
{
    raft_configuration_init(conf);
    assert_int_equal(raft_configuration_add(conf, 1, addresses[0], RAFT_VOTER),
                     0);
    assert_int_equal(
        raft_configuration_add(conf, UINT64_MAX, addresses[1], RAFT_STANDBY),
        0);
    assert_int_equal(
        raft_configuration_add(conf, 300, addresses[2], RAFT_SPARE), 0);
}

/* A RAFT_CHANGE payload as libraft writes it; raft_free it. */
static struct raft_buffer change_sample(void)
{
    struct raft_configuration conf;
    struct raft_buffer buf;

    conf_sample(&conf);
    assert_int_equal(raft_configuration_encode(&conf, &buf), 0);
    raft_configuration_close(&conf);
    return buf;
}

/* entries[0..6): commands with data and empty, a barrier, a change. The
 * caller owns entries[4].buf.base (the change payload). */
static void entries_sample(struct raft_entry *entries)
{
    for (size_t i = 0; i < sizeof(command_bytes); i++) {
        command_bytes[i] = (uint8_t)(i * 7 + 3);
    }
    memset(entries, 0, 6 * sizeof(*entries));
    entries[0] = (struct raft_entry){
        .term = 5, .type = RAFT_COMMAND, .buf = {command_bytes, 1000}};
    entries[1] = (struct raft_entry){.term = 5, .type = RAFT_COMMAND};
    entries[2] = (struct raft_entry){
        .term = 6, .type = RAFT_BARRIER, .buf = {barrier_bytes, 8}};
    entries[3] = (struct raft_entry){.term = 6, .type = RAFT_BARRIER};
    entries[4] = (struct raft_entry){
        .term = UINT64_MAX, .type = RAFT_CHANGE, .buf = change_sample()};
    entries[5] = (struct raft_entry){
        .term = UINT64_MAX, .type = RAFT_COMMAND, .buf = {command_bytes, 3}};
}

static struct raft_message append_entries_sample(struct raft_entry *entries,
                                                 unsigned n)
{
    struct raft_message m = {.type = RAFT_APPEND_ENTRIES,
                             .server_id = 9,
                             .server_address = "ignored"};

    m.append_entries = (struct raft_append_entries){
        .version = 3,
        .term = UINT64_C(1) << 40,
        .prev_log_index = 123456789,
        .prev_log_term = 77,
        .leader_commit = UINT64_MAX,
        .entries = entries,
        .n_entries = n,
    };
    return m;
}

static struct raft_message install_snapshot_sample(uint8_t *data, size_t size)
{
    struct raft_message m = {.type = RAFT_INSTALL_SNAPSHOT};

    m.install_snapshot = (struct raft_install_snapshot){
        .version = 200,
        .term = 12,
        .last_index = UINT64_MAX - 1,
        .last_term = 11,
        .conf_index = 1ull << 33,
        .data = {data, size},
    };
    conf_sample(&m.install_snapshot.conf);
    return m;
}

/* The four types without memory, each twice with the booleans flipped. */
static size_t small_samples(struct raft_message *out)
{
    size_t n = 0;

    for (int flip = 0; flip < 2; flip++) {
        out[n].type = RAFT_APPEND_ENTRIES_RESULT;
        out[n++].append_entries_result = (struct raft_append_entries_result){
            .version = (unsigned char)(2 + flip),
            .term = 129,
            .rejected = flip ? 0 : UINT64_MAX,
            .last_log_index = 16384,
            .features = 0xfffe,
            .capacity = (unsigned short)(flip ? 0 : 0x8001)};
        out[n].type = RAFT_REQUEST_VOTE;
        out[n++].request_vote =
            (struct raft_request_vote){.version = 2,
                                       .term = 44,
                                       .candidate_id = flip ? 1 : UINT64_MAX,
                                       .last_log_index = 1000,
                                       .last_log_term = 43,
                                       .disrupt_leader = !flip,
                                       .pre_vote = flip};
        out[n].type = RAFT_REQUEST_VOTE_RESULT;
        out[n++].request_vote_result =
            (struct raft_request_vote_result){.version = 255,
                                              .term = 45,
                                              .vote_granted = !flip,
                                              .pre_vote = flip,
                                              .features = 1,
                                              .capacity = 0xffff};
        out[n].type = RAFT_TIMEOUT_NOW;
        out[n++].timeout_now =
            (struct raft_timeout_now){.version = (unsigned char)(1 + flip),
                                      .term = 46,
                                      .last_log_index = 2000,
                                      .last_log_term = UINT64_MAX};
    }
    return n;
}

/* ------------------------------------------------------------------------
 * Comparison
 * ------------------------------------------------------------------------ */

static void assert_entries_equal(const struct raft_append_entries *a,
                                 const struct raft_append_entries *b)
{
    size_t offset = 0;

    assert_int_equal(a->n_entries, b->n_entries);
    if (b->n_entries == 0) {
        assert_null(b->entries);
        return;
    }
    for (unsigned i = 0; i < b->n_entries; i++) {
        const struct raft_entry *x = &a->entries[i];
        const struct raft_entry *y = &b->entries[i];

        assert_true(x->term == y->term);
        assert_int_equal(x->type, y->type);
        assert_int_equal(x->buf.len, y->buf.len);
        /* One batch for all, payloads back to back in it. */
        assert_non_null(y->batch);
        assert_ptr_equal(y->batch, b->entries[0].batch);
        if (y->buf.len == 0) {
            assert_null(y->buf.base);
            continue;
        }
        assert_ptr_equal(y->buf.base, (uint8_t *)y->batch + offset);
        assert_memory_equal(x->buf.base, y->buf.base, y->buf.len);
        offset += y->buf.len;
    }
}

static void assert_conf_equal(const struct raft_configuration *a,
                              const struct raft_configuration *b)
{
    assert_int_equal(a->n, b->n);
    for (unsigned i = 0; i < a->n; i++) {
        assert_true(a->servers[i].id == b->servers[i].id);
        assert_int_equal(a->servers[i].role, b->servers[i].role);
        assert_string_equal(a->servers[i].address, b->servers[i].address);
    }
}

static void assert_snapshot_equal(const struct raft_install_snapshot *a,
                                  const struct raft_install_snapshot *b)
{
    assert_int_equal(a->version, b->version);
    assert_true(a->term == b->term);
    assert_true(a->last_index == b->last_index);
    assert_true(a->last_term == b->last_term);
    assert_true(a->conf_index == b->conf_index);
    assert_conf_equal(&a->conf, &b->conf);
    assert_int_equal(a->data.len, b->data.len);
    if (b->data.len == 0) {
        assert_null(b->data.base);
    } else {
        assert_memory_equal(a->data.base, b->data.base, b->data.len);
    }
}

static void assert_small_equal(const struct raft_message *a,
                               const struct raft_message *b)
{
    switch (a->type) {
    case RAFT_APPEND_ENTRIES_RESULT: {
        const struct raft_append_entries_result *x = &a->append_entries_result;
        const struct raft_append_entries_result *y = &b->append_entries_result;

        assert_int_equal(x->version, y->version);
        assert_true(x->term == y->term && x->rejected == y->rejected &&
                    x->last_log_index == y->last_log_index);
        assert_int_equal(x->features, y->features);
        assert_int_equal(x->capacity, y->capacity);
        break;
    }
    case RAFT_REQUEST_VOTE: {
        const struct raft_request_vote *x = &a->request_vote;
        const struct raft_request_vote *y = &b->request_vote;

        assert_int_equal(x->version, y->version);
        assert_true(x->term == y->term && x->candidate_id == y->candidate_id &&
                    x->last_log_index == y->last_log_index &&
                    x->last_log_term == y->last_log_term);
        assert_int_equal(x->disrupt_leader, y->disrupt_leader);
        assert_int_equal(x->pre_vote, y->pre_vote);
        break;
    }
    case RAFT_REQUEST_VOTE_RESULT: {
        const struct raft_request_vote_result *x = &a->request_vote_result;
        const struct raft_request_vote_result *y = &b->request_vote_result;

        assert_int_equal(x->version, y->version);
        assert_true(x->term == y->term);
        assert_int_equal(x->vote_granted, y->vote_granted);
        assert_int_equal(x->pre_vote, y->pre_vote);
        assert_int_equal(x->features, y->features);
        assert_int_equal(x->capacity, y->capacity);
        break;
    }
    default: {
        const struct raft_timeout_now *x = &a->timeout_now;
        const struct raft_timeout_now *y = &b->timeout_now;

        assert_int_equal(a->type, RAFT_TIMEOUT_NOW);
        assert_int_equal(x->version, y->version);
        assert_true(x->term == y->term &&
                    x->last_log_index == y->last_log_index &&
                    x->last_log_term == y->last_log_term);
        break;
    }
    }
}

static void assert_messages_equal(const struct raft_message *a,
                                  const struct raft_message *b)
{
    assert_int_equal(a->type, b->type);
    assert_true(b->server_id == 0);
    assert_null(b->server_address);
    if (a->type == RAFT_APPEND_ENTRIES) {
        const struct raft_append_entries *x = &a->append_entries;
        const struct raft_append_entries *y = &b->append_entries;

        assert_int_equal(x->version, y->version);
        assert_true(x->term == y->term &&
                    x->prev_log_index == y->prev_log_index &&
                    x->prev_log_term == y->prev_log_term &&
                    x->leader_commit == y->leader_commit);
        assert_entries_equal(x, y);
    } else if (a->type == RAFT_INSTALL_SNAPSHOT) {
        assert_snapshot_equal(&a->install_snapshot, &b->install_snapshot);
    } else {
        assert_small_equal(a, b);
    }
}

/* Encodes m into buf (initialised here; the caller closes it). */
static void encode(const struct raft_message *m, struct common_buf *buf)
{
    common_buf_init(buf, SIZE_MAX);
    assert_int_equal(consensus__wire_encode(m, buf), 0);
}

/* Encodes m, decodes, compares, checks the encoding is canonical (the
 * decoded message encodes to the same bytes), releases. */
static void round_trip(const struct raft_message *m)
{
    struct common_buf first;
    struct common_buf second;
    struct raft_message decoded;

    encode(m, &first);
    assert_int_equal(first.data[0], CONSENSUS_WIRE_FORMAT_VERSION);
    assert_int_equal(first.data[1], m->type);
    assert_int_equal(consensus__wire_decode(first.data, first.size, &decoded),
                     0);
    assert_messages_equal(m, &decoded);
    encode(&decoded, &second);
    assert_int_equal(first.size, second.size);
    assert_memory_equal(first.data, second.data, first.size);
    consensus__wire_message_release(&decoded);
    common_buf_close(&first);
    common_buf_close(&second);
}

/* ------------------------------------------------------------------------
 * Round trips
 * ------------------------------------------------------------------------ */

static void wire_round_trips_append_entries(void **state)
{
    struct raft_entry entries[6];
    struct raft_message m;

    (void)state;
    entries_sample(entries);
    m = append_entries_sample(entries, 6);
    round_trip(&m);
    /* Each entry alone, the 0-byte ones included. */
    for (unsigned i = 0; i < 6; i++) {
        m = append_entries_sample(&entries[i], 1);
        round_trip(&m);
    }
    raft_free(entries[4].buf.base);
}

static void wire_round_trips_heartbeat(void **state)
{
    struct raft_message m = append_entries_sample(NULL, 0);
    uint64_t before;

    (void)state;
    round_trip(&m);
    /* The very first AppendEntries: no previous entry at all. */
    m.append_entries.prev_log_index = 0;
    m.append_entries.prev_log_term = 0;
    before = raft_allocations;
    round_trip(&m);
    assert_true(raft_allocations == before);
}

/* Entries whose payloads are all empty still get a (1-byte) batch: libraft
 * asserts entries[0].batch != NULL and frees it. */
static void wire_empty_payloads_share_a_batch(void **state)
{
    struct raft_entry entries[3] = {
        {.term = 1, .type = RAFT_COMMAND},
        {.term = 1, .type = RAFT_BARRIER},
        {.term = 2, .type = RAFT_COMMAND},
    };
    struct raft_message m = append_entries_sample(entries, 3);
    struct raft_message decoded;
    struct common_buf buf;

    (void)state;
    round_trip(&m);
    encode(&m, &buf);
    assert_int_equal(consensus__wire_decode(buf.data, buf.size, &decoded), 0);
    assert_non_null(decoded.append_entries.entries[0].batch);
    consensus__wire_message_release(&decoded);
    common_buf_close(&buf);
}

static void wire_round_trips_small_types(void **state)
{
    struct raft_message samples[8];
    size_t n;

    (void)state;
    memset(samples, 0, sizeof(samples));
    n = small_samples(samples);
    for (size_t i = 0; i < n; i++) {
        round_trip(&samples[i]);
    }
}

static void wire_round_trips_install_snapshot(void **state)
{
    struct raft_message m;

    (void)state;
    m = install_snapshot_sample(command_bytes, sizeof(command_bytes));
    round_trip(&m);
    raft_configuration_close(&m.install_snapshot.conf);
    m = install_snapshot_sample(NULL, 0);
    round_trip(&m);
    raft_configuration_close(&m.install_snapshot.conf);
}

/* ------------------------------------------------------------------------
 * Ownership: what libraft frees is exactly what decode allocated
 * ------------------------------------------------------------------------ */

/* legacy.c recvCb and recv_append_entries.c free an AppendEntries this way:
 * the batch of entries[0], then the array. If decode had allocated more
 * (several batches), cmocka would report the leak. */
static void wire_decoded_entries_free_like_libraft(void **state)
{
    struct raft_entry entries[6];
    struct raft_message m;
    struct raft_message decoded;
    struct common_buf buf;

    (void)state;
    entries_sample(entries);
    m = append_entries_sample(entries, 6);
    encode(&m, &buf);
    raft_allocations = 0;
    assert_int_equal(consensus__wire_decode(buf.data, buf.size, &decoded), 0);
    assert_true(raft_allocations == 2);
    raft_free(decoded.append_entries.entries[0].batch);
    raft_free(decoded.append_entries.entries);
    common_buf_close(&buf);
    raft_free(entries[4].buf.base);
}

/* recv_install_snapshot.c frees a snapshot it does not install this way. */
static void wire_decoded_snapshot_frees_like_libraft(void **state)
{
    struct raft_message m = install_snapshot_sample(barrier_bytes, 8);
    struct raft_message decoded;
    struct common_buf buf;

    (void)state;
    encode(&m, &buf);
    assert_int_equal(consensus__wire_decode(buf.data, buf.size, &decoded), 0);
    raft_configuration_close(&decoded.install_snapshot.conf);
    raft_free(decoded.install_snapshot.data.base);
    common_buf_close(&buf);
    raft_configuration_close(&m.install_snapshot.conf);
}

static void wire_release_is_idempotent(void **state)
{
    struct raft_message m = install_snapshot_sample(barrier_bytes, 8);
    struct raft_message decoded;
    struct common_buf buf;

    (void)state;
    encode(&m, &buf);
    assert_int_equal(consensus__wire_decode(buf.data, buf.size, &decoded), 0);
    consensus__wire_message_release(&decoded);
    assert_int_equal(decoded.install_snapshot.conf.n, 0);
    assert_null(decoded.install_snapshot.data.base);
    consensus__wire_message_release(&decoded);
    common_buf_close(&buf);
    raft_configuration_close(&m.install_snapshot.conf);
}

/* ------------------------------------------------------------------------
 * Malformed input
 * ------------------------------------------------------------------------ */

/* All samples' encodings, for the tests that damage them. */
static size_t all_encodings(struct common_buf *bufs, struct raft_entry *ents)
{
    struct raft_message small[8];
    struct raft_message m;
    size_t n;

    memset(small, 0, sizeof(small));
    n = small_samples(small);
    for (size_t i = 0; i < n; i++) {
        encode(&small[i], &bufs[i]);
    }
    entries_sample(ents);
    m = append_entries_sample(ents, 6);
    encode(&m, &bufs[n++]);
    m = append_entries_sample(NULL, 0);
    encode(&m, &bufs[n++]);
    m = install_snapshot_sample(command_bytes, 100);
    encode(&m, &bufs[n++]);
    raft_configuration_close(&m.install_snapshot.conf);
    raft_free(ents[4].buf.base);
    return n;
}

static void close_all(struct common_buf *bufs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        common_buf_close(&bufs[i]);
    }
}

/* Decodes bytes expecting failure rc, and *out untouched. */
static void assert_decode_fails(const uint8_t *bytes, size_t size, int rc)
{
    struct raft_message out;
    struct raft_message pattern;

    memset(&out, 0xa5, sizeof(out));
    memcpy(&pattern, &out, sizeof(out));
    assert_int_equal(consensus__wire_decode(bytes, size, &out), rc);
    assert_memory_equal(&out, &pattern, sizeof(out));
}

static void wire_rejects_every_truncation(void **state)
{
    struct common_buf bufs[11];
    struct raft_entry entries[6];
    size_t n;

    (void)state;
    n = all_encodings(bufs, entries);
    for (size_t i = 0; i < n; i++) {
        for (size_t size = 0; size < bufs[i].size; size++) {
            assert_decode_fails(bufs[i].data, size, CONSENSUS_EPROTO);
        }
    }
    close_all(bufs, n);
}

static void wire_rejects_trailing_bytes(void **state)
{
    struct common_buf bufs[11];
    struct raft_entry entries[6];
    size_t n;

    (void)state;
    n = all_encodings(bufs, entries);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(common_buf_append_byte(&bufs[i], 0), 0);
        assert_decode_fails(bufs[i].data, bufs[i].size, CONSENSUS_EPROTO);
    }
    close_all(bufs, n);
}

static void wire_rejects_unknown_format_and_type(void **state)
{
    struct common_buf bufs[11];
    struct raft_entry entries[6];
    const uint8_t formats[] = {0, 2, 255};
    const uint8_t types[] = {0, 7, 255};
    size_t n;

    (void)state;
    n = all_encodings(bufs, entries);
    for (size_t i = 0; i < n; i++) {
        uint8_t *bytes = bufs[i].data;
        uint8_t saved = bytes[0];

        for (size_t k = 0; k < 3; k++) {
            bytes[0] = formats[k];
            assert_decode_fails(bytes, bufs[i].size, CONSENSUS_EPROTO);
        }
        bytes[0] = saved;
        for (size_t k = 0; k < 3; k++) {
            bytes[1] = types[k];
            assert_decode_fails(bytes, bufs[i].size, CONSENSUS_EPROTO);
        }
    }
    close_all(bufs, n);
}

/* Builds 1, type, 0 then the given varints into buf. */
static void header_and_varints(struct common_buf *buf, uint8_t type,
                               const uint64_t *values, size_t n)
{
    common_buf_init(buf, SIZE_MAX);
    assert_int_equal(common_buf_append_byte(buf, 1), 0);
    assert_int_equal(common_buf_append_byte(buf, type), 0);
    assert_int_equal(common_buf_append_byte(buf, 0), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(common_buf_append_varint(buf, values[i]), 0);
    }
}

static void wire_huge_counts_fail_before_allocating(void **state)
{
    /* term, prev index, prev term, commit, count */
    const uint64_t entry_counts[] = {UINT32_MAX, UINT64_MAX, 1000, 4};
    struct common_buf buf;

    (void)state;
    for (size_t i = 0; i < 4; i++) {
        const uint64_t values[] = {1, 1, 1, 1, entry_counts[i]};

        header_and_varints(&buf, RAFT_APPEND_ENTRIES, values, 5);
        /* Room for 3 short headers, not for the count claimed. */
        assert_int_equal(common_buf_append(&buf, "\x01\x01\x00\x01\x01", 5), 0);
        raft_allocations = 0;
        assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
        assert_true(raft_allocations == 0);
        common_buf_close(&buf);
    }
    {
        /* term, last index, last term, conf index, server count */
        const uint64_t values[] = {1, 1, 1, 1, UINT64_MAX};

        header_and_varints(&buf, RAFT_INSTALL_SNAPSHOT, values, 5);
        raft_allocations = 0;
        assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
        assert_true(raft_allocations == 0);
        common_buf_close(&buf);
    }
    {
        /* One entry claiming 2^62 bytes: only the array is allocated. */
        const uint64_t values[] = {1, 0, 0, 1, 1, 1};

        header_and_varints(&buf, RAFT_APPEND_ENTRIES, values, 5);
        assert_int_equal(common_buf_append_varint(&buf, 1), 0);
        assert_int_equal(common_buf_append_byte(&buf, RAFT_COMMAND), 0);
        assert_int_equal(common_buf_append_varint(&buf, 1ull << 62), 0);
        raft_allocations = 0;
        assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
        assert_true(raft_allocations == 1);
        common_buf_close(&buf);
    }
}

/* One AppendEntries with one entry (term, type, payload). */
static void one_entry(struct common_buf *buf, uint64_t term, uint8_t type,
                      const void *payload, size_t size)
{
    const uint64_t values[] = {1, 0, 0, 1, 1};

    header_and_varints(buf, RAFT_APPEND_ENTRIES, values, 5);
    assert_int_equal(common_buf_append_varint(buf, term), 0);
    assert_int_equal(common_buf_append_byte(buf, type), 0);
    assert_int_equal(common_buf_append_varint(buf, size), 0);
    assert_int_equal(common_buf_append(buf, payload, size), 0);
}

static void wire_rejects_bad_entries(void **state)
{
    const uint8_t types[] = {0, 4, 255};
    struct common_buf buf;

    (void)state;
    for (size_t i = 0; i < 3; i++) {
        one_entry(&buf, 1, types[i], "x", 1);
        assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
        common_buf_close(&buf);
    }
    one_entry(&buf, 0, RAFT_COMMAND, "x", 1);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
    for (uint64_t index = 0; index < 2; index++) {
        /* prev_log_index and prev_log_term: both zero or neither. */
        const uint64_t values[] = {1, index, 1 - index, 1, 0};

        header_and_varints(&buf, RAFT_APPEND_ENTRIES, values, 5);
        assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
        common_buf_close(&buf);
    }
}

/* A RAFT_CHANGE payload in libraft's format written by hand: format, the
 * claimed server count, n servers, padding to 8 bytes with pad. */
static size_t change_build(uint8_t *out, uint8_t format, uint64_t claimed,
                           const uint64_t *ids, const char *const *addrs,
                           const uint8_t *roles, size_t n, uint8_t pad)
{
    size_t size = 9;

    out[0] = format;
    common_put_u64le(out + 1, claimed);
    for (size_t i = 0; i < n; i++) {
        common_put_u64le(out + size, ids[i]);
        size += 8;
        memcpy(out + size, addrs[i], strlen(addrs[i]) + 1);
        size += strlen(addrs[i]) + 1;
        out[size++] = roles[i];
    }
    while (size % 8 != 0) {
        out[size++] = pad;
    }
    return size;
}

/* Whether a payload is accepted, alone and inside an AppendEntries. */
static bool change_is_accepted(const uint8_t *payload, size_t size)
{
    bool valid = consensus__wire_change_is_valid(payload, size);
    struct raft_message m;
    struct common_buf buf;
    int rc;

    one_entry(&buf, 1, RAFT_CHANGE, payload, size);
    rc = consensus__wire_decode(buf.data, buf.size, &m);
    common_buf_close(&buf);
    if (rc == 0) {
        consensus__wire_message_release(&m);
    } else {
        assert_int_equal(rc, CONSENSUS_EPROTO);
    }
    assert_int_equal(valid, rc == 0);
    return valid;
}

/* What libraft writes is accepted, whatever its padding. */
static void wire_accepts_libraft_change_payloads(void **state)
{
    const char *const names[5] = {"", "a", "bb", "ccc", "dddddddd"};
    struct raft_configuration conf;
    struct raft_buffer buf;

    (void)state;
    for (unsigned n = 1; n <= 5; n++) {
        raft_configuration_init(&conf);
        for (unsigned i = 0; i < n; i++) {
            assert_int_equal(
                raft_configuration_add(&conf, i + 1, names[i], (int)i % 3), 0);
        }
        assert_int_equal(raft_configuration_encode(&conf, &buf), 0);
        assert_true(change_is_accepted(buf.base, buf.len));
        /* Every truncation is refused. */
        for (size_t size = 0; size < buf.len; size++) {
            bool padding_only = true;

            for (size_t k = size; k < buf.len; k++) {
                padding_only = padding_only && ((uint8_t *)buf.base)[k] == 0;
            }
            if (!padding_only || buf.len - size >= 8) {
                assert_false(change_is_accepted(buf.base, size));
            }
        }
        raft_free(buf.base);
        raft_configuration_close(&conf);
    }
}

static void wire_rejects_bad_change_payloads(void **state)
{
    const char *const ab[3] = {"a", "b", "c"};
    const char *const aa[2] = {"a", "a"};
    const uint64_t ids[3] = {1, 2, 3};
    const uint64_t zero[2] = {1, 0};
    const uint64_t same[2] = {7, 7};
    const uint8_t roles[3] = {RAFT_VOTER, RAFT_SPARE, RAFT_STANDBY};
    const uint8_t bad_role[2] = {RAFT_VOTER, 3};
    char long_address[CONSENSUS_WIRE_ADDRESS_SIZE_MAX + 2];
    const char *const longs[1] = {long_address};
    uint8_t p[2048];
    size_t size;

    (void)state;
    size = change_build(p, 1, 2, ids, ab, roles, 2, 0);
    assert_true(change_is_accepted(p, size)); /* the baseline */
    size = change_build(p, 2, 2, ids, ab, roles, 2, 0);
    assert_false(change_is_accepted(p, size)); /* format */
    size = change_build(p, 1, 0, ids, ab, roles, 0, 0);
    assert_false(change_is_accepted(p, size)); /* no server */
    size = change_build(p, 1, 3, ids, ab, roles, 2, 0);
    assert_false(change_is_accepted(p, size)); /* count too big */
    size = change_build(p, 1, 2, ids, ab, roles, 3, 0);
    assert_false(change_is_accepted(p, size)); /* count too small */
    size = change_build(p, 1, CONSENSUS_WIRE_SERVERS_MAX + 1, ids, ab, roles, 2,
                        0);
    assert_false(change_is_accepted(p, size)); /* over the limit */
    size = change_build(p, 1, 2, zero, ab, roles, 2, 0);
    assert_false(change_is_accepted(p, size)); /* id 0 */
    size = change_build(p, 1, 2, same, ab, roles, 2, 0);
    assert_false(change_is_accepted(p, size)); /* duplicate id */
    size = change_build(p, 1, 2, ids, aa, roles, 2, 0);
    assert_false(change_is_accepted(p, size)); /* duplicate address */
    size = change_build(p, 1, 2, ids, ab, bad_role, 2, 0);
    assert_false(change_is_accepted(p, size));          /* role */
    size = change_build(p, 1, 2, ids, ab, roles, 2, 1); /* 31 + 1 pad */
    assert_false(change_is_accepted(p, size));          /* padding not zero */
    memset(long_address, 'x', sizeof(long_address) - 1);
    long_address[sizeof(long_address) - 1] = '\0';
    size = change_build(p, 1, 1, ids, longs, roles, 1, 0);
    assert_false(change_is_accepted(p, size)); /* address too long */
    long_address[sizeof(long_address) - 2] = '\0';
    size = change_build(p, 1, 1, ids, longs, roles, 1, 0);
    assert_true(change_is_accepted(p, size)); /* at the limit */
}

/* Hand-made InstallSnapshot servers: id, role, address. */
static void snapshot_with(struct common_buf *buf, const uint64_t *ids,
                          const uint8_t *roles, const char *const *addrs,
                          size_t n)
{
    const uint64_t values[] = {1, 1, 1, 1, n};

    header_and_varints(buf, RAFT_INSTALL_SNAPSHOT, values, 5);
    for (size_t i = 0; i < n; i++) {
        size_t size = strlen(addrs[i]) + (addrs[i][0] == '!' ? 1 : 0);

        assert_int_equal(common_buf_append_varint(buf, ids[i]), 0);
        assert_int_equal(common_buf_append_byte(buf, roles[i]), 0);
        assert_int_equal(common_buf_append_varint(buf, size), 0);
        assert_int_equal(common_buf_append(buf, addrs[i], size), 0);
    }
    assert_int_equal(common_buf_append_varint(buf, 0), 0);
}

static void wire_rejects_bad_configurations(void **state)
{
    const char *const ab[2] = {"a", "b"};
    const char *const aa[2] = {"a", "a"};
    const char *const nul[2] = {"a", "!b"}; /* '!': send the NUL too */
    const uint64_t ids[2] = {1, 2};
    const uint64_t zero[2] = {1, 0};
    const uint64_t same[2] = {7, 7};
    const uint8_t roles[2] = {RAFT_VOTER, RAFT_SPARE};
    const uint8_t bad_role[2] = {RAFT_VOTER, 3};
    struct common_buf buf;

    (void)state;
    snapshot_with(&buf, ids, roles, ab, 2);
    {
        struct raft_message m;

        assert_int_equal(consensus__wire_decode(buf.data, buf.size, &m), 0);
        consensus__wire_message_release(&m);
    }
    common_buf_close(&buf);
    snapshot_with(&buf, ids, roles, ab, 0);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
    snapshot_with(&buf, zero, roles, ab, 2);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
    snapshot_with(&buf, same, roles, ab, 2);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
    snapshot_with(&buf, ids, roles, aa, 2);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
    snapshot_with(&buf, ids, roles, nul, 2);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
    snapshot_with(&buf, ids, bad_role, ab, 2);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
}

static void wire_rejects_bad_scalars(void **state)
{
    struct common_buf buf;
    /* RequestVote with candidate 0; InstallSnapshot at index 0 and at
     * term 0; a non-shortest varint; unknown flag bits. */
    const uint64_t vote[] = {1, 0, 1, 1};
    const uint64_t snap_index[] = {1, 0, 1, 1};
    const uint64_t snap_term[] = {1, 1, 0, 1};

    (void)state;
    header_and_varints(&buf, RAFT_REQUEST_VOTE, vote, 4);
    assert_int_equal(common_buf_append_byte(&buf, 0), 0);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    buf.data[4] = 1; /* candidate 1: valid */
    {
        struct raft_message m;

        assert_int_equal(consensus__wire_decode(buf.data, buf.size, &m), 0);
    }
    buf.data[buf.size - 1] = 4; /* flag bit 2 */
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
    header_and_varints(&buf, RAFT_INSTALL_SNAPSHOT, snap_index, 4);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
    header_and_varints(&buf, RAFT_INSTALL_SNAPSHOT, snap_term, 4);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
    /* TimeoutNow with term 1 written as 0x81 0x00. */
    header_and_varints(&buf, RAFT_TIMEOUT_NOW, snap_term, 0);
    assert_int_equal(common_buf_append(&buf, "\x81\x00\x01\x01", 4), 0);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
    header_and_varints(&buf, RAFT_REQUEST_VOTE_RESULT, vote, 1);
    assert_int_equal(common_buf_append(&buf, "\x80\x00\x00\x00\x00", 5), 0);
    assert_decode_fails(buf.data, buf.size, CONSENSUS_EPROTO);
    common_buf_close(&buf);
}

/* ------------------------------------------------------------------------
 * Encode refusals and out of memory
 * ------------------------------------------------------------------------ */

/* encode refuses what decode would, and leaves out as it was. */
static void wire_encode_refuses_what_decode_would(void **state)
{
    struct raft_entry entries[6];
    struct raft_message m;
    struct common_buf buf;

    (void)state;
    entries_sample(entries);
    common_buf_init(&buf, SIZE_MAX);
    assert_int_equal(common_buf_append(&buf, "keep", 4), 0);
    m = append_entries_sample(entries, 6);
    entries[4].buf.len -= 8; /* cut the change payload short */
    assert_int_equal(consensus__wire_encode(&m, &buf), CONSENSUS_EPROTO);
    entries[4].buf.len += 8;
    entries[1].term = 0;
    assert_int_equal(consensus__wire_encode(&m, &buf), CONSENSUS_EPROTO);
    entries[1].term = 5;
    m.append_entries.prev_log_term = 0;
    assert_int_equal(consensus__wire_encode(&m, &buf), CONSENSUS_EPROTO);
    m = install_snapshot_sample(NULL, 0);
    m.install_snapshot.conf.servers[1].id = 1;
    assert_int_equal(consensus__wire_encode(&m, &buf), CONSENSUS_EPROTO);
    m.install_snapshot.conf.servers[1].id = 2;
    m.install_snapshot.last_term = 0;
    assert_int_equal(consensus__wire_encode(&m, &buf), CONSENSUS_EPROTO);
    raft_configuration_close(&m.install_snapshot.conf);
    m.type = (enum raft_message_type)7;
    assert_int_equal(consensus__wire_encode(&m, &buf), CONSENSUS_EPROTO);
    m.type = RAFT_REQUEST_VOTE;
    m.request_vote = (struct raft_request_vote){.term = 1};
    assert_int_equal(consensus__wire_encode(&m, &buf), CONSENSUS_EPROTO);
    assert_int_equal(buf.size, 4);
    assert_memory_equal(buf.data, "keep", 4);
    common_buf_close(&buf);
    raft_free(entries[4].buf.base);
}

static void wire_encode_respects_size_max(void **state)
{
    struct raft_entry entries[6];
    struct raft_message m;
    struct common_buf buf;
    size_t full;

    (void)state;
    entries_sample(entries);
    m = append_entries_sample(entries, 6);
    encode(&m, &buf);
    full = buf.size;
    common_buf_close(&buf);
    for (size_t size_max = 0; size_max < full; size_max += 97) {
        common_buf_init(&buf, size_max);
        assert_int_equal(consensus__wire_encode(&m, &buf), COMMON_ETOOBIG);
        assert_int_equal(buf.size, 0);
        common_buf_close(&buf);
    }
    raft_free(entries[4].buf.base);
}

/* Makes each raft_malloc of a decode fail in turn: COMMON_ENOMEM, nothing
 * leaked (cmocka checks), until the decode needs no more. */
static void wire_decode_survives_every_allocation_failure(void **state)
{
    struct common_buf bufs[11];
    struct raft_entry entries[6];
    size_t n;

    (void)state;
    n = all_encodings(bufs, entries);
    for (size_t i = 0; i < n; i++) {
        for (uint64_t fail_at = 1;; fail_at++) {
            struct raft_message m;
            int rc;

            raft_allocations = 0;
            raft_fail_at = fail_at;
            rc = consensus__wire_decode(bufs[i].data, bufs[i].size, &m);
            raft_fail_at = 0;
            if (rc == 0) {
                consensus__wire_message_release(&m);
                break;
            }
            assert_int_equal(rc, COMMON_ENOMEM);
        }
    }
    close_all(bufs, n);
}

static void wire_encode_survives_every_allocation_failure(void **state)
{
    struct common_heap_fault fault;
    struct common_heap heap;
    struct raft_entry entries[6];
    struct raft_message m;
    struct common_buf buf;

    (void)state;
    entries_sample(entries);
    m = append_entries_sample(entries, 6);
    for (uint64_t fail_at = 1;; fail_at++) {
        int rc;

        common_heap_fault_init(&fault, fail_at, 1);
        heap = common_heap_fault_heap(&fault);
        common_heap_set(&heap);
        common_buf_init(&buf, SIZE_MAX);
        rc = consensus__wire_encode(&m, &buf);
        common_buf_close(&buf);
        common_test_install();
        if (fault.failures == 0) {
            assert_int_equal(rc, 0);
            break;
        }
        assert_int_equal(rc, COMMON_ENOMEM);
    }
    raft_free(entries[4].buf.base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(wire_round_trips_append_entries),
        T(wire_round_trips_heartbeat),
        T(wire_empty_payloads_share_a_batch),
        T(wire_round_trips_small_types),
        T(wire_round_trips_install_snapshot),
        T(wire_decoded_entries_free_like_libraft),
        T(wire_decoded_snapshot_frees_like_libraft),
        T(wire_release_is_idempotent),
        T(wire_rejects_every_truncation),
        T(wire_rejects_trailing_bytes),
        T(wire_rejects_unknown_format_and_type),
        T(wire_huge_counts_fail_before_allocating),
        T(wire_rejects_bad_entries),
        T(wire_accepts_libraft_change_payloads),
        T(wire_rejects_bad_change_payloads),
        T(wire_rejects_bad_configurations),
        T(wire_rejects_bad_scalars),
        T(wire_encode_refuses_what_decode_would),
        T(wire_encode_respects_size_max),
        T(wire_decode_survives_every_allocation_failure),
        T(wire_encode_survives_every_allocation_failure),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
