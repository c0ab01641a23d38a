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

/* Position in the (chunk, pass, prime, K step) schedule; K step fastest. */
struct oz_cursor {
    int64_t c, s, steps;
    int q, p;
};

struct oz_schedule {
    int q0, q1, p0, p1;
    int64_t kpad;
    __device__ int64_t steps_of(int64_t c) const
    {
        int64_t left = kpad - c * OZ_P22_KCHUNK;
        return (left < OZ_P22_KCHUNK ? left : OZ_P22_KCHUNK) / OZ_K_STEP;
    }
    __device__ oz_cursor start() const { return oz_cursor{0, 0, steps_of(0), q0, p0}; }
    __device__ void advance(oz_cursor &u) const
    {
        if (++u.s < u.steps)
            return;
        u.s = 0;
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
__device__ __forceinline__ void oz_cp_async_wait_all_but_one() { asm volatile("cp.async.wait_group 1;\n" ::); }

__device__ __forceinline__ void oz_ldmatrix_x4(uint32_t (&r)[4], uint32_t smem)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem));
}

__device__ __forceinline__ void oz_mma_s8(int32_t (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

struct oz_smem {
    int8_t a[OZ_STAGES][OZ_CTA_M * OZ_SMEM_PITCH];
    int8_t b[OZ_STAGES][OZ_CTA_N * OZ_SMEM_PITCH];
};

template <int OUT>
__global__ void __launch_bounds__(OZ_THREADS, 1) oz_p22_gemm_kernel(oz_gemm_params P)
{
    __shared__ __align__(128) oz_smem sm;
    const int64_t b = blockIdx.y;
    const int64_t tm = blockIdx.x % P.tiles_m, tn = blockIdx.x / P.tiles_m;
    const int64_t m0 = tm * OZ_CTA_M, n0 = tn * OZ_CTA_N;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % OZ_WARPS_M, wn = warp / OZ_WARPS_M;
    const int64_t kpad = P.L.Kpad;

    oz_schedule sched;
    sched.kpad = kpad;
    int64_t total;
    if (OUT == OZ_OUT_C) {
        sched.q0 = 0, sched.q1 = OZ_P22_NPASSES, sched.p0 = 0, sched.p1 = OZ_P22_NPRIMES;
        total = kpad / OZ_K_STEP * OZ_P22_NPASSES * OZ_P22_NPRIMES;
    } else {
        sched.q0 = P.dbg_pass, sched.q1 = P.dbg_pass + 1;
        sched.p0 = OUT == OZ_OUT_CRT ? 0 : P.dbg_prime;
        sched.p1 = OUT == OZ_OUT_CRT ? OZ_P22_NPRIMES : P.dbg_prime + 1;
        total = (kpad < OZ_P22_KCHUNK ? kpad : OZ_P22_KCHUNK) / OZ_K_STEP * (sched.p1 - sched.p0);
    }

    /* Loader roles: every thread copies 16 bytes of A; the first half, of B. */
    const int ld_row = tid >> 1, ld_half = tid & 1;
    const uint32_t sa_base = (uint32_t)__cvta_generic_to_shared(&sm.a[0][0]);
    const uint32_t sb_base = (uint32_t)__cvta_generic_to_shared(&sm.b[0][0]);
    const uint32_t sa_stage = sizeof(sm.a[0]), sb_stage = sizeof(sm.b[0]);

    auto load_stage = [&](int st, const oz_cursor &u) {
        const int64_t kbyte = u.c * OZ_P22_KCHUNK + u.s * OZ_K_STEP + ld_half * 16;
        const int8_t *ga = P.a.plane(b, u.p * OZ_NSLICES + c_pass_sa[u.q]) + (m0 + ld_row) * kpad + kbyte;
        oz_cp_async16(sa_base + st * sa_stage + ld_row * OZ_SMEM_PITCH + ld_half * 16, ga);
        if (ld_row < OZ_CTA_N) {
            const int8_t *gb = P.b.plane(b, u.p * OZ_NSLICES + c_pass_sb[u.q]) + (n0 + ld_row) * kpad + kbyte;
            oz_cp_async16(sb_base + st * sb_stage + ld_row * OZ_SMEM_PITCH + ld_half * 16, gb);
        }
    };

    /* ldmatrix row addresses of this lane (see the m16n8k32 fragment layouts):
     * A: matrix q = lane/8 holds rows +8*(q&1), k bytes +16*(q>>1);
     * B: matrix q holds n rows +8*(q>>1), k bytes +16*(q&1). */
    const int lq = lane >> 3, lr = lane & 7;
    uint32_t a_off[OZ_FRAG_M], b_off[OZ_FRAG_N / 2];
    for (int mi = 0; mi < OZ_FRAG_M; mi++)
        a_off[mi] = (wm * OZ_WARP_M + mi * OZ_MMA_M + lr + 8 * (lq & 1)) * OZ_SMEM_PITCH + 16 * (lq >> 1);
    for (int nj = 0; nj < OZ_FRAG_N / 2; nj++)
        b_off[nj] = (wn * OZ_WARP_N + nj * 2 * OZ_MMA_N + lr + 8 * (lq >> 1)) * OZ_SMEM_PITCH + 16 * (lq & 1);

    int32_t acc[OZ_FRAG_M][OZ_FRAG_N][4];
    uint64_t crt[OZ_FRAG_M][OZ_FRAG_N][4];
    double dacc[OZ_FRAG_M][OZ_FRAG_N][4];
#pragma unroll
    for (int mi = 0; mi < OZ_FRAG_M; mi++)
#pragma unroll
        for (int ni = 0; ni < OZ_FRAG_N; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                acc[mi][ni][e] = 0;
                crt[mi][ni][e] = 0;
                dacc[mi][ni][e] = 0.0;
            }

    const int g = lane >> 2, t4 = lane & 3;
    auto dbg_store = [&](int mi, int ni, int e, int64_t v) {
        int64_t i = m0 + wm * OZ_WARP_M + mi * OZ_MMA_M + g + 8 * (e >> 1);
        int64_t j = n0 + wn * OZ_WARP_N + ni * OZ_MMA_N + 2 * t4 + (e & 1);
        if (i < P.L.m && j < P.L.n)
            P.dbg_out[i + j * P.L.m] = v;
    };

    oz_cursor ld = sched.start(), cu = sched.start();
    if (total > 0) {
        load_stage(0, ld);
        sched.advance(ld);
    }
    oz_cp_async_commit();
    for (int64_t it = 0; it < total; ++it) {
        const int st = (int)(it & 1);
        if (it + 1 < total) {
            load_stage(st ^ 1, ld);
            sched.advance(ld);
        }
        oz_cp_async_commit();
        oz_cp_async_wait_all_but_one();
        __syncthreads();

        uint32_t af[OZ_FRAG_M][4], bf[OZ_FRAG_N / 2][4];
#pragma unroll
        for (int mi = 0; mi < OZ_FRAG_M; mi++)
            oz_ldmatrix_x4(af[mi], sa_base + st * sa_stage + a_off[mi]);
#pragma unroll
        for (int nj = 0; nj < OZ_FRAG_N / 2; nj++)
            oz_ldmatrix_x4(bf[nj], sb_base + st * sb_stage + b_off[nj]);
#pragma unroll
        for (int mi = 0; mi < OZ_FRAG_M; mi++)
#pragma unroll
            for (int ni = 0; ni < OZ_FRAG_N; ni++)
                oz_mma_s8(acc[mi][ni], af[mi], bf[ni >> 1][2 * (ni & 1)], bf[ni >> 1][2 * (ni & 1) + 1]);

        if (cu.s == cu.steps - 1) { /* this prime's K range is done */
            const int32_t p = c_prime[cu.p];
            const uint32_t mu = c_mu[cu.p];
            const uint64_t f = c_f[cu.p];
#pragma unroll
            for (int mi = 0; mi < OZ_FRAG_M; mi++)
#pragma unroll
                for (int ni = 0; ni < OZ_FRAG_N; ni++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        int32_t r = oz_mod_p(acc[mi][ni][e], p, mu);
                        if (OUT == OZ_OUT_ACC)
                            dbg_store(mi, ni, e, acc[mi][ni][e]);
                        if (OUT == OZ_OUT_MOD)
                            dbg_store(mi, ni, e, r);
                        crt[mi][ni][e] += (uint64_t)r * f;
                        acc[mi][ni][e] = 0;
                    }
            if (cu.p == sched.p1 - 1 && (OUT == OZ_OUT_C || OUT == OZ_OUT_CRT)) { /* the pass is done */
                const double unit = ldexp(1.0, -c_pass_shift[cu.q]);
#pragma unroll
                for (int mi = 0; mi < OZ_FRAG_M; mi++)
#pragma unroll
                    for (int ni = 0; ni < OZ_FRAG_N; ni++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            int64_t X = oz_crt_fold(oz_crt_reduce(crt[mi][ni][e], OZ_P22_M), OZ_P22_M);
                            if (OUT == OZ_OUT_CRT)
                                dbg_store(mi, ni, e, X);
                            dacc[mi][ni][e] = __dadd_rn(dacc[mi][ni][e], __dmul_rn((double)X, unit));
                            crt[mi][ni][e] = 0;
                        }
            }
        }
        sched.advance(cu);
        __syncthreads(); /* stage st is consumed before it is refilled */
    }

    if (OUT != OZ_OUT_C)
        return;
    double alpha, beta;
    P.sc.load(&alpha, &beta);
    const int32_t *sA = P.a.scale(b), *sB = P.b.scale(b);
    double *C = P.c.ptr(b);
#pragma unroll
    for (int mi = 0; mi < OZ_FRAG_M; mi++)
#pragma unroll
        for (int ni = 0; ni < OZ_FRAG_N; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int64_t i = m0 + wm * OZ_WARP_M + mi * OZ_MMA_M + g + 8 * (e >> 1);
                int64_t j = n0 + wn * OZ_WARP_N + ni * OZ_MMA_N + 2 * t4 + (e & 1);
                if (i >= P.L.m || j >= P.L.n)
                    continue;
                int s = sA[i], t = sB[j];
                if (s == OZ_SCALE_SPECIAL || t == OZ_SCALE_SPECIAL)
                    continue; /* the fix-up kernel writes this element */
                oz_store_epilogue(&C[i + j * P.c.ldc], alpha, beta, ldexp(dacc[mi][ni][e], s + t), P.L.k == 0);
            }
}

cudaError_t oz_launch_p22_gemm(const oz_gemm_params &p, int64_t group, cudaStream_t s)
{
    dim3 grid((unsigned)(p.tiles_m * p.tiles_n), (unsigned)group);
    switch (p.out_kind) {
    case OZ_OUT_C: oz_p22_gemm_kernel<OZ_OUT_C><<<grid, OZ_THREADS, 0, s>>>(p); break;
    case OZ_OUT_ACC: oz_p22_gemm_kernel<OZ_OUT_ACC><<<grid, OZ_THREADS, 0, s>>>(p); break;
    case OZ_OUT_MOD: oz_p22_gemm_kernel<OZ_OUT_MOD><<<grid, OZ_THREADS, 0, s>>>(p); break;
    case OZ_OUT_CRT: oz_p22_gemm_kernel<OZ_OUT_CRT><<<grid, OZ_THREADS, 0, s>>>(p); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
