/* SPDX-License-Identifier: MIT
 *
 * common.h: the small base every sinew module stands on, and its manual.
 *
 * It has no in-tree dependencies and no I/O. It provides:
 *   - error codes: one disjoint range per module, 0 for success, negative
 *     for failure, -errno passed through unchanged;
 *   - ASSERT, on in every build type, for invariants (never for bad input);
 *   - the logging sink type: modules never print, the application passes a
 *     sink and a minimum level;
 *   - allocation through a replaceable heap, and a wrapper heap that makes
 *     the Nth allocation fail so tests can walk every out-of-memory path;
 *   - a growable byte buffer and a bounds-checked reader over bytes;
 *   - varints (LEB128), fixed-width little- and big-endian integers;
 *   - a 64-bit checksum (XXH3 from libxxhash).
 *
 * Thread safety: everything here is safe to call from several threads, except
 * common_heap_set() and common_assert_handler_set(), which are configuration
 * and must run before other threads start (as sqlite3_config()).
 */
#ifndef SINEW_COMMON_H
#define SINEW_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------
 * Error codes
 *
 * Every function that can fail returns 0 or a negative code. System errors
 * travel as -errno (-1 to -4095). Each module owns a disjoint range, so one
 * int crosses layers and can still be decoded:
 *
 *   common -9900   hlc -10000   transport -10100   engine -10200
 *   replication -10300   consensus -10400   node -10500
 *
 * Codes are declared once in an X-macro list, X(NAME, VALUE, MESSAGE), that
 * generates both the enum and the module's strerror function, so a code and
 * its message cannot drift apart. Other modules reuse COMMON_ERROR_ENUM and
 * COMMON_ERROR_CASE with their own list.
 * ------------------------------------------------------------------------ */

#define COMMON_ERROR_ENUM(name, value, message) name = (value),
#define COMMON_ERROR_CASE(name, value, message)                                \
    case (value):                                                              \
        return (message);

#define COMMON_ERROR_MAP(X)                                                    \
    X(COMMON_ENOMEM, -9900, "out of memory")                                   \
    X(COMMON_ETOOBIG, -9901, "size limit exceeded")                            \
    X(COMMON_ECORRUPT, -9902, "malformed or truncated data")

enum common_error { COMMON_ERROR_MAP(COMMON_ERROR_ENUM) };

/* The first and last code of common's range (inclusive). */
#define COMMON_ERROR_FIRST (-9999)
#define COMMON_ERROR_LAST (-9900)

/* Returns a static, never NULL, human-readable message for rc: "success" for
 * 0, the text of a common code, strerror() for -errno values, and "unknown
 * error" for anything else (including other modules' codes, which their own
 * <module>_strerror() decodes). */
const char *common_strerror(int rc);

/* ------------------------------------------------------------------------
 * Assertions
 *
 * ASSERT(cond) checks an invariant in every build type (CMake's Release flags
 * define NDEBUG, so plain assert() would vanish): a broken invariant must
 * stop the node before the damage replicates. Never ASSERT on input from a
 * user, a file or the network: such input gets an error code.
 *
 * ASSERT_DEBUG(cond) holds O(n) checks; it is compiled only when
 * SINEW_DEBUG_CHECKS is defined (Debug and sanitizer builds).
 *
 * STATIC_ASSERT(cond, why) checks sizes and relations between limits at
 * compile time.
 * ------------------------------------------------------------------------ */

/* Called with the failed expression's text and location. The default handler
 * writes one line to stderr and aborts. A test installs its own (cmocka's
 * mock_assert) to prove that an assertion fires; if a handler returns, the
 * process still aborts. */
typedef void (*common_assert_handler)(const char *expression, const char *file,
                                      int line);

/* Installs handler, or restores the default for NULL. Not thread-safe. */
void common_assert_handler_set(common_assert_handler handler);

_Noreturn void common__assert_fail(const char *expression, const char *file,
                                   int line);

#define ASSERT(cond)                                                           \
    do {                                                                       \
        if (!(cond)) {                                                         \
            common__assert_fail(#cond, __FILE__, __LINE__);                    \
        }                                                                      \
    } while (0)

#ifdef SINEW_DEBUG_CHECKS
#define ASSERT_DEBUG(cond) ASSERT(cond)
#else
#define ASSERT_DEBUG(cond) ((void)sizeof(cond))
#endif

#define STATIC_ASSERT(cond, why) _Static_assert(cond, why)

/* ------------------------------------------------------------------------
 * Logging sink
 *
 * Modules never print. A module's config carries a struct common_log; the
 * application (node/) owns the output and adds wall time, node id and module.
 * Messages are lowercase key=value text without a trailing period ("vote
 * granted term=7 from=3"). LOGF checks the level before it formats, so a
 * disabled level costs one branch. Nothing at INFO or above per row or
 * per message.
 * ------------------------------------------------------------------------ */

enum common_log_level {
    COMMON_LOG_DEBUG = 0,
    COMMON_LOG_INFO = 1,
    COMMON_LOG_WARN = 2,
    COMMON_LOG_ERROR = 3,
};

/* A formatted message longer than this is truncated (the emit callback still
 * gets a terminated string). */
#define COMMON_LOG_MESSAGE_SIZE_MAX 1024

/* emit may be NULL, which disables the sink. msg is borrowed for the call. */
struct common_log {
    void *ctx;     /* passed back to emit, untouched */
    int min_level; /* messages below this level are dropped unformatted */
    void (*emit)(void *ctx, int level, const char *file, int line,
                 const char *msg);
};

/* "debug", "info", "warn", "error", or "?" for an unknown level. */
const char *common_log_level_name(int level);

static inline bool common_log_is_enabled(const struct common_log *log,
                                         int level)
{
    return log != NULL && log->emit != NULL && level >= log->min_level;
}

void common__log_emitf(const struct common_log *log, int level,
                       const char *file, int line, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

/* LOGF(log, level, format, ...): log is a const struct common_log *. */
#define LOGF(log, level, ...)                                                  \
    do {                                                                       \
        if (common_log_is_enabled((log), (level))) {                           \
            common__log_emitf((log), (level), __FILE__, __LINE__,              \
                              __VA_ARGS__);                                    \
        }                                                                      \
    } while (0)

/* ------------------------------------------------------------------------
 * Heap
 *
 * Every allocation in sinew goes through common_malloc() and friends, which
 * call the installed heap (libc's by default). Libraries return COMMON_ENOMEM
 * when an allocation fails; only node/ decides to exit.
 * ------------------------------------------------------------------------ */

struct common_heap {
    void *ctx; /* passed back to the functions below */
    void *(*malloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t size);
    void (*free)(void *ctx, void *ptr);
};

/* Installs a copy of *heap (ctx is borrowed until the next call), or libc's
 * heap for NULL. Not thread-safe; blocks allocated by one heap must be freed
 * by the same heap, so install before allocating. */
void common_heap_set(const struct common_heap *heap);

/* Copies the installed heap into *out. */
void common_heap_get(struct common_heap *out);

/* size must be > 0. NULL when the heap fails. */
void *common_malloc(size_t size);

/* count * size zeroed bytes; NULL when the product overflows or the heap
 * fails. Both must be > 0. */
void *common_calloc(size_t count, size_t size);

/* count * size bytes; NULL when the product overflows or the heap fails. */
void *common_malloc_array(size_t count, size_t size);

/* Resizes ptr (NULL allocates) to size > 0 bytes. On failure returns NULL and
 * ptr stays valid and owned by the caller. */
void *common_realloc(void *ptr, size_t size);

/* common_realloc() of count * size bytes, NULL on overflow. */
void *common_realloc_array(void *ptr, size_t count, size_t size);

/* Frees ptr; NULL is ignored. */
void common_free(void *ptr);

/* A heap that forwards to another one but fails chosen allocations: the
 * fail_at-th allocation (counting from 1; malloc and realloc both count) and
 * the fail_count - 1 after it. fail_at = 0 never fails. Frees always pass
 * through. For tests and the simulator. */
struct common_heap_fault {
    struct common_heap inner; /* where allocations that succeed go */
    uint64_t fail_at;         /* first allocation to fail, 1-based; 0: none */
    uint64_t fail_count;      /* how many fail from there; UINT64_MAX: all */
    uint64_t allocations;     /* allocation attempts seen so far */
    uint64_t failures;        /* attempts this heap made fail */
};

/* Wraps the currently installed heap. */
void common_heap_fault_init(struct common_heap_fault *fault, uint64_t fail_at,
                            uint64_t fail_count);

/* Returns a heap for common_heap_set() that counts in *fault, which is
 * borrowed for as long as that heap is installed. */
struct common_heap common_heap_fault_heap(struct common_heap_fault *fault);

/* ------------------------------------------------------------------------
 * Fixed-width integers, little-endian (wire and disk formats) and big-endian
 * (keys whose bytes must sort like their values). p need not be aligned.
 * ------------------------------------------------------------------------ */

static inline void common_put_u16le(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void common_put_u32le(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static inline void common_put_u64le(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static inline uint16_t common_get_u16le(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t common_get_u32le(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static inline uint64_t common_get_u64le(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

static inline void common_put_u64be(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (56 - 8 * i));
    }
}

static inline uint64_t common_get_u64be(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* ------------------------------------------------------------------------
 * Varints: unsigned LEB128, seven bits a byte, least significant group
 * first, high bit set on every byte but the last. Only the shortest encoding
 * of a value is accepted when decoding, so every value has exactly one byte
 * string (replicas compare and hash encoded bytes). Signed values go through
 * zigzag first, so small negative numbers stay short.
 * ------------------------------------------------------------------------ */

#define COMMON_VARINT_SIZE_MAX 10

/* Bytes common_varint_encode() writes for value: 1 to 10. */
size_t common_varint_size(uint64_t value);

/* Writes value to out, which has room for common_varint_size(value) bytes
 * (COMMON_VARINT_SIZE_MAX always suffices); returns the bytes written. */
size_t common_varint_encode(uint64_t value, uint8_t *out);

/* Reads one varint from the size bytes at data. On success stores the value
 * and the bytes it took; COMMON_ECORRUPT when the bytes end before the
 * varint does, or when it is longer than 10 bytes, overflows 64 bits or is
 * not in its shortest form. */
int common_varint_decode(const uint8_t *data, size_t size, uint64_t *value,
                         size_t *consumed);

/* The value of the hexadecimal digit c (0-9, a-f, A-F), or -1. */
static inline int common_hex_value(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')) {
        return (c | 0x20) - 'a' + 10;
    }
    return -1;
}

static inline uint64_t common_zigzag_encode(int64_t v)
{
    return ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
}

static inline int64_t common_zigzag_decode(uint64_t v)
{
    return (int64_t)((v >> 1) ^ (~(v & 1) + 1));
}

/* ------------------------------------------------------------------------
 * Growable byte buffer
 *
 * Invariants: size <= capacity <= size_max; data is NULL iff capacity is 0.
 * Appends grow capacity geometrically; an append that would pass size_max
 * fails with COMMON_ETOOBIG and one whose allocation fails with
 * COMMON_ENOMEM, and either leaves the buffer as it was.
 * ------------------------------------------------------------------------ */

struct common_buf {
    uint8_t *data;   /* owned by the buffer; NULL until the first append */
    size_t size;     /* bytes in use */
    size_t capacity; /* bytes allocated */
    size_t size_max; /* the most bytes this buffer may ever hold */
};

void common_buf_init(struct common_buf *buf, size_t size_max);

/* Frees the bytes; the buffer may be initialised again. */
void common_buf_close(struct common_buf *buf);

/* Makes room for at least additional more bytes without another allocation. */
int common_buf_reserve(struct common_buf *buf, size_t additional);

/* Appends size bytes copied from bytes (which may be NULL when size is 0). */
int common_buf_append(struct common_buf *buf, const void *bytes, size_t size);

int common_buf_append_byte(struct common_buf *buf, uint8_t byte);
int common_buf_append_u32le(struct common_buf *buf, uint32_t v);
int common_buf_append_u64le(struct common_buf *buf, uint64_t v);
int common_buf_append_varint(struct common_buf *buf, uint64_t v);

/* Drops the bytes from size on; size must be <= buf->size. Keeps capacity. */
void common_buf_truncate(struct common_buf *buf, size_t size);

/* Hands the bytes to the caller, who frees them with common_free(); stores
 * their count in *size and leaves the buffer empty. NULL if it had none. */
uint8_t *common_buf_detach(struct common_buf *buf, size_t *size);

/* ------------------------------------------------------------------------
 * Reader: bounds-checked decoding of bytes that came from a file or the
 * network. Every read either succeeds and advances, or returns
 * COMMON_ECORRUPT and leaves the reader where it was.
 * ------------------------------------------------------------------------ */

struct common_reader {
    const uint8_t *data; /* borrowed: must outlive the reader */
    size_t size;         /* bytes at data */
    size_t offset;       /* next byte to read; offset <= size */
};

void common_reader_init(struct common_reader *reader, const void *data,
                        size_t size);

static inline size_t common_reader_remaining(const struct common_reader *r)
{
    return r->size - r->offset;
}

int common_reader_byte(struct common_reader *reader, uint8_t *out);
int common_reader_u32le(struct common_reader *reader, uint32_t *out);
int common_reader_u64le(struct common_reader *reader, uint64_t *out);
int common_reader_varint(struct common_reader *reader, uint64_t *out);

/* Points *out at the next size bytes (borrowed from the reader's data). */
int common_reader_bytes(struct common_reader *reader, size_t size,
                        const uint8_t **out);

/* ------------------------------------------------------------------------
 * Checksum: XXH3, 64 bits (libxxhash >= 0.8, whose XXH3 output is frozen, so
 * it is fit for on-disk and wire formats). Not cryptographic: it detects
 * torn writes and bit rot, not tampering (the transport authenticates).
 * Chain pieces by passing one checksum as the seed of the next.
 * ------------------------------------------------------------------------ */

uint64_t common_checksum64(const void *data, size_t size, uint64_t seed);

/* ------------------------------------------------------------------------
 * SIGPIPE
 *
 * A peer that closes while we write makes write(2) raise SIGPIPE, whose
 * default action ends the process, and libuv leaves it to the
 * application. A network piece must never crash its host over a peer's
 * behaviour: if nobody chose a disposition, this sets SIGPIPE to ignored
 * (the write then fails with EPIPE, a lost connection like any other); a
 * handler or SIG_IGN the application set is left alone.
 * ------------------------------------------------------------------------ */

void common_sigpipe_ignore_default(void);

#endif /* SINEW_COMMON_H */
