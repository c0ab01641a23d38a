/* interpose/exported.c: the only symbols libozcrt.so exports, a few lines each.
 *
 * Each wrapper packs its arguments into an ozcrt_call, lets route.c take the
 * call, and otherwise forwards the caller's own arguments, untouched, to the
 * real cuBLAS that owns the handle. The list must match OZCRT_INTERCEPTED and
 * libozcrt.map. */
#include <cublas_v2.h>

#include "real.h"
#include "route.h"

#define OZCRT_EXPORT __attribute__((visibility("default")))

#define OZCRT_TAKE(...)                      \
    do {                                     \
        ozcrt_call c_ = {__VA_ARGS__};       \
        cublasStatus_t st_;                  \
        if (ozcrt_route(&c_, &st_))          \
            return st_;                      \
    } while (0)

OZCRT_EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                           int m, int n, int k, const double *alpha, const double *A, int lda,
                                           const double *B, int ldb, const double *beta, double *C, int ldc)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasDgemm_v2, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,
               .k = k, .alpha = alpha, .A = A, .lda = lda, .B = B, .ldb = ldb, .beta = beta, .C = C, .ldc = ldc,
               .batch = 1);
    OZCRT_FORWARD(cublasDgemm_v2, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

OZCRT_EXPORT cublasStatus_t cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
                                              cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                              const double *alpha, const double *A, int64_t lda, const double *B,
                                              int64_t ldb, const double *beta, double *C, int64_t ldc)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasDgemm_v2_64, .handle = handle, .transa = transa, .transb = transb, .m = m,
               .n = n, .k = k, .alpha = alpha, .A = A, .lda = lda, .B = B, .ldb = ldb, .beta = beta, .C = C,
               .ldc = ldc, .batch = 1);
    OZCRT_FORWARD(cublasDgemm_v2_64, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

OZCRT_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                         int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
                                         int lda, const void *B, cudaDataType Btype, int ldb, const void *beta,
                                         void *C, cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                         cublasGemmAlgo_t algo)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasGemmEx, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,
               .k = k, .alpha = alpha, .A = A, .lda = lda, .B = B, .ldb = ldb, .beta = beta, .C = C, .ldc = ldc,
               .batch = 1, .typed = 1, .Atype = Atype, .Btype = Btype, .Ctype = Ctype, .compute = computeType,
               .algo = algo);
    OZCRT_FORWARD(cublasGemmEx, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                  Ctype, ldc, computeType, algo);
}

OZCRT_EXPORT cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                      cublasOperation_t transb, int m, int n, int k,
                                                      const double *alpha, const double *A, int lda,
                                                      long long int strideA, const double *B, int ldb,
                                                      long long int strideB, const double *beta, double *C, int ldc,
                                                      long long int strideC, int batchCount)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasDgemmStridedBatched, .handle = handle, .transa = transa, .transb = transb,
               .m = m, .n = n, .k = k, .alpha = alpha, .A = A, .lda = lda, .strideA = strideA, .B = B, .ldb = ldb,
               .strideB = strideB, .beta = beta, .C = C, .ldc = ldc, .strideC = strideC, .batch = batchCount);
    OZCRT_FORWARD(cublasDgemmStridedBatched, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
                  strideB, beta, C, ldc, strideC, batchCount);
}

OZCRT_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                       cublasOperation_t transb, int m, int n, int k,
                                                       const void *alpha, const void *A, cudaDataType Atype, int lda,
                                                       long long int strideA, const void *B, cudaDataType Btype,
                                                       int ldb, long long int strideB, const void *beta, void *C,
                                                       cudaDataType Ctype, int ldc, long long int strideC,
                                                       int batchCount, cublasComputeType_t computeType,
                                                       cublasGemmAlgo_t algo)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasGemmStridedBatchedEx, .handle = handle, .transa = transa, .transb = transb,
               .m = m, .n = n, .k = k, .alpha = alpha, .A = A, .lda = lda, .strideA = strideA, .B = B, .ldb = ldb,
               .strideB = strideB, .beta = beta, .C = C, .ldc = ldc, .strideC = strideC, .batch = batchCount,
               .typed = 1, .Atype = Atype, .Btype = Btype, .Ctype = Ctype, .compute = computeType, .algo = algo);
    OZCRT_FORWARD(cublasGemmStridedBatchedEx, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
                  Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

OZCRT_EXPORT cublasStatus_t cublasDgemmBatched(cublasHandle_t handle, cublasOperation_t transa,
                                               cublasOperation_t transb, int m, int n, int k, const double *alpha,
                                               const double *const Aarray[], int lda, const double *const Barray[],
                                               int ldb, const double *beta, double *const Carray[], int ldc,
                                               int batchCount)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasDgemmBatched, .handle = handle, .transa = transa, .transb = transb, .m = m,
               .n = n, .k = k, .alpha = alpha, .Aarray = (const void *const *)Aarray, .lda = lda,
               .Barray = (const void *const *)Barray, .ldb = ldb, .beta = beta, .Carray = (void *const *)Carray,
               .ldc = ldc, .batch = batchCount);
    OZCRT_FORWARD(cublasDgemmBatched, handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray,
                  ldc, batchCount);
}

OZCRT_EXPORT cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                                const void *const Aarray[], cudaDataType Atype, int lda,
                                                const void *const Barray[], cudaDataType Btype, int ldb,
                                                const void *beta, void *const Carray[], cudaDataType Ctype, int ldc,
                                                int batchCount, cublasComputeType_t computeType,
                                                cublasGemmAlgo_t algo)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasGemmBatchedEx, .handle = handle, .transa = transa, .transb = transb, .m = m,
               .n = n, .k = k, .alpha = alpha, .Aarray = Aarray, .lda = lda, .Barray = Barray, .ldb = ldb,
               .beta = beta, .Carray = Carray, .ldc = ldc, .batch = batchCount, .typed = 1, .Atype = Atype,
               .Btype = Btype, .Ctype = Ctype, .compute = computeType, .algo = algo);
    OZCRT_FORWARD(cublasGemmBatchedEx, handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype,
                  ldb, beta, Carray, Ctype, ldc, batchCount, computeType, algo);
}

/* The 64-bit-integer twins (cuBLAS 12+): the same calls with int64_t sizes,
 * leading dimensions and batch counts. */
OZCRT_EXPORT cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                            const void *alpha, const void *A, cudaDataType Atype, int64_t lda,
                                            const void *B, cudaDataType Btype, int64_t ldb, const void *beta, void *C,
                                            cudaDataType Ctype, int64_t ldc, cublasComputeType_t computeType,
                                            cublasGemmAlgo_t algo)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasGemmEx_64, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,
               .k = k, .alpha = alpha, .A = A, .lda = lda, .B = B, .ldb = ldb, .beta = beta, .C = C, .ldc = ldc,
               .batch = 1, .typed = 1, .Atype = Atype, .Btype = Btype, .Ctype = Ctype, .compute = computeType,
               .algo = algo);
    OZCRT_FORWARD(cublasGemmEx_64, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
                  Ctype, ldc, computeType, algo);
}

OZCRT_EXPORT cublasStatus_t cublasDgemmStridedBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                         cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                         const double *alpha, const double *A, int64_t lda,
                                                         long long int strideA, const double *B, int64_t ldb,
                                                         long long int strideB, const double *beta, double *C,
                                                         int64_t ldc, long long int strideC, int64_t batchCount)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasDgemmStridedBatched_64, .handle = handle, .transa = transa, .transb = transb,
               .m = m, .n = n, .k = k, .alpha = alpha, .A = A, .lda = lda, .strideA = strideA, .B = B, .ldb = ldb,
               .strideB = strideB, .beta = beta, .C = C, .ldc = ldc, .strideC = strideC, .batch = batchCount);
    OZCRT_FORWARD(cublasDgemmStridedBatched_64, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb,
                  strideB, beta, C, ldc, strideC, batchCount);
}

OZCRT_EXPORT cublasStatus_t cublasGemmStridedBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                                          cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                          const void *alpha, const void *A, cudaDataType Atype,
                                                          int64_t lda, long long int strideA, const void *B,
                                                          cudaDataType Btype, int64_t ldb, long long int strideB,
                                                          const void *beta, void *C, cudaDataType Ctype, int64_t ldc,
                                                          long long int strideC, int64_t batchCount,
                                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasGemmStridedBatchedEx_64, .handle = handle, .transa = transa, .transb = transb,
               .m = m, .n = n, .k = k, .alpha = alpha, .A = A, .lda = lda, .strideA = strideA, .B = B, .ldb = ldb,
               .strideB = strideB, .beta = beta, .C = C, .ldc = ldc, .strideC = strideC, .batch = batchCount,
               .typed = 1, .Atype = Atype, .Btype = Btype, .Ctype = Ctype, .compute = computeType, .algo = algo);
    OZCRT_FORWARD(cublasGemmStridedBatchedEx_64, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
                  Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

OZCRT_EXPORT cublasStatus_t cublasDgemmBatched_64(cublasHandle_t handle, cublasOperation_t transa,
                                                  cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                  const double *alpha, const double *const Aarray[], int64_t lda,
                                                  const double *const Barray[], int64_t ldb, const double *beta,
                                                  double *const Carray[], int64_t ldc, int64_t batchCount)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasDgemmBatched_64, .handle = handle, .transa = transa, .transb = transb, .m = m,
               .n = n, .k = k, .alpha = alpha, .Aarray = (const void *const *)Aarray, .lda = lda,
               .Barray = (const void *const *)Barray, .ldb = ldb, .beta = beta, .Carray = (void *const *)Carray,
               .ldc = ldc, .batch = batchCount);
    OZCRT_FORWARD(cublasDgemmBatched_64, handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta,
                  Carray, ldc, batchCount);
}

OZCRT_EXPORT cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                                   cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                                   const void *alpha, const void *const Aarray[], cudaDataType Atype,
                                                   int64_t lda, const void *const Barray[], cudaDataType Btype,
                                                   int64_t ldb, const void *beta, void *const Carray[],
                                                   cudaDataType Ctype, int64_t ldc, int64_t batchCount,
                                                   cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    OZCRT_TAKE(.ep = OZCRT_EP_cublasGemmBatchedEx_64, .handle = handle, .transa = transa, .transb = transb, .m = m,
               .n = n, .k = k, .alpha = alpha, .Aarray = Aarray, .lda = lda, .Barray = Barray, .ldb = ldb,
               .beta = beta, .Carray = Carray, .ldc = ldc, .batch = batchCount, .typed = 1, .Atype = Atype,
               .Btype = Btype, .Ctype = Ctype, .compute = computeType, .algo = algo);
    OZCRT_FORWARD(cublasGemmBatchedEx_64, handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype,
                  ldb, beta, Carray, Ctype, ldc, batchCount, computeType, algo);
}

/* The handle goes to the library that created it (real.h): the caller's own
 * cuBLAS, where a process holds two. */
OZCRT_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    const ozcrt_real_table *real = ozcrt_real_for_caller(__builtin_return_address(0));
    if (!real->cublasCreate_v2)
        return ozcrt_real_missing("cublasCreate_v2");
    ozcrt_in_real++;
    cublasStatus_t status = real->cublasCreate_v2(handle);
    ozcrt_in_real--;
    if (status == CUBLAS_STATUS_SUCCESS && handle)
        ozcrt_real_remember(*handle, real);
    return status;
}

OZCRT_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    ozcrt_on_destroy(handle);
    OZCRT_FORWARD_TO(ozcrt_real_forget(handle), cublasDestroy_v2, handle);
}
