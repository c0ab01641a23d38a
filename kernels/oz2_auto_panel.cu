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

/* A panel's shape: R rows, KC columns a CTA of T threads, thread t row t %
 * R, columns t / R + (T / R) u (u < PER) held in registers: a warp's loads
 * are 32 / R columns of R rows, each column's rows one piece of 8 R bytes. */
template <int R, int KC, int T>
struct panel_shape {
    static constexpr int STEP = T / R;   /* columns a load step */
    static constexpr int PER = KC / STEP; /* a thread's elements */
    static constexpr int NW = T / 32;
    static constexpr int QLD = KC + 4;   /* a row's operand bytes in shared memory (rows in other banks) */
    static_assert(T % 32 == 0 && 32 % R == 0 && KC % STEP == 0 && KC % 128 == 0,
                  "whole warps of whole columns; whole stages of the operand's K padding");
    static_assert((R * KC / 4) % T == 0 && (KC / 4) % 32 == 0, "the operands' words: whole warps on a row");
    static_assert(PER * (32 / R) * NW <= (1 << (32 - OZ2A_E)), "a warp's part of a norm sum fits 32 bits");
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

template <int R, int KC, int T, bool FULL> /* FULL: every row of every panel and all KC columns of every CTA in the view, kep = k */
__global__ void __launch_bounds__(T, 1024 / T)
    oz2a_panel_prep_kernel(oz_view v, oz_operand_ws ws, unsigned long long *A1, int32_t *g, oz2a_skip_pq *pq,
                           unsigned long long *a1max, int *gmax, int64_t kep, uint8_t *q)
{
#if __CUDA_ARCH__ >= 900
    using S = panel_shape<R, KC, T>;
    __shared__ double s_wmx[S::NW][R];
    __shared__ int s_wbad[S::NW][R];
    __shared__ uint32_t s_wsum[S::NW][R];
    __shared__ double s_amx[OZ2A_PANEL_CLUSTER_MAX * R]; /* every CTA's: [rank R + row] */
    __shared__ int s_abad[OZ2A_PANEL_CLUSTER_MAX * R];
    __shared__ unsigned long long s_asum[OZ2A_PANEL_CLUSTER_MAX * R];
    __shared__ double s_fmx[R]; /* the rows' over the cluster */
    __shared__ int s_fbad[R];
    __shared__ unsigned long long s_fsum[R];
    __shared__ __align__(16) uint8_t s_q[R * S::QLD];
    cg::cluster_group cl = cg::this_cluster();
    const int C = (int)cl.num_blocks(), c = (int)cl.block_rank();
    const int t = threadIdx.x, lane = t & 31, wp = t >> 5, lr = t % R, j0 = t / R;
    const int64_t r0 = (int64_t)(blockIdx.x / C) * R, k0 = (int64_t)c * KC, r = r0 + lr;
    const bool row_in = r < v.rows;
    cl.barrier_arrive(); /* waited for before the first write to another CTA's memory */
    /* the thread's elements, all loads in flight together (0 past the view) */
    double a[S::PER];
    {
        const double *x = v.ptr(0) + r * v.rs + (k0 + j0) * v.ks;
        const int64_t dx = S::STEP * v.ks;
#pragma unroll
        for (int u = 0; u < S::PER; u++, x += dx)
            a[u] = FULL || (row_in && k0 + j0 + S::STEP * u < v.k) ? __ldg(x) : 0.0;
    }
    double mx = 0.0;
    int bad = 0;
#pragma unroll
    for (int u = 0; u < S::PER; u++) {
        bad |= !(fabs(a[u]) <= DBL_MAX);
        mx = fmax(mx, fabs(a[u]));
    }
    mx = panel_row_reduce<R>(mx, [](double x, double y) { return fmax(x, y); });
    bad = panel_row_reduce<R>(bad, [](int x, int y) { return x | y; });
    if (lane < R) {
        s_wmx[wp][lane] = mx;
        s_wbad[wp][lane] = bad;
    }
    __syncthreads();
    cl.barrier_wait(); /* every CTA of the cluster has started: its shared memory can be written */
    if (t < R) { /* the CTA's max of row t, into every CTA's s_amx[c R + t] */
        double m = 0.0;
        int b = 0;
        for (int w = 0; w < S::NW; w++) {
            m = fmax(m, s_wmx[w][t]);
            b |= s_wbad[w][t];
        }
        for (int h = 0; h < C; h++) {
            *cl.map_shared_rank(&s_amx[c * R + t], h) = m;
            *cl.map_shared_rank(&s_abad[c * R + t], h) = b;
        }
    }
    cl.sync(); /* every CTA's partials are in every CTA's shared memory */
    if (t < R) { /* the row's over the cluster, read by every thread of the row below */
        double m = 0.0;
        int b = 0;
        for (int h = 0; h < C; h++) {
            m = fmax(m, s_amx[h * R + t]);
            b |= s_abad[h * R + t];
        }
        s_fmx[t] = m;
        s_fbad[t] = b;
    }
    __syncthreads();
    mx = s_fmx[lr];
    bad = s_fbad[lr];
    const int sc = bad ? OZ_SCALE_SPECIAL : oz_scale_exponent(mx);
    uint32_t part = 0;
    if (!bad) {
        const oz2a_pow2 f = oz2a_norm_factor(sc); /* sc not special here */
#pragma unroll
        for (int u = 0; u < S::PER; u++) /* 0 past the view: its term is 0 */
            part += oz2a_norm_term_fp(a[u], f);
    }
    part = panel_row_reduce<R>(part, [](uint32_t x, uint32_t y) { return x + y; });
    if (lane < R)
        s_wsum[wp][lane] = part;
    __syncthreads();
    if (t < R) {
        unsigned long long sum = 0;
        for (int w = 0; w < S::NW; w++)
            sum += s_wsum[w][t];
        for (int h = 0; h < C; h++)
            *cl.map_shared_rank(&s_asum[c * R + t], h) = sum;
    }
    cl.sync(); /* the last access to another CTA's memory: none waits for this CTA after it */
    if (t < R) {
        unsigned long long m = 0;
        for (int h = 0; h < C; h++)
            m += s_asum[h * R + t];
        s_fsum[t] = m;
    }
    __syncthreads();
    const unsigned long long sum = s_fsum[lr];
    const int gr = oz2a_row_scale(sum, v.k);
    if (c == 0 && row_in && j0 == 0)
        oz2a_store_row(ws, r, sc, bad, sum, gr, A1, g, pq, a1max, gmax);
    /* the operands: bytes into shared memory, then rows of words below kep (0 past k and for dead rows) */
    {
        const bool live = !bad && sum != 0;
        const oz2a_pow2 fq = oz2a_quant_factor(live ? sc : 0, gr);
#pragma unroll
        for (int u = 0; u < S::PER; u++)
            s_q[lr * S::QLD + j0 + S::STEP * u] = (uint8_t)(live ? oz2a_quant_fp(a[u], fq) : 0u);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < R * KC / 4 / T; i++) {
        const int wi = t + T * i, row = wi / (KC / 4), word = wi % (KC / 4);
        const int64_t rr = r0 + row, kk = k0 + 4 * word;
        if (FULL || (rr < v.rows && kk < kep))
            *(uint32_t *)(q + rr * kep + kk) = *(const uint32_t *)(s_q + row * S::QLD + 4 * word);
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
