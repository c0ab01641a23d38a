/* compare/shadow.c: shadow mode: native cuBLAS into scratch beside the emulated call, GPU comparison, asynchronous records (see compare.h). */
#include "compare/compare.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compare/kernels.h"
#include "compare/metrics.h"
#include "interpose/envparse.h"

#define OZCMP_MAX_DEVICES 64
#define OZCMP_ALIGN 256                 /* bytes; cudaMalloc's alignment, mirrored by scratch */
#define OZCMP_STATUS_SUCCESS 0                 /* CUBLAS_STATUS_SUCCESS */
#define OZCMP_STATUS_EXECUTION_FAILED 13       /* CUBLAS_STATUS_EXECUTION_FAILED */

/* ---- configuration ---- */

static ozcmp_config g_cfg;
static pthread_once_t g_cfg_once = PTHREAD_ONCE_INIT;

int ozcmp_parse_compare(const char *value, int *out)
{
    *out = 0;
    if (!value || !*value)
        return 0;
    int b = ozcrt_env_bool(value); /* the one boolean syntax (interpose/envparse.h) */
    if (b >= 0) {
        *out = b;
        return 1;
    }
    fprintf(stderr, "ozcrt: warning: OZCRT_COMPARE=\"%s\" is not valid (" OZCRT_ENV_BOOL_WORDS "); "
                    "using the default 0 (no comparison)\n", value);
    return -1;
}

int ozcmp_parse_result(const char *value, ozcmp_result *out)
{
    *out = OZCMP_RESULT_EMULATED;
    if (!value || !*value)
        return 0;
    if (ozcrt_env_word_is(value, "emulated"))
        return 1;
    if (ozcrt_env_word_is(value, "native")) {
        *out = OZCMP_RESULT_NATIVE;
        return 1;
    }
    fprintf(stderr, "ozcrt: warning: OZCRT_COMPARE_RESULT=\"%s\" is not emulated or native; "
                    "using the default emulated\n", value);
    return -1;
}

int ozcmp_parse_report_file(const char *value, const char **out)
{
    static char path[4096]; /* %p, %h expanded */
    *out = NULL;
    if (!value || !*value)
        return 0;
    if (ozcrt_env_expand_path(value, path, sizeof path) != 0) {
        fprintf(stderr, "ozcrt: warning: OZCRT_REPORT_FILE=\"%s\" is too long once %%p/%%h are expanded; "
                        "using it as it is\n", value); /* path: the name unexpanded (cut to size) */
    }
    *out = path;
    size_t n = strlen(path);
    if ((n >= 4 && !strcmp(path + n - 4, ".csv")) || (n >= 5 && !strcmp(path + n - 5, ".json")))
        return 1;
    fprintf(stderr, "ozcrt: warning: OZCRT_REPORT_FILE=\"%s\" ends in neither .csv nor .json; "
                    "writing JSON (the default format) there\n", value);
    return -1;
}

static void read_config(void)
{
    ozcmp_parse_compare(getenv("OZCRT_COMPARE"), &g_cfg.enabled);
    ozcmp_parse_result(getenv("OZCRT_COMPARE_RESULT"), &g_cfg.result);
    ozcmp_parse_report_file(getenv("OZCRT_REPORT_FILE"), &g_cfg.report_file);
}

const ozcmp_config *ozcmp_config_get(void)
{
    pthread_once(&g_cfg_once, read_config);
    return &g_cfg;
}

/* ---- the per-device ring of records in flight ---- */

typedef struct shadow_slot {
    char entry[OZCMP_SITE_ENTRY_MAX];
    char mode[OZCMP_SITE_MODE_MAX];
    ozcmp_site site;               /* site.entry points at entry, site.mode at mode */
    uint64_t elements;
    cudaEvent_t done;           /* recorded after the record's copy into host[] */
} shadow_slot;

typedef struct shadow_ring {
    int failed;
    ozcmp_accum *host;         /* pinned, OZCMP_RING_SLOTS records */
    shadow_slot slots[OZCMP_RING_SLOTS];
    uint64_t head, tail;        /* slots tail..head-1 are in flight, oldest first */
    cudaMemPool_t pool;
} shadow_ring;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* rings; taken before the report's lock */
static shadow_ring *g_rings[OZCMP_MAX_DEVICES];
static int g_atexit_registered;
static atomic_int g_ran; /* ozcmp_gemm was called */

/* Our CUDA calls must not fail because another thread captures a stream in
 * global mode: relaxed for this thread while we run them. */
static enum cudaStreamCaptureMode relax_capture(void)
{
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    if (cudaThreadExchangeStreamCaptureMode(&mode) != cudaSuccess)
        mode = cudaStreamCaptureModeRelaxed;
    return mode;
}

static void restore_capture(enum cudaStreamCaptureMode mode)
{
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
}

/* The scratch, allocated and freed in relaxed capture mode like every
 * allocation of the shim (another thread may be capturing in global mode). */
static cudaError_t scratch_alloc(char **block, size_t bytes, cudaMemPool_t pool, cudaStream_t s)
{
    enum cudaStreamCaptureMode mode = relax_capture();
    cudaError_t e = cudaMallocFromPoolAsync((void **)block, bytes, pool, s);
    restore_capture(mode);
    return e;
}

static cudaError_t scratch_free(char *block, cudaStream_t s)
{
    enum cudaStreamCaptureMode mode = relax_capture();
    cudaError_t e = cudaFreeAsync(block, s);
    restore_capture(mode);
    return e;
}

static int cuda_ok(cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 1;
    fprintf(stderr, "ozcrt: shadow mode: %s failed: %s\n", what, cudaGetErrorString(e));
    return 0;
}

/* Harvests slot `tail` (its event complete, or failed: then counted lost). g_lock held. */
static void harvest_oldest(shadow_ring *r, cudaError_t wait_status)
{
    shadow_slot *sl = &r->slots[r->tail % OZCMP_RING_SLOTS];
    if (wait_status == cudaSuccess) {
        ozcmp_call_metrics m = ozcmp_finish(&r->host[r->tail % OZCMP_RING_SLOTS], sl->elements);
        ozcmp_report_add(ozcmp_report_global(), &sl->site, &m);
    } else {
        ozcmp_report_add_skipped(ozcmp_report_global(), &sl->site, OZCMP_SKIP_LOST);
    }
    r->tail++;
}

/* Harvests finished records without waiting; then, while more than
 * `keep` are in flight, waits for the oldest. g_lock held. */
static void drain(shadow_ring *r, uint64_t keep)
{
    while (r->tail < r->head) {
        cudaError_t q = cudaEventQuery(r->slots[r->tail % OZCMP_RING_SLOTS].done);
        if (q == cudaErrorNotReady) {
            if (r->head - r->tail <= keep)
                break;
            q = cudaEventSynchronize(r->slots[r->tail % OZCMP_RING_SLOTS].done);
        }
        harvest_oldest(r, q);
    }
}

void ozcmp_flush(void)
{
    enum cudaStreamCaptureMode mode = relax_capture();
    pthread_mutex_lock(&g_lock);
    for (int dev = 0; dev < OZCMP_MAX_DEVICES; dev++)
        if (g_rings[dev])
            drain(g_rings[dev], 0);
    pthread_mutex_unlock(&g_lock);
    restore_capture(mode);
}

static void flush_at_exit(void)
{
    ozcmp_flush();
}

/* The ring of `dev`, made on first use; NULL when it cannot be. g_lock held. */
static shadow_ring *ring_of(int dev)
{
    if (dev < 0 || dev >= OZCMP_MAX_DEVICES)
        return NULL;
    shadow_ring *r = g_rings[dev];
    if (r)
        return r->failed ? NULL : r;
    r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    g_rings[dev] = r;
    r->failed = 1;
    if (!cuda_ok(cudaHostAlloc((void **)&r->host, OZCMP_RING_SLOTS * sizeof *r->host, cudaHostAllocPortable),
                 "cudaHostAlloc of the record ring"))
        return NULL;
    for (int i = 0; i < OZCMP_RING_SLOTS; i++)
        if (!cuda_ok(cudaEventCreateWithFlags(&r->slots[i].done, cudaEventDisableTiming), "cudaEventCreate"))
            return NULL;
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    if (!cuda_ok(cudaMemPoolCreate(&r->pool, &props), "cudaMemPoolCreate of the scratch pool"))
        return NULL;
    /* keep freed scratch in the pool: shadow mode repeats the same shapes */
    uint64_t keep = UINT64_MAX;
    if (!cuda_ok(cudaMemPoolSetAttribute(r->pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute"))
        return NULL;
    r->failed = 0;
    if (!g_atexit_registered) {
        g_atexit_registered = 1;
        atexit(flush_at_exit);
    }
    return r;
}

/* ---- one call ---- */

/* The scratch layout of a call, in doubles/bytes from the pool block. */
typedef struct scratch_plan {
    int64_t es;             /* doubles an element of C: 1 real, 2 complex (interleaved re/im) */
    int64_t c_offset;       /* doubles: where item 0 of the C mirror starts (strided) */
    int64_t c_stride;       /* doubles between items (strided: es times into.strideC), or per pointer-array slot */
    size_t c_bytes, absa_bytes, absb_bytes, rec_bytes, ptr_bytes, total;
} scratch_plan;

static size_t round_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* 0 on success, -1 when the sizes overflow. */
static int plan_scratch(const oz_gemm_desc *d, scratch_plan *p)
{
    const int64_t m = d->m, n = d->n, batch = d->batch, ldc = d->ldc;
    p->es = d->elem == OZ_ELEM_COMPLEX ? 2 : 1;
    if (m <= 0 || n <= 0 || batch <= 0 || ldc < m || n > INT64_MAX / 4 / ldc || batch > INT64_MAX / 8 / (m + n))
        return -1;
    const int64_t item = p->es * (ldc * (n - 1) + m); /* doubles one column-major item spans */
    const int64_t lanes = OZCMP_ALIGN / (int64_t)sizeof(double);
    int64_t doubles;
    if (d->Aarray) {
        p->c_offset = 0;
        p->c_stride = (item + lanes - 1) / lanes * lanes + lanes; /* room to mirror any alignment */
        if (p->c_stride > INT64_MAX / 16 / batch)
            return -1;
        doubles = batch * p->c_stride;
    } else {
        p->c_offset = (int64_t)(((uintptr_t)d->C % OZCMP_ALIGN) / sizeof(double));
        if (batch > 1 && d->strideC > INT64_MAX / 16 / p->es)
            return -1;
        p->c_stride = (batch > 1 && p->es * d->strideC >= item) ? p->es * d->strideC : item;
        if (batch > 1 && p->c_stride > (INT64_MAX / 16 - item - lanes) / (batch - 1))
            return -1;
        doubles = p->c_offset + (batch - 1) * p->c_stride + item;
    }
    p->c_bytes = round_up((size_t)doubles * sizeof(double), OZCMP_ALIGN);
    p->absa_bytes = round_up((size_t)(batch * m) * sizeof(uint64_t), OZCMP_ALIGN);
    p->absb_bytes = round_up((size_t)(batch * n) * sizeof(uint64_t), OZCMP_ALIGN);
    p->rec_bytes = round_up(sizeof(ozcmp_accum), OZCMP_ALIGN);
    p->ptr_bytes = d->Aarray ? round_up((size_t)batch * sizeof(double *), OZCMP_ALIGN) : 0;
    p->total = p->c_bytes + p->absa_bytes + p->absb_bytes + p->rec_bytes + p->ptr_bytes;
    return 0;
}

/* A view of the call's C-shaped matrices (ld and stride in elements) as
 * ozcmp_copy takes them: doubles, so es doubles an element (a complex
 * matrix is the real one of its interleaved parts, es m rows); a
 * pointer-array view keeps its pointers. */
static ozcmp_mat_view doubles_view(ozcmp_mat_view v, int64_t es)
{
    v.ld *= es;
    v.stride *= es;
    return v;
}

static ozcmp_mat_out doubles_out(ozcmp_mat_out v, int64_t es)
{
    v.ld *= es;
    v.stride *= es;
    return v;
}

/* beta may be non-zero: always in device pointer mode; else either part (complex) */
static int beta_may_be_nonzero(const oz_gemm_desc *d)
{
    if (d->scalars_on_device)
        return 1;
    return d->beta[0] != 0.0 || (d->elem == OZ_ELEM_COMPLEX && d->beta[1] != 0.0);
}

/* The emulated path into the caller's C, as a cublasStatus_t. */
static int run_emulated(const ozcmp_path *path, const oz_gemm_desc *d, void *ws, size_t ws_bytes, void *stream)
{
    return path->run(path->ctx, d, ws, ws_bytes, stream) == 0 ? OZCMP_STATUS_SUCCESS : OZCMP_STATUS_EXECUTION_FAILED;
}

/* The call without comparison: what the program asked to receive. */
static int run_uncompared(const ozcmp_path *path, const oz_gemm_desc *d, ozcmp_native_fn native, void *ctx, void *ws,
                          size_t ws_bytes, void *stream, ozcmp_result result)
{
    if (result == OZCMP_RESULT_NATIVE)
        return native(ctx, d);
    return run_emulated(path, d, ws, ws_bytes, stream);
}

static int skip(const ozcmp_site *site, ozcmp_skip_reason why, const ozcmp_path *path, const oz_gemm_desc *d,
                ozcmp_native_fn native, void *ctx, void *ws, size_t ws_bytes, void *stream, ozcmp_result result)
{
    ozcmp_report_add_skipped(ozcmp_report_global(), site, why);
    return run_uncompared(path, d, native, ctx, ws, ws_bytes, stream, result);
}

/* Queues the record's copy into a ring slot; counts it lost if that fails. */
static void queue_record(shadow_ring *r, const ozcmp_site *site, uint64_t elements, const ozcmp_accum *rec,
                         cudaStream_t s)
{
    pthread_mutex_lock(&g_lock);
    drain(r, OZCMP_RING_SLOTS / 2 - 1);
    uint64_t idx = r->head % OZCMP_RING_SLOTS;
    shadow_slot *sl = &r->slots[idx];
    snprintf(sl->entry, sizeof sl->entry, "%s", site->entry ? site->entry : "?");
    snprintf(sl->mode, sizeof sl->mode, "%s", site->mode ? site->mode : "?");
    sl->site = *site;
    sl->site.entry = sl->entry;
    sl->site.mode = sl->mode;
    sl->elements = elements;
    if (cuda_ok(cudaMemcpyAsync(&r->host[idx], rec, sizeof *rec, cudaMemcpyDeviceToHost, s), "record copy") &&
        cuda_ok(cudaEventRecord(sl->done, s), "cudaEventRecord"))
        r->head++;
    else
        ozcmp_report_add_skipped(ozcmp_report_global(), site, OZCMP_SKIP_CUDA_ERROR);
    pthread_mutex_unlock(&g_lock);
}

int ozcmp_gemm(const ozcmp_site *call_site, const ozcmp_path *path, const oz_gemm_desc *d, ozcmp_native_fn native,
               void *native_ctx, void *ws, size_t ws_bytes, void *stream, ozcmp_result result)
{
    const int want_native = result == OZCMP_RESULT_NATIVE;
    cudaStream_t s = (cudaStream_t)stream;
    ozcmp_site named = *call_site;
    named.mode = path->mode;
    const ozcmp_site *site = &named;
    atomic_store(&g_ran, 1);
    if (d->m <= 0 || d->n <= 0 || d->batch <= 0) /* nothing to compare */
        return run_uncompared(path, d, native, native_ctx, ws, ws_bytes, stream, result);

    enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    cudaError_t ce = cudaStreamIsCapturing(s, &cap);
    if (ce != cudaSuccess || cap != cudaStreamCaptureStatusNone) {
        (void)cudaGetLastError(); /* an implicit-capture error must not stick to the program's next call */
        return skip(site, OZCMP_SKIP_CAPTURE, path, d, native, native_ctx, ws, ws_bytes, stream, result);
    }

    int dev = -1;
    shadow_ring *r = NULL;
    enum cudaStreamCaptureMode mode = relax_capture();
    if (cudaGetDevice(&dev) == cudaSuccess) {
        pthread_mutex_lock(&g_lock);
        r = ring_of(dev);
        pthread_mutex_unlock(&g_lock);
    }
    restore_capture(mode);
    if (!r)
        return skip(site, OZCMP_SKIP_CUDA_ERROR, path, d, native, native_ctx, ws, ws_bytes, stream, result);

    scratch_plan plan;
    char *block = NULL;
    if (plan_scratch(d, &plan) != 0 ||
        scratch_alloc(&block, plan.total, r->pool, s) != cudaSuccess) {
        (void)cudaGetLastError();
        return skip(site, OZCMP_SKIP_NO_MEMORY, path, d, native, native_ctx, ws, ws_bytes, stream, result);
    }
    double *c_mirror = (double *)block;
    uint64_t *absa = (uint64_t *)(block + plan.c_bytes);
    uint64_t *absb = (uint64_t *)(block + plan.c_bytes + plan.absa_bytes);
    ozcmp_accum *rec = (ozcmp_accum *)(block + plan.c_bytes + plan.absa_bytes + plan.absb_bytes);
    double **ptrs = d->Aarray ? (double **)(block + plan.total - plan.ptr_bytes) : NULL;
    const int64_t es = plan.es, copy_m = es * d->m; /* ozcmp_copy copies doubles: es m of a column */

    /* The native call's view of C: scratch shaped like the caller's C (its
     * element type, ldc, strideC, address mod 256). Views in elements. */
    oz_gemm_desc into = *d;
    ozcmp_mat_view caller_c = {d->C, (const double *const *)d->Carray, d->ldc, d->strideC};
    ozcmp_mat_view native_c;
    int rc;
    if (d->Aarray) {
        ozcmp_mat_out dst = {c_mirror, NULL, d->ldc, plan.c_stride / es}; /* slots: whole 256-byte lines */
        rc = ozcmp_copy(copy_m, d->n, d->batch, doubles_view(caller_c, es), doubles_out(dst, es), ptrs, 1,
                        beta_may_be_nonzero(d), stream);
        into.Carray = ptrs;
        native_c = (ozcmp_mat_view){NULL, (const double *const *)ptrs, d->ldc, 0};
    } else {
        double *c0 = c_mirror + plan.c_offset;
        native_c = (ozcmp_mat_view){c0, NULL, d->ldc, plan.c_stride / es};
        ozcmp_mat_out dst = {c0, NULL, d->ldc, plan.c_stride / es};
        rc = beta_may_be_nonzero(d) ? ozcmp_copy(copy_m, d->n, d->batch, doubles_view(caller_c, es),
                                                 doubles_out(dst, es), NULL, 0, 1, stream)
                                    : 0;
        into.C = c0;
        into.strideC = plan.c_stride / es;
    }
    if (rc == 0)
        rc = ozcmp_scales(d, absa, absb, stream);
    if (rc != 0) {
        (void)scratch_free(block, s);
        return skip(site, OZCMP_SKIP_CUDA_ERROR, path, d, native, native_ctx, ws, ws_bytes, stream, result);
    }

    int native_status = native(native_ctx, &into);
    if (native_status != OZCMP_STATUS_SUCCESS) {
        (void)scratch_free(block, s);
        ozcmp_report_add_skipped(ozcmp_report_global(), site, OZCMP_SKIP_NATIVE_FAILED);
        if (want_native)
            return native_status; /* what the program would get without ozcrt */
        return run_emulated(path, d, ws, ws_bytes, stream);
    }

    int status = OZCMP_STATUS_SUCCESS;
    int emulated_ok = run_emulated(path, d, ws, ws_bytes, stream) == OZCMP_STATUS_SUCCESS;
    int compared = emulated_ok && ozcmp_metrics(d, caller_c, native_c, absa, absb, path->bound, rec, stream) == 0;
    if (want_native || !emulated_ok) {
        ozcmp_mat_out back = {d->C, d->Carray, d->ldc, d->strideC};
        if (ozcmp_copy(copy_m, d->n, d->batch, doubles_view(native_c, es), doubles_out(back, es), NULL, 0, 1,
                       stream) != 0)
            status = OZCMP_STATUS_EXECUTION_FAILED;
    }
    if (compared) {
        mode = relax_capture();
        queue_record(r, site, (uint64_t)(d->m * d->n * d->batch), rec, s);
        restore_capture(mode);
    } else
        ozcmp_report_add_skipped(ozcmp_report_global(), site, OZCMP_SKIP_CUDA_ERROR);
    if (!cuda_ok(scratch_free(block, s), "cudaFreeAsync of the scratch"))
        status = OZCMP_STATUS_EXECUTION_FAILED;
    return status;
}

/* ---- exit ---- */

void ozcmp_report_at_exit(FILE *log)
{
    static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;
    static int done;
    pthread_mutex_lock(&once_lock);
    int first = !done;
    done = 1;
    pthread_mutex_unlock(&once_lock);
    if (!first)
        return;
    ozcmp_flush();
    const ozcmp_config *cfg = ozcmp_config_get();
    if (!cfg->enabled && !atomic_load(&g_ran))
        return;
    ozcmp_report_print(log ? log : stderr);
    if (cfg->report_file)
        (void)ozcmp_report_write_file(cfg->report_file);
}

int ozcmp_report_now(const char *path, FILE *log)
{
    ozcmp_flush();
    if (path && path[0])
        return ozcmp_report_write_file(path);
    ozcmp_report_print(log ? log : stderr);
    return 0;
}

int ozcmp_region_begin(void)
{
    ozcmp_flush(); /* what is in flight belongs to before the region */
    ozcmp_report *r = ozcmp_report_new();
    int id = r ? ozcmp_report_tap_attach(r) : -1;
    if (id < 0) {
        fprintf(stderr, "ozcrt: a compare region cannot begin: %s\n",
                r ? "too many are open" : "out of memory");
        ozcmp_report_free(r);
    }
    return id;
}

int ozcmp_region_end(int id, const char *path, FILE *log)
{
    ozcmp_flush();
    ozcmp_report *r = ozcmp_report_tap_detach(id);
    if (!r) {
        fprintf(stderr, "ozcrt: warning: no compare region %d is open\n", id);
        return -1;
    }
    int rc = 0;
    if (path && path[0]) {
        rc = ozcmp_report_save(r, path);
    } else {
        ozcmp_report_render(r, log ? log : stderr);
        fflush(log ? log : stderr);
    }
    ozcmp_report_free(r);
    return rc;
}
