/* kernels/ozcrt_gemm.h: the C host API of the GPU Phase 22 path.
 *
 * oz_gemm_run() enqueues the whole path on a stream: residue tiling, the
 * fused INT8 MMA + CRT kernel, the Inf/NaN fix-up. It never synchronises,
 * allocates or calls cudaDeviceSynchronize, so it can be captured into a
 * CUDA graph. Results equal oz_ref_dgemm() bit for bit. */
#ifndef OZCRT_KERNELS_OZCRT_GEMM_H
#define OZCRT_KERNELS_OZCRT_GEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct oz_gemm_desc {
    int transa, transb;         /* 0 = N, 1 = T, 2 = C (C is T for real data) */
    int64_t m, n, k;            /* >= 0 */
    const double *A;            /* device; batch item b at A + b*strideA */
    int64_t lda, strideA;
    const double *B;
    int64_t ldb, strideB;
    double *C;
    int64_t ldc, strideC;
    /* Pointer-array batches (cublasDgemmBatched): device arrays of `batch`
     * device pointers. When Aarray is not NULL, A/B/C and the strides are
     * ignored and all three arrays are used. */
    const double *const *Aarray;
    const double *const *Barray;
    double *const *Carray;
    int64_t batch;              /* >= 1 */
    const double *alpha;        /* host or device, as scalars_on_device says */
    const double *beta;
    int scalars_on_device;      /* CUBLAS_POINTER_MODE_DEVICE */
    /* OZ_ELEM_REAL (0): double. OZ_ELEM_COMPLEX: cuDoubleComplex, as
     * cublasZgemm_v2 takes it: A, B, C (and the arrays' pointers), alpha and
     * beta point to interleaved re/im pairs of doubles; ld and strides count
     * complex elements; transa/transb 2 is the conjugate transpose. Only
     * the ozaki2 path takes complex calls (docs/ozaki2-complex.md). */
    int elem;
    /* Automatic precision: NULL, or counters the GPU can write (e.g. mapped
     * host memory) of OZ2A_PLAN_COUNTS entries (kernels/oz2_auto_estimate.h):
     * each batch item's plan adds 1 to its entry as the plan is made. */
    unsigned long long *plan_counts;
    /* Automatic precision, batch 1: nonzero when the caller runs the call
     * natively where no plan certifies it (oz2_native_branch.h: a graph's
     * IF node after the path); the path then leaves those calls' C alone
     * (no plain dot product, no Inf/NaN fix-up). */
    int native_branch;
} oz_gemm_desc;

#define OZ_ELEM_REAL 0
#define OZ_ELEM_COMPLEX 1

/* Workspace bytes: the least oz_gemm_run accepts, and what it asks for. On
 * the sm_90a engine the latter is at most max(1 GiB, 0.25 x the operands'
 * bytes) unless the least is more (kernels/block_plan.h): with less than
 * everything at once, batch items go in groups, and an item that does not
 * fit whole goes in blocks of C and slabs of K; given more, it uses more.
 * The mma.sync kernels (other GPUs) need one batch item's residues of all
 * of K at least, the whole batch's at most. */
size_t oz_gemm_workspace_min(const oz_gemm_desc *d);
size_t oz_gemm_workspace_full(const oz_gemm_desc *d);

/* The workspaces a call can run with, best first, for the router (the
 * workspace table tries them in order; a size equal to the one before is
 * skipped): the most it asks for, the best plan under `cap`
 * (OZCRT_MAX_WORKSPACE_MB), a third (ozaki2: the best under the cap and the
 * Phase 22 bound; here the second again), the least. */
#define OZ_GEMM_WS_SIZES 4
void oz_gemm_workspace_sizes(const oz_gemm_desc *d, size_t cap, size_t sizes[OZ_GEMM_WS_SIZES]);

/* Enqueues the path on `stream` (a cudaStream_t). The caller has checked the
 * arguments (cuBLAS's rules); m, n or batch == 0 enqueue nothing.
 * Returns a cudaError_t: cudaSuccess, or the first launch error. */
int oz_gemm_run(const oz_gemm_desc *d, void *workspace, size_t workspace_bytes, void *stream);

/* 1 when this binary holds a kernel image that `device` can run (machine
 * code for its architecture, or PTX the driver can compile for it), 0 when
 * it does not or the device cannot be asked (kernels/device_check.cu). The
 * router asks once per device and forwards where it is 0 (no-kernel-image). */
int oz_gemm_device_supported(int device);

#ifdef __cplusplus
}
#endif
#endif
