/* kernels/p22_crt.cu: the Phase 22 CRT of one K chunk on the engine path: the residue planes of the chunk's four passes -> exact X, added in the order of phase22.md step 6 to the double accumulators, the last chunk through the alpha/beta epilogue to C. */
#include "../crt/crt.h"
#include "engine_cfg.h"
#include "epilogue.cuh"
#include "p22_params.h"
#include "res_layout.h"

/* A warp per group of 128 logical rows of a column of the planes (64 real
 * rows: oz_p22g_row puts the hi slices of 64 rows first, then their lo
 * slices), a thread per 32-bit word: by kernels/res_layout.h, word 8 v + g
 * of a group holds, for real rows i = 16 v + g and i + 8 of the group's 64,
 * hi(i), hi(i + 8), lo(i), lo(i + 8). The word of the logical column of
 * B's hi slice of real column j gives passes HH and LH of the two elements,
 * that of B's lo slice HL and LL: two words per modulus, coalesced, for two
 * elements of C (C stores: four runs of 8 rows per warp). */
__global__ void __launch_bounds__(256) oz_p22_crt_kernel(const oz_p22_crt_job job)
{
    const int64_t b = blockIdx.z;
    const int64_t wpos = ((int64_t)blockIdx.x * 32 + threadIdx.x) * 4; /* byte of the word in a column */
    const int64_t grp = wpos / OZ_RES_GROUP, r = oz_res_row_at(wpos) - grp * OZ_RES_GROUP; /* hi row in the group */
    const int64_t i0 = grp * 64 + r;                                     /* real rows i0, i0 + 8 */
    if (i0 >= job.m)
        return;
    const bool two = i0 + 8 < job.m;
    const uint8_t *res = job.res + b * job.res_item_bytes + wpos;
    const int64_t plane = job.res_rows * job.res_cols;
    double alpha = 0.0, beta = 0.0;
    int32_t sa0 = 0, sa1 = 0;
    if (job.last) {
        job.sc.load(&alpha, &beta);
        const int32_t *sA = job.scale_a + b * job.scale_stride_a;
        sa0 = sA[i0];
        sa1 = two ? sA[i0 + 8] : 0;
    }
    double *acc = job.first && job.last ? nullptr : job.acc.ptr(b) + job.acc_off;
    double *C = job.c.ptr(b) + job.c_off;
    for (int64_t j = (int64_t)blockIdx.y * 8 + threadIdx.y; j < job.n; j += (int64_t)gridDim.y * 8) {
        uint32_t wh[OZ_P22G_NMODULI], wl[OZ_P22G_NMODULI];
        const uint8_t *ch = res + oz_p22g_row(j, 0) * job.res_rows, *cl = res + oz_p22g_row(j, 1) * job.res_rows;
#pragma unroll
        for (int q = 0; q < OZ_P22G_NMODULI; q++) {
            wh[q] = *(const uint32_t *)(ch + q * plane);
            wl[q] = *(const uint32_t *)(cl + q * plane);
        }
#pragma unroll
        for (int e = 0; e < 2; e++) {
            if (e == 1 && !two)
                break;
            const int64_t i = i0 + 8 * e;
            /* S of each pass: sum over the moduli of r_q f_q (crt/crt.h oz_p22g_centered) */
            uint64_t hh = 0, lh = 0, hl = 0, ll = 0;
#define OZ_P22_CRT_TERM_(q, m, f, mu)                                     \
            hh += (uint64_t)((wh[q] >> (8 * e)) & 255u) * (f);            \
            lh += (uint64_t)((wh[q] >> (8 * e + 16)) & 255u) * (f);       \
            hl += (uint64_t)((wl[q] >> (8 * e)) & 255u) * (f);            \
            ll += (uint64_t)((wl[q] >> (8 * e + 16)) & 255u) * (f);
            OZ_P22G_MODULI(OZ_P22_CRT_TERM_)
#undef OZ_P22_CRT_TERM_
            double d = job.first ? 0.0 : acc[i + j * job.acc.ldc];
            d = __dadd_rn(d, __dmul_rn(oz_p22g_centered(hh), 0x1p-34));
            d = __dadd_rn(d, __dmul_rn(oz_p22g_centered(hl), 0x1p-51));
            d = __dadd_rn(d, __dmul_rn(oz_p22g_centered(lh), 0x1p-51));
            d = __dadd_rn(d, __dmul_rn(oz_p22g_centered(ll), 0x1p-68));
            if (!job.last) {
                acc[i + j * job.acc.ldc] = d;
                continue;
            }
            const int32_t s = e ? sa1 : sa0, t = job.scale_b[b * job.scale_stride_b + j];
            if (s != OZ_SCALE_SPECIAL && t != OZ_SCALE_SPECIAL) /* else the fix-up writes it */
                oz_store_epilogue(&C[i + j * job.c.ldc], alpha, beta, ldexp(d, s + t), false);
        }
    }
}

cudaError_t oz_launch_p22_crt(const oz_p22_crt_job &job, int64_t group, cudaStream_t s)
{
    if (job.m <= 0 || job.n <= 0 || group <= 0)
        return cudaSuccess;
    if (job.res_rows % OZ_RES_GROUP || job.res_rows < 2 * job.m || job.res_cols < 2 * job.n || group > 65535)
        return cudaErrorInvalidValue;
    const int64_t gx = (job.m + 63) / 64, by = (job.n + 7) / 8;
    const dim3 grid((unsigned)gx, (unsigned)(by < 65535 ? by : 65535), (unsigned)group);
    oz_p22_crt_kernel<<<grid, dim3(32, 8), 0, s>>>(job);
    return cudaGetLastError();
}
