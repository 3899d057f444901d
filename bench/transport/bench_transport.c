/* SPDX-License-Identifier: MIT
 *
 * bench_transport: the TCP transport over loopback, encrypted framing (what
 * transport_tcp_new() gives) against plaintext framing (the same code with
 * the session's security off: transport__tcp_new(..., plaintext = true)),
 * same run, same messages. Workloads (issue 5):
 *
 *   100-byte messages   --small N messages one way, in messages/s
 *   64 KiB messages     --large N messages one way, in MB/s (10^6 bytes)
 *
 * Two endpoints in one process. By default each has its own libuv loop on
 * its own thread (--threads 2), as two nodes would have their own cores:
 * the sender seals and writes while the receiver reads and opens. With
 * --threads 1 both share one loop and one thread, so the time is the
 * whole cost of both ends on one core. Compression is off
 * (compress_min_bytes = SIZE_MAX) and payloads are random, so the
 * comparison is framing against framing plus encryption. The sender keeps
 * its send queue full (send until TRANSPORT_EFULL, go on at writable()).
 *
 * Results are checked before they are timed: the receiver counts messages
 * and chains a checksum (XXH3) over every payload in order; both must equal
 * what was sent, or the run fails. Times are the median of --repeat runs
 * (from the first send to the last delivery, after the handshake); the
 * ratio is encrypted over plaintext throughput, so below 1 is what
 * encryption costs.
 *
 * Usage: bench_transport [--small N] [--large N] [--repeat N]
 *                        [--threads 1|2]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>
#include <uv.h>

#include "tcp.h"
#include "transport.h"

#define SMALL_SIZE 100
#define LARGE_SIZE (64u << 10)
#define PAYLOADS 64 /* distinct random payloads, used in turn */
#define REPEAT_MAX 99

struct options {
    uint64_t small;
    uint64_t large;
    int repeat;
    int threads; /* 1: both endpoints on one loop; 2: a loop each */
};

/* One endpoint: its loop (and thread, with --threads 2). */
struct side {
    struct run *run;
    uv_loop_t *loop;
    struct transport *transport;
    uv_async_t stop; /* another thread's way to stop this loop */
    uv_thread_t thread;
    bool is_sender;
    int connected;
    int closed;
};

/* One timed run: side 0 sends count messages of size to side 1. */
struct run {
    uv_loop_t loops[2];
    struct side sides[2];
    struct transport_identity identities[2];
    struct transport_node_id authorized[2];
    const uint8_t *payloads; /* PAYLOADS * size bytes */
    size_t size;
    uint64_t count;
    uint64_t sent;     /* the sender's */
    uint64_t received; /* the receiver's, and the checksum: */
    uint64_t checksum;
    uint64_t end_ns; /* the last delivery */
    int failures;    /* a disconnect or a send error */
};

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "bench_transport: %s: %s\n", what, detail);
    exit(1);
}

static void pump(struct run *run)
{
    struct transport *sender = run->sides[0].transport;

    while (run->sent < run->count) {
        const uint8_t *bytes =
            run->payloads + (run->sent % PAYLOADS) * run->size;
        int rc =
            transport_send(sender, &run->identities[1].id, 1, bytes, run->size);

        if (rc == TRANSPORT_EFULL) {
            return; /* writable() comes back here */
        }
        if (rc != 0) {
            run->failures++;
            return;
        }
        run->sent++;
    }
}

static void on_received(void *ctx, const struct transport_node_id *peer,
                        uint16_t type, const uint8_t *bytes, size_t size)
{
    struct side *side = ctx;
    struct run *run = side->run;

    (void)peer;
    (void)type;
    run->checksum = common_checksum64(bytes, size, run->checksum);
    run->received++;
    if (run->received == run->count) {
        run->end_ns = uv_hrtime();
        uv_stop(side->loop);
        uv_async_send(&run->sides[0].stop);
    }
}

static void on_connected(void *ctx, const struct transport_node_id *peer)
{
    struct side *side = ctx;

    (void)peer;
    side->connected++;
    uv_stop(side->loop);
}

static void on_disconnected(void *ctx, const struct transport_node_id *peer,
                            int reason)
{
    struct side *side = ctx;

    (void)peer;
    (void)reason;
    side->run->failures++;
    uv_stop(side->loop);
}

static void on_writable(void *ctx, const struct transport_node_id *peer)
{
    struct side *side = ctx;

    (void)peer;
    pump(side->run);
}

static void on_stop(uv_async_t *async)
{
    uv_stop(async->loop);
}

static void on_closed(void *ctx)
{
    struct side *side = ctx;

    side->closed++;
}

static void side_start(struct run *run, int index, uv_loop_t *loop,
                       bool plaintext)
{
    struct side *side = &run->sides[index];
    struct transport_tcp_config config = {
        .identity = &run->identities[index],
        .admission = {.authorized = run->authorized, .authorized_count = 2},
        .limits = {.max_message_bytes = LARGE_SIZE,
                   .send_queue_max_bytes = 8u << 20},
        .compress_min_bytes = SIZE_MAX,
    };
    struct transport_callbacks callbacks = {
        .received = on_received,
        .connected = on_connected,
        .disconnected = on_disconnected,
        .writable = on_writable,
        .ctx = side,
    };
    int rc;

    side->run = run;
    side->loop = loop;
    side->is_sender = index == 0;
    uv_async_init(loop, &side->stop, on_stop);
    rc = transport__tcp_new(loop, &config, &callbacks, plaintext,
                            &side->transport);
    if (rc != 0) {
        die("transport", transport_strerror(rc));
    }
}

static void side_run(void *arg)
{
    struct side *side = arg;

    if (side->is_sender && side->connected > 0) {
        pump(side->run);
    }
    uv_run(side->loop, UV_RUN_DEFAULT);
}

/* Runs both sides until each stops its loop: on its threads, or one
 * after the other... which on one shared loop is one run. */
static void sides_run(struct run *run, int threads)
{
    if (threads == 1) {
        side_run(&run->sides[0]);
        return;
    }
    for (int i = 0; i < 2; i++) {
        if (uv_thread_create(&run->sides[i].thread, side_run, &run->sides[i]) !=
            0) {
            die("thread", "create");
        }
    }
    for (int i = 0; i < 2; i++) {
        uv_thread_join(&run->sides[i].thread);
    }
}

static void sides_close(struct run *run, int threads)
{
    for (int i = 0; i < 2; i++) {
        transport_close(run->sides[i].transport, on_closed, &run->sides[i]);
        uv_close((uv_handle_t *)&run->sides[i].stop, NULL);
    }
    for (int i = 0; i < threads; i++) {
        uv_run(&run->loops[i], UV_RUN_DEFAULT);
        if (uv_loop_close(&run->loops[i]) != 0) {
            die("close", "handles left open");
        }
    }
    if (run->sides[0].closed != 1 || run->sides[1].closed != 1) {
        die("close", "done not called");
    }
}

/* The checksum the receiver must reach: every payload in send order. */
static uint64_t expected_checksum(const uint8_t *payloads, size_t size,
                                  uint64_t count)
{
    uint64_t checksum = 0;

    for (uint64_t i = 0; i < count; i++) {
        checksum =
            common_checksum64(payloads + (i % PAYLOADS) * size, size, checksum);
    }
    return checksum;
}

/* Seconds from the first send to the last delivery. */
static double run_once(const uint8_t *payloads, size_t size, uint64_t count,
                       bool plaintext, int threads)
{
    static struct run run;
    char address[64];
    uint64_t start_ns;

    memset(&run, 0, sizeof(run));
    run.payloads = payloads;
    run.size = size;
    run.count = count;
    for (int i = 0; i < 2; i++) {
        if (i < threads && uv_loop_init(&run.loops[i]) != 0) {
            die("uv_loop_init", "failed");
        }
        transport_identity_generate(&run.identities[i]);
        run.authorized[i] = run.identities[i].id;
    }
    side_start(&run, 0, &run.loops[0], plaintext);
    side_start(&run, 1, &run.loops[threads - 1], plaintext);
    if (transport_listen(run.sides[1].transport, "127.0.0.1:0") != 0 ||
        transport_listen_address(run.sides[1].transport, address,
                                 sizeof(address)) != 0 ||
        transport_connect(run.sides[0].transport, &run.identities[1].id,
                          address) != 0) {
        die("listen or connect", "127.0.0.1");
    }
    while (run.failures == 0 &&
           (run.sides[0].connected == 0 || run.sides[1].connected == 0)) {
        sides_run(&run, threads);
    }
    if (run.failures != 0) {
        die("handshake", "no connection");
    }
    start_ns = uv_hrtime();
    sides_run(&run, threads);
    if (run.failures != 0 || run.received != count ||
        run.checksum != expected_checksum(payloads, size, count)) {
        die("check", "messages lost, reordered or damaged");
    }
    sides_close(&run, threads);
    return (double)(run.end_ns - start_ns) / 1e9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return (x > y) - (x < y);
}

static double median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof(*values), compare_doubles);
    return values[count / 2];
}

static void parse_options(int argc, char **argv, struct options *options)
{
    options->small = 1000000;
    options->large = 20000;
    options->repeat = 3;
    options->threads = 2;
    for (int i = 1; i < argc; i += 2) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;

        if (value == NULL) {
            die("missing value for", argv[i]);
        } else if (strcmp(argv[i], "--small") == 0) {
            options->small = strtoull(value, NULL, 10);
        } else if (strcmp(argv[i], "--large") == 0) {
            options->large = strtoull(value, NULL, 10);
        } else if (strcmp(argv[i], "--repeat") == 0) {
            options->repeat = atoi(value);
        } else if (strcmp(argv[i], "--threads") == 0) {
            options->threads = atoi(value);
        } else {
            die("unknown option", argv[i]);
        }
    }
    if (options->small == 0 || options->large == 0 || options->repeat < 1 ||
        options->repeat > REPEAT_MAX ||
        (options->threads != 1 && options->threads != 2)) {
        die("bad option",
            "--small and --large > 0, --repeat 1..99, --threads 1 or 2");
    }
}

/* Median seconds per mode (0: encrypted, 1: plaintext); the modes
 * alternate run by run, so drift in the machine hits both alike. */
static void measure(const struct options *options, size_t size, uint64_t count,
                    double out[2])
{
    double times[2][REPEAT_MAX];
    uint8_t *payloads = malloc(PAYLOADS * size);

    if (payloads == NULL) {
        die("malloc", "payloads");
    }
    randombytes_buf(payloads, PAYLOADS * size);
    for (int r = 0; r < options->repeat; r++) {
        times[0][r] = run_once(payloads, size, count, false, options->threads);
        times[1][r] = run_once(payloads, size, count, true, options->threads);
    }
    out[0] = median(times[0], options->repeat);
    out[1] = median(times[1], options->repeat);
    free(payloads);
}

int main(int argc, char **argv)
{
    struct options options;
    double small[2];
    double large[2];
    double rate[2];
    double mbps[2];

    parse_options(argc, argv, &options);
    printf("bench_transport: loopback TCP, %s; %" PRIu64
           " x %d-byte and %" PRIu64 " x %u-byte messages, median of %d; "
           "compression off; libuv %s, libsodium %s\n",
           options.threads == 2 ? "two threads, a loop each"
                                : "one loop, one thread",
           options.small, SMALL_SIZE, options.large, LARGE_SIZE, options.repeat,
           uv_version_string(), sodium_version_string());
    measure(&options, SMALL_SIZE, options.small, small);
    measure(&options, LARGE_SIZE, options.large, large);
    for (int m = 0; m < 2; m++) {
        rate[m] = (double)options.small / small[m];
        mbps[m] = (double)options.large * LARGE_SIZE / large[m] / 1e6;
    }
    printf("\n| workload | encrypted | plaintext | ratio |\n");
    printf("| --- | ---: | ---: | ---: |\n");
    printf("| 100-byte messages, messages/s | %.0f | %.0f | %.2f |\n", rate[0],
           rate[1], rate[0] / rate[1]);
    printf("| 64 KiB messages, MB/s | %.1f | %.1f | %.2f |\n", mbps[0], mbps[1],
           mbps[0] / mbps[1]);
    printf("\nencryption costs %.0f%% of throughput for 64 KiB messages "
           "(goal: under 30%%), %.0f%% for 100-byte messages\n",
           100.0 * (1.0 - mbps[0] / mbps[1]),
           100.0 * (1.0 - rate[0] / rate[1]));
    return 0;
}
