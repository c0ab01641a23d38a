/* tests/fake/xla/xla_client.c: a library that uses cuBLAS as XLA does (xla/tsl/cuda/cublas_stub.cc): it does not link cuBLAS, dlopens libcublas and libcublasLt itself (RTLD_LOCAL) and takes every function with dlsym on its own handle.
 *
 * Symbol interposition never reaches these lookups: only the shim's dlsym
 * hook (interpose/dlhook.c) does. Built twice (xla_client_a, _b: each with
 * its own state) for the two-copies test; links libozcrt_dltest_dep.so,
 * which only its own scope holds (the lookups of dl_lookups.c whose answer
 * depends on the caller). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include "fake_cublas.h"

#define X_EXPORT __attribute__((visibility("default")))

int dltest_dep_value(void);

static void *g_blas, *g_lt;

/* cuBLAS and cuBLASLt as the stub sees them: pointers from dlsym(handle). */
static struct {
    __typeof__(cublasCreate_v2) *create;
    __typeof__(cublasDestroy_v2) *destroy;
    __typeof__(cublasDgemm_v2) *dgemm;
    __typeof__(cublasGemmEx) *gemm_ex;
    __typeof__(cublasDgemmStridedBatched) *dgemm_strided;
    __typeof__(fake_cublas_last) *last;
    __typeof__(fake_cublas_count) *count;
    __typeof__(fake_cublas_queries) *queries;
    __typeof__(fake_cublas_reset) *reset;
    __typeof__(fake_cublas_set_status) *set_status;
    __typeof__(cublasLtCreate) *lt_create;
    __typeof__(cublasLtDestroy) *lt_destroy;
    __typeof__(cublasLtMatmulDescCreate) *desc_create;
    __typeof__(cublasLtMatmulDescDestroy) *desc_destroy;
    __typeof__(cublasLtMatrixLayoutCreate) *layout_create;
    __typeof__(cublasLtMatrixLayoutSetAttribute) *layout_set;
    __typeof__(cublasLtMatrixLayoutDestroy) *layout_destroy;
    __typeof__(cublasLtMatmul) *matmul;
    __typeof__(fake_cublaslt_count) *lt_count;
    __typeof__(fake_cublaslt_live) *lt_live;
    __typeof__(fake_cublaslt_reset) *lt_reset;
} f;

X_EXPORT int xla_client_open(const char *cublas, const char *cublaslt);
X_EXPORT void *xla_client_sym(const char *name);
X_EXPORT void *xla_client_lt_sym(const char *name);
X_EXPORT void *xla_client_vsym(const char *name, const char *version);
X_EXPORT void *xla_client_default(const char *name);
X_EXPORT void *xla_client_next(const char *name);
X_EXPORT int xla_client_dep(void);
X_EXPORT cublasStatus_t xla_client_dgemm(int m, int n, int k, cublasHandle_t *handle);
X_EXPORT cublasStatus_t xla_client_gemm_ex(cublasHandle_t handle, int m, int n, int k);
X_EXPORT cublasStatus_t xla_client_dgemm_strided(cublasHandle_t handle, int m, int n, int k, int batch);
X_EXPORT cublasStatus_t xla_client_destroy(cublasHandle_t handle);
X_EXPORT const fake_call *xla_client_last(void);
X_EXPORT int xla_client_count(void);
X_EXPORT int xla_client_queries(void);
X_EXPORT cublasStatus_t xla_client_lt_matmul(void);
X_EXPORT int xla_client_lt_count(void);
X_EXPORT int xla_client_lt_live(void);

#define TAKE(handle, member, name)                                                                                   \
    do {                                                                                                             \
        *(void **)&f.member = dlsym(handle, name);                                                                   \
        if (!f.member) {                                                                                             \
            fprintf(stderr, "xla_client: dlsym %s: %s\n", name, dlerror());                                          \
            return -1;                                                                                               \
        }                                                                                                            \
    } while (0)

/* Opens the two libraries (RTLD_LOCAL) and takes what it calls; 0, or -1 (said on stderr). */
int xla_client_open(const char *cublas, const char *cublaslt)
{
    g_blas = dlopen(cublas, RTLD_NOW | RTLD_LOCAL);
    g_lt = dlopen(cublaslt, RTLD_NOW | RTLD_LOCAL);
    if (!g_blas || !g_lt) {
        fprintf(stderr, "xla_client: dlopen: %s\n", dlerror());
        return -1;
    }
    TAKE(g_blas, create, "cublasCreate_v2");
    TAKE(g_blas, destroy, "cublasDestroy_v2");
    TAKE(g_blas, dgemm, "cublasDgemm_v2");
    TAKE(g_blas, gemm_ex, "cublasGemmEx");
    TAKE(g_blas, dgemm_strided, "cublasDgemmStridedBatched");
    TAKE(g_blas, last, "fake_cublas_last");
    TAKE(g_blas, count, "fake_cublas_count");
    TAKE(g_blas, queries, "fake_cublas_queries");
    TAKE(g_blas, reset, "fake_cublas_reset");
    TAKE(g_blas, set_status, "fake_cublas_set_status");
    TAKE(g_lt, lt_create, "cublasLtCreate");
    TAKE(g_lt, lt_destroy, "cublasLtDestroy");
    TAKE(g_lt, desc_create, "cublasLtMatmulDescCreate");
    TAKE(g_lt, desc_destroy, "cublasLtMatmulDescDestroy");
    TAKE(g_lt, layout_create, "cublasLtMatrixLayoutCreate");
    TAKE(g_lt, layout_set, "cublasLtMatrixLayoutSetAttribute");
    TAKE(g_lt, layout_destroy, "cublasLtMatrixLayoutDestroy");
    TAKE(g_lt, matmul, "cublasLtMatmul");
    TAKE(g_lt, lt_count, "fake_cublaslt_count");
    TAKE(g_lt, lt_live, "fake_cublaslt_live");
    TAKE(g_lt, lt_reset, "fake_cublaslt_reset");
    return 0;
}

/* Lookups made from this library: the caller glibc sees is this object
 * (KEEP: no tail call, which would make the caller ours). */
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

void *xla_client_sym(const char *name)
{
    void *p = dlsym(g_blas, name);
    KEEP(p);
    return p;
}

void *xla_client_lt_sym(const char *name)
{
    void *p = dlsym(g_lt, name);
    KEEP(p);
    return p;
}

void *xla_client_vsym(const char *name, const char *version)
{
    void *p = dlvsym(g_blas, name, version);
    KEEP(p);
    return p;
}

void *xla_client_default(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    KEEP(p);
    return p;
}

void *xla_client_next(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    KEEP(p);
    return p;
}

int xla_client_dep(void)
{
    return dltest_dep_value();
}

static const double one = 1.0, half = 0.5;

/* A handle from its cublasCreate_v2 and one cublasDgemm_v2 (NT, as
 * local_client.c), the fake answering MAPPING_ERROR: the status. */
cublasStatus_t xla_client_dgemm(int m, int n, int k, cublasHandle_t *handle)
{
    f.reset();
    if (f.create(handle) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    f.reset();
    f.set_status(CUBLAS_STATUS_MAPPING_ERROR);
    return f.dgemm(*handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &one, (const double *)0x1000, m,
                   (const double *)0x2000, n, &half, (double *)0x3000, m);
}

/* cublasGemmEx in FP64 on an existing handle, as XLA's autotuned path calls it. */
cublasStatus_t xla_client_gemm_ex(cublasHandle_t handle, int m, int n, int k)
{
    f.reset();
    f.set_status(CUBLAS_STATUS_MAPPING_ERROR);
    return f.gemm_ex(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, (const void *)0x1000, CUDA_R_64F, k,
                     (const void *)0x2000, CUDA_R_64F, k, &half, (void *)0x3000, CUDA_R_64F, m, CUBLAS_COMPUTE_64F,
                     CUBLAS_GEMM_DEFAULT);
}

/* cublasDgemmStridedBatched, A broadcast over the batch (stride 0), as XLA passes it. */
cublasStatus_t xla_client_dgemm_strided(cublasHandle_t handle, int m, int n, int k, int batch)
{
    f.reset();
    f.set_status(CUBLAS_STATUS_MAPPING_ERROR);
    return f.dgemm_strided(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, (const double *)0x1000, m, 0,
                           (const double *)0x2000, k, (long long)k * n, &half, (double *)0x3000, m,
                           (long long)m * n, batch);
}

cublasStatus_t xla_client_destroy(cublasHandle_t handle)
{
    f.reset();
    return f.destroy(handle);
}

const fake_call *xla_client_last(void)
{
    return f.last();
}

int xla_client_count(void)
{
    return f.count();
}

int xla_client_queries(void)
{
    return f.queries();
}

/* One FP64 cublasLtMatmul as XLA's cuda_blas_lt.cc makes it: compute 64F,
 * scale 64F, host pointer mode, A and B in row order (their row-major
 * arrays), C and D column order, beta 0 with C NULL; its own Lt handle,
 * destroyed after. 300 x 200 x 100. */
cublasStatus_t xla_client_lt_matmul(void)
{
    cublasLtHandle_t h;
    cublasLtMatmulDesc_t d;
    cublasLtMatrixLayout_t la, lb, lc;
    static const double zero = 0.0;
    const int32_t row = CUBLASLT_ORDER_ROW;
    f.lt_reset();
    if (f.lt_create(&h) != CUBLAS_STATUS_SUCCESS || f.desc_create(&d, CUBLAS_COMPUTE_64F, CUDA_R_64F) != 0 ||
        f.layout_create(&la, CUDA_R_64F, 300, 100, 100) != 0 || f.layout_create(&lb, CUDA_R_64F, 100, 200, 200) != 0 ||
        f.layout_create(&lc, CUDA_R_64F, 300, 200, 300) != 0 ||
        f.layout_set(la, CUBLASLT_MATRIX_LAYOUT_ORDER, &row, sizeof row) != 0 ||
        f.layout_set(lb, CUBLASLT_MATRIX_LAYOUT_ORDER, &row, sizeof row) != 0)
        return CUBLAS_STATUS_INTERNAL_ERROR;
    cublasStatus_t st = f.matmul(h, d, &one, (const void *)0x1000, la, (const void *)0x2000, lb, &zero, NULL, lc,
                                 (void *)0x3000, lc, NULL, NULL, 0, (cudaStream_t)0);
    f.layout_destroy(la);
    f.layout_destroy(lb);
    f.layout_destroy(lc);
    f.desc_destroy(d);
    if (f.lt_destroy(h) != CUBLAS_STATUS_SUCCESS)
        return CUBLAS_STATUS_INTERNAL_ERROR;
    return st;
}

int xla_client_lt_count(void)
{
    return f.lt_count();
}

int xla_client_lt_live(void)
{
    return f.lt_live();
}
