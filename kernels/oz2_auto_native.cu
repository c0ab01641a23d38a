/* kernels/oz2_auto_native.cu: the elements of a call that the automatic plan does not emulate (n = 0), by the plain FP64 dot product in ascending k, on the device, so that the host never waits for the plan. */
#include <type_traits>

#include "oz2_params.h"
#include "epilogue.cuh"

#define OZ2N_T 16 /* outputs a block side, and K a step */

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

/* Each element: dot = dot + a b in ascending k (each operation rounded, no
 * FMA: -fmad=false; complex: the spec's product oz_zmul, then one sum per
 * part), then the epilogue; elements of special rows/columns are left to
 * the Inf/NaN fix-up (the same dot there). The CPU reference's auto-native
 * result bit for bit (oz_ref_plain_dot, oz2_ref_zgemm's plain_zdot). */
template <bool CX>
__global__ void __launch_bounds__(OZ2N_T *OZ2N_T)
    oz2_auto_native_kernel(oz_view va, oz_view vb, bool conj_a, bool conj_b, const int32_t *scale_a,
                           const int32_t *scale_b, oz_out c, oz_scalars sc, oz_zscalars zsc, const oz2a_dev_plan *plan)
{
    if (plan->n != 0)
        return;
    using E = oz2n_elem<CX>;
    __shared__ E ta[OZ2N_T][OZ2N_T + 1], tb[OZ2N_T][OZ2N_T + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t tiles_m = (va.rows + OZ2N_T - 1) / OZ2N_T, tiles = tiles_m * ((vb.rows + OZ2N_T - 1) / OZ2N_T);
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) { /* a small grid: cheap when n != 0 */
        const int64_t bx = tile % tiles_m, by = tile / tiles_m;
        const int64_t i = bx * OZ2N_T + tx, j = by * OZ2N_T + ty;
        const double *A = va.ptr(0), *B = vb.ptr(0);
        E dot = oz2n_zero<CX>();
        for (int64_t k0 = 0; k0 < va.k; k0 += OZ2N_T) {
            const int64_t ia = bx * OZ2N_T + ty, jb = by * OZ2N_T + ty;
            ta[ty][tx] = ia < va.rows && k0 + tx < va.k ? oz2n_load<CX>(A + ia * va.rs + (k0 + tx) * va.ks, conj_a)
                                                        : oz2n_zero<CX>();
            tb[ty][tx] = jb < vb.rows && k0 + tx < vb.k ? oz2n_load<CX>(B + jb * vb.rs + (k0 + tx) * vb.ks, conj_b)
                                                        : oz2n_zero<CX>();
            __syncthreads();
            const int kn = va.k - k0 < OZ2N_T ? (int)(va.k - k0) : OZ2N_T;
            for (int kk = 0; kk < kn; kk++) {
                if constexpr (CX) {
                    const double2 p = oz_zmul(ta[tx][kk], tb[ty][kk]);
                    dot = make_double2(__dadd_rn(dot.x, p.x), __dadd_rn(dot.y, p.y));
                } else {
                    dot = __dadd_rn(dot, __dmul_rn(ta[tx][kk], tb[ty][kk]));
                }
            }
            __syncthreads();
        }
        if (i < va.rows && j < vb.rows && scale_a[i] != OZ_SCALE_SPECIAL && scale_b[j] != OZ_SCALE_SPECIAL) {
            if constexpr (CX) {
                double2 alpha, beta;
                zsc.load(&alpha, &beta);
                oz_store_zepilogue(c.ptr(0) + 2 * (i + j * c.ldc), alpha, beta, dot, false);
            } else {
                double alpha, beta;
                sc.load(&alpha, &beta);
                oz_store_epilogue(&c.ptr(0)[i + j * c.ldc], alpha, beta, dot, false);
            }
        }
    }
}

static unsigned oz2n_grid(const oz_view &va, const oz_view &vb)
{
    const int64_t tiles = ((va.rows + OZ2N_T - 1) / OZ2N_T) * ((vb.rows + OZ2N_T - 1) / OZ2N_T);
    return (unsigned)(tiles < 1056 ? tiles : 1056); /* 8 an SM of 132 */
}

cudaError_t oz2_launch_auto_native(const oz_view &va, const oz_view &vb, const int32_t *scale_a,
                                   const int32_t *scale_b, const oz_out &c, const oz_scalars &sc,
                                   const oz2a_dev_plan *plan, cudaStream_t s)
{
    oz2_auto_native_kernel<false><<<oz2n_grid(va, vb), dim3(OZ2N_T, OZ2N_T), 0, s>>>(
        va, vb, false, false, scale_a, scale_b, c, sc, oz_zscalars{}, plan);
    return cudaGetLastError();
}

cudaError_t oz2z_launch_auto_native(const oz_view &va, const oz_view &vb, bool conj_a, bool conj_b,
                                    const int32_t *scale_a, const int32_t *scale_b, const oz_out &c,
                                    const oz_zscalars &sc, const oz2a_dev_plan *plan, cudaStream_t s)
{
    oz2_auto_native_kernel<true><<<oz2n_grid(va, vb), dim3(OZ2N_T, OZ2N_T), 0, s>>>(
        va, vb, conj_a, conj_b, scale_a, scale_b, c, oz_scalars{}, sc, plan);
    return cudaGetLastError();
}
