/* tests/fake/test_lt_copies.c: two cuBLASLt copies in one process (PyTorch's and CuPy's), each behind an RTLD_LOCAL client.
 *
 * The fake libcublasLt.so.13 and libcublasLt.so.99 are each linked by a
 * client library (lt_local_client.c) that this program dlopens with
 * RTLD_LOCAL, as Python does with torch and cupy. Each client's
 * cublasLtMatmul (FP64: decoded and routed, no GPU: forwarded; FP32: passed
 * through) and cublasLtDestroy reach the shim first and must then reach
 * the client's own copy, never the other one. argv: the two clients. */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>
#include <cublas_api.h>

typedef struct client {
    const char *path;
    void *lib;
    int (*count)(void);
    int (*live)(void);
    cublasStatus_t (*matmul)(int);
} client;

static client g_c[2];

static void open_client(client *c)
{
    c->lib = dlopen(c->path, RTLD_NOW | RTLD_LOCAL);
    if (!c->lib)
        fail_msg("dlopen %s: %s", c->path, dlerror());
    *(void **)&c->count = dlsym(c->lib, "lt_local_client_count");
    *(void **)&c->live = dlsym(c->lib, "lt_local_client_live");
    *(void **)&c->matmul = dlsym(c->lib, "lt_local_client_matmul");
    if (!c->count || !c->live || !c->matmul)
        fail_msg("%s lacks the lt_local_client_* functions", c->path);
}

static void t_own_copy(void **state)
{
    (void)state;
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 2; i++)
            for (int fp64 = 0; fp64 < 2; fp64++) {
                client *c = &g_c[i], *other = &g_c[1 - i];
                const int mine = c->count(), theirs = other->count(), live = c->live(), olive = other->live();
                assert_int_equal(c->matmul(fp64), CUBLAS_STATUS_SUCCESS);
                assert_int_equal(c->count(), mine + 1);
                assert_int_equal(other->count(), theirs);
                assert_int_equal(c->live(), live); /* its handle destroyed in its own copy */
                assert_int_equal(other->live(), olive);
            }
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    g_c[0].path = argv[1];
    g_c[1].path = argv[2];
    const struct CMUnitTest tests[] = {cmocka_unit_test(t_own_copy)};
    for (int i = 0; i < 2; i++) {
        g_c[i].lib = dlopen(g_c[i].path, RTLD_NOW | RTLD_LOCAL);
        if (!g_c[i].lib) {
            fprintf(stderr, "dlopen %s: %s\n", g_c[i].path, dlerror());
            return 2;
        }
        dlclose(g_c[i].lib);
        open_client(&g_c[i]);
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
