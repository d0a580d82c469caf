/*
 * test_bench_stats.c: the statistics the benchmarks' readings rest on
 * (bench/stats.c).  Student's t quantiles match the published tables at
 * the levels the report uses, 95% for one comparison and 99% for the five
 * client counts of the layout comparison together, and tend to the
 * normal's; a confidence interval is the mean plus or minus t times the
 * standard error, and widens with the level; medians and extremes come
 * out of unsorted rounds; the report's verdicts follow the interval: met
 * only when the whole interval meets the target, within the noise when it
 * holds the limit, not met when the whole interval fails it.
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

/* A single figure: met or not, the limit itself meeting it. */
static void test_value_verdicts(void **state)
{
    (void)state;
    assert_int_equal(bench_verdict_value(340, BENCH_AT_MOST, 340), BENCH_MET);
    assert_int_equal(bench_verdict_value(341, BENCH_AT_MOST, 340),
                     BENCH_NOT_MET);
    assert_int_equal(bench_verdict_value(1.85, BENCH_AT_LEAST, 1.85),
                     BENCH_MET);
    assert_int_equal(bench_verdict_value(1.84, BENCH_AT_LEAST, 1.85),
                     BENCH_NOT_MET);
    assert_int_equal(bench_verdict_value(1.04, BENCH_NEAR_ONE, 0.05),
                     BENCH_MET);
    assert_int_equal(bench_verdict_value(0.94, BENCH_NEAR_ONE, 0.05),
                     BENCH_NOT_MET);
    assert_int_equal(bench_verdict_value(NAN, BENCH_AT_MOST, 340),
                     BENCH_NOT_MET);
    assert_int_equal(bench_verdict_value(NAN, BENCH_AT_LEAST, 1),
                     BENCH_NOT_MET);
}

/*
 * "At least as fast" (a ratio >= 1): met only when the interval's lower
 * end is at or above 1; within the noise when it holds 1, however narrow
 * and wherever the median lies; not met when its upper end is below 1,
 * however close.
 */
static void test_at_least_verdicts(void **state)
{
    (void)state;
    assert_int_equal(bench_verdict_interval(1.02, 1.20, 3, BENCH_AT_LEAST, 1),
                     BENCH_MET);
    assert_int_equal(bench_verdict_interval(1.0, 1.05, 3, BENCH_AT_LEAST, 1),
                     BENCH_MET);
    assert_int_equal(bench_verdict_interval(0.97, 1.05, 3, BENCH_AT_LEAST, 1),
                     BENCH_WITHIN_NOISE);
    assert_int_equal(bench_verdict_interval(0.999, 1.001, 8, BENCH_AT_LEAST, 1),
                     BENCH_WITHIN_NOISE);
    assert_int_equal(bench_verdict_interval(0.80, 1.0, 3, BENCH_AT_LEAST, 1),
                     BENCH_WITHIN_NOISE);
    assert_int_equal(bench_verdict_interval(0.97, 0.999, 3, BENCH_AT_LEAST, 1),
                     BENCH_NOT_MET);
    assert_int_equal(bench_verdict_interval(0.70, 0.90, 3, BENCH_AT_LEAST, 1),
                     BENCH_NOT_MET);
    /* Other limits alike: two clients over one at least 1.85. */
    assert_int_equal(
        bench_verdict_interval(1.86, 2.10, 6, BENCH_AT_LEAST, 1.85), BENCH_MET);
    assert_int_equal(
        bench_verdict_interval(1.70, 2.10, 6, BENCH_AT_LEAST, 1.85),
        BENCH_WITHIN_NOISE);
    assert_int_equal(
        bench_verdict_interval(1.60, 1.84, 6, BENCH_AT_LEAST, 1.85),
        BENCH_NOT_MET);
}

/* At most a limit (a time ratio, at most 1% slower), the mirror image. */
static void test_at_most_verdicts(void **state)
{
    (void)state;
    assert_int_equal(
        bench_verdict_interval(0.998, 1.005, 12, BENCH_AT_MOST, 1.01),
        BENCH_MET);
    assert_int_equal(
        bench_verdict_interval(1.0003, 1.01, 12, BENCH_AT_MOST, 1.01),
        BENCH_MET);
    assert_int_equal(
        bench_verdict_interval(0.999, 1.011, 12, BENCH_AT_MOST, 1.01),
        BENCH_WITHIN_NOISE);
    assert_int_equal(
        bench_verdict_interval(1.01, 1.03, 12, BENCH_AT_MOST, 1.01),
        BENCH_WITHIN_NOISE);
    assert_int_equal(
        bench_verdict_interval(1.011, 1.03, 12, BENCH_AT_MOST, 1.01),
        BENCH_NOT_MET);
}

/* Two settings alike within 5% of each other: met inside the band,
 * holding 1 or not; within the noise across either edge; not met wholly
 * beyond one. */
static void test_near_one_verdicts(void **state)
{
    (void)state;
    assert_int_equal(
        bench_verdict_interval(0.98, 1.03, 4, BENCH_NEAR_ONE, 0.05), BENCH_MET);
    assert_int_equal(
        bench_verdict_interval(0.95, 1.05, 4, BENCH_NEAR_ONE, 0.05), BENCH_MET);
    assert_int_equal(
        bench_verdict_interval(1.01, 1.03, 4, BENCH_NEAR_ONE, 0.05), BENCH_MET);
    assert_int_equal(
        bench_verdict_interval(0.94, 1.03, 4, BENCH_NEAR_ONE, 0.05),
        BENCH_WITHIN_NOISE);
    assert_int_equal(
        bench_verdict_interval(1.04, 1.10, 4, BENCH_NEAR_ONE, 0.05),
        BENCH_WITHIN_NOISE);
    assert_int_equal(
        bench_verdict_interval(0.80, 1.20, 4, BENCH_NEAR_ONE, 0.05),
        BENCH_WITHIN_NOISE);
    assert_int_equal(
        bench_verdict_interval(1.06, 1.20, 4, BENCH_NEAR_ONE, 0.05),
        BENCH_NOT_MET);
    assert_int_equal(
        bench_verdict_interval(0.70, 0.94, 4, BENCH_NEAR_ONE, 0.05),
        BENCH_NOT_MET);
}

/* Without an interval there is no verdict on one, whatever its figures;
 * the words. */
static void test_verdicts(void **state)
{
    (void)state;
    for (int d = BENCH_AT_LEAST; d <= BENCH_NEAR_ONE; d++) {
        bench_direction dir = (bench_direction)d;
        assert_int_equal(bench_verdict_interval(1.0, 1.0, 1, dir, 0.05),
                         BENCH_NO_INTERVAL);
        assert_int_equal(bench_verdict_interval(0.9, 1.1, 0, dir, 0.05),
                         BENCH_UNPAIRED);
        assert_int_equal(bench_verdict_interval(NAN, 1.1, 4, dir, 0.05),
                         BENCH_NO_INTERVAL);
        assert_int_equal(bench_verdict_interval(1.1, 0.9, 4, dir, 0.05),
                         BENCH_NO_INTERVAL);
    }
    assert_string_equal(bench_verdict_text(BENCH_MET), "met");
    assert_string_equal(bench_verdict_text(BENCH_WITHIN_NOISE),
                        "within the noise");
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
        cmocka_unit_test(test_value_verdicts),
        cmocka_unit_test(test_at_least_verdicts),
        cmocka_unit_test(test_at_most_verdicts),
        cmocka_unit_test(test_near_one_verdicts),
        cmocka_unit_test(test_verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
