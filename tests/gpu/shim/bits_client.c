/* tests/gpu/shim/bits_client.c: a cuBLAS program whose DGEMMs are all emulated under the shim; prints a checksum of each result's bits.
 *
 * For life.sh ptx-jit: run under the shim twice, as built and with
 * CUDA_FORCE_PTX_JIT=1 (the driver then ignores the machine code and
 * compiles the embedded PTX, as on a GPU newer than the build); the
 * checksums must be the same. No call goes to cuBLAS's own kernels (every
 * shape is above the thresholds life.sh sets, alpha != 0), so forced JIT
 * does not depend on cuBLAS carrying PTX. Each result is also checked
 * against a host FP64 loop within a loose Phase 22 bound (2^-28 k |a|max |b|max
 * per element), so a wrong result cannot pass as "the same bits twice".
 * Prints "case ... bits=HEX" lines, then PASS/FAIL; exit 0 only if all hold. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "tests/gpu/gpu_util.h"

typedef struct bcase {
    cublasOperation_t ta, tb;
    int m, n, k, batch;
    double alpha, beta;
} bcase;

/* One case on h; returns the number of elements outside the bound, -1 when the call failed. */
static long run(cublasHandle_t h, const bcase *c, uint64_t *bits)
{
    int ra = c->ta == CUBLAS_OP_N ? c->m : c->k, ca = c->ta == CUBLAS_OP_N ? c->k : c->m;
    int rb = c->tb == CUBLAS_OP_N ? c->k : c->n, cb = c->tb == CUBLAS_OP_N ? c->n : c->k;
    size_t sa = (size_t)ra * ca, sb = (size_t)rb * cb, sc = (size_t)c->m * c->n;
    double *A = malloc(sa * c->batch * sizeof *A), *B = malloc(sb * c->batch * sizeof *B);
    double *C0 = malloc(sc * c->batch * sizeof *C0), *C = malloc(sc * c->batch * sizeof *C);
    if (!A || !B || !C0 || !C) {
        fprintf(stderr, "out of host memory\n");
        exit(2);
    }
    for (size_t i = 0; i < sa * c->batch; i++)
        A[i] = rng_dist((int)(i % DIST_COUNT));
    for (size_t i = 0; i < sb * c->batch; i++)
        B[i] = rng_sym();
    for (size_t i = 0; i < sc * c->batch; i++)
        C0[i] = rng_sym();
    double *dA = dev_upload(A, sa * c->batch * sizeof *A), *dB = dev_upload(B, sb * c->batch * sizeof *B);
    double *dC = dev_upload(C0, sc * c->batch * sizeof *C0);
    cublasStatus_t st = c->batch == 1
        ? cublasDgemm_v2(h, c->ta, c->tb, c->m, c->n, c->k, &c->alpha, dA, ra, dB, rb, &c->beta, dC, c->m)
        : cublasDgemmStridedBatched(h, c->ta, c->tb, c->m, c->n, c->k, &c->alpha, dA, ra, (long long)sa, dB, rb,
                                    (long long)sb, &c->beta, dC, c->m, (long long)sc, c->batch);
    CUDA_CHECK(cudaDeviceSynchronize());
    long bad = -1;
    if (st == CUBLAS_STATUS_SUCCESS) {
        dev_download(C, dC, sc * c->batch * sizeof *C);
        *bits = hash_bytes(C, sc * c->batch * sizeof *C);
        bad = 0;
        for (int b = 0; b < c->batch; b++)
            for (int j = 0; j < c->n; j++)
                for (int i = 0; i < c->m; i++) {
                    double dot = 0, amax = 0, bmax = 0;
                    for (int l = 0; l < c->k; l++) {
                        double a = c->ta == CUBLAS_OP_N ? A[b * sa + (size_t)l * ra + i] : A[b * sa + (size_t)i * ra + l];
                        double x = c->tb == CUBLAS_OP_N ? B[b * sb + (size_t)j * rb + l] : B[b * sb + (size_t)l * rb + j];
                        dot += a * x;
                        amax = fmax(amax, fabs(a));
                        bmax = fmax(bmax, fabs(x));
                    }
                    double ref = c->alpha * dot + c->beta * C0[b * sc + (size_t)j * c->m + i];
                    double tol = 0x1p-28 * c->k * fabs(c->alpha) * amax * bmax + 0x1p-50 * fabs(ref);
                    if (!(fabs(C[b * sc + (size_t)j * c->m + i] - ref) <= tol))
                        bad++;
                }
    }
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    free(A);
    free(B);
    free(C0);
    free(C);
    if (st != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "cuBLAS status %d\n", (int)st);
    return bad;
}

int main(void)
{
    static const bcase cases[] = {
        {CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, 1, 1.0, 0.0},
        {CUBLAS_OP_T, CUBLAS_OP_N, 300, 200, 517, 1, -2.0, 0.5},
        {CUBLAS_OP_N, CUBLAS_OP_T, 129, 1000, 130, 1, 0.25, 1.0},
        {CUBLAS_OP_T, CUBLAS_OP_T, 512, 384, 4500, 1, 1.0, -1.0},
        {CUBLAS_OP_N, CUBLAS_OP_N, 192, 160, 224, 6, 1.0, 0.5},
    };
    cublasHandle_t h;
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "FAIL: cublasCreate_v2\n");
        return 2;
    }
    int failed = 0, n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; i++) {
        uint64_t bits = 0;
        long bad = run(h, &cases[i], &bits);
        const bcase *c = &cases[i];
        printf("case %d %c%c m=%d n=%d k=%d batch=%d: %s bits=%016llx\n", i, "NTC"[c->ta], "NTC"[c->tb], c->m, c->n,
               c->k, c->batch, bad == 0 ? "within bound" : bad < 0 ? "CALL FAILED" : "OUTSIDE BOUND",
               (unsigned long long)bits);
        failed += bad != 0;
    }
    cublasDestroy_v2(h);
    printf("%s: bits_client %d of %d cases\n", failed ? "FAIL" : "PASS", n - failed, n);
    return failed ? 1 : 0;
}
