/* interpose/native_branch.h: automatic precision's native branch: where the plan the GPU makes certifies nothing, the caller's own cuBLAS call runs, from a graph's IF node, without the host waiting for the plan. */
#ifndef OZCRT_INTERPOSE_NATIVE_BRANCH_H
#define OZCRT_INTERPOSE_NATIVE_BRANCH_H

#include <cuda_runtime_api.h>

#include "real.h"
#include "route.h"

/* For a batch-1 automatic call about to be enqueued on `stream` (d its
 * descriptor, plan where its plan will be: oz2_gemm_auto_plan): a graph of
 * the condition kernel and an IF node whose body is the call itself,
 * captured as cuBLAS makes it (the GEMMs on a handle of the shim's own per
 * device and library, with the caller's pointer, math and atomics modes and
 * SM count target, on a stream of its own; cublasLtMatmul as it was called,
 * on that stream), instantiated into *exec, to be launched on `stream`
 * right after the path (d->native_branch set, so that the path leaves those
 * calls' C alone). Returns 0 when made; nonzero (nothing made, *exec NULL,
 * the reason logged at level 2) where conditional nodes are not available
 * (CUDA < 12.4), for the legacy API, inside a stream capture, or when a
 * step fails: the path then keeps its own plain dot product for them. */
int ozcrt_native_branch_make(const ozcrt_call *c, const ozcrt_real_table *real, int dev, const oz_gemm_desc *d,
                             cudaStream_t stream, const void *plan, cudaGraphExec_t *exec);

/* Launches the branch on `stream` and hands it over: it is destroyed once it
 * has run (an event after it; destroying a running graph would make the host
 * wait), or now when the launch fails. Returns the launch's cudaError_t. */
int ozcrt_native_branch_launch(cudaGraphExec_t exec, cudaStream_t stream);

/* Destroys a branch that is not to be launched (the path before it failed). */
void ozcrt_native_branch_discard(cudaGraphExec_t exec);

#endif
