/* interpose/gemm_params.h: the parameter lists of the intercepted GEMM families, written once for both integer widths (and, for the typed families, both element types).
 *
 * IT is int for the classic entry points and int64_t for their _64 twins
 * (cuBLAS 12+); strides are long long in both; the grouped entry points'
 * sizes are host arrays of IT, one element a group. T is the element type of
 * the D and Z families (double, cuDoubleComplex): cublasZgemm_v2 and
 * cublasZgemm3m take cublasDgemm_v2's list with T = cuDoubleComplex, the
 * Z batched and strided ones the D ones' likewise. The shim's wrappers
 * (exported.c) and the fake cuBLAS of the CPU tests define their functions
 * with these lists; a list that does not match cuBLAS's own prototype
 * (cublas_v2.h) fails to compile in both. */
#ifndef OZCRT_INTERPOSE_GEMM_PARAMS_H
#define OZCRT_INTERPOSE_GEMM_PARAMS_H

#include <stdint.h>
#include <cublas_v2.h>

#define OZCRT_XGEMM_PARAMS(IT, T)                                                                                     \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const T *alpha,      \
        const T *A, IT lda, const T *B, IT ldb, const T *beta, T *C, IT ldc
#define OZCRT_DGEMM_PARAMS(IT) OZCRT_XGEMM_PARAMS(IT, double)
#define OZCRT_ZGEMM_PARAMS(IT) OZCRT_XGEMM_PARAMS(IT, cuDoubleComplex)

#define OZCRT_GEMMEX_PARAMS(IT)                                                                                       \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const void *alpha,   \
        const void *A, cudaDataType Atype, IT lda, const void *B, cudaDataType Btype, IT ldb, const void *beta,        \
        void *C, cudaDataType Ctype, IT ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo

#define OZCRT_XGEMM_STRIDED_PARAMS(IT, T)                                                                             \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const T *alpha,      \
        const T *A, IT lda, long long int strideA, const T *B, IT ldb, long long int strideB, const T *beta, T *C,    \
        IT ldc, long long int strideC, IT batchCount
#define OZCRT_DGEMM_STRIDED_PARAMS(IT) OZCRT_XGEMM_STRIDED_PARAMS(IT, double)
#define OZCRT_ZGEMM_STRIDED_PARAMS(IT) OZCRT_XGEMM_STRIDED_PARAMS(IT, cuDoubleComplex)

#define OZCRT_GEMM_STRIDED_EX_PARAMS(IT)                                                                              \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const void *alpha,   \
        const void *A, cudaDataType Atype, IT lda, long long int strideA, const void *B, cudaDataType Btype, IT ldb,  \
        long long int strideB, const void *beta, void *C, cudaDataType Ctype, IT ldc, long long int strideC,          \
        IT batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo

#define OZCRT_XGEMM_BATCHED_PARAMS(IT, T)                                                                             \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const T *alpha,      \
        const T *const Aarray[], IT lda, const T *const Barray[], IT ldb, const T *beta, T *const Carray[], IT ldc,   \
        IT batchCount
#define OZCRT_DGEMM_BATCHED_PARAMS(IT) OZCRT_XGEMM_BATCHED_PARAMS(IT, double)
#define OZCRT_ZGEMM_BATCHED_PARAMS(IT) OZCRT_XGEMM_BATCHED_PARAMS(IT, cuDoubleComplex)

#define OZCRT_GEMM_BATCHED_EX_PARAMS(IT)                                                                              \
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, IT m, IT n, IT k, const void *alpha,   \
        const void *const Aarray[], cudaDataType Atype, IT lda, const void *const Barray[], cudaDataType Btype,       \
        IT ldb, const void *beta, void *const Carray[], cudaDataType Ctype, IT ldc, IT batchCount,                    \
        cublasComputeType_t computeType, cublasGemmAlgo_t algo

#define OZCRT_DGEMM_GROUPED_PARAMS(IT)                                                                               \
    cublasHandle_t handle, const cublasOperation_t transa_array[], const cublasOperation_t transb_array[],           \
        const IT m_array[], const IT n_array[], const IT k_array[], const double alpha_array[],                      \
        const double *const Aarray[], const IT lda_array[], const double *const Barray[], const IT ldb_array[],      \
        const double beta_array[], double *const Carray[], const IT ldc_array[], IT group_count, const IT group_size[]

#define OZCRT_GEMM_GROUPED_EX_PARAMS(IT)                                                                             \
    cublasHandle_t handle, const cublasOperation_t transa_array[], const cublasOperation_t transb_array[],           \
        const IT m_array[], const IT n_array[], const IT k_array[], const void *alpha_array,                         \
        const void *const Aarray[], cudaDataType_t Atype, const IT lda_array[], const void *const Barray[],          \
        cudaDataType_t Btype, const IT ldb_array[], const void *beta_array, void *const Carray[],                    \
        cudaDataType_t Ctype, const IT ldc_array[], IT group_count, const IT group_size[],                           \
        cublasComputeType_t computeType

#endif
