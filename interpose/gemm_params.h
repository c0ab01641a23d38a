/* interpose/gemm_params.h: the parameter lists of the six intercepted GEMM families, written once for both integer widths.
 *
 * IT is int for the classic entry points and int64_t for their _64 twins
 * (cuBLAS 12+); strides are long long in both. The shim's wrappers
 * (exported.c) and the fake cuBLAS of the CPU tests define their functions
 * with these lists; a list that does not match cuBLAS's own prototype
 * (cublas_v2.h) fails to compile in both. */
#ifndef OZCRT_INTERPOSE_GEMM_PARAMS_H
#define OZCRT_INTERPOSE_GEMM_PARAMS_H

#include <stdint.h>
#include <cublas_v2.h>

#define OZCRT_DGEMM_PARAMS(IT)                                                                                        \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const double *alpha, \
        const double *A, IT lda, const double *B, IT ldb, const double *beta, double *C, IT ldc

#define OZCRT_GEMMEX_PARAMS(IT)                                                                                       \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const void *alpha,   \
        const void *A, cudaDataType Atype, IT lda, const void *B, cudaDataType Btype, IT ldb, const void *beta,        \
        void *C, cudaDataType Ctype, IT ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo

#define OZCRT_DGEMM_STRIDED_PARAMS(IT)                                                                                \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const double *alpha, \
        const double *A, IT lda, long long int strideA, const double *B, IT ldb, long long int strideB,               \
        const double *beta, double *C, IT ldc, long long int strideC, IT batchCount

#define OZCRT_GEMM_STRIDED_EX_PARAMS(IT)                                                                              \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const void *alpha,   \
        const void *A, cudaDataType Atype, IT lda, long long int strideA, const void *B, cudaDataType Btype, IT ldb,  \
        long long int strideB, const void *beta, void *C, cudaDataType Ctype, IT ldc, long long int strideC,          \
        IT batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo

#define OZCRT_DGEMM_BATCHED_PARAMS(IT)                                                                                \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const double *alpha, \
        const double *const Aarray[], IT lda, const double *const Barray[], IT ldb, const double *beta,               \
        double *const Carray[], IT ldc, IT batchCount

#define OZCRT_GEMM_BATCHED_EX_PARAMS(IT)                                                                              \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const void *alpha,   \
        const void *const Aarray[], cudaDataType Atype, IT lda, const void *const Barray[], cudaDataType Btype,       \
        IT ldb, const void *beta, void *const Carray[], cudaDataType Ctype, IT ldc, IT batchCount,                    \
        cublasComputeType_t computeType, cublasGemmAlgo_t algo

#endif
