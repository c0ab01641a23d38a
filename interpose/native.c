/* interpose/native.c: shadow mode's native run (native.h): the caller's call to its real cuBLAS, C redirected. */
#include "native.h"

#include "real.h"
#include "route.h"

int ozcrt_native_into(void *ctx, const oz_gemm_desc *into)
{
    const ozcrt_call *c = ctx;
    const ozcrt_real_table *r = ozcrt_real_for(c->handle);
    const void *al = c->alpha, *be = c->beta;
    int m = (int)c->m, n = (int)c->n, k = (int)c->k, lda = (int)c->lda, ldb = (int)c->ldb, ldc = (int)into->ldc;
    cublasStatus_t st = CUBLAS_STATUS_NOT_SUPPORTED;
    ozcrt_in_real++;
    switch (c->ep) {
    case OZCRT_EP_cublasDgemm_v2:
        st = r->cublasDgemm_v2(c->handle, c->transa, c->transb, m, n, k, al, c->A, lda, c->B, ldb, be, into->C, ldc);
        break;
    case OZCRT_EP_cublasDgemm_v2_64:
        st = r->cublasDgemm_v2_64(c->handle, c->transa, c->transb, c->m, c->n, c->k, al, c->A, c->lda, c->B, c->ldb,
                                  be, into->C, into->ldc);
        break;
    case OZCRT_EP_cublasGemmEx:
        st = r->cublasGemmEx(c->handle, c->transa, c->transb, m, n, k, al, c->A, c->Atype, lda, c->B, c->Btype, ldb, be,
                             into->C, c->Ctype, ldc, c->compute, c->algo);
        break;
    case OZCRT_EP_cublasDgemmStridedBatched:
        st = r->cublasDgemmStridedBatched(c->handle, c->transa, c->transb, m, n, k, al, c->A, lda, c->strideA, c->B,
                                          ldb, c->strideB, be, into->C, ldc, into->strideC, (int)c->batch);
        break;
    case OZCRT_EP_cublasGemmStridedBatchedEx:
        st = r->cublasGemmStridedBatchedEx(c->handle, c->transa, c->transb, m, n, k, al, c->A, c->Atype, lda,
                                           c->strideA, c->B, c->Btype, ldb, c->strideB, be, into->C, c->Ctype, ldc,
                                           into->strideC, (int)c->batch, c->compute, c->algo);
        break;
    case OZCRT_EP_cublasDgemmBatched:
        st = r->cublasDgemmBatched(c->handle, c->transa, c->transb, m, n, k, al, (const double *const *)c->Aarray, lda,
                                   (const double *const *)c->Barray, ldb, be, into->Carray, ldc, (int)c->batch);
        break;
    case OZCRT_EP_cublasGemmBatchedEx:
        st = r->cublasGemmBatchedEx(c->handle, c->transa, c->transb, m, n, k, al, c->Aarray, c->Atype, lda, c->Barray,
                                    c->Btype, ldb, be, (void *const *)into->Carray, c->Ctype, ldc, (int)c->batch,
                                    c->compute, c->algo);
        break;
    case OZCRT_EP_cublasGemmEx_64:
        st = r->cublasGemmEx_64(c->handle, c->transa, c->transb, c->m, c->n, c->k, al, c->A, c->Atype, c->lda, c->B,
                                c->Btype, c->ldb, be, into->C, c->Ctype, into->ldc, c->compute, c->algo);
        break;
    case OZCRT_EP_cublasDgemmStridedBatched_64:
        st = r->cublasDgemmStridedBatched_64(c->handle, c->transa, c->transb, c->m, c->n, c->k, al, c->A, c->lda,
                                             c->strideA, c->B, c->ldb, c->strideB, be, into->C, into->ldc,
                                             into->strideC, c->batch);
        break;
    case OZCRT_EP_cublasGemmStridedBatchedEx_64:
        st = r->cublasGemmStridedBatchedEx_64(c->handle, c->transa, c->transb, c->m, c->n, c->k, al, c->A, c->Atype,
                                              c->lda, c->strideA, c->B, c->Btype, c->ldb, c->strideB, be, into->C,
                                              c->Ctype, into->ldc, into->strideC, c->batch, c->compute, c->algo);
        break;
    case OZCRT_EP_cublasDgemmBatched_64:
        st = r->cublasDgemmBatched_64(c->handle, c->transa, c->transb, c->m, c->n, c->k, al,
                                      (const double *const *)c->Aarray, c->lda, (const double *const *)c->Barray,
                                      c->ldb, be, into->Carray, into->ldc, c->batch);
        break;
    case OZCRT_EP_cublasGemmBatchedEx_64:
        st = r->cublasGemmBatchedEx_64(c->handle, c->transa, c->transb, c->m, c->n, c->k, al, c->Aarray, c->Atype,
                                       c->lda, c->Barray, c->Btype, c->ldb, be, (void *const *)into->Carray, c->Ctype,
                                       into->ldc, c->batch, c->compute, c->algo);
        break;
    default:
        break;
    }
    ozcrt_in_real--;
    return (int)st;
}
