/* tests/fake/local_client.c: a library that links (fake) cuBLAS, for dlopen(RTLD_LOCAL) as Python does with torch. */
#include <cublas_v2.h>

#include "fake_cublas.h"

#define LOCAL_EXPORT __attribute__((visibility("default")))

static const double one = 1.0, half = 0.5;

/* Creates a handle, calls cublasDgemm_v2 once with these arguments and
 * returns its status; the call record is fake_cublas_last() of this
 * library's cuBLAS. */
LOCAL_EXPORT cublasStatus_t local_client_dgemm(int m, int n, int k, const void *A, const void *B, void *C,
                                               cublasHandle_t *handle_out);
/* The same with cublasZgemm_v2 on handle h (this library's). */
LOCAL_EXPORT cublasStatus_t local_client_zgemm(cublasHandle_t h, int m, int n, int k, const void *A, const void *B,
                                               void *C);
LOCAL_EXPORT const fake_call *local_client_last(void);
/* This library's fake: calls recorded and handle queries answered since its last reset. */
LOCAL_EXPORT int local_client_count(void);
LOCAL_EXPORT int local_client_queries(void);
/* cublasDestroy_v2(h) from this library; the status. */
LOCAL_EXPORT cublasStatus_t local_client_destroy(cublasHandle_t h);

cublasStatus_t local_client_dgemm(int m, int n, int k, const void *A, const void *B, void *C,
                                  cublasHandle_t *handle_out)
{
    cublasHandle_t h = NULL;
    fake_cublas_reset(); /* a status set by an earlier call must not fail the create */
    if (cublasCreate_v2(&h) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *handle_out = h;
    fake_cublas_reset();
    fake_cublas_set_status(CUBLAS_STATUS_MAPPING_ERROR);
    return cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &one, A, m, B, n, &half, C, m);
}

cublasStatus_t local_client_zgemm(cublasHandle_t h, int m, int n, int k, const void *A, const void *B, void *C)
{
    static const cuDoubleComplex zone = {1.0, 0.0}, zhalf = {0.5, 0.5};
    fake_cublas_reset();
    fake_cublas_set_status(CUBLAS_STATUS_MAPPING_ERROR);
    return cublasZgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &zone, A, m, B, n, &zhalf, C, m);
}

const fake_call *local_client_last(void)
{
    return fake_cublas_last();
}

int local_client_count(void)
{
    return fake_cublas_count();
}

int local_client_queries(void)
{
    return fake_cublas_queries();
}

cublasStatus_t local_client_destroy(cublasHandle_t h)
{
    fake_cublas_reset();
    return cublasDestroy_v2(h);
}
