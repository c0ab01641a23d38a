/* kernels/oz2_native_branch.cu: the native branch's condition kernel and its two graph nodes (oz2_native_branch.h). */
#include "oz2_native_branch.h"

#include "oz2_auto_estimate.h"

#if CUDART_VERSION >= 12040
/* The IF node's condition: the plan certified nothing. */
__global__ void oz2_native_cond_kernel(cudaGraphConditionalHandle h, const oz2a_dev_plan *plan)
{
    cudaGraphSetConditional(h, plan->n == 0 ? 1u : 0u);
}
#endif

extern "C" int oz2_native_branch_supported(void)
{
#if CUDART_VERSION >= 12040
    static volatile int known, ok;
    if (!known) {
        int drv = 0;
        ok = cudaDriverGetVersion(&drv) == cudaSuccess && drv >= 12040;
        known = 1;
    }
    return ok;
#else
    return 0;
#endif
}

extern "C" const void *oz2_gemm_auto_plan(const void *workspace)
{
    return workspace; /* oz2_gemm_host.cu: each item's estimate, its plan first, at the workspace's start */
}

#if CUDART_VERSION >= 12040
/* An IF node on h after the n nodes deps; *body its body graph. */
static cudaError_t add_if_node(cudaGraph_t graph, const cudaGraphNode_t *deps, size_t n, cudaGraphConditionalHandle h,
                               cudaGraphNode_t *node, cudaGraph_t *body)
{
    cudaGraphNodeParams cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeIf;
    cp.conditional.size = 1;
#if CUDART_VERSION >= 13000
    const cudaError_t e = cudaGraphAddNode(node, graph, deps, nullptr, n, &cp);
#else
    const cudaError_t e = cudaGraphAddNode(node, graph, deps, n, &cp);
#endif
    if (e == cudaSuccess)
        *body = cp.conditional.phGraph_out[0];
    return e;
}

/* The capture on stream: its status, graph and current dependencies. */
static cudaError_t capture_info(cudaStream_t stream, cudaStreamCaptureStatus *st, cudaGraph_t *graph,
                                const cudaGraphNode_t **deps, size_t *n)
{
#if CUDART_VERSION >= 13000
    return cudaStreamGetCaptureInfo(stream, st, nullptr, graph, deps, nullptr, n);
#else
    return cudaStreamGetCaptureInfo(stream, st, nullptr, graph, deps, n);
#endif
}
#endif

extern "C" int oz2_native_branch_add(cudaGraph_t graph, const void *plan, cudaGraph_t *body)
{
#if CUDART_VERSION >= 12040
    cudaGraphConditionalHandle h;
    cudaError_t e = cudaGraphConditionalHandleCreate(&h, graph, 0, 0);
    if (e != cudaSuccess)
        return e;
    const oz2a_dev_plan *p = (const oz2a_dev_plan *)plan;
    void *args[] = {&h, &p};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)oz2_native_cond_kernel;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(1);
    kp.kernelParams = args;
    cudaGraphNode_t kn, cn;
    e = cudaGraphAddKernelNode(&kn, graph, nullptr, 0, &kp);
    if (e != cudaSuccess)
        return e;
    return add_if_node(graph, &kn, 1, h, &cn, body);
#else
    (void)graph;
    (void)plan;
    (void)body;
    return cudaErrorNotSupported;
#endif
}

extern "C" int oz2_native_branch_insert(cudaStream_t stream, const void *plan, cudaGraph_t call)
{
#if CUDART_VERSION >= 12040
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    cudaGraph_t graph = nullptr, body = nullptr;
    const cudaGraphNode_t *deps = nullptr;
    size_t n = 0;
    cudaError_t e = capture_info(stream, &st, &graph, &deps, &n);
    if (e != cudaSuccess)
        return e;
    if (st != cudaStreamCaptureStatusActive)
        return cudaErrorIllegalState;
    cudaGraphConditionalHandle h;
    if ((e = cudaGraphConditionalHandleCreate(&h, graph, 0, 0)) != cudaSuccess)
        return e;
    oz2_native_cond_kernel<<<1, 1, 0, stream>>>(h, (const oz2a_dev_plan *)plan); /* captured: the capture's last node */
    if ((e = cudaGetLastError()) != cudaSuccess || (e = capture_info(stream, &st, &graph, &deps, &n)) != cudaSuccess)
        return e;
    cudaGraphNode_t cn, child;
    if ((e = add_if_node(graph, deps, n, h, &cn, &body)) != cudaSuccess ||
        (e = cudaGraphAddChildGraphNode(&child, body, nullptr, 0, call)) != cudaSuccess)
        return e;
#if CUDART_VERSION >= 13000
    return cudaStreamUpdateCaptureDependencies(stream, &cn, nullptr, 1, cudaStreamSetCaptureDependencies);
#else
    return cudaStreamUpdateCaptureDependencies(stream, &cn, 1, cudaStreamSetCaptureDependencies);
#endif
#else
    (void)stream;
    (void)plan;
    (void)call;
    return cudaErrorNotSupported;
#endif
}
