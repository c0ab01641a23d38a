/* tests/unit/test_slicing.c: slicing/slicing.h against phase22.md steps 1-3: scale exponents, the exact hi/lo split, symmetric residues. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <inttypes.h>

#include "slicing/slicing.h"
#include "crt/moduli.h"
#include "oz_test_util.h"

/* 2^e as an exact quad for any e in [-2200, 2100] (2^1024 is not a double). */
static oz_quad quad_pow2(int e)
{
    int h = e / 2;
    return (oz_quad)ldexp(1.0, h) * (oz_quad)ldexp(1.0, e - h);
}

/* ---- scale exponents ---- */

/* absmax < 2^s <= 2 absmax, checked exactly, and equal to the ilogb model. */
static void check_scale_exponent(double absmax)
{
    int s = oz_scale_exponent(absmax);
    if (absmax == 0.0) {
        assert_int_equal(s, 0);
        return;
    }
    oz_quad p = quad_pow2(s);
    if (!((oz_quad)absmax < p && p <= 2 * (oz_quad)absmax))
        fail_msg("scale exponent of %a is %d: not max < 2^s <= 2 max", absmax, s);
    assert_int_equal(s, oz_model_scale_exponent(absmax));
    /* ldexp(absmax, -s) is exact (scaling a value up or into [0.5, 1)) */
    double v = ldexp(absmax, -s);
    assert_true(v >= 0.5 && v < 1.0);
}

static void test_scale_exponent_edges(void **state)
{
    (void)state;
    check_scale_exponent(0.0);
    check_scale_exponent(0x1p-1074); /* smallest subnormal: s = -1073 */
    assert_int_equal(oz_scale_exponent(0x1p-1074), -1073);
    check_scale_exponent(0x1.ffffffffffffep-1023); /* largest subnormal */
    check_scale_exponent(DBL_MIN);
    check_scale_exponent(nextafter(DBL_MIN, 0.0));
    check_scale_exponent(DBL_MAX); /* s = 1024: 2^s is not a double */
    assert_int_equal(oz_scale_exponent(DBL_MAX), 1024);
    check_scale_exponent(1.0);
    assert_int_equal(oz_scale_exponent(1.0), 1);
    check_scale_exponent(nextafter(1.0, 0.0));
    assert_int_equal(oz_scale_exponent(nextafter(1.0, 0.0)), 0);
    check_scale_exponent(nextafter(1.0, 2.0));
    check_scale_exponent(0.5);
    assert_int_equal(oz_scale_exponent(0.5), 0);
    check_scale_exponent(1e300);
    check_scale_exponent(1e-300);
    for (int e = -1074; e <= 1023; e++) {
        double x = ldexp(1.0, e);
        check_scale_exponent(x);
        assert_int_equal(oz_scale_exponent(x), e + 1); /* 2^e < 2^(e+1) = 2 * 2^e */
        check_scale_exponent(nextafter(x, 0.0));
        check_scale_exponent(nextafter(x, INFINITY));
    }
    assert_int_equal(oz_scale_exponent(INFINITY), OZ_SCALE_SPECIAL);
    assert_int_equal(oz_scale_exponent(NAN), OZ_SCALE_SPECIAL);
}

static void test_scale_exponent_random(void **state)
{
    (void)state;
    for (int i = 0; i < 200000; i++)
        check_scale_exponent(fabs(oz_rng_any_finite()));
}

/* ---- the hi/lo split of a scaled value v in (-1, 1) ---- */

static void check_slice(double v)
{
    int32_t hi, lo;
    int64_t mhi, mlo;
    if (!(v > -1.0 && v < 1.0))
        fail_msg("test bug: %a is not in (-1, 1)", v);
    oz_slice(v, &hi, &lo);
    oz_model_slice(v, 0, &mhi, &mlo);
    if (hi != mhi || lo != mlo)
        fail_msg("slice of %a: (hi, lo) = (%" PRId32 ", %" PRId32 "), spec model gives (%" PRId64 ", %" PRId64 ")",
                 v, hi, lo, mhi, mlo);
    if (hi > 131072 || hi < -131072 || lo > 65536 || lo < -65536)
        fail_msg("slice of %a out of range: hi %" PRId32 " lo %" PRId32, v, hi, lo);
    /* v = hi 2^-17 + lo 2^-34 + d, exactly in quad (the span is < 90 bits) */
    oz_quad d = (oz_quad)v - (oz_quad)hi * quad_pow2(-17) - (oz_quad)lo * quad_pow2(-34);
    if (d < 0)
        d = -d;
    if (d > quad_pow2(-35))
        fail_msg("slice of %a: |d| = %a > 2^-35", v, (double)d);
    /* and d is what is left below the 2^-34 grid: the slices are rne(v 2^34) */
    if (fabs(v) < 0x1p-35)
        assert_true(hi == 0 && lo == 0);
}

static void check_slice_pm(double v)
{
    check_slice(v);
    check_slice(-v);
}

static void expect_slice(double v, int32_t want_hi, int32_t want_lo)
{
    int32_t hi, lo;
    check_slice(v);
    oz_slice(v, &hi, &lo);
    if (hi != want_hi || lo != want_lo)
        fail_msg("slice of %a: got (%" PRId32 ", %" PRId32 "), want (%" PRId32 ", %" PRId32 ")", v, hi, lo,
                 want_hi, want_lo);
}

static void test_slice_edges(void **state)
{
    (void)state;
    expect_slice(0.0, 0, 0);
    expect_slice(-0.0, 0, 0);
    check_slice_pm(0x1p-1074);
    check_slice_pm(0x1.ffffffffffffep-1023);
    check_slice_pm(DBL_MIN);
    check_slice_pm(nextafter(1.0, 0.0));
    expect_slice(nextafter(1.0, 0.0), 131072, 0); /* 1 - 2^-53 rounds up to 2^17 */
    expect_slice(-nextafter(1.0, 0.0), -131072, 0);
    expect_slice(0.5, 65536, 0);
    for (int e = -1; e >= -1074; e--)
        check_slice_pm(ldexp(1.0, e));
    for (int e = -1; e >= -60; e--) { /* neighbours of powers of two */
        check_slice_pm(nextafter(ldexp(1.0, e), 0.0));
        check_slice_pm(nextafter(ldexp(1.0, e), 1.0));
    }
    expect_slice(0x1p-17, 1, 0);
    expect_slice(0x1p-34, 0, 1);
    expect_slice(0x1p-60, 0, 0);

    /* ties of hi: v = (2j+1) 2^-18, v 2^17 = j + 1/2 rounds to the even one */
    expect_slice(0x1p-18, 0, 65536);       /* 0.5 -> 0, remainder 2^-18 = 2^16 2^-34 */
    expect_slice(3 * 0x1p-18, 2, -65536);  /* 1.5 -> 2 */
    expect_slice(5 * 0x1p-18, 2, 65536);   /* 2.5 -> 2 */
    expect_slice(-3 * 0x1p-18, -2, 65536); /* -1.5 -> -2 */
    expect_slice(-5 * 0x1p-18, -2, -65536);
    expect_slice(1.0 - 0x1p-18, 131072, -65536); /* 2^17 - 1/2 -> 2^17 (even) */
    expect_slice(1.0 - 3 * 0x1p-18, 131070, 65536); /* 2^17 - 3/2 -> 2^17 - 2 */
    /* ties of lo: v = j 2^-17 + (2i+1) 2^-35 */
    expect_slice(0x1p-35, 0, 0);          /* 0.5 -> 0 */
    expect_slice(3 * 0x1p-35, 0, 2);      /* 1.5 -> 2 */
    expect_slice(5 * 0x1p-35, 0, 2);      /* 2.5 -> 2 */
    expect_slice(-7 * 0x1p-35, 0, -4);    /* -3.5 -> -4 */
    expect_slice(0x1p-17 + 0x1p-35, 1, 0);
    expect_slice(0x1p-17 + 3 * 0x1p-35, 1, 2);
    expect_slice(1.0 - 0x1p-35, 131072, 0);     /* 2^34 - 1/2 -> 2^34: d = -2^-35 */
    expect_slice(1.0 - 3 * 0x1p-35, 131072, -2); /* 2^34 - 3/2 -> 2^34 - 2 */
    /* a tie of hi with a lo part: hi is decided by v alone, not by a tie */
    expect_slice(0x1p-18 + 0x1p-40, 1, -65536);
    expect_slice(0x1p-18 - 0x1p-40, 0, 65536);
    /* ties at random positions, both parities, and their neighbours */
    for (int i = 0; i < 20000; i++) {
        int64_t j = oz_rng_range(0, 131071);
        double t_hi = ldexp((double)(2 * j + 1), -18);
        if (t_hi < 1.0) {
            check_slice_pm(t_hi);
            check_slice_pm(nextafter(t_hi, 0.0));
            check_slice_pm(nextafter(t_hi, 1.0));
        }
        int64_t q = oz_rng_range(0, (INT64_C(1) << 34) - 1);
        double t_lo = ldexp((double)(2 * q + 1), -35);
        check_slice_pm(t_lo);
        check_slice_pm(nextafter(t_lo, 0.0));
        if (nextafter(t_lo, 1.0) < 1.0)
            check_slice_pm(nextafter(t_lo, 1.0));
    }
}

static void test_slice_random(void **state)
{
    (void)state;
    for (int i = 0; i < 300000; i++) {
        check_slice(oz_rng_sym());
        /* random significand, random exponent down to the subnormals */
        double v = ldexp(oz_rng_unit(), -(int)oz_rng_range(0, 1074));
        check_slice_pm(v);
        /* values on the 2^-34 grid are sliced exactly (d == 0) */
        int64_t g = oz_rng_range(-(INT64_C(1) << 34) + 1, (INT64_C(1) << 34) - 1);
        double w = ldexp((double)g, -34);
        int32_t hi, lo;
        oz_slice(w, &hi, &lo);
        assert_true((int64_t)hi * 131072 + lo == g);
    }
}

/* ---- whole rows: scale by the row's exponent, then slice ---- */

static void check_row(const double *row, int n)
{
    double absmax = 0.0;
    for (int i = 0; i < n; i++)
        absmax = fmax(absmax, fabs(row[i]));
    int s = oz_scale_exponent(absmax);
    check_scale_exponent(absmax);
    oz_quad unit = quad_pow2(s);
    for (int i = 0; i < n; i++) {
        double v = ldexp(row[i], -s);
        if (!(v > -1.0 && v < 1.0))
            fail_msg("row element %a scaled by 2^-%d is %a, not in (-1, 1)", row[i], s, v);
        int32_t hi, lo;
        int64_t mhi, mlo;
        oz_slice(v, &hi, &lo);
        oz_model_slice(row[i], s, &mhi, &mlo); /* from the unscaled value */
        if (hi != mhi || lo != mlo)
            fail_msg("row element %a (s = %d): slices (%" PRId32 ", %" PRId32 "), model (%" PRId64 ", %" PRId64 ")",
                     row[i], s, hi, lo, mhi, mlo);
        /* x = 2^s (hi 2^-17 + lo 2^-34 + d), |d| <= 2^-35, exact in quad */
        oz_quad d = (oz_quad)row[i] / unit - (oz_quad)hi * quad_pow2(-17) - (oz_quad)lo * quad_pow2(-34);
        if (d < 0)
            d = -d;
        if (d > quad_pow2(-35))
            fail_msg("row element %a (s = %d): |d| = %a > 2^-35", row[i], s, (double)d);
    }
}

enum { ROW = 257 };

static void test_rows(void **state)
{
    (void)state;
    double row[ROW];

    memset(row, 0, sizeof row); /* all zero: s = 0, all slices 0 */
    check_row(row, ROW);
    assert_int_equal(oz_scale_exponent(0.0), 0);
    row[3] = -0.0;
    check_row(row, ROW);

    for (int i = 0; i < ROW; i++) /* max subnormal */
        row[i] = ldexp((double)oz_rng_range(-(1 << 20), 1 << 20), -1074);
    row[7] = 0x1p-1074;
    check_row(row, ROW);
    row[0] = 0x1.ffffffffffffep-1023;
    check_row(row, ROW);

    for (int i = 0; i < ROW; i++)
        row[i] = 1e300 * oz_rng_sym();
    row[5] = 1e300;
    check_row(row, ROW);
    row[6] = DBL_MAX;
    row[9] = -DBL_MAX;
    check_row(row, ROW);

    for (int i = 0; i < ROW; i++)
        row[i] = 1e-300 * oz_rng_sym();
    row[5] = -1e-300;
    check_row(row, ROW);

    for (int i = 0; i < ROW; i++) /* mixed: small entries scale into the subnormals */
        row[i] = (i % 2 ? 1e300 : 1e-300) * oz_rng_sym();
    check_row(row, ROW);

    for (int i = 0; i < ROW; i++) /* max a power of two: scales to exactly 0.5 */
        row[i] = ldexp(oz_rng_sym(), 10);
    row[11] = -0x1p10;
    check_row(row, ROW);

    for (int i = 0; i < ROW; i++)
        row[i] = oz_rng_normal();
    check_row(row, ROW);

    for (int t = 0; t < 200; t++) { /* random finite values of any exponent */
        for (int i = 0; i < ROW; i++)
            row[i] = oz_rng_any_finite();
        check_row(row, ROW);
        int e = (int)oz_rng_range(-1074, 1023);
        for (int i = 0; i < ROW; i++)
            row[i] = ldexp(oz_rng_sym(), e);
        check_row(row, ROW);
    }
}

/* ---- symmetric residues ---- */

static void test_residue_exhaustive(void **state)
{
    (void)state;
    assert_int_equal(oz_p22_set.count, 7);
    for (int pi = 0; pi < oz_p22_set.count; pi++) {
        int32_t p = oz_p22_set.moduli[pi].p;
        int32_t half = (p - 1) / 2;
        for (int32_t x = -131072; x <= 131072; x++) {
            /* independent: the non-negative remainder, then fold above half */
            int64_t u = ((int64_t)x % p + p) % p;
            int64_t want = u > half ? u - p : u;
            int8_t r = oz_residue(x, p);
            if (r != want)
                fail_msg("oz_residue(%" PRId32 ", %" PRId32 ") = %d, want %" PRId64, x, p, r, want);
        }
        /* the full int32 range the slices could never reach, for robustness */
        for (int i = 0; i < 100000; i++) {
            int32_t x = (int32_t)(uint32_t)oz_rng_u64();
            int8_t r = oz_residue(x, p);
            assert_true(r >= -half && r <= half);
            assert_true(((int64_t)x - r) % p == 0);
        }
        assert_true(((int64_t)INT32_MIN - oz_residue(INT32_MIN, p)) % p == 0);
        assert_true(((int64_t)INT32_MAX - oz_residue(INT32_MAX, p)) % p == 0);
    }
}

static void test_residue_symmetry(void **state)
{
    (void)state;
    for (int pi = 0; pi < oz_p22_set.count; pi++) {
        int32_t p = oz_p22_set.moduli[pi].p;
        int32_t half = (p - 1) / 2;
        int seen[128] = {0};
        for (int32_t x = -131072; x <= 131072; x++) {
            int8_t r = oz_residue(x, p);
            assert_int_equal(oz_residue(-x, p), -r); /* odd function */
            assert_true(r >= -half && r <= half);
            seen[r + 63]++;
        }
        for (int r = -half; r <= half; r++) /* every residue is hit */
            assert_true(seen[r + 63] > 0);
        assert_true(half <= 63); /* |r| <= 63: int32 MMA exact for k < 2^31 / 63^2 */
    }
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(20240522));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale_exponent_edges),
        cmocka_unit_test(test_scale_exponent_random),
        cmocka_unit_test(test_slice_edges),
        cmocka_unit_test(test_slice_random),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_residue_exhaustive),
        cmocka_unit_test(test_residue_symmetry),
    };
    return OZ_TEST_RUN("test_slicing", "slicing", tests, seed);
}
