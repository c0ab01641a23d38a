/* tests/compare/test_shadow_complex.c: shadow mode (compare/shadow.c) on complex calls, on the CPU: the CUDA runtime faked over host memory, compare's kernels replaced by their host models.
 *
 * ozcmp_gemm compares a complex call (d->elem OZ_ELEM_COMPLEX, ZGEMM) like
 * a real one. Here "device" memory is host memory: the fake runtime hands
 * out scratch from malloc (filled with NaN bytes, so a missing copy shows),
 * ozcmp_copy is kernel_copy.cu's loop, ozcmp_metrics runs the host model
 * (compare/metrics.c: ozcmp_zscales_host and ozcmp_zmatrix_host) on the
 * views it is given. The emulated path is the ozaki2 complex reference
 * (reference/oz2zgemm.c) and the native call a plain complex GEMM, so the
 * test checks what shadow.c does: the scratch laid out like the complex C
 * (16 bytes an element, ldc and strideC in elements, the address mod 256;
 * pointer arrays built per item), C copied in when beta may be non-zero,
 * the native call into scratch, the path into the caller's C, the metrics on
 * the right views (the report row equals the host model on the two results),
 * OZCRT_COMPARE_RESULT=native copying every part back, the failure paths,
 * and the reasons: graph capture still counted, `complex` never. A real
 * call through the same fakes is the control. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "compare/compare.h"
#include "compare/kernels.h"
#include "crt/oz2_complex.h"
#include "reference/oz2gemm.h"
#include "reference/oz2zgemm.h"

#define ALIGN 256

/* ---- the CUDA runtime over host memory ---- */
static int g_capturing, g_capture_queries, g_allocs, g_frees, g_records;
static char *g_block;
static size_t g_block_bytes;

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
    (void)s;
    g_capture_queries++;
    *st = g_capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}
cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}
const char *cudaGetErrorString(cudaError_t e)
{
    (void)e;
    return "fake";
}
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *m)
{
    (void)m; /* the mode stays what it is: nothing captures here */
    return cudaSuccess;
}
cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return cudaSuccess;
}
static void *aligned(size_t n)
{
    void *p = aligned_alloc(ALIGN, (n + ALIGN - 1) / ALIGN * ALIGN);
    assert_non_null(p);
    return p;
}
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int f)
{
    (void)f;
    *p = aligned(n);
    memset(*p, 0, n);
    return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int f)
{
    static uintptr_t next = 0x10;
    (void)f;
    *e = (cudaEvent_t)(next += 0x10);
    return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e)
{
    (void)e;
    return cudaSuccess; /* host work: done when enqueued */
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    (void)e, (void)s;
    g_records++;
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    (void)e;
    return cudaSuccess;
}
cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    (void)props;
    *pool = (cudaMemPool_t)(uintptr_t)0x100;
    return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr a, void *v)
{
    (void)pool, (void)a, (void)v;
    return cudaSuccess;
}
cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
    (void)pool, (void)s;
    assert_null(g_block); /* one call's scratch at a time */
    g_block = aligned(n);
    memset(g_block, 0xff, n); /* NaN doubles: what was not written reads as NaN */
    g_block_bytes = n;
    g_allocs++;
    *p = g_block;
    return cudaSuccess;
}
cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    (void)s;
    assert_ptr_equal(p, g_block);
    free(g_block);
    g_block = NULL;
    g_frees++;
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t st)
{
    (void)st;
    assert_int_equal(k, cudaMemcpyDeviceToHost); /* the record into its ring slot */
    memcpy(d, s, n);
    return cudaSuccess;
}

/* ---- compare's kernels, as host models ---- */
static int g_copies;           /* ozcmp_copy calls that copied */
static int64_t g_copy_rows;    /* the m of the last copy: 2 m for a complex C */
static uint64_t *g_absa, *g_absb;
static ozcmp_bound g_metrics_bound;

/* kernel_copy.cu's ozcmp_copy_kernel, one thread */
int ozcmp_copy(int64_t m, int64_t n, int64_t batch, ozcmp_mat_view src, ozcmp_mat_out dst, double **ptrs_out,
               int mirror_align, int copy, void *stream)
{
    (void)stream;
    if (copy) {
        g_copies++;
        g_copy_rows = m;
    }
    for (int64_t b = 0; b < batch; b++) {
        const double *S = src.array ? src.array[b] : src.base + b * src.stride;
        double *D = dst.array ? dst.array[b] : dst.base + b * dst.stride;
        if (!dst.array && mirror_align)
            D += ((uintptr_t)S % ALIGN) / sizeof(double);
        if (ptrs_out)
            ptrs_out[b] = D;
        for (int64_t j = 0; copy && j < n; j++)
            for (int64_t i = 0; i < m; i++)
                D[i + j * dst.ld] = S[i + j * src.ld];
    }
    return 0;
}

int ozcmp_scales(const oz_gemm_desc *d, uint64_t *absa, uint64_t *absb, void *stream)
{
    (void)stream;
    g_absa = absa;
    g_absb = absb;
    memset(absa, 0, (size_t)(d->batch * d->m) * sizeof *absa);
    memset(absb, 0, (size_t)(d->batch * d->n) * sizeof *absb);
    return 0;
}

/* Item b of an operand or of a view: es doubles an element, strides in elements. */
static const double *item(const double *base, const double *const *array, int64_t stride, int64_t es, int64_t b)
{
    return array ? array[b] : base + es * b * stride;
}

/* The scales and metrics kernels together: the host model on d's operands and the two views. */
int ozcmp_metrics(const oz_gemm_desc *d, ozcmp_mat_view e, ozcmp_mat_view n, const uint64_t *absa,
                  const uint64_t *absb, ozcmp_bound bound, ozcmp_accum *rec, void *stream)
{
    (void)stream;
    assert_ptr_equal(absa, g_absa);
    assert_ptr_equal(absb, g_absb);
    g_metrics_bound = bound;
    const int cplx = d->elem == OZ_ELEM_COMPLEX;
    const int64_t es = cplx ? 2 : 1;
    int *s = calloc((size_t)(d->m + d->n), sizeof *s);
    assert_non_null(s);
    ozcmp_accum_init(rec);
    for (int64_t b = 0; b < d->batch; b++) {
        const double *A = item(d->A, d->Aarray, d->strideA, es, b), *B = item(d->B, d->Barray, d->strideB, es, b);
        const double *E = item(e.base, e.array, e.stride, es, b), *N = item(n.base, n.array, n.stride, es, b);
        if (cplx) {
            ozcmp_zscales_host(d->transa, d->transb, d->m, d->n, d->k, A, d->lda, B, d->ldb, s, s + d->m);
            ozcmp_zmatrix_host(rec, d->m, d->n, E, e.ld, N, n.ld, s, s + d->m, bound, d->alpha, d->beta, d->k);
        } else {
            ozcmp_scales_host(d->transa, d->transb, d->m, d->n, d->k, A, d->lda, B, d->ldb, s, s + d->m);
            ozcmp_matrix_host(rec, d->m, d->n, E, e.ld, N, n.ld, s, s + d->m, bound, *d->alpha, *d->beta, d->k);
        }
    }
    free(s);
    return 0;
}

/* ---- the call's two runs ---- */
static int g_bits = 53, g_runs, g_run_status, g_natives, g_native_status;
static int g_scratch_held_c;   /* at the native call, the scratch held the caller's C (1) or not (0) */
static oz_gemm_desc g_into;
static double *g_into_items[8]; /* g_into.Carray[b] as the native call saw them (the array is freed after) */
static int64_t g_scratch_lo, g_scratch_hi; /* the native call's C items inside the scratch block (1) or not */
static const oz_gemm_desc *g_caller; /* the call as the caller made it */

/* The emulated path: the ozaki2 reference per batch item, into d's C. */
static int run(void *ctx, const oz_gemm_desc *d, void *ws, size_t ws_bytes, void *stream)
{
    (void)ws, (void)ws_bytes, (void)stream;
    const int bits = *(const int *)ctx;
    g_runs++;
    const int64_t es = d->elem == OZ_ELEM_COMPLEX ? 2 : 1;
    for (int64_t b = 0; b < d->batch; b++) {
        const double *A = item(d->A, d->Aarray, d->strideA, es, b), *B = item(d->B, d->Barray, d->strideB, es, b);
        double *C = (double *)item(d->C, (const double *const *)d->Carray, d->strideC, es, b);
        const int rc = es == 2 ? oz2_ref_zgemm((oz_op)d->transa, (oz_op)d->transb, d->m, d->n, d->k,
                                               (oz_cplx){d->alpha[0], d->alpha[1]}, A, d->lda, B, d->ldb,
                                               (oz_cplx){d->beta[0], d->beta[1]}, C, d->ldc, bits)
                               : oz2_ref_dgemm((oz_op)d->transa, (oz_op)d->transb, d->m, d->n, d->k, *d->alpha, A,
                                               d->lda, B, d->ldb, *d->beta, C, d->ldc, bits);
        assert_int_equal(rc, OZ_REF_OK);
    }
    return g_run_status;
}

/* element (r, c) of op(M) */
static void op_at(int es, int op, const double *M, int64_t ld, int64_t r, int64_t c, double *re, double *im)
{
    const double *p = op == 0 ? M + es * (r + c * ld) : M + es * (c + r * ld);
    *re = p[0];
    *im = es == 2 ? (op == 2 ? -p[1] : p[1]) : 0.0;
}

/* A plain GEMM of d's type (complex multiply-adds in order), into d's C: native cuBLAS's stand-in. */
static void plain_gemm(const oz_gemm_desc *d)
{
    const int64_t es = d->elem == OZ_ELEM_COMPLEX ? 2 : 1;
    const double ar = d->alpha[0], ai = es == 2 ? d->alpha[1] : 0.0;
    const double br = d->beta[0], bi = es == 2 ? d->beta[1] : 0.0;
    for (int64_t b = 0; b < d->batch; b++) {
        const double *A = item(d->A, d->Aarray, d->strideA, es, b), *B = item(d->B, d->Barray, d->strideB, es, b);
        double *C = (double *)item(d->C, (const double *const *)d->Carray, d->strideC, es, b);
        for (int64_t j = 0; j < d->n; j++)
            for (int64_t i = 0; i < d->m; i++) {
                double pr = 0.0, pi = 0.0;
                for (int64_t l = 0; l < d->k; l++) {
                    double xr, xi, yr, yi;
                    op_at((int)es, d->transa, A, d->lda, i, l, &xr, &xi);
                    op_at((int)es, d->transb, B, d->ldb, l, j, &yr, &yi);
                    pr += xr * yr - xi * yi;
                    pi += xr * yi + xi * yr;
                }
                double *c = C + es * (i + j * d->ldc);
                const double cr = c[0], ci = es == 2 ? c[1] : 0.0;
                const int beta0 = br == 0.0 && bi == 0.0; /* C not read */
                c[0] = ar * pr - ai * pi + (beta0 ? 0.0 : br * cr - bi * ci);
                if (es == 2)
                    c[1] = ar * pi + ai * pr + (beta0 ? 0.0 : br * ci + bi * cr);
            }
    }
}

/* The caller's C-shaped data (m x n of each item) of two descriptors' C equal, bit for bit. */
static int c_items_equal(const oz_gemm_desc *x, const oz_gemm_desc *y)
{
    const int64_t es = x->elem == OZ_ELEM_COMPLEX ? 2 : 1;
    for (int64_t b = 0; b < x->batch; b++) {
        const double *X = item(x->C, (const double *const *)x->Carray, x->strideC, es, b);
        const double *Y = item(y->C, (const double *const *)y->Carray, y->strideC, es, b);
        for (int64_t j = 0; j < x->n; j++)
            if (memcmp(X + es * j * x->ldc, Y + es * j * y->ldc, (size_t)(es * x->m) * sizeof(double)) != 0)
                return 0;
    }
    return 1;
}

static int native(void *ctx, const oz_gemm_desc *into)
{
    (void)ctx;
    g_natives++;
    g_into = *into;
    g_scratch_lo = g_scratch_hi = 1;
    const int64_t es = into->elem == OZ_ELEM_COMPLEX ? 2 : 1;
    for (int64_t b = 0; b < into->batch; b++) {
        const double *c = item(into->C, (const double *const *)into->Carray, into->strideC, es, b);
        if (into->Carray) {
            assert_true(b < 8);
            g_into_items[b] = into->Carray[b];
        }
        if (g_block) { /* the item's extent within the scratch block */
            g_scratch_lo &= (const char *)c >= g_block;
            g_scratch_hi &= (const char *)(c + es * (into->ldc * (into->n - 1) + into->m)) <= g_block + g_block_bytes;
        }
    }
    g_scratch_held_c = g_caller && c_items_equal(into, g_caller); /* C_old for beta, copied in */
    plain_gemm(into);
    return g_native_status;
}

/* ---- the cases ---- */
typedef struct zcase {
    const char *entry;
    int elem, ta, tb;
    int64_t m, n, k, batch;
    int arrays, on_device;
    double alpha[2], beta[2];
    int64_t c_shift;           /* doubles from an aligned block to C's first element (its mod 256) */
} zcase;

/* A call's operands and C (host memory standing in for the device), laid out per the case. */
typedef struct zdata {
    oz_gemm_desc d;
    double *A, *B, *C, *Cblock, *C0block;
    size_t cdoubles;
    const double **aptr, **bptr;
    double **cptr;
    double scalars[4];
} zdata;

static double urand(void)
{
    return rand() / (RAND_MAX + 1.0) * 2.0 - 1.0;
}

static void make(const zcase *z, zdata *x)
{
    memset(x, 0, sizeof *x);
    const int64_t es = z->elem == OZ_ELEM_COMPLEX ? 2 : 1;
    const int64_t ar = z->ta ? z->k : z->m, ac = z->ta ? z->m : z->k, br = z->tb ? z->n : z->k, bc = z->tb ? z->k : z->n;
    const int64_t lda = ar + 1, ldb = br + 2, ldc = z->m + 3;
    const int64_t sA = lda * ac + 1, sB = ldb * bc, sC = ldc * z->n + 2;
    srand((unsigned)(z->m * 131 + z->n));
    x->A = malloc((size_t)(es * sA * z->batch) * sizeof(double));
    x->B = malloc((size_t)(es * sB * z->batch) * sizeof(double));
    for (int64_t i = 0; i < es * sA * z->batch; i++)
        x->A[i] = urand();
    for (int64_t i = 0; i < es * sB * z->batch; i++)
        x->B[i] = urand();
    x->cdoubles = (size_t)(z->c_shift + es * (sC * z->batch + 4 * z->batch));
    x->Cblock = aligned(x->cdoubles * sizeof(double));
    x->C0block = malloc(x->cdoubles * sizeof(double));
    for (size_t i = 0; i < x->cdoubles; i++)
        x->Cblock[i] = urand();
    memcpy(x->C0block, x->Cblock, x->cdoubles * sizeof(double));
    x->C = x->Cblock + z->c_shift;
    memcpy(x->scalars, z->alpha, sizeof z->alpha);
    memcpy(x->scalars + 2, z->beta, sizeof z->beta);
    oz_gemm_desc d = {.transa = z->ta, .transb = z->tb, .m = z->m, .n = z->n, .k = z->k, .A = x->A, .lda = lda,
                      .strideA = sA, .B = x->B, .ldb = ldb, .strideB = sB, .C = x->C, .ldc = ldc, .strideC = sC,
                      .batch = z->batch, .alpha = x->scalars, .beta = x->scalars + 2,
                      .scalars_on_device = z->on_device, .elem = z->elem};
    if (z->arrays) {
        x->aptr = malloc((size_t)z->batch * sizeof *x->aptr);
        x->bptr = malloc((size_t)z->batch * sizeof *x->bptr);
        x->cptr = malloc((size_t)z->batch * sizeof *x->cptr);
        for (int64_t b = 0; b < z->batch; b++) {
            x->aptr[b] = x->A + es * b * sA;
            x->bptr[b] = x->B + es * b * sB;
            x->cptr[b] = x->C + es * b * sC + 3 * b; /* items at alignments of their own */
        }
        d.Aarray = x->aptr;
        d.Barray = x->bptr;
        d.Carray = x->cptr;
    }
    x->d = d;
}

/* The same call on a copy of the caller's C (its own block, the same layout). */
static oz_gemm_desc on_copy(const zdata *x, double *block, double ***ptrs)
{
    memcpy(block, x->C0block, x->cdoubles * sizeof(double));
    oz_gemm_desc d = x->d;
    d.C = block + (x->C - x->Cblock);
    *ptrs = NULL;
    if (d.Carray) {
        *ptrs = malloc((size_t)d.batch * sizeof **ptrs);
        for (int64_t b = 0; b < d.batch; b++)
            (*ptrs)[b] = block + (x->cptr[b] - x->Cblock);
        d.Carray = *ptrs;
    }
    return d;
}

static void unmake(zdata *x)
{
    free(x->A), free(x->B), free(x->Cblock), free(x->C0block), free(x->aptr), free(x->bptr), free(x->cptr);
}

static const ozcmp_report_row *find_row(const ozcmp_report_row *rows, size_t nrows, const zcase *z)
{
    for (size_t i = 0; i < nrows; i++)
        if (!strcmp(rows[i].entry, z->entry) && rows[i].m == z->m && rows[i].n == z->n && rows[i].k == z->k &&
            rows[i].batch == z->batch && rows[i].transa == z->ta && rows[i].transb == z->tb)
            return &rows[i];
    return NULL;
}

static uint64_t total_skipped(ozcmp_skip_reason why)
{
    ozcmp_report_row *rows, total;
    (void)ozcmp_report_rows(ozcmp_report_global(), &rows, &total);
    free(rows);
    return total.not_compared[why];
}

static ozcmp_path path_of(const zcase *z, char *mode, size_t len)
{
    int w = 0;
    if (z->elem == OZ_ELEM_COMPLEX)
        w = oz2z_make_plan(z->k, g_bits).w;
    else
        w = oz2_make_plan(z->k, g_bits).w;
    snprintf(mode, len, "ozaki2/%d", g_bits);
    return (ozcmp_path){mode, run, &g_bits, ozcmp_bound_ozaki2(w)};
}

/* One case through ozcmp_gemm with the result `res`; `fail` 1: the native call fails, 2: the emulated path does. */
static void one(const zcase *z, ozcmp_result res, int fail)
{
    zdata x;
    make(z, &x);
    char mode[OZCMP_SITE_MODE_MAX];
    const ozcmp_path path = path_of(z, mode, sizeof mode);
    const ozcmp_site site = {z->entry, z->ta, z->tb, z->m, z->n, z->k, z->batch, NULL};
    const int64_t es = z->elem == OZ_ELEM_COMPLEX ? 2 : 1;

    /* the two references: the emulated path and the native call on copies of C */
    double *ref_e = aligned(x.cdoubles * sizeof(double)), *ref_n = aligned(x.cdoubles * sizeof(double));
    double **pe, **pn;
    const oz_gemm_desc de = on_copy(&x, ref_e, &pe), dn = on_copy(&x, ref_n, &pn);
    assert_int_equal(run(&g_bits, &de, NULL, 0, NULL), 0);
    plain_gemm(&dn);

    const uint64_t complex0 = total_skipped(OZCMP_SKIP_COMPLEX);
    g_runs = g_natives = g_copies = g_capture_queries = 0;
    g_copy_rows = 0;
    const int allocs = g_allocs, frees = g_frees, records = g_records;
    g_native_status = fail == 1 ? 7 : 0;
    g_run_status = fail == 2 ? 1 : 0;
    g_caller = &x.d;
    const int st = ozcmp_gemm(&site, &path, &x.d, native, NULL, NULL, 0, NULL, res);
    g_caller = NULL;
    g_native_status = g_run_status = 0;
    assert_int_equal(st, fail == 1 && res == OZCMP_RESULT_NATIVE ? 7 : 0);
    assert_int_equal(g_capture_queries, 1);
    assert_int_equal(g_allocs, allocs + 1);
    assert_int_equal(g_frees, frees + 1);
    assert_null(g_block);

    /* the native call: into scratch shaped like the caller's C */
    assert_int_equal(g_natives, 1);
    assert_int_equal(g_into.elem, z->elem);
    assert_ptr_equal(g_into.A, x.d.A);
    assert_ptr_equal(g_into.Barray, x.d.Barray);
    assert_int_equal(g_into.ldc, x.d.ldc);
    assert_ptr_equal(g_into.alpha, x.d.alpha);
    const int64_t item_doubles = es * (x.d.ldc * (z->n - 1) + z->m);
    const int copy_in = z->on_device || z->beta[0] != 0.0 || z->beta[1] != 0.0;
    const int want_native = fail == 2 || (res == OZCMP_RESULT_NATIVE && fail == 0); /* native's C copied back */
    if (z->arrays) {
        assert_true(g_into.Carray != x.d.Carray);
        for (int64_t b = 0; b < z->batch; b++) {
            assert_true((uintptr_t)g_into_items[b] % ALIGN == (uintptr_t)x.cptr[b] % ALIGN);
            assert_true(g_into_items[b] != x.cptr[b]);
        }
        assert_int_equal(g_copies, copy_in + want_native);
    } else {
        assert_true(g_into.C != x.d.C);
        assert_true((uintptr_t)g_into.C % ALIGN == (uintptr_t)x.d.C % ALIGN);
        assert_int_equal(g_into.strideC, z->batch > 1 ? x.d.strideC : item_doubles / es);
        assert_int_equal(g_copies, copy_in + want_native);
    }
    assert_true(g_scratch_lo && g_scratch_hi); /* every item of the native C inside the scratch */
    if (g_copies)
        assert_int_equal(g_copy_rows, es * z->m); /* both parts of every element */
    assert_int_equal(g_scratch_held_c, copy_in); /* else the scratch's NaN bytes */

    /* what the program gets: the path's result, or native's (copied back: every part) */
    assert_int_equal(g_runs, fail == 1 && res == OZCMP_RESULT_NATIVE ? 0 : 1);
    if (fail == 1 && res == OZCMP_RESULT_NATIVE) {
        /* native failed and the program asked for it: its C is what the failing native call left in scratch */
    } else {
        assert_memory_equal(x.Cblock, want_native ? ref_n : ref_e, x.cdoubles * sizeof(double));
    }
    assert_true(c_items_equal(want_native ? &dn : &de, &x.d) || (fail == 1 && res == OZCMP_RESULT_NATIVE));

    /* the report: the site's row, its numbers the host model's on the two references */
    ozcmp_flush();
    ozcmp_report_row *rows, total;
    const size_t nrows = ozcmp_report_rows(ozcmp_report_global(), &rows, &total);
    const ozcmp_report_row *row = find_row(rows, nrows, z);
    assert_non_null(row);
    assert_string_equal(row->mode, "ozaki2/53");
    if (fail) {
        assert_int_equal(row->calls, 0);
        assert_int_equal(row->not_compared[fail == 1 ? OZCMP_SKIP_NATIVE_FAILED : OZCMP_SKIP_CUDA_ERROR], 1);
        assert_int_equal(g_records, records);
    } else {
        assert_int_equal(g_records, records + 1);
        assert_int_equal(g_metrics_bound.kind, OZCMP_BOUND_OZAKI2);
        assert_int_equal(g_metrics_bound.w, path.bound.w);
        ozcmp_accum acc;
        ozcmp_accum_init(&acc);
        int *s = calloc((size_t)(z->m + z->n), sizeof *s);
        assert_non_null(s);
        for (int64_t b = 0; b < z->batch; b++) {
            const double *A = item(x.d.A, x.d.Aarray, x.d.strideA, es, b);
            const double *B = item(x.d.B, x.d.Barray, x.d.strideB, es, b);
            const double *E = item(de.C, (const double *const *)de.Carray, de.strideC, es, b);
            const double *N = item(dn.C, (const double *const *)dn.Carray, dn.strideC, es, b);
            if (es == 2) {
                ozcmp_zscales_host(z->ta, z->tb, z->m, z->n, z->k, A, x.d.lda, B, x.d.ldb, s, s + z->m);
                ozcmp_zmatrix_host(&acc, z->m, z->n, E, x.d.ldc, N, x.d.ldc, s, s + z->m, path.bound, z->alpha,
                                   z->beta, z->k);
            } else {
                ozcmp_scales_host(z->ta, z->tb, z->m, z->n, z->k, A, x.d.lda, B, x.d.ldb, s, s + z->m);
                ozcmp_matrix_host(&acc, z->m, z->n, E, x.d.ldc, N, x.d.ldc, s, s + z->m, path.bound, z->alpha[0],
                                  z->beta[0], z->k);
            }
        }
        free(s);
        const ozcmp_call_metrics want = ozcmp_finish(&acc, (uint64_t)(z->m * z->n * z->batch));
        assert_int_equal(row->calls, 1);
        assert_int_equal(row->elements, z->m * z->n * z->batch);
        assert_true(row->max_abs_worst == want.max_abs);
        assert_true(row->max_rel_worst == want.max_rel);
        assert_true(row->normwise_worst == want.normwise);
        assert_true(want.max_abs > 0.0 && want.max_abs < 1e-13); /* 53 bits vs double: close, not equal */
        assert_int_equal(row->beyond_bound_total, 0);
        assert_int_equal(row->nonfinite_total, 0); /* a missing copy-in would read NaN scratch */
    }
    free(rows);
    assert_int_equal(total_skipped(OZCMP_SKIP_COMPLEX), complex0);
    free(ref_e), free(ref_n), free(pe), free(pn);
    unmake(&x);
}

#define ZC(m, n, k, batch) "cublasZgemm_v2", OZ_ELEM_COMPLEX, 0, 0, m, n, k, batch

static void t_strided(void **state)
{
    (void)state;
    /* beta 0 in host mode: no copy-in; C at 8 bytes past a 256-byte boundary (an odd double) */
    zcase z = {ZC(17, 9, 12, 1), 0, 0, {1.0, -0.5}, {0.0, 0.0}, 1};
    z.ta = 2, z.tb = 0;
    one(&z, OZCMP_RESULT_EMULATED, 0);
    /* a strided batch, beta non-zero (copied in), op T and C */
    zcase zs = {ZC(13, 11, 20, 3), 0, 0, {0.25, 1.0}, {0.0, -1.0}, 6};
    zs.entry = "cublasZgemmStridedBatched", zs.ta = 1, zs.tb = 2;
    one(&zs, OZCMP_RESULT_EMULATED, 0);
    /* device scalars: beta read on the device, so always copied in */
    zcase zd = {ZC(12, 10, 9, 2), 0, 1, {-1.0, 0.0}, {0.0, 0.0}, 0};
    zd.entry = "cublasZgemmStridedBatched";
    one(&zd, OZCMP_RESULT_EMULATED, 0);
}

static void t_arrays(void **state)
{
    (void)state;
    zcase z = {ZC(15, 7, 11, 3), 1, 0, {0.5, 0.5}, {2.0, 0.0}, 4};
    z.entry = "cublasZgemmBatched", z.ta = 1, z.tb = 1;
    one(&z, OZCMP_RESULT_EMULATED, 0);
    zcase z0 = {ZC(14, 7, 11, 2), 1, 0, {1.0, 0.0}, {0.0, 0.0}, 0}; /* beta 0: pointers built, nothing copied */
    z0.entry = "cublasZgemmBatched";
    one(&z0, OZCMP_RESULT_EMULATED, 0);
}

/* OZCRT_COMPARE_RESULT=native: compared all the same, and the program gets native's C, both parts. */
static void t_result_native(void **state)
{
    (void)state;
    zcase z = {ZC(19, 5, 8, 1), 0, 0, {1.0, 1.0}, {0.5, 0.0}, 2};
    one(&z, OZCMP_RESULT_NATIVE, 0);
    zcase za = {ZC(18, 6, 8, 2), 1, 0, {1.0, 1.0}, {0.0, 0.5}, 0};
    za.entry = "cublasZgemmBatched", za.ta = 2, za.tb = 2;
    one(&za, OZCMP_RESULT_NATIVE, 0);
}

/* A failing native call: not compared (native failed); the program gets the path's C or native's status.
 * A failing path: not compared (CUDA error), the program gets native's C. */
static void t_failures(void **state)
{
    (void)state;
    zcase z = {ZC(21, 4, 6, 1), 0, 0, {1.0, 0.0}, {1.0, 0.0}, 0};
    one(&z, OZCMP_RESULT_EMULATED, 1);
    z.m = 22;
    one(&z, OZCMP_RESULT_NATIVE, 1);
    z.m = 23;
    one(&z, OZCMP_RESULT_EMULATED, 2);
}

/* Graph capture: not compared (capture), run as asked; never counted as complex. */
static void t_capture(void **state)
{
    (void)state;
    zdata x;
    const zcase z = {ZC(24, 4, 6, 1), 0, 0, {1.0, 0.0}, {0.0, 0.0}, 0};
    make(&z, &x);
    char mode[OZCMP_SITE_MODE_MAX];
    const ozcmp_path path = path_of(&z, mode, sizeof mode);
    const ozcmp_site site = {z.entry, 0, 0, z.m, z.n, z.k, 1, NULL};
    const uint64_t capture0 = total_skipped(OZCMP_SKIP_CAPTURE), complex0 = total_skipped(OZCMP_SKIP_COMPLEX);
    const int allocs = g_allocs;
    g_capturing = 1;
    g_runs = g_natives = 0;
    assert_int_equal(ozcmp_gemm(&site, &path, &x.d, native, NULL, NULL, 0, NULL, OZCMP_RESULT_EMULATED), 0);
    assert_int_equal(g_runs, 1);
    assert_int_equal(g_natives, 0);
    assert_int_equal(ozcmp_gemm(&site, &path, &x.d, native, NULL, NULL, 0, NULL, OZCMP_RESULT_NATIVE), 0);
    assert_int_equal(g_runs, 1);
    assert_int_equal(g_natives, 1);
    assert_ptr_equal(g_into.C, x.d.C); /* into the caller's own C */
    g_capturing = 0;
    assert_int_equal(g_allocs, allocs);
    assert_int_equal(total_skipped(OZCMP_SKIP_CAPTURE), capture0 + 2);
    assert_int_equal(total_skipped(OZCMP_SKIP_COMPLEX), complex0);
    unmake(&x);
}

/* The control: a real call through the same fakes is compared as before (8 bytes an element). */
static void t_real_control(void **state)
{
    (void)state;
    zcase z = {"cublasDgemmStridedBatched", OZ_ELEM_REAL, 1, 0, 16, 9, 30, 2, 0, 0, {0.75, 0.0}, {0.5, 0.0}, 3};
    one(&z, OZCMP_RESULT_EMULATED, 0);
    zcase za = {"cublasDgemmBatched", OZ_ELEM_REAL, 0, 1, 15, 8, 30, 2, 1, 0, {1.0, 0.0}, {0.0, 0.0}, 0};
    one(&za, OZCMP_RESULT_NATIVE, 0);
}

/* The terminal table names the complex rows by entry point and says nothing of `complex`. */
static void t_reported(void **state)
{
    (void)state;
    char text[16384];
    FILE *f = tmpfile();
    assert_non_null(f);
    ozcmp_report_render(ozcmp_report_global(), f);
    rewind(f);
    const size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    if (!strstr(text, "cublasZgemm_v2 ozaki2/53 CN 17x9x12") ||
        !strstr(text, "cublasZgemmStridedBatched ozaki2/53 TC 13x11x20*3") ||
        !strstr(text, "cublasZgemmBatched ozaki2/53 TT 15x7x11*3"))
        fail_msg("complex rows missing from the table:\n%s", text);
    char *skipped = strstr(text, "not compared: ");
    if (skipped && strchr(skipped, '\n'))
        *strchr(skipped, '\n') = '\0'; /* that line alone */
    if (!skipped || strstr(skipped, "complex") || !strstr(skipped, "graph capture 2"))
        fail_msg("the table's not-compared line is missing or names the complex reason:\n%s", text);
    assert_int_equal(total_skipped(OZCMP_SKIP_COMPLEX), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_strided),  cmocka_unit_test(t_arrays),       cmocka_unit_test(t_result_native),
        cmocka_unit_test(t_failures), cmocka_unit_test(t_capture),      cmocka_unit_test(t_real_control),
        cmocka_unit_test(t_reported),
    };
    return cmocka_run_group_tests_name("shadow_complex", tests, NULL, NULL);
}
