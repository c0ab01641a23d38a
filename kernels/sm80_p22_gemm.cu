/* kernels/sm80_p22_gemm.cu: the fused Phase 22 kernel: 28 INT8 GEMMs per K chunk on mma.sync, Barrett mod p, CRT and the double epilogue in registers. */
#include "../crt/crt.h"
#include "epilogue.cuh"
#include "p22_params.h"

/* The moduli and the pass plan, expanded from their one definition. */
#define OZ_P_(i, p, f, mu) (p),
#define OZ_MU_(i, p, f, mu) (mu),
#define OZ_F_(i, p, f, mu) (f),
__constant__ int32_t c_prime[OZ_P22_NPRIMES] = {OZ_P22_MODULI(OZ_P_)};
__constant__ uint32_t c_mu[OZ_P22_NPRIMES] = {OZ_P22_MODULI(OZ_MU_)};
__constant__ uint64_t c_f[OZ_P22_NPRIMES] = {OZ_P22_MODULI(OZ_F_)};
#undef OZ_P_
#undef OZ_MU_
#undef OZ_F_
#define OZ_SA_(q, a, b, sh) (a),
#define OZ_SB_(q, a, b, sh) (b),
#define OZ_SH_(q, a, b, sh) (sh),
__constant__ int c_pass_sa[OZ_P22_NPASSES] = {OZ_P22_PASSES(OZ_SA_)};
__constant__ int c_pass_sb[OZ_P22_NPASSES] = {OZ_P22_PASSES(OZ_SB_)};
__constant__ int c_pass_shift[OZ_P22_NPASSES] = {OZ_P22_PASSES(OZ_SH_)};
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

__device__ __forceinline__ void oz_cp_async16(uint32_t smem, const void *gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem));
}
__device__ __forceinline__ void oz_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void oz_cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void oz_ldmatrix_x4(uint32_t (&r)[4], uint32_t smem)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem));
}

__device__ __forceinline__ void oz_mma_s8(int32_t (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Keeps the compiler from batching the per-element work of the reductions
 * (which would hold every element's temporaries at once and spill). */
__device__ __forceinline__ void oz_live_range_fence() { asm volatile("" ::: "memory"); }

/* One CTA: a Cfg::CTA_M x Cfg::CTA_N tile of C of one batch item.
 * Mainloop: a Cfg::STAGES-deep cp.async pipeline of K stages over the whole
 * (chunk, pass, prime) schedule, one barrier per stage; per stage each warp
 * does ldmatrix + mma.sync over its warp tile. At the end of a prime's K
 * range: Barrett mod p and the CRT sum (per-thread slots in shared memory).
 * At the end of a pass: the CRT fold and the double accumulation (per-thread
 * slots in the workspace, coalesced). Then the epilogue. */
template <class Cfg, int OUT>
__global__ void __launch_bounds__(Cfg::THREADS, 1) oz_p22_gemm_kernel(oz_gemm_params P)
{
    extern __shared__ __align__(128) int8_t smem[];
    const int64_t b = blockIdx.y;
    /* [ELEMS][THREADS] of this thread's CRT sums, in shared memory or in the workspace */
    uint64_t *s_crt = (Cfg::CRT_IN_SMEM ? (uint64_t *)(smem + Cfg::SMEM_A + Cfg::SMEM_B)
                                        : (uint64_t *)(P.a.ws + b * P.a.slot_bytes + P.L.offCrt) +
                                              blockIdx.x * (int64_t)(Cfg::CTA_M * Cfg::CTA_N)) +
                      threadIdx.x;
    const int64_t tm = blockIdx.x % P.tiles_m, tn = blockIdx.x / P.tiles_m;
    const int64_t m0 = tm * Cfg::CTA_M, n0 = tn * Cfg::CTA_N;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % Cfg::WARPS_M, wn = warp / Cfg::WARPS_M;
    const int64_t kpad = P.L.Kpad;
    double *g_acc = (double *)(P.a.ws + b * P.a.slot_bytes + P.L.offDacc) + blockIdx.x * (int64_t)(Cfg::CTA_M * Cfg::CTA_N) +
                    threadIdx.x; /* [ELEMS][THREADS] of this tile */

    constexpr bool DEBUG = OUT == OZ_OUT_ACC || OUT == OZ_OUT_MOD || OUT == OZ_OUT_CRT;
    constexpr bool PRODUCT = !DEBUG; /* OZ_OUT_C and the timing variants */
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
        if (OUT != OZ_TIME_NO_LOAD) {
#pragma unroll
            for (int i = 0; i < Cfg::A_CHUNKS; i++)
                oz_cp_async16(da + i * ROWS_PER_PIECE * Cfg::K_STAGE, ga + i * piece_stride);
#pragma unroll
            for (int i = 0; i < Cfg::B_CHUNKS; i++)
                oz_cp_async16(db + i * ROWS_PER_PIECE * Cfg::K_STAGE, gb + i * piece_stride);
        }
        ga += Cfg::K_STAGE;
        gb += Cfg::K_STAGE;
        if (--ld_left == 0) {
            sched.next(lg);
            ld_group_start();
        }
    };
    if (total > 0)
        ld_group_start();

    /* ldmatrix row addresses of this lane (m16n8k32 fragment layouts):
     * A: matrix q = lane/8 holds rows +8*(q&1), k pieces +(q>>1);
     * B: matrix q holds n rows +8*(q>>1), k pieces +(q&1).
     * Every row a lane names is lr mod 8 above a multiple of 8, so its
     * swizzle is swz(lr) and the piece of K step ks is (2ks + h) ^ swz(lr). */
    const int lq = lane >> 3, lr = lane & 7;
    const int a_h = lq >> 1, b_h = lq & 1, lane_swz = Cfg::swz(lr);
    const uint32_t a_row = (wm * Cfg::WARP_M + lr + 8 * (lq & 1)) * Cfg::K_STAGE;
    const uint32_t b_row = (wn * Cfg::WARP_N + lr + 8 * (lq >> 1)) * Cfg::K_STAGE;

    int32_t acc[Cfg::FRAG_M][Cfg::FRAG_N][4];
#define OZ_SLOT_(mi, ni, e) ((((mi) * Cfg::FRAG_N + (ni)) * 4 + (e)) * Cfg::THREADS)
#pragma unroll
    for (int mi = 0; mi < Cfg::FRAG_M; mi++)
#pragma unroll
        for (int ni = 0; ni < Cfg::FRAG_N; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[mi][ni][e] = 0;

    const int g = lane >> 2, t4 = lane & 3;
    auto row_of = [&](int mi, int e) { return m0 + wm * Cfg::WARP_M + mi * OZ_MMA_M + g + 8 * (e >> 1); };
    auto col_of = [&](int ni, int e) { return n0 + wn * Cfg::WARP_N + ni * OZ_MMA_N + 2 * t4 + (e & 1); };
    auto dbg_store = [&](int mi, int ni, int e, int64_t v) {
        int64_t i = row_of(mi, e), j = col_of(ni, e);
        if (i < P.L.m && j < P.L.n)
            P.dbg_out[i + j * P.L.m] = v;
    };

    oz_group cg = sched.first(); /* the group being computed */
    int32_t sink = 0;            /* OZ_TIME_NO_CRT only */
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
        __syncthreads(); /* stage it has landed; stage it-1 is consumed by every warp */
        if (it + Cfg::STAGES - 1 < total) {
            load_stage(st_load);
            st_load = st_load + 1 == Cfg::STAGES ? 0 : st_load + 1;
        }
        oz_cp_async_commit();

        const uint32_t sa = sa_base + st_comp * (Cfg::CTA_M * Cfg::K_STAGE) + a_row;
        const uint32_t sb = sb_base + st_comp * (Cfg::CTA_N * Cfg::K_STAGE) + b_row;
        st_comp = st_comp + 1 == Cfg::STAGES ? 0 : st_comp + 1;
#pragma unroll
        for (int ks = 0; ks < Cfg::K_STAGE / OZ_MMA_K; ks++) {
            const uint32_t a_piece = (((2 * ks + a_h) ^ lane_swz) * 16), b_piece = (((2 * ks + b_h) ^ lane_swz) * 16);
            uint32_t af[Cfg::FRAG_M][4], bf[Cfg::FRAG_N / 2][4];
#pragma unroll
            for (int mi = 0; mi < Cfg::FRAG_M; mi++)
                oz_ldmatrix_x4(af[mi], sa + mi * OZ_MMA_M * Cfg::K_STAGE + a_piece);
#pragma unroll
            for (int nj = 0; nj < Cfg::FRAG_N / 2; nj++)
                oz_ldmatrix_x4(bf[nj], sb + nj * 2 * OZ_MMA_N * Cfg::K_STAGE + b_piece);
            if (OUT != OZ_TIME_NO_MMA) {
#pragma unroll
                for (int mi = 0; mi < Cfg::FRAG_M; mi++)
#pragma unroll
                    for (int ni = 0; ni < Cfg::FRAG_N; ni++)
                        oz_mma_s8(acc[mi][ni], af[mi], bf[ni >> 1][2 * (ni & 1)], bf[ni >> 1][2 * (ni & 1) + 1]);
            }
        }

        if (--cu_left == 0 && OUT != OZ_TIME_NO_CRT) { /* this prime's K range is done */
            const int32_t p = c_prime[cg.p];
            const uint32_t mu = c_mu[cg.p];
            const uint64_t f = c_f[cg.p];
            const bool first_prime = cg.p == sched.p0; /* sum = 0 + r f: store */
#pragma unroll
            for (int mi = 0; mi < Cfg::FRAG_M; mi++) {
#pragma unroll
                for (int ni = 0; ni < Cfg::FRAG_N; ni++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        int32_t r = oz_mod_p(acc[mi][ni][e], p, mu);
                        if (OUT == OZ_OUT_ACC)
                            dbg_store(mi, ni, e, acc[mi][ni][e]);
                        if (OUT == OZ_OUT_MOD)
                            dbg_store(mi, ni, e, r);
                        uint64_t *crt = &s_crt[OZ_SLOT_(mi, ni, e)];
                        *crt = (first_prime ? 0 : *crt) + (uint64_t)r * f;
                        acc[mi][ni][e] = 0;
                    }
                oz_live_range_fence();
            }
            if (cg.p == sched.p1 - 1 && OUT != OZ_OUT_ACC && OUT != OZ_OUT_MOD) { /* the pass is done */
                const double unit = ldexp(1.0, -c_pass_shift[cg.q]);
                const bool first = cg.c == 0 && cg.q == sched.q0; /* acc = 0 + v = v: store */
#pragma unroll
                for (int mi = 0; mi < Cfg::FRAG_M; mi++) {
                    oz_live_range_fence();
#pragma unroll
                    for (int ni = 0; ni < Cfg::FRAG_N; ni++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            int64_t X = oz_crt_fold(oz_crt_reduce(s_crt[OZ_SLOT_(mi, ni, e)], OZ_P22_M), OZ_P22_M);
                            if (OUT == OZ_OUT_CRT)
                                dbg_store(mi, ni, e, X);
                            double v = __dmul_rn((double)X, unit);
                            double *slot = &g_acc[OZ_SLOT_(mi, ni, e)];
                            *slot = first ? v : __dadd_rn(*slot, v);
                        }
                }
            }
            sched.next(cg);
            cu_left = cg.steps;
        }
        if (OUT == OZ_TIME_NO_CRT && cu_left == 0) { /* keep the MMAs alive, at almost no cost */
#pragma unroll
            for (int mi = 0; mi < Cfg::FRAG_M; mi++)
#pragma unroll
                for (int ni = 0; ni < Cfg::FRAG_N; ni++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        sink ^= acc[mi][ni][e];
                        acc[mi][ni][e] = 0;
                    }
            sched.next(cg);
            cu_left = cg.steps;
        }
    }
    oz_cp_async_wait<0>();
    if (OUT == OZ_TIME_NO_CRT)
        g_acc[0] = (double)sink;

    if (DEBUG)
        return;
    double alpha, beta;
    P.sc.load(&alpha, &beta);
    const int32_t *sA = P.a.scale(b), *sB = P.b.scale(b);
    double *C = P.c.ptr(b);
#pragma unroll
    for (int mi = 0; mi < Cfg::FRAG_M; mi++) {
        oz_live_range_fence();
#pragma unroll
        for (int ni = 0; ni < Cfg::FRAG_N; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int64_t i = row_of(mi, e), j = col_of(ni, e);
                if (i >= P.L.m || j >= P.L.n)
                    continue;
                int s = sA[i], t = sB[j];
                if (s == OZ_SCALE_SPECIAL || t == OZ_SCALE_SPECIAL)
                    continue; /* the fix-up kernel writes this element */
                double dacc = total > 0 ? g_acc[OZ_SLOT_(mi, ni, e)] : 0.0;
                oz_store_epilogue(&C[i + j * P.c.ldc], alpha, beta, ldexp(dacc, s + t), P.L.k == 0);
            }
    }
}

#undef OZ_SLOT_

#define OZ_MAX_DEVICES 64

template <class Cfg, int OUT>
static cudaError_t launch_cfg(const oz_gemm_params &p, int64_t group, cudaStream_t s, int dev)
{
    /* The dynamic shared-memory limit is raised once per device and kernel,
     * so that nothing but the launch itself happens inside a stream capture
     * after the first call. Racing threads set the same value: harmless. */
    static volatile int raised[OZ_MAX_DEVICES];
    if (dev >= OZ_MAX_DEVICES || !raised[dev]) {
        cudaError_t e = cudaFuncSetAttribute(oz_p22_gemm_kernel<Cfg, OUT>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM_BYTES);
        if (e != cudaSuccess)
            return e;
        if (dev < OZ_MAX_DEVICES)
            raised[dev] = 1;
    }
    dim3 grid((unsigned)(p.tiles_m * p.tiles_n), (unsigned)group);
    oz_p22_gemm_kernel<Cfg, OUT><<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, s>>>(p);
    return cudaGetLastError();
}

template <class Cfg>
static cudaError_t launch_out(oz_gemm_params &p, int64_t group, cudaStream_t s, int dev)
{
    p.tiles_m = p.L.Mpad / Cfg::CTA_M;
    p.tiles_n = p.L.Npad / Cfg::CTA_N;
    if (p.tiles_m * p.tiles_n > 0x7fffffffLL)
        return cudaErrorInvalidConfiguration;
    switch (p.out_kind) {
    case OZ_OUT_C: return launch_cfg<Cfg, OZ_OUT_C>(p, group, s, dev);
    case OZ_OUT_ACC: return launch_cfg<Cfg, OZ_OUT_ACC>(p, group, s, dev);
    case OZ_OUT_MOD: return launch_cfg<Cfg, OZ_OUT_MOD>(p, group, s, dev);
    case OZ_OUT_CRT: return launch_cfg<Cfg, OZ_OUT_CRT>(p, group, s, dev);
    case OZ_TIME_NO_LOAD: return launch_cfg<Cfg, OZ_TIME_NO_LOAD>(p, group, s, dev);
    case OZ_TIME_NO_MMA: return launch_cfg<Cfg, OZ_TIME_NO_MMA>(p, group, s, dev);
    case OZ_TIME_NO_CRT: return launch_cfg<Cfg, OZ_TIME_NO_CRT>(p, group, s, dev);
    default: return cudaErrorInvalidValue;
    }
}

/* The large configuration where the device has the shared memory for it
 * (Hopper), else the small one; tests can force the small one. */
cudaError_t oz_launch_p22_gemm(oz_gemm_params &p, int64_t group, cudaStream_t s)
{
    static volatile int optin_of[OZ_MAX_DEVICES]; /* 0: not asked yet */
    int dev = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    if (dev < OZ_MAX_DEVICES)
        optin = optin_of[dev];
    if (optin == 0) {
        e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
        if (e != cudaSuccess)
            return e;
        if (dev < OZ_MAX_DEVICES)
            optin_of[dev] = optin;
    }
    bool large = optin >= oz_tiles_large::SMEM_BYTES && p.tile_override != 1;
    return large ? launch_out<oz_tiles_large>(p, group, s, dev) : launch_out<oz_tiles_small>(p, group, s, dev);
}
