/* tests/unit/test_refgemm.c: the cublasDgemm_v2 argument contract of oz_ref_dgemm: invalid arguments, ops, leading dimensions, alpha/beta, k == 0, non-finite values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "oz_test_gemm.h"

static const oz_op all_ops[3] = {OZ_OP_N, OZ_OP_T, OZ_OP_C};

/* A test matrix: rows x cols stored column-major with leading dimension ld,
 * padding (rows..ld-1 of every column) filled with pad. */
static double *make_matrix(int64_t rows, int64_t cols, int64_t ld, double pad, double (*gen)(void))
{
    double *X = xcalloc((size_t)(ld * (cols ? cols : 1)), sizeof(double));
    for (int64_t c = 0; c < cols; c++)
        for (int64_t r = 0; r < ld; r++)
            X[r + c * ld] = r < rows ? gen() : pad;
    return X;
}

static double gen_sym(void) { return oz_rng_sym(); }
static double gen_nan(void) { return NAN; }

static double *dup(const double *X, size_t n)
{
    double *Y = xcalloc(n, sizeof(double));
    memcpy(Y, X, n * sizeof(double));
    return Y;
}

/* One call of the reference against the model, both on copies of C;
 * padding rows of C beyond m must stay untouched. */
static void run_vs_model(const char *what, oz_op ta, oz_op tb, int64_t m, int64_t n, int64_t k, double alpha,
                         const double *A, int64_t lda, const double *B, int64_t ldb, double beta, const double *C0,
                         int64_t ldc, double *C_out)
{
    size_t nc = (size_t)(ldc * (n ? n : 1));
    double *Cr = dup(C0, nc), *Cm = dup(C0, nc);
    assert_int_equal(oz_ref_dgemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, Cr, ldc), OZ_REF_OK);
    model_dgemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, Cm, ldc);
    assert_same_bits(what, Cr, Cm, m, n, ldc);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = m; i < ldc; i++)
            if (memcmp(&Cr[i + j * ldc], &C0[i + j * ldc], sizeof(double)) != 0)
                fail_msg("%s: C padding (%" PRId64 ",%" PRId64 ") written", what, i, j);
    if (C_out)
        memcpy(C_out, Cr, nc * sizeof(double));
    free(Cr);
    free(Cm);
}

/* ---- invalid arguments: OZ_REF_INVALID, C untouched ---- */

static void expect_invalid(int ta, int tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc)
{
    double A[64], B[64], C[64], C0[64];
    for (int i = 0; i < 64; i++) {
        A[i] = B[i] = 1.0;
        C[i] = C0[i] = (double)i + 0.25;
    }
    int rc = oz_ref_dgemm((oz_op)ta, (oz_op)tb, m, n, k, 1.0, A, lda, B, ldb, 0.0, C, ldc);
    if (rc != OZ_REF_INVALID)
        fail_msg("ops %d %d m %" PRId64 " n %" PRId64 " k %" PRId64 " lda %" PRId64 " ldb %" PRId64 " ldc %" PRId64
                 ": rc %d, want OZ_REF_INVALID",
                 ta, tb, m, n, k, lda, ldb, ldc, rc);
    assert_memory_equal(C, C0, sizeof C);
}

static void expect_valid(int ta, int tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc)
{
    double A[64], B[64], C[64];
    for (int i = 0; i < 64; i++)
        A[i] = B[i] = C[i] = 1.0;
    assert_int_equal(oz_ref_dgemm((oz_op)ta, (oz_op)tb, m, n, k, 1.0, A, lda, B, ldb, 0.0, C, ldc), OZ_REF_OK);
}

static void test_invalid_arguments(void **state)
{
    (void)state;
    expect_invalid(3, 0, 2, 2, 2, 2, 2, 2);
    expect_invalid(-1, 0, 2, 2, 2, 2, 2, 2);
    expect_invalid(0, 3, 2, 2, 2, 2, 2, 2);
    expect_invalid(0, 100, 2, 2, 2, 2, 2, 2);
    expect_invalid(0, 0, -1, 2, 2, 2, 2, 2);
    expect_invalid(0, 0, 2, -1, 2, 2, 2, 2);
    expect_invalid(0, 0, 2, 2, -1, 2, 2, 2);
    /* lda >= max(1, rows of A as stored): m for N, k for T/C */
    expect_invalid(0, 0, 3, 2, 5, 2, 5, 3);
    expect_valid(0, 0, 3, 2, 5, 3, 5, 3);
    expect_invalid(1, 0, 3, 2, 5, 4, 5, 3);
    expect_invalid(2, 0, 3, 2, 5, 4, 5, 3);
    expect_valid(1, 0, 3, 2, 5, 5, 5, 3);
    expect_valid(2, 0, 5, 2, 3, 3, 3, 5); /* T: lda >= k, not m */
    expect_invalid(0, 0, 0, 2, 2, 0, 2, 1); /* max(1, 0) = 1 */
    /* ldb >= max(1, rows of B as stored): k for N, n for T/C */
    expect_invalid(0, 0, 2, 3, 5, 2, 4, 2);
    expect_valid(0, 0, 2, 3, 5, 2, 5, 2);
    expect_invalid(0, 1, 2, 3, 5, 2, 2, 2);
    expect_invalid(0, 2, 2, 3, 5, 2, 2, 2);
    expect_valid(0, 1, 2, 3, 5, 2, 3, 2);
    expect_invalid(0, 0, 2, 2, 0, 2, 0, 2);
    /* ldc >= max(1, m) */
    expect_invalid(0, 0, 3, 2, 2, 3, 2, 2);
    expect_invalid(0, 0, 0, 2, 2, 1, 2, 0);
    expect_valid(0, 0, 3, 2, 2, 3, 2, 3);
}

/* ---- empty shapes, k == 0, alpha == 0 ---- */

static void test_empty(void **state)
{
    (void)state;
    double A[16], B[16], C[16], C0[16];
    for (int i = 0; i < 16; i++)
        A[i] = B[i] = C[i] = C0[i] = NAN;
    C[0] = C0[0] = 5.0;
    assert_int_equal(oz_ref_dgemm(OZ_OP_N, OZ_OP_N, 0, 4, 4, 1.0, A, 1, B, 4, 0.0, C, 1), OZ_REF_OK);
    assert_int_equal(oz_ref_dgemm(OZ_OP_N, OZ_OP_N, 4, 0, 4, 1.0, A, 4, B, 4, 0.0, C, 4), OZ_REF_OK);
    assert_memory_equal(C, C0, sizeof C);
}

static void test_k_zero_and_alpha_zero(void **state)
{
    (void)state;
    const double betas[] = {0.0, -0.0, 1.0, -1.0, 2.5, 0.5};
    enum { M = 5, N = 4, LDC = 7 };
    double C0[LDC * N], C[LDC * N];
    double Anan[64], Bnan[64];
    for (int i = 0; i < 64; i++) {
        Anan[i] = i % 2 ? NAN : INFINITY;
        Bnan[i] = i % 3 ? -INFINITY : NAN;
    }
    for (size_t b = 0; b < sizeof betas / sizeof betas[0]; b++) {
        double beta = betas[b];
        for (int variant = 0; variant < 2; variant++) {
            for (int i = 0; i < LDC * N; i++)
                C0[i] = oz_rng_sym() * 8;
            if (beta == 0.0) /* C is not read: NaN and Inf must not leak */
                C0[0] = NAN, C0[1] = INFINITY, C0[LDC + 2] = NAN;
            memcpy(C, C0, sizeof C);
            int rc = variant == 0 ? /* k == 0 */
                         oz_ref_dgemm(OZ_OP_N, OZ_OP_N, M, N, 0, 1.5, Anan, M, Bnan, 1, beta, C, LDC)
                                  : /* alpha == 0, A and B full of NaN/Inf, not read */
                         oz_ref_dgemm(OZ_OP_T, OZ_OP_N, M, N, 8, 0.0, Anan, 8, Bnan, 8, beta, C, LDC);
            assert_int_equal(rc, OZ_REF_OK);
            for (int j = 0; j < N; j++)
                for (int i = 0; i < LDC; i++) {
                    double got = C[i + j * LDC];
                    if (i >= M) {
                        assert_memory_equal(&got, &C0[i + j * LDC], sizeof got);
                        continue;
                    }
                    double want = beta == 0.0 ? 0.0 : beta * C0[i + j * LDC];
                    if (got != want)
                        fail_msg("%s, beta %a: C[%d,%d] = %a, want beta*C = %a", variant ? "alpha == 0" : "k == 0",
                                 beta, i, j, got, want);
                }
        }
    }
}


/* alpha == 0 in device pointer mode: oz_test_gemm.h's check on the Phase 22 reference. */
static void test_device_alpha_zero(void **state)
{
    (void)state;
    check_device_alpha_zero(oz_ref_dgemm_pm);
}

/* ---- every op pair, leading dimensions with NaN padding, chunk edges ---- */

static void test_ops_and_leading_dimensions(void **state)
{
    (void)state;
    const int64_t ks[] = {1, 2, 31, 33, 4095, 4096, 4097, 8193};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
                oz_op ta = all_ops[a], tb = all_ops[b];
                int64_t k = ks[q];
                int64_t m = oz_rng_range(1, 9), n = oz_rng_range(1, 7);
                int64_t ar = ta == OZ_OP_N ? m : k, ac = ta == OZ_OP_N ? k : m;
                int64_t br = tb == OZ_OP_N ? k : n, bc = tb == OZ_OP_N ? n : k;
                int64_t lda = ar + oz_rng_range(0, 3), ldb = br + oz_rng_range(0, 3), ldc = m + oz_rng_range(0, 3);
                double *A = make_matrix(ar, ac, lda, NAN, gen_sym);
                double *B = make_matrix(br, bc, ldb, NAN, gen_sym);
                double *C0 = make_matrix(m, n, ldc, -7.0, gen_sym);
                double *C1 = xcalloc((size_t)(ldc * n), sizeof(double));
                char what[96];
                snprintf(what, sizeof what, "op %c%c k=%" PRId64 " lda %" PRId64 " ldb %" PRId64 " ldc %" PRId64,
                         "NTC"[a], "NTC"[b], k, lda, ldb, ldc);
                run_vs_model(what, ta, tb, m, n, k, 1.0, A, lda, B, ldb, 0.0, C0, ldc, C1);
                accuracy acc = check_against_exact(what, ta, tb, m, n, k, 1.0, A, lda, B, ldb, 0.0, C0, C1, ldc);
                (void)acc;

                /* the same product with the operands stored the other way gives the same bits */
                oz_op ta2 = ta == OZ_OP_N ? OZ_OP_T : OZ_OP_N, tb2 = tb == OZ_OP_N ? OZ_OP_C : OZ_OP_N;
                int64_t lda2 = ac, ldb2 = bc;
                double *A2 = xcalloc((size_t)(ar * ac), sizeof(double)), *B2 = xcalloc((size_t)(br * bc), sizeof(double));
                for (int64_t r = 0; r < ar; r++)
                    for (int64_t c = 0; c < ac; c++)
                        A2[c + r * lda2] = A[r + c * lda];
                for (int64_t r = 0; r < br; r++)
                    for (int64_t c = 0; c < bc; c++)
                        B2[c + r * ldb2] = B[r + c * ldb];
                double *C2 = make_matrix(m, n, ldc, -7.0, gen_nan);
                assert_int_equal(oz_ref_dgemm(ta2, tb2, m, n, k, 1.0, A2, lda2, B2, ldb2, 0.0, C2, ldc), OZ_REF_OK);
                assert_same_bits(what, C2, C1, m, n, ldc);
                free(A), free(B), free(C0), free(C1), free(A2), free(B2), free(C2);
            }
}

/* ---- alpha and beta ---- */

static void test_alpha_beta(void **state)
{
    (void)state;
    const double alphas[] = {1.0, -1.0, 0.5, -3.25, 1e-3, 0x1p-600, 1e10};
    const double betas[] = {0.0, -0.0, 1.0, -1.0, 2.0, 0.1, -1e-5};
    for (size_t x = 0; x < sizeof alphas / sizeof alphas[0]; x++)
        for (size_t y = 0; y < sizeof betas / sizeof betas[0]; y++) {
            double alpha = alphas[x], beta = betas[y];
            int64_t m = 6, n = 5, k = (int64_t)oz_rng_range(1, 5000), ldc = 8;
            oz_op ta = all_ops[oz_rng_range(0, 2)], tb = all_ops[oz_rng_range(0, 2)];
            int64_t lda = ta == OZ_OP_N ? m : k, ldb = tb == OZ_OP_N ? k : n;
            double *A = make_matrix(lda, ta == OZ_OP_N ? k : m, lda, 0, gen_sym);
            double *B = make_matrix(ldb, tb == OZ_OP_N ? n : k, ldb, 0, gen_sym);
            double *C0 = make_matrix(m, n, ldc, 3.0, gen_sym);
            if (beta == 0.0) /* beta == 0: C is not read */
                for (int64_t i = 0; i < m * n; i += 3)
                    C0[(i % m) + (i / m) * ldc] = i % 2 ? NAN : -INFINITY;
            double *C1 = xcalloc((size_t)(ldc * n), sizeof(double));
            char what[64];
            snprintf(what, sizeof what, "alpha %g beta %g", alpha, beta);
            run_vs_model(what, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C0, ldc, C1);
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = 0; i < m; i++)
                    assert_true(isfinite(C1[i + j * ldc]));
            check_against_exact(what, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C0, C1, ldc);
            free(A), free(B), free(C0), free(C1);
        }
}

/* beta != 0 reads C: NaN and Inf in C propagate (beta * NaN, beta * Inf) */
static void test_beta_reads_c(void **state)
{
    (void)state;
    enum { M = 3, N = 2, K = 4 };
    double A[M * K], B[K * N], C[M * N];
    for (int i = 0; i < M * K; i++)
        A[i] = oz_rng_sym();
    for (int i = 0; i < K * N; i++)
        B[i] = oz_rng_sym();
    for (int i = 0; i < M * N; i++)
        C[i] = 1.0;
    C[1] = NAN;
    C[4] = -INFINITY;
    assert_int_equal(oz_ref_dgemm(OZ_OP_N, OZ_OP_N, M, N, K, 1.0, A, M, B, K, 0.5, C, M), OZ_REF_OK);
    assert_true(isnan(C[1]));
    assert_true(isinf(C[4]) && C[4] < 0);
    for (int i = 0; i < M * N; i++)
        if (i != 1 && i != 4)
            assert_true(isfinite(C[i]));
}

/* ---- Inf and NaN in A or B propagate as in DGEMM ---- */

static void test_nonfinite_inputs(void **state)
{
    (void)state;
    enum { M = 6, N = 5, K = 9 };
    double A[M * K], B[K * N];
    for (int i = 0; i < M * K; i++)
        A[i] = oz_rng_sym();
    for (int i = 0; i < K * N; i++)
        B[i] = oz_rng_sym() + 2.0; /* positive, nonzero: Inf * b is never NaN */
    A[1 + 3 * M] = INFINITY;   /* row 1: +Inf -> +Inf times positive B */
    A[2 + 0 * M] = NAN;        /* row 2: NaN */
    A[3 + 1 * M] = INFINITY;   /* row 3: +Inf and -Inf: Inf - Inf = NaN */
    A[3 + 5 * M] = -INFINITY;
    A[4 + 8 * M] = -INFINITY;  /* row 4: -Inf in the last k */
    B[2 + 3 * K] = 0.0;        /* column 3 has a zero: Inf * 0 = NaN for row 1 if aligned */
    B[3 + 3 * K] = 0.0;        /* column 3, k = 3: row 1's Inf meets 0 -> NaN */
    B[4 + 4 * K] = NAN;        /* column 4: NaN everywhere */
    const double betas[] = {0.0, 1.0};
    for (int bi = 0; bi < 2; bi++) {
        double C[M * N], Cm[M * N];
        for (int i = 0; i < M * N; i++)
            C[i] = Cm[i] = 0.5;
        assert_int_equal(oz_ref_dgemm(OZ_OP_N, OZ_OP_N, M, N, K, 2.0, A, M, B, K, betas[bi], C, M), OZ_REF_OK);
        model_dgemm(OZ_OP_N, OZ_OP_N, M, N, K, 2.0, A, M, B, K, betas[bi], Cm, M);
        assert_same_bits("non-finite inputs", C, Cm, M, N, M);
        for (int j = 0; j < N; j++)
            for (int i = 0; i < M; i++) {
                double naive = 0.0; /* plain DGEMM, any order would classify the same here */
                for (int kk = 0; kk < K; kk++)
                    naive += A[i + kk * M] * B[kk + j * K];
                naive = 2.0 * naive + betas[bi] * 0.5;
                double got = C[i + j * M];
                if (isnan(naive) != isnan(got) || isinf(naive) != isinf(got) ||
                    (isinf(naive) && (naive > 0) != (got > 0)))
                    fail_msg("C[%d,%d] = %a where DGEMM gives %a", i, j, got, naive);
            }
        assert_true(isinf(C[1 + 0 * M]) && C[1] > 0);
        assert_true(isnan(C[1 + 3 * M]));
        assert_true(isnan(C[2 + 1 * M]));
        assert_true(isnan(C[3 + 0 * M]));
        assert_true(isinf(C[4 + 0 * M]) && C[4] < 0);
        assert_true(isnan(C[0 + 4 * M]));
        assert_true(isfinite(C[0 + 0 * M]) && isfinite(C[5 + 3 * M]));
    }
}

/* Finite inputs whose product overflows give Inf like DGEMM */
static void test_overflow(void **state)
{
    (void)state;
    double A[4] = {1e300, 1e300, -1e300, 1e300}, B[4] = {1e300, 1e300, 1e300, 1e-300}, C[4];
    assert_int_equal(oz_ref_dgemm(OZ_OP_N, OZ_OP_N, 2, 2, 2, 1.0, A, 2, B, 2, 0.0, C, 2), OZ_REF_OK);
    /* C = A B, A = [1e300 -1e300; 1e300 1e300], B = [1e300 1e300; 1e300 1e-300] */
    assert_true(C[0] == 0.0);             /* 1e600 - 1e600: scaled first, no intermediate overflow */
    assert_true(isinf(C[1]) && C[1] > 0); /* 1e600 + 1e600 */
    assert_true(isinf(C[2]) && C[2] > 0); /* 1e600 - 1 */
    assert_true(isinf(C[3]) && C[3] > 0); /* 1e600 + 1 */
}

static void test_deterministic(void **state)
{
    (void)state;
    enum { M = 7, N = 6, K = 5000 };
    double *A = make_matrix(M, K, M, 0, gen_sym), *B = make_matrix(K, N, K, 0, gen_sym);
    double C1[M * N], C2[M * N];
    for (int i = 0; i < M * N; i++)
        C1[i] = C2[i] = (double)i;
    assert_int_equal(oz_ref_dgemm(OZ_OP_N, OZ_OP_N, M, N, K, 1.0, A, M, B, K, 0.5, C1, M), OZ_REF_OK);
    assert_int_equal(oz_ref_dgemm(OZ_OP_N, OZ_OP_N, M, N, K, 1.0, A, M, B, K, 0.5, C2, M), OZ_REF_OK);
    assert_memory_equal(C1, C2, sizeof C1);
    free(A), free(B);
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(0xd6e33));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invalid_arguments),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_k_zero_and_alpha_zero),
        cmocka_unit_test(test_device_alpha_zero),
        cmocka_unit_test(test_ops_and_leading_dimensions),
        cmocka_unit_test(test_alpha_beta),
        cmocka_unit_test(test_beta_reads_c),
        cmocka_unit_test(test_nonfinite_inputs),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_deterministic),
    };
    return OZ_TEST_RUN("test_refgemm", "refgemm contract", tests, seed);
}
