/* tests/fake/test_lt_fill.c: lt.c's fill of D with the BIAS epilogue's bias, the copies run on the host.
 *
 * lt.c is compiled into this program (#include); the CUDA runtime's two
 * copies it makes are fakes that copy host memory as cudaMemcpy2DAsync
 * would, and the shim functions it calls are stubs (never reached here).
 * For n from 1 to 70 and two leading dimensions, every column of D holds the
 * bias, the rows beyond m are untouched, and the copies number 1 + ceil(log2 n).
 * And copy_c, C apart from D copied into D: every item's elements, nothing else. */
#include "../../interpose/lt.c"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

/* ---- fakes ---- */
static int g_copies;
static int g_in_place_fill = 1; /* fill_bias copies D into itself: its source rows come first */
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t s)
{
    (void)kind, (void)s;
    g_copies++;
    memmove(dst, src, count);
    return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t s)
{
    (void)kind, (void)s;
    g_copies++;
    assert_true(width <= dpitch && width <= spitch);
    /* the fill's source rows must be written before: they precede the destination's */
    if (g_in_place_fill)
        assert_true((const char *)src + (height - 1) * spitch + width <= (char *)dst);
    for (size_t r = 0; r < height; r++)
        memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    return cudaSuccess;
}
int ozcrt_route(const ozcrt_call *c, cublasStatus_t *st)
{
    (void)c, (void)st;
    fail_msg("not reached");
    return 0;
}
void ozcrt_forward_counted(ozcrt_entry ep, ozcrt_reason r, const char *what)
{
    (void)ep, (void)r, (void)what;
}
cublasStatus_t ozcrt_real_missing(const char *name)
{
    (void)name;
    return CUBLAS_STATUS_NOT_INITIALIZED;
}
void *ozcrt_caller_symbol(const void *ret_addr, const char *name, int *is_cublas)
{
    (void)ret_addr, (void)name;
    *is_cublas = 0;
    return NULL;
}
int ozcrt_find_loaded(const char *prefix, char *path, size_t size)
{
    (void)prefix, (void)path, (void)size;
    return 0;
}
void ozcrt_on_destroy(cublasHandle_t h)
{
    (void)h;
}
_Thread_local int ozcrt_in_real;
int ozcrt_lifecycle_register_mutex(pthread_mutex_t *m)
{
    (void)m;
    return 0;
}
void ozcrt_log(int level, const char *fmt, ...)
{
    (void)level, (void)fmt;
}
void ozcrt_error(const char *fmt, ...)
{
    (void)fmt;
}

static void t_fill(void **state)
{
    (void)state;
    const int64_t m = 37;
    double bias[37];
    for (int i = 0; i < m; i++)
        bias[i] = 1.5 + i;
    for (int64_t ld = m; ld <= m + 3; ld += 3)
        for (int64_t n = 1; n <= 70; n++) {
            double *D = malloc((size_t)(ld * n) * sizeof(double));
            assert_non_null(D);
            for (int64_t i = 0; i < ld * n; i++)
                D[i] = -1.0; /* poison */
            lt_call l = {.D = D, .bias = bias};
            ozcrt_call c = {.C = D, .m = m, .n = n, .ldc = ld, .ext = &l};
            g_copies = 0;
            assert_int_equal(fill_bias(&c, NULL), 0);
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = 0; i < ld; i++)
                    if (D[j * ld + i] != (i < m ? bias[i] : -1.0))
                        fail_msg("n=%lld ld=%lld: D[%lld, %lld] = %g", (long long)n, (long long)ld, (long long)i,
                                 (long long)j, D[j * ld + i]);
            int want = 1;
            for (int64_t done = 1; done < n; done *= 2)
                want++;
            assert_int_equal(g_copies, want);
            free(D);
        }
}

/* copy_c: C apart from D copied into D before the product runs on D in place; real and complex
 * elements, batches dense in both (one copy) or not (one an item), D's other bytes untouched */
static void t_copy_c(void **state)
{
    (void)state;
    g_in_place_fill = 0;
    const int64_t m = 5, n = 4;
    for (int cx = 0; cx < 2; cx++)
        for (int sparse = 0; sparse < 2; sparse++)
            for (int64_t batch = 1; batch <= 3; batch++) {
                const int es = cx ? 2 : 1; /* doubles an element */
                const int64_t ldc = sparse ? m + 2 : m, ldd = sparse ? m + 1 : m;
                const int64_t sc = ldc * n + (sparse ? 3 : 0), sd = ldd * n + (sparse ? 1 : 0);
                const int64_t nc = sc * batch * es, nd = sd * batch * es;
                double *C = malloc((size_t)nc * sizeof(double)), *D = malloc((size_t)nd * sizeof(double));
                assert_true(C && D);
                for (int64_t i = 0; i < nc; i++)
                    C[i] = 1000.0 + (double)i;
                for (int64_t i = 0; i < nd; i++)
                    D[i] = -1.0;
                lt_call l = {.C = C, .D = D, .c_ld = ldc, .c_stride = sc};
                ozcrt_call c = {.C = D, .m = m, .n = n, .ldc = ldd, .strideC = sd, .batch = batch,
                                .elem = cx ? OZ_ELEM_COMPLEX : OZ_ELEM_REAL, .ext = &l};
                g_copies = 0;
                assert_int_equal(copy_c(&c, NULL), 0);
                for (int64_t b = 0; b < batch; b++)
                    for (int64_t j = 0; j < n; j++)
                        for (int64_t i = 0; i < m; i++)
                            for (int p = 0; p < es; p++) {
                                const double got = D[(b * sd + j * ldd + i) * es + p];
                                const double want = C[(b * sc + j * ldc + i) * es + p];
                                if (got != want)
                                    fail_msg("cx %d sparse %d batch %lld: D[%lld, %lld] of item %lld = %g, want %g", cx,
                                             sparse, (long long)batch, (long long)i, (long long)j, (long long)b, got,
                                             want);
                                D[(b * sd + j * ldd + i) * es + p] = -1.0;
                            }
                for (int64_t i = 0; i < nd; i++) /* every other byte of D untouched */
                    if (D[i] != -1.0)
                        fail_msg("cx %d sparse %d batch %lld: D[%lld] written outside the items", cx, sparse,
                                 (long long)batch, (long long)i);
                assert_int_equal(g_copies, sparse && batch > 1 ? batch : 1);
                free(C);
                free(D);
            }
    g_in_place_fill = 1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(t_fill), cmocka_unit_test(t_copy_c)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
