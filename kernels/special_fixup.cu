/* kernels/special_fixup.cu: elements of C whose row of op(A) or column of op(B) holds Inf or NaN, by a plain FP64 dot product. */
#include "epilogue.cuh"
#include "oz2_params.h"

/* A thread per element of C. Items with no special row or column return at
 * once (one flag read); otherwise the flagged elements take
 * P = sum_k op(A)[i,k] * op(B)[k,j] in ascending k, product then sum, each
 * rounded, so Inf and NaN propagate as in DGEMM; then the common epilogue.
 * Complex (CX; docs/ozaki2-complex.md "Inf and NaN"): the spec's product
 * (oz_zmul) then one rounded sum per part, op C's operands conjugated, the
 * complex epilogue; views in doubles (element (r, kk) at ptr[r rs + kk ks],
 * im after it), C's stride in doubles. */
template <bool CX>
__global__ void __launch_bounds__(256) oz_special_fixup_kernel(oz_view va, oz_view vb, bool conj_a, bool conj_b,
                                                               oz_operand_ws wa, oz_operand_ws wb, oz_out c,
                                                               oz_scalars sc, oz_zscalars zsc, int64_t m, int64_t n,
                                                               const oz2a_dev_plan *skip_native)
{
    const int64_t b = blockIdx.z;
    if (*wa.special(b) == 0 && *wb.special(b) == 0)
        return;
    if (skip_native && skip_native->n == 0) /* the caller's native branch computes all of C */
        return;
    const int64_t i = (int64_t)blockIdx.x * 32 + threadIdx.x;
    for (int64_t j = (int64_t)blockIdx.y * 8 + threadIdx.y; j < n; j += (int64_t)gridDim.y * 8) {
        if (i >= m)
            return;
        if (wa.scale(b)[i] != OZ_SCALE_SPECIAL && wb.scale(b)[j] != OZ_SCALE_SPECIAL)
            continue;
        const double *a = va.ptr(b), *bb = vb.ptr(b);
        if constexpr (CX) {
            double2 dot = make_double2(0.0, 0.0);
            for (int64_t kk = 0; kk < va.k; kk++) {
                const double *x = a + i * va.rs + kk * va.ks, *y = bb + j * vb.rs + kk * vb.ks;
                const double2 p = oz_zmul(make_double2(x[0], conj_a ? -x[1] : x[1]),
                                          make_double2(y[0], conj_b ? -y[1] : y[1]));
                dot = make_double2(__dadd_rn(dot.x, p.x), __dadd_rn(dot.y, p.y));
            }
            double2 alpha, beta;
            zsc.load(&alpha, &beta);
            oz_store_zepilogue(c.ptr(b) + 2 * (i + j * c.ldc), alpha, beta, dot, va.k == 0);
        } else {
            double dot = 0.0;
            for (int64_t kk = 0; kk < va.k; kk++)
                dot = __dadd_rn(dot, __dmul_rn(a[i * va.rs + kk * va.ks], bb[j * vb.rs + kk * vb.ks]));
            double alpha, beta;
            sc.load(&alpha, &beta);
            oz_store_epilogue(&c.ptr(b)[i + j * c.ldc], alpha, beta, dot, va.k == 0);
        }
    }
}

/* Few blocks along n: items without special values (the usual case) cost
 * one flag read per block; the others loop over their columns. */
static dim3 oz_special_fixup_grid(int64_t m, int64_t n, int64_t group)
{
    const int64_t by = (n + 7) / 8;
    return dim3((unsigned)((m + 31) / 32), (unsigned)(by < 16 ? by : 16), (unsigned)group);
}

cudaError_t oz2z_launch_special_fixup(const oz_view &va, const oz_view &vb, bool conj_a, bool conj_b,
                                      const oz_operand_ws &wa, const oz_operand_ws &wb, const oz_out &c,
                                      const oz_zscalars &sc, int64_t m, int64_t n, int64_t group, cudaStream_t s,
                                      const oz2a_dev_plan *skip_native)
{
    oz_special_fixup_kernel<true><<<oz_special_fixup_grid(m, n, group), dim3(32, 8), 0, s>>>(
        va, vb, conj_a, conj_b, wa, wb, c, oz_scalars{}, sc, m, n, skip_native);
    return cudaGetLastError();
}

cudaError_t oz_launch_special_fixup(const oz_view &va, const oz_view &vb, const oz_operand_ws &wa,
                                    const oz_operand_ws &wb, const oz_out &c, const oz_scalars &sc,
                                    int64_t m, int64_t n, int64_t group, cudaStream_t s,
                                    const oz2a_dev_plan *skip_native)
{
    oz_special_fixup_kernel<false><<<oz_special_fixup_grid(m, n, group), dim3(32, 8), 0, s>>>(
        va, vb, false, false, wa, wb, c, sc, oz_zscalars{}, m, n, skip_native);
    return cudaGetLastError();
}
