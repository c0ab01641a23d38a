/* tests/gpu/test_accuracy.c: accuracy against native DGEMM at 2048^3, exactness on constant data past the CRT range, determinism. */

#include "cublas_util.h"
#include "kernels/ozcrt_gemm.h"
#include "reference/bound.h"
#include "slicing/slicing.h"


static int failures;
static void check(int ok, const char *what)
{
    printf("%-58s %s\n", what, ok ? "ok" : "FAIL");
    failures += !ok;
}

static void p22(int64_t m, int64_t n, int64_t k, const double *dA, const double *dB, double *dC)
{
    double one = 1.0, zero = 0.0;
    oz_gemm_desc d = {0, 0, m, n, k, dA, m, 0, dB, k, 0, dC, m, 0, NULL, NULL, NULL, 1, &one, &zero, 0, OZ_ELEM_REAL, NULL};
    size_t wsb = oz_gemm_workspace_min(&d);
    void *ws;
    CUDA_CHECK(cudaMalloc(&ws, wsb));
    int rc = oz_gemm_run(&d, ws, wsb, NULL);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaFree(ws));
    if (rc) {
        fprintf(stderr, "oz_gemm_run: %d\n", rc);
        exit(2);
    }
}

int main(void)
{
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    const int64_t n = 2048;
    size_t nn = (size_t)n * n;
    double *A = malloc(8 * nn), *B = malloc(8 * nn), *C1 = malloc(8 * nn), *C2 = malloc(8 * nn), *Cn = malloc(8 * nn);
    for (size_t i = 0; i < nn; i++) A[i] = rng_sym(), B[i] = rng_sym();
    double *dA = dev_upload(A, 8 * nn), *dB = dev_upload(B, 8 * nn), *dC;
    CUDA_CHECK(cudaMalloc((void **)&dC, 8 * nn));

    double one = 1.0, zero = 0.0;
    CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dB, n, &zero, dC, n));
    CUDA_CHECK(cudaDeviceSynchronize());
    dev_download(Cn, dC, 8 * nn);
    CUDA_CHECK(cudaMemset(dC, 0xff, 8 * nn)); /* NaN poison */
    p22(n, n, n, dA, dB, dC);
    dev_download(C1, dC, 8 * nn);
    CUDA_CHECK(cudaMemset(dC, 0xff, 8 * nn));
    p22(n, n, n, dA, dB, dC);
    dev_download(C2, dC, 8 * nn);

    /* scale exponents for the per-element bound */
    int *s = malloc(sizeof(int) * n), *t = malloc(sizeof(int) * n);
    for (int64_t i = 0; i < n; i++) {
        double mr = 0, mc = 0;
        for (int64_t kk = 0; kk < n; kk++) {
            mr = fmax(mr, fabs(A[i + kk * n]));
            mc = fmax(mc, fabs(B[kk + i * n]));
        }
        s[i] = oz_scale_exponent(mr);
        t[i] = oz_scale_exponent(mc);
    }
    double maxerr = 0.0;
    size_t beyond = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            double e = fabs(C1[i + j * n] - Cn[i + j * n]);
            if (!(e <= maxerr)) maxerr = e;
            /* native DGEMM's own error is below 1e-12 here */
            if (!(e <= oz_error_bound(1.0, 0.0, 0.0, Cn[i + j * n], s[i], t[j], n) + 1e-12)) beyond++;
        }
    printf("2048^3 U(-1,1): max abs error vs native DGEMM = %.3e (design: about 1e-9; model 3.5e-9)\n", maxerr);
    check(maxerr < 1e-8, "2048^3 max abs error below 1e-8");
    check(beyond == 0, "2048^3 every element within the documented bound");
    check(memcmp(C1, C2, 8 * nn) == 0, "two runs give identical bits");

    /* constant matrices past the CRT range of one pass: k = 3*4096 + 17.
     * a = 1 - 2^-10, b = -(1/2 + 2^-12): both slices exact, k*a*b exact in double. */
    const int64_t cm = 130, cn = 70, ck = 3 * 4096 + 17;
    double a = 1.0 - ldexp(1, -10), b = -(0.5 + ldexp(1, -12));
    double *CA = malloc(8 * cm * ck), *CB = malloc(8 * ck * cn), *CC = malloc(8 * cm * cn);
    for (int64_t i = 0; i < cm * ck; i++) CA[i] = a;
    for (int64_t i = 0; i < ck * cn; i++) CB[i] = b;
    double *dCA = dev_upload(CA, 8 * cm * ck), *dCB = dev_upload(CB, 8 * ck * cn), *dCC;
    CUDA_CHECK(cudaMalloc((void **)&dCC, 8 * cm * cn));
    CUDA_CHECK(cudaMemset(dCC, 0xff, 8 * cm * cn));
    p22(cm, cn, ck, dCA, dCB, dCC);
    dev_download(CC, dCC, 8 * cm * cn);
    double exact = (double)ck * (a * b);
    int allexact = 1;
    for (int64_t i = 0; i < cm * cn; i++) allexact &= CC[i] == exact;
    printf("constant %ldx%ldx%ld: got %.17g, exact %.17g\n", (long)cm, (long)cn, (long)ck, CC[0], exact);
    check(allexact, "constant matrices, k = 3*4096+17: exact");

    printf("%d passed, %d failed\n", 4 - failures, failures);
    CUBLAS_CHECK(cublasDestroy(h));
    return failures ? 1 : 0;
}
