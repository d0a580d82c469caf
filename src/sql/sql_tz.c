/*
 * sql_tz.c: time zones, for the TimeZone setting and AT TIME ZONE.
 *
 * A zone is what PostgreSQL accepts as one: a name of the IANA database
 * as the system compiles it (/usr/share/zoneinfo, Debian's tzdata: RFC
 * 8536's TZif files, whose 64-bit section is read), found in any case
 * and shown as the file is named; a POSIX TZ string ("UTC+3",
 * "<+0530>-5:30", "CET-1CEST,M3.5.0,M10.5.0/3"), shown as given; a
 * number of hours east of Greenwich (SET TIME ZONE -7); or an interval
 * (SET TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE), the last two shown
 * as the POSIX strings they are ("<-07>+07").
 *
 * A file's transitions give the offset up to its last one, its footer (a
 * POSIX TZ string) after it.  A file's arrays are read once per process
 * and kept, shared by every zone value that names the file: they are
 * immutable once made, and the files are few (a mutex guards the list).
 * A zone value itself (sql_tz) is a small struct its holder owns.
 *
 * Local times that a change of offset skips or repeats are read as
 * PostgreSQL reads them: a skipped one with the offset before the change
 * (02:30 on the day clocks go from 02:00 to 03:00 is 03:30 after it), a
 * repeated one with the offset after (the later of the two instants).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sql/sql_internal.h"

#define TZ_DIR "/usr/share/zoneinfo"
#define TZ_FILE_MAX (1 << 20)
#define UNIX_2000 946684800LL /* 2000-01-01 in seconds since 1970 */

/* A file's transitions, read once (see the top). */
typedef struct tz_file {
    struct tz_file *next;
    char key[SQL_TZ_NAME]; /* the name asked for, lower-cased */
    char name[SQL_TZ_NAME]; /* as the file is named */
    int64_t *trans;         /* Unix seconds, ascending */
    uint8_t *idx;           /* each transition's type */
    uint32_t ntrans, ntypes;
    sql_tz_type *types;
    bool has_rule;
    sql_tz_rule rule;
} tz_file;

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static tz_file *files;

/* ---- POSIX TZ strings ------------------------------------------------- */

/* A zone abbreviation: three or more letters, or <...> of letters,
 * digits, + and -. */
static bool posix_name(const char **p, char *out, size_t size)
{
    const char *q = *p;
    size_t n = 0;

    if (*q == '<') {
        q++;
        while (isalnum((unsigned char)*q) || *q == '+' || *q == '-') {
            if (n + 1 < size)
                out[n++] = *q;
            q++;
        }
        if (*q != '>' || n < 3)
            return false;
        q++;
    } else {
        while (isalpha((unsigned char)*q)) {
            if (n + 1 < size)
                out[n++] = *q;
            q++;
        }
        if (n < 3)
            return false;
    }
    out[n] = '\0';
    *p = q;
    return true;
}

/* [+-]hh[:mm[:ss]] in seconds, hours up to max. */
static bool posix_time(const char **p, int max, int32_t *out)
{
    const char *q = *p;
    int sign = 1;
    long part[3] = {0, 0, 0};

    if (*q == '+' || *q == '-')
        sign = *q++ == '-' ? -1 : 1;
    for (int i = 0; i < 3; i++) {
        char *end;
        if (i > 0) {
            if (*q != ':')
                break;
            q++;
        }
        if (!isdigit((unsigned char)*q))
            return false;
        part[i] = strtol(q, &end, 10);
        if (end - q > 3 || part[i] > (i == 0 ? max : 59))
            return false;
        q = end;
    }
    *out = (int32_t)(sign * (part[0] * 3600 + part[1] * 60 + part[2]));
    *p = q;
    return true;
}

/* A rule's date (Mm.w.d, Jn or n) and time (/time, 02:00 without). */
static bool posix_when(const char **p, sql_tz_when *w)
{
    const char *q = *p;
    char *end;

    w->secs = 7200;
    if (*q == 'M') {
        w->kind = 'M';
        w->m = (int)strtol(q + 1, &end, 10);
        if (end == q + 1 || *end != '.' || w->m < 1 || w->m > 12)
            return false;
        q = end + 1;
        w->w = (int)strtol(q, &end, 10);
        if (end == q || *end != '.' || w->w < 1 || w->w > 5)
            return false;
        q = end + 1;
        w->d = (int)strtol(q, &end, 10);
        if (end == q || w->d < 0 || w->d > 6)
            return false;
    } else {
        w->kind = *q == 'J' ? 'J' : 'N';
        if (*q == 'J')
            q++;
        if (!isdigit((unsigned char)*q))
            return false;
        w->d = (int)strtol(q, &end, 10);
        if (w->d < (w->kind == 'J') || w->d > 365)
            return false;
    }
    q = end;
    if (*q == '/') {
        q++;
        if (!posix_time(&q, 167, &w->secs))
            return false;
    }
    *p = q;
    return true;
}

/* A POSIX TZ string into *r; false if it is none. */
static bool posix_parse(const char *text, sql_tz_rule *r)
{
    const char *p = text;
    int32_t west;

    memset(r, 0, sizeof(*r));
    if (!posix_name(&p, r->std.abbr, sizeof(r->std.abbr)) ||
        !posix_time(&p, 24, &west))
        return false;
    r->std.off = -west;
    if (*p == '\0')
        return true;
    if (!posix_name(&p, r->dst.abbr, sizeof(r->dst.abbr)))
        return false;
    r->has_dst = true;
    r->dst.dst = true;
    r->dst.off = r->std.off + 3600;
    if (*p != ',' && *p != '\0') {
        if (!posix_time(&p, 24, &west))
            return false;
        r->dst.off = -west;
    }
    if (*p == '\0') {
        /* no rule: the United States', as PostgreSQL's posixrules */
        r->start = (sql_tz_when){'M', 3, 2, 0, 7200};
        r->end = (sql_tz_when){'M', 11, 1, 0, 7200};
        return true;
    }
    if (*p++ != ',' || !posix_when(&p, &r->start) || *p++ != ',' ||
        !posix_when(&p, &r->end))
        return false;
    return *p == '\0';
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Unix seconds, local time, of rule date w in year y. */
static int64_t when_local(const sql_tz_when *w, int64_t y)
{
    int64_t day;

    if (w->kind == 'M') {
        static const int mdays[] = {31, 28, 31, 30, 31, 30,
                                    31, 31, 30, 31, 30, 31};
        int len = mdays[w->m - 1] + (w->m == 2 && is_leap(y));
        int64_t first = sql_days_from_date(y, w->m, 1);
        int dow = (int)(((first % 7) + 7 + 4) % 7); /* 1970-01-01: Thursday */
        int md = (w->d - dow + 7) % 7 + 1 + 7 * (w->w - 1);
        while (md > len)
            md -= 7;
        day = first + md - 1;
    } else if (w->kind == 'J') {
        day = sql_days_from_date(y, 1, 1) + w->d - 1 +
              (is_leap(y) && w->d >= 60);
    } else {
        day = sql_days_from_date(y, 1, 1) + w->d;
    }
    return day * 86400 + w->secs;
}

/* The rule's type at Unix time t. */
static const sql_tz_type *rule_type(const sql_tz_rule *r, int64_t t)
{
    int64_t y, start, end, days;
    int m, d;

    if (!r->has_dst)
        return &r->std;
    days = t + r->std.off;
    days = days >= 0 ? days / 86400 : (days - 86399) / 86400;
    sql_date_from_days(days, &y, &m, &d);
    start = when_local(&r->start, y) - r->std.off;
    end = when_local(&r->end, y) - r->dst.off;
    if (start < end)
        return t >= start && t < end ? &r->dst : &r->std;
    return t >= end && t < start ? &r->std : &r->dst;
}

/* ---- TZif files ------------------------------------------------------- */

static int64_t be_get(const uint8_t *p, int n)
{
    uint64_t v = 0;

    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    if (n == 4)
        return (int32_t)(uint32_t)v;
    return (int64_t)v;
}

/* Parses a TZif file's bytes into f; false if they are not one. */
static bool tzif_parse(const uint8_t *b, size_t len, tz_file *f)
{
    uint32_t cnt[6]; /* isut, isstd, leap, time, type, char */
    const uint8_t *p;
    size_t body;

    if (len < 44 || memcmp(b, "TZif", 4) != 0 || b[4] < '2')
        return false;
    for (int i = 0; i < 6; i++)
        cnt[i] = (uint32_t)be_get(b + 20 + 4 * i, 4);
    /* skip the 32-bit body to the second header */
    body = (size_t)cnt[3] * 5 + (size_t)cnt[4] * 6 + cnt[5] +
           (size_t)cnt[2] * 8 + cnt[1] + cnt[0];
    if (cnt[3] > 100000 || cnt[4] > 256 || cnt[5] > 4096 || cnt[2] > 10000 ||
        44 + body + 44 > len)
        return false;
    p = b + 44 + body;
    if (memcmp(p, "TZif", 4) != 0)
        return false;
    for (int i = 0; i < 6; i++)
        cnt[i] = (uint32_t)be_get(p + 20 + 4 * i, 4);
    p += 44;
    body = (size_t)cnt[3] * 9 + (size_t)cnt[4] * 6 + cnt[5] +
           (size_t)cnt[2] * 12 + cnt[1] + cnt[0];
    if (cnt[3] > 100000 || cnt[4] == 0 || cnt[4] > 256 || cnt[5] > 4096 ||
        cnt[2] > 10000 || (size_t)(p - b) + body > len)
        return false;
    f->ntrans = cnt[3];
    f->ntypes = cnt[4];
    f->trans = malloc((f->ntrans + 1u) * sizeof(*f->trans));
    f->idx = malloc(f->ntrans + 1u);
    f->types = calloc(f->ntypes, sizeof(*f->types));
    if (f->trans == NULL || f->idx == NULL || f->types == NULL)
        return false;
    for (uint32_t i = 0; i < f->ntrans; i++) {
        f->trans[i] = be_get(p + 8 * i, 8);
        if (i > 0 && f->trans[i] <= f->trans[i - 1])
            return false;
    }
    p += 8 * f->ntrans;
    for (uint32_t i = 0; i < f->ntrans; i++) {
        f->idx[i] = p[i];
        if (p[i] >= f->ntypes)
            return false;
    }
    p += f->ntrans;
    for (uint32_t i = 0; i < f->ntypes; i++) {
        const uint8_t *t = p + 6 * i;
        const uint8_t *chars = p + 6 * f->ntypes;
        uint8_t ai = t[5];
        size_t n = 0;
        f->types[i].off = (int32_t)be_get(t, 4);
        f->types[i].dst = t[4] != 0;
        if (f->types[i].off < -25 * 3600 || f->types[i].off > 26 * 3600 ||
            ai >= cnt[5])
            return false;
        while (ai + n < cnt[5] && chars[ai + n] != '\0' &&
               n + 1 < sizeof(f->types[i].abbr)) {
            f->types[i].abbr[n] = (char)chars[ai + n];
            n++;
        }
        f->types[i].abbr[n] = '\0';
    }
    p += (size_t)cnt[4] * 6 + cnt[5] + (size_t)cnt[2] * 12 + cnt[1] + cnt[0];
    /* the footer: \n, a POSIX TZ string (maybe empty), \n */
    if ((size_t)(p - b) < len && *p == '\n') {
        const uint8_t *e = memchr(p + 1, '\n', len - (size_t)(p - b) - 1);
        char rule[128];
        size_t n = e != NULL ? (size_t)(e - p - 1) : 0;
        if (n > 0 && n < sizeof(rule)) {
            memcpy(rule, p + 1, n);
            rule[n] = '\0';
            f->has_rule = posix_parse(rule, &f->rule);
        }
    }
    return true;
}

/* Opens name under TZ_DIR, each part matched in any case; its path as
 * the files name it in *canon.  -1 if there is none. */
static int tz_open(const char *name, char *canon, size_t size)
{
    char path[sizeof(TZ_DIR) + SQL_TZ_NAME + 2];
    size_t cl = 0;
    const char *p = name;
    int fd;

    snprintf(path, sizeof(path), "%s/%s", TZ_DIR, name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        snprintf(canon, size, "%s", name);
        return fd;
    }
    /* part by part, any case */
    snprintf(path, sizeof(path), "%s", TZ_DIR);
    canon[0] = '\0';
    while (*p != '\0') {
        const char *slash = strchr(p, '/');
        size_t n = slash != NULL ? (size_t)(slash - p) : strlen(p);
        struct dirent *de;
        DIR *dir = opendir(path);
        bool found = false;
        if (dir == NULL)
            return -1;
        while ((de = readdir(dir)) != NULL)
            if (strlen(de->d_name) == n &&
                strncasecmp(de->d_name, p, n) == 0 &&
                strlen(path) + n + 2 <= sizeof(path) && cl + n + 2 <= size) {
                size_t pl = strlen(path);
                path[pl] = '/';
                memcpy(path + pl + 1, de->d_name, n + 1);
                if (cl > 0)
                    canon[cl++] = '/';
                memcpy(canon + cl, de->d_name, n + 1);
                cl += n;
                found = true;
                break;
            }
        closedir(dir);
        if (!found)
            return -1;
        p += n;
        if (*p == '/')
            p++;
    }
    return open(path, O_RDONLY | O_CLOEXEC);
}

static void file_free(tz_file *f)
{
    free(f->trans);
    free(f->idx);
    free(f->types);
    free(f);
}

/* The file of name, read once; NULL if there is none. */
static const tz_file *file_find(const char *name)
{
    char key[SQL_TZ_NAME];
    const tz_file *found = NULL;
    tz_file *f;
    uint8_t *buf;
    struct stat st;
    ssize_t n;
    int fd;

    if (strlen(name) >= sizeof(key) || name[0] == '/' || name[0] == '.' ||
        strstr(name, "..") != NULL)
        return NULL;
    for (size_t i = 0; name[i] != '\0'; i++) {
        if (!isalnum((unsigned char)name[i]) && strchr("/_+-", name[i]) == NULL)
            return NULL;
        key[i] = (char)tolower((unsigned char)name[i]);
        key[i + 1] = '\0';
    }
    pthread_mutex_lock(&files_lock);
    for (f = files; f != NULL && found == NULL; f = f->next)
        if (strcmp(f->key, key) == 0)
            found = f;
    pthread_mutex_unlock(&files_lock);
    if (found != NULL)
        return found;
    f = calloc(1, sizeof(*f));
    if (f == NULL)
        return NULL;
    memcpy(f->key, key, strlen(key) + 1);
    fd = tz_open(name, f->name, sizeof(f->name));
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size > TZ_FILE_MAX) {
        if (fd >= 0)
            close(fd);
        free(f);
        return NULL;
    }
    buf = malloc((size_t)st.st_size + 1u);
    n = buf != NULL ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    if (n != st.st_size || !tzif_parse(buf, (size_t)n, f)) {
        free(buf);
        file_free(f);
        return NULL;
    }
    free(buf);
    /* another session may have read it meanwhile: keep the first */
    pthread_mutex_lock(&files_lock);
    for (tz_file *g = files; g != NULL && found == NULL; g = g->next)
        if (strcmp(g->key, key) == 0)
            found = g;
    if (found == NULL) {
        f->next = files;
        files = f;
        found = f;
        f = NULL;
    }
    pthread_mutex_unlock(&files_lock);
    if (f != NULL)
        file_free(f);
    return found;
}

/* ---- zones -------------------------------------------------------------- */

/* A zone of a fixed offset (seconds east), named as PostgreSQL names
 * one: <+05:30>-05:30. */
static void fixed_zone(int32_t east, sql_tz *z)
{
    int32_t a = east < 0 ? -east : east;
    char off[16];

    if (a % 3600 == 0)
        snprintf(off, sizeof(off), "%02d", a / 3600);
    else if (a % 60 == 0)
        snprintf(off, sizeof(off), "%02d:%02d", a / 3600, a / 60 % 60);
    else
        snprintf(off, sizeof(off), "%02d:%02d:%02d", a / 3600, a / 60 % 60,
                 a % 60);
    memset(z, 0, sizeof(*z));
    snprintf(z->name, sizeof(z->name), "<%c%s>%c%s", east < 0 ? '-' : '+', off,
             east < 0 ? '+' : '-', off);
    z->rule.std.off = east;
    snprintf(z->rule.std.abbr, sizeof(z->rule.std.abbr), "%c%.9s",
             east < 0 ? '-' : '+', off);
    z->has_rule = true;
}

bool sql_tz_load(sql_session *s, const char *spec, sql_tz *z)
{
    const tz_file *f;
    char *end;
    double hours;

    memset(z, 0, sizeof(*z));
    if (spec[0] == '\0' || strlen(spec) >= sizeof(z->name))
        return false;
    /* SET TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE */
    if (strncasecmp(spec, "interval '", 10) == 0) {
        sql_value v = {0};
        const char *q = spec + 10, *e = strchr(q, '\'');
        int64_t us;
        int32_t days, months;
        sql_error *err = s->err, none;
        keel_status rc;
        if (e == NULL || e[1] != '\0')
            return false;
        s->err = &none;
        rc = sql_interval_in(s, q, (uint32_t)(e - q), -1, &v);
        s->err = err;
        if (rc != KEEL_OK || v.v.s.len != 16)
            return false;
        memcpy(&us, v.v.s.p, 8);
        memcpy(&days, v.v.s.p + 8, 4);
        memcpy(&months, v.v.s.p + 12, 4);
        if (days != 0 || months != 0 || us % 1000000 != 0 ||
            llabs(us) > 14LL * 3600 * 1000000)
            return false;
        fixed_zone((int32_t)(us / 1000000), z);
        return true;
    }
    /* SET TIME ZONE -7: hours east */
    hours = strtod(spec, &end);
    if (end != spec && *end == '\0') {
        if (!(hours >= -15 && hours <= 15))
            return false;
        fixed_zone((int32_t)lround(hours * 3600), z);
        return true;
    }
    f = file_find(spec);
    if (f != NULL) {
        snprintf(z->name, sizeof(z->name), "%s", f->name);
        z->trans = f->trans;
        z->idx = f->idx;
        z->ntrans = f->ntrans;
        z->types = f->types;
        z->ntypes = f->ntypes;
        z->has_rule = f->has_rule;
        z->rule = f->rule;
        return true;
    }
    if (strcasecmp(spec, "UTC") == 0 || strcasecmp(spec, "GMT") == 0) {
        /* without the zone database too */
        snprintf(z->name, sizeof(z->name), "%c%c%c", toupper(spec[0]),
                 toupper(spec[1]), toupper(spec[2]));
        snprintf(z->rule.std.abbr, sizeof(z->rule.std.abbr), "%.3s", z->name);
        z->has_rule = true;
        return true;
    }
    if (!posix_parse(spec, &z->rule))
        return false;
    z->has_rule = true;
    snprintf(z->name, sizeof(z->name), "%s", spec);
    return true;
}

bool sql_tz_is_utc(const sql_tz *z)
{
    for (uint32_t i = 0; i < z->ntypes; i++)
        if (z->types[i].off != 0)
            return false;
    return (!z->has_rule || (z->rule.std.off == 0 && !z->rule.has_dst)) &&
           (z->ntypes > 0 || z->has_rule);
}

/* The type in effect at Unix time t. */
static const sql_tz_type *type_at(const sql_tz *z, int64_t t)
{
    uint32_t lo = 0, hi = z->ntrans;

    if (z->ntrans == 0 || t < z->trans[0]) {
        if (z->ntypes > 0 && (z->ntrans > 0 || !z->has_rule))
            return &z->types[0];
        return rule_type(&z->rule, t);
    }
    if (t >= z->trans[z->ntrans - 1] && z->has_rule)
        return rule_type(&z->rule, t);
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (z->trans[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return &z->types[z->idx[lo]];
}

static int64_t unix_secs(int64_t us)
{
    return (us >= 0 ? us / 1000000 : (us - 999999) / 1000000) + UNIX_2000;
}

int32_t sql_tz_offset(const sql_tz *z, int64_t utc_us, const char **abbr)
{
    const sql_tz_type *t = type_at(z, unix_secs(utc_us));

    if (abbr != NULL)
        *abbr = t->abbr;
    return t->off;
}

int64_t sql_tz_utc(const sql_tz *z, int64_t local_us)
{
    int64_t l = unix_secs(local_us);
    int32_t before = type_at(z, l - 86400)->off;
    int32_t after = type_at(z, l + 86400)->off;

    /* Read with the offset after a change, it is its own time when it
     * is after the change (then, if it is also its own before it, a
     * repeated time: the later instant); else it is before the change,
     * or skipped by it: the offset before. */
    if (before != after && type_at(z, l - after)->off == after)
        return local_us - (int64_t)after * 1000000;
    return local_us - (int64_t)before * 1000000;
}

int sql_tz_offset_text(int32_t off, bool minutes, char *buf, size_t size)
{
    int32_t a = off < 0 ? -off : off;
    char sign = off < 0 ? '-' : '+';

    if (a % 60 != 0)
        return snprintf(buf, size, "%c%02d:%02d:%02d", sign, a / 3600,
                        a / 60 % 60, a % 60);
    if (a % 3600 != 0 || minutes)
        return snprintf(buf, size, "%c%02d:%02d", sign, a / 3600, a / 60 % 60);
    return snprintf(buf, size, "%c%02d", sign, a / 3600);
}

bool sql_tz_tzif_ok(const uint8_t *b, size_t len)
{
    tz_file *f = calloc(1, sizeof(*f));
    bool ok = f != NULL && tzif_parse(b, len, f);

    if (f != NULL)
        file_free(f);
    return ok;
}
