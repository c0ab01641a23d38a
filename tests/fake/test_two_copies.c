/* tests/fake/test_two_copies.c: two cuBLAS copies in one process (PyTorch's and CuPy's), each behind an RTLD_LOCAL client.
 *
 * The fake libcublas.so.13 and libcublas.so.99 are each linked by a client
 * library (local_client.c) that this program dlopens with RTLD_LOCAL, as
 * Python does with torch and cupy. Each client creates its handle through
 * the shim's cublasCreate_v2 and calls cublasDgemm_v2 (then cublasZgemm_v2,
 * forwarded by the phase22 mode: the call alone): the call, the handle
 * queries the router makes on the way (cublasGetPointerMode_v2, ...) and
 * cublasDestroy_v2 must all reach the client's own fake, never the other
 * one. argv: the client of .so.13, the client of .so.99. Run under the shim
 * with OZCRT_MIN_M/N/K=1, so that the router queries the handle before it
 * finds no GPU. */
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

typedef struct client {
    const char *path;
    int id; /* the fake's id the calls must carry */
    void *lib;
    cublasStatus_t (*dgemm)(int, int, int, const void *, const void *, void *, cublasHandle_t *);
    cublasStatus_t (*zgemm)(cublasHandle_t, int, int, int, const void *, const void *, void *);
    const fake_call *(*last)(void);
    int (*count)(void);
    int (*queries)(void);
    cublasStatus_t (*destroy)(cublasHandle_t);
    cublasHandle_t h;
} client;

static client g_c[2] = {{.id = 13}, {.id = 99}};

static void open_client(client *c)
{
    c->lib = dlopen(c->path, RTLD_NOW | RTLD_LOCAL);
    if (!c->lib)
        fail_msg("dlopen %s: %s", c->path, dlerror());
    *(void **)&c->dgemm = dlsym(c->lib, "local_client_dgemm");
    *(void **)&c->zgemm = dlsym(c->lib, "local_client_zgemm");
    *(void **)&c->last = dlsym(c->lib, "local_client_last");
    *(void **)&c->count = dlsym(c->lib, "local_client_count");
    *(void **)&c->queries = dlsym(c->lib, "local_client_queries");
    *(void **)&c->destroy = dlsym(c->lib, "local_client_destroy");
    if (!c->dgemm || !c->zgemm || !c->last || !c->count || !c->queries || !c->destroy)
        fail_msg("%s lacks the local_client_* functions", c->path);
}

/* Client i's DGEMM: recorded by its own fake with its handle, the handle
 * queried there; the other fake sees nothing. */
static void dgemm_reaches_own_fake(int i)
{
    client *c = &g_c[i], *other = &g_c[1 - i];
    int other_count = other->count(), other_queries = other->queries();
    const void *A = (const void *)0x1000, *B = (const void *)0x2000;
    void *C = (void *)0x3000;
    assert_int_equal(c->dgemm(300, 200, 256, A, B, C, &c->h), CUBLAS_STATUS_MAPPING_ERROR);
    const fake_call *r = c->last();
    assert_int_equal(c->count(), 1);
    assert_int_equal(r->id, c->id);
    assert_string_equal(r->name, "cublasDgemm_v2");
    assert_ptr_equal(r->handle, c->h);
    assert_int_equal(r->m, 300);
    assert_ptr_equal(r->C, C);
    if (c->queries() < 1)
        fail_msg("the router did not query handle %p in its own cuBLAS (.so.%d): run with OZCRT_MIN_M/N/K=1",
                 (void *)c->h, c->id);
    assert_int_equal(other->count(), other_count);
    assert_int_equal(other->queries(), other_queries);
    /* a complex call on the same handle: forwarded to the same cuBLAS */
    assert_int_equal(c->zgemm(c->h, 300, 200, 256, A, B, C), CUBLAS_STATUS_MAPPING_ERROR);
    r = c->last();
    assert_int_equal(c->count(), 1);
    assert_int_equal(r->id, c->id);
    assert_string_equal(r->name, "cublasZgemm_v2");
    assert_ptr_equal(r->handle, c->h);
    assert_ptr_equal(r->C, C);
    assert_int_equal(other->count(), other_count);
}

static void t_two_copies(void **state)
{
    (void)state;
    assert_null(dlsym(RTLD_DEFAULT, "cublasSetStream_v2")); /* no cuBLAS in the global scope */
    open_client(&g_c[0]);
    open_client(&g_c[1]);
    dgemm_reaches_own_fake(0);
    dgemm_reaches_own_fake(1);
    dgemm_reaches_own_fake(0); /* a third handle: .so.13 again, after .so.99 was seen */
    for (int i = 1; i >= 0; i--) {
        client *c = &g_c[i];
        assert_int_equal(c->destroy(c->h), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(c->last()->id, c->id);
        assert_string_equal(c->last()->name, "cublasDestroy_v2");
        assert_ptr_equal(c->last()->handle, c->h);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s CLIENT13 CLIENT99\n", argv[0]);
        return 2;
    }
    g_c[0].path = argv[1];
    g_c[1].path = argv[2];
    const struct CMUnitTest tests[] = {cmocka_unit_test(t_two_copies)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
