/* kernels/oz2_auto_native.cu: the elements of a call that the automatic plan does not emulate (n = 0), by the plain FP64 dot product in ascending k, on the device, so that the host never waits for the plan. */
#include "oz2_params.h"
#include "epilogue.cuh"

#define OZ2N_T 16 /* outputs a block side, and K a step */

/* Each element: dot = dot + a b in ascending k (each operation rounded, no
 * FMA: -fmad=false), then the epilogue; elements of special rows/columns
 * are left to the Inf/NaN fix-up (the same dot there). The CPU reference's
 * auto-native result bit for bit (oz_ref_plain_dot). */
__global__ void __launch_bounds__(OZ2N_T *OZ2N_T) oz2_auto_native_kernel(oz_view va, oz_view vb, const int32_t *scale_a,
                                                                         const int32_t *scale_b, oz_out c,
                                                                         oz_scalars sc, const oz2a_dev_plan *plan)
{
    if (plan->n != 0)
        return;
    __shared__ double ta[OZ2N_T][OZ2N_T + 1], tb[OZ2N_T][OZ2N_T + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t tiles_m = (va.rows + OZ2N_T - 1) / OZ2N_T, tiles = tiles_m * ((vb.rows + OZ2N_T - 1) / OZ2N_T);
    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) { /* a small grid: cheap when n != 0 */
    const int64_t bx = tile % tiles_m, by = tile / tiles_m;
    const int64_t i = bx * OZ2N_T + tx, j = by * OZ2N_T + ty;
    const double *A = va.ptr(0), *B = vb.ptr(0);
    double dot = 0.0;
    for (int64_t k0 = 0; k0 < va.k; k0 += OZ2N_T) {
        const int64_t ia = bx * OZ2N_T + ty, jb = by * OZ2N_T + ty;
        ta[ty][tx] = ia < va.rows && k0 + tx < va.k ? A[ia * va.rs + (k0 + tx) * va.ks] : 0.0;
        tb[ty][tx] = jb < vb.rows && k0 + tx < vb.k ? B[jb * vb.rs + (k0 + tx) * vb.ks] : 0.0;
        __syncthreads();
        const int kn = va.k - k0 < OZ2N_T ? (int)(va.k - k0) : OZ2N_T;
        for (int kk = 0; kk < kn; kk++)
            dot = __dadd_rn(dot, __dmul_rn(ta[tx][kk], tb[ty][kk]));
        __syncthreads();
    }
    if (i < va.rows && j < vb.rows && scale_a[i] != OZ_SCALE_SPECIAL && scale_b[j] != OZ_SCALE_SPECIAL) {
        double alpha, beta;
        sc.load(&alpha, &beta);
        oz_store_epilogue(&c.ptr(0)[i + j * c.ldc], alpha, beta, dot, false);
    }
    }
}

cudaError_t oz2_launch_auto_native(const oz_view &va, const oz_view &vb, const int32_t *scale_a,
                                   const int32_t *scale_b, const oz_out &c, const oz_scalars &sc,
                                   const oz2a_dev_plan *plan, cudaStream_t s)
{
    const int64_t tiles = ((va.rows + OZ2N_T - 1) / OZ2N_T) * ((vb.rows + OZ2N_T - 1) / OZ2N_T);
    const unsigned grid = (unsigned)(tiles < 1056 ? tiles : 1056); /* 8 an SM of 132 */
    oz2_auto_native_kernel<<<grid, dim3(OZ2N_T, OZ2N_T), 0, s>>>(va, vb, scale_a, scale_b, c, sc, plan);
    return cudaGetLastError();
}
