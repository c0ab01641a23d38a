/* compare/kernel_metrics.cu: the shadow-mode metrics of one call (compare/metrics.h), real or complex, reduced on the GPU into one record. */
#include "compare/kernel_check.cuh"
#include "compare/kernels.h"

namespace {

constexpr int kThreads = 256;   /* along the rows of a column: coalesced */
constexpr int kWarps = kThreads / 32;
constexpr int64_t kCols = 16;   /* columns per block */
static_assert(kThreads % 32 == 0 && kWarps <= 32, "warp 0 reduces the warps' partials");
static_assert(sizeof(ozcmp_accum) % 16 == 0, "record layout shared with compare/metrics.h");

struct metrics_args {
    ozcmp_mat_view e, n;
    int64_t m, ncols, k, batch;
    const unsigned long long *absmax_a, *absmax_b; /* NULL: no bound check */
    ozcmp_bound bound;                             /* the emulated path's (ozcmp_allowed_elem) */
    double alpha[2], beta[2];                      /* (re, im) for complex calls; [0] for real ones */
    const double *alpha_dev, *beta_dev;            /* device pointer mode: as many doubles */
    ozcmp_accum *rec;
};

/* The scale exponent (both modes' s_i, t_j) from a max |.| bit pattern (ozcmp_scales). */
__device__ __forceinline__ int scale_of(const unsigned long long *absmax, int64_t idx)
{
    return oz_scale_exponent(__longlong_as_double((long long)absmax[idx]));
}

__device__ __forceinline__ unsigned long long warp_max(unsigned long long v)
{
    for (int off = 16; off > 0; off /= 2)
        v = max(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v)
{
    for (int off = 16; off > 0; off /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__device__ __forceinline__ double warp_sum(double v)
{
    for (int off = 16; off > 0; off /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

/* Reduces every field over the block; thread 0 gets the result. */
__device__ void block_reduce(ozcmp_accum *acc)
{
    __shared__ ozcmp_accum part[kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    ozcmp_accum r;
    r.max_abs_bits = warp_max(acc->max_abs_bits);
    r.max_rel_bits = warp_max(acc->max_rel_bits);
    for (int i = 0; i < OZCMP_NBINS; i++) {
        r.sq_diff[i] = warp_sum(acc->sq_diff[i]);
        r.sq_native[i] = warp_sum(acc->sq_native[i]);
    }
    r.beyond_bound = warp_sum((unsigned long long)acc->beyond_bound);
    r.nonfinite_mismatch = warp_sum((unsigned long long)acc->nonfinite_mismatch);
    r.finite_pairs = warp_sum((unsigned long long)acc->finite_pairs);
    r.reserved = 0;
    if (lane == 0)
        part[warp] = r;
    __syncthreads();
    if (warp == 0) {
        ozcmp_accum z = {};
        const ozcmp_accum &p = lane < kWarps ? part[lane] : z;
        r.max_abs_bits = warp_max(p.max_abs_bits);
        r.max_rel_bits = warp_max(p.max_rel_bits);
        for (int i = 0; i < OZCMP_NBINS; i++) {
            r.sq_diff[i] = warp_sum(p.sq_diff[i]);
            r.sq_native[i] = warp_sum(p.sq_native[i]);
        }
        r.beyond_bound = warp_sum((unsigned long long)p.beyond_bound);
        r.nonfinite_mismatch = warp_sum((unsigned long long)p.nonfinite_mismatch);
        r.finite_pairs = warp_sum((unsigned long long)p.finite_pairs);
        *acc = r;
    }
}

__device__ __forceinline__ void add_u64(uint64_t *dst, uint64_t v)
{
    if (v)
        atomicAdd((unsigned long long *)dst, (unsigned long long)v);
}

__device__ __forceinline__ void add_f64(double *dst, double v)
{
    if (v != 0.0)
        atomicAdd(dst, v);
}

}  // namespace

/* Grid: x over rows (one row per thread), y over groups of kCols columns, z
 * over batch items; each loops when the problem is larger. Per thread an
 * ozcmp_accum in registers fed by ozcmp_accum_add_elem (the shared
 * definition, for either element type: Cplx, the element's Es doubles,
 * ld and strides in elements), then a block reduction and one atomic per
 * non-zero field. */
template <bool Cplx>
__global__ void __launch_bounds__(kThreads) ozcmp_metrics_kernel(metrics_args a)
{
    constexpr int Es = Cplx ? 2 : 1;
    double alpha[2] = {a.alpha[0], a.alpha[1]}, beta[2] = {a.beta[0], a.beta[1]};
    for (int p = 0; p < Es; p++) {
        if (a.alpha_dev)
            alpha[p] = a.alpha_dev[p];
        if (a.beta_dev)
            beta[p] = a.beta_dev[p];
    }
    ozcmp_accum acc = {};
    for (int64_t b = blockIdx.z; b < a.batch; b += gridDim.z) {
        const double *E = a.e.array ? a.e.array[b] : a.e.base + Es * b * a.e.stride;
        const double *N = a.n.array ? a.n.array[b] : a.n.base + Es * b * a.n.stride;
        for (int64_t j0 = (int64_t)blockIdx.y * kCols; j0 < a.ncols; j0 += (int64_t)gridDim.y * kCols) {
            const int64_t j1 = min(j0 + kCols, a.ncols);
            for (int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x; i < a.m; i += (int64_t)gridDim.x * kThreads) {
                const int s = a.absmax_a ? scale_of(a.absmax_a, b * a.m + i) : 0;
                for (int64_t j = j0; j < j1; j++) {
                    double e[Es], n[Es];
                    for (int p = 0; p < Es; p++) {
                        e[p] = E[Es * (i + j * a.e.ld) + p];
                        n[p] = N[Es * (i + j * a.n.ld) + p];
                    }
                    double allowed = INFINITY;
                    if (a.absmax_a) {
                        const int t = scale_of(a.absmax_b, b * a.ncols + j);
                        allowed = ozcmp_allowed_elem(a.bound, Cplx, alpha, beta, n, s, t, a.k);
                    }
                    ozcmp_accum_add_elem(&acc, Cplx, e, n, allowed);
                }
            }
        }
    }
    block_reduce(&acc);
    if (threadIdx.x == 0) {
        ozcmp_accum *r = a.rec;
        if (acc.max_abs_bits)
            atomicMax((unsigned long long *)&r->max_abs_bits, (unsigned long long)acc.max_abs_bits);
        if (acc.max_rel_bits)
            atomicMax((unsigned long long *)&r->max_rel_bits, (unsigned long long)acc.max_rel_bits);
        for (int i = 0; i < OZCMP_NBINS; i++) {
            add_f64(&r->sq_diff[i], acc.sq_diff[i]);
            add_f64(&r->sq_native[i], acc.sq_native[i]);
        }
        add_u64(&r->beyond_bound, acc.beyond_bound);
        add_u64(&r->nonfinite_mismatch, acc.nonfinite_mismatch);
        add_u64(&r->finite_pairs, acc.finite_pairs);
    }
}

extern "C" int ozcmp_metrics(const oz_gemm_desc *d, ozcmp_mat_view emulated, ozcmp_mat_view native,
                              const uint64_t *absmax_a, const uint64_t *absmax_b, ozcmp_bound bound,
                              ozcmp_accum *record, void *stream)
{
    static_assert(sizeof(uint64_t) == sizeof(unsigned long long), "64-bit atomics");
    cudaStream_t s = (cudaStream_t)stream;
    OZCMP_CHECK(cudaMemsetAsync(record, 0, sizeof *record, s));
    if (d->m <= 0 || d->n <= 0 || d->batch <= 0)
        return 0;
    metrics_args a = {};
    a.e = emulated;
    a.n = native;
    a.m = d->m;
    a.ncols = d->n;
    a.k = d->k;
    a.batch = d->batch;
    a.absmax_a = absmax_a && absmax_b ? (const unsigned long long *)absmax_a : NULL;
    a.absmax_b = absmax_a && absmax_b ? (const unsigned long long *)absmax_b : NULL;
    a.bound = bound;
    const int cplx = d->elem == OZ_ELEM_COMPLEX;
    if (d->scalars_on_device) {
        a.alpha_dev = d->alpha;
        a.beta_dev = d->beta;
    } else {
        for (int p = 0; p < (cplx ? 2 : 1); p++) {
            a.alpha[p] = d->alpha[p];
            a.beta[p] = d->beta[p];
        }
    }
    a.rec = record;
    dim3 grid(ozcmp_blocks(a.m, kThreads, 0x7fffffff), ozcmp_blocks(a.ncols, kCols, OZCMP_GRID_YZ_MAX),
              ozcmp_blocks(a.batch, 1, OZCMP_GRID_YZ_MAX));
    if (cplx)
        ozcmp_metrics_kernel<true><<<grid, kThreads, 0, s>>>(a);
    else
        ozcmp_metrics_kernel<false><<<grid, kThreads, 0, s>>>(a);
    OZCMP_CHECK(cudaGetLastError());
    return 0;
}
