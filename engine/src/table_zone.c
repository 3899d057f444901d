/* SPDX-License-Identifier: MIT
 *
 * table_zone.c: a table's zone maps (table.h, struct engine_zone) and the
 * scan that passes over the blocks they rule out.
 *
 * Why: a WHERE on a column whose values follow the rowid (a time, a
 * sequence) matches a few blocks of a large table; the zone map of each
 * block lets the scan skip the others without reading a row (zone.h says
 * which terms, and why the result is still SQLite's).
 *
 * Upkeep: every row written (insert, update, undo) is counted into its
 * block's zones once its values are in place, and counted out before they
 * change or go; only the NULL counts and the live row count go down, so
 * the bounds only widen and always hold every live value. A table loaded
 * from the main file gets its zones the same way, row by row, so its
 * blocks are the file's segments and need not trust their stored maps.
 *
 * Comparisons are SQLite's numeric order (engine__value_compare: an
 * INTEGER against a REAL exactly, so 9007199254740993 stays above
 * 9007199254740992.0); a zone promises nothing about TEXT and BLOB values
 * beyond their NULL-ness.
 */
#include "table.h"

#include <math.h>
#include <string.h>

#include "common.h"

static size_t blocks_of(size_t slots)
{
    return (slots + ENGINE__ZONE_ROWS - 1) / ENGINE__ZONE_ROWS;
}

size_t engine__table_block_count(const struct engine_table *table)
{
    return blocks_of(table->slot_count);
}

int engine__table_zones_reserve(struct engine_table *table, size_t capacity)
{
    size_t blocks = blocks_of(capacity);
    size_t width = table->column_count + 1;
    struct engine_zone *zones;
    uint32_t *live;

    if (blocks <= table->zone_block_capacity) {
        return 0;
    }
    zones = common_realloc_array(table->zones, blocks * width, sizeof(*zones));
    if (zones == NULL) {
        return COMMON_ENOMEM;
    }
    table->zones = zones;
    live = common_realloc_array(table->block_live, blocks, sizeof(*live));
    if (live == NULL) {
        return COMMON_ENOMEM;
    }
    table->block_live = live;
    for (size_t b = table->zone_block_capacity; b < blocks; b++) {
        memset(&zones[b * width], 0, width * sizeof(*zones));
        live[b] = 0;
    }
    table->zone_block_capacity = blocks;
    return 0;
}

static struct engine_zone *zone_at(const struct engine_table *table,
                                   size_t block, size_t column)
{
    return &table->zones[block * (table->column_count + 1) + column];
}

static void zone_widen(struct engine_zone *zone, struct engine_value v)
{
    if (v.type == ENGINE_NULL) {
        zone->null_count++;
        return;
    }
    if ((v.type != ENGINE_INTEGER && v.type != ENGINE_FLOAT) ||
        (v.type == ENGINE_FLOAT && isnan(v.u.r))) {
        zone->has_other = true;
        return;
    }
    v.has_text = false;
    if (!zone->has_number) {
        zone->min = v;
        zone->max = v;
        zone->has_number = true;
        return;
    }
    if (engine__value_compare(&v, &zone->min, ENGINE_COLLATION_BINARY) < 0) {
        zone->min = v;
    }
    if (engine__value_compare(&v, &zone->max, ENGINE_COLLATION_BINARY) > 0) {
        zone->max = v;
    }
}

void engine__table_zone_add(struct engine_table *table, size_t slot)
{
    size_t block = slot / ENGINE__ZONE_ROWS;

    ASSERT(block < table->zone_block_capacity);
    ASSERT(!table->deleted[slot]);
    table->block_live[block]++;
    for (size_t c = 0; c < table->column_count; c++) {
        if ((ptrdiff_t)c != table->rowid_alias) {
            zone_widen(zone_at(table, block, c),
                       engine__table_get(table, slot, c));
        }
    }
}

void engine__table_zone_remove(struct engine_table *table, size_t slot)
{
    size_t block = slot / ENGINE__ZONE_ROWS;

    ASSERT(block < table->zone_block_capacity);
    ASSERT(table->block_live[block] > 0);
    table->block_live[block]--;
    for (size_t c = 0; c < table->column_count; c++) {
        struct engine_zone *zone = zone_at(table, block, c);

        if ((ptrdiff_t)c != table->rowid_alias &&
            engine__table_get(table, slot, c).type == ENGINE_NULL) {
            ASSERT(zone->null_count > 0);
            zone->null_count--;
        }
    }
}

/* Whether no number of zone stands in relation test to bound. */
static bool numbers_fail(const struct engine_zone *zone,
                         enum engine_zone_test test,
                         const struct engine_value *bound)
{
    int low = engine__value_compare(&zone->min, bound, ENGINE_COLLATION_BINARY);
    int high =
        engine__value_compare(&zone->max, bound, ENGINE_COLLATION_BINARY);

    switch (test) {
    case ENGINE_ZONE_EQ:
        return low > 0 || high < 0;
    case ENGINE_ZONE_LT:
        return low >= 0;
    case ENGINE_ZONE_LE:
        return low > 0;
    case ENGINE_ZONE_GT:
        return high <= 0;
    default:
        ASSERT(test == ENGINE_ZONE_GE);
        return high < 0;
    }
}

/* Whether check rules out every live row of a block whose zone of the
 * check's column is zone, live rows live. */
static bool check_excludes(const struct engine_zone *zone, uint32_t live,
                           const struct engine_zone_check *check)
{
    bool all_null = zone->null_count == live;
    bool numbers_only = !zone->has_other;

    switch (check->test) {
    case ENGINE_ZONE_NOTHING:
        return true;
    case ENGINE_ZONE_NULL:
        return zone->null_count == 0;
    case ENGINE_ZONE_NOT_NULL:
        return all_null;
    case ENGINE_ZONE_NOT_NUMBER:
        return all_null || numbers_only;
    default:
        return all_null || (numbers_only &&
                            (!zone->has_number ||
                             numbers_fail(zone, check->test, &check->bound)));
    }
}

bool engine__table_zone_excludes(const struct engine_table *table, size_t block,
                                 const struct engine_zone_check *checks,
                                 size_t count)
{
    uint32_t live;

    ASSERT(block < engine__table_block_count(table));
    live = table->block_live[block];
    if (live == 0) {
        return true;
    }
    for (size_t i = 0; i < count; i++) {
        ASSERT(checks[i].column < table->column_count);
        ASSERT((ptrdiff_t)checks[i].column != table->rowid_alias);
        if (check_excludes(zone_at(table, block, checks[i].column), live,
                           &checks[i])) {
            return true;
        }
    }
    return false;
}

static bool is_skipped(size_t slot, const uint8_t *skip, size_t block_count)
{
    size_t block = slot / ENGINE__ZONE_ROWS;

    return block < block_count && skip[block];
}

/* The scan over live slots in slot order (the table is in rowid order):
 * *cursor counts slots passed, from the end when reverse, and a skipped
 * block is passed at once. */
static uint32_t scan_slots_skipping(struct engine_table *table, size_t *cursor,
                                    uint32_t *out, uint32_t max, bool reverse,
                                    const uint8_t *skip, size_t block_count)
{
    uint32_t n = 0;

    while (*cursor < table->slot_count && n < max) {
        size_t slot = reverse ? table->slot_count - 1 - *cursor : *cursor;
        size_t first = slot - slot % ENGINE__ZONE_ROWS;

        if (is_skipped(slot, skip, block_count)) {
            /* to the block's other end: forwards past its last slot (or
             * the table's), backwards before its first */
            *cursor =
                reverse ? table->slot_count - first : first + ENGINE__ZONE_ROWS;
            /* a row added past the end later is still met */
            if (*cursor > table->slot_count) {
                *cursor = table->slot_count;
            }
            continue;
        }
        if (!table->deleted[slot]) {
            out[n++] = (uint32_t)slot;
        }
        (*cursor)++;
    }
    return n;
}

uint32_t engine__table_scan_skipping(struct engine_table *table, size_t *cursor,
                                     uint32_t *out, uint32_t max, bool reverse,
                                     const uint8_t *skip, size_t block_count)
{
    uint32_t n = 0;

    ASSERT(skip != NULL || block_count == 0);
    if (table->in_rowid_order) {
        return scan_slots_skipping(table, cursor, out, max, reverse, skip,
                                   block_count);
    }
    /* Rows out of rowid order: the blocks' rows interleave, so each slot
     * is tested on its own. */
    while (n < max) {
        uint32_t got =
            engine__table_scan(table, cursor, out + n, max - n, reverse);
        uint32_t kept = 0;

        if (got == UINT32_MAX) {
            return UINT32_MAX;
        }
        if (got == 0) {
            break;
        }
        for (uint32_t i = 0; i < got; i++) {
            if (!is_skipped(out[n + i], skip, block_count)) {
                out[n + kept++] = out[n + i];
            }
        }
        n += kept;
    }
    return n;
}

bool engine__table_block_clean(const struct engine_table *table, size_t block,
                               const size_t *columns, size_t count)
{
    size_t first = block * ENGINE__ZONE_ROWS;
    size_t slots = table->slot_count - first;

    ASSERT(block < engine__table_block_count(table));
    if (slots > ENGINE__ZONE_ROWS) {
        slots = ENGINE__ZONE_ROWS;
    }
    if (table->block_live[block] != slots) {
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        ASSERT((ptrdiff_t)columns[i] != table->rowid_alias);
        if (zone_at(table, block, columns[i])->null_count != 0) {
            return false;
        }
    }
    return true;
}
