/* interpose/native_branch.h: automatic precision's native branch: where the plan the GPU makes certifies nothing, the caller's own cuBLAS call runs, from a graph's IF node, without the host waiting for the plan. */
#ifndef OZCRT_INTERPOSE_NATIVE_BRANCH_H
#define OZCRT_INTERPOSE_NATIVE_BRANCH_H

#include <cuda_runtime_api.h>

#include "real.h"
#include "route.h"

/* A made branch: for an eager call the graph to launch after the path; for
 * a call made while its stream is being captured, the call's own graph, to
 * be inserted into that capture after the path. */
typedef struct ozcrt_native_branch {
    cudaGraphExec_t exec; /* eager: the condition kernel and the IF node, the call its body */
    cudaGraph_t call;     /* capturing: the call alone */
    const void *plan;     /* where the plan will be */
} ozcrt_native_branch;

/* For a batch-1 automatic call about to be enqueued on `stream` (d its
 * descriptor, plan where its plan will be: oz2_gemm_auto_plan): the call
 * itself captured as cuBLAS makes it (the GEMMs on a handle of the shim's
 * own per device and library, with the caller's pointer, math and atomics
 * modes and SM count target, on a stream of its own; cublasLtMatmul as it
 * was called, on that stream), in the body of an IF node after the
 * condition kernel, instantiated (b->exec), or, when `stream` is being
 * captured, alone (b->call), to be launched or inserted on `stream` right
 * after the path (d->native_branch set, so that the path leaves those calls'
 * C alone). Returns 0 when made; nonzero (nothing made, *b empty, the
 * reason logged at level 2) where conditional nodes are not available (CUDA
 * < 12.4), for the legacy API, on a stream whose capture was invalidated,
 * or when a step fails: the path then keeps its own plain dot product for
 * them. */
int ozcrt_native_branch_make(const ozcrt_call *c, const ozcrt_real_table *real, int dev, const oz_gemm_desc *d,
                             cudaStream_t stream, const void *plan, ozcrt_native_branch *b);

/* Hands the branch over to `stream`: an eager one is launched and destroyed
 * once it has run (an event after it; destroying a running graph would make
 * the host wait), or now when the launch fails; a capturing one is inserted
 * into the stream's capture (oz2_native_branch_insert: replayed with it)
 * and its graph destroyed. Returns the step's cudaError_t; after a failure
 * the call's C holds nothing certain (the caller forwards the call). */
int ozcrt_native_branch_launch(ozcrt_native_branch *b, cudaStream_t stream);

/* Destroys a branch that is not to be launched (the path before it failed). */
void ozcrt_native_branch_discard(ozcrt_native_branch *b);

#endif
