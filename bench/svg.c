/*
 * svg.c: the report's line charts, written as SVG text.
 */
#include "svg.h"

#include <math.h>
#include <stdio.h>

#define SVG_W      800
#define SVG_H      480
#define PLOT_LEFT  90.0
#define PLOT_RIGHT 590.0
#define PLOT_TOP   50.0
#define PLOT_BOT   410.0
#define MAX_TICKS  24

static const char *const palette[] = {
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
};
#define NCOLORS (sizeof(palette) / sizeof(palette[0]))

/* An axis: the data range it shows and its ticks. */
typedef struct svg_axis {
    bool log2;
    double lo, hi; /* in axis units (log2 of the value on a log2 axis) */
    double ticks[MAX_TICKS];
    int nticks;
} svg_axis;

static void put_escaped(FILE *f, const char *s)
{
    for (; s != NULL && *s != '\0'; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* A tick label: at most 3 significant digits, with an SI suffix. */
static void tick_label(double v, char *buf, size_t len)
{
    double a = fabs(v);

    if (a >= 1e9)
        snprintf(buf, len, "%.3gG", v / 1e9);
    else if (a >= 1e6)
        snprintf(buf, len, "%.3gM", v / 1e6);
    else if (a >= 1e3)
        snprintf(buf, len, "%.3gk", v / 1e3);
    else
        snprintf(buf, len, "%.3g", v);
}

/* 1, 2 or 5 times a power of ten, the smallest at least raw. */
static double nice_step(double raw)
{
    double p = pow(10, floor(log10(raw)));
    double m = raw / p;

    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* Sets up a linear axis over [lo, hi] with about 5 ticks. */
static void axis_linear(svg_axis *a, double lo, double hi)
{
    double step;

    if (!(hi > lo))
        hi = lo + (lo != 0 ? fabs(lo) : 1);
    step = nice_step((hi - lo) / 5);
    a->log2 = false;
    a->lo = floor(lo / step) * step;
    a->hi = ceil(hi / step) * step;
    a->nticks = 0;
    for (double t = a->lo; t <= a->hi + step / 2 && a->nticks < MAX_TICKS;
         t += step)
        a->ticks[a->nticks++] = fabs(t) < step / 1e6 ? 0 : t;
}

/* Sets up a log2 axis over [lo, hi] (both > 0): ticks at powers of two,
 * every other one when there would be more than 12. */
static void axis_log2(svg_axis *a, double lo, double hi)
{
    int e0 = (int)floor(log2(lo)), e1 = (int)ceil(log2(hi));
    int every;

    if (e1 <= e0)
        e1 = e0 + 1;
    every = e1 - e0 > 12 ? 2 : 1;
    a->log2 = true;
    a->lo = e0;
    a->hi = e1;
    a->nticks = 0;
    for (int e = e0; e <= e1 && a->nticks < MAX_TICKS; e += every)
        a->ticks[a->nticks++] = e;
}

static bool point_ok(const svg_chart *c, double x, double y)
{
    return isfinite(x) && isfinite(y) && (!c->x_log2 || x > 0);
}

static double map(const svg_axis *a, double v, double p0, double p1)
{
    double u = a->log2 ? log2(v) : v;
    return p0 + (u - a->lo) / (a->hi - a->lo) * (p1 - p0);
}

int svg_write_line_chart(const char *path, const svg_chart *c)
{
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    svg_axis ax, ay;
    char buf[64];
    FILE *f;

    for (size_t s = 0; s < c->nseries; s++)
        for (size_t i = 0; i < c->series[s].n; i++) {
            double x = c->series[s].x[i], y = c->series[s].y[i];
            if (!point_ok(c, x, y))
                continue;
            xmin = fmin(xmin, x);
            xmax = fmax(xmax, x);
            ymin = fmin(ymin, y);
            ymax = fmax(ymax, y);
        }
    if (!isfinite(xmin)) { /* no data: empty axes */
        xmin = 1;
        xmax = 2;
        ymin = 0;
        ymax = 1;
    }
    if (c->x_log2)
        axis_log2(&ax, xmin, xmax);
    else
        axis_linear(&ax, xmin, xmax);
    axis_linear(&ay, c->y_from_zero ? fmin(0, ymin) : ymin, ymax);

    f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            SVG_W, SVG_H, SVG_W, SVG_H);
    fprintf(f,
            "<text x=\"%d\" y=\"28\" text-anchor=\"middle\" "
            "font-size=\"16\" font-weight=\"bold\">",
            SVG_W / 2);
    put_escaped(f, c->title);
    fputs("</text>\n", f);

    /* Grid, ticks and tick labels. */
    for (int i = 0; i < ay.nticks; i++) {
        double y = PLOT_BOT + (ay.ticks[i] - ay.lo) / (ay.hi - ay.lo) *
                                  (PLOT_TOP - PLOT_BOT);
        tick_label(ay.ticks[i], buf, sizeof(buf));
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#e0e0e0\"/>\n"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"black\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                PLOT_LEFT, y, PLOT_RIGHT, y, PLOT_LEFT - 5, y, PLOT_LEFT, y,
                PLOT_LEFT - 8, y + 4, buf);
    }
    for (int i = 0; i < ax.nticks; i++) {
        double v = ax.log2 ? exp2(ax.ticks[i]) : ax.ticks[i];
        double x = PLOT_LEFT + (ax.ticks[i] - ax.lo) / (ax.hi - ax.lo) *
                                   (PLOT_RIGHT - PLOT_LEFT);
        tick_label(v, buf, sizeof(buf));
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#e0e0e0\"/>\n"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"black\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s"
                "</text>\n",
                x, PLOT_TOP, x, PLOT_BOT, x, PLOT_BOT, x, PLOT_BOT + 5, x,
                PLOT_BOT + 20, buf);
    }
    fprintf(f,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"none\" stroke=\"black\"/>\n",
            PLOT_LEFT, PLOT_TOP, PLOT_RIGHT - PLOT_LEFT, PLOT_BOT - PLOT_TOP);

    /* Axis labels. */
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
            (PLOT_LEFT + PLOT_RIGHT) / 2, PLOT_BOT + 45);
    put_escaped(f, c->x_label);
    if (c->x_log2)
        fputs(" (log2 scale)", f);
    fputs("</text>\n", f);
    fprintf(f,
            "<text x=\"20\" y=\"%.1f\" text-anchor=\"middle\" "
            "transform=\"rotate(-90 20 %.1f)\">",
            (PLOT_TOP + PLOT_BOT) / 2, (PLOT_TOP + PLOT_BOT) / 2);
    put_escaped(f, c->y_label);
    fputs("</text>\n", f);

    /* The series, then the legend. */
    for (size_t s = 0; s < c->nseries; s++) {
        const svg_series *se = &c->series[s];
        const char *color = palette[s % NCOLORS];
        const char *sep = "";
        fprintf(f,
                "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s "
                "points=\"",
                color, se->dashed ? " stroke-dasharray=\"6 4\"" : "");
        for (size_t i = 0; i < se->n; i++, sep = " ") {
            if (!point_ok(c, se->x[i], se->y[i]))
                continue;
            fprintf(f, "%s%.1f,%.1f", sep,
                    map(&ax, se->x[i], PLOT_LEFT, PLOT_RIGHT),
                    map(&ay, se->y[i], PLOT_BOT, PLOT_TOP));
        }
        fputs("\"/>\n", f);
        for (size_t i = 0; i < se->n && se->n <= 64; i++) {
            if (!point_ok(c, se->x[i], se->y[i]))
                continue;
            fprintf(f,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
                    map(&ax, se->x[i], PLOT_LEFT, PLOT_RIGHT),
                    map(&ay, se->y[i], PLOT_BOT, PLOT_TOP), color);
        }
        double ly = PLOT_TOP + 10 + 22.0 * (double)s;
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"%s\" stroke-width=\"2\"%s/>\n"
                "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\">",
                PLOT_RIGHT + 15, ly, PLOT_RIGHT + 45, ly, color,
                se->dashed ? " stroke-dasharray=\"6 4\"" : "", PLOT_RIGHT + 30,
                ly, color, PLOT_RIGHT + 52, ly + 4);
        put_escaped(f, se->label);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    return fclose(f) == 0 ? 0 : -1;
}
