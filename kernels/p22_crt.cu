/* kernels/p22_crt.cu: Phase 22 unfused, the CRT of one K chunk: the residue planes of the chunk's four passes -> exact X, added in the order of phase22.md step 6 to the double accumulators, the last chunk through the alpha/beta epilogue to C. */
#include "../crt/crt.h"
#include "engine.h"
#include "engine_cfg.h"
#include "epilogue.cuh"
#include "p22_layout.h"
#include "res_layout.h"

/* A thread per word of a column pair of the block's real rows (rows r0 =
 * oz_res_word_row(w) and r0 + 8, columns 2 J and 2 J + 1: p22_layout.h's
 * oz_p22_crt_word); a warp reads 32 consecutive words a plane (coalesced). */
__global__ void __launch_bounds__(256) oz_p22_crt_kernel(const oz_p22_crt_job job)
{
    const oz_p22_target &T = job.t;
    const int64_t b = blockIdx.z;
    const int64_t w = (int64_t)blockIdx.x * 32 + threadIdx.x;
    const int64_t r0 = oz_res_word_row(w);
    if (r0 >= T.m)
        return;
    const int64_t rows[2] = {r0, r0 + 8};
    const uint8_t *res = job.res + b * job.res_item_bytes;
    const int64_t plane = job.res_rows * job.res_cols;
    double alpha = 0.0, beta = 0.0;
    int32_t sa[2] = {0, 0};
    if (T.last) {
        T.sc.load(&alpha, &beta);
        const int32_t *sA = T.scale_a + b * T.scale_stride_a;
        sa[0] = sA[r0];
        sa[1] = r0 + 8 < T.m ? sA[r0 + 8] : 0;
    }
    double *acc = T.first && T.last ? nullptr : T.acc.ptr(b) + T.acc_off;
    double *C = T.c.ptr(b) + T.c_off;
    for (int64_t J = (int64_t)blockIdx.y * 8 + threadIdx.y; 2 * J < T.n; J += (int64_t)gridDim.y * 8) {
        const int64_t j0 = 2 * J;
        double d[4]; /* element 2 c + s: row r0 + 8 s, column j0 + c */
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int64_t i = rows[e & 1], j = j0 + (e >> 1);
            d[e] = T.first || i >= T.m || j >= T.n ? 0.0 : acc[i + j * T.acc.ldc];
        }
        oz_p22_crt_word(res, job.res_rows, plane, r0, j0, d);
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int64_t i = rows[e & 1], j = j0 + (e >> 1);
            if (i >= T.m || j >= T.n)
                continue;
            if (!T.last) {
                acc[i + j * T.acc.ldc] = d[e];
                continue;
            }
            const int32_t s = sa[e & 1], t = T.scale_b[b * T.scale_stride_b + j];
            if (s != OZ_SCALE_SPECIAL && t != OZ_SCALE_SPECIAL) /* else the fix-up writes it */
                oz_store_epilogue(&C[i + j * T.c.ldc], alpha, beta, ldexp(d[e], s + t), false);
        }
    }
}

cudaError_t oz_launch_p22_crt(const oz_p22_crt_job &job, int64_t group, cudaStream_t s)
{
    if (job.t.m <= 0 || job.t.n <= 0 || group <= 0)
        return cudaSuccess;
    if (job.res_rows % (2 * OZ_RES_ROWS) || job.res_rows < 2 * job.t.m || job.res_cols < 2 * job.t.n ||
        job.res_cols % 2 || group > 65535)
        return cudaErrorInvalidValue;
    const int64_t words = job.res_rows / 4;            /* of a column pair's real rows (res_rows / 2 of them) */
    const int64_t gx = (words + 31) / 32, by = ((job.t.n + 1) / 2 + 7) / 8;
    const dim3 grid((unsigned)gx, (unsigned)(by < 65535 ? by : 65535), (unsigned)group);
    oz_p22_crt_kernel<<<grid, dim3(32, 8), 0, s>>>(job);
    return cudaGetLastError();
}
