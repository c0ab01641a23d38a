/* tests/fake/fake_cublas.h: a recording stand-in for libcublas, for the shim's CPU tests.
 *
 * Built as libcublas.so.13 (and libcublas.so.99, a copy with its own state).
 * Every exported cuBLAS function records its name and all its arguments and
 * returns the status set by fake_cublas_set_status (default SUCCESS); it
 * never touches the matrices. The complex GEMMs (cublasZgemm*) alike. The
 * legacy API's functions (cublas.h) too, its cublasDgemm and cublasZgemm
 * leaving that status in the legacy error state. */
#ifndef OZCRT_TESTS_FAKE_CUBLAS_H
#define OZCRT_TESTS_FAKE_CUBLAS_H

#include <stdint.h>
#include <cublas_v2.h>

#include "cublaslt13/fake_cublaslt.h"

typedef struct fake_call {
    char name[48];
    cublasHandle_t handle;
    int transa, transb;
    int64_t m, n, k;
    const void *alpha, *beta;
    const void *A, *B;
    void *C;
    int64_t lda, ldb, ldc;
    long long strideA, strideB, strideC;
    const void *const *Aarray, *const *Barray;
    void *const *Carray;
    int64_t batch;
    int Atype, Btype, Ctype, compute, algo;
    int id; /* fake_cublas_id() of the library that recorded it (tests/python mirrors the layout up to here) */
    /* the legacy API (cublas.h): transa/transb hold the letters; the scalars by value; cublasSetKernelStream's stream */
    double alpha_v, beta_v;
    cudaStream_t stream;
    /* the grouped entry points: the count, and the arrays as passed (group
     * 0's values in the fields above, alpha/beta its scalars' addresses,
     * batch its size) */
    int64_t group_count;
    const void *m_array, *group_size;
    /* the legacy cublasZgemm: its scalars' imaginary parts (the real ones in alpha_v, beta_v) */
    double alpha_vi, beta_vi;
} fake_call;

/* The last recorded call, and how many calls were recorded since the reset. */
const fake_call *fake_cublas_last(void);
int fake_cublas_count(void);
/* Forgets the calls; the status every function returns from now on. */
void fake_cublas_reset(void);
void fake_cublas_set_status(cublasStatus_t status);
/* Which build this is: 13 or 99. */
int fake_cublas_id(void);
/* How many handle queries (cublasGetStream_v2, cublasGetPointerMode_v2,
 * cublasGetMathMode) this library answered since the reset; not recorded
 * as calls. */
int fake_cublas_queries(void);
/* The legacy API's error state: what the next cublasGetError returns (then
 * SUCCESS); a recorded legacy cublasDgemm sets it to the status set by
 * fake_cublas_set_status. */
void fake_cublas_set_legacy_error(cublasStatus_t status);

/* cuBLAS's own use of cuBLASLt, as libcublas calls cublasLtMatmul for its
 * GEMMs: passes the arguments to cublasLtMatmul (the fake links the fake
 * cuBLASLt as the real one links the real). */
cublasStatus_t fake_cublas_inner_lt_matmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha,
                                           const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                                           cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                           cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                                           cudaStream_t stream);

#endif
