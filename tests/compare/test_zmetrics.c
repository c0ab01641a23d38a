/* tests/compare/test_zmetrics.c: the shadow-mode metrics of complex calls (compare/metrics.h) on the host: the modulus, the metrics on |.|, the scales over both parts, and the complex bound never below the true difference.
 *
 * The bound test runs the ozaki2 complex reference (reference/oz2zgemm.c,
 * which the GPU path matches bit for bit) as the emulated result and four
 * models of native ZGEMM (complex multiply-adds, FMAs, the Gauss 3M form of
 * cublasZgemm3m, a pairwise sum), all against the exact result in
 * __float128, on random small cases: every element's |emulated - native|
 * must be within ozcmp_allowed_z (and the exact errors of both within it
 * too), and ozcmp_zmatrix_host must count nothing beyond the bound.
 * OZ_TEST_SEED=n replays another seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include "compare/metrics.h"
#include "crt/oz2_complex.h"
#include "reference/oz2zgemm.h"
#include "tests/unit/oz_test_util.h" /* seeded RNG, oz_quad */

#define OZ2(w) ozcmp_bound_ozaki2(w)

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    assert_non_null(p);
    return p;
}

/* ---- the modulus ---- */

/* |re + i im| in __float128 (soft arithmetic: exact under valgrind too), rounded to double: Newton's
 * iteration for the root of re^2 + im^2 from max(|re|, |im|), within a factor sqrt(2) of it. */
static double qmod(oz_quad re, oz_quad im)
{
    const oz_quad q = re * re + im * im;
    oz_quad r = re < 0 ? -re : re;
    if ((im < 0 ? -im : im) > r)
        r = im < 0 ? -im : im;
    if (r == 0)
        return 0.0;
    for (int it = 0; it < 8; it++)
        r = (r + q / r) / 2;
    return (double)r;
}

static double quad_modulus(double x, double y)
{
    return qmod(x, y);
}

static void test_modulus(void **state)
{
    (void)state;
    assert_true(ozcmp_modulus(3.0, 4.0) == 5.0);
    assert_true(ozcmp_modulus(-4.0, 3.0) == 5.0);
    assert_true(ozcmp_modulus(0.0, 0.0) == 0.0);
    assert_true(ozcmp_modulus(-0.0, 0.0) == 0.0);
    /* one part zero: exactly |x| (so a real pair reads the same either way) */
    const double xs[] = {1.0, -2.5, 0x1p-1074, DBL_MAX, -DBL_MIN, 1e-300, 0.1};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        assert_true(ozcmp_modulus(xs[i], 0.0) == fabs(xs[i]));
        assert_true(ozcmp_modulus(0.0, xs[i]) == fabs(xs[i]));
    }
    /* no overflow or underflow in the squares */
    assert_true(fabs(ozcmp_modulus(1e300, 1e300) / (1e300 * sqrt(2.0)) - 1.0) < 1e-15);
    assert_true(ozcmp_is_finite(ozcmp_modulus(DBL_MAX / 2, DBL_MAX / 2)));
    assert_true(fabs(ozcmp_modulus(3e-310, 4e-310) / 5e-310 - 1.0) < 1e-9);
    assert_true(ozcmp_modulus(INFINITY, 1.0) == INFINITY);
    assert_true(isnan(ozcmp_modulus(NAN, 1.0)));
    /* within 3 ulp of the modulus, over the whole exponent range */
    for (int it = 0; it < 200000; it++) {
        const double x = ldexp(oz_rng_sym(), (int)oz_rng_range(-1070, 1020));
        const double y = it % 3 ? x * ldexp(oz_rng_sym(), (int)oz_rng_range(-60, 3)) : ldexp(oz_rng_sym(), -40);
        const double got = ozcmp_modulus(x, y), want = quad_modulus(x, y);
        if (want > 0x1p-1000 && fabs(got - want) > 3.0 * 0x1p-53 * want)
            fail_msg("|(%a, %a)| = %a, want %a", x, y, got, want);
    }
}

/* ---- the metrics on |.| ---- */

static ozcmp_call_metrics zcompare(const double *E, const double *N, int64_t m, int64_t n)
{
    ozcmp_accum acc;
    ozcmp_accum_init(&acc);
    const double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
    ozcmp_zmatrix_host(&acc, m, n, E, m, N, m, NULL, NULL, OZ2(53), one, zero, 1);
    return ozcmp_finish(&acc, (uint64_t)(m * n));
}

static void test_hand_computed(void **state)
{
    (void)state;
    /* 2 x 1: differences (0, 1) and (3, 0) against native (1, 0) and (0, 4) */
    const double E[4] = {1.0, 1.0, 3.0, 4.0};
    const double N[4] = {1.0, 0.0, 0.0, 4.0};
    ozcmp_call_metrics r = zcompare(E, N, 2, 1);
    assert_true(r.max_abs == 3.0);
    assert_true(r.max_rel == 1.0); /* 1 / 1 and 3 / 4 */
    assert_true(fabs(r.normwise - sqrt(10.0 / 17.0)) < 1e-16);
    assert_int_equal(r.nonfinite_mismatch, 0);
    assert_int_equal(r.beyond_bound, 0);
    /* a modulus, not a part: differences (3, 4) 2^-30 -> 5 2^-30 (all exact) */
    const double E2[2] = {2.0 + 0x3p-30, -1.0 + 0x4p-30}, N2[2] = {2.0, -1.0};
    r = zcompare(E2, N2, 1, 1);
    assert_true(r.max_abs == 0x5p-30);
    assert_true(fabs(r.max_rel / (0x5p-30 / sqrt(5.0)) - 1.0) < 1e-15);
    /* the ld counts complex elements: the padding element (NaN) is not read */
    const double E3[6] = {1.0, 2.0, NAN, NAN, 5.0, 6.0}, N3[6] = {1.0, 2.0, 0.0, 0.0, 5.0, 6.5};
    ozcmp_accum acc;
    ozcmp_accum_init(&acc);
    const double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
    ozcmp_zmatrix_host(&acc, 1, 2, E3, 2, N3, 2, NULL, NULL, OZ2(53), one, zero, 1);
    r = ozcmp_finish(&acc, 2);
    assert_true(r.max_abs == 0.5);
    assert_int_equal(acc.finite_pairs, 2);
    assert_int_equal(r.nonfinite_mismatch, 0);
}

static void test_nonfinite(void **state)
{
    (void)state;
    const double I = INFINITY;
    /* pairs: match (Inf, 0); mismatch NaN vs 1 in re; match (1, NaN); mismatch Inf vs -Inf in im;
     * mismatch (Inf, NaN) vs (Inf, 1); match (NaN, NaN); finite (2, 2) vs (2, 3) */
    const double E[14] = {I, 0, NAN, 1, 1, NAN, 1, I, I, NAN, NAN, NAN, 2, 2};
    const double N[14] = {I, 0, 1, 1, 1, NAN, 1, -I, I, 1, NAN, NAN, 2, 3};
    ozcmp_call_metrics r = zcompare(E, N, 7, 1);
    assert_int_equal(r.nonfinite_mismatch, 3);
    assert_true(r.max_abs == 1.0); /* only the finite pair counts */
    assert_true(fabs(r.max_rel - 1.0 / sqrt(13.0)) < 1e-16);
}

/* A complex matrix with zero imaginary parts reads as the real one, bit for bit. */
static void test_real_as_complex(void **state)
{
    (void)state;
    enum { M = 9, NC = 7 };
    double E[M * NC], N[M * NC], Ez[2 * M * NC], Nz[2 * M * NC];
    for (int i = 0; i < M * NC; i++) {
        N[i] = ldexp(oz_rng_sym(), (int)oz_rng_range(-700, 700));
        E[i] = i % 5 ? N[i] * (1.0 + 1e-12 * oz_rng_sym()) : (i % 2 ? NAN : N[i]);
        Ez[2 * i] = E[i], Nz[2 * i] = N[i];
        Ez[2 * i + 1] = Nz[2 * i + 1] = 0.0;
    }
    ozcmp_accum a, b;
    ozcmp_accum_init(&a);
    ozcmp_accum_init(&b);
    const double one[2] = {1.0, 0.0}, zero[2] = {0.0, 0.0};
    ozcmp_matrix_host(&a, M, NC, E, M, N, M, NULL, NULL, OZ2(53), 1.0, 0.0, 1);
    ozcmp_zmatrix_host(&b, M, NC, Ez, M, Nz, M, NULL, NULL, OZ2(53), one, zero, 1);
    assert_memory_equal(&a, &b, sizeof a);
}

/* ---- the scales over both parts ---- */

static void test_zscales(void **state)
{
    (void)state;
    /* A: 2 x 3 complex (lda 2): op(A) = A (N): rows {(1, -3), (0, 0.5), (0, 0)} and {(0, 0), (0.25, 0), (0, -8)} */
    const double A[12] = {1, -3, 0, 0, 0, 0.5, 0.25, 0, 0, 0, 0, -8};
    /* B: 3 x 2 (ldb 3): columns {(4, 0), (0, 0), (0, 1)} and {(0, NaN), (1, 1), (0, 0)} */
    const double B[12] = {4, 0, 0, 0, 0, 1, 0, NAN, 1, 1, 0, 0};
    int s[2], t[2];
    ozcmp_zscales_host(0, 0, 2, 2, 3, A, 2, B, 3, s, t);
    assert_int_equal(s[0], 2); /* 3 < 2^2 (an imaginary part) */
    assert_int_equal(s[1], 4); /* 8 < 2^4 */
    assert_int_equal(t[0], 3); /* 4 < 2^3 */
    assert_int_equal(t[1], OZ_SCALE_SPECIAL);
    /* op C reads like op T: rows of op(A) = columns of A */
    int s3[3], t3[3];
    ozcmp_zscales_host(2, 1, 3, 3, 2, A, 2, B, 3, s3, t3);
    assert_int_equal(s3[0], 2); /* {(1, -3), (0, 0)} */
    assert_int_equal(s3[1], 0); /* {(0, 0.5), (0.25, 0)}: 0.5 < 2^0 */
    assert_int_equal(s3[2], 4);
    /* op(B) = B^T (2 x 3, B stored 3 x 2): its column j is row j of B: {(4, 0), (0, NaN)},
     * {(0, 0), (1, 1)}, {(0, 1), (0, 0)} */
    assert_int_equal(t3[0], OZ_SCALE_SPECIAL);
    assert_int_equal(t3[1], 1);
    assert_int_equal(t3[2], 1);
}

/* ---- the bound's shape ---- */

static void test_bound_shape(void **state)
{
    (void)state;
    const double a1[2] = {1.0, 0.0}, ai[2] = {0.0, 1.0}, az[2] = {0.5, -0.5}, b0[2] = {0.0, 0.0}, b1[2] = {0.0, 2.0};
    const double at = ozcmp_allowed_z(OZ2(56), a1, b0, 0.0, 0, 0, 4096);
    assert_true(at > 0.0 && at < 1e-6);
    /* 1 and i are the same size; (0.5, -0.5) is smaller */
    assert_true(ozcmp_allowed_z(OZ2(56), ai, b0, 0.0, 0, 0, 4096) == at);
    assert_true(ozcmp_allowed_z(OZ2(56), az, b0, 0.0, 0, 0, 4096) <= at);
    /* beta != 0 adds the C_old term, growing with |n| */
    const double with_c = ozcmp_allowed_z(OZ2(56), a1, b1, 0.0, 0, 0, 4096);
    assert_true(with_c > at);
    assert_true(ozcmp_allowed_z(OZ2(56), a1, b1, 1e3, 0, 0, 4096) > with_c);
    /* fewer bits: wider; scales move it by powers of two */
    assert_true(ozcmp_allowed_z(OZ2(37), a1, b0, 0.0, 0, 0, 4096) > at);
    assert_true(ozcmp_allowed_z(OZ2(56), a1, b0, 0.0, 3, -5, 4096) < at);
    assert_true(ozcmp_allowed_z(OZ2(56), a1, b0, 0.0, 3, 5, 4096) > at);
    /* not bounded: special rows or columns, and the Phase 22 kind (no complex path) */
    assert_true(isinf(ozcmp_allowed_z(OZ2(56), a1, b0, 0.0, OZ_SCALE_SPECIAL, 0, 4096)));
    assert_true(isinf(ozcmp_allowed_z(OZ2(56), a1, b0, 0.0, 0, OZ_SCALE_SPECIAL, 4096)));
    assert_true(isinf(ozcmp_allowed_z(ozcmp_bound_phase22(), a1, b0, 0.0, 0, 0, 4096)));
    /* at least the sum of the path's two per-part bounds (reference/oz2zbound.h) at the same inputs */
    const double P[2] = {8192.0, 8192.0}, one_zero[2] = {1.0, 0.0}, c0[2] = {0.0, 0.0};
    const double parts = oz2z_error_bound(a1, one_zero, c0, P, 8192.0, 8192.0, 0, 0, 56, 4096, 0) +
                         oz2z_error_bound(a1, one_zero, c0, P, 8192.0, 8192.0, 0, 0, 56, 4096, 1);
    assert_true(at > parts);
    /* the flag form: the real bound for cplx 0, the complex one for cplx 1 */
    const double n2[2] = {0.5, 0.25}, beta2[2] = {1.0, 0.0};
    assert_true(ozcmp_allowed_elem(OZ2(56), 0, a1, beta2, n2, 1, 2, 100) ==
                ozcmp_allowed(OZ2(56), 1.0, 1.0, 0.5, 1, 2, 100));
    assert_true(ozcmp_allowed_elem(OZ2(56), 1, a1, beta2, n2, 1, 2, 100) ==
                ozcmp_allowed_z(OZ2(56), a1, beta2, ozcmp_modulus(0.5, 0.25), 1, 2, 100));
    /* a pair just beyond the bound counts, one just inside does not (|.| of (0.6, 0.8) is 1) */
    const double Nn[2] = {0.0, 0.0}, in = 1.0 - 0x1p-45, out = 1.0 + 0x1p-45;
    const double Ein[2] = {at * 0.6 * in, at * 0.8 * in}, Eout[2] = {at * 0.6 * out, at * 0.8 * out};
    const int s[1] = {0}, t[1] = {0};
    ozcmp_accum acc;
    ozcmp_accum_init(&acc);
    ozcmp_zmatrix_host(&acc, 1, 1, Ein, 1, Nn, 1, s, t, OZ2(56), a1, b0, 4096);
    assert_int_equal(acc.beyond_bound, 0);
    ozcmp_zmatrix_host(&acc, 1, 1, Eout, 1, Nn, 1, s, t, OZ2(56), a1, b0, 4096);
    assert_int_equal(acc.beyond_bound, 1);
}

/* ---- the bound never below the true difference ---- */

typedef enum { NAT_CMUL, NAT_FMA, NAT_3M, NAT_PAIRWISE, NAT_COUNT } native_kind;

/* element (r, c) of op(M) (op N, T, C on the stored column-major M) */
static void zop(int op, const double *M, int64_t ld, int64_t r, int64_t c, double *re, double *im)
{
    const double *p = op == OZ_OP_N ? M + 2 * (r + c * ld) : M + 2 * (c + r * ld);
    *re = p[0];
    *im = op == OZ_OP_C ? -p[1] : p[1];
}

static void cmul(double ar, double ai, double br, double bi, double *re, double *im)
{
    *re = ar * br - ai * bi;
    *im = ar * bi + ai * br;
}

/* sum of x[0..n) pairwise (a different order from left to right) */
static double pairwise(const double *x, int64_t n)
{
    if (n <= 2)
        return n == 0 ? 0.0 : n == 1 ? x[0] : x[0] + x[1];
    return pairwise(x, n / 2) + pairwise(x + n / 2, n - n / 2);
}

/* A model of native ZGEMM at element (i, j): the product by `kind`, then the complex epilogue. */
static void native_elem(native_kind kind, int ta, int tb, int64_t k, const double *A, int64_t lda, const double *B,
                        int64_t ldb, const double alpha[2], const double beta[2], const double c_old[2], int64_t i,
                        int64_t j, double out[2])
{
    double pr = 0.0, pi = 0.0;
    double t1 = 0.0, t2 = 0.0, t3 = 0.0;
    double *xr = xcalloc((size_t)(2 * k), sizeof(double)), *xi = xcalloc((size_t)(2 * k), sizeof(double));
    for (int64_t l = 0; l < k; l++) {
        double ar, ai, br, bi, r, m;
        zop(ta, A, lda, i, l, &ar, &ai);
        zop(tb, B, ldb, l, j, &br, &bi);
        switch (kind) {
        case NAT_CMUL:
            cmul(ar, ai, br, bi, &r, &m);
            pr += r, pi += m;
            break;
        case NAT_FMA:
            pr = fma(ar, br, pr), pr = fma(-ai, bi, pr);
            pi = fma(ar, bi, pi), pi = fma(ai, br, pi);
            break;
        case NAT_3M:
            t1 += ar * br, t2 += ai * bi, t3 += (ar + ai) * (br + bi);
            break;
        default:
            xr[2 * l] = ar * br, xr[2 * l + 1] = -(ai * bi);
            xi[2 * l] = ar * bi, xi[2 * l + 1] = ai * br;
            break;
        }
    }
    if (kind == NAT_3M)
        pr = t1 - t2, pi = t3 - t1 - t2;
    else if (kind == NAT_PAIRWISE)
        pr = pairwise(xr, 2 * k), pi = pairwise(xi, 2 * k);
    free(xr);
    free(xi);
    double r, m;
    if (kind == NAT_FMA) {
        r = fma(alpha[0], pr, -(alpha[1] * pi));
        m = fma(alpha[0], pi, alpha[1] * pr);
    } else {
        cmul(alpha[0], alpha[1], pr, pi, &r, &m);
    }
    if (beta[0] != 0.0 || beta[1] != 0.0) {
        double cr, ci;
        cmul(beta[0], beta[1], c_old[0], c_old[1], &cr, &ci);
        r += cr, m += ci;
    }
    out[0] = r;
    out[1] = m;
}

/* The exact alpha op(A) op(B) + beta C_old at (i, j), each part in __float128 (exact: products of
 * doubles, sums within range for the data below). */
static void exact_elem(int ta, int tb, int64_t k, const double *A, int64_t lda, const double *B, int64_t ldb,
                       const double alpha[2], const double beta[2], const double c_old[2], int64_t i, int64_t j,
                       oz_quad out[2])
{
    oz_quad qr = 0, qi = 0;
    for (int64_t l = 0; l < k; l++) {
        double ar, ai, br, bi;
        zop(ta, A, lda, i, l, &ar, &ai);
        zop(tb, B, ldb, l, j, &br, &bi);
        qr += (oz_quad)ar * br - (oz_quad)ai * bi;
        qi += (oz_quad)ar * bi + (oz_quad)ai * br;
    }
    const int beta0 = beta[0] == 0.0 && beta[1] == 0.0;
    out[0] = (oz_quad)alpha[0] * qr - (oz_quad)alpha[1] * qi +
             (beta0 ? 0 : (oz_quad)beta[0] * c_old[0] - (oz_quad)beta[1] * c_old[1]);
    out[1] = (oz_quad)alpha[0] * qi + (oz_quad)alpha[1] * qr +
             (beta0 ? 0 : (oz_quad)beta[0] * c_old[1] + (oz_quad)beta[1] * c_old[0]);
}

enum { D_UNIFORM, D_SPREAD, D_ROWS, D_POSITIVE, D_IMAG, D_INTEGER, D_TINY, D_COUNT };

static double draw(int dist, int64_t row)
{
    switch (dist) {
    case D_SPREAD:
        return ldexp(oz_rng_sym(), (int)oz_rng_range(-30, 30));
    case D_ROWS: /* each row or column its own scale */
        return ldexp(oz_rng_sym(), (int)(row % 7) * 9 - 27);
    case D_POSITIVE: /* no cancellation: |P| as large as the bound assumes */
        return 1.0 - 0.5 * oz_rng_unit();
    case D_INTEGER:
        return (double)oz_rng_range(-1000, 1000);
    case D_TINY: /* products below the normal range */
        return ldexp(oz_rng_sym(), -530);
    default:
        return oz_rng_sym();
    }
}

static double g_worst_ratio;

/* One random case: m x n x k, ops ta tb, the given data distribution and bits. */
static void bound_case(int ta, int tb, int64_t m, int64_t n, int64_t k, int dist, int bits, const double alpha[2],
                       const double beta[2])
{
    const int64_t ar = ta == OZ_OP_N ? m : k, ac = ta == OZ_OP_N ? k : m;
    const int64_t br = tb == OZ_OP_N ? k : n, bc = tb == OZ_OP_N ? n : k;
    const int64_t lda = ar + 1, ldb = br + 2, ldc = m + 1;
    double *A = xcalloc((size_t)(2 * lda * ac), sizeof(double)), *B = xcalloc((size_t)(2 * ldb * bc), sizeof(double));
    double *C0 = xcalloc((size_t)(2 * ldc * n), sizeof(double)), *E = xcalloc((size_t)(2 * ldc * n), sizeof(double));
    double *N = xcalloc((size_t)(2 * ldc * n), sizeof(double));
    for (int64_t c = 0; c < ac; c++)
        for (int64_t r = 0; r < ar; r++) {
            const int64_t at = 2 * (r + c * lda);
            A[at] = dist == D_IMAG ? 0.0 : draw(dist, ta == OZ_OP_N ? r : c);
            A[at + 1] = draw(dist, ta == OZ_OP_N ? r : c);
        }
    for (int64_t c = 0; c < bc; c++)
        for (int64_t r = 0; r < br; r++) {
            const int64_t at = 2 * (r + c * ldb);
            B[at] = draw(dist, tb == OZ_OP_N ? c : r);
            B[at + 1] = dist == D_IMAG ? 0.0 : draw(dist, tb == OZ_OP_N ? c : r);
        }
    for (int64_t i = 0; i < 2 * ldc * n; i++)
        C0[i] = dist == D_TINY ? ldexp(oz_rng_sym(), -1060) : oz_rng_sym() * 4.0;
    memcpy(E, C0, (size_t)(2 * ldc * n) * sizeof(double));
    const oz_cplx za = {alpha[0], alpha[1]}, zb = {beta[0], beta[1]};
    assert_int_equal(oz2_ref_zgemm((oz_op)ta, (oz_op)tb, m, n, k, za, A, lda, B, ldb, zb, E, ldc, bits), OZ_REF_OK);
    const int w = oz2z_make_plan(k, bits).w;
    assert_true(w >= bits);
    int *s = xcalloc((size_t)m, sizeof(int)), *t = xcalloc((size_t)n, sizeof(int));
    ozcmp_zscales_host(ta, tb, m, n, k, A, lda, B, ldb, s, t);
    for (int kind = 0; kind < NAT_COUNT; kind++) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                native_elem((native_kind)kind, ta, tb, k, A, lda, B, ldb, alpha, beta, &C0[2 * (i + j * ldc)], i, j,
                            &N[2 * (i + j * ldc)]);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                const double *e = &E[2 * (i + j * ldc)], *nv = &N[2 * (i + j * ldc)];
                oz_quad x[2];
                exact_elem(ta, tb, k, A, lda, B, ldb, alpha, beta, &C0[2 * (i + j * ldc)], i, j, x);
                const double diff = qmod((oz_quad)e[0] - nv[0], (oz_quad)e[1] - nv[1]);
                const double err_e = qmod((oz_quad)e[0] - x[0], (oz_quad)e[1] - x[1]);
                const double err_n = qmod((oz_quad)nv[0] - x[0], (oz_quad)nv[1] - x[1]);
                const double allowed = ozcmp_allowed_z(OZ2(w), alpha, beta, ozcmp_modulus(nv[0], nv[1]), s[i], t[j], k);
                if (!(diff <= allowed) || !(err_e + err_n <= allowed))
                    fail_msg("C[%lld,%lld] native model %d: |e - n| %.6e, |e - x| + |n - x| %.6e > allowed %.6e "
                             "(k=%lld bits %d w %d s %d t %d dist %d %c%c alpha (%a, %a) beta (%a, %a))",
                             (long long)i, (long long)j, kind, diff, err_e + err_n, allowed, (long long)k, bits, w,
                             s[i], t[j], dist, "NTC"[ta], "NTC"[tb], alpha[0], alpha[1], beta[0], beta[1]);
                if (allowed > 0.0 && (err_e + err_n) / allowed > g_worst_ratio)
                    g_worst_ratio = (err_e + err_n) / allowed;
            }
        /* the host model of the metric kernel counts nothing beyond the bound */
        ozcmp_accum acc;
        ozcmp_accum_init(&acc);
        ozcmp_zmatrix_host(&acc, m, n, E, ldc, N, ldc, s, t, OZ2(w), alpha, beta, k);
        assert_int_equal(acc.beyond_bound, 0);
        assert_int_equal(acc.nonfinite_mismatch, 0);
        assert_int_equal(acc.finite_pairs, (uint64_t)(m * n));
    }
    free(A), free(B), free(C0), free(E), free(N), free(s), free(t);
}

static void test_bound_never_exceeded(void **state)
{
    (void)state;
    static const double scalars[][2] = {{1.0, 0.0}, {0.0, 1.0}, {-0.75, 0.5}, {1e-3, -2.0}, {0.0, 0.0}};
    g_worst_ratio = 0.0;
    for (int it = 0; it < 3000; it++) {
        const int ta = (int)oz_rng_range(0, 2), tb = (int)oz_rng_range(0, 2);
        const int64_t m = oz_rng_range(1, 5), n = oz_rng_range(1, 5);
        const int64_t k = it % 25 == 0 ? oz_rng_range(150, 400) : oz_rng_range(1, 40);
        const int dist = it % D_COUNT;
        const int bits = it % 5 == 4 ? (int)oz_rng_range(1, 64) : (int[]){53, 34, 20, 64}[it % 4];
        double alpha[2], beta[2];
        memcpy(alpha, scalars[it % 4], sizeof alpha); /* alpha != 0: the router forwards alpha == 0 */
        memcpy(beta, scalars[(it / 4) % 5], sizeof beta);
        if (it % 7 == 3)
            alpha[0] = oz_rng_sym(), alpha[1] = oz_rng_sym();
        if (it % 11 == 5)
            beta[0] = oz_rng_sym(), beta[1] = oz_rng_sym();
        if (oz2z_make_plan(k, bits).n == 0)
            continue;
        bound_case(ta, tb, m, n, k, dist, bits, alpha, beta);
    }
    print_message("largest (|e - x| + |n - x|) / allowed on random data: %.3g\n", g_worst_ratio);
    assert_true(g_worst_ratio > 0.0);
}

/* Data that attains the path's rounding term in one part (docs/ozaki2-complex.md "It is attained":
 * every part of a'' and b'' a tie rounded up): the bound still holds with the native models. */
static void test_bound_attained_data(void **state)
{
    (void)state;
    const struct { int64_t k; int bits; } cases[] = {{100, 5}, {37, 20}, {1000, 20}};
    g_worst_ratio = 0.0;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int part = 0; part < 2; part++) {
            const int64_t k = cases[ci].k;
            const int w = oz2z_make_plan(k, cases[ci].bits).w;
            const double v = ldexp(ldexp(1.0, w + 1) - 1.0, -(w + 1)); /* v 2^w = 2^w - 1/2 */
            double *A = xcalloc((size_t)(2 * k), sizeof(double)), *B = xcalloc((size_t)(2 * k), sizeof(double));
            for (int64_t l = 0; l < k; l++) {
                A[2 * l] = A[2 * l + 1] = v;
                B[2 * l] = v;
                B[2 * l + 1] = part ? v : -v;
            }
            const double alpha[2] = {1.0, 0.0}, beta[2] = {0.0, 0.0}, c0[2] = {0.0, 0.0};
            double E[2] = {0.0, 0.0};
            const oz_cplx za = {1.0, 0.0}, zb = {0.0, 0.0};
            assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_T, 1, 1, k, za, A, 1, B, 1, zb, E, 1, cases[ci].bits),
                             OZ_REF_OK);
            int s, t;
            ozcmp_zscales_host(OZ_OP_N, OZ_OP_T, 1, 1, k, A, 1, B, 1, &s, &t);
            oz_quad x[2];
            exact_elem(OZ_OP_N, OZ_OP_T, k, A, 1, B, 1, alpha, beta, c0, 0, 0, x);
            const double err_e = qmod((oz_quad)E[0] - x[0], (oz_quad)E[1] - x[1]);
            for (int kind = 0; kind < NAT_COUNT; kind++) {
                double nv[2];
                native_elem((native_kind)kind, OZ_OP_N, OZ_OP_T, k, A, 1, B, 1, alpha, beta, c0, 0, 0, nv);
                const double err_n = qmod((oz_quad)nv[0] - x[0], (oz_quad)nv[1] - x[1]);
                const double allowed = ozcmp_allowed_z(OZ2(w), alpha, beta, ozcmp_modulus(nv[0], nv[1]), s, t, k);
                assert_true(err_e > 0.0);
                if (!(err_e + err_n <= allowed))
                    fail_msg("k=%lld w=%d part %d native %d: %.6e > %.6e", (long long)k, w, part, kind,
                             err_e + err_n, allowed);
                if ((err_e + err_n) / allowed > g_worst_ratio)
                    g_worst_ratio = (err_e + err_n) / allowed;
            }
            free(A);
            free(B);
        }
    print_message("attained data: largest (|e - x| + |n - x|) / allowed %.3g\n", g_worst_ratio);
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(0x7a6d6574));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modulus),         cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_nonfinite),       cmocka_unit_test(test_real_as_complex),
        cmocka_unit_test(test_zscales),         cmocka_unit_test(test_bound_shape),
        cmocka_unit_test(test_bound_never_exceeded), cmocka_unit_test(test_bound_attained_data),
    };
    return OZ_TEST_RUN("test_zmetrics", "zmetrics", tests, seed);
}
