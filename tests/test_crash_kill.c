/*
 * test_crash_kill.c: durability under SIGKILL ("kill torture").
 *
 * A small pgbench database is made once; then, round after round, a child
 * process opens it (keel_db_open() with the default options, so with
 * synchronous_commit on) and runs pgbench's read-write transaction
 * (bench/tpcb_txn.c) from 3 client threads, retrying on KEEL_ESERIALIZE.
 * Each transaction writes a token unique in the whole test into its
 * history row's mtime, and as soon as keel_commit() has returned KEEL_OK
 * its client sends the parent one fixed-size record over a pipe (token,
 * aid, tid, bid, delta: one write(2) of fewer than PIPE_BUF bytes, so a
 * record arrives whole or not at all).  After a random delay the parent
 * kills the child with SIGKILL, wherever it is (mid-transaction,
 * mid-commit, mid-write); every record it received is a commit that was
 * acknowledged.  Then it opens the database itself (which recovers it)
 * and requires:
 *
 *   1. every acknowledged commit, of this round and of every earlier one,
 *      has its history row, with its aid, tid, bid and delta, exactly
 *      once: an acknowledged commit survives the crash, and every crash
 *      after it (the model of what must be there spans all rounds);
 *   2. no transaction is there in part: the three balance sums equal the
 *      history's delta sum (tpcb_totals_read(), tpcb_totals_consistent()),
 *      and, finer, every account, teller and branch holds exactly the sum
 *      of the deltas of its history rows.  A transaction that committed
 *      without its acknowledgement reaching the parent may be there or
 *      not, but whole; once a recovery has shown it, it joins the model
 *      and must stay;
 *   3. after a clean close, keel check (keel_check()) finds no problem:
 *      pages, tuples, commit log, B-trees, indexes agreeing with tables.
 *
 * So it proves, as far as SIGKILL at random moments can, that keel's
 * commit is durable once acknowledged and atomic always, and that
 * recovery leaves a database the checker passes.  SIGKILL loses what the
 * process held and had not yet written (the buffer pool, the log's
 * buffers); what it wrote is in the kernel's page cache and stays, so
 * this is not a power-loss test: it cannot catch a missing fsync.
 *
 * One round in about six is a double crash: after the first child is
 * killed, a second one opens the database, so recovers the first one's
 * crash, and is killed 0-20 ms after its fork, sometimes before its open
 * has finished: a crash during recovery must lose nothing either.  The
 * second child's acknowledged commits count as well.
 *
 * Rounds: at least 30, each killing 50-400 ms after the child reports its
 * database open; with KEEL_STRESS_SECONDS set, rounds go on until that
 * many seconds have passed.  The delays come from a PRNG whose seed is
 * printed; KEEL_STRESS_SEED sets it (the timing of a kill is never
 * exactly repeatable, the draws are).  KEEL_TEST_VERBOSE prints a line
 * per round.
 *
 * A child never calls cmocka: what goes wrong in it (an open that fails,
 * a transaction that fails other than by a conflict) travels to the
 * parent as an error record, and it leaves only by _exit() or the kill.
 * Its stderr goes to a temporary file that the parent echoes after each
 * kill, failing the test on a sanitizer's report (ThreadSanitizer's do not
 * stop the child, and the kill would hide them).  The parent forks only
 * while it has no database open, so with no threads of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#include "access/heap_page.h"
#include "check/dbinfo.h"
#include "engine/engine.h"

#include "tools/pgbench.h"
#include "tpcb_txn.h"

#define BRANCHES 4
#define TELLERS  40
#define ACCOUNTS 4000

#define CLIENTS           3
#define MIN_ROUNDS        30
#define KILL_MIN_MS       50 /* after the child's database is open */
#define KILL_MAX_MS       400
#define DOUBLE_ONE_IN     6     /* rounds with a second, early kill */
#define EARLY_KILL_MAX_MS 20    /* the second kill's, after the fork */
#define READY_TIMEOUT_MS  60000 /* for a child's open */
#define MAX_REPORTED      10    /* missing or wrong rows listed */

/* ---- what a child tells the parent ------------------------------- */

enum { REC_READY = 1, REC_COMMIT, REC_ERROR };

#define REC_MAGIC 0x4b494c4cu /* "KILL" */

/* One message on the pipe, written with one write(2). */
typedef struct ack_rec {
    uint32_t magic;
    uint32_t kind; /* REC_* */
    int64_t token; /* REC_COMMIT: the history row's mtime */
    int32_t aid, tid, bid, delta;
    char msg[96]; /* REC_ERROR: what failed */
} ack_rec;

_Static_assert(sizeof(ack_rec) <= PIPE_BUF,
               "a record must be written atomically");

/*
 * A transaction's token: its child's number plus 1 (children, "lives",
 * are numbered from 0 across the whole test) in bits 40.., the client in
 * bits 32..39, the client's transaction number in bits 0..31.  Unique in the
 * test, so that each acknowledged commit names its own history row; a retry
 * after KEEL_ESERIALIZE keeps the token (only one try commits).
 */
static int64_t make_token(int life, int client, uint32_t seq)
{
    return (int64_t)(((uint64_t)(life + 1) << 40) | ((uint64_t)client << 32) |
                     seq);
}

static int token_life(int64_t token)
{
    return (int)((uint64_t)token >> 40) - 1;
}

static int token_client(int64_t token)
{
    return (int)(((uint64_t)token >> 32) & 0xff);
}

static uint32_t token_seq(int64_t token)
{
    return (uint32_t)token;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- the child --------------------------------------------------- */

/* Sends one record whole; false if the pipe is gone. */
static bool send_rec(int fd, const ack_rec *r)
{
    ssize_t n;

    do
        n = write(fd, r, sizeof(*r));
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof(*r);
}

static void send_error(int fd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void send_error(int fd, const char *fmt, ...)
{
    ack_rec r;
    va_list ap;

    memset(&r, 0, sizeof(r));
    r.magic = REC_MAGIC;
    r.kind = REC_ERROR;
    va_start(ap, fmt);
    vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
    va_end(ap);
    (void)send_rec(fd, &r);
}

typedef struct client {
    keel_db *db;
    int fd; /* the pipe's write end */
    int life;
    int id;
    uint64_t rng;
} client;

/* Runs transactions until the kill (or an error, sent to the parent). */
static void *client_main(void *arg)
{
    client *c = arg;
    const tpcb_totals sizes = {
        .branches = BRANCHES, .tellers = TELLERS, .accounts = ACCOUNTS};
    keel_session *s = NULL;
    keel_error e;
    char msg[KEEL_ERROR_MSG_MAX];

    if (keel_session_begin(c->db, &s, &e) != KEEL_OK) {
        send_error(c->fd, "client %d: keel_session_begin: %s", c->id, e.msg);
        return NULL;
    }
    for (uint32_t seq = 0;; seq++) {
        tpcb_params p;
        uint32_t tries = 0;
        int64_t token = make_token(c->life, c->id, seq);
        ack_rec r;
        int rc;

        tpcb_params_next(&c->rng, &sizes, &p);
        rc = tpcb_txn_run(s, &p, token, 0, &tries, msg, sizeof(msg));
        if (rc != KEEL_OK) {
            send_error(c->fd, "client %d: %s: %s", c->id, keel_status_str(rc),
                       msg);
            break;
        }
        /* Committed and acknowledged: from here on it must survive. */
        memset(&r, 0, sizeof(r));
        r.magic = REC_MAGIC;
        r.kind = REC_COMMIT;
        r.token = token;
        r.aid = p.aid;
        r.tid = p.tid;
        r.bid = p.bid;
        r.delta = p.delta;
        if (!send_rec(c->fd, &r))
            break;
    }
    keel_session_end(s);
    return NULL;
}

/* A child's whole life: never returns. */
static void child_main(const char *dir, int life, uint64_t seed, int fd)
    __attribute__((noreturn));

static void child_main(const char *dir, int life, uint64_t seed, int fd)
{
    pthread_t th[CLIENTS];
    client c[CLIENTS];
    keel_db_options o;
    keel_db *db = NULL;
    keel_error e;
    ack_rec ready;
    int started = 0;

    keel_db_options_init(&o);
    o.dir = dir;
    if (keel_db_open(&o, &db, &e) != KEEL_OK) {
        send_error(fd, "child: keel_db_open: %s", e.msg);
        _exit(2);
    }
    memset(&ready, 0, sizeof(ready));
    ready.magic = REC_MAGIC;
    ready.kind = REC_READY;
    if (!send_rec(fd, &ready))
        _exit(2);
    for (int i = 0; i < CLIENTS; i++) {
        c[i] = (client){.db = db, .fd = fd, .life = life, .id = i};
        c[i].rng = ((seed ^ ((uint64_t)life << 20) ^ (uint64_t)(i + 1)) *
                    UINT64_C(0x9E3779B97F4A7C15)) |
                   1;
        if (pthread_create(&th[i], NULL, client_main, &c[i]) != 0) {
            send_error(fd, "child: pthread_create failed");
            break;
        }
        started++;
    }
    /* The clients stop only on an error: the kill comes first. */
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    _exit(1);
}

/* ---- the parent's record of what must be there ------------------- */

/* A history row: what an acknowledged commit wrote, or what a recovery
 * found. */
typedef struct hist_row {
    int64_t token;
    int32_t aid, tid, bid, delta;
} hist_row;

typedef struct row_vec {
    hist_row *v;
    size_t n, cap;
} row_vec;

static void vec_push(row_vec *a, const hist_row *r)
{
    if (a->n == a->cap) {
        a->cap = a->cap == 0 ? 1024 : a->cap * 2;
        a->v = realloc(a->v, a->cap * sizeof(*a->v));
        assert_non_null(a->v);
    }
    a->v[a->n++] = *r;
}

static int cmp_token(const void *pa, const void *pb)
{
    const hist_row *a = pa, *b = pb;
    return a->token < b->token ? -1 : a->token > b->token;
}

/* Sorts a by token (qsort() must not be given NULL, even for 0 rows). */
static void vec_sort(row_vec *a)
{
    if (a->n > 1)
        qsort(a->v, a->n, sizeof(*a->v), cmp_token);
}

/* The row of token in a (sorted by token), or NULL. */
static const hist_row *vec_find(const row_vec *a, int64_t token)
{
    hist_row key = {.token = token};
    return a->n == 0 ? NULL
                     : bsearch(&key, a->v, a->n, sizeof(*a->v), cmp_token);
}

static bool same_row(const hist_row *a, const hist_row *b)
{
    return a->aid == b->aid && a->tid == b->tid && a->bid == b->bid &&
           a->delta == b->delta;
}

/* A row as "token T (child L client C #N: aid A tid T bid B delta D)". */
static void row_str(const hist_row *r, char *buf, size_t len)
{
    snprintf(buf, len,
             "token %#llx (child %d client %d #%u: aid %d tid %d bid %d "
             "delta %d)",
             (unsigned long long)r->token, token_life(r->token),
             token_client(r->token), token_seq(r->token), r->aid, r->tid,
             r->bid, r->delta);
}

typedef struct torture {
    char *dir;
    uint64_t seed;
    uint64_t rng;
    int lives;      /* children forked so far */
    FILE *err_file; /* a temporary file: the children's stderr */
    int err_fd;     /* its descriptor */
    keel_db *db;    /* open while a round's checks run, else NULL */
    keel_session *s;
    row_vec model; /* every row that must be there, sorted by token */
    row_vec acked; /* this round's acknowledged commits */
    row_vec found; /* this round's history, as recovery left it */
    uint64_t total_acked, total_unacked_found;
    int doubles, killed_in_open;
} torture;

/* ---- one child --------------------------------------------------- */

/* What became of a child. */
typedef struct child_run {
    int life;
    bool early; /* killed counting from the fork */
    bool ready; /* its database was open */
    bool error; /* it sent an error record */
    char msg[sizeof(((ack_rec *)0)->msg)];
    int status; /* waitpid()'s */
    uint32_t delay_ms;
    size_t acked;    /* commits it acknowledged */
    size_t partial;  /* bytes of a torn record at the end (must be 0) */
    bool bad_record; /* a record with the wrong magic or kind */
} child_run;

/* Handles the whole records in buf[0..*have), keeping a torn tail. */
static void take_records(torture *t, child_run *cr, unsigned char *buf,
                         size_t *have, double *deadline)
{
    size_t off = 0;

    for (; *have - off >= sizeof(ack_rec); off += sizeof(ack_rec)) {
        ack_rec r;
        memcpy(&r, buf + off, sizeof(r));
        if (r.magic != REC_MAGIC) {
            cr->bad_record = true;
            continue;
        }
        switch (r.kind) {
        case REC_READY:
            cr->ready = true;
            if (!cr->early)
                *deadline = now_ms() + cr->delay_ms;
            break;
        case REC_COMMIT: {
            hist_row h = {r.token, r.aid, r.tid, r.bid, r.delta};
            vec_push(&t->acked, &h);
            cr->acked++;
            break;
        }
        case REC_ERROR:
            if (!cr->error) {
                cr->error = true;
                memcpy(cr->msg, r.msg, sizeof(cr->msg));
                cr->msg[sizeof(cr->msg) - 1] = '\0';
            }
            *deadline = 0; /* kill it now */
            break;
        default:
            cr->bad_record = true;
        }
    }
    memmove(buf, buf + off, *have - off);
    *have -= off;
}

/*
 * Echoes what the child wrote to its stderr, and fails the test if a
 * sanitizer reported something there (ThreadSanitizer's reports do not
 * stop the child, and the kill would hide them).  Empties the file.
 */
static void child_stderr(torture *t, int round, const child_run *cr)
{
    char buf[4096];
    bool sanitizer = false;
    off_t end = lseek(t->err_fd, 0, SEEK_CUR);
    ssize_t n;

    if (end <= 0)
        return;
    assert_int_equal(lseek(t->err_fd, 0, SEEK_SET), 0);
    print_error("round %d: child %d's stderr:\n", round, cr->life);
    while ((n = read(t->err_fd, buf, sizeof(buf) - 1)) > 0) {
        buf[n] = '\0';
        print_error("%s", buf);
        /* A marker split across two reads is missed; the reports repeat
         * it in their summary line. */
        sanitizer |= strstr(buf, "Sanitizer") != NULL ||
                     strstr(buf, "runtime error") != NULL;
    }
    assert_int_equal(ftruncate(t->err_fd, 0), 0);
    assert_int_equal(lseek(t->err_fd, 0, SEEK_SET), 0);
    if (sanitizer)
        fail_msg("round %d (seed %#llx): a sanitizer reported an error in "
                 "child %d (above)",
                 round, (unsigned long long)t->seed, cr->life);
}

/*
 * Forks a child, adds its acknowledgements to t->acked, kills it after
 * the drawn delay (early: 0..EARLY_KILL_MAX_MS after the fork; else
 * KILL_MIN_MS..KILL_MAX_MS after its open) and reaps it, then takes what
 * is left in the pipe.  Fails the test only once the child is dead.
 */
static void run_child(torture *t, int round, bool early, child_run *cr)
{
    unsigned char buf[sizeof(ack_rec) * 64];
    size_t have = 0;
    int fds[2];
    pid_t pid;
    double deadline;

    memset(cr, 0, sizeof(*cr));
    cr->life = t->lives++;
    cr->early = early;
    cr->delay_ms =
        early ? (uint32_t)(tu_rand(&t->rng) % (EARLY_KILL_MAX_MS + 1))
              : KILL_MIN_MS + (uint32_t)(tu_rand(&t->rng) %
                                         (KILL_MAX_MS - KILL_MIN_MS + 1));
    assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(t->err_fd, STDERR_FILENO);
        child_main(t->dir, cr->life, t->seed, fds[1]);
    }
    close(fds[1]);
    deadline = now_ms() + (early ? cr->delay_ms : READY_TIMEOUT_MS);
    for (;;) {
        double left = deadline - now_ms();
        struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
        ssize_t n;
        int pr;

        if (left <= 0)
            break;
        pr = poll(&pfd, 1, (int)left + 1);
        if (pr <= 0)
            continue; /* EINTR, or the time is up: checked above */
        n = read(fds[0], buf + have, sizeof(buf) - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* the child is gone already */
        have += (size_t)n;
        take_records(t, cr, buf, &have, &deadline);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, &cr->status, 0) < 0 && errno == EINTR)
        ;
    /* What it wrote before it died: every whole record counts. */
    for (;;) {
        ssize_t n = read(fds[0], buf + have, sizeof(buf) - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        have += (size_t)n;
        take_records(t, cr, buf, &have, &deadline);
    }
    cr->partial = have;
    close(fds[0]);
    child_stderr(t, round, cr);

    if (cr->error)
        fail_msg("round %d (seed %#llx): child %d failed: %s", round,
                 (unsigned long long)t->seed, cr->life, cr->msg);
    if (!WIFSIGNALED(cr->status) || WTERMSIG(cr->status) != SIGKILL)
        fail_msg("round %d (seed %#llx): child %d ended before the kill "
                 "(wait status %#x)",
                 round, (unsigned long long)t->seed, cr->life, cr->status);
    if (cr->bad_record || cr->partial != 0)
        fail_msg("round %d (seed %#llx): a malformed record on the pipe "
                 "(%zu bytes torn)",
                 round, (unsigned long long)t->seed, cr->partial);
    if (!early && !cr->ready)
        fail_msg("round %d (seed %#llx): child %d did not open the database "
                 "within %d ms",
                 round, (unsigned long long)t->seed, cr->life,
                 READY_TIMEOUT_MS);
}

/* ---- checking what recovery left --------------------------------- */

static void check_line(void *ctx, bool note, const char *line)
{
    (void)ctx;
    if (!note || getenv("KEEL_TEST_VERBOSE") != NULL)
        print_error("  keel check: %s%s\n", note ? "note: " : "", line);
}

/* Every row of table (pgbench_branches, _tellers, _accounts) must hold in
 * column col the sum of its history rows' deltas, sums[id]; the number of
 * rows that do not (or are missing, or too many). */
static int check_balances(torture *t, int round, keel_session *s,
                          const char *table, uint16_t col, int32_t count,
                          const int64_t *sums)
{
    keel_value row[4];
    keel_scan *sc = NULL;
    bool found;
    int32_t seen = 0, bad = 0;

    assert_int_equal(keel_begin(s), KEEL_OK);
    if (keel_scan_begin(s, NULL, table, NULL, NULL, NULL, &sc) != KEEL_OK)
        fail_msg("round %d (seed %#llx): scanning %s: %s", round,
                 (unsigned long long)t->seed, table, keel_session_error(s));
    for (;;) {
        if (keel_scan_next(sc, row, &found) != KEEL_OK)
            fail_msg("round %d (seed %#llx): scanning %s: %s", round,
                     (unsigned long long)t->seed, table, keel_session_error(s));
        if (!found)
            break;
        seen++;
        int32_t id = row[0].v.i4;
        int64_t bal = row[col].isnull ? 0 : row[col].v.i4;
        if (id < 1 || id > count || bal != sums[id]) {
            if (bad++ < MAX_REPORTED)
                print_error("round %d: %s row %d holds %lld, its history "
                            "rows add up to %lld\n",
                            round, table, id, (long long)bal,
                            id >= 1 && id <= count ? (long long)sums[id] : 0);
        }
    }
    keel_scan_end(sc);
    assert_int_equal(keel_commit(s), KEEL_OK);
    if (seen != count)
        print_error("round %d: %s has %d rows, not %d\n", round, table, seen,
                    count);
    return bad + (seen != count);
}

/* Reads the whole history into t->found, sorted by token. */
static void read_history(torture *t, int round, keel_session *s)
{
    keel_scan *sc = NULL;
    keel_value row[6];
    bool found;

    t->found.n = 0;
    assert_int_equal(keel_begin(s), KEEL_OK);
    if (keel_scan_begin(s, NULL, "pgbench_history", NULL, NULL, NULL, &sc) !=
        KEEL_OK)
        fail_msg("round %d (seed %#llx): scanning the history: %s", round,
                 (unsigned long long)t->seed, keel_session_error(s));
    for (;;) {
        if (keel_scan_next(sc, row, &found) != KEEL_OK)
            fail_msg("round %d (seed %#llx): scanning the history: %s", round,
                     (unsigned long long)t->seed, keel_session_error(s));
        if (!found)
            break;
        hist_row h = {.token = row[4].isnull ? 0 : row[4].v.i8,
                      .tid = row[0].v.i4,
                      .bid = row[1].v.i4,
                      .aid = row[2].v.i4,
                      .delta = row[3].v.i4};
        vec_push(&t->found, &h);
    }
    keel_scan_end(sc);
    assert_int_equal(keel_commit(s), KEEL_OK);
    vec_sort(&t->found);
}

/*
 * Opens the database (recovery), reads its history and holds it against
 * t->model and t->acked (check 1), checks that no transaction is there in
 * part (check 2), closes it and runs keel check on it (check 3).  Lives
 * first_life.. are this round's children: rows of theirs that nobody
 * acknowledged may be there.  On success t->model is what was found, and
 * *unacked how many such rows were.
 */
static void verify_round(torture *t, int round, int first_life,
                         uint64_t *unacked)
{
    keel_db_options o;
    keel_session *s;
    keel_error e;
    tpcb_totals tot;
    char msg[KEEL_ERROR_MSG_MAX], rs[160], rs2[160];
    int64_t by_aid[ACCOUNTS + 1] = {0}, by_tid[TELLERS + 1] = {0},
                              by_bid[BRANCHES + 1] = {0};
    size_t lost = 0, lost_now = 0, wrong = 0, dups = 0, strays = 0;
    uint64_t problems = 0, notes = 0;
    int rc, bad;

    keel_db_options_init(&o);
    o.dir = t->dir;
    rc = keel_db_open(&o, &t->db, &e);
    if (rc != KEEL_OK)
        fail_msg("round %d (seed %#llx, database %s): the open after the "
                 "kill failed: %s: %s",
                 round, (unsigned long long)t->seed, t->dir,
                 keel_status_str(rc), e.msg);
    assert_int_equal(keel_session_begin(t->db, &t->s, &e), KEEL_OK);
    s = t->s;
    read_history(t, round, s);

    /* Each row once, from a transaction of this test, within the tables;
     * the sums of the deltas per account, teller and branch. */
    *unacked = 0;
    for (size_t i = 0; i < t->found.n; i++) {
        const hist_row *h = &t->found.v[i];
        bool sane = h->aid >= 1 && h->aid <= ACCOUNTS && h->tid >= 1 &&
                    h->tid <= TELLERS && h->bid >= 1 && h->bid <= BRANCHES &&
                    h->delta >= -5000 && h->delta <= 5000 &&
                    token_life(h->token) >= 0 &&
                    token_life(h->token) < t->lives &&
                    token_client(h->token) < CLIENTS;

        if (i > 0 && h->token == t->found.v[i - 1].token &&
            dups++ < MAX_REPORTED) {
            row_str(h, rs, sizeof(rs));
            print_error("round %d: a history row twice: %s\n", round, rs);
        }
        if (!sane) {
            row_str(h, rs, sizeof(rs));
            if (strays++ < MAX_REPORTED)
                print_error("round %d: a history row no transaction of this "
                            "test wrote: %s\n",
                            round, rs);
            continue;
        }
        by_aid[h->aid] += h->delta;
        by_tid[h->tid] += h->delta;
        by_bid[h->bid] += h->delta;
        /* Neither acknowledged nor shown by an earlier recovery: a commit
         * whose record never left its child, allowed only from this
         * round's. */
        if (vec_find(&t->model, h->token) == NULL &&
            vec_find(&t->acked, h->token) == NULL) {
            if (token_life(h->token) >= first_life)
                (*unacked)++;
            else if (strays++ < MAX_REPORTED) {
                row_str(h, rs, sizeof(rs));
                print_error("round %d: a history row of an earlier round "
                            "that no recovery showed before: %s\n",
                            round, rs);
            }
        }
    }

    /* Check 1: every row an earlier recovery showed (and so every commit
     * acknowledged before) is still there, and every commit acknowledged
     * in this round is, as it was written. */
    for (int pass = 0; pass < 2; pass++) {
        const row_vec *want = pass == 0 ? &t->model : &t->acked;
        for (size_t i = 0; i < want->n; i++) {
            const hist_row *w = &want->v[i];
            const hist_row *h = vec_find(&t->found, w->token);
            if (h != NULL && same_row(w, h))
                continue;
            row_str(w, rs, sizeof(rs));
            if (h == NULL) {
                lost_now += pass == 1;
                if (lost++ < MAX_REPORTED)
                    print_error("round %d: LOST %s: %s\n", round,
                                pass == 0 ? "a commit an earlier recovery "
                                            "showed"
                                          : "an acknowledged commit",
                                rs);
            } else {
                row_str(h, rs2, sizeof(rs2));
                if (wrong++ < MAX_REPORTED)
                    print_error("round %d: the history holds %s, not %s\n",
                                round, rs2, rs);
            }
        }
    }
    if (lost > 0 || wrong > 0 || dups > 0 || strays > 0)
        fail_msg("round %d (seed %#llx, database %s): %zu of %zu commits "
                 "that must be there are lost after the kill (%zu of the "
                 "%zu acknowledged in this round), %zu rows wrong, %zu "
                 "twice, %zu strays (the history holds %zu rows)",
                 round, (unsigned long long)t->seed, t->dir, lost,
                 t->model.n + t->acked.n, lost_now, t->acked.n, wrong, dups,
                 strays, t->found.n);

    /* Check 2: no transaction is there in part. */
    rc = tpcb_totals_read(s, &tot, msg, sizeof(msg));
    if (rc != KEEL_OK)
        fail_msg("round %d (seed %#llx, database %s): tpcb_totals_read: %s",
                 round, (unsigned long long)t->seed, t->dir, msg);
    if (!tpcb_totals_consistent(&tot) || tot.history != t->found.n)
        fail_msg("round %d (seed %#llx, database %s): a transaction is there "
                 "in part: the balances add up to %lld (branches), %lld "
                 "(tellers), %lld (accounts), the history's %llu rows' "
                 "deltas to %lld",
                 round, (unsigned long long)t->seed, t->dir,
                 (long long)tot.bbalance, (long long)tot.tbalance,
                 (long long)tot.abalance, (unsigned long long)tot.history,
                 (long long)tot.delta);
    bad = check_balances(t, round, s, "pgbench_branches", 1, BRANCHES, by_bid);
    bad += check_balances(t, round, s, "pgbench_tellers", 2, TELLERS, by_tid);
    bad += check_balances(t, round, s, "pgbench_accounts", 2, ACCOUNTS, by_aid);
    if (bad > 0)
        fail_msg("round %d (seed %#llx, database %s): %d rows disagree with "
                 "the history: a transaction is there in part",
                 round, (unsigned long long)t->seed, t->dir, bad);
    keel_session_end(s);
    t->s = NULL;
    rc = keel_db_close(t->db, &e);
    t->db = NULL;
    if (rc != KEEL_OK)
        fail_msg("round %d (seed %#llx): keel_db_close: %s", round,
                 (unsigned long long)t->seed, e.msg);

    /* Check 3: keel check. */
    rc = keel_check(t->dir, check_line, NULL, &problems, &notes, &e);
    if (rc != KEEL_OK)
        fail_msg("round %d (seed %#llx, database %s): keel check could not "
                 "run: %s",
                 round, (unsigned long long)t->seed, t->dir, e.msg);
    if (problems != 0)
        fail_msg("round %d (seed %#llx, database %s): keel check found %llu "
                 "problems",
                 round, (unsigned long long)t->seed, t->dir,
                 (unsigned long long)problems);

    /* What was found is what must stay. */
    row_vec tmp = t->model;
    t->model = t->found;
    t->found = tmp;
}

/* ---- the test ---------------------------------------------------- */

/* Row id of a table of n columns: id, (bid,) balance 0, null filler. */
static void insert_row(keel_session *s, const char *table, uint16_t ncols,
                       int32_t id)
{
    keel_value v[4];
    uint16_t i = 0;

    v[i++] = tu_vi4(id);
    if (ncols == 4)
        v[i++] = tu_vi4((id - 1) % BRANCHES + 1);
    v[i++] = tu_vi4(0);
    v[i++] = (keel_value){.isnull = true};
    assert_int_equal(keel_insert(s, NULL, table, v), KEEL_OK);
}

/* Creates in dir the pgbench tables with BRANCHES, TELLERS and ACCOUNTS
 * rows and an empty history, and closes it cleanly. */
static void make_database(const char *dir)
{
    static const char *const tables[] = {"pgbench_branches", "pgbench_tellers",
                                         "pgbench_accounts", "pgbench_history"};
    keel_db_options o;
    keel_db *db;
    keel_session *s;
    keel_error e;
    uint16_t pk = 1;

    keel_db_options_init(&o);
    o.dir = dir;
    assert_int_equal(keel_db_create(&o, &e), KEEL_OK);
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    for (int i = 0; i < 4; i++) {
        uint16_t ncols = 0;
        const keel_column *cols = pgbench_columns(tables[i], &ncols);
        assert_non_null(cols);
        assert_int_equal(keel_create_table(s, NULL, tables[i], cols, ncols,
                                           i < 3 ? &pk : NULL, i < 3 ? 1 : 0),
                         KEEL_OK);
    }
    assert_int_equal(keel_begin(s), KEEL_OK);
    for (int32_t id = 1; id <= BRANCHES; id++)
        insert_row(s, "pgbench_branches", 3, id);
    for (int32_t id = 1; id <= TELLERS; id++)
        insert_row(s, "pgbench_tellers", 4, id);
    for (int32_t id = 1; id <= ACCOUNTS; id++)
        insert_row(s, "pgbench_accounts", 4, id);
    assert_int_equal(keel_commit(s), KEEL_OK);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
}

/* KEEL_STRESS_SEED, or one from the clock and the process id. */
static uint64_t pick_seed(void)
{
    const char *env = getenv("KEEL_STRESS_SEED");
    struct timespec ts;

    if (env != NULL && strtoull(env, NULL, 0) != 0)
        return strtoull(env, NULL, 0);
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^
           ((uint64_t)getpid() << 32) ^ 1;
}

static int setup(void **state)
{
    torture *t = calloc(1, sizeof(*t));

    assert_non_null(t);
    t->dir = tu_mkdtemp();
    t->err_file = tmpfile();
    assert_non_null(t->err_file);
    t->err_fd = fileno(t->err_file);
    t->seed = pick_seed();
    t->rng = t->seed;
    make_database(t->dir);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    torture *t = *state;

    /* A failed check leaves the database open. */
    keel_session_end(t->s);
    if (t->db != NULL)
        (void)keel_db_close(t->db, NULL);
    fclose(t->err_file);
    tu_dir_remove(t->dir);
    free(t->model.v);
    free(t->acked.v);
    free(t->found.v);
    free(t);
    return 0;
}

/* After the rounds: pgbench_branches, whose rows every transaction
 * updates without changing a key, holds heap-only chains that recovery
 * rebuilt (a redirect or a heap-only version), on the page or two that
 * pruning and line reuse keep it to (one, unless a horizon was held back
 * while the page filled). */
static void check_heap_only_chains(const char *dir)
{
    static _Alignas(8) unsigned char page[BLOCK_SIZE];
    keel_db_options o;
    keel_db *db;
    keel_session *s;
    keel_error e;
    dbinfo_rel *r, branches = {0};
    size_t n;
    int chained = 0;

    keel_db_options_init(&o);
    o.dir = dir;
    assert_int_equal(keel_db_open(&o, &db, &e), KEEL_OK);
    assert_int_equal(keel_session_begin(db, &s, &e), KEEL_OK);
    assert_int_equal(dbinfo_relations(s, &r, &n, NULL), KEEL_OK);
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].name, "pgbench_branches") == 0)
            branches = r[i];
    free(r);
    keel_session_end(s);
    assert_int_equal(keel_db_close(db, &e), KEEL_OK);
    assert_int_not_equal(branches.relnumber, 0);
    assert_true(branches.blocks >= 1 && branches.blocks <= 2);
    tu_page_io(dir, branches.relnumber, 0, page, false);
    for (uint16_t off = 1; off <= heappage_nitems(page); off++) {
        heappage_lp lp = heappage_get_lp(page, off);
        size_t len;
        const heap_tuple_header *h = heappage_get_item_const(page, off, &len);
        chained += heappage_lp_state_of(lp) == HEAPPAGE_LP_REDIRECT ||
                   (h != NULL && (h->flags & HEAP_TUPLE_HEAP_ONLY));
    }
    assert_true(chained > 0);
}

static void test_kill_torture(void **state)
{
    torture *t = *state;
    bool verbose = getenv("KEEL_TEST_VERBOSE") != NULL;
    double seconds =
        getenv("KEEL_STRESS_SECONDS") != NULL ? tu_stress_seconds(0) : 0;
    double start = now_ms();
    int round;

    print_message("seed %#llx (KEEL_STRESS_SEED repeats the draws)\n",
                  (unsigned long long)t->seed);
    for (round = 0; round < MIN_ROUNDS || now_ms() - start < seconds * 1e3;
         round++) {
        int first_life = t->lives;
        bool twice = tu_rand(&t->rng) % DOUBLE_ONE_IN == 0;
        child_run first, second = {0};
        uint64_t unacked = 0;

        t->acked.n = 0;
        run_child(t, round, false, &first);
        if (twice) {
            run_child(t, round, true, &second);
            t->doubles++;
            t->killed_in_open += !second.ready;
        }
        vec_sort(&t->acked);
        verify_round(t, round, first_life, &unacked);
        t->total_acked += t->acked.n;
        t->total_unacked_found += unacked;
        if (verbose && twice)
            print_message("round %d: killed %u ms after the open with %zu "
                          "commits acknowledged, then %u ms after the fork "
                          "(%s) with %zu; %llu more found, history %zu "
                          "rows\n",
                          round, first.delay_ms, first.acked, second.delay_ms,
                          second.ready ? "open" : "in the open", second.acked,
                          (unsigned long long)unacked, t->model.n);
        else if (verbose)
            print_message("round %d: killed %u ms after the open with %zu "
                          "commits acknowledged; %llu more found, history "
                          "%zu rows\n",
                          round, first.delay_ms, first.acked,
                          (unsigned long long)unacked, t->model.n);
    }
    print_message("%d rounds in %.1f s (%d with a second kill, %d of those in "
                  "the open): %llu acknowledged commits all survived, %llu "
                  "unacknowledged ones found whole\n",
                  round, (now_ms() - start) / 1e3, t->doubles,
                  t->killed_in_open, (unsigned long long)t->total_acked,
                  (unsigned long long)t->total_unacked_found);
    assert_true(t->total_acked > 0);
    check_heap_only_chains(t->dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kill_torture, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
