/* tests/compare/test_shadow_complex.c: shadow mode (compare/shadow.c) on complex calls, on the CPU: the CUDA runtime and compare's kernels replaced by stubs that fail when called.
 *
 * compare's metrics, scales and copies read doubles, so a complex call
 * (d->elem OZ_ELEM_COMPLEX, ZGEMM) is never compared: ozcmp_gemm runs what
 * the program asked for (the emulated path, or the native call into the
 * caller's C) and counts the call as not compared, reason complex, before
 * any CUDA work. A real call on a captured stream is the control: it gets
 * as far as the capture query, and is counted under its own reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "compare/compare.h"
#include "compare/kernels.h"

/* ---- the stubs: nothing but the capture query may run ---- */
static int g_capturing, g_capture_queries;
#define NOT_HERE(...)                                                                                                \
    do {                                                                                                             \
        fail_msg("%s called", __func__);                                                                             \
        return cudaErrorUnknown;                                                                                     \
    } while (0)
cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *st)
{
    (void)s;
    g_capture_queries++;
    *st = g_capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
    return cudaSuccess;
}
cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}
const char *cudaGetErrorString(cudaError_t e)
{
    (void)e;
    return "stub";
}
cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *m) { (void)m; NOT_HERE(); }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int f) { (void)e, (void)f; NOT_HERE(); }
cudaError_t cudaEventQuery(cudaEvent_t e) { (void)e; NOT_HERE(); }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)e, (void)s; NOT_HERE(); }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { (void)e; NOT_HERE(); }
cudaError_t cudaFreeAsync(void *p, cudaStream_t s) { (void)p, (void)s; NOT_HERE(); }
cudaError_t cudaGetDevice(int *d) { (void)d; NOT_HERE(); }
cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int f) { (void)p, (void)n, (void)f; NOT_HERE(); }
cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t pool, cudaStream_t s)
{
    (void)p, (void)n, (void)pool, (void)s;
    NOT_HERE();
}
cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const struct cudaMemPoolProps *props)
{
    (void)pool, (void)props;
    NOT_HERE();
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, enum cudaMemPoolAttr a, void *v)
{
    (void)pool, (void)a, (void)v;
    NOT_HERE();
}
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t st)
{
    (void)d, (void)s, (void)n, (void)k, (void)st;
    NOT_HERE();
}
int ozcmp_scales(const oz_gemm_desc *d, uint64_t *a, uint64_t *b, void *stream)
{
    (void)d, (void)a, (void)b, (void)stream;
    fail_msg("ozcmp_scales called");
    return -1;
}
int ozcmp_metrics(const oz_gemm_desc *d, ozcmp_mat_view e, ozcmp_mat_view n, const uint64_t *a, const uint64_t *b,
                  ozcmp_bound bound, ozcmp_accum *out, void *stream)
{
    (void)d, (void)e, (void)n, (void)a, (void)b, (void)bound, (void)out, (void)stream;
    fail_msg("ozcmp_metrics called");
    return -1;
}
int ozcmp_copy(int64_t m, int64_t n, int64_t batch, ozcmp_mat_view src, ozcmp_mat_out dst, double **ptrs_out,
               int mirror_align, int copy, void *stream)
{
    (void)m, (void)n, (void)batch, (void)src, (void)dst, (void)ptrs_out, (void)mirror_align, (void)copy, (void)stream;
    fail_msg("ozcmp_copy called");
    return -1;
}

/* ---- the call's two runs ---- */
static int g_runs, g_natives, g_native_status;
static const oz_gemm_desc *g_native_into;
static int run(void *ctx, const oz_gemm_desc *d, void *ws, size_t ws_bytes, void *stream)
{
    (void)ctx, (void)d, (void)ws, (void)ws_bytes, (void)stream;
    g_runs++;
    return 0;
}
static int native(void *ctx, const oz_gemm_desc *into)
{
    (void)ctx;
    g_natives++;
    g_native_into = into;
    return g_native_status;
}

static const double k_alpha[2] = {1.0, 0.5}, k_beta[2] = {0.0, 1.0};

static oz_gemm_desc desc(int elem)
{
    oz_gemm_desc d = {.transa = 2, .transb = 0, .m = 64, .n = 32, .k = 16, .A = (const double *)0x1000, .lda = 16,
                      .B = (const double *)0x2000, .ldb = 16, .C = (double *)0x3000, .ldc = 64, .batch = 1,
                      .alpha = k_alpha, .beta = k_beta, .elem = elem};
    return d;
}

static uint64_t skipped(ozcmp_skip_reason why)
{
    ozcmp_report_row *rows, total;
    (void)ozcmp_report_rows(ozcmp_report_global(), &rows, &total);
    free(rows);
    return total.not_compared[why];
}

static const ozcmp_site k_site = {"cublasZgemm_v2", 2, 0, 64, 32, 16, 1, NULL};
static const ozcmp_path k_path = {"ozaki2/53", run, NULL, {0}};

/* The emulated result asked for: the path runs, the native call does not, nothing compared (complex). */
static void t_complex_emulated(void **state)
{
    (void)state;
    const oz_gemm_desc d = desc(OZ_ELEM_COMPLEX);
    const uint64_t before = skipped(OZCMP_SKIP_COMPLEX);
    g_runs = g_natives = g_capture_queries = 0;
    assert_int_equal(ozcmp_gemm(&k_site, &k_path, &d, native, NULL, NULL, 0, NULL, OZCMP_RESULT_EMULATED), 0);
    assert_int_equal(g_runs, 1);
    assert_int_equal(g_natives, 0);
    assert_int_equal(g_capture_queries, 0);
    assert_int_equal(skipped(OZCMP_SKIP_COMPLEX), before + 1);
}

/* The native result asked for: the native call into the caller's own C, its status back. */
static void t_complex_native(void **state)
{
    (void)state;
    const oz_gemm_desc d = desc(OZ_ELEM_COMPLEX);
    const uint64_t before = skipped(OZCMP_SKIP_COMPLEX);
    g_runs = g_natives = 0;
    g_native_status = 7;
    assert_int_equal(ozcmp_gemm(&k_site, &k_path, &d, native, NULL, NULL, 0, NULL, OZCMP_RESULT_NATIVE), 7);
    g_native_status = 0;
    assert_int_equal(g_runs, 0);
    assert_int_equal(g_natives, 1);
    assert_ptr_equal(g_native_into->C, d.C);
    assert_int_equal(g_native_into->ldc, d.ldc);
    assert_int_equal(skipped(OZCMP_SKIP_COMPLEX), before + 1);
}

/* The report says why: the site's row, the table's words, the files' column. */
static void t_complex_reported(void **state)
{
    (void)state;
    ozcmp_report_row *rows, total;
    const size_t n = ozcmp_report_rows(ozcmp_report_global(), &rows, &total);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].entry, "cublasZgemm_v2") == 0) {
            found = 1;
            assert_int_equal(rows[i].calls, 0);
            assert_int_equal(rows[i].not_compared[OZCMP_SKIP_COMPLEX], 2);
        }
    free(rows);
    assert_true(found);
    char text[8192];
    FILE *f = tmpfile();
    assert_non_null(f);
    ozcmp_report_render(ozcmp_report_global(), f);
    rewind(f);
    const size_t got = fread(text, 1, sizeof text - 1, f);
    text[got] = '\0';
    fclose(f);
    if (!strstr(text, "not compared: 2 calls (complex 2)"))
        fail_msg("the table does not say why:\n%s", text);
    assert_string_equal(ozcmp_skip_reason_name(OZCMP_SKIP_COMPLEX), "not_compared_complex");
}

/* The control: a real call gets to the capture query (and is counted under capture, not complex). */
static void t_real_control(void **state)
{
    (void)state;
    const oz_gemm_desc d = desc(OZ_ELEM_REAL);
    const uint64_t complex0 = skipped(OZCMP_SKIP_COMPLEX), capture0 = skipped(OZCMP_SKIP_CAPTURE);
    g_runs = g_capture_queries = 0;
    g_capturing = 1;
    const ozcmp_site site = {"cublasDgemm_v2", 2, 0, 64, 32, 16, 1, NULL};
    assert_int_equal(ozcmp_gemm(&site, &k_path, &d, native, NULL, NULL, 0, NULL, OZCMP_RESULT_EMULATED), 0);
    g_capturing = 0;
    assert_int_equal(g_capture_queries, 1);
    assert_int_equal(g_runs, 1);
    assert_int_equal(skipped(OZCMP_SKIP_COMPLEX), complex0);
    assert_int_equal(skipped(OZCMP_SKIP_CAPTURE), capture0 + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_complex_emulated),
        cmocka_unit_test(t_complex_native),
        cmocka_unit_test(t_complex_reported),
        cmocka_unit_test(t_real_control),
    };
    return cmocka_run_group_tests_name("shadow_complex", tests, NULL, NULL);
}
