/* SPDX-License-Identifier: MIT
 *
 * Goal: a damaged main file or WAL never crashes the engine and is never
 * taken for good data. Opening fails with ENGINE_ECORRUPT or
 * ENGINE_ENOTADB (ENGINE_EIO and COMMON_ENOMEM are tolerated, nothing
 * else), leaving both files as they were; or it succeeds with exactly what
 * the undamaged bytes hold, after which PRAGMA integrity_check says ok and
 * a new commit survives a reopen.
 * Method: the corpus databases of storage_corpus.h (every column block
 * encoding in the main file, a WAL of INSERT, UPDATE, rowid change, DELETE
 * and DDL commits) are built, with a dump of the state after the setup and
 * after each commit. Seeded mutations (SINEW_TEST_SEED replays; the seed
 * and the mutation are printed on failure) are applied to a copy of one of
 * the files: bit flips, truncations, byte overwrites in the headers,
 * segments and records, length fields set huge, records or byte ranges
 * duplicated, zeroed pages, appended garbage. The verdicts:
 * - main file: every byte is under a checksum, so any change must be
 *   refused (ENGINE_ENOTADB exactly when the magic is gone);
 * - WAL: refused, or cut at the last whole commit before the first changed
 *   byte, so the database equals that prefix of the commits;
 * - with checksums recomputed after the mutation (storage_corpus.h), the
 *   structural checks behind them are reached: the open may succeed with
 *   other data, but must not crash or return another code, and what opens
 *   must take a write and open again.
 * Fixed cases after the random ones are the inputs the fuzzer (fuzz_storage)
 * found. SINEW_STORAGE_ROBUST_CASES sets the number of random cases.
 */
#include "storage_corpus.h"
#include "storage_test.h"

#define CASES_DEFAULT 3000
#define MAX_STATES 12

/* A corpus database: its files' bytes, and a dump of each state its WAL
 * passes through (states[k]: after k commits). */
struct base {
    uint8_t *main_file;
    size_t main_size;
    uint8_t *wal;
    size_t wal_size;
    size_t record_ends[MAX_STATES]; /* WAL offset after record k */
    size_t record_count;
    struct common_buf states[MAX_STATES];
    size_t state_count;
};

/* A mutated pair of files and what it tells about the expected verdict. */
struct damage {
    uint8_t *main_file;
    size_t main_size;
    uint8_t *wal;
    size_t wal_size;
    bool on_wal;    /* else the main file was mutated */
    bool repaired;  /* checksums recomputed after the mutation */
    char what[160]; /* the mutation, for the failure message */
};

struct tally {
    size_t refused;
    size_t cut;         /* WAL mutations opened as a prefix */
    size_t accepted;    /* repaired mutations that opened */
    size_t regressions; /* fixed cases run */
};

static uint64_t seed;

static long pass_pwrite(void *ctx, int fd, const void *bytes, size_t size,
                        int64_t offset)
{
    (void)ctx;
    return (long)pwrite(fd, bytes, size, (off_t)offset);
}

/* Durability is not under test: fsync is skipped, which keeps the test
 * fast. */
static int skip_fsync(void *ctx, int fd)
{
    (void)ctx;
    (void)fd;
    return 0;
}

static const struct engine_io_hooks fast_hooks = {
    .pwrite = pass_pwrite,
    .fsync = skip_fsync,
};

static void record_state(void *ctx, size_t commit, struct engine_db *db)
{
    struct base *base = ctx;

    assert_int_equal(commit, base->state_count);
    assert_true(base->state_count < MAX_STATES);
    dump_db(db, &base->states[base->state_count++]);
}

/* The offsets where the WAL's records end. */
static void find_records(struct base *base)
{
    size_t offset = STORAGE_CORPUS_WAL_HEADER_SIZE;

    while (offset < base->wal_size) {
        offset += STORAGE_CORPUS_RECORD_HEADER_SIZE +
                  common_get_u32le(base->wal + offset + 4);
        assert_true(offset <= base->wal_size);
        base->record_ends[base->record_count++] = offset;
    }
    assert_int_equal(base->record_count + 1, base->state_count);
}

static void base_build(struct base *base, size_t which)
{
    struct scratch_dir dir;

    memset(base, 0, sizeof(*base));
    scratch_dir_make(&dir);
    assert_int_equal(storage_corpus_build(dir.db, which, record_state, base),
                     0);
    assert_int_equal(
        storage_corpus_read(dir.db, &base->main_file, &base->main_size), 0);
    assert_int_equal(storage_corpus_read(dir.wal, &base->wal, &base->wal_size),
                     0);
    scratch_dir_remove(&dir);
    find_records(base);
}

static void base_free(struct base *base)
{
    for (size_t i = 0; i < base->state_count; i++) {
        common_buf_close(&base->states[i]);
    }
    free(base->main_file);
    free(base->wal);
}

/* ---- mutations ---- */

static uint8_t *copy_bytes(const uint8_t *bytes, size_t size, size_t extra)
{
    uint8_t *copy = malloc(size + extra + 1);

    assert_non_null(copy);
    if (size > 0) {
        memcpy(copy, bytes, size);
    }
    return copy;
}

/* An offset in [0, size) biased to where structure is: the header, a
 * segment's start or a WAL record's header. */
static size_t pick_offset(struct common_test_rng *rng, const uint8_t *bytes,
                          size_t size, bool on_wal)
{
    size_t header = on_wal ? STORAGE_CORPUS_WAL_HEADER_SIZE
                           : STORAGE_CORPUS_MAIN_HEADER_SIZE;
    size_t at = (size_t)common_test_rng_below(rng, size);

    switch (common_test_rng_below(rng, 4)) {
    case 0:
        return at % (header < size ? header : size);
    case 1:
        /* Near the next segment magic or record magic. */
        for (size_t i = at; i + 4 <= size; i++) {
            if (memcmp(bytes + i, on_wal ? "SNWR" : "SSEG", 4) == 0) {
                return (i + (size_t)common_test_rng_below(rng, 48)) % size;
            }
        }
        return at;
    default:
        return at;
    }
}

/* A WAL record's header offset, or SIZE_MAX when it has none. */
static size_t pick_record(struct common_test_rng *rng, const struct base *base,
                          size_t *index)
{
    if (base->record_count == 0) {
        return SIZE_MAX;
    }
    *index = (size_t)common_test_rng_below(rng, base->record_count);
    return *index == 0 ? STORAGE_CORPUS_WAL_HEADER_SIZE
                       : base->record_ends[*index - 1];
}

/* Inserts a copy of bytes [from, to) at to; *size grows. */
static void duplicate_range(uint8_t *bytes, size_t *size, size_t from,
                            size_t to)
{
    memmove(bytes + to + (to - from), bytes + to, *size - to);
    memcpy(bytes + to, bytes + from, to - from);
    *size += to - from;
}

/* Sets a length field: the main file's body size, or a record's payload
 * size, to something huge or off by a little. */
static void set_length(struct common_test_rng *rng, const struct base *base,
                       struct damage *d, uint8_t *bytes)
{
    static const uint32_t values[] = {0xffffffffu, 0x7fffffffu, 0x80000000u, 0};
    uint32_t value = values[common_test_rng_below(rng, 4)];
    size_t index = 0, at;

    if (!d->on_wal) {
        common_put_u64le(bytes + 32, common_test_rng_below(rng, 2)
                                         ? UINT64_MAX - value
                                         : base->main_size + 1);
        snprintf(d->what, sizeof(d->what), "main body size set huge");
        return;
    }
    at = pick_record(rng, base, &index);
    if (at == SIZE_MAX) {
        return;
    }
    value = common_test_rng_below(rng, 2)
                ? value
                : common_get_u32le(bytes + at + 4) +
                      (uint32_t)common_test_rng_below(rng, 9) - 4;
    common_put_u32le(bytes + at + 4, value);
    snprintf(d->what, sizeof(d->what), "record %zu payload size = %u", index,
             value);
}

/* Record index copied after itself (or to the end). */
static void duplicate_record(struct common_test_rng *rng,
                             const struct base *base, struct damage *d,
                             uint8_t *bytes, size_t *size)
{
    size_t index = 0, at = pick_record(rng, base, &index);
    bool to_end;

    if (at == SIZE_MAX) {
        return;
    }
    to_end = common_test_rng_below(rng, 2) == 0;
    if (to_end) {
        memcpy(bytes + *size, bytes + at, base->record_ends[index] - at);
        *size += base->record_ends[index] - at;
    } else {
        duplicate_range(bytes, size, at, base->record_ends[index]);
    }
    snprintf(d->what, sizeof(d->what), "record %zu duplicated %s", index,
             to_end ? "at the end" : "after itself");
}

/* One random mutation of bytes (*size of them, room for twice as many). */
static void mutate(struct common_test_rng *rng, const struct base *base,
                   struct damage *d, uint8_t *bytes, size_t *size)
{
    size_t at = *size > 0 ? pick_offset(rng, bytes, *size, d->on_wal) : 0;
    size_t count = 1 + (size_t)common_test_rng_below(rng, 8);
    uint8_t bit = (uint8_t)(1u << common_test_rng_below(rng, 8));

    switch (*size == 0 ? 6 : common_test_rng_below(rng, 8)) {
    case 0:
        bytes[at] ^= bit;
        snprintf(d->what, sizeof(d->what), "bit 0x%02x flipped at %zu", bit,
                 at);
        break;
    case 1:
        *size = at;
        snprintf(d->what, sizeof(d->what), "truncated to %zu", at);
        break;
    case 2:
        for (size_t i = 0; i < count && at + i < *size; i++) {
            bytes[at + i] = (uint8_t)common_test_rng_next(rng);
        }
        snprintf(d->what, sizeof(d->what), "%zu bytes overwritten at %zu",
                 count, at);
        break;
    case 3:
        set_length(rng, base, d, bytes);
        break;
    case 4:
        if (d->on_wal) {
            duplicate_record(rng, base, d, bytes, size);
            break;
        }
        count = 1 + (size_t)common_test_rng_below(rng, *size - at);
        duplicate_range(bytes, size, at, at + count);
        snprintf(d->what, sizeof(d->what), "bytes [%zu, %zu) duplicated", at,
                 at + count);
        break;
    case 5:
        at -= at % 512;
        count = *size - at < 512 ? *size - at : 512;
        memset(bytes + at, 0, count);
        snprintf(d->what, sizeof(d->what), "%zu bytes zeroed at %zu", count,
                 at);
        break;
    default:
        count = 1 + (size_t)common_test_rng_below(rng, 64);
        for (size_t i = 0; i < count; i++) {
            bytes[*size + i] = (uint8_t)common_test_rng_next(rng);
        }
        *size += count;
        snprintf(d->what, sizeof(d->what), "%zu bytes appended", count);
        break;
    }
}

static void damage_make(struct common_test_rng *rng, const struct base *base,
                        struct damage *d)
{
    size_t slack = 2 * (base->main_size + base->wal_size) + 64;

    memset(d, 0, sizeof(*d));
    d->on_wal = common_test_rng_below(rng, 2) == 0;
    d->repaired = common_test_rng_below(rng, 4) == 0;
    d->main_file = copy_bytes(base->main_file, base->main_size, slack);
    d->main_size = base->main_size;
    d->wal = copy_bytes(base->wal, base->wal_size, slack);
    d->wal_size = base->wal_size;
    snprintf(d->what, sizeof(d->what), "no change");
    if (d->on_wal) {
        mutate(rng, base, d, d->wal, &d->wal_size);
    } else {
        mutate(rng, base, d, d->main_file, &d->main_size);
    }
    if (d->repaired) {
        (void)storage_corpus_fix_main(d->main_file, d->main_size);
        storage_corpus_fix_wal(
            d->wal, d->wal_size,
            storage_corpus_generation(d->main_file, d->main_size));
    }
}

static void damage_free(struct damage *d)
{
    free(d->main_file);
    free(d->wal);
}

/* ---- verdicts ---- */

static void fail_case(const struct damage *d, const char *why, int rc)
{
    fail_msg("seed %" PRIu64 ": %s %s%s: %s (open: %d %s)", seed,
             d->on_wal ? "wal" : "main file", d->what,
             d->repaired ? " (checksums repaired)" : "", why, rc,
             engine_strerror(rc));
}

/* Commits in the WAL that end before its first changed byte. */
static size_t intact_prefix(const struct base *base, const struct damage *d)
{
    size_t same = 0, prefix = 0;

    while (same < d->wal_size && same < base->wal_size &&
           d->wal[same] == base->wal[same]) {
        same++;
    }
    while (prefix < base->record_count && base->record_ends[prefix] <= same) {
        prefix++;
    }
    return prefix;
}

static bool file_equals(const char *path, const uint8_t *bytes, size_t size)
{
    uint8_t *now = NULL;
    size_t now_size = 0;
    bool same = storage_corpus_read(path, &now, &now_size) == 0 &&
                now_size == size &&
                (size == 0 || memcmp(now, bytes, size) == 0);

    free(now);
    return same;
}

static bool dump_equals(struct engine_db *db, const struct common_buf *want)
{
    struct common_buf got;
    bool same;

    dump_db(db, &got);
    same =
        got.size == want->size && memcmp(got.data, want->data, got.size) == 0;
    common_buf_close(&got);
    return same;
}

/* The single row PRAGMA integrity_check returns when all is well. */
static bool integrity_ok(struct engine_db *db)
{
    struct engine_stmt *stmt = NULL;
    bool ok;

    assert_int_equal(
        engine_prepare(db, "PRAGMA integrity_check", -1, &stmt, NULL), 0);
    ok = engine_step(stmt) == ENGINE_ROW &&
         strcmp((const char *)engine_column_text(stmt, 0), "ok") == 0 &&
         engine_step(stmt) == ENGINE_DONE;
    engine_finalize(stmt);
    return ok;
}

/* Reads every table and writes once: what any database that opened must
 * take, whatever it holds. */
static void exercise(struct engine_db *db, const struct damage *d)
{
    struct engine_stmt *stmt = NULL;
    struct common_buf dump;

    dump_db(db, &dump);
    common_buf_close(&dump);
    assert_int_equal(
        engine_prepare(db, "PRAGMA integrity_check", -1, &stmt, NULL), 0);
    while (engine_step(stmt) == ENGINE_ROW) {
    }
    engine_finalize(stmt);
    if (engine_exec(db,
                    "CREATE TABLE robust_probe(x);"
                    "INSERT INTO robust_probe VALUES(1)",
                    NULL, NULL) != 0) {
        fail_case(d, engine_errmsg(db), 0);
    }
}

/* After a successful open: a new commit lasts, and the database opens
 * again. */
static void check_reopen(const struct scratch_dir *dir, const struct damage *d)
{
    struct engine_db *db = NULL;
    int rc = engine_open(dir->db, &db);
    struct engine_stmt *stmt = NULL;

    if (rc != 0) {
        fail_case(d, "reopen after a commit failed", rc);
    }
    assert_int_equal(engine_prepare(db, "SELECT count(*) FROM robust_probe", -1,
                                    &stmt, NULL),
                     0);
    assert_int_equal(engine_step(stmt), ENGINE_ROW);
    assert_int_equal(engine_column_int64(stmt, 0), 1);
    engine_finalize(stmt);
    engine_close(db);
}

/* The verdict on a database that opened. */
static void check_opened(const struct base *base, const struct damage *d,
                         struct engine_db *db, struct tally *tally)
{
    size_t prefix = intact_prefix(base, d);

    if (d->repaired) {
        tally->accepted++;
        exercise(db, d);
        return;
    }
    if (!d->on_wal &&
        !(d->main_size == base->main_size &&
          memcmp(d->main_file, base->main_file, base->main_size) == 0)) {
        fail_case(d, "a changed main file was accepted", 0);
    }
    if (!dump_equals(
            db, &base->states[d->on_wal ? prefix : base->state_count - 1])) {
        fail_case(d, "the data is not the commits before the damage", 0);
    }
    tally->cut += d->on_wal;
    if (!integrity_ok(db)) {
        fail_case(d, "integrity_check is not ok", 0);
    }
    exercise(db, d);
}

static void check_refused(const struct scratch_dir *dir, const struct damage *d,
                          int rc, struct tally *tally)
{
    bool magic_gone =
        d->main_size < 8 || memcmp(d->main_file, "sinewDB", 8) != 0;

    tally->refused++;
    if (rc != ENGINE_ECORRUPT && rc != ENGINE_ENOTADB && rc != ENGINE_EIO &&
        rc != COMMON_ENOMEM) {
        fail_case(d, "refused with a code other than corrupt/not a db", rc);
    }
    if ((rc == ENGINE_ENOTADB) != magic_gone) {
        fail_case(d, "ENGINE_ENOTADB is for a missing magic only", rc);
    }
    if (!file_equals(dir->db, d->main_file, d->main_size) ||
        !file_equals(dir->wal, d->wal, d->wal_size)) {
        fail_case(d, "a refused open changed the files", rc);
    }
}

/* Writes the damaged files, opens them, and judges. */
static void run_damage(const struct base *base, const struct damage *d,
                       struct tally *tally)
{
    struct scratch_dir dir;
    struct engine_db *db = NULL;
    int rc;

    scratch_dir_make(&dir);
    assert_int_equal(storage_corpus_write(dir.db, d->main_file, d->main_size),
                     0);
    assert_int_equal(storage_corpus_write(dir.wal, d->wal, d->wal_size), 0);
    rc = engine_open(dir.db, &db);
    if (rc != 0) {
        assert_null(db);
        check_refused(&dir, d, rc, tally);
    } else {
        check_opened(base, d, db, tally);
        engine_close(db);
        check_reopen(&dir, d);
    }
    scratch_dir_remove(&dir);
}

static size_t case_count(void)
{
    const char *text = getenv("SINEW_STORAGE_ROBUST_CASES");

    return text != NULL && text[0] != '\0' ? (size_t)strtoull(text, NULL, 10)
                                           : CASES_DEFAULT;
}

/* ---- tests ---- */

/* The checksum repair the fuzzer and the repaired cases rely on is the
 * identity on an undamaged database: it walks the same format. */
static void storage_robust_repair_is_identity(void **state)
{
    (void)state;
    for (size_t i = 0; i < STORAGE_CORPUS_DB_COUNT; i++) {
        struct base base;
        uint8_t *main_file, *wal;

        base_build(&base, i);
        main_file = copy_bytes(base.main_file, base.main_size, 0);
        wal = copy_bytes(base.wal, base.wal_size, 0);
        memset(main_file + 40, 0, 8); /* the body's checksum */
        memset(main_file + 56, 0, 8); /* the header's */
        assert_true(storage_corpus_fix_main(main_file, base.main_size));
        storage_corpus_fix_wal(
            wal, base.wal_size,
            storage_corpus_generation(main_file, base.main_size));
        assert_memory_equal(main_file, base.main_file, base.main_size);
        if (base.wal_size > 0) {
            assert_memory_equal(wal, base.wal, base.wal_size);
        }
        free(main_file);
        free(wal);
        base_free(&base);
    }
}

static void storage_robust_mutations_are_refused_or_cut(void **state)
{
    struct common_test_rng rng;
    struct base bases[STORAGE_CORPUS_DB_COUNT];
    struct tally tally = {0};
    size_t cases = case_count();

    (void)state;
    common_test_rng_seed(&rng, "storage_robust_mutations");
    seed = rng.state;
    for (size_t i = 0; i < STORAGE_CORPUS_DB_COUNT; i++) {
        base_build(&bases[i], i);
    }
    for (size_t c = 0; c < cases; c++) {
        const struct base *base =
            &bases[common_test_rng_below(&rng, STORAGE_CORPUS_DB_COUNT)];
        struct damage d;

        damage_make(&rng, base, &d);
        run_damage(base, &d, &tally);
        damage_free(&d);
    }
    printf("storage_robust: %zu cases: %zu refused, %zu WAL tails cut, %zu "
           "repaired inputs opened\n",
           cases, tally.refused, tally.cut, tally.accepted);
    /* The mix must reach both verdicts. */
    assert_true(cases < 100 || (tally.refused > 0 && tally.cut > 0));
    for (size_t i = 0; i < STORAGE_CORPUS_DB_COUNT; i++) {
        base_free(&bases[i]);
    }
}

/* ---- files made by hand: what the fuzzer found ---- */

struct bytes {
    uint8_t data[1024];
    size_t size;
};

static void put(struct bytes *b, const void *bytes, size_t size)
{
    assert_true(b->size + size <= sizeof(b->data));
    memcpy(b->data + b->size, bytes, size);
    b->size += size;
}

static void put_varint(struct bytes *b, uint64_t value)
{
    uint8_t bytes[COMMON_VARINT_SIZE_MAX];

    put(b, bytes, common_varint_encode(value, bytes));
}

static void put_text(struct bytes *b, const char *text)
{
    put_varint(b, strlen(text));
    put(b, text, strlen(text));
}

static void put_u32(struct bytes *b, uint32_t value)
{
    uint8_t bytes[4];

    common_put_u32le(bytes, value);
    put(b, bytes, 4);
}

static void put_u64(struct bytes *b, uint64_t value)
{
    uint8_t bytes[8];

    common_put_u64le(bytes, value);
    put(b, bytes, 8);
}

/* The first 16 bytes (magic, format version, header size) of the headers
 * of a main file and a WAL the engine writes now, so crafted files follow
 * the format version. */
static void engine_header_starts(uint8_t *main_start, uint8_t *wal_start)
{
    static uint8_t main_bytes[16], wal_bytes[16];
    static bool known;

    if (!known) {
        struct scratch_dir dir;
        uint8_t *bytes;
        size_t size;

        scratch_dir_make(&dir);
        engine_close(storage_open(dir.db));
        assert_int_equal(storage_corpus_read(dir.db, &bytes, &size), 0);
        assert_true(size >= 16);
        memcpy(main_bytes, bytes, 16);
        free(bytes);
        assert_int_equal(storage_corpus_read(dir.wal, &bytes, &size), 0);
        assert_true(size >= 16);
        memcpy(wal_bytes, bytes, 16);
        free(bytes);
        scratch_dir_remove(&dir);
        known = true;
    }
    memcpy(main_start, main_bytes, 16);
    memcpy(wal_start, wal_bytes, 16);
}

/* A main file of generation 1 whose catalog is the one entry (kind, sql)
 * and which holds table t of one column, no segments and no index
 * entries. */
static void craft_main(struct bytes *b, char kind, const char *sql)
{
    uint8_t start[16], wal_start[16];

    memset(b, 0, sizeof(*b));
    engine_header_starts(start, wal_start);
    put(b, start, sizeof(start));
    put_u64(b, 1); /* generation */
    for (int i = 0; i < 5; i++) {
        put_u64(b, 0); /* commit, sizes and checksums: fixed below */
    }
    put_varint(b, 1);
    put(b, &kind, 1);
    put_text(b, sql);
    put_varint(b, 1);
    put_text(b, "t");
    put_varint(b, 1); /* columns */
    put_varint(b, 0); /* segments */
    put_varint(b, 0); /* index entries: built at open */
    assert_true(storage_corpus_fix_main(b->data, b->size));
}

/* The tagged value 10, which craft_wal() inserts unless told otherwise. */
static const uint8_t ten[] = {ENGINE_INTEGER, 20};

/* A WAL for generation 1: a record running schema (when not NULL), then
 * one inserting into t the row of rowid 1 whose value is the tagged value
 * at value. */
static void craft_wal_value(struct bytes *b, const char *schema,
                            const uint8_t *value, size_t value_size)
{
    struct bytes payload = {.size = 0};
    uint64_t seq = 1;
    uint8_t main_start[16], start[16];

    memset(b, 0, sizeof(*b));
    engine_header_starts(main_start, start);
    put(b, start, sizeof(start));
    put_u64(b, 1); /* generation */
    put_u64(b, 0);
    for (int record = schema != NULL ? 0 : 1; record < 2; record++) {
        payload.size = 0;
        if (record == 0) {
            put(&payload, "S", 1);
            put_text(&payload, schema);
        } else {
            put(&payload, "T", 1);
            put_text(&payload, "t");
            put(&payload, "I", 1);
            put_varint(&payload, common_zigzag_encode(1));
            put_varint(&payload, 1);
            put(&payload, value, value_size);
        }
        put(b, "SNWR", 4);
        put_u32(b, (uint32_t)payload.size);
        put_u64(b, seq++);
        put_u64(b, 0); /* stamp */
        put_u64(b, 0); /* checksum: fixed below */
        put(b, payload.data, payload.size);
    }
    storage_corpus_fix_wal(b->data, b->size, 1);
}

static void craft_wal(struct bytes *b, const char *schema)
{
    craft_wal_value(b, schema, ten, sizeof(ten));
}

/* Opens the crafted pair; returns the open's code, and on success checks
 * that t holds the row the WAL inserted. */
static int open_crafted(const struct bytes *main_file, const struct bytes *wal)
{
    struct scratch_dir dir;
    struct engine_db *db = NULL;
    struct engine_stmt *stmt = NULL;
    int rc;

    scratch_dir_make(&dir);
    assert_int_equal(
        storage_corpus_write(dir.db, main_file->data, main_file->size), 0);
    assert_int_equal(storage_corpus_write(dir.wal, wal->data, wal->size), 0);
    rc = engine_open(dir.db, &db);
    if (rc == 0) {
        assert_int_equal(engine_prepare(db, "SELECT x FROM t", -1, &stmt, NULL),
                         0);
        assert_int_equal(engine_step(stmt), ENGINE_ROW);
        assert_int_equal(engine_column_int64(stmt, 0), 10);
        engine_finalize(stmt);
        assert_true(integrity_ok(db));
        engine_close(db);
    } else {
        assert_true(file_equals(dir.db, main_file->data, main_file->size));
        assert_true(file_equals(dir.wal, wal->data, wal->size));
    }
    scratch_dir_remove(&dir);
    return rc;
}

/* A catalog entry or a WAL schema entry that is not one statement of the
 * DDL the engine writes there was run as SQL: "CREATE TABLE t(x); BEGIN"
 * left the replay inside a transaction and failed an assertion in
 * redo_apply.c (fuzz_storage, with checksums repaired; any checksum is
 * easy to forge). Now such a file is ENGINE_ECORRUPT. */
static void storage_robust_schema_entries_are_ddl_only(void **state)
{
    static const struct {
        char kind;
        const char *catalog;
        const char *wal_schema;
        int rc;
    } cases[] = {
        {'t', "CREATE TABLE t(x); BEGIN", NULL, ENGINE_ECORRUPT},
        {'t', "CREATE TABLE t(x); INSERT INTO t VALUES(10)", NULL,
         ENGINE_ECORRUPT},
        {'t', "CREATE TABLE t(x); VACUUM", NULL, ENGINE_ECORRUPT},
        {'t', "SAVEPOINT a", NULL, ENGINE_ECORRUPT},
        {'i', "CREATE TABLE t(x)", NULL, ENGINE_ECORRUPT},
        {'t', "CREATE TABLE t(x)", "BEGIN", ENGINE_ECORRUPT},
        {'t', "CREATE TABLE t(x)", "SAVEPOINT a", ENGINE_ECORRUPT},
        {'t', "CREATE TABLE t(x)", "PRAGMA user_version = 3", ENGINE_ECORRUPT},
        {'t', "CREATE TABLE t(x)", "VACUUM", ENGINE_ECORRUPT},
        {'t', "CREATE TABLE t(x)", "CREATE TABLE u(y); DELETE FROM t",
         ENGINE_ECORRUPT},
        /* What the engine does write still opens. */
        {'t', "CREATE TABLE t(x)", NULL, 0},
        {'t', "CREATE TABLE t(x)", "CREATE TABLE u(y);", 0},
        {'t', "CREATE TABLE t(x)", "CREATE INDEX tx ON t(x)", 0},
        {'t', "CREATE TABLE t(x)", "DROP TABLE IF EXISTS u", 0},
    };
    struct bytes main_file, wal;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc;

        craft_main(&main_file, cases[i].kind, cases[i].catalog);
        craft_wal(&wal, cases[i].wal_schema);
        rc = open_crafted(&main_file, &wal);
        if (rc != cases[i].rc) {
            fail_msg("catalog '%c' %s, wal schema %s: open %d (%s), want %d",
                     cases[i].kind, cases[i].catalog,
                     cases[i].wal_schema ? cases[i].wal_schema : "none", rc,
                     engine_strerror(rc), cases[i].rc);
        }
    }
}

/* A main file cut to 0 bytes was taken for a new database and the WAL
 * beside it emptied, losing every commit (the random mutations found it).
 * Only beside an empty WAL is it a new database. */
static void storage_robust_empty_main_file_is_not_new(void **state)
{
    struct bytes main_file = {.size = 0}, wal;
    struct bytes none = {.size = 0};

    (void)state;
    craft_wal(&wal, "CREATE TABLE t(x)");
    assert_int_equal(open_crafted(&main_file, &wal), ENGINE_ENOTADB);
    {
        struct scratch_dir dir;
        struct engine_db *db = NULL;

        scratch_dir_make(&dir);
        assert_int_equal(storage_corpus_write(dir.db, NULL, 0), 0);
        assert_int_equal(storage_corpus_write(dir.wal, none.data, 0), 0);
        db = storage_open(dir.db);
        storage_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(10)");
        engine_close(db);
        scratch_dir_remove(&dir);
    }
}

/* A NaN read from a file was loaded as a REAL, and comparing it
 * converted it to an integer (undefined behaviour, UBSan in
 * value_compare.c). The engine never stores one (a NaN becomes NULL, as in
 * SQLite), so a file holding one is damaged: in a WAL record's tagged
 * value, and in a double column block of a segment. */
static void storage_robust_nan_is_refused(void **state)
{
    static const uint8_t nan_bits[] = {ENGINE_FLOAT, 0,   0, 0, 0, 0, 0,
                                       0xf8,         0x7f};
    static const uint8_t two[] = {0, 0, 0, 0, 0, 0, 0, 0x40}; /* 2.0 */
    struct bytes main_file, wal;
    struct scratch_dir dir;
    struct engine_db *db = NULL;
    uint8_t *bytes;
    size_t size, at = SIZE_MAX;

    (void)state;
    craft_main(&main_file, 't', "CREATE TABLE t(x)");
    craft_wal_value(&wal, NULL, nan_bits, sizeof(nan_bits));
    assert_int_equal(open_crafted(&main_file, &wal), ENGINE_ECORRUPT);
    /* 2.0 lies between the zone map's 1.5 and 2.5: only the block's data
     * holds it, so the zone map still matches once it is a NaN. */
    scratch_dir_make(&dir);
    db = storage_open(dir.db);
    storage_exec(db, "CREATE TABLE t(x REAL);"
                     "INSERT INTO t VALUES(1.5), (2.0), (2.5); VACUUM");
    engine_close(db);
    assert_int_equal(storage_corpus_read(dir.db, &bytes, &size), 0);
    for (size_t i = 0; i + sizeof(two) <= size; i++) {
        if (memcmp(bytes + i, two, sizeof(two)) == 0) {
            assert_int_equal(at, SIZE_MAX);
            at = i;
        }
    }
    assert_true(at != SIZE_MAX);
    memcpy(bytes + at, nan_bits + 1, 8);
    assert_true(storage_corpus_fix_main(bytes, size));
    assert_int_equal(storage_corpus_write(dir.db, bytes, size), 0);
    assert_int_equal(engine_open(dir.db, &db), ENGINE_ECORRUPT);
    free(bytes);
    scratch_dir_remove(&dir);
}

/* The catalog text written for a CREATE with a comment between its
 * keywords, a table named temp, or a vertical tab for a space did not
 * parse again ("CREATE TABLE (x)" for "CREATE TABLE temp (x)"), so after a
 * checkpoint the database could not be opened (fuzz_storage's reopen
 * check, from a WAL schema entry "CREATE<VT>TABLE t(...)"). The text is
 * now SQLite's: "CREATE TABLE " and the statement from the name on. */
static void storage_robust_schema_text_reopens(void **state)
{
    static const struct {
        const char *sql;
        const char *text;
    } cases[] = {
        {"CREATE /*c*/ TABLE t(x)", "CREATE TABLE t(x)"},
        {"CREATE\vTABLE\ft(x)", "CREATE TABLE t(x)"},
        {"-- c\nCREATE TABLE t(x)", "CREATE TABLE t(x)"},
        {"CREATE TABLE temp (x)", "CREATE TABLE temp (x)"},
        {"CREATE TABLE temporary(x)", "CREATE TABLE temporary(x)"},
        {"create table if not exists t(x);", "CREATE TABLE t(x)"},
        {"CREATE /* a */ UNIQUE -- b\n INDEX IF/**/NOT EXISTS i ON k(y)",
         "CREATE UNIQUE INDEX i ON k(y)"},
        {"CREATE\vINDEX unique_i ON k(y)", "CREATE INDEX unique_i ON k(y)"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct scratch_dir dir;
        struct engine_db *db;
        struct engine_stmt *stmt = NULL;
        int rc;

        scratch_dir_make(&dir);
        db = storage_open(dir.db);
        storage_exec(db, "CREATE TABLE k(y)");
        storage_exec(db, cases[i].sql);
        storage_exec(db, "VACUUM");
        engine_close(db);
        db = NULL;
        rc = engine_open(dir.db, &db);
        if (rc != 0) {
            fail_msg("%s: reopen %d (%s)", cases[i].sql, rc,
                     engine_strerror(rc));
        }
        assert_int_equal(engine_prepare(db,
                                        "SELECT sql FROM sqlite_schema "
                                        "WHERE name != 'k'",
                                        -1, &stmt, NULL),
                         0);
        assert_int_equal(engine_step(stmt), ENGINE_ROW);
        assert_string_equal(engine_column_text(stmt, 0), cases[i].text);
        engine_finalize(stmt);
        engine_close(db);
        scratch_dir_remove(&dir);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(storage_robust_repair_is_identity),
        cmocka_unit_test(storage_robust_mutations_are_refused_or_cut),
        cmocka_unit_test(storage_robust_schema_entries_are_ddl_only),
        cmocka_unit_test(storage_robust_empty_main_file_is_not_new),
        cmocka_unit_test(storage_robust_nan_is_refused),
        cmocka_unit_test(storage_robust_schema_text_reopens),
    };

    common_test_install();
    engine_io_hooks_set(&fast_hooks);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
