/* tests/fake/xla/test_dlsym.c: cuBLAS used as XLA (JAX) uses it, under the preloaded shim: two XLA-like clients (xla_client.c), each dlopening its own fake libcublas and libcublasLt (RTLD_LOCAL) and taking every function with dlsym on its handle.
 *
 * Symbol interposition cannot see those lookups; the shim's dlsym hook
 * (interpose/dlhook.c) must hand out its own function for every
 * intercepted name, and that function must reach the client's OWN copy:
 * each client's GEMMs are counted by the shim (stats: forwarded no-gpu
 * here, no GPU), recorded by its own fake with its handle, the handle
 * queried there, its destroy there; cuBLASLt's FP64 matmul (A and B in row
 * order, as XLA passes them) likewise. Other names on the same handles are
 * the fake's own. argv: MODE ("on", or "off": run with OZCRT_DLSYM=0, every
 * lookup the fake's and nothing counted; or "late": the shim not preloaded
 * but dlopened RTLD_GLOBAL first, as Python's `import ozcrt` loads it, its
 * hook then after libc's dlsym in the global scope, and ozcrt_hook_dlsym()
 * called once each client is loaded, before it opens its cuBLAS: the same as
 * "on"), client a, client b, libcublas .so.13 and .so.99, libcublasLt .so.13
 * and .so.99, and for "late" libozcrt.so. Run with OZCRT_MIN_M/N/K=1 (the
 * router reaches the handle queries and no-gpu). */
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
    const char *path, *blas, *lt;
    int id; /* the fake's id its calls must carry */
    void *lib;
    void *(*sym)(const char *);
    void *(*lt_sym)(const char *);
    void *(*vsym)(const char *, const char *);
    cublasStatus_t (*dgemm)(int, int, int, cublasHandle_t *);
    cublasStatus_t (*gemm_ex)(cublasHandle_t, int, int, int);
    cublasStatus_t (*dgemm_strided)(cublasHandle_t, int, int, int, int);
    cublasStatus_t (*destroy)(cublasHandle_t);
    const fake_call *(*last)(void);
    int (*count)(void), (*queries)(void);
    cublasStatus_t (*lt_matmul)(void);
    int (*lt_count)(void), (*lt_live)(void);
    cublasHandle_t h;
} client;

static client g_c[2] = {{.id = 13}, {.id = 99}};
static int g_on = 1, g_late;
static int (*hook_dlsym)(void); /* late: the shim's ozcrt_hook_dlsym */

/* the shim's C API, from the global scope (the preload) */
static int (*stats_enable)(int);
static int (*stats_get)(int, uint64_t *, uint64_t *, int, double *);
static const char *(*entry_name)(int);
static const char *(*reason_name)(int);
static int (*entry_count)(void), (*reason_count)(void);

#define NEED(lib, member, name)                                                                                      \
    do {                                                                                                             \
        *(void **)&(member) = dlsym(lib, name);                                                                      \
        if (!(member)) {                                                                                             \
            fprintf(stderr, "no %s: %s\n", name, dlerror());                                                         \
            return -1;                                                                                               \
        }                                                                                                            \
    } while (0)

/* The client loaded (RTLD_LOCAL) and its libraries opened, as XLA opens them at start-up; 0 or -1. */
static int open_client(client *c)
{
    c->lib = dlopen(c->path, RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) {
        fprintf(stderr, "dlopen %s: %s\n", c->path, dlerror());
        return -1;
    }
    int (*open_fn)(const char *, const char *);
    NEED(c->lib, open_fn, "xla_client_open");
    NEED(c->lib, c->sym, "xla_client_sym");
    NEED(c->lib, c->lt_sym, "xla_client_lt_sym");
    NEED(c->lib, c->vsym, "xla_client_vsym");
    NEED(c->lib, c->dgemm, "xla_client_dgemm");
    NEED(c->lib, c->gemm_ex, "xla_client_gemm_ex");
    NEED(c->lib, c->dgemm_strided, "xla_client_dgemm_strided");
    NEED(c->lib, c->destroy, "xla_client_destroy");
    NEED(c->lib, c->last, "xla_client_last");
    NEED(c->lib, c->count, "xla_client_count");
    NEED(c->lib, c->queries, "xla_client_queries");
    NEED(c->lib, c->lt_matmul, "xla_client_lt_matmul");
    NEED(c->lib, c->lt_count, "xla_client_lt_count");
    NEED(c->lib, c->lt_live, "xla_client_lt_live");
    if (g_late) { /* the client's dlsym slots on the hook (the main program's too, and the other client's again) */
        const int slots = hook_dlsym();
        if (slots < 2) {
            fprintf(stderr, "ozcrt_hook_dlsym: %d slots\n", slots);
            return -1;
        }
    }
    return open_fn(c->blas, c->lt);
}

static int setup(void **state)
{
    (void)state;
    return open_client(&g_c[0]) || open_client(&g_c[1]) ? -1 : 0;
}

static int log_contains(const char *text)
{
    const char *path = getenv("OZCRT_LOG_FILE");
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[1024];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, text) != NULL;
    if (f)
        fclose(f);
    return found;
}

/* The object holding p, by file base name. */
static const char *object(const void *p)
{
    Dl_info info;
    if (!p || !dladdr(p, &info) || !info.dli_fname)
        return "?";
    const char *b = strrchr(info.dli_fname, '/');
    return b ? b + 1 : info.dli_fname;
}

static int index_of(int n, const char *(*name)(int), const char *want)
{
    for (int i = 0; i < n; i++)
        if (name(i) && strcmp(name(i), want) == 0)
            return i;
    fail_msg("the shim has no stats row/column %s", want);
    return -1;
}

/* How many calls of `entry` the shim counted, and how many forwarded for `reason`. */
static void counted(const char *entry, const char *reason, uint64_t *calls, uint64_t *why)
{
    uint64_t by[64] = {0};
    const int nr = reason_count();
    assert_true(nr <= 64);
    assert_int_equal(stats_get(index_of(entry_count(), entry_name, entry), calls, by, nr, NULL), 0);
    *why = by[index_of(nr, reason_name, reason)];
}

static const char *const g_blas_names[] = {
    "cublasDgemm_v2", "cublasDgemm_v2_64", "cublasGemmEx", "cublasGemmEx_64", "cublasDgemmStridedBatched",
    "cublasDgemmStridedBatched_64", "cublasGemmStridedBatchedEx", "cublasGemmStridedBatchedEx_64",
    "cublasDgemmBatched", "cublasDgemmBatched_64", "cublasGemmBatchedEx", "cublasGemmBatchedEx_64",
    "cublasDgemmGroupedBatched", "cublasDgemmGroupedBatched_64", "cublasGemmGroupedBatchedEx",
    "cublasGemmGroupedBatchedEx_64", "cublasDgemm", "cublasCreate_v2", "cublasDestroy_v2", "cublasInit",
    "cublasShutdown", "cublasSetKernelStream", "cublasZgemm_v2", "cublasZgemm_v2_64", "cublasZgemm3m",
    "cublasZgemm3m_64", "cublasZgemmStridedBatched", "cublasZgemmStridedBatched_64", "cublasZgemmBatched",
    "cublasZgemmBatched_64", "cublasZgemm"};
static const char *const g_lt_names[] = {"cublasLtMatmul", "cublasLtDestroy"};

/* Every intercepted name on the client's handles: the shim's function
 * (with the hook off: the fake's); every other name: the fake's. */
static void t_handed_out(void **state)
{
    (void)state;
    const char *blas_obj = g_on ? "libozcrt.so" : "libcublas.so.13";
    const char *lt_obj = g_on ? "libozcrt.so" : "libcublasLt.so.13";
    client *c = &g_c[0];
    for (size_t i = 0; i < sizeof g_blas_names / sizeof g_blas_names[0]; i++) {
        void *p = c->sym(g_blas_names[i]);
        if (strcmp(object(p), blas_obj) != 0)
            fail_msg("dlsym(libcublas.so.13, %s) is in %s, not %s", g_blas_names[i], object(p), blas_obj);
        assert_ptr_equal(c->sym(g_blas_names[i]), p); /* the same each time */
    }
    for (size_t i = 0; i < sizeof g_lt_names / sizeof g_lt_names[0]; i++) {
        void *p = c->lt_sym(g_lt_names[i]);
        if (strcmp(object(p), lt_obj) != 0)
            fail_msg("dlsym(libcublasLt.so.13, %s) is in %s, not %s", g_lt_names[i], object(p), lt_obj);
    }
    /* dlvsym with the library's version (the fake has no version table: found) */
    assert_string_equal(object(c->vsym("cublasDgemm_v2", "libcublas.so.13")), blas_obj);
    /* the GEMMs are the shim's exported functions (what a program linking cuBLAS gets) */
    if (g_on)
        assert_ptr_equal(c->sym("cublasDgemm_v2"), dlsym(RTLD_DEFAULT, "cublasDgemm_v2"));
    /* not intercepted: the fake's */
    assert_string_equal(object(c->sym("cublasSetStream_v2")), "libcublas.so.13");
    assert_string_equal(object(c->sym("fake_cublas_count")), "libcublas.so.13");
    assert_string_equal(object(c->lt_sym("cublasLtMatmulDescCreate")), "libcublasLt.so.13");
    assert_null(c->sym("cublasNoSuchGemm"));
    if (g_on && !log_contains("libcublas.so.13, cublasCreate_v2) from"))
        fail_msg("the log (OZCRT_LOG=2) does not name the lookup of cublasCreate_v2 the shim answered");
}

/* Client i's GEMMs: counted by the shim (or, hook off, not at all), recorded
 * by its own fake with its handle, the handle queried there; the other fake
 * sees nothing. */
static void gemms_reach_own_fake(int i)
{
    client *c = &g_c[i], *other = &g_c[1 - i];
    const int other_count = other->count(), other_queries = other->queries();
    uint64_t calls0, why0, calls1, why1;
    counted("cublasDgemm_v2", "no-gpu", &calls0, &why0);
    assert_int_equal(c->dgemm(300, 200, 256, &c->h), CUBLAS_STATUS_MAPPING_ERROR);
    const fake_call *r = c->last();
    assert_int_equal(c->count(), 1);
    assert_int_equal(r->id, c->id);
    assert_string_equal(r->name, "cublasDgemm_v2");
    assert_ptr_equal(r->handle, c->h);
    assert_int_equal(r->m, 300);
    assert_int_equal(r->n, 200);
    assert_int_equal(r->k, 256);
    counted("cublasDgemm_v2", "no-gpu", &calls1, &why1);
    assert_int_equal(calls1 - calls0, g_on);
    assert_int_equal(why1 - why0, g_on);
    if (g_on && c->queries() < 1)
        fail_msg("the router did not query handle %p in its own cuBLAS (.so.%d)", (void *)c->h, c->id);
    /* the autotuned path (cublasGemmEx, FP64) and the batched one (A broadcast: stride 0) */
    counted("cublasGemmEx", "no-gpu", &calls0, &why0);
    assert_int_equal(c->gemm_ex(c->h, 512, 384, 640), CUBLAS_STATUS_MAPPING_ERROR);
    assert_string_equal(c->last()->name, "cublasGemmEx");
    assert_int_equal(c->last()->id, c->id);
    assert_ptr_equal(c->last()->handle, c->h);
    counted("cublasGemmEx", "no-gpu", &calls1, &why1);
    assert_int_equal(why1 - why0, g_on);
    counted("cublasDgemmStridedBatched", "no-gpu", &calls0, &why0);
    assert_int_equal(c->dgemm_strided(c->h, 256, 128, 64, 4), CUBLAS_STATUS_MAPPING_ERROR);
    assert_string_equal(c->last()->name, "cublasDgemmStridedBatched");
    assert_int_equal(c->last()->id, c->id);
    assert_int_equal(c->last()->strideA, 0);
    counted("cublasDgemmStridedBatched", "no-gpu", &calls1, &why1);
    assert_int_equal(why1 - why0, g_on);
    assert_int_equal(other->count(), other_count);
    assert_int_equal(other->queries(), other_queries);
}

static void t_gemms(void **state)
{
    (void)state;
    gemms_reach_own_fake(0);
    gemms_reach_own_fake(1);
    gemms_reach_own_fake(0); /* a third handle: .so.13 again, after .so.99 was seen */
    for (int i = 1; i >= 0; i--) {
        client *c = &g_c[i];
        assert_int_equal(c->destroy(c->h), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(c->last()->id, c->id);
        assert_string_equal(c->last()->name, "cublasDestroy_v2");
        assert_ptr_equal(c->last()->handle, c->h);
    }
}

/* cuBLASLt: each client's FP64 matmul (A and B in row order) decoded and
 * routed by the shim, forwarded to its own fake; its Lt handle destroyed there. */
static void t_lt(void **state)
{
    (void)state;
    for (int i = 0; i < 2; i++) {
        client *c = &g_c[i], *other = &g_c[1 - i];
        const int other_count = other->lt_count(), live = c->lt_live(), other_live = other->lt_live();
        uint64_t calls0, why0, calls1, why1;
        counted("cublasLtMatmul", "no-gpu", &calls0, &why0);
        assert_int_equal(c->lt_matmul(), CUBLAS_STATUS_SUCCESS);
        assert_int_equal(c->lt_count(), 1);
        assert_int_equal(c->lt_live(), live); /* handle, descriptor, layouts: all destroyed in its own copy */
        counted("cublasLtMatmul", "no-gpu", &calls1, &why1);
        assert_int_equal(calls1 - calls0, g_on);
        assert_int_equal(why1 - why0, g_on);
        assert_int_equal(other->lt_count(), other_count);
        assert_int_equal(other->lt_live(), other_live);
    }
}

int main(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "usage: %s on|off CLIENT_A CLIENT_B LIBCUBLAS13 LIBCUBLAS99 LIBCUBLASLT13 LIBCUBLASLT99\n",
                argv[0]);
        return 2;
    }
    g_on = strcmp(argv[1], "off") != 0;
    g_late = strcmp(argv[1], "late") == 0;
    if (g_late) {
        if (argc < 9 || getenv("LD_PRELOAD")) {
            fprintf(stderr, "%s late: LIBOZCRT last, and nothing preloaded\n", argv[0]);
            return 2;
        }
        void *shim = dlopen(argv[8], RTLD_NOW | RTLD_GLOBAL);
        if (!shim || !(*(void **)&hook_dlsym = dlsym(shim, "ozcrt_hook_dlsym"))) {
            fprintf(stderr, "%s: %s\n", argv[8], dlerror());
            return 2;
        }
    }
    g_c[0] = (client){.id = 13, .path = argv[2], .blas = argv[4], .lt = argv[6]};
    g_c[1] = (client){.id = 99, .path = argv[3], .blas = argv[5], .lt = argv[7]};
    *(void **)&stats_enable = dlsym(RTLD_DEFAULT, "ozcrt_stats_enable");
    *(void **)&stats_get = dlsym(RTLD_DEFAULT, "ozcrt_stats_get");
    *(void **)&entry_name = dlsym(RTLD_DEFAULT, "ozcrt_stats_entry_name");
    *(void **)&reason_name = dlsym(RTLD_DEFAULT, "ozcrt_stats_reason_name");
    *(void **)&entry_count = dlsym(RTLD_DEFAULT, "ozcrt_stats_entry_count");
    *(void **)&reason_count = dlsym(RTLD_DEFAULT, "ozcrt_stats_reason_count");
    if (!stats_enable || !stats_get || !entry_name || !reason_name || !entry_count || !reason_count) {
        fprintf(stderr, "%s: run it with libozcrt.so preloaded\n", argv[0]);
        return 2;
    }
    stats_enable(1);
    const char *log = getenv("OZCRT_LOG_FILE"); /* appended to by the shim: start it empty */
    FILE *lf = log ? fopen(log, "w") : NULL;
    if (lf)
        fclose(lf);
    if (dlsym(RTLD_DEFAULT, "cublasSetStream_v2")) {
        fprintf(stderr, "%s: a cuBLAS is in the global scope; the clients must bring their own\n", argv[0]);
        return 2;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_handed_out),
        cmocka_unit_test(t_gemms),
        cmocka_unit_test(t_lt),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
