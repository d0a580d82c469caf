/*
 * test_server_auth.c: `keel serve --auth scram-sha-256` as clients see
 * it.  Roles and passwords are set under trust (CREATE ROLE, ALTER ROLE,
 * a verifier computed by libpq's PQencryptPasswordConn()), the server is
 * restarted with SCRAM, and then: the right password logs in (libpq's
 * conninfo, PGPASSWORD, psql), a wrong one, an unknown role and a role
 * without a password each fail with 28P01 and the same message, a role
 * without LOGIN with 28000; raw sockets send malformed SASL messages
 * (another mechanism, a truncated or channel-binding client-first, a
 * changed nonce, a proof of the wrong length, another message type),
 * each refused without harm to the server.  A server with SCRAM may
 * listen on a non-loopback address; a database without roles refuses
 * everyone.
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
#include <unistd.h>

#include <libpq-fe.h>

#include "rawpq.h"
#include "testutil.h"

static const char *keel_cmd;

typedef struct srv {
    char *dir; /* holds db/, the socket and server.log */
    char db[512];
    char log[512];
    int port;
    pid_t pid;
    char verifier[256]; /* what PQencryptPasswordConn() made for "viaclient" */
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

static bool file_has(const char *path, const char *what)
{
    static char buf[1 << 20];
    FILE *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return false;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strstr(buf, what) != NULL;
}

/* Starts keel serve on s->db at a free port, with auth ("trust" or
 * "scram-sha-256") and listen (NULL: the default). */
static void srv_start(srv *s, const char *auth, const char *listen)
{
    static int attempt;

    for (int tries = 0; tries < 30; tries++) {
        char port[16];
        int status;

        s->port = 20000 + (int)((getpid() * 17 + ++attempt * 1013) % 40000);
        snprintf(port, sizeof(port), "%d", s->port);
        unlink(s->log);
        s->pid = fork();
        assert_true(s->pid >= 0);
        if (s->pid == 0) {
            int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
            execl(keel_cmd, keel_cmd, "serve", s->db, "--port", port,
                  "--socket-dir", s->dir, "--auth", auth, "--listen",
                  listen != NULL ? listen : "127.0.0.1", (char *)NULL);
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

static int srv_stop(srv *s)
{
    int status;

    kill(s->pid, SIGTERM);
    while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
        ;
    s->pid = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- libpq ------------------------------------------------------------ */

/* A connection as user with password (NULL: none given), over TCP or the
 * Unix socket. */
static PGconn *connect_as(const srv *s, bool tcp, const char *user,
                          const char *password)
{
    char ci[1024];

    snprintf(ci, sizeof(ci),
             "host=%s port=%d user=%s dbname=keel connect_timeout=10 "
             "sslmode=disable gssencmode=disable%s%s%s",
             tcp ? "127.0.0.1" : s->dir, s->port, user,
             password != NULL ? " password='" : "",
             password != NULL ? password : "", password != NULL ? "'" : "");
    return PQconnectdb(ci);
}

static void exec_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);

    if (PQresultStatus(r) != PGRES_COMMAND_OK &&
        PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(c));
    PQclear(r);
}

/* The one value sql returns, copied into out. */
static void query_value(PGconn *c, const char *sql, char *out, size_t size)
{
    PGresult *r = PQexec(c, sql);

    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        fail_msg("%s: %s", sql, PQerrorMessage(c));
    snprintf(out, size, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
}

/* Logs in as user with password and runs SELECT 1. */
static void login_ok(const srv *s, bool tcp, const char *user,
                     const char *password)
{
    PGconn *c = connect_as(s, tcp, user, password);
    char v[16];

    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("login as %s: %s", user, PQerrorMessage(c));
    query_value(c, "SELECT 1", v, sizeof(v));
    assert_string_equal(v, "1");
    PQfinish(c);
}

/* Logging in as user with password fails with message msg. */
static void login_fails(const srv *s, const char *user, const char *password,
                        const char *msg)
{
    PGconn *c = connect_as(s, false, user, password);

    assert_int_equal(PQstatus(c), CONNECTION_BAD);
    if (strstr(PQerrorMessage(c), msg) == NULL)
        fail_msg("login as %s: \"%s\" lacks \"%s\"", user, PQerrorMessage(c),
                 msg);
    PQfinish(c);
}

/* Whether a verifier has PostgreSQL's form: SCRAM-SHA-256$4096:SALT$KEY:KEY
 * with a 16-byte salt and 32-byte keys, in base64. */
static bool verifier_form(const char *v)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrst"
                              "uvwxyz0123456789+/";
    const char *p = v + strlen("SCRAM-SHA-256$4096:");

    if (strncmp(v, "SCRAM-SHA-256$4096:", strlen("SCRAM-SHA-256$4096:")) != 0 ||
        strlen(v) != strlen("SCRAM-SHA-256$4096:") + 24 + 1 + 44 + 1 + 44)
        return false;
    return strspn(p, b64) == 22 && p[22] == '=' && p[23] == '=' &&
           p[24] == '$' && strspn(p + 25, b64) == 43 && p[68] == '=' &&
           p[69] == ':' && strspn(p + 70, b64) == 43 && p[113] == '=';
}

/* ---- setup: roles under trust, then a restart with SCRAM -------------- */

static int group_setup(void **state)
{
    srv *s = calloc(1, sizeof(*s));
    const char *init[] = {"init", NULL, NULL};
    PGconn *c;
    char *v;
    char sql[512], got[256];

    s->dir = tu_mkdtemp();
    snprintf(s->db, sizeof(s->db), "%s/db", s->dir);
    snprintf(s->log, sizeof(s->log), "%s/server.log", s->dir);
    init[1] = s->db;
    /* Set now, so that the teardown stops the server if a check below
     * fails. */
    *state = s;
    if (run_keel(init, NULL) != 0)
        return -1;
    srv_start(s, "trust", NULL);
    c = connect_as(s, false, "keel", NULL);
    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("connect: %s", PQerrorMessage(c));
    exec_ok(c, "CREATE ROLE alice LOGIN PASSWORD 'alice''s pw'");
    exec_ok(c, "CREATE ROLE nopw LOGIN");
    exec_ok(c, "CREATE ROLE nologin PASSWORD 'nl'");
    exec_ok(c, "CREATE USER bob WITH PASSWORD 'b0b' SUPERUSER");
    exec_ok(c, "CREATE ROLE viaclient LOGIN");
    exec_ok(c, "CREATE ROLE gone LOGIN PASSWORD 'gone'");
    exec_ok(c, "DROP ROLE gone");
    /* What psql's \password does: the verifier computed by the client,
     * with the algorithm the server's password_encryption names. */
    v = PQencryptPasswordConn(c, "from libpq", "viaclient", NULL);
    assert_non_null(v);
    snprintf(s->verifier, sizeof(s->verifier), "%s", v);
    snprintf(sql, sizeof(sql), "ALTER ROLE viaclient PASSWORD '%s'", v);
    PQfreemem(v);
    exec_ok(c, sql);
    /* Stored as given; a plain password as a verifier of the same form. */
    query_value(c,
                "SELECT rolpassword FROM keel_auth.keel_authid "
                "WHERE rolname = 'viaclient'",
                got, sizeof(got));
    assert_string_equal(got, s->verifier);
    assert_true(verifier_form(s->verifier));
    query_value(c,
                "SELECT rolpassword FROM keel_auth.keel_authid "
                "WHERE rolname = 'alice'",
                got, sizeof(got));
    if (!verifier_form(got))
        fail_msg("alice's verifier \"%s\" is not PostgreSQL's form", got);
    query_value(c,
                "SELECT count(*) FROM keel_auth.keel_authid "
                "WHERE rolpassword IS NULL",
                got, sizeof(got));
    assert_string_equal(got, "1"); /* nopw */
    query_value(c,
                "SELECT count(*) FROM keel_auth.keel_authid WHERE "
                "rolname = 'bob' AND rolsuper AND rolcanlogin",
                got, sizeof(got));
    assert_string_equal(got, "1");
    PQfinish(c);
    /* The roles must survive the restart. */
    assert_int_equal(srv_stop(s), 0);
    srv_start(s, "scram-sha-256", NULL);
    *state = s;
    return 0;
}

static int group_teardown(void **state)
{
    srv *s = *state;

    int rc = 0;

    if (s == NULL)
        return 0;
    /* A clean exit (under the sanitizers: no error, no leak). */
    if (s->pid > 0 && srv_stop(s) != 0) {
        char cmd[600];

        snprintf(cmd, sizeof(cmd), "tail -n 40 '%s' >&2", s->log);
        if (system(cmd) != 0)
            fprintf(stderr, "(no log)\n");
        rc = -1;
    }
    tu_dir_remove(s->dir);
    free(s);
    return rc;
}

/* ---- logging in --------------------------------------------------------- */

static void test_right_password(void **state)
{
    srv *s = *state;

    login_ok(s, false, "alice", "alice\\'s pw");
    login_ok(s, true, "alice", "alice\\'s pw");
    login_ok(s, true, "bob", "b0b");
    /* PGPASSWORD, as psql and pgbench take it. */
    setenv("PGPASSWORD", "b0b", 1);
    login_ok(s, false, "bob", NULL);
    unsetenv("PGPASSWORD");
    assert_true(file_has(s->log, "connection authenticated: "
                                 "identity=\"alice\" method=scram-sha-256"));
}

static void test_failures(void **state)
{
    srv *s = *state;

    login_fails(s, "alice", "wrong",
                "password authentication failed for user \"alice\"");
    login_fails(s, "ghost", "x",
                "password authentication failed for user \"ghost\"");
    login_fails(s, "gone", "gone",
                "password authentication failed for user \"gone\"");
    login_fails(s, "nopw", "x",
                "password authentication failed for user \"nopw\"");
    login_fails(s, "nologin", "nl",
                "role \"nologin\" is not permitted to log in");
    /* No password at all: libpq gives up before answering. */
    login_fails(s, "alice", NULL, "no password supplied");
    /* The client is told nothing more; the log says why. */
    assert_true(file_has(s->log, "DETAIL:  Password does not match"));
    assert_true(file_has(s->log, "DETAIL:  Role \"ghost\" does not exist."));
    assert_true(file_has(s->log, "DETAIL:  Role \"gone\" does not exist."));
    assert_true(file_has(s->log, "DETAIL:  User \"nopw\" has no password "
                                 "assigned."));
    login_ok(s, false, "alice", "alice\\'s pw");
}

/* A verifier computed by libpq and stored with ALTER ROLE logs in. */
static void test_client_verifier(void **state)
{
    srv *s = *state;

    login_ok(s, false, "viaclient", "from libpq");
    login_fails(s, "viaclient", "from psql",
                "password authentication failed for user \"viaclient\"");
}

/* A password changed under SCRAM takes effect for the next login; a
 * dropped role logs in no more; errors are PostgreSQL's. */
static void test_change_password(void **state)
{
    srv *s = *state;
    PGconn *c = connect_as(s, false, "bob", "b0b");
    PGresult *r;

    assert_int_equal(PQstatus(c), CONNECTION_OK);
    exec_ok(c, "CREATE ROLE carol LOGIN PASSWORD 'c1'");
    login_ok(s, false, "carol", "c1");
    exec_ok(c, "ALTER ROLE carol WITH PASSWORD 'c2'");
    login_fails(s, "carol", "c1", "password authentication failed");
    login_ok(s, true, "carol", "c2");
    exec_ok(c, "ALTER ROLE carol PASSWORD NULL");
    login_fails(s, "carol", "c2", "password authentication failed");
    r = PQexec(c, "CREATE ROLE carol");
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42710");
    PQclear(r);
    exec_ok(c, "DROP ROLE carol");
    r = PQexec(c, "DROP ROLE carol");
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42704");
    PQclear(r);
    r = PQexec(c, "ALTER ROLE carol PASSWORD 'x'");
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "42704");
    PQclear(r);
    r = PQexec(c, "DROP ROLE bob");
    assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "55006");
    PQclear(r);
    /* Text that only looks like a verifier is a password. */
    exec_ok(c, "CREATE ROLE dave LOGIN PASSWORD 'SCRAM-SHA-256$4096:abc'");
    login_ok(s, false, "dave", "SCRAM-SHA-256$4096:abc");
    PQfinish(c);
    login_fails(s, "carol", "c2", "password authentication failed");
}

/* psql itself, with PGPASSWORD. */
static void test_psql(void **state)
{
    srv *s = *state;
    char cmd[1200], out[600];

    if (system("command -v psql >/dev/null 2>&1") != 0) {
        print_message("psql not found: skipped\n");
        return;
    }
    snprintf(out, sizeof(out), "%s/psql.out", s->dir);
    snprintf(cmd, sizeof(cmd),
             "PGPASSWORD=b0b psql -X -At -h %s -p %d -U bob -d keel "
             "-c 'SELECT 40 + 2' > %s 2>&1",
             s->dir, s->port, out);
    assert_int_equal(system(cmd), 0);
    assert_true(file_has(out, "42"));
    snprintf(cmd, sizeof(cmd),
             "PGPASSWORD=nope psql -X -At -h %s -p %d -U bob -d keel "
             "-c 'SELECT 1' > %s 2>&1",
             s->dir, s->port, out);
    assert_int_not_equal(system(cmd), 0);
    assert_true(file_has(out, "password authentication failed for user "
                              "\"bob\""));
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

/* The next message is an ErrorResponse with sqlstate and msg in its
 * message; then the server closes the connection. */
static void expect_error(int fd, const char *sqlstate, const char *msg)
{
    char body[4096];
    uint32_t len;
    char t = raw_message(fd, body, sizeof(body), &len);

    if (t != 'E')
        fail_msg("expected an ErrorResponse, got '%c'", t ? t : '0');
    assert_string_equal(raw_error_field(body, len, 'C'), sqlstate);
    if (strstr(raw_error_field(body, len, 'M'), msg) == NULL)
        fail_msg("error \"%s\" lacks \"%s\"", raw_error_field(body, len, 'M'), msg);
    assert_int_equal(raw_message(fd, body, sizeof(body), &len), 0);
}

/* Connects as user and reads AuthenticationSASL, which must offer
 * SCRAM-SHA-256 only. */
static int sasl_start(const srv *s, const char *user)
{
    char pkt[256], body[256];
    int fd = raw_connect(s);
    size_t n = 8;
    uint32_t len;

    n += (size_t)snprintf(pkt + n, sizeof(pkt) - n, "user%c%s%cdatabase%ckeel",
                          0, user, 0, 0) +
         1;
    pkt[n++] = '\0';
    raw_put32(pkt, (uint32_t)n);
    raw_put32(pkt + 4, 3u << 16);
    raw_send(fd, pkt, n);
    assert_int_equal(raw_message(fd, body, sizeof(body), &len), 'R');
    assert_int_equal(raw_get32(body), 10); /* AuthenticationSASL */
    assert_int_equal(len, 4 + sizeof("SCRAM-SHA-256") + 1);
    assert_string_equal(body + 4, "SCRAM-SHA-256");
    return fd;
}

/* A SASLInitialResponse for mechanism with data (declared_len: the length
 * word sent, normally strlen(data)). */
static void send_initial(int fd, const char *mech, const char *data,
                         uint32_t declared_len)
{
    char m[1024];
    size_t n = 5, ml = strlen(mech) + 1, dl = strlen(data);

    m[0] = 'p';
    memcpy(m + n, mech, ml);
    n += ml;
    raw_put32(m + n, declared_len);
    n += 4;
    memcpy(m + n, data, dl);
    n += dl;
    raw_put32(m + 1, (uint32_t)(n - 1));
    raw_send(fd, m, n);
}

static void send_response(int fd, const char *data)
{
    char m[1024];
    size_t dl = strlen(data);

    m[0] = 'p';
    raw_put32(m + 1, (uint32_t)(dl + 4));
    memcpy(m + 5, data, dl);
    raw_send(fd, m, dl + 5);
}

/* Sends a well-formed client-first-message with nonce cnonce and reads
 * the server-first-message into sfirst. */
static void sasl_first(int fd, const char *cnonce, char *sfirst, size_t size)
{
    char data[128], body[512];
    uint32_t len;

    snprintf(data, sizeof(data), "n,,n=,r=%s", cnonce);
    send_initial(fd, "SCRAM-SHA-256", data, (uint32_t)strlen(data));
    assert_int_equal(raw_message(fd, body, sizeof(body), &len), 'R');
    assert_int_equal(raw_get32(body), 11); /* AuthenticationSASLContinue */
    assert_true(len - 4 < size);
    memcpy(sfirst, body + 4, len - 4);
    sfirst[len - 4] = '\0';
}

static void test_malformed_sasl(void **state)
{
    srv *s = *state;
    const char *auth_failed = "password authentication failed for user";
    char sf[512], cf[512], salt1[64], salt2[64];
    const char *p;
    int fd;

    /* Another mechanism. */
    fd = sasl_start(s, "alice");
    send_initial(fd, "SCRAM-SHA-1", "n,,n=,r=abc", 11);
    expect_error(fd, "28P01", auth_failed);
    close(fd);
    /* A client-first-message shorter than its length word says. */
    fd = sasl_start(s, "alice");
    send_initial(fd, "SCRAM-SHA-256", "n,,n=,r=abc", 40);
    expect_error(fd, "28P01", auth_failed);
    close(fd);
    /* One cut before its nonce, and one that is empty. */
    fd = sasl_start(s, "alice");
    send_initial(fd, "SCRAM-SHA-256", "n,,n=", 5);
    expect_error(fd, "28P01", auth_failed);
    close(fd);
    fd = sasl_start(s, "alice");
    send_initial(fd, "SCRAM-SHA-256", "", 0);
    expect_error(fd, "28P01", auth_failed);
    close(fd);
    /* Channel binding, which needs TLS. */
    fd = sasl_start(s, "alice");
    send_initial(fd, "SCRAM-SHA-256", "p=tls-server-end-point,,n=,r=abc", 32);
    expect_error(fd, "28P01", auth_failed);
    close(fd);
    /* The server-first-message; then a client-final-message with the
     * nonce changed. */
    fd = sasl_start(s, "alice");
    sasl_first(fd, "clientnonce", sf, sizeof(sf));
    assert_true(strncmp(sf, "r=clientnonce", 13) == 0);
    assert_non_null(strstr(sf, ",i=4096"));
    p = strchr(sf, ',');
    snprintf(cf, sizeof(cf), "c=biws,r=%.*sX,p=%s", (int)(p - sf - 2), sf + 2,
             "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    send_response(fd, cf);
    expect_error(fd, "28P01", auth_failed);
    close(fd);
    /* A proof of 16 bytes, not 32. */
    fd = sasl_start(s, "alice");
    sasl_first(fd, "clientnonce", sf, sizeof(sf));
    p = strchr(sf, ',');
    snprintf(cf, sizeof(cf), "c=biws,r=%.*s,p=%s", (int)(p - sf - 2), sf + 2,
             "AAAAAAAAAAAAAAAAAAAAAA==");
    send_response(fd, cf);
    expect_error(fd, "28P01", auth_failed);
    close(fd);
    /* A well-formed proof that is wrong; and the channel binding of
     * another GS2 header. */
    fd = sasl_start(s, "alice");
    sasl_first(fd, "n2", sf, sizeof(sf));
    p = strchr(sf, ',');
    snprintf(cf, sizeof(cf), "c=biws,r=%.*s,p=%s", (int)(p - sf - 2), sf + 2,
             "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    send_response(fd, cf);
    expect_error(fd, "28P01", auth_failed);
    close(fd);
    fd = sasl_start(s, "alice");
    sasl_first(fd, "n3", sf, sizeof(sf));
    p = strchr(sf, ',');
    snprintf(cf, sizeof(cf), "c=eSws,r=%.*s,p=%s", (int)(p - sf - 2), sf + 2,
             "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    send_response(fd, cf);
    expect_error(fd, "28P01", auth_failed);
    close(fd);
    /* Another message type where a SASL response belongs. */
    fd = sasl_start(s, "alice");
    raw_send(fd, "Q\0\0\0\x0dSELECT 1\0", 14);
    expect_error(fd, "08P01", "expected SASL response");
    close(fd);
    /* A role that does not exist still gets a salt and the count, the
     * same salt each time, as a real role would. */
    for (int i = 0; i < 2; i++) {
        const char *sp, *se;

        fd = sasl_start(s, "ghost");
        sasl_first(fd, "abc", sf, sizeof(sf));
        sp = strstr(sf, ",s=");
        se = strstr(sf, ",i=4096");
        assert_non_null(sp);
        assert_non_null(se);
        assert_int_equal(se - sp - 3, 24); /* 16 bytes, in base64 */
        snprintf(i == 0 ? salt1 : salt2, sizeof(salt1), "%.*s",
                 (int)(se - sp - 3), sp + 3);
        close(fd);
    }
    assert_string_equal(salt1, salt2);
    /* The server took none of that badly. */
    login_ok(s, false, "alice", "alice\\'s pw");
    assert_true(file_has(s->log, "nonce mismatch"));
    assert_true(file_has(s->log, "channel binding"));
    assert_true(file_has(s->log, "invalid SASL authentication mechanism"));
}

/* ---- other servers ------------------------------------------------------ */

/* A database that never had a role, served with SCRAM on every address:
 * no one logs in.  With trust, a non-loopback address is refused. */
static void test_no_roles_any_address(void **state)
{
    srv *s = *state;
    srv t = {.dir = s->dir};
    const char *init[] = {"init", NULL, NULL};
    const char *trust_any[] = {"serve", NULL, "--listen", "0.0.0.0", NULL};
    char out[600];

    snprintf(t.db, sizeof(t.db), "%s/db2", s->dir);
    snprintf(t.log, sizeof(t.log), "%s/server2.log", s->dir);
    init[1] = t.db;
    assert_int_equal(run_keel(init, NULL), 0);
    snprintf(out, sizeof(out), "%s/refusal.out", s->dir);
    trust_any[1] = t.db;
    assert_int_equal(run_keel(trust_any, out), 2);
    assert_true(file_has(out, "loopback"));
    srv_start(&t, "scram-sha-256", "0.0.0.0");
    assert_true(file_has(t.log, "listening on IPv4 address \"0.0.0.0\""));
    {
        PGconn *c = connect_as(&t, true, "keel", "x");

        assert_int_equal(PQstatus(c), CONNECTION_BAD);
        assert_non_null(strstr(PQerrorMessage(c),
                               "password authentication failed for user "
                               "\"keel\""));
        PQfinish(c);
    }
    assert_int_equal(srv_stop(&t), 0);
    assert_true(file_has(t.log, "Role \"keel\" does not exist."));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_right_password),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_client_verifier),
        cmocka_unit_test(test_change_password),
        cmocka_unit_test(test_psql),
        cmocka_unit_test(test_malformed_sasl),
        cmocka_unit_test(test_no_roles_any_address),
    };

    if (argc < 2) {
        fprintf(stderr, "usage: %s KEEL\n", argv[0]);
        return 2;
    }
    keel_cmd = argv[1];
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
