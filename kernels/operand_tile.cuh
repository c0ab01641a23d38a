/* kernels/operand_tile.cuh: a tile of an operand staged through shared memory, read coalesced whichever of its dimensions is contiguous and without bank conflicts (the Phase 22 residue kernel's). */
#ifndef OZCRT_KERNELS_OPERAND_TILE_CUH
#define OZCRT_KERNELS_OPERAND_TILE_CUH

#include "p22_params.h"

/* ROWS x K doubles for 256 threads. Staged with 8-byte loads: where rows
 * are contiguous a half-warp reads 16 rows (128 bytes) of one k, where K is
 * contiguous a warp reads 32 k (256 bytes) of one row; all loads of a thread
 * are issued before its shared stores. Each thread then takes K_PER_THREAD
 * consecutive k of one row (a half-warp: one row, a warp: two), so that its
 * residues of one plane are one 8-byte store and a warp writes two whole
 * 128-byte lines.
 *
 * Element (r, k) lives at r K + (k ^ ((k >> 4) & 7) ^ r): every access
 * pattern above (16 rows of one k, 16 consecutive k of one row, element e of
 * 16 consecutive chunks of one row) falls into 16 distinct 8-byte bank pairs,
 * so no access has a bank conflict. */
struct oz_stage_tile {
    static constexpr int ROWS = OZ_RT_ROWS, K = OZ_RT_K, THREADS = 256;
    static constexpr int K_PER_THREAD = ROWS * K / THREADS; /* 8 */
    static constexpr int CHUNKS = K / K_PER_THREAD;         /* threads per row: 16 */
    static constexpr int LOADS = ROWS * K / THREADS;        /* doubles staged per thread */
    static_assert(CHUNKS == 16 && ROWS == 16, "a half-warp is one row; the swizzle covers 16 rows and chunks");
    static_assert(K == 128, "the swizzle's (k >> 4) & 7 spans K = 128");
    static_assert(OZ_PAD_K % K == 0 && OZ_PAD_ROWS_A % ROWS == 0 && OZ_PAD_ROWS_B % ROWS == 0,
                  "padded operands are whole tiles");

    double d[ROWS * K];

    static __device__ __forceinline__ int at(int r, int k) { return r * K + (k ^ ((k >> 4) & 7) ^ r); }
    /* Element k8 + e (k8 a multiple of 8, e < 8) is at at(r, k8) ^ e. */
    __device__ __forceinline__ double get8(int r, int k8, int e) const { return d[at(r, k8) ^ e]; }

    /* Rows r0.. and k0.. of x (a batch item's data, view v), zeros past the
     * operand's rows and k. The caller synchronises before (the previous
     * tile consumed) and after (the tile landed). */
    __device__ __forceinline__ void stage(const oz_view &v, const double *x, int64_t r0, int64_t k0, int tid)
    {
        const int lane = tid & 31, warp = tid >> 5;
        /* load i of a thread: row row0 + i drow, k kk0 + i dk of the tile */
        const bool rows_contiguous = v.rs == 1;
        const int row0 = rows_contiguous ? lane & 15 : warp >> 2;   /* a half-warp along r, or */
        const int kk0 = rows_contiguous ? 2 * warp + (lane >> 4) : (warp & 3) * 32 + lane; /* a warp along k */
        const int drow = rows_contiguous ? 0 : 2, dk = rows_contiguous ? 16 : 0;
        static_assert(LOADS * 16 == K && LOADS * 2 == ROWS, "8 warps cover the tile in LOADS steps");
        const int64_t rl = v.rows - r0, kl = v.k - k0;
        const int rlim = rl < ROWS ? (rl > 0 ? (int)rl : 0) : ROWS, klim = kl < K ? (kl > 0 ? (int)kl : 0) : K;
        const double *p = x + (r0 + row0) * v.rs + (k0 + kk0) * v.ks;
        const int64_t step = drow * v.rs + dk * v.ks;
        double val[LOADS];
#pragma unroll
        for (int i = 0; i < LOADS; i++, p += step)
            val[i] = row0 + i * drow < rlim && kk0 + i * dk < klim ? __ldg(p) : 0.0;
#pragma unroll
        for (int i = 0; i < LOADS; i++)
            d[at(row0 + i * drow, kk0 + i * dk)] = val[i];
    }
};

#endif
