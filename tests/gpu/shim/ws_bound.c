/* tests/gpu/shim/ws_bound.c: a plain cuBLAS program that measures the device memory one cublasDgemm_v2 call takes beyond its operands; under the shim, the workspace bound: at most max(1 GiB, a quarter of the operands' bytes) (Phase 22, and ozaki2 under a cap), or for ozaki2 with N moduli the larger of that and the whole call's N bytes per element of A, B and C. */
#include "shim_util.h"

/* usage: ws_bound [--whole N | --cap MIB] n... ; per n, beta 0 and beta 1: "n beta taken_MiB bound_MiB ok|OVER";
 * exit 1 if any is over. --whole N: ozaki2's N moduli, the whole call allowed; --cap MIB: the bound is the
 * OZCRT_MAX_WORKSPACE_MB the shim runs under */
int main(int argc, char **argv)
{
    int whole = 0, a0 = 1;
    double cap = 0.0;
    if (argc > 2 && strcmp(argv[1], "--whole") == 0) {
        whole = atoi(argv[2]);
        a0 = 3;
    } else if (argc > 2 && strcmp(argv[1], "--cap") == 0) {
        cap = atof(argv[2]) * 1048576.0;
        a0 = 3;
    }
    const double slack = 64.0 * 1024 * 1024; /* pool granularity, cuBLAS's own small buffers */
    int over = 0;
    for (int a = a0; a < argc; a++) {
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
            /* the whole call: N bytes per element of A, B, C, and the scales (16 MiB is ample) */
            const double all = whole ? (double)whole * 3.0 * (double)n * (double)n + 16.0 * 1048576.0 : 0.0;
            double bound = quarter > gib ? quarter : gib;
            bound = all > bound ? all : bound;
            if (cap > 0.0)
                bound = cap;
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
