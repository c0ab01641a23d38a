/* tests/gpu/shim/exit_destroy.c: a cuBLAS handle destroyed from an atexit handler, after the CUDA runtime has begun unloading.
 *
 * The handler is registered first thing in main, before any CUDA call, so it
 * runs after the runtimes' own teardown (atexit runs handlers in reverse).
 * The handle made emulated calls (the shim holds workspaces for it), so its
 * cublasDestroy_v2 reaches the shim's frees when cudart is unloading: they
 * must stay silent (cudaErrorCudartUnloading). life.sh exit-destroy checks
 * that stderr has no "ozcrt:" line. cuBLAS's own status at that point is
 * printed, not judged. */
#include <stdio.h>
#include <stdlib.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "tests/gpu/gpu_util.h"

static cublasHandle_t g_h;

static void destroy_at_exit(void)
{
    cublasStatus_t st = cublasDestroy_v2(g_h);
    printf("cublasDestroy_v2 at exit: status %d\n", (int)st);
    fflush(stdout);
}

int main(void)
{
    if (atexit(destroy_at_exit) != 0)
        return 2;
    if (cublasCreate_v2(&g_h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate_v2 failed\n");
        return 2;
    }
    const int n = 512;
    double *dA = NULL, *dC = NULL;
    CUDA_CHECK(cudaMalloc((void **)&dA, (size_t)n * n * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&dC, (size_t)n * n * sizeof(double)));
    CUDA_CHECK(cudaMemset(dA, 0, (size_t)n * n * sizeof(double)));
    const double one = 1.0, zero = 0.0;
    for (int i = 0; i < 2; i++)
        if (cublasDgemm_v2(g_h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dA, n, &zero, dC, n) !=
            CUBLAS_STATUS_SUCCESS) {
            fprintf(stderr, "cublasDgemm_v2 failed\n");
            return 1;
        }
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dC));
    printf("exit_destroy: 2 calls made; the handle is destroyed at exit\n");
    return 0;
}
