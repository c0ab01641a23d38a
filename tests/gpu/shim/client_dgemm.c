/* tests/gpu/shim/client_dgemm.c: an unmodified cuBLAS program, run natively and under libozcrt.so.
 *
 * It knows nothing of the shim: it calls the sixteen DGEMM entry points of the
 * real cuBLAS, the 64-bit-integer and the grouped ones included (host and device pointer
 * mode, a call captured into a CUDA graph and replayed, 4 threads with
 * their own handles and streams) and checks every element against a naive CPU double loop within the Phase 22
 * bound (reference/bound.h) plus the CPU loop's own rounding. Inf/NaN inputs
 * must give the non-finite result DGEMM gives. Prints PASS/FAIL per case;
 * exit status 0 only if all pass. Native cuBLAS passes trivially (its error
 * is far inside the bound); under the shim run.sh also checks the stats show
 * the calls were emulated. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "reference/bound.h"
#include "tests/gpu/cublas_util.h"


typedef enum {
    EP_DGEMM, EP_DGEMM64, EP_GEMMEX, EP_STRIDED, EP_STRIDED_EX, EP_BATCHED, EP_BATCHED_EX,
    EP_GEMMEX64, EP_STRIDED64, EP_STRIDED_EX64, EP_BATCHED64, EP_BATCHED_EX64,
    EP_GROUPED, EP_GROUPED64, EP_GROUPED_EX, EP_GROUPED_EX64 /* run_grouped only */
} entry;
static const char *const entry_names[] = {"cublasDgemm_v2", "cublasDgemm_v2_64", "cublasGemmEx",
                                          "cublasDgemmStridedBatched", "cublasGemmStridedBatchedEx",
                                          "cublasDgemmBatched", "cublasGemmBatchedEx", "cublasGemmEx_64",
                                          "cublasDgemmStridedBatched_64", "cublasGemmStridedBatchedEx_64",
                                          "cublasDgemmBatched_64", "cublasGemmBatchedEx_64",
                                          "cublasDgemmGroupedBatched", "cublasDgemmGroupedBatched_64",
                                          "cublasGemmGroupedBatchedEx", "cublasGemmGroupedBatchedEx_64"};

typedef struct gemm_case {
    entry ep;
    cublasOperation_t ta, tb;
    int m, n, k, pad, batch;
    double alpha, beta;
    int device_scalars;
    int specials; /* NaN in a row of A, Inf in a column of B */
} gemm_case;

/* Host problem: column-major, batch items one after the other. */
typedef struct problem {
    gemm_case c;
    int rows_a, cols_a, rows_b, cols_b, lda, ldb, ldc;
    size_t sa, sb, sc; /* elements per batch item */
    double *A, *B, *C0;
} problem;

static void make_problem(problem *p, const gemm_case *c)
{
    p->c = *c;
    p->rows_a = c->ta == CUBLAS_OP_N ? c->m : c->k;
    p->cols_a = c->ta == CUBLAS_OP_N ? c->k : c->m;
    p->rows_b = c->tb == CUBLAS_OP_N ? c->k : c->n;
    p->cols_b = c->tb == CUBLAS_OP_N ? c->n : c->k;
    p->lda = p->rows_a + c->pad;
    p->ldb = p->rows_b + c->pad;
    p->ldc = c->m + c->pad;
    p->sa = (size_t)p->lda * p->cols_a;
    p->sb = (size_t)p->ldb * p->cols_b;
    p->sc = (size_t)p->ldc * c->n;
    p->A = malloc(p->sa * c->batch * sizeof(double));
    p->B = malloc(p->sb * c->batch * sizeof(double));
    p->C0 = malloc(p->sc * c->batch * sizeof(double));
    if (!p->A || !p->B || !p->C0) {
        fprintf(stderr, "out of host memory\n");
        exit(2);
    }
    for (size_t i = 0; i < p->sa * c->batch; i++)
        p->A[i] = rng_dist((int)(i / p->sa) % DIST_COUNT);
    for (size_t i = 0; i < p->sb * c->batch; i++)
        p->B[i] = rng_sym();
    for (size_t i = 0; i < p->sc * c->batch; i++)
        p->C0[i] = rng_sym();
    /* rows of very different magnitude: the per-row scaling must cope */
    for (int b = 0; b < c->batch; b++)
        for (int j = 0; j < p->cols_a; j++)
            for (int i = 0; i < p->rows_a; i++)
                if ((c->ta == CUBLAS_OP_N ? i : j) % 7 == 3)
                    p->A[b * p->sa + (size_t)j * p->lda + i] *= 0x1p40;
    if (c->specials) { /* op(A) row 1 gets a NaN, op(B) column 2 an Inf */
        size_t ia = c->ta == CUBLAS_OP_N ? (size_t)5 * p->lda + 1 : (size_t)1 * p->lda + 5;
        size_t ib = c->tb == CUBLAS_OP_N ? (size_t)2 * p->ldb + 3 : (size_t)3 * p->ldb + 2;
        p->A[ia] = NAN;
        p->B[ib] = INFINITY;
    }
}

static void free_problem(problem *p)
{
    free(p->A);
    free(p->B);
    free(p->C0);
}

static double opA(const problem *p, const double *A, int i, int l)
{
    return p->c.ta == CUBLAS_OP_N ? A[(size_t)l * p->lda + i] : A[(size_t)i * p->lda + l];
}

static double opB(const problem *p, const double *B, int l, int j)
{
    return p->c.tb == CUBLAS_OP_N ? B[(size_t)j * p->ldb + l] : B[(size_t)l * p->ldb + j];
}

/* Checks batch item b of C against the CPU; returns the number of bad elements. */
static long check_item(const problem *p, int b, const double *C, double *worst)
{
    const double *A = p->A + b * p->sa, *B = p->B + b * p->sb, *C0 = p->C0 + b * p->sc;
    const gemm_case *c = &p->c;
    long bad = 0;
    int *s = malloc(sizeof(int) * c->m), *t = malloc(sizeof(int) * c->n);
    for (int i = 0; i < c->m; i++) {
        double mx = 0;
        for (int l = 0; l < c->k; l++)
            mx = isnan(opA(p, A, i, l)) || fabs(opA(p, A, i, l)) > mx ? fabs(opA(p, A, i, l)) : mx;
        s[i] = oz_scale_exponent(mx);
    }
    for (int j = 0; j < c->n; j++) {
        double mx = 0;
        for (int l = 0; l < c->k; l++)
            mx = isnan(opB(p, B, l, j)) || fabs(opB(p, B, l, j)) > mx ? fabs(opB(p, B, l, j)) : mx;
        t[j] = oz_scale_exponent(mx);
    }
    for (int j = 0; j < c->n; j++)
        for (int i = 0; i < c->m; i++) {
            double dot = 0, P = 0;
            for (int l = 0; l < c->k; l++) {
                double a = opA(p, A, i, l), bb = opB(p, B, l, j);
                dot += a * bb;
                P += fabs(a) * fabs(bb);
            }
            double cold = c->beta == 0.0 ? 0.0 : C0[(size_t)j * p->ldc + i];
            double ref = c->alpha * dot + c->beta * cold;
            double got = C[(size_t)j * p->ldc + i];
            if (!isfinite(ref)) { /* DGEMM's non-finite result, exactly its class */
                if (!(isnan(ref) ? isnan(got) : got == ref))
                    bad++;
                continue;
            }
            if (s[i] == OZ_SCALE_SPECIAL || t[j] == OZ_SCALE_SPECIAL) {
                bad += !isfinite(got);
                continue;
            }
            double cpu_err = (c->k + 2) * 0x1p-53 * (fabs(c->alpha) * P + fabs(c->beta * cold));
            double tol = 1.01 * (oz_error_bound(c->alpha, c->beta, cold, P, s[i], t[j], c->k) + cpu_err);
            double err = fabs(got - ref);
            if (!(err <= tol))
                bad++;
            else if (tol > 0 && err / tol > *worst)
                *worst = err / tol;
        }
    free(s);
    free(t);
    return bad;
}

/* Device copies of a problem, C reset to C0. */
typedef struct dev_problem {
    double *A, *B, *C, *scalars;
    double **arrays; /* A, B, C pointer arrays, 3 * batch */
} dev_problem;

static void upload(const problem *p, dev_problem *d)
{
    int nb = p->c.batch;
    d->A = dev_upload(p->A, p->sa * nb * sizeof(double));
    d->B = dev_upload(p->B, p->sb * nb * sizeof(double));
    d->C = dev_upload(p->C0, p->sc * nb * sizeof(double));
    double sc[2] = {p->c.alpha, p->c.beta};
    d->scalars = dev_upload(sc, sizeof sc);
    double **h = malloc(3 * nb * sizeof(double *));
    for (int b = 0; b < nb; b++) {
        h[b] = d->A + b * p->sa;
        h[nb + b] = d->B + b * p->sb;
        h[2 * nb + b] = d->C + b * p->sc;
    }
    d->arrays = dev_upload(h, 3 * nb * sizeof(double *));
    free(h);
}

static void release(dev_problem *d)
{
    CUDA_CHECK(cudaFree(d->A));
    CUDA_CHECK(cudaFree(d->B));
    CUDA_CHECK(cudaFree(d->C));
    CUDA_CHECK(cudaFree(d->scalars));
    CUDA_CHECK(cudaFree(d->arrays));
}

/* Enqueues the case's call on handle h (its stream, its pointer mode). */
static cublasStatus_t call(cublasHandle_t h, const problem *p, const dev_problem *d)
{
    const gemm_case *c = &p->c;
    const double *al = c->device_scalars ? d->scalars : &c->alpha;
    const double *be = c->device_scalars ? d->scalars + 1 : &c->beta;
    int nb = c->batch;
    const double *const *Aa = (const double *const *)d->arrays;
    const double *const *Ba = (const double *const *)d->arrays + nb;
    double *const *Ca = d->arrays + 2 * nb;
    switch (c->ep) {
    case EP_DGEMM:
        return cublasDgemm_v2(h, c->ta, c->tb, c->m, c->n, c->k, al, d->A, p->lda, d->B, p->ldb, be, d->C, p->ldc);
    case EP_DGEMM64:
        return cublasDgemm_v2_64(h, c->ta, c->tb, c->m, c->n, c->k, al, d->A, p->lda, d->B, p->ldb, be, d->C, p->ldc);
    case EP_GEMMEX:
        return cublasGemmEx(h, c->ta, c->tb, c->m, c->n, c->k, al, d->A, CUDA_R_64F, p->lda, d->B, CUDA_R_64F, p->ldb,
                            be, d->C, CUDA_R_64F, p->ldc, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    case EP_STRIDED:
        return cublasDgemmStridedBatched(h, c->ta, c->tb, c->m, c->n, c->k, al, d->A, p->lda, p->sa, d->B, p->ldb,
                                         p->sb, be, d->C, p->ldc, p->sc, nb);
    case EP_STRIDED_EX:
        return cublasGemmStridedBatchedEx(h, c->ta, c->tb, c->m, c->n, c->k, al, d->A, CUDA_R_64F, p->lda, p->sa,
                                          d->B, CUDA_R_64F, p->ldb, p->sb, be, d->C, CUDA_R_64F, p->ldc, p->sc, nb,
                                          CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    case EP_BATCHED:
        return cublasDgemmBatched(h, c->ta, c->tb, c->m, c->n, c->k, al, Aa, p->lda, Ba, p->ldb, be, Ca, p->ldc, nb);
    case EP_BATCHED_EX:
        return cublasGemmBatchedEx(h, c->ta, c->tb, c->m, c->n, c->k, al, (const void *const *)Aa, CUDA_R_64F,
                                   p->lda, (const void *const *)Ba, CUDA_R_64F, p->ldb, be, (void *const *)Ca,
                                   CUDA_R_64F, p->ldc, nb, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    case EP_GEMMEX64:
        return cublasGemmEx_64(h, c->ta, c->tb, c->m, c->n, c->k, al, d->A, CUDA_R_64F, p->lda, d->B, CUDA_R_64F,
                               p->ldb, be, d->C, CUDA_R_64F, p->ldc, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    case EP_STRIDED64:
        return cublasDgemmStridedBatched_64(h, c->ta, c->tb, c->m, c->n, c->k, al, d->A, p->lda, p->sa, d->B, p->ldb,
                                            p->sb, be, d->C, p->ldc, p->sc, nb);
    case EP_STRIDED_EX64:
        return cublasGemmStridedBatchedEx_64(h, c->ta, c->tb, c->m, c->n, c->k, al, d->A, CUDA_R_64F, p->lda, p->sa,
                                             d->B, CUDA_R_64F, p->ldb, p->sb, be, d->C, CUDA_R_64F, p->ldc, p->sc, nb,
                                             CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    case EP_BATCHED64:
        return cublasDgemmBatched_64(h, c->ta, c->tb, c->m, c->n, c->k, al, Aa, p->lda, Ba, p->ldb, be, Ca, p->ldc,
                                     nb);
    case EP_BATCHED_EX64:
        return cublasGemmBatchedEx_64(h, c->ta, c->tb, c->m, c->n, c->k, al, (const void *const *)Aa, CUDA_R_64F,
                                      p->lda, (const void *const *)Ba, CUDA_R_64F, p->ldb, be, (void *const *)Ca,
                                      CUDA_R_64F, p->ldc, nb, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    default: /* the grouped ones: run_grouped */
        break;
    }
    return CUBLAS_STATUS_INVALID_VALUE;
}

static int report(const char *what, const problem *p, long bad, double worst)
{
    const gemm_case *c = &p->c;
    printf("%s: %-28s %s %c%c m=%d n=%d k=%d batch=%d alpha=%g beta=%g%s%s: %ld bad elements, worst err/bound %.3g\n",
           bad ? "FAIL" : "PASS", entry_names[c->ep], what, "NTC"[c->ta], "NTC"[c->tb], c->m, c->n, c->k, c->batch,
           c->alpha, c->beta, c->device_scalars ? " device-scalars" : "", c->specials ? " inf/nan" : "", bad, worst);
    return bad != 0;
}

static long check_all(const problem *p, const double *C, double *worst)
{
    long bad = 0;
    for (int b = 0; b < p->c.batch; b++)
        bad += check_item(p, b, C + b * p->sc, worst);
    return bad;
}

/* One case on handle h and its stream; the result is left in *out if not NULL. */
static int run_case(cublasHandle_t h, cudaStream_t st, const gemm_case *c)
{
    problem p;
    dev_problem d;
    make_problem(&p, c);
    upload(&p, &d);
    CUBLAS_CHECK(cublasSetStream_v2(h, st));
    CUBLAS_CHECK(cublasSetPointerMode_v2(h, c->device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST));
    CUBLAS_CHECK(call(h, &p, &d));
    CUDA_CHECK(cudaStreamSynchronize(st));
    double *C = malloc(p.sc * c->batch * sizeof(double));
    dev_download(C, d.C, p.sc * c->batch * sizeof(double));
    double worst = 0;
    int failed = report("", &p, check_all(&p, C, &worst), worst);
    free(C);
    release(&d);
    free_problem(&p);
    CUBLAS_CHECK(cublasSetPointerMode_v2(h, CUBLAS_POINTER_MODE_HOST));
    return failed;
}

/* A call captured into a graph, replayed twice (beta = 0: replays agree). */
static int run_graph(cublasHandle_t h, cudaStream_t st)
{
    gemm_case c = {EP_DGEMM, CUBLAS_OP_N, CUBLAS_OP_T, 384, 256, 640, 3, 1, 1.5, 0.0, 0, 0};
    problem p;
    dev_problem d;
    make_problem(&p, &c);
    upload(&p, &d);
    CUBLAS_CHECK(cublasSetStream_v2(h, st));
    CUBLAS_CHECK(call(h, &p, &d)); /* warm-up: the shim allocates its workspace outside the capture */
    CUDA_CHECK(cudaMemsetAsync(d.C, 0xff, p.sc * sizeof(double), st)); /* NaN: must be overwritten */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    CUBLAS_CHECK(call(h, &p, &d));
    CUDA_CHECK(cudaStreamEndCapture(st, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    double *C1 = malloc(p.sc * sizeof(double)), *C2 = malloc(p.sc * sizeof(double));
    CUDA_CHECK(cudaGraphLaunch(exec, st));
    CUDA_CHECK(cudaMemcpyAsync(C1, d.C, p.sc * sizeof(double), cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaMemsetAsync(d.C, 0xff, p.sc * sizeof(double), st));
    CUDA_CHECK(cudaGraphLaunch(exec, st));
    CUDA_CHECK(cudaMemcpyAsync(C2, d.C, p.sc * sizeof(double), cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaStreamSynchronize(st));
    double worst = 0;
    long bad = check_all(&p, C1, &worst);
    for (size_t i = 0; i < p.sc; i++)
        bad += !same_double(C1[i], C2[i]);
    int failed = report("graph-replayed", &p, bad, worst);
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    free(C1);
    free(C2);
    release(&d);
    free_problem(&p);
    return failed;
}

/* One call of a grouped entry point (ep): three groups of their own shapes,
 * operations, scalars and sizes, the middle one below the shim's
 * thresholds, their items in one set of pointer arrays. */
static int run_grouped(cublasHandle_t h, cudaStream_t st, entry ep)
{
    const gemm_case g[3] = {{ep, CUBLAS_OP_N, CUBLAS_OP_T, 256, 192, 320, 1, 2, 1.5, 0.5, 0, 0},
                            {ep, CUBLAS_OP_N, CUBLAS_OP_N, 7, 61, 68, 0, 1, 1.0, 0.0, 0, 0},
                            {ep, CUBLAS_OP_T, CUBLAS_OP_N, 300, 200, 517, 5, 3, -2.0, 0.0, 0, 1}};
    problem p[3];
    dev_problem d[3];
    int total = 0;
    for (int i = 0; i < 3; i++) {
        make_problem(&p[i], &g[i]);
        upload(&p[i], &d[i]);
        total += g[i].batch;
    }
    double **ha = malloc(3 * total * sizeof *ha);
    cublasOperation_t ta[3], tb[3];
    int m[3], n[3], k[3], lda[3], ldb[3], ldc[3], size[3];
    int64_t m64[3], n64[3], k64[3], lda64[3], ldb64[3], ldc64[3], size64[3];
    double al[3], be[3];
    for (int i = 0, off = 0; i < 3; off += g[i].batch, i++) {
        for (int b = 0; b < g[i].batch; b++) {
            ha[off + b] = d[i].A + b * p[i].sa;
            ha[total + off + b] = d[i].B + b * p[i].sb;
            ha[2 * total + off + b] = d[i].C + b * p[i].sc;
        }
        ta[i] = g[i].ta, tb[i] = g[i].tb, al[i] = g[i].alpha, be[i] = g[i].beta;
        m64[i] = m[i] = g[i].m, n64[i] = n[i] = g[i].n, k64[i] = k[i] = g[i].k, size64[i] = size[i] = g[i].batch;
        lda64[i] = lda[i] = p[i].lda, ldb64[i] = ldb[i] = p[i].ldb, ldc64[i] = ldc[i] = p[i].ldc;
    }
    double **arr = dev_upload(ha, 3 * total * sizeof *ha);
    const double *const *Aa = (const double *const *)arr, *const *Ba = Aa + total;
    double *const *Ca = arr + 2 * total;
    CUBLAS_CHECK(cublasSetStream_v2(h, st));
    switch (ep) {
    case EP_GROUPED:
        CUBLAS_CHECK(cublasDgemmGroupedBatched(h, ta, tb, m, n, k, al, Aa, lda, Ba, ldb, be, Ca, ldc, 3, size));
        break;
    case EP_GROUPED64:
        CUBLAS_CHECK(cublasDgemmGroupedBatched_64(h, ta, tb, m64, n64, k64, al, Aa, lda64, Ba, ldb64, be, Ca, ldc64, 3,
                                                  size64));
        break;
    case EP_GROUPED_EX:
        CUBLAS_CHECK(cublasGemmGroupedBatchedEx(h, ta, tb, m, n, k, al, (const void *const *)Aa, CUDA_R_64F, lda,
                                                (const void *const *)Ba, CUDA_R_64F, ldb, be, (void *const *)Ca,
                                                CUDA_R_64F, ldc, 3, size, CUBLAS_COMPUTE_64F));
        break;
    default:
        CUBLAS_CHECK(cublasGemmGroupedBatchedEx_64(h, ta, tb, m64, n64, k64, al, (const void *const *)Aa, CUDA_R_64F,
                                                   lda64, (const void *const *)Ba, CUDA_R_64F, ldb64, be,
                                                   (void *const *)Ca, CUDA_R_64F, ldc64, 3, size64,
                                                   CUBLAS_COMPUTE_64F));
        break;
    }
    CUDA_CHECK(cudaStreamSynchronize(st));
    int failed = 0;
    for (int i = 0; i < 3; i++) {
        double *C = malloc(p[i].sc * g[i].batch * sizeof(double)), worst = 0;
        dev_download(C, d[i].C, p[i].sc * g[i].batch * sizeof(double));
        char what[32];
        snprintf(what, sizeof what, "group %d of 3", i);
        failed += report(what, &p[i], check_all(&p[i], C, &worst), worst);
        free(C);
        release(&d[i]);
        free_problem(&p[i]);
    }
    CUDA_CHECK(cudaFree(arr));
    free(ha);
    return failed != 0;
}

/* 4 threads, each with its own handle and stream, at once: the same bits as one thread. */
#define NTHREADS 4
static const gemm_case thread_case = {EP_DGEMM, CUBLAS_OP_T, CUBLAS_OP_N, 512, 384, 1000, 1, 1, -0.75, 0.5, 0, 0};
static problem g_tp;
static pthread_barrier_t g_barrier;

static void *thread_main(void *arg)
{
    double *out = arg;
    cublasHandle_t h;
    cudaStream_t st;
    dev_problem d;
    CUBLAS_CHECK(cublasCreate_v2(&h));
    CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasSetStream_v2(h, st));
    upload(&g_tp, &d);
    pthread_barrier_wait(&g_barrier);
    for (int rep = 0; rep < 3; rep++) { /* C = f(C0) each time: reset in between */
        CUDA_CHECK(cudaMemcpyAsync(d.C, g_tp.C0, g_tp.sc * sizeof(double), cudaMemcpyHostToDevice, st));
        CUBLAS_CHECK(call(h, &g_tp, &d));
    }
    CUDA_CHECK(cudaMemcpyAsync(out, d.C, g_tp.sc * sizeof(double), cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaStreamSynchronize(st));
    release(&d);
    CUDA_CHECK(cudaStreamDestroy(st));
    CUBLAS_CHECK(cublasDestroy_v2(h));
    return NULL;
}

static int run_threads(cublasHandle_t h, cudaStream_t st)
{
    make_problem(&g_tp, &thread_case);
    dev_problem d;
    upload(&g_tp, &d);
    CUBLAS_CHECK(cublasSetStream_v2(h, st));
    CUBLAS_CHECK(call(h, &g_tp, &d));
    double *one = malloc(g_tp.sc * sizeof(double));
    CUDA_CHECK(cudaMemcpyAsync(one, d.C, g_tp.sc * sizeof(double), cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaStreamSynchronize(st));
    release(&d);
    double *outs[NTHREADS];
    pthread_t th[NTHREADS];
    pthread_barrier_init(&g_barrier, NULL, NTHREADS);
    for (int i = 0; i < NTHREADS; i++) {
        outs[i] = malloc(g_tp.sc * sizeof(double));
        if (pthread_create(&th[i], NULL, thread_main, outs[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(2);
        }
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&g_barrier);
    double worst = 0;
    long bad = check_all(&g_tp, one, &worst);
    for (int i = 0; i < NTHREADS; i++) {
        for (size_t e = 0; e < g_tp.sc; e++)
            bad += !same_double(outs[i][e], one[e]);
        free(outs[i]);
    }
    free(one);
    int failed = report("4-threads-same-bits", &g_tp, bad, worst);
    free_problem(&g_tp);
    return failed;
}

int main(void)
{
    static const gemm_case cases[] = {
        /* ep, ta, tb, m, n, k, pad, batch, alpha, beta, device scalars, specials */
        {EP_DGEMM, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, 0, 1, 1.0, 0.0, 0, 0},
        {EP_DGEMM, CUBLAS_OP_T, CUBLAS_OP_N, 300, 200, 517, 5, 1, -2.0, 0.5, 0, 0},
        {EP_DGEMM, CUBLAS_OP_N, CUBLAS_OP_T, 129, 1000, 130, 1, 1, 0.25, 1.0, 0, 0},
        {EP_DGEMM, CUBLAS_OP_T, CUBLAS_OP_T, 512, 384, 4500, 0, 1, 1.0, -1.0, 0, 0}, /* k > one K chunk */
        {EP_DGEMM, CUBLAS_OP_C, CUBLAS_OP_N, 200, 200, 200, 0, 1, 1.0, 0.0, 0, 0},
        {EP_DGEMM, CUBLAS_OP_N, CUBLAS_OP_N, 7, 61, 68, 0, 1, 1.0, 0.0, 0, 0},     /* small odd: forwarded */
        {EP_DGEMM, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, 2, 1, 1.5, 0.25, 1, 0}, /* device pointer mode */
        {EP_DGEMM, CUBLAS_OP_N, CUBLAS_OP_T, 256, 192, 300, 0, 1, 1.0, 0.0, 0, 1},  /* Inf / NaN inputs */
        {EP_DGEMM, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, 0, 1, 0.0, 2.0, 0, 0},  /* alpha = 0 */
        {EP_DGEMM64, CUBLAS_OP_T, CUBLAS_OP_N, 320, 160, 640, 0, 1, 1.0, 0.0, 0, 0},
        {EP_GEMMEX, CUBLAS_OP_N, CUBLAS_OP_N, 384, 256, 320, 3, 1, 1.0, 1.0, 0, 0},
        {EP_GEMMEX, CUBLAS_OP_T, CUBLAS_OP_N, 256, 256, 256, 0, 1, 2.0, 0.0, 1, 0},
        {EP_STRIDED, CUBLAS_OP_N, CUBLAS_OP_N, 192, 160, 224, 0, 6, 1.0, 0.5, 0, 0},
        {EP_STRIDED_EX, CUBLAS_OP_N, CUBLAS_OP_T, 160, 192, 256, 1, 4, -1.0, 0.0, 0, 0},
        {EP_BATCHED, CUBLAS_OP_T, CUBLAS_OP_N, 200, 150, 300, 0, 5, 1.0, 0.0, 0, 0},
        {EP_BATCHED_EX, CUBLAS_OP_N, CUBLAS_OP_N, 150, 200, 256, 2, 3, 0.5, 2.0, 1, 0},
        {EP_GEMMEX64, CUBLAS_OP_T, CUBLAS_OP_T, 288, 176, 400, 1, 1, 1.0, 0.5, 0, 0},
        {EP_STRIDED64, CUBLAS_OP_T, CUBLAS_OP_N, 176, 144, 208, 2, 3, 1.0, 0.0, 1, 0},
        {EP_STRIDED_EX64, CUBLAS_OP_N, CUBLAS_OP_N, 144, 160, 272, 0, 2, -0.5, 1.0, 0, 0},
        {EP_BATCHED64, CUBLAS_OP_N, CUBLAS_OP_T, 160, 144, 192, 1, 4, 1.0, 0.0, 0, 1},
        {EP_BATCHED_EX64, CUBLAS_OP_T, CUBLAS_OP_N, 136, 152, 168, 0, 2, 2.0, -1.0, 0, 0},
    };
    int dev;
    struct cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    const char *pre = getenv("LD_PRELOAD");
    printf("client_dgemm on %s (sm_%d%d), LD_PRELOAD=%s\n", prop.name, prop.major, prop.minor, pre ? pre : "");
    cublasHandle_t h;
    cudaStream_t st;
    CUBLAS_CHECK(cublasCreate_v2(&h));
    CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    int failed = 0, total = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++, total++)
        failed += run_case(h, st, &cases[i]);
    failed += run_case(h, NULL, &cases[0]); /* the legacy default stream */
    total++;
    failed += run_graph(h, st);
    total++;
    failed += run_threads(h, st);
    total++;
    for (entry ep = EP_GROUPED; ep <= EP_GROUPED_EX64; ep++, total++)
        failed += run_grouped(h, st, ep);
    CUDA_CHECK(cudaStreamDestroy(st));
    CUBLAS_CHECK(cublasDestroy_v2(h));
    printf("%s: client_dgemm %d of %d cases passed\n", failed ? "FAIL" : "PASS", total - failed, total);
    return failed ? 1 : 0;
}
