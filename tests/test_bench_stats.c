/*
 * test_bench_stats.c: the statistics the benchmarks' readings rest on
 * (bench/stats.c).  Student's t quantiles match the published tables at
 * the levels the report uses, 95% for one comparison and 99% for the five
 * client counts of the layout comparison together, and tend to the
 * normal's; a confidence interval is the mean plus or minus t times the
 * standard error, and widens with the level; medians and extremes come
 * out of unsorted rounds; the report's verdicts follow the interval.
 */
#include <math.h>

#include "testutil.h"

#include "stats.h"

/* Published two-sided critical values of t: 95% (p = 0.975) and 99%
 * (p = 0.995), by degrees of freedom. */
static const struct {
    int df;
    double t975, t995;
} t_table[] = {
    {1, 12.706, 63.657}, {2, 4.303, 9.925},   {3, 3.182, 5.841},
    {4, 2.776, 4.604},   {5, 2.571, 4.032},   {7, 2.365, 3.499},
    {10, 2.228, 3.169},  {20, 2.086, 2.845},  {30, 2.042, 2.750},
    {60, 2.000, 2.660},  {120, 1.980, 2.617},
};

static void test_t_quantiles(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(t_table) / sizeof(t_table[0]); i++) {
        assert_true(fabs(bench_t_quantile(0.975, t_table[i].df) -
                         t_table[i].t975) < 0.0006);
        assert_true(fabs(bench_t_quantile(0.995, t_table[i].df) -
                         t_table[i].t995) < 0.0006);
    }
    /* The median, and towards the normal distribution. */
    assert_true(fabs(bench_t_quantile(0.5, 7)) < 1e-9);
    assert_true(fabs(bench_t_quantile(0.975, 100000) - 1.959964) < 0.0002);
    assert_true(fabs(bench_t_quantile(0.995, 100000) - 2.575829) < 0.0002);
    /* Increasing in p, decreasing in df. */
    assert_true(bench_t_quantile(0.99, 4) > bench_t_quantile(0.98, 4));
    assert_true(bench_t_quantile(0.99, 4) > bench_t_quantile(0.99, 5));
    /* Outside the domain. */
    assert_true(isnan(bench_t_quantile(0.975, 0)));
    assert_true(isnan(bench_t_quantile(1.0, 3)));
    assert_true(isnan(bench_t_quantile(0.4, 3)));
}

static void test_confidence_intervals(void **state)
{
    (void)state;
    /* Four rounds of mean 1; the standard error computed here. */
    const double v[4] = {0.98, 1.02, 0.99, 1.01};
    double mean = 1.0, ss = 0, se;
    bench_ci c95, c99;

    for (int i = 0; i < 4; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    se = sqrt(ss / 3) / 2;
    c95 = bench_ci_of(v, 4);
    c99 = bench_ci_at(v, 4, 0.99);
    assert_int_equal(c95.n, 4);
    assert_true(fabs(c95.mean - mean) < 1e-12);
    assert_true(fabs(c95.high - (mean + 3.182 * se)) < 0.001 * se + 1e-6);
    assert_true(fabs(c95.low - (mean - 3.182 * se)) < 0.001 * se + 1e-6);
    assert_true(fabs(c99.high - (mean + 5.841 * se)) < 0.001 * se + 1e-6);
    assert_true(c99.low < c95.low && c99.high > c95.high);
    /* One value: no spread, the interval is the value. */
    c95 = bench_ci_of(v, 1);
    assert_true(c95.low == v[0] && c95.high == v[0]);
}

static void test_medians(void **state)
{
    (void)state;
    double odd[5] = {5, 1, 4, 2, 3}, even[4] = {10, 40, 20, 30};
    bench_stat s = bench_stat_of(odd, 5);

    assert_true(s.median == 3 && s.min == 1 && s.max == 5);
    assert_int_equal(s.rounds, 5);
    s = bench_stat_of(even, 4);
    assert_true(s.median == 25 && s.min == 10 && s.max == 40);
    assert_true(fabs(bench_spread_pct(s) - 120.0) < 1e-9);
}

static void test_verdicts(void **state)
{
    (void)state;
    /* Alike: the interval must lie within the margin, holding 1 or not
     * (a narrow interval may show a real but small difference); not met
     * only wholly beyond it. */
    assert_int_equal(bench_verdict_same(0.98, 1.03, 4, 0.05), BENCH_MET);
    assert_int_equal(bench_verdict_same(0.95, 1.05, 4, 0.05), BENCH_MET);
    assert_int_equal(bench_verdict_same(1.01, 1.03, 4, 0.05), BENCH_MET);
    assert_int_equal(bench_verdict_same(0.96, 0.99, 4, 0.05), BENCH_MET);
    assert_int_equal(bench_verdict_same(0.94, 1.03, 4, 0.05), BENCH_WIDE);
    assert_int_equal(bench_verdict_same(0.98, 1.06, 4, 0.05), BENCH_WIDE);
    assert_int_equal(bench_verdict_same(0.90, 0.99, 4, 0.05), BENCH_WIDE);
    assert_int_equal(bench_verdict_same(1.06, 1.20, 4, 0.05), BENCH_NOT_MET);
    /* Narrow, but straddling the margin's edge: not settled. */
    assert_int_equal(bench_verdict_same(0.93, 0.96, 4, 0.05), BENCH_WIDE);
    assert_int_equal(bench_verdict_same(1.05, 1.10, 4, 0.05), BENCH_WIDE);
    assert_int_equal(bench_verdict_same(0.90, 0.95, 4, 0.05), BENCH_WIDE);
    assert_int_equal(bench_verdict_same(0.70, 0.94, 4, 0.05), BENCH_NOT_MET);
    assert_int_equal(bench_verdict_same(1.0, 1.0, 1, 0.05), BENCH_NO_INTERVAL);
    assert_int_equal(bench_verdict_same(0.9, 1.1, 0, 0.05), BENCH_UNPAIRED);
    assert_int_equal(bench_verdict_same(NAN, NAN, 4, 0.05), BENCH_NO_INTERVAL);

    /* At least as fast: beyond the noise above 1, or within it and not
     * reaching below the margin; never when wholly below 1. */
    assert_int_equal(bench_verdict_at_least(1.10, 1.02, 1.20, 3, 0.05),
                     BENCH_MET);
    assert_int_equal(bench_verdict_at_least(1.01, 0.97, 1.05, 3, 0.05),
                     BENCH_MET);
    assert_int_equal(bench_verdict_at_least(0.99, 0.97, 1.02, 3, 0.05),
                     BENCH_MET_IN_NOISE);
    /* A median below an interval wholly above 1 (skewed rounds). */
    assert_int_equal(bench_verdict_at_least(0.99, 1.01, 1.30, 3, 0.05),
                     BENCH_MET);
    /* The boundaries: an upper end of exactly 1, a lower end of exactly
     * 1 - margin. */
    assert_int_equal(bench_verdict_at_least(0.98, 0.96, 1.0, 3, 0.05),
                     BENCH_MET_IN_NOISE);
    assert_int_equal(bench_verdict_at_least(1.0, 0.95, 1.05, 3, 0.05),
                     BENCH_MET);
    /* A median above 1 does not make a wide interval a pass. */
    assert_int_equal(bench_verdict_at_least(1.01, 0.80, 1.20, 3, 0.05),
                     BENCH_WIDE);
    assert_int_equal(bench_verdict_at_least(0.99, 0.80, 1.20, 3, 0.05),
                     BENCH_WIDE);
    /* Slower beyond the noise, even by less than the margin. */
    assert_int_equal(bench_verdict_at_least(0.98, 0.97, 0.99, 3, 0.05),
                     BENCH_NOT_MET);
    assert_int_equal(bench_verdict_at_least(1.0, 1.0, 1.0, 1, 0.05),
                     BENCH_NO_INTERVAL);
    assert_int_equal(bench_verdict_at_least(1.0, 0.9, 1.1, 0, 0.05),
                     BENCH_UNPAIRED);
    assert_int_equal(bench_verdict_at_least(1.0, NAN, 1.1, 3, 0.05),
                     BENCH_NO_INTERVAL);

    /* A time ratio bounded above: met below the bound, holding 1 or not;
     * not met when the whole interval is at or past it. */
    assert_int_equal(bench_verdict_below(0.998, 1.005, 12, 1.01), BENCH_MET);
    assert_int_equal(bench_verdict_below(1.0003, 1.0034, 12, 1.01), BENCH_MET);
    assert_int_equal(bench_verdict_below(0.95, 0.99, 12, 1.01), BENCH_MET);
    /* The bound itself is not below it. */
    assert_int_equal(bench_verdict_below(0.999, 1.01, 12, 1.01), BENCH_WIDE);
    assert_int_equal(bench_verdict_below(1.002, 1.03, 12, 1.01), BENCH_WIDE);
    assert_int_equal(bench_verdict_below(1.01, 1.03, 12, 1.01), BENCH_NOT_MET);
    assert_int_equal(bench_verdict_below(1.02, 1.05, 12, 1.01), BENCH_NOT_MET);
    assert_int_equal(bench_verdict_below(1.0, 1.0, 1, 1.01), BENCH_NO_INTERVAL);
    assert_int_equal(bench_verdict_below(0.9, 1.1, 0, 1.01), BENCH_UNPAIRED);
    assert_int_equal(bench_verdict_below(0.99, NAN, 12, 1.01),
                     BENCH_NO_INTERVAL);

    /* A throughput ratio bounded below: met at or above the bound, holding
     * 1 or not; not met when the whole interval is below it. */
    assert_int_equal(bench_verdict_above(0.96, 1.02, 8, 0.95), BENCH_MET);
    assert_int_equal(bench_verdict_above(0.95, 0.97, 8, 0.95), BENCH_MET);
    assert_int_equal(bench_verdict_above(1.06, 1.12, 8, 0.95), BENCH_MET);
    assert_int_equal(bench_verdict_above(0.949, 1.02, 8, 0.95), BENCH_WIDE);
    assert_int_equal(bench_verdict_above(0.90, 0.95, 8, 0.95), BENCH_WIDE);
    assert_int_equal(bench_verdict_above(0.90, 0.949, 8, 0.95), BENCH_NOT_MET);
    assert_int_equal(bench_verdict_above(1.0, 1.0, 1, 0.95), BENCH_NO_INTERVAL);
    assert_int_equal(bench_verdict_above(0.9, 1.1, 0, 0.95), BENCH_UNPAIRED);
    assert_int_equal(bench_verdict_above(NAN, 0.99, 8, 0.95),
                     BENCH_NO_INTERVAL);

    /* All of several: the most severe. */
    {
        bench_verdict v[4] = {BENCH_MET, BENCH_MET_IN_NOISE, BENCH_MET,
                              BENCH_MET};
        assert_int_equal(bench_verdict_worst(v, 4), BENCH_MET_IN_NOISE);
        v[2] = BENCH_WIDE;
        assert_int_equal(bench_verdict_worst(v, 4), BENCH_WIDE);
        v[3] = BENCH_NO_INTERVAL;
        assert_int_equal(bench_verdict_worst(v, 4), BENCH_NO_INTERVAL);
        v[0] = BENCH_NOT_MET;
        assert_int_equal(bench_verdict_worst(v, 4), BENCH_NOT_MET);
        assert_int_equal(bench_verdict_worst(v, 0), BENCH_MET);
    }
    assert_string_equal(bench_verdict_text(BENCH_MET), "met");
    assert_string_equal(bench_verdict_text(BENCH_MET_IN_NOISE),
                        "met, within the noise");
    assert_string_equal(bench_verdict_text(BENCH_WIDE),
                        "inconclusive, the interval reaches past the margin");
    assert_string_equal(bench_verdict_text(BENCH_UNPAIRED),
                        "inconclusive, the runs are not paired");
    assert_string_equal(bench_verdict_text(BENCH_NO_INTERVAL),
                        "inconclusive, one round gives no interval");
    assert_string_equal(bench_verdict_text(BENCH_NOT_MET), "not met");

    /* The side of 1 as printed to three places: an end that prints as
     * 1.000 holds 1. */
    assert_int_equal(bench_interval_side(1.002, 1.031, 3), 1);
    assert_int_equal(bench_interval_side(1.0004, 1.031, 3), 0);
    assert_int_equal(bench_interval_side(1.0006, 1.031, 3), 1);
    assert_int_equal(bench_interval_side(0.95, 0.9996, 3), 0);
    assert_int_equal(bench_interval_side(0.95, 0.9994, 3), -1);
    assert_int_equal(bench_interval_side(0.97, 1.02, 3), 0);
    assert_int_equal(bench_interval_side(NAN, NAN, 3), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_t_quantiles),
        cmocka_unit_test(test_confidence_intervals),
        cmocka_unit_test(test_medians),
        cmocka_unit_test(test_verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
