/* tests/compare/test_native.c: shadow mode's native run (interpose/native.c) passes the caller's call through with only C redirected, the GemmEx family's algo included.
 *
 * Linked with the recording fake libcublas.so.13 (found by real.c through
 * RTLD_NEXT, as in a program that links cuBLAS); no GPU, no LD_PRELOAD. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "fake_cublas.h"
#include "interpose/native.h"
#include "interpose/route.h"

#define PA ((const double *)0x1000)
#define PB ((const double *)0x2000)
#define PC ((double *)0x3000)
#define PSCRATCH ((double *)0x9000)

static const double one = 1.0, zero = 0.0;

static const char *const g_names[] = {
#define X_NAME(name) #name,
    OZCRT_INTERCEPTED(X_NAME)
#undef X_NAME
};

/* The caller's call of `ep` (typed: the GemmEx family) with algo `algo`, run
 * natively into scratch; returns the recorded call. */
static const fake_call *run(ozcrt_entry ep, int typed, cublasGemmAlgo_t algo)
{
    cublasHandle_t h;
    assert_int_equal(cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
    static const double *arrays[3] = {PA, PB, PC};
    static double *scratch_array[1] = {PSCRATCH};
    int arrays_ep = ozcrt_entry_arrays(ep);
    ozcrt_call c = {
        .ep = ep, .handle = h, .transa = CUBLAS_OP_N, .transb = CUBLAS_OP_T, .m = 64, .n = 48, .k = 32,
        .alpha = &one, .beta = &zero, .lda = 70, .ldb = 50, .ldc = 66, .strideA = 7000, .strideB = 5000,
        .strideC = 6600, .batch = 1, .typed = typed, .Atype = CUDA_R_64F, .Btype = CUDA_R_64F, .Ctype = CUDA_R_64F,
        .compute = CUBLAS_COMPUTE_64F, .algo = algo,
    };
    if (arrays_ep) {
        c.Aarray = (const void *const *)&arrays[0];
        c.Barray = (const void *const *)&arrays[1];
        c.Carray = (void *const *)&arrays[2];
    } else {
        c.A = PA, c.B = PB, c.C = PC;
    }
    oz_gemm_desc into = {.m = 64, .n = 48, .k = 32, .C = PSCRATCH, .ldc = 66, .strideC = 8000, .batch = 1};
    if (arrays_ep)
        into.Carray = scratch_array;
    fake_cublas_reset();
    assert_int_equal(ozcrt_native_into(&c, &into), CUBLAS_STATUS_SUCCESS);
    const fake_call *r = fake_cublas_last();
    assert_string_equal(r->name, g_names[ep]);
    assert_ptr_equal(r->handle, h);
    assert_int_equal(r->m, 64);
    assert_int_equal(r->lda, 70);
    if (arrays_ep)
        assert_ptr_equal(r->Carray, (void *const *)scratch_array);
    else
        assert_ptr_equal(r->C, PSCRATCH);
    return r;
}

static void test_gemmex_keeps_algo(void **state)
{
    (void)state;
    const ozcrt_entry typed[] = {OZCRT_EP_cublasGemmEx,         OZCRT_EP_cublasGemmStridedBatchedEx,
                                 OZCRT_EP_cublasGemmBatchedEx,  OZCRT_EP_cublasGemmEx_64,
                                 OZCRT_EP_cublasGemmStridedBatchedEx_64, OZCRT_EP_cublasGemmBatchedEx_64};
    const cublasGemmAlgo_t algos[] = {CUBLAS_GEMM_ALGO5, CUBLAS_GEMM_DEFAULT_TENSOR_OP, CUBLAS_GEMM_DEFAULT};
    for (int i = 0; i < 6; i++)
        for (int a = 0; a < 3; a++) {
            const fake_call *r = run(typed[i], 1, algos[a]);
            assert_int_equal(r->algo, algos[a]);
            assert_int_equal(r->compute, CUBLAS_COMPUTE_64F);
        }
}

static void test_untyped_redirect_c(void **state)
{
    (void)state;
    const ozcrt_entry plain[] = {OZCRT_EP_cublasDgemm_v2,           OZCRT_EP_cublasDgemm_v2_64,
                                 OZCRT_EP_cublasDgemmStridedBatched, OZCRT_EP_cublasDgemmBatched,
                                 OZCRT_EP_cublasDgemmStridedBatched_64, OZCRT_EP_cublasDgemmBatched_64};
    for (int i = 0; i < 6; i++)
        (void)run(plain[i], 0, CUBLAS_GEMM_DEFAULT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemmex_keeps_algo),
        cmocka_unit_test(test_untyped_redirect_c),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
