/* tests/gpu/shim/legacy_client.c: a program on cuBLAS's legacy handle-less API (cublas.h), as old C codes and Fortran bindings call it.
 *
 * cublasInit, a non-blocking stream through cublasSetKernelStream,
 * cublasDgemm with scalars by value for three operation pairs (the letters
 * in either case), each result read back on that stream only (a product
 * enqueued elsewhere would race the copy) and checked against a CPU
 * reference: |C - ref| <= tol (|alpha| sum |a||b| + |beta||c|), tol from
 * OZCRT_MODE as the shim runs it (phase22: 2^-28; ozaki2 at the default
 * bits, or no shim: 1e-12). Then a call with a bad letter: cuBLAS's legacy
 * error state must say INVALID_VALUE, and C must be untouched. modes.sh legacy
 * runs it plainly and under the shim, and reads the shim's stats. */
#include <cublas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/gpu/gpu_util.h"

static int g_fail;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        g_fail = 1;
    }
}

/* op(X)(i, l) of a column-major X with leading dimension ld */
static double at(const double *X, int ld, char op, int i, int l)
{
    return op == 'N' || op == 'n' ? X[(size_t)l * ld + i] : X[(size_t)i * ld + l];
}

int main(void)
{
    const int m = 768, n = 640, k = 700;
    const double alpha = 1.25, beta = -0.5;
    const char *mode = getenv("OZCRT_MODE");
    const int shim = getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "libozcrt");
    const double tol = shim && (!mode || !mode[0] || strcmp(mode, "phase22") == 0) ? 0x1p-28 : 1e-12;
    if (cublasInit() != CUBLAS_STATUS_SUCCESS) {
        printf("FAIL: cublasInit\n");
        return 1;
    }
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    check(cublasSetKernelStream(s) == CUBLAS_STATUS_SUCCESS, "cublasSetKernelStream");
    const int ld = 800; /* >= m, n, k: every operand fits with any operations */
    const size_t sz = (size_t)ld * 800;
    double *hA = malloc(sz * sizeof(double)), *hB = malloc(sz * sizeof(double)), *hC = malloc(sz * sizeof(double));
    double *out = malloc(sz * sizeof(double));
    if (!hA || !hB || !hC || !out)
        return 2;
    for (size_t i = 0; i < sz; i++) {
        hA[i] = rng_sym();
        hB[i] = rng_sym();
        hC[i] = rng_sym();
    }
    double *dA = NULL, *dB = NULL, *dC = NULL;
    CUDA_CHECK(cudaMalloc((void **)&dA, sz * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&dB, sz * sizeof(double)));
    CUDA_CHECK(cudaMalloc((void **)&dC, sz * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(dA, hA, sz * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, hB, sz * sizeof(double), cudaMemcpyHostToDevice));
    const char ops[3][2] = {{'N', 'T'}, {'t', 'n'}, {'n', 'N'}};
    for (int c = 0; c < 3; c++) {
        const char ta = ops[c][0], tb = ops[c][1];
        CUDA_CHECK(cudaMemcpy(dC, hC, sz * sizeof(double), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaDeviceSynchronize());
        cublasDgemm(ta, tb, m, n, k, alpha, dA, ld, dB, ld, beta, dC, ld);
        check(cublasGetError() == CUBLAS_STATUS_SUCCESS, "cublasDgemm's error state");
        CUDA_CHECK(cudaMemcpyAsync(out, dC, sz * sizeof(double), cudaMemcpyDeviceToHost, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        double worst = 0.0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double ref = 0.0, mag = 0.0;
                for (int l = 0; l < k; l++) {
                    const double p = at(hA, ld, ta, i, l) * at(hB, ld, tb, l, j);
                    ref += p;
                    mag += fabs(p);
                }
                const double cij = hC[(size_t)j * ld + i];
                const double e = fabs(out[(size_t)j * ld + i] - (alpha * ref + beta * cij)) /
                                 (fabs(alpha) * mag + fabs(beta) * fabs(cij));
                worst = e > worst || e != e ? e : worst;
            }
        for (size_t i = 0; i < sz; i++) /* outside the m x n block: untouched */
            if ((int)(i % ld) >= m || (int)(i / ld) >= n)
                if (out[i] != hC[i]) {
                    check(0, "C outside m x n changed");
                    break;
                }
        printf("cublasDgemm('%c', '%c', %d, %d, %d): max relative error %.3e (tolerance %.1e)\n", ta, tb, m, n, k,
               worst, tol);
        check(worst <= tol, "result within the tolerance");
    }
    /* a bad letter: cuBLAS's own error, C untouched */
    CUDA_CHECK(cudaMemcpy(dC, hC, sz * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
    cublasDgemm('x', 'N', m, n, k, alpha, dA, ld, dB, ld, beta, dC, ld);
    check(cublasGetError() == CUBLAS_STATUS_INVALID_VALUE, "a bad letter sets INVALID_VALUE");
    CUDA_CHECK(cudaMemcpyAsync(out, dC, sz * sizeof(double), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    check(memcmp(out, hC, sz * sizeof(double)) == 0, "C untouched by the bad call");
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    CUDA_CHECK(cudaStreamDestroy(s));
    check(cublasShutdown() == CUBLAS_STATUS_SUCCESS, "cublasShutdown");
    free(hA), free(hB), free(hC), free(out);
    printf("legacy_client: %s\n", g_fail ? "failed" : "passed");
    return g_fail;
}
