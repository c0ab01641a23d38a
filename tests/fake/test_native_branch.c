/* tests/fake/test_native_branch.c: interpose/native_branch.c with the CUDA runtime, the kernels' two graph nodes and cuBLAS faked.
 *
 * Checks what the GPU run cannot show cheaply: when a branch is made and when
 * not (conditional nodes missing, the legacy API, an invalidated capture, a
 * step failing: then nothing is left, the graph destroyed, the capture ended);
 * on a capturing stream the call alone in a graph of its own, inserted into
 * the stream's capture at launch and destroyed then (or at discard);
 * that the GEMMs are captured on the shim's own handle, made once per device
 * and library, with the caller's modes and the slot's stream, between the
 * capture's begin and end on that stream, and cublasLtMatmul's calls on the
 * stream with no handle made; and that a launched branch is destroyed only
 * once its event says it has run (all of them, waiting, when 64 wait),
 * at once when its launch fails; and that every step another thread's
 * global-mode capture forbids (graphs, handles, streams, events) runs with
 * this thread in relaxed capture mode, its own mode given back after. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/native_branch.h"
#include "kernels/oz2_native_branch.h"
#include "interpose/lifecycle.h"
#include "interpose/native.h"
#include "interpose/policy.h"

/* ---- the fakes ---- */
_Thread_local int ozcrt_in_real;
static int g_supported = 1, g_capturing, g_begin_err, g_native_st, g_launch_err;
static int g_graphs, g_graph_destroyed, g_instantiated, g_streams, g_begun, g_ended, g_native_calls;
static int g_events, g_events_destroyed, g_execs_destroyed, g_synced;
static cudaStream_t g_native_stream, g_capture_stream;
static cublasHandle_t g_native_handle;
static int g_capturing_now, g_native_in_capture;
static int g_adds, g_inserts, g_insert_err; /* the kernels' two ways in */
static const void *g_insert_plan;
static cudaGraph_t g_insert_call;
static cudaStream_t g_insert_stream;
static char g_graph, g_exec, g_stream_obj[8];
static char g_event_obj[256];
static int g_event_done[256]; /* per event: 1 once "run" */

int oz2_native_branch_supported(void) { return g_supported; }
int oz2_native_branch_add(cudaGraph_t graph, const void *plan, cudaGraph_t *body)
{
    (void)plan;
    if ((void *)graph != (void *)&g_graph)
        fail_msg("the branch's nodes added to another graph");
    g_adds++;
    *body = (cudaGraph_t)(void *)(&g_graph + 1);
    return cudaSuccess;
}
int oz2_native_branch_insert(cudaStream_t stream, const void *plan, cudaGraph_t call)
{
    g_inserts++;
    g_insert_stream = stream, g_insert_plan = plan, g_insert_call = call;
    return g_insert_err;
}
int ozcrt_lifecycle_on_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
    (void)prepare, (void)parent, (void)child;
    return 0;
}
void ozcrt_log(int level, const char *fmt, ...)
{
    (void)level, (void)fmt;
}
const char *ozcrt_entry_name(ozcrt_entry ep)
{
    (void)ep;
    return "cublasDgemm_v2";
}
void ozcrt_real_remember(cublasHandle_t handle, const ozcrt_real_table *table)
{
    (void)handle, (void)table;
}
int ozcrt_native_into(void *ctx, const oz_gemm_desc *into)
{
    const ozcrt_call *c = ctx;
    (void)into;
    g_native_calls++;
    g_native_handle = c->handle;
    g_native_in_capture = g_capturing_now;
    return g_native_st;
}
static int lt_native_on(const ozcrt_call *c, const oz_gemm_desc *into, cudaStream_t s)
{
    (void)c, (void)into;
    g_native_calls++;
    g_native_stream = s;
    g_native_in_capture = g_capturing_now && s == g_capture_stream;
    return g_native_st;
}

/* this thread's capture mode; the steps a global-mode capture of another thread forbids check it */
static enum cudaStreamCaptureMode g_mode = cudaStreamCaptureModeGlobal;
static int g_exchanges;
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *m)
{
    const enum cudaStreamCaptureMode old = g_mode;
    g_mode = *m;
    *m = old;
    g_exchanges++;
    return cudaSuccess;
}
#define UNSAFE_STEP() \
    do { \
        if (g_mode != cudaStreamCaptureModeRelaxed) \
            fail_msg("%s with the thread in capture mode %d, not relaxed", __func__, (int)g_mode); \
    } while (0)

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
    (void)s;
    *st = g_capturing == 2 ? cudaStreamCaptureStatusInvalidated
          : g_capturing    ? cudaStreamCaptureStatusActive
                           : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}
cudaError_t cudaGraphCreate(cudaGraph_t *g, unsigned flags)
{
    UNSAFE_STEP();
    (void)flags;
    g_graphs++;
    *g = (cudaGraph_t)(void *)&g_graph;
    return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    UNSAFE_STEP();
    (void)g;
    g_graph_destroyed++;
    return cudaSuccess;
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    UNSAFE_STEP();
    (void)flags;
    *s = (cudaStream_t)(void *)&g_stream_obj[g_streams++ % 8];
    return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    (void)s;
    return cudaSuccess;
}
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t g, const cudaGraphNode_t *deps,
                                          const cudaGraphEdgeData *ed, size_t n, enum cudaStreamCaptureMode mode)
{
    (void)deps, (void)ed, (void)n, (void)mode;
    if ((void *)g != (void *)(g_capturing ? &g_graph : &g_graph + 1))
        fail_msg("the capture goes into another graph than the IF node's body (eager) or the call's own (capturing)");
    if (g_begin_err)
        return (cudaError_t)g_begin_err;
    g_begun++;
    g_capturing_now = 1;
    g_capture_stream = s;
    return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    if (s != g_capture_stream || !g_capturing_now)
        fail_msg("a capture ended on another stream, or none begun");
    g_ended++;
    g_capturing_now = 0;
    *g = (cudaGraph_t)(void *)(&g_graph + 1);
    return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long flags)
{
    UNSAFE_STEP();
    (void)g, (void)flags;
    g_instantiated++;
    *e = (cudaGraphExec_t)(void *)&g_exec;
    return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s)
{
    (void)e, (void)s;
    return (cudaError_t)g_launch_err;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e)
{
    UNSAFE_STEP();
    (void)e;
    g_execs_destroyed++;
    return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *ev, unsigned flags)
{
    UNSAFE_STEP();
    (void)flags;
    if (g_events >= 256)
        fail_msg("too many events");
    g_event_done[g_events] = 0;
    *ev = (cudaEvent_t)(void *)&g_event_obj[g_events++];
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
    (void)ev, (void)s;
    return cudaSuccess;
}
static int event_index(cudaEvent_t ev) { return (int)((char *)(void *)ev - g_event_obj); }
cudaError_t cudaEventQuery(cudaEvent_t ev) { return g_event_done[event_index(ev)] ? cudaSuccess : cudaErrorNotReady; }
cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    UNSAFE_STEP();
    g_synced++;
    g_event_done[event_index(ev)] = 1;
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
    UNSAFE_STEP();
    if (!g_event_done[event_index(ev)])
        fail_msg("an event destroyed before its graph has run");
    g_events_destroyed++;
    return cudaSuccess;
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
const char *cudaGetErrorString(cudaError_t e)
{
    (void)e;
    return "fake CUDA error";
}

/* the caller's cuBLAS: handles, and the settings the shim's handle takes */
static int g_created, g_pm, g_math_set, g_atomics_set, g_sms_set;
static cudaStream_t g_stream_set;
static char g_handles[16];
static cublasStatus_t f_create(cublasHandle_t *h)
{
    UNSAFE_STEP();
    *h = (cublasHandle_t)(void *)&g_handles[g_created++ % 16];
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_set_stream(cublasHandle_t h, cudaStream_t s)
{
    (void)h;
    g_stream_set = s;
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_set_pm(cublasHandle_t h, cublasPointerMode_t pm)
{
    (void)h;
    g_pm = (int)pm;
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_get_math(cublasHandle_t h, cublasMath_t *m)
{
    (void)h;
    *m = CUBLAS_PEDANTIC_MATH;
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_set_math(cublasHandle_t h, cublasMath_t m)
{
    (void)h;
    g_math_set = (int)m;
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_get_atomics(cublasHandle_t h, cublasAtomicsMode_t *m)
{
    (void)h;
    *m = CUBLAS_ATOMICS_ALLOWED;
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_set_atomics(cublasHandle_t h, cublasAtomicsMode_t m)
{
    (void)h;
    g_atomics_set = (int)m;
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_get_sms(cublasHandle_t h, int *n)
{
    (void)h;
    *n = 77;
    return CUBLAS_STATUS_SUCCESS;
}
static cublasStatus_t f_set_sms(cublasHandle_t h, int n)
{
    (void)h;
    g_sms_set = n;
    return CUBLAS_STATUS_SUCCESS;
}
static ozcrt_real_table g_real, g_real2;
static cublasHandle_t const g_caller = (cublasHandle_t)(void *)0x1234;
static char g_plan[64];

static ozcrt_call gemm_call(void)
{
    ozcrt_call c = {.ep = OZCRT_EP_cublasDgemm_v2, .handle = g_caller, .m = 8192, .n = 8192, .k = 8192, .batch = 1};
    return c;
}
static ozcrt_native_branch g_b;
static int make_b(const ozcrt_call *c, const ozcrt_real_table *real, int dev, int on_device, ozcrt_native_branch *b)
{
    oz_gemm_desc d = {0};
    d.m = c->m, d.n = c->n, d.k = c->k, d.batch = 1, d.scalars_on_device = on_device;
    const enum cudaStreamCaptureMode before = g_mode;
    const int r = ozcrt_native_branch_make(c, real, dev, &d, (cudaStream_t)(void *)0x77, g_plan, b);
    if (g_mode != before)
        fail_msg("the thread's capture mode not given back by make");
    if (b->plan != g_plan)
        fail_msg("the branch does not keep where its plan will be");
    return r;
}
/* make for an eager stream: the exec in *e */
static int make(const ozcrt_call *c, const ozcrt_real_table *real, int dev, int on_device, cudaGraphExec_t *e)
{
    const int r = make_b(c, real, dev, on_device, &g_b);
    if (g_b.call)
        fail_msg("an eager branch with a call graph to insert");
    *e = g_b.exec;
    return r;
}
static int launch_b(ozcrt_native_branch *b)
{
    const enum cudaStreamCaptureMode before = g_mode;
    const int r = ozcrt_native_branch_launch(b, NULL);
    if (g_mode != before)
        fail_msg("the thread's capture mode not given back by launch");
    if (b->exec || b->call)
        fail_msg("a launched branch still holds its graphs");
    return r;
}
static int launch(cudaGraphExec_t e)
{
    ozcrt_native_branch b = {e, NULL, g_plan};
    return launch_b(&b);
}

/* ---- the tests ---- */
static void t_not_made(void **state)
{
    (void)state;
    ozcrt_call c = gemm_call();
    cudaGraphExec_t e = (cudaGraphExec_t)(void *)1;
    g_supported = 0;
    assert_int_not_equal(make(&c, &g_real, 0, 0, &e), 0);
    assert_null(e);
    g_supported = 1;
    c.ep = OZCRT_EP_cublasDgemm; /* the legacy API */
    assert_int_not_equal(make(&c, &g_real, 0, 0, &e), 0);
    c = gemm_call();
    g_capturing = 2; /* the stream's capture invalidated */
    assert_int_not_equal(make(&c, &g_real, 0, 0, &e), 0);
    g_capturing = 0;
    assert_int_equal(g_graphs, 0); /* none of these began a graph */
    /* the call fails inside the capture: the capture ended, the graph destroyed, nothing left */
    g_native_st = CUBLAS_STATUS_NOT_SUPPORTED;
    assert_int_not_equal(make(&c, &g_real, 0, 0, &e), 0);
    assert_null(e);
    assert_int_equal(g_begun, g_ended);
    assert_int_equal(g_graphs, g_graph_destroyed);
    assert_int_equal(g_instantiated, 0);
    g_native_st = 0;
    /* the capture cannot begin */
    g_begin_err = cudaErrorStreamCaptureUnsupported;
    assert_int_not_equal(make(&c, &g_real, 0, 0, &e), 0);
    assert_null(e);
    assert_int_equal(g_graphs, g_graph_destroyed);
    g_begin_err = 0;
}

static void t_gemm(void **state)
{
    (void)state;
    ozcrt_call c = gemm_call();
    cudaGraphExec_t e = NULL;
    const int created = g_created, calls = g_native_calls, inst = g_instantiated;
    assert_int_equal(make(&c, &g_real, 2, 1, &e), 0); /* a device no test used yet */
    assert_non_null(e);
    assert_int_equal(g_instantiated, inst + 1);
    assert_int_equal(g_graphs, g_graph_destroyed); /* the exec keeps what it needs */
    assert_int_equal(g_native_calls, calls + 1);
    assert_true(g_native_in_capture);
    assert_true(g_native_handle != g_caller); /* the shim's own handle, never the caller's */
    assert_int_equal(g_created, created + 1);
    assert_ptr_equal(g_stream_set, g_capture_stream); /* the handle on the capture's stream */
    assert_int_equal(g_pm, CUBLAS_POINTER_MODE_DEVICE);
    assert_int_equal(g_math_set, CUBLAS_PEDANTIC_MATH);
    assert_int_equal(g_atomics_set, CUBLAS_ATOMICS_ALLOWED);
    assert_int_equal(g_sms_set, 77);
    const cublasHandle_t own = g_native_handle;
    /* again on the same device and library: the same handle, host pointer mode now */
    assert_int_equal(make(&c, &g_real, 2, 0, &e), 0);
    assert_int_equal(g_created, created + 1);
    assert_ptr_equal(g_native_handle, own);
    assert_int_equal(g_pm, CUBLAS_POINTER_MODE_HOST);
    /* another device, another library: a handle each */
    assert_int_equal(make(&c, &g_real, 3, 0, &e), 0);
    assert_int_equal(make(&c, &g_real2, 2, 0, &e), 0);
    assert_int_equal(g_created, created + 3);
    assert_int_equal(ozcrt_in_real, 0);
    /* a thread already in relaxed or thread-local mode keeps it */
    g_mode = cudaStreamCaptureModeThreadLocal;
    assert_int_equal(make(&c, &g_real, 4, 0, &e), 0);
    g_mode = cudaStreamCaptureModeRelaxed;
    const int ex = g_exchanges;
    assert_int_equal(make(&c, &g_real, 4, 0, &e), 0);
    assert_int_equal(g_exchanges, ex + 1); /* asked, nothing to give back */
    g_mode = cudaStreamCaptureModeGlobal;
}

static void t_lt(void **state)
{
    (void)state;
    ozcrt_call c = gemm_call();
    c.ep = OZCRT_EP_cublasLtMatmul;
    c.lt = 1;
    c.native_on = lt_native_on;
    cudaGraphExec_t e = NULL;
    const int created = g_created;
    assert_int_equal(make(&c, NULL, 0, 0, &e), 0); /* Lt calls have no cuBLAS table */
    assert_non_null(e);
    assert_int_equal(g_created, created);
    assert_true(g_native_in_capture);
    assert_ptr_equal(g_native_stream, g_capture_stream);
    c.native_on = NULL;
    assert_int_not_equal(make(&c, NULL, 0, 0, &e), 0);
}

/* A capturing stream: the call alone captured into a graph of its own (no
 * condition, no instantiation), kept until launch inserts it into the
 * stream's capture with the plan, then destroyed; an insertion's failure
 * returned (the graph destroyed all the same); a discarded one destroyed. */
static void t_capture(void **state)
{
    (void)state;
    ozcrt_call c = gemm_call();
    const int adds = g_adds, inst = g_instantiated, destroyed = g_graph_destroyed, calls = g_native_calls;
    const int events = g_events;
    g_capturing = 1;
    assert_int_equal(make_b(&c, &g_real, 0, 0, &g_b), 0);
    assert_null(g_b.exec);
    assert_ptr_equal(g_b.call, (cudaGraph_t)(void *)&g_graph);
    assert_int_equal(g_adds, adds);
    assert_int_equal(g_instantiated, inst);
    assert_int_equal(g_graph_destroyed, destroyed); /* kept for the insertion */
    assert_int_equal(g_native_calls, calls + 1);
    assert_true(g_native_in_capture);
    assert_true(g_native_handle != g_caller);
    assert_int_equal(launch_b(&g_b), 0);
    assert_int_equal(g_inserts, 1);
    assert_ptr_equal(g_insert_plan, g_plan);
    assert_ptr_equal(g_insert_call, (cudaGraph_t)(void *)&g_graph);
    assert_null(g_insert_stream);
    assert_int_equal(g_graph_destroyed, destroyed + 1);
    assert_int_equal(g_events, events); /* nothing to wait on: it runs with the caller's graph */
    /* the insertion fails: its error, the graph destroyed */
    assert_int_equal(make_b(&c, &g_real, 0, 0, &g_b), 0);
    g_insert_err = cudaErrorStreamCaptureInvalidated;
    assert_int_equal(launch_b(&g_b), cudaErrorStreamCaptureInvalidated);
    g_insert_err = 0;
    assert_int_equal(g_graph_destroyed, destroyed + 2);
    /* discarded (the path failed): destroyed, nothing inserted */
    assert_int_equal(make_b(&c, &g_real, 0, 0, &g_b), 0);
    ozcrt_native_branch_discard(&g_b);
    assert_int_equal(g_graph_destroyed, destroyed + 3);
    assert_int_equal(g_inserts, 2);
    assert_null(g_b.call);
    /* the call fails in its capture: nothing kept */
    g_native_st = CUBLAS_STATUS_NOT_SUPPORTED;
    assert_int_not_equal(make_b(&c, &g_real, 0, 0, &g_b), 0);
    assert_null(g_b.call);
    assert_int_equal(g_graph_destroyed, destroyed + 4);
    g_native_st = 0;
    g_capturing = 0;
    assert_int_equal(g_begun, g_ended);
}

static void t_retire(void **state)
{
    (void)state;
    cudaGraphExec_t e = (cudaGraphExec_t)(void *)&g_exec;
    const int destroyed = g_execs_destroyed, ev0 = g_events;
    assert_int_equal(launch(e), 0);
    assert_int_equal(launch(e), 0);
    assert_int_equal(g_execs_destroyed, destroyed); /* neither has run */
    g_event_done[ev0] = 1;                          /* the first has */
    assert_int_equal(launch(e), 0);
    assert_int_equal(g_execs_destroyed, destroyed + 1);
    assert_int_equal(g_synced, 0);
    /* 64 waiting: the next launch waits for them all */
    for (int i = 0; i < 62; i++)
        assert_int_equal(launch(e), 0);
    assert_int_equal(g_synced, 0);
    assert_int_equal(launch(e), 0);
    assert_int_equal(g_synced, 64);
    assert_int_equal(g_execs_destroyed, destroyed + 65);
    /* a failed launch: destroyed now, its error returned */
    g_launch_err = cudaErrorInvalidValue;
    assert_int_equal(launch(e), cudaErrorInvalidValue);
    assert_int_equal(g_execs_destroyed, destroyed + 66);
    g_launch_err = 0;
    g_mode = cudaStreamCaptureModeThreadLocal; /* kept across a launch */
    assert_int_equal(launch(e), 0);
    g_mode = cudaStreamCaptureModeGlobal;
    /* a branch not launched: destroyed now, in relaxed mode, the mode given back */
    ozcrt_native_branch b = {e, NULL, g_plan};
    ozcrt_native_branch_discard(&b);
    assert_int_equal(g_execs_destroyed, destroyed + 67);
    assert_int_equal(g_mode, cudaStreamCaptureModeGlobal);
}

int main(void)
{
    g_real.cublasCreate_v2 = f_create;
    g_real.cublasSetStream_v2 = f_set_stream;
    g_real.cublasSetPointerMode_v2 = f_set_pm;
    g_real.cublasGetMathMode = f_get_math;
    g_real.cublasSetMathMode = f_set_math;
    g_real.cublasGetAtomicsMode = f_get_atomics;
    g_real.cublasSetAtomicsMode = f_set_atomics;
    g_real.cublasGetSmCountTarget = f_get_sms;
    g_real.cublasSetSmCountTarget = f_set_sms;
    g_real2 = g_real;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_not_made),
        cmocka_unit_test(t_gemm),
        cmocka_unit_test(t_lt),
        cmocka_unit_test(t_capture),
        cmocka_unit_test(t_retire),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
