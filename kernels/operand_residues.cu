/* kernels/operand_residues.cu: scaled hi/lo slices of an operand reduced into its int8 residue planes (phase22.md steps 1-3), for either plane layout. */
#include "engine_cfg.h"
#include "p22_params.h"
#include "operand_tile.cuh"

/* The layouts, as data: which moduli, and where slice sl of row r of
 * modulus q goes. The mma.sync kernels: the seven primes, plane q * 2 + sl,
 * row r. The sm_90a engine: the first OZ_P22G_NMODULI engine moduli, plane
 * q, logical row oz_p22g_row(r, sl). */
struct oz_res_plan_primes {
    static constexpr int NMOD = OZ_P22_NPRIMES;
#define OZ_RPP_(i, p, f, mu) (p),
    static __device__ __forceinline__ int32_t modulus(int q)
    {
        constexpr int32_t m[NMOD] = {OZ_P22_MODULI(OZ_RPP_)};
        return m[q];
    }
#undef OZ_RPP_
    static __device__ __forceinline__ int plane(int q, int sl) { return q * OZ_NSLICES + sl; }
    static __device__ __forceinline__ int64_t row(int64_t r, int) { return r; }
};
struct oz_res_plan_engine {
    static constexpr int NMOD = OZ_P22G_NMODULI;
#define OZ_RPE_(i, m, f, mu) (m),
    static __device__ __forceinline__ int32_t modulus(int q)
    {
        constexpr int32_t m[NMOD] = {OZ_P22G_MODULI(OZ_RPE_)};
        return m[q];
    }
#undef OZ_RPE_
    static __device__ __forceinline__ int plane(int q, int) { return q; }
    static __device__ __forceinline__ int64_t row(int64_t r, int sl) { return oz_p22g_row(r, sl); }
};

/* One block: a tile of OZ_RT_ROWS rows x OZ_RT_K k of the padded operand,
 * 32 x 8 threads. The doubles are staged through shared memory so that the
 * global reads are coalesced along whichever of r or kk is contiguous; each
 * thread then slices 4 consecutive k of one row and writes 4 residues (one
 * 32-bit word) into each of the 14 planes. Padding gets zeros, and so do
 * special (Inf/NaN) rows, which the fix-up kernel computes instead. */
template <class Plan>
__global__ void __launch_bounds__(256) oz_operand_residues_kernel(oz_view v, oz_operand_ws w)
{
    __shared__ oz_operand_tile tile;
    const int64_t b = blockIdx.z;
    const double *x = v.ptr(b);
    const int64_t r0 = (int64_t)blockIdx.x * OZ_RT_ROWS;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int32_t *scale = w.scale(b);
    const int64_t ktiles = w.kpad / OZ_RT_K + (w.kpad % OZ_RT_K != 0);

    for (int64_t kt = blockIdx.y; kt < ktiles; kt += gridDim.y) {
        const int64_t k0 = kt * OZ_RT_K;
        __syncthreads(); /* the previous tile is consumed */
        oz_stage_operand_tile(tile, v, x, r0, k0, tx, ty);
        __syncthreads();

        const int t = ty * 32 + tx;
        const int rr = t / (OZ_RT_K / 4), kq = (t % (OZ_RT_K / 4)) * 4;
        const int64_t r = r0 + rr;
        if (k0 + kq >= w.kpad)
            continue;
        const int sc = scale[r];
        const bool live = r < v.rows && sc != OZ_SCALE_SPECIAL;
        int32_t hl[4][OZ_NSLICES];
        for (int e = 0; e < 4; e++) {
            double val = live ? tile[rr][kq + e] : 0.0; /* tile holds 0 past k */
            oz_slice(ldexp(val, -sc), &hl[e][OZ_SLICE_HI], &hl[e][OZ_SLICE_LO]);
        }
#pragma unroll
        for (int q = 0; q < Plan::NMOD; q++) {
            const int32_t p = Plan::modulus(q);
#pragma unroll
            for (int sl = 0; sl < OZ_NSLICES; sl++) {
                uint32_t word = 0;
#pragma unroll
                for (int e = 0; e < 4; e++)
                    word |= (uint32_t)(uint8_t)oz_residue(hl[e][sl], p) << (8 * e);
                *(uint32_t *)(w.plane(b, Plan::plane(q, sl)) + Plan::row(r, sl) * w.kpad + k0 + kq) = word;
            }
        }
    }
}

cudaError_t oz_launch_operand_residues(const oz_view &v, const oz_operand_ws &w, int64_t group, cudaStream_t s,
                                       bool engine_layout)
{
    int64_t ktiles = (w.kpad + OZ_RT_K - 1) / OZ_RT_K;
    dim3 grid((unsigned)(w.rows_pad / OZ_RT_ROWS), (unsigned)(ktiles < 65535 ? (ktiles > 0 ? ktiles : 1) : 65535),
              (unsigned)group);
    if (engine_layout)
        oz_operand_residues_kernel<oz_res_plan_engine><<<grid, dim3(32, 8), 0, s>>>(v, w);
    else
        oz_operand_residues_kernel<oz_res_plan_primes><<<grid, dim3(32, 8), 0, s>>>(v, w);
    return cudaGetLastError();
}
