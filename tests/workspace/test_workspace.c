/* tests/workspace/test_workspace.c: the workspace bookkeeping (interpose/workspace_table.c) on the CPU, over a fake table of CUDA operations.
 *
 * The fake keeps what the GPU would: streams (address, id, capture state and
 * the graph being captured), allocations with a free-memory limit, events
 * that complete when the test says so, graphs that own user objects. It
 * checks, on every operation, that the calling thread is in relaxed capture
 * mode and not inside a graph's destructor. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../interpose/policy.h"
#include "../../interpose/workspace_table.h"

#define MIB ((size_t)1 << 20)
#define MAX_LIVE 4096
#define MAX_ADOPTED 256

/* ---- the log (policy.c's, replaced) ---- */
static int g_errors;
void ozcrt_log(int level, const char *fmt, ...)
{
    (void)level, (void)fmt;
}
void ozcrt_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    g_errors++;
}

/* ---- the fake CUDA ---- */
typedef struct fake_stream {
    unsigned long long id;
    int capturing;
    int graph; /* being captured into */
} fake_stream;
typedef struct fake_event {
    int pending;
} fake_event;
typedef struct live {
    void *p;
    size_t bytes;
    int pooled;
} live;

static _Thread_local int g_relaxed; /* capture mode is per thread */
static int g_in_destructor, g_pools = 1, g_complete_at_once = 1;
/* the fake's state, for the threaded test (the table calls it from many threads) */
static pthread_mutex_t g_fake_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t g_free_mem = (size_t)1 << 40;
static live g_live[MAX_LIVE];
static int g_nlive, g_mallocs, g_frees, g_plain_mallocs;
static cudaError_t g_free_status = cudaSuccess, g_sync_status = cudaSuccess;
static fake_event g_events[MAX_LIVE];
static int g_nevents;
static struct {
    int graph;
    void *ctx;
    void (*release)(void *);
} g_adopted[MAX_ADOPTED];
static int g_nadopted;
static unsigned long long g_next_id = 1;

#define S(fs) ((cudaStream_t)(fs))
#define FS(s) ((fake_stream *)(s))

static void in_relaxed(void)
{
    assert_true(g_relaxed > 0);     /* every CUDA call in relaxed capture mode */
    assert_false(g_in_destructor);  /* never from a graph's destructor */
}

static int f_relax(void)
{
    g_relaxed++;
    return 7;
}
static void f_restore(int prev)
{
    assert_int_equal(prev, 7);
    g_relaxed--;
}
static cudaError_t f_capture_status(cudaStream_t s, int *capturing)
{
    in_relaxed();
    *capturing = FS(s)->capturing;
    return cudaSuccess;
}
static cudaError_t f_stream_id(cudaStream_t s, unsigned long long *id)
{
    in_relaxed();
    assert_false(FS(s)->capturing);
    *id = FS(s)->id;
    return cudaSuccess;
}
static int f_pools_supported(int dev)
{
    (void)dev;
    in_relaxed();
    return g_pools;
}
static cudaError_t add_live(void **p, size_t bytes, int pooled)
{
    pthread_mutex_lock(&g_fake_lock);
    g_mallocs++;
    cudaError_t err = cudaErrorMemoryAllocation;
    if (bytes <= g_free_mem && g_nlive < MAX_LIVE) {
        *p = malloc(1);
        g_live[g_nlive++] = (live){*p, bytes, pooled};
        g_free_mem -= bytes;
        err = cudaSuccess;
    }
    pthread_mutex_unlock(&g_fake_lock);
    return err;
}
static cudaError_t f_malloc_async(void **p, size_t bytes, cudaStream_t s)
{
    in_relaxed();
    assert_false(FS(s)->capturing); /* would be a graph memory node */
    assert_true(g_pools);
    return add_live(p, bytes, 1);
}
static cudaError_t f_malloc_plain(void **p, size_t bytes)
{
    in_relaxed();
    g_plain_mallocs++;
    return add_live(p, bytes, 0);
}
static cudaError_t f_free_mem(void *p, int pooled, const cudaStream_t *s)
{
    in_relaxed();
    if (s)
        assert_false(FS(*s)->capturing); /* would be a graph free node */
    pthread_mutex_lock(&g_fake_lock);
    int found = -1;
    for (int i = 0; i < g_nlive && found < 0; i++)
        if (g_live[i].p == p)
            found = i;
    int was_pooled = found >= 0 ? g_live[found].pooled : -1;
    if (found >= 0) {
        g_free_mem += g_live[found].bytes;
        free(p);
        g_live[found] = g_live[--g_nlive];
        g_frees++;
    }
    pthread_mutex_unlock(&g_fake_lock);
    if (found < 0)
        fail_msg("free of %p, which is not allocated", p);
    assert_int_equal(pooled, was_pooled);
    return g_free_status;
}
static cudaError_t f_event_create(cudaEvent_t *ev)
{
    in_relaxed();
    pthread_mutex_lock(&g_fake_lock);
    int i = g_nevents < MAX_LIVE ? g_nevents++ : -1;
    pthread_mutex_unlock(&g_fake_lock);
    assert_true(i >= 0);
    *ev = (cudaEvent_t)&g_events[i];
    return cudaSuccess;
}
static cudaError_t f_event_destroy(cudaEvent_t ev)
{
    (void)ev;
    in_relaxed();
    return g_free_status;
}
static cudaError_t f_event_record(cudaEvent_t ev, cudaStream_t s)
{
    in_relaxed();
    assert_false(FS(s)->capturing);
    ((fake_event *)ev)->pending = !g_complete_at_once;
    return cudaSuccess;
}
static cudaError_t f_event_query(cudaEvent_t ev)
{
    in_relaxed();
    return ((fake_event *)ev)->pending ? cudaErrorNotReady : cudaSuccess;
}
static cudaError_t f_event_sync(cudaEvent_t ev)
{
    in_relaxed();
    ((fake_event *)ev)->pending = 0;
    return g_sync_status;
}
static cudaError_t f_device_sync(void)
{
    in_relaxed();
    return g_sync_status;
}
static cudaError_t f_get_device(int *dev)
{
    in_relaxed();
    *dev = 0;
    return cudaSuccess;
}
static cudaError_t f_set_device(int dev)
{
    (void)dev;
    in_relaxed();
    return cudaSuccess;
}
static cudaError_t f_graph_adopt(cudaStream_t s, void *ctx, void (*release)(void *))
{
    in_relaxed();
    assert_true(FS(s)->capturing);
    assert_true(g_nadopted < MAX_ADOPTED);
    g_adopted[g_nadopted].graph = FS(s)->graph;
    g_adopted[g_nadopted].ctx = ctx;
    g_adopted[g_nadopted++].release = release;
    return cudaSuccess;
}
static const char *f_error_string(cudaError_t err)
{
    return err == cudaErrorCudartUnloading ? "unloading" : "fake error";
}

static const ozcrt_ws_ops g_ops = {
    f_relax, f_restore, f_capture_status, f_stream_id, f_pools_supported, f_malloc_async, f_malloc_plain,
    f_free_mem, f_event_create, f_event_destroy, f_event_record, f_event_query, f_event_sync, f_device_sync,
    f_get_device, f_set_device, f_graph_adopt, f_error_string,
};

/* ---- helpers ---- */
static void new_stream(fake_stream *fs)
{
    pthread_mutex_lock(&g_fake_lock);
    *fs = (fake_stream){g_next_id++, 0, 0};
    pthread_mutex_unlock(&g_fake_lock);
}

/* The graph `graph` and its executables are destroyed: CUDA runs the
 * destructors of its user objects (on an internal thread). */
static void destroy_graph(int graph)
{
    g_in_destructor = 1;
    for (int i = 0; i < g_nadopted; i++)
        if (g_adopted[i].graph == graph) {
            g_adopted[i].release(g_adopted[i].ctx);
            g_adopted[i] = g_adopted[--g_nadopted];
            i--;
        }
    g_in_destructor = 0;
}

static void complete_all(void)
{
    for (int i = 0; i < g_nevents; i++)
        g_events[i].pending = 0;
}

static ozcrt_reason call(cublasHandle_t h, int dev, fake_stream *fs, size_t min, size_t full, size_t cap,
                         ozcrt_ws_lease *lease)
{
    ozcrt_ws_request rq = {h, dev, S(fs), {full, min}, cap};
    memset(lease, 0, sizeof *lease);
    return ozcrt_ws_table_acquire(&g_ops, &rq, lease);
}

/* One call, its lease released at once (the work is enqueued); returns the buffer. */
static void *use(cublasHandle_t h, int dev, fake_stream *fs, size_t min, size_t full)
{
    ozcrt_ws_lease lease;
    assert_int_equal(call(h, dev, fs, min, full, (size_t)1 << 40, &lease), OZCRT_R_EMULATED);
    assert_non_null(lease.ptr);
    assert_true(lease.bytes >= min);
    ozcrt_ws_table_release(&g_ops, &lease);
    return lease.ptr;
}

static int setup(void **state)
{
    (void)state;
    g_pools = 1;
    g_complete_at_once = 1;
    g_free_mem = (size_t)1 << 40;
    g_free_status = g_sync_status = cudaSuccess;
    g_errors = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(g_relaxed, 0); /* every relax restored */
    return 0;
}

#define H(n) ((cublasHandle_t)(uintptr_t)(0x1000 * (n)))

/* ---- the tests ---- */

/* A captured call gets a buffer of its own, owned by its graph: never the
 * eager calls' buffer, never another captured call's, another graph's or
 * another stream's; freed (by a later call, not by the destructor) once
 * its graph is gone. The first call of a handle on a capturing stream is
 * served too. */
static void test_capture_owns_its_buffer(void **state)
{
    (void)state;
    fake_stream s, s2;
    new_stream(&s);
    new_stream(&s2);
    cublasHandle_t h = H(1), fresh = H(2);
    int live0 = g_nlive;
    void *eager = use(h, 1, &s, MIB, 4 * MIB);

    s.capturing = 1, s.graph = 1; /* graph 1: two calls */
    void *g1a = use(h, 1, &s, MIB, 4 * MIB);
    void *g1b = use(h, 1, &s, MIB, 4 * MIB);
    s.capturing = 0;
    assert_ptr_not_equal(g1a, eager);
    assert_ptr_not_equal(g1b, eager);
    assert_ptr_not_equal(g1a, g1b);

    /* eager calls in between, on the capture stream and another one */
    assert_ptr_equal(use(h, 1, &s, MIB, 4 * MIB), eager);
    void *other = use(h, 1, &s2, MIB, 4 * MIB);
    assert_ptr_not_equal(other, g1a);
    assert_ptr_not_equal(other, g1b);

    s.capturing = 1, s.graph = 2; /* graph 2 */
    void *g2 = use(h, 1, &s, MIB, 4 * MIB);
    s.capturing = 0;
    assert_ptr_not_equal(g2, eager);
    assert_ptr_not_equal(g2, g1a);
    assert_ptr_not_equal(g2, g1b);
    assert_ptr_not_equal(g2, other);

    /* a capture as the very first call of a handle */
    s2.capturing = 1, s2.graph = 3;
    ozcrt_ws_lease lease;
    assert_int_equal(call(fresh, 1, &s2, MIB, 4 * MIB, (size_t)1 << 40, &lease), OZCRT_R_EMULATED);
    assert_non_null(lease.ptr);
    assert_true(lease.bytes >= 4 * MIB);
    ozcrt_ws_table_release(&g_ops, &lease);
    s2.capturing = 0;
    assert_int_equal(ozcrt_ws_table_census().graph_buffers, 4);

    /* graph 1 destroyed: its buffers go at the next call, not in the destructor */
    int before = g_nlive;
    destroy_graph(1);
    assert_int_equal(g_nlive, before);
    (void)use(h, 1, &s, MIB, 4 * MIB);
    assert_int_equal(g_nlive, before - 2);
    assert_int_equal(ozcrt_ws_table_census().graph_buffers, 2);

    /* the handle's destroy frees its buffers, not the live graphs' */
    ozcrt_ws_table_destroy_handle(&g_ops, h);
    ozcrt_ws_table_destroy_handle(&g_ops, fresh);
    assert_int_equal(g_nlive, live0 + 2);
    destroy_graph(2);
    destroy_graph(3);
    ozcrt_ws_table_drain(&g_ops);
    assert_int_equal(g_nlive, live0);
    assert_int_equal(ozcrt_ws_table_census().total_bytes, 0);
    assert_int_equal(g_errors, 0);
}

/* 1000 streams made and destroyed one after the other (the address of each
 * may be the last one's), one call on each, the program waiting for each:
 * one buffer in all. */
static void test_stream_churn_is_flat(void **state)
{
    (void)state;
    cublasHandle_t h = H(3);
    int live0 = g_nlive, mallocs0 = g_mallocs;
    fake_stream s;
    for (int i = 0; i < 1000; i++) {
        new_stream(&s); /* same address, new id */
        (void)use(h, 2, &s, MIB, 8 * MIB);
        complete_all();
    }
    assert_int_equal(g_nlive - live0, 1);
    assert_int_equal(g_mallocs - mallocs0, 1);
    assert_int_equal(ozcrt_ws_table_census().total_bytes, 8 * MIB);
    ozcrt_ws_table_destroy_handle(&g_ops, h);
    assert_int_equal(g_nlive, live0);
}

/* A buffer whose last use has not completed is not given to another stream;
 * its own stream reuses it at once; once complete, any stream may; buffers
 * left idle are freed after OZCRT_WS_IDLE_TICKS calls. */
static void test_in_flight_buffers(void **state)
{
    (void)state;
    cublasHandle_t h = H(4);
    g_complete_at_once = 0;
    fake_stream a, b, c;
    new_stream(&a);
    new_stream(&b);
    new_stream(&c);
    void *pa = use(h, 3, &a, MIB, 4 * MIB);
    assert_ptr_equal(use(h, 3, &a, MIB, 4 * MIB), pa);  /* stream order */
    void *pb = use(h, 3, &b, MIB, 4 * MIB);
    assert_ptr_not_equal(pb, pa);                        /* a's work may still run */
    void *pc = use(h, 3, &c, MIB, 4 * MIB);
    assert_ptr_not_equal(pc, pa);
    assert_ptr_not_equal(pc, pb);
    complete_all();
    g_complete_at_once = 1;
    fake_stream d;
    new_stream(&d);
    void *pd = use(h, 3, &d, MIB, 4 * MIB);
    assert_true(pd == pa || pd == pb || pd == pc);      /* a completed buffer serves a new stream */
    assert_int_equal(ozcrt_ws_table_census().buffers, 3);
    for (int i = 0; i < OZCRT_WS_IDLE_TICKS + 2; i++)
        assert_ptr_equal(use(h, 3, &d, MIB, 4 * MIB), pd);
    assert_int_equal(ozcrt_ws_table_census().buffers, 1); /* the idle two are gone */
    ozcrt_ws_table_destroy_handle(&g_ops, h);
}

/* The full size fits the cap but not free memory: the smaller buffer is kept
 * and used, nothing is freed, and the full size is not asked again at every
 * call. A larger buffer is allocated while the old one is still held. */
static void test_no_churn_when_memory_is_short(void **state)
{
    (void)state;
    cublasHandle_t h = H(5);
    fake_stream s;
    new_stream(&s);
    void *small = use(h, 4, &s, 2 * MIB, 2 * MIB); /* an earlier, smaller call */
    int live_small = g_nlive;
    g_free_mem = 6 * MIB; /* 8 MiB will not fit, 4 MiB would */
    int mallocs0 = g_mallocs, frees0 = g_frees;
    assert_ptr_equal(use(h, 4, &s, 2 * MIB, 8 * MIB), small);
    assert_int_equal(g_mallocs - mallocs0, 1); /* the 8 MiB attempt */
    assert_int_equal(g_frees, frees0);
    for (int i = 0; i < 10; i++)
        assert_ptr_equal(use(h, 4, &s, 2 * MIB, 8 * MIB), small);
    assert_int_equal(g_mallocs - mallocs0, 1); /* not asked again */
    assert_int_equal(g_frees, frees0);
    /* a call that can grow: the new buffer comes before the old is freed */
    void *mid = use(h, 4, &s, 2 * MIB, 4 * MIB);
    assert_ptr_not_equal(mid, small);
    assert_int_equal(g_nlive, live_small);     /* the 2 MiB one freed (stream-ordered) after */
    assert_int_equal(g_frees, frees0 + 1);
    ozcrt_ws_table_destroy_handle(&g_ops, h);
    g_free_mem = (size_t)1 << 40;
}

/* No stream-ordered pools on the device: cudaMalloc, never cudaMallocAsync
 * (the fake fails that), and a superseded buffer is freed only once complete. */
static void test_no_pools_uses_cudamalloc(void **state)
{
    (void)state;
    cublasHandle_t h = H(6);
    g_pools = 0;
    g_complete_at_once = 0;
    fake_stream s;
    new_stream(&s);
    int plain0 = g_plain_mallocs, live0 = g_nlive;
    void *a = use(h, 5, &s, MIB, 2 * MIB);
    void *b = use(h, 5, &s, MIB, 6 * MIB);
    assert_ptr_not_equal(a, b);
    assert_int_equal(g_plain_mallocs - plain0, 2);
    assert_int_equal(g_nlive - live0, 2); /* a may still be in use: not freed */
    complete_all();
    for (int i = 0; i < OZCRT_WS_IDLE_TICKS + 2; i++)
        assert_ptr_equal(use(h, 5, &s, MIB, 6 * MIB), b);
    complete_all();
    (void)use(h, 5, &s, MIB, 6 * MIB);
    assert_int_equal(g_nlive - live0, 1);
    ozcrt_ws_table_destroy_handle(&g_ops, h);
    assert_int_equal(g_nlive, live0);
}

/* The cap holds for eager and captured calls. */
static void test_cap(void **state)
{
    (void)state;
    cublasHandle_t h = H(7);
    fake_stream s;
    new_stream(&s);
    ozcrt_ws_lease lease;
    assert_int_equal(call(h, 6, &s, 2 * MIB, 16 * MIB, 4 * MIB, &lease), OZCRT_R_EMULATED);
    assert_true(lease.bytes >= 2 * MIB && lease.bytes <= 4 * MIB);
    ozcrt_ws_table_release(&g_ops, &lease);
    assert_int_equal(call(h, 6, &s, 8 * MIB, 16 * MIB, 4 * MIB, &lease), OZCRT_R_NO_WORKSPACE);
    s.capturing = 1, s.graph = 9;
    assert_int_equal(call(h, 6, &s, 4 * MIB, 16 * MIB, 4 * MIB, &lease), OZCRT_R_CAPTURE_NO_WS);
    s.capturing = 0;
    ozcrt_ws_table_destroy_handle(&g_ops, h);
    assert_int_equal(ozcrt_ws_table_census().total_bytes, 0);
}

/* A request's sizes are tried best first: a smaller plan (the one within
 * the cap, ozaki2's bounded one) is what it gets when the full one passes
 * the cap or the device's free memory, eager or captured; the least only
 * when nothing larger can be had. */
static void test_fallback_sizes(void **state)
{
    (void)state;
    cublasHandle_t h = H(11), h2 = H(12);
    fake_stream s;
    new_stream(&s);
    ozcrt_ws_lease lease;
    ozcrt_ws_request over_cap = {h, 10, S(&s), {16 * MIB, 6 * MIB, 2 * MIB}, 8 * MIB};
    assert_int_equal(ozcrt_ws_table_acquire(&g_ops, &over_cap, &lease), OZCRT_R_EMULATED);
    assert_true(lease.bytes >= 6 * MIB && lease.bytes <= 8 * MIB);
    ozcrt_ws_table_release(&g_ops, &lease);
    ozcrt_ws_table_destroy_handle(&g_ops, h);

    g_free_mem = 10 * MIB; /* the full 16 MiB does not fit the device, 6 MiB does */
    ozcrt_ws_request short_mem = {h2, 10, S(&s), {16 * MIB, 6 * MIB, 2 * MIB}, (size_t)1 << 40};
    assert_int_equal(ozcrt_ws_table_acquire(&g_ops, &short_mem, &lease), OZCRT_R_EMULATED);
    assert_true(lease.bytes >= 6 * MIB && lease.bytes < 16 * MIB);
    ozcrt_ws_table_release(&g_ops, &lease);
    ozcrt_ws_table_destroy_handle(&g_ops, h2);
    g_free_mem = 3 * MIB; /* now only the least fits */
    assert_int_equal(ozcrt_ws_table_acquire(&g_ops, &short_mem, &lease), OZCRT_R_EMULATED);
    assert_true(lease.bytes >= 2 * MIB && lease.bytes < 6 * MIB);
    ozcrt_ws_table_release(&g_ops, &lease);
    ozcrt_ws_table_destroy_handle(&g_ops, h2);
    g_free_mem = (size_t)1 << 40;

    s.capturing = 1, s.graph = 10; /* a captured call under the cap */
    assert_int_equal(ozcrt_ws_table_acquire(&g_ops, &over_cap, &lease), OZCRT_R_EMULATED);
    assert_true(lease.bytes >= 6 * MIB && lease.bytes <= 8 * MIB);
    ozcrt_ws_table_release(&g_ops, &lease);
    s.capturing = 0;
    destroy_graph(10);
    ozcrt_ws_table_drain(&g_ops);
    assert_int_equal(ozcrt_ws_table_census().total_bytes, 0);
    assert_int_equal(g_errors, 0);
}

/* Frees after the CUDA runtime began unloading say nothing; other failures are reported. */
static void test_unloading_is_silent(void **state)
{
    (void)state;
    cublasHandle_t h = H(8);
    fake_stream s;
    new_stream(&s);
    (void)use(h, 7, &s, MIB, 2 * MIB);
    s.capturing = 1, s.graph = 11;
    (void)use(h, 7, &s, MIB, 2 * MIB);
    s.capturing = 0;
    g_free_status = g_sync_status = cudaErrorCudartUnloading;
    destroy_graph(11);
    ozcrt_ws_table_destroy_handle(&g_ops, h);
    assert_int_equal(g_errors, 0);
    g_free_status = g_sync_status = cudaErrorIllegalAddress;
    (void)use(h, 7, &s, MIB, 2 * MIB);
    ozcrt_ws_table_destroy_handle(&g_ops, h);
    assert_true(g_errors > 0);
}

/* A buffer leased (its work being enqueued) is not given to another call,
 * even on the same stream. */
static void test_leased_is_not_shared(void **state)
{
    (void)state;
    cublasHandle_t h = H(10);
    fake_stream s;
    new_stream(&s);
    (void)use(h, 9, &s, MIB, 2 * MIB);
    ozcrt_ws_lease a, b;
    assert_int_equal(call(h, 9, &s, MIB, 2 * MIB, (size_t)1 << 40, &a), OZCRT_R_EMULATED);
    assert_int_equal(call(h, 9, &s, MIB, 2 * MIB, (size_t)1 << 40, &b), OZCRT_R_EMULATED);
    assert_ptr_not_equal(a.ptr, b.ptr);
    ozcrt_ws_table_release(&g_ops, &a);
    ozcrt_ws_table_release(&g_ops, &b);
    ozcrt_ws_table_destroy_handle(&g_ops, h);
}

/* Threads sharing one handle, each on its own streams, while the main
 * thread waits: every lease is its own buffer while held (two threads never
 * get the same one at once), and destroy frees everything. */
#define THREADS 4
#define ROUNDS 2000
static cublasHandle_t g_shared = H(9);
static void *busy_ptrs[THREADS];
static pthread_mutex_t g_busy_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_overlaps;

static void *worker(void *arg)
{
    int me = (int)(intptr_t)arg;
    fake_stream s[2];
    new_stream(&s[0]);
    new_stream(&s[1]);
    for (int r = 0; r < ROUNDS; r++) {
        ozcrt_ws_lease lease;
        ozcrt_ws_request rq = {g_shared, 8, S(&s[r % 2]), {(size_t)(1 + r % 3) * MIB, MIB}, (size_t)1 << 40};
        if (ozcrt_ws_table_acquire(&g_ops, &rq, &lease) != OZCRT_R_EMULATED)
            continue;
        pthread_mutex_lock(&g_busy_lock);
        for (int t = 0; t < THREADS; t++)
            g_overlaps += t != me && busy_ptrs[t] == lease.ptr;
        busy_ptrs[me] = lease.ptr;
        pthread_mutex_unlock(&g_busy_lock);
        for (int y = 0; y < 3; y++) /* "enqueueing the work": others run meanwhile */
            sched_yield();
        pthread_mutex_lock(&g_busy_lock);
        busy_ptrs[me] = NULL;
        pthread_mutex_unlock(&g_busy_lock);
        ozcrt_ws_table_release(&g_ops, &lease);
    }
    return NULL;
}

static void test_threads_share_a_handle(void **state)
{
    (void)state;
    int live0 = g_nlive;
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(g_overlaps, 0);
    assert_true(ozcrt_ws_table_census().buffers >= 1);
    ozcrt_ws_table_destroy_handle(&g_ops, g_shared);
    assert_int_equal(g_nlive, live0);
    assert_int_equal(ozcrt_ws_table_census().total_bytes, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_capture_owns_its_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_churn_is_flat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_in_flight_buffers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_churn_when_memory_is_short, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_pools_uses_cudamalloc, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fallback_sizes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unloading_is_silent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leased_is_not_shared, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_share_a_handle, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
