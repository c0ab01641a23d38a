/* tests/gpu/test_oz2z_bits.c: the GPU complex ozaki2 path (oz2_gemm_run on complex descriptors) equals the CPU reference oz2_ref_zgemm bit for bit on random cases: ops N/T/C, lds, complex/real/imaginary/zero scalars in both pointer modes, every batch kind, rows 2^-600..2^600, spread exponents, parts far apart, K up to maxk with constant and sign-aligned data at the range's edge, Inf/NaN, bits 34/53/64 and random and automatic precision (a third of the cases, auto-native ones included), forced blocks and slabs, both residue engines.
 *
 *   test_oz2z_bits [cases [seed [maxdim maxk]]]
 *
 * Prints every failing case with its parameters, then "N passed, M failed";
 * exits 1 on any failure, 2 on a setup error. */
#include "crt/oz2_auto.h"
#include "crt/oz2_complex.h"
#include "gpu_util.h"
#include "kernels/oz2_gemm.h"
#include "reference/oz2zgemm.h"

#define POISON 1.2345678e300
#define MAX_BATCH 3

static int failures, cases;

enum { Z_UNIFORM, Z_NORMAL, Z_INT, Z_SPAN_COL, Z_SPAN_ELEM, Z_PARTS_APART, Z_IMAG, Z_SPREAD, Z_CONST, Z_ALIGNED,
       Z_COUNT };
static const char *const dist_name[Z_COUNT] = {"uniform", "normal", "int",    "span-col", "span-elem",
                                               "apart",   "imag",   "phi2",   "const",    "aligned"};
static int auto_cases, auto_native; /* automatic plans, and those that ran natively */

/* Element idx (complex) of an operand stored with leading dimension ld; part 0 re, 1 im. */
static double gen(int dist, size_t idx, int64_t ld, int part)
{
    switch (dist) {
    case Z_NORMAL: return rng_normal();
    case Z_INT: return (double)rng_range(-1000, 1000);
    case Z_SPAN_COL: return ldexp(rng_sym(), (int)(((int64_t)(idx / (size_t)ld) * 37) % 1201) - 600);
    case Z_SPAN_ELEM: return ldexp(rng_sym(), (int)rng_range(-600, 600));
    case Z_PARTS_APART: return part ? ldexp(rng_sym(), -70) : rng_sym();
    case Z_IMAG: return part ? rng_sym() : 0.0;
    case Z_SPREAD: return (rng_unit() - 0.5) * exp(2.0 * rng_normal());
    case Z_CONST: return 0x1.fffffffffffffp-1; /* both parts 2^w after scaling: |X| = 2 k 4^w at the edge */
    case Z_ALIGNED: return part ? -(1.0 - ldexp(rng_unit(), -40)) : 1.0 - ldexp(rng_unit(), -40);
    default: return rng_sym();
    }
}

static double scalar_part(int kind, int part)
{
    switch (kind) {
    case 0: return rng_sym();                /* complex */
    case 1: return part ? 0.0 : rng_sym();  /* real */
    case 2: return part ? rng_sym() : 0.0;  /* imaginary */
    case 3: return part ? -0.0 : 0.0;       /* zero (-0.0 im) */
    default: return part ? 0.0 : 1.0;       /* one */
    }
}

static int same_bits(const double *a, const double *b, size_t n, size_t *first)
{
    for (size_t i = 0; i < n; i++)
        if (!same_double(a[i], b[i])) {
            *first = i;
            return 0;
        }
    return 1;
}

/* One random case. big: k up to maxk with small m, n. */
static void run_case(int idx, int64_t maxdim, int64_t maxk, int big)
{
    const int ta = (int)rng_range(0, 2), tb = (int)rng_range(0, 2);
    const int64_t m = rng_range(1, big ? 20 : maxdim), n = rng_range(1, big ? 20 : maxdim);
    const int64_t k = big ? rng_range(maxk / 2, maxk) : rng_range(1, maxk);
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    const int64_t lda = ar + rng_range(0, 3), ldb = br + rng_range(0, 3), ldc = m + rng_range(0, 3);
    const int kind = (int)rng_range(0, 3); /* batch: 0 none, 1 strided, 2 pointer array, 3 strided with gaps */
    const int64_t batch = kind == 0 ? 1 : rng_range(1, MAX_BATCH);
    const size_t ia = (size_t)(lda * ac + (kind == 3 ? 5 : 0)), ib = (size_t)(ldb * bc + (kind == 3 ? 3 : 0)),
                 ic = (size_t)(ldc * n + (kind == 3 ? 7 : 0));
    int bits;
    const int bsel = (int)rng_range(0, 5);
    bits = bsel == 0 ? 34 : bsel == 1 ? 53 : bsel == 2 ? 64 : (int)rng_range(1, 76);
    int w = 0, nsplit = 0;
    if (oz2z_gemm_moduli(k, bits, &w, &nsplit) == 0)
        bits = 53;
    if (idx % 3 == 1) /* automatic precision (docs/ozaki2-complex.md): 2^-53, or 2^-B for B in 20..64 */
        bits = OZ2A_AUTO(idx % 2 ? 53 : (int)rng_range(OZ2A_B_MIN, OZ2A_B_MAX));
    const int da = big ? (int)rng_range(Z_CONST, Z_ALIGNED) : (int)rng_range(0, Z_COUNT - 1);
    const int db = big ? da : (int)rng_range(0, Z_COUNT - 1);
    const int special = !big && rng_range(0, 9) == 0;
    const int on_device = (int)rng_range(0, 1);
    const int akind = (int)rng_range(0, on_device ? 4 : 4), bkind = (int)rng_range(0, 4);
    const int forced = (int)rng_range(0, 3); /* 0: whole call; 1: small budget (blocks, slabs); 2: portable engine */

    double *A = malloc(2 * ia * (size_t)batch * sizeof(double)), *B = malloc(2 * ib * (size_t)batch * sizeof(double));
    double *C = malloc(2 * ic * (size_t)batch * sizeof(double)), *R = malloc(2 * ic * (size_t)batch * sizeof(double));
    double *G = malloc(2 * ic * (size_t)batch * sizeof(double));
    if (!A || !B || !C || !R || !G) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < ia * (size_t)batch; i++)
        for (int p = 0; p < 2; p++)
            A[2 * i + p] = gen(da, i % ia, lda, p);
    for (size_t i = 0; i < ib * (size_t)batch; i++)
        for (int p = 0; p < 2; p++)
            B[2 * i + p] = gen(db, i % ib, ldb, p);
    if (special) { /* an Inf or NaN in one part of one element */
        const int64_t b = rng_range(0, batch - 1);
        double *X = rng_range(0, 1) ? A + 2 * (size_t)b * ia : B + 2 * (size_t)b * ib;
        const size_t lim = X >= B && X < B + 2 * ib * (size_t)batch ? ib : ia;
        X[2 * (size_t)rng_range(0, (int64_t)lim - 1) + rng_range(0, 1)] = rng_range(0, 1) ? INFINITY : NAN;
    }
    const double alpha[2] = {scalar_part(akind, 0), scalar_part(akind, 1)};
    const double beta[2] = {scalar_part(bkind, 0), scalar_part(bkind, 1)};
    const int beta0 = beta[0] == 0.0 && beta[1] == 0.0;
    for (size_t i = 0; i < 2 * ic * (size_t)batch; i++)
        C[i] = beta0 ? NAN : rng_sym(); /* beta == 0: C is not read */
    memcpy(R, C, 2 * ic * (size_t)batch * sizeof(double));
    const oz_cplx za = {alpha[0], alpha[1]}, zb = {beta[0], beta[1]};
    int rrc = 0;
    for (int64_t b = 0; b < batch && rrc == 0; b++)
        rrc = oz2_ref_zgemm_pm((oz_op)ta, (oz_op)tb, m, n, k, za, A + 2 * (size_t)b * ia, lda, B + 2 * (size_t)b * ib,
                               ldb, zb, R + 2 * (size_t)b * ic, ldc, bits, on_device);
    if (rrc != 0) {
        fprintf(stderr, "case %d: reference returned %d\n", idx, rrc);
        exit(2);
    }
    if (oz2a_is_auto(bits)) { /* the plan of item 0, for the report */
        if (oz2z_ref_auto_plan((oz_op)ta, (oz_op)tb, m, n, k, A, lda, B, ldb, oz2a_target(bits), &nsplit, &w, NULL) != 0) {
            fprintf(stderr, "case %d: the reference's plan refused\n", idx);
            exit(2);
        }
        auto_cases++;
        auto_native += nsplit == 0;
    }

    double *dA = dev_upload(A, 2 * ia * (size_t)batch * sizeof(double));
    double *dB = dev_upload(B, 2 * ib * (size_t)batch * sizeof(double));
    double *dC = dev_upload(C, 2 * ic * (size_t)batch * sizeof(double));
    double *dS = NULL;
    CUDA_CHECK(cudaMalloc((void **)&dS, 4 * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(dS, alpha, 2 * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dS + 2, beta, 2 * sizeof(double), cudaMemcpyHostToDevice));
    double **ptrs = NULL;
    double *hp[3 * MAX_BATCH];
    if (kind == 2) {
        for (int64_t b = 0; b < batch; b++) {
            hp[b] = dA + 2 * (size_t)b * ia;
            hp[MAX_BATCH + b] = dB + 2 * (size_t)b * ib;
            hp[2 * MAX_BATCH + b] = dC + 2 * (size_t)b * ic;
        }
        ptrs = dev_upload(hp, sizeof hp);
    }
    oz_gemm_desc d = {0};
    d.transa = ta;
    d.transb = tb;
    d.m = m;
    d.n = n;
    d.k = k;
    d.A = dA;
    d.lda = lda;
    d.strideA = (int64_t)ia;
    d.B = dB;
    d.ldb = ldb;
    d.strideB = (int64_t)ib;
    d.C = dC;
    d.ldc = ldc;
    d.strideC = (int64_t)ic;
    if (kind == 2) {
        d.Aarray = (const double *const *)ptrs;
        d.Barray = (const double *const *)(ptrs + MAX_BATCH);
        d.Carray = (double *const *)(ptrs + 2 * MAX_BATCH);
    }
    d.batch = batch;
    d.alpha = on_device ? dS : alpha;
    d.beta = on_device ? dS + 2 : beta;
    d.scalars_on_device = on_device;
    d.elem = OZ_ELEM_COMPLEX;

    oz2_gemm_force_budget(forced == 1 ? (size_t)rng_range(1, 4) << 20 : 0);
    oz2_gemm_force_engine(forced == 2 ? 1 : 0);
    size_t sizes[OZ_GEMM_WS_SIZES];
    oz2_gemm_workspace_sizes(&d, bits, (size_t)1 << 34, sizes);
    const size_t ws_bytes = forced == 1 ? sizes[3] : sizes[0];
    void *ws = NULL;
    CUDA_CHECK(cudaMalloc(&ws, ws_bytes ? ws_bytes : 8));
    CUDA_CHECK(cudaMemset(ws, 0xA5, ws_bytes ? ws_bytes : 8)); /* poisoned: every byte read is written first */
    const int rc = oz2_gemm_run(&d, bits, ws, ws_bytes, 0);
    const cudaError_t sync = cudaDeviceSynchronize();
    oz2_gemm_force_budget(0);
    oz2_gemm_force_engine(0);
    cases++;
    size_t first = 0;
    int ok = rc == 0 && sync == cudaSuccess;
    if (ok) {
        dev_download(G, dC, 2 * ic * (size_t)batch * sizeof(double));
        ok = same_bits(G, R, 2 * ic * (size_t)batch, &first);
    }
    if (!ok) {
        failures++;
        const size_t e = first / 2;
        fprintf(stderr,
                "FAIL case %d: op %d%d m %lld n %lld k %lld lda %lld ldb %lld ldc %lld batch %lld kind %d bits %d "
                "(N' %d w %d) dist %s/%s special %d alpha %s (%g, %g) beta (%g, %g) forced %d ws %zu rc %d sync %s\n",
                idx, ta, tb, (long long)m, (long long)n, (long long)k, (long long)lda, (long long)ldb, (long long)ldc,
                (long long)batch, kind, bits, nsplit, w, dist_name[da], dist_name[db], special,
                on_device ? "device" : "host", alpha[0], alpha[1], beta[0], beta[1], forced, ws_bytes, rc,
                cudaGetErrorString(sync));
        if (rc == 0 && sync == cudaSuccess)
            fprintf(stderr, "  first difference: item %zu element (%zu, %zu) part %zu: gpu %a ref %a\n",
                    e / ic, (e % ic) % (size_t)ldc, (e % ic) / (size_t)ldc, first % 2, G[first], R[first]);
        if (sync != cudaSuccess)
            exit(2);
    }
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    CUDA_CHECK(cudaFree(dS));
    if (ptrs)
        CUDA_CHECK(cudaFree(ptrs));
    free(A);
    free(B);
    free(C);
    free(R);
    free(G);
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 120;
    const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x2a2a2a2aULL;
    const int64_t maxdim = argc > 3 ? atoll(argv[3]) : 150, maxk = argc > 4 ? atoll(argv[4]) : 300;
    rng_state = seed ? seed : 1;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        fprintf(stderr, "no CUDA device\n");
        return 2;
    }
    printf("test_oz2z_bits: %d cases, seed 0x%llx, maxdim %lld, maxk %lld\n", n, (unsigned long long)seed,
           (long long)maxdim, (long long)maxk);
    for (int i = 0; i < n; i++)
        run_case(i, maxdim, maxk, 0);
    /* long K at the range's edge: constant and sign-aligned data, k up to 100000 */
    for (int i = 0; i < (n + 9) / 10; i++)
        run_case(n + i, 20, i % 2 ? 100000 : 20000, 1);
    printf("test_oz2z_bits: %d automatic plans (%d of them native)\n", auto_cases, auto_native);
    printf("test_oz2z_bits: %d passed, %d failed\n", cases - failures, failures);
    return failures ? 1 : 0;
}
