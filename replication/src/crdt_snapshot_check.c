/* SPDX-License-Identifier: MIT
 *
 * crdt_snapshot_check.c: a snapshot checked whole before anything of it is
 * installed (crdt.h, replication__crdt_snapshot_check()): the envelope and
 * the body's msgpack shape (crdt_snapshot_wire.c), then what only the whole
 * body can tell: origins listed once, every floor at or below its head,
 * every schema name once, exactly one table entry per schema table with
 * distinct column names, register keys in crdt_key.c's encoding, kept
 * change sets that decode and belong to versions the heads cover.
 *
 * What the check cannot see is whether the schema's statements make the
 * tables the rows describe; the install finds out inside its transaction
 * and rolls back (REPLICATION_EFORMAT), so a bad snapshot never leaves a
 * trace either way.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "changeset_codec.h"
#include "crdt_int.h"
#include "crdt_snapshot_int.h"
#include "replication.h"

/* A kept set's identity, for duplicates. */
struct kept_id {
    uint8_t origin[REPLICATION__SITE_ID_BYTES];
    uint64_t version;
};

struct check {
    struct replication__snapshot_info *info;
    size_t head_capacity;
    size_t floor_capacity;
    bool *table_seen; /* per schema object: its table entry came */
    struct kept_id *kept;
    size_t kept_capacity;
};

static int head_cmp(const void *a, const void *b)
{
    return memcmp(((const struct replication__head *)a)->site,
                  ((const struct replication__head *)b)->site,
                  REPLICATION__SITE_ID_BYTES);
}

static int kept_cmp(const void *a, const void *b)
{
    const struct kept_id *x = a, *y = b;
    int c = memcmp(x->origin, y->origin, sizeof(x->origin));

    if (c != 0) {
        return c;
    }
    return x->version < y->version ? -1 : x->version > y->version;
}

/* Appends an entry to a growing array of size-byte elements. */
static int grow(void **array, size_t *capacity, size_t count, size_t size)
{
    size_t n = *capacity ? 2 * *capacity : 16;
    void *grown;

    if (count < *capacity) {
        return 0;
    }
    grown = common_realloc_array(*array, n, size);
    if (grown == NULL) {
        return COMMON_ENOMEM;
    }
    *array = grown;
    *capacity = n;
    return 0;
}

static int check_head(void *ctx, const uint8_t *origin, uint64_t value,
                      bool floor)
{
    struct check *c = ctx;
    struct replication__snapshot_info *info = c->info;
    struct replication__head **list = floor ? &info->floors : &info->heads;
    size_t *count = floor ? &info->floor_count : &info->head_count;
    int rc;

    rc = grow((void **)list, floor ? &c->floor_capacity : &c->head_capacity,
              *count, sizeof(**list));
    if (rc == 0) {
        memcpy((*list)[*count].site, origin, REPLICATION__SITE_ID_BYTES);
        (*list)[*count].head = value;
        (*count)++;
    }
    return rc;
}

bool replication__snapshot_same_name(const char *a, const char *b)
{
    while (*a != '\0' &&
           tolower((unsigned char)*a) == tolower((unsigned char)*b)) {
        a++;
        b++;
    }
    return tolower((unsigned char)*a) == tolower((unsigned char)*b);
}

/* The index of the schema object named name, or -1. */
static long object_find(const struct replication__snapshot_info *info,
                        const char *name)
{
    size_t at = 0, i;

    for (i = 0; i < info->object_count; i++) {
        const char *item = (const char *)info->names.data + at;
        if (replication__snapshot_same_name(item, name)) {
            return (long)i;
        }
        at += strlen(item) + 1;
    }
    return -1;
}

static int check_object(void *ctx, const struct replication__snapshot_object *o)
{
    struct replication__snapshot_info *info = ((struct check *)ctx)->info;
    bool *grown;
    int rc;

    if (object_find(info, o->name) >= 0) {
        return REPLICATION_EFORMAT; /* a name twice */
    }
    grown = common_realloc_array(info->is_index, info->object_count + 1,
                                 sizeof(*grown));
    if (grown == NULL) {
        return COMMON_ENOMEM;
    }
    info->is_index = grown;
    rc = common_buf_append(&info->names, o->name, strlen(o->name) + 1);
    if (rc == 0) {
        grown[info->object_count++] = o->is_index;
    }
    return rc;
}

static int check_table(void *ctx, const struct replication__snapshot_table *t)
{
    struct check *c = ctx;
    long object = object_find(c->info, t->name);
    size_t i, j;

    if (c->table_seen == NULL) {
        c->table_seen = common_calloc(c->info->object_count + 1, sizeof(bool));
        if (c->table_seen == NULL) {
            return COMMON_ENOMEM;
        }
    }
    if (object < 0 || c->info->is_index[object] || c->table_seen[object]) {
        return REPLICATION_EFORMAT;
    }
    c->table_seen[object] = true;
    for (i = 0; i < t->column_count; i++) {
        for (j = 0; j < i; j++) {
            if (replication__snapshot_same_name(t->columns[i], t->columns[j])) {
                return REPLICATION_EFORMAT;
            }
        }
    }
    return 0;
}

static int check_row(void *ctx, const struct replication__snapshot_table *t,
                     const struct engine_change_value *values, size_t count)
{
    (void)t;
    (void)values;
    (void)count;
    ((struct check *)ctx)->info->row_count++;
    return 0;
}

/* A register: its key decodes (into memory freed at once), its hlc counts. */
static int check_register(struct check *c, const uint8_t *pk, size_t pk_size,
                          uint64_t hlc)
{
    struct replication__arena arena = {0};
    struct engine_change_value *key;
    size_t count = 0;
    int rc;

    rc = replication__crdt_key_decode(pk, pk_size, &arena, &key, &count);
    replication__arena_close(&arena);
    if (rc == COMMON_ECORRUPT || (rc == 0 && count == 0)) {
        return REPLICATION_EFORMAT;
    }
    if (hlc > c->info->hlc_max) {
        c->info->hlc_max = hlc;
    }
    c->info->register_count++;
    return rc;
}

static int check_exist(void *ctx, const struct replication__snapshot_exist *e)
{
    return check_register(ctx, e->pk, e->pk_size, e->hlc);
}

static int check_cell(void *ctx, const struct replication__snapshot_cell *cell)
{
    if (cell->column[0] == '\0') {
        return REPLICATION_EFORMAT;
    }
    return check_register(ctx, cell->pk, cell->pk_size, cell->hlc);
}

static int check_kept(void *ctx, const uint8_t *bytes, size_t size)
{
    struct check *c = ctx;
    struct replication__decoded *decoded = NULL;
    struct kept_id *id;
    int rc;

    rc = replication__changeset_decode(bytes, size, &decoded);
    if (rc == REPLICATION_EVERSION || rc == COMMON_ETOOBIG) {
        rc = REPLICATION_EFORMAT;
    }
    if (rc == 0) {
        rc = grow((void **)&c->kept, &c->kept_capacity, c->info->kept_count,
                  sizeof(*c->kept));
    }
    if (rc == 0) {
        id = &c->kept[c->info->kept_count++];
        memcpy(id->origin, decoded->set.origin, sizeof(id->origin));
        id->version = decoded->set.version;
    }
    replication__decoded_destroy(decoded);
    return rc;
}

/* Sorted, each origin once. */
static bool sorted_once(struct replication__head *list, size_t count)
{
    size_t i;

    if (count > 1) {
        qsort(list, count, sizeof(*list), head_cmp);
    }
    for (i = 1; i < count; i++) {
        if (head_cmp(&list[i - 1], &list[i]) == 0) {
            return false;
        }
    }
    return true;
}

/* What needs the whole body: the lists, and the parts against each other. */
static int check_whole(struct check *c)
{
    struct replication__snapshot_info *info = c->info;
    size_t i;

    if (!sorted_once(info->heads, info->head_count) ||
        !sorted_once(info->floors, info->floor_count)) {
        return REPLICATION_EFORMAT;
    }
    for (i = 0; i < info->floor_count; i++) {
        if (info->floors[i].head >
            replication__snapshot_head_of(info->heads, info->head_count,
                                          info->floors[i].site)) {
            return REPLICATION_EFORMAT; /* a floor above its head */
        }
    }
    for (i = 0; i < info->object_count; i++) {
        if (!info->is_index[i] &&
            (c->table_seen == NULL || !c->table_seen[i])) {
            return REPLICATION_EFORMAT; /* a table without its rows */
        }
    }
    if (info->kept_count > 1) {
        qsort(c->kept, info->kept_count, sizeof(*c->kept), kept_cmp);
    }
    for (i = 0; i < info->kept_count; i++) {
        if ((i > 0 && kept_cmp(&c->kept[i - 1], &c->kept[i]) == 0) ||
            c->kept[i].version >
                replication__snapshot_head_of(info->heads, info->head_count,
                                              c->kept[i].origin)) {
            return REPLICATION_EFORMAT;
        }
    }
    return 0;
}

int replication__snapshot_check_body(
    const struct replication__snapshot_body *body,
    struct replication__snapshot_info *info)
{
    struct check c = {.info = info};
    const struct replication__snapshot_visit visit = {
        .ctx = &c,
        .head = check_head,
        .object = check_object,
        .table = check_table,
        .row = check_row,
        .exist = check_exist,
        .cell = check_cell,
        .kept = check_kept,
    };
    int rc;

    ASSERT(body != NULL);
    ASSERT(info != NULL);
    memset(info, 0, sizeof(*info));
    memcpy(info->site, body->site, sizeof(info->site));
    common_buf_init(&info->names, REPLICATION__SNAPSHOT_BODY_MAX);
    rc = replication__snapshot_walk(body, &visit);
    if (rc == 0) {
        rc = check_whole(&c);
    }
    common_free(c.table_seen);
    common_free(c.kept);
    return rc;
}

void replication__snapshot_info_close(struct replication__snapshot_info *info)
{
    common_free(info->heads);
    common_free(info->floors);
    common_free(info->is_index);
    common_buf_close(&info->names);
    memset(info, 0, sizeof(*info));
}

uint64_t replication__snapshot_head_of(const struct replication__head *list,
                                       size_t count, const uint8_t *origin)
{
    struct replication__head key;
    const struct replication__head *found;

    if (count == 0) {
        return 0;
    }
    memcpy(key.site, origin, sizeof(key.site));
    found = bsearch(&key, list, count, sizeof(*list), head_cmp);
    return found != NULL ? found->head : 0;
}

bool replication__snapshot_has_table(
    const struct replication__snapshot_info *info, const char *name)
{
    long object = object_find(info, name);

    return object >= 0 && !info->is_index[object];
}

int replication__crdt_snapshot_check(const uint8_t *bytes, size_t size)
{
    struct replication__snapshot_body body;
    struct replication__snapshot_info info;
    int rc;

    ASSERT(bytes != NULL || size == 0);
    rc = replication__snapshot_open(bytes, size, &body);
    if (rc != 0) {
        return rc;
    }
    rc = replication__snapshot_check_body(&body, &info);
    replication__snapshot_info_close(&info);
    replication__snapshot_body_close(&body);
    return rc;
}
