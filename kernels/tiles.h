/* kernels/tiles.h: tile shapes of the GPU Phase 22 path, the one place they are set. */
#ifndef OZCRT_KERNELS_TILES_H
#define OZCRT_KERNELS_TILES_H

#include "../slicing/slicing.h"

/* mma.sync.m16n8k32 s8: the instruction's shape. */
#define OZ_MMA_M 16
#define OZ_MMA_N 8
#define OZ_MMA_K 32

/* K bytes per cp.async pipeline stage (two MMA K steps) and the residue
 * matrices' K padding, so that every stage is whole. */
#define OZ_K_STAGE 64
/* Shared-memory row pitch: 64 data bytes + 16 pad, so the 8 rows one
 * ldmatrix phase reads fall into 8 distinct 16-byte bank groups (5r mod 8). */
#define OZ_SMEM_PITCH 80

/* Padding of the residue matrices: rows to the largest CTA tile, K to a stage. */
#define OZ_PAD_ROWS_A 128
#define OZ_PAD_ROWS_B 128
#define OZ_PAD_K OZ_K_STAGE

/* Residue tiling kernels: a tile of operand rows x K. */
#define OZ_RT_ROWS 32
#define OZ_RT_K 32

#ifdef __cplusplus
/* The fused kernel's configurations, as data. Per element of C: the int32
 * accumulator lives in a register (touched every MMA), the CRT sum in shared
 * memory (once per prime), the double accumulator in the workspace (once per
 * pass per K chunk); so registers hold only accumulators and fragments. */
template <int CTA_M_, int CTA_N_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct oz_tile_config {
    static constexpr int CTA_M = CTA_M_, CTA_N = CTA_N_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
    static constexpr int STAGES = STAGES_;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int WARP_M = CTA_M / WARPS_M, WARP_N = CTA_N / WARPS_N;
    static constexpr int FRAG_M = WARP_M / OZ_MMA_M, FRAG_N = WARP_N / OZ_MMA_N;
    static constexpr int ELEMS = FRAG_M * FRAG_N * 4;                 /* C elements per thread */
    static constexpr int A_CHUNKS = CTA_M * OZ_K_STAGE / 16 / THREADS; /* 16-byte copies per thread */
    static constexpr int B_CHUNKS = CTA_N * OZ_K_STAGE / 16 / THREADS;
    static constexpr int SMEM_A = STAGES * CTA_M * OZ_SMEM_PITCH;
    static constexpr int SMEM_B = STAGES * CTA_N * OZ_SMEM_PITCH;
    static constexpr int SMEM_BYTES = SMEM_A + SMEM_B + ELEMS * THREADS * 8; /* + the CRT sums */
    static_assert(WARP_M % OZ_MMA_M == 0 && WARP_N % (2 * OZ_MMA_N) == 0, "warp tile");
    static_assert(A_CHUNKS * THREADS * 16 == CTA_M * OZ_K_STAGE, "A stage loads");
    static_assert(B_CHUNKS * THREADS * 16 == CTA_N * OZ_K_STAGE, "B stage loads");
    static_assert(OZ_PAD_ROWS_A % CTA_M == 0 && OZ_PAD_ROWS_B % CTA_N == 0, "padding covers the tile");
    static_assert(STAGES >= 2, "pipeline");
};
/* Hopper (227 KB of shared memory per block): 128x128, 4 stages, 208 KB. */
typedef oz_tile_config<128, 128, 2, 4, 4> oz_tiles_large;
/* Any sm_80+ GPU (>= 99 KB): 128x64, 2 stages, 85 KB. */
typedef oz_tile_config<128, 64, 4, 2, 2> oz_tiles_small;

static_assert(OZ_P22_KCHUNK % OZ_K_STAGE == 0, "K chunks are whole stages");
static_assert(OZ_K_STAGE % OZ_MMA_K == 0, "stages are whole MMA K steps");
static_assert(OZ_PAD_ROWS_A % OZ_RT_ROWS == 0 && OZ_PAD_ROWS_B % OZ_RT_ROWS == 0, "residue tiles");
static_assert(OZ_PAD_K % OZ_RT_K == 0, "residue K tiles");
static_assert(OZ_SMEM_PITCH % 16 == 0 && OZ_SMEM_PITCH >= OZ_K_STAGE, "smem pitch");
#endif
#endif
