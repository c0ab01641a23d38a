/* kernels/oz2_native_branch.h: automatic precision's native branch: a CUDA graph whose IF node runs the caller's own cuBLAS call when the plan made on the GPU certified nothing (docs/ozaki2-auto.md), so that such a call gets cuBLAS's bits without the host waiting for the plan. */
#ifndef OZCRT_KERNELS_OZ2_NATIVE_BRANCH_H
#define OZCRT_KERNELS_OZ2_NATIVE_BRANCH_H

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether conditional graph nodes can be used here: built with CUDA 12.4 or
 * newer and a driver of 12.4 or newer (asked once). */
int oz2_native_branch_supported(void);

/* The plan of a batch-1 automatic call that oz2_gemm_run enqueued with
 * `workspace` (in device memory, valid once the stream reaches it). */
const void *oz2_gemm_auto_plan(const void *workspace);

/* Adds to the empty graph `graph` a kernel that sets a new conditional
 * handle to whether the plan at `plan` certified nothing (n = 0), then an
 * IF node on it; *body is the IF node's body graph, to be filled with the
 * native call (cudaStreamBeginCaptureToGraph). Returns a cudaError_t. */
int oz2_native_branch_add(cudaGraph_t graph, const void *plan, cudaGraph_t *body);

/* The same inside a capture: into the graph being captured on `stream`
 * (actively), the kernel that sets a new conditional handle to whether the
 * plan at `plan` certified nothing, then an IF node on it whose body holds
 * `call` as a child graph node (cloned: `call` stays the caller's), that
 * IF node then the capture's dependency, so the stream's next work follows
 * it. Returns a cudaError_t (cudaErrorIllegalState: the stream is not
 * capturing); after a failure the capture may hold the condition kernel or
 * an IF node that is not its dependency, both harmless. */
int oz2_native_branch_insert(cudaStream_t stream, const void *plan, cudaGraph_t call);

#ifdef __cplusplus
}
#endif

#endif
