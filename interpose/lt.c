/* interpose/lt.c: cuBLASLt's cublasLtMatmul and cublasLtDestroy: an FP64 product routed like cublasDgemm_v2, everything else to the caller's own cuBLASLt, untouched.
 *
 * PyTorch sends a float64 addmm with a 1-D bias (nn.Linear, F.linear) to
 * cublasLtMatmul with the BIAS epilogue. cuBLAS itself calls cublasLtMatmul
 * for its own GEMMs through its dynamic symbol table, so the preloaded
 * definition receives those too: a call is first tied to the cuBLASLt its
 * caller links (the caller's object and its dependencies, looked up once
 * per call site and cached), and a caller that is cuBLAS itself
 * (libcublas.so*) or a call made while the shim forwards to cuBLAS goes
 * straight there. Of the others, a call whose compute type is not one of
 * the FP64 ones goes straight there too, uncounted (not a DGEMM); an FP64
 * call is decoded and taken when all of this holds (else forwarded,
 * lt-unsupported, or type for 64F_PEDANTIC / 64F_EMULATED_FIXEDPOINT):
 * compute CUBLAS_COMPUTE_64F, scale CUDA_R_64F (or CUDA_C_64F: a complex
 * product, ZGEMM), pointer mode host or device, TRANSC N, epilogue
 * DEFAULT, or (real only) BIAS with a 64F bias, host scalars and beta 0 (D
 * is filled with the bias on the stream, then the product is added to it
 * with beta 1); no scale, amax or emulation descriptor; all four layouts of
 * the scale type, C and D in column order, A and B in column or row
 * order (a row-order one is its column-order transpose under the other
 * op: XLA's layouts; not a complex one under C, a conjugate without
 * transpose), shapes that agree; one matrix, or a
 * strided batch without bias; D the same matrix as C (pointer, ld, stride),
 * C not read (beta 0 in host mode), or C apart from D, not overlapping it,
 * and copied into D on the stream first (one copy where both batches are
 * dense, else one an item, at most LT_COPY_ITEMS). Then ozcrt_route decides as for
 * any entry point (thresholds, mode, GPU, workspace), on the call's own
 * stream and pointer mode, with the Lt handle as the workspaces' key. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>

#include "dlhook.h"
#include "lifecycle.h"
#include "policy.h"
#include "real.h"
#include "route.h"
#include "symbols.h"

#define OZCRT_EXPORT __attribute__((visibility("default")))

/* One cuBLASLt copy's functions, and whether its caller is cuBLAS itself. */
typedef struct lt_real {
    ozcrt_cublasLtMatmul_fn matmul;
    ozcrt_cublasLtDestroy_fn destroy;
    __typeof__(cublasLtMatmulDescGetAttribute) *desc_get;
    __typeof__(cublasLtMatrixLayoutGetAttribute) *layout_get;
    __typeof__(cublasLtMatrixLayoutCreate) *layout_create;
    __typeof__(cublasLtMatrixLayoutSetAttribute) *layout_set;
    __typeof__(cublasLtMatrixLayoutDestroy) *layout_destroy;
    int internal;
} lt_real;

#define LT_MAX_COPIES 64 /* (cuBLASLt copy, internal) pairs: two a copy */
#define LT_SITES 512     /* call sites cached (a power of two) */
static lt_real g_lts[LT_MAX_COPIES];
static int g_nlts;
static struct {
    _Atomic(uintptr_t) ret;
    _Atomic(const lt_real *) lt;
} g_sites[LT_SITES];
static pthread_mutex_t g_lt_lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((constructor)) static void register_lock(void)
{
    ozcrt_lifecycle_register_mutex(&g_lt_lock); /* held across fork(), released in both */
}

/* The cublasLtMatmul the code at ret_addr would reach without the shim: its
 * object's own scope (its dependencies); for the main program (or when that
 * finds only the shim) the next definition after the shim, else the loaded
 * libcublasLt. NULL when none. */
static void *caller_matmul(const void *ret_addr, int *internal)
{
    void *f = ozcrt_caller_symbol(ret_addr, "cublasLtMatmul", internal);
    if (f == (void *)cublasLtMatmul)
        f = NULL;
    if (!f)
        f = dlsym(RTLD_NEXT, "cublasLtMatmul");
    char path[512];
    if (!f && ozcrt_find_loaded("libcublasLt.so", path, sizeof path)) {
        void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            f = dlsym(h, "cublasLtMatmul");
            dlclose(h);
        }
    }
    return f == (void *)cublasLtMatmul ? NULL : f;
}

/* A copy's functions, from the object that defines `matmul` (0: not found).
 * The loader's calls run outside the lock: the loader's lock may be held by
 * a thread that is about to call us. */
static int load_copy(void *matmul, int internal, lt_real *t, const char **path)
{
    Dl_info info;
    void *h = dladdr(matmul, &info) && info.dli_fname ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    if (!h)
        return 0; /* kept open: the copy stays while its functions may be called */
    *t = (lt_real){.matmul = (ozcrt_cublasLtMatmul_fn)matmul, .internal = internal};
    t->destroy = (ozcrt_cublasLtDestroy_fn)dlsym(h, "cublasLtDestroy");
    t->desc_get = (__typeof__(t->desc_get))dlsym(h, "cublasLtMatmulDescGetAttribute");
    t->layout_get = (__typeof__(t->layout_get))dlsym(h, "cublasLtMatrixLayoutGetAttribute");
    t->layout_create = (__typeof__(t->layout_create))dlsym(h, "cublasLtMatrixLayoutCreate");
    t->layout_set = (__typeof__(t->layout_set))dlsym(h, "cublasLtMatrixLayoutSetAttribute");
    t->layout_destroy = (__typeof__(t->layout_destroy))dlsym(h, "cublasLtMatrixLayoutDestroy");
    *path = info.dli_fname;
    return 1;
}

/* The copy's table, found or added (under the lock); NULL when full. */
static const lt_real *table_of(const lt_real *t, int *added)
{
    *added = 0;
    for (int i = 0; i < g_nlts; i++)
        if (g_lts[i].matmul == t->matmul && g_lts[i].internal == t->internal)
            return &g_lts[i];
    if (g_nlts == LT_MAX_COPIES)
        return NULL;
    g_lts[g_nlts] = *t;
    *added = 1;
    return &g_lts[g_nlts++];
}

/* The cuBLASLt of the call site ret_addr: cached per site, lock-free once seen. */
static const lt_real *lt_for(const void *ret_addr)
{
    const uintptr_t key = (uintptr_t)ret_addr;
    const unsigned h0 = (unsigned)((key >> 4) ^ (key >> 16)) & (LT_SITES - 1);
    for (unsigned i = 0; i < LT_SITES; i++) {
        const unsigned s = (h0 + i) & (LT_SITES - 1);
        const uintptr_t k = atomic_load_explicit(&g_sites[s].ret, memory_order_acquire);
        if (k == key) {
            const lt_real *lt = atomic_load_explicit(&g_sites[s].lt, memory_order_acquire);
            if (lt)
                return lt;
        }
        if (k == 0)
            break;
    }
    int internal = 0, added = 0;
    lt_real t;
    const char *path = "";
    void *f = caller_matmul(ret_addr, &internal); /* the loader's lock: outside ours */
    if (!f || !load_copy(f, internal, &t, &path))
        return NULL;
    pthread_mutex_lock(&g_lt_lock);
    const lt_real *lt = table_of(&t, &added);
    for (unsigned i = 0; lt && i < LT_SITES; i++) {
        const unsigned s = (h0 + i) & (LT_SITES - 1);
        const uintptr_t k = atomic_load_explicit(&g_sites[s].ret, memory_order_relaxed);
        if (k == key || k == 0) {
            atomic_store_explicit(&g_sites[s].lt, lt, memory_order_release);
            atomic_store_explicit(&g_sites[s].ret, key, memory_order_release);
            break;
        }
    }
    pthread_mutex_unlock(&g_lt_lock);
    if (added)
        ozcrt_log(2, "ozcrt: cuBLASLt for %s calls: %s", internal ? "cuBLAS's own" : "the program's", path);
    else if (!lt)
        ozcrt_error("ozcrt: more than %d cuBLASLt copies: the calls into %s fail (CUBLAS_STATUS_NOT_INITIALIZED)",
                    LT_MAX_COPIES / 2, path);
    return lt;
}

/* ---- the decoding ---- */

/* A descriptor attribute of `size` bytes; absent (an older cuBLASLt) reads as its default, zero. */
static int desc_attr(const lt_real *lt, cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, void *v, size_t size)
{
    size_t w = 0;
    memset(v, 0, size);
    if (lt->desc_get(d, a, v, size, &w) != CUBLAS_STATUS_SUCCESS) {
        memset(v, 0, size);
        return 0;
    }
    return 1;
}

/* Whether an attribute of any size holds other than zero (absent: no). */
static int attr_set(const lt_real *lt, cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a)
{
    size_t size = 0;
    unsigned char v[64];
    if (lt->desc_get(d, a, NULL, 0, &size) != CUBLAS_STATUS_SUCCESS || size == 0)
        return 0;
    if (size > sizeof v || lt->desc_get(d, a, v, size, &size) != CUBLAS_STATUS_SUCCESS)
        return 1; /* there, but not readable here: not taken */
    for (size_t i = 0; i < size; i++)
        if (v[i])
            return 1;
    return 0;
}

typedef struct lt_layout {
    uint32_t type;
    int32_t order, batch;
    uint64_t rows, cols;
    int64_t ld, stride, plane;
    uint32_t batch_mode;
} lt_layout;

static int layout_of(const lt_real *lt, cublasLtMatrixLayout_t l, lt_layout *o)
{
    memset(o, 0, sizeof *o);
    o->batch = 1;
    size_t w;
    if (!l || lt->layout_get(l, CUBLASLT_MATRIX_LAYOUT_TYPE, &o->type, sizeof o->type, &w) != CUBLAS_STATUS_SUCCESS ||
        lt->layout_get(l, CUBLASLT_MATRIX_LAYOUT_ROWS, &o->rows, sizeof o->rows, &w) != CUBLAS_STATUS_SUCCESS ||
        lt->layout_get(l, CUBLASLT_MATRIX_LAYOUT_COLS, &o->cols, sizeof o->cols, &w) != CUBLAS_STATUS_SUCCESS ||
        lt->layout_get(l, CUBLASLT_MATRIX_LAYOUT_LD, &o->ld, sizeof o->ld, &w) != CUBLAS_STATUS_SUCCESS)
        return 0;
    /* the rest have defaults (0, or a batch of 1) where a cuBLASLt does not know them */
    (void)lt->layout_get(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &o->order, sizeof o->order, &w);
    (void)lt->layout_get(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &o->batch, sizeof o->batch, &w);
    (void)lt->layout_get(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &o->stride, sizeof o->stride, &w);
    (void)lt->layout_get(l, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &o->plane, sizeof o->plane, &w);
    (void)lt->layout_get(l, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &o->batch_mode, sizeof o->batch_mode, &w);
    return (o->type == CUDA_R_64F || o->type == CUDA_C_64F) &&
           (o->order == CUBLASLT_ORDER_COL || o->order == CUBLASLT_ORDER_ROW) &&
           o->plane == 0 && o->batch_mode == 0 && o->rows <= INT64_MAX && o->cols <= INT64_MAX;
}

/* A row-order operand (XLA passes them: its operands keep their row-major
 * layouts, only D is made column order) read as what it is in memory: its
 * column-order transpose, cols x rows with the same ld and stride, under
 * the other op (op(A) = op'(A^T), op' = N for T or C, T for N). */
static void as_column_order(lt_layout *o, int32_t *op)
{
    if (o->order != CUBLASLT_ORDER_ROW)
        return;
    const uint64_t rows = o->rows;
    o->rows = o->cols;
    o->cols = rows;
    o->order = CUBLASLT_ORDER_COL;
    *op = *op == CUBLAS_OP_N ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/* The call as the shim sees it: the caller's arguments, and what the bias epilogue needs. */
typedef struct lt_call {
    const lt_real *lt;
    cublasLtHandle_t handle;
    cublasLtMatmulDesc_t desc;
    const void *alpha, *beta, *A, *B, *C;
    void *D;
    cublasLtMatrixLayout_t Adesc, Bdesc, Cdesc, Ddesc;
    const cublasLtMatmulAlgo_t *algo;
    void *workspace;
    size_t workspace_size;
    cudaStream_t stream;
    const double *bias; /* BIAS epilogue: D is filled with it, then the product added with beta 1 */
    int64_t c_ld, c_stride; /* C apart from D and read: copied into D first (copy_c) */
} lt_call;

/* C apart from D, read (beta not known to be 0): the batch items copied at
 * most one by one (else cuBLASLt answers). */
#define LT_COPY_ITEMS 16

static const double k_one = 1.0;

/* D (the routed call's C) [:, j] = bias for every column: the first column by one copy, then doubling
 * (real calls only: decode). */
static int fill_bias(const ozcrt_call *c, cudaStream_t stream)
{
    const lt_call *l = c->ext;
    double *D = c->C;
    const size_t col = (size_t)c->m * sizeof(double), pitch = (size_t)c->ldc * sizeof(double);
    cudaError_t e = cudaMemcpyAsync(D, l->bias, col, cudaMemcpyDeviceToDevice, stream);
    for (int64_t done = 1; e == cudaSuccess && done < c->n; done *= 2) {
        const int64_t cols = done < c->n - done ? done : c->n - done;
        e = cudaMemcpy2DAsync(D + done * c->ldc, pitch, D, pitch, col, (size_t)cols, cudaMemcpyDeviceToDevice, stream);
    }
    return (int)e;
}

/* D (the routed call's C) = C, item by item (or in one copy where both
 * batches are dense), before D = alpha op(A) op(B) + beta D. */
static int copy_c(const ozcrt_call *c, cudaStream_t stream)
{
    const lt_call *l = c->ext;
    const size_t es = c->elem == OZ_ELEM_COMPLEX ? 2 * sizeof(double) : sizeof(double);
    const size_t dp = (size_t)c->ldc * es, sp = (size_t)l->c_ld * es, w = (size_t)c->m * es;
    const int dense = c->batch == 1 || (c->strideC == c->ldc * c->n && l->c_stride == l->c_ld * c->n);
    const int64_t items = dense ? 1 : c->batch, cols = dense ? c->n * c->batch : c->n;
    cudaError_t e = cudaSuccess;
    for (int64_t b = 0; e == cudaSuccess && b < items; b++)
        e = cudaMemcpy2DAsync((char *)c->C + (size_t)(b * c->strideC) * es, dp,
                              (const char *)l->C + (size_t)(b * l->c_stride) * es, sp, w, (size_t)cols,
                              cudaMemcpyDeviceToDevice, stream);
    return (int)e;
}

/* The bytes a column-order matrix batch spans from its first element. */
static uint64_t lt_extent(int64_t m, int64_t n, int64_t ld, int64_t stride, int64_t batch, size_t es)
{
    return ((uint64_t)(batch - 1) * (uint64_t)stride + (uint64_t)(n - 1) * (uint64_t)ld + (uint64_t)m) * es;
}

/* Shadow mode's native run: the caller's call, D redirected to into->C (its own layout, batch and
 * stride), on `stream` (lt_native: the call's own; the native branch's capture: its stream). */
static int lt_native_on(const ozcrt_call *c, const oz_gemm_desc *into, cudaStream_t stream)
{
    const lt_call *l = c->ext;
    const lt_real *lt = l->lt;
    cublasLtMatrixLayout_t dl = NULL;
    if (!lt->layout_create || !lt->layout_set || !lt->layout_destroy)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    const cudaDataType type = c->elem == OZ_ELEM_COMPLEX ? CUDA_C_64F : CUDA_R_64F;
    cublasStatus_t st = lt->layout_create(&dl, type, (uint64_t)c->m, (uint64_t)c->n, into->ldc);
    if (st != CUBLAS_STATUS_SUCCESS)
        return st;
    const int64_t stride = into->strideC;
    const int32_t batch = (int32_t)c->batch;
    if (batch > 1 &&
        ((st = lt->layout_set(dl, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch)) != CUBLAS_STATUS_SUCCESS ||
         (st = lt->layout_set(dl, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride)) !=
             CUBLAS_STATUS_SUCCESS)) {
        lt->layout_destroy(dl);
        return st;
    }
    st = lt->matmul(l->handle, l->desc, l->alpha, l->A, l->Adesc, l->B, l->Bdesc, l->beta, l->C, l->Cdesc, into->C,
                    dl, l->algo, l->workspace, l->workspace_size, stream);
    cublasStatus_t st2 = lt->layout_destroy(dl);
    return st != CUBLAS_STATUS_SUCCESS ? st : st2;
}

static int lt_native(const ozcrt_call *c, const oz_gemm_desc *into)
{
    return lt_native_on(c, into, ((const lt_call *)c->ext)->stream);
}

/* The FP64 call decoded into *c (0: not FP64, pass through uncounted; else
 * the reason: EMULATED when it may be routed, else *detail says what for
 * the log). */
#define LT_NOT(what)                                                                                                 \
    do {                                                                                                             \
        *detail = what;                                                                                              \
        return 1;                                                                                                    \
    } while (0)
static int decode(lt_call *l, ozcrt_call *c, ozcrt_reason *why, const char **detail)
{
    const lt_real *lt = l->lt;
    int32_t compute = 0, scale = 0, pmode = 0, ta = 0, tb = 0, tc = 0, bias_type = -1;
    uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (!l->desc || !lt->desc_get || !lt->layout_get ||
        !desc_attr(lt, l->desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, sizeof compute))
        return 0;
    if (compute != CUBLAS_COMPUTE_64F && compute != CUBLAS_COMPUTE_64F_PEDANTIC &&
        compute != CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT)
        return 0;
    *why = OZCRT_R_TYPE;
    if (compute != CUBLAS_COMPUTE_64F || !desc_attr(lt, l->desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof scale) ||
        (scale != CUDA_R_64F && scale != CUDA_C_64F))
        LT_NOT(compute != CUBLAS_COMPUTE_64F ? "cuBLAS's own FP64 numerics" : "scale type");
    const int elem = scale == CUDA_C_64F ? OZ_ELEM_COMPLEX : OZ_ELEM_REAL; /* the layouts must agree */
    *why = OZCRT_R_LT_UNSUPPORTED;
    desc_attr(lt, l->desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pmode, sizeof pmode);
    desc_attr(lt, l->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    desc_attr(lt, l->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    desc_attr(lt, l->desc, CUBLASLT_MATMUL_DESC_TRANSC, &tc, sizeof tc);
    if (!desc_attr(lt, l->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue))
        epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (!desc_attr(lt, l->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type))
        bias_type = -1;
    const void *bias = NULL;
    desc_attr(lt, l->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    /* what must be at its default (zero or NULL): scale, amax and emulation descriptors, fast accumulation, scale modes */
    static const cublasLtMatmulDescAttributes_t zeros[] = {
        CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
        CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
        CUBLASLT_MATMUL_DESC_AMAX_D_POINTER,  CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER,
        CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
        CUBLASLT_MATMUL_DESC_A_SCALE_MODE,    CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
        CUBLASLT_MATMUL_DESC_C_SCALE_MODE,    CUBLASLT_MATMUL_DESC_D_SCALE_MODE,
        CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE};
    for (size_t i = 0; i < sizeof zeros / sizeof zeros[0]; i++)
        if (attr_set(lt, l->desc, zeros[i]))
            LT_NOT("a scale, amax or emulation attribute");
    const int host = pmode == CUBLASLT_POINTER_MODE_HOST;
    if (!host && pmode != CUBLASLT_POINTER_MODE_DEVICE)
        LT_NOT("pointer mode");
    if (tc != CUBLAS_OP_N)
        LT_NOT("TRANSC");
    /* an op value outside N, T, C: cuBLASLt's own answer (it takes some, refuses others), before a
     * row-order operand's op is turned into its transpose's */
    if ((uint32_t)ta > CUBLAS_OP_C || (uint32_t)tb > CUBLAS_OP_C)
        LT_NOT("TRANSA or TRANSB not N, T or C");
    lt_layout a, b, cc, d;
    if (!layout_of(lt, l->Adesc, &a) || !layout_of(lt, l->Bdesc, &b) || !layout_of(lt, l->Cdesc, &cc) ||
        !layout_of(lt, l->Ddesc, &d))
        LT_NOT("a layout not FP64 column or row order");
    const uint32_t st = (uint32_t)scale;
    if (a.type != st || b.type != st || cc.type != st || d.type != st)
        LT_NOT("a layout not of the scale type");
    if (cc.order != CUBLASLT_ORDER_COL || d.order != CUBLASLT_ORDER_COL)
        LT_NOT("C or D in row order");
    /* a complex row-order operand under C is its transpose conjugated, untransposed: no op says that */
    if (elem == OZ_ELEM_COMPLEX && ((a.order == CUBLASLT_ORDER_ROW && ta == CUBLAS_OP_C) ||
                                    (b.order == CUBLASLT_ORDER_ROW && tb == CUBLAS_OP_C)))
        LT_NOT("a complex row-order operand under C");
    as_column_order(&a, &ta);
    as_column_order(&b, &tb);
    const int64_t m = (int64_t)d.rows, n = (int64_t)d.cols;
    const int64_t k = ta == CUBLAS_OP_N ? (int64_t)a.cols : (int64_t)a.rows;
    const int64_t am = ta == CUBLAS_OP_N ? (int64_t)a.rows : (int64_t)a.cols;
    const int64_t bk = tb == CUBLAS_OP_N ? (int64_t)b.rows : (int64_t)b.cols;
    const int64_t bn = tb == CUBLAS_OP_N ? (int64_t)b.cols : (int64_t)b.rows;
    if (am != m || bk != k || bn != n || (int64_t)cc.rows != m || (int64_t)cc.cols != n)
        LT_NOT("shapes that disagree");
    const int64_t batch = d.batch;
    if (a.batch != batch || b.batch != batch || cc.batch != batch)
        LT_NOT("batch counts that disagree");
    /* what cuBLASLt refuses even where C is not read: cuBLASLt answers it */
    if (cc.ld < 1 || (uint64_t)cc.ld < cc.rows)
        LT_NOT("C's ld below its rows");
    if (l->C == l->D && (cc.ld != d.ld || (batch > 1 && cc.stride != d.stride)))
        LT_NOT("in place with C's and D's layouts differing");
    /* C is D (in place), not read (beta 0 in host mode), or apart from D and
     * copied into it first: then C's and D's bytes must not overlap, and a
     * batch of more than LT_COPY_ITEMS items must be dense in both */
    const int beta0 = host && l->beta && ozcrt_scalar_is_zero(l->beta, elem);
    const int same = l->C == l->D && cc.ld == d.ld && (batch == 1 || cc.stride == d.stride);
    const int copy = !same && !beta0;
    if (copy) {
        const size_t es = elem == OZ_ELEM_COMPLEX ? 2 * sizeof(double) : sizeof(double);
        if (!l->C || !l->D || d.ld < 1 || (uint64_t)d.ld < d.rows || m < 1 || n < 1 || batch < 1 ||
            (batch > 1 && (cc.stride < 0 || d.stride < 0)))
            LT_NOT("C apart from D, with a layout the copy does not take");
        const uintptr_t c0 = (uintptr_t)l->C, d0 = (uintptr_t)l->D;
        const uint64_t ce = lt_extent(m, n, cc.ld, cc.stride, batch, es), de = lt_extent(m, n, d.ld, d.stride, batch, es);
        if (c0 < d0 + de && d0 < c0 + ce)
            LT_NOT("C apart from D but overlapping it");
        const int dense = batch == 1 || (cc.stride == cc.ld * n && d.stride == d.ld * n);
        if (!dense && batch > LT_COPY_ITEMS)
            LT_NOT("C apart from D in a batch not dense");
        l->c_ld = cc.ld;
        l->c_stride = cc.stride;
    }
    const void *beta = l->beta;
    if (epilogue == CUBLASLT_EPILOGUE_BIAS) {
        if (elem == OZ_ELEM_COMPLEX) /* the fill of D copies real columns; cuBLASLt judges it */
            LT_NOT("BIAS on complex layouts");
        if (!bias || !beta0 || batch != 1 || (bias_type != -1 && bias_type != CUDA_R_64F))
            LT_NOT("BIAS without a 64F bias, host scalars, beta 0 and one matrix");
        l->bias = bias;
        beta = &k_one; /* D = bias, then D += alpha op(A) op(B) */
    } else if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
        LT_NOT("epilogue");
    }
    *c = (ozcrt_call){.ep = OZCRT_EP_cublasLtMatmul, .handle = (cublasHandle_t)(void *)l->handle,
                      .transa = (cublasOperation_t)ta, .transb = (cublasOperation_t)tb, .m = m, .n = n, .k = k,
                      .elem = elem, .alpha = l->alpha, .beta = beta, .A = l->A, .B = l->B, .C = l->D, .lda = a.ld,
                      .ldb = b.ld, .ldc = d.ld, .strideA = a.stride, .strideB = b.stride, .strideC = d.stride, .batch = batch,
                      .lt = 1, .stream = l->stream, .device_scalars = !host, .ext = l,
                      .prepare = l->bias ? fill_bias : copy ? copy_c : NULL, .native = lt_native, .native_on = lt_native_on};
    *why = OZCRT_R_EMULATED;
    return 1;
}
#undef LT_NOT

/* The call on the copy `lt` (the caller's, or the one a dlsym handle named). */
static cublasStatus_t lt_matmul(const lt_real *lt, cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                                cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                                const cublasLtMatmulAlgo_t *algo, void *workspace, size_t workspaceSizeInBytes,
                                cudaStream_t stream)
{
    if (!lt)
        return ozcrt_real_missing("cublasLtMatmul");
    if (!lt->internal && !ozcrt_in_real) {
        lt_call l = {lt, lightHandle, computeDesc, alpha, beta, A, B, C, D, Adesc, Bdesc, Cdesc, Ddesc, algo,
                     workspace, workspaceSizeInBytes, stream, NULL, 0, 0};
        ozcrt_call c;
        ozcrt_reason why = OZCRT_R_EMULATED;
        const char *detail = "";
        if (decode(&l, &c, &why, &detail)) {
            cublasStatus_t st;
            if (why != OZCRT_R_EMULATED) {
                char what[96];
                snprintf(what, sizeof what, "(%s) ", detail);
                ozcrt_forward_counted(OZCRT_EP_cublasLtMatmul, why, what);
            } else if (ozcrt_route(&c, &st)) {
                return st;
            }
        }
    }
    ozcrt_in_real++;
    cublasStatus_t st = lt->matmul(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
                                   workspace, workspaceSizeInBytes, stream);
    ozcrt_in_real--;
    return st;
}

/* An Lt handle's workspaces go with it. */
static cublasStatus_t lt_destroy(const lt_real *lt, cublasLtHandle_t lightHandle)
{
    if (!lt || !lt->destroy)
        return ozcrt_real_missing("cublasLtDestroy");
    if (lightHandle)
        ozcrt_on_destroy((cublasHandle_t)(void *)lightHandle);
    ozcrt_in_real++;
    cublasStatus_t st = lt->destroy(lightHandle);
    ozcrt_in_real--;
    return st;
}

OZCRT_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                           const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                                           const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                                           const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                           cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                                           void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream)
{
    return lt_matmul(lt_for(__builtin_return_address(0)), lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta,
                     C, Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream);
}

OZCRT_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle)
{
    return lt_destroy(lt_for(__builtin_return_address(0)), lightHandle);
}

/* ---- what the dlsym hook hands out (dlhook.h): functions tied to one copy ---- */

static ozcrt_dl_lib g_dl_lts[OZCRT_DL_SLOTS];
static _Atomic(const lt_real *) g_dl_lt_tables[OZCRT_DL_SLOTS];

/* The table of the copy in file `path` (its cublasLtMatmul by dlopen(RTLD_NOLOAD) and dlsym), found or added. */
static const lt_real *lt_of_file(const char *path)
{
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    void *f = h ? dlsym(h, "cublasLtMatmul") : NULL;
    if (h)
        dlclose(h);
    lt_real t;
    const char *file = "";
    int added = 0;
    if (!f || f == (void *)cublasLtMatmul || !load_copy(f, 0, &t, &file))
        return NULL;
    pthread_mutex_lock(&g_lt_lock);
    const lt_real *lt = table_of(&t, &added);
    pthread_mutex_unlock(&g_lt_lock);
    if (added)
        ozcrt_log(2, "ozcrt: cuBLASLt for the calls of a dlsym caller: %s", file);
    else if (!lt)
        ozcrt_error("ozcrt: more than %d cuBLASLt copies: the calls into %s fail (CUBLAS_STATUS_NOT_INITIALIZED)",
                    LT_MAX_COPIES / 2, path);
    return lt;
}

/* Slot i's copy, made at its first call; NULL (the call reports it missing) when it cannot be had. */
static const lt_real *dl_lt(int i)
{
    const lt_real *lt = atomic_load_explicit(&g_dl_lt_tables[i], memory_order_acquire);
    if (!lt && (lt = lt_of_file(g_dl_lts[i].path)) != NULL)
        atomic_store_explicit(&g_dl_lt_tables[i], lt, memory_order_release);
    return lt;
}

#define OZCRT_DL_LT_TIED(i)                                                                                          \
    static cublasStatus_t dl_matmul_##i(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha, const void *A, \
                                        cublasLtMatrixLayout_t Ad, const void *B, cublasLtMatrixLayout_t Bd,         \
                                        const void *beta, const void *C, cublasLtMatrixLayout_t Cd, void *D,         \
                                        cublasLtMatrixLayout_t Dd, const cublasLtMatmulAlgo_t *algo, void *ws,       \
                                        size_t wsize, cudaStream_t stream)                                           \
    {                                                                                                                \
        return lt_matmul(dl_lt(i), h, d, alpha, A, Ad, B, Bd, beta, C, Cd, D, Dd, algo, ws, wsize, stream);         \
    }                                                                                                                \
    static cublasStatus_t dl_destroy_##i(cublasLtHandle_t h) { return lt_destroy(dl_lt(i), h); }
OZCRT_DL_LT_TIED(0)
OZCRT_DL_LT_TIED(1)
OZCRT_DL_LT_TIED(2)
OZCRT_DL_LT_TIED(3)
OZCRT_DL_LT_TIED(4)
OZCRT_DL_LT_TIED(5)
OZCRT_DL_LT_TIED(6)
OZCRT_DL_LT_TIED(7)
#undef OZCRT_DL_LT_TIED
_Static_assert(OZCRT_DL_SLOTS == 8, "one dl_matmul_/dl_destroy_ pair a slot");
static ozcrt_cublasLtMatmul_fn const g_dl_matmul[OZCRT_DL_SLOTS] = {
    dl_matmul_0, dl_matmul_1, dl_matmul_2, dl_matmul_3, dl_matmul_4, dl_matmul_5, dl_matmul_6, dl_matmul_7};
static ozcrt_cublasLtDestroy_fn const g_dl_destroy[OZCRT_DL_SLOTS] = {
    dl_destroy_0, dl_destroy_1, dl_destroy_2, dl_destroy_3, dl_destroy_4, dl_destroy_5, dl_destroy_6, dl_destroy_7};

void *ozcrt_dl_lt_function(ozcrt_entry ep, uintptr_t base, const char *path)
{
    if (ep != OZCRT_EP_cublasLtMatmul && ep != OZCRT_EP_cublasLtDestroy)
        return NULL;
    const int i = ozcrt_dl_slot(g_dl_lts, base, path);
    if (i < 0)
        return NULL;
    return ep == OZCRT_EP_cublasLtMatmul ? (void *)g_dl_matmul[i] : (void *)g_dl_destroy[i];
}
