/* tests/gpu/shim/graph_replay.c: graphs captured on one stream, replayed concurrently on other streams with eager calls in between: every result bit-equal to the same call made eagerly.
 *
 * A plain cuBLAS program, run natively and under libozcrt.so (graphs.sh).
 * After one call on another handle (the process's first-use work done), the
 * first call of its handle is a captured one (graph 1), then graph 2 on
 * the same stream; eager calls follow, then graph 3 is captured on that
 * stream again. Each round replays the three graphs on two streams at once
 * (graph 1 on both: launches of one executable are serialized by CUDA) while
 * eager calls of the same handle run on the capture stream and a third one.
 * Under the shim, a workspace shared between two graphs, or between a graph
 * and the eager calls, mixes their residues and the bits differ; a captured
 * call forwarded to cuBLAS instead of emulated differs from the emulated eager
 * call. With GRAPH_REPLAY_WIDE set the matrices' exponents spread over
 * 2^-200..2^200 element by element, which no automatic plan certifies: under
 * ozaki2 (auto) the eager calls run cuBLAS from the native branch, and the
 * captured ones must too, from the IF node the shim puts into their graph.
 * Prints PASS/FAIL; exit status 0 only on PASS. */
#include <stdio.h>
#include <cuda_runtime_api.h>

#include "tests/gpu/shim/shim_util.h"

#define N 1024
#define ROUNDS 20

/* A wide element: 2^e U(-1,1), e uniform in -200..200. */
static double wide_elem(void) { return ldexp(rng_sym(), (int)rng_range(-200, 200)); }

/* An n x n device matrix: U(-1,1), or wide elements. */
static double *matrix(int n, int wide) { return wide ? dev_matrix(n, wide_elem) : dev_random(n); }

static cudaGraphExec_t capture(cublasHandle_t h, cudaStream_t s, const double *A, const double *B, double *C)
{
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    dgemm_nn(h, N, A, B, C);
    CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_CHECK(cudaGraphDestroy(graph)); /* the executable keeps what it needs */
    return exec;
}

int main(void)
{
    double *A[3], *B[3], *Cg[3], *Ce[3], *Cx;
    const char *wide_env = getenv("GRAPH_REPLAY_WIDE");
    const int wide = wide_env && wide_env[0];
    for (int i = 0; i < 3; i++) {
        A[i] = matrix(N, wide);
        B[i] = matrix(N, wide);
        CUDA_CHECK(cudaMalloc((void **)&Cg[i], (size_t)N * N * sizeof(double)));
        CUDA_CHECK(cudaMalloc((void **)&Ce[i], (size_t)N * N * sizeof(double)));
    }
    CUDA_CHECK(cudaMalloc((void **)&Cx, (size_t)N * N * sizeof(double)));
    cudaStream_t s0, s1, s2, s3;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
    cublasHandle_t warm, h;
    CUBLAS_CHECK(cublasCreate(&warm));
    dgemm_nn(warm, N, A[0], B[0], Cx);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetStream(h, s0));

    cudaGraphExec_t g[3];
    g[0] = capture(h, s0, A[0], B[0], Cg[0]); /* the handle's first call */
    g[1] = capture(h, s0, A[1], B[1], Cg[1]);
    for (int i = 0; i < 3; i++) /* the eager references */
        dgemm_nn(h, N, A[i], B[i], Ce[i]);
    CUDA_CHECK(cudaStreamSynchronize(s0));
    g[2] = capture(h, s0, A[2], B[2], Cg[2]);

    long bad[3] = {0, 0, 0};
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < 3; i++)
            CUDA_CHECK(cudaMemsetAsync(Cg[i], 0xff, (size_t)N * N * sizeof(double), i == 1 ? s2 : s1)); /* NaN */
        CUDA_CHECK(cudaGraphLaunch(g[0], s1));
        CUDA_CHECK(cudaGraphLaunch(g[1], s2));
        CUBLAS_CHECK(cublasSetStream(h, s0)); /* eager on the capture stream, meanwhile */
        dgemm_nn(h, N, A[r % 3], B[(r + 1) % 3], Cx);
        CUDA_CHECK(cudaGraphLaunch(g[2], s1));
        CUDA_CHECK(cudaGraphLaunch(g[0], s2)); /* the same executable on another stream */
        CUBLAS_CHECK(cublasSetStream(h, s3));
        dgemm_nn(h, N, A[(r + 2) % 3], B[r % 3], Cx);
        CUDA_CHECK(cudaDeviceSynchronize());
        for (int i = 0; i < 3; i++)
            bad[i] += bits_differ(N, Cg[i], Ce[i]);
    }
    int failed = 0;
    for (int i = 0; i < 3; i++) {
        printf("%s: graph %d replayed %d times on two streams: %ld elements differ from the eager call's bits\n",
               bad[i] ? "FAIL" : "PASS", i + 1, ROUNDS, bad[i]);
        failed |= bad[i] != 0;
    }
    for (int i = 0; i < 3; i++)
        CUDA_CHECK(cudaGraphExecDestroy(g[i]));
    CUBLAS_CHECK(cublasDestroy(h));
    CUBLAS_CHECK(cublasDestroy(warm));
    for (int i = 0; i < 3; i++) {
        CUDA_CHECK(cudaFree(A[i]));
        CUDA_CHECK(cudaFree(B[i]));
        CUDA_CHECK(cudaFree(Cg[i]));
        CUDA_CHECK(cudaFree(Ce[i]));
    }
    CUDA_CHECK(cudaFree(Cx));
    printf("%s: graph_replay%s\n", failed ? "FAIL" : "PASS", wide ? " (wide exponents)" : "");
    return failed;
}
