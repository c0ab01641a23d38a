/* kernels/tiles.h: tile shapes of the GPU Phase 22 path, the one place they are set. */
#ifndef OZCRT_KERNELS_TILES_H
#define OZCRT_KERNELS_TILES_H

#include "../slicing/slicing.h"

/* mma.sync.m16n8k32 s8: the instruction's shape. */
#define OZ_MMA_M 16
#define OZ_MMA_N 8
#define OZ_MMA_K 32

/* Padding of the residue matrices: rows to the largest CTA tile, K to the
 * largest K stage, so that every tile and every stage is whole. */
#define OZ_PAD_ROWS_A 128
#define OZ_PAD_ROWS_B 128
#define OZ_PAD_K 128

/* The Phase 22 residue kernel: a tile of operand rows x K (operand_tile.cuh). */
#define OZ_RT_ROWS 16
#define OZ_RT_K 128

#ifdef __cplusplus
/* The fused kernel's configurations, as data. Per element of C: the int32
 * accumulator lives in a register (touched every MMA), the CRT sum in shared
 * memory or the workspace (once per prime), the double accumulator in the
 * workspace (once per pass per K chunk); registers hold only accumulators
 * and fragments. */
template <int CTA_M_, int CTA_N_, int WARPS_M_, int WARPS_N_, int STAGES_, int K_STAGE_, bool CRT_IN_SMEM_>
struct oz_tile_config {
    /* Where the CRT sums live: shared memory (fast, but it takes the room of
     * pipeline stages) or the workspace (L2: a read and a write per element
     * per prime, for more stages in flight). */
    static constexpr bool CRT_IN_SMEM = CRT_IN_SMEM_;
    static constexpr int CTA_M = CTA_M_, CTA_N = CTA_N_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_;
    static constexpr int STAGES = STAGES_;
    static constexpr int K_STAGE = K_STAGE_;         /* K bytes per cp.async pipeline stage */
    static constexpr int CHUNKS = K_STAGE / 16;      /* 16-byte pieces per row of a stage */
    /* Shared-memory rows are K_STAGE bytes, unpadded; piece c of row r is
     * stored at piece c ^ swz(r), so that the 8 rows one ldmatrix phase reads
     * (same logical piece) fall into 8 distinct 16-byte bank groups. */
    static constexpr int ROWS_PER_LINE = K_STAGE >= 128 ? 1 : 128 / K_STAGE;
    static __host__ __device__ constexpr int swz(int row) { return (row / ROWS_PER_LINE) % CHUNKS; }
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int WARP_M = CTA_M / WARPS_M, WARP_N = CTA_N / WARPS_N;
    static constexpr int FRAG_M = WARP_M / OZ_MMA_M, FRAG_N = WARP_N / OZ_MMA_N;
    static constexpr int ELEMS = FRAG_M * FRAG_N * 4;                 /* C elements per thread */
    static constexpr int A_CHUNKS = CTA_M * K_STAGE / 16 / THREADS; /* 16-byte copies per thread */
    static constexpr int B_CHUNKS = CTA_N * K_STAGE / 16 / THREADS;
    static constexpr int SMEM_A = STAGES * CTA_M * K_STAGE;
    static constexpr int SMEM_B = STAGES * CTA_N * K_STAGE;
    /* + 1024: the kernel aligns its base to the 1024-byte swizzle atom */
    static constexpr int SMEM_BYTES = SMEM_A + SMEM_B + (CRT_IN_SMEM ? ELEMS * THREADS * 8 : 0) + 1024;
    static_assert(WARP_M % OZ_MMA_M == 0 && WARP_N % (2 * OZ_MMA_N) == 0, "warp tile");
    static_assert(A_CHUNKS * THREADS * 16 == CTA_M * K_STAGE, "A stage loads");
    static_assert(B_CHUNKS * THREADS * 16 == CTA_N * K_STAGE, "B stage loads");
    static_assert(K_STAGE % OZ_MMA_K == 0 && OZ_PAD_K % K_STAGE == 0 && OZ_P22_KCHUNK % K_STAGE == 0, "K stage");
    static_assert(K_STAGE == 64 || K_STAGE == 128, "swizzle covers 64- and 128-byte rows");
    static_assert(THREADS % CHUNKS == 0, "loader rows");
    static_assert(OZ_PAD_ROWS_A % CTA_M == 0 && OZ_PAD_ROWS_B % CTA_N == 0, "padding covers the tile");
    static_assert(STAGES >= 2, "pipeline");
};
/* Hopper (227 KB of shared memory per block): 128x128, 8 warps, 3 stages of
 * 128 B, CRT sums in shared memory: 225 KB. With mma.sync, 8 warps of 64x32
 * (the fastest mma.sync configuration measured, BENCHMARKS.md: 4 warps of
 * 64x64, or the CRT sums in the workspace with 7 stages, were slower); with
 * wgmma (sm_90a), 2 warpgroups of 64x128. */
typedef oz_tile_config<128, 128, 2, 4, 3, 128, true> oz_tiles_large;
/* Any sm_80+ GPU (>= 99 KB): 128x64, 2 stages of 64 B, CRT sums in shared memory, 88 KB. */
typedef oz_tile_config<128, 64, 4, 2, 2, 64, true> oz_tiles_small;

static_assert(OZ_PAD_ROWS_A % OZ_RT_ROWS == 0 && OZ_PAD_ROWS_B % OZ_RT_ROWS == 0, "residue tiles");
static_assert(OZ_PAD_K % OZ_RT_K == 0, "residue K tiles");
#endif
#endif
