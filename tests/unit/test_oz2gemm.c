/* tests/unit/test_oz2gemm.c: reference/oz2gemm.c against an independent big-integer model of ozaki2.md (bit for bit), the cuBLAS contract, Inf/NaN, and the error bound of reference/oz2bound.h (never exceeded, attained). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>

#include "reference/oz2bound.h"
#include "reference/oz2gemm.h"
#include "oz2_test_big.h"
#include "oz_test_gemm.h"

static const oz_op all_ops[3] = {OZ_OP_N, OZ_OP_T, OZ_OP_C};

/* ---- the model ---- */

/* ozaki2.md step 1 on 256-bit integers: the smallest N in 2..20 whose
 * w_max(N, k) = max{b : k 4^b <= (P_N - 1)/2} reaches bits; 0 if none. */
static int model_plan(int64_t k, int bits, int *w_out)
{
    for (int n = 2; n <= 20; n++) {
        tbig h = tb_sub(tb_product(n), tb_from_i64(1)); /* P - 1, halved below (floor) */
        for (int i = 0; i < TB_LIMBS; i++)
            h.w[i] = (h.w[i] >> 1) | (i + 1 < TB_LIMBS ? h.w[i + 1] << 63 : 0);
        int b = -1;
        while (tb_cmp(tb_shl(tb_from_i64(k), 2 * (b + 1)), h) <= 0)
            b++;
        if (b >= bits) {
            *w_out = b;
            return n;
        }
    }
    return 0;
}

/* The model's C (valid arguments, plan reachable): a'' and b'' as big
 * integers from the significands, X as their exact big-integer dot product
 * (no residues, no CRT), then ldexp(RN(X), s + t - 2w) and the epilogue. */
static void model_oz2(oz_op ta, oz_op tb_, int64_t m, int64_t n, int64_t k, double alpha, const double *A,
                      int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc, int bits)
{
    if (model_trivial(m, n, k, alpha, beta, C, ldc))
        return;
    int w;
    int nmod = model_plan(k, bits, &w);
    assert_true(nmod >= 2);
    int *s = xcalloc((size_t)m, sizeof(int)), *t = xcalloc((size_t)n, sizeof(int));
    tbig *ai = xcalloc((size_t)(m * k), sizeof(tbig)), *bj = xcalloc((size_t)(n * k), sizeof(tbig));
    for (int64_t i = 0; i < m; i++) {
        s[i] = model_vec_scale(0, ta, A, lda, i, k);
        for (int64_t kk = 0; s[i] != INT32_MIN && kk < k; kk++)
            ai[i * k + kk] = tb_rne_scaled(op_a(ta, A, lda, i, kk), w - s[i]);
    }
    for (int64_t j = 0; j < n; j++) {
        t[j] = model_vec_scale(1, tb_, B, ldb, j, k);
        for (int64_t kk = 0; t[j] != INT32_MIN && kk < k; kk++)
            bj[j * k + kk] = tb_rne_scaled(op_b(tb_, B, ldb, kk, j), w - t[j]);
    }
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double P;
            if (s[i] == INT32_MIN || t[j] == INT32_MIN) {
                P = model_plain_dot(ta, tb_, A, lda, B, ldb, i, j, k);
            } else {
                tbig X = tb_from_i64(0);
                for (int64_t kk = 0; kk < k; kk++)
                    X = tb_add(X, tb_mul(ai[i * k + kk], bj[j * k + kk]));
                P = tb_to_double(X, s[i] + t[j] - 2 * w);
            }
            double *c = &C[i + j * ldc];
            if (beta == 0.0) {
                *c = alpha * P;
            } else {
                double ap = alpha * P, bc = beta * *c;
                *c = ap + bc;
            }
        }
    free(s), free(t), free(ai), free(bj);
}

/* ---- random cases ---- */

enum { D_UNIFORM, D_NORMAL, D_ROWSPAN, D_INT, D_SUBNORMAL, D_CONST, D_ALIGNED, D_SPREAD, D_COUNT };

/* element (r, c) of an operand; `row` is the operand row index (row of op(A)
 * or column of op(B)), which D_ROWSPAN scales by 2^(-600..600) */
static double gen(int dist, int64_t row, uint64_t salt)
{
    switch (dist) {
    case D_NORMAL: return oz_rng_normal();
    case D_ROWSPAN: return ldexp(oz_rng_sym(), (int)((row * 977 + (int64_t)salt) % 1201) - 600);
    case D_INT: return (double)oz_rng_range(-1000, 1000);
    case D_SUBNORMAL: return ldexp(oz_rng_sym(), (int)oz_rng_range(-1100, -1000));
    case D_CONST: return 0x1.fffffffffffffp-1; /* rounds up to 2^w for w < 53: X = k 4^w */
    case D_ALIGNED: return (1.0 - ldexp(oz_rng_unit(), -30)) * (salt & 1 ? -1.0 : 1.0);
    case D_SPREAD: return (oz_rng_unit() - 0.5) * exp(4.0 * oz_rng_normal());
    default: return oz_rng_sym();
    }
}

static double pick_scalar(void)
{
    switch (oz_rng_range(0, 4)) {
    case 0: return 0.0;
    case 1: return 1.0;
    case 2: return -1.0;
    default: return oz_rng_sym() * 4.0;
    }
}

typedef struct rcase {
    oz_op ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
    int bits, dist;
    double *A, *B, *C0;
} rcase;

static rcase make_case(int64_t maxdim, int64_t maxk, int bits, int dist)
{
    rcase c;
    c.ta = all_ops[oz_rng_range(0, 2)];
    c.tb = all_ops[oz_rng_range(0, 2)];
    c.m = oz_rng_range(1, maxdim);
    c.n = oz_rng_range(1, maxdim);
    c.k = oz_rng_range(1, maxk);
    int64_t ra = c.ta == OZ_OP_N ? c.m : c.k, rb = c.tb == OZ_OP_N ? c.k : c.n;
    c.lda = ra + oz_rng_range(0, 1) * oz_rng_range(1, 5);
    c.ldb = rb + oz_rng_range(0, 1) * oz_rng_range(1, 5);
    c.ldc = c.m + oz_rng_range(0, 1) * oz_rng_range(1, 5);
    c.alpha = pick_scalar();
    c.beta = pick_scalar();
    c.bits = bits;
    c.dist = dist;
    int64_t ca = c.ta == OZ_OP_N ? c.k : c.m, cb = c.tb == OZ_OP_N ? c.n : c.k;
    c.A = xcalloc((size_t)(c.lda * ca), sizeof(double));
    c.B = xcalloc((size_t)(c.ldb * cb), sizeof(double));
    c.C0 = xcalloc((size_t)(c.ldc * c.n), sizeof(double));
    uint64_t salt = oz_rng_u64();
    for (int64_t i = 0; i < c.m; i++)
        for (int64_t kk = 0; kk < c.k; kk++)
            c.A[c.ta == OZ_OP_N ? i + kk * c.lda : kk + i * c.lda] = gen(dist, i, salt);
    for (int64_t j = 0; j < c.n; j++)
        for (int64_t kk = 0; kk < c.k; kk++)
            c.B[c.tb == OZ_OP_N ? kk + j * c.ldb : j + kk * c.ldb] = gen(dist, j + 7, salt >> 1);
    for (int64_t i = 0; i < c.ldc * c.n; i++)
        c.C0[i] = c.beta == 0.0 && oz_rng_range(0, 1) ? NAN : oz_rng_sym();
    return c;
}

static void free_case(rcase *c)
{
    free(c->A), free(c->B), free(c->C0);
}

static void check_case(const rcase *c)
{
    size_t nc = (size_t)(c->ldc * c->n);
    double *C = xcalloc(nc, sizeof(double)), *M = xcalloc(nc, sizeof(double));
    memcpy(C, c->C0, nc * sizeof(double));
    memcpy(M, c->C0, nc * sizeof(double));
    int rc = oz2_ref_dgemm(c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->A, c->lda, c->B, c->ldb, c->beta, C, c->ldc,
                           c->bits);
    int w;
    if (model_plan(c->k, c->bits, &w) == 0 && c->alpha != 0.0) {
        assert_int_equal(rc, OZ2_REF_UNREACHABLE);
        assert_memory_equal(C, c->C0, nc * sizeof(double));
    } else {
        assert_int_equal(rc, OZ_REF_OK);
        model_oz2(c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->A, c->lda, c->B, c->ldb, c->beta, M, c->ldc, c->bits);
        for (int64_t j = 0; j < c->n; j++)
            for (int64_t i = 0; i < c->ldc; i++) {
                double g = C[i + j * c->ldc], want = M[i + j * c->ldc];
                if (!((isnan(g) && isnan(want)) || memcmp(&g, &want, sizeof g) == 0))
                    fail_msg("C[%" PRId64 ",%" PRId64 "]: ref %a, model %a (m=%" PRId64 " n=%" PRId64 " k=%" PRId64
                             " ops %d%d lda %" PRId64 " ldb %" PRId64 " ldc %" PRId64
                             " alpha %a beta %a bits %d dist %d)",
                             i, j, g, want, c->m, c->n, c->k, (int)c->ta, (int)c->tb, c->lda, c->ldb, c->ldc,
                             c->alpha, c->beta, c->bits, c->dist);
            }
    }
    free(C), free(M);
}

/* Every N from 2 to 20 (bits swept), every distribution, small shapes. */
static void test_bits_vs_model(void **state)
{
    (void)state;
    for (int it = 0; it < 1500; it++) {
        int bits = (int)oz_rng_range(1, 78);
        rcase c = make_case(6, it % 5 == 0 ? 300 : 24, bits, (int)(it % D_COUNT));
        check_case(&c);
        free_case(&c);
    }
}

/* The exact-range hazard: constant and sign-aligned data drive |X| to
 * k 4^w, the most the plan allows, at large k and every N it reaches. */
static void test_exact_range(void **state)
{
    (void)state;
    const int64_t ks[] = {1, 2, 3, 1000, 4097, 16384, 65537, 100000};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (int bits = 1; bits <= 77; bits += (ks[ki] > 5000 ? 9 : 3)) {
            int w;
            if (model_plan(ks[ki], bits, &w) == 0)
                continue;
            for (int dist = D_CONST; dist <= D_ALIGNED; dist++) {
                rcase c = make_case(2, 1, bits, dist);
                free_case(&c);
                /* rebuild with the chosen k and tight shapes */
                c.k = ks[ki];
                c.m = c.n = 2;
                c.ta = OZ_OP_N, c.tb = OZ_OP_N;
                c.lda = c.ldc = 2, c.ldb = c.k;
                c.alpha = 1.0, c.beta = 0.0;
                c.A = xcalloc((size_t)(2 * c.k), sizeof(double));
                c.B = xcalloc((size_t)(2 * c.k), sizeof(double));
                c.C0 = xcalloc(4, sizeof(double));
                for (int64_t kk = 0; kk < c.k; kk++) {
                    c.A[0 + kk * 2] = gen(dist, 0, 0);
                    c.A[1 + kk * 2] = gen(dist, 1, 1); /* negative row for D_ALIGNED */
                    c.B[kk] = gen(dist, 0, 0);
                    c.B[kk + c.k] = gen(dist, 0, 0);
                }
                check_case(&c);
                free_case(&c);
            }
        }
}

/* ---- the cuBLAS contract ---- */

/* alpha == 0 in device pointer mode: oz_test_gemm.h's check on the ozaki2 reference at 53 bits. */
static int oz2_ref_53_pm(oz_op ta, oz_op tb, int64_t m, int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                         const double *B, int64_t ldb, double beta, double *C, int64_t ldc, int device_pm)
{
    return oz2_ref_dgemm_pm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 53, device_pm);
}

static void test_device_alpha_zero(void **state)
{
    (void)state;
    check_device_alpha_zero(oz2_ref_53_pm);
}

static void test_contract(void **state)
{
    (void)state;
    double A[16] = {1, 2, 3, 4}, B[16] = {1, 2, 3, 4}, C[16], C0[16];
    for (int i = 0; i < 16; i++)
        C[i] = C0[i] = (double)i;
    /* invalid: C untouched */
    assert_int_equal(oz2_ref_dgemm(3, OZ_OP_N, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, -1, 2, 2, 1, A, 2, B, 2, 0, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, 1, A, 1, B, 2, 0, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_dgemm(OZ_OP_T, OZ_OP_N, 2, 2, 3, 1, A, 2, B, 3, 0, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_T, 2, 2, 2, 1, A, 2, B, 1, 0, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 3, 2, 2, 1, A, 3, B, 2, 0, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2, 0), OZ_REF_INVALID);
    assert_memory_equal(C, C0, sizeof C);
    /* empty: nothing read or written */
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 0, 2, 2, 1, NULL, 1, NULL, 2, 0, C, 1, 53), OZ_REF_OK);
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 2, 0, 2, 1, NULL, 2, NULL, 2, 0, C, 2, 53), OZ_REF_OK);
    assert_memory_equal(C, C0, sizeof C);
    /* k == 0 and alpha == 0: beta C, A and B not read; beta == 0 gives 0 even over NaN */
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 2, 2, 0, 1, NULL, 2, NULL, 1, 2.0, C, 2, 53), OZ_REF_OK);
    for (int i = 0; i < 4; i++)
        assert_true(C[i] == 2.0 * C0[i]);
    C[0] = NAN;
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 2, 2, 5, 0.0, NULL, 2, NULL, 5, 0.0, C, 2, 53), OZ_REF_OK);
    for (int i = 0; i < 4; i++)
        assert_true(C[i] == 0.0 && !signbit(C[i]));
    /* alpha == 0 needs no plan even where none exists */
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, 0.0, A, 2, B, 2, 1.0, C, 2, 78), OZ_REF_OK);
    /* unreachable plan: its own code, C untouched */
    memcpy(C, C0, sizeof C);
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, 1.0, A, 2, B, 2, 0.0, C, 2, 78), OZ2_REF_UNREACHABLE);
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 1, 1, 100000, 1.0, A, 1, B, 100000, 0.0, C, 1, 69),
                     OZ2_REF_UNREACHABLE);
    assert_memory_equal(C, C0, sizeof C);
    /* beta == 0: NaN in C does not leak; exact small integers */
    for (int i = 0; i < 4; i++)
        C[i] = NAN;
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, 1.0, A, 2, B, 2, 0.0, C, 2, 53), OZ_REF_OK);
    assert_true(C[0] == 7 && C[1] == 10 && C[2] == 15 && C[3] == 22);
    /* rows between ldc rows are not touched */
    double C3[6] = {0, 0, -5, 0, 0, -5};
    assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, 1.0, A, 2, B, 2, 0.0, C3, 3, 53), OZ_REF_OK);
    assert_true(C3[2] == -5 && C3[5] == -5 && C3[0] == 7 && C3[4] == 22);
}

static void test_nonfinite(void **state)
{
    (void)state;
    for (int it = 0; it < 200; it++) {
        rcase c = make_case(5, 12, (int)oz_rng_range(1, 64), D_UNIFORM);
        int64_t ca = c.ta == OZ_OP_N ? c.k : c.m;
        int64_t cb = c.tb == OZ_OP_N ? c.n : c.k;
        double specials[3] = {INFINITY, -INFINITY, NAN};
        c.A[oz_rng_range(0, c.lda * ca - 1)] = specials[oz_rng_range(0, 2)];
        if (it % 2)
            c.B[oz_rng_range(0, c.ldb * cb - 1)] = specials[oz_rng_range(0, 2)];
        check_case(&c);
        free_case(&c);
    }
}

/* ---- the error bound ---- */

static void check_bound(const rcase *c, double *max_ratio)
{
    size_t nc = (size_t)(c->ldc * c->n);
    double *C = xcalloc(nc, sizeof(double));
    memcpy(C, c->C0, nc * sizeof(double));
    assert_int_equal(oz2_ref_dgemm(c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->A, c->lda, c->B, c->ldb, c->beta, C,
                                   c->ldc, c->bits),
                     OZ_REF_OK);
    int w;
    model_plan(c->k, c->bits, &w);
    for (int64_t j = 0; j < c->n; j++)
        for (int64_t i = 0; i < c->m; i++) {
            double ma = 0, mb = 0, na = 0, nb = 0;
            oz_quad dot = 0;
            for (int64_t kk = 0; kk < c->k; kk++) {
                double x = op_a(c->ta, c->A, c->lda, i, kk), y = op_b(c->tb, c->B, c->ldb, kk, j);
                ma = fmax(ma, fabs(x)), mb = fmax(mb, fabs(y));
                na += fabs(x), nb += fabs(y);
                dot += (oz_quad)x * (oz_quad)y;
            }
            int s = oz_scale_exponent(ma), t = oz_scale_exponent(mb);
            double c_old = c->beta == 0.0 ? 0.0 : c->C0[i + j * c->ldc];
            oz_quad exact = (oz_quad)c->alpha * dot + (oz_quad)c->beta * (oz_quad)c_old;
            double got = C[i + j * c->ldc];
            oz_quad qe = (oz_quad)got - exact;
            double err = (double)(qe < 0 ? -qe : qe);
            double P_ub = (double)(dot < 0 ? -dot : dot) * (1 + 0x1p-50) +
                          oz2_rounding_term(na, nb, s, t, w, c->k) * 2;
            double bound = oz2_error_bound(c->alpha, c->beta, c_old, P_ub, na, nb, s, t, w, c->k);
            /* the quad sum's own error: k terms, each rounded relative 2^-113 */
            double quad_tol = ldexp((double)c->k * fabs(c->alpha), s + t - 110);
            if (!(err <= bound + quad_tol))
                fail_msg("C[%" PRId64 ",%" PRId64 "] err %.3e > bound %.3e (k=%" PRId64 " bits %d w %d s %d t %d "
                         "dist %d alpha %a beta %a)",
                         i, j, err, bound, c->k, c->bits, w, s, t, c->dist, c->alpha, c->beta);
            if (bound > 0 && err / bound > *max_ratio)
                *max_ratio = err / bound;
        }
    free(C);
}

static void test_bound_never_exceeded(void **state)
{
    (void)state;
    double worst = 0;
    for (int it = 0; it < 600; it++) {
        int dist = (int)(it % D_COUNT);
        if (dist == D_ROWSPAN || dist == D_SUBNORMAL)
            dist = D_SPREAD; /* the quad check needs products in range */
        rcase c = make_case(5, it % 7 == 0 ? 2000 : 40, (int)oz_rng_range(1, 64), dist);
        int w;
        if (model_plan(c.k, c.bits, &w) == 0) {
            free_case(&c);
            continue;
        }
        check_bound(&c, &worst);
        free_case(&c);
    }
    print_message("largest err / bound on random data: %.3g\n", worst);
}

/* Data that attains term (1): every a'' and b'' a tie rounded up (odd + 1/2),
 * all in the same direction: a'' b'' - a b = (a + b)/2 + 1/4 per term, which
 * is term (1) exactly; X < 2^53 so RN(X) is exact. */
static void test_bound_attained(void **state)
{
    (void)state;
    const struct { int64_t k; int bits; } cases[] = {{100, 5}, {1000, 30}, {37, 20}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        int64_t k = cases[ci].k;
        int w;
        assert_true(model_plan(k, cases[ci].bits, &w) > 0);
        assert_true(w <= 52);
        /* a = (2^w - 1/2) 2^-w: a 2^w = 2^w - 1/2, the tie between 2^w - 1 (odd) and 2^w (even) */
        double v = ldexp(ldexp(1.0, w + 1) - 1.0, -(w + 1));
        rcase c = {OZ_OP_N, OZ_OP_T, 1, 1, k, 1, 1, 1, 1.0, 0.0, cases[ci].bits, -1,
                   xcalloc((size_t)k, sizeof(double)), xcalloc((size_t)k, sizeof(double)), xcalloc(1, sizeof(double))};
        for (int64_t kk = 0; kk < k; kk++)
            c.A[kk] = c.B[kk] = v;
        double ratio = 0;
        check_bound(&c, &ratio);
        print_message("k=%" PRId64 " w=%d: err / bound = %.9f\n", k, w, ratio);
        assert_true(ratio > 0.999 && ratio <= 1.0);
        free_case(&c);
    }
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(0x0a2a2a2a));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contract),
        cmocka_unit_test(test_device_alpha_zero),
        cmocka_unit_test(test_bits_vs_model),
        cmocka_unit_test(test_exact_range),
        cmocka_unit_test(test_nonfinite),
        cmocka_unit_test(test_bound_never_exceeded),
        cmocka_unit_test(test_bound_attained),
    };
    return OZ_TEST_RUN("test_oz2gemm", "oz2gemm", tests, seed);
}
