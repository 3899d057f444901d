/* SPDX-License-Identifier: MIT
 *
 * func_printf.c: SQLite's printf() / format() SQL function, written from
 * the rules of SQLite 3.40's printf.c (sqlite3_str_vappendf with
 * SQLITE_PRINTF_SQLFUNC) and lang_corefunc.html#printf.
 *
 * A conversion is '%', flags (- + space # ! 0 ,), a width (digits or '*'),
 * a precision ('.' digits or '.*'), optional l/ll (ignored), and a type:
 * d i u x X o p r (integers; r is an ordinal, "3rd"), f e E g G (reals), s z
 * (text), q Q w (quoted text), c (one character, repeated precision times),
 * % and n. An unknown type, or T and S, ends the output there. Arguments
 * are taken in order; missing ones read as 0, 0.0 or NULL, and NULL text
 * prints as "" (%s), "(NULL)" (%q, %w) or NULL (%Q).
 *
 * Reals use SQLite's own decimal conversion, not libc's: the value is
 * scaled into [1, 10) in long double, a rounding term 5 * 10^-(precision+1)
 * is added first (plus 3e-16 of the value for %f at precision + exp/3 <
 * 15), and at most 16 significant digits are produced (26 with '!'), the
 * rest printing as '0'. A result past ENGINE_MAX_LENGTH is NULL, as
 * SQLite's StrAccum in its TOOBIG state gives; so is a result to which
 * nothing was ever appended (printf(''), printf('%T')), while a
 * conversion that appends zero bytes (printf('%s', '')) gives ''.
 */
#include "func.h"

#include <math.h>
#include <string.h>

#include "func_int.h"
#include "real_text.h"

/* Conversion kinds (printf.c's et* paradigms). */
enum conv_kind {
    CONV_DECIMAL, /* d i u */
    CONV_RADIX,   /* x X o p */
    CONV_ORDINAL, /* r */
    CONV_FLOAT,   /* f */
    CONV_EXP,     /* e E */
    CONV_GENERIC, /* g G */
    CONV_SIZE,    /* n: prints nothing */
    CONV_STRING,  /* s z */
    CONV_ESCAPE,  /* q */
    CONV_ESCAPE2, /* Q */
    CONV_ESCAPE3, /* w */
    CONV_CHAR,    /* c */
    CONV_PERCENT, /* % */
    CONV_STOP,    /* T S and unknown types: output ends */
};

struct conv_info {
    char type;           /* the letter */
    uint8_t base;        /* integer radix */
    bool is_signed;      /* d i r f e g */
    enum conv_kind kind; /* paradigm */
    const char *digits;  /* digit set; [0] is the exponent letter for reals */
    const char *prefix;  /* '#' prefix for radix conversions, or "" */
};

static const char upper_digits[] = "0123456789ABCDEF";
static const char lower_digits[] = "0123456789abcdef";

static const struct conv_info conv_table[] = {
    {'d', 10, true, CONV_DECIMAL, upper_digits, ""},
    {'s', 0, false, CONV_STRING, upper_digits, ""},
    {'g', 0, true, CONV_GENERIC, "e", ""},
    {'z', 0, false, CONV_STRING, upper_digits, ""},
    {'q', 0, false, CONV_ESCAPE, upper_digits, ""},
    {'Q', 0, false, CONV_ESCAPE2, upper_digits, ""},
    {'w', 0, false, CONV_ESCAPE3, upper_digits, ""},
    {'c', 0, false, CONV_CHAR, upper_digits, ""},
    {'o', 8, false, CONV_RADIX, upper_digits, "0"},
    {'u', 10, false, CONV_DECIMAL, upper_digits, ""},
    {'x', 16, false, CONV_RADIX, lower_digits, "0x"},
    {'X', 16, false, CONV_RADIX, upper_digits, "0X"},
    {'f', 0, true, CONV_FLOAT, "e", ""},
    {'e', 0, true, CONV_EXP, "e", ""},
    {'E', 0, true, CONV_EXP, "E", ""},
    {'G', 0, true, CONV_GENERIC, "E", ""},
    {'i', 10, true, CONV_DECIMAL, upper_digits, ""},
    {'n', 0, false, CONV_SIZE, upper_digits, ""},
    {'%', 0, false, CONV_PERCENT, upper_digits, ""},
    {'p', 16, false, CONV_RADIX, upper_digits, "0x"},
    {'r', 10, true, CONV_ORDINAL, upper_digits, ""},
};

/* One parsed conversion. width >= 0; precision -1 when absent. */
struct printf_spec {
    bool left;                    /* '-' or a negative '*' width */
    char sign;                    /* '+', ' ' or 0 */
    bool alt;                     /* '#' */
    bool alt2;                    /* '!' */
    bool zero_pad;                /* '0' */
    bool thousands;               /* ',' */
    int width;                    /* field width in bytes */
    int precision;                /* -1: none */
    const struct conv_info *info; /* NULL: stop */
};

/* The output and the argument cursor. Once too_big or nomem is set,
 * nothing more is written. */
struct printf_state {
    struct engine_func_context *ctx;
    const struct engine_value *argv; /* borrowed for the call */
    int argc;
    int used;        /* arguments consumed */
    uint8_t *bytes;  /* output so far; owned (common_malloc) */
    size_t size;     /* bytes used */
    size_t capacity; /* bytes allocated */
    bool too_big;    /* the output passed ENGINE_MAX_LENGTH */
    bool nomem;      /* an allocation failed */
    bool is_started; /* something was appended, if only zero bytes */
};

/* SQLite's StrAccum refuses to grow past its limit including the NUL. */
static bool out_reserve(struct printf_state *st, size_t n)
{
    size_t capacity;
    uint8_t *grown;

    if (st->too_big || st->nomem) {
        return false;
    }
    if (n >= ENGINE_MAX_LENGTH - st->size) {
        st->too_big = true;
        return false;
    }
    if (st->size + n <= st->capacity) {
        return true;
    }
    capacity = st->capacity < 64 ? 64 : st->capacity;
    while (capacity < st->size + n) {
        capacity *= 2;
    }
    grown = common_realloc(st->bytes, capacity);
    if (grown == NULL) {
        st->nomem = true;
        return false;
    }
    st->bytes = grown;
    st->capacity = capacity;
    return true;
}

static void out_append(struct printf_state *st, const void *bytes, size_t n)
{
    st->is_started = true;
    if (n > 0 && out_reserve(st, n)) {
        memcpy(st->bytes + st->size, bytes, n);
        st->size += n;
    }
}

static void out_repeat(struct printf_state *st, uint8_t c, int64_t n)
{
    if (n > 0 && out_reserve(st, (size_t)n)) {
        memset(st->bytes + st->size, c, (size_t)n);
        st->size += (size_t)n;
    }
}

static int64_t arg_int(struct printf_state *st)
{
    if (st->used >= st->argc) {
        return 0;
    }
    return engine__value_to_int(&st->argv[st->used++]);
}

static double arg_real(struct printf_state *st)
{
    if (st->used >= st->argc) {
        return 0.0;
    }
    return engine__value_to_real(&st->argv[st->used++]);
}

/* The next argument as a C string sees it (up to a NUL), or NULL. */
static const uint8_t *arg_text(struct printf_state *st, size_t *size)
{
    const uint8_t *bytes;
    bool is_null;

    if (st->used >= st->argc) {
        return NULL;
    }
    if (engine__func_text(st->ctx, &st->argv[st->used++], &bytes, size,
                          &is_null) != 0) {
        st->nomem = true;
        return NULL;
    }
    if (is_null) {
        return NULL;
    }
    *size = engine__func_cstr_size(bytes, *size);
    return bytes == NULL ? (const uint8_t *)"" : bytes;
}

/* The field: width padding on the side the '-' flag says. */
static void out_field(struct printf_state *st, const struct printf_spec *sp,
                      int width, const void *bytes, size_t length)
{
    int64_t pad = (int64_t)width - (int64_t)length;

    if (pad > 0 && !sp->left) {
        out_repeat(st, ' ', pad);
    }
    out_append(st, bytes, length);
    if (pad > 0 && sp->left) {
        out_repeat(st, ' ', pad);
    }
}

/* Width in bytes grows by the continuation bytes of UTF-8 text when '!'
 * asks for characters (printf.c's adjust_width_for_utf8). */
static int utf8_width(const struct printf_spec *sp, int width,
                      const uint8_t *bytes, size_t length)
{
    size_t i;

    if (sp->alt2 && width > 0) {
        for (i = 0; i < length; i++) {
            width += (bytes[i] & 0xc0) == 0x80;
        }
    }
    return width;
}

struct format_cursor {
    const uint8_t *bytes; /* the format; borrowed */
    size_t size;
    size_t at; /* index of the current character */
};

/* The character at index at, or 0 past the end (the format's NUL). */
static uint8_t fmt_at(const struct format_cursor *f, size_t at)
{
    return at < f->size ? f->bytes[at] : 0;
}

static uint8_t fmt_next(struct format_cursor *f)
{
    f->at++;
    return fmt_at(f, f->at);
}

/* Digits from the cursor on (unsigned, wrapping), cursor left on the first
 * non-digit; c is the current character. */
static int parse_number(struct format_cursor *f, uint8_t *c)
{
    uint32_t n = 0;

    while (*c >= '0' && *c <= '9') {
        n = n * 10 + (uint32_t)(*c - '0');
        *c = fmt_next(f);
    }
    return (int)(n & 0x7fffffff);
}

/* '*' width: a negative one left-justifies. */
static void parse_star_width(struct printf_state *st, struct printf_spec *sp)
{
    int width = (int)(int32_t)(uint32_t)(uint64_t)arg_int(st);

    if (width < 0) {
        sp->left = true;
        width = width >= -2147483647 ? -width : 0;
    }
    sp->width = width;
}

/* '.' precision; returns true when the spec is done. c is the character
 * after the '.' on entry and the current one on return. */
static bool parse_precision(struct printf_state *st, struct printf_spec *sp,
                            struct format_cursor *f, uint8_t *c)
{
    if (*c == '*') {
        int precision = (int)(int32_t)(uint32_t)(uint64_t)arg_int(st);
        if (precision < 0) {
            precision = precision >= -2147483647 ? -precision : -1;
        }
        sp->precision = precision;
        *c = fmt_next(f);
    } else {
        sp->precision = parse_number(f, c);
    }
    if (*c == 'l') {
        f->at--;
        return false;
    }
    return true;
}

/* One flag, width or precision item at c; returns true when done. */
static bool parse_item(struct printf_state *st, struct printf_spec *sp,
                       struct format_cursor *f, uint8_t *c)
{
    switch (*c) {
    case '-':
        sp->left = true;
        return false;
    case '+':
    case ' ':
        sp->sign = (char)*c;
        return false;
    case '#':
        sp->alt = true;
        return false;
    case '!':
        sp->alt2 = true;
        return false;
    case '0':
        sp->zero_pad = true;
        return false;
    case ',':
        sp->thousands = true;
        return false;
    case 'l':
        *c = fmt_next(f);
        if (*c == 'l') {
            *c = fmt_next(f);
        }
        return true;
    case '*':
        parse_star_width(st, sp);
        if ((*c = fmt_at(f, f->at + 1)) != '.' && *c != 'l') {
            *c = fmt_next(f);
            return true;
        }
        return false;
    case '.':
        *c = fmt_next(f);
        return parse_precision(st, sp, f, c);
    default:
        if (*c >= '1' && *c <= '9') {
            sp->width = parse_number(f, c);
            if (*c != '.' && *c != 'l') {
                return true;
            }
            f->at--;
            return false;
        }
        return true;
    }
}

/* Parses the conversion after a '%' (cursor on the character after it);
 * leaves the cursor on the type letter. */
static void parse_spec(struct printf_state *st, struct format_cursor *f,
                       struct printf_spec *sp)
{
    uint8_t c = fmt_at(f, f->at);
    size_t i;

    memset(sp, 0, sizeof(*sp));
    sp->precision = -1;
    while (!parse_item(st, sp, f, &c)) {
        if ((c = fmt_next(f)) == 0) {
            break;
        }
    }
    for (i = 0; i < sizeof(conv_table) / sizeof(conv_table[0]); i++) {
        if (c == (uint8_t)conv_table[i].type) {
            sp->info = &conv_table[i];
            return;
        }
    }
}

/* Scratch for one conversion: a stack buffer, or a heap one when the
 * width or precision needs more (printfTempBuf). */
#define PRINTF_BUF_SIZE 70

struct scratch {
    char stack[PRINTF_BUF_SIZE];
    char *heap; /* owned, or NULL */
};

/* size bytes of scratch, or NULL (too_big or nomem set on st). */
static char *scratch_get(struct printf_state *st, struct scratch *s,
                         int64_t size)
{
    s->heap = NULL;
    if (size <= PRINTF_BUF_SIZE) {
        return s->stack;
    }
    if (size > ENGINE_MAX_LENGTH) {
        st->too_big = true;
        return NULL;
    }
    s->heap = common_malloc((size_t)size);
    if (s->heap == NULL) {
        st->nomem = true;
    }
    return s->heap;
}

/* Digits of value in base with the ordinal suffix, written backwards
 * ending at end; returns the start. */
static char *integer_digits(const struct conv_info *info, uint64_t value,
                            char *end)
{
    static const char ordinals[] = "thstndrd";
    char *p = end;

    if (info->kind == CONV_ORDINAL) {
        int x = (int)(value % 10);
        if (x >= 4 || (value / 10) % 10 == 1) {
            x = 0;
        }
        *(--p) = ordinals[x * 2 + 1];
        *(--p) = ordinals[x * 2];
    }
    do {
        *(--p) = info->digits[value % info->base];
        value /= info->base;
    } while (value > 0);
    return p;
}

/* Inserts ',' every three characters from the right into [p, end),
 * moving the text left; returns the new start. */
static char *integer_group(char *p, char *end)
{
    int length = (int)(end - p);
    int groups = (length - 1) / 3, lead = (length - 1) % 3 + 1, i;
    char *q = p - groups;

    for (i = 0; i < length; i++) {
        *q++ = p[i];
        if (i + 1 < length && (i + 1 - lead) % 3 == 0) {
            *q++ = ',';
        }
    }
    return p - groups;
}

static void format_integer(struct printf_state *st, struct printf_spec *sp)
{
    const struct conv_info *info = sp->info;
    bool thousands = sp->thousands && info->kind == CONV_DECIMAL;
    struct scratch s;
    uint64_t value;
    char sign = 0, *buf, *end, *p;
    int64_t size = PRINTF_BUF_SIZE;
    int64_t v = arg_int(st);

    if (info->is_signed && v < 0) {
        value = (uint64_t)0 - (uint64_t)v;
        sign = '-';
    } else {
        value = (uint64_t)v;
        sign = info->is_signed ? sp->sign : 0;
    }
    if (sp->zero_pad && sp->precision < sp->width - (sign != 0)) {
        sp->precision = sp->width - (sign != 0);
    }
    if (sp->precision >= PRINTF_BUF_SIZE - 10 - PRINTF_BUF_SIZE / 3) {
        size =
            (int64_t)sp->precision + 10 + (thousands ? sp->precision / 3 : 0);
    }
    buf = scratch_get(st, &s, size);
    if (buf == NULL) {
        return;
    }
    end = buf + size - 1;
    p = integer_digits(info, value, end);
    while (sp->precision > end - p) {
        *(--p) = '0';
    }
    if (thousands) {
        p = integer_group(p, end);
    }
    if (sign != 0) {
        *(--p) = sign;
    }
    if (sp->alt && value != 0 && info->kind == CONV_RADIX) {
        size_t n = strlen(info->prefix);
        p -= n;
        memcpy(p, info->prefix, n);
    }
    out_field(st, sp, sp->width, p, (size_t)(end - p));
    common_free(s.heap);
}

/* A real being converted, between the steps of format_real(). */
struct real_conv {
    long double value;   /* the magnitude, scaled into [1, 10) */
    int exp;             /* its decimal exponent */
    int precision;       /* digits after the point (after %g's adjustment) */
    enum conv_kind kind; /* CONV_FLOAT or CONV_EXP once decided */
    bool strip_zeros;    /* %g without '#', or '!' */
    char sign;           /* '-', '+', ' ' or 0 */
};

/* Writes the digits, point and exponent into p; returns the end. */
static char *real_write(struct real_conv *rc, const struct printf_spec *sp,
                        char *p)
{
    int e2 = rc->kind == CONV_EXP ? 0 : rc->exp;
    int count = 16 + (sp->alt2 ? 10 : 0), precision = rc->precision;
    bool point = precision > 0 || sp->alt || sp->alt2;
    char *start = p;

    if (rc->sign != 0) {
        *p++ = rc->sign;
    }
    if (e2 < 0) {
        *p++ = '0';
    }
    for (; e2 >= 0; e2--) {
        *p++ = engine__real_digit(&rc->value, &count);
    }
    if (point) {
        *p++ = '.';
    }
    for (e2++; e2 < 0; precision--, e2++) {
        *p++ = '0';
    }
    while ((precision--) > 0) {
        *p++ = engine__real_digit(&rc->value, &count);
    }
    if (rc->strip_zeros && point) {
        while (p > start && p[-1] == '0') {
            p--;
        }
        if (p[-1] == '.') {
            if (sp->alt2) {
                *p++ = '0';
            } else {
                p--;
            }
        }
    }
    return p;
}

static char *real_write_exponent(int exp, char letter, char *p)
{
    *p++ = letter;
    if (exp < 0) {
        *p++ = '-';
        exp = -exp;
    } else {
        *p++ = '+';
    }
    if (exp >= 100) {
        *p++ = (char)(exp / 100 + '0');
        exp %= 100;
    }
    *p++ = (char)(exp / 10 + '0');
    *p++ = (char)(exp % 10 + '0');
    return p;
}

/* Rounds, scales and picks %g's form; returns false for Inf and NaN,
 * which format_real_special() prints. */
static bool real_prepare(struct real_conv *rc, const struct printf_spec *sp,
                         double value)
{
    double rounder;

    rc->value = value;
    rc->sign = sp->sign;
    if (rc->value < 0.0) {
        rc->value = -rc->value;
        rc->sign = '-';
    }
    if (rc->kind == CONV_GENERIC && rc->precision > 0) {
        rc->precision--;
    }
    rounder = engine__real_rounder(rc->precision);
    if (rc->kind == CONV_FLOAT) {
        double rx = (double)rc->value;
        uint64_t u;
        int ex;
        memcpy(&u, &rx, sizeof(u));
        ex = -1023 + (int)((u >> 52) & 0x7ff);
        if (rc->precision + (ex / 3) < 15) {
            rounder = (double)(rounder + rc->value * 3e-16);
        }
        rc->value += rounder;
    }
    rc->exp = 0;
    if (isnan(rc->value)) {
        return false;
    }
    if (rc->value > 0.0) {
        rc->exp = engine__real_normalize(&rc->value);
        if (rc->exp > 350) {
            return false;
        }
    }
    if (rc->kind != CONV_FLOAT) {
        rc->value += rounder;
        if (rc->value >= 10.0) {
            rc->value *= 0.1;
            rc->exp++;
        }
    }
    return true;
}

/* Inf (with its sign) or NaN, padded with spaces only. */
static void format_real_special(struct printf_state *st,
                                const struct printf_spec *sp,
                                const struct real_conv *rc)
{
    char text[8];
    size_t n = 0;

    if (isnan(rc->value)) {
        out_field(st, sp, sp->width, "NaN", 3);
        return;
    }
    if (rc->sign != 0) {
        text[n++] = rc->sign;
    }
    memcpy(text + n, "Inf", 3);
    out_field(st, sp, sp->width, text, n + 3);
}

static void format_real(struct printf_state *st, const struct printf_spec *sp)
{
    struct real_conv rc = {.kind = sp->info->kind};
    struct scratch s;
    char *buf, *end;
    int64_t size, length;

    rc.precision = sp->precision < 0 ? 6 : sp->precision;
    rc.precision = rc.precision > 100000000 ? 100000000 : rc.precision;
    if (!real_prepare(&rc, sp, arg_real(st))) {
        format_real_special(st, sp, &rc);
        return;
    }
    rc.strip_zeros = rc.kind == CONV_GENERIC ? !sp->alt : sp->alt2;
    if (rc.kind == CONV_GENERIC) {
        if (rc.exp < -4 || rc.exp > rc.precision) {
            rc.kind = CONV_EXP;
        } else {
            rc.precision -= rc.exp;
            rc.kind = CONV_FLOAT;
        }
    }
    size = (rc.kind == CONV_EXP || rc.exp < 0 ? 0 : rc.exp) +
           (int64_t)rc.precision + sp->width + 15;
    buf = scratch_get(st, &s, size);
    if (buf == NULL) {
        return;
    }
    end = real_write(&rc, sp, buf);
    if (rc.kind == CONV_EXP) {
        end = real_write_exponent(rc.exp, sp->info->digits[0], end);
    }
    length = end - buf;
    if (sp->zero_pad && !sp->left && length < sp->width) {
        int64_t pad = sp->width - length, at = rc.sign != 0;
        memmove(buf + at + pad, buf + at, (size_t)(length - at));
        memset(buf + at, '0', (size_t)pad);
        length = sp->width;
    }
    out_field(st, sp, sp->width, buf, (size_t)length);
    common_free(s.heap);
}

/* %s and %z: precision counts bytes, or characters with '!'. */
static void format_string(struct printf_state *st, const struct printf_spec *sp)
{
    size_t size = 0, length;
    const uint8_t *text = arg_text(st, &size);

    if (text == NULL) {
        text = (const uint8_t *)"";
        size = 0;
    }
    length = size;
    if (sp->precision >= 0) {
        if (sp->alt2) {
            const uint8_t *z = text, *end = text + size;
            int precision = sp->precision;
            while (precision-- > 0 && z < end) {
                z = engine__func_utf8_skip(z, end);
            }
            length = (size_t)(z - text);
        } else if ((size_t)sp->precision < size) {
            length = (size_t)sp->precision;
        }
    }
    out_field(st, sp, utf8_width(sp, sp->width, text, length), text, length);
}

/* The bytes of an escaped argument that precision lets through, and how
 * many quote characters they hold. */
static size_t escape_span(const uint8_t *text, size_t size,
                          const struct printf_spec *sp, uint8_t q,
                          size_t *quotes)
{
    int64_t k = sp->precision;
    size_t i;

    *quotes = 0;
    for (i = 0; k != 0 && i < size; i++, k--) {
        if (text[i] == q) {
            (*quotes)++;
        }
        if (sp->alt2 && (text[i] & 0xc0) == 0xc0) {
            while (i + 1 < size && (text[i + 1] & 0xc0) == 0x80) {
                i++;
            }
        }
    }
    return i;
}

/* %q, %Q, %w: the quote character doubled; %Q adds quotes, and NULL
 * prints as NULL (%Q) or (NULL). */
static void format_escape(struct printf_state *st, const struct printf_spec *sp)
{
    enum conv_kind kind = sp->info->kind;
    uint8_t q = kind == CONV_ESCAPE3 ? '"' : '\'';
    size_t size = 0, quotes, span, i, j = 0;
    const uint8_t *text = arg_text(st, &size);
    bool quoted = text != NULL && kind == CONV_ESCAPE2;
    struct scratch s;
    char *buf;

    if (text == NULL) {
        text = (const uint8_t *)(kind == CONV_ESCAPE2 ? "NULL" : "(NULL)");
        size = strlen((const char *)text);
    }
    span = escape_span(text, size, sp, q, &quotes);
    buf = scratch_get(st, &s, (int64_t)(span + quotes + 3));
    if (buf == NULL) {
        return;
    }
    if (quoted) {
        buf[j++] = (char)q;
    }
    for (i = 0; i < span; i++) {
        buf[j++] = (char)text[i];
        if (text[i] == q) {
            buf[j++] = (char)q;
        }
    }
    if (quoted) {
        buf[j++] = (char)q;
    }
    out_field(st, sp, utf8_width(sp, sp->width, (const uint8_t *)buf, j), buf,
              j);
    common_free(s.heap);
}

/* %c: the first character of the argument, precision times. */
static void format_char(struct printf_state *st, struct printf_spec *sp)
{
    size_t size = 0, length = 1;
    const uint8_t *text = arg_text(st, &size);
    uint8_t buf[4] = {0};
    int width = sp->width, precision = sp->precision;

    if (text != NULL && size > 0) {
        buf[0] = text[0];
        if ((buf[0] & 0xc0) == 0xc0) {
            while (length < 4 && length < size &&
                   (text[length] & 0xc0) == 0x80) {
                buf[length] = text[length];
                length++;
            }
        }
    }
    if (precision > 1) {
        width -= precision - 1;
        if (width > 1 && !sp->left) {
            out_repeat(st, ' ', width - 1);
            width = 0;
        }
        out_append(st, buf, length);
        while (--precision > 1 && !st->too_big && !st->nomem) {
            out_append(st, buf, length);
        }
    }
    sp->alt2 = true;
    out_field(st, sp, utf8_width(sp, width, buf, length), buf, length);
}

/* Runs one conversion; returns false when the output ends here. */
static bool format_one(struct printf_state *st, struct printf_spec *sp)
{
    if (sp->info == NULL) {
        return false;
    }
    switch (sp->info->kind) {
    case CONV_DECIMAL:
    case CONV_RADIX:
    case CONV_ORDINAL:
        format_integer(st, sp);
        return true;
    case CONV_FLOAT:
    case CONV_EXP:
    case CONV_GENERIC:
        format_real(st, sp);
        return true;
    case CONV_STRING:
        format_string(st, sp);
        return true;
    case CONV_ESCAPE:
    case CONV_ESCAPE2:
    case CONV_ESCAPE3:
        format_escape(st, sp);
        return true;
    case CONV_CHAR:
        format_char(st, sp);
        return true;
    case CONV_PERCENT:
        out_field(st, sp, sp->width, "%", 1);
        return true;
    case CONV_SIZE:
        out_append(st, "", 0);
        return true;
    default:
        return false;
    }
}

/* Walks the format: literal runs are copied, each '%' converted. */
static void format_all(struct printf_state *st, struct format_cursor *f)
{
    struct printf_spec spec;

    while (f->at < f->size && !st->too_big && !st->nomem) {
        const uint8_t *pct = memchr(f->bytes + f->at, '%', f->size - f->at);
        size_t stop = pct == NULL ? f->size : (size_t)(pct - f->bytes);
        if (stop > f->at) {
            out_append(st, f->bytes + f->at, stop - f->at);
        }
        f->at = stop;
        if (f->at >= f->size) {
            return;
        }
        if (fmt_next(f) == 0) {
            out_append(st, "%", 1);
            return;
        }
        parse_spec(st, f, &spec);
        if (!format_one(st, &spec)) {
            return;
        }
        f->at++;
    }
}

int engine__func_format(struct engine_func_context *ctx, const uint8_t *format,
                        size_t format_size, int argc,
                        const struct engine_value *argv,
                        struct engine_value *out)
{
    struct printf_state st = {.ctx = ctx, .argv = argv, .argc = argc};
    struct format_cursor f = {format, format_size, 0};
    void *copy;

    ASSERT(argc >= 0);
    ASSERT(format != NULL || format_size == 0);
    format_all(&st, &f);
    *out = engine__value_null();
    if (st.nomem) {
        common_free(st.bytes);
        return engine__func_error_nomem(ctx);
    }
    if (!st.too_big && st.is_started) {
        copy = engine__arena_memdup(ctx->arena, st.bytes, st.size);
        common_free(st.bytes);
        if (copy == NULL) {
            return engine__func_error_nomem(ctx);
        }
        *out = engine__value_text(copy, st.size);
        return 0;
    }
    common_free(st.bytes);
    return 0;
}
