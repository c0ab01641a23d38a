/* tests/fake/test_local.c: cuBLAS inside a library dlopen'ed with RTLD_LOCAL (PyTorch and CuPy under Python).
 *
 * dlsym(RTLD_NEXT) from the preloaded shim cannot see that cuBLAS; the shim
 * must find the copy already loaded (RTLD_NOLOAD by soname, or by walking
 * the loaded objects) and forward to it. argv: the client library, the
 * lookup the log must name ("dlopen(RTLD_NOLOAD)" or "dl_iterate_phdr"). */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_cublas.h"

static const char *g_client, *g_how;

typedef cublasStatus_t client_dgemm_fn(int, int, int, const void *, const void *, void *, cublasHandle_t *);
typedef const fake_call *client_last_fn(void);

static int log_contains(const char *text)
{
    const char *path = getenv("OZCRT_LOG_FILE");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return 0;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, text) != NULL;
    fclose(f);
    return found;
}

static void t_rtld_local(void **state)
{
    (void)state;
    assert_null(dlsym(RTLD_DEFAULT, "cublasSetStream_v2")); /* no global cuBLAS (the shim exports no such name) */
    void *lib = dlopen(g_client, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        fail_msg("dlopen %s: %s", g_client, dlerror());
    client_dgemm_fn *dgemm = (client_dgemm_fn *)dlsym(lib, "local_client_dgemm");
    client_last_fn *last = (client_last_fn *)dlsym(lib, "local_client_last");
    assert_non_null(dgemm);
    assert_non_null(last);
    cublasHandle_t h = NULL;
    const void *A = (const void *)0x1000, *B = (const void *)0x2000;
    void *C = (void *)0x3000;
    assert_int_equal(dgemm(300, 200, 256, A, B, C, &h), CUBLAS_STATUS_MAPPING_ERROR);
    const fake_call *r = last();
    assert_string_equal(r->name, "cublasDgemm_v2");
    assert_ptr_equal(r->handle, h);
    assert_int_equal(r->transa, CUBLAS_OP_N);
    assert_int_equal(r->transb, CUBLAS_OP_T);
    assert_int_equal(r->m, 300);
    assert_int_equal(r->n, 200);
    assert_int_equal(r->k, 256);
    assert_int_equal(r->lda, 300);
    assert_int_equal(r->ldb, 200);
    assert_int_equal(r->ldc, 300);
    assert_ptr_equal(r->A, A);
    assert_ptr_equal(r->B, B);
    assert_ptr_equal(r->C, C);
    if (!log_contains("cublasDgemm_v2 m=300 n=200 k=256 ops=NT batch=1 -> forward:"))
        fail_msg("the shim did not log the call: was it preloaded with OZCRT_LOG>=1?");
    if (!log_contains(g_how))
        fail_msg("the log does not say the real cuBLAS was found by %s", g_how);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s CLIENT_LIBRARY LOOKUP\n", argv[0]);
        return 2;
    }
    g_client = argv[1];
    g_how = argv[2];
    const char *log = getenv("OZCRT_LOG_FILE"); /* appended to by the shim: start it empty */
    FILE *f = log ? fopen(log, "w") : NULL;
    if (f)
        fclose(f);
    const struct CMUnitTest tests[] = {cmocka_unit_test(t_rtld_local)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
