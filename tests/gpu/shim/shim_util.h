/* tests/gpu/shim/shim_util.h: what the shim's test programs share: checked cuBLAS calls (cublas_util.h) and random device matrices. */
#ifndef OZCRT_TESTS_GPU_SHIM_UTIL_H
#define OZCRT_TESTS_GPU_SHIM_UTIL_H

#include <string.h>

#include "tests/gpu/cublas_util.h"


/* An n x n device matrix of values drawn by gen(). */
static inline double *dev_matrix(int n, double (*gen)(void))
{
    size_t count = (size_t)n * (size_t)n;
    double *h = malloc(count * sizeof(double));
    if (!h) {
        fprintf(stderr, "out of host memory\n");
        exit(2);
    }
    for (size_t i = 0; i < count; i++)
        h[i] = gen();
    double *d = dev_upload(h, count * sizeof(double));
    free(h);
    return d;
}

/* An n x n device matrix of uniform (-1, 1) values. */
static inline double *dev_random(int n) { return dev_matrix(n, rng_sym); }

/* C = A B (n x n, column-major) with `h` on its current stream. */
static inline void dgemm_nn(cublasHandle_t h, int n, const double *A, const double *B, double *C)
{
    const double one = 1.0, zero = 0.0;
    CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n));
}

/* Number of elements whose bits differ between two n x n device matrices. */
static inline long bits_differ(int n, const double *X, const double *Y)
{
    size_t count = (size_t)n * (size_t)n;
    double *x = malloc(count * sizeof(double)), *y = malloc(count * sizeof(double));
    if (!x || !y) {
        fprintf(stderr, "out of host memory\n");
        exit(2);
    }
    dev_download(x, X, count * sizeof(double));
    dev_download(y, Y, count * sizeof(double));
    long bad = 0;
    for (size_t i = 0; i < count; i++)
        bad += memcmp(&x[i], &y[i], sizeof(double)) != 0;
    free(x);
    free(y);
    return bad;
}

#endif
