/* tests/gpu/compare/check_compare.c: the shadow-mode kernels (compare/kernel_*.cu) against compare/metrics.c on random, poisoned device data, under both modes' bounds, real and complex.
 *
 * Plain C, no cmocka; run on the GPU machine. Prints one line per case and
 * "check_compare: N failures"; exit status 1 on any failure. OZ_TEST_SEED=n
 * replays another seed. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare/metrics.h"
#include "compare/kernels.h"
#include "tests/gpu/gpu_util.h" /* CUDA_CHECK */

static int g_failures;
static uint64_t g_rng = 0x9e3779b97f4a7c15ull;


static void expect(int ok, const char *what)
{
    if (!ok) {
        g_failures++;
        printf("  FAIL: %s\n", what);
    }
}

static double urand(void) /* uniform in [-1, 1) */
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (double)(g_rng >> 11) * 0x1p-52 - 1.0;
}

static double *dev_copy(const double *h, size_t count)
{
    double *d;
    CUDA_CHECK(cudaMalloc((void **)&d, count * sizeof *d + 1));
    CUDA_CHECK(cudaMemcpy(d, h, count * sizeof *d, cudaMemcpyHostToDevice));
    return d;
}

/* Random stored matrices for op(A) (m x k) and op(B) (k x n), batch items at
 * stride, with NaN poison in the padding and a few special rows/columns;
 * cplx: complex elements (interleaved re/im, ld and strides in elements). */
typedef struct problem {
    int transa, transb, cplx;
    int64_t m, n, k, batch, lda, ldb, ldc, sA, sB, sC, es; /* es: doubles an element */
    double *A, *B, *E, *N; /* host */
} problem;

static void make_problem(problem *p)
{
    int64_t ar = p->transa ? p->k : p->m, ac = p->transa ? p->m : p->k;
    int64_t br = p->transb ? p->n : p->k, bc = p->transb ? p->k : p->n;
    p->lda = ar + 3;
    p->ldb = br + 1;
    p->ldc = p->m + 5;
    p->sA = p->lda * (ac ? ac : 1) + 7;
    p->sB = p->ldb * (bc ? bc : 1) + 2;
    p->sC = p->ldc * p->n + 9;
    const int64_t es = p->es = p->cplx ? 2 : 1;
    p->A = malloc((size_t)(es * p->sA * p->batch) * sizeof(double));
    p->B = malloc((size_t)(es * p->sB * p->batch) * sizeof(double));
    p->E = malloc((size_t)(es * p->sC * p->batch) * sizeof(double));
    p->N = malloc((size_t)(es * p->sC * p->batch) * sizeof(double));
    for (int64_t i = 0; i < es * p->sA * p->batch; i++)
        p->A[i] = NAN; /* poison: padding must never be read */
    for (int64_t i = 0; i < es * p->sB * p->batch; i++)
        p->B[i] = NAN;
    for (int64_t i = 0; i < es * p->sC * p->batch; i++)
        p->E[i] = p->N[i] = NAN;
    for (int64_t b = 0; b < p->batch; b++) {
        for (int64_t j = 0; j < ac; j++)
            for (int64_t i = 0; i < ar; i++)
                for (int64_t q = 0; q < es; q++) /* the parts: the same scale, the larger either */
                    p->A[es * (b * p->sA + i + j * p->lda) + q] = ldexp(urand(), (int)(b * 7 + (i % 5)) - 3);
        for (int64_t j = 0; j < bc; j++)
            for (int64_t i = 0; i < br; i++)
                for (int64_t q = 0; q < es; q++)
                    p->B[es * (b * p->sB + i + j * p->ldb) + q] = ldexp(urand(), (int)(j % 3));
        for (int64_t j = 0; j < p->n; j++) {
            for (int64_t i = 0; i < p->m; i++) {
                int64_t at = es * (b * p->sC + i + j * p->ldc);
                int64_t r = (i * 131 + j * 17 + b) % 97;
                for (int64_t q = 0; q < es; q++) {
                    double nv = urand() * 4.0;
                    double e = nv * (1.0 + urand() * 1e-10);
                    if (q == 0) { /* the special cases in one part (the real one) */
                        if (r == 0) nv = e = 0.0;                    /* zero native, equal */
                        else if (r == 1) e = 1e-12;                  /* zero native, not equal */
                        else if (r == 2) nv = 0.0;
                        else if (r == 3) e = nv = NAN;               /* match */
                        else if (r == 4) e = NAN;                    /* mismatch */
                        else if (r == 5) { e = INFINITY; nv = -INFINITY; }
                        else if (r == 6) e = nv + 1e-3;              /* beyond the bound */
                    } else { /* complex: the other part's own */
                        if (r == 0 || r == 1 || r == 2) nv = e = 0.0; /* zero, or the pairs above */
                        else if (r == 7) e = NAN;                     /* mismatch in the imaginary part */
                        else if (r == 8) e = nv = INFINITY;           /* match */
                        else if (r == 9) e = nv - 1e-3;               /* beyond the bound */
                    }
                    p->N[at + q] = nv;
                    p->E[at + q] = e;
                }
            }
        }
    }
    /* a NaN row of op(A) and an Inf column of op(B) in item 0 (complex: in the imaginary parts) */
    if (p->m > 2 && p->k > 0) {
        int64_t i = 2, l = p->k / 2;
        p->A[es * (p->transa ? l + i * p->lda : i + l * p->lda) + es - 1] = NAN;
    }
    if (p->n > 1 && p->k > 0) {
        int64_t j = 1, l = 0;
        p->B[es * (p->transb ? j + l * p->ldb : l + j * p->ldb) + es - 1] = -INFINITY;
    }
}

static void free_problem(problem *p)
{
    free(p->A);
    free(p->B);
    free(p->E);
    free(p->N);
}

/* ozaki2 cases whose beyond-bound count differs from the Phase 22 bound's on the same data (host model). */
static int g_oz2_distinct;

/* One problem through ozcmp_scales and ozcmp_metrics, strided or as
 * pointer arrays, alpha/beta on host or device, the Phase 22 or an ozaki2
 * bound; checked against the host. */
static void run_case(problem *p, int arrays, int on_device, double alpha, double beta, ozcmp_bound bound)
{
    const int64_t es = p->es;
    printf("case %s%c%c m=%lld n=%lld k=%lld batch=%lld %s %s beta=%g bound %s\n", p->cplx ? "complex " : "",
           "NTC"[p->transa], "NTC"[p->transb], (long long)p->m, (long long)p->n, (long long)p->k,
           (long long)p->batch, arrays ? "pointer-array" : "strided", on_device ? "device-scalars" : "host-scalars",
           beta, bound.kind == OZCMP_BOUND_OZAKI2 ? "ozaki2" : "phase22");
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    double *dA = dev_copy(p->A, (size_t)(es * p->sA * p->batch)), *dB = dev_copy(p->B, (size_t)(es * p->sB * p->batch));
    double *dE = dev_copy(p->E, (size_t)(es * p->sC * p->batch)), *dN = dev_copy(p->N, (size_t)(es * p->sC * p->batch));
    double **pa = malloc((size_t)p->batch * 4 * sizeof *pa), **dptr;
    for (int64_t b = 0; b < p->batch; b++) {
        pa[b] = dA + es * b * p->sA;
        pa[p->batch + b] = dB + es * b * p->sB;
        pa[2 * p->batch + b] = dE + es * b * p->sC;
        pa[3 * p->batch + b] = dN + es * b * p->sC;
    }
    CUDA_CHECK(cudaMalloc((void **)&dptr, (size_t)p->batch * 4 * sizeof *dptr));
    CUDA_CHECK(cudaMemcpy(dptr, pa, (size_t)p->batch * 4 * sizeof *dptr, cudaMemcpyHostToDevice));
    /* alpha, beta: (re, im) pairs; a complex case's imaginary parts 0.5 alpha and -0.25 */
    double hs[4] = {alpha, p->cplx ? 0.5 * alpha : 0.0, beta, p->cplx ? -0.25 : 0.0}, *ds;
    CUDA_CHECK(cudaMalloc((void **)&ds, sizeof hs));
    CUDA_CHECK(cudaMemcpy(ds, hs, sizeof hs, cudaMemcpyHostToDevice));

    oz_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.transa = p->transa;
    d.transb = p->transb;
    d.m = p->m;
    d.n = p->n;
    d.k = p->k;
    d.A = dA; d.lda = p->lda; d.strideA = p->sA;
    d.B = dB; d.ldb = p->ldb; d.strideB = p->sB;
    d.C = dE; d.ldc = p->ldc; d.strideC = p->sC;
    d.batch = p->batch;
    if (arrays) {
        d.Aarray = (const double *const *)dptr;
        d.Barray = (const double *const *)(dptr + p->batch);
        d.Carray = (double *const *)(dptr + 2 * p->batch);
    }
    d.alpha = on_device ? ds : &hs[0];
    d.beta = on_device ? ds + 2 : &hs[2];
    d.scalars_on_device = on_device;
    d.elem = p->cplx ? OZ_ELEM_COMPLEX : OZ_ELEM_REAL;

    uint64_t *dabs;
    ozcmp_accum *drec;
    size_t absn = (size_t)(p->batch * (p->m + p->n));
    CUDA_CHECK(cudaMalloc((void **)&dabs, absn * sizeof *dabs));
    CUDA_CHECK(cudaMalloc((void **)&drec, sizeof *drec));
    CUDA_CHECK(cudaMemset(dabs, 0xa5, absn * sizeof *dabs)); /* poison: the launchers must initialise */
    CUDA_CHECK(cudaMemset(drec, 0xa5, sizeof *drec));
    expect(ozcmp_scales(&d, dabs, dabs + p->batch * p->m, s) == 0, "ozcmp_scales returns 0");
    ozcmp_mat_view ve = {dE, NULL, p->ldc, p->sC}, vn = {dN, NULL, p->ldc, p->sC};
    if (arrays) {
        ve = (ozcmp_mat_view){NULL, (const double *const *)(dptr + 2 * p->batch), p->ldc, 0};
        vn = (ozcmp_mat_view){NULL, (const double *const *)(dptr + 3 * p->batch), p->ldc, 0};
    }
    expect(ozcmp_metrics(&d, ve, vn, dabs, dabs + p->batch * p->m, bound, drec, s) == 0, "ozcmp_metrics returns 0");
    uint64_t *habs = malloc(absn * sizeof *habs);
    ozcmp_accum gpu;
    CUDA_CHECK(cudaMemcpyAsync(habs, dabs, absn * sizeof *habs, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaMemcpyAsync(&gpu, drec, sizeof gpu, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));

    /* host model */
    ozcmp_accum host, host_p22; /* host_p22: the same data under the Phase 22 bound */
    ozcmp_accum_init(&host);
    ozcmp_accum_init(&host_p22);
    int *sc = malloc((size_t)(p->m + p->n + 1) * sizeof *sc);
    int scale_bad = 0;
    for (int64_t b = 0; b < p->batch; b++) {
        const double *hA = p->A + es * b * p->sA, *hB = p->B + es * b * p->sB;
        const double *hE = p->E + es * b * p->sC, *hN = p->N + es * b * p->sC;
        if (p->cplx)
            ozcmp_zscales_host(p->transa, p->transb, p->m, p->n, p->k, hA, p->lda, hB, p->ldb, sc, sc + p->m);
        else
            ozcmp_scales_host(p->transa, p->transb, p->m, p->n, p->k, hA, p->lda, hB, p->ldb, sc, sc + p->m);
        for (int64_t i = 0; i < p->m; i++) {
            double v;
            memcpy(&v, &habs[b * p->m + i], sizeof v);
            scale_bad += oz_scale_exponent(v) != sc[i];
        }
        for (int64_t j = 0; j < p->n; j++) {
            double v;
            memcpy(&v, &habs[p->batch * p->m + b * p->n + j], sizeof v);
            scale_bad += oz_scale_exponent(v) != sc[p->m + j];
        }
        if (p->cplx) {
            ozcmp_zmatrix_host(&host, p->m, p->n, hE, p->ldc, hN, p->ldc, sc, sc + p->m, bound, hs, hs + 2, p->k);
        } else {
            ozcmp_matrix_host(&host, p->m, p->n, hE, p->ldc, hN, p->ldc, sc, sc + p->m, bound, alpha, beta, p->k);
            ozcmp_matrix_host(&host_p22, p->m, p->n, hE, p->ldc, hN, p->ldc, sc, sc + p->m, ozcmp_bound_phase22(),
                              alpha, beta, p->k);
        }
    }
    expect(scale_bad == 0, "scale exponents equal the host's");
    expect(gpu.max_abs_bits == host.max_abs_bits, "max abs bit-equal");
    expect(gpu.max_rel_bits == host.max_rel_bits, "max rel bit-equal");
    expect(gpu.beyond_bound == host.beyond_bound, "beyond-bound count equal");
    expect(gpu.nonfinite_mismatch == host.nonfinite_mismatch, "NaN/Inf mismatch count equal");
    expect(gpu.finite_pairs == host.finite_pairs, "finite pair count equal");
    for (int i = 0; i < OZCMP_NBINS; i++) {
        expect(fabs(gpu.sq_diff[i] - host.sq_diff[i]) <= 1e-12 * host.sq_diff[i], "sum of squares (diff) close");
        expect(fabs(gpu.sq_native[i] - host.sq_native[i]) <= 1e-12 * host.sq_native[i], "sum of squares (native) close");
    }
    ozcmp_call_metrics mg = ozcmp_finish(&gpu, 0), mh = ozcmp_finish(&host, 0);
    printf("  gpu: max abs %.3e max rel %.3e normwise %.6e beyond %llu nonfinite %llu; host normwise %.6e\n",
           mg.max_abs, mg.max_rel, mg.normwise, (unsigned long long)mg.beyond_bound,
           (unsigned long long)mg.nonfinite_mismatch, mh.normwise);
    expect(host.beyond_bound > 0 && host.nonfinite_mismatch > 0, "the case exercises the bound and NaN/Inf");
    if (bound.kind == OZCMP_BOUND_OZAKI2 && !p->cplx) {
        printf("  beyond the ozaki2 bound %llu, the Phase 22 bound %llu (host)\n", (unsigned long long)host.beyond_bound,
               (unsigned long long)host_p22.beyond_bound);
        g_oz2_distinct += host.beyond_bound != host_p22.beyond_bound;
    }

    free(habs);
    free(sc);
    free(pa);
    CUDA_CHECK(cudaFree(dabs));
    CUDA_CHECK(cudaFree(drec));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dE));
    CUDA_CHECK(cudaFree(dN));
    CUDA_CHECK(cudaFree(dptr));
    CUDA_CHECK(cudaFree(ds));
    CUDA_CHECK(cudaStreamDestroy(s));
}

/* ozcmp_copy: strided and pointer arrays, the mirrored alignment, padding untouched. */
static void check_copy(void)
{
    printf("case copy\n");
    const int64_t m = 37, n = 11, batch = 3, ld = 41, stride = ld * n + 3;
    size_t total = (size_t)(stride * batch + 64);
    double *h = malloc(total * sizeof *h), *back = malloc(total * sizeof *back);
    for (size_t i = 0; i < total; i++)
        h[i] = urand();
    double *src = dev_copy(h, total), *dst, **ptrs, **srcp;
    CUDA_CHECK(cudaMalloc((void **)&dst, (size_t)batch * 2 * (size_t)stride * sizeof *dst + 4096));
    CUDA_CHECK(cudaMemset(dst, 0xff, (size_t)batch * 2 * (size_t)stride * sizeof *dst + 4096));
    CUDA_CHECK(cudaMalloc((void **)&ptrs, (size_t)batch * sizeof *ptrs));
    CUDA_CHECK(cudaMalloc((void **)&srcp, (size_t)batch * sizeof *srcp));
    double *hp[3];
    for (int64_t b = 0; b < batch; b++)
        hp[b] = src + b * stride + b * 3 + 1; /* odd offsets: alignments 8, 32, 56 mod 256 */
    CUDA_CHECK(cudaMemcpy(srcp, hp, sizeof hp, cudaMemcpyHostToDevice));
    int64_t slot = ((ld * (n - 1) + m + 31) / 32) * 32 + 32;
    ozcmp_mat_view sv = {NULL, (const double *const *)srcp, ld, 0};
    ozcmp_mat_out dv = {dst, NULL, ld, slot};
    expect(ozcmp_copy(m, n, batch, sv, dv, ptrs, 1, 1, NULL) == 0, "copy returns 0");
    double *got[3];
    CUDA_CHECK(cudaMemcpy(got, ptrs, sizeof got, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int64_t b = 0; b < batch; b++) {
        bad += ((uintptr_t)got[b] % 256) != ((uintptr_t)hp[b] % 256);
        bad += got[b] < dst + b * slot || got[b] + ld * (n - 1) + m > dst + (b + 1) * slot;
        CUDA_CHECK(cudaMemcpy(back, got[b], (size_t)(ld * n) * sizeof *back, cudaMemcpyDeviceToHost));
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < ld; i++) {
                double want = h[(hp[b] - src) + i + j * ld];
                if (i < m)
                    bad += memcmp(&back[i + j * ld], &want, sizeof want) != 0;
                else if (j < n - 1)
                    bad += back[i + j * ld] == back[i + j * ld]; /* padding keeps the 0xff NaN */
            }
    }
    expect(bad == 0, "pointer-array copy: data, mirrored alignment, untouched padding");
    /* strided back-copy into a fresh buffer */
    CUDA_CHECK(cudaMemset(dst, 0, (size_t)(stride * batch) * sizeof *dst));
    ozcmp_mat_view s2 = {src, NULL, ld, stride};
    ozcmp_mat_out d2 = {dst, NULL, ld, stride};
    expect(ozcmp_copy(m, n, batch, s2, d2, NULL, 0, 1, NULL) == 0, "strided copy returns 0");
    CUDA_CHECK(cudaMemcpy(back, dst, (size_t)(stride * batch) * sizeof *back, cudaMemcpyDeviceToHost));
    bad = 0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < ld; i++) {
                int64_t at = b * stride + i + j * ld;
                bad += i < m ? back[at] != h[at] : back[at] != 0.0;
            }
    expect(bad == 0, "strided copy: data and untouched padding");
    free(h);
    free(back);
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
    CUDA_CHECK(cudaFree(ptrs));
    CUDA_CHECK(cudaFree(srcp));
}

int main(void)
{
    const char *seed = getenv("OZ_TEST_SEED");
    if (seed)
        g_rng = strtoull(seed, NULL, 0) | 1;
    printf("check_compare: seed %llu\n", (unsigned long long)g_rng);
    static const int64_t shapes[][4] = {
        {300, 77, 2500, 3}, /* k > one chunk of the scales kernel */
        {5, 1030, 64, 2},   /* many columns */
        {1025, 3, 1, 1},    /* k = 1 */
        {40, 40, 0, 2},     /* k = 0: scales 0 */
    };
    for (int sh = 0; sh < 4; sh++) {
        for (int t = 0; t < 4; t++) {
            problem p;
            memset(&p, 0, sizeof p);
            p.transa = t & 1;
            p.transb = t >> 1;
            p.m = shapes[sh][0];
            p.n = shapes[sh][1];
            p.k = shapes[sh][2];
            p.batch = shapes[sh][3];
            make_problem(&p);
            /* every other case under the ozaki2 bound (w = 53: OZCRT_BITS=53 at small k) */
            ozcmp_bound bound = (sh + t) % 2 ? ozcmp_bound_ozaki2(53) : ozcmp_bound_phase22();
            run_case(&p, t == 1, t == 2, t == 3 ? -1.5 : 1.0, t >= 2 ? 0.5 : 0.0, bound);
            free_problem(&p);
            /* the same shape complex (ZGEMM: only the ozaki2 bound), op C for the transposes */
            memset(&p, 0, sizeof p);
            p.cplx = 1;
            p.transa = (t & 1) * 2;
            p.transb = (t >> 1) ? 1 : 0;
            p.m = shapes[sh][0];
            p.n = shapes[sh][1];
            p.k = shapes[sh][2];
            p.batch = shapes[sh][3];
            make_problem(&p);
            run_case(&p, t == 2, t == 1, t == 0 ? -1.5 : 1.0, t <= 1 ? 0.5 : 0.0, ozcmp_bound_ozaki2(53));
            free_problem(&p);
        }
    }
    /* the kernel applies the bound it is given: on this data the two differ */
    expect(g_oz2_distinct > 0, "some ozaki2 case counts differently from the Phase 22 bound");
    check_copy();
    printf("check_compare: %d failure%s\n", g_failures, g_failures == 1 ? "" : "s");
    return g_failures ? 1 : 0;
}
