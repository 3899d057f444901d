/* SPDX-License-Identifier: MIT
 *
 * test_proc.c: the parts of chaos-proc that need no processes, root or
 * network: the fault schedule (a function of the seed; faults never
 * overlap; the last one lasts to the end of the workload) and the
 * verdicts, which must fail when the history says so (a lost
 * acknowledged insert, a phantom row, a refused insert that shows up, a
 * stale read in quorum mode, a read of a value nobody wrote); the fault
 * kinds' names and the CHAOS_PROC_FAULTS filter; the majorities ring's
 * cut matrix (every node sees a majority, no two the same one, checked
 * for every ring order of 3 to 7 nodes); chaos-nfq's command line and
 * packet fates; libfaketime's offset text and the node environment;
 * leader mode's verdict on hand-written histories (lost, phantom and
 * duplicate appends, a follower that takes a write, follower reads not a
 * prefix of the writer's log, staleness) and the final-log comparison;
 * failover: only in leader mode's schedule and always there, and its
 * verdict (held appends must survive, fenced ones may go, a deposed
 * writer's append made after the takeover must not survive, a promoted
 * follower's earlier ack fails, reads of a rebuilt node are not judged);
 * the scenario table, and isolated-old-leader's judge (an ack from the
 * cut-off leader fails it, so does a slow takeover, a skipped cut skips).
 */
#include "common_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chaos_proc.h"
#include "common.h"

static struct chaos_fault faults_a[CHAOS_FAULTS_MAX];
static struct chaos_leader_history no_failover;
static struct chaos_leader_history history;
static struct chaos_fault faults_b[CHAOS_FAULTS_MAX];
static struct chaos_run_result result;

static void test_schedule(void **state)
{
    (void)state;
    for (uint64_t seed = 0; seed < 300; seed++) {
        int64_t duration_ms = 15000 + (int64_t)(seed % 7) * 30000;
        size_t nodes = 3 + seed % 3;
        enum chaos_mode mode = (enum chaos_mode)(seed % CHAOS_MODE_COUNT);
        size_t count =
            chaos_schedule_plan(seed, duration_ms, nodes, mode, faults_a);
        assert_int_equal(
            chaos_schedule_plan(seed, duration_ms, nodes, mode, faults_b),
            count);
        assert_true(count >= 1);
        int64_t free_from_ms = 2000;
        for (size_t i = 0; i < count; i++) {
            const struct chaos_fault *f = &faults_a[i];
            assert_memory_equal(f, &faults_b[i], sizeof *f);
            assert_true(f->start_ms >= free_from_ms);
            assert_true(f->length_ms >= 3000 || i + 1 == count);
            assert_true(f->kind < CHAOS_FAULT_KIND_COUNT);
            assert_true(f->target >= 0 && (size_t)f->target < nodes);
            assert_true(f->other >= 0 && (size_t)f->other < nodes);
            assert_int_not_equal(f->other, f->target);
            free_from_ms = f->start_ms + f->length_ms + 3000;
        }
        const struct chaos_fault *last = &faults_a[count - 1];
        assert_int_equal(last->start_ms + last->length_ms, duration_ms);
    }
}

/* Failover is leader mode's: never drawn in the other modes, and every
 * leader-mode schedule of a ci-length run has one. CHAOS_PROC_FAULTS=failover
 * in another mode still plans it (to be skipped with the reason). */
static void test_schedule_failover(void **state)
{
    (void)state;
    for (uint64_t seed = 0; seed < 300; seed++) {
        size_t count =
            chaos_schedule_plan(seed, 60000, 3, CHAOS_MODE_LEADER, faults_a);
        size_t failovers = 0;
        for (size_t i = 0; i < count; i++) {
            failovers += faults_a[i].kind == CHAOS_FAULT_FAILOVER;
        }
        assert_true(failovers >= 1);
        for (int mode = 0; mode < CHAOS_MODE_COUNT; mode++) {
            if (mode == CHAOS_MODE_LEADER) {
                continue;
            }
            count = chaos_schedule_plan(seed, 60000, 3, (enum chaos_mode)mode,
                                        faults_b);
            for (size_t i = 0; i < count; i++) {
                assert_int_not_equal(faults_b[i].kind, CHAOS_FAULT_FAILOVER);
            }
        }
    }
    chaos_fault_kinds_allow(1u << CHAOS_FAULT_FAILOVER);
    size_t count = chaos_schedule_plan(7, 60000, 3, CHAOS_MODE_CRDT, faults_a);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(faults_a[i].kind, CHAOS_FAULT_FAILOVER);
    }
    count = chaos_schedule_plan(7, 60000, 3, CHAOS_MODE_LEADER, faults_a);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(faults_a[i].kind, CHAOS_FAULT_FAILOVER);
    }
    chaos_fault_kinds_allow(1u << CHAOS_FAULT_KILL);
    count = chaos_schedule_plan(7, 60000, 3, CHAOS_MODE_LEADER, faults_a);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(faults_a[i].kind, CHAOS_FAULT_KILL);
    }
    chaos_fault_kinds_allow(0);
}

static void result_reset(const char *dir)
{
    memset(&result, 0, sizeof result);
    result.is_passed = true;
    snprintf(result.config.dir, sizeof result.config.dir, "%s", dir);
}

static void test_crdt_verdict(void **state)
{
    (void)state;
    struct chaos_insert inserts[] = {
        {.id = 1, .outcome = CHAOS_SQL_OK},
        {.id = 2, .outcome = CHAOS_SQL_OK},
        {.id = 3, .outcome = CHAOS_SQL_FAILED},
        {.id = 4, .outcome = CHAOS_SQL_UNKNOWN},
    };
    struct chaos_workload w = {.inserts = inserts, .insert_count = 4};
    const int64_t good[] = {1, 2, 4}, good_without_unknown[] = {1, 2};
    const int64_t lost[] = {1, 4}, refused[] = {1, 2, 3}, alien[] = {1, 2, 9};

    result_reset("/nonexistent");
    chaos_verdict_crdt(&result, &w, good, 3);
    assert_true(result.is_passed);
    chaos_verdict_crdt(&result, &w, good_without_unknown, 2);
    assert_true(result.is_passed);

    chaos_verdict_crdt(&result, &w, lost, 2);
    assert_false(result.is_passed);
    assert_int_equal(result.lost, 1);
    assert_int_equal(result.phantoms, 0);

    result_reset("/nonexistent");
    chaos_verdict_crdt(&result, &w, refused, 3);
    assert_false(result.is_passed);
    assert_int_equal(result.phantoms, 1);

    result_reset("/nonexistent");
    chaos_verdict_crdt(&result, &w, alien, 3);
    assert_false(result.is_passed);
    assert_int_equal(result.phantoms, 1);
    assert_int_equal(result.lost, 0);
}

static void op(struct check_op *out, enum check_kind kind, int64_t value,
               int64_t invoke_ns, int64_t complete_ns)
{
    *out = (struct check_op){.client_id = 1,
                             .kind = kind,
                             .key = 0,
                             .value = value,
                             .invoke_ns = invoke_ns,
                             .complete_ns = complete_ns,
                             .outcome = CHECK_OUTCOME_OK};
}

static void test_quorum_verdict(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    char dir[512];

    snprintf(dir, sizeof(dir), "%s/test_proc_XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
    struct check_op ops[3];
    struct chaos_workload w = {.ops = ops, .op_count = 3};

    op(&ops[0], CHECK_WRITE, 5, 10, 20);
    op(&ops[1], CHECK_READ, 5, 30, 40);
    op(&ops[2], CHECK_READ, 5, 50, 60);
    result_reset(dir);
    chaos_verdict_quorum(&result, &w);
    assert_true(result.is_passed);
    assert_int_equal(result.linearizable, CHECK_LINEARIZABLE);

    op(&ops[2], CHECK_READ, 0, 50, 60); /* stale: 5 was read before */
    result_reset(dir);
    chaos_verdict_quorum(&result, &w);
    assert_false(result.is_passed);
    assert_int_equal(result.linearizable, CHECK_NOT_LINEARIZABLE);

    op(&ops[2], CHECK_READ, 77, 50, 60); /* nobody wrote 77 */
    result_reset(dir);
    chaos_verdict_quorum(&result, &w);
    assert_false(result.is_passed);
    assert_int_equal(result.phantom_reads, 1);

    char path[sizeof dir + 32];
    snprintf(path, sizeof path, "%s/history.txt", dir);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s/violation.txt", dir);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

static void test_fault_kinds(void **state)
{
    (void)state;
    uint32_t mask = 0;
    for (int k = 0; k < CHAOS_FAULT_KIND_COUNT; k++) {
        const char *name = chaos_fault_kind_name((enum chaos_fault_kind)k);
        assert_int_equal(chaos_fault_kinds_parse(name, &mask), 0);
        assert_int_equal(mask, 1u << k);
    }
    assert_int_equal(chaos_fault_kinds_parse("clock-skew,disk-fault", &mask),
                     0);
    assert_int_equal(mask,
                     (1u << CHAOS_FAULT_CLOCK_SKEW) | (1u << CHAOS_FAULT_DISK));
    assert_int_equal(chaos_fault_kinds_parse("kill,nonsense", &mask), -EINVAL);
    assert_int_equal(chaos_fault_kinds_parse("", &mask), -EINVAL);
    assert_int_equal(chaos_fault_kinds_parse("kil", &mask), -EINVAL);

    chaos_fault_kinds_allow((1u << CHAOS_FAULT_RING) |
                            (1u << CHAOS_FAULT_KILL_ALL));
    bool seen[CHAOS_FAULT_KIND_COUNT] = {false};
    for (uint64_t seed = 0; seed < 50; seed++) {
        size_t count =
            chaos_schedule_plan(seed, 120000, 5, CHAOS_MODE_LEADER, faults_a);
        for (size_t i = 0; i < count; i++) {
            seen[faults_a[i].kind] = true;
        }
    }
    chaos_fault_kinds_allow(0);
    for (int k = 0; k < CHAOS_FAULT_KIND_COUNT; k++) {
        assert_int_equal(seen[k],
                         k == CHAOS_FAULT_RING || k == CHAOS_FAULT_KILL_ALL);
    }
}

static void test_fault_params(void **state)
{
    (void)state;
    bool seen[CHAOS_FAULT_KIND_COUNT] = {false};
    bool has_hour_back = false, has_no_back = false, has_fsync = false;
    for (uint64_t seed = 0; seed < 200; seed++) {
        size_t count =
            chaos_schedule_plan(seed, 90000, 3, CHAOS_MODE_LEADER, faults_a);
        for (size_t i = 0; i < count; i++) {
            const struct chaos_fault *f = &faults_a[i];
            seen[f->kind] = true;
            int64_t skew = f->skew_ms < 0 ? -f->skew_ms : f->skew_ms;
            assert_true(skew >= 1000 && skew <= 10000);
            assert_true(f->other_skew_ms == 0 ||
                        (f->other_skew_ms < 0) != (f->skew_ms < 0));
            assert_true(f->restart_back_ms <= 0);
            assert_true(f->restart_back_ms >= -3600000);
            has_hour_back |= f->restart_back_ms == -3600000;
            has_no_back |= f->restart_back_ms == 0;
            assert_true(f->delay_ms >= 20 && f->delay_ms <= 150);
            assert_true(f->jitter_ms >= 0 && f->jitter_ms <= 100);
            assert_true(f->loss_percent >= 0 && f->loss_percent <= 10);
            has_fsync |= f->disk_write_percent == 0;
            assert_true(
                f->disk_write_percent == 0 ||
                (f->disk_write_percent >= 5 && f->disk_write_percent <= 30));
        }
    }
    for (int k = 0; k < CHAOS_FAULT_KIND_COUNT; k++) {
        assert_true(seen[k]);
    }
    assert_true(has_hour_back && has_no_back && has_fsync);
}

/* Checks the ring's properties for one order of n nodes. */
static void check_ring(size_t n, const size_t *ring)
{
    struct chaos_fault f;
    memset(&f, 0, sizeof f);
    chaos_ring_cut(&f, n, ring);
    bool sees[CHAOS_NODES_MAX][CHAOS_NODES_MAX];
    size_t cuts = 0;
    for (size_t a = 0; a < n; a++) {
        size_t seen = 0;
        for (size_t b = 0; b < n; b++) {
            assert_int_equal(f.cut[a * n + b], f.cut[b * n + a]);
            sees[a][b] = !f.cut[a * n + b];
            seen += sees[a][b];
            cuts += f.cut[a * n + b];
        }
        assert_false(f.cut[a * n + a]);
        assert_true(seen > n / 2); /* a majority, itself included */
    }
    assert_true(cuts > 0);
    for (size_t a = 0; a < n; a++) {
        for (size_t b = a + 1; b < n; b++) {
            assert_memory_not_equal(sees[a], sees[b], n * sizeof(bool));
        }
    }
    /* Ring neighbours always see each other. */
    for (size_t i = 0; i < n && n > 3; i++) {
        assert_false(f.cut[ring[i] * n + ring[(i + 1) % n]]);
    }
}

static bool next_permutation(size_t *p, size_t n)
{
    size_t i = n - 1;
    while (i > 0 && p[i - 1] >= p[i]) {
        i--;
    }
    if (i == 0) {
        return false;
    }
    size_t j = n - 1;
    while (p[j] <= p[i - 1]) {
        j--;
    }
    size_t swap = p[i - 1];
    p[i - 1] = p[j];
    p[j] = swap;
    for (size_t a = i, b = n - 1; a < b; a++, b--) {
        swap = p[a];
        p[a] = p[b];
        p[b] = swap;
    }
    return true;
}

static void test_ring_cut(void **state)
{
    (void)state;
    assert_int_equal(chaos_ring_reach(3), 1);
    assert_int_equal(chaos_ring_reach(5), 1);
    assert_int_equal(chaos_ring_reach(7), 2);
    for (size_t n = 3; n <= CHAOS_NODES_MAX; n++) {
        size_t ring[CHAOS_NODES_MAX];
        for (size_t i = 0; i < n; i++) {
            ring[i] = i;
        }
        do {
            check_ring(n, ring);
        } while (next_permutation(ring, n));
    }
    /* 5 nodes in order: n1 keeps n2 and n5, loses n3 and n4. */
    struct chaos_fault f;
    const size_t ring5[] = {0, 1, 2, 3, 4};
    chaos_ring_cut(&f, 5, ring5);
    assert_false(f.cut[0 * 5 + 1]);
    assert_false(f.cut[0 * 5 + 4]);
    assert_true(f.cut[0 * 5 + 2]);
    assert_true(f.cut[0 * 5 + 3]);
    /* 3 nodes: the bridge cuts ring[0]-ring[1] only. */
    const size_t ring3[] = {2, 0, 1};
    chaos_ring_cut(&f, 3, ring3);
    assert_true(f.cut[2 * 3 + 0]);
    assert_false(f.cut[2 * 3 + 1]);
    assert_false(f.cut[0 * 3 + 1]);
}

static void test_nfq_args(void **state)
{
    (void)state;
    struct chaos_nfq_config in = {.queue = 7,
                                  .delay_ms = 120,
                                  .jitter_ms = 35,
                                  .loss_percent = 4,
                                  .seed = 18446744073709551615u},
                            out;
    const char *argv[14];
    char storage[5][24], error[128];
    argv[0] = "chaos-nfq";
    chaos_nfq_args_format(&in, argv + 1, storage);
    assert_null(argv[11]);
    assert_int_equal(chaos_nfq_args_parse(11, argv, &out, error, sizeof error),
                     0);
    assert_memory_equal(&in, &out, sizeof in);

    const char *bad[][3] = {
        {"--queue", "-1", "negative"},    {"--queue", "65536", "too big"},
        {"--loss-percent", "101", "%"},   {"--delay-ms", "60001", "max"},
        {"--delay-ms", "12x", "garbage"}, {"--jitter-ms", "", "empty"},
        {"--color", "1", "unknown"},      {"--seed", " 1", "space"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        chaos_nfq_args_format(&in, argv + 1, storage);
        argv[11] = bad[i][0];
        argv[12] = bad[i][1];
        argv[13] = NULL;
        assert_int_equal(
            chaos_nfq_args_parse(13, argv, &out, error, sizeof error), -EINVAL);
    }
    assert_int_equal(chaos_nfq_args_parse(9, argv, &out, error, sizeof error),
                     -EINVAL); /* --seed missing */
    assert_non_null(strstr(error, "--seed"));
    assert_int_equal(chaos_nfq_args_parse(10, argv, &out, error, sizeof error),
                     -EINVAL); /* --seed without its value */
    const char *twice[] = {"chaos-nfq", "--queue", "1", "--queue", "2"};
    assert_int_equal(chaos_nfq_args_parse(5, twice, &out, error, sizeof error),
                     -EINVAL);
}

static void test_nfq_packets(void **state)
{
    (void)state;
    struct chaos_nfq_config config = {
        .queue = 7, .delay_ms = 50, .jitter_ms = 100, .loss_percent = 10};
    struct chaos_rng rng = {42}, again = {42};
    size_t lost = 0, total = 20000;
    for (size_t i = 0; i < total; i++) {
        int delay_ms = chaos_nfq_packet_delay_ms(&config, &rng);
        assert_int_equal(chaos_nfq_packet_delay_ms(&config, &again), delay_ms);
        if (delay_ms < 0) {
            lost++;
            continue;
        }
        assert_true(delay_ms >= 50 && delay_ms < 150);
    }
    assert_true(lost > total / 20 && lost < total * 3 / 20); /* ~10 % */
    config.loss_percent = 0;
    config.jitter_ms = 0;
    for (size_t i = 0; i < 1000; i++) {
        assert_int_equal(chaos_nfq_packet_delay_ms(&config, &rng), 50);
    }
}

static void test_clock_text(void **state)
{
    (void)state;
    char text[32];
    chaos_preload_clock_format(0, text, sizeof text);
    assert_string_equal(text, "+0");
    chaos_preload_clock_format(2500, text, sizeof text);
    assert_string_equal(text, "+2.500s");
    chaos_preload_clock_format(-3600000, text, sizeof text);
    assert_string_equal(text, "-3600.000s");
    chaos_preload_clock_format(-7, text, sizeof text);
    assert_string_equal(text, "-0.007s");

    const char *tmp = getenv("TMPDIR");
    char dir[512], path[600], content[32] = {0};
    snprintf(dir, sizeof dir, "%s/test_proc_XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chaos_preload_clock_write(dir, -1500), 0);
    snprintf(path, sizeof path, "%s/faketime.rc", dir);
    FILE *file = fopen(path, "r");
    assert_non_null(file);
    assert_non_null(fgets(content, sizeof content, file));
    fclose(file);
    assert_string_equal(content, "-1.500s\n");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

static const char *env_get(char **env, const char *name)
{
    size_t size = strlen(name);
    const char *found = NULL;
    for (size_t i = 0; env[i] != NULL; i++) {
        if (strncmp(env[i], name, size) == 0 && env[i][size] == '=') {
            assert_null(found); /* never twice */
            found = env[i] + size + 1;
        }
    }
    return found;
}

static void test_preload_env(void **state)
{
    (void)state;
    struct chaos_preload p;
    memset(&p, 0, sizeof p);
    snprintf(p.faketime, sizeof p.faketime, "/lib/ft.so");
    snprintf(p.fiu_run, sizeof p.fiu_run, "/lib/run.so");
    snprintf(p.fiu_posix, sizeof p.fiu_posix, "/lib/posix.so");
    assert_int_equal(setenv("LD_PRELOAD", "/old.so", 1), 0);
    assert_int_equal(setenv("ASAN_OPTIONS", "detect_leaks=0", 1), 0);
    char **env = NULL;
    assert_int_equal(chaos_preload_env(&p, "/d/n1", &env), 0);
    assert_string_equal(env_get(env, "LD_PRELOAD"),
                        "/lib/ft.so:/lib/run.so:/lib/posix.so");
    assert_string_equal(env_get(env, "FAKETIME_TIMESTAMP_FILE"),
                        "/d/n1/faketime.rc");
    assert_string_equal(env_get(env, "FAKETIME_NO_CACHE"), "1");
    assert_string_equal(env_get(env, "FAKETIME_DONT_FAKE_MONOTONIC"), "1");
    assert_string_equal(env_get(env, "FIU_CTRL_FIFO"), "/d/n1/fiu");
    assert_string_equal(env_get(env, "FIU_ENABLE"), "");
    assert_string_equal(env_get(env, "ASAN_OPTIONS"),
                        "detect_leaks=0:verify_asan_link_order=0");
    assert_non_null(env_get(env, "PATH"));
    common_free(env);

    p.fiu_run[0] = p.fiu_posix[0] = '\0'; /* faketime alone */
    assert_int_equal(chaos_preload_env(&p, "/d/n1", &env), 0);
    assert_string_equal(env_get(env, "LD_PRELOAD"), "/lib/ft.so");
    assert_null(env_get(env, "FIU_CTRL_FIFO"));
    assert_non_null(chaos_preload_fiu_missing(&p));
    assert_null(chaos_preload_faketime_missing(&p));
    common_free(env);
    unsetenv("LD_PRELOAD");
    unsetenv("ASAN_OPTIONS");
}

/* ---- leader mode and scenarios (proc-modes) ---- */

static void append(struct chaos_insert *out, int64_t id, int node,
                   enum chaos_sql_outcome outcome, int64_t complete_ms)
{
    *out = (struct chaos_insert){.id = id,
                                 .node = node,
                                 .invoke_ns = (complete_ms - 5) * 1000000,
                                 .complete_ns = complete_ms * 1000000,
                                 .outcome = outcome};
}

static struct chaos_follower_read log_read(const int64_t *log, size_t count,
                                           int64_t invoke_ms)
{
    struct chaos_follower_read read = {.node = 1,
                                       .invoke_ns = invoke_ms * 1000000,
                                       .complete_ns = invoke_ms * 1000000 + 1,
                                       .count = count,
                                       .digest = CHAOS_LOG_DIGEST_INIT};
    for (size_t i = 0; i < count; i++) {
        read.digest = chaos_log_digest(read.digest, log[i]);
    }
    return read;
}

static void test_leader_appends(void **state)
{
    (void)state;
    struct chaos_insert in[6];
    append(&in[0], 1, CHAOS_LEADER_WRITER, CHAOS_SQL_OK, 100);
    append(&in[1], 2, CHAOS_LEADER_WRITER, CHAOS_SQL_OK, 200);
    append(&in[2], 3, CHAOS_LEADER_WRITER, CHAOS_SQL_UNKNOWN, 250);
    append(&in[3], 4, 1, CHAOS_SQL_FAILED, 260); /* refused by a follower */
    append(&in[4], 5, 2, CHAOS_SQL_UNKNOWN, 270);
    struct chaos_workload w = {.inserts = in, .insert_count = 5};
    const int64_t good[] = {1, 2}, with_unknown[] = {1, 3, 2};
    const int64_t lost[] = {1}, refused[] = {1, 2, 4}, alien[] = {1, 2, 9};
    const int64_t twice[] = {1, 2, 2};

    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &no_failover, good, 2);
    assert_true(result.is_passed);
    assert_int_equal(result.follower_writes_refused, 1);
    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &no_failover, with_unknown, 3);
    assert_true(result.is_passed);

    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &no_failover, lost, 1);
    assert_false(result.is_passed);
    assert_int_equal(result.lost, 1);
    assert_int_equal(result.phantoms, 0);

    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &no_failover, refused, 3);
    assert_false(result.is_passed);
    assert_int_equal(result.phantoms, 1);

    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &no_failover, alien, 3);
    assert_false(result.is_passed);
    assert_int_equal(result.phantoms, 1);
    assert_int_equal(result.lost, 0);

    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &no_failover, twice, 3);
    assert_false(result.is_passed);

    /* A follower that takes a write breaks "only the writer commits". */
    append(&in[5], 6, 2, CHAOS_SQL_OK, 280);
    w.insert_count = 6;
    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &no_failover, good, 2);
    assert_false(result.is_passed);
    assert_int_equal(result.follower_writes_acked, 1);
    assert_int_equal(result.lost, 0);
}

static void test_leader_reads(void **state)
{
    (void)state;
    struct chaos_insert in[2];
    append(&in[0], 1, CHAOS_LEADER_WRITER, CHAOS_SQL_OK, 100);
    append(&in[1], 2, CHAOS_LEADER_WRITER, CHAOS_SQL_OK, 200);
    const int64_t writer[] = {1, 2}, other[] = {2, 1}, longer[] = {1, 2, 3};
    struct chaos_follower_read reads[3];
    struct chaos_workload w = {
        .inserts = in, .insert_count = 2, .reads = reads, .read_count = 3};

    reads[0] = log_read(writer, 0, 50);  /* before any ack: fresh */
    reads[1] = log_read(writer, 1, 350); /* lacks 2, acked at 200 */
    reads[2] = log_read(writer, 2, 300); /* everything */
    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &no_failover, writer, 2);
    assert_true(result.is_passed);
    assert_int_equal(result.follower_reads, 3);
    assert_int_equal(result.stale_reads, 1);
    assert_int_equal(result.max_staleness_ms, 150);

    reads[2] = log_read(other, 2, 300); /* same rows, another order */
    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &no_failover, writer, 2);
    assert_false(result.is_passed);
    assert_int_equal(result.reads_not_prefix, 1);

    reads[2] = log_read(longer, 3, 300); /* a row the writer lacks */
    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &no_failover, writer, 2);
    assert_false(result.is_passed);
    assert_int_equal(result.reads_not_prefix, 1);
}

static void append_at(struct chaos_insert *out, int64_t id, int node,
                      enum chaos_sql_outcome outcome, int64_t invoke_ms,
                      int64_t complete_ms)
{
    append(out, id, node, outcome, complete_ms);
    out->invoke_ns = invoke_ms * 1000000;
}

/* One failover at 1000 ms: n2 (1) stopped and promoted at epoch 2, n1 (0)
 * left running until 5000 ms; n2 held 1 and 2 when it was stopped, and
 * first acknowledged at 1500 ms. */
static void failover_history(struct chaos_insert *in, size_t *count)
{
    static int64_t held[] = {1, 2};
    memset(&history, 0, sizeof history);
    history.takeovers[0] =
        (struct chaos_takeover){.from = 0,
                                .to = 1,
                                .epoch = 2,
                                .stop_ns = (int64_t)1000 * 1000000,
                                .from_demoted_ns = (int64_t)5000 * 1000000,
                                .held = held,
                                .held_count = 2,
                                .has_held = true};
    history.takeover_count = 1;
    size_t n = 0;
    append(&in[n++], 1, 0, CHAOS_SQL_OK, 100); /* held: must survive */
    append(&in[n++], 2, 0, CHAOS_SQL_OK, 200); /* held: must survive */
    append(&in[n++], 3, 0, CHAOS_SQL_OK, 900); /* not held: may be fenced */
    append_at(&in[n++], 4, 0, CHAOS_SQL_OK, 1100, 1200); /* deposed, early */
    append_at(&in[n++], 5, 1, CHAOS_SQL_OK, 1400, 1500); /* the new writer */
    append_at(&in[n++], 6, 0, CHAOS_SQL_OK, 2000, 2010); /* deposed, late */
    append(&in[n++], 7, 1, CHAOS_SQL_OK, 2500);          /* the new writer */
    append(&in[n++], 8, 2, CHAOS_SQL_FAILED, 2600);      /* a follower */
    append(&in[n++], 9, 1, CHAOS_SQL_FAILED, 600); /* n2, still following */
    *count = n;
}

static void test_leader_failover(void **state)
{
    (void)state;
    struct chaos_insert in[10];
    size_t count = 0;
    failover_history(in, &count);
    struct chaos_workload w = {.inserts = in, .insert_count = count};
    const int64_t fenced[] = {1, 2, 5, 7}, kept[] = {1, 2, 3, 4, 5, 7};
    const int64_t held_lost[] = {1, 5, 7}, final_lost[] = {1, 2, 5};
    const int64_t breach[] = {1, 2, 5, 6, 7};

    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &history, fenced, 4);
    assert_true(result.is_passed);
    assert_int_equal(result.failovers, 1);
    assert_int_equal(result.fenced_unshipped, 1); /* 3 */
    assert_int_equal(result.fenced_late, 2);      /* 4 and 6 */
    assert_int_equal(result.fence_breaches, 0);
    assert_int_equal(result.follower_writes_refused, 2);

    result_reset("/nonexistent"); /* what the new writer got before */
    chaos_verdict_leader(&result, &w, &history, kept, 6);
    assert_true(result.is_passed);
    assert_int_equal(result.fenced_unshipped, 0);
    assert_int_equal(result.fenced_late, 1); /* 6 only */

    result_reset("/nonexistent"); /* 2 was held at the takeover */
    chaos_verdict_leader(&result, &w, &history, held_lost, 3);
    assert_false(result.is_passed);
    assert_int_equal(result.lost, 1);

    result_reset("/nonexistent"); /* 7: the final writer's own ack */
    chaos_verdict_leader(&result, &w, &history, final_lost, 3);
    assert_false(result.is_passed);
    assert_int_equal(result.lost, 1);

    result_reset("/nonexistent"); /* 6: made after the takeover */
    chaos_verdict_leader(&result, &w, &history, breach, 5);
    assert_false(result.is_passed);
    assert_int_equal(result.fence_breaches, 1);
    assert_int_equal(result.lost, 0);
    assert_int_equal(result.phantoms, 0);

    /* n2 acknowledging while still a follower breaks the gate. */
    in[count - 1].outcome = CHAOS_SQL_OK;
    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &history, fenced, 4);
    assert_false(result.is_passed);
    assert_int_equal(result.follower_writes_acked, 1);
}

/* A read of a node that was later rebuilt may hold fenced rows: not
 * judged; the same read of a node never rebuilt fails. */
static void test_leader_failover_reads(void **state)
{
    (void)state;
    struct chaos_insert in[10];
    size_t count = 0;
    failover_history(in, &count);
    const int64_t final_log[] = {1, 2, 5, 7}, diverged[] = {1, 2, 3, 4};
    struct chaos_follower_read reads[2];
    reads[0] = log_read(diverged, 4, 3000);
    reads[0].node = 2;
    reads[1] = log_read(final_log, 3, 3500);
    reads[1].node = 2;
    struct chaos_workload w = {
        .inserts = in, .insert_count = count, .reads = reads, .read_count = 2};

    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &history, final_log, 4);
    assert_false(result.is_passed);
    assert_int_equal(result.reads_not_prefix, 1);

    history.rebuilds[0] =
        (struct chaos_rebuild){.node = 2, .at_ns = (int64_t)3200 * 1000000};
    history.rebuild_count = 1;
    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &history, final_log, 4);
    assert_true(result.is_passed);
    assert_int_equal(result.reads_unjudged, 1);
    assert_int_equal(result.reads_not_prefix, 0);
    assert_int_equal(result.rebuilt, 1);

    /* After its rebuild it is a follower again: a later epoch's row
     * without the earlier ones is no prefix, and is counted apart. */
    const int64_t gap[] = {1, 5};
    reads[1] = log_read(gap, 2, 3500);
    reads[1].node = 2;
    result_reset("/nonexistent");
    chaos_verdict_leader(&result, &w, &history, final_log, 4);
    assert_false(result.is_passed);
    assert_int_equal(result.reads_not_prefix, 1);
    assert_int_equal(result.reads_not_prefix_rebuilt, 1);
}

static void test_follower_log(void **state)
{
    (void)state;
    const int64_t writer[] = {1, 2, 3}, behind[] = {1, 2};
    const int64_t wrong[] = {1, 5}, longer[] = {1, 2, 3, 4};
    result_reset("/nonexistent");
    assert_int_equal(
        chaos_verdict_follower_log(&result, 1, writer, 3, writer, 3), 0);
    assert_int_equal(
        chaos_verdict_follower_log(&result, 1, writer, 3, behind, 2), 1);
    assert_int_equal(chaos_verdict_follower_log(&result, 1, writer, 3, NULL, 0),
                     1);
    assert_string_equal(result.prefix_note, "");
    assert_int_equal(
        chaos_verdict_follower_log(&result, 2, writer, 3, wrong, 2), -1);
    assert_non_null(strstr(result.prefix_note, "n3's log"));
    assert_non_null(strstr(result.prefix_note, "row 2 is 5"));
    result_reset("/nonexistent");
    assert_int_equal(
        chaos_verdict_follower_log(&result, 1, writer, 3, longer, 4), -1);
    assert_non_null(strstr(result.prefix_note, "n2's log"));
}

static void test_scenario_table(void **state)
{
    (void)state;
    assert_true(chaos_scenario_count >= 2);
    for (size_t i = 0; i < chaos_scenario_count; i++) {
        const struct chaos_scenario *s = &chaos_scenarios[i];
        assert_ptr_equal(chaos_scenario_find(s->name), s);
        assert_non_null(s->judge);
        assert_non_null(s->expectation);
        assert_true(s->fault_count >= 1);
        assert_true(s->fault_count <= CHAOS_SCENARIO_FAULTS_MAX);
        for (size_t f = 0; f < s->fault_count; f++) {
            const struct chaos_scenario_fault *sf = &s->faults[f];
            assert_true(sf->start_ms >= 1000);
            assert_true(sf->start_ms + sf->length_ms <= s->duration_ms);
        }
    }
    assert_null(chaos_scenario_find("no-such-scenario"));
}

/* isolated-old-leader's judge on a hand-made history: n1 is cut off from
 * 1000 to 5000 ms; an ack from n1 in that window fails it, and so does a
 * majority that acknowledges nothing within the bound. */
static void test_isolated_judge(void **state)
{
    (void)state;
    const struct chaos_scenario *s = chaos_scenario_find("isolated-old-leader");
    assert_non_null(s);
    struct check_op ops[2];
    int nodes[2] = {1, 2};
    struct chaos_workload w = {
        .ops = ops, .op_nodes = nodes, .op_count = 2, .pinned_failed = 3};
    struct chaos_scenario_run run = {
        .scenario = s, .workload = &w, .result = &result};
    op(&ops[0], CHECK_WRITE, 5, (int64_t)1500 * 1000000,
       (int64_t)1600 * 1000000);
    op(&ops[1], CHECK_READ, 0, (int64_t)2000 * 1000000,
       (int64_t)2100 * 1000000);

    result_reset("/nonexistent");
    result.faults[0] =
        (struct chaos_fault){.kind = CHAOS_FAULT_ISOLATE,
                             .target = 0,
                             .applied_ns = (int64_t)1000 * 1000000,
                             .healed_ns = (int64_t)5000 * 1000000};
    result.fault_count = 1;
    s->judge(&run); /* the write went to n2: the majority, after 600 ms */
    assert_true(result.is_passed);
    assert_false(result.is_skipped);

    nodes[0] = 0; /* the same write, acknowledged by the isolated n1 */
    result.is_passed = true;
    s->judge(&run);
    assert_false(result.is_passed);

    nodes[0] = 1; /* the majority's first ack 5.6 s after the cut */
    ops[0].invoke_ns = (int64_t)1100 * 1000000;
    ops[0].complete_ns = (int64_t)6600 * 1000000;
    result.is_passed = true;
    s->judge(&run);
    assert_false(result.is_passed);

    result_reset("/nonexistent"); /* no partitions here: not run */
    result.faults[0].is_skipped = true;
    s->judge(&run);
    assert_true(result.is_passed);
    assert_true(result.is_skipped);
    assert_string_equal(chaos_verdict_name(&result), "SKIP");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_schedule_failover),
        cmocka_unit_test(test_crdt_verdict),
        cmocka_unit_test(test_quorum_verdict),
        cmocka_unit_test(test_fault_kinds),
        cmocka_unit_test(test_fault_params),
        cmocka_unit_test(test_ring_cut),
        cmocka_unit_test(test_nfq_args),
        cmocka_unit_test(test_nfq_packets),
        cmocka_unit_test(test_clock_text),
        cmocka_unit_test(test_preload_env),
        cmocka_unit_test(test_leader_appends),
        cmocka_unit_test(test_leader_reads),
        cmocka_unit_test(test_leader_failover),
        cmocka_unit_test(test_leader_failover_reads),
        cmocka_unit_test(test_follower_log),
        cmocka_unit_test(test_scenario_table),
        cmocka_unit_test(test_isolated_judge),
    };
    return cmocka_run_group_tests(tests, common_test_group_setup, NULL);
}
