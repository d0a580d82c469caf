/*
 * wire_floor.c: the round-trip floor (see wire_floor.h): socket pairs to
 * forked answering processes that do nothing but recv() and send().
 *
 * Everything a run needs (sockets, buffers, the answerers' arguments) is
 * made before the forks, so that an answering process makes only system
 * calls and exits with _exit(): it starts no thread (this process may
 * have several when it forks), runs none of this process's exit handlers
 * and takes none of its signal handlers with it.
 */
#include "wire_floor.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "port/clock.h"
#include "stats.h"

/* How long a client waits for any reply before it gives up. */
#define REPLY_TIMEOUT_MS 10000

/* One answering process: its socket and what it counted. */
typedef struct answer_arg {
    int fd;
    uint32_t query_bytes, reply_bytes;
    char *buf;         /* query_bytes of its own */
    const char *reply; /* reply_bytes, shared */
    uint64_t bytes_in, bytes_out, answers;
} answer_arg;

/* What an answering process sends back when its client has closed; one
 * write() of it is atomic (it is under PIPE_BUF). */
typedef struct answer_report {
    double cpu_s;
    uint64_t bytes_in, bytes_out, answers;
} answer_report;

/* One client thread: its pairs and what it counted. */
typedef struct client_arg {
    struct pollfd *pf; /* its pairs' client ends */
    uint32_t n;
    uint32_t query_bytes, reply_bytes;
    const char *query; /* query_bytes, shared */
    char *buf;         /* reply_bytes of its own */
    uint64_t deadline_ns;
    uint64_t round_trips, end_ns;
    double cpu_s;
    const char *failed; /* why it stopped early, or NULL */
} client_arg;

/* Everything one measurement holds, released by run_release(). */
typedef struct floor_run_state {
    wire_floor_setting s;
    int (*sv)[2]; /* [i][0] the client's end, [i][1] the answerer's */
    struct pollfd *pf;
    answer_arg *aa;
    client_arg *ca;
    pthread_t *ct;
    pid_t *pids; /* the answering processes, 0 where none was started */
    char *bufs;  /* the answerers' and the clients' buffers */
    char *query, *reply;
    int report[2]; /* the answering processes' pipe */
} floor_run_state;

static double cpu_of(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
           (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

/* ---- the answering side ------------------------------------------------- */

/* Answers every whole query on a->fd with a reply until the client
 * closes its end (or something fails: then the client sees its end
 * closed). */
static void answer_loop(answer_arg *a)
{
    for (;;) {
        ssize_t n = recv(a->fd, a->buf, a->query_bytes, MSG_WAITALL);
        if (n <= 0)
            break;
        a->bytes_in += (uint64_t)n;
        if ((size_t)n < a->query_bytes)
            break;
        n = send(a->fd, a->reply, a->reply_bytes, MSG_NOSIGNAL);
        if (n > 0)
            a->bytes_out += (uint64_t)n;
        if (n != (ssize_t)a->reply_bytes)
            break;
        a->answers++;
    }
}

/* The answering process of pair i: keeps only its own socket, says it is
 * ready, answers, and reports its counts and its CPU time from ready to
 * done on st->report[1].  Never returns. */
static void answer_main(floor_run_state *st, uint32_t i)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    answer_arg *a = &st->aa[i];
    struct rusage ru0, ru1;
    answer_report rep;
    char ready = 'r';

    for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++)
        signal(sigs[k], SIG_DFL);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close(st->report[0]);
    for (uint32_t k = 0; k < st->s.pairs; k++) {
        close(st->sv[k][0]);
        if (k != i)
            close(st->sv[k][1]);
    }
    getrusage(RUSAGE_SELF, &ru0);
    if (write(st->report[1], &ready, 1) != 1)
        _exit(1);
    answer_loop(a);
    close(a->fd);
    getrusage(RUSAGE_SELF, &ru1);
    rep = (answer_report){cpu_of(&ru1) - cpu_of(&ru0), a->bytes_in,
                          a->bytes_out, a->answers};
    _exit(write(st->report[1], &rep, sizeof(rep)) == (ssize_t)sizeof(rep) ? 0
                                                                          : 1);
}

/* ---- the clients -------------------------------------------------------- */

/* Sends c's query on pair i; false if it could not. */
static bool client_send(client_arg *c, uint32_t i)
{
    return send(c->pf[i].fd, c->query, c->query_bytes, MSG_NOSIGNAL) ==
           (ssize_t)c->query_bytes;
}

/*
 * Keeps a query outstanding on each of c's pairs until the deadline,
 * then collects the replies owed.  Counts whole replies; on a failure
 * sets c->failed and stops.
 */
static void *client_loop(void *p)
{
    client_arg *c = p;
    struct rusage ru0, ru1;
    uint32_t live = c->n;

    getrusage(RUSAGE_THREAD, &ru0);
    for (uint32_t i = 0; i < c->n; i++)
        if (!client_send(c, i)) {
            c->failed = "a query could not be sent";
            return NULL;
        }
    while (live > 0) {
        int k = poll(c->pf, c->n, REPLY_TIMEOUT_MS);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            c->failed = k == 0 ? "no reply for 10 s" : "poll() failed";
            return NULL;
        }
        for (uint32_t i = 0; i < c->n; i++) {
            if (c->pf[i].fd < 0 || c->pf[i].revents == 0)
                continue;
            if (recv(c->pf[i].fd, c->buf, c->reply_bytes, MSG_WAITALL) !=
                (ssize_t)c->reply_bytes) {
                c->failed = "the answering side closed a socket";
                return NULL;
            }
            c->round_trips++;
            if (clock_now_ns() < c->deadline_ns) {
                if (!client_send(c, i)) {
                    c->failed = "a query could not be sent";
                    return NULL;
                }
            } else {
                /* Done with this pair; poll() skips a negative fd, and
                 * the socket is closed later by its index. */
                c->pf[i].fd = -1;
                live--;
            }
        }
    }
    c->end_ns = clock_now_ns();
    getrusage(RUSAGE_THREAD, &ru1);
    c->cpu_s = cpu_of(&ru1) - cpu_of(&ru0);
    return NULL;
}

/* ---- one measurement ----------------------------------------------------- */

static int setting_check(const wire_floor_setting *s, char *err, size_t len)
{
    if (s->pairs < 1 || s->pairs > WIRE_FLOOR_MAX_PAIRS) {
        snprintf(err, len, "%u socket pairs: must be 1..%d", s->pairs,
                 WIRE_FLOOR_MAX_PAIRS);
        return -1;
    }
    if (s->threads < 1 || s->threads > s->pairs) {
        snprintf(err, len, "%u client threads for %u pairs: must be 1..%u",
                 s->threads, s->pairs, s->pairs);
        return -1;
    }
    if (s->query_bytes < 1 || s->query_bytes > WIRE_FLOOR_MAX_BYTES ||
        s->reply_bytes < 1 || s->reply_bytes > WIRE_FLOOR_MAX_BYTES) {
        snprintf(err, len,
                 "%u-byte queries, %u-byte replies: each must be "
                 "1..%d bytes",
                 s->query_bytes, s->reply_bytes, WIRE_FLOOR_MAX_BYTES);
        return -1;
    }
    if (!(s->seconds > 0) || s->seconds > 3600) {
        snprintf(err, len, "%g seconds: must be more than 0, at most 3600",
                 s->seconds);
        return -1;
    }
    return 0;
}

/* Closes what st holds open, reaps the answering process and frees the
 * memory. */
static void run_release(floor_run_state *st)
{
    if (st->sv != NULL)
        for (uint32_t i = 0; i < st->s.pairs; i++)
            for (int e = 0; e < 2; e++)
                if (st->sv[i][e] >= 0)
                    close(st->sv[i][e]);
    for (int e = 0; e < 2; e++)
        if (st->report[e] >= 0)
            close(st->report[e]);
    for (uint32_t i = 0; st->pids != NULL && i < st->s.pairs; i++) {
        if (st->pids[i] <= 0)
            continue;
        kill(st->pids[i], SIGKILL); /* harmless if it has exited */
        while (waitpid(st->pids[i], NULL, 0) < 0 && errno == EINTR)
            ;
    }
    free(st->sv);
    free(st->pf);
    free(st->aa);
    free(st->ca);
    free(st->pids);
    free(st->ct);
    free(st->bufs);
    free(st->query);
    free(st->reply);
}

/* Makes st's sockets, pipe, buffers and arguments.  0, or -1 with the
 * reason. */
static int run_prepare(floor_run_state *st, char *err, size_t len)
{
    const wire_floor_setting *s = &st->s;
    uint32_t n = s->pairs, t = s->threads;
    size_t room = (size_t)n * s->query_bytes + (size_t)t * s->reply_bytes;

    st->sv = malloc(n * sizeof(*st->sv));
    for (uint32_t i = 0; st->sv != NULL && i < n; i++)
        st->sv[i][0] = st->sv[i][1] = -1;
    st->pf = calloc(n, sizeof(*st->pf));
    st->aa = calloc(n, sizeof(*st->aa));
    st->ca = calloc(t, sizeof(*st->ca));
    st->pids = calloc(n, sizeof(*st->pids));
    st->ct = calloc(t, sizeof(*st->ct));
    st->bufs = malloc(room);
    st->query = malloc(s->query_bytes);
    st->reply = malloc(s->reply_bytes);
    if (st->sv == NULL || st->pf == NULL || st->aa == NULL || st->ca == NULL ||
        st->pids == NULL || st->ct == NULL || st->bufs == NULL ||
        st->query == NULL || st->reply == NULL) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    memset(st->query, 'Q', s->query_bytes);
    memset(st->reply, 'R', s->reply_bytes);
    for (uint32_t i = 0; i < n; i++)
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, st->sv[i]) !=
            0) {
            snprintf(err, len, "socketpair() for pair %u of %u: %s", i + 1, n,
                     strerror(errno));
            return -1;
        }
    if (pipe2(st->report, O_CLOEXEC) != 0) {
        snprintf(err, len, "pipe(): %s", strerror(errno));
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        st->aa[i] = (answer_arg){.fd = st->sv[i][1],
                                 .query_bytes = s->query_bytes,
                                 .reply_bytes = s->reply_bytes,
                                 .buf = st->bufs + (size_t)i * s->query_bytes,
                                 .reply = st->reply};
    /* Client thread k owns pairs k, k + t, k + 2t, ...: its pollfds are
     * st->pf[first .. first + count), pair by pair. */
    for (uint32_t k = 0, at = 0; k < t; k++) {
        client_arg *c = &st->ca[k];
        *c = (client_arg){.pf = &st->pf[at],
                          .query_bytes = s->query_bytes,
                          .reply_bytes = s->reply_bytes,
                          .query = st->query,
                          .buf = st->bufs + (size_t)n * s->query_bytes +
                                 (size_t)k * s->reply_bytes};
        for (uint32_t i = k; i < n; i += t, at++, c->n++)
            st->pf[at] = (struct pollfd){.fd = st->sv[i][0], .events = POLLIN};
    }
    return 0;
}

/* Reads exactly len bytes from fd; false on an early end or error. */
static bool read_all(int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

/* Waits for every answering process to be ready, starts the clients,
 * waits for them, closes their ends and reads the answering processes'
 * reports.  0, or -1 with the reason. */
static int run_clients(floor_run_state *st, wire_floor_run *out, char *err,
                       size_t len)
{
    const wire_floor_setting *s = &st->s;
    uint64_t t0, end = 0;
    uint32_t started = 0;
    const char *failed = NULL;
    char ready;

    for (uint32_t i = 0; i < s->pairs; i++)
        if (!read_all(st->report[0], &ready, 1) || ready != 'r') {
            snprintf(err, len, "%u of %u answering processes started", i,
                     s->pairs);
            return -1;
        }
    t0 = clock_now_ns();
    for (uint32_t k = 0; k < s->threads; k++) {
        st->ca[k].deadline_ns = t0 + (uint64_t)(s->seconds * 1e9);
        if (pthread_create(&st->ct[k], NULL, client_loop, &st->ca[k]) != 0) {
            failed = "a client thread could not be started";
            break;
        }
        started++;
    }
    for (uint32_t k = 0; k < started; k++) {
        pthread_join(st->ct[k], NULL);
        out->round_trips += st->ca[k].round_trips;
        out->client_cpu_s += st->ca[k].cpu_s;
        if (st->ca[k].end_ns > end)
            end = st->ca[k].end_ns;
        if (failed == NULL)
            failed = st->ca[k].failed;
    }
    /* Closing the clients' ends is what ends the answering processes. */
    for (uint32_t i = 0; i < s->pairs; i++) {
        close(st->sv[i][0]);
        st->sv[i][0] = -1;
    }
    if (failed != NULL) {
        snprintf(err, len, "%s", failed);
        return -1;
    }
    for (uint32_t i = 0; i < s->pairs; i++) {
        answer_report rep;
        if (!read_all(st->report[0], &rep, sizeof(rep))) {
            snprintf(err, len,
                     "%u of %u answering processes reported their figures", i,
                     s->pairs);
            return -1;
        }
        out->answer_cpu_s += rep.cpu_s;
        out->answer_bytes_in += rep.bytes_in;
        out->answer_bytes_out += rep.bytes_out;
        out->answers += rep.answers;
    }
    out->seconds = (double)(end - t0) / 1e9;
    return 0;
}

int wire_floor_measure(const wire_floor_setting *s, wire_floor_run *out,
                       char *err, size_t len)
{
    floor_run_state st = {.s = *s, .report = {-1, -1}};
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (setting_check(s, err, len) != 0)
        return -1;
    if (run_prepare(&st, err, len) == 0) {
        uint32_t i;
        for (i = 0; i < s->pairs; i++) {
            pid_t pid = fork();
            if (pid == 0)
                answer_main(&st, i);
            if (pid < 0)
                break;
            st.pids[i] = pid;
        }
        if (i < s->pairs) {
            snprintf(err, len, "fork() of answering process %u of %u: %s",
                     i + 1, s->pairs, strerror(errno));
        } else {
            close(st.report[1]);
            st.report[1] = -1;
            for (uint32_t k = 0; k < s->pairs; k++) {
                close(st.sv[k][1]);
                st.sv[k][1] = -1;
            }
            rc = run_clients(&st, out, err, len);
        }
    }
    run_release(&st);
    if (rc == 0 &&
        (out->answers != out->round_trips ||
         out->answer_bytes_in != out->round_trips * s->query_bytes ||
         out->answer_bytes_out != out->round_trips * s->reply_bytes)) {
        snprintf(err, len,
                 "the clients counted %llu round trips, the answering side "
                 "%llu answers, %llu bytes in and %llu out",
                 (unsigned long long)out->round_trips,
                 (unsigned long long)out->answers,
                 (unsigned long long)out->answer_bytes_in,
                 (unsigned long long)out->answer_bytes_out);
        rc = -1;
    }
    if (rc == 0 && (out->round_trips == 0 || !(out->seconds > 0))) {
        snprintf(err, len, "no round trip in %.3f s", out->seconds);
        rc = -1;
    }
    return rc;
}

/* ---- series, and writing them ------------------------------------------- */

static void point_summarize(wire_floor_point *p)
{
    double rt[WIRE_FLOOR_MAX_RUNS], ans[WIRE_FLOOR_MAX_RUNS],
        cli[WIRE_FLOOR_MAX_RUNS];
    bench_stat r;

    for (int i = 0; i < p->nruns; i++) {
        const wire_floor_run *x = &p->run[i];
        rt[i] = (double)x->round_trips / x->seconds;
        ans[i] = x->answer_cpu_s * 1e6 / (double)x->round_trips;
        cli[i] = x->client_cpu_s * 1e6 / (double)x->round_trips;
    }
    r = bench_stat_of(rt, p->nruns);
    p->rt_per_s = r.median;
    p->rt_min = r.min;
    p->rt_max = r.max;
    p->answer_cpu_us = bench_stat_of(ans, p->nruns).median;
    p->client_cpu_us = bench_stat_of(cli, p->nruns).median;
}

int wire_floor_series(wire_floor_point *p, size_t n, int runs, char *err,
                      size_t len)
{
    if (runs < 1 || runs > WIRE_FLOOR_MAX_RUNS) {
        snprintf(err, len, "%d runs: must be 1..%d", runs, WIRE_FLOOR_MAX_RUNS);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        p[i].nruns = 0;
    for (int r = 0; r < runs; r++)
        for (size_t k = 0; k < n; k++) {
            wire_floor_point *q = &p[r % 2 == 0 ? k : n - 1 - k];
            char why[256];
            if (wire_floor_measure(&q->s, &q->run[q->nruns], why,
                                   sizeof(why)) != 0) {
                snprintf(err, len, "%u clients, run %d: %s", q->s.pairs, r + 1,
                         why);
                return -1;
            }
            q->nruns++;
        }
    for (size_t i = 0; i < n; i++)
        point_summarize(&p[i]);
    return 0;
}

void wire_floor_print(FILE *f, const wire_floor_point *p, size_t n)
{
    if (n == 0)
        return;
    fprintf(f,
            "round-trip floor: %u-byte queries, %u-byte replies, %d runs of "
            "%.2f s per client count (median; min, max)\n",
            p[0].s.query_bytes, p[0].s.reply_bytes, p[0].nruns, p[0].s.seconds);
    fprintf(f, "%7s %7s %14s %12s %12s %14s %14s\n", "clients", "threads",
            "round trips/s", "min", "max", "answer us/rt", "client us/rt");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%7u %7u %14.0f %12.0f %12.0f %14.2f %14.2f\n", p[i].s.pairs,
                p[i].s.threads, p[i].rt_per_s, p[i].rt_min, p[i].rt_max,
                p[i].answer_cpu_us, p[i].client_cpu_us);
}

void wire_floor_json(FILE *f, const wire_floor_point *p, size_t n)
{
    fprintf(
        f,
        "{\"query_bytes\": %u, \"reply_bytes\": %u, \"seconds_per_run\": "
        "%.3f, \"runs\": %d,\n    \"driven\": \"a forked process of its own "
        "answers each socket pair, blocking in recv(); "
        "min(clients, threads) client threads each keep a query "
        "outstanding on every one of their pairs and wait in poll()\",\n"
        "    \"points\": [",
        n ? p[0].s.query_bytes : 0, n ? p[0].s.reply_bytes : 0,
        n ? p[0].s.seconds : 0, n ? p[0].nruns : 0);
    for (size_t i = 0; i < n; i++) {
        const wire_floor_point *q = &p[i];
        fprintf(f,
                "%s\n      {\"clients\": %u, \"threads\": %u, "
                "\"round_trips_per_s\": %.1f, \"round_trips_per_s_min\": "
                "%.1f, \"round_trips_per_s_max\": %.1f,\n       "
                "\"answer_cpu_us_per_round_trip\": %.3f, "
                "\"client_cpu_us_per_round_trip\": %.3f, \"runs\": [",
                i ? "," : "", q->s.pairs, q->s.threads, q->rt_per_s, q->rt_min,
                q->rt_max, q->answer_cpu_us, q->client_cpu_us);
        for (int r = 0; r < q->nruns; r++) {
            const wire_floor_run *x = &q->run[r];
            fprintf(f,
                    "%s\n        {\"round_trips\": %llu, \"seconds\": %.6f, "
                    "\"answer_cpu_s\": %.6f, \"client_cpu_s\": %.6f, "
                    "\"answers\": %llu, \"answer_bytes_in\": %llu, "
                    "\"answer_bytes_out\": %llu}",
                    r ? "," : "", (unsigned long long)x->round_trips,
                    x->seconds, x->answer_cpu_s, x->client_cpu_s,
                    (unsigned long long)x->answers,
                    (unsigned long long)x->answer_bytes_in,
                    (unsigned long long)x->answer_bytes_out);
        }
        fputs("]}", f);
    }
    fputs("]}", f);
}
