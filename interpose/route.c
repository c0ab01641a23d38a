/* interpose/route.c: "not for us? pass through", then the Phase 22 or the ozaki2 GPU path on the handle's stream.
 *
 * Checks in order, cheapest first; the first that fails names the reason the
 * call is forwarded: nested in a forwarded call, mode off, real cuBLAS
 * missing, Ex types, invalid arguments (cuBLAS must give its own status),
 * m/n/batch == 0, k == 0, sizes below the thresholds, host alpha == 0, the
 * handle's math mode PEDANTIC or FP64_EMULATED_FIXEDPOINT (like
 * CUBLAS_COMPUTE_64F_PEDANTIC: the caller asked for cuBLAS's own numerics),
 * no GPU or one below sm_80, no kernel image in this build for the device,
 * no workspace; a launch that fails is forwarded too. Nothing on this path synchronises
 * the host. In the ozaki2 mode a call whose plan needs more than the 20
 * engine moduli (ozaki2.md step 1: OZCRT_BITS too high for its k) is
 * forwarded (bits-unreachable), checked right after the thresholds, and
 * then so is a call whose predicted speed-up over native DGEMM is below
 * OZCRT_MIN_SPEEDUP (slower-than-native: speed_model.h). A complex call
 * (ZGEMM: the Z entry points, the Ex ones with CUDA_C_64F, cublasLtMatmul
 * on complex layouts) is routed the same way, its element type a parameter
 * of the checks, the plan (oz2z_gemm_moduli), the speed prediction
 * (ozcrt_oz2z_speedup) and the descriptor; only the ozaki2 mode computes
 * it (automatic precision or a fixed OZCRT_BITS): right after the
 * thresholds, the phase22 mode forwards it (complex-phase22). A call of the
 * legacy API (route.h) has no handle to ask: host scalars, default math,
 * and the legacy context's state as the shim saw it set up
 * (legacy-context). A grouped call is routed group by group after a gate
 * on the whole call (route.h). */
#include "route.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime_api.h>

#include "compare/compare.h"
#include "kernels/oz2_gemm.h"
#include "kernels/ozcrt_gemm.h"
#include "kernels/oz2_native_branch.h"
#include "native.h"
#include "native_branch.h"
#include "speed_model.h"
#include "lifecycle.h"
#include "plan_counts.h"
#include "policy.h"
#include "real.h"
#include "workspace.h"

#define OZCRT_MIN_CC_MAJOR 8
#define OZCRT_MAX_CACHED_DEVICES 64

static int valid_op(cublasOperation_t op)
{
    return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static int64_t max1(int64_t x)
{
    return x > 1 ? x : 1;
}

/* The cublasGemmAlgo_t values cuBLAS 12 and 13 document: CUBLAS_GEMM_DEFAULT
 * (-1), CUBLAS_GEMM_ALGO0..23 (0..23), CUBLAS_GEMM_DEFAULT_TENSOR_OP (99)
 * and CUBLAS_GEMM_ALGO0..15_TENSOR_OP (100..115). Any other value goes to
 * cuBLAS, whose answer (CUBLAS_STATUS_INVALID_VALUE, or a value of a newer
 * cuBLAS) is then the caller's. */
static int known_algo(int algo)
{
    return algo == -1 || (algo >= 0 && algo <= 23) || (algo >= 99 && algo <= 115);
}

ozcrt_reason ozcrt_check_args(const ozcrt_call *c)
{
    /* the Ex types: all three the call's element type (ozcrt_ex_elem), FP64 compute */
    const cudaDataType want = c->elem == OZ_ELEM_COMPLEX ? CUDA_C_64F : CUDA_R_64F;
    if (c->typed && (c->Atype != want || c->Btype != want || c->Ctype != want || c->compute != CUBLAS_COMPUTE_64F))
        return OZCRT_R_TYPE;
    if (!c->handle || !valid_op(c->transa) || !valid_op(c->transb))
        return OZCRT_R_INVALID_ARGS;
    if (c->typed && !c->lt && !known_algo((int)c->algo))
        return OZCRT_R_INVALID_ARGS; /* let cuBLAS judge the algo */
    if (c->m < 0 || c->n < 0 || c->k < 0 || c->batch < 0)
        return OZCRT_R_INVALID_ARGS;
    int64_t rows_a = c->transa == CUBLAS_OP_N ? c->m : c->k;
    int64_t rows_b = c->transb == CUBLAS_OP_N ? c->k : c->n;
    if (c->lda < max1(rows_a) || c->ldb < max1(rows_b) || c->ldc < max1(c->m))
        return OZCRT_R_INVALID_ARGS;
    if (!c->alpha || !c->beta)
        return OZCRT_R_INVALID_ARGS;
    if (c->m == 0 || c->n == 0 || c->batch == 0)
        return OZCRT_R_EMPTY;
    if (c->k == 0)
        return OZCRT_R_TRIVIAL;
    if (ozcrt_entry_arrays(c->ep) ? (!c->Aarray || !c->Barray || !c->Carray) : (!c->A || !c->B || !c->C))
        return OZCRT_R_INVALID_ARGS; /* let cuBLAS decide what a NULL matrix means */
    return OZCRT_R_EMULATED;
}

/* The legacy API's context (route.h), one state so that it is read whole:
 * OFF (no cublasInit seen, or a cublasShutdown since), OFF_EARLY (OFF, and
 * a stream was set meanwhile: whether cuBLAS keeps it across cublasInit
 * the shim cannot see), READY (its stream is g_legacy_stream), UNSURE
 * (initialised, stream not known until the next cublasSetKernelStream). */
enum { LEGACY_OFF, LEGACY_OFF_EARLY, LEGACY_READY, LEGACY_UNSURE };
static char g_legacy_key; /* its address is the stand-in handle */
static atomic_int g_legacy_state, g_legacy_dev;
static _Atomic(uintptr_t) g_legacy_stream;

cublasHandle_t ozcrt_legacy_handle(void)
{
    return (cublasHandle_t)(void *)&g_legacy_key;
}

void ozcrt_legacy_on_init(void)
{
    int dev = -1;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
        dev = -1; /* no device: its calls are forwarded */
    }
    atomic_store(&g_legacy_dev, dev);
    const int was = atomic_load(&g_legacy_state);
    if (was == LEGACY_OFF)
        atomic_store(&g_legacy_stream, (uintptr_t)0); /* a new context: the NULL stream */
    /* once a stream was set, a new cublasInit may or may not keep it */
    const int known = was == LEGACY_OFF || (was == LEGACY_READY && atomic_load(&g_legacy_stream) == 0);
    atomic_store(&g_legacy_state, known ? LEGACY_READY : LEGACY_UNSURE);
}

void ozcrt_legacy_on_shutdown(void)
{
    atomic_store(&g_legacy_state, LEGACY_OFF);
    ozcrt_on_destroy(ozcrt_legacy_handle());
}

void ozcrt_legacy_on_stream(cudaStream_t stream)
{
    atomic_store(&g_legacy_stream, (uintptr_t)stream);
    const int was = atomic_load(&g_legacy_state);
    atomic_store(&g_legacy_state, was == LEGACY_OFF || was == LEGACY_OFF_EARLY ? LEGACY_OFF_EARLY : LEGACY_READY);
}

/* The GPU: count once per process, compute capability once per device. */
static int g_device_count;
static pthread_once_t g_count_once = PTHREAD_ONCE_INIT;
static atomic_int g_cc_major[OZCRT_MAX_CACHED_DEVICES]; /* 0: not asked yet */

static void count_devices(void)
{
    cudaError_t err = cudaGetDeviceCount(&g_device_count);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        ozcrt_log(1, "ozcrt: no usable GPU (cudaGetDeviceCount: %s): every call is forwarded", cudaGetErrorString(err));
        g_device_count = 0;
    }
}

/* Whether this build has a kernel image the device can run (machine code or
 * PTX: a GPU newer than the build may have neither), once per device. */
static atomic_int g_kernel_image[OZCRT_MAX_CACHED_DEVICES]; /* 0: not asked yet, 1: yes, 2: no */

static int has_kernel_image(int dev)
{
    int known = dev < OZCRT_MAX_CACHED_DEVICES ? atomic_load(&g_kernel_image[dev]) : 0;
    if (known)
        return known == 1;
    int ok = oz_gemm_device_supported(dev) == 1;
    if (!ok)
        ozcrt_log(1, "ozcrt: device %d: this libozcrt.so has no kernel image it can run (build it with a -gencode "
                     "for this GPU): its calls are forwarded (no-kernel-image)", dev);
    if (dev < OZCRT_MAX_CACHED_DEVICES)
        atomic_store(&g_kernel_image[dev], ok ? 1 : 2);
    return ok;
}

static ozcrt_reason check_gpu(int *dev)
{
    pthread_once(&g_count_once, count_devices);
    if (g_device_count <= 0)
        return OZCRT_R_NO_GPU;
    cudaError_t err = cudaGetDevice(dev);
    if (err != cudaSuccess || *dev < 0) {
        (void)cudaGetLastError();
        return OZCRT_R_NO_GPU;
    }
    int major = *dev < OZCRT_MAX_CACHED_DEVICES ? atomic_load(&g_cc_major[*dev]) : 0;
    if (major == 0) {
        err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, *dev);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            return OZCRT_R_NO_GPU;
        }
        if (*dev < OZCRT_MAX_CACHED_DEVICES)
            atomic_store(&g_cc_major[*dev], major);
    }
    if (major < OZCRT_MIN_CC_MAJOR)
        return OZCRT_R_OLD_GPU;
    return has_kernel_image(*dev) ? OZCRT_R_EMULATED : OZCRT_R_NO_KERNEL_IMAGE;
}

static int has_real(const ozcrt_real_table *r, ozcrt_entry ep)
{
    if (!r->cublasGetStream_v2 || !r->cublasGetPointerMode_v2)
        return 0;
    switch (ep) {
#define OZCRT_X_HAS(name) \
    case OZCRT_EP_##name: \
        return r->name != NULL;
        OZCRT_INTERCEPTED(OZCRT_X_HAS)
#undef OZCRT_X_HAS
    default:
        return 0;
    }
}

static oz_gemm_desc make_desc(const ozcrt_call *c, int on_device)
{
    oz_gemm_desc d = {
        .transa = (int)c->transa, .transb = (int)c->transb,
        .m = c->m, .n = c->n, .k = c->k,
        .A = c->A, .lda = c->lda, .strideA = c->strideA,
        .B = c->B, .ldb = c->ldb, .strideB = c->strideB,
        .C = c->C, .ldc = c->ldc, .strideC = c->strideC,
        .Aarray = (const double *const *)c->Aarray,
        .Barray = (const double *const *)c->Barray,
        .Carray = (double *const *)c->Carray,
        .batch = c->batch,
        .alpha = c->alpha, .beta = c->beta,
        .scalars_on_device = on_device,
        .elem = c->elem,
    };
    return d;
}

/* The shadow report at exit, registered after the CUDA runtime has started
 * (check_gpu ran), so that it runs before the runtime's own teardown. */
static pthread_once_t g_report_once = PTHREAD_ONCE_INIT;
static void report_at_exit(void)
{
    if (ozcrt_lifecycle_is_fork_child())
        return; /* the report is the parent's (lifecycle.h) */
    const ozcrt_policy *p = ozcrt_policy_get();
    ozcmp_report_at_exit(p->log_level > 0 ? p->log : NULL);
}
static void register_report(void)
{
    if (atexit(report_at_exit) != 0)
        ozcrt_error("ozcrt: atexit failed: no shadow report will be written");
}

/* The emulated paths as shadow mode runs them (compare/compare.h's ozcmp_path). */
static int run_phase22(void *ctx, const oz_gemm_desc *d, void *ws, size_t ws_bytes, void *stream)
{
    (void)ctx;
    return oz_gemm_run(d, ws, ws_bytes, stream);
}

static int run_ozaki2(void *ctx, const oz_gemm_desc *d, void *ws, size_t ws_bytes, void *stream)
{
    return oz2_gemm_run(d, *(const int *)ctx, ws, ws_bytes, stream);
}

/* A call's emulated path: its entry point (ctx: the ozaki2 bits) and the
 * workspaces it can run with, best first (ozcrt_workspace_acquire): the most
 * it asks for; the best plan within OZCRT_MAX_WORKSPACE_MB when that is
 * less; for ozaki2, whose most is the whole call, the plan within the Phase
 * 22 bound; its least need. */
typedef struct gpu_path {
    const char *name;
    int (*run)(void *ctx, const oz_gemm_desc *d, void *ws, size_t ws_bytes, void *stream);
    void *ctx;
    size_t ws[OZCRT_WS_SIZES];
} gpu_path;

_Static_assert(OZ_GEMM_WS_SIZES == OZCRT_WS_SIZES, "the paths' sizes are the workspace table's");

static gpu_path path_of(int ozaki2, int *bits, const oz_gemm_desc *d, size_t cap)
{
    gpu_path p = {"oz_gemm_run", run_phase22, NULL, {0}};
    if (ozaki2) {
        p = (gpu_path){"oz2_gemm_run", run_ozaki2, bits, {0}};
        oz2_gemm_workspace_sizes(d, *bits, cap, p.ws);
    } else {
        oz_gemm_workspace_sizes(d, cap, p.ws);
    }
    return p;
}

/* A launch error comes back from the launch that failed, and the kernels
 * that write C come last: the deterministic failures (no image, too many
 * resources) stop the first launch of the first group, before C is
 * touched, so cuBLAS can serve the caller's call as it is. A sticky error
 * (the context is lost) fails cuBLAS too, and its status is what the
 * caller gets. */
static ozcrt_reason launch_failed(const ozcrt_call *c, const char *what, int err)
{
    (void)cudaGetLastError(); /* clears a launch error; a sticky one stays */
    ozcrt_error("ozcrt: %s m=%lld n=%lld k=%lld batch=%lld: %s failed: %s; the call goes to cuBLAS (launch-failed)",
                ozcrt_entry_name(c->ep), (long long)c->m, (long long)c->n, (long long)c->k, (long long)c->batch, what,
                cudaGetErrorString((cudaError_t)err));
    return OZCRT_R_LAUNCH_FAILED;
}

/* Everything after the pure checks; *status set when the call is taken.
 * *nmod: the ozaki2 plan's moduli count (0: Phase 22, or not planned);
 * *nsplit: a complex plan's split moduli (0 otherwise). */
static ozcrt_reason execute(const ozcrt_call *c, const ozcrt_settings *s, const ozcrt_real_table *real,
                            cublasStatus_t *status, int *nmod, int *nsplit)
{
    if (c->m < s->min_m || c->n < s->min_n || c->k < s->min_k)
        return OZCRT_R_SMALL;
    const int ozaki2 = s->mode == OZCRT_MODE_OZAKI2;
    const int cplx = c->elem == OZ_ELEM_COMPLEX;
    int oz2_w = 0; /* the ozaki2 plan's integer width (shadow mode's bound) */
    const int oz2_auto = ozaki2 && s->bits < 0;
    if (cplx && !ozaki2)
        return OZCRT_R_COMPLEX_PHASE22; /* Phase 22 has no complex path */
    if (ozaki2) {
        /* automatic precision: N is chosen on the GPU; the prediction takes
         * what data even within rows and columns gets (speed_model.h: the
         * fixed plan at the same bits or a modulus more, and the estimate;
         * complex: the fixed plan and OZCRT_OZ2Z_AUTO_EXTRA_SPLIT split
         * moduli more) */
        const int plan_bits = oz2_auto ? -s->bits : s->bits;
        if (cplx)
            *nmod = oz2z_gemm_moduli(c->k, plan_bits, &oz2_w, nsplit);
        else
            *nmod = oz2_gemm_moduli(c->k, plan_bits, &oz2_w);
        if (oz2_auto && c->k >= (cplx ? INT64_C(1) << 32 : INT64_C(1) << 33)) /* the estimate's sums' bound */
            *nmod = 0;
        if (*nmod == 0) {
            ozcrt_log(2, "ozcrt: ozaki2 bits=%d k=%lld%s: more than 20 moduli needed", s->bits, (long long)c->k,
                      cplx ? " (complex)" : "");
            return OZCRT_R_BITS_UNREACHABLE;
        }
        /* ozaki2 is for speed at FP64 accuracy: a call it would slow down runs natively */
        const int64_t min_pct = ozcrt_min_speedup_pct(s);
        if (min_pct > 0) {
            const double sp =
                cplx ? ozcrt_oz2z_speedup(c->m, c->n, c->k, c->batch, *nsplit + OZCRT_OZ2Z_AUTO_EXTRA_SPLIT * oz2_auto)
                : oz2_auto ? ozcrt_oz2_auto_speedup(c->m, c->n, c->k, c->batch, plan_bits, *nmod)
                           : ozcrt_oz2_speedup(c->m, c->n, c->k, c->batch, *nmod);
            if (sp * 100.0 < (double)min_pct) {
                ozcrt_log(2, "ozcrt: ozaki2 m=%lld n=%lld k=%lld batch=%lld N=%d%s: predicted speed-up %.2f < %.2f",
                          (long long)c->m, (long long)c->n, (long long)c->k, (long long)c->batch, *nmod,
                          cplx ? " (complex)" : "", sp, (double)min_pct / 100.0);
                return OZCRT_R_SLOWER;
            }
        }
    }
    const int legacy = ozcrt_entry_legacy(c->ep); /* no handle to ask: scalars by value, default math */
    const int ask = !legacy && !c->lt;            /* cublasLtMatmul: its own stream and pointer mode */
    cublasPointerMode_t pm = c->lt && c->device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST;
    if (ask && real->cublasGetPointerMode_v2(c->handle, &pm) != CUBLAS_STATUS_SUCCESS)
        return OZCRT_R_HANDLE_QUERY;
    int on_device = pm == CUBLAS_POINTER_MODE_DEVICE;
    if (!on_device && ozcrt_scalar_is_zero(c->alpha, c->elem))
        return OZCRT_R_TRIVIAL;
    /* an Inf or NaN alpha or beta: where cuBLAS puts Inf and where NaN then
     * depends on the order of its own operations, so it answers itself */
    if (!on_device && (ozcrt_scalar_nonfinite(c->alpha, c->elem) || ozcrt_scalar_nonfinite(c->beta, c->elem)))
        return OZCRT_R_NONFINITE_SCALAR;
    /* The handle asks for exact FP64 or for cuBLAS's own emulation: its call.
     * (cublasGetMathMode is optional: a cuBLAS without it has neither mode.) */
    cublasMath_t math = CUBLAS_DEFAULT_MATH;
    if (ask && real->cublasGetMathMode && real->cublasGetMathMode(c->handle, &math) != CUBLAS_STATUS_SUCCESS)
        return OZCRT_R_HANDLE_QUERY;
    if ((math & 0xf) == CUBLAS_PEDANTIC_MATH || (math & 0xf) == CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH)
        return OZCRT_R_MATH_MODE;
    cudaStream_t stream = c->lt ? c->stream : NULL;
    int legacy_dev = -1; /* the legacy context, read once: its device and stream */
    if (legacy) {
        if (atomic_load(&g_legacy_state) != LEGACY_READY)
            return OZCRT_R_LEGACY_CONTEXT;
        legacy_dev = atomic_load(&g_legacy_dev);
        stream = (cudaStream_t)atomic_load(&g_legacy_stream);
    }
    int dev = -1;
    ozcrt_reason r = check_gpu(&dev);
    if (r != OZCRT_R_EMULATED)
        return r;
    if (legacy && dev != legacy_dev)
        return OZCRT_R_LEGACY_CONTEXT; /* its context lives on the device of cublasInit */
    if (ask && real->cublasGetStream_v2(c->handle, &stream) != CUBLAS_STATUS_SUCCESS)
        return OZCRT_R_HANDLE_QUERY;
    oz_gemm_desc d = make_desc(c, on_device);
    if (ozaki2 && s->bits < 0 && ozcrt_stats_counting()) /* the GPU counts each product's plan */
        d.plan_counts = ozcrt_plan_counters(dev);
    int bits = s->bits;
    const gpu_path gp = path_of(ozaki2, &bits, &d, ozcrt_policy_get()->max_workspace_bytes);
    ozcrt_ws_lease lease = {0};
    r = ozcrt_workspace_acquire(c->handle, dev, stream, gp.ws, &lease);
    if (r != OZCRT_R_EMULATED)
        return r;
    int err = c->prepare ? c->prepare(c, (void *)stream) : 0;
    if (err != 0) {
        ozcrt_workspace_release(&lease);
        return launch_failed(c, "the epilogue's fill of C", err);
    }
    if (s->compare) { /* OZCRT_COMPARE=1 or ozcrt_set: native into scratch too, compared on the GPU */
        pthread_once(&g_report_once, register_report);
        char mode[OZCMP_SITE_MODE_MAX] = "phase22";
        if (ozaki2) {
            char bn[16];
            snprintf(mode, sizeof mode, "ozaki2/%s", ozcrt_bits_name(bits, bn, sizeof bn));
        }
        /* auto: the bound at w = B, which the device's w never is below (docs/ozaki2-auto.md) */
        ozcmp_path path = {mode, gp.run, gp.ctx,
                           ozaki2 ? ozcmp_bound_ozaki2(oz2_auto ? -s->bits : oz2_w) : ozcmp_bound_phase22()};
        ozcmp_site site = {ozcrt_entry_name(c->ep), (int)c->transa, (int)c->transb, c->m, c->n, c->k, c->batch, NULL};
        int st = ozcmp_gemm(&site, &path, &d, ozcrt_native_into, (void *)c, lease.ptr, lease.bytes, (void *)stream,
                            s->compare_result ? OZCMP_RESULT_NATIVE : OZCMP_RESULT_EMULATED);
        ozcrt_workspace_release(&lease);
        *status = (cublasStatus_t)st;
        return st == 0 ? OZCRT_R_EMULATED : OZCRT_R_FAILED;
    }
    /* automatic precision, one product: where its plan certifies nothing, the caller's own call
     * runs from a graph's IF node right after the path (native_branch.h) */
    ozcrt_native_branch branch = {0};
    if (oz2_auto && d.batch == 1 && d.k > 0 &&
        ozcrt_native_branch_make(c, real, dev, &d, stream, oz2_gemm_auto_plan(lease.ptr), &branch) == 0)
        d.native_branch = 1;
    err = gp.run(gp.ctx, &d, lease.ptr, lease.bytes, (void *)stream);
    if (d.native_branch && err == 0)
        err = ozcrt_native_branch_launch(&branch, stream); /* launched, or inserted into the stream's capture */
    else if (d.native_branch)
        ozcrt_native_branch_discard(&branch);
    ozcrt_workspace_release(&lease);
    if (err != 0)
        return launch_failed(c, d.native_branch ? "oz2_gemm_run and its native branch" : gp.name, err);
    *status = CUBLAS_STATUS_SUCCESS;
    return OZCRT_R_EMULATED;
}

int ozcrt_route(const ozcrt_call *c, cublasStatus_t *status)
{
    const ozcrt_policy *p = ozcrt_policy_get();
    const ozcrt_settings *s = ozcrt_effective_policy(); /* this thread's values now (api.c) */
    ozcrt_reason r;
    int nmod = 0, nsplit = 0;
    const ozcrt_real_table *real = NULL; /* the handle's cuBLAS, looked up once per call */
    if (ozcrt_in_real)
        r = OZCRT_R_NESTED;
    else if (s->mode == OZCRT_MODE_OFF)
        r = OZCRT_R_MODE_OFF;
    else if (!c->lt && !has_real(real = ozcrt_real_for(c->handle), c->ep))
        return 0; /* the forward reports the missing symbol */
    else if ((r = ozcrt_check_args(c)) == OZCRT_R_EMULATED)
        r = execute(c, s, real, status, &nmod, &nsplit);
    int taken = r == OZCRT_R_EMULATED || r == OZCRT_R_FAILED;
    /* real operations: a complex multiply-add is four real ones */
    double flop = (c->elem == OZ_ELEM_COMPLEX ? 8.0 : 2.0) * (double)c->m * (double)c->n * (double)c->k *
                  (double)c->batch;
    ozcrt_stats_record(c->ep, r, flop);
    if (r == OZCRT_R_EMULATED)
        ozcrt_stats_record_path(nmod && s->bits < 0 ? OZCRT_PATH_AUTO : nmod, c->elem);
    if (p->log_level >= 1) {
        /* taken calls name the path: "(phase22)", "(ozaki2 N=16 bits=53)",
         * "(ozaki2 auto)", complex ones "(ozaki2 complex N=16 split=18
         * bits=53)" and "(ozaki2 complex auto)" */
        char path[64] = "";
        char bn[16];
        if (taken && nmod && s->bits < 0) /* N is the device's choice: not known here */
            snprintf(path, sizeof path, " (ozaki2 %s%s)", c->elem == OZ_ELEM_COMPLEX ? "complex " : "",
                     ozcrt_bits_name(s->bits, bn, sizeof bn));
        else if (taken && nmod && c->elem == OZ_ELEM_COMPLEX)
            snprintf(path, sizeof path, " (ozaki2 complex N=%d split=%d bits=%d)", nmod, nsplit, s->bits);
        else if (taken && nmod)
            snprintf(path, sizeof path, " (ozaki2 N=%d bits=%d)", nmod, s->bits);
        else if (taken)
            snprintf(path, sizeof path, " (phase22)");
        ozcrt_log(r == OZCRT_R_NESTED ? 2 : 1, "ozcrt: %s m=%lld n=%lld k=%lld ops=%c%c batch=%lld -> %s%s%s", ozcrt_entry_name(c->ep),
                  (long long)c->m, (long long)c->n, (long long)c->k, ozcrt_op_char(c->transa), ozcrt_op_char(c->transb),
                  (long long)c->batch, taken ? "" : "forward: ", ozcrt_reason_name(r), path);
    }
    return taken;
}

ozcrt_reason ozcrt_grouped_gate(ozcrt_entry ep, cublasHandle_t handle, int64_t group_count, int host_arrays_given)
{
    if (ozcrt_in_real)
        return OZCRT_R_NESTED;
    if (ozcrt_effective_policy()->mode == OZCRT_MODE_OFF)
        return OZCRT_R_MODE_OFF;
    const ozcrt_real_table *real = ozcrt_real_for(handle);
    if (!has_real(real, ep))
        return OZCRT_R_COUNT;
    if (!handle || group_count <= 0 || !host_arrays_given)
        return group_count == 0 && handle && host_arrays_given ? OZCRT_R_EMPTY : OZCRT_R_INVALID_ARGS;
    cublasPointerMode_t pm = CUBLAS_POINTER_MODE_HOST;
    if (real->cublasGetPointerMode_v2(handle, &pm) != CUBLAS_STATUS_SUCCESS)
        return OZCRT_R_HANDLE_QUERY;
    return pm == CUBLAS_POINTER_MODE_HOST ? OZCRT_R_EMULATED : OZCRT_R_GROUPED_DEVICE_MODE;
}

void ozcrt_forward_counted(ozcrt_entry ep, ozcrt_reason r, const char *what)
{
    if (r == OZCRT_R_COUNT)
        return; /* the real entry point is missing: the forward reports it */
    ozcrt_stats_record(ep, r, 0.0);
    if (ozcrt_policy_get()->log_level >= 1)
        ozcrt_log(r == OZCRT_R_NESTED ? 2 : 1, "ozcrt: %s %s-> forward: %s", ozcrt_entry_name(ep), what,
                  ozcrt_reason_name(r));
}

void ozcrt_on_destroy(cublasHandle_t handle)
{
    if (handle)
        ozcrt_workspace_destroy_handle(handle);
}
