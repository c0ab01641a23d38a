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
 * k == 0 or alpha == 0: C = beta * C (0 if beta == 0). */
int oz_ref_dgemm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                 double alpha, const double *A, int64_t lda,
                 const double *B, int64_t ldb, double beta, double *C, int64_t ldc);

/* The per-element error bound of the path against the exact value of
 * alpha * op(A) op(B) + beta * C_old (see docs/error-bound.md):
 *   |alpha| 2^(s+t) k (2^-34 (1 + 2^-34) + ceil(k/4096) 2^-50)
 *   + 2^-52 (|alpha P| + |beta C_old|) + 2^-1070 (|alpha| + 1)
 * where s, t are the scale exponents of row i of op(A) and column j of op(B)
 * and P the scaled-back product. */
double oz_error_bound(double alpha, double beta, double c_old, double P, int s, int t, int64_t k);

#endif
