/* tests/unit/oz_test_gemm.h: an independent model of the Phase 22 DGEMM and an exact (quad) DGEMM, to judge reference/refgemm.c.
 *
 * The model follows phase22.md step by step but takes another road to the
 * integers: slices from the integer significand (oz_model_slice), pass values
 * as exact int64 dot products (no residues, no CRT), then the spec's double
 * operations in the spec's order. Where the CRT is right, the two agree to the
 * bit; that is what the GPU path will be held to as well. */
#ifndef OZCRT_TESTS_UNIT_OZ_TEST_GEMM_H
#define OZCRT_TESTS_UNIT_OZ_TEST_GEMM_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reference/bound.h"
#include "reference/refgemm.h"
#include "oz_test_util.h"

/* op(A)[i, kk] and op(B)[kk, j] of column-major storage */
static inline double op_a(oz_op ta, const double *A, int64_t lda, int64_t i, int64_t kk)
{
    return ta == OZ_OP_N ? A[i + kk * lda] : A[kk + i * lda];
}
static inline double op_b(oz_op tb, const double *B, int64_t ldb, int64_t kk, int64_t j)
{
    return tb == OZ_OP_N ? B[kk + j * ldb] : B[j + kk * ldb];
}

static inline void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        abort();
    }
    return p;
}

/* Scale exponents and slices of R vectors of length K, vector r element kk
 * given by get(ctx, r, kk). scale[r] == INT32_MIN marks a non-finite vector. */
typedef struct model_sliced {
    int *scale;
    int64_t *hi, *lo; /* [r * K + kk] */
} model_sliced;

/* Element kk of vector r: row r of op(A) (b_side 0) or column r of op(B). */
static inline double model_elem(int b_side, oz_op op, const double *X, int64_t ld, int64_t r, int64_t kk)
{
    return b_side ? op_b(op, X, ld, kk, r) : op_a(op, X, ld, r, kk);
}

/* The scale exponent of vector r of length k, INT32_MIN when it holds Inf or NaN. */
static inline int model_vec_scale(int b_side, oz_op op, const double *X, int64_t ld, int64_t r, int64_t k)
{
    double mx = 0.0;
    int finite = 1;
    for (int64_t kk = 0; kk < k; kk++) {
        double x = model_elem(b_side, op, X, ld, r, kk);
        finite &= isfinite(x) != 0;
        if (fabs(x) > mx)
            mx = fabs(x);
    }
    return finite ? oz_model_scale_exponent(mx) : INT32_MIN;
}

/* The rows of op(A) (b_side 0) or the columns of op(B), scaled and sliced. */
static inline model_sliced model_slice(int b_side, oz_op op, const double *X, int64_t ld, int64_t rows, int64_t k)
{
    model_sliced s = {xcalloc((size_t)rows, sizeof(int)), xcalloc((size_t)(rows * k), sizeof(int64_t)),
                      xcalloc((size_t)(rows * k), sizeof(int64_t))};
    for (int64_t r = 0; r < rows; r++) {
        s.scale[r] = model_vec_scale(b_side, op, X, ld, r, k);
        if (s.scale[r] != INT32_MIN)
            for (int64_t kk = 0; kk < k; kk++)
                oz_model_slice(model_elem(b_side, op, X, ld, r, kk), s.scale[r], &s.hi[r * k + kk], &s.lo[r * k + kk]);
    }
    return s;
}

/* The calls whose result is beta C (k == 0 or alpha == 0; C not read when
 * beta == 0): done here, 1; otherwise 0. */
/* An element of a special row or column (Inf/NaN): the plain dot product,
 * summed in k order, each product and sum rounded (both specs). */
static inline double model_plain_dot(oz_op ta, oz_op tb, const double *A, int64_t lda, const double *B, int64_t ldb,
                                     int64_t i, int64_t j, int64_t k)
{
    double dot = 0.0;
    for (int64_t kk = 0; kk < k; kk++) {
        double prod = op_a(ta, A, lda, i, kk) * op_b(tb, B, ldb, kk, j);
        dot = dot + prod;
    }
    return dot;
}

static inline int model_trivial(int64_t m, int64_t n, int64_t k, double alpha, double beta, double *C, int64_t ldc)
{
    if (m == 0 || n == 0)
        return 1;
    if (k != 0 && alpha != 0.0)
        return 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++)
            C[i + j * ldc] = beta == 0.0 ? 0.0 : beta * C[i + j * ldc];
    return 1;
}

static inline void model_free(model_sliced *s)
{
    free(s->scale);
    free(s->hi);
    free(s->lo);
}

/* The model of oz_ref_dgemm (valid arguments only). Non-finite rows/columns
 * take the plain double dot product in ascending k, as refgemm.c documents. */
static inline void model_dgemm(oz_op ta, oz_op tb, int64_t m, int64_t n, int64_t k, double alpha, const double *A,
                        int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc)
{
    if (model_trivial(m, n, k, alpha, beta, C, ldc))
        return;
    model_sliced sa = model_slice(0, ta, A, lda, m, k), sb = model_slice(1, tb, B, ldb, n, k);
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < m; i++) {
            double P;
            if (sa.scale[i] == INT32_MIN || sb.scale[j] == INT32_MIN) {
                P = model_plain_dot(ta, tb, A, lda, B, ldb, i, j, k);
            } else {
                const int64_t *ah = sa.hi + i * k, *al = sa.lo + i * k;
                const int64_t *bh = sb.hi + j * k, *bl = sb.lo + j * k;
                double acc = 0.0;
                for (int64_t k0 = 0; k0 < k; k0 += 4096) {
                    int64_t k1 = k0 + 4096 < k ? k0 + 4096 : k;
                    int64_t hh = 0, hl = 0, lh = 0, ll = 0;
                    for (int64_t kk = k0; kk < k1; kk++) {
                        hh += ah[kk] * bh[kk];
                        hl += ah[kk] * bl[kk];
                        lh += al[kk] * bh[kk];
                        ll += al[kk] * bl[kk];
                    }
                    acc = acc + ldexp((double)hh, -34);
                    acc = acc + ldexp((double)hl, -51);
                    acc = acc + ldexp((double)lh, -51);
                    acc = acc + ldexp((double)ll, -68);
                }
                P = ldexp(acc, sa.scale[i] + sb.scale[j]);
            }
            double *c = &C[i + j * ldc];
            if (beta == 0.0) {
                *c = alpha * P;
            } else {
                double ap = alpha * P;
                double bc = beta * *c;
                *c = ap + bc;
            }
        }
    }
    model_free(&sa);
    model_free(&sb);
}

/* Accuracy of one call against the exact result: every element within
 * oz_error_bound. C_old is C before the call, C_new after. Returns the
 * largest err / bound seen; *worst gets its index. Fails the test (with the
 * element, the error and the bound) on a violation. */
typedef struct accuracy {
    double max_ratio;   /* max err / bound */
    double max_abs_err; /* max |C - exact| */
    double max_trunc_ratio; /* max err / (|alpha| 2^(s+t) k 2^-34), the truncation share */
} accuracy;

static inline accuracy check_against_exact(const char *what, oz_op ta, oz_op tb, int64_t m, int64_t n, int64_t k,
                                    double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                                    double beta, const double *C_old, const double *C_new, int64_t ldc)
{
    accuracy acc = {0.0, 0.0, 0.0};
    int *s = xcalloc((size_t)m, sizeof(int)), *t = xcalloc((size_t)n, sizeof(int));
    for (int64_t i = 0; i < m; i++) {
        double mx = 0.0;
        for (int64_t kk = 0; kk < k; kk++)
            mx = fmax(mx, fabs(op_a(ta, A, lda, i, kk)));
        s[i] = oz_scale_exponent(mx);
    }
    for (int64_t j = 0; j < n; j++) {
        double mx = 0.0;
        for (int64_t kk = 0; kk < k; kk++)
            mx = fmax(mx, fabs(op_b(tb, B, ldb, kk, j)));
        t[j] = oz_scale_exponent(mx);
    }
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < m; i++) {
            oz_quad dot = 0;
            for (int64_t kk = 0; kk < k; kk++)
                dot += (oz_quad)op_a(ta, A, lda, i, kk) * (oz_quad)op_b(tb, B, ldb, kk, j);
            double c_old = beta == 0.0 ? 0.0 : C_old[i + j * ldc];
            oz_quad exact = (oz_quad)alpha * dot + (oz_quad)beta * (oz_quad)c_old;
            double got = C_new[i + j * ldc];
            oz_quad qerr = (oz_quad)got - exact;
            double err = (double)(qerr < 0 ? -qerr : qerr);
            /* an upper bound of |P| as computed: |exact product| plus the path error */
            double path_ub = ldexp((double)k * 0x1p-33, s[i] + t[j]);
            double P_ub = (double)(dot < 0 ? -dot : dot) * (1.0 + 0x1p-50) + path_ub;
            double bound = oz_error_bound(alpha, beta, c_old, P_ub, s[i], t[j], k);
            if (!isfinite(got) || !(err <= bound))
                fail_msg("%s: C[%" PRId64 ",%" PRId64 "] (m=%" PRId64 " n=%" PRId64 " k=%" PRId64
                         " op %d%d alpha %a beta %a): got %a, exact %a, err %.3e > bound %.3e (s=%d t=%d)",
                         what, i, j, m, n, k, (int)ta, (int)tb, alpha, beta, got, (double)exact, err, bound, s[i],
                         t[j]);
            if (bound > 0 && err / bound > acc.max_ratio)
                acc.max_ratio = err / bound;
            if (err > acc.max_abs_err)
                acc.max_abs_err = err;
            double trunc = fabs(alpha) * ldexp((double)k * 0x1p-34, s[i] + t[j]);
            if (trunc > 0 && err / trunc > acc.max_trunc_ratio)
                acc.max_trunc_ratio = err / trunc;
        }
    }
    free(s);
    free(t);
    return acc;
}

/* Bit equality of two column-major m x n blocks (NaN == NaN of any payload). */
static inline void assert_same_bits(const char *what, const double *got, const double *want, int64_t m, int64_t n,
                             int64_t ldc)
{
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double g = got[i + j * ldc], w = want[i + j * ldc];
            if (isnan(g) && isnan(w))
                continue;
            if (memcmp(&g, &w, sizeof g) != 0)
                fail_msg("%s: C[%" PRId64 ",%" PRId64 "] = %a, the spec model gives %a (m=%" PRId64 " n=%" PRId64 ")",
                         what, i, j, g, w, m, n);
        }
}

typedef int (*oz_test_ref_pm)(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k, double alpha,
                              const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                              int64_t ldc, int device_pm);

/* A real reference in either pointer mode (the _pm functions of reference/),
 * from the tests. alpha == 0 in device pointer mode (device_pm 1): the
 * product is not skipped, so elements whose row of op(A) or column of op(B)
 * holds Inf or NaN, and one whose product overflows, are NaN (0 * P, as
 * cuBLAS); every other element is beta C; host pointer mode keeps beta C
 * everywhere; a nonzero alpha gives the same bits in both modes. */
static inline void check_device_alpha_zero(oz_test_ref_pm ref)
{
    enum { M = 5, N = 4, K = 6, LDC = 6 };
    double A[M * K], B[K * N], C0[LDC * N], C[LDC * N], H[LDC * N];
    for (int i = 0; i < M * K; i++)
        A[i] = oz_rng_sym();
    for (int i = 0; i < K * N; i++)
        B[i] = oz_rng_sym();
    A[1 + 2 * M] = INFINITY;               /* row 1 of A */
    B[3 + 2 * K] = NAN;                    /* column 2 of B */
    for (int kk = 0; kk < K; kk++)         /* row 3 x column 0: beyond the double range */
        A[3 + kk * M] = 0x1p600, B[kk] = 0x1p600;
    const double betas[] = {0.0, 1.5};
    for (int bi = 0; bi < 2; bi++) {
        for (int i = 0; i < LDC * N; i++)
            C0[i] = oz_rng_sym();
        memcpy(C, C0, sizeof C);
        memcpy(H, C0, sizeof H);
        assert_int_equal(ref(OZ_OP_N, OZ_OP_N, M, N, K, 0.0, A, M, B, K, betas[bi], C, LDC, 1), OZ_REF_OK);
        assert_int_equal(ref(OZ_OP_N, OZ_OP_N, M, N, K, 0.0, A, M, B, K, betas[bi], H, LDC, 0), OZ_REF_OK);
        for (int j = 0; j < N; j++)
            for (int i = 0; i < M; i++) {
                const double bc = betas[bi] == 0.0 ? 0.0 : betas[bi] * C0[i + j * LDC];
                const int nan = i == 1 || j == 2 || (i == 3 && j == 0);
                const double got = C[i + j * LDC];
                if (nan ? !isnan(got) : got != bc)
                    fail_msg("device alpha 0, beta %g: C[%d,%d] = %a, want %s", betas[bi], i, j, got,
                             nan ? "NaN" : "beta C");
                if (H[i + j * LDC] != bc)
                    fail_msg("host alpha 0, beta %g: C[%d,%d] = %a, want beta C", betas[bi], i, j, H[i + j * LDC]);
            }
    }
    /* a nonzero alpha: both modes alike */
    memcpy(C, C0, sizeof C);
    memcpy(H, C0, sizeof H);
    assert_int_equal(ref(OZ_OP_N, OZ_OP_N, M, N, K, -1.25, A, M, B, K, 0.5, C, LDC, 1), OZ_REF_OK);
    assert_int_equal(ref(OZ_OP_N, OZ_OP_N, M, N, K, -1.25, A, M, B, K, 0.5, H, LDC, 0), OZ_REF_OK);
    for (int i = 0; i < LDC * N; i++)
        if (!(isnan(C[i]) && isnan(H[i])))
            assert_memory_equal(&C[i], &H[i], sizeof C[i]);
}


#endif
