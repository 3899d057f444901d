/* SPDX-License-Identifier: MIT
 *
 * pragma_jit.c: the JIT's pragmas (jit_plan.h). PRAGMA jit gives 1 or 0;
 * PRAGMA jit = on|off|true|false|yes|no|1|0 switches it for the handle
 * (a prepared plan keeps its JIT operator and asks at each run, so the
 * switch takes effect at the next execution). Any other value is an
 * error, so a typo does not silently leave it as it was. PRAGMA jit_stats
 * is one row of engine_jit_stats().
 */
#include <strings.h>

#include "pragma.h"

int engine__pragma_jit(struct engine_stmt *stmt,
                       const struct ast_pragma *pragma)
{
    static const struct {
        const char *word;
        bool on;
    } words[] = {{"on", true},     {"off", false}, {"true", true},
                 {"false", false}, {"yes", true},  {"no", false},
                 {"1", true},      {"0", false}};
    struct engine_value value;

    if (pragma->value == NULL) {
        value = engine__value_int(!stmt->db->jit_off);
        return engine__pragma_row(stmt, &value);
    }
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if (strcasecmp(pragma->value, words[i].word) == 0) {
            stmt->db->jit_off = !words[i].on;
            return 0;
        }
    }
    return engine__db_error(stmt->db, ENGINE_ESQL,
                            "PRAGMA jit takes on or off, not \"%s\"",
                            pragma->value);
}

int engine__pragma_jit_stats(struct engine_stmt *stmt,
                             const struct ast_pragma *pragma)
{
    const struct engine_jit_stats *stats = &stmt->db->jit_stats;
    struct engine_value row[5] = {
        engine__value_int((int64_t)stats->compiles),
        engine__value_int((int64_t)stats->compile_ns),
        engine__value_int((int64_t)stats->code_bytes),
        engine__value_int((int64_t)stats->runs_compiled),
        engine__value_int((int64_t)stats->runs_interpreted),
    };

    (void)pragma;
    return engine__pragma_row(stmt, row);
}
