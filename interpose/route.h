/* interpose/route.h: one GEMM call as the wrappers see it, and the decision to take it or forward it. */
#ifndef OZCRT_INTERPOSE_ROUTE_H
#define OZCRT_INTERPOSE_ROUTE_H

#include <stdint.h>
#include <cublas_v2.h>

#include "stats.h"
#include "symbols.h"

/* Every GEMM entry point's arguments, widened to 64 bits. */
typedef struct ozcrt_call {
    ozcrt_entry ep;
    cublasHandle_t handle;
    cublasOperation_t transa, transb;
    int64_t m, n, k;
    const void *alpha, *beta;         /* double, host or device per pointer mode */
    const void *A, *B;                /* strided and single calls */
    void *C;
    int64_t lda, ldb, ldc;
    int64_t strideA, strideB, strideC;
    const void *const *Aarray;        /* pointer-array batches */
    const void *const *Barray;
    void *const *Carray;
    int64_t batch;                    /* 1 for the single calls */
    int typed;                        /* GemmEx family: the five below are set */
    cudaDataType Atype, Btype, Ctype;
    cublasComputeType_t compute;
    cublasGemmAlgo_t algo;            /* GemmEx family: the caller's algo (shadow mode's native run) */
} ozcrt_call;

/* Decides and, when the call is taken, enqueues it on the handle's stream.
 * Returns 1 with *status set (SUCCESS or EXECUTION_FAILED) when taken,
 * 0 when the caller must forward the call untouched to the real cuBLAS.
 * Logs the decision (OZCRT_LOG >= 1) and counts it (OZCRT_STATS=1). */
int ozcrt_route(const ozcrt_call *c, cublasStatus_t *status);

/* The pure argument checks, before any query of the handle or the GPU:
 * OZCRT_R_EMULATED when the call may be taken, else the forward reason. */
ozcrt_reason ozcrt_check_args(const ozcrt_call *c);

/* cublasDestroy_v2: frees the handle's workspaces. */
void ozcrt_on_destroy(cublasHandle_t handle);

#endif
