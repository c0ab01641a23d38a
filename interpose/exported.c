/* interpose/exported.c: the only symbols libozcrt.so exports, a few lines each (one macro per entry-point family, its two integer widths and, for the D and Z families, its element type; the legacy API's by hand).
 *
 * Each wrapper packs its arguments into an ozcrt_call, lets route.c take the
 * call, and otherwise forwards the caller's own arguments, untouched, to the
 * real cuBLAS that owns the handle. The list must match OZCRT_INTERCEPTED and
 * libozcrt.map. At the end, what the dlsym hook (dlhook.c) hands out for
 * each name. */
#include <stdatomic.h>
#include <stdio.h>
#include <cublas_v2.h>

#include "dlhook.h"
#include "gemm_params.h"
#include "policy.h"
#include "real.h"
#include "route.h"

#define OZCRT_EXPORT __attribute__((visibility("default")))

#define OZCRT_TAKE(...)                      \
    do {                                     \
        ozcrt_call c_ = {__VA_ARGS__};       \
        cublasStatus_t st_;                  \
        if (ozcrt_route(&c_, &st_))          \
            return st_;                      \
    } while (0)

/* Each family's wrapper, written once for its two integer widths (IT:
 * gemm_params.h's parameter lists) and, for the D and Z families, its
 * element type (PARAMS, ELEM: OZ_ELEM_REAL or OZ_ELEM_COMPLEX); the Ex
 * families' element type is their A type's (ozcrt_ex_elem). */
#define OZCRT_XGEMM(NAME, PARAMS, IT, ELEM)                                                                          \
    OZCRT_EXPORT cublasStatus_t NAME(PARAMS(IT))                                                                     \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .elem = ELEM, .alpha = alpha, .A = A, .lda = lda, .B = B, .ldb = ldb, .beta = beta,      \
                   .C = C, .ldc = ldc, .batch = 1);                                                                  \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                   \
    }

#define OZCRT_GEMMEX(NAME, IT)                                                                                       \
    OZCRT_EXPORT cublasStatus_t NAME(OZCRT_GEMMEX_PARAMS(IT))                                                        \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .elem = ozcrt_ex_elem(Atype), .alpha = alpha, .A = A, .lda = lda, .B = B, .ldb = ldb,    \
                   .beta = beta, .C = C, .ldc = ldc, .batch = 1, .typed = 1, .Atype = Atype, .Btype = Btype,        \
                   .Ctype = Ctype, .compute = computeType, .algo = algo);                                            \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype,    \
                      ldc, computeType, algo);                                                                       \
    }

#define OZCRT_XGEMM_STRIDED(NAME, PARAMS, IT, ELEM)                                                                  \
    OZCRT_EXPORT cublasStatus_t NAME(PARAMS(IT))                                                                     \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .elem = ELEM, .alpha = alpha, .A = A, .lda = lda, .strideA = strideA, .B = B,            \
                   .ldb = ldb, .strideB = strideB, .beta = beta, .C = C, .ldc = ldc, .strideC = strideC,             \
                   .batch = batchCount);                                                                             \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc,  \
                      strideC, batchCount);                                                                          \
    }

#define OZCRT_GEMM_STRIDED_EX(NAME, IT)                                                                              \
    OZCRT_EXPORT cublasStatus_t NAME(OZCRT_GEMM_STRIDED_EX_PARAMS(IT))                                               \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .elem = ozcrt_ex_elem(Atype), .alpha = alpha, .A = A, .lda = lda, .strideA = strideA,    \
                   .B = B, .ldb = ldb, .strideB = strideB, .beta = beta, .C = C, .ldc = ldc, .strideC = strideC,     \
                   .batch = batchCount, .typed = 1, .Atype = Atype, .Btype = Btype, .Ctype = Ctype,                  \
                   .compute = computeType, .algo = algo);                                                            \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb, strideB,  \
                      beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);                                  \
    }

#define OZCRT_XGEMM_BATCHED(NAME, PARAMS, IT, ELEM)                                                                  \
    OZCRT_EXPORT cublasStatus_t NAME(PARAMS(IT))                                                                     \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .elem = ELEM, .alpha = alpha, .Aarray = (const void *const *)Aarray, .lda = lda,         \
                   .Barray = (const void *const *)Barray, .ldb = ldb, .beta = beta,                                  \
                   .Carray = (void *const *)Carray, .ldc = ldc, .batch = batchCount);                                \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, Aarray, lda, Barray, ldb, beta, Carray, ldc,     \
                      batchCount);                                                                                   \
    }

#define OZCRT_GEMM_BATCHED_EX(NAME, IT)                                                                              \
    OZCRT_EXPORT cublasStatus_t NAME(OZCRT_GEMM_BATCHED_EX_PARAMS(IT))                                               \
    {                                                                                                                \
        OZCRT_TAKE(.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa, .transb = transb, .m = m, .n = n,      \
                   .k = k, .elem = ozcrt_ex_elem(Atype), .alpha = alpha, .Aarray = Aarray, .lda = lda,               \
                   .Barray = Barray, .ldb = ldb, .beta = beta, .Carray = Carray, .ldc = ldc, .batch = batchCount,    \
                   .typed = 1, .Atype = Atype, .Btype = Btype, .Ctype = Ctype, .compute = computeType,              \
                   .algo = algo);                                                                                    \
        OZCRT_FORWARD(NAME, handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta,    \
                      Carray, Ctype, ldc, batchCount, computeType, algo);                                            \
    }

/* The grouped families (route.h says how they go): group g as one
 * pointer-array batch, its products from `off` on; the Ex family's scalar
 * arrays are read as doubles only once every group's types are FP64
 * (ozcrt_check_args). GROUP_ALONE: the real entry point's arguments for
 * group g alone. */
#define OZCRT_AT(p, g) ((const double *)(p) + (g))
#define OZCRT_GROUP_CALL(NAME, g, off, ...)                                                                          \
    {.ep = OZCRT_EP_##NAME, .handle = handle, .transa = transa_array[g], .transb = transb_array[g],                 \
     .m = m_array[g], .n = n_array[g], .k = k_array[g], .alpha = OZCRT_AT(alpha_array, g),                          \
     .Aarray = (const void *const *)Aarray + (off), .lda = lda_array[g],                                             \
     .Barray = (const void *const *)Barray + (off), .ldb = ldb_array[g], .beta = OZCRT_AT(beta_array, g),            \
     .Carray = (void *const *)Carray + (off), .ldc = ldc_array[g], .batch = group_size[g], __VA_ARGS__}

#define OZCRT_GROUPED(NAME, PARAMS, IT, TYPED, GROUP_ALONE, ...)                                                     \
    OZCRT_EXPORT cublasStatus_t NAME(PARAMS(IT))                                                                     \
    {                                                                                                                \
        ozcrt_reason r_ = ozcrt_grouped_gate(OZCRT_EP_##NAME, handle, group_count,                                  \
                                             transa_array && transb_array && m_array && n_array && k_array &&        \
                                                 alpha_array && lda_array && ldb_array && beta_array &&              \
                                                 ldc_array && group_size);                                           \
        int64_t off = 0; /* the products before group g */                                                          \
        for (IT g = 0; r_ == OZCRT_R_EMULATED && g < group_count; off += group_size[g], g++) {                      \
            const ozcrt_call c_ = OZCRT_GROUP_CALL(NAME, g, off, TYPED);                                             \
            const ozcrt_reason a_ = ozcrt_check_args(&c_);                                                           \
            if (a_ == OZCRT_R_INVALID_ARGS || a_ == OZCRT_R_TYPE)                                                    \
                r_ = a_;                                                                                             \
        }                                                                                                            \
        if (r_ != OZCRT_R_EMULATED) {                                                                                \
            char what_[40];                                                                                          \
            snprintf(what_, sizeof what_, "group_count=%lld ", (long long)group_count);                              \
            ozcrt_forward_counted(OZCRT_EP_##NAME, r_, what_);                                                       \
            OZCRT_FORWARD(NAME, handle, __VA_ARGS__);                                                                \
        }                                                                                                            \
        off = 0;                                                                                                     \
        for (IT g = 0; g < group_count; off += group_size[g], g++) {                                                 \
            const ozcrt_call c_ = OZCRT_GROUP_CALL(NAME, g, off, TYPED);                                             \
            cublasStatus_t st_;                                                                                      \
            if (!ozcrt_route(&c_, &st_))                                                                             \
                OZCRT_CALL_INTO(st_, ozcrt_real_for(handle), NAME, GROUP_ALONE);                                     \
            if (st_ != CUBLAS_STATUS_SUCCESS)                                                                        \
                return st_;                                                                                          \
        }                                                                                                            \
        return CUBLAS_STATUS_SUCCESS;                                                                                \
    }

#define OZCRT_DGEMM_GROUPED(NAME, IT)                                                                                \
    OZCRT_GROUPED(NAME, OZCRT_DGEMM_GROUPED_PARAMS, IT, .typed = 0,                                                  \
                  OZCRT_ARGS(handle, transa_array + g, transb_array + g, m_array + g, n_array + g, k_array + g,      \
                             alpha_array + g, Aarray + off, lda_array + g, Barray + off, ldb_array + g,              \
                             beta_array + g, Carray + off, ldc_array + g, (IT)1, group_size + g),                    \
                  transa_array, transb_array, m_array, n_array, k_array, alpha_array, Aarray, lda_array, Barray,     \
                  ldb_array, beta_array, Carray, ldc_array, group_count, group_size)

#define OZCRT_GEMM_GROUPED_EX(NAME, IT)                                                                              \
    OZCRT_GROUPED(NAME, OZCRT_GEMM_GROUPED_EX_PARAMS, IT,                                                            \
                  OZCRT_ARGS(.typed = 1, .Atype = Atype, .Btype = Btype, .Ctype = Ctype, .compute = computeType),    \
                  OZCRT_ARGS(handle, transa_array + g, transb_array + g, m_array + g, n_array + g, k_array + g,      \
                             OZCRT_AT(alpha_array, g), Aarray + off, Atype, lda_array + g, Barray + off, Btype,      \
                             ldb_array + g, OZCRT_AT(beta_array, g), Carray + off, Ctype, ldc_array + g, (IT)1,      \
                             group_size + g, computeType),                                                           \
                  transa_array, transb_array, m_array, n_array, k_array, alpha_array, Aarray, Atype, lda_array,      \
                  Barray, Btype, ldb_array, beta_array, Carray, Ctype, ldc_array, group_count, group_size,           \
                  computeType)

/* a macro argument that holds commas */
#define OZCRT_ARGS(...) __VA_ARGS__

#define OZCRT_DGEMM(NAME, IT) OZCRT_XGEMM(NAME, OZCRT_DGEMM_PARAMS, IT, OZ_ELEM_REAL)
#define OZCRT_DGEMM_STRIDED(NAME, IT) OZCRT_XGEMM_STRIDED(NAME, OZCRT_DGEMM_STRIDED_PARAMS, IT, OZ_ELEM_REAL)
#define OZCRT_DGEMM_BATCHED(NAME, IT) OZCRT_XGEMM_BATCHED(NAME, OZCRT_DGEMM_BATCHED_PARAMS, IT, OZ_ELEM_REAL)
#define OZCRT_ZGEMM(NAME, IT) OZCRT_XGEMM(NAME, OZCRT_ZGEMM_PARAMS, IT, OZ_ELEM_COMPLEX)
#define OZCRT_ZGEMM_STRIDED(NAME, IT) OZCRT_XGEMM_STRIDED(NAME, OZCRT_ZGEMM_STRIDED_PARAMS, IT, OZ_ELEM_COMPLEX)
#define OZCRT_ZGEMM_BATCHED(NAME, IT) OZCRT_XGEMM_BATCHED(NAME, OZCRT_ZGEMM_BATCHED_PARAMS, IT, OZ_ELEM_COMPLEX)

OZCRT_DGEMM(cublasDgemm_v2, int)
OZCRT_DGEMM(cublasDgemm_v2_64, int64_t)
OZCRT_GEMMEX(cublasGemmEx, int)
OZCRT_GEMMEX(cublasGemmEx_64, int64_t)
OZCRT_DGEMM_STRIDED(cublasDgemmStridedBatched, int)
OZCRT_DGEMM_STRIDED(cublasDgemmStridedBatched_64, int64_t)
OZCRT_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx, int)
OZCRT_GEMM_STRIDED_EX(cublasGemmStridedBatchedEx_64, int64_t)
OZCRT_DGEMM_BATCHED(cublasDgemmBatched, int)
OZCRT_DGEMM_BATCHED(cublasDgemmBatched_64, int64_t)
OZCRT_GEMM_BATCHED_EX(cublasGemmBatchedEx, int)
OZCRT_GEMM_BATCHED_EX(cublasGemmBatchedEx_64, int64_t)
OZCRT_DGEMM_GROUPED(cublasDgemmGroupedBatched, int)
OZCRT_DGEMM_GROUPED(cublasDgemmGroupedBatched_64, int64_t)
OZCRT_GEMM_GROUPED_EX(cublasGemmGroupedBatchedEx, int)
OZCRT_GEMM_GROUPED_EX(cublasGemmGroupedBatchedEx_64, int64_t)
/* cublasZgemm3m (Gauss's three real products a complex one in cuBLAS)
 * computes the same product: emulated like cublasZgemm_v2 */
OZCRT_ZGEMM(cublasZgemm_v2, int)
OZCRT_ZGEMM(cublasZgemm_v2_64, int64_t)
OZCRT_ZGEMM(cublasZgemm3m, int)
OZCRT_ZGEMM(cublasZgemm3m_64, int64_t)
OZCRT_ZGEMM_STRIDED(cublasZgemmStridedBatched, int)
OZCRT_ZGEMM_STRIDED(cublasZgemmStridedBatched_64, int64_t)
OZCRT_ZGEMM_BATCHED(cublasZgemmBatched, int)
OZCRT_ZGEMM_BATCHED(cublasZgemmBatched_64, int64_t)

/* The handle goes to the library that created it (real.h): the caller's own
 * cuBLAS, where a process holds two; for a caller that took this function
 * with dlsym on a cuBLAS handle (dlhook.h), that cuBLAS. */
static cublasStatus_t create_in(const ozcrt_real_table *real, cublasHandle_t *handle)
{
    cublasStatus_t status;
    OZCRT_CALL_INTO(status, real, cublasCreate_v2, handle);
    if (status == CUBLAS_STATUS_SUCCESS && handle)
        ozcrt_real_remember(*handle, real);
    return status;
}

OZCRT_EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    return create_in(ozcrt_real_for_caller(__builtin_return_address(0)), handle);
}

OZCRT_EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    ozcrt_on_destroy(handle);
    OZCRT_FORWARD_TO(ozcrt_real_forget(handle), cublasDestroy_v2, handle);
}

/* The legacy handle-less API (cublas.h; route.h says how its context is
 * followed): its context goes to the library its caller links, as a
 * handle does. */
static cublasStatus_t init_in(const ozcrt_real_table *real)
{
    cublasStatus_t status;
    OZCRT_CALL_INTO(status, real, cublasInit);
    if (status == CUBLAS_STATUS_SUCCESS) {
        ozcrt_real_remember(ozcrt_legacy_handle(), real);
        ozcrt_legacy_on_init();
    }
    return status;
}

OZCRT_EXPORT cublasStatus_t cublasInit(void)
{
    return init_in(ozcrt_real_for_caller(__builtin_return_address(0)));
}

OZCRT_EXPORT cublasStatus_t cublasShutdown(void)
{
    ozcrt_legacy_on_shutdown();
    OZCRT_FORWARD_TO(ozcrt_real_forget(ozcrt_legacy_handle()), cublasShutdown);
}

OZCRT_EXPORT cublasStatus_t cublasSetKernelStream(cudaStream_t stream)
{
    cublasStatus_t status;
    OZCRT_CALL_INTO(status, ozcrt_real_for(ozcrt_legacy_handle()), cublasSetKernelStream, stream);
    if (status == CUBLAS_STATUS_SUCCESS)
        ozcrt_legacy_on_stream(stream);
    return status;
}

/* Scalars by value and no status: a forwarded call sets the legacy error
 * state (cublasGetError) in cuBLAS itself, as without the shim. Written
 * once for cublasDgemm and cublasZgemm (T the element type). */
#define OZCRT_LEGACY_GEMM(NAME, T, ELEM)                                                                            \
    OZCRT_EXPORT void NAME(char transa, char transb, int m, int n, int k, T alpha, const T *A, int lda, const T *B,  \
                           int ldb, T beta, T *C, int ldc)                                                           \
    {                                                                                                                \
        const cublasHandle_t handle = ozcrt_legacy_handle();                                                         \
        ozcrt_call c = {.ep = OZCRT_EP_##NAME, .handle = handle, .transa = ozcrt_legacy_op(transa),                  \
                        .transb = ozcrt_legacy_op(transb), .m = m, .n = n, .k = k, .elem = ELEM, .alpha = &alpha,   \
                        .A = A, .lda = lda, .B = B, .ldb = ldb, .beta = &beta, .C = C, .ldc = ldc, .batch = 1};      \
        cublasStatus_t st;                                                                                           \
        if (ozcrt_route(&c, &st)) {                                                                                  \
            if (st != CUBLAS_STATUS_SUCCESS)                                                                         \
                ozcrt_error("ozcrt: " #NAME " (legacy API) m=%d n=%d k=%d: the emulated call failed with cuBLAS "    \
                            "status %d, which the legacy API cannot return",                                         \
                            m, n, k, (int)st);                                                                       \
            return;                                                                                                  \
        }                                                                                                            \
        const ozcrt_real_table *real = ozcrt_real_for(handle);                                                       \
        if (!real->NAME) {                                                                                           \
            (void)ozcrt_real_missing(#NAME);                                                                         \
            return;                                                                                                  \
        }                                                                                                            \
        ozcrt_in_real++;                                                                                             \
        real->NAME(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                                    \
        ozcrt_in_real--;                                                                                             \
    }
OZCRT_LEGACY_GEMM(cublasDgemm, double, OZ_ELEM_REAL)
OZCRT_LEGACY_GEMM(cublasZgemm, cuDoubleComplex, OZ_ELEM_COMPLEX)

/* ---- what the dlsym hook hands out (dlhook.h) ---- */

/* The shim's own definitions, whatever else the global scope defines: the
 * GEMMs (all but cublasLtMatmul: lt.c), cublasDestroy_v2 and the legacy
 * context's calls but cublasInit (tied to a library, below). */
#define OZCRT_SELF_NAMES(X)                                                                                          \
    X(cublasDgemm_v2) X(cublasDgemm_v2_64) X(cublasGemmEx) X(cublasGemmEx_64) X(cublasDgemmStridedBatched)           \
    X(cublasDgemmStridedBatched_64) X(cublasGemmStridedBatchedEx) X(cublasGemmStridedBatchedEx_64)                   \
    X(cublasDgemmBatched) X(cublasDgemmBatched_64) X(cublasGemmBatchedEx) X(cublasGemmBatchedEx_64)                  \
    X(cublasDgemmGroupedBatched) X(cublasDgemmGroupedBatched_64) X(cublasGemmGroupedBatchedEx)                       \
    X(cublasGemmGroupedBatchedEx_64) X(cublasZgemm_v2) X(cublasZgemm_v2_64) X(cublasZgemm3m) X(cublasZgemm3m_64)      \
    X(cublasZgemmStridedBatched) X(cublasZgemmStridedBatched_64) X(cublasZgemmBatched) X(cublasZgemmBatched_64)      \
    X(cublasDestroy_v2) X(cublasShutdown) X(cublasSetKernelStream) X(cublasDgemm) X(cublasZgemm)
#define OZCRT_SELF(name) extern __typeof__(name) ozcrt_self_##name __attribute__((alias(#name), visibility("hidden")));
OZCRT_SELF_NAMES(OZCRT_SELF)
#undef OZCRT_SELF

/* The cuBLAS libraries of the handed-out cublasCreate_v2 and cublasInit,
 * a slot each; the slot's table, made at its first call (not in dlsym). */
static ozcrt_dl_lib g_dl_libs[OZCRT_DL_SLOTS];
static _Atomic(const ozcrt_real_table *) g_dl_tables[OZCRT_DL_SLOTS];

static const ozcrt_real_table *dl_table(int i)
{
    const ozcrt_real_table *t = atomic_load_explicit(&g_dl_tables[i], memory_order_acquire);
    if (!t) {
        t = ozcrt_real_for_library(g_dl_libs[i].path);
        atomic_store_explicit(&g_dl_tables[i], t, memory_order_release);
    }
    return t;
}

#define OZCRT_DL_TIED(i)                                                                                             \
    static cublasStatus_t dl_create_##i(cublasHandle_t *handle) { return create_in(dl_table(i), handle); }           \
    static cublasStatus_t dl_init_##i(void) { return init_in(dl_table(i)); }
OZCRT_DL_TIED(0)
OZCRT_DL_TIED(1)
OZCRT_DL_TIED(2)
OZCRT_DL_TIED(3)
OZCRT_DL_TIED(4)
OZCRT_DL_TIED(5)
OZCRT_DL_TIED(6)
OZCRT_DL_TIED(7)
#undef OZCRT_DL_TIED
_Static_assert(OZCRT_DL_SLOTS == 8, "one dl_create_/dl_init_ pair a slot");
static ozcrt_cublasCreate_v2_fn const g_dl_create[OZCRT_DL_SLOTS] = {
    dl_create_0, dl_create_1, dl_create_2, dl_create_3, dl_create_4, dl_create_5, dl_create_6, dl_create_7};
static ozcrt_cublasInit_fn const g_dl_init[OZCRT_DL_SLOTS] = {dl_init_0, dl_init_1, dl_init_2, dl_init_3,
                                                              dl_init_4, dl_init_5, dl_init_6, dl_init_7};

void *ozcrt_dl_cublas_function(ozcrt_entry ep, uintptr_t base, const char *path)
{
    switch (ep) {
#define OZCRT_SELF_CASE(name)                                                                                        \
    case OZCRT_EP_##name:                                                                                            \
        return (void *)ozcrt_self_##name;
        OZCRT_SELF_NAMES(OZCRT_SELF_CASE)
#undef OZCRT_SELF_CASE
    case OZCRT_EP_cublasCreate_v2:
    case OZCRT_EP_cublasInit: {
        const int i = ozcrt_dl_slot(g_dl_libs, base, path);
        if (i < 0)
            return NULL;
        return ep == OZCRT_EP_cublasInit ? (void *)g_dl_init[i] : (void *)g_dl_create[i];
    }
    default:
        return NULL; /* cuBLASLt's: lt.c */
    }
}
