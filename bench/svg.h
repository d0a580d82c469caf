/*
 * svg.h: line charts as standalone SVG files, for the benchmark report.
 *
 * A chart has labelled axes with ticks, a legend, and one line (with a
 * marker at each point) per series.  The x axis is linear or log2 (for
 * client counts: ticks at powers of two); the y axis is linear from zero,
 * or from the data's minimum when from_zero is false.  Tick labels use SI
 * suffixes (k, M, G) for large values.
 */
#ifndef KEEL_BENCH_SVG_H
#define KEEL_BENCH_SVG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct svg_series {
    const char *label; /* shown in the legend */
    const double *x;
    const double *y;
    size_t n;
    bool dashed; /* drawn dashed, to tell related series apart */
} svg_series;

typedef struct svg_chart {
    const char *title;
    const char *x_label; /* with its unit, e.g. "clients (threads)" */
    const char *y_label; /* e.g. "transactions per second" */
    bool x_log2;         /* x > 0 everywhere; ticks at powers of two */
    bool y_from_zero;
    const svg_series *series;
    size_t nseries;
} svg_chart;

/*
 * Writes the chart to path as an SVG document (800 x 480).  Points whose
 * x or y is not finite (or x <= 0 on a log2 axis) are skipped.  0, or -1
 * if the file cannot be written (errno set).
 */
int svg_write_line_chart(const char *path, const svg_chart *c);

#endif /* KEEL_BENCH_SVG_H */
