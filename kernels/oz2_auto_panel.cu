/* kernels/oz2_auto_panel.cu: the automatic precision's per-row work on an operand whose rows are contiguous (op(A) = A, column-major), in one read of it: the scale, the norm sum, g, (P, p) and the estimate's operands (docs/ozaki2-auto.md steps 1-2).
 *
 * A row's k elements lie lda apart, so one block cannot hold a row; a
 * panel of R rows is worked by a thread-block cluster of ceil(k / KC) CTAs,
 * CTA c holding columns [c KC, (c + 1) KC) of the panel (every column's R
 * rows one piece). The clusters are persistent: cluster i takes panels i,
 * i + (clusters), ..., each CTA's columns copied by cp.async into one of
 * ST shared-memory slots while the panels before it are worked (a slot
 * refilled as soon as its panel is in registers: ST panels in flight; a
 * thread reads back only what it copied). Each CTA takes its columns' maxima and
 * Inf/NaN flags, then its norm sums; the cluster combines them through
 * distributed shared memory (every CTA writes its partials into every
 * CTA's: fmax and integer sums, the same values in any order, those of the
 * separate kernels); then each CTA writes its columns' operands and CTA 0
 * the rows' scale, A1, g, (P, p) and the maxima. k at most
 * OZ2A_PANEL_CLUSTER_MAX KC. */
#include <cooperative_groups.h>
#include <float.h>

#include "oz2_auto_panel.h"
#include "oz2_auto_rows.cuh"
#include "oz2_auto_estimate.h" /* oz2a_force_panel_shape */
#include "operand_views.h"     /* OZ_TEST_KNOB */
#include "cp_async.cuh"
#include "../crt/oz2_auto.h"
#include "../slicing/slicing.h"

namespace cg = cooperative_groups;

/* The shapes (tests and measurements pick one, oz2a_force_panel_shape): rows, columns a CTA. */
OZ_TEST_KNOB(int, g_panel_shape, oz2a_force_panel_shape, OZ2A_PANEL_SHAPE)

namespace {

/* A panel's shape: R rows, KC columns a CTA of T threads, thread t row t %
 * R, columns t / R + (T / R) u (u < PER), ST slots: a warp's copies are
 * 32 / R columns of R rows, each column's rows one piece of 8 R bytes; a
 * slot holds element u of thread t at u T + t. */
template <int R, int KC, int T, int ST>
struct panel_shape { /* ST = 0: no slots, a CTA loads its one panel into registers (a grid of every panel) */
    static constexpr int STEP = T / R;   /* columns a load step */
    static constexpr int PER = KC / STEP; /* a thread's elements */
    static constexpr int NW = T / 32;
    static constexpr int QLD = KC + 4;   /* a row's operand bytes in shared memory (rows in other banks) */
    static constexpr int SLOT = R * KC;  /* doubles a slot */
    static_assert(T % 32 == 0 && 32 % R == 0 && KC % STEP == 0 && KC % 128 == 0,
                  "whole warps of whole columns; whole stages of the operand's K padding");
    static_assert((R * KC / 4) % T == 0 && (KC / 4) % 32 == 0, "the operands' words: whole warps on a row");
    static_assert(PER * (32 / R) * NW <= (1 << (32 - OZ2A_E)), "a warp's part of a norm sum fits 32 bits");
    static_assert((int64_t)KC * OZ2A_PANEL_CLUSTER_MAX <= OZ2A_KEST, "the panel's K is all of K_E");
    static_assert(ST >= 0, "slots");
    static_assert(NW >= R && NW <= 32 && OZ2A_PANEL_CLUSTER_MAX <= 32, "a warp a row combines the warps' and CTAs' partials");
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

__device__ __forceinline__ double warp_max(double v)
{
#pragma unroll
    for (int o = 16; o; o >>= 1)
        v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v)
{
#pragma unroll
    for (int o = 16; o; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* This CTA's elements of panel p (p < panels), columns kk0 + STEP u of
 * row p R + t % R: COPY, copies into the slot at shared byte address slot;
 * else loads into a[] (zeros past the view). */
template <int R, int KC, int T, int ST, bool COPY>
__device__ __forceinline__ void panel_fetch(const oz_view &v, int64_t p, int64_t k0, uint32_t slot, double *a)
{
    using S = panel_shape<R, KC, T, ST>;
    const int t = threadIdx.x;
    const int64_t r = p * R + t % R;
    const bool row_in = r < v.rows;
    const double *xr = v.ptr(0) + (row_in ? r : 0) * v.rs;
    const int64_t kk0 = k0 + t / R, ks = v.ks;
    /* the thread's columns within the view: a prefix of them */
    const int64_t left = row_in && kk0 < v.k ? (v.k - kk0 + S::STEP - 1) / S::STEP : 0;
    const double *x = xr + kk0 * ks;
#pragma unroll
    for (int u = 0; u < S::PER; u++) {
        const bool in = u < left;
        if (COPY)
            oz_cp_async8(slot + 8u * (uint32_t)(u * T + t), in ? x : xr, in);
        else
            a[u] = in ? __ldg(x) : 0.0;
        x += S::STEP * ks;
    }
}

/* Panel p's copies into a slot (none past the panels), one group even when empty. */
template <int R, int KC, int T, int ST>
__device__ __forceinline__ void panel_issue(const oz_view &v, int64_t p, int64_t panels, int64_t k0, uint32_t slot)
{
    if (p < panels)
        panel_fetch<R, KC, T, ST, true>(v, p, k0, slot, nullptr);
    oz_cp_async_commit();
}

template <int R, int KC, int T, int ST, int MINB>
__global__ void __launch_bounds__(T, MINB)
    oz2a_panel_prep_kernel(oz_view v, oz_operand_ws ws, unsigned long long *A1, int32_t *g, oz2a_skip_pq *pq,
                           unsigned long long *a1max, int *gmax, int64_t kep, uint8_t *q)
{
#if __CUDA_ARCH__ >= 900
    using S = panel_shape<R, KC, T, ST>;
    extern __shared__ __align__(16) double s_slots[]; /* ST slots */
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
    const int64_t k0 = (int64_t)c * KC, panels = (v.rows + R - 1) / R;
    const int64_t step = gridDim.x / C; /* the clusters; every cluster has a panel */
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(s_slots), slot_bytes = 8u * S::SLOT;
    cl.barrier_arrive(); /* waited for before the first write to another CTA's memory */
#pragma unroll
    for (int i = 0; i < ST; i++)
        panel_issue<R, KC, T, ST>(v, blockIdx.x / C + step * i, panels, k0, base + slot_bytes * i);
    (void)base;
    int slot = 0;
    bool waited = false;
    /* s_amx, s_abad (written before a panel's first cluster barrier, read
     * before its second) and s_asum (written between them, read after the
     * second) are next written after the next panel's first: no CTA
     * overwrites what another still reads */
    for (int64_t p = blockIdx.x / C; p < panels; p += step) {
        double a[S::PER];
        if constexpr (ST == 0) {
            panel_fetch<R, KC, T, ST, false>(v, p, k0, 0, a);
        } else {
            oz_cp_async_wait<ST - 1>(); /* this panel's copies done */
#pragma unroll
            for (int u = 0; u < S::PER; u++)
                a[u] = s_slots[slot * S::SLOT + u * T + t];
            panel_issue<R, KC, T, ST>(v, p + step * ST, panels, k0, base + slot_bytes * (uint32_t)slot); /* refilled */
            slot = slot + 1 == ST ? 0 : slot + 1;
        }
        const int64_t r0 = p * R, r = r0 + lr;
        const bool row_in = r < v.rows;
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
        if (!waited) {
            cl.barrier_wait(); /* every CTA of the cluster has started: its shared memory can be written */
            waited = true;
        }
        if (wp < R) { /* warp wp: the CTA's max of row wp, lane h into CTA h's s_amx[c R + wp] */
            double m = lane < S::NW ? s_wmx[lane][wp] : 0.0;
            int b = lane < S::NW ? s_wbad[lane][wp] : 0;
            m = warp_max(m);
            b = __reduce_or_sync(0xffffffffu, b);
            if (lane < C) {
                *cl.map_shared_rank(&s_amx[c * R + wp], lane) = m;
                *cl.map_shared_rank(&s_abad[c * R + wp], lane) = b;
            }
        }
        cl.sync(); /* every CTA's partials are in every CTA's shared memory */
        if (wp < R) { /* the row's over the cluster, read by every thread of the row below */
            double m = lane < C ? s_amx[lane * R + wp] : 0.0;
            int b = lane < C ? s_abad[lane * R + wp] : 0;
            m = warp_max(m);
            b = __reduce_or_sync(0xffffffffu, b);
            if (lane == 0) {
                s_fmx[wp] = m;
                s_fbad[wp] = b;
            }
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
        if (wp < R) {
            const unsigned long long sum = warp_sum(lane < S::NW ? (unsigned long long)s_wsum[lane][wp] : 0ull);
            if (lane < C)
                *cl.map_shared_rank(&s_asum[c * R + wp], lane) = sum;
        }
        cl.sync(); /* this panel's last access to another CTA's memory */
        if (wp < R) {
            const unsigned long long m = warp_sum(lane < C ? s_asum[lane * R + wp] : 0ull);
            if (lane == 0)
                s_fsum[wp] = m;
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
            if (rr < v.rows && kk < kep)
                *(uint32_t *)(q + rr * kep + kk) = *(const uint32_t *)(s_q + row * S::QLD + 4 * word);
        }
        /* s_q, s_wmx and s_wsum are next written after barriers every thread passes after these reads */
    }
    if (!waited)
        cl.barrier_wait(); /* unreachable (every cluster has a panel): the arrival's wait */
    if constexpr (ST > 0)
        oz_cp_async_wait<0>(); /* no copy outlives the CTA */
#endif
}

/* The shapes (rows, columns a CTA, threads, slots, CTAs an SM the registers
 * allow): the library takes OZ2A_PANEL_SHAPE, tests and measurements any. */
#ifdef OZ_TEST_HOOKS /* the shapes measured (BENCHMARKS.md) */
#define OZ2A_PANEL_SHAPES(X)                                                                     \
    X(0, 16, 1024, 1024, 1, 1) X(1, 8, 1024, 512, 0, 2) X(2, 8, 1024, 512, 1, 2) X(3, 16, 1024, 1024, 0, 1) \
        X(4, 8, 1024, 512, 2, 1)
#define OZ2A_PANEL_NSHAPES 5
static_assert(OZ2A_PANEL_NSHAPES == OZ2A_TEST_PANEL_SHAPES, "the tests cycle every shape");
#else /* the library holds the one it runs */
#define OZ2A_PANEL_SHAPES(X) X(0, 16, 1024, 1024, 1, 1)
#define OZ2A_PANEL_NSHAPES 1
#endif
static_assert(OZ2A_PANEL_SHAPE < OZ2A_PANEL_NSHAPES, "the library's shape is built");

struct panel_launch {
    const void *fn;
    int rows, kc, threads;
    size_t smem;     /* the slots' dynamic shared memory */
    bool persistent; /* slots: a grid of the clusters that fit at once */
};
panel_launch panel_of(int shape)
{
    switch (shape) {
#define OZ2A_PANEL_CASE_(i, R, KC, T, ST, MINB)                                                                   \
    case i:                                                                                                  \
        return {(const void *)oz2a_panel_prep_kernel<R, KC, T, ST, MINB>, R, KC, T, (size_t)8 * ST * R * KC, ST > 0};
        OZ2A_PANEL_SHAPES(OZ2A_PANEL_CASE_)
#undef OZ2A_PANEL_CASE_
    }
    return {nullptr, 0, 0, 0, 0, false};
}

/* The cluster size for k columns (0: too many). */
int panel_cluster(const panel_launch &pl, int64_t k)
{
    const int64_t C = (k + pl.kc - 1) / pl.kc;
    return C <= OZ2A_PANEL_CLUSTER_MAX ? (int)C : 0;
}

/* How many clusters of C CTAs of the shape the current device runs at once
 * (0: none); the kernel's sm_90 code is required (the compute_80 PTX holds
 * an empty body). Errors of the questions themselves are that answer. */
int panel_clusters(const panel_launch &pl, int C)
{
    cudaFuncAttributes fa;
    if (pl.fn == nullptr || cudaFuncGetAttributes(&fa, pl.fn) != cudaSuccess || fa.binaryVersion < 90 ||
        cudaFuncSetAttribute(pl.fn, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess ||
        cudaFuncSetAttribute(pl.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)pl.smem) != cudaSuccess)
        return 0;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at;
    at.id = cudaLaunchAttributeClusterDimension;
    at.val.clusterDim.x = (unsigned)C;
    at.val.clusterDim.y = at.val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)C);
    cfg.blockDim = dim3(pl.threads);
    cfg.dynamicSmemBytes = pl.smem;
    cfg.attrs = &at;
    cfg.numAttrs = 1;
    int clusters = 0;
    return cudaOccupancyMaxActiveClusters(&clusters, pl.fn, &cfg) == cudaSuccess ? clusters : 0;
}

/* panel_clusters, asked once a device, shape and cluster size (a refused
 * question leaves no error behind). */
cudaError_t panel_device_clusters(int shape, int C, int *clusters)
{
    static volatile int known[64][OZ2A_PANEL_NSHAPES][OZ2A_PANEL_CLUSTER_MAX + 1];
    int dev = 0;
    const cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    if (dev < 64 && known[dev][shape][C]) {
        *clusters = known[dev][shape][C] - 1;
        return cudaSuccess;
    }
    const int n = panel_clusters(panel_of(shape), C);
    if (n == 0)
        (void)cudaGetLastError();
    if (dev < 64)
        known[dev][shape][C] = n + 1;
    *clusters = n;
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
    const int C = v.rs == 1 && v.k >= 1 && v.rows >= 1 ? panel_cluster(pl, v.k) : 0;
    if (C == 0 || (v.rows + pl.rows - 1) / pl.rows * C > INT32_MAX)
        return cudaSuccess;
    int clusters = 0;
    const cudaError_t e = panel_device_clusters(shape, C, &clusters);
    *serves = clusters > 0;
    return e;
}

cudaError_t oz2a_launch_panel_prep(const oz_view &v, const oz_operand_ws &w, unsigned long long *A1, int32_t *g,
                                   oz2a_skip_pq *pq, unsigned long long *a1max, int *gmax, int64_t kep, uint8_t *q,
                                   cudaStream_t s)
{
    const panel_launch pl = panel_of(g_panel_shape);
    const int C = panel_cluster(pl, v.k);
    const int64_t panels = (v.rows + pl.rows - 1) / pl.rows;
    int most = 0;
    const cudaError_t e = panel_device_clusters(g_panel_shape, C, &most);
    if (e != cudaSuccess)
        return e;
    if (most < 1)
        return cudaErrorInvalidConfiguration; /* unreachable: served only where clusters run */
    /* persistent: each cluster takes every clusters-th panel; else one a panel */
    const int64_t clusters = pl.persistent && most < panels ? most : panels;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at;
    at.id = cudaLaunchAttributeClusterDimension;
    at.val.clusterDim.x = (unsigned)C;
    at.val.clusterDim.y = at.val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)(clusters * C));
    cfg.blockDim = dim3(pl.threads);
    cfg.dynamicSmemBytes = pl.smem;
    cfg.stream = s;
    cfg.attrs = &at;
    cfg.numAttrs = 1;
    void *args[] = {(void *)&v, (void *)&w, &A1, &g, &pq, &a1max, &gmax, &kep, &q};
    return cudaLaunchKernelExC(&cfg, pl.fn, args);
}
