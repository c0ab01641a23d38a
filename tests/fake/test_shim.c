/* tests/fake/test_shim.c: the shim under LD_PRELOAD over the recording fake cuBLAS, no GPU.
 *
 * Every call the shim must not take reaches the fake with exactly the
 * caller's arguments, and the fake's status comes back; the log line names
 * the reason. Suites (argv[1]):
 *   route         OZCRT_MODE unset or phase22, CUDA_VISIBLE_DEVICES=""
 *   off           OZCRT_MODE=off: every call forwarded as mode-off
 *   override      OZCRT_CUBLAS_LIBRARY=<fake libcublas.so.99>: calls reach it, not the linked .so.13
 *   override-bad  OZCRT_CUBLAS_LIBRARY=<missing>: NOT_INITIALIZED, nothing called, stderr says why
 * Further arguments: --warn VAR (the first call must warn once about VAR),
 * --no-warn VAR (it must not). Needs OZCRT_LOG>=1 and OZCRT_LOG_FILE. */
#include "../../interpose/policy.h" /* OZCRT_DEFAULT_MIN_DIM */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_cublas.h"
#include "stderr_capture.h"
#include "../../interpose/legacy_decl.h" /* the legacy cublasDgemm and cublasZgemm, not cublas_v2.h's macros */

#define PA ((const double *)0x1000)
#define PB ((const double *)0x2000)
#define PC ((double *)0x3000)
#define BAD_PTR ((const double *)0x10) /* a device pointer the host must not read */
#define FAKE_STATUS CUBLAS_STATUS_ARCH_MISMATCH /* proves the real status comes back */

static const double one = 1.0, zero = 0.0, half = 0.5;
static const char *g_suite = "route";
static int g_off, g_bad_override;
static const char *g_valid_reason = "no-gpu";
static const char *g_z_reason = "complex-phase22"; /* a valid 512^3 complex call's (t_zgemm) */
static cublasHandle_t g_h;
static cublasStatus_t g_create_status; /* of g_h's cublasCreate_v2, the first intercepted call */
static char g_stderr[16384];
static const char *g_warn[8], *g_no_warn[8];
static int g_nwarn, g_nno_warn;

/* The fake that must receive the calls (the linked one, or the override). */
static const fake_call *(*fk_last)(void) = fake_cublas_last;
static int (*fk_count)(void) = fake_cublas_count;
static void (*fk_reset)(void) = fake_cublas_reset;
static void (*fk_set_status)(cublasStatus_t) = fake_cublas_set_status;

static const char *expect(const char *reason)
{
    return g_off ? "mode-off" : reason;
}

/* Reasons decided after the size thresholds become below-threshold when OZCRT_MIN_M is large. */
static const char *unless_small(const char *reason)
{
    return strcmp(g_valid_reason, "below-threshold") == 0 ? g_valid_reason : reason;
}

static void last_log_line(char *out, size_t size)
{
    const char *path = getenv("OZCRT_LOG_FILE");
    out[0] = '\0';
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "ozcrt: cublas", 13) == 0)
            snprintf(out, size, "%s", line);
    fclose(f);
}

/* The last log line is about `ep` and ends with "forward: <reason>". */
static void assert_logged(const char *ep, const char *reason)
{
    char line[1024], want[128];
    last_log_line(line, sizeof line);
    snprintf(want, sizeof want, "ozcrt: %s ", ep);
    if (strncmp(line, want, strlen(want)) != 0)
        fail_msg("log line \"%s\" is not about %s", line, ep);
    snprintf(want, sizeof want, "-> forward: %s\n", reason);
    if (!strstr(line, want))
        fail_msg("log line \"%s\" lacks \"%s\"", line, want);
}

static void before(void)
{
    fk_reset();
    fk_set_status(FAKE_STATUS);
}

static void assert_gemm(const char *name, cublasHandle_t h, int ta, int tb, int64_t m, int64_t n, int64_t k,
                        const void *alpha, int64_t lda, int64_t ldb, const void *beta, int64_t ldc)
{
    const fake_call *r = fk_last();
    assert_int_equal(fk_count(), 1);
    assert_string_equal(r->name, name);
    assert_ptr_equal(r->handle, h);
    assert_int_equal(r->transa, ta);
    assert_int_equal(r->transb, tb);
    assert_int_equal(r->m, m);
    assert_int_equal(r->n, n);
    assert_int_equal(r->k, k);
    assert_ptr_equal(r->alpha, alpha);
    assert_ptr_equal(r->beta, beta);
    assert_int_equal(r->lda, lda);
    assert_int_equal(r->ldb, ldb);
    assert_int_equal(r->ldc, ldc);
}

static void assert_matrices(const void *A, const void *B, const void *C)
{
    assert_ptr_equal(fk_last()->A, A);
    assert_ptr_equal(fk_last()->B, B);
    assert_ptr_equal(fk_last()->C, C);
}

/* One cublasDgemm_v2 that must be forwarded for `reason`. */
static void dgemm_forwarded(cublasHandle_t h, int ta, int tb, int m, int n, int k, const double *alpha, int lda,
                            int ldb, int ldc, const char *reason)
{
    before();
    assert_int_equal(cublasDgemm_v2(h, ta, tb, m, n, k, alpha, PA, lda, PB, ldb, &half, PC, ldc), FAKE_STATUS);
    assert_gemm("cublasDgemm_v2", h, ta, tb, m, n, k, alpha, lda, ldb, &half, ldc);
    assert_matrices(PA, PB, PC);
    assert_logged("cublasDgemm_v2", expect(reason));
}

static void t_dgemm_valid(void **state)
{
    (void)state;
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, 256, 256, 256, g_valid_reason);
    /* transposed A: lda >= k is the rule, lda < m is fine */
    dgemm_forwarded(g_h, CUBLAS_OP_T, CUBLAS_OP_C, 300, 200, 256, &one, 256, 200, 301, g_valid_reason);
}

static void t_dgemm_invalid(void **state)
{
    (void)state;
    dgemm_forwarded(g_h, (cublasOperation_t)7, CUBLAS_OP_N, 256, 256, 256, &one, 256, 256, 256, "invalid-args");
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_CONJG, 256, 256, 256, &one, 256, 256, 256, "invalid-args");
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 256, 256, &one, 256, 256, 256, "invalid-args");
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, -3, 256, &one, 256, 256, 256, "invalid-args");
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, -2, &one, 256, 256, 256, "invalid-args");
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, 255, 256, 256, "invalid-args"); /* lda < m */
    dgemm_forwarded(g_h, CUBLAS_OP_T, CUBLAS_OP_N, 256, 256, 300, &one, 299, 300, 256, "invalid-args"); /* lda < k */
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 300, &one, 256, 299, 256, "invalid-args"); /* ldb < k */
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_T, 256, 400, 256, &one, 256, 399, 256, "invalid-args"); /* ldb < n */
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, 256, 256, 255, "invalid-args"); /* ldc < m */
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 256, 256, &one, 0, 256, 1, "invalid-args");    /* lda < 1 */
    dgemm_forwarded(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, 256, 256, 256, "invalid-args");
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, NULL, 256, 256, 256, "invalid-args");
}

static void t_dgemm_trivial(void **state)
{
    (void)state;
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 256, 256, &one, 1, 256, 1, "empty");
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 0, 256, &one, 256, 256, 256, "empty");
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 0, &one, 256, 1, 256, "k0-or-alpha0");
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &zero, 256, 256, 256, unless_small("k0-or-alpha0"));
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 256, 256, &one, 256, 256, 256, "below-threshold");
}

/* Device pointer mode: alpha is a device address, never read on the host. */
static void t_dgemm_device_scalars(void **state)
{
    (void)state;
    assert_int_equal(cublasSetPointerMode_v2(g_h, CUBLAS_POINTER_MODE_DEVICE), CUBLAS_STATUS_SUCCESS);
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, BAD_PTR, 256, 256, 256, g_valid_reason);
    assert_int_equal(cublasSetPointerMode_v2(g_h, CUBLAS_POINTER_MODE_HOST), CUBLAS_STATUS_SUCCESS);
}

/* The handle asks for exact FP64 (or cuBLAS's own emulation): forwarded. */
static void t_dgemm_math_mode(void **state)
{
    (void)state;
    static const cublasMath_t modes[] = {CUBLAS_PEDANTIC_MATH, CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH,
                                         (cublasMath_t)(CUBLAS_PEDANTIC_MATH |
                                                        CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        assert_int_equal(cublasSetMathMode(g_h, modes[i]), CUBLAS_STATUS_SUCCESS);
        dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, 256, 256, 256,
                        unless_small("math-mode"));
    }
    assert_int_equal(cublasSetMathMode(g_h, CUBLAS_TF32_TENSOR_OP_MATH), CUBLAS_STATUS_SUCCESS);
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, 256, 256, 256, g_valid_reason);
    assert_int_equal(cublasSetMathMode(g_h, CUBLAS_DEFAULT_MATH), CUBLAS_STATUS_SUCCESS);
}

static void t_dgemm_64(void **state)
{
    (void)state;
    before();
    int64_t big = (int64_t)1 << 33; /* ld beyond int range: the 64-bit entry point keeps it */
    assert_int_equal(cublasDgemm_v2_64(g_h, CUBLAS_OP_T, CUBLAS_OP_N, 256, 512, 384, &one, PA, big, PB, 384, &half,
                                       PC, 256),
                     FAKE_STATUS);
    assert_gemm("cublasDgemm_v2_64", g_h, CUBLAS_OP_T, CUBLAS_OP_N, 256, 512, 384, &one, big, 384, &half, 256);
    assert_matrices(PA, PB, PC);
    assert_logged("cublasDgemm_v2_64", expect(g_valid_reason));
    before();
    assert_int_equal(cublasDgemm_v2_64(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 512, -384, &one, PA, 256, PB, 384, &half,
                                       PC, 256),
                     FAKE_STATUS);
    assert_logged("cublasDgemm_v2_64", expect("invalid-args"));
}

static void gemmex_forwarded(cudaDataType at, cudaDataType bt, cudaDataType ct, cublasComputeType_t ctype,
                             const char *reason)
{
    before();
    assert_int_equal(cublasGemmEx(g_h, CUBLAS_OP_N, CUBLAS_OP_T, 256, 256, 256, &one, PA, at, 256, PB, bt, 256, &half,
                                  PC, ct, 256, ctype, CUBLAS_GEMM_DEFAULT_TENSOR_OP),
                     FAKE_STATUS);
    assert_gemm("cublasGemmEx", g_h, CUBLAS_OP_N, CUBLAS_OP_T, 256, 256, 256, &one, 256, 256, &half, 256);
    assert_matrices(PA, PB, PC);
    const fake_call *r = fk_last();
    assert_int_equal(r->Atype, at);
    assert_int_equal(r->Btype, bt);
    assert_int_equal(r->Ctype, ct);
    assert_int_equal(r->compute, ctype);
    assert_int_equal(r->algo, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
    assert_logged("cublasGemmEx", expect(reason));
}

static void t_gemmex(void **state)
{
    (void)state;
    gemmex_forwarded(CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, g_valid_reason);
    gemmex_forwarded(CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F_PEDANTIC, "type");
    gemmex_forwarded(CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, "type");
    gemmex_forwarded(CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, "type");
    gemmex_forwarded(CUDA_R_64F, CUDA_R_64F, CUDA_R_32F, CUBLAS_COMPUTE_64F, "type");
    gemmex_forwarded(CUDA_R_8I, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, "type");
}

static void t_strided(void **state)
{
    (void)state;
    before();
    assert_int_equal(cublasDgemmStridedBatched(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 128, 512, &one, PA, 256, 0, PB,
                                               512, 65536, &half, PC, 256, 32768, 7),
                     FAKE_STATUS);
    assert_gemm("cublasDgemmStridedBatched", g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 128, 512, &one, 256, 512, &half, 256);
    assert_matrices(PA, PB, PC);
    assert_int_equal(fk_last()->strideA, 0);
    assert_int_equal(fk_last()->strideB, 65536);
    assert_int_equal(fk_last()->strideC, 32768);
    assert_int_equal(fk_last()->batch, 7);
    assert_logged("cublasDgemmStridedBatched", expect(g_valid_reason));
    before();
    assert_int_equal(cublasDgemmStridedBatched(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 128, 512, &one, PA, 256, 0, PB,
                                               512, 65536, &half, PC, 256, 32768, 0),
                     FAKE_STATUS);
    assert_logged("cublasDgemmStridedBatched", expect("empty"));
    before();
    assert_int_equal(cublasDgemmStridedBatched(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 128, 512, &one, PA, 256, 0, PB,
                                               512, 65536, &half, PC, 256, 32768, -1),
                     FAKE_STATUS);
    assert_int_equal(fk_last()->batch, -1);
    assert_logged("cublasDgemmStridedBatched", expect("invalid-args"));
}

static void strided_ex_forwarded(cublasComputeType_t ctype, const char *reason)
{
    before();
    assert_int_equal(cublasGemmStridedBatchedEx(g_h, CUBLAS_OP_T, CUBLAS_OP_T, 256, 256, 256, &one, PA, CUDA_R_64F,
                                                256, 100, PB, CUDA_R_64F, 256, 200, &half, PC, CUDA_R_64F, 256, 300,
                                                3, ctype, CUBLAS_GEMM_DEFAULT),
                     FAKE_STATUS);
    assert_gemm("cublasGemmStridedBatchedEx", g_h, CUBLAS_OP_T, CUBLAS_OP_T, 256, 256, 256, &one, 256, 256, &half,
                256);
    const fake_call *r = fk_last();
    assert_int_equal(r->strideA, 100);
    assert_int_equal(r->strideB, 200);
    assert_int_equal(r->strideC, 300);
    assert_int_equal(r->batch, 3);
    assert_int_equal(r->compute, ctype);
    assert_logged("cublasGemmStridedBatchedEx", expect(reason));
}

static void t_strided_ex(void **state)
{
    (void)state;
    strided_ex_forwarded(CUBLAS_COMPUTE_64F, g_valid_reason);
    strided_ex_forwarded(CUBLAS_COMPUTE_64F_PEDANTIC, "type");
}

static const double *const g_Aarr[2] = {PA, PA};
static const double *const g_Barr[2] = {PB, PB};
static double *const g_Carr[2] = {PC, PC};

static void t_batched(void **state)
{
    (void)state;
    before();
    assert_int_equal(cublasDgemmBatched(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, g_Aarr, 256, g_Barr, 256,
                                        &half, g_Carr, 256, 2),
                     FAKE_STATUS);
    assert_gemm("cublasDgemmBatched", g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, 256, 256, &half, 256);
    assert_ptr_equal(fk_last()->Aarray, g_Aarr);
    assert_ptr_equal(fk_last()->Barray, g_Barr);
    assert_ptr_equal(fk_last()->Carray, g_Carr);
    assert_int_equal(fk_last()->batch, 2);
    assert_logged("cublasDgemmBatched", expect(g_valid_reason));
    before();
    assert_int_equal(cublasDgemmBatched(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, NULL, 256, g_Barr, 256,
                                        &half, g_Carr, 256, 2),
                     FAKE_STATUS);
    assert_logged("cublasDgemmBatched", expect("invalid-args"));
}

/* A grouped call (two groups): in the mode off the whole call untouched;
 * otherwise group by group, each forwarded alone here (no GPU) with the
 * arrays from it on, and the first status that is not SUCCESS stops it;
 * a group with invalid arguments sends the whole call. */
static void t_grouped(void **state)
{
    (void)state;
    static const cublasOperation_t ta[2] = {CUBLAS_OP_N, CUBLAS_OP_T}, tb[2] = {CUBLAS_OP_N, CUBLAS_OP_N};
    static const int64_t m[2] = {256, 300}, n[2] = {256, 200}, k[2] = {256, 100}, lda[2] = {256, 100},
                         ldb[2] = {256, 100}, ldc[2] = {256, 300}, size[2] = {1, 1};
    static const double al[2] = {1.0, 2.0}, be[2] = {0.5, 0.0};
    for (int fail = 0; fail < 2; fail++) {
        before();
        fk_set_status(fail ? FAKE_STATUS : CUBLAS_STATUS_SUCCESS);
        assert_int_equal(cublasDgemmGroupedBatched_64(g_h, ta, tb, m, n, k, al, g_Aarr, lda, g_Barr, ldb, be, g_Carr,
                                                      ldc, 2, size),
                         fail ? FAKE_STATUS : CUBLAS_STATUS_SUCCESS);
        const fake_call *r = fk_last();
        assert_string_equal(r->name, "cublasDgemmGroupedBatched_64");
        assert_ptr_equal(r->handle, g_h);
        if (g_off) {
            assert_int_equal(fk_count(), 1);
            assert_int_equal(r->group_count, 2);
            assert_ptr_equal(r->m_array, m);
            assert_ptr_equal(r->Aarray, g_Aarr);
            assert_logged("cublasDgemmGroupedBatched_64", "mode-off");
        } else if (fail) { /* the first group's status stops the call */
            assert_int_equal(fk_count(), 1);
            assert_int_equal(r->group_count, 1);
            assert_ptr_equal(r->m_array, m);
            assert_logged("cublasDgemmGroupedBatched_64", g_valid_reason);
        } else {
            assert_int_equal(fk_count(), 2);
            assert_int_equal(r->group_count, 1);
            assert_ptr_equal(r->m_array, &m[1]);
            assert_ptr_equal(r->group_size, &size[1]);
            assert_ptr_equal(r->alpha, &al[1]);
            assert_ptr_equal(r->Aarray, g_Aarr + 1);
            assert_ptr_equal(r->Carray, g_Carr + 1);
            assert_int_equal(r->m, 300);
            assert_int_equal(r->transa, CUBLAS_OP_T);
            assert_logged("cublasDgemmGroupedBatched_64", g_valid_reason);
        }
    }
    static const int bad_lda[2] = {256, 99}, mi[2] = {256, 300}, ni[2] = {256, 200}, ki[2] = {256, 100},
                     ldbi[2] = {256, 100}, ldci[2] = {256, 300}, sizei[2] = {1, 1};
    before();
    assert_int_equal(cublasGemmGroupedBatchedEx(g_h, ta, tb, mi, ni, ki, al, (const void *const *)g_Aarr, CUDA_R_64F,
                                                bad_lda, (const void *const *)g_Barr, CUDA_R_64F, ldbi, be,
                                                (void *const *)g_Carr, CUDA_R_64F, ldci, 2, sizei, CUBLAS_COMPUTE_64F),
                     FAKE_STATUS);
    assert_int_equal(fk_count(), 1);
    assert_int_equal(fk_last()->group_count, 2);
    assert_ptr_equal(fk_last()->m_array, mi);
    assert_int_equal(fk_last()->compute, CUBLAS_COMPUTE_64F);
    assert_logged("cublasGemmGroupedBatchedEx", expect("invalid-args"));
}

static void batched_ex_forwarded(cudaDataType t, cublasComputeType_t ctype, const char *reason)
{
    before();
    assert_int_equal(cublasGemmBatchedEx(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one,
                                         (const void *const *)g_Aarr, t, 256, (const void *const *)g_Barr, t, 256,
                                         &half, (void *const *)g_Carr, t, 256, 2, ctype, CUBLAS_GEMM_DEFAULT),
                     FAKE_STATUS);
    assert_gemm("cublasGemmBatchedEx", g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, 256, 256, &half, 256);
    assert_ptr_equal(fk_last()->Aarray, g_Aarr);
    assert_int_equal(fk_last()->Atype, t);
    assert_int_equal(fk_last()->compute, ctype);
    assert_logged("cublasGemmBatchedEx", expect(reason));
}

static void t_batched_ex(void **state)
{
    (void)state;
    batched_ex_forwarded(CUDA_R_64F, CUBLAS_COMPUTE_64F, g_valid_reason);
    batched_ex_forwarded(CUDA_R_64F, CUBLAS_COMPUTE_64F_PEDANTIC, "type");
    batched_ex_forwarded(CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, "type");
}

/* The 64-bit-integer twins: every argument reaches the real one whole (leading
 * dimensions, strides and batch counts beyond the int range), and they are
 * routed like the others. */
static void t_gemmex_64(void **state)
{
    (void)state;
    const int64_t big = (int64_t)1 << 33;
    before();
    assert_int_equal(cublasGemmEx_64(g_h, CUBLAS_OP_N, CUBLAS_OP_T, 256, 512, 384, &one, PA, CUDA_R_64F, big, PB,
                                     CUDA_R_64F, 512, &half, PC, CUDA_R_64F, 256, CUBLAS_COMPUTE_64F,
                                     CUBLAS_GEMM_DEFAULT),
                     FAKE_STATUS);
    assert_gemm("cublasGemmEx_64", g_h, CUBLAS_OP_N, CUBLAS_OP_T, 256, 512, 384, &one, big, 512, &half, 256);
    assert_matrices(PA, PB, PC);
    assert_int_equal(fk_last()->compute, CUBLAS_COMPUTE_64F);
    assert_logged("cublasGemmEx_64", expect(g_valid_reason));
    before();
    assert_int_equal(cublasGemmEx_64(g_h, CUBLAS_OP_N, CUBLAS_OP_T, 256, 512, 384, &one, PA, CUDA_R_64F, 256, PB,
                                     CUDA_R_64F, 512, &half, PC, CUDA_R_64F, 256, CUBLAS_COMPUTE_64F_PEDANTIC,
                                     CUBLAS_GEMM_DEFAULT),
                     FAKE_STATUS);
    assert_logged("cublasGemmEx_64", expect("type"));
    before();
    assert_int_equal(cublasGemmEx_64(g_h, CUBLAS_OP_N, CUBLAS_OP_T, 256, 512, 384, &one, PA, CUDA_R_64F, 255, PB,
                                     CUDA_R_64F, 512, &half, PC, CUDA_R_64F, 256, CUBLAS_COMPUTE_64F,
                                     CUBLAS_GEMM_DEFAULT),
                     FAKE_STATUS);
    assert_logged("cublasGemmEx_64", expect("invalid-args"));
}

static void t_strided_64(void **state)
{
    (void)state;
    const long long big = (long long)1 << 40;
    before();
    assert_int_equal(cublasDgemmStridedBatched_64(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 128, 512, &one, PA, 256, 0, PB,
                                                  512, big, &half, PC, 256, 32768, 7),
                     FAKE_STATUS);
    assert_gemm("cublasDgemmStridedBatched_64", g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 128, 512, &one, 256, 512, &half,
                256);
    assert_matrices(PA, PB, PC);
    assert_true(fk_last()->strideB == big);
    assert_int_equal(fk_last()->strideC, 32768);
    assert_int_equal(fk_last()->batch, 7);
    assert_logged("cublasDgemmStridedBatched_64", expect(g_valid_reason));
    before();
    assert_int_equal(cublasDgemmStridedBatched_64(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 128, 512, &one, PA, 256, 0, PB,
                                                  512, 65536, &half, PC, 256, 32768, -1),
                     FAKE_STATUS);
    assert_logged("cublasDgemmStridedBatched_64", expect("invalid-args"));
    before();
    assert_int_equal(cublasGemmStridedBatchedEx_64(g_h, CUBLAS_OP_T, CUBLAS_OP_T, 256, 256, 256, &one, PA, CUDA_R_64F,
                                                   256, 100, PB, CUDA_R_64F, 256, 200, &half, PC, CUDA_R_64F, 256,
                                                   300, (int64_t)3, CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
                     FAKE_STATUS);
    assert_gemm("cublasGemmStridedBatchedEx_64", g_h, CUBLAS_OP_T, CUBLAS_OP_T, 256, 256, 256, &one, 256, 256, &half,
                256);
    assert_int_equal(fk_last()->strideA, 100);
    assert_int_equal(fk_last()->strideC, 300);
    assert_int_equal(fk_last()->batch, 3);
    assert_logged("cublasGemmStridedBatchedEx_64", expect(g_valid_reason));
    before();
    assert_int_equal(cublasGemmStridedBatchedEx_64(g_h, CUBLAS_OP_T, CUBLAS_OP_T, 256, 256, 256, &one, PA, CUDA_R_32F,
                                                   256, 100, PB, CUDA_R_32F, 256, 200, &half, PC, CUDA_R_32F, 256,
                                                   300, 3, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     FAKE_STATUS);
    assert_logged("cublasGemmStridedBatchedEx_64", expect("type"));
}

static void t_batched_64(void **state)
{
    (void)state;
    before();
    assert_int_equal(cublasDgemmBatched_64(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, g_Aarr, 256, g_Barr,
                                           256, &half, g_Carr, 256, 2),
                     FAKE_STATUS);
    assert_gemm("cublasDgemmBatched_64", g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, 256, 256, &half, 256);
    assert_ptr_equal(fk_last()->Aarray, g_Aarr);
    assert_ptr_equal(fk_last()->Carray, g_Carr);
    assert_int_equal(fk_last()->batch, 2);
    assert_logged("cublasDgemmBatched_64", expect(g_valid_reason));
    before();
    assert_int_equal(cublasDgemmBatched_64(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, g_Aarr, 256, g_Barr,
                                           256, &half, NULL, 256, 2),
                     FAKE_STATUS);
    assert_logged("cublasDgemmBatched_64", expect("invalid-args"));
    before();
    assert_int_equal(cublasGemmBatchedEx_64(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one,
                                            (const void *const *)g_Aarr, CUDA_R_64F, 256, (const void *const *)g_Barr,
                                            CUDA_R_64F, 256, &half, (void *const *)g_Carr, CUDA_R_64F, 256, 2,
                                            CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT),
                     FAKE_STATUS);
    assert_gemm("cublasGemmBatchedEx_64", g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, 256, 256, &half, 256);
    assert_ptr_equal(fk_last()->Barray, g_Barr);
    assert_int_equal(fk_last()->batch, 2);
    assert_logged("cublasGemmBatchedEx_64", expect(g_valid_reason));
    before();
    assert_int_equal(cublasGemmBatchedEx_64(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one,
                                            (const void *const *)g_Aarr, CUDA_R_64F, 256, (const void *const *)g_Barr,
                                            CUDA_R_64F, 256, &half, (void *const *)g_Carr, CUDA_R_64F, 256, 2,
                                            CUBLAS_COMPUTE_64F_PEDANTIC, CUBLAS_GEMM_DEFAULT),
                     FAKE_STATUS);
    assert_logged("cublasGemmBatchedEx_64", expect("type"));
}

static void t_destroy(void **state)
{
    (void)state;
    cublasHandle_t h = NULL;
    fk_reset(); /* the shim's cublasCreate_v2 goes to the fake that gets the calls (the override's, if set) */
    assert_int_equal(cublasCreate_v2(&h), CUBLAS_STATUS_SUCCESS);
    assert_string_equal(fk_last()->name, "cublasCreate_v2");
    before();
    assert_int_equal(cublasDestroy_v2(h), FAKE_STATUS);
    assert_int_equal(fk_count(), 1);
    assert_string_equal(fk_last()->name, "cublasDestroy_v2");
    assert_ptr_equal(fk_last()->handle, h);
}

/* The legacy handle-less API (cublas.h): cublasInit, cublasSetKernelStream
 * and cublasShutdown reach cuBLAS and its status comes back; cublasDgemm
 * is forwarded with the caller's own letters and scalars (before
 * cublasInit: legacy-context; after it, for the suite's reason). */
static void legacy_forwarded(char ta, int m, const char *reason)
{
    before();
    cublasDgemm(ta, 't', m, 256, 256, 1.5, PA, 300, PB, 256, 0.25, PC, 300);
    const fake_call *r = fk_last();
    assert_int_equal(fk_count(), 1);
    assert_string_equal(r->name, "cublasDgemm");
    assert_int_equal(r->transa, ta);
    assert_int_equal(r->transb, 't');
    assert_int_equal(r->m, m);
    assert_int_equal(r->n, 256);
    assert_int_equal(r->k, 256);
    assert_true(r->alpha_v == 1.5 && r->beta_v == 0.25);
    assert_int_equal(r->lda, 300);
    assert_int_equal(r->ldb, 256);
    assert_int_equal(r->ldc, 300);
    assert_matrices(PA, PB, PC);
    assert_logged("cublasDgemm", expect(reason));
}

static void t_legacy(void **state)
{
    (void)state;
    legacy_forwarded('N', 300, unless_small("legacy-context"));
    before();
    assert_int_equal(cublasInit(), FAKE_STATUS); /* failed: still no context */
    assert_string_equal(fk_last()->name, "cublasInit");
    legacy_forwarded('n', 300, unless_small("legacy-context"));
    fk_reset();
    assert_int_equal(cublasInit(), CUBLAS_STATUS_SUCCESS);
    before();
    assert_int_equal(cublasSetKernelStream((cudaStream_t)0x5150), FAKE_STATUS);
    assert_string_equal(fk_last()->name, "cublasSetKernelStream");
    assert_ptr_equal(fk_last()->stream, (cudaStream_t)0x5150);
    legacy_forwarded('T', 300, g_valid_reason);
    legacy_forwarded('q', 300, "invalid-args");
    legacy_forwarded('N', 301, "invalid-args"); /* lda < m */
    before();
    assert_int_equal(cublasShutdown(), FAKE_STATUS);
    assert_int_equal(fk_count(), 1);
    assert_string_equal(fk_last()->name, "cublasShutdown");
    legacy_forwarded('N', 300, unless_small("legacy-context"));
}

/* The complex entry points (ZGEMM) of the preloaded library: each reaches
 * cuBLAS with the caller's exact arguments and status; a valid call is
 * forwarded as complex-phase22 (the phase22 mode has no complex path), a
 * bad op as invalid-args; the legacy cublasZgemm with its scalars by value. */
static const cuDoubleComplex z_one = {1.0, -1.0}, z_half = {0.5, 0.25};
#define ZA ((const cuDoubleComplex *)PA)
#define ZB ((const cuDoubleComplex *)PB)
#define ZC ((cuDoubleComplex *)PC)
static const cuDoubleComplex *const g_zA[2] = {ZA, ZA};
static const cuDoubleComplex *const g_zB[2] = {ZB, ZB};
static cuDoubleComplex *const g_zC[2] = {ZC, ZC};

static cublasStatus_t zcall(int which, cublasOperation_t ta, int64_t lda)
{
    const int l = (int)lda;
    before();
    switch (which) {
    case 0: return cublasZgemm_v2(g_h, ta, CUBLAS_OP_T, 512, 512, 512, &z_one, ZA, l, ZB, 512, &z_half, ZC, 512);
    case 1: return cublasZgemm_v2_64(g_h, ta, CUBLAS_OP_T, 512, 512, 512, &z_one, ZA, lda, ZB, 512, &z_half, ZC, 512);
    case 2: return cublasZgemm3m(g_h, ta, CUBLAS_OP_T, 512, 512, 512, &z_one, ZA, l, ZB, 512, &z_half, ZC, 512);
    case 3: return cublasZgemm3m_64(g_h, ta, CUBLAS_OP_T, 512, 512, 512, &z_one, ZA, lda, ZB, 512, &z_half, ZC, 512);
    case 4:
        return cublasZgemmStridedBatched(g_h, ta, CUBLAS_OP_T, 512, 512, 512, &z_one, ZA, l, 7, ZB, 512, 8, &z_half, ZC,
                                         512, 9, 2);
    case 5:
        return cublasZgemmStridedBatched_64(g_h, ta, CUBLAS_OP_T, 512, 512, 512, &z_one, ZA, lda, 7, ZB, 512, 8,
                                            &z_half, ZC, 512, 9, 2);
    case 6:
        return cublasZgemmBatched(g_h, ta, CUBLAS_OP_T, 512, 512, 512, &z_one, g_zA, l, g_zB, 512, &z_half, g_zC, 512,
                                  2);
    default:
        return cublasZgemmBatched_64(g_h, ta, CUBLAS_OP_T, 512, 512, 512, &z_one, g_zA, lda, g_zB, 512, &z_half, g_zC,
                                     512, 2);
    }
}

static void t_zgemm(void **state)
{
    (void)state;
    static const char *const names[8] = {"cublasZgemm_v2", "cublasZgemm_v2_64", "cublasZgemm3m", "cublasZgemm3m_64",
                                         "cublasZgemmStridedBatched", "cublasZgemmStridedBatched_64",
                                         "cublasZgemmBatched", "cublasZgemmBatched_64"};
    for (int i = 0; i < 8; i++) {
        assert_int_equal(zcall(i, CUBLAS_OP_C, 512), FAKE_STATUS);
        assert_gemm(names[i], g_h, CUBLAS_OP_C, CUBLAS_OP_T, 512, 512, 512, &z_one, 512, 512, &z_half, 512);
        if (i >= 6) {
            assert_ptr_equal(fk_last()->Aarray, g_zA);
            assert_ptr_equal(fk_last()->Carray, g_zC);
        } else {
            assert_matrices(ZA, ZB, ZC);
        }
        if (i == 4 || i == 5)
            assert_true(fk_last()->strideA == 7 && fk_last()->strideB == 8 && fk_last()->strideC == 9);
        assert_int_equal(fk_last()->batch, i >= 4 ? 2 : 1);
        assert_logged(names[i], expect(g_z_reason));
        assert_int_equal(zcall(i, (cublasOperation_t)7, 512), FAKE_STATUS);
        assert_logged(names[i], expect("invalid-args"));
        assert_int_equal(zcall(i, CUBLAS_OP_N, 511), FAKE_STATUS); /* lda < m */
        assert_logged(names[i], expect("invalid-args"));
    }
    /* the Ex entry point with CUDA_C_64F: a complex call, no longer `type` */
    gemmex_forwarded(CUDA_C_64F, CUDA_C_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F, unless_small("complex-phase22"));
    gemmex_forwarded(CUDA_C_64F, CUDA_R_64F, CUDA_C_64F, CUBLAS_COMPUTE_64F, "type");
    /* the legacy API: before cublasInit too, the mode's reason comes first */
    before();
    cublasZgemm('c', 'T', 512, 512, 512, z_one, ZA, 512, ZB, 512, z_half, ZC, 512);
    const fake_call *r = fk_last();
    assert_int_equal(fk_count(), 1);
    assert_string_equal(r->name, "cublasZgemm");
    assert_int_equal(r->transa, 'c');
    assert_int_equal(r->transb, 'T');
    assert_true(r->m == 512 && r->n == 512 && r->k == 512);
    assert_true(r->alpha_v == 1.0 && r->alpha_vi == -1.0 && r->beta_v == 0.5 && r->beta_vi == 0.25);
    assert_true(r->lda == 512 && r->ldb == 512 && r->ldc == 512);
    assert_matrices(ZA, ZB, ZC);
    assert_logged("cublasZgemm", expect(g_z_reason));
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void t_env_warnings(void **state)
{
    (void)state;
    char want[96];
    for (int i = 0; i < g_nwarn; i++) {
        snprintf(want, sizeof want, "warning: %s=", g_warn[i]);
        if (count_of(g_stderr, want) != 1)
            fail_msg("expected one warning about %s, stderr was:\n%s", g_warn[i], g_stderr);
        if (!strstr(g_stderr, "using the default"))
            fail_msg("the warning does not name the default:\n%s", g_stderr);
    }
    for (int i = 0; i < g_nno_warn; i++) {
        snprintf(want, sizeof want, "%s=", g_no_warn[i]);
        if (strstr(g_stderr, want))
            fail_msg("unexpected warning about %s:\n%s", g_no_warn[i], g_stderr);
    }
}

/* OZCRT_CUBLAS_LIBRARY is authoritative: a missing file is an error, never a
 * fall back to the linked copy. */
static void t_override_bad(void **state)
{
    (void)state;
    assert_int_equal(g_create_status, CUBLAS_STATUS_NOT_INITIALIZED); /* the shim's cublasCreate_v2 too */
    fake_cublas_reset();
    assert_int_equal(cublasDgemm_v2(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, PA, 256, PB, 256, &half, PC,
                                    256),
                     CUBLAS_STATUS_NOT_INITIALIZED);
    assert_int_equal(cublasGemmEx(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, PA, CUDA_R_32F, 8, PB, CUDA_R_32F, 8,
                                  &half, PC, CUDA_R_32F, 8, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     CUBLAS_STATUS_NOT_INITIALIZED);
    assert_int_equal(fake_cublas_count(), 0);
    if (!strstr(g_stderr, "OZCRT_CUBLAS_LIBRARY") || !strstr(g_stderr, "CUBLAS_STATUS_NOT_INITIALIZED"))
        fail_msg("stderr does not say what failed:\n%s", g_stderr);
}

/* The linked fake saw nothing: the override took every call. */
static void t_override_took_all(void **state)
{
    (void)state;
    assert_int_equal(fake_cublas_id(), 13);
    int (*id)(void) = (int (*)(void))dlsym(dlopen(getenv("OZCRT_CUBLAS_LIBRARY"), RTLD_LAZY | RTLD_NOLOAD),
                                           "fake_cublas_id");
    assert_non_null(id);
    assert_int_equal(id(), 99);
    fake_cublas_reset();
    dgemm_forwarded(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 256, 256, 256, &one, 256, 256, 256, g_valid_reason);
    assert_int_equal(fake_cublas_count(), 0);
}

/* The first intercepted calls (cublasCreate_v2, then an empty DGEMM) read
 * the environment: their stderr is kept. */
static cublasStatus_t first_call_capturing_stderr(void)
{
    oz_stderr_capture cap;
    if (oz_stderr_capture_begin(&cap) != 0) {
        fprintf(stderr, "cannot capture stderr\n");
        exit(2);
    }
    g_create_status = cublasCreate_v2(&g_h);
    cublasStatus_t st = cublasDgemm_v2(g_h, CUBLAS_OP_N, CUBLAS_OP_N, 0, 0, 0, &one, PA, 1, PB, 1, &half, PC, 1);
    oz_stderr_capture_end(&cap, g_stderr, sizeof g_stderr);
    fprintf(stderr, "[first call's stderr]\n%s[end]\n", g_stderr);
    return st;
}

static int bind_override_fake(void)
{
    void *h = dlopen(getenv("OZCRT_CUBLAS_LIBRARY"), RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    fk_last = (const fake_call *(*)(void))dlsym(h, "fake_cublas_last");
    fk_count = (int (*)(void))dlsym(h, "fake_cublas_count");
    fk_reset = (void (*)(void))dlsym(h, "fake_cublas_reset");
    fk_set_status = (void (*)(cublasStatus_t))dlsym(h, "fake_cublas_set_status");
    return fk_last && fk_count && fk_reset && fk_set_status;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_suite = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--warn") == 0 && g_nwarn < 8)
            g_warn[g_nwarn++] = argv[i + 1];
        else if (strcmp(argv[i], "--no-warn") == 0 && g_nno_warn < 8)
            g_no_warn[g_nno_warn++] = argv[i + 1];
    }
    g_off = strcmp(g_suite, "off") == 0;
    g_bad_override = strcmp(g_suite, "override-bad") == 0;
    /* The valid shapes below have m <= 300: under the shim's effective
     * OZCRT_MIN_M (the variable when it is a number, else the default)
     * above that, they are forwarded as below-threshold before the GPU check. */
    const char *min_m = getenv("OZCRT_MIN_M");
    char *end = NULL;
    long eff = OZCRT_DEFAULT_MIN_DIM;
    if (min_m && min_m[0]) {
        long v = strtol(min_m, &end, 10);
        if (*end == '\0' && v >= 0)
            eff = v;
    }
    if (eff > 300)
        g_valid_reason = "below-threshold";
    if (eff > 512)
        g_z_reason = "below-threshold";
    cublasStatus_t st = first_call_capturing_stderr();
    if (!g_bad_override && g_create_status != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate_v2 returned %d\n", (int)g_create_status);
        return 2;
    }
    if (!g_bad_override && st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "the first (empty) call returned %d\n", (int)st);
        return 1;
    }
    if (strcmp(g_suite, "override") == 0 && !bind_override_fake()) {
        fprintf(stderr, "the shim did not load OZCRT_CUBLAS_LIBRARY=%s\n", getenv("OZCRT_CUBLAS_LIBRARY"));
        return 1;
    }
    const struct CMUnitTest forwarding[] = {
        cmocka_unit_test(t_env_warnings),
        cmocka_unit_test(t_dgemm_valid),
        cmocka_unit_test(t_dgemm_invalid),
        cmocka_unit_test(t_dgemm_trivial),
        cmocka_unit_test(t_dgemm_device_scalars),
        cmocka_unit_test(t_dgemm_math_mode),
        cmocka_unit_test(t_dgemm_64),
        cmocka_unit_test(t_gemmex),
        cmocka_unit_test(t_strided),
        cmocka_unit_test(t_strided_ex),
        cmocka_unit_test(t_batched),
        cmocka_unit_test(t_grouped),
        cmocka_unit_test(t_batched_ex),
        cmocka_unit_test(t_gemmex_64),
        cmocka_unit_test(t_strided_64),
        cmocka_unit_test(t_batched_64),
        cmocka_unit_test(t_destroy),
        cmocka_unit_test(t_legacy),
        cmocka_unit_test(t_zgemm),
    };
    const struct CMUnitTest override_bad[] = {cmocka_unit_test(t_override_bad)};
    const struct CMUnitTest override_ok[] = {cmocka_unit_test(t_override_took_all)};
    if (g_bad_override)
        return cmocka_run_group_tests_name("override-bad", override_bad, NULL, NULL);
    int failed = cmocka_run_group_tests_name(g_suite, forwarding, NULL, NULL);
    if (strcmp(g_suite, "override") == 0)
        failed += cmocka_run_group_tests_name("override-only", override_ok, NULL, NULL);
    return failed;
}
