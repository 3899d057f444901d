/* SPDX-License-Identifier: MIT
 *
 * func_int.h: what the files of engine_func share: the built-in functions'
 * entry points (func.c's registry lists them), the error helpers, and the
 * accessors that give an argument's bytes the way sqlite3_value_text(),
 * sqlite3_value_bytes() and sqlite3_value_blob() give them.
 *
 * Results: a scalar result may borrow the bytes of one of its arguments
 * (coalesce, min, substr of a blob, ...) or point into ctx->arena; either
 * way it lives as long as the arguments and the arena do.
 */
#ifndef SINEW_ENGINE_FUNC_INT_H
#define SINEW_ENGINE_FUNC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "func.h"

/* Writes msg into ctx->errmsg and returns rc. */
int engine__func_error(struct engine_func_context *ctx, int rc,
                       const char *msg);

/* SQLite's messages for the common failures. */
int engine__func_error_nomem(struct engine_func_context *ctx);
int engine__func_error_toobig(struct engine_func_context *ctx);

/* The bytes of v as sqlite3_value_text() sees them: TEXT and BLOB as they
 * are, numbers rendered into ctx->arena. *is_null is set for NULL (bytes
 * NULL, size 0). 0 or COMMON_ENOMEM. */
int engine__func_text(struct engine_func_context *ctx,
                      const struct engine_value *v, const uint8_t **bytes,
                      size_t *size, bool *is_null);

/* The bytes before the first NUL: what SQLite's loops over a
 * NUL-terminated sqlite3_value_text() see. */
size_t engine__func_cstr_size(const uint8_t *bytes, size_t size);

/* v as sqlite3_value_text() gives it to C code: a NUL-terminated copy in
 * ctx->arena, cut at the first NUL (*out NULL for an SQL NULL). 0 or an
 * error. */
int engine__func_cstr(struct engine_func_context *ctx,
                      const struct engine_value *v, const char **out);

/* sqlite3_value_int(): the int64 value truncated to 32 bits. */
int32_t engine__func_value_int32(const struct engine_value *v);

/* sqlite3_value_numeric_type(): INTEGER or REAL for numbers and for text
 * that is wholly a number (*out then holds the number), else the type. */
int engine__func_numeric(const struct engine_value *v,
                         struct engine_value *out);

/* sqlite3Utf8Read over [*p, end): one character, SQLite's way (overlong
 * and surrogate forms read as U+FFFD); 0 at end. Advances *p. */
uint32_t engine__func_utf8_read(const uint8_t **p, const uint8_t *end);

/* SQLITE_SKIP_UTF8: the position after the character at p. */
const uint8_t *engine__func_utf8_skip(const uint8_t *p, const uint8_t *end);

/* Writes c as 1 to 4 bytes of UTF-8 (SQLite's WRITE_UTF8); returns the
 * count. */
size_t engine__func_utf8_write(uint32_t c, uint8_t *out);

/* SQLite's printf engine (printf.c, sqlite3_str_vappendf with
 * SQLITE_PRINTF_SQLFUNC): the format applied to argv[0..argc). The result
 * text goes to ctx->arena; a result past ENGINE_MAX_LENGTH is NULL, as
 * SQLite's. 0, or COMMON_ENOMEM (with ctx->errmsg). */
int engine__func_format(struct engine_func_context *ctx, const uint8_t *format,
                        size_t format_size, int argc,
                        const struct engine_value *argv,
                        struct engine_value *out);

/* ---- scalar functions (argument checks per func.c's registry) ---- */

#define ENGINE__FUNC_SCALAR(name)                                              \
    int engine__func_##name(struct engine_func_context *ctx, int argc,         \
                            const struct engine_value *argv,                   \
                            struct engine_value *out)

ENGINE__FUNC_SCALAR(abs);
ENGINE__FUNC_SCALAR(changes);
ENGINE__FUNC_SCALAR(char);
ENGINE__FUNC_SCALAR(coalesce);
ENGINE__FUNC_SCALAR(glob);
ENGINE__FUNC_SCALAR(hex);
ENGINE__FUNC_SCALAR(iif);
ENGINE__FUNC_SCALAR(instr);
ENGINE__FUNC_SCALAR(last_insert_rowid);
ENGINE__FUNC_SCALAR(length);
ENGINE__FUNC_SCALAR(like);
ENGINE__FUNC_SCALAR(lower);
ENGINE__FUNC_SCALAR(ltrim);
ENGINE__FUNC_SCALAR(max);
ENGINE__FUNC_SCALAR(min);
ENGINE__FUNC_SCALAR(nullif);
ENGINE__FUNC_SCALAR(printf);
ENGINE__FUNC_SCALAR(quote);
ENGINE__FUNC_SCALAR(random);
ENGINE__FUNC_SCALAR(randomblob);
ENGINE__FUNC_SCALAR(replace);
ENGINE__FUNC_SCALAR(round);
ENGINE__FUNC_SCALAR(rtrim);
ENGINE__FUNC_SCALAR(sign);
ENGINE__FUNC_SCALAR(substr);
ENGINE__FUNC_SCALAR(total_changes);
ENGINE__FUNC_SCALAR(trim);
ENGINE__FUNC_SCALAR(typeof);
ENGINE__FUNC_SCALAR(unhex);
ENGINE__FUNC_SCALAR(unicode);
ENGINE__FUNC_SCALAR(upper);
ENGINE__FUNC_SCALAR(zeroblob);

/* ---- date and time (func_date_format.c) ---- */

ENGINE__FUNC_SCALAR(current_date);
ENGINE__FUNC_SCALAR(current_time);
ENGINE__FUNC_SCALAR(current_timestamp);
ENGINE__FUNC_SCALAR(date);
ENGINE__FUNC_SCALAR(datetime);
ENGINE__FUNC_SCALAR(julianday);
ENGINE__FUNC_SCALAR(strftime);
ENGINE__FUNC_SCALAR(time);
ENGINE__FUNC_SCALAR(unixepoch);

/* ---- math (func_math.c) ---- */

ENGINE__FUNC_SCALAR(acos);
ENGINE__FUNC_SCALAR(acosh);
ENGINE__FUNC_SCALAR(asin);
ENGINE__FUNC_SCALAR(asinh);
ENGINE__FUNC_SCALAR(atan);
ENGINE__FUNC_SCALAR(atan2);
ENGINE__FUNC_SCALAR(atanh);
ENGINE__FUNC_SCALAR(ceil);
ENGINE__FUNC_SCALAR(cos);
ENGINE__FUNC_SCALAR(cosh);
ENGINE__FUNC_SCALAR(degrees);
ENGINE__FUNC_SCALAR(exp);
ENGINE__FUNC_SCALAR(floor);
ENGINE__FUNC_SCALAR(ln);
ENGINE__FUNC_SCALAR(log); /* also log10 */
ENGINE__FUNC_SCALAR(log2);
ENGINE__FUNC_SCALAR(mod);
ENGINE__FUNC_SCALAR(pi);
ENGINE__FUNC_SCALAR(pow);
ENGINE__FUNC_SCALAR(radians);
ENGINE__FUNC_SCALAR(sin);
ENGINE__FUNC_SCALAR(sinh);
ENGINE__FUNC_SCALAR(sqrt);
ENGINE__FUNC_SCALAR(tan);
ENGINE__FUNC_SCALAR(tanh);
ENGINE__FUNC_SCALAR(trunc);

/* ---- aggregates (func_aggregate.c) ---- */

extern const struct engine_aggregate_def engine__func_aggregates[];
extern const size_t engine__func_aggregate_count;

/* ---- JSON (func_json_sql.c, func_json_agg.c) ---- */

ENGINE__FUNC_SCALAR(json_array);
ENGINE__FUNC_SCALAR(json_array_length);
ENGINE__FUNC_SCALAR(json_extract);
ENGINE__FUNC_SCALAR(json_insert);
ENGINE__FUNC_SCALAR(json_object);
ENGINE__FUNC_SCALAR(json_patch);
ENGINE__FUNC_SCALAR(json_ptr);  /* the -> operator */
ENGINE__FUNC_SCALAR(json_ptr2); /* the ->> operator */
ENGINE__FUNC_SCALAR(json_quote);
ENGINE__FUNC_SCALAR(json_remove); /* also json(X) */
ENGINE__FUNC_SCALAR(json_replace);
ENGINE__FUNC_SCALAR(json_set);
ENGINE__FUNC_SCALAR(json_type);
ENGINE__FUNC_SCALAR(json_valid);

extern const struct engine_aggregate_def engine__func_json_aggregates[];
extern const size_t engine__func_json_aggregate_count;

#endif /* SINEW_ENGINE_FUNC_INT_H */
