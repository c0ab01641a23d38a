/* tests/unit/test_speed_model.c: interpose/speed_model.h against the H200 size sweep it was fitted to (BENCHMARKS.md, session 7 calls 5 and 8): each time within the stated error, and the routing decision it makes on each measured shape; the provisional complex model's monotonicity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "crt/oz2.h"
#include "crt/oz2_complex.h"
#include "interpose/speed_model.h"

/* m, n, k; native, ozaki2 53 bits, ozaki2 34 bits (ms, medians of time_dgemm) */
static const struct {
    int64_t m, n, k;
    double native, oz53, oz34;
} sweep[] = {
    {1024, 1024, 1024, 0.0407, 0.1075, 0.0906},       {1536, 1536, 1536, 0.1485, 0.2290, 0.1812},
    {2048, 2048, 2048, 0.3134, 0.4168, 0.3177},       {3072, 3072, 3072, 1.0333, 1.0721, 0.7934},
    {4096, 4096, 4096, 2.4665, 2.2134, 1.6143},       {6144, 6144, 6144, 8.0705, 6.5392, 4.6964},
    {8192, 8192, 512, 1.3445, 2.9140, 2.1066},        {8192, 8192, 1024, 2.4780, 3.4961, 2.5017},
    {8192, 8192, 2048, 4.8996, 5.1383, 3.7052},       {8192, 8192, 3072, 7.2789, 6.6612, 4.7753},
    {8192, 8192, 4096, 9.6864, 8.2088, 5.8632},       {16384, 16384, 1024, 9.8563, 13.5840, 9.6353},
    {16384, 16384, 2048, 19.4917, 20.0455, 14.2553},  {1024, 1024, 8192, 0.3179, 0.4184, 0.3394},
    {2048, 2048, 8192, 1.2282, 1.1854, 0.8801},       {4096, 4096, 8192, 4.9078, 3.9736, 2.8668},
    {2048, 2048, 16384, 2.4577, 2.2249, 1.6414},      {16384, 1024, 16384, 9.7093, 9.3754, 6.7043},
    {16384, 2048, 4096, 4.9361, 4.6105, 3.3063},      {4096, 16384, 2048, 4.9141, 5.2834, 3.7807},
    {16384, 16384, 512, 5.0917, 11.3994, 8.1774},     {8192, 8192, 8192, 19.619, 14.723, 10.487},
    {16384, 16384, 16384, 162.743, 110.235, 77.120},
};

static double native_ms(int64_t m, int64_t n, int64_t k)
{
    return OZCRT_NATIVE_T0_MS + OZCRT_NATIVE_MNK_MS * (double)m * (double)n * (double)k;
}

/* The model's times within 10% of the measured ones (1024 x 1024 x 8192 at
 * 34 bits the worst; 16384^3 at the power cap 8%), native's within 11%
 * (1536^3 the worst). */
static void test_times(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof sweep / sizeof sweep[0]; i++) {
        const double nat = native_ms(sweep[i].m, sweep[i].n, sweep[i].k);
        if (nat < 0.89 * sweep[i].native || nat > 1.11 * sweep[i].native)
            fail_msg("native %lldx%lldx%lld: model %.4f ms, measured %.4f", (long long)sweep[i].m,
                     (long long)sweep[i].n, (long long)sweep[i].k, nat, sweep[i].native);
        const int bits[2] = {53, 34};
        const double meas[2] = {sweep[i].oz53, sweep[i].oz34};
        for (int b = 0; b < 2; b++) {
            const oz2_plan p = oz2_make_plan(sweep[i].k, bits[b]);
            assert_true(p.n > 0);
            const double pred = nat / ozcrt_oz2_speedup(sweep[i].m, sweep[i].n, sweep[i].k, 1, p.n);
            if (pred < 0.90 * meas[b] || pred > 1.10 * meas[b])
                fail_msg("ozaki2 %d bits %lldx%lldx%lld: model %.4f ms, measured %.4f", bits[b],
                         (long long)sweep[i].m, (long long)sweep[i].n, (long long)sweep[i].k, pred, meas[b]);
        }
    }
}

/* The decisions: the sign of the speed-up right on all but two points, and
 * those two within 7% of 1 (measured 0.94 and 0.99, predicted 1.02). */
static void test_decisions(void **state)
{
    (void)state;
    int checked = 0, missed = 0;
    for (size_t i = 0; i < sizeof sweep / sizeof sweep[0]; i++) {
        const int bits[2] = {53, 34};
        const double meas[2] = {sweep[i].oz53, sweep[i].oz34};
        for (int b = 0; b < 2; b++) {
            const double measured = sweep[i].native / meas[b];
            const double sp = ozcrt_oz2_speedup(sweep[i].m, sweep[i].n, sweep[i].k, 1,
                                                oz2_make_plan(sweep[i].k, bits[b]).n);
            checked++;
            if ((measured >= 1.0) != (sp >= 1.0)) {
                missed++;
                if (measured < 0.93 || measured > 1.07)
                    fail_msg("%lldx%lldx%lld %d bits: measured %.3fx, predicted %.3fx", (long long)sweep[i].m,
                             (long long)sweep[i].n, (long long)sweep[i].k, bits[b], measured, sp);
            }
        }
    }
    assert_int_equal(checked, 46);
    assert_true(missed <= 2);
    /* a batch counts as one launch sequence: 1000 items of 1024^3 at 53 bits pay t0 once */
    assert_true(ozcrt_oz2_speedup(1024, 1024, 1024, 1000, 15) > ozcrt_oz2_speedup(1024, 1024, 1024, 1, 15));
}

/* The complex model (provisional: no complex measurements yet), held to
 * what any model of it must do: the predicted speed-up grows with each of
 * m, n, k and the batch, and falls with the split moduli; 8192^3 at 53
 * bits (N' = 18) is predicted faster than native ZGEMM. */
static void test_complex(void **state)
{
    (void)state;
    static const int64_t sizes[] = {512, 1024, 2048, 4096, 8192, 16384, 32768};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    for (int a = 0; a < ns; a++)
        for (int b = 0; b < ns; b++)
            for (int i = 0; i + 1 < ns; i++) {
                const int64_t x = sizes[a], y = sizes[b], lo = sizes[i], hi = sizes[i + 1];
                assert_true(ozcrt_oz2z_speedup(lo, x, y, 1, 18) < ozcrt_oz2z_speedup(hi, x, y, 1, 18));
                assert_true(ozcrt_oz2z_speedup(x, lo, y, 1, 18) < ozcrt_oz2z_speedup(x, hi, y, 1, 18));
                assert_true(ozcrt_oz2z_speedup(x, y, lo, 1, 18) < ozcrt_oz2z_speedup(x, y, hi, 1, 18));
            }
    for (int q = 2; q < OZ2Z_SPLIT_NMODULI; q++)
        assert_true(ozcrt_oz2z_speedup(4096, 4096, 4096, 1, q + 1) < ozcrt_oz2z_speedup(4096, 4096, 4096, 1, q));
    assert_true(ozcrt_oz2z_speedup(1024, 1024, 1024, 100, 18) > ozcrt_oz2z_speedup(1024, 1024, 1024, 1, 18));
    const oz2z_plan p = oz2z_make_plan(8192, 53);
    assert_int_equal(p.n_split, 18);
    assert_true(ozcrt_oz2z_speedup(8192, 8192, 8192, 1, p.n_split) > 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_times), cmocka_unit_test(test_decisions),
                                       cmocka_unit_test(test_complex)};
    return cmocka_run_group_tests_name("speed_model", tests, NULL, NULL);
}
