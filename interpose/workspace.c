/* interpose/workspace.c: the workspace table.
 *
 * Keyed by (handle, device, stream) rather than (handle, device): a buffer
 * is then only ever used on one stream, so growing it is a cudaFreeAsync and
 * a cudaMallocAsync on that same stream, stream-ordered after every earlier
 * use, and a change of the handle's stream never needs an order between two
 * streams (the old one may even be destroyed by then). PyTorch keys its cuBLAS
 * workspaces the same way. Entries are told apart by the stream's id as well
 * as its address, since a destroyed stream's address can come back. A buffer that was used inside a stream capture is
 * referenced by the graph: it is never freed before cublasDestroy_v2, only
 * retired when the entry grows. The total is capped by OZCRT_MAX_WORKSPACE_MB.
 *
 * Locking: g_lock guards the list and the total; each entry has its own lock,
 * held from acquire to release, so a handle shared by threads never sees its
 * buffer freed between taking it and enqueueing the work. */
#include "workspace.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>

#include "policy.h"

#define OZCRT_WS_GRANULE ((size_t)2 << 20) /* grow in 2 MiB steps */
#define OZCRT_WS_MAX_RETIRED 16

typedef struct ws_entry {
    struct ws_entry *next;
    cublasHandle_t handle;
    int dev;
    cudaStream_t stream;
    unsigned long long stream_id; /* cudaStreamGetId: a destroyed stream's address can come back */
    pthread_mutex_t lock;
    void *ptr;
    size_t bytes;
    int captured; /* ptr is referenced by a captured graph */
    void *retired[OZCRT_WS_MAX_RETIRED];
    size_t retired_bytes[OZCRT_WS_MAX_RETIRED];
    int nretired;
} ws_entry;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static ws_entry *g_entries;
static size_t g_total; /* bytes allocated, retired ones included */

static ws_entry *find_or_add(cublasHandle_t handle, int dev, cudaStream_t stream, unsigned long long sid,
                             int any_id)
{
    pthread_mutex_lock(&g_lock);
    ws_entry *e = g_entries;
    while (e && !(e->handle == handle && e->dev == dev && e->stream == stream && (any_id || e->stream_id == sid)))
        e = e->next;
    if (!e) {
        e = calloc(1, sizeof *e);
        if (e) {
            e->handle = handle;
            e->dev = dev;
            e->stream = stream;
            e->stream_id = sid;
            pthread_mutex_init(&e->lock, NULL);
            e->next = g_entries;
            g_entries = e;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return e;
}

/* Releases e's buffer (entry lock held): stream-ordered free, or retired
 * when a graph may use it. */
static void drop_buffer(ws_entry *e)
{
    if (!e->ptr)
        return;
    if (e->captured) { /* a graph may still use it: keep it until destroy */
        if (e->nretired < OZCRT_WS_MAX_RETIRED) {
            e->retired[e->nretired] = e->ptr;
            e->retired_bytes[e->nretired++] = e->bytes;
        } else {
            ozcrt_log(1, "ozcrt: more than %d captured workspaces retired on one stream: %zu bytes kept until exit",
                      OZCRT_WS_MAX_RETIRED, e->bytes);
        }
    } else {
        cudaError_t err = cudaFreeAsync(e->ptr, e->stream);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            ozcrt_error("ozcrt: cudaFreeAsync of the workspace failed: %s (%zu bytes leaked)",
                        cudaGetErrorString(err), e->bytes);
        } else {
            pthread_mutex_lock(&g_lock);
            g_total -= e->bytes;
            pthread_mutex_unlock(&g_lock);
        }
    }
    e->ptr = NULL;
    e->bytes = 0;
    e->captured = 0;
}

/* Replaces e's buffer by one of at least `want` bytes; 1 on success. */
static int grow(ws_entry *e, size_t want)
{
    size_t bytes = (want + OZCRT_WS_GRANULE - 1) / OZCRT_WS_GRANULE * OZCRT_WS_GRANULE;
    size_t cap = ozcrt_policy_get()->max_workspace_bytes;
    pthread_mutex_lock(&g_lock);
    size_t keep = e->captured ? e->bytes : 0; /* a retired buffer still counts */
    size_t others = g_total - e->bytes;
    int fits = bytes <= cap && others + keep <= cap - bytes;
    if (fits)
        g_total += bytes; /* reserved */
    pthread_mutex_unlock(&g_lock);
    if (!fits) {
        ozcrt_log(2, "ozcrt: workspace of %zu bytes would pass OZCRT_MAX_WORKSPACE_MB", bytes);
        return 0;
    }
    drop_buffer(e);
    void *p = NULL;
    cudaError_t err = cudaMallocAsync(&p, bytes, e->stream);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        pthread_mutex_lock(&g_lock);
        g_total -= bytes;
        pthread_mutex_unlock(&g_lock);
        ozcrt_log(1, "ozcrt: cudaMallocAsync(%zu) for the workspace failed: %s", bytes, cudaGetErrorString(err));
        return 0;
    }
    e->ptr = p;
    e->bytes = bytes;
    ozcrt_log(2, "ozcrt: workspace of handle %p device %d stream %p: %zu bytes", (void *)e->handle, e->dev,
              (void *)e->stream, bytes);
    return 1;
}

ozcrt_reason ozcrt_workspace_acquire(cublasHandle_t handle, int dev, cudaStream_t stream, size_t min, size_t full,
                                     ozcrt_ws_lease *lease)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t err = cudaStreamIsCapturing(stream, &cs);
    if (err != cudaSuccess) { /* e.g. the legacy stream while another one captures */
        (void)cudaGetLastError();
        return OZCRT_R_CAPTURE_NO_WS;
    }
    int capturing = cs != cudaStreamCaptureStatusNone;
    /* The stream's id, outside captures only: no call but
     * cudaStreamIsCapturing is made while a capture is under way (one the
     * runtime deems unsafe would invalidate the application's capture). A
     * capturing stream is alive, so its address alone names it then. */
    unsigned long long sid = 0;
    if (!capturing) {
        err = cudaStreamGetId(stream, &sid);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            return OZCRT_R_NO_WORKSPACE;
        }
    }
    ws_entry *e = find_or_add(handle, dev, stream, sid, capturing);
    if (!e)
        return OZCRT_R_NO_WORKSPACE;
    pthread_mutex_lock(&e->lock);
    int ok;
    if (full == 0 || e->bytes >= full)
        ok = 1;
    else if (capturing)
        ok = e->bytes >= min;
    else
        ok = grow(e, full) || e->bytes >= min || grow(e, min);
    if (!ok) {
        pthread_mutex_unlock(&e->lock);
        return capturing ? OZCRT_R_CAPTURE_NO_WS : OZCRT_R_NO_WORKSPACE;
    }
    if (capturing)
        e->captured = 1;
    lease->entry = e;
    lease->ptr = e->ptr;
    lease->bytes = e->bytes;
    return OZCRT_R_EMULATED;
}

void ozcrt_workspace_release(ozcrt_ws_lease *lease)
{
    ws_entry *e = lease->entry;
    if (e)
        pthread_mutex_unlock(&e->lock);
    lease->entry = NULL;
}

static void free_now(void *p)
{
    cudaError_t err = cudaFree(p);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        ozcrt_error("ozcrt: cudaFree of a workspace failed: %s", cudaGetErrorString(err));
    }
}

static void free_entry(ws_entry *e)
{
    pthread_mutex_lock(&e->lock); /* waits for a thread still enqueueing on it */
    int cur = -1;
    cudaError_t err = cudaGetDevice(&cur);
    if (err == cudaSuccess && cur != e->dev)
        err = cudaSetDevice(e->dev);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        ozcrt_error("ozcrt: cannot select device %d to free a workspace: %s", e->dev, cudaGetErrorString(err));
    }
    /* As cublasDestroy_v2 itself: wait for the work, then free. The device,
     * not e->stream: programs often destroy their streams before the handle,
     * and a destroyed stream must not be touched. */
    err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        ozcrt_error("ozcrt: cudaDeviceSynchronize before freeing a workspace: %s", cudaGetErrorString(err));
    }
    size_t freed = e->bytes;
    if (e->ptr)
        free_now(e->ptr);
    for (int i = 0; i < e->nretired; i++) {
        free_now(e->retired[i]);
        freed += e->retired_bytes[i];
    }
    if (cur >= 0 && cur != e->dev) {
        err = cudaSetDevice(cur);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            ozcrt_error("ozcrt: cannot restore device %d: %s", cur, cudaGetErrorString(err));
        }
    }
    pthread_mutex_unlock(&e->lock);
    pthread_mutex_destroy(&e->lock);
    pthread_mutex_lock(&g_lock);
    g_total -= freed;
    pthread_mutex_unlock(&g_lock);
    free(e);
}

void ozcrt_workspace_destroy_handle(cublasHandle_t handle)
{
    ws_entry *mine = NULL;
    pthread_mutex_lock(&g_lock);
    for (ws_entry **pp = &g_entries; *pp;) {
        ws_entry *e = *pp;
        if (e->handle == handle) {
            *pp = e->next;
            e->next = mine;
            mine = e;
        } else {
            pp = &e->next;
        }
    }
    pthread_mutex_unlock(&g_lock);
    while (mine) {
        ws_entry *next = mine->next;
        free_entry(mine);
        mine = next;
    }
}
