/* kernels/operand_scale.cu: per-row (op(A)) / per-column (op(B)) scale exponents of phase22.md step 1. */
#include <float.h>

#include "p22_params.h"

/* One block: OZ_RT_ROWS rows, all of K. 32 x 8 threads. Reads are coalesced
 * along whichever of r or kk is contiguous in memory. Writes every padded
 * row's scale (0 for padding) and raises the item's special flag when a row
 * holds Inf or NaN. */
__global__ void __launch_bounds__(256) oz_operand_scale_kernel(oz_view v, oz_operand_ws w)
{
    __shared__ double s_max[8][OZ_RT_ROWS + 1];
    __shared__ int s_bad[8][OZ_RT_ROWS + 1];
    const int64_t b = blockIdx.y;
    const double *x = v.ptr(b);
    const int64_t r0 = (int64_t)blockIdx.x * OZ_RT_ROWS;
    const int tx = threadIdx.x, ty = threadIdx.y;
    double mx = 0.0;
    int bad = 0;

    if (v.rs == 1) { /* rows contiguous: thread per row, the 8 warps split K */
        int64_t r = r0 + tx;
        if (r < v.rows) {
            for (int64_t kk = ty; kk < v.k; kk += 8) {
                double a = fabs(x[r + kk * v.ks]);
                bad |= !(a <= DBL_MAX);
                mx = fmax(mx, a);
            }
        }
        s_max[ty][tx] = mx;
        s_bad[ty][tx] = bad;
    } else { /* K contiguous: a warp per row, lanes along K */
        for (int rr = ty; rr < OZ_RT_ROWS; rr += 8) {
            int64_t r = r0 + rr;
            double m2 = 0.0;
            int bad2 = 0;
            if (r < v.rows) {
                for (int64_t kk = tx; kk < v.k; kk += 32) {
                    double a = fabs(x[r * v.rs + kk]);
                    bad2 |= !(a <= DBL_MAX);
                    m2 = fmax(m2, a);
                }
            }
            for (int off = 16; off > 0; off >>= 1) {
                m2 = fmax(m2, __shfl_xor_sync(0xffffffffu, m2, off));
                bad2 |= __shfl_xor_sync(0xffffffffu, bad2, off);
            }
            if (tx == 0) {
                s_max[0][rr] = m2;
                s_bad[0][rr] = bad2;
            }
        }
    }
    __syncthreads();
    if (ty == 0) {
        double m3 = 0.0;
        int bad3 = 0;
        if (v.rs == 1) {
            for (int j = 0; j < 8; j++) {
                m3 = fmax(m3, s_max[j][tx]);
                bad3 |= s_bad[j][tx];
            }
        } else {
            m3 = s_max[0][tx];
            bad3 = s_bad[0][tx];
        }
        int64_t r = r0 + tx;
        int sc = bad3 ? OZ_SCALE_SPECIAL : oz_scale_exponent(m3);
        w.scale(b)[r] = r < v.rows ? sc : 0;
        if (bad3 && r < v.rows)
            atomicOr(w.special(b), 1);
    }
}

cudaError_t oz_launch_operand_scale(const oz_view &v, const oz_operand_ws &w, int64_t group, cudaStream_t s)
{
    dim3 grid((unsigned)(w.rows_pad / OZ_RT_ROWS), (unsigned)group);
    oz_operand_scale_kernel<<<grid, dim3(32, 8), 0, s>>>(v, w);
    return cudaGetLastError();
}
