/* tests/gpu/shim/fork_client.c: fork() in a cuBLAS program on the GPU: children before and after the parent's CUDA start, their statuses cuBLAS's own, the parent's results unchanged.
 *
 * life.sh fork runs it natively and under the shim in each mode and compares
 * the lines it prints (everything but the "hash" lines, which differ between
 * modes by design):
 *
 * 1. Before the parent touches CUDA, CHILDREN_PRE children each create a
 *    handle, compute C = A B (n x n, U(-1,1), the same data in every
 *    process) and print a hash of C's bits; life.sh checks that each equals
 *    the parent's own hash of the same product (a child of a CUDA-free
 *    parent is an ordinary GPU process: emulated as the parent is).
 * 2. The parent computes C1, starts a thread that makes DGEMM calls on its
 *    own handle and stream without pause (so the shim's locks are often held
 *    when fork() runs), and forks, for each of ROUNDS rounds: a child that
 *    exits without a CUDA call (a data-loader worker), one that calls
 *    cublasDgemm_v2 on the parent's handle and pointers, and one that calls
 *    cublasCreate_v2 (and, if that succeeds, a DGEMM on the new handle).
 *    Children run under alarm(): one that hung on an inherited lock is
 *    killed, and its line says so. The statuses are printed, not judged
 *    here: the shim must return what cuBLAS returns (life.sh).
 * 3. The parent computes the product again after the children: C2's bits
 *    must equal C1's, and the thread's calls must have succeeded.
 *
 * usage: fork_client [n]   (default 1024) */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/gpu/shim/shim_util.h"

enum { CHILDREN_PRE = 3, ROUNDS = 4, CHILD_ALARM_S = 120 };

static int g_n = 1024;
static double *g_hA, *g_hB; /* the host data, made before any fork */

static atomic_int g_stop;
static atomic_int g_hammer_bad;
static atomic_long g_hammer_calls;

/* C = A B on `h` from the host data; returns the hash of C's bits (synchronised). */
static uint64_t product_hash(cublasHandle_t h, const double *dA, const double *dB, double *dC)
{
    size_t count = (size_t)g_n * (size_t)g_n;
    CUDA_CHECK(cudaMemset(dC, 0xff, count * sizeof(double))); /* poison: NaN */
    dgemm_nn(h, g_n, dA, dB, dC);
    CUDA_CHECK(cudaDeviceSynchronize());
    double *c = malloc(count * sizeof(double));
    if (!c) {
        fprintf(stderr, "out of host memory\n");
        exit(2);
    }
    dev_download(c, dC, count * sizeof(double));
    uint64_t hash = hash_bytes(c, count * sizeof(double));
    free(c);
    return hash;
}

/* The whole product in a fresh process state: a handle, the operands, C. */
static uint64_t fresh_product_hash(void)
{
    size_t bytes = (size_t)g_n * (size_t)g_n * sizeof(double);
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate_v2(&h));
    double *dA = dev_upload(g_hA, bytes), *dB = dev_upload(g_hB, bytes), *dC = NULL;
    CUDA_CHECK(cudaMalloc((void **)&dC, bytes));
    uint64_t hash = product_hash(h, dA, dB, dC);
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    CUBLAS_CHECK(cublasDestroy_v2(h));
    return hash;
}

static void *hammer(void *arg)
{
    (void)arg;
    size_t bytes = (size_t)g_n * (size_t)g_n * sizeof(double);
    cublasHandle_t h;
    cudaStream_t s;
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS || cudaStreamCreate(&s) != cudaSuccess ||
        cublasSetStream_v2(h, s) != CUBLAS_STATUS_SUCCESS) {
        atomic_store(&g_hammer_bad, 1);
        return NULL;
    }
    double *dA = dev_upload(g_hA, bytes), *dB = dev_upload(g_hB, bytes), *dC = NULL;
    CUDA_CHECK(cudaMalloc((void **)&dC, bytes));
    const double one = 1.0, zero = 0.0;
    while (!atomic_load(&g_stop)) {
        if (cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, g_n, g_n, g_n, &one, dA, g_n, dB, g_n, &zero, dC, g_n) !=
                CUBLAS_STATUS_SUCCESS ||
            cudaStreamSynchronize(s) != cudaSuccess) {
            atomic_store(&g_hammer_bad, 1);
            break;
        }
        atomic_fetch_add(&g_hammer_calls, 1);
    }
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    CUDA_CHECK(cudaStreamDestroy(s));
    CUBLAS_CHECK(cublasDestroy_v2(h));
    return NULL;
}

/* Forks a child that runs fn(arg) (which prints its line) and exits 0. */
static pid_t spawn(void (*fn)(void *), void *arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        alarm(CHILD_ALARM_S);
        fn(arg);
        fflush(stdout);
        exit(0);
    }
    return pid;
}

/* Waits for pid; prints how it ended unless it exited 0. Returns 0 if it exited 0. */
static int reap(pid_t pid, const char *what)
{
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) {
        perror("waitpid");
        exit(2);
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    if (WIFSIGNALED(st))
        printf("%s child: killed by signal %d%s\n", what, WTERMSIG(st),
               WTERMSIG(st) == SIGALRM ? " (hung)" : "");
    else
        printf("%s child: exit status %d\n", what, WEXITSTATUS(st));
    return 1;
}

typedef struct inherited {
    cublasHandle_t h;
    const double *dA, *dB;
    double *dC;
} inherited;

static void child_pre(void *arg)
{
    (void)arg;
    printf("pre-child hash %016llx\n", (unsigned long long)fresh_product_hash());
}

static void child_quiet(void *arg) { (void)arg; }

static void child_inherited(void *arg)
{
    inherited *x = arg;
    const double one = 1.0, zero = 0.0;
    cublasStatus_t st = cublasDgemm_v2(x->h, CUBLAS_OP_N, CUBLAS_OP_N, g_n, g_n, g_n, &one, x->dA, g_n, x->dB, g_n,
                                       &zero, x->dC, g_n);
    cudaError_t sync = cudaDeviceSynchronize();
    printf("inherited child: cublasDgemm_v2 status %d, cudaDeviceSynchronize %d\n", (int)st, (int)sync);
}

static void child_fresh(void *arg)
{
    (void)arg;
    cublasHandle_t h;
    cublasStatus_t st = cublasCreate_v2(&h);
    if (st != CUBLAS_STATUS_SUCCESS) {
        printf("fresh child: cublasCreate_v2 status %d\n", (int)st);
        return;
    }
    const double one = 1.0, zero = 0.0;
    double *dC = NULL;
    cudaError_t e = cudaMalloc((void **)&dC, sizeof(double) * (size_t)g_n * (size_t)g_n);
    cublasStatus_t g = cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, g_n, g_n, g_n, &one, dC, g_n, dC, g_n, &zero,
                                      dC, g_n);
    printf("fresh child: cublasCreate_v2 status 0, cudaMalloc %d, cublasDgemm_v2 status %d, destroy %d\n", (int)e,
           (int)g, (int)cublasDestroy_v2(h));
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_n = atoi(argv[1]);
    if (g_n < 1 || g_n > 8192) {
        fprintf(stderr, "usage: fork_client [n in 1..8192]\n");
        return 2;
    }
    size_t count = (size_t)g_n * (size_t)g_n, bytes = count * sizeof(double);
    g_hA = malloc(bytes);
    g_hB = malloc(bytes);
    if (!g_hA || !g_hB)
        return 2;
    for (size_t i = 0; i < count; i++)
        g_hA[i] = rng_sym();
    for (size_t i = 0; i < count; i++)
        g_hB[i] = rng_sym();
    int bad = 0;

    /* 1. children of a parent without CUDA */
    pid_t pre[CHILDREN_PRE];
    for (int i = 0; i < CHILDREN_PRE; i++)
        pre[i] = spawn(child_pre, NULL);
    for (int i = 0; i < CHILDREN_PRE; i++)
        bad |= reap(pre[i], "pre");

    /* 2. the parent on the GPU, then children of it */
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate_v2(&h));
    double *dA = dev_upload(g_hA, bytes), *dB = dev_upload(g_hB, bytes), *dC = NULL;
    CUDA_CHECK(cudaMalloc((void **)&dC, bytes));
    uint64_t c1 = product_hash(h, dA, dB, dC);
    printf("parent hash %016llx\n", (unsigned long long)c1);
    pthread_t t;
    if (pthread_create(&t, NULL, hammer, NULL) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 2;
    }
    inherited x = {h, dA, dB, dC};
    for (int r = 0; r < ROUNDS; r++) {
        pid_t q = spawn(child_quiet, NULL), in = spawn(child_inherited, &x), fr = spawn(child_fresh, NULL);
        bad |= reap(q, "quiet");
        bad |= reap(in, "inherited");
        bad |= reap(fr, "fresh");
    }
    atomic_store(&g_stop, 1);
    pthread_join(t, NULL);
    if (atomic_load(&g_hammer_bad)) {
        printf("FAIL: the parent's second thread got an error\n");
        bad = 1;
    }

    /* 3. the parent's result after the children */
    uint64_t c2 = product_hash(h, dA, dB, dC);
    if (c2 != c1) {
        printf("FAIL: the parent's product changed after the forks (%016llx, was %016llx)\n",
               (unsigned long long)c2, (unsigned long long)c1);
        bad = 1;
    }
    uint64_t c3 = fresh_product_hash();
    if (c3 != c1) {
        printf("FAIL: a new handle's product differs from the first (%016llx, was %016llx)\n",
               (unsigned long long)c3, (unsigned long long)c1);
        bad = 1;
    }
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    CUBLAS_CHECK(cublasDestroy_v2(h));
    printf("%s: %d children before CUDA, %d rounds of 3 after it, %ld calls of the second thread\n",
           bad ? "FAIL" : "done", CHILDREN_PRE, ROUNDS, atomic_load(&g_hammer_calls));
    return bad;
}
