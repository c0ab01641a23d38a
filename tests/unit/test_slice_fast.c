/* tests/unit/test_slice_fast.c: slicing/slice_fast.h (the residue kernels' arithmetic) against slicing/slicing.h: every slice value and modulus for the residues, every scale exponent for the slicing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <inttypes.h>

#include "slicing/slice_fast.h"
#include "slicing/slicing.h"
#include "crt/moduli.h"
#include "oz_test_util.h"

/* ---- residues ---- */

/* Every x with |x| <= 2^18 (the slices reach 2^17) against oz_residue. */
static void check_modulus(int32_t p)
{
    const float inv = oz_fast_inv(p);
    for (int32_t x = -(1 << 18); x <= (1 << 18); x++) {
        const float xf = oz_fast_float(x);
        if (xf != (float)x)
            fail_msg("oz_fast_float(%" PRId32 ") = %a", x, (double)xf);
        const int8_t got = (int8_t)oz_residue_fast(x, xf, p, inv);
        const int8_t want = oz_residue(x, p);
        if (got != want)
            fail_msg("residue of %" PRId32 " mod %" PRId32 ": fast %d, slicing.h %d", x, p, got, want);
    }
}

static void test_residue_p22_primes(void **state)
{
    (void)state;
    for (int i = 0; i < oz_p22_set.count; i++)
        check_modulus(oz_p22_set.moduli[i].p);
}

/* The engine moduli: the Phase 22 set (first OZ_P22G_NMODULI) and the rest,
 * all odd but 256. */
static void test_residue_engine_moduli(void **state)
{
    (void)state;
#define OZ_TSF_MOD_(i, m) check_modulus(m);
    OZ_ENGINE_MODULI(OZ_TSF_MOD_)
#undef OZ_TSF_MOD_
}

static void test_pack4(void **state)
{
    (void)state;
    assert_int_equal(oz_fast_pack4(1, 2, 3, 4), 0x04030201u);
    assert_int_equal(oz_fast_pack4(-1, 0x1280, -128, 0x7f), 0x7f8080ffu);
    for (int i = 0; i < 10000; i++) {
        int32_t w[4];
        for (int e = 0; e < 4; e++)
            w[e] = (int32_t)(uint32_t)oz_rng_u64();
        uint32_t got = oz_fast_pack4(w[0], w[1], w[2], w[3]);
        for (int e = 0; e < 4; e++)
            assert_int_equal((got >> (8 * e)) & 0xff, (uint32_t)w[e] & 0xff);
    }
}

/* ---- slicing ---- */

static long n_checked;

/* x in a row of scale exponent s (|x| < 2^s, s not special): the fast
 * slices equal oz_slice(ldexp(x, -s)). */
static void check_slice_in_row(double x, int s)
{
    if (!isfinite(x) || oz_scale_exponent(fabs(x)) > s)
        return; /* not in such a row (a rounded test value) */
    int32_t hi, lo, fhi, flo;
    oz_slice(ldexp(x, -s), &hi, &lo);
    oz_slice_fast(x, oz_fast_row_of(s), &fhi, &flo);
    if (hi != fhi || lo != flo)
        fail_msg("slices of %a in a row of scale 2^%d: fast (%" PRId32 ", %" PRId32 "), slicing.h (%" PRId32
                 ", %" PRId32 ")",
                 x, s, fhi, flo, hi, lo);
    n_checked++;
}

static void check_slice_pm(double x, int s)
{
    check_slice_in_row(x, s);
    check_slice_in_row(-x, s);
}

/* Values of (-1, 1) that stress the split: ties of hi and of lo (and
 * their neighbours), powers of two, the largest value below 1. */
static double stress_value(int kind)
{
    switch (kind) {
    case 0: return ldexp((double)(2 * oz_rng_range(0, 131071) + 1), -18);          /* tie of hi */
    case 1: return ldexp((double)(2 * oz_rng_range(0, (INT64_C(1) << 34) - 1) + 1), -35); /* tie of lo */
    case 2: return ldexp(1.0, -(int)oz_rng_range(1, 60));
    case 3: return nextafter(1.0, 0.0);
    case 4: return ldexp((double)oz_rng_range(-(INT64_C(1) << 34) + 1, (INT64_C(1) << 34) - 1), -34);
    default: return oz_rng_sym();
    }
}

/* Every scale exponent, with values across the row's range: the row max
 * itself, random values, values down into the subnormals, ties, zeros. */
static void test_slice_every_scale(void **state)
{
    (void)state;
    n_checked = 0;
    for (int s = -1073; s <= 1024; s++) {
        check_slice_pm(0.0, s);
        for (int i = 0; i < 60; i++) {
            /* v in (-1, 1) scaled into the row (ldexp may round near the subnormals) */
            double v = stress_value(i % 7);
            if (v >= 1.0 || v <= -1.0)
                continue;
            check_slice_pm(ldexp(v, s), s);
            check_slice_pm(ldexp(nextafter(v, 0.0), s), s);
            check_slice_pm(ldexp(nextafter(v, 1.0), s), s);
            /* a random value far below the row max, subnormals included */
            check_slice_pm(ldexp(oz_rng_unit(), s - (int)oz_rng_range(0, 1100)), s);
        }
        check_slice_pm(0x1p-1074, s);
        check_slice_pm(DBL_MIN, s);
    }
    /* the largest row: DBL_MAX has s = 1024 */
    check_slice_pm(DBL_MAX, 1024);
    check_slice_pm(nextafter(DBL_MAX, 0.0), 1024);
    printf("slice_fast: %ld values checked over every scale\n", n_checked);
    assert_true(n_checked > 500000);
}

/* Rows as the kernels see them: s from the row's own max. */
static void test_slice_random_rows(void **state)
{
    (void)state;
    enum { ROW = 64 };
    for (int it = 0; it < 20000; it++) {
        double row[ROW], mx = 0.0;
        const int e = (int)oz_rng_range(-1100, 1030);
        for (int i = 0; i < ROW; i++) {
            row[i] = ldexp(oz_rng_sym(), e - (int)oz_rng_range(0, 80));
            if (!isfinite(row[i]))
                row[i] = DBL_MAX;
            if (fabs(row[i]) > mx)
                mx = fabs(row[i]);
        }
        const int s = oz_scale_exponent(mx);
        for (int i = 0; i < ROW; i++)
            check_slice_in_row(row[i], s);
    }
}

/* The row constants: 2^p, 2^(17-s-p), 2^(34-s-p), all normal doubles. */
static void test_row_constants(void **state)
{
    (void)state;
    for (int s = -1073; s <= 1024; s++) {
        oz_fast_row c = oz_fast_row_of(s);
        const int p = s < OZ_FAST_MIN_SCALE ? OZ_FAST_PRE : 0;
        assert_true(c.pre == ldexp(1.0, p));
        assert_true(c.fhi == ldexp(1.0, 17 - s - p) && isnormal(c.fhi));
        assert_true(c.flo == ldexp(1.0, 34 - s - p) && isnormal(c.flo));
    }
    assert_true(oz_fast_pow2(-1022) == DBL_MIN);
    assert_true(oz_fast_pow2(1023) == ldexp(1.0, 1023));
    assert_true(oz_fast_pow2(0) == 1.0);
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(20261130));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_residue_p22_primes),
        cmocka_unit_test(test_residue_engine_moduli),
        cmocka_unit_test(test_pack4),
        cmocka_unit_test(test_row_constants),
        cmocka_unit_test(test_slice_every_scale),
        cmocka_unit_test(test_slice_random_rows),
    };
    return OZ_TEST_RUN("test_slice_fast", "slice_fast", tests, seed);
}
