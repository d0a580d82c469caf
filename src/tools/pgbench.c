/*
 * pgbench.c: the pgbench tables, defined and filled as `pgbench -i` does
 * (client-side generation): branches and tellers with a zero balance and
 * a null filler, accounts with a zero balance and an empty (all-blank)
 * filler, an empty history.  mtime is an int8 standing in for timestamp.
 */
#include "tools/pgbench.h"

#include <stdio.h>
#include <string.h>

/* 84 blanks: char(84) holding '' as pgbench's COPY writes it. */
static const char blanks[84] = "                                        "
                               "                                            ";

typedef struct gen_state {
    int kind; /* 0 branches, 1 tellers, 2 accounts */
    uint32_t scale;
    int64_t next, total;
    int64_t report_every;
    pgbench_progress progress;
    const char *table;
} gen_state;

static void show_progress(const gen_state *g, int64_t done)
{
    if (g->progress == PGBENCH_PROGRESS_BAR) {
        int width = 40, fill = (int)(done * width / (g->total ? g->total : 1));
        fprintf(stderr, "\r%-18s [", g->table);
        for (int i = 0; i < width; i++)
            fputc(i < fill ? '#' : ' ', stderr);
        fprintf(stderr, "] %3d%% %lld/%lld",
                (int)(done * 100 / (g->total ? g->total : 1)), (long long)done,
                (long long)g->total);
        if (done == g->total)
            fputc('\n', stderr);
        fflush(stderr);
    } else if (g->progress == PGBENCH_PROGRESS_LINES) {
        fprintf(stderr, "%lld of %lld tuples (%d%%) of %s done\n",
                (long long)done, (long long)g->total,
                (int)(done * 100 / (g->total ? g->total : 1)), g->table);
    }
}

static keel_value vi4(int32_t x)
{
    keel_value v = {.isnull = false};
    v.v.i4 = x;
    return v;
}

/* keel_load_fn: the next row of the table g describes. */
static keel_status gen_next(void *ctx, keel_value *v, bool *done)
{
    gen_state *g = ctx;
    int64_t i = g->next;

    if (i >= g->total) {
        *done = true;
        return KEEL_OK;
    }
    g->next++;
    switch (g->kind) {
    case 0: /* bid, bbalance, filler */
        v[0] = vi4((int32_t)(i + 1));
        v[1] = vi4(0);
        v[2].isnull = true;
        break;
    case 1: /* tid, bid, tbalance, filler */
        v[0] = vi4((int32_t)(i + 1));
        v[1] = vi4((int32_t)(i / PGBENCH_TELLERS + 1));
        v[2] = vi4(0);
        v[3].isnull = true;
        break;
    default: /* aid, bid, abalance, filler */
        v[0] = vi4((int32_t)(i + 1));
        v[1] = vi4((int32_t)(i / PGBENCH_ACCOUNTS + 1));
        v[2] = vi4(0);
        v[3].isnull = false;
        v[3].v.s.ptr = blanks;
        v[3].v.s.len = sizeof(blanks);
        break;
    }
    if (g->progress != PGBENCH_PROGRESS_NONE &&
        (g->next % g->report_every == 0 || g->next == g->total))
        show_progress(g, g->next);
    return KEEL_OK;
}

static const keel_column branches[] = {
    {"bid", KEEL_INT4, 0, true},
    {"bbalance", KEEL_INT4, 0, false},
    {"filler", KEEL_CHAR, 88, false},
};
static const keel_column tellers[] = {
    {"tid", KEEL_INT4, 0, true},
    {"bid", KEEL_INT4, 0, false},
    {"tbalance", KEEL_INT4, 0, false},
    {"filler", KEEL_CHAR, 84, false},
};
static const keel_column accounts[] = {
    {"aid", KEEL_INT4, 0, true},
    {"bid", KEEL_INT4, 0, false},
    {"abalance", KEEL_INT4, 0, false},
    {"filler", KEEL_CHAR, 84, false},
};
static const keel_column history[] = {
    {"tid", KEEL_INT4, 0, false},   {"bid", KEEL_INT4, 0, false},
    {"aid", KEEL_INT4, 0, false},   {"delta", KEEL_INT4, 0, false},
    {"mtime", KEEL_INT8, 0, false}, {"filler", KEEL_CHAR, 22, false},
};

const keel_column *pgbench_columns(const char *table, uint16_t *ncols)
{
    static const struct {
        const char *name;
        const keel_column *cols;
        uint16_t ncols;
    } all[] = {
        {"pgbench_branches", branches, 3},
        {"pgbench_tellers", tellers, 4},
        {"pgbench_accounts", accounts, 4},
        {"pgbench_history", history, 6},
    };

    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (strcmp(all[i].name, table) == 0) {
            *ncols = all[i].ncols;
            return all[i].cols;
        }
    *ncols = 0;
    return NULL;
}

int pgbench_load(keel_session *s, uint32_t scale, pgbench_progress progress)
{
    static const struct {
        const char *name;
        const keel_column *cols;
        uint16_t ncols;
        int64_t per_scale;
    } tables[] = {
        {"pgbench_branches", branches, 3, PGBENCH_BRANCHES},
        {"pgbench_tellers", tellers, 4, PGBENCH_TELLERS},
        {"pgbench_accounts", accounts, 4, PGBENCH_ACCOUNTS},
    };
    uint16_t pk = 1;
    int rc = KEEL_OK;

    for (int t = 0; rc == KEEL_OK && t < 3; t++) {
        gen_state g = {.kind = t,
                       .scale = scale,
                       .total = tables[t].per_scale * (int64_t)scale,
                       .progress = progress,
                       .table = tables[t].name};
        g.report_every = progress == PGBENCH_PROGRESS_BAR ? 50000 : 100000;
        rc = keel_load_table(s, NULL, tables[t].name, tables[t].cols,
                             tables[t].ncols, &pk, 1, gen_next, &g, NULL);
    }
    if (rc == KEEL_OK)
        rc = keel_create_table(s, NULL, "pgbench_history", history, 6, NULL, 0);
    if (rc == KEEL_OK && progress != PGBENCH_PROGRESS_NONE)
        fprintf(stderr, "analyzing...\n");
    for (int t = 0; rc == KEEL_OK && t < 3; t++)
        rc = keel_analyze(s, NULL, tables[t].name);
    if (rc == KEEL_OK)
        rc = keel_analyze(s, NULL, "pgbench_history");
    return rc;
}

int pgbench_init(const char *dir, uint32_t scale, uint32_t pool_mb,
                 pgbench_progress progress, keel_error *err)
{
    keel_db_options o;
    keel_db *db = NULL;
    keel_session *s = NULL;
    int rc;

    keel_db_options_init(&o);
    o.dir = dir;
    if (pool_mb > 0)
        o.pool_mb = pool_mb;
    rc = keel_db_create(&o, err);
    if (rc != KEEL_OK || scale == 0)
        return rc;
    rc = keel_db_open(&o, &db, err);
    if (rc != KEEL_OK)
        return rc;
    rc = keel_session_begin(db, &s, err);
    if (rc == KEEL_OK) {
        rc = pgbench_load(s, scale, progress);
        if (rc != KEEL_OK && err != NULL) {
            err->code = rc;
            snprintf(err->msg, sizeof(err->msg), "%s", keel_session_error(s));
        }
        keel_session_end(s);
    }
    /* A clean close: every page written and every file fsynced. */
    if (rc == KEEL_OK)
        return keel_db_close(db, err);
    (void)keel_db_close(db, NULL);
    return rc;
}
