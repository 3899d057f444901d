/* SPDX-License-Identifier: MIT
 *
 * crdt_key.c: the canonical bytes of a row key, by which the registers in
 * the system tables are addressed (crdt.md §6.2: "canonical packed tuple"),
 * the binding and reading of single SQL values, and the total order on
 * registers, K = (hlc, site) (crdt.md §6.1: "never compare HLCs without
 * the site tie-break").
 *
 * A key's bytes are the same on every replica for the same values, so
 * equal keys meet in the metadata however they arrived. They are a local
 * storage format, not the wire format (changeset_codec.c owns that).
 */
#include <string.h>

#include "crdt_int.h"

/* The site tie-break of K, or (the chaos suite's mutant, built only into
 * its test binary sim-mutant-tiebreak: cluster-tests/sim/CMakeLists.txt)
 * none, so that equal HLCs compare equal and the last arrival wins. The
 * SQL guards in crdt_store.c flip with it. The marker lets the sim say
 * which code it runs. */
#ifdef SINEW_MUTATION_NO_SITE_TIEBREAK
#define CRDT_KEY_SITE_CMP(a, b, size) 0
const char replication__mutation_no_site_tiebreak[] = "no-site-tiebreak";
#else
#define CRDT_KEY_SITE_CMP(a, b, size) memcmp((a), (b), (size))
#endif

int replication__crdt_k_cmp(const struct replication__crdt_k *a,
                            const struct replication__crdt_k *b)
{
    if (a->hlc != b->hlc) {
        return a->hlc < b->hlc ? -1 : 1;
    }
    return CRDT_KEY_SITE_CMP(a->site, b->site, sizeof(a->site));
}

static int encode_value(const struct engine_change_value *v,
                        struct common_buf *out)
{
    uint8_t fixed[8];
    uint64_t bits;
    int rc;

    rc = common_buf_append_byte(out, (uint8_t)v->type);
    if (rc != 0) {
        return rc;
    }
    switch (v->type) {
    case ENGINE_INTEGER:
        common_put_u64be(fixed, (uint64_t)v->integer);
        return common_buf_append(out, fixed, sizeof(fixed));
    case ENGINE_FLOAT:
        memcpy(&bits, &v->real, sizeof(bits));
        common_put_u64be(fixed, bits);
        return common_buf_append(out, fixed, sizeof(fixed));
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        rc = common_buf_append_varint(out, v->size);
        if (rc == 0 && v->size > 0) {
            rc = common_buf_append(out, v->bytes, v->size);
        }
        return rc;
    default:
        return 0;
    }
}

int replication__crdt_key_encode(const struct engine_change_value *key,
                                 size_t count, struct common_buf *out)
{
    size_t i;
    int rc;

    for (i = 0; i < count; i++) {
        rc = encode_value(&key[i], out);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int decode_value(struct common_reader *r, struct engine_change_value *v)
{
    const uint8_t *bytes;
    uint64_t size;
    uint8_t type;
    int rc;

    memset(v, 0, sizeof(*v));
    rc = common_reader_byte(r, &type);
    if (rc != 0) {
        return rc;
    }
    v->type = type;
    switch (type) {
    case ENGINE_INTEGER:
    case ENGINE_FLOAT:
        rc = common_reader_bytes(r, 8, &bytes);
        if (rc != 0) {
            return rc;
        }
        size = common_get_u64be(bytes);
        if (type == ENGINE_INTEGER) {
            v->integer = (int64_t)size;
        } else {
            memcpy(&v->real, &size, sizeof(v->real));
        }
        return 0;
    case ENGINE_TEXT:
    case ENGINE_BLOB:
        rc = common_reader_varint(r, &size);
        if (rc == 0 && size > common_reader_remaining(r)) {
            rc = COMMON_ECORRUPT;
        }
        if (rc == 0 && size > 0) {
            rc = common_reader_bytes(r, (size_t)size, &bytes);
            v->bytes = bytes;
        }
        v->size = (size_t)size;
        return rc;
    case ENGINE_NULL:
        return 0;
    default:
        return COMMON_ECORRUPT;
    }
}

int replication__crdt_key_decode(const void *bytes, size_t size,
                                 struct replication__arena *arena,
                                 struct engine_change_value **key,
                                 size_t *count)
{
    struct engine_change_value *values;
    struct common_reader r;
    size_t n = 0;
    int rc;

    /* Each value takes at least its type byte. */
    values = replication__arena_alloc(arena, (size + 1) * sizeof(*values));
    if (values == NULL) {
        return COMMON_ENOMEM;
    }
    common_reader_init(&r, bytes, size);
    while (common_reader_remaining(&r) > 0) {
        rc = decode_value(&r, &values[n]);
        if (rc != 0) {
            return rc;
        }
        n++;
    }
    *key = values;
    *count = n;
    return 0;
}

int replication__crdt_bind_value(struct engine_stmt *stmt, int index,
                                 const struct engine_change_value *value)
{
    switch (value->type) {
    case ENGINE_INTEGER:
        return engine_bind_int64(stmt, index, value->integer);
    case ENGINE_FLOAT:
        return engine_bind_double(stmt, index, value->real);
    case ENGINE_TEXT:
        return engine_bind_text(stmt, index, value->bytes ? value->bytes : "",
                                (int)value->size);
    case ENGINE_BLOB:
        return engine_bind_blob(stmt, index, value->bytes ? value->bytes : "",
                                (int)value->size);
    default:
        return engine_bind_null(stmt, index);
    }
}

void replication__crdt_column_value(struct engine_stmt *stmt, int column,
                                    struct engine_change_value *out)
{
    memset(out, 0, sizeof(*out));
    out->type = engine_column_type(stmt, column);
    switch (out->type) {
    case ENGINE_INTEGER:
        out->integer = engine_column_int64(stmt, column);
        break;
    case ENGINE_FLOAT:
        out->real = engine_column_double(stmt, column);
        break;
    case ENGINE_TEXT:
        out->bytes = engine_column_text(stmt, column);
        out->size = (size_t)engine_column_bytes(stmt, column);
        break;
    case ENGINE_BLOB:
        out->bytes = engine_column_blob(stmt, column);
        out->size = (size_t)engine_column_bytes(stmt, column);
        break;
    default:
        out->type = ENGINE_NULL;
        break;
    }
}
