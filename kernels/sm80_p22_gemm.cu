/* kernels/sm80_p22_gemm.cu: the fused Phase 22 kernel on mma.sync.m16n8k32 s8 (sm_80 and newer): its Mma policy and launcher. */
#include "p22_fused.cuh"

__device__ __forceinline__ void oz_ldmatrix_x4(uint32_t (&r)[4], uint32_t smem)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem));
}

__device__ __forceinline__ void oz_mma_s8(int32_t *d, const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Each warp owns a WARP_M x WARP_N tile: FRAG_M x FRAG_N m16n8 accumulators,
 * element idx = (mi * FRAG_N + ni) * 4 + e at row mi*16 + g + 8(e/2), column
 * ni*8 + 2t + e%2 of the warp tile (g = lane/4, t = lane%4). Per K stage:
 * ldmatrix.x4 of the A and B fragments, then the MMAs. */
template <class Cfg>
struct oz_mma_sm80 {
    static constexpr int ELEMS = Cfg::FRAG_M * Cfg::FRAG_N * 4;
    int row0, col0, a_h, b_h, lane_swz;
    uint32_t a_row, b_row;

    __device__ explicit oz_mma_sm80(int tid)
    {
        const int lane = tid & 31, warp = tid >> 5;
        const int wm = warp % Cfg::WARPS_M, wn = warp / Cfg::WARPS_M;
        row0 = wm * Cfg::WARP_M + (lane >> 2);
        col0 = wn * Cfg::WARP_N + 2 * (lane & 3);
        /* ldmatrix row addresses of this lane (m16n8k32 fragment layouts):
         * A: matrix q = lane/8 holds rows +8*(q&1), k pieces +(q>>1);
         * B: matrix q holds n rows +8*(q>>1), k pieces +(q&1).
         * Every row a lane names is lr mod 8 above a multiple of 8, so its
         * swizzle is swz(lr) and the piece of K step ks is (2ks + h) ^ swz(lr). */
        const int lq = lane >> 3, lr = lane & 7;
        a_h = lq >> 1;
        b_h = lq & 1;
        lane_swz = Cfg::swz(lr);
        a_row = (wm * Cfg::WARP_M + lr + 8 * (lq & 1)) * Cfg::K_STAGE;
        b_row = (wn * Cfg::WARP_N + lr + 8 * (lq >> 1)) * Cfg::K_STAGE;
    }
    __device__ int row(int idx) const { return row0 + (idx / (4 * Cfg::FRAG_N)) * OZ_MMA_M + 8 * ((idx & 3) >> 1); }
    __device__ int col(int idx) const { return col0 + ((idx / 4) % Cfg::FRAG_N) * OZ_MMA_N + (idx & 1); }
    static __device__ void stage_landed() {}

    __device__ void stage(int32_t (&acc)[ELEMS], uint32_t sa_stage, uint32_t sb_stage) const
    {
        const uint32_t sa = sa_stage + a_row, sb = sb_stage + b_row;
#pragma unroll
        for (int ks = 0; ks < Cfg::K_STAGE / OZ_MMA_K; ks++) {
            const uint32_t a_piece = (((2 * ks + a_h) ^ lane_swz) * 16), b_piece = (((2 * ks + b_h) ^ lane_swz) * 16);
            uint32_t af[Cfg::FRAG_M][4], bf[Cfg::FRAG_N / 2][4];
#pragma unroll
            for (int mi = 0; mi < Cfg::FRAG_M; mi++)
                oz_ldmatrix_x4(af[mi], sa + mi * OZ_MMA_M * Cfg::K_STAGE + a_piece);
#pragma unroll
            for (int nj = 0; nj < Cfg::FRAG_N / 2; nj++)
                oz_ldmatrix_x4(bf[nj], sb + nj * 2 * OZ_MMA_N * Cfg::K_STAGE + b_piece);
#pragma unroll
            for (int mi = 0; mi < Cfg::FRAG_M; mi++)
#pragma unroll
                for (int ni = 0; ni < Cfg::FRAG_N; ni++)
                    oz_mma_s8(&acc[(mi * Cfg::FRAG_N + ni) * 4], af[mi], bf[ni >> 1][2 * (ni & 1)],
                              bf[ni >> 1][2 * (ni & 1) + 1]);
        }
    }
};

/* The large configuration where the device has the shared memory for it, else the small one. */
cudaError_t oz_launch_p22_sm80(oz_gemm_params &p, int64_t group, cudaStream_t s, int dev, bool large)
{
    return large ? oz_p22_launch<oz_tiles_large, oz_mma_sm80<oz_tiles_large>>(p, group, s, dev)
                 : oz_p22_launch<oz_tiles_small, oz_mma_sm80<oz_tiles_small>>(p, group, s, dev);
}
