/* kernels/oz2_auto_estimate.cu: the automatic precision's plan on the GPU (docs/ozaki2-auto.md; complex products: docs/ozaki2-complex.md): norm sums, the estimate's int8 operands, the estimate product with each element's need, and the plan, all enqueued, nothing read back.
 *
 * The plan lands in device memory (oz2a_dev_plan, at the workspace's start)
 * for the kernels that follow on the stream; the same integers as the CPU
 * reference (crt/oz2_auto.h), so the same (N, w). The estimate product runs
 * on the sm_90a engine (oz_engine_estimate: the need taken in its epilogue)
 * where it serves, else as a plain dp4a loop, one thread an element.
 * Complex calls (CX) take the same steps on |Re| + |Im| (crt/oz2_complex.h's
 * oz2za_*): the norm sums and the estimate's operands from both parts of an
 * element (views in doubles, im after re), the element rule at 2k, and the
 * complex plan over the split moduli. */
#include <float.h>

#include "oz2_auto_estimate.h"
#include "operand_views.h"
#include "../crt/oz2_auto.h"
#include "../slicing/slicing.h"
#include "engine.h"
#include "oz2_auto_panel.h"
#include "oz2_auto_rows.cuh"
#include "cp_async.cuh"

/* Tests only: 1 forces the dp4a estimate. */
OZ_TEST_KNOB(int, g_force_est_portable, oz2a_force_portable, 0)
/* Tests only: 1 takes the separate passes where the one-pass row or panel kernel serves;
 * where the estimate product's sums are stored: 0 (the library's rule) and 2 whenever the scratch holds them, 1 never. */
OZ_TEST_KNOB(int, g_force_est_passes, oz2a_force_est_passes, 0)
OZ_TEST_KNOB(int, g_force_est_store, oz2a_force_est_store, 0)

namespace {

/* Workspace layout of one call (batch 1). */
struct est_layout {
    int64_t kep;        /* K_E padded to the engine's K (whole stages) */
    int64_t mpad, npad; /* rows padded to the engine's tiles */
    int64_t off_special, off_scale_a, off_scale_b, off_a1, off_b1, off_ga, off_gb, off_pa, off_pb, off_qa, off_qb, bytes;
};

est_layout est_layout_of(const oz_gemm_desc *d)
{
    est_layout L;
    const int64_t ke = d->k < OZ2A_KEST ? d->k : OZ2A_KEST;
    const int64_t ma = oz_round_up(d->m > 0 ? d->m : 1, 256), nb = oz_round_up(d->n > 0 ? d->n : 1, 256);
    L.kep = oz_round_up(ke > 0 ? ke : 1, OZ_PAD_K);
    L.mpad = oz_round_up(d->m > 0 ? d->m : 1, OZ_PAD_ROWS_A);
    L.npad = oz_round_up(d->n > 0 ? d->n : 1, OZ_PAD_ROWS_B);
    L.off_special = oz_align256((int64_t)sizeof(oz2a_dev_plan));
    L.off_scale_a = L.off_special + 256;
    L.off_scale_b = L.off_scale_a + oz_align256(4 * ma);
    L.off_a1 = L.off_scale_b + oz_align256(4 * nb);
    L.off_b1 = L.off_a1 + oz_align256(8 * ma);
    L.off_ga = L.off_b1 + oz_align256(8 * nb);
    L.off_gb = L.off_ga + oz_align256(4 * ma);
    L.off_pa = L.off_gb + oz_align256(4 * nb);
    L.off_pb = L.off_pa + oz_align256((int64_t)sizeof(oz2a_skip_pq) * ma);
    L.off_qa = L.off_pb + oz_align256((int64_t)sizeof(oz2a_skip_pq) * nb);
    L.off_qb = L.off_qa + oz_align256(L.mpad * L.kep);
    L.bytes = L.off_qb + oz_align256(L.npad * L.kep);
    return L;
}

/* An element's A1 term and estimate operand at x[at] (complex: re there,
 * im after it); real ones through the FP64 unit (oz2a_norm_term_fp,
 * oz2a_quant_fp; a special row's factors are never used). */
__device__ __forceinline__ oz2a_pow2 est_norm_f(int s) { return oz2a_norm_factor(s == OZ_SCALE_SPECIAL ? 0 : s); }
__device__ __forceinline__ oz2a_pow2 est_quant_f(int s, int g) { return oz2a_quant_factor(s == OZ_SCALE_SPECIAL ? 0 : s, g); }
template <bool CX>
__device__ __forceinline__ uint64_t est_norm_term(const double *x, int64_t at, int s)
{
    return CX ? oz2za_norm_term(x[at], x[at + 1], s) : oz2a_norm_term_fp(x[at], est_norm_f(s));
}
template <bool CX>
__device__ __forceinline__ uint32_t est_quant(const double *x, int64_t at, int s, int g)
{
    return CX ? oz2za_quant(x[at], x[at + 1], s, g) : oz2a_quant_fp(x[at], est_quant_f(s, g));
}

/* A1 of each row (rows of the view), exact: integer atomics in any order.
 * Block 32 x 8: RC (rows contiguous) lane = row, the warps over K; else
 * lane = k, each warp four rows, a warp sum per row, the loops unrolled so
 * that a thread's loads are in flight together (0.27 -> 0.17 ms at 8192^2 on
 * the H200; the same unrolling and a shared-memory sum in the RC branch
 * took it from 0.16 to 0.35 ms: not there). 32 rows x 256 k a block. */
template <bool RC, bool CX>
__global__ void oz2a_norm_kernel(oz_view v, const int32_t *scale, unsigned long long *A1)
{
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t r0 = (int64_t)blockIdx.x * 32, k0 = (int64_t)blockIdx.y * 256;
    const double *x = v.ptr(0);
    if (RC) {
        const int64_t r = r0 + tx;
        if (r >= v.rows)
            return;
        const int s = scale[r];
        if (s == OZ_SCALE_SPECIAL)
            return;
        unsigned long long sum = 0;
        for (int j = 0; j < 32; j++) {
            const int64_t kk = k0 + ty + 8 * j;
            if (kk < v.k)
                sum += est_norm_term<CX>(x, r * v.rs + kk * v.ks, s);
        }
        if (sum)
            atomicAdd(&A1[r], sum);
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int64_t r = r0 + ty + 8 * i;
            if (r >= v.rows) /* uniform across the warp */
                continue;
            const int s = scale[r];
            if (s == OZ_SCALE_SPECIAL)
                continue;
            unsigned long long sum = 0;
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const int64_t kk = k0 + tx + 32 * j;
                if (kk < v.k)
                    sum += est_norm_term<CX>(x, r * v.rs + kk * v.ks, s);
            }
            for (int o = 16; o; o >>= 1)
                sum += __shfl_down_sync(0xffffffffu, sum, o);
            if (tx == 0 && sum)
                atomicAdd(&A1[r], sum);
        }
    }
}

/* The estimate's operand q[r kep + kk] = min(floor(alpha 2^g), 127) for kk <
 * K_E, 0 in the padding and for special rows. A block a tile of 32 rows x
 * 128 k: read along whichever of r or k is contiguous (RC: rows), staged in
 * shared memory, written along k as 4-byte words. Block 32 x 8. */
template <bool RC, bool CX>
__global__ void oz2a_quant_kernel(oz_view v, const int32_t *scale, const unsigned long long *A1, const int32_t *g,
                                  int64_t ke, int64_t kep, uint8_t *q)
{
    __shared__ uint8_t t[32][128 + 4];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t r0 = (int64_t)blockIdx.x * 32, k0 = (int64_t)blockIdx.y * 128;
    const double *x = v.ptr(0);
#pragma unroll 8
    for (int e = 0; e < 16; e++) { /* 16 elements a thread */
        const int L = 8 * e + ty;
        const int rrow = RC ? tx : L % 32, kcol = RC ? L : 32 * (L / 32) + tx;
        const int64_t r = r0 + rrow, kk = k0 + kcol;
        uint32_t val = 0;
        if (r < v.rows && kk < ke) {
            const int s = scale[r];
            const unsigned long long a1 = A1[r];
            if (s != OZ_SCALE_SPECIAL && a1 != 0)
                val = est_quant<CX>(x, r * v.rs + kk * v.ks, s, g[r]);
        }
        t[rrow][kcol] = (uint8_t)val;
    }
    __syncthreads();
    const int64_t r = r0 + ty * 4; /* each warp: 4 rows, lane = a word of 4 k */
    for (int h = 0; h < 4; h++) {
        const int64_t rw = r + h, kk = k0 + 4 * tx;
        if (rw < v.rows && kk < kep) {
            const int lr = ty * 4 + h;
            *(uint32_t *)(q + rw * kep + kk) = (uint32_t)t[lr][4 * tx] | (uint32_t)t[lr][4 * tx + 1] << 8 |
                                               (uint32_t)t[lr][4 * tx + 2] << 16 | (uint32_t)t[lr][4 * tx + 3] << 24;
        }
    }
}

/* A real view with K contiguous (a row is k doubles in a row), k at most
 * OZ2A_PREP_KMAX: each row read from memory once, element t + T u of a row
 * thread t's (RPT a thread), in groups of Q rows that go through each step
 * together (their reductions share the block's two barriers). ST = 0 (the
 * library's): one block a group, loaded into registers. ST > 0 (measured
 * in the test build): a persistent grid, block b taking groups b, b +
 * gridDim.x, ..., cp.async copying a group into one of ST shared-memory
 * slots while the block works the groups before it (a slot refilled as
 * soon as its group is in registers; a thread reads back only what it
 * copied, so the data needs no barrier). FULL: T RPT = k = kep, every
 * element there (no predicates). From a row's elements: the scale exponent
 * and special flag (the scale kernel's values: the max by fmax, Inf and NaN
 * seen), the norm sum, g and (P, p), and the row's estimate operands (a
 * byte a lane: a warp's stores one 32-byte sector): the work of the scale,
 * norm, g and operand kernels in one pass (K_E = k here). Integer sums: any
 * order gives the same values. */
#define OZ2A_PREP_THREADS 1024 /* at most */
#define OZ2A_PREP_KMAX (16 * OZ2A_PREP_THREADS)
static_assert(OZ2A_PREP_KMAX <= OZ2A_KEST, "the row's K is all of K_E");

/* Group grp's copies (rows grp Q .. grp Q + Q - 1) into the slot at shared
 * byte address slot (zeros past k; none for rows past the view), committed
 * as one group of copies even when empty. */
template <int RPT, int Q>
__device__ __forceinline__ void row_prep_issue(const oz_view &v, int64_t grp, uint32_t slot)
{
    const int t = threadIdx.x, T = blockDim.x;
#pragma unroll
    for (int i = 0; i < Q; i++) {
        const int64_t r = grp * Q + i;
        if (r < v.rows) {
            const double *x = v.ptr(0) + r * v.rs;
#pragma unroll
            for (int u = 0; u < RPT; u++) {
                const int kk = t + T * u;
                const bool in = kk < v.k;
                oz_cp_async8(slot + 8u * (uint32_t)((i * RPT + u) * T + t), in ? x + kk : x, in);
            }
        }
    }
    oz_cp_async_commit();
}

template <int RPT, int TMAX, int Q, int ST, int MINB, bool FULL>
__global__ void __launch_bounds__(TMAX, MINB) oz2a_row_prep_kernel(oz_view v, oz_operand_ws ws, unsigned long long *A1,
                                                                int32_t *g, oz2a_skip_pq *pq,
                                                                unsigned long long *a1max, int *gmax, int64_t kep,
                                                                uint8_t *q)
{
    extern __shared__ __align__(16) double s_rows[]; /* ST slots of Q T RPT doubles */
    __shared__ double s_mx[Q][OZ2A_PREP_THREADS / 32];
    __shared__ int s_bad[Q][OZ2A_PREP_THREADS / 32];
    __shared__ unsigned long long s_sum[Q][OZ2A_PREP_THREADS / 32];
    const int t = threadIdx.x, T = blockDim.x, lane = t & 31, wp = t >> 5, nw = T >> 5;
    const int kn = (int)v.k, ke = (int)kep; /* at most OZ2A_PREP_KMAX, kep below 2^31 */
    const int64_t step = gridDim.x, groups = (v.rows + Q - 1) / Q;
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(s_rows), slot_bytes = 8u * (uint32_t)(Q * T * RPT);
#pragma unroll
    for (int i = 0; i < ST; i++)
        row_prep_issue<RPT, Q>(v, blockIdx.x + step * i, base + slot_bytes * i);
    (void)base;
    int slot = 0;
    for (int64_t grp = blockIdx.x; grp < groups; grp += step) {
        double a[Q][RPT];
        if constexpr (ST == 0) { /* no slots: the group loaded into registers now */
#pragma unroll
            for (int i = 0; i < Q; i++) {
                const int64_t r = grp * Q + i;
                const double *x = v.ptr(0) + (r < v.rows ? r : 0) * v.rs + t;
#pragma unroll
                for (int u = 0; u < RPT; u++, x += T) /* FULL: T RPT = k, every element there */
                    a[i][u] = r < v.rows && (FULL || t + T * u < kn) ? __ldg(x) : 0.0;
            }
        } else {
            oz_cp_async_wait<ST - 1>(); /* this group's copies done */
#pragma unroll
            for (int i = 0; i < Q; i++)
#pragma unroll
                for (int u = 0; u < RPT; u++)
                    a[i][u] = s_rows[slot * Q * T * RPT + (i * RPT + u) * T + t];
            row_prep_issue<RPT, Q>(v, grp + step * ST, base + slot_bytes * (uint32_t)slot); /* the slot read: refilled */
            slot = slot + 1 == ST ? 0 : slot + 1;
        }
        double mx[Q];
        int bad[Q];
#pragma unroll
        for (int i = 0; i < Q; i++) {
            mx[i] = 0.0;
            bad[i] = 0;
#pragma unroll
            for (int u = 0; u < RPT; u++) {
                bad[i] |= !(fabs(a[i][u]) <= DBL_MAX);
                mx[i] = fmax(mx[i], fabs(a[i][u]));
            }
            for (int o = 16; o; o >>= 1)
                mx[i] = fmax(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], o));
            bad[i] = __reduce_or_sync(0xffffffffu, bad[i]);
            if (lane == 0) {
                s_mx[i][wp] = mx[i];
                s_bad[i][wp] = bad[i];
            }
        }
        __syncthreads(); /* every warp combines the warps' maxima (read before the next barrier, rewritten after it) */
        int sc[Q];
        uint32_t part[Q]; /* RPT terms of at most 2^E: 32 bits */
        static_assert(RPT <= (1 << (31 - OZ2A_E)), "a thread's part of the norm sum fits 32 bits");
#pragma unroll
        for (int i = 0; i < Q; i++) {
            mx[i] = lane < nw ? s_mx[i][lane] : 0.0;
            bad[i] = lane < nw ? s_bad[i][lane] : 0;
            for (int o = 16; o; o >>= 1)
                mx[i] = fmax(mx[i], __shfl_xor_sync(0xffffffffu, mx[i], o));
            bad[i] = __reduce_or_sync(0xffffffffu, bad[i]);
            sc[i] = bad[i] ? OZ_SCALE_SPECIAL : oz_scale_exponent(mx[i]);
            part[i] = 0;
            if (!bad[i]) {
                const oz2a_pow2 f = est_norm_f(sc[i]);
#pragma unroll
                for (int u = 0; u < RPT; u++) /* 0 past k: its term is 0 */
                    part[i] += oz2a_norm_term_fp(a[i][u], f);
            }
            unsigned long long sum = part[i];
            for (int o = 16; o; o >>= 1)
                sum += __shfl_xor_sync(0xffffffffu, sum, o);
            if (lane == 0)
                s_sum[i][wp] = sum;
        }
        __syncthreads(); /* every warp combines the warps' sums (read before the next group's first barrier) */
#pragma unroll
        for (int i = 0; i < Q; i++) {
            const int64_t r = grp * Q + i;
            unsigned long long sum = lane < nw ? s_sum[i][lane] : 0ull;
            for (int o = 16; o; o >>= 1)
                sum += __shfl_xor_sync(0xffffffffu, sum, o);
            if (r >= v.rows)
                continue;
            const int gr = oz2a_row_scale(sum, v.k);
            if (t == 0)
                oz2a_store_row(ws, r, sc[i], bad[i], sum, gr, A1, g, pq, a1max, gmax);
            const oz2a_pow2 fq = est_quant_f(sc[i], gr);
            uint8_t *qr = q + r * kep + t;
            if (!bad[i] && sum != 0) { /* every byte below kep (T RPT >= kep; FULL: = kep = k) */
#pragma unroll
                for (int u = 0; u < RPT; u++, qr += T)
                    if (FULL || t + T * u < ke)
                        *qr = (uint8_t)(FULL || t + T * u < kn ? oz2a_quant_fp(a[i][u], fq) : 0u);
            } else {
#pragma unroll
                for (int u = 0; u < RPT; u++, qr += T)
                    if (FULL || t + T * u < ke)
                        *qr = 0;
            }
        }
    }
    if constexpr (ST > 0)
        oz_cp_async_wait<0>(); /* no copy outlives the block (those of rows past the view are empty) */
}

/* G_ij by dp4a over the operands' first kend bytes of K (a multiple of
 * 4), the element's need, the call's max into *need_out (k: the rule's,
 * 2k for complex calls); nothing unless *run is 1 where run is set. */
__global__ void oz2a_need_kernel(const uint8_t *qa, const uint8_t *qb, const unsigned long long *A1,
                                 const unsigned long long *B1, const int32_t *ga, const int32_t *gb, int64_t m,
                                 int64_t n, int64_t k, int64_t kep, int64_t kend,
                                 int target, int *need_out, const int *run)
{
    if (run && *run != 1)
        return;
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, j = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
    int w = OZ2A_W_NONE;
    if (i < m && j < n && A1[i] && B1[j]) {
        const int *a = (const int *)(qa + i * kep), *b = (const int *)(qb + j * kep);
        int G = 0;
        for (int64_t t = 0; t < kend / 4; t++)
            G = __dp4a(a[t], b[t], G); /* bytes in [0, 127]: signed = unsigned; K_E 127^2 < 2^31 */
        w = oz2a_elem_w(A1[i], B1[j], ga[i], gb[j], (uint32_t)G, k, target);
    }
    if (w != OZ2A_W_NONE)
        atomicMax(need_out, w);
}

/* The need from the stored sums (oz_engine_est_job::g): a block 256
 * threads over 2048 columns of rows OZ2A_NEED_G_ROWS apart, a thread every 256th (a warp's loads
 * of G and of the columns' (P, p) contiguous), the skip test at its running
 * need, which starts at the call's need so far (an element's exact w, or
 * none: the max stays the same in any order), the exact rule where the test
 * cannot rule an element out; the warp's max (nothing unless *run is 1
 * where run is set). */
#define OZ2A_NEED_G_THREADS 256
#define OZ2A_NEED_G_COLS 2048
#define OZ2A_NEED_G_ROWS 1024 /* rows of the grid (a block's rows that far apart): a pass that returns is one short launch */
__global__ void __launch_bounds__(OZ2A_NEED_G_THREADS)
    oz2a_need_g_kernel(const uint32_t *G, int64_t ldg, int64_t m, int64_t n, const oz2a_skip_pq *pa,
                       const oz2a_skip_pq *pb, const unsigned long long *A1, const unsigned long long *B1,
                       const int32_t *ga, const int32_t *gb, int64_t k, int target, int *need_out,
                       const int *run)
{
    if (run && *run != 1) /* the second part not summed: nothing to take */
        return;
    const int64_t j0 = (int64_t)blockIdx.x * OZ2A_NEED_G_COLS + threadIdx.x;
    /* the call's need so far, one load a warp */
    int need = 0;
    if ((threadIdx.x & 31) == 0)
        need = *(volatile int *)need_out;
    need = __shfl_sync(0xffffffffu, need, 0);
    const int need0 = need;
    for (int64_t i = blockIdx.y; i < m; i += gridDim.y) { /* rows gridDim.y apart */
        const double2 at = __ldg((const double2 *)(pa + i));
        const oz2a_skip_pq a = {at.x, at.y};
        if (a.P != 0.0) {
            const uint32_t *gr = G + i * ldg;
            constexpr int E = OZ2A_NEED_G_COLS / OZ2A_NEED_G_THREADS;
            uint32_t gv[E];
            double2 bt[E];
#pragma unroll
            for (int e = 0; e < E; e++) { /* every load first, in flight together (0 past n: no need) */
                const int64_t j = j0 + e * OZ2A_NEED_G_THREADS;
                gv[e] = j < n ? gr[j] : 0u;
                bt[e] = j < n ? __ldg((const double2 *)(pb + j)) : make_double2(0.0, 0.0);
            }
            oz2a_skip_row rs = oz2a_skip_row_of(a, oz2a_skip_c_of(k, target, need));
#pragma unroll
            for (int e = 0; e < E; e++) {
                const int64_t j = j0 + e * OZ2A_NEED_G_THREADS;
                const oz2a_skip_pq b = {bt[e].x, bt[e].y};
                if (b.P == 0.0 || oz2a_skip(&rs, &b, gv[e]))
                    continue;
                const int w = oz2a_elem_w(A1[i], B1[j], ga[i], gb[j], gv[e], k, target);
                if (w > need) {
                    need = w;
                    rs = oz2a_skip_row_of(a, oz2a_skip_c_of(k, target, need));
                }
            }
        }
    }
    const int wmax = __reduce_max_sync(0xffffffffu, need > need0 ? need : OZ2A_W_NONE);
    if ((threadIdx.x & 31) == 0 && wmax != OZ2A_W_NONE)
        atomicMax(need_out, wmax);
}

/* Each row's estimate scale g from its norm sum (one division a row), the
 * skip test's (P, p), the largest norm sum into *a1max and the largest g
 * of nonzero rows into *gmax (a warp's max, then one atomic: the plan reads
 * them). */
__global__ void oz2a_gscale_kernel(const unsigned long long *A1, int64_t rows, int64_t k, int32_t *g,
                                   oz2a_skip_pq *pq, unsigned long long *a1max, int *gmax)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long a = 0;
    int gr = 0; /* the largest g of the warp's nonzero rows */
    if (r < rows) {
        a = A1[r];
        g[r] = oz2a_row_scale(a, k);
        pq[r] = oz2a_skip_pq_of(a, g[r]);
        gr = a ? g[r] : 0;
    }
    for (int o = 16; o; o >>= 1) {
        const unsigned long long b = __shfl_xor_sync(0xffffffffu, a, o);
        a = b > a ? b : a;
        gr = max(gr, __shfl_xor_sync(0xffffffffu, gr, o));
    }
    if ((threadIdx.x & 31) == 0 && a) {
        atomicMax(a1max, a);
        atomicMax(gmax, gr);
    }
}

/* The ranges of both element types, made once on the host. */
struct est_ranges {
    oz2a_ranges real;
    oz2za_ranges cx;
};

/* The plan and its byte sums' starts (one warp: every lane makes the same
 * plan, lane q the starts of modulus q: each a loop of w + 1 steps, 35 us
 * in one thread for 20 moduli), from the need and the largest norm sums
 * (both made by the kernels before). decide 2: before the product, whether
 * it has two parts (oz2a_two_parts from plan->gmax: plan->first, else
 * plan->whole); decide 1: after the first part, whether
 * its plan is taken (oz2a_first_taken against nfix, the fixed width's
 * count) or the rest of K is summed (plan->second = 1); else the plan, from
 * the first part's need or, where the rest was summed, from w_need2 (left
 * in w_need). */
#define OZ2A_PLAN_THREADS 32
template <bool CX>
__global__ void __launch_bounds__(OZ2A_PLAN_THREADS)
    oz2a_plan_kernel(int64_t k, oz2a_dev_plan *plan, const __grid_constant__ est_ranges R, unsigned long long *counts,
                     int decide, int nfix, longlong2 k1_ke)
{
    const int q = threadIdx.x;
    const unsigned long long mx[2] = {plan->a1max, plan->b1max};
    if (decide == 2) {
        const int two = oz2a_two_parts(k1_ke.x, k1_ke.y, plan->gmax);
        if (q == 0) {
            plan->first = two;
            plan->whole = !two;
        }
        return;
    }
    if (decide) {
        const int n1 = CX ? oz2za_make_plan_r(plan->w_need, mx[0], mx[1], k, &R.cx).n_split
                          : oz2a_make_plan_r(plan->w_need, mx[0], mx[1], k, &R.real).n;
        if (q == 0)
            plan->second = plan->first && !oz2a_first_taken(n1, nfix);
        return;
    }
    const int need = plan->second ? plan->w_need2 : plan->w_need;
    int n, w;
    if constexpr (CX) {
        const oz2za_plan p = oz2za_make_plan_r(need, mx[0], mx[1], k, &R.cx);
        n = p.n_split;
        w = p.w;
        static_assert(OZ2Z_SPLIT_NMODULI <= OZ2A_PLAN_THREADS, "a lane a split modulus");
        if (q < OZ2Z_SPLIT_NMODULI) {
            const oz2z_split_modulus sm = oz2z_split_mod(q);
            plan->zbias[q] = q < n ? oz2_bias_bits(w, sm.p) : 0;
            plan->zbias[OZ2Z_SPLIT_NMODULI + q] = q < n ? oz2z_bias_r_bits(w, &sm) : 0;
        }
    } else {
        const oz2_plan p = oz2a_make_plan_r(need, mx[0], mx[1], k, &R.real);
        n = p.n;
        w = p.w;
        static_assert(OZ_ENGINE_NMODULI <= OZ2A_PLAN_THREADS, "a lane a modulus");
        if (q < OZ_ENGINE_NMODULI)
            plan->bias[q] = q < n ? oz2_bias_bits(w, oz2_modulus(q)) : 0;
    }
    static_assert(OZ2A_PLAN_COUNTS_CX > OZ2Z_SPLIT_NMODULI && OZ2A_PLAN_COUNTS_CX > OZ_ENGINE_NMODULI &&
                      OZ2A_PLAN_COUNTS >= 2 * OZ2A_PLAN_COUNTS_CX,
                  "a counter for every plan");
    __syncwarp(); /* every lane has read w_need */
    if (q != 0)
        return;
    plan->w_need = need;
    plan->n = n;
    plan->w = w;
    plan->planes = CX ? 2 * n : n;
    if (counts && n >= 0 && n < OZ2A_PLAN_COUNTS_CX)
        atomicAdd(&counts[(CX ? OZ2A_PLAN_COUNTS_CX : 0) + n], 1ull);
}

#define OZ2A_TRY(call)                     \
    do {                                   \
        cudaError_t e_ = (call);           \
        if (e_ != cudaSuccess)             \
            return e_;                     \
    } while (0)

/* The view's rows are contiguous: 1 double apart, or 2 (complex). */
static bool est_rows_contig(const oz_view &v, bool cx) { return v.rs == (cx ? 2 : 1); }

cudaError_t launch_norms(const oz_view &v, bool cx, const int32_t *scale, unsigned long long *A1, cudaStream_t s)
{
    const dim3 grid((unsigned)((v.rows + 31) / 32), (unsigned)((v.k + 255) / 256)), block(32, 8);
    const bool rc = est_rows_contig(v, cx);
    if (cx)
        rc ? oz2a_norm_kernel<true, true><<<grid, block, 0, s>>>(v, scale, A1)
           : oz2a_norm_kernel<false, true><<<grid, block, 0, s>>>(v, scale, A1);
    else
        rc ? oz2a_norm_kernel<true, false><<<grid, block, 0, s>>>(v, scale, A1)
           : oz2a_norm_kernel<false, false><<<grid, block, 0, s>>>(v, scale, A1);
    return cudaGetLastError();
}

/* Whether the view may take oz2a_row_prep_kernel: real, K contiguous, k at most OZ2A_PREP_KMAX. */
static bool est_row_prep(const oz_view &v, bool cx)
{
    return !cx && v.ks == 1 && v.k <= OZ2A_PREP_KMAX && v.rows <= INT32_MAX && !g_force_est_passes;
}

/* The row kernel's variants: RPT doubles a thread, at most TMAX threads,
 * groups of Q rows, ST shared-memory slots of a group (0: none), registers
 * for MINB blocks an SM; the first from g_row_variant whose RPT TMAX holds
 * kep and whose slots the device holds (the last holds any row the kernel
 * takes). Tests only: another first variant. */
#ifdef OZ_TEST_HOOKS /* the variants measured (BENCHMARKS.md) */
#define OZ2A_ROW_VARIANTS(X)                                                                         \
    X(0, 16, 1024, 1, 0, 1) X(1, 8, 1024, 1, 0, 2) X(2, 8, 1024, 2, 1, 1) X(3, 16, 512, 1, 1, 3) \
        X(4, 16, 1024, 1, 1, 1)
#define OZ2A_ROW_NVARIANTS 5
static_assert(OZ2A_ROW_NVARIANTS == OZ2A_TEST_ROW_VARIANTS, "the tests cycle every variant");
#else /* the library holds the ones it runs */
#define OZ2A_ROW_VARIANTS(X) X(0, 16, 1024, 1, 0, 1)
#define OZ2A_ROW_NVARIANTS 1
#endif
OZ_TEST_KNOB(int, g_row_variant, oz2a_force_row_variant, 0)

/* Blocks an SM of variant i (kernel fn, ST slots of RPT TMAX doubles) at T
 * threads on the current device, 0 where it cannot run there; asked once a
 * device, variant, FULL and T (a refused question leaves no error behind). */
cudaError_t row_prep_blocks(int i, bool full, const void *fn, int slots_doubles_max, int T, int slots_doubles,
                            int *blocks, int *sms)
{
    static volatile int known[64][OZ2A_ROW_NVARIANTS][2][OZ2A_PREP_THREADS / 32 + 1], sm_count[64];
    int dev = 0;
    OZ2A_TRY(cudaGetDevice(&dev));
    if (dev < 64 && known[dev][i][full][T / 32]) {
        *blocks = known[dev][i][full][T / 32] - 1;
        *sms = sm_count[dev];
        return cudaSuccess;
    }
    OZ2A_TRY(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev));
    int nb = 0;
    if (cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 8 * slots_doubles_max) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, fn, T, (size_t)8 * slots_doubles) != cudaSuccess) {
        nb = 0;
        (void)cudaGetLastError();
    }
    if (dev < 64) {
        sm_count[dev] = *sms;
        known[dev][i][full][T / 32] = nb + 1;
    }
    *blocks = nb;
    return cudaSuccess;
}

/* Launches the row kernel for the view (*served false: no variant runs on this device, nothing launched). */
cudaError_t launch_row_prep(const oz_view &v, const oz_operand_ws &w, unsigned long long *A1, int32_t *g,
                            oz2a_skip_pq *pq, unsigned long long *a1max, int *gmax, int64_t kep, uint8_t *q,
                            cudaStream_t s, bool *served)
{
    *served = false;
    for (int i = g_row_variant < 0 || g_row_variant >= OZ2A_ROW_NVARIANTS ? 0 : g_row_variant; i < OZ2A_ROW_NVARIANTS;
         i++) {
        switch (i) {
#define OZ2A_ROW_CASE_(idx, RPT, TMAX, Q, ST, MINB)                                                             \
    case idx:                                                                                                  \
        if (kep <= (int64_t)RPT * TMAX) { /* T threads, a multiple of 32, enough for kep at RPT a thread */     \
            const int64_t per = (kep + RPT - 1) / RPT;                                                         \
            const int T = (int)(per < 32 ? 32 : oz_round_up(per, 32));                                         \
            const bool full = (int64_t)T * RPT == v.k && kep == v.k; /* every thread's elements all there */   \
            const void *fn = full ? (const void *)oz2a_row_prep_kernel<RPT, TMAX, Q, ST, MINB, true>           \
                                  : (const void *)oz2a_row_prep_kernel<RPT, TMAX, Q, ST, MINB, false>;         \
            int nb = 0, sms = 0;                                                                               \
            OZ2A_TRY(row_prep_blocks(idx, full, fn, ST * Q * RPT * TMAX, T, ST * Q * RPT * T, &nb, &sms));     \
            if (nb > 0) {                                                                                      \
                const int64_t most = ST > 0 ? (int64_t)nb * sms : INT32_MAX, groups = (v.rows + Q - 1) / Q;   \
                const unsigned grid = (unsigned)(groups < most ? groups : most);                               \
                const size_t smem = (size_t)8 * ST * Q * RPT * T;                                              \
                if (full)                                                                                      \
                    oz2a_row_prep_kernel<RPT, TMAX, Q, ST, MINB, true><<<grid, T, smem, s>>>(                  \
                        v, w, A1, g, pq, a1max, gmax, kep, q);                                                 \
                else                                                                                           \
                    oz2a_row_prep_kernel<RPT, TMAX, Q, ST, MINB, false><<<grid, T, smem, s>>>(                 \
                        v, w, A1, g, pq, a1max, gmax, kep, q);                                                 \
                *served = true;                                                                                \
                return cudaGetLastError();                                                                     \
            }                                                                                                  \
        }                                                                                                      \
        break;
            OZ2A_ROW_VARIANTS(OZ2A_ROW_CASE_)
#undef OZ2A_ROW_CASE_
        }
    }
    return cudaSuccess;
}

extern "C" size_t oz2a_estimate_workspace(const oz_gemm_desc *d) { return (size_t)est_layout_of(d).bytes; }

#ifdef OZ_TEST_HOOKS
extern "C" void oz2a_estimate_arrays(const oz_gemm_desc *d, const void *workspace, oz2a_est_arrays *out)
{
    const est_layout L = est_layout_of(d);
    const char *ws = (const char *)workspace;
    out->norm[0] = ws + L.off_a1, out->norm[1] = ws + L.off_b1;
    out->g[0] = ws + L.off_ga, out->g[1] = ws + L.off_gb;
    out->q[0] = ws + L.off_qa, out->q[1] = ws + L.off_qb;
    out->kep = L.kep;
}
#endif

static_assert(256 % OZ_PAD_ROWS_A == 0 && 256 % OZ_PAD_ROWS_B == 0,
              "the estimate's scales cover the path's padded rows (oz2a_estimate_scales)");
extern "C" void oz2a_estimate_scales(const oz_gemm_desc *d, const void *workspace, const int32_t **scale_a,
                                     const int32_t **scale_b, const int32_t **special)
{
    const est_layout L = est_layout_of(d);
    const char *ws = (const char *)workspace;
    *scale_a = (const int32_t *)(ws + L.off_scale_a);
    *scale_b = (const int32_t *)(ws + L.off_scale_b);
    *special = (const int32_t *)(ws + L.off_special);
}

cudaError_t launch_quant(const oz_view &v, bool cx, const int32_t *scale, const unsigned long long *A1, int32_t *g,
                         oz2a_skip_pq *pq, unsigned long long *a1max, int *gmax, int64_t ke, int64_t kep, uint8_t *q,
                         cudaStream_t s)
{
    oz2a_gscale_kernel<<<(unsigned)((v.rows + 255) / 256), 256, 0, s>>>(A1, v.rows, v.k, g, pq, a1max, gmax);
    const dim3 grid((unsigned)((v.rows + 31) / 32), (unsigned)((kep + 127) / 128)), block(32, 8);
    if (grid.y > 65535)
        return cudaErrorInvalidValue;
    const bool rc = est_rows_contig(v, cx);
    if (cx)
        rc ? oz2a_quant_kernel<true, true><<<grid, block, 0, s>>>(v, scale, A1, g, ke, kep, q)
           : oz2a_quant_kernel<false, true><<<grid, block, 0, s>>>(v, scale, A1, g, ke, kep, q);
    else
        rc ? oz2a_quant_kernel<true, false><<<grid, block, 0, s>>>(v, scale, A1, g, ke, kep, q)
           : oz2a_quant_kernel<false, false><<<grid, block, 0, s>>>(v, scale, A1, g, ke, kep, q);
    return cudaGetLastError();
}

/* Whether the sm_90a engine serves the current device (asked once a device). */
cudaError_t est_use_engine(bool *use)
{
    static volatile int known[64], usable[64];
    int dev = 0;
    OZ2A_TRY(cudaGetDevice(&dev));
    if (dev < 64 && known[dev]) {
        *use = usable[dev] != 0;
    } else {
        *use = oz_engine_usable(dev);
        if (dev < 64) {
            usable[dev] = *use;
            known[dev] = 1;
        }
    }
    if (g_force_est_portable)
        *use = false;
    return cudaSuccess;
}

} // namespace

extern "C" int oz2a_estimate(const oz_gemm_desc *d, int target, void *workspace, size_t bytes, void *scratch,
                             size_t scratch_bytes, void *stream)
{
    const est_layout L = est_layout_of(d);
    if (d->batch != 1 || d->m < 1 || d->n < 1 || d->k < 1 || target < OZ2A_B_MIN || target > OZ2A_B_MAX ||
        workspace == nullptr || bytes < (size_t)L.bytes || d->m > 65535 || d->n > 65535) /* grid rows: the test build's sizes */
        return cudaErrorInvalidValue;
    cudaStream_t s = (cudaStream_t)stream;
    char *ws = (char *)workspace;
    oz2a_dev_plan *plan = (oz2a_dev_plan *)ws;
    const bool cx = d->elem == OZ_ELEM_COMPLEX;
    const oz_view va = cx ? oz2z_view_a(d) : oz_view_a(d), vb = cx ? oz2z_view_b(d) : oz_view_b(d);
    const int64_t ke = d->k < OZ2A_KEST ? d->k : OZ2A_KEST;
    const int64_t k_rule = cx ? 2 * d->k : d->k; /* the element rule's k (oz2za_elem_w) */
    /* w_need starts at OZ2A_W_NONE (-1: every byte 0xff); the rest at 0 */
    OZ2A_TRY(cudaMemsetAsync(ws, 0, (size_t)L.off_qa, s));
    OZ2A_TRY(cudaMemsetAsync(&plan->w_need, 0xff, sizeof plan->w_need, s));
    OZ2A_TRY(cudaMemsetAsync(&plan->w_need2, 0xff, sizeof plan->w_need2, s));
    const oz_operand_ws wa = {ws, 0, 0, L.off_scale_a, L.off_special, oz_round_up(d->m, 256), 0, 0};
    const oz_operand_ws wb = {ws, 0, 0, L.off_scale_b, L.off_special + 4, oz_round_up(d->n, 256), 0, 0};
    unsigned long long *A1 = (unsigned long long *)(ws + L.off_a1), *B1 = (unsigned long long *)(ws + L.off_b1);
    const int32_t *sa = (const int32_t *)(ws + L.off_scale_a), *sb = (const int32_t *)(ws + L.off_scale_b);
    uint8_t *qa = (uint8_t *)(ws + L.off_qa), *qb = (uint8_t *)(ws + L.off_qb);
    int32_t *ga = (int32_t *)(ws + L.off_ga), *gb = (int32_t *)(ws + L.off_gb);
    oz2a_skip_pq *pa = (oz2a_skip_pq *)(ws + L.off_pa), *pb = (oz2a_skip_pq *)(ws + L.off_pb);
    bool engine = false;
    OZ2A_TRY(est_use_engine(&engine));
    if (engine) { /* the padding rows of the engine's tiles: zero (every row of the views gets all kep bytes below) */
        OZ2A_TRY(cudaMemsetAsync(qa + d->m * L.kep, 0, (size_t)((L.mpad - d->m) * L.kep), s));
        OZ2A_TRY(cudaMemsetAsync(qb + d->n * L.kep, 0, (size_t)((L.npad - d->n) * L.kep), s));
    }
    /* each operand: one pass where K is contiguous (real), else the scales
     * (complex: the operand as doubles, one scale a complex row: the path's
     * own scales), the norm sums and the operands */
    const oz_view *views[2] = {&va, &vb};
    const oz_operand_ws *wss[2] = {&wa, &wb};
    unsigned long long *norms[2] = {A1, B1};
    const int32_t *scales[2] = {sa, sb};
    int32_t *gs[2] = {ga, gb};
    oz2a_skip_pq *pqs[2] = {pa, pb};
    uint8_t *qs[2] = {qa, qb};
    unsigned long long *maxes[2] = {&plan->a1max, &plan->b1max};
    for (int o = 0; o < 2; o++) {
        const oz_view &v = *views[o];
        if (est_row_prep(v, cx)) {
            bool served = false;
            OZ2A_TRY(launch_row_prep(v, *wss[o], norms[o], gs[o], pqs[o], maxes[o], &plan->gmax, L.kep, qs[o], s,
                                     &served));
            if (served)
                continue;
        }
        bool panel = false; /* rows contiguous: the cluster kernel where the engine runs (its padding zeroed above) */
        if (engine && !cx && !g_force_est_passes)
            OZ2A_TRY(oz2a_panel_serves(v, &panel));
        if (panel) {
            OZ2A_TRY(oz2a_launch_panel_prep(v, *wss[o], norms[o], gs[o], pqs[o], maxes[o], &plan->gmax, L.kep, qs[o],
                                            s));
            continue;
        }
        OZ2A_TRY(oz_launch_operand_scale(cx ? oz2z_real_view(v) : v, *wss[o], 1, s, cx && v.rs == 2));
        OZ2A_TRY(launch_norms(v, cx, scales[o], norms[o], s));
        OZ2A_TRY(launch_quant(v, cx, scales[o], norms[o], gs[o], pqs[o], maxes[o], &plan->gmax, ke, L.kep, qs[o], s));
    }
    /* the estimate in two parts (docs/ozaki2-auto.md step 2) where every
     * nonzero row's g and column's h is 7: K_1 first, then, where the plan
     * kernel says so (plan->second), the rest; else all of K_E at once.
     * Each launch reads its flag (plan->first, whole, second) first. */
    static_assert(OZ2A_K1_ROUND % OZ_PAD_K == 0, "K_1 is a multiple of the planes' K padding");
    const int nfix = cx ? oz2z_make_plan(d->k, target).n_split : oz2_make_plan(d->k, target).n;
    static const est_ranges R = {oz2a_make_ranges(), oz2za_make_ranges()}; /* host, once */
    const int64_t k1 = cx ? oz2a_k_first(ke, 0) : oz2a_k_first_real(ke, d->k, target, nfix, &R.real);
    const bool two = k1 < ke; /* two parts may be taken: decided on the device */
    auto plan_kernel = [&](int decide) {
        const longlong2 k1_ke = make_longlong2(k1, ke);
        if (cx)
            oz2a_plan_kernel<true><<<1, OZ2A_PLAN_THREADS, 0, s>>>(d->k, plan, R, d->plan_counts, decide, nfix, k1_ke);
        else
            oz2a_plan_kernel<false><<<1, OZ2A_PLAN_THREADS, 0, s>>>(d->k, plan, R, d->plan_counts, decide, nfix, k1_ke);
        return cudaGetLastError();
    };
    if (two)
        OZ2A_TRY(plan_kernel(2));
    const int *run_first = two ? &plan->first : nullptr, *run_whole = two ? &plan->whole : nullptr;
    if (engine) {
        const oz_operand_ws ea = {ws, 0, L.off_qa, 0, 0, L.mpad, L.kep, L.mpad};
        const oz_operand_ws eb = {ws, 0, L.off_qb, 0, 0, L.npad, L.kep, L.npad};
        /* the sums stored wherever the scratch holds them (the need in the
         * product's epilogue measured slower at every size: 0.175 against
         * 0.086 ms at 1024^3, the same where the 192-row tile is full) */
        const int64_t ldg = L.npad, gbytes = d->m * ldg * 4;
        const bool store = g_force_est_store != 1;
        uint32_t *G = scratch && (int64_t)scratch_bytes >= gbytes && store ? (uint32_t *)scratch : nullptr;
        const int64_t rows_at_once = d->m < OZ2A_NEED_G_ROWS ? d->m : OZ2A_NEED_G_ROWS;
        const dim3 grid((unsigned)((d->n + OZ2A_NEED_G_COLS - 1) / OZ2A_NEED_G_COLS), (unsigned)rows_at_once);
        auto need_pass = [&](int *out, const int *run) {
            oz2a_need_g_kernel<<<grid, OZ2A_NEED_G_THREADS, 0, s>>>(G, ldg, d->m, d->n, pa, pb, A1, B1, ga, gb,
                                                                     k_rule, target, out, run);
            return cudaGetLastError();
        };
        /* all of K_E, or the first part and all of K_E, each under its flag (one of them runs) */
        oz_engine_est_job job = {ea, eb, d->m, d->n, k_rule, A1, B1, ga, gb, pa, pb, G, ldg, target,
                                 &plan->w_need, nullptr, 0, 0, false, run_whole};
        OZ2A_TRY(oz_engine_estimate(job, s));
        if (two) {
            job.k_len = k1;
            job.run = run_first;
            OZ2A_TRY(oz_engine_estimate(job, s));
        }
        if (G)
            OZ2A_TRY(need_pass(&plan->w_need, nullptr));
        if (two) { /* the rest onto the stored sums, or all of K_E again with the need in the epilogue */
            OZ2A_TRY(plan_kernel(1));
            job.need = &plan->w_need2;
            job.k_begin = G ? k1 : 0;
            job.k_len = 0;
            job.accumulate = G != nullptr;
            job.run = &plan->second;
            OZ2A_TRY(oz_engine_estimate(job, s));
            if (G)
                OZ2A_TRY(need_pass(&plan->w_need2, &plan->second));
        }
    } else {
        const dim3 grid((unsigned)((d->m + 15) / 16), (unsigned)((d->n + 15) / 16)), block(16, 16);
        oz2a_need_kernel<<<grid, block, 0, s>>>(qa, qb, A1, B1, ga, gb, d->m, d->n, k_rule, L.kep, L.kep, target,
                                                &plan->w_need, run_whole);
        OZ2A_TRY(cudaGetLastError());
        if (two) {
            oz2a_need_kernel<<<grid, block, 0, s>>>(qa, qb, A1, B1, ga, gb, d->m, d->n, k_rule, L.kep, k1, target,
                                                    &plan->w_need, run_first);
            OZ2A_TRY(cudaGetLastError());
            OZ2A_TRY(plan_kernel(1));
            oz2a_need_kernel<<<grid, block, 0, s>>>(qa, qb, A1, B1, ga, gb, d->m, d->n, k_rule, L.kep, L.kep, target,
                                                    &plan->w_need2, &plan->second);
            OZ2A_TRY(cudaGetLastError());
        }
    }
    return plan_kernel(0);
}
