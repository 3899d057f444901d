/* SPDX-License-Identifier: MIT
 *
 * cache.c: the search's memo of explored configurations, (set of placed
 * operations, register value). Lowe ("Testing for linearizability", 2017,
 * §4) shows that a configuration reached once and abandoned can never lead
 * to a linearization when reached again by another order, so the search
 * skips it; that turns the exponential Wing-Gong search into one that is
 * close to linear on real histories.
 *
 * An open-addressing hash set (linear probing, at most half full) of slots
 * that point into one growing array of stored bitset words. Its size is
 * bounded by bytes_max so a pathological history ends in CHECK_UNKNOWN,
 * not in an out-of-memory kill.
 */
#include "check_int.h"

#include <string.h>

#define CACHE_CAPACITY_MIN 1024

uint64_t check__zobrist(size_t index)
{
    uint64_t z = (uint64_t)index * UINT64_C(0x9e3779b97f4a7c15) +
                 UINT64_C(0x9e3779b97f4a7c15);

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void check__cache_init(struct check__cache *cache, size_t bytes_max)
{
    memset(cache, 0, sizeof(*cache));
    cache->bytes_max = bytes_max;
}

void check__cache_close(struct check__cache *cache)
{
    common_free(cache->slots);
    common_free(cache->words);
    memset(cache, 0, sizeof(*cache));
}

/* Mixes the register value into the bitset hash; never 0, which marks free
 * slots. */
static uint64_t cache_hash(uint64_t bits_hash, int64_t state)
{
    uint64_t h = bits_hash ^ check__zobrist((size_t)state ^ SIZE_MAX);

    return h == 0 ? 1 : h;
}

/* The canonical window of bits: *lo leading all-ones words, then *length
 * words up to and including the last nonzero word. */
static void cache_window(const uint64_t *bits, size_t words_count, size_t *lo,
                         size_t *length)
{
    size_t first = 0;
    size_t end = words_count;

    while (first < words_count && bits[first] == UINT64_MAX) {
        first++;
    }
    while (end > first && bits[end - 1] == 0) {
        end--;
    }
    *lo = first;
    *length = end - first;
}

static bool cache_slot_matches(const struct check__cache *cache,
                               const struct check__cache_slot *slot,
                               uint64_t hash, int64_t state,
                               const uint64_t *bits, size_t lo, size_t length)
{
    if (slot->hash != hash || slot->state != state || slot->lo != lo ||
        slot->length != length) {
        return false;
    }
    return length == 0 || memcmp(cache->words + slot->offset, bits + lo,
                                 length * sizeof(*bits)) == 0;
}

static size_t cache_bytes(size_t capacity, size_t words_capacity)
{
    return capacity * sizeof(struct check__cache_slot) +
           words_capacity * sizeof(uint64_t);
}

/* Doubles the slot table (or creates it) and rehashes. */
static int cache_grow_slots(struct check__cache *cache)
{
    size_t capacity =
        cache->capacity == 0 ? CACHE_CAPACITY_MIN : cache->capacity * 2;
    struct check__cache_slot *slots;

    if (cache_bytes(capacity, cache->words_capacity) > cache->bytes_max) {
        return COMMON_ETOOBIG;
    }
    slots = common_calloc(capacity, sizeof(*slots));
    if (slots == NULL) {
        return COMMON_ENOMEM;
    }
    for (size_t i = 0; i < cache->capacity; i++) {
        const struct check__cache_slot *old = &cache->slots[i];
        size_t at = (size_t)old->hash & (capacity - 1);

        if (old->hash == 0) {
            continue;
        }
        while (slots[at].hash != 0) {
            at = (at + 1) & (capacity - 1);
        }
        slots[at] = *old;
    }
    common_free(cache->slots);
    cache->slots = slots;
    cache->capacity = capacity;
    return 0;
}

/* Makes room for length more stored words. */
static int cache_reserve_words(struct check__cache *cache, size_t length)
{
    size_t capacity = cache->words_capacity;
    uint64_t *words;

    if (cache->words_count + length <= capacity) {
        return 0;
    }
    while (capacity < cache->words_count + length) {
        capacity = capacity == 0 ? 4096 : capacity * 2;
    }
    if (cache_bytes(cache->capacity, capacity) > cache->bytes_max) {
        return COMMON_ETOOBIG;
    }
    words = common_realloc_array(cache->words, capacity, sizeof(*words));
    if (words == NULL) {
        return COMMON_ENOMEM;
    }
    cache->words = words;
    cache->words_capacity = capacity;
    return 0;
}

int check__cache_add(struct check__cache *cache, const uint64_t *bits,
                     size_t words_count, uint64_t bits_hash, int64_t state)
{
    uint64_t hash = cache_hash(bits_hash, state);
    struct check__cache_slot *slot;
    size_t lo;
    size_t length;
    size_t at;
    int rc;

    ASSERT(words_count < UINT32_MAX);
    cache_window(bits, words_count, &lo, &length);
    if (2 * (cache->count + 1) > cache->capacity) {
        rc = cache_grow_slots(cache);
        if (rc != 0) {
            return rc;
        }
    }
    at = (size_t)hash & (cache->capacity - 1);
    for (slot = &cache->slots[at]; slot->hash != 0; slot = &cache->slots[at]) {
        if (cache_slot_matches(cache, slot, hash, state, bits, lo, length)) {
            return 0;
        }
        at = (at + 1) & (cache->capacity - 1);
    }
    rc = cache_reserve_words(cache, length);
    if (rc != 0) {
        return rc;
    }
    if (length > 0) {
        memcpy(cache->words + cache->words_count, bits + lo,
               length * sizeof(*bits));
    }
    slot->hash = hash;
    slot->state = state;
    slot->offset = cache->words_count;
    slot->lo = (uint32_t)lo;
    slot->length = (uint32_t)length;
    cache->words_count += length;
    cache->count++;
    return 1;
}
