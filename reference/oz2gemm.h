/* reference/oz2gemm.h: the CPU reference of the ozaki2 DGEMM (ozaki2.md), the specification the GPU ozaki2 path matches bit for bit. */
#ifndef OZCRT_REFERENCE_OZ2GEMM_H
#define OZCRT_REFERENCE_OZ2GEMM_H

#include <stdint.h>

#include "refgemm.h"

/* Return code beside refgemm.h's: no N <= 20 reaches `bits` at this k
 * (ozaki2.md step 1: the call goes to the real cuBLAS). C is untouched. */
enum { OZ2_REF_UNREACHABLE = 3 };

/* C <- alpha * op(A) op(B) + beta * C by the ozaki2 scheme with the target
 * `bits` (>= 1), column-major, the full cublasDgemm_v2 argument contract as
 * oz_ref_dgemm (OZ_REF_INVALID for what cuBLAS rejects and for bits < 1,
 * C untouched; beta == 0: C not read; k == 0 or alpha == 0: C = beta * C, 0
 * when beta == 0, A and B not read, no plan needed: alpha and beta in host
 * pointer mode; oz2_ref_dgemm_pm below for device pointer mode). Rows of op(A) / columns
 * of op(B) holding Inf or NaN: their elements take the plain double dot
 * product in ascending k, as the Phase 22 path.
 * bits = OZ2A_AUTO(B) (crt/oz2_auto.h: -B, B in 20..64): automatic
 * precision (docs/ozaki2-auto.md), N and w from the data; where no plan
 * certifies the call ("auto-native") every element takes the plain dot
 * product in ascending k, as the GPU computes it without the host. */
int oz2_ref_dgemm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                  double alpha, const double *A, int64_t lda,
                  const double *B, int64_t ldb, double beta, double *C, int64_t ldc, int bits);

/* The same with the scalars' pointer mode (refgemm.h's oz_ref_dgemm_pm):
 * device_pm 1: alpha == 0 gives beta C where P is finite, NaN where not. */
int oz2_ref_dgemm_pm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                     double alpha, const double *A, int64_t lda,
                     const double *B, int64_t ldb, double beta, double *C, int64_t ldc, int bits, int device_pm);

/* The automatic plan of a call (k >= 1, target B in 20..64): N (0: native),
 * w, and w_need (the max of the elements' needs; OZ2A_W_NONE / OZ2A_W_INF,
 * crt/oz2_auto.h). OZ_REF_INVALID for bad sizes or B. */
int oz2_ref_auto_plan(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
                      const double *B, int64_t ldb, int target, int *N, int *w, int *w_need);

#endif
