/* interpose/native_branch.c: automatic precision's native branch (native_branch.h). */
#include "native_branch.h"

#include <pthread.h>

#include "capture_mode.h"
#include "kernels/oz2_native_branch.h"
#include "lifecycle.h"
#include "native.h"
#include "policy.h"

/* The shim's own handles and capture streams, one per device and cuBLAS
 * library, made at first use and kept (a fork child forgets its parent's;
 * a stream kept, not one a call: cuBLAS keeps state per stream). One lock
 * for them and the captures that use them. */
#define NB_SLOTS 512
typedef struct nb_slot {
    int dev;
    const ozcrt_real_table *real;
    cublasHandle_t h;
    cudaStream_t side;
} nb_slot;
static nb_slot g_slots[NB_SLOTS];
static int g_used;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void nb_prepare(void) { pthread_mutex_lock(&g_lock); }
static void nb_parent(void) { pthread_mutex_unlock(&g_lock); }
/* Launched graphs wait here until their event says they have run (an
 * executable graph destroyed while it runs made the host wait for it). */
#define NB_RETIRED 64
static struct {
    cudaGraphExec_t exec;
    cudaEvent_t done;
} g_retired[NB_RETIRED];
static int g_nretired;

static void nb_child(void)
{
    pthread_mutex_init(&g_lock, NULL);
    g_used = 0; /* the parent's handles, streams and graphs are not the child's */
    g_nretired = 0;
}
__attribute__((constructor)) static void nb_register(void)
{
    (void)ozcrt_lifecycle_on_fork(nb_prepare, nb_parent, nb_child);
}

/* Under g_lock: the slot of the current device (dev) and the library (NULL for cublasLtMatmul's
 * calls: a stream, no handle), NULL when none can be made. */
static const nb_slot *own_slot(int dev, const ozcrt_real_table *real)
{
    for (int i = 0; i < g_used; i++)
        if (g_slots[i].dev == dev && g_slots[i].real == real)
            return &g_slots[i];
    if (g_used == NB_SLOTS || (real && !real->cublasCreate_v2))
        return NULL;
    cudaStream_t side = NULL;
    if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess)
        return NULL;
    cublasHandle_t h = NULL;
    if (real) {
        ozcrt_in_real++;
        const cublasStatus_t st = real->cublasCreate_v2(&h);
        ozcrt_in_real--;
        if (st != CUBLAS_STATUS_SUCCESS) {
            (void)cudaStreamDestroy(side);
            return NULL;
        }
        ozcrt_real_remember(h, real);
    }
    g_slots[g_used] = (nb_slot){dev, real, h, side};
    return &g_slots[g_used++];
}

/* The caller's handle settings that choose cuBLAS's kernel, on h, and its stream. */
static int mirror(const ozcrt_real_table *real, cublasHandle_t from, cublasHandle_t h, int on_device,
                  cudaStream_t stream)
{
    if (!real->cublasSetStream_v2 || !real->cublasSetPointerMode_v2)
        return -1;
    int bad = 0;
    ozcrt_in_real++;
    bad |= real->cublasSetStream_v2(h, stream) != CUBLAS_STATUS_SUCCESS;
    bad |= real->cublasSetPointerMode_v2(h, on_device ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST) !=
           CUBLAS_STATUS_SUCCESS;
    cublasMath_t math;
    if (real->cublasGetMathMode && real->cublasSetMathMode)
        bad |= real->cublasGetMathMode(from, &math) != CUBLAS_STATUS_SUCCESS ||
               real->cublasSetMathMode(h, math) != CUBLAS_STATUS_SUCCESS;
    cublasAtomicsMode_t atomics;
    if (real->cublasGetAtomicsMode && real->cublasSetAtomicsMode)
        bad |= real->cublasGetAtomicsMode(from, &atomics) != CUBLAS_STATUS_SUCCESS ||
               real->cublasSetAtomicsMode(h, atomics) != CUBLAS_STATUS_SUCCESS;
    int sms;
    if (real->cublasGetSmCountTarget && real->cublasSetSmCountTarget)
        bad |= real->cublasGetSmCountTarget(from, &sms) != CUBLAS_STATUS_SUCCESS ||
               real->cublasSetSmCountTarget(h, sms) != CUBLAS_STATUS_SUCCESS;
    ozcrt_in_real--;
    return bad ? -1 : 0;
}

static int not_made(const ozcrt_call *c, const char *why, int err)
{
    (void)cudaGetLastError(); /* a launch-configuration error of a step, not the caller's */
    ozcrt_log(2, "ozcrt: %s m=%lld n=%lld k=%lld: no native branch (%s%s%s): the plain dot product serves "
                 "uncertified plans", ozcrt_entry_name(c->ep), (long long)c->m, (long long)c->n, (long long)c->k,
              why, err ? ": " : "", err ? cudaGetErrorString((cudaError_t)err) : "");
    return 1;
}

/* The caller's call captured into `into` on the shim's stream for this
 * device and library (its handle for the GEMMs, with the caller's modes).
 * Returns 0, else a cudaError_t (or -1) with *step naming what failed, or
 * *st the call's nonzero status. */
static int capture_call(const ozcrt_call *c, const ozcrt_real_table *real, int dev, const oz_gemm_desc *d,
                        cudaGraph_t into, const char **step, int *st)
{
    ozcrt_call cc = *c;
    pthread_mutex_lock(&g_lock);
    *step = "the shim's cuBLAS handle and stream";
    const nb_slot *slot = own_slot(dev, c->lt ? NULL : real);
    int err = slot ? 0 : -1;
    if (!err && !c->lt) {
        cc.handle = slot->h;
        err = mirror(real, c->handle, slot->h, d->scalars_on_device, slot->side);
    }
    if (!err && (*step = "cudaStreamBeginCaptureToGraph",
                 err = cudaStreamBeginCaptureToGraph(slot->side, into, NULL, NULL, 0,
                                                     cudaStreamCaptureModeRelaxed)) == 0) {
        *st = c->lt ? c->native_on(&cc, d, slot->side) : ozcrt_native_into(&cc, d);
        cudaGraph_t out = NULL;
        err = (*step = "the capture of the call", cudaStreamEndCapture(slot->side, &out));
    }
    pthread_mutex_unlock(&g_lock);
    if (!err && *st)
        *step = "the call in the capture";
    return err;
}

int ozcrt_native_branch_make(const ozcrt_call *c, const ozcrt_real_table *real, int dev, const oz_gemm_desc *d,
                             cudaStream_t stream, const void *plan, ozcrt_native_branch *b)
{
    *b = (ozcrt_native_branch){NULL, NULL, plan};
    if (!oz2_native_branch_supported())
        return not_made(c, "CUDA before 12.4", 0);
    if (ozcrt_entry_legacy(c->ep) || (c->lt && !c->native_on))
        return not_made(c, "the legacy API", 0);
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    int err = cudaStreamIsCapturing(stream, &cs);
    if (err || (cs != cudaStreamCaptureStatusNone && cs != cudaStreamCaptureStatusActive))
        return not_made(c, "the stream's capture was invalidated", err);
    const int capturing = cs == cudaStreamCaptureStatusActive;
    /* graphs, a handle, a stream, a capture, an instantiation: none may break another thread's capture */
    const int mode = ozcrt_capture_relax();
    cudaGraph_t g = NULL, body = NULL;
    const char *step = "cudaGraphCreate";
    err = cudaGraphCreate(&g, 0);
    if (!err && !capturing) /* eager: the condition and the IF node here, the call its body */
        err = (step = "the condition's nodes", oz2_native_branch_add(g, plan, &body));
    int st = 0;
    if (!err)
        err = capture_call(c, real, dev, d, capturing ? g : body, &step, &st);
    if (!err && !st && !capturing)
        err = (step = "cudaGraphInstantiate", cudaGraphInstantiate(&b->exec, g, 0));
    if (!err && !st && capturing)
        b->call = g; /* inserted into the stream's capture after the path */
    else if (g)
        (void)cudaGraphDestroy(g);
    ozcrt_capture_restore(mode);
    if (err || st) {
        *b = (ozcrt_native_branch){NULL, NULL, plan};
        return not_made(c, step, err > 0 ? err : 0);
    }
    return 0;
}

/* Under g_lock: destroys the retired graphs that have run (all of them, waiting, when `all`). */
static void sweep(int all)
{
    int kept = 0;
    for (int i = 0; i < g_nretired; i++) {
        const cudaError_t q = all ? cudaEventSynchronize(g_retired[i].done) : cudaEventQuery(g_retired[i].done);
        if (q == cudaErrorNotReady) {
            g_retired[kept++] = g_retired[i];
            continue;
        }
        (void)cudaGraphExecDestroy(g_retired[i].exec);
        (void)cudaEventDestroy(g_retired[i].done);
    }
    g_nretired = kept;
}

int ozcrt_native_branch_launch(ozcrt_native_branch *b, cudaStream_t stream)
{
    const int mode = ozcrt_capture_relax(); /* events and graphs made, waited on and destroyed: as in make */
    if (b->call) { /* into the stream's capture: replayed with it */
        const int err = oz2_native_branch_insert(stream, b->plan, b->call);
        (void)cudaGraphDestroy(b->call);
        b->call = NULL;
        ozcrt_capture_restore(mode);
        return err;
    }
    cudaGraphExec_t exec = b->exec;
    b->exec = NULL;
    int err = cudaGraphLaunch(exec, stream);
    cudaEvent_t done = NULL;
    if (!err && cudaEventCreateWithFlags(&done, cudaEventDisableTiming) == cudaSuccess &&
        cudaEventRecord(done, stream) == cudaSuccess) {
        pthread_mutex_lock(&g_lock);
        sweep(0);
        if (g_nretired == NB_RETIRED)
            sweep(1);
        g_retired[g_nretired].exec = exec;
        g_retired[g_nretired++].done = done;
        pthread_mutex_unlock(&g_lock);
        ozcrt_capture_restore(mode);
        return 0;
    }
    if (done)
        (void)cudaEventDestroy(done);
    (void)cudaGraphExecDestroy(exec); /* not launched, or no event to wait on: now */
    ozcrt_capture_restore(mode);
    return err;
}

void ozcrt_native_branch_discard(ozcrt_native_branch *b)
{
    const int mode = ozcrt_capture_relax();
    if (b->exec)
        (void)cudaGraphExecDestroy(b->exec);
    if (b->call)
        (void)cudaGraphDestroy(b->call);
    b->exec = NULL, b->call = NULL;
    ozcrt_capture_restore(mode);
}
