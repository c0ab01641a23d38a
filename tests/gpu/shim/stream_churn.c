/* tests/gpu/shim/stream_churn.c: one handle, 1000 streams created and destroyed one after the other, a call on each: device memory stays flat.
 *
 * A plain cuBLAS program, run under libozcrt.so (graphs.sh). A shim that keeps
 * a workspace per stream until cublasDestroy grows by one workspace (about
 * 100 MiB at this size) per stream; free memory (cudaMemGetInfo) after the
 * last stream must be within SLACK of free memory after the tenth. Prints
 * PASS/FAIL; exit status 0 only on PASS. */
#include <stdio.h>
#include <cuda_runtime_api.h>

#include "tests/gpu/shim/shim_util.h"

#define N 2048
#define STREAMS 1000
#define WARM 10
#define SLACK ((size_t)256 << 20)

int main(void)
{
    double *A = dev_random(N), *B = dev_random(N), *C;
    CUDA_CHECK(cudaMalloc((void **)&C, (size_t)N * N * sizeof(double)));
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    size_t free_warm = 0, free_end = 0, total = 0;
    for (int i = 0; i < STREAMS; i++) {
        cudaStream_t s;
        CUDA_CHECK(cudaStreamCreate(&s));
        CUBLAS_CHECK(cublasSetStream(h, s));
        dgemm_nn(h, N, A, B, C);
        CUDA_CHECK(cudaStreamSynchronize(s));
        CUDA_CHECK(cudaStreamDestroy(s));
        if (i + 1 == WARM)
            CUDA_CHECK(cudaMemGetInfo(&free_warm, &total));
    }
    CUDA_CHECK(cudaMemGetInfo(&free_end, &total));
    CUBLAS_CHECK(cublasDestroy(h));
    int failed = free_end + SLACK < free_warm;
    printf("%s: %d streams: free memory %.1f MiB after %d, %.1f MiB after all (slack %zu MiB)\n",
           failed ? "FAIL" : "PASS", STREAMS, free_warm / 1048576.0, WARM, free_end / 1048576.0, SLACK >> 20);
    CUDA_CHECK(cudaFree(A));
    CUDA_CHECK(cudaFree(B));
    CUDA_CHECK(cudaFree(C));
    return failed;
}
