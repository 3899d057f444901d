/* SPDX-License-Identifier: MIT
 *
 * hlc.h: the hybrid logical clock every sinew timestamp comes from, and its
 * manual.
 *
 * A hybrid logical clock (Kulkarni, Demirbas, Madeppa, Avva, Leone: "Logical
 * Physical Clocks", OPODIS 2014) stamps events with (l, c): l the largest
 * physical time the node has heard of, c a counter that orders events within
 * one l. Stamps respect causality like Lamport clocks (a receive is stamped
 * above its send) and stay within the clock offset of physical time, so they
 * read as wall-clock times.
 *
 * Layout: one uint64_t, l (milliseconds since the Unix epoch, 48 bits, good
 * until the year 10889) in the high bits and c (16 bits) in the low bits, so
 * stamps compare as plain integers. Within that layout the paper's rules
 * (its Figure 5) reduce to:
 *
 *   local or send event:  t = max(last + 1, pt << 16)
 *   receive of stamp m:   t = max(last + 1, m + 1, pt << 16)
 *
 * where pt is the physical clock. When c would pass 65535 within one
 * millisecond, the + 1 carries into l: the clock runs one millisecond ahead
 * rather than wrap backwards, and physical time catches up.
 *
 * A remote stamp whose l is further ahead of the local physical clock than
 * the configured maximum offset is refused (HLC_EAHEAD) and leaves the clock
 * untouched: one node with a runaway clock must not drag every other node's
 * stamps into the future.
 *
 * Restarts: the clock's high-water mark (the largest stamp it issued or
 * received) is persisted by the caller, with its commits, and restored on
 * start, so stamps never go back even if the wall clock stepped back while
 * the node was down. Only what the caller persisted is protected: stamps
 * issued after the last persisted mark are not.
 *
 * Thread safety: a struct hlc is not locked; one thread owns it (the node's
 * loop), or the caller serializes access.
 */
#ifndef SINEW_HLC_H
#define SINEW_HLC_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* A stamp: milliseconds << 16 | counter. 0 is below every stamp issued. */
typedef uint64_t hlc_ts;

#define HLC_COUNTER_BITS 16
#define HLC_COUNTER_MAX ((UINT64_C(1) << HLC_COUNTER_BITS) - 1)
#define HLC_PHYSICAL_MS_MAX ((UINT64_C(1) << (64 - HLC_COUNTER_BITS)) - 1)

/* How far a remote stamp may run ahead of the local physical clock when no
 * other value is configured: larger than NTP's usual error on a LAN, small
 * enough that a misconfigured clock is caught at once. */
#define HLC_MAX_OFFSET_MS_DEFAULT 500

/* Bytes of hlc_encode()'s output. */
#define HLC_ENCODED_SIZE 8

/* Room for hlc_format()'s longest output, "10889-08-02T05:31:50.655Z+65535",
 * and its terminating NUL. */
#define HLC_FORMAT_SIZE 32

#define HLC_ERROR_MAP(X)                                                       \
    X(HLC_EAHEAD, -10000,                                                      \
      "remote timestamp is further ahead than the maximum clock offset")       \
    X(HLC_ECLOCK, -10001,                                                      \
      "physical clock reading is outside the timestamp range")                 \
    X(HLC_EOVERFLOW, -10002, "timestamp space exhausted")                      \
    X(HLC_EPARSE, -10003, "malformed timestamp text")

enum hlc_error { HLC_ERROR_MAP(COMMON_ERROR_ENUM) };

#define HLC_ERROR_FIRST (-10099)
#define HLC_ERROR_LAST (-10000)

/* The message for an hlc code; common_strerror()'s answer for anything
 * else. Static, never NULL. */
const char *hlc_strerror(int rc);

/* The physical clock: milliseconds since the Unix epoch. Injected so tests
 * and the simulator drive time; it may step backwards. */
struct hlc_clock_source {
    void *ctx; /* passed back to now_ms, borrowed for the clock's life */
    uint64_t (*now_ms)(void *ctx);
};

/* The wall clock (CLOCK_REALTIME), for production. */
struct hlc_clock_source hlc_clock_source_system(void);

struct hlc_config {
    struct hlc_clock_source clock; /* copied; now_ms must not be NULL */
    uint64_t max_offset_ms;        /* HLC_MAX_OFFSET_MS_DEFAULT unless tuned */
};

/* Caller-owned; read the fields only through the functions below. */
struct hlc {
    struct hlc_clock_source clock; /* the physical clock */
    uint64_t max_offset_ms;        /* how far ahead a remote stamp may be */
    hlc_ts last;                   /* the largest stamp issued or received */
};

/* Sets clock up from config, with a high-water mark of 0. */
void hlc_init(struct hlc *clock, const struct hlc_config *config);

/* Stamps a local event (a commit, a message about to be sent): a stamp
 * greater than every stamp this clock issued or received. HLC_ECLOCK if
 * the physical clock reads beyond HLC_PHYSICAL_MS_MAX, HLC_EOVERFLOW if
 * every stamp has been used. On error *out is not written and the clock
 * does not move. */
int hlc_now(struct hlc *clock, hlc_ts *out);

/* Merges a stamp received from another node and stamps the receive event:
 * the result is greater than remote and than every stamp this clock issued
 * or received. HLC_EAHEAD if remote's milliseconds are more than
 * max_offset_ms ahead of the physical clock; errors as hlc_now(). On error
 * *out is not written and the clock does not move. */
int hlc_update(struct hlc *clock, hlc_ts remote, hlc_ts *out);

/* The largest stamp issued or received: what to persist. */
hlc_ts hlc_high_water(const struct hlc *clock);

/* Raises the clock to a persisted high-water mark, so every later stamp is
 * above it even if the physical clock is now behind it. A mark below the
 * clock's own changes nothing. */
void hlc_restore(struct hlc *clock, hlc_ts high_water);

static inline hlc_ts hlc_pack(uint64_t physical_ms, uint16_t counter)
{
    return (physical_ms << HLC_COUNTER_BITS) | counter;
}

static inline uint64_t hlc_physical_ms(hlc_ts ts)
{
    return ts >> HLC_COUNTER_BITS;
}

static inline uint16_t hlc_counter(hlc_ts ts)
{
    return (uint16_t)(ts & HLC_COUNTER_MAX);
}

/* 8 bytes, big-endian, so encoded stamps sort bytewise in time order. */
void hlc_encode(hlc_ts ts, uint8_t out[HLC_ENCODED_SIZE]);
hlc_ts hlc_decode(const uint8_t in[HLC_ENCODED_SIZE]);

/* Renders ts as ISO 8601 UTC with milliseconds, then '+' and the counter:
 * "2026-12-02T14:53:06.123Z+5". out has room for size bytes, at least
 * HLC_FORMAT_SIZE. Returns the length written, without the NUL. */
size_t hlc_format(hlc_ts ts, char *out, size_t size);

/* Parses hlc_format()'s rendering; "+counter" may be left out (0). Years
 * 1970 to 10889. HLC_EPARSE on anything else, and *out is not written. */
int hlc_parse(const char *text, hlc_ts *out);

#endif /* SINEW_HLC_H */
