/* kernels/oz2_gemm.h: the C host API of the GPU ozaki2 path (ozaki2.md).
 *
 * oz2_gemm_run() enqueues the whole path on a stream: scale exponents,
 * residues of the scaled integers for the plan's N moduli, one INT8 GEMM
 * per modulus on the engine (R_q planes), the exact CRT with the epilogue,
 * the Inf/NaN fix-up. It never synchronises or allocates, so it can be
 * captured into a CUDA graph. Results equal oz2_ref_dgemm() bit for bit.
 * The call descriptor is Phase 22's (ozcrt_gemm.h). */
#ifndef OZCRT_KERNELS_OZ2_GEMM_H
#define OZCRT_KERNELS_OZ2_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "ozcrt_gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plan's moduli count N for inner dimension k and target `bits`
 * (ozaki2.md step 1), 2..20; 0 when 20 moduli cannot serve (the router
 * forwards such calls). *w (may be NULL) gets the integer width. For the
 * automatic plan (bits = OZ2A_AUTO(B)): the most it may take, 20 and 77. */
int oz2_gemm_moduli(int64_t k, int bits, int *w);

/* The same for complex calls (docs/ozaki2-complex.md step 1): N, the engine
 * moduli's count that pins the result's w (2..20; 0 when no N serves), *w
 * (may be NULL) and *n_split (may be NULL): the split moduli the GPU runs,
 * two INT8 GEMMs each. For the automatic plan (bits = OZ2A_AUTO(B)), which
 * the GPU chooses per call, the most it may take: 20, 77 and 24 (0 for B
 * outside 20..64 or k >= 2^32). The workspace and run functions below take
 * complex descriptors (d->elem == OZ_ELEM_COMPLEX) with the same contract. */
int oz2z_gemm_moduli(int64_t k, int bits, int *w, int *n_split);

/* Workspace bytes (0 when the plan is unreachable): the least
 * oz2_gemm_run accepts (one batch item at a time, C in blocks of one tile,
 * K in slabs of one chunk); the best plan within the Phase 22 path's bound
 * (kernels/block_plan.h: max(1 GiB, a quarter of the operands' bytes));
 * and the most it asks for: one batch item's whole call at once where that
 * is more than the bound (N bytes per element of op(A), op(B) and C), batch
 * items grouped within the larger of the two. With less, batch items run
 * in smaller groups, C in blocks, K in slabs: the same bits, slower. */
size_t oz2_gemm_workspace_min(const oz_gemm_desc *d, int bits);
size_t oz2_gemm_workspace_full(const oz_gemm_desc *d, int bits);
/* As oz_gemm_workspace_sizes (kernels/ozcrt_gemm.h): the whole call, the
 * best plan under `cap`, the best under the cap and the bound, the least;
 * all 0 when the plan is unreachable. */
void oz2_gemm_workspace_sizes(const oz_gemm_desc *d, int bits, size_t cap, size_t sizes[OZ_GEMM_WS_SIZES]);

/* Enqueues the path on `stream` (a cudaStream_t). The caller has checked the
 * arguments (cuBLAS's rules); m, n or batch == 0 enqueue nothing. Returns a
 * cudaError_t: cudaSuccess, the first launch error, or
 * cudaErrorInvalidValue for an unreachable plan or a short workspace. */
int oz2_gemm_run(const oz_gemm_desc *d, int bits, void *workspace, size_t workspace_bytes, void *stream);

/* Tests only (tests/gpu), the layer-by-layer checks: where the parts of one
 * batch item's workspace slot are for the whole call at once (one block,
 * one slab; its slot_bytes is the workspace that gets that plan), and the path run
 * up to `stage`: 1 = scale exponents (int32 per row) and residue planes
 * (N planes of Mpad x Kpad int8 per operand, K contiguous), 2 = also the
 * engine's R_q planes (N planes of Mpad x Npad uint8, column-major). */
typedef struct oz2_gemm_layout_info {
    int n, w;
    int64_t Mpad, Npad, Kpad;
    int64_t offA, offB, offScaleA, offScaleB, offSpecial, offRes, slot_bytes;
} oz2_gemm_layout_info;
int oz2_gemm_layout(const oz_gemm_desc *d, int bits, oz2_gemm_layout_info *out);
int oz2_gemm_run_stage(const oz_gemm_desc *d, int bits, void *workspace, size_t workspace_bytes, int stage,
                       void *stream);

/* Test build only (OZ_TEST_HOOKS), like the two below: whether the current device runs the sm_90a residue engine (else the portable one). */
int oz2_gemm_sm90_engine(void);

/* Test build only (OZ_TEST_HOOKS): the most the path plans with (its least
 * need if that is more), so that blocks and slabs happen at small sizes;
 * 0: the bound. */
void oz2_gemm_force_budget(size_t bytes);

/* Test build only (OZ_TEST_HOOKS): 0 lets the device pick the residue engine (the
 * sm_90a engine where usable, else the portable one), 1 forces the portable
 * engine, 2 the sm_90a engine. */
void oz2_gemm_force_engine(int which);

#ifdef __cplusplus
}
#endif
#endif
