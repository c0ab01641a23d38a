/* tests/gpu/compare/ab_client.c: an unmodified cuBLAS program for the shadow-mode checks: a few DGEMMs (and with `complex`, ZGEMMs), checked against the CPU.
 *
 * usage: ab_client [maxabs|checksums|results] [complex]
 * "complex" adds complex calls after the real ones (cublasZgemm_v2 twice
 * with op C, cublasGemmEx on CUDA_C_64F, cublasZgemmStridedBatched,
 * cublasZgemmBatched: four more call sites); X is
 * then the largest complex modulus |C - C_cpu| and the checksum covers both
 * parts. Per call it prints one line
 *   call ENTRY OPS M N K BATCH sum S first C00 last CMN     (default: results)
 *   call ENTRY OPS M N K BATCH maxabs X                     (maxabs)
 *   call ENTRY OPS M N K BATCH checksum 0x...               (checksums)
 * with X = max |C - C_cpu| (C_cpu in long double: independent of both GPU
 * paths) and the checksum FNV-1a of C's m x n bits, so run.sh can check that
 * OZCRT_COMPARE_RESULT=native gives the bits of a run without the shim.
 * Links only cuBLAS and cudart. */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                                   \
    do {                                                                           \
        int e_ = (int)(call);                                                      \
        if (e_ != 0) {                                                             \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, e_); \
            exit(2);                                                               \
        }                                                                          \
    } while (0)

static uint64_t g_rng = 88172645463325252ull;
static int g_mode; /* 0 results, 1 maxabs, 2 checksums */

static double urand(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (double)(g_rng >> 11) * 0x1p-52 - 1.0;
}

typedef enum { SINGLE, GEMMEX, STRIDED, ARRAY } kind;

/* Element (r, c) of op(M) as a long double pair (es 2: complex, op 2 conjugates). */
static void op_at(int es, int op, const double *M, int ld, int r, int c, long double *re, long double *im)
{
    const double *p = op ? M + (size_t)es * (c + (size_t)r * ld) : M + (size_t)es * (r + (size_t)c * ld);
    *re = p[0];
    *im = es == 2 ? (op == 2 ? -(long double)p[1] : p[1]) : 0.0L;
}

/* One call; ta, tb 0 N, 1 T, 2 C (complex calls); alpha and beta (re, im), the real calls' im 0;
 * cplx: the Z entry point of the kind, matrices of cuDoubleComplex (es 2 doubles an element). */
static void one_call(cublasHandle_t h, kind kd, const char *entry, int ta, int tb, int m, int n, int k, int batch,
                     const double alpha[2], const double beta[2], int cplx)
{
    const int es = cplx ? 2 : 1;
    int lda = (ta ? k : m) + 1, ldb = (tb ? n : k) + 3, ldc = m + 2;
    long long sA = (long long)lda * (ta ? m : k), sB = (long long)ldb * (tb ? k : n), sC = (long long)ldc * n;
    size_t na = (size_t)(es * sA * batch), nb = (size_t)(es * sB * batch), nc = (size_t)(es * sC * batch);
    double *hA = malloc(na * sizeof(double)), *hB = malloc(nb * sizeof(double)), *hC = malloc(nc * sizeof(double));
    double *out = malloc(nc * sizeof(double));
    for (size_t i = 0; i < na; i++) hA[i] = urand();
    for (size_t i = 0; i < nb; i++) hB[i] = urand();
    for (size_t i = 0; i < nc; i++) hC[i] = urand();
    double *A, *B, *C, **ptrs;
    CK(cudaMalloc((void **)&A, na * sizeof(double)));
    CK(cudaMalloc((void **)&B, nb * sizeof(double)));
    CK(cudaMalloc((void **)&C, nc * sizeof(double)));
    CK(cudaMalloc((void **)&ptrs, 3 * (size_t)batch * sizeof(double *)));
    CK(cudaMemcpy(A, hA, na * sizeof(double), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(B, hB, nb * sizeof(double), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(C, hC, nc * sizeof(double), cudaMemcpyHostToDevice));
    double *hp[3 * 64];
    for (int b = 0; b < batch; b++) {
        hp[b] = A + es * b * sA;
        hp[batch + b] = B + es * b * sB;
        hp[2 * batch + b] = C + es * b * sC;
    }
    CK(cudaMemcpy(ptrs, hp, 3 * (size_t)batch * sizeof(double *), cudaMemcpyHostToDevice));
    static const cublasOperation_t ops[3] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
    cublasOperation_t oa = ops[ta], ob = ops[tb];
    typedef cuDoubleComplex Z;
    const Z za = {alpha[0], alpha[1]}, zb = {beta[0], beta[1]};
    switch (cplx ? kd + 4 : kd) {
    case SINGLE:
        CK(cublasDgemm(h, oa, ob, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
        break;
    case GEMMEX:
        CK(cublasGemmEx(h, oa, ob, m, n, k, alpha, A, CUDA_R_64F, lda, B, CUDA_R_64F, ldb, beta, C, CUDA_R_64F, ldc,
                        CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
        break;
    case STRIDED:
        CK(cublasDgemmStridedBatched(h, oa, ob, m, n, k, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC, batch));
        break;
    case ARRAY:
        CK(cublasDgemmBatched(h, oa, ob, m, n, k, alpha, (const double *const *)ptrs, lda,
                              (const double *const *)(ptrs + batch), ldb, beta, ptrs + 2 * batch, ldc, batch));
        break;
    case 4 + SINGLE:
        CK(cublasZgemm(h, oa, ob, m, n, k, &za, (const Z *)A, lda, (const Z *)B, ldb, &zb, (Z *)C, ldc));
        break;
    case 4 + GEMMEX:
        CK(cublasGemmEx(h, oa, ob, m, n, k, &za, A, CUDA_C_64F, lda, B, CUDA_C_64F, ldb, &zb, C, CUDA_C_64F, ldc,
                        CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
        break;
    case 4 + STRIDED:
        CK(cublasZgemmStridedBatched(h, oa, ob, m, n, k, &za, (const Z *)A, lda, sA, (const Z *)B, ldb, sB, &zb,
                                     (Z *)C, ldc, sC, batch));
        break;
    case 4 + ARRAY:
        CK(cublasZgemmBatched(h, oa, ob, m, n, k, &za, (const Z *const *)ptrs, lda, (const Z *const *)(ptrs + batch),
                              ldb, &zb, (Z *const *)(ptrs + 2 * batch), ldc, batch));
        break;
    }
    CK(cudaMemcpy(out, C, nc * sizeof(double), cudaMemcpyDeviceToHost));
    double maxabs = 0.0;
    uint64_t sum = 1469598103934665603ull;
    for (int b = 0; b < batch; b++) {
        const double *a = hA + es * b * sA, *bb = hB + es * b * sB;
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < m; i++) {
                long double pr = 0.0L, pi = 0.0L;
                for (int l = 0; l < k; l++) {
                    long double xr, xi, yr, yi;
                    op_at(es, ta, a, lda, i, l, &xr, &xi);
                    op_at(es, tb, bb, ldb, l, j, &yr, &yi);
                    pr += xr * yr - xi * yi;
                    pi += xr * yi + xi * yr;
                }
                size_t at = (size_t)es * ((size_t)(b * sC) + i + (size_t)j * ldc);
                const long double cr = hC[at], ci = es == 2 ? hC[at + 1] : 0.0L;
                const long double want_re = alpha[0] * pr - alpha[1] * pi + beta[0] * cr - beta[1] * ci;
                const long double want_im = alpha[0] * pi + alpha[1] * pr + beta[0] * ci + beta[1] * cr;
                const long double dr = (long double)out[at] - want_re;
                const long double di = es == 2 ? (long double)out[at + 1] - want_im : 0.0L;
                double d = (double)sqrtl(dr * dr + di * di);
                if (d > maxabs)
                    maxabs = d;
                for (int q = 0; q < es; q++) {
                    uint64_t bits;
                    memcpy(&bits, &out[at + q], sizeof bits);
                    for (int by = 0; by < 8; by++)
                        sum = (sum ^ ((bits >> (8 * by)) & 0xff)) * 1099511628211ull;
                }
            }
        }
    }
    printf("call %s %c%c %d %d %d %d ", entry, "NTC"[ta], "NTC"[tb], m, n, k, batch);
    if (g_mode == 1) {
        printf("maxabs %.17g\n", maxabs);
    } else if (g_mode == 2) {
        printf("checksum 0x%016llx\n", (unsigned long long)sum);
    } else {
        double total = 0.0;
        for (int b = 0; b < batch; b++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < m; i++)
                    for (int q = 0; q < es; q++)
                        total += out[(size_t)es * ((size_t)(b * sC) + i + (size_t)j * ldc) + q];
        printf("sum %.15e first %.15e last %.15e\n", total, out[0],
               out[(size_t)es * ((size_t)((batch - 1) * sC) + (m - 1) + (size_t)(n - 1) * ldc)]);
    }
    free(hA); free(hB); free(hC); free(out);
    CK(cudaFree(A)); CK(cudaFree(B)); CK(cudaFree(C)); CK(cudaFree(ptrs));
}

int main(int argc, char **argv)
{
    g_mode = argc < 2                       ? 0
             : !strcmp(argv[1], "results")   ? 0
             : !strcmp(argv[1], "maxabs")    ? 1
             : !strcmp(argv[1], "checksums") ? 2
                                             : -1;
    const int with_complex = argc > 2 && !strcmp(argv[2], "complex");
    if (g_mode < 0 || (argc > 2 && !with_complex) || argc > 3) {
        fprintf(stderr, "usage: %s [maxabs|checksums|results] [complex]\n", argv[0]);
        return 2;
    }
#define R(x) ((const double[2]){(x), 0.0})
    cublasHandle_t h;
    CK(cublasCreate(&h));
    for (int rep = 0; rep < 3; rep++)
        one_call(h, SINGLE, "cublasDgemm_v2", 0, 0, 300, 200, 500, 1, R(1.0), R(0.0), 0);
    one_call(h, SINGLE, "cublasDgemm_v2", 1, 0, 256, 128, 4100, 1, R(1.0), R(0.5), 0);
    one_call(h, GEMMEX, "cublasGemmEx", 0, 1, 200, 210, 220, 1, R(-1.0), R(0.0), 0);
    for (int rep = 0; rep < 2; rep++)
        one_call(h, STRIDED, "cublasDgemmStridedBatched", 0, 1, 128, 160, 192, 4, R(1.0), R(1.0), 0);
    one_call(h, ARRAY, "cublasDgemmBatched", 1, 1, 144, 130, 150, 3, R(0.5), R(0.25), 0);
    if (with_complex) { /* ZGEMM: emulated by ozaki2 at a fixed OZCRT_BITS only */
        for (int rep = 0; rep < 2; rep++)
            one_call(h, SINGLE, "cublasZgemm_v2", 2, 0, 240, 180, 400, 1, (const double[2]){1.0, -0.5}, R(0.0), 1);
        one_call(h, GEMMEX, "cublasGemmEx", 0, 1, 120, 130, 140, 1, R(1.0), (const double[2]){-0.5, 0.25}, 1);
        one_call(h, STRIDED, "cublasZgemmStridedBatched", 0, 2, 96, 112, 130, 3, (const double[2]){0.5, 0.5},
                 (const double[2]){0.0, 1.0}, 1);
        one_call(h, ARRAY, "cublasZgemmBatched", 1, 1, 100, 90, 80, 2, (const double[2]){0.0, 1.0},
                 (const double[2]){0.25, 0.0}, 1);
    }
#undef R
    CK(cublasDestroy(h));
    return 0;
}
