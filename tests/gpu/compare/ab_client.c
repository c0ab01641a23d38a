/* tests/gpu/compare/ab_client.c: an unmodified cuBLAS program for the shadow-mode checks: a few DGEMMs, checked against the CPU.
 *
 * usage: ab_client [maxabs|checksums]
 * Per call it prints one line
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

static void one_call(cublasHandle_t h, kind kd, const char *entry, int ta, int tb, int m, int n, int k, int batch,
                     double alpha, double beta)
{
    int lda = (ta ? k : m) + 1, ldb = (tb ? n : k) + 3, ldc = m + 2;
    long long sA = (long long)lda * (ta ? m : k), sB = (long long)ldb * (tb ? k : n), sC = (long long)ldc * n;
    size_t na = (size_t)(sA * batch), nb = (size_t)(sB * batch), nc = (size_t)(sC * batch);
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
        hp[b] = A + b * sA;
        hp[batch + b] = B + b * sB;
        hp[2 * batch + b] = C + b * sC;
    }
    CK(cudaMemcpy(ptrs, hp, 3 * (size_t)batch * sizeof(double *), cudaMemcpyHostToDevice));
    cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    switch (kd) {
    case SINGLE:
        CK(cublasDgemm(h, oa, ob, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
        break;
    case GEMMEX:
        CK(cublasGemmEx(h, oa, ob, m, n, k, &alpha, A, CUDA_R_64F, lda, B, CUDA_R_64F, ldb, &beta, C, CUDA_R_64F, ldc,
                        CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
        break;
    case STRIDED:
        CK(cublasDgemmStridedBatched(h, oa, ob, m, n, k, &alpha, A, lda, sA, B, ldb, sB, &beta, C, ldc, sC, batch));
        break;
    case ARRAY:
        CK(cublasDgemmBatched(h, oa, ob, m, n, k, &alpha, (const double *const *)ptrs, lda,
                              (const double *const *)(ptrs + batch), ldb, &beta, ptrs + 2 * batch, ldc, batch));
        break;
    }
    CK(cudaMemcpy(out, C, nc * sizeof(double), cudaMemcpyDeviceToHost));
    double maxabs = 0.0;
    uint64_t sum = 1469598103934665603ull;
    for (int b = 0; b < batch; b++) {
        const double *a = hA + b * sA, *bb = hB + b * sB;
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < m; i++) {
                long double acc = 0.0L;
                for (int l = 0; l < k; l++) {
                    double x = ta ? a[l + (size_t)i * lda] : a[i + (size_t)l * lda];
                    double y = tb ? bb[j + (size_t)l * ldb] : bb[l + (size_t)j * ldb];
                    acc += (long double)x * y;
                }
                size_t at = (size_t)(b * sC) + i + (size_t)j * ldc;
                long double want = (long double)alpha * acc + (long double)beta * hC[at];
                double d = fabs((double)((long double)out[at] - want));
                if (d > maxabs)
                    maxabs = d;
                uint64_t bits;
                memcpy(&bits, &out[at], sizeof bits);
                for (int by = 0; by < 8; by++)
                    sum = (sum ^ ((bits >> (8 * by)) & 0xff)) * 1099511628211ull;
            }
        }
    }
    printf("call %s %c%c %d %d %d %d ", entry, ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, batch);
    if (g_mode == 1) {
        printf("maxabs %.17g\n", maxabs);
    } else if (g_mode == 2) {
        printf("checksum 0x%016llx\n", (unsigned long long)sum);
    } else {
        double total = 0.0;
        for (int b = 0; b < batch; b++)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < m; i++)
                    total += out[(size_t)(b * sC) + i + (size_t)j * ldc];
        printf("sum %.15e first %.15e last %.15e\n", total, out[0], out[(size_t)((batch - 1) * sC) + (m - 1) + (size_t)(n - 1) * ldc]);
    }
    free(hA); free(hB); free(hC); free(out);
    CK(cudaFree(A)); CK(cudaFree(B)); CK(cudaFree(C)); CK(cudaFree(ptrs));
}

int main(int argc, char **argv)
{
    g_mode = argc < 2 ? 0 : !strcmp(argv[1], "maxabs") ? 1 : !strcmp(argv[1], "checksums") ? 2 : -1;
    if (g_mode < 0) {
        fprintf(stderr, "usage: %s [maxabs|checksums]\n", argv[0]);
        return 2;
    }
    cublasHandle_t h;
    CK(cublasCreate(&h));
    for (int rep = 0; rep < 3; rep++)
        one_call(h, SINGLE, "cublasDgemm_v2", 0, 0, 300, 200, 500, 1, 1.0, 0.0);
    one_call(h, SINGLE, "cublasDgemm_v2", 1, 0, 256, 128, 4100, 1, 1.0, 0.5);
    one_call(h, GEMMEX, "cublasGemmEx", 0, 1, 200, 210, 220, 1, -1.0, 0.0);
    for (int rep = 0; rep < 2; rep++)
        one_call(h, STRIDED, "cublasDgemmStridedBatched", 0, 1, 128, 160, 192, 4, 1.0, 1.0);
    one_call(h, ARRAY, "cublasDgemmBatched", 1, 1, 144, 130, 150, 3, 0.5, 0.25);
    CK(cublasDestroy(h));
    return 0;
}
