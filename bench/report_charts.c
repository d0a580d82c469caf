/*
 * report_charts.c: the report's two charts: select.svg, transactions per
 * second against clients for each process array layout, and bloat.svg,
 * each session's catalog cache bytes against its transactions, pruning
 * off and on, with the memory target; and compare-select.svg and
 * compare-tpcb.svg, the real pgbench's tps against clients for keel
 * serve and PostgreSQL 15, each protocol mode a line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "svg.h"

#define BLOAT_LINES 16

int report_chart_select(const char *path, const report_data *d)
{
    static const char *const layouts[] = {"padded", "packed"};
    double x[2][REPORT_MAX_SELECT], y[2][REPORT_MAX_SELECT];
    svg_series se[2];
    size_t ns = 0;

    for (int l = 0; l < 2; l++) {
        size_t k = 0;
        for (size_t i = 0; i < d->nrows; i++)
            if (d->sel != NULL && d->rows[i].doc == &d->sel->doc &&
                strcmp(d->rows[i].layout, layouts[l]) == 0 &&
                k < REPORT_MAX_SELECT) {
                x[l][k] = d->rows[i].clients;
                y[l][k++] = d->rows[i].tps;
            }
        if (k == 0)
            continue;
        se[ns] = (svg_series){layouts[l], x[l], y[l], k, l == 1};
        ns++;
    }
    svg_chart c = {"Select-only transactions (median of runs)",
                   "clients (one thread and session each)",
                   "transactions per second",
                   true,
                   true,
                   se,
                   ns};
    return svg_write_line_chart(path, &c);
}

int report_chart_bloat(const char *path, const report_data *d)
{
    static const char *const which[] = {"off", "on"};
    const json_value *r = d->bloat != NULL ? &d->bloat->doc.root : NULL;
    double *xs[BLOAT_LINES] = {0}, *ys[BLOAT_LINES] = {0};
    char labels[BLOAT_LINES][64];
    svg_series se[BLOAT_LINES];
    size_t ns = 0;
    int rc;

    for (int k = 0; k < 2; k++) {
        const json_value *ss = json_get(json_get(r, which[k]), "sessions");
        for (size_t i = 0; ss != NULL && i < ss->n && ns < BLOAT_LINES; i++) {
            const json_value *tx = json_get(&ss->items[i], "txn");
            const json_value *by = json_get(&ss->items[i], "bytes");
            size_t m;
            if (tx == NULL || by == NULL)
                continue;
            m = tx->n < by->n ? tx->n : by->n;
            xs[ns] = calloc(m + 1, sizeof(double));
            ys[ns] = calloc(m + 1, sizeof(double));
            if (xs[ns] == NULL || ys[ns] == NULL)
                break;
            for (size_t j = 0; j < m; j++) {
                xs[ns][j] = tx->items[j].num;
                ys[ns][j] = by->items[j].num / 1048576.0;
            }
            snprintf(labels[ns], sizeof(labels[ns]), "pruning %s, session %zu",
                     which[k], i + 1);
            se[ns] = (svg_series){labels[ns], xs[ns], ys[ns], m, i > 0};
            ns++;
        }
    }
    /* The memory target of the pruned runs, as a flat line. */
    double target = json_num(json_get(r, "on"), "memory_target");
    double tx[2] = {0, json_num(r, "transactions")};
    double ty[2] = {target / 1048576.0, target / 1048576.0};
    if (target > 0 && ns < BLOAT_LINES)
        se[ns++] = (svg_series){"memory target", tx, ty, 2, true};
    svg_chart c = {"Catalog cache memory per session, one new missing name "
                   "per transaction",
                   "transactions run by the session",
                   "catalog cache size (MiB)",
                   false,
                   true,
                   se,
                   ns};
    rc = svg_write_line_chart(path, &c);
    for (size_t i = 0; i < BLOAT_LINES; i++) {
        free(xs[i]);
        free(ys[i]);
    }
    return rc;
}

int report_chart_compare(const char *path, const report_data *d,
                         const char *script)
{
    static const char *const who[2] = {"keel", "postgres"};
    static const char *const shown[2] = {"keel serve", "PostgreSQL 15"};
    static const char *const modes[2] = {"simple", "prepared"};
    const json_value *clients =
        d->compare != NULL ? json_get(&d->compare->doc.root, "clients") : NULL;
    double x[4][REPORT_MAX_SELECT], y[4][REPORT_MAX_SELECT];
    char labels[4][64], title[128];
    svg_series se[4];
    size_t ns = 0;

    for (int w = 0; w < 2; w++)
        for (int m = 0; m < 2; m++) {
            size_t k = 0;
            for (size_t i = 0; clients != NULL && i < clients->n &&
                               k < REPORT_MAX_SELECT;
                 i++) {
                double c = clients->items[i].num;
                const json_value *r = compare_run(d, script, modes[m], c);
                if (r == NULL)
                    continue;
                x[ns][k] = c;
                y[ns][k++] = json_num(json_get(r, who[w]), "tps");
            }
            if (k == 0)
                continue;
            snprintf(labels[ns], sizeof(labels[ns]), "%s, %s", shown[w],
                     modes[m]);
            se[ns] = (svg_series){labels[ns], x[ns], y[ns], k, m == 1};
            ns++;
        }
    snprintf(title, sizeof(title),
             "pgbench %s over a Unix socket: keel serve and PostgreSQL 15",
             script);
    svg_chart c = {title,
                   "clients (pgbench -c; -j min(clients, 2))",
                   "transactions per second",
                   true,
                   true,
                   se,
                   ns};
    return svg_write_line_chart(path, &c);
}
