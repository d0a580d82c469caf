/*
 * report_json.c: results.json: every benchmark's own results under its
 * name, the select rows of both select steps as one list, the pinned runs
 * as another, the ratios the readings quote with their intervals, padded
 * over packed at each client count, the targets as judged and the
 * readings shown beside them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

/* A number to `decimals` places, or null when it is not finite. */
static void json_number(FILE *f, double v, int decimals)
{
    if (isfinite(v))
        fprintf(f, "%.*f", decimals, v);
    else
        fputs("null", f);
}

/* "name": v, to four places (null if not finite). */
static void json_ratio(FILE *f, const char *name, double v, bool last)
{
    fprintf(f, "    \"%s\": ", name);
    json_number(f, v, 4);
    fputs(last ? "\n" : ",\n", f);
}

/* "name": {"ratio": r, "ci_low": .., "ci_high": .., "rounds": n} for a
 * paired ratio (nulls where it has no interval). */
static void json_paired(FILE *f, const char *name, paired_ratio p, bool last)
{
    bool has = paired_has_interval(p);

    fprintf(f, "    \"%s\": {\"ratio\": ", name);
    json_number(f, p.r, 4);
    fputs(", \"ci_low\": ", f);
    json_number(f, has ? p.ci_lo : NAN, 4);
    fputs(", \"ci_high\": ", f);
    json_number(f, has ? p.ci_hi : NAN, 4);
    fprintf(f, ", \"rounds\": %d}%s\n", p.rounds, last ? "" : ",");
}

/* The benchmarks' own JSON: each step's under its name, the pinned runs
 * as one list and the select rows as another. */
static void json_steps(FILE *f, const report_data *d)
{
    for (size_t k = 0; k < d->nsteps; k++) {
        const report_step *s = &d->steps[k];
        if (!s->ran || strcmp(s->name, "select") == 0 ||
            strcmp(s->name, "select_cpu") == 0)
            continue;
        fprintf(f, ",\n  \"%s\": ", s->name);
        json_write_verbatim(f, &s->doc, &s->doc.root);
    }
    fputs(",\n  \"select_cpu\": [", f);
    for (size_t k = 0, i = 0; k < d->nsteps; k++) {
        const report_step *s = &d->steps[k];
        if (s->ran && strcmp(s->name, "select_cpu") == 0) {
            fputs(i++ ? ",\n    " : "\n    ", f);
            json_write_verbatim(f, &s->doc, &s->doc.root);
        }
    }
    fputs("\n  ],\n  \"select\": [", f);
    for (size_t i = 0; i < d->nrows; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        json_write_verbatim(f, d->rows[i].doc, d->rows[i].v);
    }
    fputs("\n  ]", f);
}

/* The ratios between select rows (medians of per-round ratios), then the
 * same with their 95% intervals. */
static void json_ratios(FILE *f, const report_data *d)
{
    fputs(",\n  \"ratios\": {\n", f);
    json_ratio(f, "select_2_over_1_clients", paired(d->two, d->one).r, false);
    json_ratio(f, "select_64_over_2_clients", paired(d->s64, d->two).r, false);
    json_ratio(f, "select_padded_over_packed_2_clients",
               paired(d->two, d->k2).r, false);
    json_ratio(f, "select_padded_over_packed_64_clients",
               paired(d->s64, d->k64).r, false);
    json_ratio(f, "select_max_sessions_402_over_400",
               paired(d->a402, d->a400).r, false);
    json_ratio(f, "select_ns_per_txn_1_client", d->one ? d->one->ns : NAN,
               true);
    fputs("  },\n  \"intervals\": {\n", f);
    json_paired(f, "select_2_over_1_clients", paired(d->two, d->one), false);
    json_paired(f, "select_64_over_2_clients", paired(d->s64, d->two), false);
    json_paired(f, "select_padded_over_packed_2_clients", paired(d->two, d->k2),
                false);
    json_paired(f, "select_padded_over_packed_64_clients",
                paired(d->s64, d->k64), false);
    json_paired(f, "select_max_sessions_402_over_400", paired(d->a402, d->a400),
                true);
    fputs("  }", f);
}

/* Padded over packed at each count, with the side of 1 its interval (at
 * the level it was read at) lies on. */
static void json_layout(FILE *f, const layout_cmp *lc)
{
    static const char *const sides[] = {
        "slower beyond the noise", "within the noise",
        "faster beyond the noise", "no interval"};

    fputs(",\n  \"padded_over_packed\": [", f);
    for (size_t i = 0; i < lc->n; i++) {
        const paired_ratio *p = &lc->r[i];
        bool has = lc->side[i] != 2;
        fprintf(f, "%s\n    {\"clients\": %.0f, \"ratio\": ", i ? "," : "",
                lc->clients[i]);
        json_number(f, p->r, 4);
        fputs(", \"ci_low\": ", f);
        json_number(f, has ? p->ci_lo : NAN, 4);
        fputs(", \"ci_high\": ", f);
        json_number(f, has ? p->ci_hi : NAN, 4);
        fprintf(f, ", \"level\": %.3f, \"rounds\": %d, \"side\": ", lc->level,
                p->rounds);
        json_write_string(f, sides[lc->side[i] + 1]);
        fputs("}", f);
    }
    fputs("\n  ]", f);
}

/* Each target: its id, reading, limit, figures as printed and verdict. */
static void json_targets(FILE *f, const report_judged *j)
{
    static const char *const dirs[] = {"at least", "at most", "within of 1"};
    char limit[128];

    fputs(",\n  \"targets\": [", f);
    for (size_t i = 0; i < report_ntargets; i++) {
        const report_target *t = j[i].t;
        bool ci = t->interval && j[i].r.rounds >= 2;
        report_limit_text(limit, sizeof(limit), t, 0);
        fprintf(f, "%s\n    {\"id\": ", i ? "," : "");
        json_write_string(f, t->id);
        fputs(", \"what\": ", f);
        json_write_string(f, t->what);
        fputs(", \"target\": ", f);
        json_write_string(f, limit);
        fprintf(f, ", \"direction\": \"%s\", \"limit\": %g, \"interval\": %s",
                dirs[t->dir], t->limit, t->interval ? "true" : "false");
        fputs(", \"value\": ", f);
        json_number(f, j[i].r.v, t->decimals);
        fputs(", \"ci_low\": ", f);
        json_number(f, ci ? j[i].r.lo : NAN, t->decimals);
        fputs(", \"ci_high\": ", f);
        json_number(f, ci ? j[i].r.hi : NAN, t->decimals);
        fprintf(f, ", \"rounds\": %d, \"verdict\": ",
                t->interval ? j[i].r.rounds : 1);
        json_write_string(f, report_verdict_text(&j[i]));
        fputs("}", f);
    }
    fputs("\n  ]", f);
}

/* The readings shown as information, those measured. */
static void json_infos(FILE *f, const report_data *d)
{
    size_t k = 0;

    fputs(",\n  \"information\": [", f);
    for (size_t i = 0; i < report_ninfos; i++) {
        const report_info *in = &report_infos[i];
        report_reading r = in->read(d);
        bool ci = in->interval && r.rounds >= 2;
        if (!isfinite(r.v))
            continue;
        fprintf(f, "%s\n    {\"target\": ", k++ ? "," : "");
        json_write_string(f, in->target);
        fputs(", \"what\": ", f);
        json_write_string(f, in->what);
        fputs(", \"value\": ", f);
        json_number(f, r.v, in->decimals);
        fputs(", \"ci_low\": ", f);
        json_number(f, ci ? r.lo : NAN, in->decimals);
        fputs(", \"ci_high\": ", f);
        json_number(f, ci ? r.hi : NAN, in->decimals);
        fputs("}", f);
    }
    fputs("\n  ]", f);
}

int report_json_write(const char *path, const report_data *d,
                      const report_judged *j)
{
    const report_opts *o = d->o;
    FILE *f = fopen(path, "w");

    if (f == NULL)
        return -1;
    fprintf(f,
            "{\n  \"bench\": \"report\",\n  \"quick\": %s,\n  \"scale\": %u,\n"
            "  \"accounts\": %u,\n  \"select_seconds\": %.3f,\n"
            "  \"bloat_transactions\": %llu,\n  \"seconds\": %.2f",
            o->quick ? "true" : "false", o->scale, o->scale * 100000,
            o->seconds, (unsigned long long)o->transactions, d->total_s);
    fputs(",\n  \"load_average_start\": ", f);
    json_number(f, d->load0, 2);
    fputs(",\n  \"load_average_end\": ", f);
    json_number(f, load_average(), 2);
    json_steps(f, d);
    json_ratios(f, d);
    json_layout(f, &d->layout);
    json_targets(f, j);
    json_infos(f, d);
    fputs("\n}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}
