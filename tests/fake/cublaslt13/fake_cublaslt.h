/* tests/fake/cublaslt13/fake_cublaslt.h: a recording stand-in for libcublasLt, for the shim's CPU tests.
 *
 * Built as libcublasLt.so.13. Handles, matmul descriptors and matrix layouts
 * are real allocations whose attributes read back with the header's sizes and
 * defaults; cublasLtMatmul records all its arguments and returns the status set
 * by fake_cublaslt_set_status (default SUCCESS); it never touches the matrices
 * or the scalars. */
#ifndef OZCRT_TESTS_FAKE_CUBLASLT_H
#define OZCRT_TESTS_FAKE_CUBLASLT_H

#include <stddef.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes" /* cublasLt.h declares a function f() */
#include <cublasLt.h>
#pragma GCC diagnostic pop

typedef struct fake_lt_call {
    cublasLtHandle_t handle;
    cublasLtMatmulDesc_t desc;
    const void *alpha, *beta;
    const void *A, *B, *C;
    void *D;
    cublasLtMatrixLayout_t Adesc, Bdesc, Cdesc, Ddesc;
    const cublasLtMatmulAlgo_t *algo;
    void *workspace;
    size_t workspace_size;
    cudaStream_t stream;
} fake_lt_call;

/* The last recorded cublasLtMatmul, and how many were recorded since the reset. */
const fake_lt_call *fake_cublaslt_last(void);
int fake_cublaslt_count(void);
/* Forgets the calls and sets the status back to SUCCESS (the live count stays). */
void fake_cublaslt_reset(void);
/* What cublasLtMatmul returns from now on. */
void fake_cublaslt_set_status(cublasStatus_t status);
/* Handles, matmul descriptors and matrix layouts created and not yet destroyed. */
int fake_cublaslt_live(void);

#endif
