/* kernels/oz2_auto_panel.cu: the automatic precision's per-row work on an operand whose rows are contiguous (op(A) = A, column-major), in one read of it: the scale, the norm sum, g, (P, p) and the estimate's operands (docs/ozaki2-auto.md steps 1-2).
 *
 * A row's k elements lie lda apart, so one block cannot hold a row; a
 * panel of R rows is a thread-block cluster of ceil(k / KC) CTAs, CTA c
 * holding columns [c KC, (c + 1) KC) of the panel in registers (read once,
 * every column's R rows one piece). Each CTA takes its columns'
 * maxima and Inf/NaN flags, then its norm sums; the cluster combines them
 * through distributed shared memory (every CTA writes its partials into
 * every CTA's: fmax and integer sums, the same values in any order, those
 * of the separate kernels); then each CTA writes its columns' operands and CTA 0
 * the rows' scale, A1, g, (P, p) and the maxima. k at most
 * OZ2A_PANEL_CLUSTER_MAX KC. */
#include <cooperative_groups.h>
#include <float.h>

#include "oz2_auto_panel.h"
#include "oz2_auto_rows.cuh"
#include "oz2_auto_estimate.h" /* oz2a_force_panel_shape */
#include "operand_views.h"     /* OZ_TEST_KNOB */
#include "../crt/oz2_auto.h"
#include "../slicing/slicing.h"

namespace cg = cooperative_groups;

/* The shapes (tests and measurements pick one, oz2a_force_panel_shape): rows, columns a CTA. */
OZ_TEST_KNOB(int, g_panel_shape, oz2a_force_panel_shape, OZ2A_PANEL_SHAPE)

namespace {

/* A panel's shape: R rows, KC columns a CTA of T threads; thread t takes
 * row t % R and the PER consecutive columns of group t / R (its operand
 * bytes: whole words, stored at once). A warp's loads are 32 / R columns of
 * R rows, each column's rows one piece of 8 R bytes. */
template <int R, int KC, int T>
struct panel_shape {
    static constexpr int GROUPS = T / R;    /* column groups a CTA */
    static constexpr int PER = KC / GROUPS; /* a thread's elements */
    static constexpr int NW = T / 32;
    static_assert(T % 32 == 0 && 32 % R == 0 && KC % GROUPS == 0 && KC % 128 == 0,
                  "whole warps of whole columns; whole stages of the operand's K padding");
    static_assert(PER % 8 == 0 && 128 % PER == 0,
                  "a thread's operand bytes are whole 8-byte words, all below kep or all past it (kep: a multiple of 128)");
    static_assert((int64_t)KC << OZ2A_E < (INT64_C(1) << 32), "a CTA's part of a norm sum fits 32 bits");
    static_assert((int64_t)KC * OZ2A_PANEL_CLUSTER_MAX <= OZ2A_KEST, "the panel's K is all of K_E");
};

/* v over the lanes of one row (lanes equal mod R) */
template <int R, class V, class Op>
__device__ __forceinline__ V panel_row_reduce(V v, Op op)
{
#pragma unroll
    for (int o = R; o < 32; o <<= 1)
        v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* A thread's part of its row's norm sum (the factor's hi 1 across the warp: one product an element). */
template <int PER>
__device__ __forceinline__ uint32_t panel_norm_part(const double (&a)[PER], oz2a_pow2 f)
{
    uint32_t part = 0;
    if (__all_sync(0xffffffffu, f.hi == 1.0)) {
#pragma unroll
        for (int u = 0; u < PER; u++)
            part += oz2a_norm_term_fp1(a[u], f.lo);
    } else {
#pragma unroll
        for (int u = 0; u < PER; u++)
            part += oz2a_norm_term_fp(a[u], f);
    }
    return part;
}

/* A thread's operand bytes, four a word (byte u of word u / 4: column u). */
template <int PER>
__device__ __forceinline__ void panel_quant(const double (&a)[PER], oz2a_pow2 f, uint32_t (&w)[PER / 4])
{
    uint32_t b[PER];
    if (__all_sync(0xffffffffu, f.hi == 1.0)) {
#pragma unroll
        for (int u = 0; u < PER; u++)
            b[u] = oz2a_quant_fp1(a[u], f.lo);
    } else {
#pragma unroll
        for (int u = 0; u < PER; u++)
            b[u] = oz2a_quant_fp(a[u], f);
    }
#pragma unroll
    for (int i = 0; i < PER / 4; i++)
        w[i] = b[4 * i] | b[4 * i + 1] << 8 | b[4 * i + 2] << 16 | b[4 * i + 3] << 24;
}

template <int R, int KC, int T, bool FULL> /* FULL: every row of every panel and all KC columns of every CTA in the view, kep = k */
__global__ void __launch_bounds__(T, 1024 / T)
    oz2a_panel_prep_kernel(oz_view v, oz_operand_ws ws, unsigned long long *A1, int32_t *g, oz2a_skip_pq *pq,
                           unsigned long long *a1max, int *gmax, int64_t kep, uint8_t *q)
{
#if __CUDA_ARCH__ >= 900
    using S = panel_shape<R, KC, T>;
    constexpr int PER = S::PER;
    /* the rows' keys and norm sums: the CTA's (shared atomics of its warps),
     * then the cluster's (every CTA's added into every CTA's: integer max and
     * sums, the same in any order) */
    __shared__ uint32_t s_key[R], s_sum[R], s_ckey[R];
    __shared__ unsigned long long s_csum[R];
    cg::cluster_group cl = cg::this_cluster();
    const int C = (int)cl.num_blocks(), c = (int)cl.block_rank();
    const int t = threadIdx.x, lane = t & 31, lr = t % R;
    const int64_t r0 = (int64_t)(blockIdx.x / C) * R, kk = (int64_t)c * KC + (int64_t)PER * (t / R), r = r0 + lr;
    const bool row_in = r < v.rows;
    /* the thread's elements, all loads in flight together (0 past the view) */
    double a[PER];
    {
        const double *x = v.ptr(0) + r * v.rs + kk * v.ks;
        const int64_t left = row_in ? v.k - kk : 0;
#pragma unroll
        for (int u = 0; u < PER; u++, x += v.ks)
            a[u] = FULL || u < left ? __ldg(x) : 0.0;
    }
    if (t < R)
        s_key[t] = s_sum[t] = s_ckey[t] = 0, s_csum[t] = 0;
    __syncthreads();
    cl.barrier_arrive(); /* the cluster's words are 0: waited for before the first write to another CTA's memory */
    /* the thread's key (oz2a_elem_key's max over its elements): the max of
     * the high words (sign cleared), else the bit length of the bits' or */
    uint32_t key = 0;
#pragma unroll
    for (int u = 0; u < PER; u++)
        key = max(key, (uint32_t)__double2hiint(a[u]) & 0x7fffffffu);
    if (key >= 0x00100000u) {
        key = min(key, 0x7ff00000u);
    } else {
        unsigned long long o = 0;
#pragma unroll
        for (int u = 0; u < PER; u++)
            o |= (unsigned long long)__double_as_longlong(a[u]);
        key = (uint32_t)oz2a_bitlen(o & 0x7fffffffffffffffull);
    }
    key = panel_row_reduce<R>(key, [](uint32_t x, uint32_t y) { return max(x, y); });
    if (lane < R)
        atomicMax(&s_key[lane], key);
    __syncthreads();
    cl.barrier_wait(); /* every CTA of the cluster has zeroed its words */
    if (t < R)
        for (int h = 0; h < C; h++)
            atomicMax(cl.map_shared_rank(&s_ckey[t], h), s_key[t]);
    cl.sync(); /* every CTA's keys are in every CTA's words */
    const int sc = oz2a_key_scale(s_ckey[lr]); /* OZ_SCALE_SPECIAL: the row has Inf or NaN */
    const bool bad = sc == OZ_SCALE_SPECIAL;
    if (__any_sync(0xffffffffu, bad) && bad) { /* such a row's norm sum and operands are 0 */
#pragma unroll
        for (int u = 0; u < PER; u++)
            a[u] = 0.0;
    }
    uint32_t part = panel_norm_part<PER>(a, oz2a_norm_factor(bad ? 0 : sc)); /* 0 past the view: its terms are 0 */
    part = panel_row_reduce<R>(part, [](uint32_t x, uint32_t y) { return x + y; });
    if (lane < R)
        atomicAdd(&s_sum[lane], part);
    __syncthreads();
    if (t < R)
        for (int h = 0; h < C; h++)
            atomicAdd(cl.map_shared_rank(&s_csum[t], h), (unsigned long long)s_sum[t]);
    cl.sync(); /* the last access to another CTA's memory: none waits for this CTA after it */
    const unsigned long long sum = s_csum[lr];
    const int gr = oz2a_row_scale(sum, v.k);
    if (c == 0 && t < R && row_in)
        oz2a_store_row(ws, r, sc, bad, sum, gr, A1, g, pq, a1max, gmax);
    /* the operands: the thread's PER bytes of row r below kep (0 past k; a
     * row of zeros, or a bad one zeroed, quantizes to 0) */
    uint32_t wd[PER / 4];
    panel_quant<PER>(a, oz2a_quant_factor(bad ? 0 : sc, gr), wd);
    if (FULL || (row_in && kk < kep)) {
        uint8_t *p = q + r * kep + kk;
        if constexpr (PER % 16 == 0) {
#pragma unroll
            for (int i = 0; i < PER / 16; i++)
                reinterpret_cast<uint4 *>(p)[i] = make_uint4(wd[4 * i], wd[4 * i + 1], wd[4 * i + 2], wd[4 * i + 3]);
        } else {
#pragma unroll
            for (int i = 0; i < PER / 8; i++)
                reinterpret_cast<uint2 *>(p)[i] = make_uint2(wd[2 * i], wd[2 * i + 1]);
        }
    }
#endif
}

/* The shapes (rows, columns a CTA, threads): the library takes OZ2A_PANEL_SHAPE, tests and measurements any. */
#ifdef OZ_TEST_HOOKS /* the shapes measured (BENCHMARKS.md, 2026-12-03) */
#define OZ2A_PANEL_SHAPES(X) X(0, 8, 1024, 512) X(1, 8, 512, 256) X(2, 16, 512, 512) X(3, 4, 1024, 256) X(4, 4, 1024, 512)
#define OZ2A_PANEL_NSHAPES 5
#else /* the library holds the one it runs */
#define OZ2A_PANEL_SHAPES(X) X(0, 8, 1024, 512)
#define OZ2A_PANEL_NSHAPES 1
#endif
static_assert(OZ2A_PANEL_SHAPE < OZ2A_PANEL_NSHAPES, "the library's shape is built");

struct panel_launch {
    const void *fn, *fn_full; /* the general kernel and the FULL one */
    int rows, kc, threads;
};
panel_launch panel_of(int shape)
{
    switch (shape) {
#define OZ2A_PANEL_CASE_(i, R, KC, T)                                                                                 \
    case i:                                                                                                        \
        return {(const void *)oz2a_panel_prep_kernel<R, KC, T, false>, (const void *)oz2a_panel_prep_kernel<R, KC, T, true>, \
                R, KC, T};
        OZ2A_PANEL_SHAPES(OZ2A_PANEL_CASE_)
#undef OZ2A_PANEL_CASE_
    }
    return {nullptr, nullptr, 0, 0, 0};
}

/* The cluster size for k columns (0: too many). */
int panel_cluster(const panel_launch &pl, int64_t k)
{
    const int64_t C = (k + pl.kc - 1) / pl.kc;
    return C <= OZ2A_PANEL_CLUSTER_MAX ? (int)C : 0;
}

/* Whether the current device runs the largest clusters of this shape's
 * CTAs from sm_90 code (the compute_80 PTX holds an empty body), asked once
 * a device and shape; a device that cannot (no image, no room) takes the
 * separate kernels. Errors of the questions themselves are those answers. */
bool panel_probe(const panel_launch &pl)
{
    cudaFuncAttributes fa;
    if (pl.fn == nullptr || cudaFuncGetAttributes(&fa, pl.fn) != cudaSuccess || fa.binaryVersion < 90 ||
        cudaFuncSetAttribute(pl.fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess ||
        cudaFuncSetAttribute(pl.fn_full, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
        return false;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at;
    at.id = cudaLaunchAttributeClusterDimension;
    at.val.clusterDim.x = OZ2A_PANEL_CLUSTER_MAX;
    at.val.clusterDim.y = at.val.clusterDim.z = 1;
    cfg.gridDim = dim3(OZ2A_PANEL_CLUSTER_MAX);
    cfg.blockDim = dim3(pl.threads);
    cfg.attrs = &at;
    cfg.numAttrs = 1;
    int clusters = 0;
    return cudaOccupancyMaxActiveClusters(&clusters, pl.fn, &cfg) == cudaSuccess && clusters > 0;
}

cudaError_t panel_device_ok(int shape, bool *ok)
{
    static volatile int known[64][OZ2A_PANEL_NSHAPES], usable[64][OZ2A_PANEL_NSHAPES];
    int dev = 0;
    const cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    if (dev < 64 && known[dev][shape]) {
        *ok = usable[dev][shape] != 0;
        return cudaSuccess;
    }
    const bool u = panel_probe(panel_of(shape));
    if (!u)
        (void)cudaGetLastError(); /* a refused question leaves no error behind */
    if (dev < 64) {
        usable[dev][shape] = u;
        known[dev][shape] = 1;
    }
    *ok = u;
    return cudaSuccess;
}

} // namespace

cudaError_t oz2a_panel_serves(const oz_view &v, bool *serves)
{
    *serves = false;
    const int shape = g_panel_shape;
    if (shape < 0 || shape >= OZ2A_PANEL_NSHAPES)
        return cudaSuccess;
    const panel_launch pl = panel_of(shape);
    if (v.rs != 1 || v.k < 1 || v.rows < 1 || panel_cluster(pl, v.k) == 0 ||
        (v.rows + pl.rows - 1) / pl.rows * panel_cluster(pl, v.k) > INT32_MAX)
        return cudaSuccess;
    return panel_device_ok(shape, serves);
}

cudaError_t oz2a_launch_panel_prep(const oz_view &v, const oz_operand_ws &w, unsigned long long *A1, int32_t *g,
                                   oz2a_skip_pq *pq, unsigned long long *a1max, int *gmax, int64_t kep, uint8_t *q,
                                   cudaStream_t s)
{
    const panel_launch pl = panel_of(g_panel_shape);
    const int C = panel_cluster(pl, v.k);
    const int64_t panels = (v.rows + pl.rows - 1) / pl.rows;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at;
    at.id = cudaLaunchAttributeClusterDimension;
    at.val.clusterDim.x = (unsigned)C;
    at.val.clusterDim.y = at.val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)(panels * C));
    cfg.blockDim = dim3(pl.threads);
    cfg.stream = s;
    cfg.attrs = &at;
    cfg.numAttrs = 1;
    void *args[] = {(void *)&v, (void *)&w, &A1, &g, &pq, &a1max, &gmax, &kep, &q};
    const bool full = v.rows % pl.rows == 0 && v.k == (int64_t)C * pl.kc && kep == v.k;
    return cudaLaunchKernelExC(&cfg, full ? pl.fn_full : pl.fn, args);
}
