/* tests/fake/test_route.c: the router's GPU-side decisions on the CPU: CUDA runtime and kernels replaced by fakes.
 *
 * route.c is compiled into this program (#include) with exported.c, real.c,
 * policy.c, stats.c and lifecycle.c; the CUDA runtime calls it makes, the
 * kernel entry points (kernels/ozcrt_gemm.h), the workspace and shadow mode
 * are small fakes below, and the real cuBLAS is the recording fake
 * libcublas.so.13 (found by RTLD_NEXT, as in a program that links cuBLAS).
 * So the paths that need a GPU are taken here without one:
 *  - a device for which the binary has no kernel image: forwarded as
 *    no-kernel-image, asked once per device;
 *  - oz_gemm_run failing (a launch error, nothing written to C): the
 *    caller's own call goes to cuBLAS, counted and logged as launch-failed,
 *    and cuBLAS's status comes back (also when that is an error: a sticky
 *    CUDA error fails cuBLAS too);
 *  - shadow mode (OZCRT_COMPARE) in both modes: the call goes to ozcmp_gemm
 *    with the path of its mode (name, run function, error bound); running
 *    that path runs oz_gemm_run, or oz2_gemm_run with the settings' bits;
 *  - the legacy API (cublasInit, cublasSetKernelStream, cublasDgemm,
 *    cublasShutdown): its context followed, its calls emulated on its stream
 *    or forwarded untouched, its shadow native run;
 *  - the grouped entry points: group by group, a group not taken alone to
 *    cuBLAS, the whole call untouched when cuBLAS must judge it, a group's
 *    shadow native run;
 *  - the complex entry points (cublasZgemm*, the Ex ones with CUDA_C_64F):
 *    forwarded in the phase22 mode (complex-phase22), emulated by
 *    oz2_gemm_run on a complex descriptor in the ozaki2 mode (a fixed
 *    OZCRT_BITS or automatic precision), planned by oz2z_gemm_moduli and
 *    judged by the complex speed model; their shadow runs (the complex plan's bound, the native run). */
#include "../../interpose/route.c"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_cublas.h"
#include "kernels/oz2_auto_estimate.h"

/* ---- the fakes: CUDA runtime, kernels, workspace, shadow mode, settings ---- */
static int g_ndev = 2, g_dev, g_cc_of[2] = {9, 10};
static int g_image_of[2] = {1, 1}, g_image_asked[2];
static int g_run_err, g_runs, g_leases;
static int g_oz2_runs, g_oz2_bits; /* oz2_gemm_run's calls and the bits of the last */
static char g_ws[64];
static ozcrt_settings g_settings = {.mode = OZCRT_MODE_PHASE22, .min_m = 1, .min_n = 1, .min_k = 1};
#define FAKE_OZ2_N 16  /* the fake ozaki2 plan: moduli and integer width */
#define FAKE_OZ2_W 56

cudaError_t cudaGetDeviceCount(int *n)
{
    *n = g_ndev;
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int *d)
{
    *d = g_dev;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr attr, int dev)
{
    *v = attr == cudaDevAttrComputeCapabilityMajor && dev >= 0 && dev < 2 ? g_cc_of[dev] : 0;
    return cudaSuccess;
}
cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}
const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaErrorLaunchOutOfResources ? "too many resources requested for launch" : "fake CUDA error";
}
int oz_gemm_device_supported(int dev)
{
    g_image_asked[dev]++;
    return g_image_of[dev];
}
/* The paths' workspace sizes (distinct, so that what the router hands the
 * workspace is seen), the cap they were asked with last, and the sizes the
 * workspace was asked for last. */
static const size_t k_p22_sizes[OZ_GEMM_WS_SIZES] = {3000, 2000, 2000, 100};
static const size_t k_oz2_sizes[OZ_GEMM_WS_SIZES] = {5000, 4000, 1000, 200};
static size_t g_sizes_cap, g_sizes[OZCRT_WS_SIZES];
void oz_gemm_workspace_sizes(const oz_gemm_desc *d, size_t cap, size_t sizes[OZ_GEMM_WS_SIZES])
{
    (void)d;
    g_sizes_cap = cap;
    memcpy(sizes, k_p22_sizes, sizeof k_p22_sizes);
}
/* what the last run of either path was given: stream, alpha's value (host
 * scalars; a complex one's imaginary part too), the descriptor */
static struct {
    void *stream;
    int on_device;
    double alpha, beta, alpha_im, beta_im;
    oz_gemm_desc d;
} g_ran;
static void record_run(const oz_gemm_desc *d, void *stream)
{
    g_ran.stream = stream;
    g_ran.on_device = d->scalars_on_device;
    g_ran.alpha = d->scalars_on_device ? 0.0 : d->alpha[0];
    g_ran.beta = d->scalars_on_device ? 0.0 : d->beta[0];
    const int im = !d->scalars_on_device && d->elem == OZ_ELEM_COMPLEX;
    g_ran.alpha_im = im ? d->alpha[1] : 0.0;
    g_ran.beta_im = im ? d->beta[1] : 0.0;
    g_ran.d = *d;
}
int oz_gemm_run(const oz_gemm_desc *d, void *ws, size_t bytes, void *stream)
{
    (void)ws, (void)bytes;
    if (d->elem != OZ_ELEM_REAL)
        fail_msg("oz_gemm_run (Phase 22) given a complex call");
    record_run(d, stream);
    g_runs++;
    return g_run_err;
}
/* the ozaki2 path: only in the ozaki2 mode (a fixed plan) */
int oz2_gemm_moduli(int64_t k, int bits, int *w)
{
    (void)k, (void)bits;
    if (g_settings.mode != OZCRT_MODE_OZAKI2)
        fail_msg("oz2_gemm_moduli called in the phase22 mode");
    if (w)
        *w = FAKE_OZ2_W;
    return FAKE_OZ2_N;
}
/* the complex plan: only in the ozaki2 mode at a fixed bits; g_oz2z_n its N (0: unreachable) */
#define FAKE_OZ2Z_SPLIT 18
static int g_oz2z_n = FAKE_OZ2_N, g_oz2z_calls, g_oz2z_bits;
int oz2z_gemm_moduli(int64_t k, int bits, int *w, int *n_split)
{
    (void)k;
    if (g_settings.mode != OZCRT_MODE_OZAKI2 || bits < 1)
        fail_msg("oz2z_gemm_moduli called in mode %d with bits %d", (int)g_settings.mode, bits);
    g_oz2z_calls++;
    g_oz2z_bits = bits;
    if (w)
        *w = g_oz2z_n ? FAKE_OZ2_W - 1 : 0;
    if (n_split)
        *n_split = g_oz2z_n ? FAKE_OZ2Z_SPLIT : 0;
    return g_oz2z_n;
}
static int g_sizes_elem = -1; /* the element type the workspace sizes were last asked for */
void oz2_gemm_workspace_sizes(const oz_gemm_desc *d, int bits, size_t cap, size_t sizes[OZ_GEMM_WS_SIZES])
{
    (void)bits;
    g_sizes_elem = d->elem;
    if (g_settings.mode != OZCRT_MODE_OZAKI2)
        fail_msg("oz2_gemm_workspace_sizes called in the phase22 mode");
    g_sizes_cap = cap;
    memcpy(sizes, k_oz2_sizes, sizeof k_oz2_sizes);
}
/* the plan counters (plan_counts.h): a host array here */
static unsigned long long g_plan_counts[OZ2A_PLAN_COUNTS];
static const unsigned long long *g_oz2_counts; /* the last oz2_gemm_run's desc's plan_counts */
unsigned long long *ozcrt_plan_counters(int dev) { return dev == 0 ? g_plan_counts : NULL; }
void ozcrt_plan_counts_read(int complex_, uint64_t *out, int n)
{
    for (int i = 0; i < n && i < OZ2A_PLAN_COUNTS_CX; i++)
        out[i] = g_plan_counts[(complex_ ? OZ2A_PLAN_COUNTS_CX : 0) + i];
}
void ozcrt_plan_counts_clear(void) { memset(g_plan_counts, 0, sizeof g_plan_counts); }

int oz2_gemm_run(const oz_gemm_desc *d, int bits, void *ws, size_t bytes, void *stream)
{
    (void)ws, (void)bytes;
    record_run(d, stream);
    g_oz2_counts = d->plan_counts;
    if (g_settings.mode != OZCRT_MODE_OZAKI2)
        fail_msg("oz2_gemm_run called in the phase22 mode");
    g_oz2_runs++;
    g_oz2_bits = bits;
    return g_run_err;
}
/* the native branch (native_branch.h): made where g_nb_ok for the batch-1 automatic calls only, its
 * graph launched on the call's stream after the path (g_nb_launch_err: that launch's answer) */
static int g_nb_ok, g_nb_made, g_nb_launched, g_nb_destroyed;
static cudaError_t g_nb_launch_err;
static void *g_nb_stream;
static char g_nb_exec;
const void *oz2_gemm_auto_plan(const void *ws) { return ws; }
int ozcrt_native_branch_make(const ozcrt_call *c, const ozcrt_real_table *real, int dev, const oz_gemm_desc *d,
                             cudaStream_t stream, const void *plan, ozcrt_native_branch *b)
{
    (void)c, (void)real, (void)dev, (void)stream;
    if (plan != (const void *)g_ws || g_settings.bits >= 0 || d->batch != 1 || d->native_branch)
        fail_msg("a native branch asked for a call that is not an automatic product of one item");
    g_nb_made++;
    *b = (ozcrt_native_branch){g_nb_ok ? (cudaGraphExec_t)(void *)&g_nb_exec : NULL, NULL, plan};
    return g_nb_ok ? 0 : 1;
}
int ozcrt_native_branch_launch(ozcrt_native_branch *b, cudaStream_t s)
{
    if ((void *)b->exec != (void *)&g_nb_exec || g_ran.d.native_branch != 1)
        fail_msg("a graph launched that is not the native branch of the path that ran");
    g_nb_launched++;
    g_nb_destroyed++; /* handed over: destroyed once it has run, or now */
    g_nb_stream = s;
    return g_nb_launch_err;
}
void ozcrt_native_branch_discard(ozcrt_native_branch *b)
{
    if ((void *)b->exec != (void *)&g_nb_exec)
        fail_msg("a graph destroyed that is not the native branch");
    g_nb_destroyed++;
}
static cublasHandle_t g_ws_handle, g_ws_destroyed; /* the handle of the last lease, of the last destroy */
ozcrt_reason ozcrt_workspace_acquire(cublasHandle_t h, int dev, cudaStream_t s, const size_t sizes[OZCRT_WS_SIZES],
                                     ozcrt_ws_lease *lease)
{
    (void)dev, (void)s;
    g_ws_handle = h;
    memcpy(g_sizes, sizes, sizeof g_sizes);
    g_leases++;
    lease->ptr = g_ws;
    lease->bytes = sizeof g_ws;
    return OZCRT_R_EMULATED;
}
void ozcrt_workspace_release(ozcrt_ws_lease *lease)
{
    g_leases--;
    lease->ptr = NULL;
}
void ozcrt_workspace_destroy_handle(cublasHandle_t h)
{
    g_ws_destroyed = h;
}
/* shadow mode: what ozcmp_gemm was given (the path's mode copied), and its answer */
static struct {
    int calls, status, path_run, run_native, native_status, elem;
    char entry[64], mode[OZCMP_SITE_MODE_MAX];
    int64_t m, n, k, batch;
    ozcmp_bound bound;
    ozcmp_result result;
    const oz_gemm_desc *d;
    ozcmp_native_fn native;
} g_cmp;

int ozcmp_gemm(const ozcmp_site *site, const ozcmp_path *path, const oz_gemm_desc *d, ozcmp_native_fn native,
               void *ctx, void *ws, size_t ws_bytes, void *stream, ozcmp_result result)
{
    if (!g_settings.compare)
        fail_msg("ozcmp_gemm called with shadow mode off");
    g_cmp.calls++;
    snprintf(g_cmp.entry, sizeof g_cmp.entry, "%s", site->entry);
    snprintf(g_cmp.mode, sizeof g_cmp.mode, "%s", path->mode);
    g_cmp.m = site->m, g_cmp.n = site->n, g_cmp.k = site->k, g_cmp.batch = site->batch;
    g_cmp.bound = path->bound;
    g_cmp.result = result;
    g_cmp.d = d;
    g_cmp.elem = d->elem;
    g_cmp.native = native;
    if (g_cmp.run_native) { /* the native call into a scratch C (the real ozcmp_gemm's step 4) */
        oz_gemm_desc into = *d;
        into.C = (double *)0x7000;
        into.ldc = d->ldc + 1;
        g_cmp.native_status = native(ctx, &into);
    }
    /* the emulated path, as the real ozcmp_gemm runs it (step 5) */
    g_cmp.path_run = path->run(path->ctx, d, ws, ws_bytes, stream);
    return g_cmp.status;
}
void ozcmp_report_at_exit(FILE *log)
{
    (void)log;
}
const ozcrt_settings *ozcrt_effective_policy(void)
{
    return &g_settings;
}

/* ---- the tests ---- */
#define PA ((const double *)0x1000)
#define PB ((const double *)0x2000)
#define PC ((double *)0x3000)
static const double one = 1.0, half = 0.5;
static cublasHandle_t g_h;

static uint64_t count_of(ozcrt_reason r)
{
    uint64_t calls, by[OZCRT_R_COUNT];
    double flop;
    assert_int_equal(ozcrt_stats_read(OZCRT_EP_cublasDgemm_v2, &calls, by, &flop), 0);
    return by[r];
}

/* cublasDgemm_v2 through the shim's entry point; the fake cuBLAS answers `fake`. */
static cublasStatus_t dgemm(cublasStatus_t fake)
{
    fake_cublas_reset();
    fake_cublas_set_status(fake);
    return cublasDgemm_v2(g_h, CUBLAS_OP_N, CUBLAS_OP_T, 300, 200, 100, &one, PA, 300, PB, 200, &half, PC, 300);
}

/* The log (OZCRT_LOG=1, OZCRT_LOG_FILE) has a line containing `text`. */
static void assert_logged(const char *text)
{
    const char *path = getenv("OZCRT_LOG_FILE");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        fail_msg("no log: run with OZCRT_LOG=1 and OZCRT_LOG_FILE");
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, text) != NULL;
    fclose(f);
    if (!found)
        fail_msg("the log has no line with \"%s\"", text);
}

static void assert_forwarded_exactly(void)
{
    const fake_call *r = fake_cublas_last();
    assert_int_equal(fake_cublas_count(), 1);
    assert_string_equal(r->name, "cublasDgemm_v2");
    assert_ptr_equal(r->handle, g_h);
    assert_int_equal(r->transa, CUBLAS_OP_N);
    assert_int_equal(r->transb, CUBLAS_OP_T);
    assert_int_equal(r->m, 300);
    assert_int_equal(r->n, 200);
    assert_int_equal(r->k, 100);
    assert_ptr_equal(r->alpha, &one);
    assert_ptr_equal(r->beta, &half);
    assert_ptr_equal(r->A, PA);
    assert_ptr_equal(r->B, PB);
    assert_ptr_equal(r->C, PC);
}

/* A device the binary has a kernel image for: emulated, cuBLAS not called. */
static void t_emulated(void **state)
{
    (void)state;
    g_dev = 0;
    g_run_err = 0;
    int runs = g_runs;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(fake_cublas_count(), 0);
    assert_int_equal(g_runs, runs + 1);
    assert_int_equal(g_leases, 0);
}

/* The GemmEx family's algo: the documented values pass the checks, any other
 * goes to cuBLAS (invalid-args: cuBLAS returns its own status). */
static void t_algo(void **state)
{
    (void)state;
    ozcrt_call c = {.ep = OZCRT_EP_cublasGemmEx, .handle = g_h, .transa = CUBLAS_OP_N, .transb = CUBLAS_OP_N,
                    .m = 4, .n = 4, .k = 4, .alpha = &one, .beta = &half, .A = PA, .B = PB, .C = PC, .lda = 4,
                    .ldb = 4, .ldc = 4, .batch = 1, .typed = 1, .Atype = CUDA_R_64F, .Btype = CUDA_R_64F,
                    .Ctype = CUDA_R_64F, .compute = CUBLAS_COMPUTE_64F};
    static const int good[] = {-1, 0, 7, 23, 99, 100, 115};
    static const int bad[] = {-2, 24, 42, 98, 116, 999, 9999};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        c.algo = (cublasGemmAlgo_t)good[i];
        assert_int_equal(ozcrt_check_args(&c), OZCRT_R_EMULATED);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c.algo = (cublasGemmAlgo_t)bad[i];
        assert_int_equal(ozcrt_check_args(&c), OZCRT_R_INVALID_ARGS);
    }
    c.typed = 0; /* cublasDgemm_v2 has no algo */
    c.algo = (cublasGemmAlgo_t)9999;
    assert_int_equal(ozcrt_check_args(&c), OZCRT_R_EMULATED);
}

/* No kernel image for device 1 (say a GPU newer than the build): forwarded,
 * reason no-kernel-image, the kernels never run; the answer is cached per
 * device, and device 0 is not affected. */
static void t_no_kernel_image(void **state)
{
    (void)state;
    g_dev = 1;
    g_image_of[1] = 0;
    g_run_err = 0;
    int runs = g_runs;
    uint64_t before = count_of(OZCRT_R_NO_KERNEL_IMAGE);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_ARCH_MISMATCH);
        assert_forwarded_exactly();
    }
    assert_int_equal(g_runs, runs);
    assert_int_equal(count_of(OZCRT_R_NO_KERNEL_IMAGE), before + 3);
    assert_int_equal(g_image_asked[1], 1);
    assert_logged("-> forward: no-kernel-image");
    g_dev = 0;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(g_image_asked[0], 1);
}

/* The launch fails (nothing written to C): the caller's call goes to cuBLAS,
 * whose status comes back; counted as launch-failed, the workspace released. */
static void t_launch_failed(void **state)
{
    (void)state;
    g_dev = 0;
    g_run_err = cudaErrorLaunchOutOfResources;
    uint64_t before = count_of(OZCRT_R_LAUNCH_FAILED), failed = count_of(OZCRT_R_FAILED);
    assert_int_equal(dgemm(CUBLAS_STATUS_SUCCESS), CUBLAS_STATUS_SUCCESS);
    assert_forwarded_exactly();
    assert_int_equal(g_leases, 0);
    assert_int_equal(count_of(OZCRT_R_LAUNCH_FAILED), before + 1);
    assert_int_equal(count_of(OZCRT_R_FAILED), failed);
    assert_logged("oz_gemm_run failed: too many resources requested for launch; the call goes to cuBLAS");
    assert_logged("-> forward: launch-failed");
    g_run_err = 0;
}

/* A sticky error poisons the context: cuBLAS fails too, and its status is what the caller gets. */
static void t_launch_failed_sticky(void **state)
{
    (void)state;
    g_dev = 0;
    g_run_err = cudaErrorIllegalAddress;
    assert_int_equal(dgemm(CUBLAS_STATUS_EXECUTION_FAILED), CUBLAS_STATUS_EXECUTION_FAILED);
    assert_forwarded_exactly();
    assert_int_equal(g_leases, 0);
    g_run_err = 0;
}

/* The workspaces a call offers are its mode's path's sizes, asked with the
 * cap of OZCRT_MAX_WORKSPACE_MB, in the path's order. */
static void t_workspace_sizes(void **state)
{
    (void)state;
    g_dev = 0;
    g_run_err = 0;
    const size_t cap = ozcrt_policy_get()->max_workspace_bytes;
    g_settings.mode = OZCRT_MODE_PHASE22;
    g_sizes_cap = 0;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_memory_equal(g_sizes, k_p22_sizes, sizeof k_p22_sizes);
    assert_int_equal(g_sizes_cap, cap);
    g_settings.mode = OZCRT_MODE_OZAKI2;
    g_settings.bits = 53;
    g_sizes_cap = 0;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_memory_equal(g_sizes, k_oz2_sizes, sizeof k_oz2_sizes);
    assert_int_equal(g_sizes_cap, cap);
    g_settings.mode = OZCRT_MODE_PHASE22;
    assert_int_equal(g_leases, 0);
}

/* Shadow mode, the settings' mode, bits and result; the fake ozcmp_gemm answers `cmp_status`. */
static void set_shadow(ozcrt_mode mode, int bits, int compare, int native_result, int cmp_status)
{
    g_settings.mode = mode;
    g_settings.bits = bits;
    g_settings.compare = compare;
    g_settings.compare_result = native_result;
    memset(&g_cmp, 0, sizeof g_cmp);
    g_cmp.status = cmp_status;
    g_dev = 0;
    g_run_err = 0;
}

static void assert_compared_call(const char *mode)
{
    assert_int_equal(g_cmp.calls, 1);
    assert_string_equal(g_cmp.entry, "cublasDgemm_v2");
    assert_string_equal(g_cmp.mode, mode);
    assert_int_equal(g_cmp.m, 300);
    assert_int_equal(g_cmp.n, 200);
    assert_int_equal(g_cmp.k, 100);
    assert_int_equal(g_cmp.batch, 1);
    assert_ptr_equal(g_cmp.native, ozcrt_native_into);
    assert_int_equal(g_cmp.path_run, 0);
    assert_int_equal(fake_cublas_count(), 0); /* the fake ozcmp_gemm does not run the native call */
    assert_int_equal(g_leases, 0);
}

/* Phase 22 under shadow mode: ozcmp_gemm with the Phase 22 path and bound, as before. */
static void t_shadow_phase22(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_PHASE22, 53, 1, 0, CUBLAS_STATUS_SUCCESS);
    int runs = g_runs, oz2 = g_oz2_runs;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_compared_call("phase22");
    assert_int_equal(g_cmp.bound.kind, OZCMP_BOUND_PHASE22);
    assert_int_equal(g_cmp.result, OZCMP_RESULT_EMULATED);
    assert_int_equal(g_runs, runs + 1);    /* the path runs oz_gemm_run */
    assert_int_equal(g_oz2_runs, oz2);
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* ozaki2 under shadow mode: compared too (no longer run uncompared): the
 * path is named "ozaki2/<bits>", carries the ozaki2 bound for the plan's
 * integer width, and runs oz2_gemm_run with the settings' bits. */
static void t_shadow_ozaki2(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_OZAKI2, 53, 1, 0, CUBLAS_STATUS_SUCCESS);
    int runs = g_runs, oz2 = g_oz2_runs;
    uint64_t emulated = count_of(OZCRT_R_EMULATED);
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_compared_call("ozaki2/53");
    assert_int_equal(g_cmp.bound.kind, OZCMP_BOUND_OZAKI2);
    assert_int_equal(g_cmp.bound.w, FAKE_OZ2_W);
    assert_int_equal(g_cmp.result, OZCMP_RESULT_EMULATED);
    assert_int_equal(g_oz2_runs, oz2 + 1);
    assert_int_equal(g_oz2_bits, 53);
    assert_int_equal(g_runs, runs);         /* not the Phase 22 path */
    assert_int_equal(count_of(OZCRT_R_EMULATED), emulated + 1);
    assert_logged("-> emulated (ozaki2 N=16 bits=53)");

    /* other bits name another mode; OZCRT_COMPARE_RESULT=native is passed on */
    set_shadow(OZCRT_MODE_OZAKI2, 40, 1, 1, CUBLAS_STATUS_SUCCESS);
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_compared_call("ozaki2/40");
    assert_int_equal(g_oz2_bits, 40);
    assert_int_equal(g_cmp.result, OZCMP_RESULT_NATIVE);

    /* ozcmp_gemm's failure is the caller's status, counted as failed */
    uint64_t failed = count_of(OZCRT_R_FAILED);
    set_shadow(OZCRT_MODE_OZAKI2, 53, 1, 0, CUBLAS_STATUS_EXECUTION_FAILED);
    assert_int_equal(dgemm(CUBLAS_STATUS_SUCCESS), CUBLAS_STATUS_EXECUTION_FAILED);
    assert_int_equal(g_cmp.calls, 1);
    assert_int_equal(count_of(OZCRT_R_FAILED), failed + 1);
    assert_int_equal(g_leases, 0);

    /* shadow mode off: oz2_gemm_run directly, ozcmp_gemm never */
    set_shadow(OZCRT_MODE_OZAKI2, 53, 0, 0, 0);
    oz2 = g_oz2_runs;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(g_cmp.calls, 0);
    assert_int_equal(g_oz2_runs, oz2 + 1);
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}


/* ---- the legacy handle-less API (cublas.h) ---- */
static uint64_t legacy_count_of(ozcrt_reason r)
{
    uint64_t calls, by[OZCRT_R_COUNT];
    double flop;
    assert_int_equal(ozcrt_stats_read(OZCRT_EP_cublasDgemm, &calls, by, &flop), 0);
    return by[r];
}

/* cublasDgemm (legacy) through the shim: 300 x 200 x 100, A not transposed, B transposed ('t'), alpha 1.5, beta 0.25 */
static void legacy_dgemm(char ta, double alpha)
{
    fake_cublas_reset();
    cublasDgemm(ta, 't', 300, 200, 100, alpha, PA, 300, PB, 200, 0.25, PC, 300);
}

static void assert_legacy_forwarded(char ta, double alpha)
{
    const fake_call *r = fake_cublas_last();
    assert_int_equal(fake_cublas_count(), 1);
    assert_string_equal(r->name, "cublasDgemm");
    assert_int_equal(r->transa, ta); /* the caller's own letters */
    assert_int_equal(r->transb, 't');
    assert_int_equal(r->m, 300);
    assert_int_equal(r->n, 200);
    assert_int_equal(r->k, 100);
    assert_true(r->alpha_v == alpha);
    assert_true(r->beta_v == 0.25);
    assert_ptr_equal(r->A, PA);
    assert_ptr_equal(r->B, PB);
    assert_ptr_equal(r->C, PC);
    assert_int_equal(r->lda, 300);
    assert_int_equal(r->ldb, 200);
    assert_int_equal(r->ldc, 300);
}

/* Before cublasInit the shim knows no legacy context: forwarded untouched (legacy-context). */
static void t_legacy_before_init(void **state)
{
    (void)state;
    g_dev = 0;
    g_run_err = 0;
    int runs = g_runs;
    uint64_t before = legacy_count_of(OZCRT_R_LEGACY_CONTEXT);
    legacy_dgemm('N', 1.5);
    assert_legacy_forwarded('N', 1.5);
    assert_int_equal(g_runs, runs);
    assert_int_equal(legacy_count_of(OZCRT_R_LEGACY_CONTEXT), before + 1);
    assert_logged("ozcrt: cublasDgemm m=300 n=200 k=100 ops=NT batch=1 -> forward: legacy-context");
}

/* After cublasInit: emulated on the legacy context's stream (NULL, then the
 * one cublasSetKernelStream set, not one it failed to set), scalars by
 * value from the host, no handle query, the stand-in handle's workspace;
 * cuBLAS is not called. */
static void t_legacy_emulated(void **state)
{
    (void)state;
    g_dev = 0;
    g_run_err = 0;
    fake_cublas_reset();
    assert_int_equal(cublasInit(), CUBLAS_STATUS_SUCCESS);
    assert_string_equal(fake_cublas_last()->name, "cublasInit");
    int runs = g_runs;
    uint64_t emulated = legacy_count_of(OZCRT_R_EMULATED);
    g_ran.stream = (void *)0x1;
    legacy_dgemm('n', 1.5);
    assert_int_equal(fake_cublas_count(), 0);
    assert_int_equal(fake_cublas_queries(), 0);
    assert_int_equal(g_runs, runs + 1);
    assert_ptr_equal(g_ran.stream, NULL);
    assert_int_equal(g_ran.on_device, 0);
    assert_true(g_ran.alpha == 1.5 && g_ran.beta == 0.25);
    assert_ptr_equal(g_ws_handle, ozcrt_legacy_handle());
    assert_int_equal(g_leases, 0);
    assert_int_equal(legacy_count_of(OZCRT_R_EMULATED), emulated + 1);

    cudaStream_t s1 = (cudaStream_t)0x5150, s2 = (cudaStream_t)0x6160;
    fake_cublas_reset();
    assert_int_equal(cublasSetKernelStream(s1), CUBLAS_STATUS_SUCCESS);
    assert_string_equal(fake_cublas_last()->name, "cublasSetKernelStream");
    assert_ptr_equal(fake_cublas_last()->stream, s1);
    legacy_dgemm('N', 1.5);
    assert_ptr_equal(g_ran.stream, s1);
    fake_cublas_reset();
    fake_cublas_set_status(CUBLAS_STATUS_NOT_INITIALIZED);
    assert_int_equal(cublasSetKernelStream(s2), CUBLAS_STATUS_NOT_INITIALIZED); /* cuBLAS's answer, and s1 stays */
    legacy_dgemm('N', 1.5);
    assert_ptr_equal(g_ran.stream, s1);
    assert_int_equal(g_runs, runs + 3);

    /* in the ozaki2 mode too */
    g_settings.mode = OZCRT_MODE_OZAKI2;
    g_settings.bits = 53;
    int oz2 = g_oz2_runs;
    legacy_dgemm('N', -2.0);
    assert_int_equal(g_oz2_runs, oz2 + 1);
    assert_true(g_ran.alpha == -2.0);
    assert_ptr_equal(g_ran.stream, s1);
    g_settings.mode = OZCRT_MODE_PHASE22;
}

/* What the emulated path must not take: a bad letter (cuBLAS reports it),
 * alpha 0 (k0-or-alpha0), another device than cublasInit's
 * (legacy-context), a launch that fails: each forwarded untouched. */
static void t_legacy_forwarded(void **state)
{
    (void)state;
    g_dev = 0;
    g_run_err = 0;
    int runs = g_runs;
    uint64_t invalid = legacy_count_of(OZCRT_R_INVALID_ARGS), trivial = legacy_count_of(OZCRT_R_TRIVIAL);
    uint64_t context = legacy_count_of(OZCRT_R_LEGACY_CONTEXT), launch = legacy_count_of(OZCRT_R_LAUNCH_FAILED);
    legacy_dgemm('x', 1.5);
    assert_legacy_forwarded('x', 1.5);
    assert_int_equal(legacy_count_of(OZCRT_R_INVALID_ARGS), invalid + 1);
    legacy_dgemm('N', 0.0);
    assert_legacy_forwarded('N', 0.0);
    assert_int_equal(legacy_count_of(OZCRT_R_TRIVIAL), trivial + 1);
    g_dev = 1; /* the legacy context on device 1, the call on device 0 (which the shim could run on) */
    assert_int_equal(cublasInit(), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cublasSetKernelStream(NULL), CUBLAS_STATUS_SUCCESS); /* the stream known: only the device differs */
    g_dev = 0;
    legacy_dgemm('N', 1.5);
    assert_legacy_forwarded('N', 1.5);
    assert_int_equal(legacy_count_of(OZCRT_R_LEGACY_CONTEXT), context + 1);
    assert_int_equal(cublasInit(), CUBLAS_STATUS_SUCCESS); /* again on device 0, the NULL stream kept */
    g_run_err = cudaErrorLaunchOutOfResources;
    legacy_dgemm('C', 1.5);
    assert_legacy_forwarded('C', 1.5);
    assert_int_equal(legacy_count_of(OZCRT_R_LAUNCH_FAILED), launch + 1);
    g_run_err = 0;
    assert_int_equal(g_runs, runs + 1); /* only the launch that failed ran */
    assert_int_equal(g_leases, 0);
}

/* Shadow mode: the native run is the legacy call into the scratch C, its
 * status cuBLAS's legacy error state. */
static void t_legacy_shadow(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_PHASE22, 53, 1, 0, CUBLAS_STATUS_SUCCESS);
    g_cmp.run_native = 1;
    g_cmp.native_status = -1;
    legacy_dgemm('n', 1.5);
    assert_int_equal(g_cmp.calls, 1);
    assert_string_equal(g_cmp.entry, "cublasDgemm");
    assert_int_equal(g_cmp.native_status, CUBLAS_STATUS_SUCCESS);
    const fake_call *r = fake_cublas_last();
    assert_int_equal(fake_cublas_count(), 1);
    assert_string_equal(r->name, "cublasDgemm");
    assert_int_equal(r->transa, 'N');
    assert_int_equal(r->transb, 'T');
    assert_int_equal(r->m, 300);
    assert_true(r->alpha_v == 1.5 && r->beta_v == 0.25);
    assert_ptr_equal(r->C, (double *)0x7000);
    assert_int_equal(r->ldc, 301);
    /* a native failure comes back through cublasGetError */
    set_shadow(OZCRT_MODE_PHASE22, 53, 1, 0, CUBLAS_STATUS_SUCCESS);
    g_cmp.run_native = 1;
    fake_cublas_reset();
    fake_cublas_set_status(CUBLAS_STATUS_EXECUTION_FAILED);
    cublasDgemm('N', 'T', 300, 200, 100, 1.5, PA, 300, PB, 200, 0.25, PC, 300);
    assert_int_equal(g_cmp.native_status, CUBLAS_STATUS_EXECUTION_FAILED);
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* cublasShutdown: forwarded, the stand-in handle's workspaces freed, and
 * legacy calls forwarded again until the next cublasInit. */
static void t_legacy_shutdown(void **state)
{
    (void)state;
    g_dev = 0;
    g_ws_destroyed = NULL;
    fake_cublas_reset();
    assert_int_equal(cublasShutdown(), CUBLAS_STATUS_SUCCESS);
    assert_string_equal(fake_cublas_last()->name, "cublasShutdown");
    assert_ptr_equal(g_ws_destroyed, ozcrt_legacy_handle());
    int runs = g_runs;
    legacy_dgemm('N', 1.5);
    assert_legacy_forwarded('N', 1.5);
    assert_int_equal(g_runs, runs);
    /* a cublasInit that fails leaves it so */
    fake_cublas_reset();
    fake_cublas_set_status(CUBLAS_STATUS_NOT_INITIALIZED);
    assert_int_equal(cublasInit(), CUBLAS_STATUS_NOT_INITIALIZED);
    legacy_dgemm('N', 1.5);
    assert_legacy_forwarded('N', 1.5);
    assert_int_equal(g_runs, runs);
}

/* A stream set before cublasInit may not survive it in cuBLAS: legacy
 * calls are forwarded until the next cublasSetKernelStream says which. */
static void t_legacy_stream_before_init(void **state)
{
    (void)state;
    g_dev = 0;
    g_run_err = 0;
    cudaStream_t s1 = (cudaStream_t)0x7170, s2 = (cudaStream_t)0x8180;
    fake_cublas_reset();
    assert_int_equal(cublasSetKernelStream(s1), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cublasInit(), CUBLAS_STATUS_SUCCESS);
    int runs = g_runs;
    uint64_t context = legacy_count_of(OZCRT_R_LEGACY_CONTEXT);
    legacy_dgemm('N', 1.5);
    assert_legacy_forwarded('N', 1.5);
    assert_int_equal(legacy_count_of(OZCRT_R_LEGACY_CONTEXT), context + 1);
    assert_int_equal(cublasSetKernelStream(s2), CUBLAS_STATUS_SUCCESS);
    legacy_dgemm('N', 1.5);
    assert_int_equal(g_runs, runs + 1);
    assert_ptr_equal(g_ran.stream, s2);
    /* cublasInit again while a stream is set: unknown again until the next set */
    assert_int_equal(cublasInit(), CUBLAS_STATUS_SUCCESS);
    legacy_dgemm('N', 1.5);
    assert_legacy_forwarded('N', 1.5);
    assert_int_equal(legacy_count_of(OZCRT_R_LEGACY_CONTEXT), context + 2);
    assert_int_equal(cublasSetKernelStream(s1), CUBLAS_STATUS_SUCCESS);
    legacy_dgemm('N', 1.5);
    assert_int_equal(g_runs, runs + 2);
    assert_ptr_equal(g_ran.stream, s1);
    /* shut down and initialised again: the NULL stream */
    assert_int_equal(cublasShutdown(), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cublasInit(), CUBLAS_STATUS_SUCCESS);
    legacy_dgemm('N', 1.5);
    assert_int_equal(g_runs, runs + 3);
    assert_ptr_equal(g_ran.stream, NULL);
    assert_int_equal(cublasShutdown(), CUBLAS_STATUS_SUCCESS);
}

/* ---- the grouped entry points (route.h) ---- */
#define GMAX 4
/* A grouped call's groups as the caller writes them; the host arrays it
 * passes (int or int64_t by the entry point) stay in place, so that a group
 * forwarded alone is seen to get the arrays from that group on. */
typedef struct grp {
    int count;
    cublasOperation_t ta[GMAX], tb[GMAX];
    int64_t m[GMAX], n[GMAX], k[GMAX], lda[GMAX], ldb[GMAX], ldc[GMAX], size[GMAX];
    double alpha[GMAX], beta[GMAX];
} grp;
static int gi[8][GMAX];     /* m n k lda ldb ldc size */
static int64_t gl[8][GMAX];
static const double *const g_gA[16] = {PA, PA, PA, PA, PA, PA, PA, PA, PA, PA, PA, PA, PA, PA, PA, PA};
static const double *const g_gB[16] = {PB, PB, PB, PB, PB, PB, PB, PB, PB, PB, PB, PB, PB, PB, PB, PB};
static double *const g_gC[16] = {PC, PC, PC, PC, PC, PC, PC, PC, PC, PC, PC, PC, PC, PC, PC, PC};
static const ozcrt_entry k_grouped[4] = {OZCRT_EP_cublasDgemmGroupedBatched, OZCRT_EP_cublasDgemmGroupedBatched_64,
                                         OZCRT_EP_cublasGemmGroupedBatchedEx,
                                         OZCRT_EP_cublasGemmGroupedBatchedEx_64};
static int wide(ozcrt_entry ep)
{
    return ep == OZCRT_EP_cublasDgemmGroupedBatched_64 || ep == OZCRT_EP_cublasGemmGroupedBatchedEx_64;
}
/* the address of the caller's array a (0 m, 1 n, 2 k, 3 lda, 4 ldb, 5 ldc, 6 size) from group g on */
static const void *garr(ozcrt_entry ep, int a, int g)
{
    return wide(ep) ? (const void *)&gl[a][g] : (const void *)&gi[a][g];
}

/* The call through the shim's entry point ep (types t for the Ex ones, a
 * NULL ldc array when drop_ldc); the fake cuBLAS answers `fake`. */
#define G_COMPUTE(t) ((t) == CUDA_R_64F || (t) == CUDA_C_64F ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F)
static cublasStatus_t grouped(ozcrt_entry ep, const grp *G, cudaDataType t, int drop_ldc, cublasStatus_t fake)
{
    fake_cublas_reset();
    fake_cublas_set_status(fake);
    for (int g = 0; g < GMAX; g++) {
        const int64_t v[7] = {G->m[g], G->n[g], G->k[g], G->lda[g], G->ldb[g], G->ldc[g], G->size[g]};
        for (int a = 0; a < 7; a++)
            gi[a][g] = (int)v[a], gl[a][g] = v[a];
    }
    const int *ldci = drop_ldc ? NULL : gi[5];
    const int64_t *ldcl = drop_ldc ? NULL : gl[5];
    switch (ep) {
    case OZCRT_EP_cublasDgemmGroupedBatched:
        return cublasDgemmGroupedBatched(g_h, G->ta, G->tb, gi[0], gi[1], gi[2], G->alpha, g_gA, gi[3], g_gB, gi[4],
                                         G->beta, g_gC, ldci, G->count, gi[6]);
    case OZCRT_EP_cublasDgemmGroupedBatched_64:
        return cublasDgemmGroupedBatched_64(g_h, G->ta, G->tb, gl[0], gl[1], gl[2], G->alpha, g_gA, gl[3], g_gB,
                                            gl[4], G->beta, g_gC, ldcl, G->count, gl[6]);
    case OZCRT_EP_cublasGemmGroupedBatchedEx:
        return cublasGemmGroupedBatchedEx(g_h, G->ta, G->tb, gi[0], gi[1], gi[2], G->alpha,
                                          (const void *const *)g_gA, t, gi[3], (const void *const *)g_gB, t, gi[4],
                                          G->beta, (void *const *)g_gC, t, ldci, G->count, gi[6],
                                          G_COMPUTE(t));
    default:
        return cublasGemmGroupedBatchedEx_64(g_h, G->ta, G->tb, gl[0], gl[1], gl[2], G->alpha,
                                             (const void *const *)g_gA, t, gl[3], (const void *const *)g_gB, t, gl[4],
                                             G->beta, (void *const *)g_gC, t, ldcl, G->count, gl[6],
                                             G_COMPUTE(t));
    }
}

/* Three groups: 300 x 200 x 100 NT (2 products, alpha 1.5, beta 0.5), an
 * empty one (size 0), 64 x 32 x 16 TN (3 products, alpha 2, beta 0). */
static grp three_groups(void)
{
    grp G = {.count = 3,
             .ta = {CUBLAS_OP_N, CUBLAS_OP_N, CUBLAS_OP_T},
             .tb = {CUBLAS_OP_T, CUBLAS_OP_N, CUBLAS_OP_N},
             .m = {300, 50, 64}, .n = {200, 50, 32}, .k = {100, 50, 16},
             .lda = {300, 50, 16}, .ldb = {200, 50, 16}, .ldc = {300, 50, 64},
             .size = {2, 0, 3},
             .alpha = {1.5, 1.0, 2.0}, .beta = {0.5, 1.0, 0.0}};
    return G;
}

static uint64_t grouped_count_of(ozcrt_entry ep, ozcrt_reason r, uint64_t *calls)
{
    uint64_t by[OZCRT_R_COUNT], n;
    double flop;
    assert_int_equal(ozcrt_stats_read(ep, &n, by, &flop), 0);
    if (calls)
        *calls = n;
    return by[r];
}

/* The fake's last call is group g of G alone, through entry point ep. */
static void assert_group_alone(ozcrt_entry ep, const grp *G, int g, int64_t off)
{
    const fake_call *r = fake_cublas_last();
    assert_string_equal(r->name, ozcrt_entry_name(ep));
    assert_ptr_equal(r->handle, g_h);
    assert_int_equal(r->group_count, 1);
    assert_ptr_equal(r->m_array, garr(ep, 0, g));
    assert_ptr_equal(r->group_size, garr(ep, 6, g));
    assert_ptr_equal(r->alpha, &G->alpha[g]);
    assert_ptr_equal(r->beta, &G->beta[g]);
    assert_ptr_equal(r->Aarray, (const void *const *)g_gA + off);
    assert_ptr_equal(r->Barray, (const void *const *)g_gB + off);
    assert_ptr_equal(r->Carray, (void *const *)g_gC + off);
    assert_int_equal(r->m, G->m[g]);
    assert_int_equal(r->ldc, G->ldc[g]);
    assert_int_equal(r->batch, G->size[g]);
    assert_int_equal(r->transa, G->ta[g]);
}

/* The fake's last call is G's whole call, untouched. */
static void assert_grouped_whole(ozcrt_entry ep, const grp *G)
{
    const fake_call *r = fake_cublas_last();
    assert_int_equal(fake_cublas_count(), 1);
    assert_string_equal(r->name, ozcrt_entry_name(ep));
    assert_int_equal(r->group_count, G->count);
    assert_ptr_equal(r->m_array, garr(ep, 0, 0));
    assert_ptr_equal(r->group_size, garr(ep, 6, 0));
    assert_ptr_equal(r->alpha, G->alpha);
    assert_ptr_equal(r->Aarray, (const void *const *)g_gA);
}

/* Group by group: the two non-empty groups emulated in order (the last run
 * has the third group's host scalars), the empty one alone to cuBLAS with
 * the arrays from it on; one count a group. All four entry points. */
static void t_grouped(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
    for (int e = 0; e < 4; e++) {
        const ozcrt_entry ep = k_grouped[e];
        grp G = three_groups();
        uint64_t calls0, calls;
        const uint64_t emu = grouped_count_of(ep, OZCRT_R_EMULATED, &calls0), empty = grouped_count_of(ep, OZCRT_R_EMPTY, NULL);
        int runs = g_runs;
        assert_int_equal(grouped(ep, &G, CUDA_R_64F, 0, CUBLAS_STATUS_SUCCESS), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(g_runs, runs + 2);
        assert_true(g_ran.alpha == 2.0 && g_ran.beta == 0.0);
        assert_int_equal(fake_cublas_count(), 1);
        assert_group_alone(ep, &G, 1, 2);
        assert_int_equal(grouped_count_of(ep, OZCRT_R_EMULATED, &calls), emu + 2);
        assert_int_equal(grouped_count_of(ep, OZCRT_R_EMPTY, NULL), empty + 1);
        assert_int_equal(calls, calls0 + 3);
        assert_int_equal(g_leases, 0);
    }
    assert_logged("cublasGemmGroupedBatchedEx_64 m=64 n=32 k=16 ops=TN batch=3 -> emulated (phase22)");
}

/* A group cuBLAS must judge (invalid arguments, types other than FP64), a
 * missing host array, no groups, or the handle in device pointer mode: the
 * whole call to cuBLAS untouched, nothing run, counted once. */
static void t_grouped_whole(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
    for (int e = 0; e < 4; e++) {
        const ozcrt_entry ep = k_grouped[e];
        const int ex = e >= 2;
        int runs = g_runs;
        uint64_t calls0, calls;
        const uint64_t inval = grouped_count_of(ep, OZCRT_R_INVALID_ARGS, &calls0);
        grp G = three_groups();
        G.lda[2] = 15; /* < k for TN: invalid, in the last group */
        assert_int_equal(grouped(ep, &G, CUDA_R_64F, 0, CUBLAS_STATUS_INVALID_VALUE), CUBLAS_STATUS_INVALID_VALUE);
        assert_grouped_whole(ep, &G);
        G = three_groups();
        G.size[1] = -1;
        assert_int_equal(grouped(ep, &G, CUDA_R_64F, 0, CUBLAS_STATUS_INVALID_VALUE), CUBLAS_STATUS_INVALID_VALUE);
        assert_grouped_whole(ep, &G);
        G = three_groups();
        assert_int_equal(grouped(ep, &G, CUDA_R_64F, 1, CUBLAS_STATUS_INVALID_VALUE), CUBLAS_STATUS_INVALID_VALUE);
        assert_grouped_whole(ep, &G);
        assert_int_equal(grouped_count_of(ep, OZCRT_R_INVALID_ARGS, &calls), inval + 3);
        assert_int_equal(calls, calls0 + 3);
        G.count = 0;
        assert_int_equal(grouped(ep, &G, CUDA_R_64F, 0, CUBLAS_STATUS_SUCCESS), CUBLAS_STATUS_SUCCESS);
        assert_grouped_whole(ep, &G);
        G = three_groups();
        assert_int_equal(cublasSetPointerMode_v2(g_h, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_SUCCESS);
        const uint64_t dev = grouped_count_of(ep, OZCRT_R_GROUPED_DEVICE_MODE, NULL);
        assert_int_equal(grouped(ep, &G, CUDA_R_64F, 0, CUBLAS_STATUS_NOT_SUPPORTED), CUBLAS_STATUS_NOT_SUPPORTED);
        assert_grouped_whole(ep, &G);
        assert_int_equal(grouped_count_of(ep, OZCRT_R_GROUPED_DEVICE_MODE, NULL), dev + 1);
        assert_int_equal(cublasSetPointerMode_v2(g_h, CUBLAS_POINTER_MODE_HOST), CUBLAS_STATUS_SUCCESS);
        if (ex) {
            const uint64_t type = grouped_count_of(ep, OZCRT_R_TYPE, NULL);
            assert_int_equal(grouped(ep, &G, CUDA_R_32F, 0, CUBLAS_STATUS_SUCCESS), CUBLAS_STATUS_SUCCESS);
            assert_grouped_whole(ep, &G);
            assert_int_equal(fake_cublas_last()->Atype, CUDA_R_32F);
            assert_int_equal(grouped_count_of(ep, OZCRT_R_TYPE, NULL), type + 1);
            /* complex: cuBLAS's grouped entry point takes real types only, so cuBLAS judges it */
            assert_int_equal(grouped(ep, &G, CUDA_C_64F, 0, CUBLAS_STATUS_NOT_SUPPORTED), CUBLAS_STATUS_NOT_SUPPORTED);
            assert_grouped_whole(ep, &G);
            assert_int_equal(fake_cublas_last()->Atype, CUDA_C_64F);
            assert_int_equal(fake_cublas_last()->compute, CUBLAS_COMPUTE_64F);
            assert_int_equal(grouped_count_of(ep, OZCRT_R_TYPE, NULL), type + 2);
        }
        assert_int_equal(g_runs, runs);
    }
    assert_logged("cublasGemmGroupedBatchedEx_64 group_count=3 -> forward: grouped-device-pointer-mode");
}

/* A group forwarded alone that fails: its status comes back, later groups
 * do not run. Launches that fail: each group alone to cuBLAS. */
static void t_grouped_failures(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
    for (int e = 0; e < 4; e++) {
        const ozcrt_entry ep = k_grouped[e];
        grp G = three_groups();
        int runs = g_runs;
        assert_int_equal(grouped(ep, &G, CUDA_R_64F, 0, CUBLAS_STATUS_EXECUTION_FAILED),
                         CUBLAS_STATUS_EXECUTION_FAILED);
        assert_int_equal(g_runs, runs + 1);
        assert_int_equal(fake_cublas_count(), 1);
        assert_group_alone(ep, &G, 1, 2);
        g_run_err = cudaErrorLaunchOutOfResources;
        assert_int_equal(grouped(ep, &G, CUDA_R_64F, 0, CUBLAS_STATUS_SUCCESS), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(fake_cublas_count(), 3);
        assert_group_alone(ep, &G, 2, 2);
        assert_int_equal(g_leases, 0);
        g_run_err = 0;
    }
}

/* Shadow mode: a group is compared like a batch; its native run is the
 * group alone through the same entry point, into shadow mode's C. */
static void t_grouped_shadow(void **state)
{
    (void)state;
    for (int e = 0; e < 4; e++) {
        const ozcrt_entry ep = k_grouped[e];
        set_shadow(OZCRT_MODE_OZAKI2, 53, 1, 0, CUBLAS_STATUS_SUCCESS);
        g_cmp.run_native = 1;
        grp G = three_groups();
        G.count = 1;
        assert_int_equal(grouped(ep, &G, CUDA_R_64F, 0, CUBLAS_STATUS_SUCCESS), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(g_cmp.calls, 1);
        assert_string_equal(g_cmp.entry, ozcrt_entry_name(ep));
        assert_int_equal(g_cmp.batch, 2);
        assert_int_equal(g_cmp.native_status, CUBLAS_STATUS_SUCCESS);
        const fake_call *r = fake_cublas_last();
        assert_int_equal(fake_cublas_count(), 1);
        assert_string_equal(r->name, ozcrt_entry_name(ep));
        assert_int_equal(r->group_count, 1);
        assert_int_equal(r->m, 300);
        assert_int_equal(r->n, 200);
        assert_int_equal(r->k, 100);
        assert_int_equal(r->lda, 300);
        assert_int_equal(r->ldc, 301); /* shadow mode's C */
        assert_int_equal(r->batch, 2);
        assert_int_equal(r->transb, CUBLAS_OP_T);
        assert_ptr_equal(r->alpha, &G.alpha[0]);
        if (e >= 2)
            assert_int_equal(r->compute, CUBLAS_COMPUTE_64F);
    }
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* ---- a cublasLtMatmul call (lt.c builds it): the call's own stream and pointer mode, its hooks ---- */
static int g_prepared, g_prepare_err, g_native_calls;
static cudaStream_t g_prepared_on;
static int g_runs_at_prepare;
static int lt_prepare(const ozcrt_call *c, cudaStream_t s)
{
    assert_ptr_equal(c->ext, &g_prepared);
    assert_int_equal(c->m, 300);
    g_prepared++;
    g_prepared_on = s;
    g_runs_at_prepare = g_runs;
    return g_prepare_err;
}
static int lt_native_run(const ozcrt_call *c, const oz_gemm_desc *into)
{
    assert_ptr_equal(c->ext, &g_prepared);
    assert_ptr_equal(into->C, (double *)0x7000);
    g_native_calls++;
    return CUBLAS_STATUS_SUCCESS;
}

static ozcrt_call lt_call_of(int device_scalars)
{
    static const double two = 2.0, one_ = 1.0;
    ozcrt_call c = {.ep = OZCRT_EP_cublasLtMatmul, .handle = (cublasHandle_t)(void *)0x9000, .transa = CUBLAS_OP_T,
                    .transb = CUBLAS_OP_N, .m = 300, .n = 200, .k = 100, .alpha = &two, .beta = &one_, .A = PA,
                    .B = PB, .C = PC, .lda = 100, .ldb = 100, .ldc = 300, .batch = 1, .lt = 1,
                    .stream = (cudaStream_t)0xabc, .device_scalars = device_scalars, .ext = &g_prepared,
                    .prepare = lt_prepare, .native = lt_native_run};
    return c;
}

/* No handle query (the Lt handle is no cuBLAS handle: the fake counts
 * queries), the call's stream and scalars' place, the Lt handle as the
 * workspace key, prepare before the run on that stream; prepare failing:
 * forwarded as launch-failed, nothing run; shadow mode's native run is the
 * call's own. */
static void t_lt_route(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
    fake_cublas_reset();
    ozcrt_call c = lt_call_of(0);
    cublasStatus_t st = CUBLAS_STATUS_NOT_SUPPORTED;
    int runs = g_runs;
    g_prepared = 0, g_prepare_err = 0;
    assert_int_equal(ozcrt_route(&c, &st), 1);
    assert_int_equal(st, CUBLAS_STATUS_SUCCESS);
    assert_int_equal(fake_cublas_queries(), 0);
    assert_int_equal(g_runs, runs + 1);
    assert_int_equal(g_prepared, 1);
    assert_int_equal(g_runs_at_prepare, runs);
    assert_ptr_equal(g_prepared_on, (cudaStream_t)0xabc);
    assert_ptr_equal(g_ran.stream, (void *)0xabc);
    assert_false(g_ran.on_device);
    assert_true(g_ran.alpha == 2.0 && g_ran.beta == 1.0);
    assert_ptr_equal(g_ws_handle, (cublasHandle_t)(void *)0x9000);
    assert_int_equal(g_leases, 0);
    c = lt_call_of(1);
    assert_int_equal(ozcrt_route(&c, &st), 1);
    assert_true(g_ran.on_device);
    /* prepare fails: forwarded, counted as launch-failed, the product not run */
    uint64_t calls, by[OZCRT_R_COUNT];
    double flop;
    assert_int_equal(ozcrt_stats_read(OZCRT_EP_cublasLtMatmul, &calls, by, &flop), 0);
    const uint64_t lf = by[OZCRT_R_LAUNCH_FAILED];
    g_prepare_err = cudaErrorInvalidValue;
    runs = g_runs;
    assert_int_equal(ozcrt_route(&c, &st), 0);
    assert_int_equal(g_runs, runs);
    assert_int_equal(g_leases, 0);
    assert_int_equal(ozcrt_stats_read(OZCRT_EP_cublasLtMatmul, &calls, by, &flop), 0);
    assert_int_equal(by[OZCRT_R_LAUNCH_FAILED], lf + 1);
    assert_logged("cublasLtMatmul m=300 n=200 k=100 batch=1: the epilogue's fill of C failed");
    g_prepare_err = 0;
    /* shadow mode: prepared, then compared with the call's own native run */
    set_shadow(OZCRT_MODE_OZAKI2, 53, 1, 0, CUBLAS_STATUS_SUCCESS);
    g_cmp.run_native = 1;
    g_native_calls = 0;
    c = lt_call_of(0);
    assert_int_equal(ozcrt_route(&c, &st), 1);
    assert_int_equal(g_native_calls, 1);
    assert_int_equal(g_cmp.native_status, CUBLAS_STATUS_SUCCESS);
    assert_string_equal(g_cmp.entry, "cublasLtMatmul");
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* ---- the complex entry points (ZGEMM) ---- */
static const ozcrt_entry k_zentries[] = {
    OZCRT_EP_cublasZgemm_v2,          OZCRT_EP_cublasZgemm_v2_64,        OZCRT_EP_cublasZgemm3m,
    OZCRT_EP_cublasZgemm3m_64,        OZCRT_EP_cublasZgemmStridedBatched, OZCRT_EP_cublasZgemmStridedBatched_64,
    OZCRT_EP_cublasZgemmBatched,      OZCRT_EP_cublasZgemmBatched_64,    OZCRT_EP_cublasGemmEx,
    OZCRT_EP_cublasGemmEx_64,         OZCRT_EP_cublasGemmStridedBatchedEx, OZCRT_EP_cublasGemmStridedBatchedEx_64,
    OZCRT_EP_cublasGemmBatchedEx,     OZCRT_EP_cublasGemmBatchedEx_64};
#define NZ (sizeof k_zentries / sizeof k_zentries[0])
static const cuDoubleComplex z_alpha = {1.5, -0.5}, z_beta = {0.25, 2.0}, z_zero = {0.0, -0.0}, z_imag = {0.0, 1.0};
#define ZA ((const cuDoubleComplex *)0x1000)
#define ZB ((const cuDoubleComplex *)0x2000)
#define ZC ((cuDoubleComplex *)0x3000)
static const cuDoubleComplex *const g_zA[3] = {ZA, ZA + 10, ZA + 20};
static const cuDoubleComplex *const g_zB[3] = {ZB, ZB + 10, ZB + 20};
static cuDoubleComplex *const g_zC[3] = {ZC, ZC + 10, ZC + 20};

/* One complex call: ops, sizes, lds, alpha; the Ex ones with these types. */
typedef struct zcall {
    cublasOperation_t ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    const cuDoubleComplex *alpha;
    cudaDataType at, bt, ct;
    cublasComputeType_t compute;
} zcall;

/* 300 x 200 x 100, A conjugate-transposed (lda >= k), B transposed (ldb >= n), all CUDA_C_64F */
static zcall z_default(void)
{
    zcall z = {CUBLAS_OP_C, CUBLAS_OP_T, 300, 200, 100, 100, 200, 301, &z_alpha,
               CUDA_C_64F, CUDA_C_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F};
    return z;
}

static int z_strided(ozcrt_entry ep)
{
    return ep == OZCRT_EP_cublasZgemmStridedBatched || ep == OZCRT_EP_cublasZgemmStridedBatched_64 ||
           ep == OZCRT_EP_cublasGemmStridedBatchedEx || ep == OZCRT_EP_cublasGemmStridedBatchedEx_64;
}

static int z_typed(ozcrt_entry ep)
{
    return ep == OZCRT_EP_cublasGemmEx || ep == OZCRT_EP_cublasGemmEx_64 || ep == OZCRT_EP_cublasGemmStridedBatchedEx ||
           ep == OZCRT_EP_cublasGemmStridedBatchedEx_64 || ep == OZCRT_EP_cublasGemmBatchedEx ||
           ep == OZCRT_EP_cublasGemmBatchedEx_64;
}

static int64_t z_batch(ozcrt_entry ep)
{
    return z_strided(ep) || ozcrt_entry_arrays(ep) ? 3 : 1;
}

/* The call through the shim's entry point ep (strides 1000, 2000, 3000 and
 * batch 3 where it has them); the fake cuBLAS answers `fake`. */
static cublasStatus_t zgemm(ozcrt_entry ep, const zcall *z, cublasStatus_t fake)
{
    fake_cublas_reset();
    fake_cublas_set_status(fake);
    const int ta = z->ta, tb = z->tb, m = (int)z->m, n = (int)z->n, k = (int)z->k;
    const int lda = (int)z->lda, ldb = (int)z->ldb, ldc = (int)z->ldc;
    const void *const *vA = (const void *const *)g_zA, *const *vB = (const void *const *)g_zB;
    void *const *vC = (void *const *)g_zC;
    switch (ep) {
    case OZCRT_EP_cublasZgemm_v2:
        return cublasZgemm_v2(g_h, ta, tb, m, n, k, z->alpha, ZA, lda, ZB, ldb, &z_beta, ZC, ldc);
    case OZCRT_EP_cublasZgemm_v2_64:
        return cublasZgemm_v2_64(g_h, ta, tb, z->m, z->n, z->k, z->alpha, ZA, z->lda, ZB, z->ldb, &z_beta, ZC, z->ldc);
    case OZCRT_EP_cublasZgemm3m:
        return cublasZgemm3m(g_h, ta, tb, m, n, k, z->alpha, ZA, lda, ZB, ldb, &z_beta, ZC, ldc);
    case OZCRT_EP_cublasZgemm3m_64:
        return cublasZgemm3m_64(g_h, ta, tb, z->m, z->n, z->k, z->alpha, ZA, z->lda, ZB, z->ldb, &z_beta, ZC, z->ldc);
    case OZCRT_EP_cublasZgemmStridedBatched:
        return cublasZgemmStridedBatched(g_h, ta, tb, m, n, k, z->alpha, ZA, lda, 1000, ZB, ldb, 2000, &z_beta, ZC,
                                         ldc, 3000, 3);
    case OZCRT_EP_cublasZgemmStridedBatched_64:
        return cublasZgemmStridedBatched_64(g_h, ta, tb, z->m, z->n, z->k, z->alpha, ZA, z->lda, 1000, ZB, z->ldb, 2000,
                                            &z_beta, ZC, z->ldc, 3000, 3);
    case OZCRT_EP_cublasZgemmBatched:
        return cublasZgemmBatched(g_h, ta, tb, m, n, k, z->alpha, g_zA, lda, g_zB, ldb, &z_beta, g_zC, ldc, 3);
    case OZCRT_EP_cublasZgemmBatched_64:
        return cublasZgemmBatched_64(g_h, ta, tb, z->m, z->n, z->k, z->alpha, g_zA, z->lda, g_zB, z->ldb, &z_beta, g_zC,
                                     z->ldc, 3);
    case OZCRT_EP_cublasGemmEx:
        return cublasGemmEx(g_h, ta, tb, m, n, k, z->alpha, ZA, z->at, lda, ZB, z->bt, ldb, &z_beta, ZC, z->ct, ldc,
                            z->compute, CUBLAS_GEMM_DEFAULT);
    case OZCRT_EP_cublasGemmEx_64:
        return cublasGemmEx_64(g_h, ta, tb, z->m, z->n, z->k, z->alpha, ZA, z->at, z->lda, ZB, z->bt, z->ldb, &z_beta,
                               ZC, z->ct, z->ldc, z->compute, CUBLAS_GEMM_DEFAULT);
    case OZCRT_EP_cublasGemmStridedBatchedEx:
        return cublasGemmStridedBatchedEx(g_h, ta, tb, m, n, k, z->alpha, ZA, z->at, lda, 1000, ZB, z->bt, ldb, 2000,
                                          &z_beta, ZC, z->ct, ldc, 3000, 3, z->compute, CUBLAS_GEMM_DEFAULT);
    case OZCRT_EP_cublasGemmStridedBatchedEx_64:
        return cublasGemmStridedBatchedEx_64(g_h, ta, tb, z->m, z->n, z->k, z->alpha, ZA, z->at, z->lda, 1000, ZB,
                                             z->bt, z->ldb, 2000, &z_beta, ZC, z->ct, z->ldc, 3000, 3, z->compute,
                                             CUBLAS_GEMM_DEFAULT);
    case OZCRT_EP_cublasGemmBatchedEx:
        return cublasGemmBatchedEx(g_h, ta, tb, m, n, k, z->alpha, vA, z->at, lda, vB, z->bt, ldb, &z_beta, vC, z->ct,
                                   ldc, 3, z->compute, CUBLAS_GEMM_DEFAULT);
    default:
        return cublasGemmBatchedEx_64(g_h, ta, tb, z->m, z->n, z->k, z->alpha, vA, z->at, z->lda, vB, z->bt, z->ldb,
                                      &z_beta, vC, z->ct, z->ldc, 3, z->compute, CUBLAS_GEMM_DEFAULT);
    }
}

static uint64_t ep_count_of(ozcrt_entry ep, ozcrt_reason r)
{
    uint64_t calls, by[OZCRT_R_COUNT];
    double flop;
    assert_int_equal(ozcrt_stats_read(ep, &calls, by, &flop), 0);
    return by[r];
}

/* The fake's only call is ep's, with exactly the caller's arguments. */
static void assert_z_forwarded(ozcrt_entry ep, const zcall *z)
{
    const fake_call *r = fake_cublas_last();
    assert_int_equal(fake_cublas_count(), 1);
    assert_string_equal(r->name, ozcrt_entry_name(ep));
    assert_ptr_equal(r->handle, g_h);
    assert_int_equal(r->transa, z->ta);
    assert_int_equal(r->transb, z->tb);
    assert_int_equal(r->m, z->m);
    assert_int_equal(r->n, z->n);
    assert_int_equal(r->k, z->k);
    assert_int_equal(r->lda, z->lda);
    assert_int_equal(r->ldb, z->ldb);
    assert_int_equal(r->ldc, z->ldc);
    assert_ptr_equal(r->alpha, z->alpha);
    assert_ptr_equal(r->beta, &z_beta);
    if (ozcrt_entry_arrays(ep)) {
        assert_ptr_equal(r->Aarray, g_zA);
        assert_ptr_equal(r->Barray, g_zB);
        assert_ptr_equal(r->Carray, g_zC);
    } else {
        assert_ptr_equal(r->A, ZA);
        assert_ptr_equal(r->B, ZB);
        assert_ptr_equal(r->C, ZC);
    }
    if (z_strided(ep)) {
        assert_int_equal(r->strideA, 1000);
        assert_int_equal(r->strideB, 2000);
        assert_int_equal(r->strideC, 3000);
    }
    assert_int_equal(r->batch, z_batch(ep));
    if (z_typed(ep)) {
        assert_int_equal(r->Atype, z->at);
        assert_int_equal(r->Btype, z->bt);
        assert_int_equal(r->Ctype, z->ct);
        assert_int_equal(r->compute, z->compute);
    }
}

/* ep's call forwarded untouched for reason r (counted once), cuBLAS's status back, nothing run. */
static void z_expect_forwarded(ozcrt_entry ep, const zcall *z, ozcrt_reason r)
{
    const uint64_t before = ep_count_of(ep, r);
    const int runs = g_runs, oz2 = g_oz2_runs;
    assert_int_equal(zgemm(ep, z, CUBLAS_STATUS_INVALID_VALUE), CUBLAS_STATUS_INVALID_VALUE);
    assert_z_forwarded(ep, z);
    assert_int_equal(ep_count_of(ep, r), before + 1);
    assert_int_equal(g_runs, runs);
    assert_int_equal(g_oz2_runs, oz2);
    assert_int_equal(g_leases, 0);
}

/* The phase22 mode has no complex path: every complex entry point is
 * forwarded (complex-phase22), the arguments untouched. */
static void t_complex_phase22(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
    const zcall z = z_default();
    for (size_t i = 0; i < NZ; i++)
        z_expect_forwarded(k_zentries[i], &z, OZCRT_R_COMPLEX_PHASE22);
    assert_logged("ozcrt: cublasZgemm3m_64 m=300 n=200 k=100 ops=CT batch=1 -> forward: complex-phase22");
    /* the sizes first: a small complex call is below-threshold */
    g_settings.min_m = 301;
    z_expect_forwarded(OZCRT_EP_cublasZgemm_v2, &z, OZCRT_R_SMALL);
    g_settings.min_m = 1;
}

/* Automatic precision takes complex calls too: planned (for the speed
 * rule) at the target's fixed bits, run with the automatic bits, the log
 * naming the complex automatic path. */
static void t_complex_auto(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_OZAKI2, -53, 0, 0, 0);
    const zcall z = z_default();
    for (size_t i = 0; i < NZ; i++) {
        const ozcrt_entry ep = k_zentries[i];
        const uint64_t emu = ep_count_of(ep, OZCRT_R_EMULATED);
        const int oz2 = g_oz2_runs, asked = g_oz2z_calls;
        memset(&g_ran, 0, sizeof g_ran);
        assert_int_equal(zgemm(ep, &z, CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(fake_cublas_count(), 0);
        assert_int_equal(g_oz2_runs, oz2 + 1);
        assert_int_equal(g_oz2z_calls, asked + 1);
        assert_int_equal(g_oz2z_bits, 53);
        assert_int_equal(g_oz2_bits, -53);
        assert_int_equal(g_ran.d.elem, OZ_ELEM_COMPLEX);
        assert_int_equal(ep_count_of(ep, OZCRT_R_EMULATED), emu + 1);
    }
    assert_logged("ozcrt: cublasGemmBatchedEx_64 m=300 n=200 k=100 ops=CT batch=3 -> emulated (ozaki2 complex auto)");
    /* k at the estimate's bound (2^32 complex terms) and past it: bits-unreachable */
    zcall big = z_default();
    big.k = INT64_C(1) << 32;
    big.lda = big.k;
    z_expect_forwarded(OZCRT_EP_cublasZgemm_v2_64, &big, OZCRT_R_BITS_UNREACHABLE);
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* cuBLAS's argument rules, for every complex entry point (and in every
 * mode: before the mode's own reasons): bad ops, negative sizes, lds below
 * the minimum, NULL scalars or matrices go to cuBLAS (invalid-args), whose
 * status comes back; m or n == 0 is empty, k == 0 k0-or-alpha0. */
static void t_complex_invalid(void **state)
{
    (void)state;
    const ozcrt_mode modes[2] = {OZCRT_MODE_PHASE22, OZCRT_MODE_OZAKI2};
    for (int md = 0; md < 2; md++) {
        set_shadow(modes[md], md ? 53 : -53, 0, 0, 0);
        for (size_t i = 0; i < NZ; i++) {
            const ozcrt_entry ep = k_zentries[i];
            zcall z = z_default();
            z.ta = (cublasOperation_t)7;
            z_expect_forwarded(ep, &z, OZCRT_R_INVALID_ARGS);
            z = z_default(), z.tb = CUBLAS_OP_CONJG; /* the op after C: not one of N, T, C */
            z_expect_forwarded(ep, &z, OZCRT_R_INVALID_ARGS);
            z = z_default(), z.m = -1;
            z_expect_forwarded(ep, &z, OZCRT_R_INVALID_ARGS);
            z = z_default(), z.k = -2;
            z_expect_forwarded(ep, &z, OZCRT_R_INVALID_ARGS);
            z = z_default(), z.lda = 99; /* < k under C */
            z_expect_forwarded(ep, &z, OZCRT_R_INVALID_ARGS);
            z = z_default(), z.ta = CUBLAS_OP_N, z.lda = 299; /* < m under N */
            z_expect_forwarded(ep, &z, OZCRT_R_INVALID_ARGS);
            z = z_default(), z.ldb = 199; /* < n under T */
            z_expect_forwarded(ep, &z, OZCRT_R_INVALID_ARGS);
            z = z_default(), z.ldc = 299; /* < m */
            z_expect_forwarded(ep, &z, OZCRT_R_INVALID_ARGS);
            z = z_default(), z.alpha = NULL;
            z_expect_forwarded(ep, &z, OZCRT_R_INVALID_ARGS);
            z = z_default(), z.m = 0, z.ldc = 1;
            z_expect_forwarded(ep, &z, OZCRT_R_EMPTY);
            z = z_default(), z.k = 0, z.lda = 1;
            z_expect_forwarded(ep, &z, OZCRT_R_TRIVIAL);
        }
    }
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* The Ex entry points: all three CUDA_C_64F with compute 64F is a complex
 * call; mixed types, another compute type (the pedantic one too) or
 * single-precision complex stay `type`. */
static void t_complex_types(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
    static const struct {
        cudaDataType at, bt, ct;
        cublasComputeType_t compute;
    } bad[] = {
        {CUDA_C_64F, CUDA_R_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F},
        {CUDA_R_64F, CUDA_C_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F},
        {CUDA_C_64F, CUDA_C_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F},
        {CUDA_R_64F, CUDA_R_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F},
        {CUDA_C_64F, CUDA_C_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F_PEDANTIC},
        {CUDA_C_64F, CUDA_C_64F, CUDA_C_64F, CUBLAS_COMPUTE_32F},
        {CUDA_C_32F, CUDA_C_32F, CUDA_C_32F, CUBLAS_COMPUTE_32F},
    };
    for (size_t i = 0; i < NZ; i++) {
        const ozcrt_entry ep = k_zentries[i];
        if (!z_typed(ep))
            continue;
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            zcall z = z_default();
            z.at = bad[b].at, z.bt = bad[b].bt, z.ct = bad[b].ct, z.compute = bad[b].compute;
            z_expect_forwarded(ep, &z, OZCRT_R_TYPE);
        }
    }
    /* the pure checks name the element type */
    ozcrt_call c = {.ep = OZCRT_EP_cublasGemmEx, .handle = g_h, .transa = CUBLAS_OP_N, .transb = CUBLAS_OP_N, .m = 4,
                    .n = 4, .k = 4, .alpha = &z_alpha, .beta = &z_beta, .A = ZA, .B = ZB, .C = ZC, .lda = 4, .ldb = 4,
                    .ldc = 4, .batch = 1, .typed = 1, .Atype = CUDA_C_64F, .Btype = CUDA_C_64F, .Ctype = CUDA_C_64F,
                    .compute = CUBLAS_COMPUTE_64F, .algo = CUBLAS_GEMM_DEFAULT};
    c.elem = ozcrt_ex_elem(c.Atype);
    assert_int_equal(c.elem, OZ_ELEM_COMPLEX);
    assert_int_equal(ozcrt_check_args(&c), OZCRT_R_EMULATED);
    c.elem = OZ_ELEM_REAL; /* complex types on a real call: not FP64 */
    assert_int_equal(ozcrt_check_args(&c), OZCRT_R_TYPE);
    assert_int_equal(ozcrt_ex_elem(CUDA_R_64F), OZ_ELEM_REAL);
    assert_int_equal(ozcrt_ex_elem(CUDA_C_32F), OZ_ELEM_REAL);
}

/* The ozaki2 mode at a fixed OZCRT_BITS: every complex entry point is
 * emulated by oz2_gemm_run on a complex descriptor of the caller's
 * arguments, with the settings' bits, the plan from oz2z_gemm_moduli;
 * cuBLAS is not called; the log names the complex plan. */
static void t_complex_emulated(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_OZAKI2, 53, 0, 0, 0);
    const zcall z = z_default();
    for (size_t i = 0; i < NZ; i++) {
        const ozcrt_entry ep = k_zentries[i];
        const uint64_t emu = ep_count_of(ep, OZCRT_R_EMULATED);
        const int oz2 = g_oz2_runs, runs = g_runs, asked = g_oz2z_calls;
        g_sizes_elem = -1;
        memset(&g_ran, 0, sizeof g_ran);
        assert_int_equal(zgemm(ep, &z, CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(fake_cublas_count(), 0);
        assert_int_equal(g_oz2_runs, oz2 + 1);
        assert_int_equal(g_runs, runs);
        assert_int_equal(g_oz2z_calls, asked + 1);
        assert_int_equal(g_oz2z_bits, 53);
        assert_int_equal(g_oz2_bits, 53);
        assert_int_equal(g_sizes_elem, OZ_ELEM_COMPLEX);
        const oz_gemm_desc *d = &g_ran.d;
        assert_int_equal(d->elem, OZ_ELEM_COMPLEX);
        assert_int_equal(d->transa, CUBLAS_OP_C);
        assert_int_equal(d->transb, CUBLAS_OP_T);
        assert_true(d->m == 300 && d->n == 200 && d->k == 100);
        assert_true(d->lda == 100 && d->ldb == 200 && d->ldc == 301);
        assert_int_equal(d->batch, z_batch(ep));
        if (ozcrt_entry_arrays(ep)) {
            assert_ptr_equal(d->Aarray, g_zA);
            assert_ptr_equal(d->Barray, g_zB);
            assert_ptr_equal(d->Carray, g_zC);
        } else {
            assert_ptr_equal(d->A, ZA);
            assert_ptr_equal(d->B, ZB);
            assert_ptr_equal(d->C, ZC);
        }
        if (z_strided(ep))
            assert_true(d->strideA == 1000 && d->strideB == 2000 && d->strideC == 3000);
        assert_ptr_equal(d->alpha, &z_alpha);
        assert_false(g_ran.on_device);
        assert_true(g_ran.alpha == 1.5 && g_ran.alpha_im == -0.5 && g_ran.beta == 0.25 && g_ran.beta_im == 2.0);
        assert_int_equal(ep_count_of(ep, OZCRT_R_EMULATED), emu + 1);
        assert_int_equal(g_leases, 0);
    }
    assert_logged("ozcrt: cublasZgemmBatched m=300 n=200 k=100 ops=CT batch=3 -> emulated (ozaki2 complex N=16 "
                  "split=18 bits=53)");
    /* a real call's descriptor stays real */
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(g_ran.d.elem, OZ_ELEM_REAL);
    /* the emulated flops are complex ones: 8 m n k a product */
    uint64_t calls, by[OZCRT_R_COUNT];
    double flop0, flop1;
    assert_int_equal(ozcrt_stats_read(OZCRT_EP_cublasZgemm_v2, &calls, by, &flop0), 0);
    assert_int_equal(zgemm(OZCRT_EP_cublasZgemm_v2, &z, CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(ozcrt_stats_read(OZCRT_EP_cublasZgemm_v2, &calls, by, &flop1), 0);
    assert_true(flop1 - flop0 == 8.0 * 300 * 200 * 100);
    /* the table counts them apart from the real calls */
    char path[512];
    snprintf(path, sizeof path, "%s.complex-stats", getenv("OZCRT_LOG_FILE"));
    assert_int_equal(ozcrt_stats_write_table(path), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char table[16384];
    const size_t n = fread(table, 1, sizeof table - 1, f);
    table[n] = '\0';
    fclose(f);
    if (!strstr(table, "ozaki2-complex(N=16)=") || !strstr(table, "cublasZgemmStridedBatched_64") ||
        !strstr(table, "complex-phase22="))
        fail_msg("the stats table does not show the complex calls:\n%s", table);
    /* and says what the results of each kind of path that ran are worth */
    const int auto_ran = strstr(table, "(auto)=") != NULL; /* earlier tests' automatic calls, if any */
    if (!strstr(table, "accuracy of the emulated calls: phase22: about 34 bits") ||
        !strstr(table, "; ozaki2 at fixed bits: ") || (strstr(table, "; ozaki2 auto: every element") != NULL) != auto_ran)
        fail_msg("the stats table's accuracy line does not name the paths that ran:\n%s", strstr(table, "emulated calls by"));
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* alpha == 0 in host pointer mode is both parts 0 (-0.0 included): k0-or-alpha0;
 * an imaginary alpha is no zero; device scalars are never read. */
static void t_complex_alpha(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_OZAKI2, 53, 0, 0, 0);
    for (size_t i = 0; i < NZ; i++) {
        const ozcrt_entry ep = k_zentries[i];
        zcall z = z_default();
        z.alpha = &z_zero;
        z_expect_forwarded(ep, &z, OZCRT_R_TRIVIAL);
        z.alpha = &z_imag;
        const int oz2 = g_oz2_runs;
        assert_int_equal(zgemm(ep, &z, CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(g_oz2_runs, oz2 + 1);
        assert_true(g_ran.alpha == 0.0 && g_ran.alpha_im == 1.0);
    }
    assert_int_equal(cublasSetPointerMode_v2(g_h, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_SUCCESS);
    zcall z = z_default();
    z.alpha = (const cuDoubleComplex *)0x10; /* a device address: reading it on the host would crash */
    const int oz2 = g_oz2_runs;
    assert_int_equal(zgemm(OZCRT_EP_cublasZgemm_v2, &z, CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(g_oz2_runs, oz2 + 1);
    assert_true(g_ran.on_device);
    assert_int_equal(cublasSetPointerMode_v2(g_h, CUBLAS_POINTER_MODE_HOST), CUBLAS_STATUS_SUCCESS);
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* An Inf or NaN alpha or beta in host pointer mode (either part of a
 * complex alpha): forwarded (nonfinite-scalar), cuBLAS decides where Inf and
 * NaN go; finite ones are emulated; device scalars are never read. */
static void t_nonfinite_scalars(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_OZAKI2, 53, 0, 0, 0);
    static const double bad[3] = {INFINITY, -INFINITY, NAN};
    for (int i = 0; i < 3; i++) {
        const uint64_t before = count_of(OZCRT_R_NONFINITE_SCALAR);
        const int runs = g_runs, oz2 = g_oz2_runs;
        fake_cublas_reset();
        fake_cublas_set_status(CUBLAS_STATUS_INVALID_VALUE);
        assert_int_equal(cublasDgemm_v2(g_h, CUBLAS_OP_N, CUBLAS_OP_T, 300, 200, 100, &bad[i], PA, 300, PB, 200, &half,
                                        PC, 300),
                         CUBLAS_STATUS_INVALID_VALUE);
        fake_cublas_reset();
        fake_cublas_set_status(CUBLAS_STATUS_INVALID_VALUE);
        assert_int_equal(cublasDgemm_v2(g_h, CUBLAS_OP_N, CUBLAS_OP_T, 300, 200, 100, &one, PA, 300, PB, 200, &bad[i],
                                        PC, 300),
                         CUBLAS_STATUS_INVALID_VALUE);
        assert_int_equal(count_of(OZCRT_R_NONFINITE_SCALAR), before + 2);
        assert_int_equal(g_runs + g_oz2_runs, runs + oz2);
        for (size_t e = 0; e < NZ; e++) {
            const cuDoubleComplex za = {1.0, bad[i]}, zb = {bad[i], 0.0};
            zcall z = z_default();
            z.alpha = &za; /* the imaginary part */
            z_expect_forwarded(k_zentries[e], &z, OZCRT_R_NONFINITE_SCALAR);
            z.alpha = &zb; /* the real part */
            z_expect_forwarded(k_zentries[e], &z, OZCRT_R_NONFINITE_SCALAR);
        }
    }
    const int oz2 = g_oz2_runs;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS); /* finite: emulated */
    assert_int_equal(g_oz2_runs, oz2 + 1);
    assert_int_equal(cublasSetPointerMode_v2(g_h, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_SUCCESS);
    zcall z = z_default();
    z.alpha = (const cuDoubleComplex *)0x10; /* a device address: never read on the host */
    assert_int_equal(zgemm(OZCRT_EP_cublasZgemm_v2, &z, CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(g_oz2_runs, oz2 + 2);
    assert_int_equal(cublasSetPointerMode_v2(g_h, CUBLAS_POINTER_MODE_HOST), CUBLAS_STATUS_SUCCESS);
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* The handle's math mode asks for cuBLAS's own numerics: math-mode; the
 * handle's stream is the run's. */
static void t_complex_handle(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_OZAKI2, 53, 0, 0, 0);
    const zcall z = z_default();
    assert_int_equal(cublasSetMathMode(g_h, CUBLAS_PEDANTIC_MATH), CUBLAS_STATUS_SUCCESS);
    for (size_t i = 0; i < NZ; i++)
        z_expect_forwarded(k_zentries[i], &z, OZCRT_R_MATH_MODE);
    assert_int_equal(cublasSetMathMode(g_h, CUBLAS_DEFAULT_MATH), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(cublasSetStream_v2(g_h, (cudaStream_t)0x4321), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(zgemm(OZCRT_EP_cublasZgemmStridedBatched, &z, CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_ptr_equal(g_ran.stream, (void *)0x4321);
    assert_ptr_equal(g_ws_handle, g_h);
    assert_int_equal(cublasSetStream_v2(g_h, NULL), CUBLAS_STATUS_SUCCESS);
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* The complex plan unreachable (oz2z_gemm_moduli 0): bits-unreachable; the
 * speed rule with the complex model at the plan's split moduli. */
static void t_complex_plan_and_speed(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_OZAKI2, 64, 0, 0, 0);
    const zcall z = z_default();
    g_oz2z_n = 0;
    for (size_t i = 0; i < NZ; i++)
        z_expect_forwarded(k_zentries[i], &z, OZCRT_R_BITS_UNREACHABLE);
    g_oz2z_n = FAKE_OZ2_N;
    /* OZCRT_MIN_SPEEDUP 1: each shape emulated exactly when the complex
     * model at N' = FAKE_OZ2Z_SPLIT says so; among them shapes that the
     * real model at N, or the complex one at N instead of N', judges the
     * other way (so the rule is seen to take the complex model at N') */
    g_settings.min_speedup = 100;
    static const int64_t dims[][3] = {{1024, 1024, 1024}, {2048, 2048, 2048}, {2560, 2560, 2560},
                                      {4096, 4096, 512},  {4096, 4096, 1024}, {8192, 8192, 8192}};
    int fast = 0, slow = 0, not_real = 0, not_at_n = 0;
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
        zcall zs = z_default();
        zs.ta = zs.tb = CUBLAS_OP_N;
        zs.m = dims[i][0], zs.n = dims[i][1], zs.k = dims[i][2];
        zs.lda = zs.m, zs.ldb = zs.k, zs.ldc = zs.m;
        const int want = ozcrt_oz2z_speedup(zs.m, zs.n, zs.k, 1, FAKE_OZ2Z_SPLIT) >= 1.0;
        fast += want, slow += !want;
        not_real += want != (ozcrt_oz2_speedup(zs.m, zs.n, zs.k, 1, FAKE_OZ2_N) >= 1.0);
        not_at_n += want != (ozcrt_oz2z_speedup(zs.m, zs.n, zs.k, 1, FAKE_OZ2_N) >= 1.0);
        if (want) {
            const int oz2 = g_oz2_runs;
            assert_int_equal(zgemm(OZCRT_EP_cublasZgemm_v2, &zs, CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
            assert_int_equal(g_oz2_runs, oz2 + 1);
        } else {
            z_expect_forwarded(OZCRT_EP_cublasZgemm_v2, &zs, OZCRT_R_SLOWER);
        }
    }
    assert_true(fast > 0 && slow > 0 && not_real > 0 && not_at_n > 0);
    g_settings.min_speedup = 0;
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* Shadow mode: a complex call goes to ozcmp_gemm (which compares it,
 * compare/shadow.c) on the complex descriptor, with the ozaki2 bound at the
 * complex plan's w (oz2z_gemm_moduli's, not the real plan's); its native
 * run is the caller's own call, C redirected. */
static void t_complex_shadow(void **state)
{
    (void)state;
    const zcall z = z_default();
    for (size_t i = 0; i < NZ; i++) {
        const ozcrt_entry ep = k_zentries[i];
        set_shadow(OZCRT_MODE_OZAKI2, 53, 1, 0, CUBLAS_STATUS_SUCCESS);
        g_cmp.run_native = 1;
        assert_int_equal(zgemm(ep, &z, CUBLAS_STATUS_SUCCESS), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(g_cmp.calls, 1);
        assert_string_equal(g_cmp.entry, ozcrt_entry_name(ep));
        assert_int_equal(g_cmp.elem, OZ_ELEM_COMPLEX);
        assert_int_equal(g_cmp.bound.kind, OZCMP_BOUND_OZAKI2);
        assert_int_equal(g_cmp.bound.w, FAKE_OZ2_W - 1); /* the fake complex plan's w */
        assert_string_equal(g_cmp.mode, "ozaki2/53");
        assert_int_equal(g_cmp.native_status, CUBLAS_STATUS_SUCCESS);
        const fake_call *r = fake_cublas_last();
        assert_int_equal(fake_cublas_count(), 1);
        assert_string_equal(r->name, ozcrt_entry_name(ep));
        assert_int_equal(r->transa, CUBLAS_OP_C);
        assert_int_equal(r->k, 100);
        assert_int_equal(r->ldc, 302); /* shadow mode's C */
        assert_ptr_equal(r->alpha, &z_alpha);
        if (!ozcrt_entry_arrays(ep))
            assert_ptr_equal(r->C, (void *)0x7000);
        if (z_typed(ep))
            assert_int_equal(r->Ctype, CUDA_C_64F);
        assert_int_equal(r->batch, z_batch(ep));
        assert_int_equal(g_leases, 0);
    }
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* The legacy cublasZgemm (scalars by value): as cublasDgemm, forwarded with
 * the caller's letters and scalars; emulated between cublasInit and
 * cublasShutdown at a fixed OZCRT_BITS, the scalars copied from the host. */
static void legacy_zgemm(char ta, cuDoubleComplex alpha)
{
    fake_cublas_reset();
    cublasZgemm(ta, 't', 300, 200, 100, alpha, ZA, 100, ZB, 200, z_beta, ZC, 300);
}

static void assert_legacy_z_forwarded(char ta, cuDoubleComplex alpha)
{
    const fake_call *r = fake_cublas_last();
    assert_int_equal(fake_cublas_count(), 1);
    assert_string_equal(r->name, "cublasZgemm");
    assert_int_equal(r->transa, ta);
    assert_int_equal(r->transb, 't');
    assert_true(r->m == 300 && r->n == 200 && r->k == 100);
    assert_true(r->alpha_v == cuCreal(alpha) && r->alpha_vi == cuCimag(alpha));
    assert_true(r->beta_v == 0.25 && r->beta_vi == 2.0);
    assert_ptr_equal(r->A, ZA);
    assert_ptr_equal(r->B, ZB);
    assert_ptr_equal(r->C, ZC);
    assert_true(r->lda == 100 && r->ldb == 200 && r->ldc == 300);
}

static void t_legacy_zgemm(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_OZAKI2, 53, 0, 0, 0);
    const uint64_t context = ep_count_of(OZCRT_EP_cublasZgemm, OZCRT_R_LEGACY_CONTEXT);
    int oz2 = g_oz2_runs;
    legacy_zgemm('C', z_alpha); /* no cublasInit seen (the last test shut it down) */
    assert_legacy_z_forwarded('C', z_alpha);
    assert_int_equal(ep_count_of(OZCRT_EP_cublasZgemm, OZCRT_R_LEGACY_CONTEXT), context + 1);
    assert_int_equal(cublasInit(), CUBLAS_STATUS_SUCCESS);
    legacy_zgemm('c', z_alpha);
    assert_int_equal(fake_cublas_count(), 0);
    assert_int_equal(g_oz2_runs, oz2 + 1);
    assert_int_equal(g_ran.d.elem, OZ_ELEM_COMPLEX);
    assert_int_equal(g_ran.d.transa, CUBLAS_OP_C);
    assert_true(g_ran.alpha == 1.5 && g_ran.alpha_im == -0.5 && g_ran.beta == 0.25 && g_ran.beta_im == 2.0);
    assert_ptr_equal(g_ws_handle, ozcrt_legacy_handle());
    /* A is 100 x 300 (lda 100): under N (m = 300 rows) its lda is too small */
    const ozcrt_reason why[4] = {OZCRT_R_INVALID_ARGS, OZCRT_R_INVALID_ARGS, OZCRT_R_TRIVIAL, OZCRT_R_COMPLEX_PHASE22};
    const char letter[4] = {'x', 'N', 'T', 't'};
    for (int i = 0; i < 4; i++) {
        const uint64_t before = ep_count_of(OZCRT_EP_cublasZgemm, why[i]);
        const cuDoubleComplex a = i == 2 ? z_zero : z_alpha;
        g_settings.mode = i == 3 ? OZCRT_MODE_PHASE22 : OZCRT_MODE_OZAKI2;
        legacy_zgemm(letter[i], a);
        assert_legacy_z_forwarded(letter[i], a);
        assert_int_equal(ep_count_of(OZCRT_EP_cublasZgemm, why[i]), before + 1);
    }
    assert_int_equal(g_oz2_runs, oz2 + 1);
    /* automatic precision: emulated, with the automatic bits */
    g_settings.mode = OZCRT_MODE_OZAKI2;
    g_settings.bits = -53;
    const uint64_t aut = ep_count_of(OZCRT_EP_cublasZgemm, OZCRT_R_EMULATED);
    legacy_zgemm('T', z_alpha);
    assert_int_equal(fake_cublas_count(), 0);
    assert_int_equal(g_oz2_runs, oz2 + 2);
    assert_int_equal(g_oz2_bits, -53);
    assert_int_equal(ep_count_of(OZCRT_EP_cublasZgemm, OZCRT_R_EMULATED), aut + 1);
    /* shadow mode's native run: the legacy call, scalars by value, into the scratch C */
    set_shadow(OZCRT_MODE_OZAKI2, 53, 1, 0, CUBLAS_STATUS_SUCCESS);
    g_cmp.run_native = 1;
    g_cmp.native_status = -1;
    legacy_zgemm('c', z_alpha);
    assert_int_equal(g_cmp.calls, 1);
    assert_int_equal(g_cmp.native_status, CUBLAS_STATUS_SUCCESS);
    const fake_call *r = fake_cublas_last();
    assert_int_equal(fake_cublas_count(), 1);
    assert_string_equal(r->name, "cublasZgemm");
    assert_int_equal(r->transa, 'C');
    assert_int_equal(r->transb, 'T');
    assert_true(r->alpha_v == 1.5 && r->alpha_vi == -0.5 && r->beta_v == 0.25 && r->beta_vi == 2.0);
    assert_ptr_equal(r->C, (void *)0x7000);
    assert_int_equal(r->ldc, 301);
    assert_int_equal(cublasShutdown(), CUBLAS_STATUS_SUCCESS);
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* Automatic precision's plans: an auto call, while calls are counted,
 * hands the kernels the plan counters (the GPU adds each product's plan);
 * fixed bits or counting off hand none; the table names the counts per N
 * and the reset clears them. */
static void t_auto_plan_counts(void **state)
{
    (void)state;
    set_shadow(OZCRT_MODE_OZAKI2, -53, 0, 0, 0);
    g_oz2_counts = NULL;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_ptr_equal(g_oz2_counts, g_plan_counts);
    set_shadow(OZCRT_MODE_OZAKI2, 53, 0, 0, 0);
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_null(g_oz2_counts);
    set_shadow(OZCRT_MODE_OZAKI2, -53, 0, 0, 0);
    ozcrt_stats_set_counting(0);
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_null(g_oz2_counts);
    ozcrt_stats_set_counting(1);
    /* as the GPU would have counted them: 3 real products at N = 16, 1 with no plan, 2 complex at N' = 17 */
    g_plan_counts[16] = 3, g_plan_counts[0] = 1, g_plan_counts[OZ2A_PLAN_COUNTS_CX + 17] = 2;
    char path[] = "/tmp/ozcrt-plans-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(ozcrt_stats_write_table(path), 0);
    FILE *f = fopen(path, "r");
    char line[4096], all[16384] = "";
    while (f && fgets(line, sizeof line, f))
        strncat(all, line, sizeof all - strlen(all) - 1);
    if (f)
        fclose(f);
    unlink(path);
    if (!strstr(all, "automatic plans of real products (made on the GPU): no plan (native)=1, N=16: 3\n") ||
        !strstr(all, "automatic plans of complex products (made on the GPU): N'=17: 2\n"))
        fail_msg("the table lacks the plans' lines:\n%s", all);
    ozcrt_stats_reset_all();
    assert_true(g_plan_counts[16] == 0 && g_plan_counts[OZ2A_PLAN_COUNTS_CX + 17] == 0);
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

/* The native branch: asked for automatic products of one item only; where made, the path runs with
 * native_branch set and the graph is launched once on the call's stream after it, then destroyed; a
 * failed path or launch is launch-failed (the graph destroyed all the same). */
static void t_native_branch(void **state)
{
    (void)state;
    g_dev = 0;
    g_run_err = 0;
    g_nb_ok = 1;
    g_nb_launch_err = cudaSuccess;
    set_shadow(OZCRT_MODE_OZAKI2, -53, 0, 0, 0);
    int made = g_nb_made, launched = g_nb_launched, destroyed = g_nb_destroyed;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(g_nb_made, made + 1);
    assert_int_equal(g_ran.d.native_branch, 1);
    assert_int_equal(g_nb_launched, launched + 1);
    assert_ptr_equal(g_nb_stream, g_ran.stream);
    assert_int_equal(g_nb_destroyed, destroyed + 1);
    /* not made: the path keeps its own dot product, nothing launched */
    g_nb_ok = 0;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(g_nb_made, made + 2);
    assert_int_equal(g_ran.d.native_branch, 0);
    assert_int_equal(g_nb_launched, launched + 1);
    assert_int_equal(g_nb_destroyed, destroyed + 1);
    /* fixed bits: never asked */
    g_nb_ok = 1;
    set_shadow(OZCRT_MODE_OZAKI2, 53, 0, 0, 0);
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(g_nb_made, made + 2);
    assert_int_equal(g_ran.d.native_branch, 0);
    /* the path fails: no launch, the graph destroyed, the call goes to cuBLAS */
    set_shadow(OZCRT_MODE_OZAKI2, -53, 0, 0, 0);
    g_run_err = cudaErrorLaunchOutOfResources;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_ARCH_MISMATCH);
    assert_int_equal(g_nb_launched, launched + 1);
    assert_int_equal(g_nb_destroyed, destroyed + 2);
    assert_forwarded_exactly();
    /* the branch's launch fails: launch-failed as well */
    g_run_err = 0;
    g_nb_launch_err = cudaErrorLaunchOutOfResources;
    assert_int_equal(dgemm(CUBLAS_STATUS_ARCH_MISMATCH), CUBLAS_STATUS_ARCH_MISMATCH);
    assert_int_equal(g_nb_launched, launched + 2);
    assert_int_equal(g_nb_destroyed, destroyed + 3);
    assert_logged("oz2_gemm_run and its native branch failed");
    g_nb_launch_err = cudaSuccess;
    g_nb_ok = 0;
    assert_int_equal(g_leases, 0);
    set_shadow(OZCRT_MODE_PHASE22, 53, 0, 0, 0);
}

int main(void)
{
    const char *log = getenv("OZCRT_LOG_FILE"); /* appended to by the shim: start it empty */
    FILE *f = log ? fopen(log, "w") : NULL;
    if (f)
        fclose(f);
    ozcrt_stats_set_counting(1);
    if (cublasCreate_v2(&g_h) != CUBLAS_STATUS_SUCCESS)
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_emulated),
        cmocka_unit_test(t_algo),
        cmocka_unit_test(t_auto_plan_counts),
        cmocka_unit_test(t_native_branch),
        cmocka_unit_test(t_no_kernel_image),
        cmocka_unit_test(t_launch_failed),
        cmocka_unit_test(t_launch_failed_sticky),
        cmocka_unit_test(t_workspace_sizes),
        cmocka_unit_test(t_shadow_phase22),
        cmocka_unit_test(t_shadow_ozaki2),
        cmocka_unit_test(t_legacy_before_init),
        cmocka_unit_test(t_legacy_emulated),
        cmocka_unit_test(t_legacy_forwarded),
        cmocka_unit_test(t_legacy_shadow),
        cmocka_unit_test(t_legacy_shutdown),
        cmocka_unit_test(t_legacy_stream_before_init),
        cmocka_unit_test(t_grouped),
        cmocka_unit_test(t_grouped_whole),
        cmocka_unit_test(t_grouped_failures),
        cmocka_unit_test(t_grouped_shadow),
        cmocka_unit_test(t_lt_route),
        cmocka_unit_test(t_complex_phase22),
        cmocka_unit_test(t_complex_auto),
        cmocka_unit_test(t_complex_invalid),
        cmocka_unit_test(t_complex_types),
        cmocka_unit_test(t_complex_emulated),
        cmocka_unit_test(t_complex_alpha),
        cmocka_unit_test(t_nonfinite_scalars),
        cmocka_unit_test(t_complex_handle),
        cmocka_unit_test(t_complex_plan_and_speed),
        cmocka_unit_test(t_complex_shadow),
        cmocka_unit_test(t_legacy_zgemm),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    cublasDestroy_v2(g_h);
    return failed;
}
