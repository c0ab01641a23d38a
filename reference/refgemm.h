/* reference/refgemm.h: the CPU reference of the complete Phase 22 DGEMM, the specification the GPU path matches bit for bit. */
#ifndef OZCRT_REFERENCE_REFGEMM_H
#define OZCRT_REFERENCE_REFGEMM_H

#include <stdint.h>

/* Operations, with cuBLAS's numbering (CUBLAS_OP_N = 0, _T = 1, _C = 2);
 * for real data C is T. */
typedef enum { OZ_OP_N = 0, OZ_OP_T = 1, OZ_OP_C = 2 } oz_op;

/* Return codes of oz_ref_dgemm. */
enum { OZ_REF_OK = 0, OZ_REF_INVALID = 1, OZ_REF_NOMEM = 2 };

/* C <- alpha * op(A) op(B) + beta * C, column-major, the full cublasDgemm_v2
 * argument contract. Returns OZ_REF_INVALID for what cuBLAS rejects
 * (bad op, m/n/k < 0, lda < max(1, rows of A as stored), ldb likewise,
 * ldc < max(1, m)), with C untouched. beta == 0: C is not read.
 * k == 0 or alpha == 0: C = beta * C (0 if beta == 0), A and B not read:
 * alpha and beta given in host pointer mode. */
int oz_ref_dgemm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                 double alpha, const double *A, int64_t lda,
                 const double *B, int64_t ldb, double beta, double *C, int64_t ldc);

/* The same with the scalars' pointer mode: device_pm 1 (device pointer
 * mode, where the product cannot be skipped on the host): alpha == 0 gives
 * beta * C where the element's product is finite and NaN where it is Inf or
 * NaN (0 * P, as cuBLAS); 0 is oz_ref_dgemm. */
int oz_ref_dgemm_pm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                    double alpha, const double *A, int64_t lda,
                    const double *B, int64_t ldb, double beta, double *C, int64_t ldc, int device_pm);

#endif
