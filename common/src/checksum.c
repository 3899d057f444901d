/* SPDX-License-Identifier: MIT
 *
 * checksum.c: the 64-bit checksum of sinew's formats, XXH3 from libxxhash.
 * XXH3's output has been frozen since xxHash 0.8.0, so a checksum written by
 * one build verifies in any later one.
 */
#include "common.h"

#include <xxhash.h>

uint64_t common_checksum64(const void *data, size_t size, uint64_t seed)
{
    ASSERT(data != NULL || size == 0);
    return XXH3_64bits_withSeed(data, size, seed);
}
