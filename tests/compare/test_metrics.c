/* tests/compare/test_metrics.c: the shadow-mode metric definitions on host arrays, against hand-computed values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "compare/metrics.h"

/* cmocka 1.1.5 has no assert_double_equal */
#define assert_close(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol))

#define P22 ozcmp_bound_phase22()

static ozcmp_call_metrics compare(const double *E, const double *N, int64_t m, int64_t n)
{
    ozcmp_accum acc;
    ozcmp_accum_init(&acc);
    ozcmp_matrix_host(&acc, m, n, E, m, N, m, NULL, NULL, P22, 1.0, 0.0, 1);
    return ozcmp_finish(&acc, (uint64_t)(m * n));
}

static void test_hand_computed(void **state)
{
    (void)state;
    /* column-major 2 x 2; differences 0, 0.5, 1, 0 */
    const double E[4] = {1.0, 2.5, -3.0, 0.0};
    const double N[4] = {1.0, 2.0, -4.0, 0.0};
    ozcmp_call_metrics r = compare(E, N, 2, 2);
    assert_true(r.max_abs == 1.0);
    assert_true(r.max_rel == 0.25); /* 0.5 / 2 and 1 / 4 */
    assert_close(r.normwise, sqrt(1.25 / 21.0), 1e-16);
    assert_int_equal(r.nonfinite_mismatch, 0);
    assert_int_equal(r.beyond_bound, 0); /* no scales given: not checked */
    assert_int_equal(r.elements, 4);
}

static void test_leading_dimension(void **state)
{
    (void)state;
    /* 2 x 2 inside ld 3: the padding row holds garbage that must not count */
    const double E[6] = {1.0, 2.0, NAN, 3.0, 4.0, 1e300};
    const double N[6] = {1.0, 2.0, 0.0, 3.0, 4.5, -1e300};
    ozcmp_accum acc;
    ozcmp_accum_init(&acc);
    ozcmp_matrix_host(&acc, 2, 2, E, 3, N, 3, NULL, NULL, P22, 1.0, 0.0, 1);
    ozcmp_call_metrics r = ozcmp_finish(&acc, 4);
    assert_true(r.max_abs == 0.5);
    assert_int_equal(r.nonfinite_mismatch, 0);
    assert_int_equal(acc.finite_pairs, 4);
}

static void test_zero_native(void **state)
{
    (void)state;
    const double Z[4] = {0.0, 0.0, -0.0, 0.0};
    ozcmp_call_metrics r = compare(Z, Z, 2, 2);
    assert_true(r.max_abs == 0.0 && r.max_rel == 0.0);
    assert_true(r.normwise == 0.0); /* 0/0 -> 0 */

    const double E[2] = {1e-300, 0.0};
    const double N[2] = {0.0, 0.0};
    r = compare(E, N, 2, 1);
    assert_true(r.max_abs == 1e-300);
    assert_true(r.max_rel == 1e-300 / DBL_MIN); /* the floor */
    assert_true(isinf(r.normwise) && r.normwise > 0);
}

static void test_nonfinite(void **state)
{
    (void)state;
    const double E[8] = {NAN, INFINITY, INFINITY, NAN, 1.0, NAN, -INFINITY, 2.0};
    const double N[8] = {NAN, INFINITY, -INFINITY, 1.0, INFINITY, INFINITY, -INFINITY, 2.5};
    /* match, match, sign mismatch, NaN vs finite, finite vs Inf, NaN vs Inf, match, finite */
    ozcmp_call_metrics r = compare(E, N, 8, 1);
    assert_int_equal(r.nonfinite_mismatch, 4);
    assert_true(r.max_abs == 0.5); /* only the finite pair counts */
    assert_true(r.max_rel == 0.2);
    assert_close(r.normwise, 0.2, 1e-16);
    assert_int_equal(ozcmp_nonfinite_mismatch(-NAN, NAN), 0);
    assert_int_equal(ozcmp_nonfinite_mismatch(1.0, 2.0), 0);
}

static void test_extreme_scales(void **state)
{
    (void)state;
    /* squares of 1e300 overflow and of 1e-300 underflow: the bins keep both */
    double E[3], N[3];
    for (int i = 0; i < 3; i++) {
        N[i] = 1e300 * (i + 1);
        E[i] = N[i] * (1.0 + 0x1p-30);
    }
    ozcmp_call_metrics r = compare(E, N, 3, 1);
    assert_close(r.normwise, 0x1p-30, 0x1p-50);
    for (int i = 0; i < 3; i++) {
        N[i] = 1e-300 * (i + 1);
        E[i] = N[i] * (1.0 - 0x1p-20);
    }
    r = compare(E, N, 3, 1);
    assert_close(r.normwise, 0x1p-20, 0x1p-45);
    /* mixed: a tiny difference against huge native values */
    const double Em[2] = {1e300, 1e100};
    const double Nm[2] = {1e300, 0.0};
    r = compare(Em, Nm, 2, 1);
    assert_close(r.normwise / 1e-200, 1.0, 1e-15);
    assert_true(r.normwise > 0.0);
}

static void test_norm_ratio_bins(void **state)
{
    (void)state;
    double num[3] = {0, 0, 0}, den[3] = {0, 0, 0};
    assert_true(ozcmp_norm_ratio(num, den) == 0.0);
    den[1] = 4.0;
    assert_true(ozcmp_norm_ratio(num, den) == 0.0);
    num[1] = 1.0;
    assert_true(ozcmp_norm_ratio(num, den) == 0.5);
    /* num in the big bin: 1 * 2^1200 over 4 -> sqrt = 2^600 / 2 */
    num[1] = 0.0;
    num[2] = 1.0;
    assert_true(ozcmp_norm_ratio(num, den) == 0x1p599);
    den[1] = 0.0;
    assert_true(isinf(ozcmp_norm_ratio(num, den)));
}

static void test_bound(void **state)
{
    (void)state;
    /* s = t = 0, k = 4096, alpha = 1, beta = 0 */
    double allowed = ozcmp_allowed(P22, 1.0, 0.0, 0.5, 0, 0, 4096);
    double path = oz_error_bound(1.0, 1.0, 0.0, 4096.0, 0, 0, 4096);
    double native = 4098.0 * 0x1p-53 / (1.0 - 4098.0 * 0x1p-53) * 4096.0;
    assert_true(allowed == path + native);
    assert_true(allowed > 4096.0 * 0x1p-34 && allowed < 4096.0 * 0x1p-33);
    /* beta != 0 only adds the C_old term */
    assert_true(ozcmp_allowed(P22, 1.0, 1.0, 0.5, 0, 0, 4096) > allowed);
    /* scales move it by powers of two; special rows are not bounded */
    assert_true(ozcmp_allowed(P22, 1.0, 0.0, 0.5, 3, -5, 4096) < allowed);
    assert_true(isinf(ozcmp_allowed(P22, 1.0, 0.0, 0.5, OZ_SCALE_SPECIAL, 0, 4096)));

    const double N[2] = {0.25, 0.25};
    const double E[2] = {0.25 + allowed * 0.5, 0.25 + allowed * 4.0};
    const int s[2] = {0, 0}, t[1] = {0};
    ozcmp_accum acc;
    ozcmp_accum_init(&acc);
    ozcmp_matrix_host(&acc, 2, 1, E, 2, N, 2, s, t, P22, 1.0, 0.0, 4096);
    assert_int_equal(acc.beyond_bound, 1);
}

/* Counts the elements of a 1-column matrix E against N = 0 beyond `bound`
 * (s = t = 0, alpha = 1, beta = 0, k = 4096). */
static uint64_t beyond(const double *E, int64_t m, ozcmp_bound bound)
{
    double N[8] = {0};
    int s[8] = {0}, t[1] = {0};
    ozcmp_accum acc;
    ozcmp_accum_init(&acc);
    ozcmp_matrix_host(&acc, m, 1, E, m, N, m, s, t, bound, 1.0, 0.0, 4096);
    return acc.beyond_bound;
}

/* The ozaki2 bound (reference/oz2bound.h, 1-norms bounded by k 2^s, k 2^t)
 * for an ozaki2 call; the Phase 22 one unchanged for a Phase 22 call. */
static void test_bound_ozaki2(void **state)
{
    (void)state;
    /* bits 53 at k = 4096: N = 16 moduli, integer width w = 56 (ozaki2.md step 1) */
    const ozcmp_bound oz2 = ozcmp_bound_ozaki2(56);
    double allowed = ozcmp_allowed(oz2, 1.0, 0.0, 0.0, 0, 0, 4096);
    double path = oz2_error_bound(1.0, 1.0, 0.0, 4096.0, 4096.0, 4096.0, 0, 0, 56, 4096);
    double native = 4098.0 * 0x1p-53 / (1.0 - 4098.0 * 0x1p-53) * 4096.0;
    assert_true(allowed == path + native);
    double p22 = ozcmp_allowed(P22, 1.0, 0.0, 0.0, 0, 0, 4096);
    assert_true(p22 == oz_error_bound(1.0, 1.0, 0.0, 4096.0, 0, 0, 4096) + native);
    /* at 56 bits the ozaki2 path is far tighter than Phase 22's 34 */
    assert_true(allowed < p22 / 64.0);
    /* fewer bits (a lower OZCRT_BITS): a wider bound; scales move it; special rows unbounded */
    assert_true(ozcmp_allowed(ozcmp_bound_ozaki2(37), 1.0, 0.0, 0.0, 0, 0, 4096) > allowed);
    assert_true(ozcmp_allowed(oz2, 1.0, 0.0, 0.0, 3, -5, 4096) < allowed);
    assert_true(isinf(ozcmp_allowed(oz2, 1.0, 0.0, 0.0, 0, OZ_SCALE_SPECIAL, 4096)));
    /* beta != 0 adds the C_old term in both */
    assert_true(ozcmp_allowed(oz2, 1.0, 1.0, 0.5, 0, 0, 4096) > allowed);

    /* an ozaki2 call: error exactly at its bound (inside), one ulp above (outside) */
    const double at_oz2[2] = {allowed, -allowed};
    const double above_oz2[2] = {nextafter(allowed, INFINITY), -nextafter(allowed, INFINITY)};
    assert_int_equal(beyond(at_oz2, 2, oz2), 0);
    assert_int_equal(beyond(above_oz2, 2, oz2), 2);
    /* the same differences are well inside the Phase 22 bound */
    assert_int_equal(beyond(above_oz2, 2, P22), 0);
    /* a Phase 22 call: its own bound, as before */
    const double at_p22[1] = {p22}, above_p22[1] = {nextafter(p22, INFINITY)};
    assert_int_equal(beyond(at_p22, 1, P22), 0);
    assert_int_equal(beyond(above_p22, 1, P22), 1);
    assert_int_equal(beyond(at_p22, 1, oz2), 1);
    /* the larger w, the smaller the bound: an error inside w = 37's is outside w = 56's */
    double mid = ozcmp_allowed(ozcmp_bound_ozaki2(37), 1.0, 0.0, 0.0, 0, 0, 4096);
    const double at_mid[1] = {mid};
    assert_int_equal(beyond(at_mid, 1, ozcmp_bound_ozaki2(37)), 0);
    assert_int_equal(beyond(at_mid, 1, oz2), 1);
}

static void test_scales(void **state)
{
    (void)state;
    /* A is 2 x 3 column-major (lda 2); op(A) = A (N): rows {1, -3, 0.5}, {0, 0, 0} */
    const double A[6] = {1.0, 0.0, -3.0, 0.0, 0.5, 0.0};
    /* B is 3 x 2 (ldb 3), op(B) = B: columns {0.25, 4, 1}, {NaN, 0, 0} */
    const double B[6] = {0.25, 4.0, 1.0, NAN, 0.0, 0.0};
    int s[2], t[2];
    ozcmp_scales_host(0, 0, 2, 2, 3, A, 2, B, 3, s, t);
    assert_int_equal(s[0], 2); /* 3 < 2^2 */
    assert_int_equal(s[1], 0); /* all zero */
    assert_int_equal(t[0], 3); /* 4 < 2^3 */
    assert_int_equal(t[1], OZ_SCALE_SPECIAL);
    /* transposed: op(A) = A^T is 3 x 2: rows are A's columns {1,0}, {-3,0}, {0.5,0} */
    /* Bt is 3 x 2 (ldb 3) holding A^T; op(B) = Bt^T = A: column j of op(B) is A's column j */
    const double Bt[6] = {1.0, -3.0, 0.5, 0.0, 0.0, 0.0};
    int s3[3], t3[3];
    ozcmp_scales_host(1, 1, 3, 3, 2, A, 2, Bt, 3, s3, t3);
    assert_int_equal(s3[0], 1);
    assert_int_equal(s3[1], 2);
    assert_int_equal(s3[2], 0);
    assert_int_equal(t3[0], 1);
    assert_int_equal(t3[1], 2);
    assert_int_equal(t3[2], 0);
}

static void test_merge(void **state)
{
    (void)state;
    const double E[4] = {1.0, 2.5, NAN, 7.0};
    const double N[4] = {1.5, 2.0, 1.0, 7.25};
    ozcmp_accum whole, a, b;
    ozcmp_accum_init(&whole);
    ozcmp_accum_init(&a);
    ozcmp_accum_init(&b);
    ozcmp_matrix_host(&whole, 4, 1, E, 4, N, 4, NULL, NULL, P22, 1.0, 0.0, 1);
    ozcmp_matrix_host(&a, 2, 1, E, 2, N, 2, NULL, NULL, P22, 1.0, 0.0, 1);
    ozcmp_matrix_host(&b, 2, 1, E + 2, 2, N + 2, 2, NULL, NULL, P22, 1.0, 0.0, 1);
    ozcmp_accum_merge(&a, &b);
    assert_memory_equal(&a, &whole, sizeof a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_computed), cmocka_unit_test(test_leading_dimension),
        cmocka_unit_test(test_zero_native),   cmocka_unit_test(test_nonfinite),
        cmocka_unit_test(test_extreme_scales), cmocka_unit_test(test_norm_ratio_bins),
        cmocka_unit_test(test_bound),         cmocka_unit_test(test_bound_ozaki2),
        cmocka_unit_test(test_scales),
        cmocka_unit_test(test_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
