/* interpose/workspace_table.h: the workspace bookkeeping (which buffer a call gets, when one is freed), plain C over a table of CUDA operations.
 *
 * workspace.c gives it the real CUDA operations; tests/workspace/test_workspace.c
 * drives it with a fake table on the CPU. Every operation of the table is
 * called between relax() and restore() (relaxed stream-capture mode for the
 * calling thread), so that a thread capturing a graph in global mode is never
 * invalidated by another thread's allocation, free or event query.
 *
 * The rules (the reasons are in workspace_table.c):
 *  - Outside a capture a call gets a buffer of its handle and device that is
 *    free (not leased) and either was last used on the same stream (stream
 *    order protects it) or whose last use has completed (its event, recorded
 *    after every use, has completed). Else a new buffer (cudaMallocAsync on the
 *    stream, or cudaMalloc where the device has no stream-ordered pools).
 *  - A call captured into a graph gets a fresh buffer (cudaMalloc) that
 *    belongs to the graph alone: it is freed after the graph and every
 *    executable made from it are destroyed (the destructor only queues it: the
 *    queue is drained by later calls, cublasDestroy_v2 and exit).
 *  - A new buffer is allocated before an old one is given up; a size that did
 *    not fit in free memory is remembered per device and not asked again
 *    until the table frees memory on that device (or OZCRT_WS_RETRY_TICKS
 *    calls later).
 *  - Idle buffers whose last use has completed are freed after
 *    OZCRT_WS_IDLE_TICKS calls on their device without being picked, and
 *    whenever the cap (OZCRT_MAX_WORKSPACE_MB) would be passed.
 *  - Errors of frees after the CUDA runtime began unloading
 *    (cudaErrorCudartUnloading) are silent; every other error is reported. */
#ifndef OZCRT_INTERPOSE_WORKSPACE_TABLE_H
#define OZCRT_INTERPOSE_WORKSPACE_TABLE_H

#include <stddef.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "stats.h"

#define OZCRT_WS_GRANULE ((size_t)2 << 20) /* buffers grow in 2 MiB steps */
#define OZCRT_WS_IDLE_TICKS 64             /* calls on a device before an unused, completed buffer is freed */
#define OZCRT_WS_RETRY_TICKS 1024          /* calls on a device before a size that failed is asked again */
#define OZCRT_WS_MAX_DEVICES 64
/* Sizes a request may offer (ozcrt_ws_request) */
#define OZCRT_WS_SIZES 4

/* The CUDA operations the table uses. Each returns a cudaError_t and leaves
 * no error pending for the application (cudaGetLastError is cleared). */
typedef struct ozcrt_ws_ops {
    /* This thread into relaxed capture mode (returns the previous mode), and back. */
    int (*relax)(void);
    void (*restore)(int previous);
    /* *capturing = 1 when `s` is being captured into a graph. */
    cudaError_t (*capture_status)(cudaStream_t s, int *capturing);
    cudaError_t (*stream_id)(cudaStream_t s, unsigned long long *id);
    /* 1 when `dev` supports stream-ordered allocation (cudaDevAttrMemoryPoolsSupported). */
    int (*pools_supported)(int dev);
    cudaError_t (*malloc_async)(void **p, size_t bytes, cudaStream_t s);
    cudaError_t (*malloc_plain)(void **p, size_t bytes);
    /* Frees p: pooled memory with cudaFreeAsync on *s, or, when s is NULL
     * (every use of p has completed, no live stream is known), on a stream of
     * the current device's own; plain memory with cudaFree. */
    cudaError_t (*free_mem)(void *p, int pooled, const cudaStream_t *s);
    cudaError_t (*event_create)(cudaEvent_t *ev);
    cudaError_t (*event_destroy)(cudaEvent_t ev);
    cudaError_t (*event_record)(cudaEvent_t ev, cudaStream_t s);
    cudaError_t (*event_query)(cudaEvent_t ev); /* cudaSuccess: completed; cudaErrorNotReady */
    cudaError_t (*event_sync)(cudaEvent_t ev);
    cudaError_t (*device_sync)(void);
    cudaError_t (*get_device)(int *dev);
    cudaError_t (*set_device)(int dev);
    /* Ties `ctx` to the graph being captured on `s`: release(ctx) is called
     * once the graph and every executable instantiated from it are destroyed
     * and their launches complete, from any thread; it must not call CUDA. */
    cudaError_t (*graph_adopt)(cudaStream_t s, void *ctx, void (*release)(void *ctx));
    const char *(*error_string)(cudaError_t err);
} ozcrt_ws_ops;

typedef struct ozcrt_ws_request {
    cublasHandle_t handle;
    int dev;
    cudaStream_t stream;
    /* bytes the call can run with, best first: sizes[0] the most it asks for
     * (0: it needs none), then smaller plans, the last nonzero one its least
     * need; a 0 ends the list early */
    size_t sizes[OZCRT_WS_SIZES];
    size_t cap; /* all buffers together, captured ones included */
} ozcrt_ws_request;

typedef struct ozcrt_ws_lease {
    void *buf;       /* the table's buffer; NULL for a captured call's (the graph owns it) */
    void *ptr;
    size_t bytes;
    cudaStream_t stream;
    unsigned long long stream_id;
} ozcrt_ws_lease;

/* A buffer for one call (see the rules above). Returns OZCRT_R_EMULATED with
 * the lease held (ozcrt_ws_table_release once the work is enqueued), else
 * OZCRT_R_CAPTURE_NO_WS (capturing stream) or OZCRT_R_NO_WORKSPACE. */
ozcrt_reason ozcrt_ws_table_acquire(const ozcrt_ws_ops *ops, const ozcrt_ws_request *rq, ozcrt_ws_lease *lease);

/* Records the use (an event on the call's stream) and frees the lease. */
void ozcrt_ws_table_release(const ozcrt_ws_ops *ops, ozcrt_ws_lease *lease);

/* Frees every buffer of `handle`, each after its last use completed (waits
 * for leases other threads hold on it), then the queue of graphs' buffers. */
void ozcrt_ws_table_destroy_handle(const ozcrt_ws_ops *ops, cublasHandle_t handle);

/* Frees the buffers of destroyed graphs now (for exit). */
void ozcrt_ws_table_drain(const ozcrt_ws_ops *ops);

/* For tests: bytes held (captured buffers included), buffers in the table,
 * buffers of graphs not yet freed. */
typedef struct ozcrt_ws_census {
    size_t total_bytes;
    int buffers;
    int graph_buffers;
} ozcrt_ws_census;
ozcrt_ws_census ozcrt_ws_table_census(void);

/* Locks of the table, for pthread_atfork (prepare, parent, child). */
void ozcrt_ws_table_lock(void);
void ozcrt_ws_table_unlock(void);
void ozcrt_ws_table_reset_after_fork(void);

#endif
