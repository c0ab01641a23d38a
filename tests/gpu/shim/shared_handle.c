/* tests/gpu/shim/shared_handle.c: one cuBLAS handle shared by 4 threads, its stream cudaStreamPerThread: each thread's calls run on its own per-thread stream, at once.
 *
 * A plain cuBLAS program (cuBLAS allows a handle to be shared by threads), run
 * natively and under libozcrt.so (graphs.sh shared). The handle's stream is
 * one value for every thread but a different stream in each, so a shim that
 * named streams by the handle's value alone would hand one thread's
 * workspace to another while the first thread's kernels still use it. Each
 * thread has its own operands; its results computed at once with the others
 * must be bit-equal to the same calls run alone (one thread after the other,
 * on the main thread's per-thread stream), and every thread's per-thread
 * stream must have its own id. Prints PASS/FAIL; exit status 0 only on PASS. */
#include <pthread.h>
#include <stdio.h>
#include <cuda_runtime_api.h>

#include "tests/gpu/shim/shim_util.h"

#define NT 4
#define N 1536
#define REPS 12

static cublasHandle_t g_h;
static pthread_barrier_t g_barrier;
static double *g_A[NT], *g_B[NT], *g_C[NT], *g_ref[NT];
static unsigned long long g_stream_id[NT];

/* REPS calls C_t = A_t B_t on the calling thread's per-thread stream, then C_t's bits into out. */
static void calls(int t, double *out)
{
    CUDA_CHECK(cudaMemsetAsync(g_C[t], 0xff, (size_t)N * N * sizeof(double), cudaStreamPerThread)); /* NaN poison */
    for (int r = 0; r < REPS; r++)
        dgemm_nn(g_h, N, g_A[t], g_B[t], g_C[t]);
    CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
    CUDA_CHECK(cudaMemcpy(out, g_C[t], (size_t)N * N * sizeof(double), cudaMemcpyDeviceToHost));
}

static void *thread_main(void *arg)
{
    const int t = (int)(intptr_t)arg;
    double *out = malloc((size_t)N * N * sizeof(double));
    if (!out) {
        fprintf(stderr, "out of host memory\n");
        exit(2);
    }
    CUDA_CHECK(cudaStreamGetId(cudaStreamPerThread, &g_stream_id[t]));
    pthread_barrier_wait(&g_barrier);
    calls(t, out);
    return out;
}

int main(void)
{
    CUBLAS_CHECK(cublasCreate(&g_h));
    CUBLAS_CHECK(cublasSetStream(g_h, cudaStreamPerThread));
    for (int t = 0; t < NT; t++) {
        g_A[t] = dev_random(N);
        g_B[t] = dev_random(N);
        CUDA_CHECK(cudaMalloc((void **)&g_C[t], (size_t)N * N * sizeof(double)));
        g_ref[t] = malloc((size_t)N * N * sizeof(double));
        if (!g_ref[t]) {
            fprintf(stderr, "out of host memory\n");
            return 2;
        }
        calls(t, g_ref[t]); /* alone */
    }
    pthread_barrier_init(&g_barrier, NULL, NT);
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        if (pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 2;
        }
    long bad = 0;
    int same_id = 0;
    for (int t = 0; t < NT; t++) {
        double *out = NULL;
        pthread_join(th[t], (void **)&out);
        long d = 0;
        for (size_t i = 0; i < (size_t)N * N; i++)
            d += memcmp(&out[i], &g_ref[t][i], sizeof(double)) != 0;
        for (int u = 0; u < t; u++)
            same_id += g_stream_id[u] == g_stream_id[t];
        printf("thread %d: per-thread stream id %llu, %ld of %d elements differ from its calls alone\n", t,
               g_stream_id[t], d, N * N);
        bad += d;
        free(out);
    }
    for (int t = 0; t < NT; t++) {
        CUDA_CHECK(cudaFree(g_A[t]));
        CUDA_CHECK(cudaFree(g_B[t]));
        CUDA_CHECK(cudaFree(g_C[t]));
        free(g_ref[t]);
    }
    CUBLAS_CHECK(cublasDestroy(g_h));
    const int failed = bad != 0 || same_id != 0;
    printf("%s: %d threads, one handle on cudaStreamPerThread, %d calls each at once: %ld elements differ, %d stream ids shared\n",
           failed ? "FAIL" : "PASS", NT, REPS, bad, same_id);
    return failed;
}
