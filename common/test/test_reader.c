/* SPDX-License-Identifier: MIT
 *
 * Goal: the reader decodes what the buffer encodes, and on short or bad
 * input returns COMMON_ECORRUPT without moving, so no read ever passes the
 * end of its bytes.
 * Method: round trip through common_buf; every truncation of a record.
 */
#include "common_test.h"

/* A record: u32le, varint, u64le, 3 bytes, byte. */
static int read_record(struct common_reader *reader)
{
    uint32_t u32;
    uint64_t varint;
    uint64_t u64;
    const uint8_t *bytes;
    uint8_t byte;
    int rc;

    if ((rc = common_reader_u32le(reader, &u32)) != 0 ||
        (rc = common_reader_varint(reader, &varint)) != 0 ||
        (rc = common_reader_u64le(reader, &u64)) != 0 ||
        (rc = common_reader_bytes(reader, 3, &bytes)) != 0 ||
        (rc = common_reader_byte(reader, &byte)) != 0) {
        return rc;
    }
    assert_true(u32 == 0xcafef00du);
    assert_true(varint == 1234567);
    assert_true(u64 == UINT64_MAX - 5);
    assert_memory_equal(bytes, "sql", 3);
    assert_int_equal(byte, 9);
    return 0;
}

static void write_record(struct common_buf *buf)
{
    assert_int_equal(common_buf_append_u32le(buf, 0xcafef00du), 0);
    assert_int_equal(common_buf_append_varint(buf, 1234567), 0);
    assert_int_equal(common_buf_append_u64le(buf, UINT64_MAX - 5), 0);
    assert_int_equal(common_buf_append(buf, "sql", 3), 0);
    assert_int_equal(common_buf_append_byte(buf, 9), 0);
}

static void reader_reads_what_buf_wrote(void **state)
{
    struct common_buf buf;
    struct common_reader reader;

    (void)state;
    common_buf_init(&buf, 256);
    write_record(&buf);
    common_reader_init(&reader, buf.data, buf.size);
    assert_int_equal(read_record(&reader), 0);
    assert_int_equal(common_reader_remaining(&reader), 0);
    common_buf_close(&buf);
}

static void reader_rejects_every_truncation(void **state)
{
    struct common_buf buf;

    (void)state;
    common_buf_init(&buf, 256);
    write_record(&buf);
    for (size_t size = 0; size < buf.size; size++) {
        struct common_reader reader;

        common_reader_init(&reader, buf.data, size);
        assert_int_equal(read_record(&reader), COMMON_ECORRUPT);
        assert_true(reader.offset <= size);
    }
    common_buf_close(&buf);
}

static void reader_failed_read_does_not_move(void **state)
{
    const uint8_t bytes[] = {1, 2, 0x80};
    struct common_reader reader;
    const uint8_t *p;
    uint32_t u32;
    uint64_t varint;
    uint8_t byte;

    (void)state;
    common_reader_init(&reader, bytes, sizeof(bytes));
    assert_int_equal(common_reader_byte(&reader, &byte), 0);
    assert_int_equal(common_reader_u32le(&reader, &u32), COMMON_ECORRUPT);
    assert_int_equal(reader.offset, 1);
    assert_int_equal(common_reader_bytes(&reader, 3, &p), COMMON_ECORRUPT);
    assert_int_equal(common_reader_byte(&reader, &byte), 0);
    assert_int_equal(byte, 2);
    assert_int_equal(common_reader_varint(&reader, &varint), COMMON_ECORRUPT);
    assert_int_equal(reader.offset, 2);
    assert_int_equal(common_reader_remaining(&reader), 1);
}

static void reader_empty_input(void **state)
{
    struct common_reader reader;
    const uint8_t *p;
    uint64_t varint;
    uint8_t byte;

    (void)state;
    common_reader_init(&reader, NULL, 0);
    assert_int_equal(common_reader_byte(&reader, &byte), COMMON_ECORRUPT);
    assert_int_equal(common_reader_varint(&reader, &varint), COMMON_ECORRUPT);
    assert_int_equal(common_reader_bytes(&reader, 0, &p), 0);
    assert_int_equal(common_reader_remaining(&reader), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reader_reads_what_buf_wrote),
        cmocka_unit_test(reader_rejects_every_truncation),
        cmocka_unit_test(reader_failed_read_does_not_move),
        cmocka_unit_test(reader_empty_input),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
