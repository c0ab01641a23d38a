/* kernels/operand_residues.cu: scaled hi/lo slices of an operand reduced into its int8 residue planes (phase22.md steps 1-3), for either plane layout. */
#include "engine_cfg.h"
#include "p22_params.h"
#include "operand_tile.cuh"
#include "../slicing/slice_fast.h"

/* The layouts, as data: which moduli, and where slice sl of row r of
 * modulus q goes. The mma.sync kernels: the seven primes, plane q * 2 + sl,
 * row r. The sm_90a engine: the first OZ_P22G_NMODULI engine moduli, plane
 * q, logical row oz_p22g_row(r, sl). */
struct oz_res_plan_primes {
    static constexpr int NMOD = OZ_P22_NPRIMES;
#define OZ_RPP_(i, p, f, mu) (p),
    static __host__ __device__ constexpr int32_t modulus(int q)
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
    static __host__ __device__ constexpr int32_t modulus(int q)
    {
        constexpr int32_t m[NMOD] = {OZ_P22G_MODULI(OZ_RPE_)};
        return m[q];
    }
#undef OZ_RPE_
    static __device__ __forceinline__ int plane(int q, int) { return q; }
    static __device__ __forceinline__ int64_t row(int64_t r, int sl) { return oz_p22g_row(r, sl); }
};

/* Whether the fast residue formula serves every modulus of a plan (odd, or 256). */
template <class Plan>
static __host__ __device__ constexpr bool oz_res_plan_fast_ok()
{
    for (int q = 0; q < Plan::NMOD; q++)
        if (!(Plan::modulus(q) == 256 || (Plan::modulus(q) % 2 == 1 && Plan::modulus(q) < 256)))
            return false;
    return true;
}

typedef oz_stage_tile oz_res_tile;
/* Blocks per SM the kernel is built for: 48 registers (no spills on sm_90;
 * 8 bytes for the seven primes on sm_80), 40 warps and 80 KiB of tiles in
 * flight per SM. */
#define OZ_RES_MIN_BLOCKS 5

/* One block: one tile of oz_res_tile::ROWS rows x oz_res_tile::K k of the
 * padded operand (no loop over tiles: its invariants would hold registers).
 * Blocks run along K first, so that neighbouring blocks write neighbouring
 * 128-byte lines of the same plane rows. The doubles are staged through
 * shared memory (operand_tile.cuh); each thread then slices 8 consecutive k
 * of one row (slice_fast.h: three double multiply-adds per element) and
 * writes their 8 residues of each plane (a float and an integer multiply-add
 * each, none for 256) as one 8-byte store. Padding gets zeros, and so do
 * special (Inf/NaN) rows, which the fix-up kernel computes instead. */
template <class Plan>
__global__ void __launch_bounds__(oz_res_tile::THREADS, OZ_RES_MIN_BLOCKS)
    oz_operand_residues_kernel(oz_view v, oz_operand_ws w)
{
    static_assert(oz_res_plan_fast_ok<Plan>(), "slice_fast.h's residues need odd moduli below 256, or 256");
    constexpr int KT = oz_res_tile::K_PER_THREAD;
    static_assert(KT == 8, "two words of four residues per plane");
    __shared__ oz_res_tile tile;
    const int64_t b = blockIdx.z;
    const double *x = v.ptr(b);
    const int tid = threadIdx.x;
    const int rr = tid / oz_res_tile::CHUNKS, kc = (tid % oz_res_tile::CHUNKS) * KT;
    const unsigned ktiles = (unsigned)(w.kpad / oz_res_tile::K);
    const int64_t kt = blockIdx.x % ktiles, rt = blockIdx.x / ktiles;
    const int64_t k0 = kt * oz_res_tile::K, r0 = rt * oz_res_tile::ROWS, r = r0 + rr;
    const int sc = w.scale(b)[r];
    tile.stage(v, x, r0, k0, tid);
    __syncthreads();

    const bool live = r < v.rows && sc != OZ_SCALE_SPECIAL;
    const oz_fast_row rc = oz_fast_row_of(live ? sc : 0);
    int32_t s[OZ_NSLICES][KT];
    float sf[OZ_NSLICES][KT];
#pragma unroll
    for (int e = 0; e < KT; e++) {
        const double raw = tile.get8(rr, kc, e);
        const double val = live ? raw : 0.0; /* the tile holds 0 past k */
        oz_slice_fast(val, rc, &s[OZ_SLICE_HI][e], &s[OZ_SLICE_LO][e]);
#pragma unroll
        for (int sl = 0; sl < OZ_NSLICES; sl++)
            sf[sl][e] = oz_fast_float(s[sl][e]);
    }
    /* plane pl, logical row lr: base + pl * plane + lr * kpad */
    int8_t *const base = w.plane(b, 0) + k0 + kc;
    const int64_t plane = w.plane_rows * w.kpad;
#pragma unroll
    for (int q = 0; q < Plan::NMOD; q++) {
        const int32_t p = Plan::modulus(q);
        const float inv = oz_fast_inv(p);
#pragma unroll
        for (int sl = 0; sl < OZ_NSLICES; sl++) {
            int32_t t[KT];
#pragma unroll
            for (int e = 0; e < KT; e++)
                t[e] = oz_residue_fast(s[sl][e], sf[sl][e], p, inv);
            const uint2 word = make_uint2(oz_fast_pack4(t[0], t[1], t[2], t[3]),
                                          oz_fast_pack4(t[4], t[5], t[6], t[7]));
            *(uint2 *)(base + Plan::plane(q, sl) * plane + Plan::row(r, sl) * w.kpad) = word;
        }
    }
}

cudaError_t oz_launch_operand_residues(const oz_view &v, const oz_operand_ws &w, int64_t group, cudaStream_t s,
                                       bool engine_layout)
{
    const int64_t ktiles = w.kpad / oz_res_tile::K, rtiles = w.rows_pad / oz_res_tile::ROWS;
    if (ktiles <= 0 || rtiles <= 0 || group <= 0)
        return cudaSuccess;
    if (ktiles * rtiles > INT32_MAX || group > 65535)
        return cudaErrorInvalidValue;
    const dim3 grid((unsigned)(ktiles * rtiles), 1, (unsigned)group);
    if (engine_layout)
        oz_operand_residues_kernel<oz_res_plan_engine><<<grid, oz_res_tile::THREADS, 0, s>>>(v, w);
    else
        oz_operand_residues_kernel<oz_res_plan_primes><<<grid, oz_res_tile::THREADS, 0, s>>>(v, w);
    return cudaGetLastError();
}
