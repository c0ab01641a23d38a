/* tests/gpu/shim/ws_bound.c: a plain cuBLAS program that measures the device memory one cublasDgemm_v2 call takes beyond its operands; under the shim, the Phase 22 workspace bound (issue 10): at most max(1 GiB, a quarter of the operands' bytes). */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                 \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
            exit(2);                                                                                \
        }                                                                                           \
    } while (0)
#define CUBLAS(call)                                                                                \
    do {                                                                                            \
        cublasStatus_t s_ = (call);                                                                 \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                          \
            fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #call, (int)s_);          \
            exit(2);                                                                                \
        }                                                                                           \
    } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double rng_sym(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double)((rng * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-52 - 1.0;
}

/* usage: ws_bound n... ; per n, beta 0 and beta 1: "n beta taken_MiB bound_MiB ok|OVER"; exit 1 if any is over */
int main(int argc, char **argv)
{
    const double slack = 64.0 * 1024 * 1024; /* pool granularity, cuBLAS's own small buffers */
    int over = 0;
    for (int a = 1; a < argc; a++) {
        const int64_t n = atoll(argv[a]);
        const size_t bytes = (size_t)(8 * n * n);
        double *h = malloc(bytes);
        if (!h)
            return 2;
        for (int64_t i = 0; i < n * n; i++)
            h[i] = rng_sym();
        double *A, *B, *C;
        CHECK(cudaMalloc((void **)&A, bytes));
        CHECK(cudaMalloc((void **)&B, bytes));
        CHECK(cudaMalloc((void **)&C, bytes));
        CHECK(cudaMemcpy(A, h, bytes, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(B, h, bytes, cudaMemcpyHostToDevice));
        for (int beta_one = 0; beta_one < 2; beta_one++) {
            CHECK(cudaMemcpy(C, h, bytes, cudaMemcpyHostToDevice));
            cublasHandle_t hd;
            CUBLAS(cublasCreate(&hd));
            CHECK(cudaDeviceSynchronize());
            size_t free0, free1, total;
            CHECK(cudaMemGetInfo(&free0, &total));
            const double one = 1.0, beta = beta_one ? 1.0 : 0.0;
            CUBLAS(cublasDgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, A, (int)n, B, (int)n, &beta,
                               C, (int)n));
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemGetInfo(&free1, &total));
            CUBLAS(cublasDestroy(hd));
            CHECK(cudaDeviceSynchronize());
            const double taken = free0 > free1 ? (double)(free0 - free1) : 0.0;
            const double quarter = 0.25 * 3.0 * (double)bytes, gib = 1024.0 * 1024 * 1024;
            const double bound = quarter > gib ? quarter : gib;
            const int ok = taken <= bound + slack;
            over += !ok;
            printf("%lld beta=%d taken %.0f MiB bound %.0f MiB %s\n", (long long)n, beta_one, taken / 1048576.0,
                   bound / 1048576.0, ok ? "ok" : "OVER");
        }
        CHECK(cudaFree(A));
        CHECK(cudaFree(B));
        CHECK(cudaFree(C));
        free(h);
    }
    printf("%s\n", over ? "FAIL" : "PASS");
    return over ? 1 : 0;
}
