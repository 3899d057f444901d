/* SPDX-License-Identifier: MIT
 *
 * test_serve.c: `sinew serve` end to end, as a client sees it. Goal: pin
 * the node server's promises (docs/operations.md, docs/http.md) and the
 * fixes of its review: shutdown with a transaction left open on the
 * writing handle and a writer queued behind it; reads that wait for a
 * reading handle without holding a worker thread; a transaction begun as
 * a read that then writes (SQLITE_BUSY before it runs); pipelines without
 * SQL (get_autocommit, close) that need no handle at all.
 *
 * Method: the real binary (argv[1]) runs as child processes in a
 * temporary directory ($TMPDIR or /tmp, removed at the end), each with
 * `--http 127.0.0.1:0`; its "sinew: serving http://ADDR" line on stdout
 * (a pipe) gives the address. Requests go through the project's blocking
 * client (remote.h); Hrana v2 streams keep the baton of each answer.
 * Concurrent requests run on threads, one stream each. Each server's
 * standard error goes to a file that must hold no sanitizer report when
 * it stops, so the same test checks ThreadSanitizer and AddressSanitizer
 * builds of the binary. Time bounds are liveness checks with wide margins
 * (a stall shows as the 5 s wait for a reading handle), not benchmarks.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#define _DEFAULT_SOURCE   /* usleep, mkdtemp */
#include "common_test.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote.h"

#define PATH_SIZE 512
#define SERVERS_MAX 2       /* running at once in one test */
#define READERS 4           /* the node's reading handles (operations.md) */
#define READY_WAIT_MS 60000 /* sanitizer builds start slowly */
#define STOP_WAIT_MS 5000   /* SIGTERM to exit (operations.md) */
#define ANSWER_MAX_MS 3000  /* a request that does not stall */

struct server {
    pid_t pid;     /* 0: not running */
    int stdout_fd; /* the read end of its standard output */
    char name[64]; /* its data dir is DIR/NAME.data, stderr DIR/NAME.err */
    struct remote_url url;
};

/* A Hrana stream: the baton of the last answer ("" before the first and
 * after the server closed the stream) and that answer. */
struct stream {
    struct server *server; /* borrowed */
    const char *token;     /* borrowed bearer token, or NULL */
    char baton[128];
    int status;    /* HTTP status of the last request */
    json_t *reply; /* its parsed body (owned), or NULL */
    int64_t elapsed_ms;
};

/* A stream_post() on a thread. */
struct job {
    pthread_t thread;
    struct stream *stream; /* borrowed */
    json_t *requests;      /* owned until the thread takes it */
    int rc;
    atomic_bool done;
};

static const char *sinew_binary;
static char suite_dir[PATH_SIZE / 2];
static struct server servers[SERVERS_MAX];

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void path_of(char *out, const char *name, const char *suffix)
{
    snprintf(out, PATH_SIZE, "%s/%s%s", suite_dir, name, suffix);
}

/* ------------------------------------------------------------------------
 * Processes
 * ------------------------------------------------------------------------ */

/* The start of the file at path, NUL-terminated, in a static buffer
 * ("" when it cannot be read). */
static const char *file_text(const char *path)
{
    static char text[1 << 20];
    FILE *file = fopen(path, "r");
    size_t size = 0;

    if (file != NULL) {
        size = fread(text, 1, sizeof text - 1, file);
        fclose(file);
    }
    text[size] = '\0';
    return text;
}

static bool file_contains(const char *path, const char *needle)
{
    return strstr(file_text(path), needle) != NULL;
}

/* Prints the server's standard error (its log), to explain a failure. */
static void dump_stderr(const struct server *s)
{
    char path[PATH_SIZE];

    path_of(path, s->name, ".err");
    fprintf(stderr, "---- %s\n%s\n", path, file_text(path));
}

/* Fails the test when the file holds a sanitizer's report. */
static void assert_no_sanitizer_report(const char *path)
{
    const char *text = file_text(path);

    if (strstr(text, "ThreadSanitizer") != NULL ||
        strstr(text, "AddressSanitizer") != NULL ||
        strstr(text, "LeakSanitizer") != NULL ||
        strstr(text, "runtime error") != NULL) {
        fprintf(stderr, "---- %s\n%s\n", path, text);
        fail_msg("sanitizer report in %s", path);
    }
}

/* Runs argv with stdout into out (NUL-terminated); its exit status. */
static int run_capture(char *const *argv, char *out, size_t size)
{
    int fds[2];
    size_t used = 0;
    ssize_t got;
    int status;

    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    while ((got = read(fds[0], out + used, size - 1 - used)) > 0) {
        used += (size_t)got;
    }
    out[used] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void child_exec(int out_fd, const char *err_path, char *const *argv)
{
    int err_fd = open(err_path, O_WRONLY | O_CREAT | O_APPEND, 0600);

    if (err_fd < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) {
        _exit(127);
    }
    close(out_fd);
    close(err_fd);
    execv(argv[0], argv);
    _exit(127);
}

/* Reads the child's stdout until its ready line, and takes its URL. */
static void read_ready_line(struct server *s)
{
    char text[4096];
    size_t used = 0;
    int64_t deadline = now_ms() + READY_WAIT_MS;
    char *line, *end, error[REMOTE_ERROR_SIZE];

    for (;;) {
        struct pollfd pfd = {.fd = s->stdout_fd, .events = POLLIN};
        int left = (int)(deadline - now_ms());
        ssize_t got = -1;

        text[used] = '\0';
        line = strstr(text, "sinew: serving http://");
        if (line != NULL && strchr(line, '\n') != NULL) {
            break;
        }
        if (left > 0 && used < sizeof text - 1 && poll(&pfd, 1, left) == 1) {
            got = read(s->stdout_fd, text + used, sizeof text - 1 - used);
        }
        if (got <= 0) {
            dump_stderr(s);
            fail_msg("%s printed no ready line", s->name);
        }
        used += (size_t)got;
    }
    line = strstr(line, "http://");
    end = strchr(line, ' ');
    assert_non_null(end);
    *end = '\0';
    assert_int_equal(remote_url_parse(line, &s->url, error, sizeof error), 0);
}

/* Starts `sinew serve --data DIR/NAME.data --http 127.0.0.1:0 ARGS...`
 * (args NULL-terminated, borrowed) as server slot, and waits until ready. */
static struct server *server_start(unsigned slot, const char *name,
                                   const char *const *args)
{
    struct server *s = &servers[slot];
    char data[PATH_SIZE], err_path[PATH_SIZE];
    const char *argv[32] = {sinew_binary, "serve",  "--data",
                            data,         "--http", "127.0.0.1:0"};
    size_t argc = 6;
    int fds[2];

    ASSERT(s->pid == 0);
    snprintf(s->name, sizeof s->name, "%s", name);
    path_of(data, name, ".data");
    path_of(err_path, name, ".err");
    for (size_t i = 0; args != NULL && args[i] != NULL; i++) {
        ASSERT(argc < 31);
        argv[argc++] = args[i];
    }
    argv[argc] = NULL;
    assert_int_equal(pipe(fds), 0);
    /* Other servers must not inherit it, or it never sees EOF. */
    assert_int_equal(fcntl(fds[0], F_SETFD, FD_CLOEXEC), 0);
    s->pid = fork();
    assert_true(s->pid >= 0);
    if (s->pid == 0) {
        child_exec(fds[1], err_path, (char *const *)argv);
    }
    close(fds[1]);
    s->stdout_fd = fds[0];
    read_ready_line(s);
    return s;
}

/* Sends sig and waits up to STOP_WAIT_MS; the exit status (128 + signal
 * when killed by one), or -1 when it had to be killed. Checks stderr. */
static int server_stop(struct server *s, int sig)
{
    int64_t deadline = now_ms() + STOP_WAIT_MS;
    char err_path[PATH_SIZE];
    int status = 0;
    int result = -1;

    kill(s->pid, sig);
    while (now_ms() < deadline) {
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            result = WIFEXITED(status) ? WEXITSTATUS(status)
                                       : 128 + WTERMSIG(status);
            break;
        }
        usleep(10 * 1000);
    }
    if (result < 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
    }
    close(s->stdout_fd);
    s->pid = 0;
    path_of(err_path, s->name, ".err");
    assert_no_sanitizer_report(err_path);
    return result;
}

/* Kills what a failed test left running. */
static int teardown(void **state)
{
    (void)state;
    for (unsigned i = 0; i < SERVERS_MAX; i++) {
        if (servers[i].pid != 0) {
            kill(servers[i].pid, SIGKILL);
            waitpid(servers[i].pid, NULL, 0);
            close(servers[i].stdout_fd);
            servers[i].pid = 0;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * HTTP and Hrana
 * ------------------------------------------------------------------------ */

static void http(struct server *s, const char *method, const char *path,
                 const char *token, const char *body,
                 struct remote_http_response *response)
{
    char error[REMOTE_ERROR_SIZE];
    int rc = remote_http_request(&s->url, method, path, token, body,
                                 body != NULL ? strlen(body) : 0, response,
                                 error, sizeof error);

    if (rc != 0) {
        fail_msg("%s %s: %s", method, path, error);
    }
}

static json_t *execute(const char *sql)
{
    return json_pack("{s:s,s:{s:s}}", "type", "execute", "stmt", "sql", sql);
}

static json_t *plain(const char *type)
{
    return json_pack("{s:s}", "type", type);
}

/* [first, ...] up to NULL, stolen. */
static json_t *requests_of(json_t *first, ...)
{
    json_t *array = json_array();
    va_list ap;

    va_start(ap, first);
    for (json_t *r = first; r != NULL; r = va_arg(ap, json_t *)) {
        json_array_append_new(array, r);
    }
    va_end(ap);
    return array;
}

/* POSTs requests (stolen) on the stream; 0, or -1 when no answer came.
 * Safe on a thread: touches only its stream. */
static int stream_post(struct stream *st, json_t *requests)
{
    struct remote_http_response response = {0};
    char error[REMOTE_ERROR_SIZE];
    json_t *body = json_pack("{s:s?,s:o}", "baton",
                             st->baton[0] != '\0' ? st->baton : NULL,
                             "requests", requests);
    char *text = json_dumps(body, JSON_COMPACT);
    int64_t started = now_ms();
    int rc =
        remote_http_request(&st->server->url, "POST", "v2/pipeline", st->token,
                            text, strlen(text), &response, error, sizeof error);

    st->elapsed_ms = now_ms() - started;
    free(text);
    json_decref(body);
    json_decref(st->reply);
    st->reply = NULL;
    if (rc != 0) {
        fprintf(stderr, "pipeline: %s\n", error);
        remote_http_response_release(&response);
        return -1;
    }
    st->status = response.status;
    st->reply = json_loadb(response.body != NULL ? response.body : "",
                           response.body_size, 0, NULL);
    remote_http_response_release(&response);
    if (st->status == 200) {
        const char *baton =
            json_string_value(json_object_get(st->reply, "baton"));
        snprintf(st->baton, sizeof st->baton, "%s", baton ? baton : "");
    }
    return 0;
}

static void stream_release(struct stream *st)
{
    json_decref(st->reply);
    st->reply = NULL;
}

/* Posts and asserts an HTTP 200 answer. */
static void post_ok(struct stream *st, json_t *requests)
{
    assert_int_equal(stream_post(st, requests), 0);
    assert_int_equal(st->status, 200);
}

/* "ok", the error code of result i of the last answer, or "(none)" when
 * there is no such result or it has no code. */
static const char *result_code(const struct stream *st, size_t i)
{
    json_t *result = json_array_get(json_object_get(st->reply, "results"), i);
    const char *type = json_string_value(json_object_get(result, "type"));
    const char *code = json_string_value(
        json_object_get(json_object_get(result, "error"), "code"));

    if (type != NULL && strcmp(type, "ok") == 0) {
        return "ok";
    }
    return code != NULL ? code : "(none)";
}

/* The "code" of the last answer's error body, or "(none)". */
static const char *reply_code(const struct stream *st)
{
    const char *code = json_string_value(json_object_get(st->reply, "code"));

    return code != NULL ? code : "(none)";
}

/* The rows of execute result i, as "a,b;c,d" (NULL as NULL). */
static void result_rows(const struct stream *st, size_t i, char *out,
                        size_t size)
{
    json_t *result = json_array_get(json_object_get(st->reply, "results"), i);
    json_t *rows = json_object_get(
        json_object_get(json_object_get(result, "response"), "result"), "rows");
    size_t used = 0, r, c;
    json_t *row, *value;

    assert_true(json_is_array(rows));
    out[0] = '\0';
    json_array_foreach(rows, r, row)
    {
        json_array_foreach(row, c, value)
        {
            const char *text =
                json_string_value(json_object_get(value, "value"));
            used += (size_t)snprintf(out + used, size - used, "%s%s",
                                     c > 0 ? "," : (r > 0 ? ";" : ""),
                                     text != NULL ? text : "NULL");
            ASSERT(used < size);
        }
    }
}

/* Runs sql alone on a new stream, asserts it succeeds, and renders its
 * rows into out (may be NULL). */
static void sql_ok(struct server *s, const char *sql, char *out, size_t size)
{
    struct stream st = {.server = s};

    post_ok(&st, requests_of(execute(sql), plain("close"), NULL));
    assert_string_equal(result_code(&st, 0), "ok");
    if (out != NULL) {
        result_rows(&st, 0, out, size);
    }
    stream_release(&st);
}

static void *job_main(void *arg)
{
    struct job *job = arg;

    job->rc = stream_post(job->stream, job->requests);
    atomic_store(&job->done, true);
    return NULL;
}

/* Posts requests (stolen) on st from a new thread. */
static void job_start(struct job *job, struct stream *st, json_t *requests)
{
    job->stream = st;
    job->requests = requests;
    job->rc = -1;
    atomic_init(&job->done, false);
    assert_int_equal(pthread_create(&job->thread, NULL, job_main, job), 0);
}

/* Joins the job and asserts an HTTP 200 answer, every result ok, in time. */
static void job_join_ok(struct job *job)
{
    struct stream *st = job->stream;

    assert_int_equal(pthread_join(job->thread, NULL), 0);
    assert_int_equal(job->rc, 0);
    assert_int_equal(st->status, 200);
    assert_true(json_array_size(json_object_get(st->reply, "results")) > 0);
    for (size_t i = 0;
         i < json_array_size(json_object_get(st->reply, "results")); i++) {
        assert_string_equal(result_code(st, i), "ok");
    }
    if (st->elapsed_ms >= ANSWER_MAX_MS) {
        fail_msg("answered after %lld ms", (long long)st->elapsed_ms);
    }
}

/* Opens READERS streams that each hold a read transaction (BEGIN
 * TRANSACTION READONLY; SELECT left open): together they hold every
 * reading handle. */
static void hold_readers(struct server *s, struct stream *held)
{
    for (unsigned i = 0; i < READERS; i++) {
        held[i] = (struct stream){.server = s};
        post_ok(&held[i], requests_of(execute("BEGIN TRANSACTION READONLY"),
                                      execute("SELECT count(*) FROM t"), NULL));
        assert_string_equal(result_code(&held[i], 1), "ok");
        assert_string_not_equal(held[i].baton, "");
    }
}

/* ------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------ */

/* GET endpoint: asserts the status and returns the body (owned). */
static char *get(struct server *s, const char *path, int status)
{
    struct remote_http_response response = {0};
    char *body;

    http(s, "GET", path, NULL, NULL, &response);
    assert_int_equal(response.status, status);
    body = strdup(response.body != NULL ? response.body : "");
    remote_http_response_release(&response);
    return body;
}

/* The "code" (and "message") of a JSON error body, which must have both. */
static void assert_error_body(const char *body, const char *code)
{
    json_t *json = json_loads(body, 0, NULL);

    assert_non_null(json);
    assert_true(json_is_string(json_object_get(json, "message")));
    if (code != NULL) {
        assert_string_equal(json_string_value(json_object_get(json, "code")),
                            code);
    }
    json_decref(json);
}

static void test_serve_endpoints(void **state)
{
    struct server *s = server_start(0, "endpoints", NULL);
    struct remote_http_response response = {0};
    struct stream st = {.server = s};
    char spent[128], *body;
    json_t *json;

    (void)state;
    body = get(s, "health", 200);
    json = json_loads(body, 0, NULL);
    assert_int_equal(json_object_size(json), 1);
    assert_string_equal(json_string_value(json_object_get(json, "status")),
                        "ok");
    json_decref(json);
    free(body);
    body = get(s, "v1/status", 200);
    json = json_loads(body, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(json, "mode")),
                        "single");
    json_decref(json);
    free(body);
    body = get(s, "metrics", 200);
    assert_non_null(strstr(body, "sinew_pipelines_total"));
    free(body);
    free(get(s, "v2", 200));
    body = get(s, "no/such/endpoint", 404);
    assert_error_body(body, NULL);
    free(body);
    body = get(s, "v2/pipeline", 405);
    assert_error_body(body, NULL);
    free(body);

    http(s, "POST", "v2/pipeline", NULL, "{\"requests\":", &response);
    assert_int_equal(response.status, 400);
    assert_error_body(response.body, "HRANA_PROTO_ERROR");
    remote_http_response_release(&response);

    /* A baton is spent once its answer came: reusing it is refused. */
    post_ok(&st, requests_of(execute("SELECT 1"), NULL));
    snprintf(spent, sizeof spent, "%s", st.baton);
    post_ok(&st, requests_of(execute("SELECT 2"), NULL));
    assert_string_not_equal(st.baton, spent);
    struct stream stale = {.server = s};
    snprintf(stale.baton, sizeof stale.baton, "%s", spent);
    assert_int_equal(stream_post(&stale, requests_of(plain("close"), NULL)), 0);
    assert_int_equal(stale.status, 400);
    assert_string_equal(reply_code(&stale), "STREAM_ERROR");
    post_ok(&st, requests_of(plain("close"), NULL));
    assert_string_equal(st.baton, "");
    stream_release(&st);
    stream_release(&stale);
    assert_int_equal(server_stop(s, SIGTERM), 0);
}

static void test_serve_auth_token(void **state)
{
    char token_path[PATH_SIZE];
    const char *args[] = {"--auth-token-file", token_path, NULL};
    FILE *file;

    (void)state;
    path_of(token_path, "auth", ".token");
    file = fopen(token_path, "w");
    assert_non_null(file);
    fputs("s3cret-token\n", file);
    fclose(file);

    struct server *s = server_start(0, "auth", args);
    struct stream none = {.server = s};
    struct stream right = {.server = s, .token = "s3cret-token"};
    struct stream wrong = {.server = s, .token = "s3cret-tokem"};

    free(get(s, "health", 200));
    assert_int_equal(stream_post(&none, requests_of(execute("SELECT 1"), NULL)),
                     0);
    assert_int_equal(none.status, 401);
    assert_string_equal(reply_code(&none), "UNAUTHORIZED");
    post_ok(&right, requests_of(execute("SELECT 1"), plain("close"), NULL));
    assert_string_equal(result_code(&right, 0), "ok");
    assert_int_equal(
        stream_post(&wrong, requests_of(execute("SELECT 1"), NULL)), 0);
    assert_int_equal(wrong.status, 401);
    stream_release(&none);
    stream_release(&right);
    stream_release(&wrong);
    assert_int_equal(server_stop(s, SIGTERM), 0);
}

/* A transaction left open on the writing handle, a writer queued behind
 * it, then SIGTERM: the node exits 0 in time, answers the queued writer,
 * and rolls the open transaction back. */
static void test_serve_shutdown_open_write(void **state)
{
    struct server *s = server_start(0, "shutdown", NULL);
    struct stream open_txn = {.server = s}, queued = {.server = s};
    struct job job;
    char rows[256];
    bool queued_ok;

    (void)state;
    sql_ok(s, "CREATE TABLE t(v INTEGER)", NULL, 0);
    post_ok(&open_txn, requests_of(execute("BEGIN IMMEDIATE"),
                                   execute("INSERT INTO t VALUES (1)"), NULL));
    assert_string_equal(result_code(&open_txn, 1), "ok");
    job_start(
        &job, &queued,
        requests_of(execute("INSERT INTO t VALUES (2)"), plain("close"), NULL));
    usleep(300 * 1000);
    assert_false(atomic_load(&job.done)); /* it waits for the writer */
    assert_int_equal(server_stop(s, SIGTERM), 0);
    assert_int_equal(pthread_join(job.thread, NULL), 0);
    assert_int_equal(job.rc, 0);
    assert_int_equal(queued.status, 200);
    queued_ok = strcmp(result_code(&queued, 0), "ok") == 0;

    s = server_start(0, "shutdown", NULL);
    sql_ok(s, "SELECT v FROM t ORDER BY v", rows, sizeof rows);
    assert_string_equal(rows, queued_ok ? "2" : "");
    stream_release(&open_txn);
    stream_release(&queued);
    assert_int_equal(server_stop(s, SIGTERM), 0);
}

/* Every reading handle held by an open read transaction: new reads wait
 * for a handle without holding a worker, so the COMMITs that free the
 * handles still run, and everything answers at once. */
static void test_serve_reads_do_not_stall(void **state)
{
    struct server *s = server_start(0, "reads", NULL);
    struct stream held[READERS], fresh[READERS];
    struct job reads[READERS], commits[READERS];

    (void)state;
    sql_ok(s, "CREATE TABLE t(v INTEGER)", NULL, 0);
    sql_ok(s, "INSERT INTO t VALUES (1)", NULL, 0);
    hold_readers(s, held);
    for (unsigned i = 0; i < READERS; i++) {
        fresh[i] = (struct stream){.server = s};
        job_start(
            &reads[i], &fresh[i],
            requests_of(execute("SELECT v FROM t"), plain("close"), NULL));
    }
    usleep(200 * 1000); /* let the reads queue */
    for (unsigned i = 0; i < READERS; i++) {
        job_start(&commits[i], &held[i],
                  requests_of(execute("COMMIT"), plain("close"), NULL));
    }
    for (unsigned i = 0; i < READERS; i++) {
        char rows[64];
        job_join_ok(&commits[i]);
        job_join_ok(&reads[i]);
        result_rows(&fresh[i], 0, rows, sizeof rows);
        assert_string_equal(rows, "1");
        stream_release(&held[i]);
        stream_release(&fresh[i]);
    }
    assert_int_equal(server_stop(s, SIGTERM), 0);
}

/* A transaction spans requests as in SQLite: BEGIN, a read, then a write
 * in a later request works; another stream's write waits for it (and gives
 * up with SQLITE_BUSY after 5 s, as a busy timeout would); a READONLY
 * transaction refuses writes and holds no writer up. */
static void test_serve_transaction_across_requests(void **state)
{
    struct server *s = server_start(0, "txn", NULL);
    struct stream x = {.server = s}, y = {.server = s}, z = {.server = s};
    struct stream w = {.server = s};
    struct job queued;
    char rows[64];

    (void)state;
    sql_ok(s, "CREATE TABLE t(v INTEGER)", NULL, 0);
    post_ok(&x, requests_of(execute("BEGIN"), execute("SELECT count(*) FROM t"),
                            NULL));
    assert_string_equal(result_code(&x, 1), "ok");
    post_ok(&x, requests_of(execute("INSERT INTO t VALUES (5)"), NULL));
    assert_string_equal(result_code(&x, 0), "ok");
    job_start(
        &queued, &y,
        requests_of(execute("INSERT INTO t VALUES (6)"), plain("close"), NULL));
    usleep(300 * 1000);
    assert_false(atomic_load(&queued.done)); /* waits for x's transaction */
    post_ok(&x, requests_of(execute("COMMIT"), plain("close"), NULL));
    assert_string_equal(result_code(&x, 0), "ok");
    job_join_ok(&queued);
    sql_ok(s, "SELECT count(*) FROM t", rows, sizeof rows);
    assert_string_equal(rows, "2");

    /* A READONLY transaction: reads on a reading handle, refuses writes,
     * and an autocommit write meanwhile goes through at once. */
    post_ok(&z, requests_of(execute("BEGIN TRANSACTION READONLY"),
                            execute("SELECT count(*) FROM t"), NULL));
    post_ok(&z, requests_of(execute("INSERT INTO t VALUES (7)"), NULL));
    assert_string_equal(result_code(&z, 0), "SQLITE_READONLY");
    sql_ok(s, "INSERT INTO t VALUES (8)", NULL, 0);
    post_ok(&z, requests_of(execute("COMMIT"), plain("close"), NULL));
    assert_string_equal(result_code(&z, 0), "ok");

    /* A writer behind a transaction that does not end gives up. */
    post_ok(&w, requests_of(execute("BEGIN IMMEDIATE"), NULL));
    stream_release(&y);
    y = (struct stream){.server = s};
    post_ok(&y, requests_of(execute("INSERT INTO t VALUES (9)"), plain("close"),
                            NULL));
    assert_string_equal(result_code(&y, 0), "SQLITE_BUSY");
    post_ok(&w, requests_of(execute("COMMIT"), plain("close"), NULL));
    assert_string_equal(result_code(&w, 0), "ok");
    sql_ok(s, "SELECT count(*) FROM t", rows, sizeof rows);
    assert_string_equal(rows, "3");
    stream_release(&x);
    stream_release(&y);
    stream_release(&z);
    stream_release(&w);
    assert_int_equal(server_stop(s, SIGTERM), 0);
}

/* get_autocommit and close need no database handle: they answer at once
 * while every reading handle is held. */
static void test_serve_pipeline_without_sql(void **state)
{
    struct server *s = server_start(0, "nosql", NULL);
    struct stream held[READERS], st = {.server = s};
    json_t *result;

    (void)state;
    sql_ok(s, "CREATE TABLE t(v INTEGER)", NULL, 0);
    hold_readers(s, held);
    post_ok(&st, requests_of(plain("get_autocommit"), plain("close"), NULL));
    assert_true(st.elapsed_ms < ANSWER_MAX_MS);
    assert_string_equal(result_code(&st, 0), "ok");
    assert_string_equal(result_code(&st, 1), "ok");
    result = json_array_get(json_object_get(st.reply, "results"), 0);
    assert_true(json_is_true(
        json_object_get(json_object_get(result, "response"), "is_autocommit")));
    /* A held stream answers too, inside its transaction. */
    post_ok(&held[0], requests_of(plain("get_autocommit"), NULL));
    result = json_array_get(json_object_get(held[0].reply, "results"), 0);
    assert_true(json_is_false(
        json_object_get(json_object_get(result, "response"), "is_autocommit")));
    for (unsigned i = 0; i < READERS; i++) {
        post_ok(&held[i], requests_of(execute("COMMIT"), plain("close"), NULL));
        assert_string_equal(result_code(&held[i], 0), "ok");
        stream_release(&held[i]);
    }
    stream_release(&st);
    assert_int_equal(server_stop(s, SIGTERM), 0);
}

/* Runs `sinew keygen ARGS... --out DIR/NAME` and returns what it printed
 * (the node id) without its newline. */
static void keygen(const char *flag, const char *name, char *path, char *out,
                   size_t size)
{
    char *argv[] = {
        (char *)sinew_binary, "keygen", (char *)flag, "--out", path, NULL};

    path_of(path, name, "");
    if (flag == NULL) {
        argv[2] = "--out";
        argv[3] = path;
        argv[4] = NULL;
    }
    assert_int_equal(run_capture(argv, out, size), 0);
    out[strcspn(out, "\n")] = '\0';
}

/* Polls v1/status until the member reports itself a ready Raft leader. */
static void wait_leader(struct server *s, int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;

    while (now_ms() < deadline) {
        char *body = get(s, "v1/status", 200);
        json_t *json = json_loads(body, 0, NULL);
        json_t *raft = json_object_get(json, "raft");
        const char *role = json_string_value(json_object_get(raft, "state"));
        bool ready = role != NULL && strcmp(role, "leader") == 0 &&
                     json_is_true(json_object_get(raft, "ready"));

        json_decref(json);
        free(body);
        if (ready) {
            return;
        }
        usleep(50 * 1000);
    }
    fail_msg("no ready leader within %d ms", timeout_ms);
}

static void test_serve_quorum_single(void **state)
{
    char secret[PATH_SIZE], printed[256], rows[64];
    const char *args[] = {
        "--mode", "quorum", "--listen", "127.0.0.1:0", "--cluster-secret-file",
        secret,   NULL};
    struct stream st;

    (void)state;
    keygen("--secret", "quorum.secret", secret, printed, sizeof printed);
    struct server *s = server_start(0, "quorum", args);
    wait_leader(s, 20000);
    sql_ok(s, "CREATE TABLE t(v INTEGER)", NULL, 0);
    sql_ok(s, "INSERT INTO t VALUES (1), (2)", NULL, 0);
    sql_ok(s, "SELECT v FROM t ORDER BY v", rows, sizeof rows);
    assert_string_equal(rows, "1;2");
    /* Raft commits whole pipelines: one that leaves BEGIN open is refused
     * whole, and nothing of it takes effect. */
    st = (struct stream){.server = s};
    post_ok(&st, requests_of(execute("BEGIN"),
                             execute("INSERT INTO t VALUES (3)"), NULL));
    assert_int_equal(json_array_size(json_object_get(st.reply, "results")), 2);
    assert_string_equal(result_code(&st, 0), "TRANSACTION_UNSUPPORTED");
    assert_string_equal(result_code(&st, 1), "TRANSACTION_UNSUPPORTED");
    assert_string_equal(st.baton, ""); /* the stream is closed */
    stream_release(&st);
    sql_ok(s, "SELECT v FROM t ORDER BY v", rows, sizeof rows);
    assert_string_equal(rows, "1;2");
    assert_int_equal(server_stop(s, SIGTERM), 0);
    /* Restarted: its tables come with its Raft log, so it serves again. */
    s = server_start(0, "quorum", args);
    wait_leader(s, 20000);
    sql_ok(s, "SELECT v FROM t ORDER BY v", rows, sizeof rows);
    assert_string_equal(rows, "1;2");
    assert_int_equal(server_stop(s, SIGTERM), 0);
}

/* A quorum node whose database holds tables before it has a Raft log (an
 * imported file) refuses to start: members joining it would replay a log
 * without those rows, and the replicas would differ. */
static void test_serve_quorum_refuses_unlogged_tables(void **state)
{
    char secret[PATH_SIZE], data[PATH_SIZE], db[PATH_SIZE + 16], out[256];
    char *shell[] = {(char *)sinew_binary,
                     "shell",
                     "-c",
                     "CREATE TABLE t(v); INSERT INTO t VALUES (1)",
                     db,
                     NULL};
    char *serve[] = {(char *)sinew_binary,
                     "serve",
                     "--mode",
                     "quorum",
                     "--data",
                     data,
                     "--http",
                     "127.0.0.1:0",
                     "--listen",
                     "127.0.0.1:0",
                     "--cluster-secret-file",
                     secret,
                     NULL};

    (void)state;
    keygen("--secret", "unlogged.secret", secret, out, sizeof out);
    path_of(data, "unlogged", ".data");
    assert_int_equal(mkdir(data, 0700), 0);
    snprintf(db, sizeof db, "%s/main.sinew", data);
    assert_int_equal(run_capture(shell, out, sizeof out), 0);
    assert_int_equal(run_capture(serve, out, sizeof out), 1);
    assert_null(strstr(out, "serving"));
}

/* SIGHUP reopens --log-file, as logrotate needs after it renamed it. */
static void test_serve_sighup_reopens_log(void **state)
{
    char log[PATH_SIZE], rotated[PATH_SIZE];
    const char *args[] = {"--log-file", log, "--log-level", "debug", NULL};
    int64_t deadline;

    (void)state;
    path_of(log, "sighup", ".log");
    path_of(rotated, "sighup", ".log.1");
    struct server *s = server_start(0, "sighup", args);
    assert_true(file_contains(log, "started"));
    assert_int_equal(rename(log, rotated), 0);
    assert_int_equal(kill(s->pid, SIGHUP), 0);
    deadline = now_ms() + ANSWER_MAX_MS;
    while (!file_contains(log, "log reopened") && now_ms() < deadline) {
        usleep(20 * 1000);
    }
    sql_ok(s, "SELECT 1", NULL, 0);
    assert_true(file_contains(log, "log reopened"));
    assert_false(file_contains(rotated, "log reopened"));
    assert_int_equal(server_stop(s, SIGTERM), 0);
    assert_true(file_contains(log, "stopped"));
}

/* A port nobody listens on now (bound to port 0, then released). */
static int free_port(void)
{
    struct sockaddr_in addr = {.sin_family = AF_INET};
    socklen_t size = sizeof addr;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int port = -1;

    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
        getsockname(fd, (struct sockaddr *)&addr, &size) == 0) {
        port = ntohs(addr.sin_port);
    }
    if (fd >= 0) {
        close(fd);
    }
    return port;
}

/* Polls sql on s until its rows are want, up to timeout_ms. */
static void wait_rows(struct server *s, const char *sql, const char *want,
                      int timeout_ms)
{
    int64_t deadline = now_ms() + timeout_ms;
    char rows[256] = "";

    while (now_ms() < deadline) {
        struct stream st = {.server = s};

        post_ok(&st, requests_of(execute(sql), plain("close"), NULL));
        if (strcmp(result_code(&st, 0), "ok") == 0) {
            result_rows(&st, 0, rows, sizeof rows);
        }
        stream_release(&st);
        if (strcmp(rows, want) == 0) {
            return;
        }
        usleep(50 * 1000);
    }
    fail_msg("%s on %s: '%s', not '%s' after %d ms", sql, s->name, rows, want,
             timeout_ms);
}

static void test_serve_crdt_pair_converges(void **state)
{
    char secret[PATH_SIZE], key[2][PATH_SIZE], id[2][128], printed[256];
    char listen[2][64], peer[2][400];
    const char *args[2][12];
    struct server *node[2];

    (void)state;
    keygen("--secret", "crdt.secret", secret, printed, sizeof printed);
    keygen(NULL, "crdt-a.key", key[0], id[0], sizeof id[0]);
    keygen(NULL, "crdt-b.key", key[1], id[1], sizeof id[1]);
    assert_int_equal(strlen(id[0]), 64);
    int ports[2] = {free_port(), free_port()};
    for (unsigned i = 0; i < 2; i++) {
        snprintf(listen[i], sizeof listen[i], "127.0.0.1:%d", ports[i]);
        snprintf(peer[i], sizeof peer[i], "%s@127.0.0.1:%d", id[1 - i],
                 ports[1 - i]);
        const char *a[] = {
            "--mode", "crdt",     "--key",   key[i],   "--cluster-secret-file",
            secret,   "--listen", listen[i], "--peer", peer[i],
            NULL};
        memcpy(args[i], a, sizeof a);
    }
    node[0] = server_start(0, "crdt-a", args[0]);
    node[1] = server_start(1, "crdt-b", args[1]);
    sql_ok(node[0], "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)",
           NULL, 0);
    sql_ok(node[0], "INSERT INTO notes VALUES (1, 'from a')", NULL, 0);
    wait_rows(node[1], "SELECT id, body FROM notes ORDER BY id", "1,from a",
              10000);
    sql_ok(node[1], "INSERT INTO notes VALUES (2, 'from b')", NULL, 0);
    wait_rows(node[0], "SELECT id, body FROM notes ORDER BY id",
              "1,from a;2,from b", 10000);
    assert_int_equal(server_stop(node[0], SIGTERM), 0);
    assert_int_equal(server_stop(node[1], SIGTERM), 0);
}

/* ------------------------------------------------------------------------
 * The suite
 * ------------------------------------------------------------------------ */

static int remove_entry(const char *path, const struct stat *st, int flag,
                        struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int group_setup(void **state)
{
    const char *tmp = getenv("TMPDIR");

    (void)state;
    signal(SIGPIPE, SIG_IGN);
    snprintf(suite_dir, sizeof suite_dir, "%s/sinew-serve-test-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    return mkdtemp(suite_dir) != NULL ? 0 : -1;
}

static int group_teardown(void **state)
{
    teardown(state);
    return nftw(suite_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_serve_endpoints, teardown),
        cmocka_unit_test_teardown(test_serve_auth_token, teardown),
        cmocka_unit_test_teardown(test_serve_shutdown_open_write, teardown),
        cmocka_unit_test_teardown(test_serve_reads_do_not_stall, teardown),
        cmocka_unit_test_teardown(test_serve_transaction_across_requests,
                                  teardown),
        cmocka_unit_test_teardown(test_serve_pipeline_without_sql, teardown),
        cmocka_unit_test_teardown(test_serve_quorum_single, teardown),
        cmocka_unit_test_teardown(test_serve_quorum_refuses_unlogged_tables,
                                  teardown),
        cmocka_unit_test_teardown(test_serve_sighup_reopens_log, teardown),
        cmocka_unit_test_teardown(test_serve_crdt_pair_converges, teardown),
    };

    if (argc != 2) {
        fprintf(stderr, "usage: %s PATH_TO_SINEW\n", argv[0]);
        return 2;
    }
    sinew_binary = argv[1];
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
