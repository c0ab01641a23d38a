/* tests/unit/test_refgemm_accuracy.c: what oz_ref_dgemm computes: exact cases, k far beyond one CRT range, the error bound of reference/bound.h and that it is not vacuous. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "oz_test_gemm.h"

static const oz_op all_ops[3] = {OZ_OP_N, OZ_OP_T, OZ_OP_C};

/* Operands of a random problem: op(A) m x k and op(B) k x n filled by
 * gen(i, kk) and gen(kk, j), stored as ta/tb say, tight leading dimensions. */
typedef struct problem {
    oz_op ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    double *A, *B, *C0, *C;
} problem;

typedef double (*elem_gen)(int64_t r, int64_t c, void *ctx);

static problem make_problem(oz_op ta, oz_op tb, int64_t m, int64_t n, int64_t k, elem_gen ga, elem_gen gb,
                            void *ctx)
{
    problem p = {ta, tb, m, n, k, 0, 0, m, NULL, NULL, NULL, NULL};
    p.lda = ta == OZ_OP_N ? m : k;
    p.ldb = tb == OZ_OP_N ? k : n;
    p.A = xcalloc((size_t)(m * k), sizeof(double));
    p.B = xcalloc((size_t)(k * n), sizeof(double));
    p.C0 = xcalloc((size_t)(m * n), sizeof(double));
    p.C = xcalloc((size_t)(m * n), sizeof(double));
    for (int64_t i = 0; i < m; i++)
        for (int64_t kk = 0; kk < k; kk++)
            p.A[ta == OZ_OP_N ? i + kk * p.lda : kk + i * p.lda] = ga(i, kk, ctx);
    for (int64_t kk = 0; kk < k; kk++)
        for (int64_t j = 0; j < n; j++)
            p.B[tb == OZ_OP_N ? kk + j * p.ldb : j + kk * p.ldb] = gb(kk, j, ctx);
    for (int64_t i = 0; i < m * n; i++)
        p.C0[i] = oz_rng_sym();
    return p;
}

static void free_problem(problem *p)
{
    free(p->A), free(p->B), free(p->C0), free(p->C);
}

/* Runs the reference on p (C from C0), checks it bit for bit against the
 * spec model, and against the exact result within the bound. */
static accuracy run_problem(const char *what, problem *p, double alpha, double beta)
{
    size_t nc = (size_t)(p->m * p->n);
    double *Cm = xcalloc(nc, sizeof(double));
    memcpy(p->C, p->C0, nc * sizeof(double));
    memcpy(Cm, p->C0, nc * sizeof(double));
    int rc = oz_ref_dgemm(p->ta, p->tb, p->m, p->n, p->k, alpha, p->A, p->lda, p->B, p->ldb, beta, p->C, p->ldc);
    assert_int_equal(rc, OZ_REF_OK);
    model_dgemm(p->ta, p->tb, p->m, p->n, p->k, alpha, p->A, p->lda, p->B, p->ldb, beta, Cm, p->ldc);
    assert_same_bits(what, p->C, Cm, p->m, p->n, p->ldc);
    free(Cm);
    return check_against_exact(what, p->ta, p->tb, p->m, p->n, p->k, alpha, p->A, p->lda, p->B, p->ldb, beta,
                               p->C0, p->C, p->ldc);
}

/* ---- generators ---- */

static double g_int1000(int64_t r, int64_t c, void *ctx) { (void)r, (void)c, (void)ctx; return (double)oz_rng_range(-1000, 1000); }
static double g_int17(int64_t r, int64_t c, void *ctx) { (void)r, (void)c, (void)ctx; return (double)oz_rng_range(-131071, 131071); }
static double g_uniform(int64_t r, int64_t c, void *ctx) { (void)r, (void)c, (void)ctx; return oz_rng_sym(); }
static double g_uniform01(int64_t r, int64_t c, void *ctx) { (void)r, (void)c, (void)ctx; return oz_rng_unit(); }
static double g_normal(int64_t r, int64_t c, void *ctx) { (void)r, (void)c, (void)ctx; return oz_rng_normal(); }
static double g_const(int64_t r, int64_t c, void *ctx) { (void)r, (void)c; return *(const double *)ctx; }
static double g_const_b(int64_t r, int64_t c, void *ctx) { (void)r, (void)c; return ((const double *)ctx)[1]; }

/* per-row (A) and per-column (B) exponents: a fixed pseudo-random 2^e per index */
static int row_exponent(int64_t r, int spread)
{
    uint64_t h = (uint64_t)(r + 1) * UINT64_C(0x9e3779b97f4a7c15);
    return (int)((h >> 40) % (uint64_t)(2 * spread + 1)) - spread;
}
static double g_wide_rows_a(int64_t i, int64_t kk, void *ctx) { (void)kk, (void)ctx; return ldexp(oz_rng_sym(), row_exponent(i, 300)); }
static double g_wide_cols_b(int64_t kk, int64_t j, void *ctx) { (void)kk, (void)ctx; return ldexp(oz_rng_normal(), row_exponent(j + 1000, 300)); }
/* exponents spread inside a row: accuracy is relative to the row's max */
static double g_spread(int64_t r, int64_t c, void *ctx) { (void)r, (void)c, (void)ctx; return ldexp(oz_rng_sym(), (int)oz_rng_range(-40, 40)); }
static double g_1e300(int64_t r, int64_t c, void *ctx) { (void)r, (void)c, (void)ctx; return 1e300 * oz_rng_sym(); }
static double g_1em300(int64_t r, int64_t c, void *ctx) { (void)r, (void)c, (void)ctx; return 1e-300 * oz_rng_sym(); }
static double g_subnormal(int64_t r, int64_t c, void *ctx) { (void)r, (void)c, (void)ctx; return ldexp((double)oz_rng_range(-(1 << 30), 1 << 30), -1074); }
static double g_2p1000(int64_t r, int64_t c, void *ctx) { (void)r, (void)c, (void)ctx; return ldexp(oz_rng_sym(), 1000); }
/* zero rows and zero columns mixed in */
static double g_some_zero(int64_t r, int64_t c, void *ctx) { (void)c, (void)ctx; return r % 3 == 1 ? 0.0 : oz_rng_sym(); }
static double g_some_zero_b(int64_t r, int64_t c, void *ctx) { (void)r, (void)ctx; return c % 4 == 2 ? 0.0 : oz_rng_sym(); }

/* ---- exact results ---- */

/* Integers with |x| < 2^17 slice exactly into hi alone (x 2^-s 2^17 is an
 * integer for s <= 17); their products and sums stay far below 2^53, so every
 * step is exact and C must equal the integer dot product. */
static void test_exact_integers(void **state)
{
    (void)state;
    const int64_t ks[] = {1, 100, 4096, 4097, 3 * 4096 + 17};
    for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                int64_t k = ks[q];
                elem_gen g = (q % 2) && k < 200 ? g_int17 : g_int1000;
                problem p = make_problem(all_ops[a], all_ops[b], 5, 4, k, g, g, NULL);
                for (int64_t i = 0; i < p.m * p.n; i++)
                    p.C0[i] = (double)oz_rng_range(-50, 50);
                char what[64];
                snprintf(what, sizeof what, "exact integers k=%" PRId64 " op %c%c", k, "NTC"[a], "NTC"[b]);
                for (int ab = 0; ab < 2; ab++) {
                    double alpha = ab ? -2.0 : 1.0, beta = ab ? 3.0 : 0.0;
                    run_problem(what, &p, alpha, beta);
                    for (int64_t j = 0; j < p.n; j++)
                        for (int64_t i = 0; i < p.m; i++) {
                            int64_t dot = 0;
                            for (int64_t kk = 0; kk < k; kk++)
                                dot += (int64_t)op_a(p.ta, p.A, p.lda, i, kk) * (int64_t)op_b(p.tb, p.B, p.ldb, kk, j);
                            double want = alpha * (double)dot + (beta == 0.0 ? 0.0 : beta * p.C0[i + j * p.m]);
                            if (p.C[i + j * p.m] != want)
                                fail_msg("%s: C[%" PRId64 ",%" PRId64 "] = %.17g, exact %.17g", what, i, j,
                                         p.C[i + j * p.m], want);
                        }
                }
                free_problem(&p);
            }
}

/* Constant, sign-aligned operands with k far beyond 4915: every HH pass of
 * a single K range would leave (-M/2, M/2]. The values are exact in 34 bits
 * and every partial sum is exact in double, so C must be exactly k a b. */
static void test_constant_large_k(void **state)
{
    (void)state;
    const int64_t ks[] = {4915, 4916, 8192, 8193, 3 * 4096 + 17, 10000, 20000};
    const double pairs[][2] = {
        {1.0 - 0x1p-18, 1.0 - 0x1p-18},  /* hi = 2^17: HH of a full chunk is exactly 2^46 */
        {1.0 - 0x1p-20, 1.0 - 0x1p-17},
        {-(1.0 - 0x1p-20), 1.0 - 0x1p-17},
        {-(1.0 - 0x1p-18), -(1.0 - 0x1p-18)},
        {0.75 - 0x1p-30, 1.0 - 0x1p-8},
        {0x1p300 * (1.0 - 0x1p-18), 0x1p-500 * (1.0 - 0x1p-18)}, /* scaled: s = 300, t = -500 */
    };
    for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++)
        for (size_t v = 0; v < sizeof pairs / sizeof pairs[0]; v++) {
            int64_t k = ks[q];
            problem p = make_problem(all_ops[(q + v) % 3], all_ops[(q + 2 * v) % 3], 3, 2, k, g_const, g_const_b,
                                     (void *)pairs[v]);
            oz_quad exact = (oz_quad)k * (oz_quad)pairs[v][0] * (oz_quad)pairs[v][1];
            double want = (double)exact;
            assert_true((oz_quad)want == exact); /* the test's premise: representable */
            char what[96];
            snprintf(what, sizeof what, "constant %a * %a, k=%" PRId64, pairs[v][0], pairs[v][1], k);
            run_problem(what, &p, 1.0, 0.0);
            for (int64_t i = 0; i < p.m * p.n; i++)
                if (p.C[i] != want)
                    fail_msg("%s: C = %a, exact %a (error %.3e)", what, p.C[i], want, p.C[i] - want);
            free_problem(&p);
        }
}

/* 1/3 is not exact in 34 bits: C is within the bound, for k past several chunks */
static void test_constant_third(void **state)
{
    (void)state;
    const double third[2] = {1.0 / 3.0, -1.0 / 3.0};
    const int64_t ks[] = {4097, 10000, 3 * 4096 + 17};
    for (size_t q = 0; q < 3; q++) {
        problem p = make_problem(OZ_OP_N, OZ_OP_T, 2, 3, ks[q], g_const, g_const_b, (void *)third);
        accuracy acc = run_problem("constant 1/3", &p, 1.0, 0.0);
        print_message("  constant 1/3, k=%" PRId64 ": err %.3e, %.3f of the bound\n", ks[q], acc.max_abs_err,
                      acc.max_ratio);
        free_problem(&p);
    }
}

/* ---- the bound ---- */

typedef struct dist {
    const char *name;
    elem_gen ga, gb;
} dist;

static void test_bound_random(void **state)
{
    (void)state;
    const dist dists[] = {
        {"uniform(-1,1)", g_uniform, g_uniform},
        {"uniform(0,1) (sign-aligned)", g_uniform01, g_uniform01},
        {"normal", g_normal, g_normal},
        {"wide exponents per row/column (2^+-300)", g_wide_rows_a, g_wide_cols_b},
        {"exponents spread in a row (2^+-40)", g_spread, g_spread},
        {"1e300 rows x 1e-300 columns", g_1e300, g_1em300},
        {"1e-300 rows x 1e-300 columns (underflow)", g_1em300, g_1em300},
        {"subnormal rows x 2^1000 columns", g_subnormal, g_2p1000},
        {"zero rows and columns", g_some_zero, g_some_zero_b},
    };
    const int64_t ks[] = {1, 64, 4096, 5000, 9000};
    const double alphas[] = {1.0, -0.75, 3.0};
    const double betas[] = {0.0, 1.0, -0.5};
    for (size_t d = 0; d < sizeof dists / sizeof dists[0]; d++) {
        accuracy worst = {0, 0, 0};
        for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
            int64_t k = ks[q];
            int64_t m = k > 1000 ? 6 : 12, n = k > 1000 ? 5 : 10;
            oz_op ta = all_ops[(d + q) % 3], tb = all_ops[(d + 2 * q + 1) % 3];
            problem p = make_problem(ta, tb, m, n, k, dists[d].ga, dists[d].gb, NULL);
            char what[128];
            snprintf(what, sizeof what, "%s, k=%" PRId64, dists[d].name, k);
            accuracy acc = run_problem(what, &p, alphas[q % 3], betas[(q + d) % 3]);
            if (acc.max_ratio > worst.max_ratio)
                worst.max_ratio = acc.max_ratio;
            if (acc.max_trunc_ratio > worst.max_trunc_ratio)
                worst.max_trunc_ratio = acc.max_trunc_ratio;
            free_problem(&p);
        }
        print_message("  %-42s max err/bound %.2e, err/truncation term %.2e\n", dists[d].name, worst.max_ratio,
                      worst.max_trunc_ratio);
    }
}

/* The phase22.md scale: 2^-34-relative errors, far below the bound on random data */
static void test_typical_error(void **state)
{
    (void)state;
    problem p = make_problem(OZ_OP_N, OZ_OP_N, 48, 48, 2048, g_uniform, g_uniform, NULL);
    accuracy acc = run_problem("uniform 48x48x2048", &p, 1.0, 0.0);
    print_message("  uniform(-1,1) 48x48x2048: max abs err %.3e (bound's truncation term %.3e)\n", acc.max_abs_err,
                  2048 * 0x1p-34);
    assert_true(acc.max_abs_err > 0.0);      /* 34 bits, not 53: not exact */
    assert_true(acc.max_abs_err < 2e-8);     /* about 1e-9 at 2048 per the design, far below 1.2e-7 */
    free_problem(&p);
}

/* The truncation term is attained: a = b = 1 - 2^-35 slices to exactly 1
 * (d = -2^-35 each), so every product loses 2^-34 - 2^-70 in the same
 * direction and C = k while the exact value is k (1 - 2^-35)^2. */
static void test_bound_not_vacuous(void **state)
{
    (void)state;
    const int64_t ks[] = {1, 1000, 4096, 5000, 3 * 4096 + 17};
    const double vals[][2] = {
        {1.0 - 0x1p-35, 1.0 - 0x1p-35},
        {-(1.0 - 0x1p-35), 1.0 - 0x1p-35},
        {0x1p200 * (1.0 - 0x1p-35), 0x1p-90 * -(1.0 - 0x1p-35)},
    };
    for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++)
        for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
            problem p = make_problem(all_ops[v], all_ops[q % 3], 2, 2, ks[q], g_const, g_const_b, (void *)vals[v]);
            char what[96];
            snprintf(what, sizeof what, "aligned 1-2^-35, k=%" PRId64, ks[q]);
            accuracy acc = run_problem(what, &p, 1.0, 0.0);
            if (acc.max_trunc_ratio < 0.5 || acc.max_ratio < 0.5)
                fail_msg("%s: error is only %.3e of the truncation term, %.3e of the bound", what,
                         acc.max_trunc_ratio, acc.max_ratio);
            assert_true(acc.max_ratio <= 1.0);
            if (q == sizeof ks / sizeof ks[0] - 1 && v == 0)
                print_message("  aligned 1-2^-35, k=%" PRId64 ": err = %.6f of the truncation term, %.6f of the bound\n",
                              ks[q], acc.max_trunc_ratio, acc.max_ratio);
            free_problem(&p);
        }
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(0xacc0));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_integers),
        cmocka_unit_test(test_constant_large_k),
        cmocka_unit_test(test_constant_third),
        cmocka_unit_test(test_bound_random),
        cmocka_unit_test(test_typical_error),
        cmocka_unit_test(test_bound_not_vacuous),
    };
    return OZ_TEST_RUN("test_refgemm_accuracy", "refgemm accuracy", tests, seed);
}
