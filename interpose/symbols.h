/* interpose/symbols.h: the one list of cuBLAS symbols the shim intercepts or uses.
 *
 * X-macros (cwrap's socket_wrapper style): the list expands into the function
 * pointer types, the real-function table, its name strings and the entry-point
 * enum, so they cannot drift apart. The types come from cuBLAS's own
 * prototypes (__typeof__), so a wrapper that does not match the header fails
 * to compile. libozcrt.map must list exactly OZCRT_INTERCEPTED; the test
 * tests/fake/check_exports.sh checks the built library against it. */
#ifndef OZCRT_INTERPOSE_SYMBOLS_H
#define OZCRT_INTERPOSE_SYMBOLS_H

#include <cublas_v2.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes" /* cublasLt.h declares a function f() */
#include <cublasLt.h>
#pragma GCC diagnostic pop
/* The legacy handle-less API's names (cublas.h) beside the _v2 ones:
 * cublas_v2.h maps cublasDgemm to cublasDgemm_v2 (and cublasZgemm to
 * cublasZgemm_v2), the shim needs both: legacy_decl.h removes the macros. */
#include "legacy_decl.h"

/* Exported by libozcrt.so. The GEMMs first: their index is the stats row
 * (the 64-bit-integer twins of the batched and Ex entry points after the
 * others, then the legacy API's cublasDgemm, then the grouped ones, so that
 * the older rows keep their index; a grouped call counts once a group;
 * then cuBLASLt's cublasLtMatmul, whose FP64 calls are routed (lt.c); then
 * the complex ones (ZGEMM), each beside its _64 twin, the legacy cublasZgemm
 * last: their calls are routed like the real ones, as complex products).
 * cublasCreate_v2 ties the new handle to the caller's cuBLAS
 * (real.h); cublasInit, cublasShutdown and cublasSetKernelStream follow the
 * legacy API's context (route.h); cublasLtDestroy frees an Lt handle's
 * workspaces. The cuBLASLt functions are called in the cuBLASLt the caller
 * links (lt.c), not through the cuBLAS tables. */
#define OZCRT_INTERCEPTED(X)        \
    X(cublasDgemm_v2)               \
    X(cublasDgemm_v2_64)            \
    X(cublasGemmEx)                 \
    X(cublasDgemmStridedBatched)    \
    X(cublasGemmStridedBatchedEx)   \
    X(cublasDgemmBatched)           \
    X(cublasGemmBatchedEx)          \
    X(cublasGemmEx_64)              \
    X(cublasDgemmStridedBatched_64) \
    X(cublasGemmStridedBatchedEx_64) \
    X(cublasDgemmBatched_64)        \
    X(cublasGemmBatchedEx_64)       \
    X(cublasDgemm)                  \
    X(cublasDgemmGroupedBatched)    \
    X(cublasDgemmGroupedBatched_64) \
    X(cublasGemmGroupedBatchedEx)   \
    X(cublasGemmGroupedBatchedEx_64) \
    X(cublasLtMatmul)               \
    X(cublasZgemm_v2)               \
    X(cublasZgemm_v2_64)            \
    X(cublasZgemm3m)                \
    X(cublasZgemm3m_64)             \
    X(cublasZgemmStridedBatched)    \
    X(cublasZgemmStridedBatched_64) \
    X(cublasZgemmBatched)           \
    X(cublasZgemmBatched_64)        \
    X(cublasZgemm)                  \
    X(cublasDestroy_v2)             \
    X(cublasCreate_v2)              \
    X(cublasInit)                   \
    X(cublasShutdown)               \
    X(cublasSetKernelStream)        \
    X(cublasLtDestroy)

/* Not exported: only resolved from the same library, for the call path
 * (the Set*, GetAtomicsMode and GetSmCountTarget ones for the native
 * branch's own handle, native_branch.h; optional). */
#define OZCRT_HELPERS(X)            \
    X(cublasGetStream_v2)           \
    X(cublasGetPointerMode_v2)      \
    X(cublasGetMathMode)            \
    X(cublasGetError)               \
    X(cublasSetStream_v2)           \
    X(cublasSetPointerMode_v2)      \
    X(cublasSetMathMode)            \
    X(cublasGetAtomicsMode)         \
    X(cublasSetAtomicsMode)         \
    X(cublasGetSmCountTarget)       \
    X(cublasSetSmCountTarget)

#define OZCRT_ALL_SYMBOLS(X) OZCRT_INTERCEPTED(X) OZCRT_HELPERS(X)

#define OZCRT_X_TYPEDEF(name) typedef __typeof__(name) *ozcrt_##name##_fn;
OZCRT_ALL_SYMBOLS(OZCRT_X_TYPEDEF)
#undef OZCRT_X_TYPEDEF

/* Entry points, in the order of OZCRT_INTERCEPTED. */
typedef enum ozcrt_entry {
#define OZCRT_X_ENUM(name) OZCRT_EP_##name,
    OZCRT_INTERCEPTED(OZCRT_X_ENUM)
#undef OZCRT_X_ENUM
    OZCRT_EP_COUNT
} ozcrt_entry;

/* The GEMM entry points are the ones before cublasDestroy_v2. */
#define OZCRT_EP_GEMM_COUNT OZCRT_EP_cublasDestroy_v2

/* Whether the entry point is a grouped one (a batch of pointer arrays a
 * group, its sizes and scalars in host arrays): route.h says how it goes. */
static inline int ozcrt_entry_grouped(ozcrt_entry ep)
{
    return ep == OZCRT_EP_cublasDgemmGroupedBatched || ep == OZCRT_EP_cublasDgemmGroupedBatched_64 ||
           ep == OZCRT_EP_cublasGemmGroupedBatchedEx || ep == OZCRT_EP_cublasGemmGroupedBatchedEx_64;
}

/* Whether the entry point takes arrays of matrix pointers (the Batched and
 * the grouped ones). */
static inline int ozcrt_entry_arrays(ozcrt_entry ep)
{
    return ep == OZCRT_EP_cublasDgemmBatched || ep == OZCRT_EP_cublasGemmBatchedEx ||
           ep == OZCRT_EP_cublasDgemmBatched_64 || ep == OZCRT_EP_cublasGemmBatchedEx_64 ||
           ep == OZCRT_EP_cublasZgemmBatched || ep == OZCRT_EP_cublasZgemmBatched_64 || ozcrt_entry_grouped(ep);
}

/* Whether the entry point is the legacy handle-less API's (cublas.h): its
 * handle is the shim's stand-in for the legacy context (route.h). */
static inline int ozcrt_entry_legacy(ozcrt_entry ep)
{
    return ep == OZCRT_EP_cublasDgemm || ep == OZCRT_EP_cublasZgemm;
}

/* The entry point's name, "?" when out of range. */
const char *ozcrt_entry_name(ozcrt_entry ep);

#endif
