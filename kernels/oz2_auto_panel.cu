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
    static_assert(PER * (32 / R) <= (1 << (32 - OZ2A_E)), "a warp's part of a norm sum fits 32 bits");
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
    __shared__ double s_wmx[S::NW][R];
    __shared__ uint32_t s_wsum[S::NW][R];
    __shared__ double s_amx[OZ2A_PANEL_CLUSTER_MAX * R]; /* every CTA's: [rank R + row] */
    __shared__ unsigned long long s_asum[OZ2A_PANEL_CLUSTER_MAX * R];
    __shared__ oz2a_pow2 s_f[R]; /* the rows' norm factors, then their operands' */
    __shared__ int s_sc[R];
    cg::cluster_group cl = cg::this_cluster();
    const int C = (int)cl.num_blocks(), c = (int)cl.block_rank();
    const int t = threadIdx.x, lane = t & 31, wp = t >> 5, lr = t % R;
    const int64_t r0 = (int64_t)(blockIdx.x / C) * R, kk = (int64_t)c * KC + (int64_t)PER * (t / R), r = r0 + lr;
    const bool row_in = r < v.rows;
    cl.barrier_arrive(); /* waited for before the first write to another CTA's memory */
    /* the thread's elements, all loads in flight together (0 past the view) */
    double a[PER];
    {
        const double *x = v.ptr(0) + r * v.rs + kk * v.ks;
        const int64_t left = row_in ? v.k - kk : 0;
#pragma unroll
        for (int u = 0; u < PER; u++, x += v.ks)
            a[u] = FULL || u < left ? __ldg(x) : 0.0;
    }
    /* the row's scale from the max of the elements' high words (sign
     * cleared): a normal element's exponent, or Inf / NaN (at least
     * 0x7ff00000); below 0x00100000 (zeros and subnormals) the exact max. The
     * thread's key: the high word alone (Inf for Inf / NaN) or that max, a
     * double whose frexp exponent is the row's part's, +Inf where bad. */
    uint32_t hm = 0;
#pragma unroll
    for (int u = 0; u < PER; u++)
        hm = max(hm, (uint32_t)__double2hiint(a[u]) & 0x7fffffffu);
    double mx;
    if (hm >= 0x00100000u) {
        mx = __hiloint2double((int)min(hm, 0x7ff00000u), 0);
    } else {
        mx = 0.0;
#pragma unroll
        for (int u = 0; u < PER; u++)
            mx = fmax(mx, fabs(a[u]));
    }
    mx = panel_row_reduce<R>(mx, [](double x, double y) { return fmax(x, y); });
    if (lane < R)
        s_wmx[wp][lane] = mx;
    __syncthreads();
    cl.barrier_wait(); /* every CTA of the cluster has started: its shared memory can be written */
    if (t < R) { /* the CTA's max of row t, into every CTA's s_amx[c R + t] */
        double m = 0.0;
#pragma unroll
        for (int w = 0; w < S::NW; w++)
            m = fmax(m, s_wmx[w][t]);
        for (int h = 0; h < C; h++)
            *cl.map_shared_rank(&s_amx[c * R + t], h) = m;
    }
    cl.sync(); /* every CTA's partials are in every CTA's shared memory */
    if (t < R) { /* the row's scale over the cluster and its norm factor */
        double m = 0.0;
        for (int h = 0; h < C; h++)
            m = fmax(m, s_amx[h * R + t]);
        const int sc = oz_scale_exponent(m); /* OZ_SCALE_SPECIAL where +Inf: the row has Inf or NaN; else the exponent of its max */
        s_sc[t] = sc;
        s_f[t] = oz2a_norm_factor(sc == OZ_SCALE_SPECIAL ? 0 : sc);
    }
    __syncthreads();
    const int sc = s_sc[lr];
    const bool bad = sc == OZ_SCALE_SPECIAL;
    if (__any_sync(0xffffffffu, bad) && bad) { /* such a row's norm sum and operands are 0 */
#pragma unroll
        for (int u = 0; u < PER; u++)
            a[u] = 0.0;
    }
    uint32_t part = panel_norm_part<PER>(a, s_f[lr]); /* 0 past the view: its terms are 0 */
    part = panel_row_reduce<R>(part, [](uint32_t x, uint32_t y) { return x + y; });
    if (lane < R)
        s_wsum[wp][lane] = part;
    __syncthreads(); /* s_f read: rewritten below */
    if (t < R) {
        unsigned long long sum = 0;
#pragma unroll
        for (int w = 0; w < S::NW; w++)
            sum += s_wsum[w][t];
        for (int h = 0; h < C; h++)
            *cl.map_shared_rank(&s_asum[c * R + t], h) = sum;
    }
    cl.sync(); /* the last access to another CTA's memory: none waits for this CTA after it */
    if (t < R) { /* the row's norm sum and g; its operands' factor */
        unsigned long long sum = 0;
        for (int h = 0; h < C; h++)
            sum += s_asum[h * R + t];
        const int gr = oz2a_row_scale(sum, v.k);
        if (c == 0 && row_in)
            oz2a_store_row(ws, r, sc, bad, sum, gr, A1, g, pq, a1max, gmax);
        s_f[t] = oz2a_quant_factor(bad ? 0 : sc, gr); /* a row of zeros (or a bad one, zeroed) quantizes to 0 */
    }
    __syncthreads();
    /* the operands: the thread's PER bytes of row r below kep (0 past k) */
    uint32_t wd[PER / 4];
    panel_quant<PER>(a, s_f[lr], wd);
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
