/* tests/gpu/shim/time_dgemm.c: an ordinary cuBLAS program that times cublasDgemm_v2, or with --complex cublasZgemm_v2 (sustained, CUDA events, the median of 11 groups of calls); run plain and under the shim to get the user's speed-up. */
#include <math.h>

#include "shim_util.h"

/* An element: U(-1,1), or with spread phi > 0 (U - 1/2) exp(phi N(0,1)) (N by Box-Muller). */
static double element(double phi)
{
    if (phi <= 0.0)
        return rng_sym();
    const double u = rng_unit(), v = rng_unit(), w = rng_unit();
    return (u - 0.5) * exp(phi * sqrt(-2.0 * log(1.0 - v)) * cos(6.283185307179586 * w));
}

/* One call: C = A B, m x n x k, column-major, lds the rows; complex: the
 * doubles are interleaved re/im pairs. */
static cublasStatus_t gemm(cublasHandle_t h, int complex_, long long m, long long n, long long k, const double *A,
                           const double *B, double *C)
{
    if (complex_) {
        const cuDoubleComplex one = {1.0, 0.0}, zero = {0.0, 0.0};
        return cublasZgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &one, (const cuDoubleComplex *)A,
                           (int)m, (const cuDoubleComplex *)B, (int)k, &zero, (cuDoubleComplex *)C, (int)m);
    }
    const double one = 1.0, zero = 0.0;
    return cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &one, A, (int)m, B, (int)k, &zero, C, (int)m);
}

/* usage: time_dgemm [--complex] [--phi X] SHAPE... (SHAPE: n or mxnxk; --phi: spread data); prints "shape ms TFLOPS checksum" per
 * shape (TFLOPS: 2 mnk real or 8 mnk complex flops a call) */
int main(int argc, char **argv)
{
    rng_state = 0x853c49e6748fea9bULL; /* the data (and checksums) of the recorded runs */
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
        return 2;
    int a0 = 1, cx = 0;
    double phi = 0.0;
    for (;;) {
        if (a0 < argc && strcmp(argv[a0], "--complex") == 0) {
            cx = 1;
            a0++;
        } else if (a0 + 1 < argc && strcmp(argv[a0], "--phi") == 0) {
            phi = atof(argv[a0 + 1]);
            a0 += 2;
        } else {
            break;
        }
    }
    const size_t es = cx ? 2 : 1; /* doubles an element */
    for (int a = a0; a < argc; a++) {
        long long m = 0, n = 0, k = 0;
        if (sscanf(argv[a], "%lldx%lldx%lld", &m, &n, &k) != 3) {
            if (sscanf(argv[a], "%lld", &m) != 1)
                return 2;
            n = k = m;
        }
        size_t na = es * (size_t)(m * k), nb = es * (size_t)(k * n), nc = es * (size_t)(m * n);
        double *H = malloc(8 * (na > nb ? na : nb)), *dA, *dB, *dC;
        if (!H)
            return 2;
        CUDA_CHECK(cudaMalloc((void **)&dA, 8 * na));
        CUDA_CHECK(cudaMalloc((void **)&dB, 8 * nb));
        CUDA_CHECK(cudaMalloc((void **)&dC, 8 * nc));
        for (size_t i = 0; i < na; i++) H[i] = element(phi);
        CUDA_CHECK(cudaMemcpy(dA, H, 8 * na, cudaMemcpyHostToDevice));
        for (size_t i = 0; i < nb; i++) H[i] = element(phi);
        CUDA_CHECK(cudaMemcpy(dB, H, 8 * nb, cudaMemcpyHostToDevice));
        /* warm-up and an estimate; then OZ_TD_GROUPS groups of back-to-back
         * calls (about 1.5 s in all, at least one call a group), each group timed
         * by CUDA events; the time per call is the median of the groups' means */
        enum { OZ_TD_GROUPS = 11 };
        cudaEvent_t ev[OZ_TD_GROUPS + 1];
        for (int g = 0; g <= OZ_TD_GROUPS; g++)
            CUDA_CHECK(cudaEventCreate(&ev[g]));
        float est = 0;
        for (int i = 0; i < 3; i++) {
            CUDA_CHECK(cudaEventRecord(ev[0], 0));
            if (gemm(h, cx, m, n, k, dA, dB, dC) != CUBLAS_STATUS_SUCCESS)
                return 1;
            CUDA_CHECK(cudaEventRecord(ev[1], 0));
            CUDA_CHECK(cudaEventSynchronize(ev[1]));
            CUDA_CHECK(cudaEventElapsedTime(&est, ev[0], ev[1]));
        }
        int per = (int)(1500.0f / OZ_TD_GROUPS / (est > 0.01f ? est : 0.01f));
        per = per < 1 ? 1 : per > 200 ? 200 : per;
        CUDA_CHECK(cudaEventRecord(ev[0], 0));
        for (int g = 0; g < OZ_TD_GROUPS; g++) {
            for (int i = 0; i < per; i++)
                if (gemm(h, cx, m, n, k, dA, dB, dC) != CUBLAS_STATUS_SUCCESS)
                    return 1;
            CUDA_CHECK(cudaEventRecord(ev[g + 1], 0));
        }
        CUDA_CHECK(cudaEventSynchronize(ev[OZ_TD_GROUPS]));
        float tg[OZ_TD_GROUPS];
        for (int g = 0; g < OZ_TD_GROUPS; g++) {
            CUDA_CHECK(cudaEventElapsedTime(&tg[g], ev[g], ev[g + 1]));
            tg[g] /= (float)per;
        }
        for (int u = 1; u < OZ_TD_GROUPS; u++) /* insertion sort: the median */
            for (int v = u; v > 0 && tg[v - 1] > tg[v]; v--) {
                const float x = tg[v];
                tg[v] = tg[v - 1];
                tg[v - 1] = x;
            }
        const float t = tg[OZ_TD_GROUPS / 2];
        double *C = malloc(8 * nc), sum = 0;
        if (!C)
            return 2;
        CUDA_CHECK(cudaMemcpy(C, dC, 8 * nc, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < nc; i++) sum += C[i];
        printf("%lldx%lldx%lld %.4f %.2f %.10e\n", m, n, k, t, (cx ? 8.0 : 2.0) * m * n * k / t / 1e9, sum);
        fflush(stdout);
        free(C);
        free(H);
        CUDA_CHECK(cudaFree(dA));
        CUDA_CHECK(cudaFree(dB));
        CUDA_CHECK(cudaFree(dC));
        for (int g = 0; g <= OZ_TD_GROUPS; g++)
            CUDA_CHECK(cudaEventDestroy(ev[g]));
    }
    cublasDestroy(h);
    return 0;
}
