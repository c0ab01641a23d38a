/* kernels/oz2_residues.cu: an operand's scaled integers a'' = rne(x 2^(w - s)) reduced into the symmetric int8 residue planes of the first N engine moduli (ozaki2.md step 2). */
#include "oz2_params.h"
#include "operand_tile.cuh"

/* One block: a tile of OZ_RT_ROWS rows x OZ_RT_K k of the padded operand,
 * 32 x 8 threads. The doubles are staged through shared memory so that the
 * global reads are coalesced along whichever of r or kk is contiguous; each
 * thread then scales 4 consecutive k of one row (from significand and
 * exponent: a'' can exceed 2^64), cuts each into 22-bit pieces once, and
 * writes 4 residues (one 32-bit word) into each of the N planes. Padding gets zeros, and so do special (Inf/NaN)
 * rows, which the fix-up kernel computes instead. */
__global__ void __launch_bounds__(256) oz2_residues_kernel(oz_view v, oz_operand_ws w, int nmod, int wbits)
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
        uint32_t pc[4][4];
        int neg[4];
        for (int e = 0; e < 4; e++) {
            uint64_t mag;
            int ex;
            neg[e] = oz2_scaled_int(live ? tile[rr][kq + e] : 0.0, live ? wbits - sc : 0, &mag, &ex);
            oz2_split22(mag, ex, pc[e]);
        }
#define OZ2_RESIDUE_PLANE_(q, m)                                                                 \
        if ((q) < nmod) {                                                                        \
            uint32_t word = 0;                                                                   \
            for (int e = 0; e < 4; e++)                                                          \
                word |= (uint32_t)(uint8_t)oz2_residue22(pc[e], neg[e], (m)) << (8 * e);         \
            *(uint32_t *)(w.plane(b, (q)) + r * w.kpad + k0 + kq) = word;                        \
        }
        OZ_ENGINE_MODULI(OZ2_RESIDUE_PLANE_)
#undef OZ2_RESIDUE_PLANE_
    }
}

cudaError_t oz2_launch_residues(const oz_view &v, const oz_operand_ws &w, int nmod, int wbits, int64_t group,
                                cudaStream_t s)
{
    int64_t ktiles = (w.kpad + OZ_RT_K - 1) / OZ_RT_K;
    dim3 grid((unsigned)(w.rows_pad / OZ_RT_ROWS), (unsigned)(ktiles < 65535 ? (ktiles > 0 ? ktiles : 1) : 65535),
              (unsigned)group);
    oz2_residues_kernel<<<grid, dim3(32, 8), 0, s>>>(v, w, nmod, wbits);
    return cudaGetLastError();
}
