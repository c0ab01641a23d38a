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
    cudaGraphNodeParams cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeIf;
    cp.conditional.size = 1;
#if CUDART_VERSION >= 13000
    e = cudaGraphAddNode(&cn, graph, &kn, nullptr, 1, &cp);
#else
    e = cudaGraphAddNode(&cn, graph, &kn, 1, &cp);
#endif
    if (e != cudaSuccess)
        return e;
    *body = cp.conditional.phGraph_out[0];
    return cudaSuccess;
#else
    (void)graph;
    (void)plan;
    (void)body;
    return cudaErrorNotSupported;
#endif
}
