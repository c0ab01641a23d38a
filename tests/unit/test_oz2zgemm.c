/* tests/unit/test_oz2zgemm.c: reference/oz2zgemm.c against an independent big-integer model of the complex ozaki2 spec (bit for bit), the cuBLAS contract, Inf/NaN, and the per-part error bound of reference/oz2zbound.h (never exceeded, attained). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>

#include "reference/oz2zbound.h"
#include "reference/oz2zgemm.h"
#include "oz2_test_big.h"
#include "oz_test_gemm.h"

static const oz_op all_ops[3] = {OZ_OP_N, OZ_OP_T, OZ_OP_C};

/* ---- the model ---- */

/* op(A)[i, kk] and op(B)[kk, j] of interleaved column-major storage, conjugated for op C. */
static void zop_a(oz_op ta, const double *A, int64_t lda, int64_t i, int64_t kk, double *re, double *im)
{
    const double *x = ta == OZ_OP_N ? &A[2 * (i + kk * lda)] : &A[2 * (kk + i * lda)];
    *re = x[0];
    *im = ta == OZ_OP_C ? -x[1] : x[1];
}
static void zop_b(oz_op tb, const double *B, int64_t ldb, int64_t kk, int64_t j, double *re, double *im)
{
    const double *x = tb == OZ_OP_N ? &B[2 * (kk + j * ldb)] : &B[2 * (j + kk * ldb)];
    *re = x[0];
    *im = tb == OZ_OP_C ? -x[1] : x[1];
}
/* vector r of either operand: row r of op(A) (b_side 0) or column r of op(B) */
static void zop(int b_side, oz_op op, const double *X, int64_t ld, int64_t r, int64_t kk, double *re, double *im)
{
    if (b_side)
        zop_b(op, X, ld, kk, r, re, im);
    else
        zop_a(op, X, ld, r, kk, re, im);
}

/* The spec's complex product, read from the spec again: four rounded
 * products, then the difference and the sum. */
static void model_cmul(double ur, double ui, double vr, double vi, double *re, double *im)
{
    double p_rr = ur * vr;
    double p_ii = ui * vi;
    double p_ri = ur * vi;
    double p_ir = ui * vr;
    *re = p_rr - p_ii;
    *im = p_ri + p_ir;
}

/* The complex range on 256-bit integers: the smallest N in 2..20 whose
 * largest b with 2 k 4^b <= floor((P_N - 1)/2) reaches bits; 0 if none. */
static int model_zplan(int64_t k, int bits, int *w_out)
{
    for (int n = 2; n <= 20; n++) {
        tbig h = tb_sub(tb_product(n), tb_from_i64(1));
        for (int i = 0; i < TB_LIMBS; i++) /* halve */
            h.w[i] = (h.w[i] >> 1) | (i + 1 < TB_LIMBS ? h.w[i + 1] << 63 : 0);
        int b = -1;
        while (tb_cmp(tb_shl(tb_from_i64(k), 2 * (b + 1) + 1), h) <= 0)
            b++;
        if (b >= bits) {
            *w_out = b;
            return n;
        }
    }
    return 0;
}

/* The scale of vector r over both parts of every element, INT32_MIN when
 * one of them is Inf or NaN. */
static int model_zscale(int b_side, oz_op op, const double *X, int64_t ld, int64_t r, int64_t k)
{
    double mx = 0.0;
    int finite = 1;
    for (int64_t kk = 0; kk < k; kk++) {
        double re, im;
        zop(b_side, op, X, ld, r, kk, &re, &im);
        finite &= isfinite(re) && isfinite(im);
        mx = fmax(mx, fmax(fabs(re), fabs(im)));
    }
    return finite ? oz_model_scale_exponent(mx) : INT32_MIN;
}

/* The largest |X_re| or |X_im| the model has formed since the last reset
 * (the range tests check that it reaches 2 k 4^w), as a big integer. */
static tbig model_max_x;

static void model_note_x(tbig X)
{
    if (tb_neg_p(&X))
        X = tb_negate(X);
    if (tb_cmp(X, model_max_x) > 0)
        model_max_x = X;
}

static int model_ztrivial(int64_t m, int64_t n, int64_t k, const double alpha[2], const double beta[2], double *C,
                         int64_t ldc)
{
    if (m == 0 || n == 0)
        return 1;
    if (k != 0 && (alpha[0] != 0.0 || alpha[1] != 0.0))
        return 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double *c = &C[2 * (i + j * ldc)];
            if (beta[0] == 0.0 && beta[1] == 0.0)
                c[0] = c[1] = 0.0;
            else
                model_cmul(beta[0], beta[1], c[0], c[1], &c[0], &c[1]);
        }
    return 1;
}

/* The model's C (valid arguments, plan reachable): a'' and b'' parts as big
 * integers from the significands, X_re and X_im as exact big-integer sums
 * of the Gaussian products (no residues, no CRT), then ldexp(RN(X), s + t -
 * 2w) per part and the complex epilogue. Special vectors: the plain complex
 * dot product in ascending k. */
static void model_zgemm(oz_op ta, oz_op tb_, int64_t m, int64_t n, int64_t k, const double alpha[2], const double *A,
                        int64_t lda, const double *B, int64_t ldb, const double beta[2], double *C, int64_t ldc,
                        int bits)
{
    if (model_ztrivial(m, n, k, alpha, beta, C, ldc))
        return;
    int w;
    assert_true(model_zplan(k, bits, &w) >= 2);
    int *s = xcalloc((size_t)m, sizeof(int)), *t = xcalloc((size_t)n, sizeof(int));
    tbig *ai = xcalloc((size_t)(2 * m * k), sizeof(tbig)), *bj = xcalloc((size_t)(2 * n * k), sizeof(tbig));
    for (int64_t i = 0; i < m; i++) {
        s[i] = model_zscale(0, ta, A, lda, i, k);
        for (int64_t kk = 0; s[i] != INT32_MIN && kk < k; kk++) {
            double re, im;
            zop_a(ta, A, lda, i, kk, &re, &im);
            ai[2 * (i * k + kk)] = tb_rne_scaled(re, w - s[i]);
            ai[2 * (i * k + kk) + 1] = tb_rne_scaled(im, w - s[i]);
        }
    }
    for (int64_t j = 0; j < n; j++) {
        t[j] = model_zscale(1, tb_, B, ldb, j, k);
        for (int64_t kk = 0; t[j] != INT32_MIN && kk < k; kk++) {
            double re, im;
            zop_b(tb_, B, ldb, kk, j, &re, &im);
            bj[2 * (j * k + kk)] = tb_rne_scaled(re, w - t[j]);
            bj[2 * (j * k + kk) + 1] = tb_rne_scaled(im, w - t[j]);
        }
    }
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double Pr = 0.0, Pi = 0.0;
            if (s[i] == INT32_MIN || t[j] == INT32_MIN) {
                for (int64_t kk = 0; kk < k; kk++) {
                    double xr, xi, yr, yi, pr, pi;
                    zop_a(ta, A, lda, i, kk, &xr, &xi);
                    zop_b(tb_, B, ldb, kk, j, &yr, &yi);
                    model_cmul(xr, xi, yr, yi, &pr, &pi);
                    Pr = Pr + pr;
                    Pi = Pi + pi;
                }
            } else {
                tbig Xr = tb_from_i64(0), Xi = tb_from_i64(0);
                for (int64_t kk = 0; kk < k; kk++) {
                    const tbig *a = &ai[2 * (i * k + kk)], *b = &bj[2 * (j * k + kk)];
                    Xr = tb_add(Xr, tb_sub(tb_mul(a[0], b[0]), tb_mul(a[1], b[1])));
                    Xi = tb_add(Xi, tb_add(tb_mul(a[0], b[1]), tb_mul(a[1], b[0])));
                }
                model_note_x(Xr);
                model_note_x(Xi);
                Pr = tb_to_double(Xr, s[i] + t[j] - 2 * w);
                Pi = tb_to_double(Xi, s[i] + t[j] - 2 * w);
            }
            double *c = &C[2 * (i + j * ldc)];
            double apr, api;
            model_cmul(alpha[0], alpha[1], Pr, Pi, &apr, &api);
            if (beta[0] == 0.0 && beta[1] == 0.0) {
                c[0] = apr;
                c[1] = api;
            } else {
                double bcr, bci;
                model_cmul(beta[0], beta[1], c[0], c[1], &bcr, &bci);
                c[0] = apr + bcr;
                c[1] = api + bci;
            }
        }
    free(s), free(t), free(ai), free(bj);
}

/* ---- random cases ---- */

enum {
    D_UNIFORM, D_NORMAL, D_ROWSPAN, D_INT, D_SUBNORMAL, D_CONST, D_ALIGNED, D_SPREAD, D_PARTSPREAD, D_PUREIM,
    D_COUNT
};

/* one part of element kk of an operand vector; `row` is the vector's index
 * (row of op(A) or column of op(B)), which D_ROWSPAN scales by
 * 2^(-600..600); `im` says which part */
static double gen(int dist, int64_t row, int im, uint64_t salt)
{
    switch (dist) {
    case D_NORMAL: return oz_rng_normal();
    case D_ROWSPAN: return ldexp(oz_rng_sym(), (int)((row * 977 + (int64_t)salt) % 1201) - 600);
    case D_INT: return (double)oz_rng_range(-1000, 1000);
    case D_SUBNORMAL: return ldexp(oz_rng_sym(), (int)oz_rng_range(-1100, -1000));
    case D_CONST: /* rounds up to 2^w for w < 53; salt bit 0 negates the im part, bit 1 the whole */
        return 0x1.fffffffffffffp-1 * (im && (salt & 1) ? -1.0 : 1.0) * (salt & 2 ? -1.0 : 1.0);
    case D_ALIGNED: return (1.0 - ldexp(oz_rng_unit(), -30)) * (im && (salt & 1) ? -1.0 : 1.0);
    case D_SPREAD: return (oz_rng_unit() - 0.5) * exp(4.0 * oz_rng_normal());
    case D_PARTSPREAD: /* the parts far apart: the smaller loses bits to the row's common scale */
        return ldexp(oz_rng_sym(), (im ^ (int)(salt & 1)) ? -(int)oz_rng_range(20, 70) : 0);
    case D_PUREIM: return im ? oz_rng_sym() : 0.0;
    default: return oz_rng_sym();
    }
}

static void pick_zscalar(double z[2])
{
    const double r = oz_rng_sym() * 4.0, q = oz_rng_sym() * 4.0;
    switch (oz_rng_range(0, 9)) {
    case 0: z[0] = 0.0, z[1] = 0.0; break;
    case 1: z[0] = -0.0, z[1] = 0.0; break; /* still zero */
    case 2: z[0] = 1.0, z[1] = 0.0; break;
    case 3: z[0] = -1.0, z[1] = 0.0; break;
    case 4: z[0] = 0.0, z[1] = 1.0; break; /* i */
    case 5: z[0] = 0.0, z[1] = -1.0; break;
    case 6: z[0] = 0.0, z[1] = q; break; /* pure imaginary */
    case 7: z[0] = r, z[1] = 0.0; break;
    default: z[0] = r, z[1] = q; break;
    }
}

typedef struct zcase {
    oz_op ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    double alpha[2], beta[2];
    int bits, dist;
    double *A, *B, *C0; /* interleaved */
} zcase;

static int zero2(const double z[2])
{
    return z[0] == 0.0 && z[1] == 0.0;
}

/* Storage for the shapes in c (ops, m, n, k, ld's), filled from dist. */
static void fill_case(zcase *c, uint64_t salt)
{
    int64_t ca = c->ta == OZ_OP_N ? c->k : c->m, cb = c->tb == OZ_OP_N ? c->n : c->k;
    c->A = xcalloc((size_t)(2 * c->lda * ca), sizeof(double));
    c->B = xcalloc((size_t)(2 * c->ldb * cb), sizeof(double));
    c->C0 = xcalloc((size_t)(2 * c->ldc * c->n), sizeof(double));
    for (int64_t i = 0; i < c->m; i++)
        for (int64_t kk = 0; kk < c->k; kk++) {
            double *x = c->ta == OZ_OP_N ? &c->A[2 * (i + kk * c->lda)] : &c->A[2 * (kk + i * c->lda)];
            x[0] = gen(c->dist, i, 0, salt);
            x[1] = gen(c->dist, i, 1, salt);
        }
    for (int64_t j = 0; j < c->n; j++)
        for (int64_t kk = 0; kk < c->k; kk++) {
            double *x = c->tb == OZ_OP_N ? &c->B[2 * (kk + j * c->ldb)] : &c->B[2 * (j + kk * c->ldb)];
            x[0] = gen(c->dist, j + 7, 0, salt >> 2);
            x[1] = gen(c->dist, j + 7, 1, salt >> 2);
        }
    /* beta == 0: C is not read, so poison it */
    for (int64_t i = 0; i < 2 * c->ldc * c->n; i++)
        c->C0[i] = zero2(c->beta) ? NAN : oz_rng_sym();
}

static zcase make_case(int64_t maxdim, int64_t maxk, int bits, int dist)
{
    zcase c;
    c.ta = all_ops[oz_rng_range(0, 2)];
    c.tb = all_ops[oz_rng_range(0, 2)];
    c.m = oz_rng_range(1, maxdim);
    c.n = oz_rng_range(1, maxdim);
    c.k = oz_rng_range(1, maxk);
    int64_t ra = c.ta == OZ_OP_N ? c.m : c.k, rb = c.tb == OZ_OP_N ? c.k : c.n;
    c.lda = ra + oz_rng_range(0, 1) * oz_rng_range(1, 5);
    c.ldb = rb + oz_rng_range(0, 1) * oz_rng_range(1, 5);
    c.ldc = c.m + oz_rng_range(0, 1) * oz_rng_range(1, 5);
    pick_zscalar(c.alpha);
    pick_zscalar(c.beta);
    c.bits = bits;
    c.dist = dist;
    fill_case(&c, oz_rng_u64());
    return c;
}

static void free_case(zcase *c)
{
    free(c->A), free(c->B), free(c->C0);
}

static oz_cplx cplx(const double z[2])
{
    oz_cplx r = {z[0], z[1]};
    return r;
}

static void check_case(const zcase *c)
{
    size_t nc = (size_t)(2 * c->ldc * c->n);
    double *C = xcalloc(nc, sizeof(double)), *M = xcalloc(nc, sizeof(double));
    memcpy(C, c->C0, nc * sizeof(double));
    memcpy(M, c->C0, nc * sizeof(double));
    int rc = oz2_ref_zgemm(c->ta, c->tb, c->m, c->n, c->k, cplx(c->alpha), c->A, c->lda, c->B, c->ldb, cplx(c->beta),
                           C, c->ldc, c->bits);
    int w;
    if (model_zplan(c->k, c->bits, &w) == 0 && !zero2(c->alpha)) {
        assert_int_equal(rc, OZ2_REF_UNREACHABLE);
        assert_memory_equal(C, c->C0, nc * sizeof(double));
    } else {
        assert_int_equal(rc, OZ_REF_OK);
        model_zgemm(c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->A, c->lda, c->B, c->ldb, c->beta, M, c->ldc,
                    c->bits);
        for (int64_t j = 0; j < c->n; j++)
            for (int64_t i = 0; i < c->ldc; i++)
                for (int part = 0; part < 2; part++) {
                    double g = C[2 * (i + j * c->ldc) + part], want = M[2 * (i + j * c->ldc) + part];
                    if (!((isnan(g) && isnan(want)) || memcmp(&g, &want, sizeof g) == 0))
                        fail_msg("C[%" PRId64 ",%" PRId64 "].%s: ref %a, model %a (m=%" PRId64 " n=%" PRId64
                                 " k=%" PRId64 " ops %d%d lda %" PRId64 " ldb %" PRId64 " ldc %" PRId64
                                 " alpha (%a, %a) beta (%a, %a) bits %d dist %d)",
                                 i, j, part ? "im" : "re", g, want, c->m, c->n, c->k, (int)c->ta, (int)c->tb, c->lda,
                                 c->ldb, c->ldc, c->alpha[0], c->alpha[1], c->beta[0], c->beta[1], c->bits, c->dist);
                }
    }
    free(C), free(M);
}

/* bits 34, 53, 64 (the mode's settings), every distribution, op pair,
 * scalar kind; small shapes (1x1 and odd sizes included), some longer k. */
static void test_vs_model(void **state)
{
    (void)state;
    static const int bits_set[3] = {34, 53, 64};
    for (int it = 0; it < 1800; it++) {
        zcase c = make_case(it % 9 == 0 ? 1 : 7, it % 5 == 0 ? 300 : 24, bits_set[it % 3], (int)(it % D_COUNT));
        check_case(&c);
        free_case(&c);
    }
}

/* Every N from 2 to 20 and the unreachable bits (swept 1..78). */
static void test_bits_sweep(void **state)
{
    (void)state;
    for (int it = 0; it < 600; it++) {
        zcase c = make_case(4, it % 7 == 0 ? 200 : 16, (int)oz_rng_range(1, 78), (int)(it % D_COUNT));
        check_case(&c);
        free_case(&c);
    }
}

/* The exact-range hazard: constant data (parts rounding up to 2^w, signs
 * arranged so that a b = 2 4^w (1 + 0i) or 2i 4^w) and sign-aligned data
 * drive |X_re| or |X_im| to 2 k 4^w, the most the plan allows, at large k
 * and every N reached. Row 1 of A is negated: both signs. */
static void test_exact_range(void **state)
{
    (void)state;
    const int64_t ks[] = {1, 2, 3, 1000, 4097, 16384, 65537, 100000};
    int edges_hit = 0;
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (int bi = 0; bi < 3 + 76; bi++) {
            /* 34, 53, 64 first, then a sweep of the other N */
            const int bits_ = bi < 3 ? (int[]){34, 53, 64}[bi] : bi - 2;
            if (bi >= 3 && (bits_ - 1) % (ks[ki] > 5000 ? 7 : 3) != 0)
                continue;
            const int64_t k = ks[ki];
            int w;
            if (model_zplan(k, bits_, &w) == 0)
                continue;
            for (int dist = D_CONST; dist <= D_ALIGNED; dist++) {
                zcase c = {OZ_OP_N, OZ_OP_N, 2, 2, k, 2, k, 2, {1.0, 0.0}, {0.0, 0.0}, bits_, dist, NULL, NULL, NULL};
                c.A = xcalloc((size_t)(4 * k), sizeof(double));
                c.B = xcalloc((size_t)(4 * k), sizeof(double));
                c.C0 = xcalloc(8, sizeof(double));
                for (int64_t kk = 0; kk < k; kk++) {
                    double *a0 = &c.A[2 * (0 + kk * 2)], *a1 = &c.A[2 * (1 + kk * 2)];
                    a0[0] = gen(dist, 0, 0, 0), a0[1] = gen(dist, 0, 1, 0);
                    a1[0] = gen(dist, 1, 0, 2), a1[1] = gen(dist, 1, 1, 2); /* negated */
                    double *b0 = &c.B[2 * kk], *b1 = &c.B[2 * (kk + k)];
                    b0[0] = gen(dist, 0, 0, 0), b0[1] = gen(dist, 0, 1, 0); /* a b = 2i 4^w */
                    b1[0] = gen(dist, 0, 0, 1), b1[1] = gen(dist, 0, 1, 1); /* conjugate: a b = 2 4^w */
                }
                for (int i = 0; i < 8; i++)
                    c.C0[i] = NAN;
                model_max_x = tb_from_i64(0);
                check_case(&c);
                /* the data reached the range: |X| = 2 k 4^w <= floor((P_N - 1)/2) */
                const tbig edge = tb_shl(tb_from_i64(k), 2 * w + 1);
                if (dist == D_CONST && w < 53) {
                    assert_int_equal(tb_cmp(model_max_x, edge), 0);
                    edges_hit++;
                } else {
                    assert_true(tb_cmp(model_max_x, edge) <= 0);
                    assert_true(tb_cmp(tb_shl(model_max_x, 1), edge) > 0); /* within a factor of 2 */
                }
                free_case(&c);
            }
        }
    assert_true(edges_hit > 20);
}

/* ---- the cuBLAS contract ---- */

/* alpha == 0 (both parts) in device pointer mode (oz2_ref_zgemm_pm with
 * device_pm 1): elements whose row of op(A) or column of op(B) holds Inf or
 * NaN in a part, and one whose product overflows, are NaN in both parts (0 *
 * P); the others beta C; host pointer mode keeps beta C everywhere. */
static void test_device_alpha_zero(void **state)
{
    (void)state;
    enum { M = 5, N = 4, K = 6, LDC = 6 };
    double A[2 * M * K], B[2 * K * N], C0[2 * LDC * N], C[2 * LDC * N], H[2 * LDC * N];
    for (int i = 0; i < 2 * M * K; i++)
        A[i] = oz_rng_sym();
    for (int i = 0; i < 2 * K * N; i++)
        B[i] = oz_rng_sym();
    A[2 * (1 + 2 * M) + 1] = INFINITY; /* row 1 of A, im */
    B[2 * (3 + 2 * K)] = NAN;          /* column 2 of B, re */
    for (int kk = 0; kk < K; kk++)     /* row 3 x column 0: beyond the double range */
        A[2 * (3 + kk * M)] = 0x1p600, B[2 * kk] = 0x1p600;
    const oz_cplx zero = {0.0, 0.0}, betas[2] = {{0.0, 0.0}, {1.5, -0.5}};
    for (int bi = 0; bi < 2; bi++) {
        for (int i = 0; i < 2 * LDC * N; i++)
            C0[i] = oz_rng_sym();
        memcpy(C, C0, sizeof C);
        memcpy(H, C0, sizeof H);
        assert_int_equal(oz2_ref_zgemm_pm(OZ_OP_N, OZ_OP_N, M, N, K, zero, A, M, B, K, betas[bi], C, LDC, 53, 1),
                         OZ_REF_OK);
        assert_int_equal(oz2_ref_zgemm_pm(OZ_OP_N, OZ_OP_N, M, N, K, zero, A, M, B, K, betas[bi], H, LDC, 53, 0),
                         OZ_REF_OK);
        for (int j = 0; j < N; j++)
            for (int i = 0; i < M; i++) {
                const double *c0 = &C0[2 * (i + j * LDC)];
                const oz_cplx b = betas[bi];
                const double bc[2] = {bi == 0 ? 0.0 : b.re * c0[0] - b.im * c0[1],
                                      bi == 0 ? 0.0 : b.re * c0[1] + b.im * c0[0]};
                const int nan = i == 1 || j == 2 || (i == 3 && j == 0);
                for (int p = 0; p < 2; p++) {
                    const double got = C[2 * (i + j * LDC) + p], host = H[2 * (i + j * LDC) + p];
                    if (nan ? !isnan(got) : got != bc[p])
                        fail_msg("device alpha 0, beta %d: C[%d,%d] part %d = %a, want %s", bi, i, j, p, got,
                                 nan ? "NaN" : "beta C");
                    if (host != bc[p])
                        fail_msg("host alpha 0, beta %d: C[%d,%d] part %d = %a, want beta C", bi, i, j, p, host);
                }
            }
    }
}

static void test_contract(void **state)
{
    (void)state;
    /* A = [1+2i, 3-i; 0.5i, -2] (2 x 2), B = [2, i; 1-i, 4+4i] */
    double A[8] = {1, 2, 0, 0.5, 3, -1, -2, 0}, B[8] = {2, 0, 1, -1, 0, 1, 4, 4}, C[32], C0[32];
    for (int i = 0; i < 32; i++)
        C[i] = C0[i] = (double)i;
    const oz_cplx one = {1, 0}, zero = {0, 0}, mzero = {-0.0, 0.0}, two_i = {0, 2};
    /* invalid: C untouched */
    assert_int_equal(oz2_ref_zgemm(3, OZ_OP_N, 2, 2, 2, one, A, 2, B, 2, zero, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, -1, 2, 2, one, A, 2, B, 2, zero, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 2, 2, -1, one, A, 2, B, 2, zero, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, one, A, 1, B, 2, zero, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_zgemm(OZ_OP_C, OZ_OP_N, 2, 2, 3, one, A, 2, B, 3, zero, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_C, 2, 2, 2, one, A, 2, B, 1, zero, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 3, 2, 2, one, A, 3, B, 2, zero, C, 2, 53), OZ_REF_INVALID);
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, one, A, 2, B, 2, zero, C, 2, 0), OZ_REF_INVALID);
    assert_memory_equal(C, C0, sizeof C);
    /* empty: nothing read or written */
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 0, 2, 2, one, NULL, 1, NULL, 2, zero, C, 1, 53), OZ_REF_OK);
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 2, 0, 2, one, NULL, 2, NULL, 2, zero, C, 2, 53), OZ_REF_OK);
    assert_memory_equal(C, C0, sizeof C);
    /* k == 0: C = beta C by the spec's product (2i (a + bi) = -2b + 2ai), A and B not read */
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 2, 2, 0, one, NULL, 2, NULL, 1, two_i, C, 2, 53), OZ_REF_OK);
    for (int e = 0; e < 4; e++) {
        assert_true(C[2 * e] == -2.0 * C0[2 * e + 1]);
        assert_true(C[2 * e + 1] == 2.0 * C0[2 * e]);
    }
    /* alpha == 0 (either zero's sign) and beta == 0: zeros, +0, even over NaN */
    C[0] = C[3] = NAN;
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 2, 2, 5, mzero, NULL, 2, NULL, 5, zero, C, 2, 53), OZ_REF_OK);
    for (int i = 0; i < 8; i++)
        assert_true(C[i] == 0.0 && !signbit(C[i]));
    /* alpha == 0 needs no plan even where none exists */
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, zero, A, 2, B, 2, one, C, 2, 77), OZ_REF_OK);
    /* unreachable plans: their own code, C untouched (complex bits end at 76 for k = 1) */
    memcpy(C, C0, sizeof C);
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, one, A, 2, B, 2, zero, C, 2, 77), OZ2_REF_UNREACHABLE);
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 1, 1, 1, one, A, 1, B, 1, zero, C, 1, 77), OZ2_REF_UNREACHABLE);
    assert_memory_equal(C, C0, sizeof C);
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 1, 1, 1, one, A, 1, B, 1, zero, C, 1, 76), OZ_REF_OK);
    /* 1 x 1: (1 + 2i)(2) = 2 + 4i exactly */
    assert_true(C[0] == 2.0 && C[1] == 4.0);
    /* beta == 0 over NaN: exact small Gaussian integers, each op */
    for (int i = 0; i < 8; i++)
        C[i] = NAN;
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, one, A, 2, B, 2, zero, C, 2, 53), OZ_REF_OK);
    /* C00 = (1+2i) 2 + (3-i)(1-i) = 2+4i + 2-4i = 4; C10 = 0.5i 2 + (-2)(1-i) = -2 + 3i;
     * C01 = (1+2i) i + (3-i)(4+4i) = -2+i + 16+8i = 14 + 9i; C11 = 0.5i i + (-2)(4+4i) = -8.5 - 8i */
    const double want_nn[8] = {4, 0, -2, 3, 14, 9, -8.5, -8};
    assert_memory_equal(C, want_nn, sizeof want_nn);
    /* op C on A: conj(A)^T = [1-2i, -0.5i; 3+i, -2]; C00 = (1-2i) 2 + (-0.5i)(1-i) = 2-4i - 0.5-0.5i = 1.5 - 4.5i */
    assert_int_equal(oz2_ref_zgemm(OZ_OP_C, OZ_OP_N, 2, 2, 2, one, A, 2, B, 2, zero, C, 2, 53), OZ_REF_OK);
    assert_true(C[0] == 1.5 && C[1] == -4.5);
    /* op T on A: A^T = [1+2i, 0.5i; 3-i, -2]: C00 = 2+4i + 0.5i(1-i) = 2.5 + 4.5i */
    assert_int_equal(oz2_ref_zgemm(OZ_OP_T, OZ_OP_N, 2, 2, 2, one, A, 2, B, 2, zero, C, 2, 53), OZ_REF_OK);
    assert_true(C[0] == 2.5 && C[1] == 4.5);
    /* rows between ldc rows are not touched */
    double C3[12] = {0, 0, 0, 0, -5, -6, 0, 0, 0, 0, -5, -6};
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, one, A, 2, B, 2, zero, C3, 3, 53), OZ_REF_OK);
    assert_true(C3[4] == -5 && C3[5] == -6 && C3[10] == -5 && C3[11] == -6);
    assert_true(C3[0] == 4 && C3[1] == 0 && C3[8] == -8.5 && C3[9] == -8);
}

/* Inf or NaN in either part of one element (two, sometimes, one in each
 * operand): the model's bits, and non-finite exactly where a plain ZGEMM's
 * would be: in the elements whose row of op(A) or column of op(B) holds it. */
static void test_nonfinite(void **state)
{
    (void)state;
    const double specials[3] = {INFINITY, -INFINITY, NAN};
    for (int it = 0; it < 400; it++) {
        zcase c = make_case(5, 12, it % 2 ? 53 : 64, D_UNIFORM);
        if (it % 4 == 0)
            c.alpha[0] = 0.5, c.alpha[1] = -0.25; /* nonzero: A and B are read */
        int64_t ca = c.ta == OZ_OP_N ? c.k : c.m, cb = c.tb == OZ_OP_N ? c.n : c.k;
        c.A[oz_rng_range(0, 2 * c.lda * ca - 1)] = specials[oz_rng_range(0, 2)];
        if (it % 3)
            c.B[oz_rng_range(0, 2 * c.ldb * cb - 1)] = specials[oz_rng_range(0, 2)];
        check_case(&c);
        if (!zero2(c.alpha)) {
            size_t nc = (size_t)(2 * c.ldc * c.n);
            double *C = xcalloc(nc, sizeof(double));
            memcpy(C, c.C0, nc * sizeof(double));
            assert_int_equal(oz2_ref_zgemm(c.ta, c.tb, c.m, c.n, c.k, cplx(c.alpha), c.A, c.lda, c.B, c.ldb,
                                           cplx(c.beta), C, c.ldc, c.bits),
                             OZ_REF_OK);
            for (int64_t j = 0; j < c.n; j++)
                for (int64_t i = 0; i < c.m; i++) {
                    const int special = model_zscale(0, c.ta, c.A, c.lda, i, c.k) == INT32_MIN ||
                                        model_zscale(1, c.tb, c.B, c.ldb, j, c.k) == INT32_MIN;
                    const double *e = &C[2 * (i + j * c.ldc)];
                    const int finite = isfinite(e[0]) && isfinite(e[1]);
                    if (special == finite)
                        fail_msg("C[%" PRId64 ",%" PRId64 "] = (%a, %a) in a %s row/column", i, j, e[0], e[1],
                                 special ? "special" : "finite");
                }
            free(C);
        }
        free_case(&c);
    }
}

/* ---- the error bound ---- */

static double qabs(oz_quad x)
{
    return (double)(x < 0 ? -x : x);
}

static void check_bound(const zcase *c, double max_ratio[2])
{
    size_t nc = (size_t)(2 * c->ldc * c->n);
    double *C = xcalloc(nc, sizeof(double));
    memcpy(C, c->C0, nc * sizeof(double));
    assert_int_equal(oz2_ref_zgemm(c->ta, c->tb, c->m, c->n, c->k, cplx(c->alpha), c->A, c->lda, c->B, c->ldb,
                                   cplx(c->beta), C, c->ldc, c->bits),
                     OZ_REF_OK);
    int w;
    assert_true(model_zplan(c->k, c->bits, &w) > 0);
    for (int64_t j = 0; j < c->n; j++)
        for (int64_t i = 0; i < c->m; i++) {
            double ma = 0, mb = 0, na = 0, nb = 0;
            oz_quad dr = 0, di = 0;
            for (int64_t kk = 0; kk < c->k; kk++) {
                double xr, xi, yr, yi;
                zop_a(c->ta, c->A, c->lda, i, kk, &xr, &xi);
                zop_b(c->tb, c->B, c->ldb, kk, j, &yr, &yi);
                ma = fmax(ma, fmax(fabs(xr), fabs(xi)));
                mb = fmax(mb, fmax(fabs(yr), fabs(yi)));
                na += fabs(xr), na += fabs(xi);
                nb += fabs(yr), nb += fabs(yi);
                dr += (oz_quad)xr * yr - (oz_quad)xi * yi;
                di += (oz_quad)xr * yi + (oz_quad)xi * yr;
            }
            const int s = oz_scale_exponent(ma), t = oz_scale_exponent(mb);
            const double zero[2] = {0.0, 0.0};
            const double *c_old = zero2(c->beta) ? zero : &c->C0[2 * (i + j * c->ldc)];
            const oz_quad ar = c->alpha[0], ai = c->alpha[1], br = c->beta[0], bi = c->beta[1];
            const oz_quad exact[2] = {ar * dr - ai * di + br * c_old[0] - bi * c_old[1],
                                      ar * di + ai * dr + br * c_old[1] + bi * c_old[0]};
            const double T = oz2z_rounding_term(na, nb, s, t, w, c->k);
            const double P_ub[2] = {qabs(dr) * (1 + 0x1p-50) + 2 * T, qabs(di) * (1 + 0x1p-50) + 2 * T};
            /* the quad sums' own error: 2k terms, each rounded relative 2^-113 */
            const double quad_tol = ldexp((double)c->k * (fabs(c->alpha[0]) + fabs(c->alpha[1])), s + t - 109);
            for (int part = 0; part < 2; part++) {
                const double got = C[2 * (i + j * c->ldc) + part];
                const double err = qabs((oz_quad)got - exact[part]);
                const double bound =
                    oz2z_error_bound(c->alpha, c->beta, c_old, P_ub, na, nb, s, t, w, c->k, part);
                if (!(err <= bound + quad_tol))
                    fail_msg("C[%" PRId64 ",%" PRId64 "].%s err %.3e > bound %.3e (k=%" PRId64 " bits %d w %d s %d "
                             "t %d dist %d alpha (%a, %a) beta (%a, %a))",
                             i, j, part ? "im" : "re", err, bound, c->k, c->bits, w, s, t, c->dist, c->alpha[0],
                             c->alpha[1], c->beta[0], c->beta[1]);
                if (bound > 0 && err / bound > max_ratio[part])
                    max_ratio[part] = err / bound;
            }
        }
    free(C);
}

static void test_bound_never_exceeded(void **state)
{
    (void)state;
    double worst[2] = {0, 0};
    for (int it = 0; it < 700; it++) {
        int dist = (int)(it % D_COUNT);
        if (dist == D_ROWSPAN || dist == D_SUBNORMAL)
            dist = D_SPREAD; /* the quad check needs products in range */
        const int bits = it % 4 == 3 ? (int)oz_rng_range(1, 64) : (int[]){34, 53, 64}[it % 4];
        zcase c = make_case(5, it % 7 == 0 ? 2000 : 40, bits, dist);
        int w;
        if (model_zplan(c.k, c.bits, &w) == 0) {
            free_case(&c);
            continue;
        }
        check_bound(&c, worst);
        free_case(&c);
    }
    print_message("largest err / bound on random data: re %.3g, im %.3g\n", worst[0], worst[1]);
}

/* Data that attains term (1) in one part: every part of a'' and b'' a tie
 * rounded up (2^w - 1/2 -> 2^w), a = v (1 + i) and b = v (1 - i) for the
 * re part (both products of X_re err the same way), b = v (1 + i) for the
 * im part; |X| = 2 k 4^w < 2^53, so RN(X) is exact. */
static void test_bound_attained(void **state)
{
    (void)state;
    const struct { int64_t k; int bits; } cases[] = {{100, 5}, {1000, 20}, {37, 20}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
        for (int part = 0; part < 2; part++) {
            const int64_t k = cases[ci].k;
            int w;
            assert_true(model_zplan(k, cases[ci].bits, &w) > 0);
            assert_true(ldexp((double)(2 * k), 2 * w) < 0x1p53);
            const double v = ldexp(ldexp(1.0, w + 1) - 1.0, -(w + 1)); /* v 2^w = 2^w - 1/2 */
            zcase c = {OZ_OP_N, OZ_OP_T, 1, 1, k, 1, 1, 1, {1.0, 0.0}, {0.0, 0.0}, cases[ci].bits, -1,
                       xcalloc((size_t)(2 * k), sizeof(double)), xcalloc((size_t)(2 * k), sizeof(double)),
                       xcalloc(2, sizeof(double))};
            for (int64_t kk = 0; kk < k; kk++) {
                c.A[2 * kk] = c.A[2 * kk + 1] = v;
                c.B[2 * kk] = v;
                c.B[2 * kk + 1] = part ? v : -v;
            }
            double ratio[2] = {0, 0};
            check_bound(&c, ratio);
            print_message("k=%" PRId64 " w=%d %s: err / bound = %.9f\n", k, w, part ? "im" : "re", ratio[part]);
            assert_true(ratio[part] > 0.999 && ratio[part] <= 1.0);
            assert_true(ratio[1 - part] == 0.0); /* the other part is exact: 0 both ways */
            free_case(&c);
        }
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(0x2a2a0c0c));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contract),
        cmocka_unit_test(test_device_alpha_zero),
        cmocka_unit_test(test_vs_model),
        cmocka_unit_test(test_bits_sweep),
        cmocka_unit_test(test_exact_range),
        cmocka_unit_test(test_nonfinite),
        cmocka_unit_test(test_bound_never_exceeded),
        cmocka_unit_test(test_bound_attained),
    };
    return OZ_TEST_RUN("test_oz2zgemm", "oz2zgemm", tests, seed);
}
