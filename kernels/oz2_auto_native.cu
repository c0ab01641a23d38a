/* kernels/oz2_auto_native.cu: the elements of a call that the automatic plan does not emulate (n = 0), by the plain FP64 dot product in ascending k, on the device, so that the host never waits for the plan. */
#include <type_traits>

#include "oz2_params.h"
#include "epilogue.cuh"

/* A block of 16 x 16 threads computes a tile of BM x BN outputs, each
 * thread TM x TN of them (rows tx + 16 ii, columns ty + 16 jj), over K in
 * steps of OZ2N_KT through shared memory. Each output keeps its own running
 * sum in ascending k, so the tiling changes no bit. */
#define OZ2N_TX 16
#define OZ2N_TY 16
#define OZ2N_THREADS (OZ2N_TX * OZ2N_TY)
#define OZ2N_KT 16
template <bool CX>
struct oz2n_shape {
    static constexpr int TM = 4, TN = CX ? 2 : 4; /* outputs a thread: rows, columns */
    static constexpr int BM = OZ2N_TX * TM, BN = OZ2N_TY * TN;
};

/* An element of op(A) or op(B) as the tiles hold it: a double, or (CX) a
 * complex one from the view in doubles (re, im after it; op C conjugated). */
template <bool CX>
using oz2n_elem = typename std::conditional<CX, double2, double>::type;
template <bool CX>
__device__ __forceinline__ oz2n_elem<CX> oz2n_load(const double *x, bool conj)
{
    if constexpr (CX)
        return make_double2(x[0], conj ? -x[1] : x[1]);
    else
        return x[0];
}
template <bool CX>
__device__ __forceinline__ oz2n_elem<CX> oz2n_zero()
{
    if constexpr (CX)
        return make_double2(0.0, 0.0);
    else
        return 0.0;
}

/* dot + a b, each operation rounded (complex: the spec's product oz_zmul, then one sum per part) */
template <bool CX>
__device__ __forceinline__ oz2n_elem<CX> oz2n_acc(oz2n_elem<CX> dot, oz2n_elem<CX> a, oz2n_elem<CX> b)
{
    if constexpr (CX) {
        const double2 p = oz_zmul(a, b);
        return make_double2(__dadd_rn(dot.x, p.x), __dadd_rn(dot.y, p.y));
    } else {
        return __dadd_rn(dot, __dmul_rn(a, b));
    }
}

/* Rows r0.. (R of them) of a view, K from k0 (OZ2N_KT), into S[k][row]; 0
 * past the view. Consecutive threads take consecutive addresses: along the
 * rows where they are the view's smaller stride, else along K. */
template <bool CX, int R>
__device__ __forceinline__ void oz2n_stage(oz2n_elem<CX> (*S)[R + 1], const oz_view &v, const double *X, bool conj,
                                           int64_t r0, int64_t k0, int tid)
{
    constexpr int L = R * OZ2N_KT / OZ2N_THREADS;
    const bool along_rows = v.rs <= v.ks;
#pragma unroll
    for (int q = 0; q < L; q++) {
        const int e = tid + q * OZ2N_THREADS;
        const int r = along_rows ? e % R : e / OZ2N_KT, kk = along_rows ? e / R : e % OZ2N_KT;
        const int64_t gr = r0 + r, gk = k0 + kk;
        S[kk][r] = gr < v.rows && gk < v.k ? oz2n_load<CX>(X + gr * v.rs + gk * v.ks, conj) : oz2n_zero<CX>();
    }
}

/* Each element: dot = dot + a b in ascending k (each operation rounded, no
 * FMA), then the epilogue; elements of special rows/columns are left to
 * the Inf/NaN fix-up (the same dot there). The CPU reference's auto-native
 * result bit for bit (oz_ref_plain_dot, oz2_ref_zgemm's plain_zdot). */
template <bool CX>
__global__ void __launch_bounds__(OZ2N_THREADS, 2)
    oz2_auto_native_kernel(oz_view va, oz_view vb, bool conj_a, bool conj_b, const int32_t *scale_a,
                           const int32_t *scale_b, oz_out c, oz_scalars sc, oz_zscalars zsc, const oz2a_dev_plan *plan)
{
    if (plan->n != 0)
        return;
    using E = oz2n_elem<CX>;
    using S = oz2n_shape<CX>;
    constexpr int TM = S::TM, TN = S::TN;
    __shared__ E ta[OZ2N_KT][S::BM + 1], tb[OZ2N_KT][S::BN + 1];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = tx + ty * OZ2N_TX;
    const int64_t tiles_m = (va.rows + S::BM - 1) / S::BM, tiles = tiles_m * ((vb.rows + S::BN - 1) / S::BN);
    const double *A = va.ptr(0), *B = vb.ptr(0);
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) { /* a small grid: cheap when n != 0 */
        const int64_t i0 = tile % tiles_m * S::BM, j0 = tile / tiles_m * S::BN;
        E dot[TM][TN];
#pragma unroll
        for (int ii = 0; ii < TM; ii++)
#pragma unroll
            for (int jj = 0; jj < TN; jj++)
                dot[ii][jj] = oz2n_zero<CX>();
        for (int64_t k0 = 0; k0 < va.k; k0 += OZ2N_KT) {
            oz2n_stage<CX, S::BM>(ta, va, A, conj_a, i0, k0, tid);
            oz2n_stage<CX, S::BN>(tb, vb, B, conj_b, j0, k0, tid);
            __syncthreads();
            const int kn = va.k - k0 < OZ2N_KT ? (int)(va.k - k0) : OZ2N_KT;
#pragma unroll 16 /* all of a K step (a shorter last step runs the same code with its count) */
            for (int kk = 0; kk < kn; kk++) {
                E a[TM], b[TN];
#pragma unroll
                for (int ii = 0; ii < TM; ii++)
                    a[ii] = ta[kk][tx + OZ2N_TX * ii];
#pragma unroll
                for (int jj = 0; jj < TN; jj++)
                    b[jj] = tb[kk][ty + OZ2N_TY * jj];
#pragma unroll
                for (int ii = 0; ii < TM; ii++)
#pragma unroll
                    for (int jj = 0; jj < TN; jj++)
                        dot[ii][jj] = oz2n_acc<CX>(dot[ii][jj], a[ii], b[jj]);
            }
            __syncthreads();
        }
#pragma unroll
        for (int ii = 0; ii < TM; ii++)
#pragma unroll
            for (int jj = 0; jj < TN; jj++) {
                const int64_t i = i0 + tx + OZ2N_TX * ii, j = j0 + ty + OZ2N_TY * jj;
                if (i >= va.rows || j >= vb.rows || scale_a[i] == OZ_SCALE_SPECIAL || scale_b[j] == OZ_SCALE_SPECIAL)
                    continue;
                if constexpr (CX) {
                    double2 alpha, beta;
                    zsc.load(&alpha, &beta);
                    oz_store_zepilogue(c.ptr(0) + 2 * (i + j * c.ldc), alpha, beta, dot[ii][jj], false);
                } else {
                    double alpha, beta;
                    sc.load(&alpha, &beta);
                    oz_store_epilogue(&c.ptr(0)[i + j * c.ldc], alpha, beta, dot[ii][jj], false);
                }
            }
    }
}

template <bool CX>
static unsigned oz2n_grid(const oz_view &va, const oz_view &vb)
{
    using S = oz2n_shape<CX>;
    const int64_t tiles = ((va.rows + S::BM - 1) / S::BM) * ((vb.rows + S::BN - 1) / S::BN);
    return (unsigned)(tiles < 528 ? tiles : 528); /* 4 an SM of 132 */
}

cudaError_t oz2_launch_auto_native(const oz_view &va, const oz_view &vb, const int32_t *scale_a,
                                   const int32_t *scale_b, const oz_out &c, const oz_scalars &sc,
                                   const oz2a_dev_plan *plan, cudaStream_t s)
{
    oz2_auto_native_kernel<false><<<oz2n_grid<false>(va, vb), dim3(OZ2N_TX, OZ2N_TY), 0, s>>>(
        va, vb, false, false, scale_a, scale_b, c, sc, oz_zscalars{}, plan);
    return cudaGetLastError();
}

cudaError_t oz2z_launch_auto_native(const oz_view &va, const oz_view &vb, bool conj_a, bool conj_b,
                                    const int32_t *scale_a, const int32_t *scale_b, const oz_out &c,
                                    const oz_zscalars &sc, const oz2a_dev_plan *plan, cudaStream_t s)
{
    oz2_auto_native_kernel<true><<<oz2n_grid<true>(va, vb), dim3(OZ2N_TX, OZ2N_TY), 0, s>>>(
        va, vb, conj_a, conj_b, scale_a, scale_b, c, oz_scalars{}, sc, plan);
    return cudaGetLastError();
}
