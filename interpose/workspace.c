/* interpose/workspace.c: the CUDA operations of the workspace table (workspace_table.h) and the shim's calls into it.
 *
 * Every operation runs in relaxed stream-capture mode (the table brackets
 * them with relax/restore): a thread capturing in global mode, PyTorch's
 * default, is then not invalidated by an allocation, free or event query of
 * another thread's call. Stream-ordered allocation (cudaMallocAsync from the
 * device's default pool) where the device supports memory pools, cudaMalloc
 * elsewhere and for captured calls (their buffers must not become graph
 * memory nodes). At exit, buffers of destroyed graphs are freed; around
 * fork() the locks are held (lifecycle.h). */
#include "workspace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "capture_mode.h"
#include "lifecycle.h"
#include "policy.h"

/* A failed call must not leave its error for the application's next
 * cudaGetLastError (cudaErrorNotReady is a query's answer, not an error). */
static cudaError_t done(cudaError_t err)
{
    if (err != cudaSuccess && err != cudaErrorNotReady)
        (void)cudaGetLastError();
    return err;
}

static int cu_relax(void) { return ozcrt_capture_relax(); }
static void cu_restore(int previous) { ozcrt_capture_restore(previous); }

static cudaError_t cu_capture_status(cudaStream_t s, int *capturing)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t err = done(cudaStreamIsCapturing(s, &cs));
    *capturing = err == cudaSuccess && cs != cudaStreamCaptureStatusNone;
    return err;
}

static cudaError_t cu_stream_id(cudaStream_t s, unsigned long long *id)
{
    return done(cudaStreamGetId(s, id));
}

static atomic_int g_pools[OZCRT_WS_MAX_DEVICES]; /* 0: not asked, 1: yes, 2: no */

static int cu_pools_supported(int dev)
{
    int known = dev >= 0 && dev < OZCRT_WS_MAX_DEVICES ? atomic_load(&g_pools[dev]) : 0;
    if (known)
        return known == 1;
    int yes = 0;
    cudaError_t err = done(cudaDeviceGetAttribute(&yes, cudaDevAttrMemoryPoolsSupported, dev));
    if (err != cudaSuccess)
        yes = 0;
    if (!yes)
        ozcrt_log(1, "ozcrt: device %d has no stream-ordered memory pools: workspaces come from cudaMalloc", dev);
    if (dev >= 0 && dev < OZCRT_WS_MAX_DEVICES)
        atomic_store(&g_pools[dev], yes ? 1 : 2);
    return yes != 0;
}

static cudaError_t cu_malloc_async(void **p, size_t bytes, cudaStream_t s)
{
    return done(cudaMallocAsync(p, bytes, s));
}

static cudaError_t cu_malloc_plain(void **p, size_t bytes)
{
    return done(cudaMalloc(p, bytes));
}

/* Our own stream per device, for stream-ordered frees of buffers whose uses
 * have all completed when no live stream of theirs is known. */
static pthread_mutex_t g_stream_lock = PTHREAD_MUTEX_INITIALIZER;
static cudaStream_t g_own_stream[OZCRT_WS_MAX_DEVICES];

static cudaError_t own_stream(cudaStream_t *s)
{
    int dev = -1;
    cudaError_t err = done(cudaGetDevice(&dev));
    if (err != cudaSuccess)
        return err;
    if (dev < 0 || dev >= OZCRT_WS_MAX_DEVICES)
        return cudaErrorInvalidDevice;
    pthread_mutex_lock(&g_stream_lock);
    if (!g_own_stream[dev])
        err = done(cudaStreamCreateWithFlags(&g_own_stream[dev], cudaStreamNonBlocking));
    *s = g_own_stream[dev];
    pthread_mutex_unlock(&g_stream_lock);
    return err;
}

static cudaError_t cu_free_mem(void *p, int pooled, const cudaStream_t *s)
{
    if (!pooled)
        return done(cudaFree(p));
    cudaStream_t on;
    if (s) {
        on = *s;
    } else {
        cudaError_t err = own_stream(&on);
        if (err != cudaSuccess)
            return err;
    }
    return done(cudaFreeAsync(p, on));
}

static cudaError_t cu_event_create(cudaEvent_t *ev)
{
    return done(cudaEventCreateWithFlags(ev, cudaEventDisableTiming));
}

static cudaError_t cu_event_destroy(cudaEvent_t ev)
{
    return done(cudaEventDestroy(ev));
}

static cudaError_t cu_event_record(cudaEvent_t ev, cudaStream_t s)
{
    return done(cudaEventRecord(ev, s));
}

static cudaError_t cu_event_query(cudaEvent_t ev)
{
    return done(cudaEventQuery(ev));
}

static cudaError_t cu_event_sync(cudaEvent_t ev)
{
    return done(cudaEventSynchronize(ev));
}

static cudaError_t cu_device_sync(void)
{
    return done(cudaDeviceSynchronize());
}

static cudaError_t cu_get_device(int *dev)
{
    return done(cudaGetDevice(dev));
}

static cudaError_t cu_set_device(int dev)
{
    return done(cudaSetDevice(dev));
}

/* The graph being captured on s takes the only reference to a user object
 * whose destructor is `release`. */
static cudaError_t cu_graph_adopt(cudaStream_t s, void *ctx, void (*release)(void *ctx))
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaGraph_t graph = NULL;
    cudaError_t err = done(cudaStreamGetCaptureInfo(s, &cs, NULL, &graph, NULL, NULL, NULL));
    if (err != cudaSuccess)
        return err;
    if (cs != cudaStreamCaptureStatusActive || !graph)
        return cudaErrorStreamCaptureInvalidated;
    cudaUserObject_t obj;
    err = done(cudaUserObjectCreate(&obj, ctx, release, 1, cudaUserObjectNoDestructorSync));
    if (err != cudaSuccess)
        return err;
    err = done(cudaGraphRetainUserObject(graph, obj, 1, cudaGraphUserObjectMove));
    /* On failure the object is left alone: releasing it would run the
     * destructor, and the caller frees the buffer itself. */
    return err;
}

static const char *cu_error_string(cudaError_t err)
{
    return cudaGetErrorString(err);
}

static const ozcrt_ws_ops g_cuda_ops = {
    .relax = cu_relax,
    .restore = cu_restore,
    .capture_status = cu_capture_status,
    .stream_id = cu_stream_id,
    .pools_supported = cu_pools_supported,
    .malloc_async = cu_malloc_async,
    .malloc_plain = cu_malloc_plain,
    .free_mem = cu_free_mem,
    .event_create = cu_event_create,
    .event_destroy = cu_event_destroy,
    .event_record = cu_event_record,
    .event_query = cu_event_query,
    .event_sync = cu_event_sync,
    .device_sync = cu_device_sync,
    .get_device = cu_get_device,
    .set_device = cu_set_device,
    .graph_adopt = cu_graph_adopt,
    .error_string = cu_error_string,
};

/* ---- process life ---- */

static void at_exit(void)
{
    ozcrt_ws_table_drain(&g_cuda_ops);
}

/* fork(): the table's lock, then ours (the order in which the table takes
 * them: own_stream runs under the table's lock), released in reverse. */
static void fork_prepare(void)
{
    ozcrt_ws_table_lock();
    pthread_mutex_lock(&g_stream_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&g_stream_lock);
    ozcrt_ws_table_unlock();
}

static void fork_child(void)
{
    pthread_mutex_unlock(&g_stream_lock);
    ozcrt_ws_table_reset_after_fork();
}

__attribute__((constructor)) static void register_fork(void)
{
    (void)ozcrt_lifecycle_on_fork(fork_prepare, fork_parent, fork_child);
}

/* At the first acquire, after the CUDA runtime has started: atexit handlers
 * run in reverse order, so ours runs before the runtime's teardown. */
static pthread_once_t g_life_once = PTHREAD_ONCE_INIT;
static void register_life(void)
{
    if (atexit(at_exit) != 0)
        ozcrt_error("ozcrt: atexit failed: destroyed graphs' workspaces are left to the process exit");
}

/* ---- the shim's calls ---- */

ozcrt_reason ozcrt_workspace_acquire(cublasHandle_t handle, int dev, cudaStream_t stream,
                                     const size_t sizes[OZCRT_WS_SIZES], ozcrt_ws_lease *lease)
{
    pthread_once(&g_life_once, register_life);
    ozcrt_ws_request rq = {
        .handle = handle, .dev = dev, .stream = stream,
        .cap = ozcrt_policy_get()->max_workspace_bytes,
    };
    memcpy(rq.sizes, sizes, sizeof rq.sizes);
    return ozcrt_ws_table_acquire(&g_cuda_ops, &rq, lease);
}

void ozcrt_workspace_release(ozcrt_ws_lease *lease)
{
    ozcrt_ws_table_release(&g_cuda_ops, lease);
}

void ozcrt_workspace_destroy_handle(cublasHandle_t handle)
{
    ozcrt_ws_table_destroy_handle(&g_cuda_ops, handle);
}
