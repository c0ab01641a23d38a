/* kernels/tiles.h: tile shapes of the GPU Phase 22 path, the one place they are set. */
#ifndef OZCRT_KERNELS_TILES_H
#define OZCRT_KERNELS_TILES_H

#include "../slicing/slicing.h"

/* Fused INT8 MMA + CRT kernel (sm_80 mma.sync path). */
#define OZ_CTA_M 128           /* rows of C per CTA */
#define OZ_CTA_N 64            /* columns of C per CTA */
#define OZ_K_STEP 32           /* K bytes per pipeline stage: one m16n8k32 */
#define OZ_WARPS_M 4
#define OZ_WARPS_N 2
#define OZ_THREADS (32 * OZ_WARPS_M * OZ_WARPS_N)
#define OZ_WARP_M (OZ_CTA_M / OZ_WARPS_M)   /* 32 */
#define OZ_WARP_N (OZ_CTA_N / OZ_WARPS_N)   /* 32 */
#define OZ_MMA_M 16
#define OZ_MMA_N 8
#define OZ_FRAG_M (OZ_WARP_M / OZ_MMA_M)    /* 2 */
#define OZ_FRAG_N (OZ_WARP_N / OZ_MMA_N)    /* 4 */
/* Shared-memory row pitch in bytes: 32 data + 16 pad, so the 8 rows an
 * ldmatrix phase reads fall in 8 distinct 16-byte bank groups. */
#define OZ_SMEM_PITCH 48
#define OZ_STAGES 2

/* Residue tiling kernels: a tile of operand rows x K. */
#define OZ_RT_ROWS 32
#define OZ_RT_K 32

/* Padding of the residue matrices: rows to the CTA tile, K to the K step. */
#define OZ_PAD_ROWS_A OZ_CTA_M
#define OZ_PAD_ROWS_B OZ_CTA_N
#define OZ_PAD_K OZ_K_STEP

#ifdef __cplusplus
static_assert(OZ_WARP_M % OZ_MMA_M == 0 && OZ_WARP_N % (2 * OZ_MMA_N) == 0, "warp tile");
static_assert(OZ_CTA_M * OZ_K_STEP / 16 == OZ_THREADS, "one 16-byte cp.async per thread for A");
static_assert(OZ_CTA_N * OZ_K_STEP / 16 <= OZ_THREADS, "B tile loads");
static_assert(OZ_P22_KCHUNK % OZ_K_STEP == 0, "K chunks are whole K steps");
static_assert(OZ_PAD_ROWS_A % OZ_RT_ROWS == 0 && OZ_PAD_ROWS_B % OZ_RT_ROWS == 0, "residue tiles");
static_assert(OZ_PAD_K % 4 == 0 && OZ_RT_K % OZ_PAD_K == 0 || OZ_PAD_K % OZ_RT_K == 0, "residue K tiles");
static_assert(OZ_SMEM_PITCH % 16 == 0 && OZ_SMEM_PITCH >= OZ_K_STEP, "smem pitch");
#endif
#endif
