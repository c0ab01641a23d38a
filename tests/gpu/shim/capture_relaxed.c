/* tests/gpu/shim/capture_relaxed.c: one thread captures a graph in global mode (PyTorch's default) while another thread's call makes the shim allocate: the capture must survive.
 *
 * A plain cuBLAS program, run natively and under libozcrt.so (graphs.sh, which
 * also checks in the log that the other thread's call was emulated, so that
 * it did allocate). After a first call on another handle (the process's
 * first-use work done), thread A begins a global-mode capture on its stream and
 * waits; thread B, with its own handle (warmed up with a small call, so that
 * cuBLAS itself has nothing to allocate) and stream, makes its first large
 * call, which needs a workspace, and synchronizes its stream; then A
 * enqueues a memset, ends the capture, instantiates and launches the graph.
 * Any unsafe call made in global mode while A captures invalidates A's
 * capture (cudaStreamEndCapture fails). Prints PASS/FAIL; exit 0 on PASS. */
#include <pthread.h>
#include <stdio.h>
#include <cuda_runtime_api.h>

#include "tests/gpu/shim/shim_util.h"

#define N 1024

static pthread_barrier_t g_began, g_done;
static double *g_A, *g_B, *g_C, *g_X;
static cublasHandle_t g_hb;
static cudaStream_t g_sb;
static cublasStatus_t g_status_b;

static void *thread_b(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&g_began);
    const double one = 1.0, zero = 0.0;
    g_status_b = cublasDgemm(g_hb, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, g_A, N, g_B, N, &zero, g_C, N);
    pthread_barrier_wait(&g_done);
    return NULL;
}

int main(void)
{
    g_A = dev_random(N);
    g_B = dev_random(N);
    CUDA_CHECK(cudaMalloc((void **)&g_C, (size_t)N * N * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&g_X, 4096));
    cudaStream_t sa;
    CUDA_CHECK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&g_sb, cudaStreamNonBlocking));
    cublasHandle_t warm;
    CUBLAS_CHECK(cublasCreate(&warm));
    dgemm_nn(warm, N, g_A, g_B, g_C);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUBLAS_CHECK(cublasCreate(&g_hb));
    CUBLAS_CHECK(cublasSetStream(g_hb, g_sb));
    dgemm_nn(g_hb, 16, g_A, g_B, g_C); /* small: cuBLAS's own, below the shim's thresholds */
    CUDA_CHECK(cudaStreamSynchronize(g_sb));
    pthread_barrier_init(&g_began, NULL, 2);
    pthread_barrier_init(&g_done, NULL, 2);
    pthread_t tb;
    if (pthread_create(&tb, NULL, thread_b, NULL) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 2;
    }
    CUDA_CHECK(cudaStreamBeginCapture(sa, cudaStreamCaptureModeGlobal));
    pthread_barrier_wait(&g_began);
    pthread_barrier_wait(&g_done); /* B's call is enqueued */
    cudaError_t e_memset = cudaMemsetAsync(g_X, 0, 4096, sa);
    cudaGraph_t graph = NULL;
    cudaError_t e_end = cudaStreamEndCapture(sa, &graph);
    pthread_join(tb, NULL);
    CUDA_CHECK(cudaStreamSynchronize(g_sb));
    int failed = e_memset != cudaSuccess || e_end != cudaSuccess || g_status_b != CUBLAS_STATUS_SUCCESS;
    if (!failed) {
        cudaGraphExec_t exec;
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CUDA_CHECK(cudaGraphLaunch(exec, sa));
        CUDA_CHECK(cudaStreamSynchronize(sa));
        CUDA_CHECK(cudaGraphExecDestroy(exec));
        CUDA_CHECK(cudaGraphDestroy(graph));
    }
    (void)cudaGetLastError();
    printf("%s: capture in global mode across another thread's call: memset %s, end capture %s, B's call status %d\n",
           failed ? "FAIL" : "PASS", cudaGetErrorString(e_memset), cudaGetErrorString(e_end), (int)g_status_b);
    CUBLAS_CHECK(cublasDestroy(g_hb));
    CUBLAS_CHECK(cublasDestroy(warm));
    return failed;
}
