/* interpose/route.h: one GEMM call as the wrappers see it, and the decision to take it or forward it. */
#ifndef OZCRT_INTERPOSE_ROUTE_H
#define OZCRT_INTERPOSE_ROUTE_H

#include <math.h>
#include <stdint.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "kernels/ozcrt_gemm.h"

#include "stats.h"
#include "symbols.h"

/* Every GEMM entry point's arguments, widened to 64 bits. */
typedef struct ozcrt_call {
    ozcrt_entry ep;
    cublasHandle_t handle;
    cublasOperation_t transa, transb;
    int64_t m, n, k;
    /* OZ_ELEM_REAL, or OZ_ELEM_COMPLEX (kernels/ozcrt_gemm.h): the Z entry
     * points, the Ex ones with CUDA_C_64F (ozcrt_ex_elem), cublasLtMatmul
     * with CUDA_C_64F layouts; the scalars and matrices below then hold
     * cuDoubleComplex, ld and strides count complex elements */
    int elem;
    const void *alpha, *beta;         /* double (cuDoubleComplex), host or device per pointer mode */
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
    /* cublasLtMatmul (lt.c): no cuBLAS handle to ask (handle is the Lt
     * handle, the workspaces' key): the call's own stream and pointer mode;
     * prepare(this, stream), when set, runs on the stream right before the
     * emulated product (the bias epilogue's fill of C), a failure counted as
     * launch-failed; shadow mode's native run is native(this, into); ext is
     * the caller's own call, for both. */
    int lt;
    cudaStream_t stream;
    int device_scalars;
    const void *ext;
    int (*prepare)(const struct ozcrt_call *c, cudaStream_t stream);
    int (*native)(const struct ozcrt_call *c, const oz_gemm_desc *into);
    /* the same on another stream (the native branch's capture, native_branch.h) */
    int (*native_on)(const struct ozcrt_call *c, const oz_gemm_desc *into, cudaStream_t stream);
} ozcrt_call;

/* The element type an Ex call asks for by A's type: the pure checks
 * (ozcrt_check_args) hold B, C and the compute type to it. */
static inline int ozcrt_ex_elem(cudaDataType a_type)
{
    return a_type == CUDA_C_64F ? OZ_ELEM_COMPLEX : OZ_ELEM_REAL;
}

/* Whether a host scalar of the element type is zero: a complex one when
 * both of its parts are (-0.0 included). */
static inline int ozcrt_scalar_is_zero(const void *s, int elem)
{
    const double *d = (const double *)s;
    return d[0] == 0.0 && (elem != OZ_ELEM_COMPLEX || d[1] == 0.0);
}

/* Whether a host scalar (or either part of a complex one) is Inf or NaN. */
static inline int ozcrt_scalar_nonfinite(const void *s, int elem)
{
    const double *d = (const double *)s;
    return !isfinite(d[0]) || (elem == OZ_ELEM_COMPLEX && !isfinite(d[1]));
}

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

/* The legacy handle-less API (cublas.h: cublasInit, cublasSetKernelStream,
 * cublasDgemm and cublasZgemm with scalars by value, cublasShutdown). Its context is a
 * stand-in handle, ozcrt_legacy_handle(), that the wrappers tie at
 * cublasInit to the cuBLAS its caller links (as cublasCreate_v2 ties a
 * handle) and whose workspaces go at cublasShutdown. A legacy call is
 * emulated only while the shim has seen cublasInit succeed and no
 * cublasShutdown since, on the device that was current at cublasInit, on
 * the stream of the last successful cublasSetKernelStream (the NULL stream
 * before one; when a stream was set before a cublasInit, not until the
 * next), its scalars on the host; otherwise it is forwarded
 * (legacy-context). The legacy API returns no status: a taken call that
 * fails (shadow mode) is reported on stderr. */
cublasHandle_t ozcrt_legacy_handle(void);
void ozcrt_legacy_on_init(void);
void ozcrt_legacy_on_shutdown(void);
void ozcrt_legacy_on_stream(cudaStream_t stream);

/* The grouped entry points (cublasDgemmGroupedBatched, cublasGemmGroupedBatchedEx
 * and their _64 twins): group g is a batch of group_size[g] products through
 * the pointer arrays from the sum of the earlier groups' sizes on, with its
 * own operations, sizes and scalars, all in host arrays. The wrapper asks
 * ozcrt_grouped_gate whether the call can go group by group: not when nested
 * in a forwarded call, in the mode off, with no or a negative group count or
 * a host array missing, with the handle in device pointer mode (the scalars'
 * arrays are host memory: cuBLAS's own answer), or with the real entry point
 * or handle queries missing (OZCRT_R_COUNT: not counted, the forward reports
 * it); then, when a group fails the pure checks with invalid arguments or
 * types other than FP64 (ozcrt_check_args), the whole call goes to cuBLAS
 * untouched too, so that cuBLAS gives its own status before any product
 * runs (ozcrt_forward_counted counts and logs it once; cuBLAS's grouped
 * entry points take real types only, so CUDA_C_64F is `type` there). Otherwise each
 * group is one call of ozcrt_route (counted, logged, taken or not: a grouped
 * call counts once a group) and a group not taken goes alone to the same
 * real entry point (group_count 1, the arrays from that group on), in
 * order, on the handle's stream; the first status that is not SUCCESS is
 * returned. */
ozcrt_reason ozcrt_grouped_gate(ozcrt_entry ep, cublasHandle_t handle, int64_t group_count, int host_arrays_given);
/* Counts and logs a call forwarded before ozcrt_route saw it (a whole
 * grouped call, a cublasLtMatmul its decoding forwards): `what` starts the
 * log line's details ("" or ending in a space); OZCRT_R_COUNT: nothing. */
void ozcrt_forward_counted(ozcrt_entry ep, ozcrt_reason r, const char *what);

/* The legacy API's operation letters: 'N'/'n', 'T'/'t', 'C'/'c'; anything
 * else is no valid operation (the call is forwarded, cuBLAS reports it). */
static inline cublasOperation_t ozcrt_legacy_op(char op)
{
    return op == 'N' || op == 'n' ? CUBLAS_OP_N
           : op == 'T' || op == 't' ? CUBLAS_OP_T
           : op == 'C' || op == 'c' ? CUBLAS_OP_C
                                    : (cublasOperation_t)-1;
}

/* An operation's letter ('?' for none): the log, and the legacy call of
 * shadow mode's native run. */
static inline char ozcrt_op_char(cublasOperation_t op)
{
    return op == CUBLAS_OP_N ? 'N' : op == CUBLAS_OP_T ? 'T' : op == CUBLAS_OP_C ? 'C' : '?';
}

#endif
