/* interpose/plan_counts.c: the automatic precision's plan counters in mapped host memory (plan_counts.h). */
#include "plan_counts.h"

#include <pthread.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "kernels/oz2_auto_estimate.h"
#include "policy.h"

static unsigned long long *volatile g_counts; /* host pointer = device pointer (unified addressing) */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void allocate(void)
{
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    const int relaxed = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
    void *p = NULL, *dp = NULL;
    cudaError_t err = cudaHostAlloc(&p, OZ2A_PLAN_COUNTS * sizeof(unsigned long long),
                                    cudaHostAllocMapped | cudaHostAllocPortable);
    if (err == cudaSuccess) {
        memset(p, 0, OZ2A_PLAN_COUNTS * sizeof(unsigned long long));
        err = cudaHostGetDevicePointer(&dp, p, 0);
        if (err == cudaSuccess && dp != p) /* no unified addressing: the host and device views differ */
            err = cudaErrorNotSupported;
        if (err != cudaSuccess)
            (void)cudaFreeHost(p);
    }
    if (err != cudaSuccess) {
        (void)cudaGetLastError(); /* not the application's error */
        ozcrt_log(1, "ozcrt: no mapped host memory for the automatic plans' counters (%s): plans not counted",
                  cudaGetErrorString(err));
    } else {
        g_counts = p;
    }
    if (relaxed)
        (void)cudaThreadExchangeStreamCaptureMode(&mode);
}

unsigned long long *ozcrt_plan_counters(void)
{
    pthread_once(&g_once, allocate);
    return g_counts;
}

void ozcrt_plan_counts_read(int complex_, uint64_t *out, int n)
{
    unsigned long long *c = g_counts;
    for (int i = 0; i < n && i < OZ2A_PLAN_COUNTS_CX; i++)
        out[i] = c ? ((volatile unsigned long long *)c)[(complex_ ? OZ2A_PLAN_COUNTS_CX : 0) + i] : 0;
}

void ozcrt_plan_counts_clear(void)
{
    unsigned long long *c = g_counts;
    for (int i = 0; c && i < OZ2A_PLAN_COUNTS; i++)
        ((volatile unsigned long long *)c)[i] = 0;
}
