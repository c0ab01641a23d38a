/* kernels/p22_fused.cuh: the fused Phase 22 kernel template of the mma.sync path (sm80_; GPUs other than sm_90a Hopper).
 *
 * Everything but the tensor-core step is here: the (chunk, pass, prime)
 * schedule, the cp.async operand pipeline, Barrett mod p and the CRT sums at
 * the end of each prime, the fold and the double accumulation at the end of
 * each pass, and the epilogue. An Mma policy supplies the K-stage step on its
 * accumulators and the place (row, column) of each accumulator element. */
#ifndef OZCRT_KERNELS_P22_FUSED_CUH
#define OZCRT_KERNELS_P22_FUSED_CUH
#include "../crt/crt.h"
#include "cp_async.cuh"
#include "epilogue.cuh"
#include "p22_params.h"

/* The moduli and the pass plan, expanded from their one definition. */
#define OZ_P_(i, p, f, mu) (p),
#define OZ_MU_(i, p, f, mu) (mu),
#define OZ_F_(i, p, f, mu) (f),
static __constant__ int32_t c_prime[OZ_P22_NPRIMES] = {OZ_P22_MODULI(OZ_P_)};
static __constant__ uint32_t c_mu[OZ_P22_NPRIMES] = {OZ_P22_MODULI(OZ_MU_)};
static __constant__ uint64_t c_f[OZ_P22_NPRIMES] = {OZ_P22_MODULI(OZ_F_)};
#undef OZ_P_
#undef OZ_MU_
#undef OZ_F_
#define OZ_SA_(q, a, b, sh) (a),
#define OZ_SB_(q, a, b, sh) (b),
#define OZ_SH_(q, a, b, sh) (sh),
static __constant__ int c_pass_sa[OZ_P22_NPASSES] = {OZ_P22_PASSES(OZ_SA_)};
static __constant__ int c_pass_sb[OZ_P22_NPASSES] = {OZ_P22_PASSES(OZ_SB_)};
static __constant__ int c_pass_shift[OZ_P22_NPASSES] = {OZ_P22_PASSES(OZ_SH_)};
#undef OZ_SA_
#undef OZ_SB_
#undef OZ_SH_

/* The (chunk, pass, prime) schedule walked group by group: a group is one
 * prime of one pass over one K chunk, `steps` K stages long. */
struct oz_group {
    int64_t c, steps;
    int q, p;
};

template <int K_STAGE>
struct oz_schedule {
    int q0, q1, p0, p1;
    int64_t kpad;
    __device__ int64_t steps_of(int64_t c) const
    {
        int64_t left = kpad - c * OZ_P22_KCHUNK;
        return (left < OZ_P22_KCHUNK ? left : OZ_P22_KCHUNK) / K_STAGE;
    }
    __device__ oz_group first() const { return oz_group{0, steps_of(0), q0, p0}; }
    __device__ void next(oz_group &u) const
    {
        if (++u.p < p1)
            return;
        u.p = p0;
        if (++u.q < q1)
            return;
        u.q = q0;
        ++u.c;
        u.steps = steps_of(u.c);
    }
};

/* Keeps the compiler from batching the per-element work of the reductions
 * (which would hold every element's temporaries at once and spill). */
__device__ __forceinline__ void oz_live_range_fence() { asm volatile("" ::: "memory"); }

/* Elements per reduction batch between two fences. */
#define OZ_REDUCE_BATCH 16

/* One CTA: a Cfg::CTA_M x Cfg::CTA_N tile of C of one batch item.
 * Mainloop: a Cfg::STAGES-deep cp.async pipeline of K stages over the whole
 * (chunk, pass, prime) schedule, one barrier per stage; per stage the Mma
 * policy runs the tensor cores over the stage. At the end of a prime's K
 * range: Barrett mod p and the CRT sum (per-thread slots in shared memory or
 * the workspace). At the end of a pass: the CRT fold and the double
 * accumulation (per-thread slots in the workspace, coalesced). Then the
 * epilogue. Shared memory rows are K_STAGE bytes with 16-byte pieces
 * swizzled by Cfg::swz; the base is aligned to 1024 bytes (the wgmma
 * 128-byte swizzle atom). */
template <class Cfg, class Mma, int OUT>
__global__ void __launch_bounds__(Cfg::THREADS, 1) oz_p22_fused_kernel(oz_gemm_params P)
{
    extern __shared__ __align__(1024) int8_t smem_raw[];
    /* aligned by an offset from smem_raw, not through an integer: so the
     * compiler still knows the pointer is shared memory (LDS/STS for the CRT
     * sums, not generic LD/ST: the "54 -> 59 ms" of the mma.sync kernel,
     * BENCHMARKS.md session 6) */
    int8_t *smem = smem_raw + ((1024u - ((uint32_t)__cvta_generic_to_shared(smem_raw) & 1023u)) & 1023u);
    constexpr int ELEMS = Mma::ELEMS;
    static_assert(ELEMS * Cfg::THREADS == Cfg::CTA_M * Cfg::CTA_N, "every element of the tile once");
    const int64_t b = blockIdx.y;
    const int tid = threadIdx.x;
    /* [ELEMS][THREADS] of this thread's CRT sums, in shared memory or in the workspace */
    uint64_t *s_crt = (Cfg::CRT_IN_SMEM ? (uint64_t *)(smem + Cfg::SMEM_A + Cfg::SMEM_B)
                                        : (uint64_t *)(P.a.ws + b * P.a.slot_bytes + P.L.offCrt) +
                                              blockIdx.x * (int64_t)(Cfg::CTA_M * Cfg::CTA_N)) +
                      tid;
    const int64_t tm = blockIdx.x % P.tiles_m, tn = blockIdx.x / P.tiles_m;
    const int64_t m0 = tm * Cfg::CTA_M, n0 = tn * Cfg::CTA_N;
    const int64_t kpad = P.L.Kpad;
    double *g_acc = (double *)(P.a.ws + b * P.a.slot_bytes + P.L.offDacc) +
                    blockIdx.x * (int64_t)(Cfg::CTA_M * Cfg::CTA_N) + tid; /* [ELEMS][THREADS] of this tile */
#define OZ_SLOT_(idx) ((idx) * Cfg::THREADS)

    constexpr bool DEBUG = OUT == OZ_OUT_ACC || OUT == OZ_OUT_MOD || OUT == OZ_OUT_CRT;
    constexpr bool PRODUCT = !DEBUG;
    oz_schedule<Cfg::K_STAGE> sched;
    sched.kpad = kpad;
    int64_t total;
    if (PRODUCT) {
        sched.q0 = 0, sched.q1 = OZ_P22_NPASSES, sched.p0 = 0, sched.p1 = OZ_P22_NPRIMES;
        total = kpad / Cfg::K_STAGE * OZ_P22_NPASSES * OZ_P22_NPRIMES;
    } else {
        sched.q0 = P.dbg_pass, sched.q1 = P.dbg_pass + 1;
        sched.p0 = OUT == OZ_OUT_CRT ? 0 : P.dbg_prime;
        sched.p1 = OUT == OZ_OUT_CRT ? OZ_P22_NPRIMES : P.dbg_prime + 1;
        total = (kpad < OZ_P22_KCHUNK ? kpad : OZ_P22_KCHUNK) / Cfg::K_STAGE * (sched.p1 - sched.p0);
    }

    /* Loader: thread copies 16-byte pieces (row, piece) = (c / CHUNKS, c % CHUNKS),
     * c = tid + i * THREADS, to the swizzled place of the piece. Its global
     * pointers advance by a stage and are recomputed only when a group
     * (prime, pass, chunk) starts. */
    const uint32_t sa_base = (uint32_t)__cvta_generic_to_shared(smem);
    const uint32_t sb_base = sa_base + Cfg::SMEM_A;
    const int ld_row = tid / Cfg::CHUNKS, ld_piece = tid % Cfg::CHUNKS, ld_col = ld_piece * 16;
    constexpr int ROWS_PER_PIECE = Cfg::THREADS / Cfg::CHUNKS; /* a multiple of the swizzle period */
    static_assert(ROWS_PER_PIECE % (Cfg::ROWS_PER_LINE * Cfg::CHUNKS) == 0, "one swizzle per thread");
    const uint32_t st_off = ld_row * Cfg::K_STAGE + ((ld_piece ^ Cfg::swz(ld_row)) * 16);
    const uint32_t da0 = sa_base + st_off;
    const uint32_t db0 = sb_base + st_off;
    const int64_t piece_stride = ROWS_PER_PIECE * kpad;
    oz_group lg = sched.first();
    int64_t ld_left = 0;
    const int8_t *ga = nullptr, *gb = nullptr;
    auto ld_group_start = [&]() {
        const int64_t kbyte = lg.c * OZ_P22_KCHUNK + ld_col;
        ga = P.a.plane(b, lg.p * OZ_NSLICES + c_pass_sa[lg.q]) + (m0 + ld_row) * kpad + kbyte;
        gb = P.b.plane(b, lg.p * OZ_NSLICES + c_pass_sb[lg.q]) + (n0 + ld_row) * kpad + kbyte;
        ld_left = lg.steps;
    };
    auto load_stage = [&](int st) {
        const uint32_t da = da0 + st * (Cfg::CTA_M * Cfg::K_STAGE);
        const uint32_t db = db0 + st * (Cfg::CTA_N * Cfg::K_STAGE);
#pragma unroll
        for (int i = 0; i < Cfg::A_CHUNKS; i++)
            oz_cp_async16(da + i * ROWS_PER_PIECE * Cfg::K_STAGE, ga + i * piece_stride);
#pragma unroll
        for (int i = 0; i < Cfg::B_CHUNKS; i++)
            oz_cp_async16(db + i * ROWS_PER_PIECE * Cfg::K_STAGE, gb + i * piece_stride);
        ga += Cfg::K_STAGE;
        gb += Cfg::K_STAGE;
        if (--ld_left == 0) {
            sched.next(lg);
            ld_group_start();
        }
    };
    if (total > 0)
        ld_group_start();

    Mma mma(tid);
    int32_t acc[ELEMS];
#pragma unroll
    for (int idx = 0; idx < ELEMS; idx++)
        acc[idx] = 0;
    auto dbg_store = [&](int idx, int64_t v) {
        int64_t i = m0 + mma.row(idx), j = n0 + mma.col(idx);
        if (i < P.L.m && j < P.L.n)
            P.dbg_out[i + j * P.L.m] = v;
    };

    oz_group cg = sched.first(); /* the group being computed */
    int64_t cu_left = cg.steps;
    int st_load = 0, st_comp = 0;
#pragma unroll
    for (int i = 0; i < Cfg::STAGES - 1; i++) {
        if (i < total) {
            load_stage(st_load);
            st_load = st_load + 1 == Cfg::STAGES ? 0 : st_load + 1;
        }
        oz_cp_async_commit();
    }
    for (int64_t it = 0; it < total; ++it) {
        oz_cp_async_wait<Cfg::STAGES - 2>();
        Mma::stage_landed(); /* e.g. the proxy fence before the async proxy reads it */
        __syncthreads();     /* stage it has landed; stage it-1 is consumed by every warp */
        if (it + Cfg::STAGES - 1 < total) {
            load_stage(st_load);
            st_load = st_load + 1 == Cfg::STAGES ? 0 : st_load + 1;
        }
        oz_cp_async_commit();

        mma.stage(acc, sa_base + st_comp * (Cfg::CTA_M * Cfg::K_STAGE), sb_base + st_comp * (Cfg::CTA_N * Cfg::K_STAGE));
        st_comp = st_comp + 1 == Cfg::STAGES ? 0 : st_comp + 1;

        if (--cu_left == 0) { /* this prime's K range is done */
            const int32_t p = c_prime[cg.p];
            const uint32_t mu = c_mu[cg.p];
            const uint64_t f = c_f[cg.p];
            const bool first_prime = cg.p == sched.p0; /* sum = 0 + r f: store */
#pragma unroll
            for (int b0 = 0; b0 < ELEMS; b0 += OZ_REDUCE_BATCH) {
#pragma unroll
                for (int idx = b0; idx < b0 + OZ_REDUCE_BATCH && idx < ELEMS; idx++) {
                    int32_t r = oz_mod_p(acc[idx], p, mu);
                    if (OUT == OZ_OUT_ACC)
                        dbg_store(idx, acc[idx]);
                    if (OUT == OZ_OUT_MOD)
                        dbg_store(idx, r);
                    uint64_t *crt = &s_crt[OZ_SLOT_(idx)];
                    *crt = (first_prime ? 0 : *crt) + (uint64_t)r * f;
                    acc[idx] = 0;
                }
                oz_live_range_fence();
            }
            if (cg.p == sched.p1 - 1 && OUT != OZ_OUT_ACC && OUT != OZ_OUT_MOD) { /* the pass is done */
                const double unit = ldexp(1.0, -c_pass_shift[cg.q]);
                const bool first = cg.c == 0 && cg.q == sched.q0; /* acc = 0 + v = v: store */
#pragma unroll
                for (int b0 = 0; b0 < ELEMS; b0 += OZ_REDUCE_BATCH) {
                    oz_live_range_fence();
#pragma unroll
                    for (int idx = b0; idx < b0 + OZ_REDUCE_BATCH && idx < ELEMS; idx++) {
                        int64_t X = oz_crt_fold(oz_crt_reduce(s_crt[OZ_SLOT_(idx)], OZ_P22_M), OZ_P22_M);
                        if (OUT == OZ_OUT_CRT)
                            dbg_store(idx, X);
                        double v = __dmul_rn((double)X, unit);
                        double *slot = &g_acc[OZ_SLOT_(idx)];
                        *slot = first ? v : __dadd_rn(*slot, v);
                    }
                }
            }
            sched.next(cg);
            cu_left = cg.steps;
        }
    }
    oz_cp_async_wait<0>();

    if (DEBUG)
        return;
    double alpha, beta;
    P.sc.load(&alpha, &beta);
    const int32_t *sA = P.a.scale(b), *sB = P.b.scale(b);
    double *C = P.c.ptr(b);
#pragma unroll
    for (int b0 = 0; b0 < ELEMS; b0 += OZ_REDUCE_BATCH) {
        oz_live_range_fence();
#pragma unroll
        for (int idx = b0; idx < b0 + OZ_REDUCE_BATCH && idx < ELEMS; idx++) {
            int64_t i = m0 + mma.row(idx), j = n0 + mma.col(idx);
            if (i >= P.L.m || j >= P.L.n)
                continue;
            int s = sA[i], t = sB[j];
            if (s == OZ_SCALE_SPECIAL || t == OZ_SCALE_SPECIAL)
                continue; /* the fix-up kernel writes this element */
            double dacc = total > 0 ? g_acc[OZ_SLOT_(idx)] : 0.0;
            oz_store_epilogue(&C[i + j * P.c.ldc], alpha, beta, ldexp(dacc, s + t), P.L.k == 0);
        }
    }
#undef OZ_SLOT_
}

#define OZ_MAX_DEVICES 64

/* Launches one instantiation. The dynamic shared-memory limit is raised
 * once per device and kernel, so that nothing but the launch itself happens
 * inside a stream capture after the first call (racing threads set the same
 * value: harmless). */
template <class Cfg, class Mma, int OUT>
static cudaError_t oz_p22_launch_one(const oz_gemm_params &p, int64_t group, cudaStream_t s, int dev)
{
    static volatile int raised[OZ_MAX_DEVICES];
    if (dev >= OZ_MAX_DEVICES || !raised[dev]) {
        cudaError_t e = cudaFuncSetAttribute(oz_p22_fused_kernel<Cfg, Mma, OUT>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM_BYTES);
        if (e != cudaSuccess)
            return e;
        if (dev < OZ_MAX_DEVICES)
            raised[dev] = 1;
    }
    dim3 grid((unsigned)(p.tiles_m * p.tiles_n), (unsigned)group);
    oz_p22_fused_kernel<Cfg, Mma, OUT><<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, s>>>(p);
    return cudaGetLastError();
}

/* Fills the tile counts and launches the instantiation for p.out_kind. */
template <class Cfg, class Mma>
static cudaError_t oz_p22_launch(oz_gemm_params &p, int64_t group, cudaStream_t s, int dev)
{
    p.tiles_m = p.L.Mpad / Cfg::CTA_M;
    p.tiles_n = p.L.Npad / Cfg::CTA_N;
    if (p.tiles_m * p.tiles_n > 0x7fffffffLL)
        return cudaErrorInvalidConfiguration;
    switch (p.out_kind) {
    case OZ_OUT_C: return oz_p22_launch_one<Cfg, Mma, OZ_OUT_C>(p, group, s, dev);
#ifdef OZ_TEST_HOOKS /* the layer outputs exist in the test build only */
    case OZ_OUT_ACC: return oz_p22_launch_one<Cfg, Mma, OZ_OUT_ACC>(p, group, s, dev);
    case OZ_OUT_MOD: return oz_p22_launch_one<Cfg, Mma, OZ_OUT_MOD>(p, group, s, dev);
    case OZ_OUT_CRT: return oz_p22_launch_one<Cfg, Mma, OZ_OUT_CRT>(p, group, s, dev);
#endif
    default: return cudaErrorInvalidValue;
    }
}

#endif
