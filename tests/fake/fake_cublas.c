/* tests/fake/fake_cublas.c: the recording fake libcublas (see fake_cublas.h). */
#include "fake_cublas.h"
#include "interpose/gemm_params.h"
#include "interpose/legacy_decl.h" /* the legacy cublasDgemm, cublasZgemm (defined below), not the macros */

#include <stdlib.h>
#include <string.h>

#ifndef FAKE_CUBLAS_ID
#define FAKE_CUBLAS_ID 13
#endif

#define FAKE_EXPORT __attribute__((visibility("default")))

struct cublasContext {
    cudaStream_t stream;
    cublasPointerMode_t pointer_mode;
    cublasMath_t math_mode;
};

static fake_call g_last;
static int g_count, g_queries;
static cublasStatus_t g_status = CUBLAS_STATUS_SUCCESS;
static cublasStatus_t g_legacy_error = CUBLAS_STATUS_SUCCESS;

FAKE_EXPORT const fake_call *fake_cublas_last(void) { return &g_last; }
FAKE_EXPORT int fake_cublas_count(void) { return g_count; }
FAKE_EXPORT int fake_cublas_id(void) { return FAKE_CUBLAS_ID; }
FAKE_EXPORT int fake_cublas_queries(void) { return g_queries; }
FAKE_EXPORT void fake_cublas_set_status(cublasStatus_t status) { g_status = status; }
FAKE_EXPORT void fake_cublas_set_legacy_error(cublasStatus_t status) { g_legacy_error = status; }

FAKE_EXPORT void fake_cublas_reset(void)
{
    memset(&g_last, 0, sizeof g_last);
    g_count = 0;
    g_queries = 0;
    g_status = CUBLAS_STATUS_SUCCESS;
    g_legacy_error = CUBLAS_STATUS_SUCCESS;
}

static fake_call *record(const char *name, cublasHandle_t handle)
{
    memset(&g_last, 0, sizeof g_last);
    g_last.id = FAKE_CUBLAS_ID;
    strncpy(g_last.name, name, sizeof g_last.name - 1);
    g_last.handle = handle;
    g_last.batch = 1;
    g_count++;
    return &g_last;
}

#define RECORD_GEMM(r)                                                          \
    do {                                                                        \
        (r)->transa = transa, (r)->transb = transb;                             \
        (r)->m = m, (r)->n = n, (r)->k = k;                                     \
        (r)->alpha = alpha, (r)->beta = beta;                                   \
        (r)->lda = lda, (r)->ldb = ldb, (r)->ldc = ldc;                         \
    } while (0)

FAKE_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    record("cublasCreate_v2", NULL);
    if (!handle)
        return CUBLAS_STATUS_INVALID_VALUE;
    *handle = calloc(1, sizeof **handle);
    return *handle ? g_status : CUBLAS_STATUS_ALLOC_FAILED;
}

FAKE_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    record("cublasDestroy_v2", handle);
    free(handle);
    return g_status;
}

FAKE_EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t *stream)
{
    g_queries++;
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t *mode)
{
    g_queries++;
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *mode = handle->pointer_mode;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->math_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode)
{
    g_queries++;
    if (!handle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *mode = handle->math_mode;
    return CUBLAS_STATUS_SUCCESS;
}

/* Each GEMM family's fake, written once for its two integer widths (IT: the
 * shim's parameter lists, interpose/gemm_params.h): records the call, the
 * common arguments (RECORD_GEMM) and the family's own (the statements
 * after PARAMS), then answers g_status. */
#define FAKE_GEMM_ENTRY(NAME, PARAMS, IT, ...)                                                                       \
    FAKE_EXPORT cublasStatus_t NAME(PARAMS(IT))                                                                      \
    {                                                                                                                \
        fake_call *r = record(#NAME, handle);                                                                        \
        RECORD_GEMM(r);                                                                                              \
        __VA_ARGS__;                                                                                                 \
        return g_status;                                                                                             \
    }
/* the families' own arguments */
#define FAKE_PTRS r->A = A, r->B = B, r->C = C
#define FAKE_STRIDES r->strideA = strideA, r->strideB = strideB, r->strideC = strideC, r->batch = batchCount
#define FAKE_TYPES r->Atype = Atype, r->Btype = Btype, r->Ctype = Ctype, r->compute = computeType, r->algo = algo
#define FAKE_ARRAYS(cast_in, cast_out)                                                                               \
    r->Aarray = cast_in Aarray, r->Barray = cast_in Barray, r->Carray = cast_out Carray, r->batch = batchCount

#define FAKE_DGEMM(NAME, IT) FAKE_GEMM_ENTRY(NAME, OZCRT_DGEMM_PARAMS, IT, FAKE_PTRS)
#define FAKE_ZGEMM(NAME, IT) FAKE_GEMM_ENTRY(NAME, OZCRT_ZGEMM_PARAMS, IT, FAKE_PTRS)
#define FAKE_ZGEMM_STRIDED(NAME, IT) FAKE_GEMM_ENTRY(NAME, OZCRT_ZGEMM_STRIDED_PARAMS, IT, FAKE_PTRS, FAKE_STRIDES)
#define FAKE_ZGEMM_BATCHED(NAME, IT)                                                                                 \
    FAKE_GEMM_ENTRY(NAME, OZCRT_ZGEMM_BATCHED_PARAMS, IT, FAKE_ARRAYS((const void *const *), (void *const *)))
#define FAKE_GEMMEX(NAME, IT) FAKE_GEMM_ENTRY(NAME, OZCRT_GEMMEX_PARAMS, IT, FAKE_PTRS, FAKE_TYPES)
#define FAKE_DGEMM_STRIDED(NAME, IT) FAKE_GEMM_ENTRY(NAME, OZCRT_DGEMM_STRIDED_PARAMS, IT, FAKE_PTRS, FAKE_STRIDES)
#define FAKE_GEMM_STRIDED_EX(NAME, IT)                                                                               \
    FAKE_GEMM_ENTRY(NAME, OZCRT_GEMM_STRIDED_EX_PARAMS, IT, FAKE_PTRS, FAKE_STRIDES, FAKE_TYPES)
#define FAKE_DGEMM_BATCHED(NAME, IT)                                                                                 \
    FAKE_GEMM_ENTRY(NAME, OZCRT_DGEMM_BATCHED_PARAMS, IT, FAKE_ARRAYS((const void *const *), (void *const *)))
#define FAKE_GEMM_BATCHED_EX(NAME, IT)                                                                               \
    FAKE_GEMM_ENTRY(NAME, OZCRT_GEMM_BATCHED_EX_PARAMS, IT, FAKE_ARRAYS(, ), FAKE_TYPES)

/* The grouped families: group 0's values (when there is one and its arrays
 * are given) and the arrays' addresses. */
#define FAKE_GROUPED(NAME, PARAMS, IT, ...)                                                                          \
    FAKE_EXPORT cublasStatus_t NAME(PARAMS(IT))                                                                      \
    {                                                                                                                \
        fake_call *r = record(#NAME, handle);                                                                        \
        r->group_count = group_count, r->m_array = m_array, r->group_size = group_size;                             \
        r->alpha = alpha_array, r->beta = beta_array;                                                                \
        r->Aarray = (const void *const *)Aarray, r->Barray = (const void *const *)Barray;                           \
        r->Carray = (void *const *)Carray;                                                                           \
        if (group_count > 0 && transa_array && transb_array && m_array && n_array && k_array && lda_array &&        \
            ldb_array && ldc_array && group_size) {                                                                  \
            r->transa = transa_array[0], r->transb = transb_array[0];                                                \
            r->m = m_array[0], r->n = n_array[0], r->k = k_array[0];                                                 \
            r->lda = lda_array[0], r->ldb = ldb_array[0], r->ldc = ldc_array[0], r->batch = group_size[0];           \
        }                                                                                                            \
        __VA_ARGS__;                                                                                                 \
        return g_status;                                                                                             \
    }
#define FAKE_GROUPED_TYPES r->Atype = Atype, r->Btype = Btype, r->Ctype = Ctype, r->compute = computeType

FAKE_DGEMM(cublasDgemm_v2, int)
FAKE_DGEMM(cublasDgemm_v2_64, int64_t)
FAKE_GEMMEX(cublasGemmEx, int)
FAKE_GEMMEX(cublasGemmEx_64, int64_t)
FAKE_DGEMM_STRIDED(cublasDgemmStridedBatched, int)
FAKE_DGEMM_STRIDED(cublasDgemmStridedBatched_64, int64_t)
FAKE_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx, int)
FAKE_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx_64, int64_t)
FAKE_DGEMM_BATCHED(cublasDgemmBatched, int)
FAKE_DGEMM_BATCHED(cublasDgemmBatched_64, int64_t)
FAKE_GEMM_BATCHED_EX(cublasGemmBatchedEx, int)
FAKE_GEMM_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)
FAKE_GROUPED(cublasDgemmGroupedBatched, OZCRT_DGEMM_GROUPED_PARAMS, int, (void)0)
FAKE_GROUPED(cublasDgemmGroupedBatched_64, OZCRT_DGEMM_GROUPED_PARAMS, int64_t, (void)0)
FAKE_GROUPED(cublasGemmGroupedBatchedEx, OZCRT_GEMM_GROUPED_EX_PARAMS, int, FAKE_GROUPED_TYPES)
FAKE_GROUPED(cublasGemmGroupedBatchedEx_64, OZCRT_GEMM_GROUPED_EX_PARAMS, int64_t, FAKE_GROUPED_TYPES)
FAKE_ZGEMM(cublasZgemm_v2, int)
FAKE_ZGEMM(cublasZgemm_v2_64, int64_t)
FAKE_ZGEMM(cublasZgemm3m, int)
FAKE_ZGEMM(cublasZgemm3m_64, int64_t)
FAKE_ZGEMM_STRIDED(cublasZgemmStridedBatched, int)
FAKE_ZGEMM_STRIDED(cublasZgemmStridedBatched_64, int64_t)
FAKE_ZGEMM_BATCHED(cublasZgemmBatched, int)
FAKE_ZGEMM_BATCHED(cublasZgemmBatched_64, int64_t)

/* The legacy handle-less API (cublas.h). */
FAKE_EXPORT cublasStatus_t cublasInit(void)
{
    record("cublasInit", NULL);
    return g_status;
}

FAKE_EXPORT cublasStatus_t cublasShutdown(void)
{
    record("cublasShutdown", NULL);
    return g_status;
}

FAKE_EXPORT cublasStatus_t cublasSetKernelStream(cudaStream_t stream)
{
    record("cublasSetKernelStream", NULL)->stream = stream;
    return g_status;
}

FAKE_EXPORT cublasStatus_t cublasGetError(void)
{
    g_queries++;
    const cublasStatus_t e = g_legacy_error;
    g_legacy_error = CUBLAS_STATUS_SUCCESS;
    return e;
}

FAKE_EXPORT void cublasDgemm(char transa, char transb, int m, int n, int k, double alpha, const double *A, int lda,
                             const double *B, int ldb, double beta, double *C, int ldc)
{
    fake_call *r = record("cublasDgemm", NULL);
    r->transa = transa, r->transb = transb;
    r->m = m, r->n = n, r->k = k;
    r->alpha_v = alpha, r->beta_v = beta;
    r->A = A, r->B = B, r->C = C;
    r->lda = lda, r->ldb = ldb, r->ldc = ldc;
    g_legacy_error = g_status;
}

FAKE_EXPORT void cublasZgemm(char transa, char transb, int m, int n, int k, cuDoubleComplex alpha,
                             const cuDoubleComplex *A, int lda, const cuDoubleComplex *B, int ldb, cuDoubleComplex beta,
                             cuDoubleComplex *C, int ldc)
{
    fake_call *r = record("cublasZgemm", NULL);
    r->transa = transa, r->transb = transb;
    r->m = m, r->n = n, r->k = k;
    r->alpha_v = cuCreal(alpha), r->alpha_vi = cuCimag(alpha);
    r->beta_v = cuCreal(beta), r->beta_vi = cuCimag(beta);
    r->A = A, r->B = B, r->C = C;
    r->lda = lda, r->ldb = ldb, r->ldc = ldc;
    g_legacy_error = g_status;
}

FAKE_EXPORT cublasStatus_t fake_cublas_inner_lt_matmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha,
                                                       const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                                                       cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                                       cublasLtMatrixLayout_t Cdesc, void *D,
                                                       cublasLtMatrixLayout_t Ddesc, cudaStream_t stream)
{
    return cublasLtMatmul(h, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, NULL, NULL, 0, stream);
}
