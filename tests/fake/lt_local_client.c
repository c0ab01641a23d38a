/* tests/fake/lt_local_client.c: a library that links one fake cuBLASLt and calls it, as PyTorch's or CuPy's extension links its own cuBLASLt (test_lt_copies.c dlopens two, RTLD_LOCAL). */
#include "cublaslt13/fake_cublaslt.h"

#define CLIENT_EXPORT __attribute__((visibility("default")))

CLIENT_EXPORT int lt_local_client_count(void);
CLIENT_EXPORT int lt_local_client_live(void);
CLIENT_EXPORT cublasStatus_t lt_local_client_matmul(int fp64);

/* Its own fake's counters (the references bind in this library's scope). */
CLIENT_EXPORT int lt_local_client_count(void)
{
    return fake_cublaslt_count();
}

CLIENT_EXPORT int lt_local_client_live(void)
{
    return fake_cublaslt_live();
}

/* A 300 x 200 x 100 product through cublasLtMatmul (FP64 or FP32), its
 * handle, descriptor and layouts made and destroyed around it. */
CLIENT_EXPORT cublasStatus_t lt_local_client_matmul(int fp64)
{
    const cudaDataType t = fp64 ? CUDA_R_64F : CUDA_R_32F;
    cublasLtHandle_t h;
    cublasLtMatmulDesc_t d;
    cublasLtMatrixLayout_t la, lb, lc;
    static const double one = 1.0, zero = 0.0;
    if (cublasLtCreate(&h) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatmulDescCreate(&d, fp64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F, t) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatrixLayoutCreate(&la, t, 300, 100, 300) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatrixLayoutCreate(&lb, t, 100, 200, 100) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatrixLayoutCreate(&lc, t, 300, 200, 300) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_INTERNAL_ERROR;
    void *C = (void *)0x3000;
    cublasStatus_t st = cublasLtMatmul(h, d, &one, (const void *)0x1000, la, (const void *)0x2000, lb, &zero, C, lc, C,
                                       lc, NULL, NULL, 0, (cudaStream_t)0);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(d);
    if (cublasLtDestroy(h) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_INTERNAL_ERROR;
    return st;
}
