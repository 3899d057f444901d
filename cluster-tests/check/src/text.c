/* SPDX-License-Identifier: MIT
 *
 * text.c: the history text format (check.h documents it): one operation a
 * line, so the real-process tier can append to a file as clients complete
 * operations, and a person can write a history by hand or cut one down.
 *
 * The reader treats its input as untrusted bytes: every field is checked
 * (kind, integers in range, "-" exactly where a field does not apply, the
 * result matching the kind and outcome), a malformed line is rejected with
 * COMMON_ECORRUPT and a message naming the line and field, and no input
 * can make it crash or grow without bound. The writer emits exactly what
 * the reader accepts, so histories round-trip.
 */
#include "check_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* A line has at most nine fields; one more detects extra fields. */
#define TEXT_FIELDS_MAX 10

enum text_field {
    TEXT_CLIENT = 0,
    TEXT_KIND,
    TEXT_KEY,
    TEXT_VALUE,
    TEXT_EXPECTED,
    TEXT_INVOKE,
    TEXT_COMPLETE,
    TEXT_OUTCOME,
    TEXT_RESULT,
    TEXT_FIELDS_COUNT,
};

static const char *const text_field_names[TEXT_FIELDS_COUNT] = {
    "client", "kind",     "key",     "value",  "expected",
    "invoke", "complete", "outcome", "result",
};

struct text_reader {
    FILE *in;                       /* borrowed */
    size_t line_number;             /* 1-based, of line */
    char line[CHECK_LINE_SIZE_MAX]; /* the current line, terminated */
    char *fields[TEXT_FIELDS_MAX];  /* point into line */
    size_t fields_count;            /* fields found */
    char *errmsg;                   /* borrowed; may be NULL */
    size_t errmsg_size;             /* bytes at errmsg */
    struct check_history history;   /* being read */
    size_t capacity;                /* ops allocated */
    bool has_initial;               /* an "initial" line was seen */
};

__attribute__((format(printf, 3, 4))) static int
text_error(struct text_reader *r, int rc, const char *format, ...)
{
    va_list args;
    int n;

    if (r->errmsg == NULL || r->errmsg_size == 0) {
        return rc;
    }
    n = snprintf(r->errmsg, r->errmsg_size, "line %zu: ", r->line_number);
    if (n >= 0 && (size_t)n < r->errmsg_size) {
        va_start(args, format);
        vsnprintf(r->errmsg + n, r->errmsg_size - (size_t)n, format, args);
        va_end(args);
    }
    return rc;
}

static int text_field_error(struct text_reader *r, enum text_field field,
                            const char *why)
{
    return text_error(r, COMMON_ECORRUPT, "field %d (%s): %s: '%s'",
                      (int)field + 1, text_field_names[field], why,
                      r->fields[field]);
}

/* Reads one line into r->line without its terminator. Returns 1 for a
 * line, 0 at the end of input, or an error. */
static int text_line_read(struct text_reader *r)
{
    size_t size = 0;
    int c;

    r->line_number++;
    while ((c = getc(r->in)) != EOF && c != '\n') {
        if (c == '\0') {
            return text_error(r, COMMON_ECORRUPT, "NUL byte");
        }
        if (size + 1 >= sizeof(r->line)) {
            return text_error(r, COMMON_ETOOBIG, "longer than %d bytes",
                              CHECK_LINE_SIZE_MAX - 1);
        }
        r->line[size++] = (char)c;
    }
    if (ferror(r->in)) {
        return text_error(r, -EIO, "read error");
    }
    r->line[size] = '\0';
    return c == EOF && size == 0 ? 0 : 1;
}

/* Splits r->line at spaces, tabs and carriage returns. */
static void text_line_split(struct text_reader *r)
{
    char *p = r->line;

    r->fields_count = 0;
    while (r->fields_count < TEXT_FIELDS_MAX) {
        p += strspn(p, " \t\r");
        if (*p == '\0') {
            return;
        }
        r->fields[r->fields_count++] = p;
        p += strcspn(p, " \t\r");
        if (*p == '\0') {
            return;
        }
        *p++ = '\0';
    }
}

/* Parses text as a decimal int64 (not CHECK_ABSENT's, which is spelled
 * "nil") or, when nil_allowed, "nil". Returns NULL, or why it is not one. */
static const char *text_int64_parse(const char *text, bool nil_allowed,
                                    int64_t *out)
{
    char *end;
    long long value;

    if (nil_allowed && strcmp(text, "nil") == 0) {
        *out = CHECK_ABSENT;
        return NULL;
    }
    errno = 0;
    value = strtoll(text, &end, 10);
    if (end == text || *end != '\0') {
        return nil_allowed ? "not an integer or nil" : "not an integer";
    }
    if (errno == ERANGE || value == CHECK_ABSENT) {
        return "out of range";
    }
    *out = (int64_t)value;
    return NULL;
}

static int text_integer(struct text_reader *r, enum text_field field,
                        bool nil_allowed, int64_t *out)
{
    const char *why = text_int64_parse(r->fields[field], nil_allowed, out);

    return why == NULL ? 0 : text_field_error(r, field, why);
}

static int text_dash(struct text_reader *r, enum text_field field)
{
    if (strcmp(r->fields[field], "-") != 0) {
        return text_field_error(r, field, "must be '-' here");
    }
    return 0;
}

static int text_kind(struct text_reader *r, enum check_kind *out)
{
    static const char *const names[] = {"read", "write", "cas"};

    for (int i = 0; i < 3; i++) {
        if (strcmp(r->fields[TEXT_KIND], names[i]) == 0) {
            *out = (enum check_kind)i;
            return 0;
        }
    }
    return text_field_error(r, TEXT_KIND, "not read, write or cas");
}

/* Fields 4 and 5: the values the operation carries. */
static int text_operands(struct text_reader *r, struct check_op *op)
{
    int rc;

    if (op->kind == CHECK_READ) {
        rc = text_dash(r, TEXT_VALUE);
    } else {
        rc = text_integer(r, TEXT_VALUE, true, &op->value);
    }
    if (rc != 0) {
        return rc;
    }
    if (op->kind == CHECK_CAS) {
        return text_integer(r, TEXT_EXPECTED, true, &op->expected);
    }
    return text_dash(r, TEXT_EXPECTED);
}

/* Fields 6 to 8: the interval and the outcome. */
static int text_interval(struct text_reader *r, struct check_op *op)
{
    const char *outcome = r->fields[TEXT_OUTCOME];
    int rc;

    rc = text_integer(r, TEXT_INVOKE, false, &op->invoke_ns);
    if (rc != 0) {
        return rc;
    }
    if (strcmp(outcome, "ok") == 0) {
        op->outcome = CHECK_OUTCOME_OK;
    } else if (strcmp(outcome, "unknown") == 0) {
        op->outcome = CHECK_OUTCOME_UNKNOWN;
    } else {
        return text_field_error(r, TEXT_OUTCOME, "not ok or unknown");
    }
    op->complete_ns = CHECK_TIME_NONE;
    if (op->outcome == CHECK_OUTCOME_UNKNOWN &&
        strcmp(r->fields[TEXT_COMPLETE], "-") == 0) {
        return 0;
    }
    rc = text_integer(r, TEXT_COMPLETE, false, &op->complete_ns);
    if (rc == 0 && op->complete_ns < op->invoke_ns) {
        return text_field_error(r, TEXT_COMPLETE, "before the invocation");
    }
    return rc;
}

/* Field 9: the result, which must fit the kind and outcome. */
static int text_result(struct text_reader *r, struct check_op *op)
{
    const char *result = r->fields[TEXT_RESULT];

    if (op->outcome == CHECK_OUTCOME_UNKNOWN) {
        return text_dash(r, TEXT_RESULT);
    }
    switch (op->kind) {
    case CHECK_READ:
        return text_integer(r, TEXT_RESULT, true, &op->value);
    case CHECK_WRITE:
        if (strcmp(result, "ok") == 0) {
            return 0;
        }
        return text_field_error(r, TEXT_RESULT, "a write's result is ok");
    case CHECK_CAS:
        op->cas_succeeded = strcmp(result, "ok") == 0;
        if (op->cas_succeeded || strcmp(result, "fail") == 0) {
            return 0;
        }
        return text_field_error(r, TEXT_RESULT, "a cas's result is ok or fail");
    }
    return text_field_error(r, TEXT_RESULT, "invalid");
}

static int text_op_parse(struct text_reader *r, struct check_op *op)
{
    int rc;

    memset(op, 0, sizeof(*op));
    if (r->fields_count != TEXT_FIELDS_COUNT) {
        return text_error(r, COMMON_ECORRUPT,
                          "%zu fields, an operation has %d (client kind key "
                          "value expected invoke complete outcome result)",
                          r->fields_count, (int)TEXT_FIELDS_COUNT);
    }
    rc = text_integer(r, TEXT_CLIENT, false, &op->client_id);
    if (rc == 0) {
        rc = text_kind(r, &op->kind);
    }
    if (rc == 0) {
        rc = text_integer(r, TEXT_KEY, false, &op->key);
    }
    if (rc == 0) {
        rc = text_operands(r, op);
    }
    if (rc == 0) {
        rc = text_interval(r, op);
    }
    if (rc == 0) {
        rc = text_result(r, op);
    }
    return rc;
}

/* Appends op to the history, growing it geometrically. */
static int text_op_append(struct text_reader *r, const struct check_op *op)
{
    struct check_history *h = &r->history;
    struct check_op *ops;
    size_t capacity;

    if (h->count == CHECK_OPS_MAX) {
        return text_error(r, COMMON_ETOOBIG, "more than %zu operations",
                          CHECK_OPS_MAX);
    }
    if (h->count == r->capacity) {
        capacity = r->capacity == 0 ? 256 : r->capacity * 2;
        ops = common_realloc_array(h->ops, capacity, sizeof(*ops));
        if (ops == NULL) {
            return text_error(r, COMMON_ENOMEM, "out of memory");
        }
        h->ops = ops;
        r->capacity = capacity;
    }
    h->ops[h->count++] = *op;
    return 0;
}

/* The "initial <value>" line: once, before any operation. */
static int text_initial(struct text_reader *r)
{
    const char *why;

    if (r->has_initial || r->history.count > 0) {
        return text_error(r, COMMON_ECORRUPT,
                          "'initial' must come once, before any operation");
    }
    if (r->fields_count != 2) {
        return text_error(r, COMMON_ECORRUPT,
                          "'initial' takes exactly one value");
    }
    why = text_int64_parse(r->fields[1], true, &r->history.initial_value);
    if (why != NULL) {
        return text_error(r, COMMON_ECORRUPT, "initial value: %s: '%s'", why,
                          r->fields[1]);
    }
    r->has_initial = true;
    return 0;
}

/* Handles the line in r->line. */
static int text_line_parse(struct text_reader *r)
{
    struct check_op op;
    int rc;

    text_line_split(r);
    if (r->fields_count == 0 || r->fields[0][0] == '#') {
        return 0;
    }
    if (strcmp(r->fields[0], "initial") == 0) {
        return text_initial(r);
    }
    rc = text_op_parse(r, &op);
    if (rc != 0) {
        return rc;
    }
    return text_op_append(r, &op);
}

int check_history_read(FILE *in, struct check_history *out, char *errmsg,
                       size_t errmsg_size)
{
    struct text_reader *r;
    int rc;

    ASSERT(in != NULL);
    ASSERT(out != NULL);
    r = common_calloc(1, sizeof(*r));
    if (r == NULL) {
        return COMMON_ENOMEM;
    }
    r->in = in;
    r->errmsg = errmsg;
    r->errmsg_size = errmsg_size;
    r->history.initial_value = CHECK_ABSENT;
    while ((rc = text_line_read(r)) == 1) {
        rc = text_line_parse(r);
        if (rc != 0) {
            break;
        }
    }
    if (rc == 0) {
        *out = r->history;
    } else {
        check_history_close(&r->history);
    }
    common_free(r);
    return rc;
}

void check_history_close(struct check_history *history)
{
    common_free(history->ops);
    history->ops = NULL;
    history->count = 0;
}

/* Writes value as the format spells it: an integer or nil. */
static void text_value_write(FILE *out, int64_t value)
{
    if (value == CHECK_ABSENT) {
        fputs("nil", out);
    } else {
        fprintf(out, "%" PRId64, value);
    }
}

static void text_op_write(FILE *out, const struct check_op *op)
{
    static const char *const kinds[] = {"read", "write", "cas"};
    bool known = op->outcome == CHECK_OUTCOME_OK;

    fprintf(out, "%" PRId64 " %s %" PRId64 " ", op->client_id, kinds[op->kind],
            op->key);
    if (op->kind == CHECK_READ) {
        fputs("- -", out);
    } else {
        text_value_write(out, op->value);
        fputc(' ', out);
        if (op->kind == CHECK_CAS) {
            text_value_write(out, op->expected);
        } else {
            fputc('-', out);
        }
    }
    fprintf(out, " %" PRId64 " ", op->invoke_ns);
    if (!known && op->complete_ns == CHECK_TIME_NONE) {
        fputc('-', out);
    } else {
        fprintf(out, "%" PRId64, op->complete_ns);
    }
    fputs(known ? " ok " : " unknown -\n", out);
    if (!known) {
        return;
    }
    if (op->kind == CHECK_READ) {
        text_value_write(out, op->value);
    } else {
        fputs(op->kind == CHECK_WRITE || op->cas_succeeded ? "ok" : "fail",
              out);
    }
    fputc('\n', out);
}

int check_history_write(FILE *out, const struct check_op *ops, size_t count,
                        int64_t initial_value)
{
    ASSERT(out != NULL);
    for (size_t i = 0; i < count; i++) {
        if (check_op_validate(&ops[i]) != 0) {
            return -EINVAL;
        }
    }
    fputs("# sinew history: client kind key value expected invoke complete "
          "outcome result\n",
          out);
    fputs("initial ", out);
    text_value_write(out, initial_value);
    fputc('\n', out);
    for (size_t i = 0; i < count; i++) {
        text_op_write(out, &ops[i]);
    }
    return fflush(out) != 0 || ferror(out) ? -EIO : 0;
}
