/* SPDX-License-Identifier: MIT
 *
 * difftest_run.c: runs one SQL statement on libsqlite3 and on sinew's
 * engine, captures each result (error and message, or the rows with every
 * value's storage class and bytes), and compares the two.
 *
 * Values match when the storage classes are equal and integers are equal,
 * reals have identical bits (or are both NaN), and text or blob bytes are
 * equal. Rows are compared as a multiset, row for row, or "keyed": in
 * order, except that a run of rows that compare equal under every
 * collation (1 and 1.0, 'a' and 'A ') may come in any order, since SQLite's
 * sort leaves their order undefined. The one tolerated value difference is
 * SQLite's MEM_IntReal quirk: UPDATE ... RETURNING of a REAL column may
 * give an INTEGER where the stored value is a REAL.
 */
#include "difftest.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dt_buf_init(struct dt_buf *b)
{
    b->cap = 256;
    b->size = 0;
    b->data = malloc(b->cap);
    assert_non_null(b->data);
    b->data[0] = '\0';
}

void dt_buf_free(struct dt_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->size = b->cap = 0;
}

void dt_buf_clear(struct dt_buf *b)
{
    b->size = 0;
    b->data[0] = '\0';
}

static void buf_reserve(struct dt_buf *b, size_t more)
{
    while (b->size + more + 1 > b->cap) {
        b->cap *= 2;
        b->data = realloc(b->data, b->cap);
        assert_non_null(b->data);
    }
}

void dt_buf_add(struct dt_buf *b, const char *text)
{
    size_t n = strlen(text);

    buf_reserve(b, n);
    memcpy(b->data + b->size, text, n + 1);
    b->size += n;
}

void dt_buf_addf(struct dt_buf *b, const char *format, ...)
{
    va_list ap;
    int n;

    va_start(ap, format);
    n = vsnprintf(NULL, 0, format, ap);
    va_end(ap);
    assert_true(n >= 0);
    buf_reserve(b, (size_t)n);
    va_start(ap, format);
    vsnprintf(b->data + b->size, (size_t)n + 1, format, ap);
    va_end(ap);
    b->size += (size_t)n;
}

void dt_result_free(struct dt_result *r)
{
    int i, count = r->row_count * r->column_count;

    for (i = 0; i < count; i++) {
        free(r->values[i].bytes);
    }
    free(r->values);
    memset(r, 0, sizeof(*r));
}

static struct dt_value *result_new_row(struct dt_result *r)
{
    if (r->row_count == r->row_cap) {
        r->row_cap = r->row_cap ? r->row_cap * 2 : 8;
        r->values = realloc(r->values, (size_t)r->row_cap *
                                           (size_t)(r->column_count + 1) *
                                           sizeof(*r->values));
        assert_non_null(r->values);
    }
    return r->values + (size_t)r->row_count++ * (size_t)r->column_count;
}

static void value_set_bytes(struct dt_value *v, const void *bytes, int size)
{
    v->size = size;
    v->bytes = malloc((size_t)size + 1);
    assert_non_null(v->bytes);
    if (size > 0) {
        memcpy(v->bytes, bytes, (size_t)size);
    }
    v->bytes[size] = '\0';
}

static void sqlite_read_row(sqlite3_stmt *stmt, struct dt_result *r)
{
    struct dt_value *row = result_new_row(r);
    int c;

    for (c = 0; c < r->column_count; c++) {
        struct dt_value *v = &row[c];

        memset(v, 0, sizeof(*v));
        v->type = sqlite3_column_type(stmt, c);
        if (v->type == SQLITE_INTEGER) {
            v->i = sqlite3_column_int64(stmt, c);
        } else if (v->type == SQLITE_FLOAT) {
            v->r = sqlite3_column_double(stmt, c);
        } else if (v->type == SQLITE_TEXT) {
            const unsigned char *t = sqlite3_column_text(stmt, c);
            value_set_bytes(v, t, sqlite3_column_bytes(stmt, c));
        } else if (v->type == SQLITE_BLOB) {
            const void *b = sqlite3_column_blob(stmt, c);
            value_set_bytes(v, b, sqlite3_column_bytes(stmt, c));
        }
    }
}

void dt_run_sqlite(sqlite3 *db, const char *sql, struct dt_result *out)
{
    sqlite3_stmt *stmt = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
    if (rc == SQLITE_OK && stmt != NULL) {
        out->column_count = sqlite3_column_count(stmt);
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            sqlite_read_row(stmt, out);
        }
    }
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
        out->is_error = true;
        snprintf(out->errmsg, sizeof(out->errmsg), "%s", sqlite3_errmsg(db));
    }
    sqlite3_finalize(stmt);
    out->changes = sqlite3_changes64(db);
}

static void engine_read_row(struct engine_stmt *stmt, struct dt_result *r)
{
    struct dt_value *row = result_new_row(r);
    int c;

    for (c = 0; c < r->column_count; c++) {
        struct dt_value *v = &row[c];

        memset(v, 0, sizeof(*v));
        v->type = engine_column_type(stmt, c);
        if (v->type == ENGINE_INTEGER) {
            v->i = engine_column_int64(stmt, c);
        } else if (v->type == ENGINE_FLOAT) {
            v->r = engine_column_double(stmt, c);
        } else if (v->type == ENGINE_TEXT) {
            const char *t = engine_column_text(stmt, c);
            value_set_bytes(v, t, engine_column_bytes(stmt, c));
        } else if (v->type == ENGINE_BLOB) {
            const void *b = engine_column_blob(stmt, c);
            value_set_bytes(v, b, engine_column_bytes(stmt, c));
        }
    }
}

void dt_run_engine(struct engine_db *db, const char *sql, struct dt_result *out)
{
    struct engine_stmt *stmt = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = engine_prepare(db, sql, -1, &stmt, NULL);
    if (rc == 0 && stmt != NULL) {
        out->column_count = engine_column_count(stmt);
        while ((rc = engine_step(stmt)) == ENGINE_ROW) {
            engine_read_row(stmt, out);
        }
    }
    if (rc != 0 && rc != ENGINE_DONE) {
        out->is_error = true;
        snprintf(out->errmsg, sizeof(out->errmsg), "%s", engine_errmsg(db));
    }
    engine_finalize(stmt);
    out->changes = engine_changes(db);
}

/* The order of SQLite's storage classes in a sort: NULL, numbers, text,
 * blob. */
static int class_rank(int type)
{
    static const int rank[] = {0, 1, 1, 2, 3, 0};

    return rank[type];
}

static double value_number(const struct dt_value *v)
{
    return v->type == SQLITE_INTEGER ? (double)v->i : v->r;
}

/* A total order used only to sort rows for multiset comparison. */
static int value_cmp_exact(const struct dt_value *a, const struct dt_value *b)
{
    int n;

    /* Numbers sort by value first, so that an INTEGER and a REAL that
     * SQLite's IntReal quirk swapped still pair up. */
    if (class_rank(a->type) == 1 && class_rank(b->type) == 1 &&
        value_number(a) != value_number(b)) {
        return value_number(a) < value_number(b) ? -1 : 1;
    }
    if (a->type != b->type) {
        return a->type < b->type ? -1 : 1;
    }
    if (a->type == SQLITE_INTEGER) {
        return a->i < b->i ? -1 : a->i > b->i;
    }
    if (a->type == SQLITE_FLOAT) {
        return memcmp(&a->r, &b->r, sizeof(a->r));
    }
    if (a->type == SQLITE_NULL) {
        return 0;
    }
    n = memcmp(a->bytes, b->bytes,
               (size_t)(a->size < b->size ? a->size : b->size));
    return n != 0 ? n : (a->size < b->size ? -1 : a->size > b->size);
}

static bool value_same(const struct dt_value *a, const struct dt_value *b)
{
    if (a->type == SQLITE_FLOAT && b->type == SQLITE_FLOAT && isnan(a->r) &&
        isnan(b->r)) {
        return true;
    }
    return value_cmp_exact(a, b) == 0;
}

/* Folds text as the loosest collation would: ASCII case and trailing
 * spaces ignored. */
static size_t text_folded_size(const struct dt_value *v)
{
    size_t n = (size_t)v->size;

    while (n > 0 && v->bytes[n - 1] == ' ') {
        n--;
    }
    return n;
}

/* Whether an INTEGER and a REAL sort as equal. SQLite compares them
 * exactly (sqlite3IntFloatCompare, vdbeaux.c), not as doubles: the REAL
 * -9223372036854775808.0 ties with the INTEGER -9223372036854775808 but
 * sorts below -9223372036854775807, which a cast to double would make
 * equal too. That would let a run of ties span values SQLite ordered. */
static bool int_real_equal(int64_t i, double r)
{
    if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0)) {
        return false; /* NaN, or out of range of every INTEGER */
    }
    return (double)(int64_t)r == r && (int64_t)r == i;
}

/* Whether a and b could sort as equal under some collation. Erring towards
 * "equal" only makes the keyed comparison more lenient. */
static bool value_loosely_equal(const struct dt_value *a,
                                const struct dt_value *b)
{
    size_t i, n;

    if (class_rank(a->type) != class_rank(b->type)) {
        return false;
    }
    if (a->type == SQLITE_NULL) {
        return true;
    }
    if (class_rank(a->type) == 1) {
        if (a->type == SQLITE_INTEGER && b->type == SQLITE_INTEGER) {
            return a->i == b->i;
        }
        if (a->type != b->type) {
            return a->type == SQLITE_INTEGER ? int_real_equal(a->i, b->r)
                                             : int_real_equal(b->i, a->r);
        }
        /* A sort compares REALs by value: -0.0 and 0.0 tie. */
        return a->r == b->r;
    }
    if (a->type == SQLITE_BLOB) {
        return value_same(a, b);
    }
    n = text_folded_size(a);
    if (n != text_folded_size(b)) {
        return false;
    }
    for (i = 0; i < n; i++) {
        if (tolower((unsigned char)a->bytes[i]) !=
            tolower((unsigned char)b->bytes[i])) {
            return false;
        }
        if (a->bytes[i] == '\0') {
            return true; /* NOCASE stops at a NUL (sqlite3StrNICmp) */
        }
    }
    return true;
}

static int sort_columns;

static int row_cmp(const void *pa, const void *pb)
{
    const struct dt_value *a = pa, *b = pb;
    int c, n;

    for (c = 0; c < sort_columns; c++) {
        n = value_cmp_exact(&a[c], &b[c]);
        if (n != 0) {
            return n;
        }
    }
    return 0;
}

/* Sorts rows [first, first + count) of r by value_cmp_exact. qsort needs
 * an element size, so rows are sorted through a temporary array. */
static void rows_sort(struct dt_result *r, int first, int count)
{
    size_t row_size = (size_t)r->column_count * sizeof(struct dt_value);
    struct dt_value *rows = r->values + (size_t)first * (size_t)r->column_count;

    if (count < 2 || r->column_count == 0) {
        return;
    }
    sort_columns = r->column_count;
    qsort(rows, (size_t)count, row_size, row_cmp);
}

static void value_print(const struct dt_value *v, struct dt_buf *out);

/* Whether value a (ours) is acceptable where SQLite gave b. */
static bool value_accepted(const struct dt_stmt *s, const struct dt_value *a,
                           const struct dt_value *b)
{
    if (value_same(a, b)) {
        return true;
    }
    /* SQLite 3.40's MEM_IntReal quirk (accepted, docs/testing.md): in
     * DML ... RETURNING on a table with a REAL column, a returned column
     * value can come out as INTEGER where it is a REAL, or as a REAL
     * where it is an INTEGER (typeof() of it is right). */
    if (!s->is_returning || class_rank(a->type) != 1 ||
        class_rank(b->type) != 1) {
        return false;
    }
    return value_number(a) == value_number(b);
}

static bool rows_equal(const struct dt_stmt *s, const struct dt_result *ours,
                       const struct dt_result *lite, int row, char *why,
                       size_t why_size)
{
    int c, n = lite->column_count;

    for (c = 0; c < n; c++) {
        const struct dt_value *a = &ours->values[row * n + c];
        const struct dt_value *b = &lite->values[row * n + c];

        if (!value_accepted(s, a, b)) {
            struct dt_buf text;

            dt_buf_init(&text);
            value_print(b, &text);
            dt_buf_add(&text, " vs ");
            value_print(a, &text);
            snprintf(why, why_size, "row %d column %d: sqlite %s", row, c,
                     text.data);
            dt_buf_free(&text);
            return false;
        }
    }
    return true;
}

static bool rows_loosely_equal(const struct dt_result *r, int x, int y)
{
    int c, n = r->column_count;

    for (c = 0; c < n; c++) {
        if (!value_loosely_equal(&r->values[x * n + c],
                                 &r->values[y * n + c])) {
            return false;
        }
    }
    return true;
}

static bool run_loosely_matches(const struct dt_result *lite,
                                const struct dt_result *ours, int start,
                                int end, char *why, size_t why_size)
{
    int row, c, n = lite->column_count;

    for (row = start; row < end; row++) {
        for (c = 0; c < n; c++) {
            if (!value_loosely_equal(&ours->values[row * n + c],
                                     &lite->values[start * n + c])) {
                snprintf(why, why_size, "row %d: not in tie run", row);
                return false;
            }
        }
    }
    return true;
}

/* Keyed order: within each run of SQLite's rows that are loosely equal,
 * both sides are sorted before the row-for-row comparison. A run cut by
 * LIMIT or OFFSET may hold different members; there only the loose
 * equality to SQLite's run is required. */
static bool keyed_match(const struct dt_stmt *s, struct dt_result *lite,
                        struct dt_result *ours, char *why, size_t why_size)
{
    int start = 0, end, row;

    while (start < lite->row_count) {
        bool partial;

        end = start + 1;
        while (end < lite->row_count && rows_loosely_equal(lite, start, end)) {
            end++;
        }
        partial = (start == 0 && s->has_offset) ||
                  (end == lite->row_count && s->has_limit);
        if (partial) {
            if (!run_loosely_matches(lite, ours, start, end, why, why_size)) {
                return false;
            }
        } else {
            rows_sort(lite, start, end - start);
            rows_sort(ours, start, end - start);
            for (row = start; row < end; row++) {
                if (!rows_equal(s, ours, lite, row, why, why_size)) {
                    return false;
                }
            }
        }
        start = end;
    }
    return true;
}

bool dt_results_match(const struct dt_stmt *s, struct dt_result *lite,
                      struct dt_result *ours, char *why, size_t why_size)
{
    int row;

    if (lite->is_error || ours->is_error) {
        if (lite->is_error != ours->is_error) {
            snprintf(why, why_size, "only %s failed",
                     lite->is_error ? "SQLite" : "sinew");
            return false;
        }
        if (strcmp(lite->errmsg, ours->errmsg) != 0) {
            snprintf(why, why_size, "error messages differ");
            return false;
        }
        return true;
    }
    if (lite->column_count != ours->column_count ||
        lite->row_count != ours->row_count) {
        snprintf(why, why_size, "shape differs");
        return false;
    }
    if (s->order == DT_ORDER_SET) {
        rows_sort(lite, 0, lite->row_count);
        rows_sort(ours, 0, ours->row_count);
    }
    if (s->order == DT_ORDER_KEYED) {
        if (!keyed_match(s, lite, ours, why, why_size)) {
            return false;
        }
    } else {
        for (row = 0; row < lite->row_count; row++) {
            if (!rows_equal(s, ours, lite, row, why, why_size)) {
                return false;
            }
        }
    }
    if (s->is_dml && lite->changes != ours->changes) {
        snprintf(why, why_size, "changes() differs");
        return false;
    }
    return true;
}

static void value_print(const struct dt_value *v, struct dt_buf *out)
{
    static const char *names[] = {"?", "int", "real", "text", "blob", "null"};
    int i;

    dt_buf_addf(out, "%s:", names[v->type]);
    if (v->type == SQLITE_INTEGER) {
        dt_buf_addf(out, "%" PRId64, v->i);
    } else if (v->type == SQLITE_FLOAT) {
        dt_buf_addf(out, "%.17g", v->r);
    } else if (v->type == SQLITE_TEXT) {
        dt_buf_addf(out, "'%.*s'", v->size, v->bytes);
    } else if (v->type == SQLITE_BLOB) {
        dt_buf_add(out, "x'");
        for (i = 0; i < v->size && i < 64; i++) {
            dt_buf_addf(out, "%02x", (unsigned char)v->bytes[i]);
        }
        dt_buf_add(out, "'");
    }
}

void dt_result_print(const struct dt_result *r, struct dt_buf *out)
{
    int row, c;

    if (r->is_error) {
        dt_buf_addf(out, "  error: %s\n", r->errmsg);
        return;
    }
    dt_buf_addf(out, "  %d row(s), %d column(s), changes=%" PRId64 "\n",
                r->row_count, r->column_count, r->changes);
    for (row = 0; row < r->row_count && row < 40; row++) {
        dt_buf_add(out, "   ");
        for (c = 0; c < r->column_count; c++) {
            dt_buf_add(out, c ? " | " : " ");
            value_print(&r->values[row * r->column_count + c], out);
        }
        dt_buf_add(out, "\n");
    }
}
