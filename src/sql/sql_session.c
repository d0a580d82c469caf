/*
 * sql_session.c: SQL sessions (sql.h): the arena, errors, settings, the
 * transaction block, and the simple query protocol's statement loop,
 * which parses a message's text with libpg_query and sends each
 * statement to its executor.
 *
 * Transactions follow PostgreSQL's rules.  Outside a block, a message's
 * statements run as one transaction, committed after the last (or
 * aborted at the first failure).  BEGIN opens a block that spans
 * messages until COMMIT or ROLLBACK; a statement that fails inside it
 * aborts the engine's transaction at once and leaves the block failed
 * ('E'), where every statement but COMMIT and ROLLBACK (which both end
 * it, COMMIT reporting ROLLBACK) fails with 25P02.  With a SAVEPOINT
 * set, the failure leaves the engine's transaction running instead, and
 * ROLLBACK TO a savepoint, which the engine takes the changes since back
 * for (keel_rollback_to_savepoint()), opens the block again.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "port/clock.h"
#include "sql/sql_internal.h"

/* ---- the arena ------------------------------------------------------- */

#define SQL_ARENA_BLOCK 8192

void *sql_alloc(sql_arena *a, size_t n)
{
    sql_arena_block *b = a->head;

    n = (n + 7) & ~(size_t)7;
    if (b == NULL || b->size - b->used < n) {
        size_t size = n > SQL_ARENA_BLOCK ? n : SQL_ARENA_BLOCK;
        sql_arena_block *nb;
        if (a->limit != 0 && a->bytes + size > a->limit) {
            a->refused = true;
            return NULL;
        }
        nb = malloc(sizeof(*nb) + size);
        if (nb == NULL)
            return NULL;
        a->bytes += size;
        nb->size = size;
        nb->used = 0;
        nb->next = b;
        a->head = b = nb;
    }
    b->used += n;
    return b->data + b->used - n;
}

char *sql_strndup(sql_arena *a, const char *p, size_t n)
{
    char *c = sql_alloc(a, n + 1);

    if (c != NULL) {
        memcpy(c, p, n);
        c[n] = '\0';
    }
    return c;
}

sql_arena_mark sql_arena_save(const sql_arena *a)
{
    return (sql_arena_mark){.block = a->head,
                            .used = a->head != NULL ? a->head->used : 0};
}

void sql_arena_restore(sql_arena *a, sql_arena_mark m)
{
    while (a->head != NULL && a->head != m.block) {
        sql_arena_block *next = a->head->next;
        a->bytes -= a->head->size;
        free(a->head);
        a->head = next;
    }
    if (a->head != NULL)
        a->head->used = m.used;
}

void sql_arena_reset(sql_arena *a)
{
    sql_arena_block *b = a->head;

    a->refused = false;
    if (b == NULL)
        return;
    /* Keep the oldest block (the last in the list): a statement's usual
     * needs fit it. */
    while (b->next != NULL) {
        sql_arena_block *next = b->next;
        free(b);
        b = next;
    }
    b->used = 0;
    a->head = b;
    a->bytes = b->size;
}

void sql_arena_free(sql_arena *a)
{
    while (a->head != NULL) {
        sql_arena_block *next = a->head->next;
        free(a->head);
        a->head = next;
    }
    a->bytes = 0;
}

/* ---- errors ------------------------------------------------------------ */

static keel_status fail_va(sql_session *s, int32_t location,
                           keel_status status, const char *sqlstate,
                           const char *fmt, va_list ap)
{
    sql_error *e = s->err;

    if (e == NULL)
        return status;
    memset(e, 0, sizeof(*e));
    snprintf(e->severity, sizeof(e->severity), "ERROR");
    memcpy(e->sqlstate, sqlstate, 5);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    if (s->arena.refused && strcmp(e->sqlstate, "53200") == 0)
        snprintf(e->detail, sizeof(e->detail),
                 "The statement needed more than statement_memory_limit "
                 "(%zu kB).",
                 s->arena.limit / 1024);
    if (location >= 0 && s->text != NULL)
        e->position = (uint32_t)sql_parse_location(s, location) + 1;
    return status == KEEL_OK ? KEEL_EINVAL : status;
}

keel_status sql_fail(sql_session *s, keel_status status, const char *sqlstate,
                     const char *fmt, ...)
{
    va_list ap;
    keel_status rc;

    va_start(ap, fmt);
    rc = fail_va(s, -1, status, sqlstate, fmt, ap);
    va_end(ap);
    return rc;
}

keel_status sql_fail_at(sql_session *s, int32_t location, keel_status status,
                        const char *sqlstate, const char *fmt, ...)
{
    va_list ap;
    keel_status rc;

    va_start(ap, fmt);
    rc = fail_va(s, location, status, sqlstate, fmt, ap);
    va_end(ap);
    return rc;
}

/* The SQLSTATE for an engine status, where its message tells no more. */
static const char *engine_sqlstate(keel_status st, const char *msg)
{
    switch (st) {
    case KEEL_ESERIALIZE:
        return "40001"; /* serialization_failure */
    case KEEL_EUNIQUE:
        return "23505"; /* unique_violation */
    case KEEL_ENOENT:
        if (strstr(msg, "column") != NULL)
            return "42703"; /* undefined_column */
        if (strstr(msg, "schema") != NULL)
            return "3F000"; /* invalid_schema_name */
        if (strstr(msg, "index") != NULL)
            return "42704"; /* undefined_object */
        return "42P01";     /* undefined_table */
    case KEEL_EEXIST:
        if (strstr(msg, "schema") != NULL)
            return "42P06"; /* duplicate_schema */
        if (strstr(msg, "column") != NULL)
            return "42701"; /* duplicate_column */
        return "42P07";     /* duplicate_table */
    case KEEL_ETYPE:
        if (strstr(msg, "null") != NULL)
            return "23502"; /* not_null_violation */
        return "22000";     /* data_exception */
    case KEEL_ETOOBIG:
        if (strstr(msg, "char(") != NULL || strstr(msg, "too long") != NULL)
            return "22001"; /* string_data_right_truncation */
        if (strstr(msg, "name") != NULL)
            return "42622"; /* name_too_long */
        return "54000";     /* program_limit_exceeded */
    case KEEL_EREADONLY:
        return "25006"; /* read_only_sql_transaction */
    case KEEL_ENOMEM:
        return "53200"; /* out_of_memory */
    case KEEL_ENOSPC:
        return "53100"; /* disk_full */
    case KEEL_EIO:
        return "58030"; /* io_error */
    case KEEL_ECORRUPT:
        return "XX001"; /* data_corrupted */
    case KEEL_EEXHAUSTED:
        return "53000"; /* insufficient_resources */
    case KEEL_EBUSY:
        return "55006"; /* object_in_use */
    case KEEL_ELOCKTIMEOUT:
        return "55P03"; /* lock_not_available */
    case KEEL_EDEADLOCK:
        return "40P01"; /* deadlock_detected */
    case KEEL_ECHANGED:
        return "40001"; /* serialization_failure */
    case KEEL_EINVAL:
        if (strstr(msg, "not a user table") != NULL)
            return "42809"; /* wrong_object_type */
        return "XX000";
    case KEEL_EVERSION:
        return "XX000";
    case KEEL_EEOF:
        return "XX000";
    default:
        return "XX000"; /* internal_error */
    }
}

keel_status sql_fail_engine(sql_session *s, keel_status status)
{
    const char *msg = keel_session_error(s->ks);
    const char *key;
    keel_status rc;

    if (status == KEEL_ESERIALIZE) {
        /* PostgreSQL's words; the engine's, naming the row and the
         * transaction, as the detail. */
        rc = sql_fail(s, status, "40001",
                      "could not serialize access due to concurrent update");
        if (s->err != NULL)
            snprintf(s->err->detail, sizeof(s->err->detail), "%s", msg);
        return rc;
    }
    if (status == KEEL_EUNIQUE && (key = strstr(msg, ": Key (")) != NULL) {
        rc = sql_fail(s, status, "23505", "%.*s", (int)(key - msg), msg);
        if (s->err != NULL)
            snprintf(s->err->detail, sizeof(s->err->detail), "%s", key + 2);
        return rc;
    }
    return sql_fail(s, status, engine_sqlstate(status, msg), "%s",
                    msg[0] != '\0' ? msg : keel_status_str(status));
}

keel_status sql_unsupported(sql_session *s, int32_t location, const char *what)
{
    return sql_fail_at(s, location, KEEL_EINVAL, "0A000",
                       "%s is not supported yet", what);
}

keel_status sql_check_cancel(sql_session *s)
{
    if (atomic_load_explicit(&s->cancel, memory_order_relaxed) == 0 &&
        s->stmt_deadline_ns == 0)
        return KEEL_OK;
    if (atomic_load_explicit(&s->cancel, memory_order_relaxed) != 0) {
        atomic_store_explicit(&s->cancel, 0, memory_order_relaxed);
        return sql_fail(s, KEEL_EINVAL, "57014",
                        "canceling statement due to user request");
    }
    if (clock_now_ns() < s->stmt_deadline_ns)
        return KEEL_OK;
    s->stmt_deadline_ns = 0;
    return sql_fail(s, KEEL_EINVAL, "57014",
                    "canceling statement due to statement timeout");
}

/* A statement starts: statement_timeout's clock with it. */
static void statement_start(sql_session *s)
{
    sql_arena_reset(&s->cte_arena);
    s->cte_arena.limit = s->arena.limit;
    s->ncte_changed = 0;
    s->subquery_depth = 0;
    atomic_store_explicit(&s->cancel, 0, memory_order_relaxed);
    s->stmt_deadline_ns =
        s->stmt_timeout_ms == 0
            ? 0
            : clock_now_ns() + (uint64_t)s->stmt_timeout_ms * 1000000u;
}

void sql_cancel(sql_session *s)
{
    atomic_store_explicit(&s->cancel, 1, memory_order_relaxed);
}

/* ---- settings ---------------------------------------------------------- */

/*
 * The settings a session knows, with their defaults.  Those a client
 * cannot change are reported at startup and shown, and SET of them fails
 * (55P02 as PostgreSQL's "cannot be changed now").
 */
typedef struct setting_def {
    const char *name;
    const char *def;
    bool fixed;    /* cannot be SET */
    bool reported; /* sent as ParameterStatus at startup and on change */
    bool restart;  /* fixed until the server restarts (else for good) */
} setting_def;

static const setting_def settings[] = {
    {"server_version", "15.0 (keel " KEEL_VERSION_STRING ")", true, true,
     false},
    {"server_version_num", "150000", true, false, false},
    {"server_encoding", "UTF8", true, true, false},
    {"client_encoding", "UTF8", false, true, false},
    {"DateStyle", "ISO, MDY", false, true, false},
    {"IntervalStyle", "postgres", false, true, false},
    {"TimeZone", "UTC", false, true, false},
    {"integer_datetimes", "on", true, true, false},
    {"standard_conforming_strings", "on", false, true, false},
    {"is_superuser", "on", true, true, false},
    {"session_authorization", "", true, true, false},
    {"application_name", "", false, true, false},
    {"default_transaction_isolation", "read committed", false, false, false},
    {"search_path", "\"$user\", public", false, false, false},
    {"extra_float_digits", "1", false, false, false},
    {"statement_timeout", "0", false, false, false},
    {"lock_timeout", "0", false, false, false},
    {"idle_in_transaction_session_timeout", "0", false, false, false},
    {"client_min_messages", "notice", false, false, false},
    {"bytea_output", "hex", false, false, false},
    {"synchronous_commit", "on", false, false, false},
    {"work_mem", "4MB", false, false, false},
    {"statement_memory_limit", "", false, false, false}, /* at start */
    {"max_identifier_length", "63", true, false, false},
    {"shared_buffers", "", true, false, true}, /* the pool's, at start */
    /* What libpq's PQencryptPasswordConn() (psql's \password) asks. */
    {"password_encryption", "scram-sha-256", true, false, false},
    {"catalog_cache_prune_min_age", "300", false, false, false},
    {"catalog_cache_memory_target", "4096", false, false, false},
    {"parse_cache_entries", "64", false, false, false},
    {"user", "", true, false, false},
    {"database", "", true, false, false},
    /* What pg_dump's output sets first: checked, and otherwise keel's
     * way already (no function bodies, no xml, no row security
     * policies, one tablespace and one table access method). */
    {"check_function_bodies", "on", false, false, false},
    {"xmloption", "content", false, false, false},
    {"row_security", "on", false, false, false},
    {"default_tablespace", "", false, false, false},
    {"default_table_access_method", "heap", false, false, false},
};

/* SET of a setting a session cannot change: PostgreSQL's words. */
static keel_status fixed_setting(sql_session *s, const setting_def *d)
{
    return sql_fail(s, KEEL_EINVAL, "55P02",
                    d->restart ? "parameter \"%s\" cannot be changed without "
                                 "restarting the server"
                               : "parameter \"%s\" cannot be changed",
                    d->name);
}

static const setting_def *setting_find_def(const char *name)
{
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
        if (strcasecmp(settings[i].name, name) == 0)
            return &settings[i];
    return NULL;
}

static sql_setting *setting_find(const sql_session *s, const char *name)
{
    for (sql_setting *x = s->settings; x != NULL; x = x->next)
        if (strcasecmp(x->name, name) == 0)
            return x;
    return NULL;
}

const char *sql_setting_get(const sql_session *s, const char *name)
{
    const sql_setting *x = setting_find(s, name);

    return x != NULL ? x->value : "";
}

/* Sets a known setting's value (and its RESET value when startup). */
static keel_status setting_put(sql_session *s, const char *name,
                               const char *value, bool startup)
{
    sql_setting *x = setting_find(s, name);
    char *v;

    /* a zone is kept under the name setting_apply() found it by */
    if (strcasecmp(name, "TimeZone") == 0 && s->tz_name[0] != '\0')
        value = s->tz_name;
    v = strdup(value);
    if (v == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (x == NULL) {
        x = calloc(1, sizeof(*x));
        if (x == NULL) {
            free(v);
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        }
        snprintf(x->name, sizeof(x->name), "%s", name);
        x->next = s->settings;
        s->settings = x;
    }
    free(x->value);
    x->value = v;
    s->settings_version++;
    if (startup || x->reset_to == NULL) {
        char *r = strdup(value);
        if (r == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        free(x->reset_to);
        x->reset_to = r;
    }
    return KEEL_OK;
}

/* ---- settings in transactions ------------------------------------------ */

/*
 * As PostgreSQL's: a SET in a transaction is undone if the transaction
 * aborts, a SET LOCAL lasts until it ends either way, ROLLBACK TO a
 * savepoint undoes what was set since, and RELEASE hands it to the level
 * around.  Each change notes, once per setting and nesting level (1 the
 * transaction, then one per savepoint), the value before the level first
 * changed it and what the level did: SET, SET LOCAL, or a SET a later
 * SET LOCAL masks, whose value a commit keeps.
 */
enum { SAVE_SET, SAVE_LOCAL, SAVE_SET_LOCAL };

static uint32_t setting_level(const sql_session *s)
{
    return 1 + s->nsavepoints;
}

static sql_setting_save *save_at(sql_session *s, const char *name,
                                 uint32_t level)
{
    for (uint32_t i = 0; i < s->nsaves; i++)
        if (s->saves[i].level == level &&
            strcasecmp(s->saves[i].name, name) == 0)
            return &s->saves[i];
    return NULL;
}

static void save_remove(sql_session *s, uint32_t i)
{
    free(s->saves[i].prior);
    free(s->saves[i].masked);
    s->saves[i] = s->saves[--s->nsaves];
}

/* Notes what undoing the change of name about to be made (by SET LOCAL
 * if local) needs.  53200 out of memory, with nothing changed. */
static keel_status setting_save(sql_session *s, const char *name, bool local)
{
    uint32_t level = setting_level(s);
    sql_setting_save *v = save_at(s, name, level);
    const char *cur = sql_setting_get(s, name);
    char *copy;

    if (v != NULL && (!local || v->state != SAVE_SET)) {
        if (!local) {
            free(v->masked);
            v->masked = NULL;
            v->state = SAVE_SET;
        }
        return KEEL_OK;
    }
    if ((copy = strdup(cur)) == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (v != NULL) { /* a SET, now masked by a SET LOCAL */
        v->masked = copy;
        v->state = SAVE_SET_LOCAL;
        return KEEL_OK;
    }
    if (s->nsaves == s->saves_cap) {
        uint32_t cap = s->saves_cap ? 2 * s->saves_cap : 8;
        sql_setting_save *n = realloc(s->saves, cap * sizeof(*n));
        if (n == NULL) {
            free(copy);
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        }
        s->saves = n;
        s->saves_cap = cap;
    }
    v = &s->saves[s->nsaves++];
    memset(v, 0, sizeof(*v));
    snprintf(v->name, sizeof(v->name), "%s", name);
    v->level = level;
    v->state = local ? SAVE_LOCAL : SAVE_SET;
    v->prior = copy;
    return KEEL_OK;
}

static keel_status setting_apply(sql_session *s, const char *name,
                                 const char *value);

/* Gives name a value it held before: it applies again as it did. */
static void setting_restore(sql_session *s, const char *name,
                            const char *value)
{
    const setting_def *d = setting_find_def(name);
    sql_error *err = s->err;

    s->err = NULL;
    if (d != NULL)
        (void)setting_apply(s, d->name, value);
    (void)setting_put(s, d != NULL ? d->name : name, value, false);
    s->err = err;
}

static uint32_t saves_top(const sql_session *s)
{
    uint32_t top = 0;

    for (uint32_t i = 0; i < s->nsaves; i++)
        if (s->saves[i].level > top)
            top = s->saves[i].level;
    return top;
}

/* Undoes the changes of levels level and up, the highest first. */
static void settings_undo(sql_session *s, uint32_t level)
{
    for (uint32_t top = saves_top(s); top >= level && top > 0; top--)
        for (uint32_t i = s->nsaves; i > 0; i--)
            if (s->saves[i - 1].level == top) {
                setting_restore(s, s->saves[i - 1].name,
                                s->saves[i - 1].prior);
                save_remove(s, i - 1);
            }
}

/* Hands the changes of levels level and up to level - 1 (RELEASE), the
 * highest first, each into the one below. */
static void settings_release(sql_session *s, uint32_t level)
{
    for (uint32_t top = saves_top(s); top >= level && top > 1; top--)
        for (uint32_t i = s->nsaves; i > 0; i--) {
            sql_setting_save *e = &s->saves[i - 1], *p;
            if (e->level != top)
                continue;
            p = save_at(s, e->name, top - 1);
            if (p == NULL) {
                e->level = top - 1;
                continue;
            }
            /* p keeps its prior; what e did is done at p's level now. */
            if (e->state == SAVE_SET) {
                free(p->masked);
                p->masked = NULL;
                p->state = SAVE_SET;
            } else if (e->state == SAVE_SET_LOCAL) {
                free(p->masked);
                p->masked = e->masked;
                e->masked = NULL;
                p->state = SAVE_SET_LOCAL;
            } else if (p->state == SAVE_SET) {
                p->masked = e->prior; /* the SET's value, which e masked */
                e->prior = NULL;
                p->state = SAVE_SET_LOCAL;
            }
            save_remove(s, i - 1);
        }
}

/* The transaction ends: a commit keeps what SET set and undoes SET
 * LOCAL; an abort undoes both. */
static void settings_end(sql_session *s, bool commit)
{
    if (!commit) {
        settings_undo(s, 1);
        return;
    }
    settings_release(s, 2);
    while (s->nsaves > 0) {
        sql_setting_save *v = &s->saves[s->nsaves - 1];
        if (v->state != SAVE_SET)
            setting_restore(s, v->name,
                            v->state == SAVE_LOCAL ? v->prior : v->masked);
        save_remove(s, s->nsaves - 1);
    }
}

/* A time setting's units, in milliseconds, largest first (PostgreSQL's
 * for a setting kept in ms). */
static const struct {
    const char *unit;
    double ms;
} time_units[] = {{"d", 86400000.0}, {"h", 3600000.0}, {"min", 60000.0},
                  {"s", 1000.0},     {"ms", 1.0},       {"us", 0.001}};

/*
 * A time setting's value in milliseconds, as PostgreSQL reads one: a
 * number (fractions rounded) with an optional unit (us, ms, s, min, h, d;
 * ms without one), from 0 to INT32_MAX ms.  22023 otherwise.
 */
static keel_status setting_ms(sql_session *s, const char *name,
                              const char *value, int64_t *out)
{
    char *end;
    double v = strtod(value, &end), ms = v;
    bool ok = end != value && v == v; /* a number, not NaN */

    while (ok && *end == ' ')
        end++;
    if (ok && *end != '\0') {
        ok = false;
        for (size_t i = 0; i < sizeof(time_units) / sizeof(time_units[0]); i++)
            if (strcmp(end, time_units[i].unit) == 0) {
                ms = v * time_units[i].ms;
                ok = true;
            }
    }
    if (!ok)
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "invalid value for parameter \"%s\": \"%s\"", name,
                        value);
    if (ms < -0.5 || ms + 0.5 > (double)INT32_MAX)
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "%.0f ms is outside the valid range for parameter "
                        "\"%s\" (0 .. %d)",
                        ms, name, INT32_MAX);
    *out = ms < 0 ? 0 : (int64_t)(ms + 0.5);
    return KEEL_OK;
}

/*
 * A memory setting's value in kB, as PostgreSQL reads one: an integer
 * with an optional unit (kB, MB, GB, TB; kB without one), from 1024 to
 * INT32_MAX kB.  22023 otherwise.
 */
static keel_status setting_kb(sql_session *s, const char *name,
                              const char *value, int64_t *out)
{
    static const struct {
        const char *unit;
        int64_t kb;
    } units[] = {{"kB", 1}, {"MB", 1024}, {"GB", 1024 * 1024},
                 {"TB", 1024 * 1024 * 1024}};
    char *end;
    long long v = strtoll(value, &end, 10);
    int64_t kb = v > INT32_MAX ? INT64_MAX : v;
    bool ok = end != value && v >= 0;

    while (ok && *end == ' ')
        end++;
    if (ok && *end != '\0') {
        ok = false;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (strcmp(end, units[i].unit) == 0) {
                ok = true;
                kb = v > INT32_MAX ? INT64_MAX : v * units[i].kb;
            }
    }
    if (!ok)
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "invalid value for parameter \"%s\": \"%s\"", name,
                        value);
    if (kb < 1024 || kb > INT32_MAX)
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "%lld kB is outside the valid range for parameter "
                        "\"%s\" (1024 .. %d)",
                        (long long)kb, name, INT32_MAX);
    *out = kb;
    return KEEL_OK;
}

/* A time setting's value as SHOW prints it: in the largest unit that
 * holds it whole, as PostgreSQL does ("0" for none). */
static void setting_ms_text(int64_t ms, char *buf, size_t len)
{
    if (ms == 0) {
        snprintf(buf, len, "0");
        return;
    }
    for (size_t i = 0; i < 5; i++)
        if (ms % (int64_t)time_units[i].ms == 0) {
            snprintf(buf, len, "%lld%s",
                     (long long)(ms / (int64_t)time_units[i].ms),
                     time_units[i].unit);
            return;
        }
}

/*
 * Checks and applies a value for one of keel's own settings (the catalog
 * cache's); others are kept as text.  22023 for a bad value.
 */
/*
 * An isolation level by its SQL name: 1 read committed (and read
 * uncommitted, which PostgreSQL runs as read committed), 0 repeatable
 * read; -1 with the error set for serializable (0A000) and unknown names.
 */
static int isolation_level(sql_session *s, const char *v, int32_t location)
{
    if (strcasecmp(v, "read committed") == 0 ||
        strcasecmp(v, "read uncommitted") == 0)
        return 1;
    if (strcasecmp(v, "repeatable read") == 0)
        return 0;
    if (strcasecmp(v, "serializable") == 0)
        sql_unsupported(s, location, "isolation level serializable");
    else
        sql_fail_at(s, location, KEEL_EINVAL, "22023",
                    "invalid value for parameter "
                    "\"default_transaction_isolation\": \"%s\"",
                    v);
    return -1;
}

static keel_status setting_apply(sql_session *s, const char *name,
                                 const char *value)
{
    char *end;
    long long n;

    if (strcasecmp(name, "client_encoding") == 0) {
        if (strcasecmp(value, "UTF8") != 0 && strcasecmp(value, "UTF-8") != 0 &&
            strcasecmp(value, "unicode") != 0)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "client_encoding \"%s\" is not supported: keel "
                            "speaks UTF8 only",
                            value);
        return KEEL_OK;
    }
    if (strcasecmp(name, "synchronous_commit") == 0) {
        bool on;
        if (strcasecmp(value, "off") == 0 || strcasecmp(value, "false") == 0 ||
            strcasecmp(value, "0") == 0)
            on = false;
        else if (strcasecmp(value, "on") == 0 || strcasecmp(value, "true") == 0 ||
                 strcasecmp(value, "1") == 0 || strcasecmp(value, "local") == 0 ||
                 strcasecmp(value, "remote_write") == 0 ||
                 strcasecmp(value, "remote_apply") == 0)
            on = true;
        else
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "invalid value for parameter \"synchronous_commit\": "
                            "\"%s\"",
                            value);
        keel_session_set_synchronous_commit(s->ks, on);
        return KEEL_OK;
    }
    if (strcasecmp(name, "TimeZone") == 0) {
        sql_tz z;
        if (!sql_tz_load(s, value, &z))
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "invalid value for parameter \"TimeZone\": "
                            "\"%s\"",
                            value);
        s->tz_store = z;
        s->tz = sql_tz_is_utc(&z) ? NULL : &s->tz_store;
        snprintf(s->tz_name, sizeof(s->tz_name), "%s", z.name);
        return KEEL_OK;
    }
    if (strcasecmp(name, "default_transaction_isolation") == 0) {
        int level = isolation_level(s, value, -1);
        if (level < 0)
            return KEEL_EINVAL;
        s->default_rc = level != 0;
        return KEEL_OK;
    }
    if (strcasecmp(name, "parse_cache_entries") == 0) {
        n = strtoll(value, &end, 10);
        if (end == value || *end != '\0' || n < 0 || n > 4096)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "invalid value for parameter \"%s\": \"%s\" "
                            "(0 to 4096 entries)",
                            name, value);
        sql_parse_cache_resize(s, (uint32_t)n);
        return KEEL_OK;
    }
    if (strcasecmp(name, "lock_timeout") == 0) {
        int64_t ms;
        keel_status rc = setting_ms(s, name, value, &ms);
        if (rc == KEEL_OK)
            keel_session_set_lock_timeout(s->ks, (uint32_t)ms);
        return rc;
    }
    if (strcasecmp(name, "statement_memory_limit") == 0) {
        int64_t kb = 0;
        keel_status rc = setting_kb(s, name, value, &kb);
        if (rc == KEEL_OK)
            s->arena.limit = (size_t)kb * 1024;
        return rc;
    }
    if (strcasecmp(name, "statement_timeout") == 0) {
        int64_t ms;
        keel_status rc = setting_ms(s, name, value, &ms);
        if (rc == KEEL_OK)
            s->stmt_timeout_ms = (uint32_t)ms;
        return rc;
    }
    if (strcasecmp(name, "check_function_bodies") == 0 ||
        strcasecmp(name, "row_security") == 0 ||
        strcasecmp(name, "xmloption") == 0 ||
        strcasecmp(name, "default_tablespace") == 0 ||
        strcasecmp(name, "default_table_access_method") == 0) {
        static const char *const ok[][7] = {
            {"on", "off", "true", "false", "yes", "no", NULL},
            {"content", "document", NULL},
            {"", "pg_default", NULL},
            {"heap", NULL},
        };
        int k = strcasecmp(name, "xmloption") == 0            ? 1
                : strcasecmp(name, "default_tablespace") == 0 ? 2
                : strcasecmp(name, "default_table_access_method") == 0
                    ? 3
                    : 0;
        for (int i = 0; ok[k][i] != NULL; i++)
            if (strcasecmp(value, ok[k][i]) == 0)
                return KEEL_OK;
        if (k == 0 && (strcmp(value, "1") == 0 || strcmp(value, "0") == 0))
            return KEEL_OK;
        if (k == 0)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "parameter \"%s\" requires a Boolean value",
                            name);
        {
            keel_status rc = sql_fail(
                s, KEEL_EINVAL, "22023",
                "invalid value for parameter \"%s\": \"%s\"", name, value);
            if (k >= 2 && s->err != NULL)
                snprintf(s->err->detail, sizeof(s->err->detail),
                         "%s \"%s\" does not exist.",
                         k == 2 ? "Tablespace" : "Table access method", value);
            else if (s->err != NULL)
                snprintf(s->err->hint, sizeof(s->err->hint),
                         "Available values: content, document.");
            return rc;
        }
    }
    if (strcasecmp(name, "catalog_cache_prune_min_age") != 0 &&
        strcasecmp(name, "catalog_cache_memory_target") != 0)
        return KEEL_OK;
    n = strtoll(value, &end, 10);
    if (end == value || *end != '\0' || n < -1 || n > INT32_MAX)
        return sql_fail(s, KEEL_EINVAL, "22023",
                        "invalid value for parameter \"%s\": \"%s\"", name,
                        value);
    {
        int32_t age = atoi(sql_setting_get(s, "catalog_cache_prune_min_age"));
        uint64_t target =
            (uint64_t)atoll(sql_setting_get(s, "catalog_cache_memory_target")) *
            1024;
        keel_status rc;
        if (strcasecmp(name, "catalog_cache_prune_min_age") == 0)
            age = (int32_t)n;
        else if (n < 0)
            return sql_fail(s, KEEL_EINVAL, "22023",
                            "catalog_cache_memory_target must be at least 0");
        else
            target = (uint64_t)n * 1024;
        rc = keel_session_set_cache_options(s->ks, age, target);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    return KEEL_OK;
}

/* ---- sessions ---------------------------------------------------------- */

keel_status sql_init(void)
{
    return KEEL_OK;
}

/* statement_memory_limit's default, in MB. */
static unsigned long long statement_memory_default_mb(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    unsigned long long mb =
        pages > 0 && page > 0
            ? (unsigned long long)pages * (unsigned long long)page / 4 >> 20
            : 0;

    if (mb > (unsigned long long)INT32_MAX >> 10)
        mb = (unsigned long long)INT32_MAX >> 10;
    return mb < 256 ? 256 : mb;
}

keel_status sql_session_create(keel_db *db, sql_session **out, sql_error *err)
{
    sql_session *s = calloc(1, sizeof(*s));
    keel_error ke = {0};
    keel_status rc;

    *out = NULL;
    if (s != NULL) {
        s->next_iso = -1;
        s->default_rc = true;
        s->cte_running = -1;
    }
    if (s == NULL)
        goto nomem;
    s->db = db;
    s->err = err;
    s->pcache_limit = 64; /* parse_cache_entries' default */
    if (sql_stat_register(s) != KEEL_OK) {
        free(s);
        goto nomem;
    }
    {
        /* random(): each session its own sequence. */
        uint64_t seed = (uint64_t)sql_now_us() ^ (uint64_t)(uintptr_t)s;
        s->rand_state[0] = (unsigned short)seed;
        s->rand_state[1] = (unsigned short)(seed >> 16);
        s->rand_state[2] = (unsigned short)(seed >> 32);
    }
    rc = keel_session_begin(db, &s->ks, &ke);
    if (rc != KEEL_OK) {
        sql_stat_unregister(s);
        free(s);
        return sql_fail(&(sql_session){.err = err}, rc,
                        rc == KEEL_EEXHAUSTED ? "53300" : engine_sqlstate(rc, ke.msg),
                        rc == KEEL_EEXHAUSTED ? "sorry, too many clients already"
                                              : "%s",
                        ke.msg);
    }
    keel_session_set_value_text(s->ks, sql_value_keel_text, s);
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
        if (setting_put(s, settings[i].name, settings[i].def, true) != KEEL_OK) {
            sql_session_destroy(s);
            goto nomem;
        }
    {
        char mb[32];
        snprintf(mb, sizeof(mb), "%uMB", keel_db_pool_mb(db));
        if (setting_put(s, "shared_buffers", mb, true) != KEEL_OK) {
            sql_session_destroy(s);
            goto nomem;
        }
        /* A quarter of the machine's memory, at least 256MB: a query
         * that would take more (a recursion that never ends) fails
         * rather than the server. */
        snprintf(mb, sizeof(mb), "%lluMB", statement_memory_default_mb());
        s->arena.limit = (size_t)statement_memory_default_mb() << 20;
        if (setting_put(s, "statement_memory_limit", mb, true) != KEEL_OK) {
            sql_session_destroy(s);
            goto nomem;
        }
    }
    *out = s;
    return KEEL_OK;
nomem:
    if (err != NULL) {
        memset(err, 0, sizeof(*err));
        snprintf(err->severity, sizeof(err->severity), "FATAL");
        memcpy(err->sqlstate, "53200", 5);
        snprintf(err->message, sizeof(err->message), "out of memory");
    }
    return KEEL_ENOMEM;
}

void sql_session_destroy(sql_session *s)
{
    if (s == NULL)
        return;
    sql_stat_unregister(s);
    if (s->in_txn)
        keel_abort(s->ks);
    keel_session_end(s->ks);
    while (s->settings != NULL) {
        sql_setting *next = s->settings->next;
        free(s->settings->value);
        free(s->settings->reset_to);
        free(s->settings);
        s->settings = next;
    }
    while (s->portals != NULL)
        sql_close(s, 'P', s->portals->name);
    while (s->stmts != NULL)
        sql_close(s, 'S', s->stmts->name);
    free(s->param_types);
    free(s->savepoints);
    sql_sequences_free(s);
    while (s->nsaves > 0)
        save_remove(s, s->nsaves - 1);
    free(s->saves);
    sql_defaults_free(s);
    sql_fk_free(s);
    sql_parse_cache_free(s);
    sql_arena_free(&s->arena);
    sql_arena_free(&s->cte_arena);
    free(s);
}

/*
 * The startup packet's "options" (libpq's PGOPTIONS): words split at
 * spaces (a backslash keeps the next character), each "-c name=value",
 * "-cname=value" or "--name=value", as PostgreSQL reads them.  Anything
 * else fails with 42601 naming the word.
 */
static keel_status startup_options(sql_session *s, const char *options,
                                   sql_error *err)
{
    size_t n = strlen(options), i = 0;
    char *word = malloc(n + 1);
    bool want_c = false;
    keel_status rc = KEEL_OK;

    if (word == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    while (rc == KEEL_OK) {
        size_t w = 0;
        const char *setting;
        char *eq;
        while (i < n && (options[i] == ' ' || options[i] == '\t'))
            i++;
        if (i >= n)
            break;
        while (i < n && options[i] != ' ' && options[i] != '\t') {
            if (options[i] == '\\' && i + 1 < n)
                i++;
            word[w++] = options[i++];
        }
        word[w] = '\0';
        if (want_c) {
            setting = word;
            want_c = false;
        } else if (strcmp(word, "-c") == 0) {
            want_c = true;
            continue;
        } else if (strncmp(word, "-c", 2) == 0) {
            setting = word + 2;
        } else if (strncmp(word, "--", 2) == 0) {
            setting = word + 2;
        } else {
            rc = sql_fail(s, KEEL_EINVAL, "42601",
                          "invalid command-line argument for server "
                          "process: %s",
                          word);
            break;
        }
        eq = strchr(setting, '=');
        if (eq == NULL || eq == setting) {
            rc = sql_fail(s, KEEL_EINVAL, "42601",
                          "-c %s requires a value", setting);
            break;
        }
        *eq = '\0';
        for (char *p = (char *)setting; *p != '\0'; p++)
            if (*p == '-')
                *p = '_';
        rc = sql_set_startup(s, setting, eq + 1, err);
    }
    if (rc == KEEL_OK && want_c)
        rc = sql_fail(s, KEEL_EINVAL, "42601",
                      "-c requires a name=value argument");
    free(word);
    return rc;
}

keel_status sql_set_startup(sql_session *s, const char *name,
                            const char *value, sql_error *err)
{
    const setting_def *d = setting_find_def(name);
    keel_status rc;

    s->err = err;
    if (strcmp(name, "user") == 0) {
        rc = setting_put(s, "user", value, true);
        if (rc == KEEL_OK)
            rc = setting_put(s, "session_authorization", value, true);
        return rc;
    }
    if (strcmp(name, "options") == 0)
        return startup_options(s, value, err);
    if (strcmp(name, "database") == 0 || strcmp(name, "replication") == 0)
        return strcmp(name, "database") == 0 ? setting_put(s, name, value, true)
                                             : KEEL_OK;
    if (d == NULL)
        return sql_fail(s, KEEL_ENOENT, "42704",
                        "unrecognized configuration parameter \"%s\"", name);
    if (d->fixed)
        return fixed_setting(s, d);
    rc = setting_apply(s, d->name, value);
    if (rc == KEEL_OK)
        rc = setting_put(s, d->name, value, true);
    return rc;
}

uint64_t sql_settings_version(const sql_session *s)
{
    return s->settings_version;
}

void sql_report_parameters(sql_session *s,
                           void (*fn)(void *ctx, const char *name,
                                      const char *value),
                           void *ctx)
{
    for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
        if (settings[i].reported)
            fn(ctx, settings[i].name, sql_setting_get(s, settings[i].name));
}

char sql_txn_status(const sql_session *s)
{
    switch (s->block) {
    case SQL_BLOCK_OPEN:
        return 'T';
    case SQL_BLOCK_FAILED:
        return 'E';
    default:
        return 'I';
    }
}

keel_status sql_complete_count(sql_session *s, const char *verb, uint64_t n)
{
    char tag[64];
    size_t len = strlen(verb);
    int d;

    if (len > sizeof(tag) - 23)
        len = sizeof(tag) - 23;
    memcpy(tag, verb, len);
    tag[len++] = ' ';
    d = n > INT64_MAX ? snprintf(tag + len, 21, "%llu", (unsigned long long)n)
                      : sql_format_int((int64_t)n, tag + len);
    tag[len + (size_t)d] = '\0';
    if (s->fkq != NULL && s->fkq->sink == s->sink) {
        /* sent once the foreign keys' checks are done (sql_fkey.c) */
        memcpy(s->fkq->tag, tag, sizeof(tag));
        s->fkq->held = true;
        return KEEL_OK;
    }
    if (s->sink->complete(s->sink->ctx, tag) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return KEEL_OK;
}

keel_status sql_complete(sql_session *s, const char *fmt, ...)
{
    char tag[64];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(tag, sizeof(tag), fmt, ap);
    va_end(ap);
    if (s->sink->complete(s->sink->ctx, tag) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return KEEL_OK;
}

keel_status sql_notice(sql_session *s, const char *sqlstate, const char *fmt,
                       ...)
{
    char msg[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (s->sink->notice != NULL &&
        s->sink->notice(s->sink->ctx, "NOTICE", sqlstate, msg) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return KEEL_OK;
}

static keel_status notice(sql_session *s, const char *severity,
                          const char *sqlstate, const char *msg)
{
    if (s->sink->notice != NULL &&
        s->sink->notice(s->sink->ctx, severity, sqlstate, msg) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    return KEEL_OK;
}

/* ---- utility statements ------------------------------------------------ */

static keel_status txn_begin(sql_session *s)
{
    keel_status rc;
    int iso = s->next_iso;

    if (s->in_txn)
        return KEEL_OK;
    if (iso < 0)
        iso = s->default_rc;
    s->next_iso = -1;
    s->txn_rc = iso != 0;
    s->txn_ran = false;
    keel_set_isolation(s->ks, s->txn_rc ? KEEL_READ_COMMITTED
                                        : KEEL_REPEATABLE_READ);
    /* the foreign keys' epoch as of before the snapshot (sql_fkey.c) */
    s->fk_snap_epoch = sql_fk_epoch();
    rc = keel_begin(s->ks);
    if (rc != KEEL_OK)
        return sql_fail_engine(s, rc);
    s->in_txn = true;
    s->txn_start_us = sql_now_us();
    return KEEL_OK;
}

static void txn_abort(sql_session *s);

static keel_status txn_commit(sql_session *s)
{
    keel_status rc = KEEL_OK;

    s->nsavepoints = 0;
    if (s->in_txn) {
        /* the foreign keys' deferred checks first (sql_fkey.c): one that
         * fails rolls the transaction back */
        rc = sql_fk_commit_checks(s);
        if (rc != KEEL_OK) {
            txn_abort(s);
            return rc;
        }
        s->in_txn = false;
        rc = keel_commit(s->ks);
        if (rc != KEEL_OK)
            rc = sql_fail_engine(s, rc);
        sql_fk_txn_end(s, rc == KEEL_OK);
    }
    settings_end(s, rc == KEEL_OK);
    return rc;
}

static void txn_abort(sql_session *s)
{
    s->nsavepoints = 0;
    if (s->in_txn) {
        keel_abort(s->ks);
        s->in_txn = false;
        sql_fk_txn_end(s, false);
    }
    settings_end(s, false);
}

/*
 * A statement failed: a block stays failed until its end (or, with a
 * savepoint set, a ROLLBACK TO), and the engine's transaction ends now,
 * unless a savepoint keeps it for that rollback.
 */
static void statement_failed(sql_session *s)
{
    if (s->block != SQL_BLOCK_NONE && s->nsavepoints > 0 && s->in_txn) {
        s->block = SQL_BLOCK_FAILED;
        return;
    }
    txn_abort(s);
    if (s->block == SQL_BLOCK_OPEN)
        s->block = SQL_BLOCK_FAILED;
}

/* The place of the latest savepoint called name (as kept: its first 63
 * bytes), or -1. */
static int64_t savepoint_find(const sql_session *s, const char *name)
{
    for (uint32_t i = s->nsavepoints; i > 0; i--)
        if (strncmp(s->savepoints[i - 1], name, sizeof(s->savepoints[0]) - 1) ==
            0)
            return (int64_t)i - 1;
    return -1;
}

static keel_status savepoint_missing(sql_session *s, const char *name)
{
    return sql_fail(s, KEEL_EINVAL, "3B001", "savepoint \"%s\" does not exist",
                    name);
}

/* SAVEPOINT, RELEASE [SAVEPOINT] and ROLLBACK TO [SAVEPOINT]. */
static keel_status exec_savepoint(sql_session *s,
                                  const PgQuery__TransactionStmt *st)
{
    const char *name = st->savepoint_name != NULL ? st->savepoint_name : "";
    keel_status rc;
    uint32_t level = 0;
    int64_t at;

    if (s->block == SQL_BLOCK_NONE)
        return sql_fail(
            s, KEEL_EINVAL, "25P01", "%s can only be used in transaction blocks",
            st->kind == PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_SAVEPOINT
                ? "SAVEPOINT"
            : st->kind == PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_RELEASE
                ? "RELEASE SAVEPOINT"
                : "ROLLBACK TO SAVEPOINT");
    switch (st->kind) {
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_SAVEPOINT:
        if (s->nsavepoints == s->savepoints_cap) {
            uint32_t cap = s->savepoints_cap ? 2 * s->savepoints_cap : 8;
            char(*n)[64] = realloc(s->savepoints, (size_t)cap * sizeof(*n));
            if (n == NULL)
                return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            s->savepoints = n;
            s->savepoints_cap = cap;
        }
        rc = txn_begin(s);
        if (rc != KEEL_OK)
            return rc;
        rc = keel_savepoint(s->ks, &level);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        /* The engine numbers them as this list does. */
        snprintf(s->savepoints[s->nsavepoints++], sizeof(s->savepoints[0]), "%s",
                 name);
        return sql_complete(s, "SAVEPOINT");
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_RELEASE:
        if ((at = savepoint_find(s, name)) < 0)
            return savepoint_missing(s, name);
        rc = keel_release_savepoint(s->ks, (uint32_t)at + 1);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
        settings_release(s, (uint32_t)at + 2);
        s->nsavepoints = (uint32_t)at;
        return sql_complete(s, "RELEASE");
    default:
        if ((at = savepoint_find(s, name)) < 0)
            return savepoint_missing(s, name);
        rc = keel_rollback_to_savepoint(s->ks, (uint32_t)at + 1);
        if (rc != KEEL_OK) {
            /* What the engine cannot take back leaves the transaction
             * to abort: no savepoint keeps it now. */
            s->nsavepoints = 0;
            return rc == KEEL_EINVAL
                       ? sql_fail(s, rc, "0A000", "%s",
                                  keel_session_error(s->ks))
                       : sql_fail_engine(s, rc);
        }
        settings_undo(s, (uint32_t)at + 2);
        sql_fk_rollback_to(s);
        s->nsavepoints = (uint32_t)at + 1;
        s->block = SQL_BLOCK_OPEN;
        return sql_complete(s, "ROLLBACK");
    }
}

/* The options of BEGIN / START TRANSACTION / SET TRANSACTION: the
 * isolation levels keel gives (read committed, repeatable read) into *iso
 * (left alone if none is named), read write. */
static keel_status txn_options(sql_session *s, PgQuery__Node *const *options,
                               size_t n_options, int *iso)
{
    for (size_t i = 0; i < n_options; i++) {
        const PgQuery__Node *n = options[i];
        const PgQuery__DefElem *d;
        const char *v;
        if (n->node_case != PG_QUERY__NODE__NODE_DEF_ELEM)
            continue;
        d = n->def_elem;
        v = d->arg != NULL && d->arg->node_case == PG_QUERY__NODE__NODE_A_CONST &&
                    d->arg->a_const->val_case == PG_QUERY__A__CONST__VAL_SVAL
                ? d->arg->a_const->sval->sval
                : "";
        if (strcmp(d->defname, "transaction_isolation") == 0) {
            int level = isolation_level(s, v, d->location);
            if (level < 0)
                return KEEL_EINVAL;
            *iso = level;
        }
        if (strcmp(d->defname, "transaction_deferrable") == 0)
            return sql_unsupported(s, d->location, "DEFERRABLE");
    }
    return KEEL_OK;
}

static keel_status exec_transaction(sql_session *s,
                                    const PgQuery__TransactionStmt *st)
{
    keel_status rc;

    switch (st->kind) {
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_BEGIN:
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_START: {
        int iso = -1;
        rc = txn_options(s, st->options, st->n_options, &iso);
        if (rc != KEEL_OK)
            return rc;
        if (s->block != SQL_BLOCK_NONE) {
            rc = notice(s, "WARNING", "25001",
                        "there is already a transaction in progress");
        } else if (s->in_txn) {
            /* statements before it in the same message began the
             * transaction (it becomes the block): a level named now
             * applies to it, as SET TRANSACTION's, before any query */
            if (iso >= 0 && s->txn_ran)
                return sql_fail(s, KEEL_EINVAL, "25001",
                                "SET TRANSACTION ISOLATION LEVEL must be "
                                "called before any query");
            if (iso >= 0) {
                s->txn_rc = iso != 0;
                keel_set_isolation(s->ks, s->txn_rc ? KEEL_READ_COMMITTED
                                                    : KEEL_REPEATABLE_READ);
            }
            s->block = SQL_BLOCK_OPEN;
        } else {
            s->next_iso = (int8_t)iso;
            rc = txn_begin(s);
            if (rc == KEEL_OK)
                s->block = SQL_BLOCK_OPEN;
        }
        return rc != KEEL_OK ? rc : sql_complete(s, "BEGIN");
    }
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_COMMIT:
        if (s->block == SQL_BLOCK_FAILED) {
            s->block = SQL_BLOCK_NONE;
            txn_abort(s);
            return sql_complete(s, "ROLLBACK");
        }
        if (s->block == SQL_BLOCK_NONE) {
            rc = notice(s, "WARNING", "25P01",
                        "there is no transaction in progress");
            return rc != KEEL_OK ? rc : sql_complete(s, "COMMIT");
        }
        s->block = SQL_BLOCK_NONE;
        rc = txn_commit(s);
        return rc != KEEL_OK ? rc : sql_complete(s, "COMMIT");
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK:
        if (s->block == SQL_BLOCK_NONE) {
            rc = notice(s, "WARNING", "25P01",
                        "there is no transaction in progress");
            if (rc != KEEL_OK)
                return rc;
        }
        s->block = SQL_BLOCK_NONE;
        txn_abort(s);
        return sql_complete(s, "ROLLBACK");
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_SAVEPOINT:
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_RELEASE:
    case PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK_TO:
        return exec_savepoint(s, st);
    default:
        return sql_unsupported(s, -1, "two-phase commit");
    }
}

/* The text of a SET's value: a constant's, or a list's joined by ", ". */
static keel_status set_value_text(sql_session *s,
                                  const PgQuery__VariableSetStmt *st,
                                  char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < st->n_args; i++) {
        const PgQuery__Node *n = st->args[i];
        char one[256];
        if (n->node_case == PG_QUERY__NODE__NODE_A_CONST) {
            const PgQuery__AConst *c = n->a_const;
            switch (c->val_case) {
            case PG_QUERY__A__CONST__VAL_IVAL:
                snprintf(one, sizeof(one), "%d", c->ival->ival);
                break;
            case PG_QUERY__A__CONST__VAL_FVAL:
                snprintf(one, sizeof(one), "%s", c->fval->fval);
                break;
            case PG_QUERY__A__CONST__VAL_SVAL:
                snprintf(one, sizeof(one), "%s", c->sval->sval);
                break;
            case PG_QUERY__A__CONST__VAL_BOOLVAL:
                snprintf(one, sizeof(one), "%s",
                         c->boolval->boolval ? "on" : "off");
                break;
            default:
                return sql_unsupported(s, c->location, "this SET value");
            }
        } else if (n->node_case == PG_QUERY__NODE__NODE_TYPE_CAST &&
                   n->type_cast->arg != NULL &&
                   n->type_cast->arg->node_case ==
                       PG_QUERY__NODE__NODE_A_CONST &&
                   n->type_cast->arg->a_const->val_case ==
                       PG_QUERY__A__CONST__VAL_SVAL) {
            /* SET TIME ZONE INTERVAL '...' [HOUR TO MINUTE], which the
             * zone reads as an interval (sql_tz_load()) */
            const PgQuery__TypeName *tn = n->type_cast->type_name;
            const char *ty =
                tn != NULL && tn->n_names > 0
                    ? sql_node_string(tn->names[tn->n_names - 1])
                    : NULL;
            snprintf(one, sizeof(one),
                     ty != NULL && strcmp(ty, "interval") == 0 ? "interval '%s'"
                                                               : "%s",
                     n->type_cast->arg->a_const->sval->sval);
        } else {
            return sql_unsupported(s, -1, "this SET value");
        }
        used += (size_t)snprintf(buf + used, used < size ? size - used : 0,
                                 "%s%s", i > 0 ? ", " : "", one);
    }
    if (used >= size)
        return sql_fail(s, KEEL_ETOOBIG, "22023", "SET value too long");
    return KEEL_OK;
}

static keel_status exec_set(sql_session *s, const PgQuery__VariableSetStmt *st)
{
    const setting_def *d;
    char value[1024];
    keel_status rc;

    switch (st->kind) {
    case PG_QUERY__VARIABLE_SET_KIND__VAR_SET_MULTI: {
        /* SET TRANSACTION / SESSION CHARACTERISTICS: isolation levels. */
        int iso = -1;
        bool session = st->name != NULL &&
                       strcasecmp(st->name, "SESSION CHARACTERISTICS") == 0;
        rc = txn_options(s, st->args, st->n_args, &iso);
        if (rc != KEEL_OK || iso < 0)
            return rc != KEEL_OK ? rc : sql_complete(s, "SET");
        if (session) {
            const char *v = iso ? "read committed" : "repeatable read";
            rc = setting_save(s, "default_transaction_isolation", false);
            if (rc == KEEL_OK)
                rc = setting_put(s, "default_transaction_isolation", v, false);
            if (rc == KEEL_OK)
                s->default_rc = iso != 0;
            return rc != KEEL_OK ? rc : sql_complete(s, "SET");
        }
        if (s->block == SQL_BLOCK_NONE) {
            rc = notice(s, "WARNING", "25P01",
                        "SET TRANSACTION can only be used in transaction "
                        "blocks");
            return rc != KEEL_OK ? rc : sql_complete(s, "SET");
        }
        if (s->txn_ran)
            return sql_fail(s, KEEL_EINVAL, "25001",
                            "SET TRANSACTION ISOLATION LEVEL must be called "
                            "before any query");
        s->txn_rc = iso != 0;
        keel_set_isolation(s->ks, s->txn_rc ? KEEL_READ_COMMITTED
                                            : KEEL_REPEATABLE_READ);
        return sql_complete(s, "SET");
    }
    case PG_QUERY__VARIABLE_SET_KIND__VAR_RESET_ALL:
        for (sql_setting *x = s->settings; x != NULL; x = x->next) {
            d = setting_find_def(x->name);
            if (d == NULL || d->fixed || strcmp(x->value, x->reset_to) == 0)
                continue;
            rc = setting_save(s, d->name, false);
            if (rc == KEEL_OK)
                rc = setting_apply(s, d->name, x->reset_to);
            if (rc == KEEL_OK)
                rc = setting_put(s, d->name, x->reset_to, false);
            if (rc != KEEL_OK)
                return rc;
        }
        return sql_complete(s, "RESET");
    default:
        break;
    }
    d = setting_find_def(st->name);
    if (d == NULL) {
        /* A dotted name is a custom setting, as PostgreSQL allows. */
        if (strchr(st->name, '.') == NULL)
            return sql_fail(s, KEEL_ENOENT, "42704",
                            "unrecognized configuration parameter \"%s\"",
                            st->name);
    } else if (d->fixed) {
        return fixed_setting(s, d);
    }
    if (st->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_SET_VALUE) {
        rc = set_value_text(s, st, value, sizeof(value));
    } else if (st->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_SET_DEFAULT ||
               st->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_RESET) {
        const sql_setting *x = setting_find(s, st->name);
        snprintf(value, sizeof(value), "%s",
                 x != NULL && x->reset_to != NULL ? x->reset_to
                 : d != NULL                      ? d->def
                                                  : "");
        rc = KEEL_OK;
    } else {
        return sql_unsupported(s, -1, "SET ... FROM CURRENT");
    }
    if (rc == KEEL_OK && st->is_local && s->block == SQL_BLOCK_NONE &&
        !s->implicit_block)
        rc = notice(s, "WARNING", "25P01",
                    "SET LOCAL can only be used in transaction blocks");
    if (rc == KEEL_OK)
        rc = setting_save(s, d != NULL ? d->name : st->name, st->is_local);
    if (rc == KEEL_OK && d != NULL)
        rc = setting_apply(s, d->name, value);
    if (rc == KEEL_OK)
        rc = setting_put(s, d != NULL ? d->name : st->name, value, false);
    if (rc != KEEL_OK)
        return rc;
    return sql_complete(
        s, st->kind == PG_QUERY__VARIABLE_SET_KIND__VAR_RESET ? "RESET" : "SET");
}

keel_status sql_set_config(sql_session *s, const sql_value *name,
                           const sql_value *value, bool local,
                           sql_value *out)
{
    char n[KEEL_NAME_LEN * 2], v[1024];
    const setting_def *d;
    const sql_setting *x;
    keel_status rc;

    if (name->v.s.len >= sizeof(n) || value->v.s.len >= sizeof(v))
        return sql_fail(s, KEEL_ETOOBIG, "22023", "SET value too long");
    memcpy(n, name->v.s.p, name->v.s.len);
    n[name->v.s.len] = '\0';
    d = setting_find_def(n);
    if (d == NULL && strchr(n, '.') == NULL)
        return sql_fail(s, KEEL_ENOENT, "42704",
                        "unrecognized configuration parameter \"%s\"", n);
    if (d != NULL && d->fixed)
        return fixed_setting(s, d);
    x = setting_find(s, n);
    if (value->isnull) /* as RESET */
        snprintf(v, sizeof(v), "%s",
                 x != NULL && x->reset_to != NULL ? x->reset_to
                 : d != NULL                      ? d->def
                                                  : "");
    else {
        memcpy(v, value->v.s.p, value->v.s.len);
        v[value->v.s.len] = '\0';
    }
    rc = setting_save(s, d != NULL ? d->name : n, local);
    if (rc == KEEL_OK && d != NULL)
        rc = setting_apply(s, d->name, v);
    if (rc == KEEL_OK)
        rc = setting_put(s, d != NULL ? d->name : n, v, false);
    if (rc != KEEL_OK)
        return rc;
    /* the value as stored (a zone's name as its file names it) */
    x = setting_find(s, d != NULL ? d->name : n);
    *out = (sql_value){.type = SQL_TYPE_TEXT};
    out->v.s.p = sql_strndup(&s->arena, x->value, strlen(x->value));
    if (out->v.s.p == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    out->v.s.len = (uint32_t)strlen(x->value);
    return KEEL_OK;
}

static int no_columns_cb(void *ctx, const sql_column *cols, uint16_t n)
{
    (void)ctx;
    (void)cols;
    (void)n;
    return 0;
}

/* Sends one text column and its rows. */
static keel_status send_rows(sql_session *s, const char *colname,
                             const char *const *vals, uint16_t nrows)
{
    sql_column c = {.name = colname, .type = SQL_TYPE_TEXT, .typlen = -1,
                    .typmod = -1};

    if (s->sink->columns(s->sink->ctx, &c, 1) != 0)
        return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    for (uint16_t i = 0; i < nrows; i++) {
        uint32_t len = (uint32_t)strlen(vals[i]);
        if (s->sink->row(s->sink->ctx, &vals[i], &len, 1) != 0)
            return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    }
    return KEEL_OK;
}

static keel_status exec_show(sql_session *s, const PgQuery__VariableShowStmt *st)
{
    const sql_setting *x;
    const char *v;
    char shown[32];
    keel_status rc;

    if (strcasecmp(st->name, "all") == 0)
        return sql_unsupported(s, -1, "SHOW ALL");
    x = setting_find(s, st->name);
    if (x == NULL) {
        /* SHOW TRANSACTION ISOLATION LEVEL parses as this name: the
         * running transaction's, or the one the next would take. */
        if (strcasecmp(st->name, "transaction_isolation") == 0)
            v = s->in_txn ? (s->txn_rc ? "read committed" : "repeatable read")
                          : sql_setting_get(s, "default_transaction_isolation");
        else
            return sql_fail(s, KEEL_ENOENT, "42704",
                            "unrecognized configuration parameter \"%s\"",
                            st->name);
    } else {
        v = x->value;
    }
    if (x != NULL && (strcasecmp(x->name, "lock_timeout") == 0 ||
                      strcasecmp(x->name, "statement_timeout") == 0)) {
        int64_t ms;
        if (setting_ms(s, x->name, x->value, &ms) == KEEL_OK) {
            setting_ms_text(ms, shown, sizeof(shown));
            v = shown;
        }
    }
    rc = send_rows(s, x != NULL ? x->name : st->name, &v, 1);
    return rc != KEEL_OK ? rc : sql_complete(s, "SHOW");
}

static keel_status exec_statement(sql_session *s, const PgQuery__Node *n);

/* EXPLAIN: the statement analysed (nothing run, nothing changed) and its
 * plan sent as rows of one text column, as PostgreSQL's without costs. */
static keel_status exec_explain(sql_session *s, const PgQuery__ExplainStmt *st)
{
    sql_explain x = {.n = 0};
    sql_sink quiet = *s->sink;
    const sql_sink *outer = s->sink;
    bool was_describe = s->describe_only;
    keel_status rc;

    for (size_t i = 0; i < st->n_options; i++) {
        const PgQuery__DefElem *d = st->options[i]->def_elem;
        if (strcmp(d->defname, "analyze") == 0)
            return sql_unsupported(s, d->location, "EXPLAIN ANALYZE");
        if (strcmp(d->defname, "format") == 0) {
            const char *v = sql_node_string(d->arg);
            if (v == NULL || strcasecmp(v, "text") != 0)
                return sql_unsupported(s, d->location, "EXPLAIN in this format");
        }
    }
    switch (st->query->node_case) {
    case PG_QUERY__NODE__NODE_SELECT_STMT:
    case PG_QUERY__NODE__NODE_INSERT_STMT:
    case PG_QUERY__NODE__NODE_UPDATE_STMT:
    case PG_QUERY__NODE__NODE_DELETE_STMT:
        break;
    default:
        return sql_unsupported(s, -1, "EXPLAIN of this statement");
    }
    quiet.columns = no_columns_cb;
    s->sink = &quiet;
    s->explain = &x;
    s->describe_only = true;
    rc = exec_statement(s, st->query);
    s->describe_only = was_describe;
    s->explain = NULL;
    s->sink = outer;
    if (rc != KEEL_OK || s->describe_only) {
        if (rc == KEEL_OK) {
            /* Describe of EXPLAIN: its one column. */
            sql_column c = {.name = "QUERY PLAN", .type = SQL_TYPE_TEXT,
                            .typlen = -1, .typmod = -1};
            if (s->sink->columns(s->sink->ctx, &c, 1) != 0)
                rc = sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
        }
        return rc;
    }
    {
        const char *lines[48];
        for (int i = 0; i < x.n; i++)
            lines[i] = x.lines[i];
        rc = send_rows(s, "QUERY PLAN", lines, (uint16_t)x.n);
    }
    return rc != KEEL_OK ? rc : sql_complete(s, "EXPLAIN");
}

/* ---- the statement loop ------------------------------------------------ */

/* Whether a statement may run in a failed block (it ends the block). */
static bool ends_failed_block(const PgQuery__Node *n)
{
    if (n->node_case != PG_QUERY__NODE__NODE_TRANSACTION_STMT)
        return false;
    return n->transaction_stmt->kind ==
               PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_COMMIT ||
           n->transaction_stmt->kind ==
               PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK ||
           n->transaction_stmt->kind ==
               PG_QUERY__TRANSACTION_STMT_KIND__TRANS_STMT_ROLLBACK_TO;
}

static keel_status use_statement(sql_session *s, sql_stmt *st,
                                 const sql_portal *p);
static keel_status exec_prepare(sql_session *s, const PgQuery__PrepareStmt *st);
static keel_status exec_execute(sql_session *s, const PgQuery__ExecuteStmt *st);
static keel_status exec_deallocate(sql_session *s,
                                   const PgQuery__DeallocateStmt *st);

/* Runs one statement; the engine's transaction runs around everything
 * but transaction control. */
static keel_status exec_statement(sql_session *s, const PgQuery__Node *n)
{
    keel_status rc;

    if (s->describe_only) {
        /* Utility statements have nothing to analyse; SHOW has a row. */
        if (n->node_case == PG_QUERY__NODE__NODE_VARIABLE_SHOW_STMT) {
            sql_column c = {.name = n->variable_show_stmt->name,
                            .type = SQL_TYPE_TEXT, .typlen = -1, .typmod = -1};
            if (s->sink->columns(s->sink->ctx, &c, 1) != 0)
                return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
            return KEEL_OK;
        }
        if (n->node_case == PG_QUERY__NODE__NODE_TRANSACTION_STMT ||
            n->node_case == PG_QUERY__NODE__NODE_VARIABLE_SET_STMT)
            return KEEL_OK;
    }
    if (n->node_case == PG_QUERY__NODE__NODE_TRANSACTION_STMT)
        return exec_transaction(s, n->transaction_stmt);
    if (n->node_case == PG_QUERY__NODE__NODE_VARIABLE_SET_STMT)
        return exec_set(s, n->variable_set_stmt);
    if (n->node_case == PG_QUERY__NODE__NODE_VARIABLE_SHOW_STMT)
        return exec_show(s, n->variable_show_stmt);
    if (n->node_case == PG_QUERY__NODE__NODE_PREPARE_STMT)
        return s->describe_only ? KEEL_OK : exec_prepare(s, n->prepare_stmt);
    if (n->node_case == PG_QUERY__NODE__NODE_DEALLOCATE_STMT)
        return s->describe_only ? KEEL_OK
                                : exec_deallocate(s, n->deallocate_stmt);
    if (n->node_case == PG_QUERY__NODE__NODE_EXECUTE_STMT)
        return exec_execute(s, n->execute_stmt);
    /* Read committed: every statement takes a snapshot of its own (one
     * that begins the transaction has a new one). */
    if (s->in_txn && s->txn_rc) {
        s->fk_snap_epoch = sql_fk_epoch();
        rc = keel_new_snapshot(s->ks);
        if (rc != KEEL_OK)
            return sql_fail_engine(s, rc);
    }
    rc = txn_begin(s);
    s->txn_ran = true;
    if (rc == KEEL_OK && n->node_case == PG_QUERY__NODE__NODE_EXPLAIN_STMT)
        return exec_explain(s, n->explain_stmt);
    if (rc != KEEL_OK)
        return rc;
    switch (n->node_case) {
    case PG_QUERY__NODE__NODE_SELECT_STMT:
        return sql_exec_select(s, n->select_stmt);
    case PG_QUERY__NODE__NODE_INSERT_STMT:
        return sql_exec_insert(s, n->insert_stmt);
    case PG_QUERY__NODE__NODE_UPDATE_STMT:
        return sql_exec_update(s, n->update_stmt);
    case PG_QUERY__NODE__NODE_DELETE_STMT:
        return sql_exec_delete(s, n->delete_stmt);
    case PG_QUERY__NODE__NODE_CREATE_STMT:
        return sql_exec_create_table(s, n->create_stmt);
    case PG_QUERY__NODE__NODE_CREATE_TABLE_AS_STMT:
        return sql_exec_create_table_as(s, n->create_table_as_stmt);
    case PG_QUERY__NODE__NODE_DROP_STMT:
        return sql_exec_drop(s, n->drop_stmt);
    case PG_QUERY__NODE__NODE_CREATE_SCHEMA_STMT:
        return sql_exec_create_schema(s, n->create_schema_stmt);
    case PG_QUERY__NODE__NODE_INDEX_STMT:
        return sql_exec_create_index(s, n->index_stmt);
    case PG_QUERY__NODE__NODE_VACUUM_STMT:
        return sql_exec_vacuum(s, n->vacuum_stmt);
    case PG_QUERY__NODE__NODE_TRUNCATE_STMT:
        return sql_exec_truncate(s, n->truncate_stmt);
    case PG_QUERY__NODE__NODE_LOCK_STMT:
        return sql_exec_lock(s, n->lock_stmt);
    case PG_QUERY__NODE__NODE_COPY_STMT:
        return sql_exec_copy(s, n->copy_stmt);
    case PG_QUERY__NODE__NODE_ALTER_TABLE_STMT:
        return sql_exec_alter_table(s, n->alter_table_stmt);
    case PG_QUERY__NODE__NODE_RENAME_STMT:
        return sql_exec_rename(s, n->rename_stmt);
    case PG_QUERY__NODE__NODE_CREATE_ROLE_STMT:
        return sql_exec_create_role(s, n->create_role_stmt);
    case PG_QUERY__NODE__NODE_ALTER_ROLE_STMT:
        return sql_exec_alter_role(s, n->alter_role_stmt);
    case PG_QUERY__NODE__NODE_DROP_ROLE_STMT:
        return sql_exec_drop_role(s, n->drop_role_stmt);
    case PG_QUERY__NODE__NODE_CHECK_POINT_STMT:
        return sql_exec_checkpoint(s);
    case PG_QUERY__NODE__NODE_VIEW_STMT:
        return sql_exec_create_view(s, n->view_stmt);
    case PG_QUERY__NODE__NODE_COMMENT_STMT:
        return sql_exec_comment(s, n->comment_stmt);
    case PG_QUERY__NODE__NODE_CONSTRAINTS_SET_STMT:
        return sql_exec_set_constraints(s, n->constraints_set_stmt);
    case PG_QUERY__NODE__NODE_CREATE_SEQ_STMT:
        if (s->describe_only)
            return KEEL_OK;
        return sql_exec_create_sequence(s, n->create_seq_stmt);
    case PG_QUERY__NODE__NODE_ALTER_SEQ_STMT:
        if (s->describe_only)
            return KEEL_OK;
        return sql_exec_alter_sequence(s, n->alter_seq_stmt);
    default: {
        /* The statement's kind, from the protobuf's own field name. */
        const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(
            &pg_query__node__descriptor, (unsigned)n->node_case);
        char what[96];
        snprintf(what, sizeof(what), "statement %s",
                 f != NULL ? f->name : "of this kind");
        return sql_unsupported(s, -1, what);
    }
    }
}

keel_status sql_exec_simple(sql_session *s, const char *text,
                            const sql_sink *sink, sql_error *err)
{
    PgQuery__ParseResult *tree = NULL;
    sql_pcache_entry *pin = NULL;
    keel_status rc;

    s->sink = sink;
    s->err = err;
    s->text = text;
    s->params = NULL;
    s->nparams = 0;
    s->rformats = NULL;
    s->nrformats = 0;
    s->describe_only = false;
    atomic_store_explicit(&s->cancel, 0, memory_order_relaxed);
    rc = sql_parse_cached(s, text, false, &tree, &pin);
    if (rc == KEEL_OK && tree->n_stmts == 0) {
        if (sink->empty != NULL && sink->empty(sink->ctx) != 0)
            rc = sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
    }
    s->implicit_block = rc == KEEL_OK && tree->n_stmts > 1;
    for (size_t i = 0; rc == KEEL_OK && i < tree->n_stmts; i++) {
        const PgQuery__Node *n = tree->stmts[i]->stmt;
        if (s->block == SQL_BLOCK_FAILED && !ends_failed_block(n)) {
            rc = sql_fail(s, KEEL_EINVAL, "25P02",
                          "current transaction is aborted, commands ignored "
                          "until end of transaction block");
            break;
        }
        statement_start(s);
        rc = exec_statement(s, n);
        s->stmt_deadline_ns = 0;
        sql_arena_reset(&s->arena);
    }
    s->implicit_block = false;
    if (rc != KEEL_OK) {
        statement_failed(s);
    } else if (s->block == SQL_BLOCK_NONE) {
        rc = txn_commit(s);
    }
    sql_parse_done(s, tree, pin);
    sql_arena_reset(&s->arena);
    s->text = NULL;
    sql_stat_publish(s);
    return rc;
}

/* ---- the extended query protocol --------------------------------------- */

keel_status sql_params_grow(sql_session *s, uint16_t n)
{
    if (n > s->param_cap) {
        uint16_t cap = s->param_cap < 16 ? 16 : s->param_cap;
        uint32_t *t;
        while (cap < n)
            cap = cap > 32767 ? 65535 : (uint16_t)(cap * 2);
        t = realloc(s->param_types, cap * sizeof(*t));
        if (t == NULL)
            return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        s->param_types = t;
        s->param_cap = cap;
    }
    for (uint16_t i = s->nparams; i < n; i++)
        s->param_types[i] = 0;
    if (n > s->nparams)
        s->nparams = n;
    return KEEL_OK;
}

static sql_stmt *stmt_find(const sql_session *s, const char *name)
{
    for (sql_stmt *st = s->stmts; st != NULL; st = st->next)
        if (strcmp(st->name, name) == 0)
            return st;
    return NULL;
}

static sql_portal *portal_find(const sql_session *s, const char *name)
{
    for (sql_portal *p = s->portals; p != NULL; p = p->next)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

static void portal_free(sql_portal *p)
{
    free(p->params);
    free(p->numerics);
    free(p->rformats);
    free(p->rows);
    free(p);
}

void sql_close(sql_session *s, char kind, const char *name)
{
    if (kind == 'S') {
        for (sql_stmt **pp = &s->stmts; *pp != NULL; pp = &(*pp)->next) {
            sql_stmt *st = *pp;
            if (strcmp(st->name, name) != 0)
                continue;
            /* Portals made from it go with it. */
            for (sql_portal **q = &s->portals; *q != NULL;) {
                if ((*q)->stmt == st) {
                    sql_portal *dead = *q;
                    *q = dead->next;
                    portal_free(dead);
                } else {
                    q = &(*q)->next;
                }
            }
            *pp = st->next;
            sql_parse_done(s, st->tree, st->pin);
            free(st->text);
            free(st->types);
            free(st->desc_types);
            free(st);
            return;
        }
        return;
    }
    for (sql_portal **pp = &s->portals; *pp != NULL; pp = &(*pp)->next)
        if (strcmp((*pp)->name, name) == 0) {
            sql_portal *dead = *pp;
            *pp = dead->next;
            portal_free(dead);
            return;
        }
}

/* An error in the extended protocol: the transaction ends as in the
 * simple protocol's, and messages are skipped until Sync. */
static keel_status extended_failed(sql_session *s, keel_status rc)
{
    statement_failed(s);
    s->extended_failed = true;
    return rc;
}

static int no_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    (void)ctx;
    (void)cols;
    (void)n;
    return 0;
}

static int no_rows(void *ctx, const char *const *vals, const uint32_t *lens,
                   uint16_t n)
{
    (void)ctx;
    (void)vals;
    (void)lens;
    (void)n;
    return 0;
}

static int no_complete(void *ctx, const char *tag)
{
    (void)ctx;
    (void)tag;
    return 0;
}

/* Describes node: its columns through sink (if it returns rows), with
 * parameter types inferred into s->param_types. */
static keel_status describe(sql_session *s, const PgQuery__Node *node,
                            const sql_sink *sink)
{
    keel_status rc;

    if (node == NULL)
        return KEEL_OK;
    sql_arena_reset(&s->cte_arena);
    s->ncte_changed = 0;
    s->subquery_depth = 0;
    s->sink = sink;
    s->describe_only = true;
    if (s->block == SQL_BLOCK_FAILED &&
        !(node->node_case == PG_QUERY__NODE__NODE_TRANSACTION_STMT))
        rc = sql_fail(s, KEEL_EINVAL, "25P02",
                      "current transaction is aborted, commands ignored until "
                      "end of transaction block");
    else
        rc = exec_statement(s, node);
    s->describe_only = false;
    sql_arena_reset(&s->arena);
    return rc;
}

static keel_status stmt_make(sql_session *s, const char *name,
                             const char *text, const uint32_t *param_types,
                             uint16_t nparams)
{
    sql_sink quiet = {.columns = no_columns, .row = no_rows,
                      .complete = no_complete};
    PgQuery__ParseResult *tree = NULL;
    sql_pcache_entry *pin = NULL;
    sql_stmt *st;
    keel_status rc;

    s->text = text;
    s->params = NULL;
    s->rformats = NULL;
    s->nrformats = 0;
    if (name[0] != '\0' && stmt_find(s, name) != NULL)
        return sql_fail(s, KEEL_EEXIST, "42P05",
                        "prepared statement \"%s\" already exists", name);
    if (strlen(name) >= sizeof(st->name))
        return sql_fail(s, KEEL_ETOOBIG, "42622", "statement name too long");
    rc = sql_parse_cached(s, text, true, &tree, &pin);
    if (rc == KEEL_OK && tree->n_stmts > 1)
        rc = sql_fail(s, KEEL_EINVAL, "42601",
                      "cannot insert multiple commands into a prepared "
                      "statement");
    st = rc == KEEL_OK ? calloc(1, sizeof(*st)) : NULL;
    if (rc == KEEL_OK && (st == NULL || (st->text = strdup(text)) == NULL))
        rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    if (rc != KEEL_OK) {
        sql_parse_done(s, tree, pin);
        free(st);
        s->text = NULL;
        return rc;
    }
    snprintf(st->name, sizeof(st->name), "%s", name);
    st->tree = tree;
    st->pin = pin;
    st->node = tree->n_stmts > 0 ? tree->stmts[0]->stmt : NULL;
    /* Infer what the client left untyped by analysing the statement. */
    s->nparams = 0;
    rc = sql_params_grow(s, nparams);
    for (uint16_t i = 0; rc == KEEL_OK && i < nparams; i++)
        s->param_types[i] = param_types[i];
    s->inferring = true;
    if (rc == KEEL_OK)
        rc = describe(s, st->node, &quiet);
    s->inferring = false;
    if (rc == KEEL_OK && s->nparams > 0) {
        st->types = malloc(s->nparams * sizeof(*st->types));
        if (st->types == NULL)
            rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
        for (uint16_t i = 0; rc == KEEL_OK && i < s->nparams; i++)
            st->types[i] = s->param_types[i] == 0 || s->param_types[i] ==
                                                           SQL_TYPE_UNKNOWN
                               ? SQL_TYPE_TEXT
                               : s->param_types[i];
        st->nparams = s->nparams;
    }
    s->text = NULL;
    if (rc != KEEL_OK) {
        sql_parse_done(s, tree, pin);
        free(st->text);
        free(st->types);
        free(st);
        return rc;
    }
    if (name[0] == '\0')
        sql_close(s, 'S', "");
    st->next = s->stmts;
    s->stmts = st;
    return KEEL_OK;
}

keel_status sql_parse(sql_session *s, const char *name, const char *text,
                      const uint32_t *param_types, uint16_t nparams,
                      sql_error *err)
{
    keel_status rc;

    s->err = err;
    rc = stmt_make(s, name, text, param_types, nparams);
    return rc != KEEL_OK ? extended_failed(s, rc) : KEEL_OK;
}

/* ---- PREPARE, EXECUTE and DEALLOCATE ------------------------------------ */

/*
 * PREPARE name [(types)] AS statement: the statement's text as
 * libpg_query deparses it, made a prepared statement as Parse makes one
 * (the two share their names, as in PostgreSQL).
 */
static keel_status exec_prepare(sql_session *s, const PgQuery__PrepareStmt *st)
{
    const char *outer = s->text;
    const sql_sink *sink = s->sink;
    uint32_t types[256];
    char *text = NULL;
    keel_status rc = KEEL_OK;

    if (st->n_argtypes > sizeof(types) / sizeof(types[0]))
        return sql_fail(s, KEEL_ETOOBIG, "54023",
                        "too many parameters for a prepared statement");
    for (size_t i = 0; i < st->n_argtypes; i++) {
        int32_t typmod;
        const PgQuery__Node *t = st->argtypes[i];
        if (t->node_case != PG_QUERY__NODE__NODE_TYPE_NAME)
            return sql_unsupported(s, -1, "this parameter type");
        rc = sql_type_lookup(s, t->type_name, &types[i], &typmod);
        if (rc != KEEL_OK)
            return rc;
    }
    rc = sql_deparse(s, st->query, &text);
    if (rc == KEEL_EINVAL)
        rc = sql_unsupported(s, -1, "PREPARE of this statement");
    if (rc == KEEL_OK)
        rc = stmt_make(s, st->name, text, types, (uint16_t)st->n_argtypes);
    free(text);
    s->text = outer;
    s->sink = sink;
    return rc != KEEL_OK ? rc : sql_complete(s, "PREPARE");
}

/* EXECUTE name [(values)]: the prepared statement run with the values
 * as its parameters, each cast to its parameter's type as an assignment
 * would be; its rows and command tag are the EXECUTE's. */
static keel_status exec_execute(sql_session *s, const PgQuery__ExecuteStmt *st)
{
    sql_stmt *ps = stmt_find(s, st->name);
    const char *outer = s->text;
    sql_value *vals;
    keel_status rc;

    if (ps == NULL)
        return sql_fail(s, KEEL_ENOENT, "26000",
                        "prepared statement \"%s\" does not exist", st->name);
    if (st->n_params != ps->nparams) {
        rc = sql_fail(s, KEEL_EINVAL, "42601",
                      "wrong number of parameters for prepared statement "
                      "\"%s\"",
                      st->name);
        if (s->err != NULL)
            snprintf(s->err->detail, sizeof(s->err->detail),
                     "Expected %u parameters but got %zu.", ps->nparams,
                     st->n_params);
        return rc;
    }
    vals = sql_alloc(&s->arena, (ps->nparams + 1u) * sizeof(*vals));
    if (vals == NULL)
        return sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
    for (uint16_t i = 0; i < ps->nparams; i++) {
        sql_expr *e;
        rc = sql_expr_prepare_for(s, NULL, st->params[i], ps->types[i], &e);
        if (rc == KEEL_OK && sql_expr_reads_engine(e))
            rc = sql_unsupported(s, e->location,
                                 "EXECUTE with a parameter that reads the "
                                 "catalogs");
        if (rc == KEEL_OK)
            rc = sql_expr_eval(s, e, NULL, &vals[i]);
        if (rc == KEEL_OK && !vals[i].isnull)
            rc = sql_value_cast(s, &vals[i], ps->types[i], -1, false,
                                e->location);
        if (rc != KEEL_OK)
            return rc;
        vals[i].type = ps->types[i];
    }
    rc = use_statement(s, ps, NULL);
    if (rc == KEEL_OK) {
        s->params = vals;
        rc = ps->node != NULL ? exec_statement(s, ps->node) : KEEL_OK;
    }
    s->params = NULL;
    s->nparams = 0;
    s->text = outer;
    return rc;
}

/* DEALLOCATE [PREPARE] name | ALL. */
static keel_status exec_deallocate(sql_session *s,
                                   const PgQuery__DeallocateStmt *st)
{
    if (st->name == NULL || st->name[0] == '\0') {
        while (s->stmts != NULL)
            sql_close(s, 'S', s->stmts->name);
        return sql_complete(s, "DEALLOCATE ALL");
    }
    if (stmt_find(s, st->name) == NULL)
        return sql_fail(s, KEEL_ENOENT, "26000",
                        "prepared statement \"%s\" does not exist", st->name);
    sql_close(s, 'S', st->name);
    return sql_complete(s, "DEALLOCATE");
}

/* Sets up the session to analyse or run statement st (with a portal's
 * parameters and formats, or none). */
static keel_status use_statement(sql_session *s, sql_stmt *st,
                                 const sql_portal *p)
{
    keel_status rc;

    s->text = st->text;
    s->nparams = 0;
    rc = sql_params_grow(s, st->nparams);
    if (rc != KEEL_OK)
        return rc;
    for (uint16_t i = 0; i < st->nparams; i++)
        s->param_types[i] = st->types[i];
    s->params = p != NULL ? p->params : NULL;
    s->rformats = p != NULL ? p->rformats : NULL;
    s->nrformats = p != NULL ? p->nrformats : 0;
    return KEEL_OK;
}

/* Describe's sink: records whether the statement described any columns. */
typedef struct desc_ctx {
    const sql_sink *inner;
    sql_stmt *st; /* a statement's Describe: its columns kept here */
    bool called;
} desc_ctx;

static int desc_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    desc_ctx *d = ctx;

    d->called = true;
    if (d->st != NULL) {
        uint32_t *t = malloc((n + 1u) * sizeof(*t));
        if (t == NULL)
            return 1;
        for (uint16_t i = 0; i < n; i++)
            t[i] = cols[i].type;
        free(d->st->desc_types);
        d->st->desc_types = t;
        d->st->desc_n = n;
    }
    return d->inner->columns(d->inner->ctx, cols, n);
}

/* An Execute of a described statement: the run's sink, whose columns
 * are checked against the Describe's and everything else passed on. */
typedef struct check_ctx {
    sql_sink inner;
    const sql_stmt *st;
    bool changed;
} check_ctx;

static int check_columns(void *ctx, const sql_column *cols, uint16_t n)
{
    check_ctx *c = ctx;
    bool same = n == c->st->desc_n;

    for (uint16_t i = 0; same && i < n; i++)
        same = cols[i].type == c->st->desc_types[i];
    c->changed = !same;
    return same ? c->inner.columns(c->inner.ctx, cols, n) : 1;
}

static int check_row(void *ctx, const char *const *vals, const uint32_t *lens,
                     uint16_t n)
{
    check_ctx *c = ctx;

    return c->inner.row(c->inner.ctx, vals, lens, n);
}

static int check_complete(void *ctx, const char *tag)
{
    check_ctx *c = ctx;

    return c->inner.complete(c->inner.ctx, tag);
}

static int check_notice(void *ctx, const char *severity, const char *sqlstate,
                        const char *message)
{
    check_ctx *c = ctx;

    return c->inner.notice != NULL
               ? c->inner.notice(c->inner.ctx, severity, sqlstate, message)
               : 0;
}

static int check_empty(void *ctx)
{
    check_ctx *c = ctx;

    return c->inner.empty != NULL ? c->inner.empty(c->inner.ctx) : 0;
}

static int check_copy_in_begin(void *ctx, uint16_t ncols, int16_t format)
{
    check_ctx *c = ctx;

    return c->inner.copy_in_begin(c->inner.ctx, ncols, format);
}

static int check_copy_in_read(void *ctx, const char **data, size_t *len,
                              char *why, size_t whylen)
{
    check_ctx *c = ctx;

    return c->inner.copy_in_read(c->inner.ctx, data, len, why, whylen);
}

static int check_copy_out_begin(void *ctx, uint16_t ncols, int16_t format)
{
    check_ctx *c = ctx;

    return c->inner.copy_out_begin(c->inner.ctx, ncols, format);
}

static int check_copy_out_data(void *ctx, const char *data, size_t len)
{
    check_ctx *c = ctx;

    return c->inner.copy_out_data(c->inner.ctx, data, len);
}

/* The sink over c that checks a run's columns against its statement's
 * Describe (c->inner the run's own). */
static sql_sink check_sink(check_ctx *c)
{
    sql_sink k = {.ctx = c, .columns = check_columns, .row = check_row,
                  .complete = check_complete, .notice = check_notice,
                  .empty = check_empty};
    if (c->inner.copy_in_begin != NULL) {
        k.copy_in_begin = check_copy_in_begin;
        k.copy_in_read = check_copy_in_read;
    }
    if (c->inner.copy_out_begin != NULL) {
        k.copy_out_begin = check_copy_out_begin;
        k.copy_out_data = check_copy_out_data;
    }
    return k;
}

keel_status sql_describe_statement(sql_session *s, const char *name,
                                   uint32_t *types, uint16_t max,
                                   uint16_t *nparams, const sql_sink *sink,
                                   bool *no_data, sql_error *err)
{
    sql_stmt *st = stmt_find(s, name);
    desc_ctx d = {.inner = sink, .st = st};
    sql_sink wrap = {.ctx = &d, .columns = desc_columns, .row = no_rows,
                     .complete = no_complete};
    keel_status rc;

    s->err = err;
    *no_data = true;
    *nparams = 0;
    if (st == NULL)
        return extended_failed(s, sql_fail(s, KEEL_ENOENT, "26000",
                                           "prepared statement \"%s\" does "
                                           "not exist",
                                           name));
    *nparams = st->nparams;
    for (uint16_t i = 0; i < st->nparams && i < max; i++)
        types[i] = st->types[i];
    rc = use_statement(s, st, NULL);
    if (rc == KEEL_OK)
        rc = describe(s, st->node, &wrap);
    s->text = NULL;
    if (rc != KEEL_OK)
        return extended_failed(s, rc);
    *no_data = !d.called;
    return KEEL_OK;
}

/* Whether portal p's parameter v (of nvalues, whose strings take bytes
 * after them) holds bytes outside the portal's block: made in the arena
 * (a numeric's stored form, an array read from binary). */
static bool param_in_arena(const sql_portal *p, uint16_t nvalues, size_t bytes,
                           const sql_value *v)
{
    uintptr_t lo = (uintptr_t)p->params;
    uintptr_t hi = lo + (nvalues + 1) * sizeof(sql_value) + bytes;
    uintptr_t at = v->isnull ? lo : (uintptr_t)v->v.s.p;

    return !v->isnull && sql_type_has_bytes(v->type) &&
           v->v.s.len > 0 && (at < lo || at >= hi);
}

keel_status sql_bind(sql_session *s, const char *portal, const char *stmt,
                     uint16_t nformats, const int16_t *formats,
                     uint16_t nvalues, const char *const *values,
                     const uint32_t *lens, uint16_t nrformats,
                     const int16_t *rformats, sql_error *err)
{
    sql_stmt *st = stmt_find(s, stmt);
    sql_portal *p;
    size_t bytes = 0;
    char *strings;
    keel_status rc = KEEL_OK;

    s->err = err;
    if (st == NULL)
        return extended_failed(s, sql_fail(s, KEEL_ENOENT, "26000",
                                           "prepared statement \"%s\" does "
                                           "not exist",
                                           stmt));
    if (portal[0] != '\0' && portal_find(s, portal) != NULL)
        return extended_failed(s, sql_fail(s, KEEL_EEXIST, "42P03",
                                           "portal \"%s\" already exists",
                                           portal));
    if (strlen(portal) >= sizeof(p->name))
        return extended_failed(s, sql_fail(s, KEEL_ETOOBIG, "42622",
                                           "portal name too long"));
    if (nvalues != st->nparams)
        return extended_failed(s, sql_fail(s, KEEL_EINVAL, "08P01",
                                           "bind message supplies %u "
                                           "parameters, but prepared statement "
                                           "\"%s\" requires %u",
                                           nvalues, stmt, st->nparams));
    if (nformats > 1 && nformats != nvalues)
        return extended_failed(s, sql_fail(s, KEEL_EINVAL, "08P01",
                                           "bind message has %u parameter "
                                           "formats but %u parameters",
                                           nformats, nvalues));
    for (uint16_t i = 0; i < nformats; i++)
        if (formats[i] != SQL_FORMAT_TEXT && formats[i] != SQL_FORMAT_BINARY)
            return extended_failed(s, sql_fail(s, KEEL_EINVAL, "08P01",
                                               "unsupported format code: %d",
                                               formats[i]));
    for (uint16_t i = 0; i < nrformats; i++)
        if (rformats[i] != SQL_FORMAT_TEXT && rformats[i] != SQL_FORMAT_BINARY)
            return extended_failed(s, sql_fail(s, KEEL_EINVAL, "08P01",
                                               "unsupported format code: %d",
                                               rformats[i]));
    /* One allocation: the portal's values, then their strings. */
    for (uint16_t i = 0; i < nvalues; i++)
        if (values[i] != NULL)
            bytes += lens[i] + 1;
    p = calloc(1, sizeof(*p));
    if (p != NULL) {
        p->params = malloc((nvalues + 1) * sizeof(sql_value) + bytes);
        if (nrformats > 0)
            p->rformats = malloc(nrformats * sizeof(int16_t));
    }
    if (p == NULL || p->params == NULL || (nrformats > 0 && p->rformats == NULL)) {
        if (p != NULL)
            portal_free(p);
        return extended_failed(s, sql_fail(s, KEEL_ENOMEM, "53200",
                                           "out of memory"));
    }
    snprintf(p->name, sizeof(p->name), "%s", portal);
    p->stmt = st;
    strings = (char *)(p->params + nvalues + 1);
    for (uint16_t i = 0; rc == KEEL_OK && i < nvalues; i++) {
        int16_t f = nformats == 0 ? SQL_FORMAT_TEXT
                    : nformats == 1 ? formats[0]
                                    : formats[i];
        sql_value *v = &p->params[i];
        memset(v, 0, sizeof(*v));
        if (values[i] == NULL) {
            v->isnull = true;
            v->type = st->types[i];
            continue;
        }
        memcpy(strings, values[i], lens[i]);
        strings[lens[i]] = '\0';
        if (f == SQL_FORMAT_BINARY) {
            rc = sql_value_from_binary(s, strings, lens[i], st->types[i], v);
        } else {
            v->type = SQL_TYPE_UNKNOWN;
            v->v.s.p = strings;
            v->v.s.len = lens[i];
            rc = sql_value_cast(s, v, st->types[i], -1, true, -1);
        }
        strings += lens[i] + 1;
        /* A string made by the cast (a char(n) padded) lives in the
         * arena: keep it with the portal.  Casts from text never make
         * one but for lengths, which parameters do not carry. */
    }
    {
        /* A numeric's stored form, or an array read from its binary
         * form, was made in the arena: the portal keeps a copy. */
        size_t total = 0;
        for (uint16_t i = 0; rc == KEEL_OK && i < nvalues; i++)
            if (param_in_arena(p, nvalues, bytes, &p->params[i]))
                total += p->params[i].v.s.len;
        if (rc == KEEL_OK && total > 0) {
            char *q = p->numerics = malloc(total);
            if (q == NULL)
                rc = sql_fail(s, KEEL_ENOMEM, "53200", "out of memory");
            for (uint16_t i = 0; rc == KEEL_OK && i < nvalues; i++) {
                sql_value *v = &p->params[i];
                if (!param_in_arena(p, nvalues, bytes, v))
                    continue;
                memcpy(q, v->v.s.p, v->v.s.len);
                v->v.s.p = q;
                q += v->v.s.len;
            }
        }
    }
    if (rc == KEEL_OK && nrformats > 0)
        memcpy(p->rformats, rformats, nrformats * sizeof(int16_t));
    p->nrformats = nrformats;
    sql_arena_reset(&s->arena);
    if (rc != KEEL_OK) {
        portal_free(p);
        return extended_failed(s, rc);
    }
    if (portal[0] == '\0')
        sql_close(s, 'P', "");
    p->next = s->portals;
    s->portals = p;
    return KEEL_OK;
}

keel_status sql_describe_portal(sql_session *s, const char *portal,
                                const sql_sink *sink, bool *no_data,
                                sql_error *err)
{
    sql_portal *p = portal_find(s, portal);
    desc_ctx d = {.inner = sink};
    sql_sink wrap = {.ctx = &d, .columns = desc_columns, .row = no_rows,
                     .complete = no_complete};
    keel_status rc;

    s->err = err;
    *no_data = true;
    if (p == NULL)
        return extended_failed(s, sql_fail(s, KEEL_ENOENT, "34000",
                                           "portal \"%s\" does not exist",
                                           portal));
    rc = use_statement(s, p->stmt, p);
    if (rc == KEEL_OK)
        rc = describe(s, p->stmt->node, &wrap);
    s->text = NULL;
    if (rc != KEEL_OK)
        return extended_failed(s, rc);
    *no_data = !d.called;
    return KEEL_OK;
}

/* The buffering sink of a run that Execute's row limit may suspend. */
static int buffer_row(void *ctx, const char *const *vals, const uint32_t *lens,
                      uint16_t n)
{
    sql_portal *p = ctx;
    size_t need = 2;

    for (uint16_t i = 0; i < n; i++)
        need += 4 + (vals[i] != NULL ? lens[i] : 0);
    if (p->rows_len + need > p->rows_cap) {
        size_t cap = p->rows_cap == 0 ? 4096 : p->rows_cap;
        char *r;
        while (cap < p->rows_len + need)
            cap *= 2;
        r = realloc(p->rows, cap);
        if (r == NULL)
            return -1;
        p->rows = r;
        p->rows_cap = cap;
    }
    memcpy(p->rows + p->rows_len, &n, 2);
    p->rows_len += 2;
    for (uint16_t i = 0; i < n; i++) {
        int32_t len = vals[i] != NULL ? (int32_t)lens[i] : -1;
        memcpy(p->rows + p->rows_len, &len, 4);
        p->rows_len += 4;
        if (len > 0) {
            memcpy(p->rows + p->rows_len, vals[i], (size_t)len);
            p->rows_len += (size_t)len;
        }
    }
    return 0;
}

static int buffer_complete(void *ctx, const char *tag)
{
    sql_portal *p = ctx;

    snprintf(p->tag, sizeof(p->tag), "%s", tag);
    return 0;
}

/* Sends up to max rows of p's buffer (0: all); true when some remain. */
static keel_status send_buffered(sql_session *s, sql_portal *p, uint32_t max,
                                 const sql_sink *sink, bool *more)
{
    const char *vals[1664];
    uint32_t lens[1664];
    uint32_t sent = 0;

    while (p->rows_pos < p->rows_len && (max == 0 || sent < max)) {
        uint16_t n;
        memcpy(&n, p->rows + p->rows_pos, 2);
        p->rows_pos += 2;
        for (uint16_t i = 0; i < n && i < 1664; i++) {
            int32_t len;
            memcpy(&len, p->rows + p->rows_pos, 4);
            p->rows_pos += 4;
            vals[i] = len < 0 ? NULL : p->rows + p->rows_pos;
            lens[i] = len < 0 ? 0 : (uint32_t)len;
            if (len > 0)
                p->rows_pos += (size_t)len;
        }
        if (sink->row(sink->ctx, vals, lens, n) != 0)
            return sql_fail(s, KEEL_EIO, "08006", "the connection was lost");
        sent++;
    }
    *more = p->rows_pos < p->rows_len;
    return KEEL_OK;
}

keel_status sql_execute(sql_session *s, const char *portal, uint32_t max_rows,
                        bool describe, const sql_sink *sink, bool *suspended,
                        sql_error *err)
{
    sql_portal *p = portal_find(s, portal);
    const PgQuery__Node *node;
    keel_status rc = KEEL_OK;
    bool more = false;

    s->err = err;
    *suspended = false;
    if (p == NULL)
        return extended_failed(s, sql_fail(s, KEEL_ENOENT, "34000",
                                           "portal \"%s\" does not exist",
                                           portal));
    node = p->stmt->node;
    if (node == NULL) {
        if (sink->empty != NULL && sink->empty(sink->ctx) != 0)
            return extended_failed(s, sql_fail(s, KEEL_EIO, "08006",
                                               "the connection was lost"));
        return KEEL_OK;
    }
    if (!p->started) {
        sql_sink run = *sink;
        check_ctx chk = {.st = p->stmt};
        if (s->block == SQL_BLOCK_FAILED && !ends_failed_block(node))
            return extended_failed(s, sql_fail(s, KEEL_EINVAL, "25P02",
                                               "current transaction is aborted, "
                                               "commands ignored until end of "
                                               "transaction block"));
        if (!describe)
            run.columns = no_columns;
        if (max_rows > 0) {
            /* Rows may be asked for in parts: the run goes to a buffer. */
            run.ctx = p;
            run.row = buffer_row;
            run.complete = buffer_complete;
        }
        if (!describe && p->stmt->desc_types != NULL) {
            chk.inner = run;
            run = check_sink(&chk);
        }
        rc = use_statement(s, p->stmt, p);
        if (rc != KEEL_OK)
            return extended_failed(s, rc);
        s->sink = &run;
        statement_start(s);
        rc = exec_statement(s, node);
        if (rc != KEEL_OK && chk.changed && s->err != NULL) {
            /* Its columns are not those Describe sent: PostgreSQL's
             * refusal, not the connection's loss. */
            sql_fail(s, KEEL_EINVAL, "0A000",
                     "cached plan must not change result type");
            rc = KEEL_EINVAL;
        }
        s->stmt_deadline_ns = 0;
        sql_arena_reset(&s->arena);
        s->text = NULL;
        p->started = true;
        if (rc != KEEL_OK)
            return extended_failed(s, rc);
        if (max_rows == 0) {
            p->done = true;
            return KEEL_OK;
        }
    } else if (p->done) {
        /* Run to its end already: nothing more to send. */
        return sink->complete(sink->ctx, p->tag[0] != '\0' ? p->tag : "SELECT 0") != 0
                   ? extended_failed(s, sql_fail(s, KEEL_EIO, "08006",
                                                 "the connection was lost"))
                   : KEEL_OK;
    }
    rc = send_buffered(s, p, max_rows, sink, &more);
    if (rc != KEEL_OK)
        return extended_failed(s, rc);
    if (more) {
        *suspended = true;
        return KEEL_OK;
    }
    p->done = true;
    if (sink->complete(sink->ctx, p->tag) != 0)
        return extended_failed(s, sql_fail(s, KEEL_EIO, "08006",
                                           "the connection was lost"));
    return KEEL_OK;
}

keel_status sql_sync(sql_session *s, sql_error *err)
{
    keel_status rc = KEEL_OK;

    s->err = err;
    if (s->extended_failed) {
        if (s->block == SQL_BLOCK_NONE)
            txn_abort(s); /* already, at the failure */
    } else if (s->block == SQL_BLOCK_NONE)
        rc = txn_commit(s);
    s->extended_failed = false;
    /* Portals end with their transaction; the unnamed one at Sync. */
    if (s->block == SQL_BLOCK_NONE) {
        while (s->portals != NULL)
            sql_close(s, 'P', s->portals->name);
    } else {
        sql_close(s, 'P', "");
    }
    sql_stat_publish(s);
    return rc;
}
