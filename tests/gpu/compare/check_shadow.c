/* tests/gpu/compare/check_shadow.c: ozcmp_gemm end to end in both modes with real cuBLAS as the native path, real and complex calls, and the env parsers.
 *
 * usage: check_shadow [native]   ("native": runs with OZCRT_COMPARE_RESULT=native)
 * For each call shape, once with the Phase 22 path and once with the ozaki2
 * path at 53 bits: C after ozcmp_gemm must equal a plain oz_gemm_run /
 * oz2_gemm_run (emulated) or a plain cuBLAS call (native) bit for bit, the
 * report has a row of its own per mode ("phase22", "ozaki2/53") whose numbers
 * equal the host model's on (emulated, native) copies under that mode's
 * bound, with 0 beyond the bound. A call under graph capture is counted
 * "not compared" and replays correctly. Complex calls (ZGEMM, ozaki2 at 53
 * bits only: Phase 22 has no complex path) the same way, against cublasZgemm
 * and its batched forms, on the complex modulus. */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/metrics.h"
#include "compare/report.h"
#include "compare/compare.h"
#include "kernels/oz2_gemm.h"

static int g_failures;

#define CK(call)                                                                              \
    do {                                                                                      \
        int e_ = (int)(call);                                                                 \
        if (e_ != 0) {                                                                        \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, e_);          \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

static void expect(int ok, const char *what)
{
    if (!ok)
        g_failures++;
    printf("  %s %s\n", ok ? "ok  " : "FAIL", what);
}

typedef struct native_ctx {
    cublasHandle_t h;
} native_ctx;

/* The native path for ozcmp_gemm: the real cuBLAS call writing C per `into`
 * (complex descriptors: ZGEMM, its scalars and matrices cuDoubleComplex). */
static int native_gemm(void *ctx, const oz_gemm_desc *d)
{
    cublasHandle_t h = ((native_ctx *)ctx)->h;
    cublasOperation_t ta = (cublasOperation_t)d->transa, tb = (cublasOperation_t)d->transb;
    if (d->elem == OZ_ELEM_COMPLEX) {
        typedef cuDoubleComplex Z;
        const Z *al = (const Z *)d->alpha, *be = (const Z *)d->beta;
        if (d->Aarray)
            return (int)cublasZgemmBatched(h, ta, tb, (int)d->m, (int)d->n, (int)d->k, al,
                                           (const Z *const *)d->Aarray, (int)d->lda, (const Z *const *)d->Barray,
                                           (int)d->ldb, be, (Z *const *)d->Carray, (int)d->ldc, (int)d->batch);
        if (d->batch > 1)
            return (int)cublasZgemmStridedBatched(h, ta, tb, (int)d->m, (int)d->n, (int)d->k, al, (const Z *)d->A,
                                                  (int)d->lda, d->strideA, (const Z *)d->B, (int)d->ldb, d->strideB,
                                                  be, (Z *)d->C, (int)d->ldc, d->strideC, (int)d->batch);
        return (int)cublasZgemm(h, ta, tb, (int)d->m, (int)d->n, (int)d->k, al, (const Z *)d->A, (int)d->lda,
                                (const Z *)d->B, (int)d->ldb, be, (Z *)d->C, (int)d->ldc);
    }
    if (d->Aarray)
        return (int)cublasDgemmBatched(h, ta, tb, (int)d->m, (int)d->n, (int)d->k, d->alpha, d->Aarray, (int)d->lda,
                                       d->Barray, (int)d->ldb, d->beta, d->Carray, (int)d->ldc, (int)d->batch);
    if (d->batch > 1)
        return (int)cublasDgemmStridedBatched(h, ta, tb, (int)d->m, (int)d->n, (int)d->k, d->alpha, d->A, (int)d->lda,
                                              d->strideA, d->B, (int)d->ldb, d->strideB, d->beta, d->C, (int)d->ldc,
                                              d->strideC, (int)d->batch);
    return (int)cublasDgemm(h, ta, tb, (int)d->m, (int)d->n, (int)d->k, d->alpha, d->A, (int)d->lda, d->B, (int)d->ldb,
                            d->beta, d->C, (int)d->ldc);
}

/* The emulated paths (compare.h's ozcmp_path), as interpose/route.c makes them. */
static int run_phase22(void *ctx, const oz_gemm_desc *d, void *ws, size_t ws_bytes, void *stream)
{
    (void)ctx;
    return oz_gemm_run(d, ws, ws_bytes, stream);
}

static int run_ozaki2(void *ctx, const oz_gemm_desc *d, void *ws, size_t ws_bytes, void *stream)
{
    return oz2_gemm_run(d, *(const int *)ctx, ws, ws_bytes, stream);
}

static int g_bits = 53; /* the ozaki2 cases' OZCRT_BITS */

/* The path of a mode for inner dimension k: ozaki2 when `ozaki2`, else Phase 22
 * (cplx: the complex plan's w, oz2z_gemm_moduli, as interpose/route.c takes it). */
static ozcmp_path make_path(int ozaki2, int cplx, int64_t k, char *name, size_t len)
{
    if (!ozaki2) {
        snprintf(name, len, "phase22");
        return (ozcmp_path){name, run_phase22, NULL, ozcmp_bound_phase22()};
    }
    int w = 0;
    if ((cplx ? oz2z_gemm_moduli(k, g_bits, &w, NULL) : oz2_gemm_moduli(k, g_bits, &w)) == 0) {
        fprintf(stderr, "ozaki2 bits=%d k=%lld: no plan\n", g_bits, (long long)k);
        exit(2);
    }
    snprintf(name, len, "ozaki2/%d", g_bits);
    return (ozcmp_path){name, run_ozaki2, &g_bits, ozcmp_bound_ozaki2(w)};
}

static double urand(void)
{
    return rand() / (RAND_MAX + 1.0) * 2.0 - 1.0;
}

static double *dev_random(size_t count, double **host)
{
    double *h = malloc(count * sizeof *h), *d;
    for (size_t i = 0; i < count; i++)
        h[i] = urand();
    CK(cudaMalloc((void **)&d, count * sizeof *d));
    CK(cudaMemcpy(d, h, count * sizeof *d, cudaMemcpyHostToDevice));
    *host = h;
    return d;
}

/* The report row of (entry, mode, m, n, k, batch), NULL if none; rows from ozcmp_report_rows. */
static const ozcmp_report_row *find_row(const ozcmp_report_row *rows, size_t nrows, const char *entry,
                                        const char *mode, int64_t m, int64_t n, int64_t k, int64_t batch)
{
    for (size_t i = 0; i < nrows; i++)
        if (!strcmp(rows[i].entry, entry) && !strcmp(rows[i].mode, mode) && rows[i].m == m && rows[i].n == n &&
            rows[i].k == k && rows[i].batch == batch)
            return &rows[i];
    return NULL;
}

/* One call shape in one mode; returns after checking C's bits and the report row. cplx: a complex
 * call (the imaginary parts of alpha and beta alpha_im, beta_im; ops 2 = C). */
static void run_case(cublasHandle_t h, cudaStream_t s, const char *entry, int ta, int tb, int64_t m, int64_t n,
                     int64_t k, int64_t batch, int arrays, int on_device, double alpha, double beta, int want_native,
                     int ozaki2, int cplx, double alpha_im, double beta_im)
{
    char mode[OZCMP_SITE_MODE_MAX];
    ozcmp_path path = make_path(ozaki2, cplx, k, mode, sizeof mode);
    const int64_t es = cplx ? 2 : 1;
    printf("case %s %s %c%c %lldx%lldx%lld*%lld beta=%g%s\n", entry, mode, "NTC"[ta], "NTC"[tb], (long long)m,
           (long long)n, (long long)k, (long long)batch, beta, on_device ? " device-scalars" : "");
    srand(1234); /* the same data in both modes */
    int64_t lda = (ta ? k : m) + 1, ldb = (tb ? n : k) + 2, ldc = m + 3;
    int64_t sA = lda * (ta ? m : k), sB = ldb * (tb ? k : n), sC = ldc * n; /* in elements */
    double *hA, *hB, *hC;
    double *A = dev_random((size_t)(es * sA * batch), &hA), *B = dev_random((size_t)(es * sB * batch), &hB);
    double *C0 = dev_random((size_t)(es * sC * batch), &hC), *C, *Cn, *Ce;
    size_t cbytes = (size_t)(es * sC * batch) * sizeof(double);
    CK(cudaMalloc((void **)&C, cbytes));
    CK(cudaMalloc((void **)&Cn, cbytes));
    CK(cudaMalloc((void **)&Ce, cbytes));
    double sc[4] = {alpha, alpha_im, beta, beta_im}, *dsc; /* (re, im) pairs; real calls read [0] and [2] */
    CK(cudaMalloc((void **)&dsc, sizeof sc));
    CK(cudaMemcpy(dsc, sc, sizeof sc, cudaMemcpyHostToDevice));
    CK(cublasSetPointerMode(h, on_device ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
    double **ptrs;
    CK(cudaMalloc((void **)&ptrs, (size_t)batch * 6 * sizeof *ptrs));

    oz_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.transa = ta; d.transb = tb; d.m = m; d.n = n; d.k = k; d.batch = batch;
    d.A = A; d.lda = lda; d.strideA = sA;
    d.B = B; d.ldb = ldb; d.strideB = sB;
    d.ldc = ldc; d.strideC = sC;
    d.alpha = on_device ? dsc : &sc[0];
    d.beta = on_device ? dsc + 2 : &sc[2];
    d.scalars_on_device = on_device;
    d.elem = cplx ? OZ_ELEM_COMPLEX : OZ_ELEM_REAL;
    double **hp = malloc((size_t)batch * 6 * sizeof *hp);
    for (int64_t b = 0; b < batch; b++) {
        hp[b] = A + es * b * sA;
        hp[batch + b] = B + es * b * sB;
        hp[2 * batch + b] = C + es * b * sC;
        hp[3 * batch + b] = Cn + es * b * sC;
        hp[4 * batch + b] = Ce + es * b * sC;
    }
    CK(cudaMemcpy(ptrs, hp, (size_t)batch * 6 * sizeof *ptrs, cudaMemcpyHostToDevice));
    native_ctx ctx = {h};
    size_t wsb = 0;
    void *ws = NULL;

    /* native reference into Cn, emulated reference into Ce, shadow call into C */
    double *targets[3] = {Cn, Ce, C};
    for (int t = 0; t < 3; t++) {
        CK(cudaMemcpy(targets[t], C0, cbytes, cudaMemcpyDeviceToDevice));
        oz_gemm_desc dt = d;
        dt.C = targets[t];
        if (arrays) {
            dt.Aarray = (const double *const *)ptrs;
            dt.Barray = (const double *const *)(ptrs + batch);
            dt.Carray = (double *const *)(ptrs + (t == 0 ? 3 : t == 1 ? 4 : 2) * batch);
        }
        if (!ws) {
            wsb = ozaki2 ? oz2_gemm_workspace_full(&dt, g_bits) : oz_gemm_workspace_full(&dt);
            CK(cudaMalloc(&ws, wsb ? wsb : 1));
        }
        if (t == 0)
            CK(native_gemm(&ctx, &dt));
        else if (t == 1)
            CK(path.run(path.ctx, &dt, ws, wsb, s)); /* the plain emulated call of the mode */
        else {
            ozcmp_site site = {entry, ta, tb, m, n, k, batch, NULL};
            CK(ozcmp_gemm(&site, &path, &dt, native_gemm, &ctx, ws, wsb, s,
                          want_native ? OZCMP_RESULT_NATIVE : OZCMP_RESULT_EMULATED));
        }
    }
    CK(cudaStreamSynchronize(s));
    double *hn = malloc(cbytes), *he = malloc(cbytes), *hc = malloc(cbytes);
    CK(cudaMemcpy(hn, Cn, cbytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(he, Ce, cbytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hc, C, cbytes, cudaMemcpyDeviceToHost));
    expect(memcmp(hc, want_native ? hn : he, cbytes) == 0,
           want_native ? "C == plain cuBLAS bit for bit (OZCRT_COMPARE_RESULT=native)"
                       : ozaki2 ? "C == plain oz2_gemm_run bit for bit" : "C == plain oz_gemm_run bit for bit");

    /* the host model on the two references */
    ozcmp_accum acc;
    ozcmp_accum_init(&acc);
    int *st = malloc((size_t)(m + n) * sizeof *st);
    for (int64_t b = 0; b < batch; b++) {
        const double *ha = hA + es * b * sA, *hb = hB + es * b * sB, *hei = he + es * b * sC, *hni = hn + es * b * sC;
        if (cplx) {
            ozcmp_zscales_host(ta, tb, m, n, k, ha, lda, hb, ldb, st, st + m);
            ozcmp_zmatrix_host(&acc, m, n, hei, ldc, hni, ldc, st, st + m, path.bound, sc, sc + 2, k);
        } else {
            ozcmp_scales_host(ta, tb, m, n, k, ha, lda, hb, ldb, st, st + m);
            ozcmp_matrix_host(&acc, m, n, hei, ldc, hni, ldc, st, st + m, path.bound, alpha, beta, k);
        }
    }
    ozcmp_call_metrics want = ozcmp_finish(&acc, (uint64_t)(m * n * batch));
    ozcmp_flush();
    ozcmp_report_row *rows, total;
    size_t nrows = ozcmp_report_rows(ozcmp_report_global(), &rows, &total);
    const ozcmp_report_row *row = find_row(rows, nrows, entry, mode, m, n, k, batch);
    expect(row && row->calls == 1, ozaki2 ? "one report row named ozaki2/53 with one call"
                                          : "one report row named phase22 with one call");
    if (row) {
        printf("  report: max abs %.6e (host %.6e) normwise %.6e (host %.6e) beyond %llu (host %llu)\n",
               row->max_abs_worst, want.max_abs, row->normwise_worst, want.normwise,
               (unsigned long long)row->beyond_bound_total, (unsigned long long)want.beyond_bound);
        expect(row->max_abs_worst == want.max_abs, "max abs equals the host model's (native bits reproduced)");
        expect(row->max_rel_worst == want.max_rel, "max rel equals the host model's");
        expect(fabs(row->normwise_worst - want.normwise) <= 1e-12 * want.normwise, "normwise close");
        expect(row->beyond_bound_total == want.beyond_bound && want.beyond_bound == 0, "nothing beyond the bound");
        expect(row->nonfinite_total == 0, "no NaN/Inf mismatch");
        if (ozaki2) /* 53 bits: native DGEMM's own accuracy; equal results are possible */
            expect(want.max_abs < 1e-12 && want.normwise < 1e-13, "ozaki2/53 within 1e-12 abs, 1e-13 normwise of native");
        else
            expect(want.max_abs > 0.0 && want.max_abs < 1e-6, "emulated differs from native, slightly");
    }
    free(rows);

    /* graph capture: not compared, counted, and the replay computes the call */
    cudaGraph_t g;
    cudaGraphExec_t ge;
    oz_gemm_desc dt = d;
    dt.C = C;
    if (arrays) {
        dt.Aarray = (const double *const *)ptrs;
        dt.Barray = (const double *const *)(ptrs + batch);
        dt.Carray = (double *const *)(ptrs + 2 * batch);
    }
    CK(cudaMemcpy(C, C0, cbytes, cudaMemcpyDeviceToDevice));
    ozcmp_site site = {entry, ta, tb, m, n, k, batch, NULL};
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    int st_cap = ozcmp_gemm(&site, &path, &dt, native_gemm, &ctx, ws, wsb, s,
                            want_native ? OZCMP_RESULT_NATIVE : OZCMP_RESULT_EMULATED);
    CK(cudaStreamEndCapture(s, &g));
    CK(st_cap);
    CK(cudaGraphInstantiate(&ge, g, 0));
    CK(cudaGraphLaunch(ge, s));
    CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(hc, C, cbytes, cudaMemcpyDeviceToHost));
    expect(memcmp(hc, want_native ? hn : he, cbytes) == 0, "captured call replays to the same bits");
    nrows = ozcmp_report_rows(ozcmp_report_global(), &rows, &total);
    row = find_row(rows, nrows, entry, mode, m, n, k, batch);
    expect(row && row->calls == 1 && row->not_compared[OZCMP_SKIP_CAPTURE] == 1, "capture counted as not compared");
    free(rows);
    CK(cudaGraphExecDestroy(ge));
    CK(cudaGraphDestroy(g));

    free(hA); free(hB); free(hC); free(hn); free(he); free(hc); free(st); free(hp);
    CK(cudaFree(A)); CK(cudaFree(B)); CK(cudaFree(C0)); CK(cudaFree(C)); CK(cudaFree(Cn)); CK(cudaFree(Ce));
    CK(cudaFree(dsc)); CK(cudaFree(ptrs)); CK(cudaFree(ws));
}

static void check_env_parsers(void)
{
    printf("case env parsers\n");
    int v = 5;
    ozcmp_result r;
    const char *f;
    expect(ozcmp_parse_compare(NULL, &v) == 0 && v == 0, "OZCRT_COMPARE unset -> 0");
    expect(ozcmp_parse_compare("1", &v) == 1 && v == 1, "OZCRT_COMPARE=1");
    expect(ozcmp_parse_compare("yes", &v) == 1 && v == 1, "OZCRT_COMPARE=yes (the boolean words)");
    expect(ozcmp_parse_compare(" Off", &v) == 1 && v == 0, "OZCRT_COMPARE=Off");
    expect(ozcmp_parse_compare("maybe", &v) == -1 && v == 0, "OZCRT_COMPARE=maybe warns, 0");
    expect(ozcmp_parse_result("NATIVE", &r) == 1 && r == OZCMP_RESULT_NATIVE, "RESULT=NATIVE (any case)");
    expect(ozcmp_parse_result("native", &r) == 1 && r == OZCMP_RESULT_NATIVE, "RESULT=native");
    expect(ozcmp_parse_result("", &r) == 0 && r == OZCMP_RESULT_EMULATED, "RESULT empty -> emulated");
    expect(ozcmp_parse_result("both", &r) == -1 && r == OZCMP_RESULT_EMULATED, "RESULT=both warns");
    expect(ozcmp_parse_report_file("r.csv", &f) == 1 && !strcmp(f, "r.csv"), "REPORT_FILE=r.csv");
    expect(ozcmp_parse_report_file("r.txt", &f) == -1 && !strcmp(f, "r.txt"), "REPORT_FILE=r.txt warns, JSON");
    char want[64];
    snprintf(want, sizeof want, "r.%ld.%%.csv", (long)getpid());
    expect(ozcmp_parse_report_file("r.%p.%%.csv", &f) == 1 && !strcmp(f, want), "REPORT_FILE=r.%p.%%.csv expanded");
}

int main(int argc, char **argv)
{
    int want_native = argc > 1 && !strcmp(argv[1], "native");
    setenv("OZCRT_COMPARE", "1", 1);
    setenv("OZCRT_COMPARE_RESULT", want_native ? "native" : "emulated", 1);
    check_env_parsers();
    cublasHandle_t h;
    cudaStream_t s;
    CK(cublasCreate(&h));
    CK(cudaStreamCreate(&s));
    CK(cublasSetStream(h, s));
    for (int ozaki2 = 0; ozaki2 < 2; ozaki2++) { /* the same calls in both modes: rows of their own */
        run_case(h, s, "cublasDgemm_v2", 0, 0, 257, 193, 300, 1, 0, 0, 1.0, 0.0, want_native, ozaki2, 0, 0, 0);
        run_case(h, s, "cublasDgemm_v2", 1, 0, 130, 64, 4100, 1, 0, 0, 1.0, 0.5, want_native, ozaki2, 0, 0, 0);
        run_case(h, s, "cublasDgemmStridedBatched", 0, 1, 64, 96, 128, 5, 0, 1, -2.0, 1.0, want_native, ozaki2, 0, 0,
                 0);
        run_case(h, s, "cublasDgemmBatched", 1, 1, 50, 70, 90, 4, 1, 0, 0.75, 0.25, want_native, ozaki2, 0, 0, 0);
        run_case(h, s, "cublasDgemmBatched", 0, 0, 33, 17, 65, 3, 1, 1, 1.0, 0.0, want_native, ozaki2, 0, 0, 0);
    }
    /* complex calls: the ozaki2 mode only (Phase 22 has no complex path) */
    run_case(h, s, "cublasZgemm_v2", 0, 0, 201, 150, 300, 1, 0, 0, 1.0, 0.0, want_native, 1, 1, -0.5, 0.0);
    run_case(h, s, "cublasZgemm_v2", 2, 0, 96, 80, 2100, 1, 0, 0, 0.5, 0.5, want_native, 1, 1, 0.25, -1.0);
    run_case(h, s, "cublasZgemmStridedBatched", 1, 2, 64, 72, 100, 3, 0, 1, -1.0, 0.0, want_native, 1, 1, 1.0, 0.5);
    run_case(h, s, "cublasZgemmBatched", 2, 1, 40, 50, 70, 4, 1, 0, 0.0, 1.0, want_native, 1, 1, 1.0, 0.0);
    ozcmp_report_at_exit(stdout);
    CK(cublasDestroy(h));
    printf("check_shadow%s: %d failure%s\n", want_native ? " native" : "", g_failures, g_failures == 1 ? "" : "s");
    return g_failures ? 1 : 0;
}
