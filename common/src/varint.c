/* SPDX-License-Identifier: MIT
 *
 * varint.c: unsigned LEB128 (the varint of protobuf and DWARF). Decoding
 * accepts only the shortest encoding, so a value has one byte string and
 * two replicas that encode the same values produce the same bytes.
 */
#include "common.h"

#define PAYLOAD_BITS 7
#define PAYLOAD_MASK 0x7f
#define CONTINUE_BIT 0x80

size_t common_varint_size(uint64_t value)
{
    size_t size = 1;

    while (value > PAYLOAD_MASK) {
        value >>= PAYLOAD_BITS;
        size++;
    }
    return size;
}

size_t common_varint_encode(uint64_t value, uint8_t *out)
{
    size_t size = 0;

    ASSERT(out != NULL);
    while (value > PAYLOAD_MASK) {
        out[size++] = (uint8_t)((value & PAYLOAD_MASK) | CONTINUE_BIT);
        value >>= PAYLOAD_BITS;
    }
    out[size++] = (uint8_t)value;
    return size;
}

int common_varint_decode(const uint8_t *data, size_t size, uint64_t *value,
                         size_t *consumed)
{
    uint64_t result = 0;

    ASSERT(data != NULL || size == 0);
    for (size_t i = 0; i < size && i < COMMON_VARINT_SIZE_MAX; i++) {
        uint64_t payload = data[i] & PAYLOAD_MASK;
        unsigned shift = (unsigned)(PAYLOAD_BITS * i);

        /* The tenth byte carries bit 63 alone: anything more overflows. */
        if (i == COMMON_VARINT_SIZE_MAX - 1 && payload > 1) {
            return COMMON_ECORRUPT;
        }
        result |= payload << shift;
        if ((data[i] & CONTINUE_BIT) == 0) {
            /* A zero last byte after others means a shorter form exists. */
            if (i > 0 && data[i] == 0) {
                return COMMON_ECORRUPT;
            }
            *value = result;
            *consumed = i + 1;
            return 0;
        }
    }
    return COMMON_ECORRUPT;
}
