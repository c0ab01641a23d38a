/* reference/refcommon.h: what both CPU references share: the operand views, the cuBLAS argument contract, the row scale, the plain dot product of special rows, and the alpha/beta epilogue over C. */
#ifndef OZCRT_REFERENCE_REFCOMMON_H
#define OZCRT_REFERENCE_REFCOMMON_H

#include <stdint.h>

#include "refgemm.h"

/* An R x K operand seen row by row: rows of op(A), or columns of op(B)
 * (element (r, kk) of the view is op(B)[kk, r]). */
typedef struct oz_ref_view {
    const double *base;
    int64_t rows, k;
    int64_t row_stride, k_stride;
} oz_ref_view;

static inline double oz_ref_at(const oz_ref_view *v, int64_t r, int64_t kk)
{
    return v->base[r * v->row_stride + kk * v->k_stride];
}

/* op(A) (m x k): element (i, kk) is A[i + kk*lda] for N, A[kk + i*lda] for T/C. */
oz_ref_view oz_ref_view_a(oz_op op, const double *A, int64_t lda, int64_t m, int64_t k);
/* op(B) (k x n) as n rows of k: element (j, kk) = op(B)[kk, j], that is
 * B[kk + j*ldb] for N, B[j + kk*ldb] for T/C. */
oz_ref_view oz_ref_view_b(oz_op op, const double *B, int64_t ldb, int64_t k, int64_t n);

/* The argument checks of cublasDgemm_v2 / cublasZgemm_v2 (the same for
 * both): valid ops, m, n, k >= 0, lda >= max(1, rows of A as stored), ldb
 * likewise, ldc >= max(1, m). 1 when cuBLAS would accept them. */
int oz_ref_args_valid(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                      int64_t ldc);

/* The cublasDgemm_v2 contract before any product: OZ_REF_INVALID for what
 * cuBLAS rejects (C untouched); OZ_REF_OK with *done = 1 when C is final
 * (m or n == 0; k == 0 or alpha_zero_host, alpha == 0 in host pointer
 * mode: C = beta C, 0 when beta == 0, C not read then); *done = 0 when the
 * product is needed (alpha == 0 in device pointer mode included: the
 * epilogue's rule). */
int oz_ref_contract(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k, int alpha_zero_host, int64_t lda,
                    int64_t ldb, double beta, double *C, int64_t ldc, int *done);

/* max |value| of row r (NaN, once seen, stays). */
double oz_ref_row_absmax(const oz_ref_view *v, int64_t r);

/* The plain double dot product of row i of va and row j of vb in ascending
 * k, product then sum, each rounded: the elements of special rows/columns. */
double oz_ref_plain_dot(const oz_ref_view *va, const oz_ref_view *vb, int64_t i, int64_t j);

/* C[i, j] = alpha P(i, j) when beta == 0 (C not read), else (alpha P) + (beta C),
 * each operation rounded, never contracted; alpha == 0 with P finite: beta
 * C (0 when beta == 0), with P Inf or NaN the formula (NaN); columns in
 * parallel with OpenMP. */
typedef double (*oz_ref_product_fn)(const void *ctx, int64_t i, int64_t j);
void oz_ref_epilogue(int64_t m, int64_t n, double alpha, double beta, double *C, int64_t ldc,
                     oz_ref_product_fn product, const void *ctx);

#endif
