/* kernels/operand_scale.cu: per-row (op(A)) / per-column (op(B)) scale exponents of phase22.md step 1. */
#include <float.h>

#include "p22_params.h"

/* A block: OZ_SC_ROWS rows, all of K, OZ_SC_WARPS warps. Where rows are
 * contiguous, lane l reads row r0 + l (a warp: 256 bytes of one k) and the
 * warps split K; where K is contiguous, warp w reads row r0 + w, its lanes
 * along K (256 bytes per step). Each warp keeps OZ_SC_UNROLL loads in flight
 * (64 KiB per 1024 threads), so that the 2 blocks an SM holds keep its
 * memory pipe full whichever dimension is contiguous. */
#define OZ_SC_ROWS 32
#define OZ_SC_WARPS 32
#define OZ_SC_UNROLL 8
static_assert(OZ_PAD_ROWS_A % OZ_SC_ROWS == 0 && OZ_PAD_ROWS_B % OZ_SC_ROWS == 0, "padded rows are whole blocks");

/* One batch of OZ_SC_UNROLL loads in flight, x[0], x[dp], ...: the first
 * `left` of them when PARTIAL. Folds them into m and nf, advances x. */
template <bool PARTIAL>
static __device__ __forceinline__ void oz_absmax_batch(const double *&x, int64_t dp, int64_t left, double &m, int &nf)
{
    double a[OZ_SC_UNROLL];
#pragma unroll
    for (int u = 0; u < OZ_SC_UNROLL; u++, x += dp)
        a[u] = !PARTIAL || u < left ? __ldg(x) : 0.0;
#pragma unroll
    for (int u = 0; u < OZ_SC_UNROLL; u++) {
        nf |= !(fabs(a[u]) <= DBL_MAX);
        m = fmax(m, fabs(a[u]));
    }
}

/* max |x| over this thread's share of n elements x[i step] (i = i0, i0 +
 * 32, ... < n), and whether any is Inf or NaN (fmax drops a NaN). */
static __device__ __forceinline__ void oz_absmax_strided(const double *x, int64_t i0, int64_t n, int64_t step,
                                                         double *mx, int *bad)
{
    constexpr int stride = 32;
    static_assert(OZ_SC_WARPS == stride, "the warps split K by 32, as the lanes do");
    double m = 0.0;
    int nf = 0;
    int64_t left = i0 < n ? (n - i0 + stride - 1) / stride : 0; /* elements of this thread */
    const double *p = x + i0 * step;
    const int64_t dp = stride * step;
#pragma unroll 1
    for (; left >= OZ_SC_UNROLL; left -= OZ_SC_UNROLL)
        oz_absmax_batch<false>(p, dp, left, m, nf);
    if (left > 0)
        oz_absmax_batch<true>(p, dp, left, m, nf);
    *mx = m;
    *bad = nf;
}

/* Writes every padded row's scale (0 for padding) and raises the item's
 * special flag when a row holds Inf or NaN. `pairs` (complex operands seen
 * as doubles with rows contiguous: re and im of complex row i are rows 2 i
 * and 2 i + 1): one scale per pair of rows, from the larger of their
 * maxima, at i (the frexp exponent is monotone). Complex operands with K
 * contiguous need nothing of this: their row of 2 k doubles is the complex
 * row's parts. */
__global__ void __launch_bounds__(32 * OZ_SC_WARPS, 2) oz_operand_scale_kernel(oz_view v, oz_operand_ws w, bool pairs)
{
    __shared__ double s_max[OZ_SC_WARPS][OZ_SC_ROWS + 1];
    __shared__ int s_bad[OZ_SC_WARPS][OZ_SC_ROWS + 1];
    const int64_t b = blockIdx.y;
    const double *x = v.ptr(b);
    const int64_t r0 = (int64_t)blockIdx.x * OZ_SC_ROWS;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double mx = 0.0;
    int bad = 0;
    int64_t r; /* the row this thread's result is for */

    if (v.rs == 1) { /* rows contiguous: lane per row, the warps split K */
        r = r0 + lane;
        if (r < v.rows)
            oz_absmax_strided(x + r, warp, v.k, v.ks, &mx, &bad);
        s_max[warp][lane] = mx;
        s_bad[warp][lane] = bad;
        __syncthreads();
        if (warp != 0)
            return;
        for (int j = 1; j < OZ_SC_WARPS; j++) {
            mx = fmax(mx, s_max[j][lane]);
            bad |= s_bad[j][lane];
        }
        if (pairs) {
            mx = fmax(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            bad |= __shfl_xor_sync(0xffffffffu, bad, 1);
            if (lane & 1)
                return;
            const int sc = bad ? OZ_SCALE_SPECIAL : oz_scale_exponent(mx);
            const int64_t i = r >> 1;
            w.scale(b)[i] = r < v.rows ? sc : 0;
            if (bad && r < v.rows)
                atomicOr(w.special(b), 1);
            return;
        }
    } else { /* K contiguous: warp per row, lanes along K */
        r = r0 + warp;
        if (r < v.rows)
            oz_absmax_strided(x + r * v.rs, lane, v.k, v.ks, &mx, &bad);
        for (int off = 16; off > 0; off >>= 1) {
            mx = fmax(mx, __shfl_xor_sync(0xffffffffu, mx, off));
            bad |= __shfl_xor_sync(0xffffffffu, bad, off);
        }
        if (lane != 0)
            return;
    }
    const int sc = bad ? OZ_SCALE_SPECIAL : oz_scale_exponent(mx);
    w.scale(b)[r] = r < v.rows ? sc : 0;
    if (bad && r < v.rows)
        atomicOr(w.special(b), 1);
}

cudaError_t oz_launch_operand_scale(const oz_view &v, const oz_operand_ws &w, int64_t group, cudaStream_t s, bool pairs)
{
    if (group <= 0 || w.rows_pad <= 0)
        return cudaSuccess;
    if (pairs && v.rs != 1)
        return cudaErrorInvalidValue;
    const int64_t blocks = (pairs ? 2 : 1) * w.rows_pad / OZ_SC_ROWS;
    if (blocks > INT32_MAX || group > 65535)
        return cudaErrorInvalidValue;
    const dim3 grid((unsigned)blocks, (unsigned)group);
    oz_operand_scale_kernel<<<grid, 32 * OZ_SC_WARPS, 0, s>>>(v, w, pairs);
    return cudaGetLastError();
}
