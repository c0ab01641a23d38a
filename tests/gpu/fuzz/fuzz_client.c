/* tests/gpu/fuzz/fuzz_client.c: the differential fuzzer's client, an ordinary cuBLAS program: runs the calls of fuzz_gen.h, natively or under libozcrt.so, and writes what each did for fuzz_compare.py.
 *
 *   fuzz_client SEED COUNT OUT [--only INDEX | --from INDEX]
 *
 * Per call: A and B filled from the call's data seed; C's buffer (every
 * batch item, with its ld padding, gaps between items and FZ_CANARY
 * doubles on each side) filled with a sentinel NaN and C's elements with
 * data; the call on one stream; then the client checks on the host that no
 * sentinel changed (a write outside C), and that nothing changed at all
 * when the status is not CUBLAS_STATUS_SUCCESS. OUT gets one text line per
 * call:
 *   index ep status canary written_on_error k alpha_re alpha_im beta_re beta_im count complex device
 * followed by `count` lines for C's elements in order (item, column, row; cuBLASLt: D's):
 *   c_re c_im S R C0 BIAS
 * (c as %a; S = sum_k |a|_1 |b|_1, R = rowmax|op(A)_i|_1 colmax|op(B)_j|_1,
 * C0 = |C_old|_1, BIAS = |bias_i|_1 of cuBLASLt's BIAS epilogue (else 0): the comparator's
 * tolerance; only for SUCCESS). Exit 0
 * when every call ran (whatever its status), 2 on a CUDA failure, 3 on a
 * crash (the call's index and entry point on stderr). */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <execinfo.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/gpu/fuzz/fuzz_gen.h"

#define FZ_CANARY 16
#define FZ_SENTINEL UINT64_C(0x7ff8dead5eed0001)

#define FZ_CUDA(call)                                                                               \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
            exit(2);                                                                                \
        }                                                                                           \
    } while (0)

static double sentinel(void)
{
    double d;
    const uint64_t u = FZ_SENTINEL;
    memcpy(&d, &u, 8);
    return d;
}

static double gen(int dist, uint64_t *s)
{
    const double u = (double)(fz_mix(s) >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    switch (dist) {
    case FZ_D_WIDE: return ldexp(u, (int)fz_range(s, -60, 60));
    case FZ_D_INT: return (double)fz_range(s, -1000, 1000);
    case FZ_D_SPECIAL: {
        const int64_t r = fz_range(s, 0, 49);
        return r == 0 ? INFINITY : r == 1 ? -INFINITY : r == 2 ? NAN : u;
    }
    default: return u;
    }
}

static int64_t nonneg(int64_t x) { return x > 0 ? x : 0; }

/* The call in flight, for a crash's report (its index replays it alone). */
static volatile sig_atomic_t g_index = -1, g_ep = -1;

static void on_crash(int sig)
{
    char msg[160];
    size_t n = 0;
    const char *parts[3] = {"fuzz_client: crashed (signal ", ") in call ", " ("};
    long long vals[2] = {sig, (long long)g_index};
    for (int i = 0; i < 2; i++) {
        for (const char *p = parts[i]; *p && n < sizeof msg - 40; p++)
            msg[n++] = *p;
        char d[24];
        int nd = 0;
        long long v = vals[i] < 0 ? -vals[i] : vals[i];
        do
            d[nd++] = (char)('0' + v % 10);
        while ((v /= 10) && nd < 20);
        if (vals[i] < 0)
            msg[n++] = '-';
        while (nd)
            msg[n++] = d[--nd];
    }
    for (const char *p = parts[2]; *p; p++)
        msg[n++] = *p;
    for (const char *p = g_ep >= 0 && g_ep < FZ_EP_COUNT ? fz_ep_name[g_ep] : "?"; *p && n < sizeof msg - 3; p++)
        msg[n++] = *p;
    msg[n++] = ')';
    msg[n++] = '\n';
    if (write(2, msg, n) < 0)
        _exit(3);
    void *frames[32]; /* where: the client or a library (glibc's backtrace, good enough for a dying test) */
    backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
    _exit(3);
}

/* One operand's or C's storage: items of `elems` elements each `stride` apart (strided), or
 * contiguous blocks (pointer arrays), es doubles an element, FZ_CANARY doubles each side. */
typedef struct fz_buf {
    double *host, *dev;
    size_t doubles;   /* all of it, canaries included */
    size_t item_off[FZ_MAX_BATCH]; /* doubles from the start to item b's element (0, 0) */
} fz_buf;

static void buf_make(fz_buf *b, int64_t items, int64_t elems, int64_t stride, int kind, int es)
{
    items = items > 0 ? items : 1;
    elems = nonneg(elems);
    int64_t span = kind == 1 ? (items - 1) * nonneg(stride) + elems : items * elems;
    b->doubles = (size_t)(2 * FZ_CANARY + span * es + 1);
    b->host = malloc(b->doubles * sizeof(double));
    if (!b->host) {
        fprintf(stderr, "out of host memory\n");
        exit(2);
    }
    for (int64_t i = 0; i < items && i < FZ_MAX_BATCH; i++)
        b->item_off[i] = (size_t)(FZ_CANARY + (kind == 1 ? i * nonneg(stride) : i * elems) * es);
    const double sv = sentinel();
    for (size_t i = 0; i < b->doubles; i++)
        b->host[i] = sv;
    FZ_CUDA(cudaMalloc((void **)&b->dev, b->doubles * sizeof(double)));
}

static void buf_free(fz_buf *b)
{
    free(b->host);
    FZ_CUDA(cudaFree(b->dev));
}

/* FNV-1a over `bytes` bytes, continuing from h */
static uint64_t fnv1a(const void *p, size_t bytes, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* the element (r, c) of item i with leading dimension ld: its first double */
static double *at(fz_buf *b, int i, int64_t r, int64_t c, int64_t ld, int es)
{
    return b->host + b->item_off[i] + (size_t)((r + c * ld) * es);
}

static cudaDataType fz_type(const fz_call *c, int which)
{
    if (c->types == FZ_T_MIXED)
        return which == 1 ? CUDA_C_64F : CUDA_R_64F;
    return c->types == FZ_T_COMPLEX ? CUDA_C_64F : CUDA_R_64F;
}

/* A grouped call's per-group arrays, in the entry point's integer type IT. */
#define FZ_GROUP_ARRAYS(IT)                                                                          \
    cublasOperation_t gta[FZ_MAX_GROUPS], gtb[FZ_MAX_GROUPS];                                        \
    IT gm[FZ_MAX_GROUPS], gn[FZ_MAX_GROUPS], gk[FZ_MAX_GROUPS], glda[FZ_MAX_GROUPS], gldb[FZ_MAX_GROUPS], \
        gldc[FZ_MAX_GROUPS], gsz[FZ_MAX_GROUPS];                                                     \
    for (int g = 0; g < FZ_MAX_GROUPS; g++) {                                                        \
        const fz_group *x = &c->grp[g < c->groups ? g : 0];                                          \
        gta[g] = (cublasOperation_t)x->ta, gtb[g] = (cublasOperation_t)x->tb;                        \
        gm[g] = (IT)x->m, gn[g] = (IT)x->n, gk[g] = (IT)c->k, glda[g] = (IT)x->lda, gldb[g] = (IT)x->ldb; \
        gldc[g] = (IT)x->ldc, gsz[g] = (IT)x->size;                                                  \
    }

/* The call itself (ga, gb: a grouped call's alpha and beta arrays, one scalar a group). */
static cublasStatus_t run(cublasHandle_t h, const fz_call *c, const void *al, const void *be, fz_buf *A, fz_buf *B,
                          fz_buf *C, void **parr, const void *ga, const void *gb)
{
    const cublasOperation_t ta = (cublasOperation_t)c->ta, tb = (cublasOperation_t)c->tb;
    const double *dA = A->dev + A->item_off[0], *dB = B->dev + B->item_off[0];
    double *dC = C->dev + C->item_off[0];
    const int m = (int)c->m, n = (int)c->n, k = (int)c->k, lda = (int)c->lda, ldb = (int)c->ldb, ldc = (int)c->ldc;
    const int batch = (int)c->batch;
    const long long sa = c->strideA, sb = c->strideB, sc = c->strideC; /* in elements */
    const cuDoubleComplex *zA = (const cuDoubleComplex *)dA, *zB = (const cuDoubleComplex *)dB;
    cuDoubleComplex *zC = (cuDoubleComplex *)dC;
    const cublasComputeType_t ct = c->pedantic ? CUBLAS_COMPUTE_64F_PEDANTIC : CUBLAS_COMPUTE_64F;
    const cudaDataType t0 = fz_type(c, 0), t1 = fz_type(c, 1), t2 = fz_type(c, 2);
    const double *const *pa = (const double *const *)parr[0];
    const double *const *pb = (const double *const *)parr[1];
    double *const *pc = (double *const *)parr[2];
    switch (c->ep) {
    case FZ_EP_DGEMM: return cublasDgemm_v2(h, ta, tb, m, n, k, al, dA, lda, dB, ldb, be, dC, ldc);
    case FZ_EP_DGEMM64: return cublasDgemm_v2_64(h, ta, tb, c->m, c->n, c->k, al, dA, c->lda, dB, c->ldb, be, dC, c->ldc);
    case FZ_EP_DSB: return cublasDgemmStridedBatched(h, ta, tb, m, n, k, al, dA, lda, sa, dB, ldb, sb, be, dC, ldc, sc, batch);
    case FZ_EP_DSB64:
        return cublasDgemmStridedBatched_64(h, ta, tb, c->m, c->n, c->k, al, dA, c->lda, sa, dB, c->ldb, sb, be, dC, c->ldc,
                                            sc, c->batch);
    case FZ_EP_DB: return cublasDgemmBatched(h, ta, tb, m, n, k, al, pa, lda, pb, ldb, be, pc, ldc, batch);
    case FZ_EP_DB64:
        return cublasDgemmBatched_64(h, ta, tb, c->m, c->n, c->k, al, pa, c->lda, pb, c->ldb, be, pc, c->ldc, c->batch);
    case FZ_EP_EX:
        return cublasGemmEx(h, ta, tb, m, n, k, al, dA, t0, lda, dB, t1, ldb, be, dC, t2, ldc, ct, (cublasGemmAlgo_t)c->algo);
    case FZ_EP_EX64:
        return cublasGemmEx_64(h, ta, tb, c->m, c->n, c->k, al, dA, t0, c->lda, dB, t1, c->ldb, be, dC, t2, c->ldc, ct,
                               (cublasGemmAlgo_t)c->algo);
    case FZ_EP_SBEX:
        return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, al, dA, t0, lda, sa, dB, t1, ldb, sb, be, dC, t2, ldc, sc,
                                          batch, ct, (cublasGemmAlgo_t)c->algo);
    case FZ_EP_SBEX64:
        return cublasGemmStridedBatchedEx_64(h, ta, tb, c->m, c->n, c->k, al, dA, t0, c->lda, sa, dB, t1, c->ldb, sb, be,
                                             dC, t2, c->ldc, sc, c->batch, ct, (cublasGemmAlgo_t)c->algo);
    case FZ_EP_BEX:
        return cublasGemmBatchedEx(h, ta, tb, m, n, k, al, (const void *const *)pa, t0, lda, (const void *const *)pb, t1,
                                   ldb, be, (void *const *)pc, t2, ldc, batch, ct, (cublasGemmAlgo_t)c->algo);
    case FZ_EP_BEX64:
        return cublasGemmBatchedEx_64(h, ta, tb, c->m, c->n, c->k, al, (const void *const *)pa, t0, c->lda,
                                      (const void *const *)pb, t1, c->ldb, be, (void *const *)pc, t2, c->ldc, c->batch,
                                      ct, (cublasGemmAlgo_t)c->algo);
    case FZ_EP_ZGEMM: return cublasZgemm_v2(h, ta, tb, m, n, k, al, zA, lda, zB, ldb, be, zC, ldc);
    case FZ_EP_ZGEMM64: return cublasZgemm_v2_64(h, ta, tb, c->m, c->n, c->k, al, zA, c->lda, zB, c->ldb, be, zC, c->ldc);
    case FZ_EP_Z3M: return cublasZgemm3m(h, ta, tb, m, n, k, al, zA, lda, zB, ldb, be, zC, ldc);
    case FZ_EP_ZSB: return cublasZgemmStridedBatched(h, ta, tb, m, n, k, al, zA, lda, sa, zB, ldb, sb, be, zC, ldc, sc, batch);
    case FZ_EP_ZSB64:
        return cublasZgemmStridedBatched_64(h, ta, tb, c->m, c->n, c->k, al, zA, c->lda, sa, zB, c->ldb, sb, be, zC, c->ldc,
                                            sc, c->batch);
    case FZ_EP_ZB:
        return cublasZgemmBatched(h, ta, tb, m, n, k, al, (const cuDoubleComplex *const *)pa, lda,
                                  (const cuDoubleComplex *const *)pb, ldb, be, (cuDoubleComplex *const *)pc, ldc, batch);
    case FZ_EP_ZB64:
        return cublasZgemmBatched_64(h, ta, tb, c->m, c->n, c->k, al, (const cuDoubleComplex *const *)pa, c->lda,
                                     (const cuDoubleComplex *const *)pb, c->ldb, be, (cuDoubleComplex *const *)pc, c->ldc,
                                     c->batch);
    case FZ_EP_DGG: {
        FZ_GROUP_ARRAYS(int)
        return cublasDgemmGroupedBatched(h, gta, gtb, gm, gn, gk, (const double *)ga, pa, glda, pb, gldb,
                                         (const double *)gb, pc, gldc, c->groups, gsz);
    }
    case FZ_EP_DGG64: {
        FZ_GROUP_ARRAYS(int64_t)
        return cublasDgemmGroupedBatched_64(h, gta, gtb, gm, gn, gk, (const double *)ga, pa, glda, pb, gldb,
                                            (const double *)gb, pc, gldc, c->groups, gsz);
    }
    case FZ_EP_GGEX: {
        FZ_GROUP_ARRAYS(int)
        return cublasGemmGroupedBatchedEx(h, gta, gtb, gm, gn, gk, ga, (const void *const *)pa, t0, glda,
                                          (const void *const *)pb, t1, gldb, gb, (void *const *)pc, t2, gldc,
                                          c->groups, gsz, ct);
    }
    case FZ_EP_GGEX64: {
        FZ_GROUP_ARRAYS(int64_t)
        return cublasGemmGroupedBatchedEx_64(h, gta, gtb, gm, gn, gk, ga, (const void *const *)pa, t0, glda,
                                             (const void *const *)pb, t1, gldb, gb, (void *const *)pc, t2, gldc,
                                             c->groups, gsz, ct);
    }
    default: return CUBLAS_STATUS_INVALID_VALUE;
    }
}

/* |x|_1 of element (r, kk) of op(X) (op from t, storage ld, es doubles an element) */
static double op_abs(fz_buf *X, int item, int t, int64_t r, int64_t kk, int64_t ld, int es, int row_order)
{
    /* element (r, kk) of op(X): (r, kk) or (kk, r) of X as stored; row order (cuBLASLt): a row is contiguous */
    const int64_t sr = t == 0 ? r : kk, sc = t == 0 ? kk : r;
    const double *p = row_order ? X->host + X->item_off[item] + (size_t)((sr * ld + sc) * es) : at(X, item, sr, sc, ld, es);
    return fabs(p[0]) + (es == 2 ? fabs(p[1]) : 0.0);
}

/* cuBLASLt's matmul of the call: layouts of A, B, C and D (D at C's address in place), orders, a
 * strided batch, the BIAS epilogue, the pointer mode; a descriptor cuBLASLt refuses gives its status. */
static cublasLtHandle_t g_lt;
static void *g_lt_ws;
#define FZ_LT_WS ((size_t)32 << 20)
#define FZ_LT(call)                                  \
    do {                                             \
        const cublasStatus_t s_ = (call);            \
        if (s_ != CUBLAS_STATUS_SUCCESS) {           \
            status = s_;                             \
            goto done;                               \
        }                                            \
    } while (0)
static cublasStatus_t run_lt(const fz_call *c, const void *al, const void *be, fz_buf *A, fz_buf *B, fz_buf *Cin,
                             fz_buf *D, const double *dbias, cudaStream_t st)
{
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    cublasLtMatmulDesc_t desc = NULL;
    cublasLtMatrixLayout_t l[4] = {NULL, NULL, NULL, NULL};
    /* the layouts' types as the Ex calls' (mixed: B complex, the others real: cuBLASLt refuses) */
    const cudaDataType lt_types[4] = {fz_type(c, 0), fz_type(c, 1), fz_type(c, 2), fz_type(c, 2)};
    FZ_LT(cublasLtMatmulDescCreate(&desc, c->pedantic ? CUBLAS_COMPUTE_64F_PEDANTIC : CUBLAS_COMPUTE_64F, lt_types[0]));
    const int32_t ta = c->ta, tb = c->tb;
    const int32_t pm = c->device_scalars ? CUBLASLT_POINTER_MODE_DEVICE : CUBLASLT_POINTER_MODE_HOST;
    FZ_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    FZ_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    FZ_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm));
    if (c->bias) {
        const uint32_t ep = CUBLASLT_EPILOGUE_BIAS;
        FZ_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep));
        FZ_LT(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof dbias));
    }
    const uint64_t rows[4] = {(uint64_t)fz_rows_a(c), (uint64_t)fz_rows_b(c), (uint64_t)c->m, (uint64_t)c->m};
    const uint64_t cols[4] = {(uint64_t)fz_cols_a(c), (uint64_t)fz_cols_b(c), (uint64_t)c->n, (uint64_t)c->n};
    const int64_t lds[4] = {c->lda, c->ldb, c->ldc, c->ldd}, strides[4] = {c->strideA, c->strideB, c->strideC, c->strideD};
    for (int i = 0; i < 4; i++) {
        FZ_LT(cublasLtMatrixLayoutCreate(&l[i], lt_types[i], rows[i], cols[i], lds[i]));
        if (i < 2 && c->row_order) {
            const int32_t order = CUBLASLT_ORDER_ROW;
            FZ_LT(cublasLtMatrixLayoutSetAttribute(l[i], CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order));
        }
        if (c->batch > 1) {
            const int32_t bc = (int32_t)c->batch;
            FZ_LT(cublasLtMatrixLayoutSetAttribute(l[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
            FZ_LT(cublasLtMatrixLayoutSetAttribute(l[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                                   sizeof strides[i]));
        }
    }
    {
        double *dC = Cin->dev + Cin->item_off[0], *dD = D->dev + D->item_off[0];
        status = cublasLtMatmul(g_lt, desc, al, A->dev + A->item_off[0], l[0], B->dev + B->item_off[0], l[1], be, dC,
                                l[2], c->in_place ? dC : dD, l[3], NULL, g_lt_ws, FZ_LT_WS, st);
    }
done:
    for (int i = 0; i < 4; i++)
        if (l[i])
            cublasLtMatrixLayoutDestroy(l[i]);
    if (desc)
        cublasLtMatmulDescDestroy(desc);
    return status;
}

/* The shape of each batch item: the call's own, or (grouped) its group's. */
static void item_shapes(const fz_call *c, int64_t items, fz_group *g)
{
    if (fz_ep_kind[c->ep] != 3) { /* cuBLASLt: the output is D, its ld ldd (ldc in place) */
        for (int64_t b = 0; b < items; b++)
            g[b] = (fz_group){c->ta, c->tb, c->m, c->n, c->lda, c->ldb, fz_ep_kind[c->ep] == 4 ? c->ldd : c->ldc, 1};
        return;
    }
    int64_t b = 0;
    for (int x = 0; x < c->groups; x++)
        for (int64_t i = 0; i < c->grp[x].size && b < items; i++)
            g[b++] = c->grp[x];
}

static void one_call(cublasHandle_t h, cudaStream_t st, const fz_call *c, FILE *out)
{
    const int es = c->complex_ || c->types != FZ_T_REAL ? 2 : 1;
    const int kind = fz_ep_kind[c->ep];
    const int64_t items = kind == 0 ? 1 : c->batch;
    const int64_t mi = items < FZ_MAX_BATCH ? items : FZ_MAX_BATCH;
    fz_group gi[FZ_MAX_BATCH];
    item_shapes(c, mi, gi);
    const int lt = kind == 4, lt_apart = lt && !c->in_place; /* cuBLASLt, D in its own buffer */
    int64_t ea = nonneg(c->lda) * nonneg(fz_span_a(c)), eb = nonneg(c->ldb) * nonneg(fz_span_b(c)),
            ec = nonneg(lt ? c->ldd : c->ldc) * nonneg(c->n);
    for (int64_t b = 0; kind == 3 && b < mi; b++) { /* grouped: every item as large as the largest */
        const fz_group *g = &gi[b];
        const int64_t a = nonneg(g->lda) * nonneg(g->ta == 0 ? c->k : g->m), bb = nonneg(g->ldb) * nonneg(g->tb == 0 ? g->n : c->k),
                      cc = nonneg(g->ldc) * nonneg(g->n);
        ea = a > ea ? a : ea, eb = bb > eb ? bb : eb, ec = cc > ec ? cc : ec;
    }
    /* the buffers' layout: grouped items as pointer-array ones, cuBLASLt's as a strided batch */
    const int bk = kind == 3 ? 2 : lt ? 1 : kind;
    fz_buf A, B, C, Cin; /* C: the output (cuBLASLt: D, C's own buffer in place); Cin: an apart D's C */
    buf_make(&A, items, ea, c->strideA, bk, es);
    buf_make(&B, items, eb, c->strideB, bk, es);
    buf_make(&C, items, ec, lt ? c->strideD : c->strideC, bk, es);
    buf_make(&Cin, items, lt_apart ? nonneg(c->ldc) * nonneg(c->n) : 0, c->strideC, bk, es);
    uint64_t s = c->data_seed;
    for (size_t i = 0; i < A.doubles; i++)
        A.host[i] = gen(c->dist, &s);
    for (size_t i = 0; i < B.doubles; i++)
        B.host[i] = gen(c->dist, &s);
    const int valid = fz_valid(c);
    /* cuBLASLt has rules of its own (it takes some calls cuBLAS's documented ones refuse: an ld below
     * the rows of a one-column matrix, an op value outside N, T, C): where the model says cuBLAS
     * refuses a cublasLtMatmul, its answer is not predicted; the line says so (canary 2) and carries a
     * hash of every output buffer's bits, which the runs must share (the shim forwards such calls) */
    const int unpredicted = lt && !valid;
    if (valid)
        for (int b = 0; b < mi; b++)
            for (int64_t j = 0; j < gi[b].n; j++)
                for (int64_t i = 0; i < gi[b].m; i++)
                    for (int p = 0; p < es; p++)
                        at(&C, b, i, j, gi[b].ldc, es)[p] = gen(FZ_D_UNIFORM, &s);
    if (valid && lt_apart) /* the C an apart D reads */
        for (int b = 0; b < mi; b++)
            for (int64_t j = 0; j < c->n; j++)
                for (int64_t i = 0; i < c->m; i++)
                    for (int p = 0; p < es; p++)
                        at(&Cin, b, i, j, c->ldc, es)[p] = gen(FZ_D_UNIFORM, &s);
    double *C0 = malloc(C.doubles * sizeof(double)), *Cin0 = malloc(Cin.doubles * sizeof(double));
    double *hbias = malloc((size_t)(nonneg(c->m) * es + 1) * sizeof(double)), *dbias = NULL;
    if (!C0 || !Cin0 || !hbias)
        exit(2);
    memcpy(C0, C.host, C.doubles * sizeof(double));
    memcpy(Cin0, Cin.host, Cin.doubles * sizeof(double));
    for (int64_t i = 0; i < nonneg(c->m) * es; i++)
        hbias[i] = gen(FZ_D_UNIFORM, &s);
    if (lt) {
        FZ_CUDA(cudaMalloc((void **)&dbias, (size_t)(nonneg(c->m) * es + 1) * sizeof(double)));
        FZ_CUDA(cudaMemcpy(dbias, hbias, (size_t)(nonneg(c->m) * es) * sizeof(double), cudaMemcpyHostToDevice));
    }
    FZ_CUDA(cudaMemcpy(Cin.dev, Cin.host, Cin.doubles * 8, cudaMemcpyHostToDevice));
    FZ_CUDA(cudaMemcpy(A.dev, A.host, A.doubles * 8, cudaMemcpyHostToDevice));
    FZ_CUDA(cudaMemcpy(B.dev, B.host, B.doubles * 8, cudaMemcpyHostToDevice));
    FZ_CUDA(cudaMemcpy(C.dev, C.host, C.doubles * 8, cudaMemcpyHostToDevice));
    /* pointer arrays: items' first elements */
    void *parr[3] = {NULL, NULL, NULL};
    double *hp[3][FZ_MAX_BATCH];
    if (kind == 2 || kind == 3) {
        fz_buf *bufs[3] = {&A, &B, &C};
        for (int x = 0; x < 3; x++) {
            for (int b = 0; b < FZ_MAX_BATCH; b++)
                hp[x][b] = bufs[x]->dev + bufs[x]->item_off[b < mi ? b : 0];
            FZ_CUDA(cudaMalloc(&parr[x], sizeof hp[x]));
            FZ_CUDA(cudaMemcpy(parr[x], hp[x], sizeof hp[x], cudaMemcpyHostToDevice));
        }
    }
    /* scalars: host or device */
    double *dS = NULL;
    /* host scalars as cuDoubleComplex (16-byte aligned, as cuBLAS loads them: fz_call's
     * arrays are only 8-byte aligned, and cuBLASLt's complex scaling faults on those) */
    cuDoubleComplex hs[2];
    hs[0] = make_cuDoubleComplex(c->alpha[0], c->alpha[1]);
    hs[1] = make_cuDoubleComplex(c->beta[0], c->beta[1]);
    const void *al = &hs[0], *be = &hs[1];
    if (c->device_scalars) {
        FZ_CUDA(cudaMalloc((void **)&dS, 4 * sizeof(double)));
        FZ_CUDA(cudaMemcpy(dS, c->alpha, 2 * sizeof(double), cudaMemcpyHostToDevice));
        FZ_CUDA(cudaMemcpy(dS + 2, c->beta, 2 * sizeof(double), cudaMemcpyHostToDevice));
        al = dS;
        be = dS + 2;
    }
    if (cublasSetPointerMode_v2(h, c->device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST) !=
        CUBLAS_STATUS_SUCCESS)
        exit(2);
    /* grouped: alpha and beta once a group, where the pointer mode says (es doubles each; 16-byte
     * aligned, as cuBLAS loads complex scalars) */
    _Alignas(16) double gsc[2][FZ_MAX_GROUPS * 2];
    for (int g = 0; g < FZ_MAX_GROUPS; g++)
        for (int p = 0; p < es; p++)
            gsc[0][g * es + p] = c->alpha[p], gsc[1][g * es + p] = c->beta[p];
    double *dG = NULL;
    const void *ga = gsc[0], *gb = gsc[1];
    if (kind == 3 && c->device_scalars) {
        FZ_CUDA(cudaMalloc((void **)&dG, sizeof gsc));
        FZ_CUDA(cudaMemcpy(dG, gsc, sizeof gsc, cudaMemcpyHostToDevice));
        ga = dG;
        gb = dG + FZ_MAX_GROUPS * 2;
    }
    const cublasStatus_t status = lt ? run_lt(c, al, be, &A, &B, lt_apart ? &Cin : &C, &C, dbias, st)
                                     : run(h, c, al, be, &A, &B, &C, parr, ga, gb);
    FZ_CUDA(cudaStreamSynchronize(st));
    FZ_CUDA(cudaGetLastError());
    FZ_CUDA(cudaMemcpy(C.host, C.dev, C.doubles * 8, cudaMemcpyDeviceToHost));
    FZ_CUDA(cudaMemcpy(Cin.host, Cin.dev, Cin.doubles * 8, cudaMemcpyDeviceToHost));
    /* outside C's elements: every double still the sentinel; on an error: nothing changed */
    int canary = 0, written = 0;
    char *inside = calloc(C.doubles, 1);
    if (!inside)
        exit(2);
    if (valid)
        for (int b = 0; b < mi; b++)
            for (int64_t j = 0; j < gi[b].n; j++)
                for (int64_t i = 0; i < gi[b].m; i++)
                    for (int p = 0; p < es; p++)
                        inside[(size_t)(at(&C, b, i, j, gi[b].ldc, es) + p - C.host)] = 1;
    for (size_t i = 0; i < C.doubles; i++) {
        const int same = memcmp(&C.host[i], &C0[i], 8) == 0;
        canary |= !inside[i] && !same;
        written |= status != CUBLAS_STATUS_SUCCESS && !same;
    }
    canary |= memcmp(Cin.host, Cin0, Cin.doubles * 8) != 0; /* an apart D's C is only read */
    if (unpredicted)
        canary = 2;
    const uint64_t hash = fnv1a(Cin.host, Cin.doubles * 8, fnv1a(C.host, C.doubles * 8, 0xcbf29ce484222325ULL));
    int64_t count = 0;
    for (int b = 0; status == CUBLAS_STATUS_SUCCESS && valid && b < mi; b++)
        count += nonneg(gi[b].m) * nonneg(gi[b].n);
    fprintf(out, "%llu %s %d %d %d %lld %a %a %a %a %lld %d %d %016llx\n", (unsigned long long)c->index,
            fz_ep_name[c->ep], (int)status, canary, written, (long long)c->k, c->alpha[0], c->alpha[1], c->beta[0],
            c->beta[1], (long long)count, es == 2, c->device_scalars, (unsigned long long)hash);
    for (int b = 0; b < mi && count; b++) {
        const int ia = kind == 1 && c->strideA == 0 ? 0 : b, ib = kind == 1 && c->strideB == 0 ? 0 : b;
        const fz_group *g = &gi[b];
        for (int64_t j = 0; j < g->n; j++)
            for (int64_t i = 0; i < g->m; i++) {
                double S = 0.0, ra = 0.0, cb = 0.0;
                for (int64_t kk = 0; kk < c->k; kk++) {
                    const double x = op_abs(&A, ia, g->ta, i, kk, g->lda, es, c->row_order), y = op_abs(&B, ib, g->tb, kk, j, g->ldb, es, c->row_order);
                    S += x * y;
                    ra = fmax(ra, x);
                    cb = fmax(cb, y);
                }
                const double *cf = at(&C, b, i, j, g->ldc, es);
                const double *ci = lt_apart ? Cin0 + (at(&Cin, b, i, j, c->ldc, es) - Cin.host)
                                            : C0 + (at(&C, b, i, j, g->ldc, es) - C.host);
                /* a 6th field: the BIAS epilogue's term, |bias_i|, for the tolerance's last rounding */
                const double bias = lt && c->bias ? fabs(hbias[i * es]) + (es == 2 ? fabs(hbias[i * es + 1]) : 0.0) : 0.0;
                fprintf(out, "%a %a %a %a %a %a\n", cf[0], es == 2 ? cf[1] : 0.0, S, ra * cb,
                        fabs(ci[0]) + (es == 2 ? fabs(ci[1]) : 0.0), bias);
            }
    }
    free(inside);
    free(C0);
    free(Cin0);
    free(hbias);
    if (dbias)
        FZ_CUDA(cudaFree(dbias));
    buf_free(&Cin);
    for (int x = 0; x < 3; x++)
        if (parr[x])
            FZ_CUDA(cudaFree(parr[x]));
    if (dS)
        FZ_CUDA(cudaFree(dS));
    if (dG)
        FZ_CUDA(cudaFree(dG));
    buf_free(&A);
    buf_free(&B);
    buf_free(&C);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: fuzz_client SEED COUNT OUT [--only INDEX | --from INDEX]\n");
        return 2;
    }
    const uint64_t seed = strtoull(argv[1], NULL, 0);
    const long long count = atoll(argv[2]);
    long long only = -1, from = 0;
    if (argc > 5 && strcmp(argv[4], "--only") == 0)
        only = atoll(argv[5]);
    if (argc > 5 && strcmp(argv[4], "--from") == 0)
        from = atoll(argv[5]);
    FILE *out = fopen(argv[3], "w");
    if (!out)
        return 2;
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    signal(SIGFPE, on_crash);
    signal(SIGABRT, on_crash);
    cublasHandle_t h;
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS)
        return 2;
    cudaStream_t streams[FZ_STREAMS] = {0}; /* stream 0: the legacy default stream */
    for (int i = 1; i < FZ_STREAMS; i++)
        FZ_CUDA(cudaStreamCreate(&streams[i]));
    if (cublasLtCreate(&g_lt) != CUBLAS_STATUS_SUCCESS)
        return 2;
    FZ_CUDA(cudaMalloc(&g_lt_ws, FZ_LT_WS));
    for (long long i = 0; i < count; i++) {
        if ((only >= 0 && i != only) || i < from)
            continue;
        fz_call c;
        fz_make(seed, (uint64_t)i, &c);
        g_index = (sig_atomic_t)i;
        g_ep = c.ep;
        if (cublasSetStream_v2(h, streams[c.stream]) != CUBLAS_STATUS_SUCCESS)
            return 2;
        one_call(h, streams[c.stream], &c, out);
    }
    fclose(out);
    cublasLtDestroy(g_lt);
    FZ_CUDA(cudaFree(g_lt_ws));
    cublasDestroy_v2(h);
    for (int i = 1; i < FZ_STREAMS; i++)
        FZ_CUDA(cudaStreamDestroy(streams[i]));
    printf("fuzz_client: seed 0x%llx, %lld calls\n", (unsigned long long)seed, only >= 0 ? 1LL : count);
    return 0;
}
