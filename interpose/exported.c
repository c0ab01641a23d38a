/* interpose/exported.c: the only symbols libozcrt.so exports, a few lines each (one macro per entry-point family and its two integer widths; the legacy API's four by hand).
 *
 * Each wrapper packs its arguments into an ozcrt_call, lets route.c take the
 * call, and otherwise forwards the caller's own arguments, untouched, to the
 * real cuBLAS that owns the handle. The list must match OZCRT_INTERCEPTED and
 * libozcrt.map. */
#include <stdio.h>
#include <cublas_v2.h>

#include "gemm_params.h"
#include "policy.h"
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

/* Each family's wrapper, written once for its two integer widths (IT:
 * gemm_params.h's parameter lists). */
#define OZCRT_DGEMM(NAME, IT)                                                                                        \
    OZCRT_EXPORT cublasStatus_t NAME(OZCRT_DGEMM_PARAMS(IT))                                                         \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .alpha = alpha, .A = A, .lda = lda, .B = B, .ldb = ldb, .beta = beta, .C = C,            \
                   .ldc = ldc, .batch = 1);                                                                          \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                   \
    }

#define OZCRT_GEMMEX(NAME, IT)                                                                                       \
    OZCRT_EXPORT cublasStatus_t NAME(OZCRT_GEMMEX_PARAMS(IT))                                                        \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .alpha = alpha, .A = A, .lda = lda, .B = B, .ldb = ldb, .beta = beta, .C = C,            \
                   .ldc = ldc, .batch = 1, .typed = 1, .Atype = Atype, .Btype = Btype, .Ctype = Ctype,              \
                   .compute = computeType, .algo = algo);                                                            \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype,    \
                      ldc, computeType, algo);                                                                       \
    }

#define OZCRT_DGEMM_STRIDED(NAME, IT)                                                                                \
    OZCRT_EXPORT cublasStatus_t NAME(OZCRT_DGEMM_STRIDED_PARAMS(IT))                                                 \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .alpha = alpha, .A = A, .lda = lda, .strideA = strideA, .B = B, .ldb = ldb,              \
                   .strideB = strideB, .beta = beta, .C = C, .ldc = ldc, .strideC = strideC, .batch = batchCount);   \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc,  \
                      strideC, batchCount);                                                                          \
    }

#define OZCRT_GEMM_STRIDED_EX(NAME, IT)                                                                              \
    OZCRT_EXPORT cublasStatus_t NAME(OZCRT_GEMM_STRIDED_EX_PARAMS(IT))                                               \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .alpha = alpha, .A = A, .lda = lda, .strideA = strideA, .B = B, .ldb = ldb,              \
                   .strideB = strideB, .beta = beta, .C = C, .ldc = ldc, .strideC = strideC, .batch = batchCount,    \
                   .typed = 1, .Atype = Atype, .Btype = Btype, .Ctype = Ctype, .compute = computeType,              \
                   .algo = algo);                                                                                    \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB,  \
                      beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);                                  \
    }

#define OZCRT_DGEMM_BATCHED(NAME, IT)                                                                                \
    OZCRT_EXPORT cublasStatus_t NAME(OZCRT_DGEMM_BATCHED_PARAMS(IT))                                                 \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .alpha = alpha, .Aarray = (const void *const *)Aarray, .lda = lda,                        \
                   .Barray = (const void *const *)Barray, .ldb = ldb, .beta = beta,                                  \
                   .Carray = (void *const *)Carray, .ldc = ldc, .batch = batchCount);                                \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc,     \
                      batchCount);                                                                                   \
    }

#define OZCRT_GEMM_BATCHED_EX(NAME, IT)                                                                              \
    OZCRT_EXPORT cublasStatus_t NAME(OZCRT_GEMM_BATCHED_EX_PARAMS(IT))                                               \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .alpha = alpha, .Aarray = Aarray, .lda = lda, .Barray = Barray, .ldb = ldb,               \
                   .beta = beta, .Carray = Carray, .ldc = ldc, .batch = batchCount, .typed = 1, .Atype = Atype,      \
                   .Btype = Btype, .Ctype = Ctype, .compute = computeType, .algo = algo);                            \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta,    \
                      Carray, Ctype, ldc, batchCount, computeType, algo);                                            \
    }

/* The grouped families (route.h says how they go): group g as one
 * pointer-array batch, its products from `off` on; the Ex family's scalar
 * arrays are read as doubles only once every group's types are FP64
 * (ozcrt_check_args). GROUP_ALONE: the real entry point's arguments for
 * group g alone. */
#define OZCRT_AT(p, g) ((const double *)(p) + (g))
#define OZCRT_GROUP_CALL(NAME, g, off, ...)                                                                          \
    {.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa_array[g], .transb = transb_array[g],                 \
     .m = m_array[g], .n = n_array[g], .k = k_array[g], .alpha = OZCRT_AT(alpha_array, g),                          \
     .Aarray = (const void *const *)Aarray + (off), .lda = lda_array[g],                                             \
     .Barray = (const void *const *)Barray + (off), .ldb = ldb_array[g], .beta = OZCRT_AT(beta_array, g),            \
     .Carray = (void *const *)Carray + (off), .ldc = ldc_array[g], .batch = group_size[g], __VA_ARGS__}

#define OZCRT_GROUPED(NAME, PARAMS, IT, TYPED, GROUP_ALONE, ...)                                                     \
    OZCRT_EXPORT cublasStatus_t NAME(PARAMS(IT))                                                                     \
    {                                                                                                                \
        ozcrt_reason r_ = ozcrt_grouped_gate(OZCRT_EP_##NAME, handle, group_count,                                  \
                                             transa_array && transb_array && m_array && n_array && k_array &&        \
                                                 alpha_array && lda_array && ldb_array && beta_array &&              \
                                                 ldc_array && group_size);                                           \
        int64_t off = 0; /* the products before group g */                                                          \
        for (IT g = 0; r_ == OZCRT_R_EMULATED && g < group_count; off += group_size[g], g++) {                      \
            const ozcrt_call c_ = OZCRT_GROUP_CALL(NAME, g, off, TYPED);                                             \
            const ozcrt_reason a_ = ozcrt_check_args(&c_);                                                           \
            if (a_ == OZCRT_R_INVALID_ARGS || a_ == OZCRT_R_TYPE)                                                    \
                r_ = a_;                                                                                             \
        }                                                                                                            \
        if (r_ != OZCRT_R_EMULATED) {                                                                                \
            char what_[40];                                                                                          \
            snprintf(what_, sizeof what_, "group_count=%lld ", (long long)group_count);                              \
            ozcrt_forward_counted(OZCRT_EP_##NAME, r_, what_);                                                       \
            OZCRT_FORWARD(NAME, handle, __VA_ARGS__);                                                                \
        }                                                                                                            \
        off = 0;                                                                                                     \
        for (IT g = 0; g < group_count; off += group_size[g], g++) {                                                 \
            const ozcrt_call c_ = OZCRT_GROUP_CALL(NAME, g, off, TYPED);                                             \
            cublasStatus_t st_;                                                                                      \
            if (!ozcrt_route(&c_, &st_))                                                                             \
                OZCRT_CALL_INTO(st_, ozcrt_real_for(handle), NAME, GROUP_ALONE);                                     \
            if (st_ != CUBLAS_STATUS_SUCCESS)                                                                        \
                return st_;                                                                                          \
        }                                                                                                            \
        return CUBLAS_STATUS_SUCCESS;                                                                                \
    }

#define OZCRT_DGEMM_GROUPED(NAME, IT)                                                                                \
    OZCRT_GROUPED(NAME, OZCRT_DGEMM_GROUPED_PARAMS, IT, .typed = 0,                                                  \
                  OZCRT_ARGS(handle, transa_array + g, transb_array + g, m_array + g, n_array + g, k_array + g,      \
                             alpha_array + g, Aarray + off, lda_array + g, Barray + off, ldb_array + g,              \
                             beta_array + g, Carray + off, ldc_array + g, (IT)1, group_size + g),                    \
                  transa_array, transb_array, m_array, n_array, k_array, alpha_array, Aarray, lda_array, Barray,     \
                  ldb_array, beta_array, Carray, ldc_array, group_count, group_size)

#define OZCRT_GEMM_GROUPED_EX(NAME, IT)                                                                              \
    OZCRT_GROUPED(NAME, OZCRT_GEMM_GROUPED_EX_PARAMS, IT,                                                            \
                  OZCRT_ARGS(.typed = 1, .Atype = Atype, .Btype = Btype, .Ctype = Ctype, .compute = computeType),    \
                  OZCRT_ARGS(handle, transa_array + g, transb_array + g, m_array + g, n_array + g, k_array + g,      \
                             OZCRT_AT(alpha_array, g), Aarray + off, Atype, lda_array + g, Barray + off, Btype,      \
                             ldb_array + g, OZCRT_AT(beta_array, g), Carray + off, Ctype, ldc_array + g, (IT)1,      \
                             group_size + g, computeType),                                                           \
                  transa_array, transb_array, m_array, n_array, k_array, alpha_array, Aarray, Atype, lda_array,      \
                  Barray, Btype, ldb_array, beta_array, Carray, Ctype, ldc_array, group_count, group_size,           \
                  computeType)

/* a macro argument that holds commas */
#define OZCRT_ARGS(...) __VA_ARGS__

OZCRT_DGEMM(cublasDgemm_v2, int)
OZCRT_DGEMM(cublasDgemm_v2_64, int64_t)
OZCRT_GEMMEX(cublasGemmEx, int)
OZCRT_GEMMEX(cublasGemmEx_64, int64_t)
OZCRT_DGEMM_STRIDED(cublasDgemmStridedBatched, int)
OZCRT_DGEMM_STRIDED(cublasDgemmStridedBatched_64, int64_t)
OZCRT_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx, int)
OZCRT_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx_64, int64_t)
OZCRT_DGEMM_BATCHED(cublasDgemmBatched, int)
OZCRT_DGEMM_BATCHED(cublasDgemmBatched_64, int64_t)
OZCRT_GEMM_BATCHED_EX(cublasGemmBatchedEx, int)
OZCRT_GEMM_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)
OZCRT_DGEMM_GROUPED(cublasDgemmGroupedBatched, int)
OZCRT_DGEMM_GROUPED(cublasDgemmGroupedBatched_64, int64_t)
OZCRT_GEMM_GROUPED_EX(cublasGemmGroupedBatchedEx, int)
OZCRT_GEMM_GROUPED_EX(cublasGemmGroupedBatchedEx_64, int64_t)

/* The handle goes to the library that created it (real.h): the caller's own
 * cuBLAS, where a process holds two. */
OZCRT_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    const ozcrt_real_table *real = ozcrt_real_for_caller(__builtin_return_address(0));
    cublasStatus_t status;
    OZCRT_CALL_INTO(status, real, cublasCreate_v2, handle);
    if (status == CUBLAS_STATUS_SUCCESS && handle)
        ozcrt_real_remember(*handle, real);
    return status;
}

OZCRT_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    ozcrt_on_destroy(handle);
    OZCRT_FORWARD_TO(ozcrt_real_forget(handle), cublasDestroy_v2, handle);
}

/* The legacy handle-less API (cublas.h; route.h says how its context is
 * followed): its context goes to the library its caller links, as a
 * handle does. */
OZCRT_EXPORT cublasStatus_t cublasInit(void)
{
    const ozcrt_real_table *real = ozcrt_real_for_caller(__builtin_return_address(0));
    cublasStatus_t status;
    OZCRT_CALL_INTO(status, real, cublasInit);
    if (status == CUBLAS_STATUS_SUCCESS) {
        ozcrt_real_remember(ozcrt_legacy_handle(), real);
        ozcrt_legacy_on_init();
    }
    return status;
}

OZCRT_EXPORT cublasStatus_t cublasShutdown(void)
{
    ozcrt_legacy_on_shutdown();
    OZCRT_FORWARD_TO(ozcrt_real_forget(ozcrt_legacy_handle()), cublasShutdown);
}

OZCRT_EXPORT cublasStatus_t cublasSetKernelStream(cudaStream_t stream)
{
    cublasStatus_t status;
    OZCRT_CALL_INTO(status, ozcrt_real_for(ozcrt_legacy_handle()), cublasSetKernelStream, stream);
    if (status == CUBLAS_STATUS_SUCCESS)
        ozcrt_legacy_on_stream(stream);
    return status;
}

/* Scalars by value and no status: a forwarded call sets the legacy error
 * state (cublasGetError) in cuBLAS itself, as without the shim. */
OZCRT_EXPORT void cublasDgemm(char transa, char transb, int m, int n, int k, double alpha, const double *A, int lda,
                              const double *B, int ldb, double beta, double *C, int ldc)
{
    const cublasHandle_t handle = ozcrt_legacy_handle();
    ozcrt_call c = {.ep = OZCRT_EP_cublasDgemm, .handle = handle, .transa = ozcrt_legacy_op(transa),
                    .transb = ozcrt_legacy_op(transb), .m = m, .n = n, .k = k, .alpha = &alpha, .A = A, .lda = lda,
                    .B = B, .ldb = ldb, .beta = &beta, .C = C, .ldc = ldc, .batch = 1};
    cublasStatus_t st;
    if (ozcrt_route(&c, &st)) {
        if (st != CUBLAS_STATUS_SUCCESS)
            ozcrt_error("ozcrt: cublasDgemm (legacy API) m=%d n=%d k=%d: the emulated call failed with cuBLAS "
                        "status %d, which the legacy API cannot return",
                        m, n, k, (int)st);
        return;
    }
    const ozcrt_real_table *real = ozcrt_real_for(handle);
    if (!real->cublasDgemm) {
        (void)ozcrt_real_missing("cublasDgemm");
        return;
    }
    ozcrt_in_real++;
    real->cublasDgemm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    ozcrt_in_real--;
}
