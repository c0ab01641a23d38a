/* reference/oz2zgemm.h: the CPU reference of the ozaki2 ZGEMM (docs/ozaki2-complex.md), the specification the GPU complex path matches bit for bit. */
#ifndef OZCRT_REFERENCE_OZ2ZGEMM_H
#define OZCRT_REFERENCE_OZ2ZGEMM_H

#include <stdint.h>

#include "oz2gemm.h" /* oz_op, the return codes, OZ2_REF_UNREACHABLE */

/* A complex double scalar, laid out as cuDoubleComplex (re, then im). */
typedef struct oz_cplx {
    double re, im;
} oz_cplx;

/* C <- alpha * op(A) op(B) + beta * C by the ozaki2 scheme for complex
 * double with the target `bits` (>= 1), the cublasZgemm_v2 argument
 * contract: A, B, C interleaved (element (r, c) of A is A[2 (r + c lda)]
 * and A[2 (r + c lda) + 1], re and im), column-major, lda/ldb/ldc in
 * complex elements; op N, T or C (C: conjugate transpose). OZ_REF_INVALID
 * for what cuBLAS rejects and for bits < 1, C untouched; OZ2_REF_UNREACHABLE
 * when no N <= 20 holds the complex range at `bits`, C untouched.
 * beta == 0 (both parts): C not read. k == 0 or alpha == 0 (both parts):
 * C = beta * C by the spec's complex product (zeros when beta == 0), A and
 * B not read, no plan needed (host pointer mode; oz2_ref_zgemm_pm below for
 * device pointer mode). Rows of op(A) / columns of op(B) with Inf or
 * NaN in either part of any element: their elements take the plain complex
 * dot product in ascending k (the spec's complex product, then one sum per
 * part), so non-finite values propagate. */
int oz2_ref_zgemm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                  oz_cplx alpha, const double *A, int64_t lda,
                  const double *B, int64_t ldb, oz_cplx beta, double *C, int64_t ldc, int bits);

/* The same with the scalars' pointer mode: device_pm 1: alpha == 0 (both
 * parts) gives beta C where both parts of P are finite, NaN in both parts
 * where a part is not (0 * P, as cuBLAS). */
int oz2_ref_zgemm_pm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                     oz_cplx alpha, const double *A, int64_t lda,
                     const double *B, int64_t ldb, oz_cplx beta, double *C, int64_t ldc, int bits, int device_pm);

/* bits = OZ2A_AUTO(B) (crt/oz2_auto.h, B in 20..64) above: automatic
 * precision (crt/oz2_complex.h): N' split moduli and w from the data, X
 * exact over the split moduli; no plan (N' > 24, k >= 2^32, or an element
 * no w certifies): every element the plain complex dot product
 * ("auto-native"). This is the plan it takes: *n_split (0: auto-native), *w,
 * and *w_need (may be NULL) the largest element's need. k >= 1. */
int oz2z_ref_auto_plan(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
                       const double *B, int64_t ldb, int target, int *n_split, int *w, int *w_need);

#endif
