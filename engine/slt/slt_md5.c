/* SPDX-License-Identifier: MIT
 *
 * slt_md5.c: MD5 (RFC 1321), written here because sqllogictest compares
 * large results by MD5 ("N values hashing to <md5>") and none of our
 * dependencies offers it (libsodium has no MD5). Not for security: it only
 * reproduces the corpus's digests. The test vectors of RFC 1321 appendix
 * A.5 are in test/test_slt_md5.c.
 */
#include <string.h>

#include "slt.h"

/* Per-round shift amounts (RFC 1321 3.4). */
static const uint8_t slt_md5_shift[64] = {
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
    5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
    4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
    6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

/* T[i] = floor(2^32 * abs(sin(i + 1))) (RFC 1321 3.4). */
static const uint32_t slt_md5_sine[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
    0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
    0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
    0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
    0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
    0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
    0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
    0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};

static uint32_t slt_md5_rotate(uint32_t x, unsigned bits)
{
    return (x << bits) | (x >> (32 - bits));
}

/* One 64-byte block: the four rounds of RFC 1321 3.4 written as one loop,
 * each round choosing its function and message word order. */
static void slt_md5_block(uint32_t state[4], const uint8_t block[64])
{
    uint32_t words[16];
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];

    for (int i = 0; i < 16; i++) {
        words[i] = common_get_u32le(block + 4 * i);
    }
    for (unsigned i = 0; i < 64; i++) {
        uint32_t f;
        unsigned g;
        if (i < 16) {
            f = (b & c) | (~b & d);
            g = i;
        } else if (i < 32) {
            f = (d & b) | (~d & c);
            g = (5 * i + 1) % 16;
        } else if (i < 48) {
            f = b ^ c ^ d;
            g = (3 * i + 5) % 16;
        } else {
            f = c ^ (b | ~d);
            g = (7 * i) % 16;
        }
        uint32_t rotated = slt_md5_rotate(a + f + slt_md5_sine[i] + words[g],
                                          slt_md5_shift[i]);
        a = d;
        d = c;
        c = b;
        b = b + rotated;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
}

void slt_md5_init(struct slt_md5 *md5)
{
    md5->state[0] = 0x67452301;
    md5->state[1] = 0xefcdab89;
    md5->state[2] = 0x98badcfe;
    md5->state[3] = 0x10325476;
    md5->length_bytes = 0;
    md5->block_used = 0;
}

void slt_md5_update(struct slt_md5 *md5, const void *bytes, size_t size)
{
    const uint8_t *in = bytes;

    md5->length_bytes += size;
    while (size > 0) {
        size_t take = sizeof(md5->block) - md5->block_used;
        if (take > size) {
            take = size;
        }
        memcpy(md5->block + md5->block_used, in, take);
        md5->block_used += take;
        in += take;
        size -= take;
        if (md5->block_used == sizeof(md5->block)) {
            slt_md5_block(md5->state, md5->block);
            md5->block_used = 0;
        }
    }
}

void slt_md5_final_hex(struct slt_md5 *md5, char *out)
{
    static const char hex[] = "0123456789abcdef";
    /* Padding (RFC 1321 3.1, 3.2): a 1 bit, zeros up to 56 mod 64, then
     * the message length in bits, little-endian. */
    uint8_t tail[72] = {0x80};
    uint64_t length_bits = md5->length_bytes * 8;
    size_t pad =
        (md5->block_used < 56) ? 56 - md5->block_used : 120 - md5->block_used;
    uint8_t digest[16];

    common_put_u64le(tail + pad, length_bits);
    slt_md5_update(md5, tail, pad + 8);
    ASSERT(md5->block_used == 0);
    for (int i = 0; i < 4; i++) {
        common_put_u32le(digest + 4 * i, md5->state[i]);
    }
    for (int i = 0; i < 16; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[32] = '\0';
}
