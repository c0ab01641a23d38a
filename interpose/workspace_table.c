/* interpose/workspace_table.c: the workspace bookkeeping over a table of CUDA operations (rules in workspace_table.h).
 *
 * Why the rules hold:
 *  - Same stream, no wait: every use of a buffer on stream s is enqueued on s,
 *    so a later call on s runs after the earlier ones. A stream is named by
 *    its address and its id (cudaStreamGetId): a destroyed stream's address
 *    can come back for a new stream.
 *  - Another stream, after the event: the event is recorded after each use,
 *    so a completed query means every use (and the stream-ordered allocation
 *    before it) is done; a buffer may then be used, or freed, on any stream.
 *    A stream that was destroyed meanwhile does not matter: its buffers are
 *    reused or freed through their events, never through the stream.
 *  - A captured call's buffer: the graph's kernels read and write it at every
 *    replay, so nothing else may ever use it. It is tied to the graph with a
 *    user object (cudaGraphRetainUserObject), whose destructor runs after the
 *    graph and every executable instantiated from it are destroyed, and an
 *    executable destroyed while in flight is freed only "asynchronously on
 *    completion" (cudaGraphExecDestroy), so the buffer is idle by then. One
 *    buffer per captured call suffices for one executable replayed on several
 *    streams at once: "Only one instance of graphExec may be executing at a
 *    time. Each launch is ordered behind [...] any previous launches of
 *    graphExec" (cudaGraphLaunch). Two executables instantiated from ONE graph
 *    may run concurrently and would share it: a documented limitation
 *    (interpose/README.md). Graph memory nodes (cudaMallocAsync during the
 *    capture) would avoid it, but a graph with memory nodes cannot be
 *    instantiated twice at once, cannot be cloned into child graphs and needs
 *    its allocations freed before each relaunch: they would break programs
 *    that work without the shim.
 *  - The destructor runs on a CUDA-internal thread and may not call CUDA: it
 *    pushes onto a lock-free stack (g_released) that acquire, destroy and exit
 *    drain with cudaFree.
 *
 * Locking: g_lock guards the buffer list, the totals and the per-device
 * state; CUDA calls made under it never wait for device work (queries,
 * records, allocations, stream-ordered frees), except in destroy, which first
 * takes its buffers out of the list. g_cond wakes destroy when a lease ends. */
#include "workspace_table.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "lifecycle.h"
#include "policy.h"

typedef struct ws_buf {
    struct ws_buf *next;
    cublasHandle_t handle;
    int dev;
    void *ptr;
    size_t bytes;
    int pooled;                   /* cudaMallocAsync: freed stream-ordered */
    int leased;
    int used;                     /* the event was recorded at least once */
    int event_ok;                 /* the last record succeeded: queries mean something */
    cudaEvent_t event;            /* recorded after each use */
    cudaStream_t stream;          /* last use */
    unsigned long long stream_id;
    unsigned long long tick;      /* the device's tick at its last pick */
} ws_buf;

/* A captured call's buffer, owned by its graph. */
typedef struct graph_buf {
    struct graph_buf *next;
    void *ptr;
    size_t bytes;
    int dev;
} graph_buf;

typedef struct dev_state {
    unsigned long long tick;        /* calls on the device */
    size_t failed_bytes;            /* smallest size that did not fit free memory; 0: none */
    unsigned long long failed_tick;
} dev_state;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static ws_buf *g_bufs;
static size_t g_total;              /* bytes of g_bufs and of live graph buffers */
static int g_graph_live;            /* graph buffers not yet freed */
static dev_state g_dev[OZCRT_WS_MAX_DEVICES];
static _Atomic(graph_buf *) g_released; /* pushed by graph destructors */

static size_t round_up(size_t bytes)
{
    return (bytes + OZCRT_WS_GRANULE - 1) / OZCRT_WS_GRANULE * OZCRT_WS_GRANULE;
}

static dev_state *dev_of(int dev)
{
    static dev_state none;
    if (dev >= 0 && dev < OZCRT_WS_MAX_DEVICES)
        return &g_dev[dev];
    none = (dev_state){0};
    return &none;
}

/* 1 on success; reports a failure (silently after the runtime began unloading). */
static int check(const ozcrt_ws_ops *ops, cudaError_t err, const char *what, size_t bytes)
{
    if (err == cudaSuccess)
        return 1;
    if (!ozcrt_cuda_unloading(err))
        ozcrt_error("ozcrt: workspace: %s (%zu bytes) failed: %s", what, bytes, ops->error_string(err));
    return 0;
}

/* ---- graph buffers ---- */

static void on_graph_release(void *ctx)
{
    graph_buf *g = ctx;
    graph_buf *head = atomic_load(&g_released);
    do
        g->next = head;
    while (!atomic_compare_exchange_weak(&g_released, &head, g));
}

static void drain_released(const ozcrt_ws_ops *ops)
{
    graph_buf *g = atomic_exchange(&g_released, NULL);
    while (g) {
        graph_buf *next = g->next;
        (void)check(ops, ops->free_mem(g->ptr, 0, NULL), "cudaFree of a destroyed graph's workspace", g->bytes);
        pthread_mutex_lock(&g_lock);
        g_total -= g->bytes;
        g_graph_live--;
        dev_of(g->dev)->failed_bytes = 0;
        pthread_mutex_unlock(&g_lock);
        free(g);
        g = next;
    }
}

/* ---- the table (g_lock held) ---- */

static int completed(const ozcrt_ws_ops *ops, ws_buf *b)
{
    if (!b->used)
        return 1;
    if (!b->event_ok)
        return 0;
    cudaError_t err = ops->event_query(b->event);
    if (err == cudaSuccess)
        return 1;
    if (err != cudaErrorNotReady)
        b->event_ok = 0; /* never trusted again: freed at destroy after a device sync */
    return 0;
}

static void unlink_buf(ws_buf *b)
{
    for (ws_buf **pp = &g_bufs; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            return;
        }
}

/* Frees b (unlinked by the caller), whose uses are complete or ordered before
 * the end of *s. */
static void free_buf(const ozcrt_ws_ops *ops, ws_buf *b, const cudaStream_t *s)
{
    (void)check(ops, ops->free_mem(b->ptr, b->pooled, s), "freeing a workspace", b->bytes);
    if (b->event)
        (void)check(ops, ops->event_destroy(b->event), "cudaEventDestroy of a workspace event", 0);
    g_total -= b->bytes;
    dev_of(b->dev)->failed_bytes = 0; /* memory came back: sizes may fit again */
    free(b);
}

/* Frees the idle buffers of device rq->dev that are no use to this call and
 * can go now: completed ones unpicked for OZCRT_WS_IDLE_TICKS calls (every
 * completed one when `all`), and those of this handle and stream smaller than
 * `keep_at_least` (stream order protects them). */
static void reclaim(const ozcrt_ws_ops *ops, const ozcrt_ws_request *rq, unsigned long long sid, int all,
                    size_t keep_at_least)
{
    dev_state *ds = dev_of(rq->dev);
    ws_buf **pp = &g_bufs;
    while (*pp) {
        ws_buf *b = *pp;
        int same_stream = b->handle == rq->handle && b->stream == rq->stream && b->stream_id == sid;
        int go = 0;
        if (b->dev == rq->dev && !b->leased) {
            if (same_stream && b->bytes < keep_at_least && b->pooled)
                go = 1;
            else if ((all || ds->tick - b->tick > OZCRT_WS_IDLE_TICKS) && completed(ops, b))
                go = 1;
        }
        if (go) {
            *pp = b->next;
            free_buf(ops, b, &rq->stream);
        } else {
            pp = &b->next;
        }
    }
}

/* The smallest free buffer of at least `bytes` this call may use now. */
static ws_buf *pick(const ozcrt_ws_ops *ops, const ozcrt_ws_request *rq, unsigned long long sid, size_t bytes)
{
    ws_buf *best = NULL;
    for (ws_buf *b = g_bufs; b; b = b->next) {
        if (b->handle != rq->handle || b->dev != rq->dev || b->leased || b->bytes < bytes)
            continue;
        if (best && best->bytes <= b->bytes)
            continue;
        int same_stream = b->stream == rq->stream && b->stream_id == sid;
        if (same_stream || completed(ops, b))
            best = b;
    }
    return best;
}

/* Room for `bytes` more under the cap, reclaiming idle buffers if needed. */
static int room_for(const ozcrt_ws_ops *ops, const ozcrt_ws_request *rq, unsigned long long sid, size_t bytes)
{
    if (bytes > rq->cap)
        return 0;
    if (g_total <= rq->cap - bytes)
        return 1;
    reclaim(ops, rq, sid, 1, bytes);
    return g_total <= rq->cap - bytes;
}

/* 1 when `bytes` may be asked of the device (not known to fail). */
static int worth_asking(dev_state *ds, size_t bytes)
{
    if (ds->failed_bytes && ds->tick - ds->failed_tick >= OZCRT_WS_RETRY_TICKS)
        ds->failed_bytes = 0;
    return ds->failed_bytes == 0 || bytes < ds->failed_bytes;
}

static void remember_failure(dev_state *ds, size_t bytes)
{
    if (ds->failed_bytes == 0 || bytes < ds->failed_bytes)
        ds->failed_bytes = bytes;
    ds->failed_tick = ds->tick;
}

/* A new buffer of `want` bytes (rounded up) for this call, or NULL. */
static ws_buf *alloc_buf(const ozcrt_ws_ops *ops, const ozcrt_ws_request *rq, unsigned long long sid, size_t want)
{
    size_t bytes = round_up(want);
    dev_state *ds = dev_of(rq->dev);
    if (!worth_asking(ds, bytes)) {
        ozcrt_log(2, "ozcrt: workspace of %zu bytes not asked: %zu bytes did not fit free memory", bytes,
                  ds->failed_bytes);
        return NULL;
    }
    if (!room_for(ops, rq, sid, bytes)) {
        ozcrt_log(2, "ozcrt: workspace of %zu bytes would pass OZCRT_MAX_WORKSPACE_MB", bytes);
        return NULL;
    }
    ws_buf *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->pooled = ops->pools_supported(rq->dev);
    cudaError_t err = b->pooled ? ops->malloc_async(&b->ptr, bytes, rq->stream) : ops->malloc_plain(&b->ptr, bytes);
    if (err != cudaSuccess) {
        if (err == cudaErrorMemoryAllocation)
            remember_failure(ds, bytes);
        ozcrt_log(1, "ozcrt: %s(%zu) for the workspace failed: %s", b->pooled ? "cudaMallocAsync" : "cudaMalloc",
                  bytes, ops->error_string(err));
        free(b);
        return NULL;
    }
    b->handle = rq->handle;
    b->dev = rq->dev;
    b->bytes = bytes;
    b->stream = rq->stream;
    b->stream_id = sid;
    b->next = g_bufs;
    g_bufs = b;
    g_total += bytes;
    ozcrt_log(2, "ozcrt: workspace of handle %p device %d stream %p: %zu bytes (%s)", (void *)rq->handle, rq->dev,
              (void *)rq->stream, bytes, b->pooled ? "stream-ordered" : "cudaMalloc");
    return b;
}

/* The sizes a request tries, best first (up to the first 0; one equal to
 * the one before is skipped); returns how many. */
static int request_tiers(const ozcrt_ws_request *rq, size_t tiers[OZCRT_WS_SIZES])
{
    int n = 0;
    for (int i = 0; i < OZCRT_WS_SIZES && rq->sizes[i] > 0; i++)
        if (n == 0 || rq->sizes[i] != tiers[n - 1])
            tiers[n++] = rq->sizes[i];
    return n;
}

static ozcrt_reason acquire_eager(const ozcrt_ws_ops *ops, const ozcrt_ws_request *rq, ozcrt_ws_lease *lease)
{
    unsigned long long sid = 0;
    cudaError_t err = ops->stream_id(rq->stream, &sid);
    if (err != cudaSuccess) {
        ozcrt_log(1, "ozcrt: cudaStreamGetId failed: %s", ops->error_string(err));
        return OZCRT_R_NO_WORKSPACE;
    }
    pthread_mutex_lock(&g_lock);
    dev_state *ds = dev_of(rq->dev);
    ds->tick++;
    reclaim(ops, rq, sid, 0, 0);
    ws_buf *b = NULL;
    if (rq->sizes[0] > 0) {
        size_t tiers[OZCRT_WS_SIZES];
        int n = request_tiers(rq, tiers);
        for (int i = 0; i < n && !b; i++) {
            b = pick(ops, rq, sid, tiers[i]);
            if (!b)
                b = alloc_buf(ops, rq, sid, tiers[i]); /* before any old buffer is given up */
        }
        if (!b) {
            pthread_mutex_unlock(&g_lock);
            return OZCRT_R_NO_WORKSPACE;
        }
        b->leased = 1;
        b->tick = ds->tick;
        reclaim(ops, rq, sid, 0, b->bytes); /* this stream's smaller buffers are superseded */
    }
    pthread_mutex_unlock(&g_lock);
    *lease = (ozcrt_ws_lease){b, b ? b->ptr : NULL, b ? b->bytes : 0, rq->stream, sid};
    return OZCRT_R_EMULATED;
}

/* A fresh buffer owned by the graph being captured on rq->stream. */
static ozcrt_reason acquire_captured(const ozcrt_ws_ops *ops, const ozcrt_ws_request *rq, ozcrt_ws_lease *lease)
{
    *lease = (ozcrt_ws_lease){NULL, NULL, 0, rq->stream, 0};
    if (rq->sizes[0] == 0)
        return OZCRT_R_EMULATED;
    graph_buf *g = calloc(1, sizeof *g);
    if (!g)
        return OZCRT_R_CAPTURE_NO_WS;
    g->dev = rq->dev;
    size_t sizes[OZCRT_WS_SIZES];
    int nsizes = request_tiers(rq, sizes);
    for (int i = 0; i < nsizes && !g->ptr; i++) {
        size_t bytes = round_up(sizes[i]);
        pthread_mutex_lock(&g_lock);
        dev_state *ds = dev_of(rq->dev);
        ds->tick++;
        int ok = worth_asking(ds, bytes) && bytes <= rq->cap && g_total <= rq->cap - bytes;
        if (ok)
            g_total += bytes; /* reserved */
        pthread_mutex_unlock(&g_lock);
        if (!ok)
            continue;
        cudaError_t err = ops->malloc_plain(&g->ptr, bytes);
        if (err == cudaSuccess) {
            g->bytes = bytes;
            break;
        }
        g->ptr = NULL;
        ozcrt_log(1, "ozcrt: cudaMalloc(%zu) for a captured call's workspace failed: %s", bytes,
                  ops->error_string(err));
        pthread_mutex_lock(&g_lock);
        g_total -= bytes;
        if (err == cudaErrorMemoryAllocation)
            remember_failure(dev_of(rq->dev), bytes);
        pthread_mutex_unlock(&g_lock);
    }
    if (!g->ptr) {
        free(g);
        return OZCRT_R_CAPTURE_NO_WS;
    }
    cudaError_t err = ops->graph_adopt(rq->stream, g, on_graph_release);
    if (err != cudaSuccess) {
        ozcrt_error("ozcrt: cannot tie a workspace to the graph being captured (%s): the call is forwarded",
                    ops->error_string(err));
        (void)check(ops, ops->free_mem(g->ptr, 0, NULL), "cudaFree of an unused workspace", g->bytes);
        pthread_mutex_lock(&g_lock);
        g_total -= g->bytes;
        pthread_mutex_unlock(&g_lock);
        free(g);
        return OZCRT_R_CAPTURE_NO_WS;
    }
    pthread_mutex_lock(&g_lock);
    g_graph_live++;
    pthread_mutex_unlock(&g_lock);
    ozcrt_log(2, "ozcrt: workspace of %zu bytes for a captured call, owned by its graph", g->bytes);
    lease->ptr = g->ptr;
    lease->bytes = g->bytes;
    return OZCRT_R_EMULATED;
}

ozcrt_reason ozcrt_ws_table_acquire(const ozcrt_ws_ops *ops, const ozcrt_ws_request *rq, ozcrt_ws_lease *lease)
{
    int mode = ops->relax();
    drain_released(ops);
    int capturing = 0;
    ozcrt_reason r;
    if (ops->capture_status(rq->stream, &capturing) != cudaSuccess)
        r = OZCRT_R_CAPTURE_NO_WS; /* e.g. the legacy stream while another stream captures */
    else if (capturing)
        r = acquire_captured(ops, rq, lease);
    else
        r = acquire_eager(ops, rq, lease);
    ops->restore(mode);
    return r;
}

void ozcrt_ws_table_release(const ozcrt_ws_ops *ops, ozcrt_ws_lease *lease)
{
    ws_buf *b = lease->buf;
    lease->buf = NULL;
    if (!b)
        return;
    int mode = ops->relax();
    pthread_mutex_lock(&g_lock);
    b->stream = lease->stream;
    b->stream_id = lease->stream_id;
    cudaError_t err = b->event ? cudaSuccess : ops->event_create(&b->event);
    if (err != cudaSuccess)
        b->event = NULL;
    else
        err = ops->event_record(b->event, lease->stream);
    b->used = 1;
    b->event_ok = err == cudaSuccess;
    if (!b->event_ok)
        ozcrt_error("ozcrt: workspace: recording its use failed (%s): the buffer stays with its stream",
                    ops->error_string(err));
    b->leased = 0;
    pthread_cond_broadcast(&g_cond);
    pthread_mutex_unlock(&g_lock);
    ops->restore(mode);
}

void ozcrt_ws_table_destroy_handle(const ozcrt_ws_ops *ops, cublasHandle_t handle)
{
    int any = atomic_load(&g_released) != NULL;
    pthread_mutex_lock(&g_lock);
    for (ws_buf *b = g_bufs; b && !any; b = b->next)
        any = b->handle == handle;
    pthread_mutex_unlock(&g_lock);
    if (!any) /* no CUDA call at all (the handle never had a workspace) */
        return;
    int mode = ops->relax();
    ws_buf *mine = NULL;
    pthread_mutex_lock(&g_lock);
    for (;;) {
        int leased = 0;
        for (ws_buf *b = g_bufs; b; b = b->next)
            leased |= b->handle == handle && b->leased;
        if (!leased)
            break;
        pthread_cond_wait(&g_cond, &g_lock); /* another thread is enqueueing with this handle */
    }
    for (ws_buf **pp = &g_bufs; *pp;) {
        ws_buf *b = *pp;
        if (b->handle == handle) {
            *pp = b->next;
            b->next = mine;
            mine = b;
        } else {
            pp = &b->next;
        }
    }
    pthread_mutex_unlock(&g_lock);
    int cur = -1;
    cudaError_t err = mine ? ops->get_device(&cur) : cudaSuccess;
    if (err != cudaSuccess) {
        (void)check(ops, err, "cudaGetDevice before freeing workspaces", 0);
        cur = -1;
    }
    int dev = cur;
    while (mine) {
        ws_buf *b = mine;
        mine = b->next;
        if (b->dev != dev && check(ops, ops->set_device(b->dev), "cudaSetDevice to free a workspace", b->bytes))
            dev = b->dev;
        /* Its last use, not its stream: programs often destroy their streams
         * before the handle. As cublasDestroy_v2 itself, this waits. */
        if (b->used)
            (void)check(ops, b->event_ok ? ops->event_sync(b->event) : ops->device_sync(),
                        "waiting for a workspace's last use", b->bytes);
        pthread_mutex_lock(&g_lock);
        free_buf(ops, b, NULL);
        pthread_mutex_unlock(&g_lock);
    }
    if (cur >= 0 && dev != cur)
        (void)check(ops, ops->set_device(cur), "cudaSetDevice back after freeing workspaces", 0);
    drain_released(ops);
    ops->restore(mode);
}

void ozcrt_ws_table_drain(const ozcrt_ws_ops *ops)
{
    int mode = ops->relax();
    drain_released(ops);
    ops->restore(mode);
}

ozcrt_ws_census ozcrt_ws_table_census(void)
{
    ozcrt_ws_census c = {0, 0, 0};
    pthread_mutex_lock(&g_lock);
    c.total_bytes = g_total;
    for (ws_buf *b = g_bufs; b; b = b->next)
        c.buffers++;
    c.graph_buffers = g_graph_live;
    pthread_mutex_unlock(&g_lock);
    return c;
}

void ozcrt_ws_table_lock(void)
{
    pthread_mutex_lock(&g_lock);
}

void ozcrt_ws_table_unlock(void)
{
    pthread_mutex_unlock(&g_lock);
}

void ozcrt_ws_table_reset_after_fork(void)
{
    pthread_mutex_unlock(&g_lock);
}
