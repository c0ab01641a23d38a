/* interpose/plan_counts.c: the automatic precision's plan counters in mapped host memory (plan_counts.h). */
#include "plan_counts.h"

#include <pthread.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "kernels/oz2_auto_estimate.h"
#include "capture_mode.h"
#include "lifecycle.h"
#include "policy.h"

/* OZCRT_PLAN_DEVICES rows of OZ2A_PLAN_COUNTS; host pointer = device pointer (unified addressing) */
static unsigned long long *volatile g_counts;
#define PLAN_BYTES ((size_t)OZCRT_PLAN_DEVICES * OZ2A_PLAN_COUNTS * sizeof(unsigned long long))
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void allocate(void)
{
    const int mode = ozcrt_capture_relax();
    void *p = NULL, *dp = NULL;
    cudaError_t err = cudaHostAlloc(&p, PLAN_BYTES, cudaHostAllocMapped | cudaHostAllocPortable);
    if (err == cudaSuccess) {
        memset(p, 0, PLAN_BYTES);
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
    ozcrt_capture_restore(mode);
}

unsigned long long *ozcrt_plan_counters(int dev)
{
    if (dev < 0 || dev >= OZCRT_PLAN_DEVICES || ozcrt_lifecycle_is_fork_child())
        return NULL;
    pthread_once(&g_once, allocate);
    unsigned long long *c = g_counts;
    return c ? c + (size_t)dev * OZ2A_PLAN_COUNTS : NULL;
}

/* The counters where this process may touch them: not in a fork child,
 * whose copy of the address space lacks pinned memory (CUDA maps it
 * MADV_DONTFORK). */
static volatile unsigned long long *counters_here(void)
{
    return ozcrt_lifecycle_is_fork_child() ? NULL : g_counts;
}

void ozcrt_plan_counts_read(int complex_, uint64_t *out, int n)
{
    volatile unsigned long long *c = counters_here();
    for (int i = 0; i < n && i < OZ2A_PLAN_COUNTS_CX; i++) {
        uint64_t sum = 0;
        for (int d = 0; c && d < OZCRT_PLAN_DEVICES; d++)
            sum += c[(size_t)d * OZ2A_PLAN_COUNTS + (complex_ ? OZ2A_PLAN_COUNTS_CX : 0) + i];
        out[i] = sum;
    }
}

void ozcrt_plan_counts_clear(void)
{
    volatile unsigned long long *c = counters_here();
    for (size_t i = 0; c && i < (size_t)OZCRT_PLAN_DEVICES * OZ2A_PLAN_COUNTS; i++)
        c[i] = 0;
}
