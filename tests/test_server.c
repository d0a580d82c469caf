/*
 * test_server.c: `keel serve` over the wire, as clients see it: libpq for
 * what a well-behaved client does (startup parameters, transaction status,
 * cancels, too many connections, the extended protocol refused), raw
 * sockets for what a broken or hostile one does (malformed, oversized,
 * truncated and unknown messages, SSL and GSS requests, wrong cancel
 * keys, a client gone mid-transaction).  After each of those the server
 * must be up and every other connection unaffected; at the end SIGTERM
 * must bring it down cleanly, leaving a database `keel check` passes.
 *
 * The server runs as a child process: argv[1] is the keel command.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "rawpq.h"
#include "testutil.h"

static const char *keel_cmd;

/* A running server: its directory, port and process. */
typedef struct srv {
    char *dir; /* holds db/, the socket and server.log */
    char db[512];
    char log[512];
    int port;
    pid_t pid;
} srv;

/* ---- the server as a child process ---------------------------------- */

static int run_keel(const char *const *args, const char *out_path)
{
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0) {
        const char *argv[16];
        int n = 0;
        int fd = open(out_path ? out_path : "/dev/null",
                      O_WRONLY | O_CREAT | O_TRUNC, 0644);

        argv[n++] = keel_cmd;
        while (*args != NULL && n < 15)
            argv[n++] = *args++;
        argv[n] = NULL;
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        execv(keel_cmd, (char *const *)argv);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *conninfo(const srv *s, bool tcp, const char *extra)
{
    static char buf[4][1024];
    static int next;
    char *b = buf[next++ % 4];

    snprintf(b, sizeof(buf[0]),
             "host=%s port=%d user=keel dbname=keel connect_timeout=10 "
             "sslmode=disable gssencmode=disable %s",
             tcp ? "127.0.0.1" : s->dir, s->port, extra ? extra : "");
    return b;
}

static bool file_has(const char *path, const char *what)
{
    char buf[65536];
    FILE *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return false;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, what) != NULL;
}

/* Starts keel serve on s->db (made by keel init) at a free port. */
static void srv_start(srv *s, const char *max_connections)
{
    static int attempt;

    for (int tries = 0; tries < 30; tries++) {
        char port[16];
        int status;

        s->port = 20000 + (int)((getpid() * 13 + ++attempt * 1009) % 40000);
        snprintf(port, sizeof(port), "%d", s->port);
        unlink(s->log); /* the last server's "ready" must not count */
        s->pid = fork();
        assert_true(s->pid >= 0);
        if (s->pid == 0) {
            int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            execl(keel_cmd, keel_cmd, "serve", s->db, "--port", port,
                  "--socket-dir", s->dir, "--max-connections", max_connections,
                  (char *)NULL);
            _exit(127);
        }
        for (int i = 0; i < 600; i++) {
            if (file_has(s->log, "ready to accept connections"))
                return;
            if (waitpid(s->pid, &status, WNOHANG) == s->pid)
                break;
            usleep(50000);
        }
        if (!file_has(s->log, "could not listen") &&
            !file_has(s->log, "another server"))
            fail_msg("keel serve did not start (see %s)", s->log);
    }
    fail_msg("no free port found");
}

/* SIGTERM, and the exit status. */
static int srv_stop(srv *s)
{
    int status;

    kill(s->pid, SIGTERM);
    while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
        ;
    s->pid = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int group_setup(void **state)
{
    srv *s = calloc(1, sizeof(*s));
    const char *init[] = {"init", NULL, NULL};

    s->dir = tu_mkdtemp();
    snprintf(s->db, sizeof(s->db), "%s/db", s->dir);
    snprintf(s->log, sizeof(s->log), "%s/server.log", s->dir);
    init[1] = s->db;
    if (run_keel(init, NULL) != 0)
        return -1;
    srv_start(s, "4");
    *state = s;
    return 0;
}

/* Before each test: the server must still be running; if it is not, the
 * test fails at once with the end of its log, rather than waiting on a
 * server that is gone. */
static int srv_alive(void **state)
{
    srv *s = *state;
    int status;

    if (s->pid > 0 && waitpid(s->pid, &status, WNOHANG) == 0)
        return 0;
    s->pid = 0;
    fprintf(stderr, "keel serve is not running; its log (%s):\n", s->log);
    {
        char cmd[600];

        snprintf(cmd, sizeof(cmd), "tail -n 40 '%s' >&2", s->log);
        if (system(cmd) != 0)
            fprintf(stderr, "(no log)\n");
    }
    return -1;
}

static int group_teardown(void **state)
{
    srv *s = *state;

    if (s->pid > 0)
        srv_stop(s);
    tu_dir_remove(s->dir);
    free(s);
    return 0;
}

/* ---- libpq helpers ---------------------------------------------------- */

/* Connects, waiting up to 10 s for a place among max_connections: the
 * server may not have seen an earlier test's clients go yet. */
static PGconn *connect_ok(const srv *s, bool tcp)
{
    for (int tries = 0;; tries++) {
        PGconn *c = PQconnectdb(conninfo(s, tcp, NULL));

        if (PQstatus(c) == CONNECTION_OK)
            return c;
        if (strstr(PQerrorMessage(c), "too many clients") == NULL ||
            tries == 500)
            fail_msg("connect: %s", PQerrorMessage(c));
        PQfinish(c);
        usleep(20000);
    }
}

/* Runs sql; returns its SQLSTATE ("" on success), the result freed. */
static const char *exec_state(PGconn *c, const char *sql)
{
    static char state[8];
    PGresult *r = PQexec(c, sql);
    const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);

    snprintf(state, sizeof(state), "%s", st ? st : "");
    if (st == NULL && PQresultStatus(r) == PGRES_FATAL_ERROR)
        snprintf(state, sizeof(state), "?");
    PQclear(r);
    return state;
}

static void assert_select_1(PGconn *c)
{
    PGresult *r = PQexec(c, "SELECT 1");

    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("SELECT 1: %s", PQerrorMessage(c));
    assert_int_equal(PQntuples(r), 1);
    assert_string_equal(PQgetvalue(r, 0, 0), "1");
    PQclear(r);
}

/* ---- raw sockets ------------------------------------------------------ */

static int raw_connect(const srv *s)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/.s.PGSQL.%d", s->dir,
             s->port);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

/* Reads messages until an ErrorResponse and checks its SQLSTATE and, if
 * given, a piece of its message. */
static void expect_error(int fd, const char *sqlstate, const char *msg)
{
    char body[4096];
    uint32_t len;
    char t;

    while ((t = raw_message(fd, body, sizeof(body) - 1, &len)) != 0) {
        if (t == 'E') {
            body[len < sizeof(body) - 1 ? len : sizeof(body) - 1] = '\0';
            assert_string_equal(raw_error_field(body, len, 'C'), sqlstate);
            if (msg != NULL && strstr(raw_error_field(body, len, 'M'), msg) == NULL)
                fail_msg("error \"%s\" lacks \"%s\"",
                         raw_error_field(body, len, 'M'), msg);
            return;
        }
    }
    fail_msg("no ErrorResponse %s came", sqlstate);
}

/* True if the server closes the connection (EOF) within 10 s, whatever
 * it sends before. */
static bool expect_eof(int fd)
{
    char body[4096];
    uint32_t len;

    while (raw_message(fd, body, sizeof(body), &len) != 0)
        ;
    return true;
}

/* A StartupMessage for user keel, database keel, after extra bytes of
 * parameters (name\0value\0 ...); returns its length. */
static size_t startup_packet(char *buf, uint32_t version, const char *extra,
                             size_t extra_len)
{
    static const char params[] = "user\0keel\0database\0keel\0";
    size_t n = 8;

    memcpy(buf + n, params, sizeof(params) - 1);
    n += sizeof(params) - 1;
    memcpy(buf + n, extra, extra_len);
    n += extra_len;
    buf[n++] = '\0';
    raw_put32(buf, (uint32_t)n);
    raw_put32(buf + 4, version);
    return n;
}

/* Connects and completes the startup; reads up to ReadyForQuery.  Sets
 * *pid and *key from BackendKeyData if they are not NULL.  Waits, as
 * connect_ok() does, for a place among max_connections. */
static int raw_startup(const srv *s, uint32_t *pid, uint32_t *key)
{
    for (int tries = 0;; tries++) {
        char pkt[256], body[1024];
        int fd = raw_connect(s);
        size_t n = startup_packet(pkt, 3u << 16, "", 0);
        uint32_t len;
        char t;

        raw_send(fd, pkt, n);
        while ((t = raw_message(fd, body, sizeof(body) - 1, &len)) != 'Z' &&
               t != 'E' && t != 0) {
            if (t == 'K' && pid != NULL) {
                *pid = raw_get32(body);
                *key = raw_get32(body + 4);
            }
        }
        if (t == 'Z')
            return fd;
        close(fd);
        body[len < sizeof(body) - 1 ? len : sizeof(body) - 1] = '\0';
        if (t == 0 || strcmp(raw_error_field(body, len, 'C'), "53300") != 0 ||
            tries == 500)
            fail_msg("startup failed (message '%c')", t ? t : '0');
        usleep(20000);
    }
}

static void raw_query(int fd, const char *sql)
{
    char buf[1024];
    size_t n = strlen(sql) + 1;

    buf[0] = 'Q';
    raw_put32(buf + 1, (uint32_t)(n + 4));
    memcpy(buf + 5, sql, n);
    raw_send(fd, buf, n + 5);
}

/* Reads up to ReadyForQuery; returns its status byte (0 at EOF). */
static char raw_ready(int fd)
{
    char body[4096];
    uint32_t len;
    char t;

    while ((t = raw_message(fd, body, sizeof(body), &len)) != 0)
        if (t == 'Z')
            return body[0];
    return 0;
}

/* Appends a message of type t with body[0..n) to buf at *len. */
static void msg_add(char *buf, size_t *len, char t, const void *body, size_t n)
{
    buf[*len] = t;
    raw_put32(buf + *len + 1, (uint32_t)(n + 4));
    memcpy(buf + *len + 5, body, n);
    *len += n + 5;
}

/* Reads messages and checks that their types are exactly types (an
 * ErrorResponse's SQLSTATE checked against sqlstate if not NULL). */
static void expect_types(int fd, const char *types, const char *sqlstate)
{
    for (const char *t = types; *t != '\0'; t++) {
        char body[4096];
        uint32_t len;
        char got = raw_message(fd, body, sizeof(body) - 1, &len);

        if (got != *t)
            fail_msg("expected message '%c' (of \"%s\"), got '%c'", *t, types,
                     got ? got : '0');
        if (got == 'E' && sqlstate != NULL) {
            body[len < sizeof(body) - 1 ? len : sizeof(body) - 1] = '\0';
            assert_string_equal(raw_error_field(body, len, 'C'), sqlstate);
        }
    }
}

/* ---- tests ------------------------------------------------------------ */

static void test_startup_parameters(void **state)
{
    srv *s = *state;

    for (int tcp = 0; tcp < 2; tcp++) {
        PGconn *c = connect_ok(s, tcp);
        const char *v = PQparameterStatus(c, "server_version");

        assert_non_null(v);
        assert_true(strncmp(v, "15", 2) == 0);
        assert_string_equal(PQparameterStatus(c, "server_encoding"), "UTF8");
        assert_string_equal(PQparameterStatus(c, "client_encoding"), "UTF8");
        assert_string_equal(PQparameterStatus(c, "integer_datetimes"), "on");
        assert_string_equal(PQparameterStatus(c, "standard_conforming_strings"),
                            "on");
        assert_int_equal(PQprotocolVersion(c), 3);
        assert_true(PQbackendPID(c) > 0);
        assert_int_equal(PQtransactionStatus(c), PQTRANS_IDLE);
        assert_select_1(c);
        /* A reported parameter that changes is reported again. */
        assert_string_equal(exec_state(c, "SET application_name = 'x1'"), "");
        assert_string_equal(PQparameterStatus(c, "application_name"), "x1");
        assert_string_equal(exec_state(c, "RESET application_name"), "");
        assert_string_equal(PQparameterStatus(c, "application_name"), "");
        /* ... and so is one an abort or a transaction's end set back. */
        assert_string_equal(exec_state(c, "BEGIN"), "");
        assert_string_equal(exec_state(c, "SET application_name = 'x2'"), "");
        assert_string_equal(PQparameterStatus(c, "application_name"), "x2");
        assert_string_equal(exec_state(c, "ROLLBACK"), "");
        assert_string_equal(PQparameterStatus(c, "application_name"), "");
        assert_string_equal(exec_state(c, "BEGIN"), "");
        assert_string_equal(exec_state(c, "SAVEPOINT a"), "");
        assert_string_equal(
            exec_state(c, "SET LOCAL application_name = 'x3'"), "");
        assert_string_equal(PQparameterStatus(c, "application_name"), "x3");
        assert_string_equal(exec_state(c, "RELEASE a"), "");
        assert_string_equal(exec_state(c, "COMMIT"), "");
        assert_string_equal(PQparameterStatus(c, "application_name"), "");
        /* ... and one set_config() changed, in any statement, as the
         * zone a TimeZone setting names is, by the name its file has */
        assert_string_equal(
            exec_state(c, "SELECT set_config('application_name', 'x4', "
                          "false)"),
            "");
        assert_string_equal(PQparameterStatus(c, "application_name"), "x4");
        {
            char zone[64]; /* what the connection started with */
            snprintf(zone, sizeof(zone), "%s",
                     PQparameterStatus(c, "TimeZone"));
            assert_string_equal(
                exec_state(c, "SET TimeZone = 'europe/paris'"), "");
            assert_string_equal(PQparameterStatus(c, "TimeZone"),
                                "Europe/Paris");
            assert_string_equal(exec_state(c, "RESET ALL"), "");
            assert_string_equal(PQparameterStatus(c, "application_name"), "");
            assert_string_equal(PQparameterStatus(c, "TimeZone"), zone);
        }
        PQfinish(c);
    }
    /* Settings in the startup packet's options, as PGOPTIONS sends them;
     * a word that is not one fails the connection. */
    {
        PGconn *c = PQconnectdb(conninfo(
            s, false,
            "options='-c parse_cache_entries=0 --lock-timeout=5s "
            "-capplication_name=a\\\\ b'"));
        PGresult *r;

        assert_int_equal(PQstatus(c), CONNECTION_OK);
        r = PQexec(c, "SHOW parse_cache_entries");
        assert_string_equal(PQgetvalue(r, 0, 0), "0");
        PQclear(r);
        r = PQexec(c, "SHOW lock_timeout");
        assert_string_equal(PQgetvalue(r, 0, 0), "5s");
        PQclear(r);
        assert_string_equal(PQparameterStatus(c, "application_name"), "a b");
        PQfinish(c);
        c = PQconnectdb(conninfo(s, false, "options='-x'"));
        assert_int_equal(PQstatus(c), CONNECTION_BAD);
        assert_non_null(strstr(PQerrorMessage(c),
                               "invalid command-line argument for server "
                               "process: -x"));
        PQfinish(c);
    }
    /* sslmode=prefer over TCP: SSLRequest refused, then a plain start. */
    {
        PGconn *c = PQconnectdb(conninfo(s, true, "sslmode=prefer"));

        assert_int_equal(PQstatus(c), CONNECTION_OK);
        assert_null(PQsslAttribute(c, "protocol"));
        assert_select_1(c);
        PQfinish(c);
    }
}

/* keel_stat_catcache: a row per session, another's figures as of its
 * last statement, the caller's own as of now. */
static void test_stat_catcache(void **state)
{
    srv *s = *state;
    PGconn *a = connect_ok(s, false), *b = connect_ok(s, false);
    char sql[256];
    PGresult *r;
    long hits_before;

    assert_string_equal(exec_state(a, "CREATE TABLE server_stat (x int4 PRIMARY KEY)"),
                        "");
    assert_string_equal(exec_state(a, "SELECT * FROM server_stat"), "");
    snprintf(sql, sizeof(sql),
             "SELECT entries, negative_entries, bytes, hits, misses, "
             "pruned_by_age + pruned_by_size FROM keel_stat_catcache "
             "WHERE pid = %d",
             PQbackendPID(a));
    r = PQexec(b, sql);
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    assert_int_equal(PQntuples(r), 1);
    assert_true(atol(PQgetvalue(r, 0, 0)) > 0);
    assert_true(atol(PQgetvalue(r, 0, 2)) > 0);
    assert_true(atol(PQgetvalue(r, 0, 4)) > 0);
    assert_string_equal(PQgetvalue(r, 0, 5), "0");
    hits_before = atol(PQgetvalue(r, 0, 3));
    PQclear(r);
    /* More lookups by a: more hits, seen by b once a published again
     * (every 16th statement). */
    for (int i = 0; i < 16; i++)
        assert_string_equal(exec_state(a, "SELECT * FROM server_stat WHERE x = 1"),
                            "");
    r = PQexec(b, sql);
    assert_int_equal(PQntuples(r), 1);
    assert_true(atol(PQgetvalue(r, 0, 3)) > hits_before);
    PQclear(r);
    /* Both sessions are there; b's own row too. */
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM keel_stat_catcache WHERE pid IN (%d, %d)",
             PQbackendPID(a), PQbackendPID(b));
    r = PQexec(b, sql);
    assert_string_equal(PQgetvalue(r, 0, 0), "2");
    PQclear(r);
    assert_string_equal(exec_state(a, "DROP TABLE server_stat"), "");
    PQfinish(a);
    /* A session that ended is gone from the view. */
    for (int tries = 0;; tries++) {
        r = PQexec(b, sql);
        if (strcmp(PQgetvalue(r, 0, 0), "1") == 0 || tries == 500)
            break;
        PQclear(r);
        usleep(10000);
    }
    assert_string_equal(PQgetvalue(r, 0, 0), "1");
    PQclear(r);
    PQfinish(b);
}

static void test_transaction_status(void **state)
{
    srv *s = *state;
    PGconn *c = connect_ok(s, false);

    assert_int_equal(PQtransactionStatus(c), PQTRANS_IDLE);
    assert_string_equal(exec_state(c, "BEGIN"), "");
    assert_int_equal(PQtransactionStatus(c), PQTRANS_INTRANS);
    assert_string_equal(exec_state(c, "SELECT 1"), "");
    assert_int_equal(PQtransactionStatus(c), PQTRANS_INTRANS);
    assert_string_equal(exec_state(c, "SELEC 1"), "42601");
    assert_int_equal(PQtransactionStatus(c), PQTRANS_INERROR);
    assert_string_equal(exec_state(c, "SELECT 1"), "25P02");
    assert_int_equal(PQtransactionStatus(c), PQTRANS_INERROR);
    assert_string_equal(exec_state(c, "ROLLBACK"), "");
    assert_int_equal(PQtransactionStatus(c), PQTRANS_IDLE);
    /* Several statements in one Query, and an empty one. */
    {
        PGresult *r = PQexec(c, "SELECT 1; SELECT 2");

        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        assert_string_equal(PQgetvalue(r, 0, 0), "2");
        PQclear(r);
        r = PQexec(c, "");
        assert_int_equal(PQresultStatus(r), PGRES_EMPTY_QUERY);
        PQclear(r);
    }
    assert_select_1(c);
    PQfinish(c);
}

/* Two connections: one holds ACCESS EXCLUSIVE, the other's SELECT waits
 * for its lock_timeout and fails with 55P03 (its block then fails), and
 * its NOWAIT fails at once; after the holder commits both go on. */
static void test_lock_timeout(void **state)
{
    srv *s = *state;
    PGconn *a = connect_ok(s, false), *b = connect_ok(s, true);
    struct timespec t0, t1;
    PGresult *r;
    double ms;

    assert_string_equal(
        exec_state(a, "CREATE TABLE lockt (id int PRIMARY KEY, v int)"), "");
    assert_string_equal(exec_state(a, "INSERT INTO lockt VALUES (1, 10)"), "");
    assert_string_equal(exec_state(a, "BEGIN"), "");
    assert_string_equal(exec_state(a, "LOCK TABLE lockt"), "");
    assert_string_equal(exec_state(b, "SET lock_timeout = '150ms'"), "");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    r = PQexec(b, "SELECT v FROM lockt WHERE id = 1");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
         (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "55P03");
    assert_non_null(strstr(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY),
                           "lockt"));
    PQclear(r);
    assert_true(ms >= 140);
    assert_string_equal(exec_state(b, "BEGIN"), "");
    assert_string_equal(exec_state(b, "LOCK lockt IN ACCESS SHARE MODE NOWAIT"),
                        "55P03");
    assert_int_equal(PQtransactionStatus(b), PQTRANS_INERROR);
    assert_string_equal(exec_state(b, "ROLLBACK"), "");
    assert_string_equal(exec_state(a, "COMMIT"), "");
    r = PQexec(b, "SELECT v FROM lockt WHERE id = 1");
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(r, 0, 0), "10");
    PQclear(r);
    assert_string_equal(exec_state(a, "DROP TABLE lockt"), "");
    PQfinish(a);
    PQfinish(b);
}

static void notice_receiver(void *arg, const PGresult *r)
{
    int *count = arg;
    const char *sev = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
    const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

    assert_non_null(sev);
    assert_true(strcmp(sev, "NOTICE") == 0 || strcmp(sev, "WARNING") == 0);
    assert_non_null(state);
    assert_int_equal(strlen(state), 5);
    assert_non_null(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY));
    (*count)++;
}

/* What RowDescription, DataRow and CommandComplete carry, as libpq reads
 * them: names, type oids and sizes, NULLs, values, command tags. */
static void test_results(void **state)
{
    srv *s = *state;
    PGconn *c = connect_ok(s, true);
    PGresult *r;
    int notices = 0;

    if (strcmp(exec_state(c, "CREATE TABLE server_r (id int4 PRIMARY KEY, "
                             "name text, n int8, ok bool)"),
               "") != 0) {
        print_message("no tables yet\n");
        PQfinish(c);
        return;
    }
    r = PQexec(c, "INSERT INTO server_r VALUES (1, 'one', 10, true), "
                  "(2, NULL, NULL, NULL), (3, '', -3, false)");
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    assert_string_equal(PQcmdStatus(r), "INSERT 0 3");
    assert_string_equal(PQcmdTuples(r), "3");
    PQclear(r);
    r = PQexec(c, "SELECT id, name, n, ok FROM server_r ORDER BY id");
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    assert_string_equal(PQcmdStatus(r), "SELECT 3");
    assert_int_equal(PQnfields(r), 4);
    assert_int_equal(PQntuples(r), 3);
    assert_string_equal(PQfname(r, 0), "id");
    assert_string_equal(PQfname(r, 3), "ok");
    assert_int_equal(PQftype(r, 0), 23);
    assert_int_equal(PQftype(r, 1), 25);
    assert_int_equal(PQftype(r, 2), 20);
    assert_int_equal(PQftype(r, 3), 16);
    assert_int_equal(PQfsize(r, 0), 4);
    assert_int_equal(PQfsize(r, 1), -1);
    assert_int_equal(PQfformat(r, 0), 0);
    assert_string_equal(PQgetvalue(r, 0, 1), "one");
    assert_string_equal(PQgetvalue(r, 0, 3), "t");
    for (int col = 1; col < 4; col++)
        assert_true(PQgetisnull(r, 1, col));
    assert_false(PQgetisnull(r, 2, 1));
    assert_int_equal(PQgetlength(r, 2, 1), 0);
    assert_string_equal(PQgetvalue(r, 2, 2), "-3");
    PQclear(r);
    r = PQexec(c, "UPDATE server_r SET n = 5 WHERE id >= 2");
    assert_string_equal(PQcmdStatus(r), "UPDATE 2");
    PQclear(r);
    r = PQexec(c, "DELETE FROM server_r WHERE id = 1");
    assert_string_equal(PQcmdStatus(r), "DELETE 1");
    PQclear(r);
    r = PQexec(c, "INSERT INTO server_r VALUES (2, 'x', 0, true)");
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "23505");
    assert_non_null(PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL));
    PQclear(r);
    r = PQexec(c, "SELECT nosuch FROM server_r");
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42703");
    assert_string_equal(PQresultErrorField(r, PG_DIAG_STATEMENT_POSITION), "8");
    PQclear(r);
    /* Notices, if a statement gives one (VACUUM does in keel). */
    PQsetNoticeReceiver(c, notice_receiver, &notices);
    r = PQexec(c, "VACUUM server_r");
    PQclear(r);
    if (notices == 0)
        print_message("no statement gave a notice\n");
    assert_string_equal(exec_state(c, "DROP TABLE server_r"), "");
    PQfinish(c);
}

/* A Query larger than the input buffer, whose row is larger than the
 * output buffer: both grow for it, and shrink back after. */
static void test_large_messages(void **state)
{
    srv *s = *state;
    PGconn *c = connect_ok(s, false);
    size_t n = 5u << 20;
    char *sql = malloc(n + 32);
    PGresult *r;

    memcpy(sql, "SELECT '", 8);
    for (size_t i = 0; i < n; i++)
        sql[8 + i] = (char)('a' + i % 26);
    memcpy(sql + 8 + n, "' AS big", 9);
    for (int round = 0; round < 2; round++) {
        r = PQexec(c, sql);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            fail_msg("large query: %s", PQerrorMessage(c));
        assert_int_equal(PQgetlength(r, 0, 0), (int)n);
        assert_memory_equal(PQgetvalue(r, 0, 0), sql + 8, n);
        PQclear(r);
        assert_select_1(c);
    }
    free(sql);
    PQfinish(c);
}

/* The extended protocol through libpq: parameters, prepared statements
 * and their description, binary results, errors and the skip to Sync,
 * and (raw) Execute with a row limit. */
static void test_extended(void **state)
{
    srv *s = *state;
    PGconn *c = connect_ok(s, false);
    const char *five[] = {"5"};
    const int binary = 1;
    PGresult *r;

    r = PQexecParams(c, "SELECT $1::int4 + 1 AS six", 1, NULL, five, NULL, NULL,
                     0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("PQexecParams: %s", PQerrorMessage(c));
    assert_string_equal(PQfname(r, 0), "six");
    assert_string_equal(PQgetvalue(r, 0, 0), "6");
    PQclear(r);
    /* A binary result: int4 as 4 bytes in network order. */
    r = PQexecParams(c, "SELECT $1::int4", 1, NULL, five, NULL, NULL, binary);
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    assert_int_equal(PQfformat(r, 0), 1);
    assert_int_equal(PQgetlength(r, 0, 0), 4);
    assert_memory_equal(PQgetvalue(r, 0, 0), "\0\0\0\x05", 4);
    PQclear(r);

    /* RETURNING through the extended protocol: described when
     * prepared, and its rows, with a binary column. */
    assert_string_equal(
        exec_state(c, "CREATE TABLE server_ret (a int4 PRIMARY KEY, b text)"), "");
    r = PQprepare(c, "ins", "INSERT INTO server_ret VALUES ($1, 'x') RETURNING a, b",
                  0, NULL);
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    r = PQdescribePrepared(c, "ins");
    assert_int_equal(PQnfields(r), 2);
    assert_int_equal(PQftype(r, 0), 23);
    assert_int_equal(PQnparams(r), 1);
    assert_int_equal(PQparamtype(r, 0), 23);
    PQclear(r);
    r = PQexecPrepared(c, "ins", 1, five, NULL, NULL, binary);
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    assert_int_equal(PQntuples(r), 1);
    assert_memory_equal(PQgetvalue(r, 0, 0), "\0\0\0\x05", 4);
    assert_string_equal(PQcmdStatus(r), "INSERT 0 1");
    PQclear(r);
    r = PQexecParams(c, "DELETE FROM server_ret WHERE a = $1::int4 RETURNING b", 1,
                     NULL, five, NULL, NULL, 0);
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(r, 0, 0), "x");
    assert_string_equal(PQcmdStatus(r), "DELETE 1");
    PQclear(r);
    assert_string_equal(exec_state(c, "DROP TABLE server_ret"), "");

    r = PQprepare(c, "q", "SELECT $1::text AS t", 1, NULL);
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    PQclear(r);
    r = PQprepare(c, "q", "SELECT 1", 0, NULL);
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42P05");
    PQclear(r);
    r = PQdescribePrepared(c, "q");
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    assert_int_equal(PQnparams(r), 1);
    assert_int_equal(PQparamtype(r, 0), 25);
    assert_int_equal(PQnfields(r), 1);
    assert_string_equal(PQfname(r, 0), "t");
    assert_int_equal(PQftype(r, 0), 25);
    PQclear(r);
    for (int i = 0; i < 3; i++) {
        const char *v[] = {i == 1 ? NULL : "abc"};

        r = PQexecPrepared(c, "q", 1, v, NULL, NULL, 0);
        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        assert_int_equal(PQgetisnull(r, 0, 0), i == 1);
        PQclear(r);
    }
    r = PQdescribePrepared(c, "nosuch");
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "26000");
    PQclear(r);

    /* An error outside a block leaves it idle; inside, failed. */
    r = PQexecParams(c, "SELECT * FROM server_nosuch", 0, NULL, NULL, NULL,
                     NULL, 0);
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42P01");
    PQclear(r);
    assert_int_equal(PQtransactionStatus(c), PQTRANS_IDLE);
    assert_string_equal(exec_state(c, "BEGIN"), "");
    r = PQexecParams(c, "SELECT * FROM server_nosuch", 0, NULL, NULL, NULL,
                     NULL, 0);
    PQclear(r);
    assert_int_equal(PQtransactionStatus(c), PQTRANS_INERROR);
    assert_string_equal(exec_state(c, "ROLLBACK"), "");
    assert_select_1(c);

    /* A parameter read as a type's name when the statement runs, as
     * psycopg's TypeInfo.fetch() asks. */
    {
        const char *p[1] = {"integer"};
        r = PQexecParams(c,
                         "SELECT typname, to_regtype($1)::oid FROM pg_type "
                         "WHERE oid = $1::regtype",
                         1, NULL, p, NULL, NULL, 0);
        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        assert_int_equal(PQntuples(r), 1);
        assert_string_equal(PQgetvalue(r, 0, 0), "int4");
        assert_string_equal(PQgetvalue(r, 0, 1), "23");
        PQclear(r);
        p[0] = "no_such_type";
        r = PQexecParams(c, "SELECT to_regtype($1) IS NULL", 1, NULL, p,
                         NULL, NULL, 0);
        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        assert_string_equal(PQgetvalue(r, 0, 0), "t");
        PQclear(r);
        r = PQexecParams(c, "SELECT $1::regtype", 1, NULL, p, NULL, NULL, 0);
        assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42704");
        PQclear(r);
    }

    /* An interval in binary: microseconds, days, months, big-endian. */
    {
        static const unsigned char want[16] = {0, 0, 0, 1, 0xAD, 0x2E, 0xE9, 0x20,
                                                0, 0, 0, 1, 0, 0, 0, 14};
        r = PQexecParams(c, "SELECT interval '1 year 2 mons 1 day 02:00:00.5'",
                         0, NULL, NULL, NULL, NULL, 1);
        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        assert_int_equal(PQftype(r, 0), 1186);
        assert_int_equal(PQgetlength(r, 0, 0), 16);
        assert_memory_equal(PQgetvalue(r, 0, 0), want, 16);
        PQclear(r);
    }

    /* Arrays in binary, as array_send() writes them: dimensions, has
     * nulls, element type, then length and lower bound, then each
     * element's length (-1: null) and bytes; and read back so. */
    {
        static const unsigned char want[40] = {
            0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 23, 0, 0, 0, 3, 0, 0, 0, 1,
            0, 0, 0, 4, 0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF,
            0, 0, 0, 4, 0, 0, 0, 3};
        static const unsigned char empty[12] = {0, 0, 0, 0, 0, 0, 0, 0,
                                                0, 0, 0, 25};
        static const unsigned char big[44] = {
            0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 2, 0, 0, 0, 1,
            0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 5,
            0, 0, 0, 8, 0, 0, 0, 6, 0xFC, 0x23, 0xAC, 0};
        const Oid int8arr = 1016;
        const char *pv[1] = {(const char *)big};
        const int plen[1] = {44}, pfmt[1] = {1};
        r = PQexecParams(c, "SELECT ARRAY[1, NULL, 3], ARRAY[]::text[]", 0,
                         NULL, NULL, NULL, NULL, 1);
        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        assert_int_equal(PQftype(r, 0), 1007);
        assert_int_equal(PQgetlength(r, 0, 0), 40);
        assert_memory_equal(PQgetvalue(r, 0, 0), want, 40);
        assert_int_equal(PQgetlength(r, 0, 1), 12);
        assert_memory_equal(PQgetvalue(r, 0, 1), empty, 12);
        PQclear(r);
        /* {5, 30000000000} as an int8[] parameter */
        r = PQexecParams(c, "SELECT $1::int8[], 30000000000 = ANY ($1)", 1,
                         &int8arr, pv, plen, pfmt, 0);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            fail_msg("binary int8[]: %s", PQerrorMessage(c));
        assert_string_equal(PQgetvalue(r, 0, 0), "{5,30000000000}");
        assert_string_equal(PQgetvalue(r, 0, 1), "t");
        PQclear(r);
        /* cut short, and of the wrong element type */
        r = PQexecParams(c, "SELECT $1::int8[]", 1, &int8arr, pv,
                         (const int[]){40}, pfmt, 0);
        assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "22P03");
        PQclear(r);
        r = PQexecParams(c, "SELECT $1::int8[]", 1, &int8arr,
                         (const char *[]){(const char *)want},
                         (const int[]){40}, pfmt, 0);
        assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42804");
        PQclear(r);
    }
    {
        /* uuid and bytea in binary: their raw bytes (a bytea's NULs
         * too), as uuid_send and byteasend write them; a uuid parameter
         * of another length is 22P03. */
        static const unsigned char u[16] = {0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b,
                                            0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9,
                                            0xbd, 0x38, 0x0a, 0x11};
        static const unsigned char b[5] = {0, 1, 0x5c, 0xff, 0};
        const Oid types[2] = {2950, 17};
        const char *pv[2] = {(const char *)u, (const char *)b};
        const int plen[2] = {16, 5}, pfmt[2] = {1, 1};
        r = PQexecParams(c, "SELECT $1::uuid, $2::bytea, $2 || '\\x41', "
                            "length($2), $1::text",
                         2, types, pv, plen, pfmt, 1);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            fail_msg("binary uuid, bytea: %s", PQerrorMessage(c));
        assert_int_equal(PQftype(r, 0), 2950);
        assert_int_equal(PQfsize(r, 0), 16);
        assert_int_equal(PQftype(r, 1), 17);
        assert_int_equal(PQgetlength(r, 0, 0), 16);
        assert_memory_equal(PQgetvalue(r, 0, 0), u, 16);
        assert_int_equal(PQgetlength(r, 0, 1), 5);
        assert_memory_equal(PQgetvalue(r, 0, 1), b, 5);
        assert_int_equal(PQgetlength(r, 0, 2), 6);
        assert_memory_equal(PQgetvalue(r, 0, 2), "\0\1\x5c\xff\0A", 6);
        assert_memory_equal(PQgetvalue(r, 0, 3), "\0\0\0\5", 4);
        assert_memory_equal(PQgetvalue(r, 0, 4),
                            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", 36);
        PQclear(r);
        r = PQexecParams(c, "SELECT $1::uuid, $2::bytea", 2, types, pv, plen,
                         pfmt, 0);
        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        assert_string_equal(PQgetvalue(r, 0, 0),
                            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
        assert_string_equal(PQgetvalue(r, 0, 1), "\\x00015cff00");
        PQclear(r);
        r = PQexecParams(c, "SELECT $1::uuid", 1, types, pv,
                         (const int[]){15}, pfmt, 0);
        assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "22P03");
        PQclear(r);
    }
    {
        /* jsonb in binary is a version byte (1) and its text, made
         * canonical on the way in; json is its text as written.  Another
         * version is 22P03; a jsonb key keel does not index, 0A000. */
        static const char jb[] = "\x01{\"b\": [1, 2.50], \"a\":null}";
        const Oid types[2] = {3802, 114};
        const char *pv[2] = {jb, "{\"k\" :  1}"};
        const int plen[2] = {(int)sizeof(jb) - 1, 10}, pfmt[2] = {1, 1};
        const char want[] = "\x01{\"a\": null, \"b\": [1, 2.50]}";
        r = PQexecParams(c, "SELECT $1::jsonb, $2::json, $1 -> 'b' ->> 1",
                         2, types, pv, plen, pfmt, 1);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            fail_msg("binary jsonb: %s", PQerrorMessage(c));
        assert_int_equal(PQftype(r, 0), 3802);
        assert_int_equal(PQftype(r, 1), 114);
        assert_int_equal(PQgetlength(r, 0, 0), (int)sizeof(want) - 1);
        assert_memory_equal(PQgetvalue(r, 0, 0), want, sizeof(want) - 1);
        assert_int_equal(PQgetlength(r, 0, 1), 10);
        assert_memory_equal(PQgetvalue(r, 0, 1), "{\"k\" :  1}", 10);
        assert_memory_equal(PQgetvalue(r, 0, 2), "2.50", 4);
        PQclear(r);
        pv[0] = "\x02{}";
        r = PQexecParams(c, "SELECT $1::jsonb", 1, types, pv,
                         (const int[]){3}, pfmt, 0);
        assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "22P03");
        PQclear(r);
        r = PQexec(c, "CREATE TABLE server_jkey (k jsonb PRIMARY KEY)");
        assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "0A000");
        PQclear(r);
        r = PQexec(c, "CREATE TABLE server_jkey (k jsonb, j json)");
        assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
        PQclear(r);
        r = PQexec(c, "CREATE INDEX ON server_jkey (k)");
        assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "0A000");
        PQclear(r);
        r = PQexec(c, "ALTER TABLE server_jkey ADD PRIMARY KEY (j)");
        assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42704");
        PQclear(r);
        r = PQexec(c, "DROP TABLE server_jkey");
        PQclear(r);
    }

    /* With a savepoint set, a failure leaves the block failed and the
     * transaction running; ROLLBACK TO, in the extended protocol too,
     * opens the block again. */
    assert_string_equal(exec_state(c, "BEGIN"), "");
    {
        static const char *const steps[][2] = {
            {"SAVEPOINT sp", ""},
            {"SELECT * FROM server_nosuch", "42P01"},
            {"SELECT 1", "25P02"},
            {"RELEASE sp", "25P02"},
            {"ROLLBACK TO SAVEPOINT sp", ""},
            {"SELECT 1", ""},
            {"RELEASE sp", ""},
            {"ROLLBACK TO sp", "3B001"},
        };
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
            const char *st;
            r = PQexecParams(c, steps[i][0], 0, NULL, NULL, NULL, NULL, 0);
            st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
            if (strcmp(st != NULL ? st : "", steps[i][1]) != 0)
                fail_msg("%s: SQLSTATE \"%s\", not \"%s\"", steps[i][0],
                         st != NULL ? st : "", steps[i][1]);
            PQclear(r);
            assert_int_equal(PQtransactionStatus(c),
                             steps[i][1][0] != '\0' ? PQTRANS_INERROR
                                                    : PQTRANS_INTRANS);
        }
    }
    assert_string_equal(exec_state(c, "COMMIT"), "");
    assert_int_equal(PQtransactionStatus(c), PQTRANS_IDLE);

    /* Execute with a row limit: PortalSuspended, then the rest. */
    if (strcmp(exec_state(c, "CREATE TABLE server_ext (a int4)"), "") == 0) {
        char ext[512];
        size_t n = 0;
        int fd = raw_startup(s, NULL, NULL);

        assert_string_equal(
            exec_state(c, "INSERT INTO server_ext VALUES (1), (2), (3)"), "");
        msg_add(ext, &n, 'P', "\0SELECT a FROM server_ext ORDER BY a\0\0\0",
                39);
        msg_add(ext, &n, 'B', "\0\0\0\0\0\0\0\0", 8);
        msg_add(ext, &n, 'E', "\0\0\0\0\x02", 5);
        msg_add(ext, &n, 'E', "\0\0\0\0\x02", 5);
        msg_add(ext, &n, 'C', "S\0", 2);
        msg_add(ext, &n, 'S', "", 0);
        raw_send(fd, ext, n);
        expect_types(fd, "12DDsDC3Z", NULL);
        /* Describe of the portal that the next message runs whole: the
         * run describes it (RowDescription, or NoData for a statement
         * without rows) in the order separate replies would come. */
        n = 0;
        msg_add(ext, &n, 'P', "\0SELECT a FROM server_ext ORDER BY a\0\0\0",
                39);
        msg_add(ext, &n, 'B', "\0\0\0\0\0\0\0\0", 8);
        msg_add(ext, &n, 'D', "P\0", 2);
        msg_add(ext, &n, 'E', "\0\0\0\0\0", 5);
        msg_add(ext, &n, 'S', "", 0);
        msg_add(ext, &n, 'P', "\0INSERT INTO server_ext VALUES (4)\0\0\0", 37);
        msg_add(ext, &n, 'B', "\0\0\0\0\0\0\0\0", 8);
        msg_add(ext, &n, 'D', "P\0", 2);
        msg_add(ext, &n, 'E', "\0\0\0\0\0", 5);
        msg_add(ext, &n, 'S', "", 0);
        /* With a row limit, or before a Sync, the Describe answers by
         * itself. */
        msg_add(ext, &n, 'P', "\0SELECT a FROM server_ext ORDER BY a\0\0\0",
                39);
        msg_add(ext, &n, 'B', "\0\0\0\0\0\0\0\0", 8);
        msg_add(ext, &n, 'D', "P\0", 2);
        msg_add(ext, &n, 'E', "\0\0\0\0\x02", 5);
        msg_add(ext, &n, 'S', "", 0);
        msg_add(ext, &n, 'P', "\0SELECT a / 0 FROM server_ext\0\0\0", 32);
        msg_add(ext, &n, 'B', "\0\0\0\0\0\0\0\0", 8);
        msg_add(ext, &n, 'D', "P\0", 2);
        msg_add(ext, &n, 'E', "\0\0\0\0\0", 5);
        msg_add(ext, &n, 'S', "", 0);
        raw_send(fd, ext, n);
        expect_types(fd, "12TDDDCZ", NULL);
        expect_types(fd, "12nCZ", NULL);
        expect_types(fd, "12TDDsZ", NULL);
        expect_types(fd, "12TEZ", "22012");
        /* A statement described, then its table altered: an Execute
         * whose columns are no longer those described is refused, as
         * PostgreSQL's "cached plan must not change result type"; one
         * described again runs. */
        n = 0;
        msg_add(ext, &n, 'P', "s1\0SELECT * FROM server_ext\0\0\0", 30);
        msg_add(ext, &n, 'D', "Ss1\0", 4);
        msg_add(ext, &n, 'S', "", 0);
        raw_send(fd, ext, n);
        expect_types(fd, "1tTZ", NULL);
        assert_string_equal(
            exec_state(c, "ALTER TABLE server_ext ADD COLUMN b text"), "");
        n = 0;
        msg_add(ext, &n, 'B', "\0s1\0\0\0\0\0\0\0", 10);
        msg_add(ext, &n, 'E', "\0\0\0\0\0", 5);
        msg_add(ext, &n, 'S', "", 0);
        msg_add(ext, &n, 'D', "Ss1\0", 4);
        msg_add(ext, &n, 'B', "\0s1\0\0\0\0\0\0\0", 10);
        msg_add(ext, &n, 'E', "\0\0\0\0\0", 5);
        msg_add(ext, &n, 'S', "", 0);
        raw_send(fd, ext, n);
        expect_types(fd, "2EZ", "0A000");
        expect_types(fd, "tT2DDDDCZ", NULL);
        close(fd);
        assert_string_equal(exec_state(c, "DROP TABLE server_ext"), "");
    }
    PQfinish(c);
}

/* COPY through libpq: in (one large CopyData and many small ones), out,
 * and a client's CopyFail; raw: a message that has no place in a COPY,
 * and messages pipelined after CopyDone. */
static void test_copy(void **state)
{
    srv *s = *state;
    PGconn *c = connect_ok(s, false);
    char *big;
    size_t n = 0;
    int rows = 0, fd;
    char *line;
    PGresult *r;

    if (strcmp(exec_state(c, "CREATE TABLE server_copy (a int4, b text)"),
               "") != 0) {
        print_message("no tables yet: no COPY\n");
        PQfinish(c);
        return;
    }
    big = malloc(400000);
    for (int i = 0; i < 10000; i++)
        n += (size_t)sprintf(big + n, "%d\trow number %d\n", i, i);
    r = PQexec(c, "COPY server_copy FROM STDIN");
    assert_int_equal(PQresultStatus(r), PGRES_COPY_IN);
    PQclear(r);
    assert_int_equal(PQputCopyData(c, big, (int)n), 1);
    for (int i = 10000; i < 10100; i++) {
        char row[64];
        int len = sprintf(row, "%d\t\\N\n", i);

        assert_int_equal(PQputCopyData(c, row, len), 1);
    }
    assert_int_equal(PQputCopyEnd(c, NULL), 1);
    r = PQgetResult(c);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        fail_msg("COPY FROM: %s", PQerrorMessage(c));
    assert_string_equal(PQcmdStatus(r), "COPY 10100");
    PQclear(r);
    assert_null(PQgetResult(c));
    free(big);

    r = PQexec(c, "COPY server_copy TO STDOUT");
    assert_int_equal(PQresultStatus(r), PGRES_COPY_OUT);
    PQclear(r);
    while (PQgetCopyData(c, &line, 0) > 0) {
        rows++;
        PQfreemem(line);
    }
    assert_int_equal(rows, 10100);
    r = PQgetResult(c);
    assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
    assert_string_equal(PQcmdStatus(r), "COPY 10100");
    PQclear(r);
    assert_null(PQgetResult(c));

    /* The client gives up: nothing of it stays. */
    r = PQexec(c, "COPY server_copy FROM STDIN");
    assert_int_equal(PQresultStatus(r), PGRES_COPY_IN);
    PQclear(r);
    assert_int_equal(PQputCopyData(c, "1\tx\n", 4), 1);
    assert_int_equal(PQputCopyEnd(c, "client gave up"), 1);
    r = PQgetResult(c);
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "57014");
    assert_non_null(
        strstr(PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY), "gave up"));
    PQclear(r);
    assert_null(PQgetResult(c));
    r = PQexec(c, "SELECT a FROM server_copy WHERE a = 1");
    assert_int_equal(PQntuples(r), 1);
    PQclear(r);

    /* A bad row: its error says where (CONTEXT, field W). */
    r = PQexec(c, "COPY server_copy FROM STDIN");
    PQclear(r);
    assert_int_equal(PQputCopyData(c, "x\ty\n", 4), 1);
    assert_int_equal(PQputCopyEnd(c, NULL), 1);
    r = PQgetResult(c);
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "22P02");
    assert_non_null(PQresultErrorField(r, PG_DIAG_CONTEXT));
    assert_non_null(strstr(PQresultErrorField(r, PG_DIAG_CONTEXT), "line 1"));
    PQclear(r);
    assert_null(PQgetResult(c));

    /* A Query in the middle of COPY data: FATAL 08P01, and only this
     * connection ends. */
    fd = raw_startup(s, NULL, NULL);
    raw_query(fd, "COPY server_copy FROM STDIN");
    expect_types(fd, "G", NULL);
    raw_query(fd, "SELECT 1");
    expect_error(fd, "08P01", "unexpected message type 0x51");
    assert_true(expect_eof(fd));
    close(fd);

    /* Messages after CopyDone in the same write, once after the server
     * asked for the data and once before. */
    for (int early = 0; early < 2; early++) {
        char buf[256];
        size_t len = 0;

        fd = raw_startup(s, NULL, NULL);
        if (early)
            msg_add(buf, &len, 'Q', "COPY server_copy FROM STDIN", 28);
        else
            raw_query(fd, "COPY server_copy FROM STDIN");
        msg_add(buf, &len, 'd', "20000\tx\n", 8);
        msg_add(buf, &len, 'd', "", 0);
        msg_add(buf, &len, 'c', "", 0);
        msg_add(buf, &len, 'Q', "SELECT 1", 9);
        if (!early)
            expect_types(fd, "G", NULL);
        raw_send(fd, buf, len);
        expect_types(fd, early ? "GCZTDCZ" : "CZTDCZ", NULL);
        close(fd);
    }
    assert_string_equal(exec_state(c, "DROP TABLE server_copy"), "");
    assert_select_1(c);
    PQfinish(c);
}

/* Fills table name (id int4, pad text) with 50,000 rows. */
static void fill_table(PGconn *c, const char *name)
{
    char *sql = malloc(64 * 1000 + 64);

    for (int batch = 0; batch < 50; batch++) {
        size_t n = (size_t)sprintf(sql, "INSERT INTO %s VALUES ", name);

        for (int i = 0; i < 1000; i++)
            n += (size_t)sprintf(sql + n, "%s(%d, 'padding padding')",
                                 i ? "," : "", batch * 1000 + i);
        assert_string_equal(exec_state(c, sql), "");
    }
    free(sql);
}

static void test_cancel(void **state)
{
    srv *s = *state;
    PGconn *c = connect_ok(s, false);
    PGcancel *cancel = PQgetCancel(c);
    char err[256];
    char pkt[16];
    int fd;

    /* A CancelRequest with the wrong key is ignored, and its connection
     * closed without a reply. */
    raw_put32(pkt, 16);
    raw_put32(pkt + 4, (1234u << 16) | 5678);
    raw_put32(pkt + 8, (uint32_t)PQbackendPID(c));
    raw_put32(pkt + 12, 0x5eed1e55);
    fd = raw_connect(s);
    raw_send(fd, pkt, sizeof(pkt));
    assert_true(expect_eof(fd));
    close(fd);
    /* One for a backend that does not exist, likewise. */
    raw_put32(pkt + 8, 999999);
    fd = raw_connect(s);
    raw_send(fd, pkt, sizeof(pkt));
    assert_true(expect_eof(fd));
    close(fd);
    /* The right key while nothing runs cancels nothing. */
    assert_int_equal(PQcancel(cancel, err, sizeof(err)), 1);
    usleep(100000);
    assert_select_1(c);

    /* A statement that runs: a scan of 50,000 rows for a value no row
     * has, cancelled as soon as it was sent.  The cancel may come before
     * the statement starts or after it ends (then nothing happens, as in
     * PostgreSQL), so it is tried until one lands. */
    if (strcmp(exec_state(c, "CREATE TABLE server_big (id int4, pad text)"),
               "") == 0) {
        int landed = 0, tries = 0;

        fill_table(c, "server_big");
        while (landed == 0 && tries++ < 200) {
            PGresult *r;

            assert_int_equal(
                PQsendQuery(c, "SELECT id FROM server_big WHERE pad = 'x'"), 1);
            assert_int_equal(PQcancel(cancel, err, sizeof(err)), 1);
            while ((r = PQgetResult(c)) != NULL) {
                const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);

                if (st != NULL) {
                    assert_string_equal(st, "57014");
                    landed++;
                } else {
                    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
                }
                PQclear(r);
            }
            assert_int_equal(PQtransactionStatus(c), PQTRANS_IDLE);
        }
        print_message("a cancel landed after %d tries\n", tries);
        assert_int_equal(landed, 1);
        assert_string_equal(exec_state(c, "DROP TABLE server_big"), "");
    } else {
        print_message("no tables yet: no statement to cancel\n");
    }
    assert_select_1(c);

    /* A recursion that never ends ends at a cancel.  A cancel that came
     * before the statement began would cancel nothing, so one is sent
     * every 20 ms until the statement ends. */
    {
        PGresult *r;
        int tries = 0;

        assert_int_equal(
            PQsendQuery(c, "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL "
                           "SELECT n + 1 FROM t) SELECT count(*) FROM t"),
            1);
        assert_int_equal(PQsetnonblocking(c, 1), 0);
        while (PQisBusy(c) && tries++ < 1000) {
            usleep(20000);
            assert_int_equal(PQcancel(cancel, err, sizeof(err)), 1);
            assert_int_equal(PQconsumeInput(c), 1);
        }
        assert_int_equal(PQsetnonblocking(c, 0), 0);
        r = PQgetResult(c);
        assert_non_null(r);
        assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "57014");
        PQclear(r);
        assert_null(PQgetResult(c));
    }
    assert_select_1(c);
    PQfreeCancel(cancel);
    PQfinish(c);
}

/* max_connections 4: a fifth client is refused with 53300, and a place
 * freed is taken again. */
static void test_too_many(void **state)
{
    srv *s = *state;
    PGconn *c[4];
    PGconn *extra;
    char pkt[256];
    int fd;

    for (int i = 0; i < 4; i++)
        c[i] = connect_ok(s, i % 2);
    extra = PQconnectdb(conninfo(s, false, NULL));
    assert_int_equal(PQstatus(extra), CONNECTION_BAD);
    assert_non_null(strstr(PQerrorMessage(extra), "too many clients"));
    PQfinish(extra);
    fd = raw_connect(s);
    raw_send(fd, pkt, startup_packet(pkt, 3u << 16, "", 0));
    expect_error(fd, "53300", "too many clients");
    close(fd);
    /* Clients that connect and say nothing hold a thread each, up to the
     * spare slots (8 here); past those the server answers 53300 at once,
     * without reading anything. */
    {
        int silent[8];

        for (int i = 0; i < 8; i++)
            silent[i] = raw_connect(s);
        usleep(100000);
        fd = raw_connect(s);
        /* (Should a slot have come free meanwhile, the startup packet
         * gets the same answer from the admission instead.) */
        raw_send(fd, pkt, startup_packet(pkt, 3u << 16, "", 0));
        expect_error(fd, "53300", "too many clients");
        close(fd);
        for (int i = 0; i < 8; i++)
            close(silent[i]);
    }
    for (int i = 0; i < 4; i++)
        assert_select_1(c[i]);
    PQfinish(c[3]);
    for (int tries = 0; tries < 100; tries++) {
        extra = PQconnectdb(conninfo(s, false, NULL));
        if (PQstatus(extra) == CONNECTION_OK)
            break;
        PQfinish(extra); /* the server may not have seen the close yet */
        extra = NULL;
        usleep(20000);
    }
    assert_non_null(extra);
    assert_select_1(extra);
    PQfinish(extra);
    for (int i = 0; i < 3; i++)
        PQfinish(c[i]);
}

/* Broken startup packets: each is refused, the server stays up and an
 * open connection is untouched. */
static void test_bad_startup(void **state)
{
    srv *s = *state;
    PGconn *c = connect_ok(s, false);
    char pkt[64];
    int fd;

    /* Length word below the minimum. */
    fd = raw_connect(s);
    raw_put32(pkt, 3);
    raw_send(fd, pkt, 4);
    expect_error(fd, "08P01", "invalid length of startup packet");
    close(fd);
    /* Over the startup limit. */
    fd = raw_connect(s);
    raw_put32(pkt, 1u << 20);
    raw_put32(pkt + 4, 3u << 16);
    raw_send(fd, pkt, 8);
    expect_error(fd, "08P01", "invalid length of startup packet");
    close(fd);
    /* No terminator. */
    fd = raw_connect(s);
    raw_put32(pkt, 17);
    raw_put32(pkt + 4, 3u << 16);
    memcpy(pkt + 8, "user\0keel", 9);
    raw_send(fd, pkt, 17);
    expect_error(fd, "08P01", "invalid startup packet layout");
    close(fd);
    /* Protocol 2.0. */
    fd = raw_connect(s);
    raw_send(fd, pkt, startup_packet(pkt, 2u << 16, "", 0));
    expect_error(fd, "0A000", "unsupported frontend protocol 2.0");
    close(fd);
    /* No user. */
    fd = raw_connect(s);
    raw_put32(pkt, 9);
    raw_put32(pkt + 4, 3u << 16);
    pkt[8] = '\0';
    raw_send(fd, pkt, 9);
    expect_error(fd, "28000", "no PostgreSQL user name");
    close(fd);
    /* A truncated packet, then the client goes. */
    fd = raw_connect(s);
    raw_put32(pkt, 40);
    raw_send(fd, pkt, 6);
    close(fd);
    /* SSLRequest and GSSENCRequest are answered 'N', then the real
     * startup follows on the same connection. */
    fd = raw_connect(s);
    raw_put32(pkt, 8);
    raw_put32(pkt + 4, (1234u << 16) | 5679);
    raw_send(fd, pkt, 8);
    assert_true(raw_read(fd, pkt, 1));
    assert_int_equal(pkt[0], 'N');
    raw_put32(pkt, 8);
    raw_put32(pkt + 4, (1234u << 16) | 5680);
    raw_send(fd, pkt, 8);
    assert_true(raw_read(fd, pkt, 1));
    assert_int_equal(pkt[0], 'N');
    raw_send(fd, pkt, startup_packet(pkt, 3u << 16, "", 0));
    assert_int_equal(raw_ready(fd), 'I');
    raw_query(fd, "SELECT 1");
    assert_int_equal(raw_ready(fd), 'I');
    close(fd);
    /* Protocol 3.1 with an unknown option: NegotiateProtocolVersion. */
    fd = raw_connect(s);
    raw_send(fd, pkt, startup_packet(pkt, (3u << 16) | 1, "_pq_.x\0y\0", 9));
    {
        char body[256];
        uint32_t len;

        assert_int_equal(raw_message(fd, body, sizeof(body), &len), 'v');
        assert_int_equal(raw_get32(body), 3u << 16);
        assert_int_equal(raw_get32(body + 4), 1);
        assert_string_equal(body + 8, "_pq_.x");
    }
    assert_int_equal(raw_ready(fd), 'I');
    close(fd);

    assert_select_1(c);
    PQfinish(c);
}

/* Broken messages after a good startup. */
static void test_bad_messages(void **state)
{
    srv *s = *state;
    PGconn *c = connect_ok(s, false);
    char buf[64];
    int fd;

    /* Length below 4. */
    fd = raw_startup(s, NULL, NULL);
    buf[0] = 'Q';
    raw_put32(buf + 1, 3);
    raw_send(fd, buf, 5);
    expect_error(fd, "08P01", "invalid message length");
    assert_true(expect_eof(fd));
    close(fd);
    /* A Query over the limit (the length alone is sent). */
    fd = raw_startup(s, NULL, NULL);
    buf[0] = 'Q';
    raw_put32(buf + 1, 0x7fffffff);
    raw_send(fd, buf, 5);
    expect_error(fd, "08P01", "invalid message length");
    close(fd);
    /* A Sync over the limit of small messages. */
    fd = raw_startup(s, NULL, NULL);
    buf[0] = 'S';
    raw_put32(buf + 1, 1u << 20);
    raw_send(fd, buf, 5);
    expect_error(fd, "08P01", "invalid message length");
    close(fd);
    /* An unknown message type. */
    fd = raw_startup(s, NULL, NULL);
    buf[0] = 'z';
    raw_put32(buf + 1, 4);
    raw_send(fd, buf, 5);
    expect_error(fd, "08P01", "invalid frontend message type 122");
    assert_true(expect_eof(fd));
    close(fd);
    /* A Query without its NUL: an error, and the connection goes on. */
    fd = raw_startup(s, NULL, NULL);
    buf[0] = 'Q';
    raw_put32(buf + 1, 4 + 8);
    memcpy(buf + 5, "SELECT 1", 8);
    raw_send(fd, buf, 13);
    expect_error(fd, "08P01", "invalid message format");
    assert_int_equal(raw_ready(fd), 'I');
    raw_query(fd, "SELECT 1");
    assert_int_equal(raw_ready(fd), 'I');
    /* Parse, Bind, Describe, Execute, Sync in one write; then a Bind
     * whose count promises a value that is not there: 08P01, and the
     * Execute after it is skipped up to the Sync. */
    {
        char ext[256];
        size_t n = 0;

        msg_add(ext, &n, 'P', "\0SELECT 1\0\0\0", 12);
        msg_add(ext, &n, 'B', "\0\0\0\0\0\0\0\0", 8);
        msg_add(ext, &n, 'D', "P\0", 2);
        msg_add(ext, &n, 'E', "\0\0\0\0\0", 5);
        msg_add(ext, &n, 'S', "", 0);
        raw_send(fd, ext, n);
        expect_types(fd, "12TDCZ", NULL);
        n = 0;
        msg_add(ext, &n, 'B', "\0\0\0\0\0\x01\0\0", 8);
        msg_add(ext, &n, 'E', "\0\0\0\0\0", 5);
        msg_add(ext, &n, 'D', "X\0", 2);
        msg_add(ext, &n, 'S', "", 0);
        raw_send(fd, ext, n);
        expect_types(fd, "EZ", "08P01");
        n = 0;
        msg_add(ext, &n, 'D', "X\0", 2);
        msg_add(ext, &n, 'S', "", 0);
        raw_send(fd, ext, n);
        expect_types(fd, "EZ", "08P01");
    }
    /* Three Queries in one write: three answers, in order. */
    {
        char q[256];
        size_t n = 0;
        static const char *const sql[] = {"SELECT 1", "SELEC", "SELECT 2"};

        for (int i = 0; i < 3; i++) {
            size_t l = strlen(sql[i]) + 1;

            q[n] = 'Q';
            raw_put32(q + n + 1, (uint32_t)(l + 4));
            memcpy(q + n + 5, sql[i], l);
            n += l + 5;
        }
        raw_send(fd, q, n);
        assert_int_equal(raw_ready(fd), 'I');
        expect_error(fd, "42601", NULL);
        assert_int_equal(raw_ready(fd), 'I');
        assert_int_equal(raw_ready(fd), 'I');
    }
    /* A message cut short, then the client goes. */
    buf[0] = 'Q';
    raw_put32(buf + 1, 100);
    memcpy(buf + 5, "SELECT", 6);
    raw_send(fd, buf, 11);
    close(fd);

    assert_select_1(c);
    PQfinish(c);
}

/* A client that goes in the middle of a transaction: its session ends
 * (aborting it) and nothing else is touched. */
static void test_disconnect_mid_transaction(void **state)
{
    srv *s = *state;
    PGconn *c = connect_ok(s, false);
    PGconn *other = connect_ok(s, true);
    bool tables =
        strcmp(exec_state(c, "CREATE TABLE server_t (a int4)"), "") == 0;
    int fd;

    assert_string_equal(exec_state(c, "BEGIN"), "");
    if (tables)
        assert_string_equal(exec_state(c, "INSERT INTO server_t VALUES (1)"),
                            "");
    assert_int_equal(PQtransactionStatus(c), PQTRANS_INTRANS);
    /* Gone without Terminate: the socket just closes. */
    close(PQsocket(c));
    PQfinish(c);
    /* Gone in a failed block. */
    fd = raw_startup(s, NULL, NULL);
    raw_query(fd, "BEGIN");
    assert_int_equal(raw_ready(fd), 'T');
    raw_query(fd, "SELEC");
    assert_int_equal(raw_ready(fd), 'E');
    close(fd);

    assert_select_1(other);
    if (tables) {
        PGresult *r;

        usleep(200000);
        r = PQexec(other, "SELECT a FROM server_t");
        assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
        assert_int_equal(PQntuples(r), 0); /* the insert was aborted */
        PQclear(r);
        assert_string_equal(exec_state(other, "DROP TABLE server_t"), "");
    }
    PQfinish(other);
}

/* ---- many clients at once -------------------------------------------- */

typedef struct storm {
    const srv *s;
    int id;
    tu_failures *fail;
    atomic_bool *stop;
} storm;

/* Connects, runs a few statements (one in a transaction left open, one
 * cancelled as it starts), and goes, again and again. */
static void *storm_client(void *arg)
{
    storm *st = arg;

    for (int round = 0; round < 15 && !tu_failed(st->fail); round++) {
        char info[1024];
        PGconn *c;

        snprintf(info, sizeof(info),
                 "host=%s port=%d user=keel dbname=keel connect_timeout=10 "
                 "sslmode=disable gssencmode=disable",
                 (st->id + round) % 2 ? "127.0.0.1" : st->s->dir, st->s->port);
        c = PQconnectdb(info);
        PGcancel *cancel;
        PGresult *r;
        char err[256];

        if (PQstatus(c) != CONNECTION_OK) {
            tu_fail(st->fail, "client %d: %s", st->id, PQerrorMessage(c));
            PQfinish(c);
            break;
        }
        r = PQexec(c, "SELECT 1");
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            tu_fail(st->fail, "client %d: SELECT 1: %s", st->id,
                    PQerrorMessage(c));
        PQclear(r);
        cancel = PQgetCancel(c);
        if (PQsendQuery(c, "SELECT 2") == 1) {
            PQcancel(cancel, err, sizeof(err));
            while ((r = PQgetResult(c)) != NULL) {
                const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);

                if (state != NULL && strcmp(state, "57014") != 0)
                    tu_fail(st->fail, "client %d: SELECT 2 failed with %s",
                            st->id, state);
                PQclear(r);
            }
        }
        PQfreeCancel(cancel);
        if (round % 3 == 0)
            PQclear(PQexec(c, "BEGIN"));
        PQfinish(c); /* in a transaction every third round */
    }
    return NULL;
}

/* Cancel requests with guessed ids and keys, while the others come and
 * go: all ignored, none disturbs anything. */
static void *storm_canceller(void *arg)
{
    storm *st = arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull;

    while (!atomic_load(st->stop) && !tu_failed(st->fail)) {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        char pkt[16];
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/.s.PGSQL.%d", st->s->dir,
                 st->s->port);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
            tu_fail(st->fail, "cancel connection: %s", strerror(errno));
            if (fd >= 0)
                close(fd);
            break;
        }
        raw_put32(pkt, 16);
        raw_put32(pkt + 4, (1234u << 16) | 5678);
        raw_put32(pkt + 8, (uint32_t)(tu_rand(&rng) % 64) + 1);
        raw_put32(pkt + 12, (uint32_t)tu_rand(&rng));
        raw_send(fd, pkt, sizeof(pkt));
        expect_eof(fd);
        close(fd);
    }
    return NULL;
}

/* 12 clients connecting, querying, cancelling and leaving (some in the
 * middle of a transaction) over both sockets while cancel requests with
 * wrong keys arrive: no client may fail, and the server must then shut
 * down cleanly.  A server of its own, with room for them all. */
static void test_many_clients(void **state)
{
    srv *s = *state;
    srv s2 = {.dir = s->dir};
    const char *init[] = {"init", s2.db, NULL};
    const char *check[] = {"check", s2.db, NULL};
    tu_failures fail = TU_FAILURES_INIT;
    atomic_bool stop = false;
    pthread_t th[13];
    storm st[13];

    snprintf(s2.db, sizeof(s2.db), "%s/db2", s->dir);
    snprintf(s2.log, sizeof(s2.log), "%s/server2.log", s->dir);
    assert_int_equal(run_keel(init, NULL), 0);
    srv_start(&s2, "32");
    for (int i = 0; i < 13; i++) {
        st[i] = (storm){.s = &s2, .id = i, .fail = &fail, .stop = &stop};
        assert_int_equal(pthread_create(&th[i], NULL,
                                        i < 12 ? storm_client : storm_canceller,
                                        &st[i]),
                         0);
    }
    for (int i = 0; i < 12; i++)
        pthread_join(th[i], NULL);
    atomic_store(&stop, true);
    pthread_join(th[12], NULL);
    assert_int_equal(srv_stop(&s2), 0);
    tu_failures_check(&fail);
    assert_int_equal(run_keel(check, NULL), 0);
}

/* What keel serve refuses before it serves. */
static void test_refusals(void **state)
{
    srv *s = *state;
    char out[600];
    const char *busy[] = {"serve", s->db, "--port", "1", NULL};
    const char *remote[] = {"serve", s->db, "--listen", "0.0.0.0", NULL};
    const char *md5[] = {"serve", s->db, "--auth", "md5", NULL};
    const char *noport[] = {"serve", s->db, "--port", "0", NULL};

    snprintf(out, sizeof(out), "%s/refusal.out", s->dir);
    /* A second server of the same directory. */
    assert_int_equal(run_keel(busy, out), 1);
    assert_true(file_has(out, "keel serve:"));
    assert_true(file_has(out, "process"));
    assert_int_equal(run_keel(remote, out), 2);
    assert_true(file_has(out, "loopback"));
    assert_int_equal(run_keel(md5, out), 2);
    assert_true(file_has(out, "unknown --auth method 'md5'"));
    assert_int_equal(run_keel(noport, out), 2);
}

/* SIGTERM with clients connected (one in its startup, one idle, which
 * is told FATAL 57P01, one inside a transaction, one whose thread is
 * blocked sending rows): a clean exit,
 * the socket file gone, the database checked; then a server started on a
 * stale socket file (a crashed server's) removes it and serves. */
static void test_shutdown(void **state)
{
    srv *s = *state;
    PGconn *idle = connect_ok(s, false);
    PGconn *busy = connect_ok(s, true);
    char path[600];
    const char *check[] = {"check", s->db, NULL};
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd;

    int silent, idle_raw, reader = -1;

    /* A client that sent nothing yet, one inside a transaction, and one
     * that reads nothing of a large result (its thread blocks in send). */
    silent = raw_connect(s);
    assert_string_equal(exec_state(busy, "BEGIN"), "");
    if (strcmp(exec_state(idle, "CREATE TABLE server_stop (id int4, "
                                "pad text)"),
               "") == 0) {
        fill_table(idle, "server_stop");
        reader = raw_startup(s, NULL, NULL);
        raw_query(reader, "SELECT * FROM server_stop");
        usleep(300000);
    }
    idle_raw = raw_startup(s, NULL, NULL);
    assert_int_equal(srv_stop(s), 0);
    /* A client waiting between statements is told why it is dropped. */
    expect_error(idle_raw, "57P01", "administrator command");
    assert_true(expect_eof(idle_raw));
    close(idle_raw);
    close(silent);
    if (reader >= 0)
        close(reader);
    assert_true(file_has(s->log, "database system is shut down"));
    snprintf(path, sizeof(path), "%s/.s.PGSQL.%d", s->dir, s->port);
    assert_int_equal(access(path, F_OK), -1);
    assert_string_equal(exec_state(idle, "SELECT 1"), "?");
    PQfinish(idle);
    PQfinish(busy);
    assert_int_equal(run_keel(check, NULL), 0);

    /* A stale socket file at the next port's path. */
    srv_start(s, "4");
    assert_int_equal(srv_stop(s), 0);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/.s.PGSQL.%d", s->dir,
             s->port);
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(fd); /* the file stays; nobody listens on it */
    {
        char port[16];
        int status;

        snprintf(port, sizeof(port), "%d", s->port);
        unlink(s->log);
        s->pid = fork();
        assert_true(s->pid >= 0);
        if (s->pid == 0) {
            int lfd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

            dup2(lfd, STDERR_FILENO);
            execl(keel_cmd, keel_cmd, "serve", s->db, "--port", port,
                  "--socket-dir", s->dir, "--listen", "", (char *)NULL);
            _exit(127);
        }
        for (int i = 0; i < 600 && !file_has(s->log, "ready to accept"); i++)
            usleep(50000);
        assert_true(file_has(s->log, "ready to accept"));
        {
            PGconn *c = connect_ok(s, false);

            assert_select_1(c);
            PQfinish(c);
        }
        kill(s->pid, SIGINT);
        while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
            ;
        s->pid = 0;
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(run_keel(check, NULL), 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_startup_parameters, srv_alive),
        cmocka_unit_test_setup(test_stat_catcache, srv_alive),
        cmocka_unit_test_setup(test_transaction_status, srv_alive),
        cmocka_unit_test_setup(test_lock_timeout, srv_alive),
        cmocka_unit_test_setup(test_results, srv_alive),
        cmocka_unit_test_setup(test_large_messages, srv_alive),
        cmocka_unit_test_setup(test_extended, srv_alive),
        cmocka_unit_test_setup(test_copy, srv_alive),
        cmocka_unit_test_setup(test_cancel, srv_alive),
        cmocka_unit_test_setup(test_too_many, srv_alive),
        cmocka_unit_test_setup(test_bad_startup, srv_alive),
        cmocka_unit_test_setup(test_bad_messages, srv_alive),
        cmocka_unit_test_setup(test_disconnect_mid_transaction, srv_alive),
        cmocka_unit_test_setup(test_many_clients, srv_alive),
        cmocka_unit_test_setup(test_refusals, srv_alive),
        cmocka_unit_test_setup(test_shutdown, srv_alive),
    };

    if (argc < 2) {
        fprintf(stderr, "usage: test_server KEEL\n");
        return 2;
    }
    keel_cmd = argv[1];
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
