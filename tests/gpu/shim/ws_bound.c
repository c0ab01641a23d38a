/* tests/gpu/shim/ws_bound.c: a plain cuBLAS program that measures the device memory one cublasDgemm_v2 call takes beyond its operands; under the shim, the Phase 22 workspace bound (issue 10): at most max(1 GiB, a quarter of the operands' bytes). */
#include "shim_util.h"

/* usage: ws_bound n... ; per n, beta 0 and beta 1: "n beta taken_MiB bound_MiB ok|OVER"; exit 1 if any is over */
int main(int argc, char **argv)
{
    const double slack = 64.0 * 1024 * 1024; /* pool granularity, cuBLAS's own small buffers */
    int over = 0;
    for (int a = 1; a < argc; a++) {
        const int n = atoi(argv[a]);
        const size_t bytes = (size_t)8 * (size_t)n * (size_t)n;
        double *A = dev_random(n), *B = dev_random(n), *C = dev_random(n);
        for (int beta_one = 0; beta_one < 2; beta_one++) {
            cublasHandle_t hd;
            CUBLAS_CHECK(cublasCreate(&hd));
            CUDA_CHECK(cudaDeviceSynchronize());
            size_t free0, free1, total;
            CUDA_CHECK(cudaMemGetInfo(&free0, &total));
            const double one = 1.0, beta = beta_one ? 1.0 : 0.0;
            CUBLAS_CHECK(cublasDgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &beta, C, n));
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaMemGetInfo(&free1, &total));
            CUBLAS_CHECK(cublasDestroy(hd));
            CUDA_CHECK(cudaDeviceSynchronize());
            const double taken = free0 > free1 ? (double)(free0 - free1) : 0.0;
            const double quarter = 0.25 * 3.0 * (double)bytes, gib = 1024.0 * 1024 * 1024;
            const double bound = quarter > gib ? quarter : gib;
            const int ok = taken <= bound + slack;
            over += !ok;
            printf("%d beta=%d taken %.0f MiB bound %.0f MiB %s\n", n, beta_one, taken / 1048576.0,
                   bound / 1048576.0, ok ? "ok" : "OVER");
        }
        CUDA_CHECK(cudaFree(A));
        CUDA_CHECK(cudaFree(B));
        CUDA_CHECK(cudaFree(C));
    }
    printf("%s\n", over ? "FAIL" : "PASS");
    return over ? 1 : 0;
}
