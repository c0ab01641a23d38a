/* compare/kernel_scales.cu: max |.| of the rows of op(A) and the columns of op(B) (complex: of max(|Re|, |Im|)), for the shadow-mode error bound. */
#include "compare/kernel_check.cuh"
#include "compare/kernels.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int64_t kChunk = 1024; /* elements of one vector per block row (grid.y splits longer ones) */
static_assert(kThreads % 32 == 0, "whole warps");

/* `nvec` vectors of `len` elements: element l of vector v of batch item b is
 * x_b[v vec_stride + l elem_stride], strides and batch_stride in elements
 * (a complex element: two doubles, re and im, and its |.| is the larger). */
struct absmax_args {
    const double *base;
    const double *const *array;
    int64_t batch_stride;
    int64_t nvec, len, vec_stride, elem_stride, batch;
    unsigned long long *out; /* batch * nvec, zeroed */
    int warp_per_vector;     /* elem_stride == 1: lanes along the vector; else a thread per vector */
};

__device__ __forceinline__ unsigned long long abs_bits(double x)
{
    return (unsigned long long)__double_as_longlong(fabs(x));
}

/* max(|Re|, |Im|) (complex) or |x| (real) of element `idx` as a bit pattern. */
template <bool Cplx>
__device__ __forceinline__ unsigned long long elem_abs_bits(const double *x, int64_t idx)
{
    if (Cplx)
        return max(abs_bits(x[2 * idx]), abs_bits(x[2 * idx + 1]));
    return abs_bits(x[idx]);
}

}  // namespace

/* Grid: x over vectors, y over chunks of kChunk elements, z over batch items
 * (each dimension loops when the problem is larger than the grid). One
 * atomicMax per vector and chunk; zeros are skipped (the output starts at 0).
 * Cplx: complex elements (OZ_ELEM_COMPLEX). */
template <bool Cplx>
__global__ void __launch_bounds__(kThreads) ozcmp_absmax_kernel(absmax_args a)
{
    for (int64_t b = blockIdx.z; b < a.batch; b += gridDim.z) {
        const double *x = a.array ? a.array[b] : a.base + (Cplx ? 2 : 1) * b * a.batch_stride;
        unsigned long long *out = a.out + b * a.nvec;
        for (int64_t c0 = (int64_t)blockIdx.y * kChunk; c0 < a.len; c0 += (int64_t)gridDim.y * kChunk) {
            const int64_t c1 = min(c0 + kChunk, a.len);
            if (a.warp_per_vector) {
                const int lane = threadIdx.x % 32;
                for (int64_t v = (int64_t)blockIdx.x * kWarps + threadIdx.x / 32; v < a.nvec;
                     v += (int64_t)gridDim.x * kWarps) {
                    unsigned long long m = 0;
                    for (int64_t l = c0 + lane; l < c1; l += 32)
                        m = max(m, elem_abs_bits<Cplx>(x, v * a.vec_stride + l));
                    for (int off = 16; off > 0; off /= 2)
                        m = max(m, __shfl_xor_sync(0xffffffffu, m, off));
                    if (lane == 0 && m)
                        atomicMax(out + v, m);
                }
            } else {
                for (int64_t v = (int64_t)blockIdx.x * kThreads + threadIdx.x; v < a.nvec;
                     v += (int64_t)gridDim.x * kThreads) {
                    unsigned long long m = 0;
                    for (int64_t l = c0; l < c1; l++)
                        m = max(m, elem_abs_bits<Cplx>(x, v * a.vec_stride + l * a.elem_stride));
                    if (m)
                        atomicMax(out + v, m);
                }
            }
        }
    }
}

static int launch_absmax(absmax_args a, int cplx, cudaStream_t stream)
{
    OZCMP_CHECK(cudaMemsetAsync(a.out, 0, (size_t)(a.batch * a.nvec) * sizeof(unsigned long long), stream));
    if (a.nvec == 0 || a.len == 0)
        return 0;
    a.warp_per_vector = a.elem_stride == 1;
    dim3 grid(ozcmp_blocks(a.nvec, a.warp_per_vector ? kWarps : kThreads, 0x7fffffff),
              ozcmp_blocks(a.len, kChunk, OZCMP_GRID_YZ_MAX), ozcmp_blocks(a.batch, 1, OZCMP_GRID_YZ_MAX));
    if (cplx)
        ozcmp_absmax_kernel<true><<<grid, kThreads, 0, stream>>>(a);
    else
        ozcmp_absmax_kernel<false><<<grid, kThreads, 0, stream>>>(a);
    OZCMP_CHECK(cudaGetLastError());
    return 0;
}

extern "C" int ozcmp_scales(const oz_gemm_desc *d, uint64_t *absmax_a, uint64_t *absmax_b, void *stream)
{
    static_assert(sizeof(uint64_t) == sizeof(unsigned long long), "64-bit atomics");
    cudaStream_t s = (cudaStream_t)stream;
    if (d->batch <= 0)
        return 0;
    const int cplx = d->elem == OZ_ELEM_COMPLEX; /* ld and strides count complex elements */
    /* op(A)[i, l]: A[i + l lda] (N) or A[l + i lda] (T, C) */
    absmax_args a = {};
    a.base = d->A;
    a.array = d->Aarray;
    a.batch_stride = d->strideA;
    a.nvec = d->m;
    a.len = d->k;
    a.vec_stride = d->transa == 0 ? 1 : d->lda;
    a.elem_stride = d->transa == 0 ? d->lda : 1;
    a.batch = d->batch;
    a.out = (unsigned long long *)absmax_a;
    int rc = launch_absmax(a, cplx, s);
    if (rc)
        return rc;
    /* op(B)[l, j]: B[l + j ldb] (N) or B[j + l ldb] (T, C) */
    absmax_args b = {};
    b.base = d->B;
    b.array = d->Aarray ? d->Barray : NULL;
    b.batch_stride = d->strideB;
    b.nvec = d->n;
    b.len = d->k;
    b.vec_stride = d->transb == 0 ? d->ldb : 1;
    b.elem_stride = d->transb == 0 ? 1 : d->ldb;
    b.batch = d->batch;
    b.out = (unsigned long long *)absmax_b;
    return launch_absmax(b, cplx, s);
}
