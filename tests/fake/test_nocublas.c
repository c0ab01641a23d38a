/* tests/fake/test_nocublas.c: the shim preloaded into a process with no cuBLAS at all.
 *
 * The program does not link cuBLAS; it reaches the shim's exports through
 * dlsym(RTLD_DEFAULT). Every call must return CUBLAS_STATUS_NOT_INITIALIZED,
 * say on stderr what was tried, and never call through a NULL pointer. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <cublas_v2.h>

#include "stderr_capture.h"

typedef __typeof__(cublasDgemm_v2) dgemm_fn;
typedef __typeof__(cublasDestroy_v2) destroy_fn;
typedef __typeof__(cublasGemmStridedBatchedEx) strided_ex_fn;

static char g_stderr[8192];

static void t_no_cublas(void **state)
{
    (void)state;
    dgemm_fn *dgemm = (dgemm_fn *)dlsym(RTLD_DEFAULT, "cublasDgemm_v2");
    destroy_fn *destroy = (destroy_fn *)dlsym(RTLD_DEFAULT, "cublasDestroy_v2");
    strided_ex_fn *sbex = (strided_ex_fn *)dlsym(RTLD_DEFAULT, "cublasGemmStridedBatchedEx");
    if (!dgemm || !destroy || !sbex)
        fail_msg("the shim is not preloaded (LD_PRELOAD=libozcrt.so)");
    cublasHandle_t h = (cublasHandle_t)(uintptr_t)0x1234;
    const double one = 1.0;
    const double *p = (const double *)0x1000;

    oz_stderr_capture cap;
    assert_int_equal(oz_stderr_capture_begin(&cap), 0);
    cublasStatus_t s1 = dgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, p, 256, p, 256, &one, (double *)p, 256);
    cublasStatus_t s2 = dgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 0, 0, &one, p, 1, p, 1, &one, (double *)p, 1);
    cublasStatus_t s3 = sbex(h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, p, CUDA_R_64F, 256, 0, p, CUDA_R_64F,
                             256, 0, &one, (void *)p, CUDA_R_64F, 256, 0, 4, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT);
    cublasStatus_t s4 = destroy(h);
    oz_stderr_capture_end(&cap, g_stderr, sizeof g_stderr);
    fprintf(stderr, "[captured stderr]\n%s[end]\n", g_stderr);

    assert_int_equal(s1, CUBLAS_STATUS_NOT_INITIALIZED);
    assert_int_equal(s2, CUBLAS_STATUS_NOT_INITIALIZED);
    assert_int_equal(s3, CUBLAS_STATUS_NOT_INITIALIZED);
    assert_int_equal(s4, CUBLAS_STATUS_NOT_INITIALIZED);
    assert_non_null(strstr(g_stderr, "no real cuBLAS for cublasDgemm_v2"));
    assert_non_null(strstr(g_stderr, "RTLD_NEXT"));
    assert_non_null(strstr(g_stderr, "libcublas.so.13"));
    assert_non_null(strstr(g_stderr, "no real cuBLAS for cublasDestroy_v2"));
    /* once per symbol, not once per call */
    const char *first = strstr(g_stderr, "for cublasDgemm_v2;");
    assert_non_null(first);
    assert_null(strstr(first + 1, "for cublasDgemm_v2;"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(t_no_cublas)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
