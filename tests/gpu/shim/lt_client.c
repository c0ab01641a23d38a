/* tests/gpu/shim/lt_client.c: a program on cuBLASLt's cublasLtMatmul, FP64 as PyTorch's nn.Linear calls it and otherwise, plus FP32 and cuBLAS calls beside.
 *
 * Five FP64 products through cublasLtMatmul (default epilogue in place with
 * beta != 0; the BIAS epilogue with beta 0, as PyTorch's addmm with a 1-D
 * bias; a strided batch of 3; device pointer mode; RELU_BIAS, which the shim
 * forwards), one FP32 one, and cublasSgemm / cublasDgemm through cuBLAS
 * (which calls cuBLASLt itself), each checked against a CPU reference:
 * |D - ref| <= tol (|alpha| sum |a||b| + |beta||c| + |bias|), tol from
 * OZCRT_MODE as the shim runs it (phase22: 2^-28; ozaki2 or no shim: 1e-12;
 * FP32: 2^-18). modes.sh lt runs it plainly and under the shim, and reads the
 * shim's stats (four FP64 products emulated, one lt-unsupported). */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/gpu/gpu_util.h"

static int g_fail;
static double g_tol64;

#define LT_CHECK(x)                                                                                                  \
    do {                                                                                                             \
        cublasStatus_t s_ = (x);                                                                                     \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                           \
            printf("FAIL: %s: cuBLAS status %d (line %d)\n", #x, (int)s_, __LINE__);                                 \
            exit(1);                                                                                                 \
        }                                                                                                            \
    } while (0)

typedef struct lt_case {
    const char *name;
    cublasOperation_t ta, tb;
    int m, n, k, batch;
    double alpha, beta;
    cublasLtEpilogue_t epilogue;
    int device_scalars, fp32;
} lt_case;

/* op(X)(i, l) of column-major X (leading dimension ld) */
static double at(const double *X, int ld, cublasOperation_t op, int i, int l)
{
    return op == CUBLAS_OP_N ? X[(size_t)l * ld + i] : X[(size_t)i * ld + l];
}

/* Checks item b of D (m x n, ld m) against the reference from A, B, C0, bias. */
static void check_result(const lt_case *c, const double *A, int lda, const double *B, int ldb, const double *C0,
                         const double *bias, const double *D, double tol)
{
    long bad = 0;
    double worst = 0;
    for (int j = 0; j < c->n; j++)
        for (int i = 0; i < c->m; i++) {
            double s = 0, sa = 0;
            for (int l = 0; l < c->k; l++) {
                const double a = at(A, lda, c->ta, i, l), b = at(B, ldb, c->tb, l, j);
                s += a * b;
                sa += fabs(a * b);
            }
            const double cv = C0[(size_t)j * c->m + i], bv = bias ? bias[i] : 0.0;
            double ref = c->alpha * s + c->beta * cv + bv;
            if (c->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS && ref < 0)
                ref = 0;
            const double err = fabs(D[(size_t)j * c->m + i] - ref);
            const double bound = tol * (fabs(c->alpha) * sa + fabs(c->beta * cv) + fabs(bv)) + 1e-300;
            if (!(err <= bound))
                bad++;
            if (err / bound > worst)
                worst = err / bound;
        }
    printf("%s: %-34s %ld bad elements, worst err/bound %.3g\n", bad ? "FAIL" : "PASS", c->name, bad, worst);
    g_fail |= bad != 0;
}

static void run_lt(cublasLtHandle_t lt, cudaStream_t st, const lt_case *c)
{
    const int ra = c->ta == CUBLAS_OP_N ? c->m : c->k, ca = c->ta == CUBLAS_OP_N ? c->k : c->m;
    const int rb = c->tb == CUBLAS_OP_N ? c->k : c->n, cb = c->tb == CUBLAS_OP_N ? c->n : c->k;
    const size_t na = (size_t)ra * ca, nb = (size_t)rb * cb, nc = (size_t)c->m * c->n, nbt = c->batch;
    const size_t es = c->fp32 ? sizeof(float) : sizeof(double);
    double *hA = malloc(na * nbt * 8), *hB = malloc(nb * nbt * 8), *hC = malloc(nc * nbt * 8), *hD = malloc(nc * nbt * 8);
    double *hbias = malloc((size_t)c->m * 8);
    void *tA = malloc(na * nbt * es), *tB = malloc(nb * nbt * es), *tC = malloc(nc * nbt * es), *tbias = malloc(c->m * es);
    for (size_t i = 0; i < na * nbt; i++)
        hA[i] = rng_sym();
    for (size_t i = 0; i < nb * nbt; i++)
        hB[i] = rng_sym();
    for (size_t i = 0; i < nc * nbt; i++)
        hC[i] = rng_sym();
    for (int i = 0; i < c->m; i++)
        hbias[i] = rng_sym();
    if (c->fp32) { /* the reference on the values FP32 holds */
        for (size_t i = 0; i < na * nbt; i++)
            ((float *)tA)[i] = (float)hA[i], hA[i] = ((float *)tA)[i];
        for (size_t i = 0; i < nb * nbt; i++)
            ((float *)tB)[i] = (float)hB[i], hB[i] = ((float *)tB)[i];
        for (size_t i = 0; i < nc * nbt; i++)
            ((float *)tC)[i] = (float)hC[i], hC[i] = ((float *)tC)[i];
    } else {
        memcpy(tA, hA, na * nbt * es), memcpy(tB, hB, nb * nbt * es), memcpy(tC, hC, nc * nbt * es);
        memcpy(tbias, hbias, c->m * es);
    }
    void *dA = dev_upload(tA, na * nbt * es), *dB = dev_upload(tB, nb * nbt * es), *dC = dev_upload(tC, nc * nbt * es);
    void *dbias = dev_upload(tbias, c->m * es);
    const double sc[2] = {c->alpha, c->beta};
    const float sc32[2] = {(float)c->alpha, (float)c->beta};
    void *dsc = dev_upload(c->fp32 ? (const void *)sc32 : (const void *)sc, 2 * es);
    const cudaDataType t = c->fp32 ? CUDA_R_32F : CUDA_R_64F;
    cublasLtMatmulDesc_t desc;
    LT_CHECK(cublasLtMatmulDescCreate(&desc, c->fp32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F, t));
    const int32_t ta = c->ta, tb = c->tb;
    const int32_t pm = c->device_scalars ? CUBLASLT_POINTER_MODE_DEVICE : CUBLASLT_POINTER_MODE_HOST;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm));
    const uint32_t ep = c->epilogue;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep));
    const int has_bias = c->epilogue != CUBLASLT_EPILOGUE_DEFAULT;
    if (has_bias)
        LT_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof dbias));
    cublasLtMatrixLayout_t la, lb, lc;
    LT_CHECK(cublasLtMatrixLayoutCreate(&la, t, ra, ca, ra));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lb, t, rb, cb, rb));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lc, t, c->m, c->n, c->m));
    if (c->batch > 1) {
        const int32_t bc = c->batch;
        const int64_t sa = (int64_t)na, sb = (int64_t)nb, scs = (int64_t)nc;
        LT_CHECK(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
        LT_CHECK(cublasLtMatrixLayoutSetAttribute(lb, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
        LT_CHECK(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
        LT_CHECK(cublasLtMatrixLayoutSetAttribute(la, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sa, sizeof sa));
        LT_CHECK(cublasLtMatrixLayoutSetAttribute(lb, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sb, sizeof sb));
        LT_CHECK(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &scs, sizeof scs));
    }
    size_t ws_size = 32 << 20;
    void *ws;
    CUDA_CHECK(cudaMalloc(&ws, ws_size));
    const void *al = c->device_scalars ? dsc : (c->fp32 ? (const void *)&sc32[0] : (const void *)&sc[0]);
    const void *be = c->device_scalars ? (const char *)dsc + es : (c->fp32 ? (const void *)&sc32[1] : (const void *)&sc[1]);
    const cublasStatus_t s = cublasLtMatmul(lt, desc, al, dA, la, dB, lb, be, dC, lc, dC, lc, NULL, ws, ws_size, st);
    const int skip = s == CUBLAS_STATUS_NOT_SUPPORTED && c->epilogue == CUBLASLT_EPILOGUE_RELU_BIAS;
    if (skip)
        printf("SKIP: %-34s cuBLASLt does not support it here\n", c->name);
    else
        LT_CHECK(s);
    CUDA_CHECK(cudaStreamSynchronize(st));
    void *tD = malloc(nc * nbt * es);
    dev_download(tD, dC, nc * nbt * es);
    for (size_t i = 0; i < nc * nbt; i++)
        hD[i] = c->fp32 ? ((float *)tD)[i] : ((double *)tD)[i];
    for (int b = 0; b < c->batch && !skip; b++)
        check_result(c, hA + b * na, ra, hB + b * nb, rb, hC + b * nc, has_bias ? hbias : NULL, hD + b * nc,
                     c->fp32 ? 0x1p-18 : g_tol64);
    LT_CHECK(cublasLtMatrixLayoutDestroy(la));
    LT_CHECK(cublasLtMatrixLayoutDestroy(lb));
    LT_CHECK(cublasLtMatrixLayoutDestroy(lc));
    LT_CHECK(cublasLtMatmulDescDestroy(desc));
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    CUDA_CHECK(cudaFree(dbias));
    CUDA_CHECK(cudaFree(dsc));
    free(hA), free(hB), free(hC), free(hD), free(hbias), free(tA), free(tB), free(tC), free(tbias), free(tD);
}

/* cublasDgemm and cublasSgemm through cuBLAS, which calls cuBLASLt itself. */
static void run_cublas(cudaStream_t st)
{
    const int m = 600, n = 520, k = 560;
    cublasHandle_t h;
    LT_CHECK(cublasCreate(&h));
    LT_CHECK(cublasSetStream(h, st));
    double *hA = malloc((size_t)m * k * 8), *hB = malloc((size_t)k * n * 8), *hC = malloc((size_t)m * n * 8);
    float *fA = malloc((size_t)m * k * 4), *fB = malloc((size_t)k * n * 4), *fC = malloc((size_t)m * n * 4);
    for (size_t i = 0; i < (size_t)m * k; i++)
        fA[i] = (float)rng_sym(), hA[i] = fA[i];
    for (size_t i = 0; i < (size_t)k * n; i++)
        fB[i] = (float)rng_sym(), hB[i] = fB[i];
    for (size_t i = 0; i < (size_t)m * n; i++)
        fC[i] = 0, hC[i] = 0;
    lt_case c = {"cublasDgemm beside", CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 1, 1.0, 0.0, CUBLASLT_EPILOGUE_DEFAULT, 0, 0};
    double *dA = dev_upload(hA, (size_t)m * k * 8), *dB = dev_upload(hB, (size_t)k * n * 8), *dC = dev_upload(hC, (size_t)m * n * 8);
    const double one = 1.0, zero = 0.0;
    LT_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, dB, k, &zero, dC, m));
    CUDA_CHECK(cudaStreamSynchronize(st));
    double *D = malloc((size_t)m * n * 8);
    dev_download(D, dC, (size_t)m * n * 8);
    check_result(&c, hA, m, hB, k, hC, NULL, D, g_tol64);
    float *sA = dev_upload(fA, (size_t)m * k * 4), *sB = dev_upload(fB, (size_t)k * n * 4), *sC = dev_upload(fC, (size_t)m * n * 4);
    const float onef = 1.0f, zerof = 0.0f;
    LT_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &onef, sA, m, sB, k, &zerof, sC, m));
    CUDA_CHECK(cudaStreamSynchronize(st));
    dev_download(fC, sC, (size_t)m * n * 4);
    for (size_t i = 0; i < (size_t)m * n; i++)
        D[i] = fC[i];
    c.name = "cublasSgemm beside";
    check_result(&c, hA, m, hB, k, hC, NULL, D, 0x1p-18);
    LT_CHECK(cublasDestroy(h));
    void *bufs[6] = {dA, dB, dC, sA, sB, sC};
    for (int i = 0; i < 6; i++)
        CUDA_CHECK(cudaFree(bufs[i]));
    free(hA), free(hB), free(hC), free(fA), free(fB), free(fC), free(D);
}

int main(void)
{
    const char *mode = getenv("OZCRT_MODE");
    const int shim = getenv("LD_PRELOAD") && strstr(getenv("LD_PRELOAD"), "libozcrt");
    g_tol64 = shim && (!mode || !mode[0] || strcmp(mode, "phase22") == 0) ? 0x1p-28 : 1e-12;
    static const lt_case cases[] = {
        {"FP64 in place, beta -0.5 (NN)", CUBLAS_OP_N, CUBLAS_OP_N, 768, 640, 700, 1, 1.25, -0.5,
         CUBLASLT_EPILOGUE_DEFAULT, 0, 0},
        {"FP64 bias, beta 0 (TN, nn.Linear)", CUBLAS_OP_T, CUBLAS_OP_N, 768, 640, 700, 1, 1.0, 0.0,
         CUBLASLT_EPILOGUE_BIAS, 0, 0},
        {"FP64 strided batch 3 (NT)", CUBLAS_OP_N, CUBLAS_OP_T, 640, 576, 520, 3, -0.75, 0.25,
         CUBLASLT_EPILOGUE_DEFAULT, 0, 0},
        {"FP64 device scalars (TT)", CUBLAS_OP_T, CUBLAS_OP_T, 704, 512, 600, 1, 2.0, 1.0,
         CUBLASLT_EPILOGUE_DEFAULT, 1, 0},
        {"FP64 relu+bias (forwarded)", CUBLAS_OP_N, CUBLAS_OP_N, 768, 640, 700, 1, 1.0, 0.0,
         CUBLASLT_EPILOGUE_RELU_BIAS, 0, 0},
        {"FP32 (not FP64: untouched)", CUBLAS_OP_N, CUBLAS_OP_N, 768, 640, 700, 1, 1.0, 0.5,
         CUBLASLT_EPILOGUE_DEFAULT, 0, 1},
    };
    cublasLtHandle_t lt;
    LT_CHECK(cublasLtCreate(&lt));
    cudaStream_t st;
    CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_lt(lt, st, &cases[i]);
    run_cublas(st);
    LT_CHECK(cublasLtDestroy(lt));
    CUDA_CHECK(cudaStreamDestroy(st));
    printf("lt_client: %s\n", g_fail ? "failed" : "passed");
    return g_fail;
}
