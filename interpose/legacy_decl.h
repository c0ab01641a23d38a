/* interpose/legacy_decl.h: the legacy handle-less cuBLAS functions the shim intercepts, declared as cublas.h declares them (tests/fake/legacy_proto.c compiles these declarations after cublas.h: a mismatch fails the build).
 *
 * cublas.h and cublas_v2.h cannot be included together, and cublas_v2.h
 * makes the names cublasDgemm and cublasZgemm macros for the _v2 ones:
 * this header removes those macros (interpose/symbols.h includes it after
 * cublas_v2.h) and declares the legacy functions under their own names. */
#ifndef OZCRT_INTERPOSE_LEGACY_DECL_H
#define OZCRT_INTERPOSE_LEGACY_DECL_H

#include <cuda_runtime_api.h>
#include <cublas_api.h> /* and cuComplex.h */

#undef cublasDgemm
#undef cublasZgemm

#if defined(__cplusplus)
extern "C" {
#endif

cublasStatus_t cublasInit(void);
cublasStatus_t cublasShutdown(void);
cublasStatus_t cublasGetError(void);
cublasStatus_t cublasSetKernelStream(cudaStream_t stream);
void cublasDgemm(char transa, char transb, int m, int n, int k, double alpha, const double *A, int lda,
                 const double *B, int ldb, double beta, double *C, int ldc);
void cublasZgemm(char transa, char transb, int m, int n, int k, cuDoubleComplex alpha, const cuDoubleComplex *A,
                 int lda, const cuDoubleComplex *B, int ldb, cuDoubleComplex beta, cuDoubleComplex *C, int ldc);

#if defined(__cplusplus)
}
#endif

#endif
