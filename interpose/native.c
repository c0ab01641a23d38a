/* interpose/native.c: shadow mode's native run (native.h): the caller's call to its real cuBLAS, C redirected. */
#include "native.h"

#include "real.h"
#include "route.h"

/* One case per entry point, written once per family for both integer
 * widths and (the D and Z families) both element types: the int entry
 * points' values came from ints (and the redirected ldc and strides are the
 * caller's sizes), so the conversions are exact; the matrices go as void
 * pointers, the element type the entry point's. */
#define OZCRT_NATIVE_XGEMM(NAME)                                                                                     \
    case OZCRT_EP_##NAME:                                                                                            \
        st = r->NAME(c->handle, c->transa, c->transb, c->m, c->n, c->k, al, c->A, c->lda, c->B, c->ldb, be,          \
                     (void *)into->C, into->ldc);                                                                    \
        break;
#define OZCRT_NATIVE_GEMMEX(NAME)                                                                                    \
    case OZCRT_EP_##NAME:                                                                                            \
        st = r->NAME(c->handle, c->transa, c->transb, c->m, c->n, c->k, al, c->A, c->Atype, c->lda, c->B, c->Btype,  \
                     c->ldb, be, into->C, c->Ctype, into->ldc, c->compute, c->algo);                                 \
        break;
#define OZCRT_NATIVE_XGEMM_STRIDED(NAME)                                                                             \
    case OZCRT_EP_##NAME:                                                                                            \
        st = r->NAME(c->handle, c->transa, c->transb, c->m, c->n, c->k, al, c->A, c->lda, c->strideA, c->B, c->ldb,  \
                     c->strideB, be, (void *)into->C, into->ldc, into->strideC, c->batch);                           \
        break;
#define OZCRT_NATIVE_GEMM_STRIDED_EX(NAME)                                                                           \
    case OZCRT_EP_##NAME:                                                                                            \
        st = r->NAME(c->handle, c->transa, c->transb, c->m, c->n, c->k, al, c->A, c->Atype, c->lda, c->strideA,      \
                     c->B, c->Btype, c->ldb, c->strideB, be, into->C, c->Ctype, into->ldc, into->strideC, c->batch,  \
                     c->compute, c->algo);                                                                           \
        break;
#define OZCRT_NATIVE_XGEMM_BATCHED(NAME)                                                                             \
    case OZCRT_EP_##NAME:                                                                                            \
        st = r->NAME(c->handle, c->transa, c->transb, c->m, c->n, c->k, al, (const void *)c->Aarray, c->lda,         \
                     (const void *)c->Barray, c->ldb, be, (void *)into->Carray, into->ldc, c->batch);                \
        break;
#define OZCRT_NATIVE_GEMM_BATCHED_EX(NAME)                                                                           \
    case OZCRT_EP_##NAME:                                                                                            \
        st = r->NAME(c->handle, c->transa, c->transb, c->m, c->n, c->k, al, c->Aarray, c->Atype, c->lda, c->Barray,  \
                     c->Btype, c->ldb, be, (void *const *)into->Carray, c->Ctype, into->ldc, c->batch, c->compute,   \
                     c->algo);                                                                                       \
        break;

/* The legacy API (cublasDgemm, cublasZgemm: T the element type): scalars by
 * value, no status but cuBLAS's error state, read (and cleared) after. */
#define OZCRT_NATIVE_LEGACY(NAME, T)                                                                                 \
    case OZCRT_EP_##NAME:                                                                                            \
        r->NAME(ozcrt_op_char(c->transa), ozcrt_op_char(c->transb), (int)c->m, (int)c->n, (int)c->k,                \
                *(const T *)al, c->A, (int)c->lda, c->B, (int)c->ldb, *(const T *)be, (void *)into->C,               \
                (int)into->ldc);                                                                                     \
        st = r->cublasGetError ? r->cublasGetError() : CUBLAS_STATUS_SUCCESS;                                        \
        break;

/* A group of a grouped call (route.h) alone: its sizes as one-element host arrays. */
#define OZCRT_NATIVE_GROUPED(NAME, IT, ...)                                                                          \
    case OZCRT_EP_##NAME: {                                                                                          \
        const cublasOperation_t ta = c->transa, tb = c->transb;                                                      \
        const IT m = (IT)c->m, n = (IT)c->n, k = (IT)c->k, lda = (IT)c->lda, ldb = (IT)c->ldb;                       \
        const IT ldc = (IT)into->ldc, size = (IT)c->batch;                                                           \
        st = r->NAME(c->handle, &ta, &tb, &m, &n, &k, __VA_ARGS__);                                                  \
        break;                                                                                                       \
    }
#define OZCRT_NATIVE_DGEMM_GROUPED(NAME, IT)                                                                         \
    OZCRT_NATIVE_GROUPED(NAME, IT, al, (const double *const *)c->Aarray, &lda, (const double *const *)c->Barray,     \
                         &ldb, be, into->Carray, &ldc, (IT)1, &size)
#define OZCRT_NATIVE_GEMM_GROUPED_EX(NAME, IT)                                                                       \
    OZCRT_NATIVE_GROUPED(NAME, IT, al, c->Aarray, c->Atype, &lda, c->Barray, c->Btype, &ldb, be,                     \
                         (void *const *)into->Carray, c->Ctype, &ldc, (IT)1, &size, c->compute)

int ozcrt_native_into(void *ctx, const oz_gemm_desc *into)
{
    const ozcrt_call *c = ctx;
    const ozcrt_real_table *r = ozcrt_real_for(c->handle);
    const void *al = c->alpha, *be = c->beta;
    cublasStatus_t st = CUBLAS_STATUS_NOT_SUPPORTED;
    ozcrt_in_real++;
    switch (c->ep) {
        OZCRT_NATIVE_XGEMM(cublasDgemm_v2)
        OZCRT_NATIVE_XGEMM(cublasDgemm_v2_64)
        OZCRT_NATIVE_GEMMEX(cublasGemmEx)
        OZCRT_NATIVE_GEMMEX(cublasGemmEx_64)
        OZCRT_NATIVE_XGEMM_STRIDED(cublasDgemmStridedBatched)
        OZCRT_NATIVE_XGEMM_STRIDED(cublasDgemmStridedBatched_64)
        OZCRT_NATIVE_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx)
        OZCRT_NATIVE_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx_64)
        OZCRT_NATIVE_XGEMM_BATCHED(cublasDgemmBatched)
        OZCRT_NATIVE_XGEMM_BATCHED(cublasDgemmBatched_64)
        OZCRT_NATIVE_GEMM_BATCHED_EX(cublasGemmBatchedEx)
        OZCRT_NATIVE_GEMM_BATCHED_EX(cublasGemmBatchedEx_64)
        OZCRT_NATIVE_DGEMM_GROUPED(cublasDgemmGroupedBatched, int)
        OZCRT_NATIVE_DGEMM_GROUPED(cublasDgemmGroupedBatched_64, int64_t)
        OZCRT_NATIVE_GEMM_GROUPED_EX(cublasGemmGroupedBatchedEx, int)
        OZCRT_NATIVE_GEMM_GROUPED_EX(cublasGemmGroupedBatchedEx_64, int64_t)
        OZCRT_NATIVE_XGEMM(cublasZgemm_v2)
        OZCRT_NATIVE_XGEMM(cublasZgemm_v2_64)
        OZCRT_NATIVE_XGEMM(cublasZgemm3m)
        OZCRT_NATIVE_XGEMM(cublasZgemm3m_64)
        OZCRT_NATIVE_XGEMM_STRIDED(cublasZgemmStridedBatched)
        OZCRT_NATIVE_XGEMM_STRIDED(cublasZgemmStridedBatched_64)
        OZCRT_NATIVE_XGEMM_BATCHED(cublasZgemmBatched)
        OZCRT_NATIVE_XGEMM_BATCHED(cublasZgemmBatched_64)
        OZCRT_NATIVE_LEGACY(cublasDgemm, double)
        OZCRT_NATIVE_LEGACY(cublasZgemm, cuDoubleComplex)
    case OZCRT_EP_cublasLtMatmul: /* lt.c: the caller's call to its cuBLASLt, D redirected */
        st = c->native ? (cublasStatus_t)c->native(c, into) : CUBLAS_STATUS_NOT_SUPPORTED;
        break;
    default:
        break;
    }
    ozcrt_in_real--;
    return (int)st;
}
