/* tests/unit/test_oz2_fast.c: crt/oz2.h's GPU formulations (float-digit residues, the CRT by CRT coefficients) against the reference functions they replace, bit for bit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <inttypes.h>

#include "crt/oz2.h"
#include "oz2_test_big.h"
#include "oz_test_util.h"

/* ---- step 2: oz2_fd_* against oz2_scaled_int + oz2_residue ---- */

/* The largest |x| of oz2_fd_combine over all digit values the digits can take
 * (c_2 up to 2^db, the others below 2^db), for every modulus and digit count:
 * the exactness condition of the float arithmetic. */
static void test_fd_bound(void **state)
{
    (void)state;
    for (int nd = 3; nd <= OZ2_FD_MAXD; nd++) {
        const int b = oz2_fd_bits(nd);
        for (int q = 1; q < 20; q++) {
            const uint32_t m = tb_moduli[q];
            int64_t worst = (1 << b) - 1;
            uint32_t k = 1;
            for (int j = 1; j < nd; j++) {
                k = (k << b) % m;
                int64_t ks = k > m / 2 ? (int64_t)k - m : (int64_t)k;
                worst += (ks < 0 ? -ks : ks) * (j == 2 ? (1 << b) : (1 << b) - 1);
            }
            assert_true(worst + 128 < (INT64_C(1) << 22));
        }
    }
    /* nd db covers w + 1 bits for every w the plan gives (<= 77) */
    for (int w = 1; w <= 77; w++) {
        int nd = oz2_fd_ndigits(w);
        assert_true(nd >= 3 && nd <= OZ2_FD_MAXD);
        assert_true(nd * oz2_fd_bits(nd) >= w + 1);
    }
}

/* One x at width w, row scale s: every modulus's residue both ways. */
static void check_fd(double x, int w, int s)
{
    uint64_t mag;
    int e;
    int neg = oz2_scaled_int(x, w - s, &mag, &e);
    const int nd = oz2_fd_ndigits(w);
    oz2_fd_scale sc = oz2_fd_make_scale(w - s, nd);
    float dig[OZ2_FD_MAXD];
    oz2_fd_digits(x, &sc, nd, dig);
    for (int q = 0; q < 20; q++) {
        const uint32_t m = tb_moduli[q];
        uint8_t want = (uint8_t)oz2_residue(mag, e, neg, m);
        uint8_t got = (uint8_t)oz2_fd_residue(dig, nd, m);
        if (got != want)
            fail_msg("fd residue of %a (w %d, s %d) mod %u: got %d want %d", x, w, s, m, (int8_t)got, (int8_t)want);
        if (m != 256) {
            float X = oz2_fd_combine(dig, nd, m);
            assert_true(fabsf(X - OZ2_FD_MAGIC) < 4194176.0f);
        }
    }
}

static double random_double_any(void)
{
    switch (oz_rng_range(0, 3)) {
    case 0: return oz_rng_any_finite();
    case 1: return ldexp(oz_rng_sym(), (int)oz_rng_range(-1074, 1023));
    case 2: return ldexp((double)oz_rng_range(1, 1000), (int)oz_rng_range(-1080, -1060)); /* subnormal */
    default: return ldexp(oz_rng_sym(), (int)oz_rng_range(-60, 60));
    }
}

static void test_fd_random(void **state)
{
    (void)state;
    for (int i = 0; i < 300000; i++) {
        double x = random_double_any();
        int s = oz_model_scale_exponent(fabs(x));
        if (oz_rng_range(0, 3) == 0)
            s += (int)oz_rng_range(0, 80); /* the row's max is larger than x */
        if (s > 1024)
            continue;
        check_fd(x, (int)oz_rng_range(1, 77), s);
    }
}

/* The edges: |a''| = 2^w, all-ones digits, rounding carries into digit 2
 * and into h (y just below a multiple of 2^S), ties, tiny rows (sh > 1023),
 * zeros of both signs. */
static void test_fd_edges(void **state)
{
    (void)state;
    for (int w = 1; w <= 77; w++) {
        const int nd = oz2_fd_ndigits(w), S = 3 * oz2_fd_bits(nd);
        for (int sg = 0; sg < 2; sg++) {
            double one = sg ? -1.0 : 1.0;
            check_fd(one * 0x1.fffffffffffffp-1, w, 0); /* rounds to 2^w */
            check_fd(one * 0.5, w, 0);
            check_fd(one * 0x1p-1074, w, -1073);
            check_fd(one * 0x1.8p-1074, w, -1072);
            check_fd(one * 0.0, w, 0);
            check_fd(one * 0x1p-1000, w, -990); /* sh > 1023 for large w */
            for (int t = 0; t < 200; t++) {
                /* y = j 2^S + (2^S - u) with small u, or 2^p - u (all ones), scaled back to x */
                int p = (int)oz_rng_range(1, w);
                double u = ldexp((double)oz_rng_range(0, 7), -(int)oz_rng_range(0, 3));
                double y = ldexp(1.0, p) - u;
                if (p > S && oz_rng_range(0, 1))
                    y = ldexp((double)oz_rng_range(1, 1 << (w + 1 - S > 20 ? 20 : w + 1 - S)), S) - u;
                if (y <= 0.0 || y > ldexp(1.0, w))
                    continue;
                int s = (int)oz_rng_range(-1000, 1000);
                double x = ldexp(y, s - w);
                if (x == 0.0 || fabs(x) >= ldexp(1.0, s))
                    continue;
                check_fd(one * x, w, s);
                check_fd(one * nextafter(x, 0.0), w, s);
                check_fd(one * nextafter(x, 1e300), w, s);
            }
        }
    }
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(20261130));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_bound),
        cmocka_unit_test(test_fd_random),
        cmocka_unit_test(test_fd_edges),
    };
    int failed = cmocka_run_group_tests_name("oz2_fast", tests, NULL, NULL);
    printf("ozcrt test_oz2_fast: %d of %zu tests failed (OZ_TEST_SEED=%#" PRIx64 ")\n", failed,
           sizeof tests / sizeof tests[0], seed);
    return failed ? 1 : 0;
}
