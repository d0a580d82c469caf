/*
 * serve.c: `keel serve DIR`: opens the database and serves it over
 * PostgreSQL's protocol (src/server/) until SIGTERM or SIGINT, then ends
 * every connection, closes the database cleanly (a checkpoint) and exits
 * 0.  With trust authentication (the default) only loopback addresses and
 * a Unix socket may be listened on; --auth scram-sha-256 checks each
 * client's password against the roles stored in the database, and may
 * listen anywhere.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keel/keel.h"
#include "server/server.h"
#include "sql/sql.h"
#include "tools/tools.h"

#define SERVE_MAX_CONNECTIONS 10000
#define SERVE_POOL_MB         128 /* PostgreSQL's shared_buffers default */

static server *volatile serve_server; /* for the signal handler */

static void usage(void)
{
    fprintf(stderr,
            "usage: keel serve DIR [--port N] [--listen ADDR] "
            "[--socket-dir DIR]\n"
            "                      [--max-connections N] [--pool-mb N] "
            "[--auth trust|scram-sha-256]\n"
            "\n"
            "--auth trust (the default) lets anyone who connects in as any "
            "user,\n"
            "and so listens on loopback addresses only.  --auth "
            "scram-sha-256 asks\n"
            "for the role's password; set passwords first under trust:\n"
            "  CREATE ROLE name LOGIN PASSWORD 'pw';  (or ALTER ROLE name "
            "PASSWORD 'pw')\n"
            "then restart with --auth scram-sha-256 (which may listen on "
            "any address).\n"
            "A role without a password, or without LOGIN, cannot log in "
            "then.\n");
}

static bool parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long v;

    if (s == NULL || *s < '0' || *s > '9')
        return false;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

static void on_stop_signal(int sig)
{
    (void)sig;
    if (serve_server != NULL)
        server_request_stop(serve_server);
}

int tool_serve_main(int argc, char **argv)
{
    const char *dir = NULL;
    const char *auth = "trust";
    server_options so = {.listen = "127.0.0.1",
                         .socket_dir = "/tmp",
                         .port = 5432,
                         .max_connections = 100,
                         .startup_timeout_ms = 60000};
    uint32_t port = 5432, pool_mb = 0;
    keel_db_options o;
    keel_error e = {0};
    keel_db *db;
    server *srv;
    char err[512];
    struct sigaction sa;
    int loopback, rc = 0;

    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--port") == 0) {
            if (!parse_u32(v, 1, 65535, &port)) {
                fprintf(stderr, "keel serve: --port needs a number "
                                "1..65535\n");
                return 2;
            }
        } else if (strcmp(a, "--max-connections") == 0) {
            if (!parse_u32(v, 1, SERVE_MAX_CONNECTIONS, &so.max_connections)) {
                fprintf(stderr,
                        "keel serve: --max-connections needs a number "
                        "1..%d\n",
                        SERVE_MAX_CONNECTIONS);
                return 2;
            }
        } else if (strcmp(a, "--pool-mb") == 0) {
            if (!parse_u32(v, 1, 1u << 20, &pool_mb)) {
                fprintf(stderr, "keel serve: --pool-mb needs a number of "
                                "MiB\n");
                return 2;
            }
        } else if (strcmp(a, "--listen") == 0 ||
                   strcmp(a, "--socket-dir") == 0 || strcmp(a, "--auth") == 0) {
            if (v == NULL) {
                fprintf(stderr, "keel serve: %s needs a value\n", a);
                return 2;
            }
            if (a[2] == 'l')
                so.listen = v;
            else if (a[2] == 's')
                so.socket_dir = v;
            else
                auth = v;
        } else if (a[0] == '-' || dir != NULL) {
            fprintf(stderr, "keel serve: unknown option or argument '%s'\n", a);
            usage();
            return 2;
        } else {
            dir = a;
            continue;
        }
        i++;
    }
    if (dir == NULL || *dir == '\0') {
        fprintf(stderr, "keel serve: no database directory given\n");
        usage();
        return 2;
    }
    if (strcmp(auth, "scram-sha-256") == 0) {
        so.auth = SERVER_AUTH_SCRAM;
    } else if (strcmp(auth, "trust") == 0) {
        so.auth = SERVER_AUTH_TRUST;
    } else {
        fprintf(stderr,
                "keel serve: unknown --auth method '%s' (trust or "
                "scram-sha-256)\n",
                auth);
        return 2;
    }
    if (*so.listen == '\0' && *so.socket_dir == '\0') {
        fprintf(stderr, "keel serve: with neither --listen nor "
                        "--socket-dir there is nothing to listen on\n");
        return 2;
    }
    loopback = server_address_is_loopback(so.listen);
    if (loopback < 0) {
        fprintf(stderr, "keel serve: cannot resolve --listen address '%s'\n",
                so.listen);
        return 2;
    }
    if (loopback == 0 && so.auth == SERVER_AUTH_TRUST) {
        fprintf(stderr,
                "keel serve: refusing to listen on '%s': trust "
                "authentication is only allowed on loopback addresses "
                "(a non-loopback address needs --auth scram-sha-256)\n",
                so.listen);
        return 2;
    }
    so.port = (uint16_t)port;

    if (sql_init() != KEEL_OK) {
        fprintf(stderr, "keel serve: could not initialize the SQL layer\n");
        return 1;
    }
    keel_db_options_init(&o);
    o.dir = dir;
    o.max_sessions = so.max_connections + SERVER_SPARE_SESSIONS;
    /* A server's pool is PostgreSQL's default shared_buffers unless
     * --pool-mb says otherwise (the library's default is smaller). */
    o.pool_mb = pool_mb > 0 ? pool_mb : SERVE_POOL_MB;
    if (keel_db_open(&o, &db, &e) != KEEL_OK) {
        fprintf(stderr, "keel serve: %s\n", e.msg);
        return 1;
    }
    if (server_start(db, &so, &srv, err, sizeof(err)) != 0) {
        fprintf(stderr, "keel serve: %s\n", err);
        if (keel_db_close(db, &e) != KEEL_OK)
            fprintf(stderr, "keel serve: %s\n", e.msg);
        return 1;
    }

    serve_server = srv;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL);

    server_log(0, "LOG", "database system is ready to accept connections");

    server_run(srv);

    server_log(0, "LOG",
               "shutting down: connections ended, closing the "
               "database");
    if (keel_db_close(db, &e) != KEEL_OK) {
        fprintf(stderr, "keel serve: %s\n", e.msg);
        rc = 1;
    }
    sa.sa_handler = SIG_IGN; /* a late signal finds nothing to stop */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    serve_server = NULL;
    server_free(srv);
    if (rc == 0)
        server_log(0, "LOG", "database system is shut down");
    return rc;
}
