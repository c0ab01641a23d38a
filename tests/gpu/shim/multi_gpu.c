/* tests/gpu/shim/multi_gpu.c: two GPUs (or more) at once under the shim: one handle per device, one thread per device.
 *
 * Run under libozcrt.so (life.sh multi-gpu) with thresholds below its shape.
 * Each thread selects its device, creates its handle and stream, uploads the
 * same problem, waits for the others (a barrier), then makes REPS emulated
 * DGEMMs. Checks: every element within a loose Phase 22 bound of a host FP64
 * loop (2^-28 k |a|max |b|max), every device's C bit-equal to device 0's
 * (same inputs, same arithmetic), and the shim's own counters
 * (ozcrt_stats_get, found with dlsym) show every call emulated, none failed
 * or forwarded. With fewer than 2 devices it prints SKIP and exits 0.
 * usage: multi_gpu [ROWS] (default 640). */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "tests/gpu/gpu_util.h"

#define MAX_DEVICES 8
#define REPS 4
#define M_DEFAULT 640 /* 128-row residue tiles; 1152 = 6 x 192 takes the ozaki2 engine's 192-row tile */
#define N 512
#define K 768

static int g_m = M_DEFAULT; /* rows: argv[1] */
static double *g_A, *g_B;
static double *g_C[MAX_DEVICES];
static cublasStatus_t g_status[MAX_DEVICES];
static pthread_barrier_t g_barrier;

static void *device_main(void *arg)
{
    int dev = (int)(intptr_t)arg;
    CUDA_CHECK(cudaSetDevice(dev));
    cublasHandle_t h;
    cudaStream_t st;
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "device %d: cublasCreate_v2 failed\n", dev);
        exit(2);
    }
    CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    if (cublasSetStream_v2(h, st) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "device %d: cublasSetStream_v2 failed\n", dev);
        exit(2);
    }
    double *dA = dev_upload(g_A, (size_t)g_m * K * sizeof(double));
    double *dB = dev_upload(g_B, (size_t)K * N * sizeof(double));
    double *dC = NULL;
    CUDA_CHECK(cudaMalloc((void **)&dC, (size_t)g_m * N * sizeof(double)));
    const double alpha = 1.0, beta = 0.0;
    pthread_barrier_wait(&g_barrier); /* all devices at once */
    g_status[dev] = CUBLAS_STATUS_SUCCESS;
    for (int r = 0; r < REPS && g_status[dev] == CUBLAS_STATUS_SUCCESS; r++)
        g_status[dev] = cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, g_m, N, K, &alpha, dA, g_m, dB, K, &beta, dC, g_m);
    CUDA_CHECK(cudaStreamSynchronize(st));
    dev_download(g_C[dev], dC, (size_t)g_m * N * sizeof(double));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    CUDA_CHECK(cudaStreamDestroy(st));
    if (cublasDestroy_v2(h) != CUBLAS_STATUS_SUCCESS)
        g_status[dev] = CUBLAS_STATUS_INTERNAL_ERROR;
    return NULL;
}

typedef int stats_get_fn(int, uint64_t *, uint64_t *, int, double *);
typedef const char *name_fn(int);

/* The index whose name (ozcrt_stats_entry_name / _reason_name) is `want`, -1 if none. */
static int index_of(name_fn *name, const char *want)
{
    for (int i = 0; i < 256; i++) {
        const char *s = name(i);
        if (!s)
            return -1;
        if (strcmp(s, want) == 0)
            return i;
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (sscanf(argv[1], "%d", &g_m) != 1 || g_m < 1)) {
        fprintf(stderr, "usage: multi_gpu [ROWS]\n");
        return 2;
    }
    int ndev = 0;
    CUDA_CHECK(cudaGetDeviceCount(&ndev));
    if (ndev < 2) {
        printf("SKIP: multi_gpu needs 2 GPUs, this machine has %d\n", ndev);
        return 0;
    }
    if (ndev > MAX_DEVICES)
        ndev = MAX_DEVICES;
    stats_get_fn *stats_get = (stats_get_fn *)dlsym(RTLD_DEFAULT, "ozcrt_stats_get");
    int (*stats_enable)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "ozcrt_stats_enable");
    name_fn *entry_name = (name_fn *)dlsym(RTLD_DEFAULT, "ozcrt_stats_entry_name");
    name_fn *reason_name = (name_fn *)dlsym(RTLD_DEFAULT, "ozcrt_stats_reason_name");
    if (!stats_get || !stats_enable || !entry_name || !reason_name) {
        printf("FAIL: multi_gpu must run under libozcrt.so (no ozcrt_stats_get)\n");
        return 1;
    }
    stats_enable(1);
    g_A = malloc((size_t)g_m * K * sizeof(double));
    g_B = malloc((size_t)K * N * sizeof(double));
    for (size_t i = 0; i < (size_t)g_m * K; i++)
        g_A[i] = rng_dist((int)(i % DIST_COUNT));
    for (size_t i = 0; i < (size_t)K * N; i++)
        g_B[i] = rng_sym();
    pthread_t th[MAX_DEVICES];
    pthread_barrier_init(&g_barrier, NULL, (unsigned)ndev);
    for (int d = 0; d < ndev; d++) {
        g_C[d] = malloc((size_t)g_m * N * sizeof(double));
        if (pthread_create(&th[d], NULL, device_main, (void *)(intptr_t)d) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 2;
        }
    }
    for (int d = 0; d < ndev; d++)
        pthread_join(th[d], NULL);
    int failed = 0;
    for (int d = 0; d < ndev; d++)
        if (g_status[d] != CUBLAS_STATUS_SUCCESS) {
            printf("FAIL: device %d: status %d\n", d, (int)g_status[d]);
            failed++;
        }
    /* device 0 against the host, every other device against device 0 */
    long bad = 0, diff = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < g_m; i++) {
            double dot = 0, amax = 0, bmax = 0;
            for (int l = 0; l < K; l++) {
                dot += g_A[(size_t)l * g_m + i] * g_B[(size_t)j * K + l];
                amax = fmax(amax, fabs(g_A[(size_t)l * g_m + i]));
                bmax = fmax(bmax, fabs(g_B[(size_t)j * K + l]));
            }
            bad += !(fabs(g_C[0][(size_t)j * g_m + i] - dot) <= 0x1p-28 * K * amax * bmax);
        }
    for (int d = 1; d < ndev; d++)
        for (size_t e = 0; e < (size_t)g_m * N; e++)
            diff += !same_double(g_C[d][e], g_C[0][e]);
    printf("%s: device 0 against the host: %ld elements outside the bound\n", bad ? "FAIL" : "PASS", bad);
    printf("%s: devices 1..%d against device 0: %ld elements differ\n", diff ? "FAIL" : "PASS", ndev - 1, diff);
    failed += bad != 0;
    failed += diff != 0;
    /* the shim's counters (ozcrt.h) */
    int ep = index_of(entry_name, "cublasDgemm_v2"), emu = index_of(reason_name, "emulated");
    uint64_t calls = 0, by[64] = {0};
    double flop = 0;
    if (ep < 0 || emu < 0 || emu >= 64 || stats_get(ep, &calls, by, 64, &flop) != 0 ||
        calls != (uint64_t)ndev * REPS || by[emu] != calls) {
        printf("FAIL: the shim counted %llu cublasDgemm_v2 calls, %llu emulated (want %d, all emulated)\n",
               (unsigned long long)calls, (unsigned long long)(emu >= 0 && emu < 64 ? by[emu] : 0), ndev * REPS);
        failed++;
    } else {
        printf("PASS: the shim's stats: %llu calls, all emulated\n", (unsigned long long)calls);
    }
    printf("%s: multi_gpu %dx%dx%d on %d devices, %d threads at once\n", failed ? "FAIL" : "PASS", g_m, N, K, ndev, ndev);
    return failed ? 1 : 0;
}
