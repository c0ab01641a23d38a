/* kernels/sm90_engine.cu: the sm_90a INT8 engine (TMA ring, warp-specialized, persistent, wgmma) with its two epilogues: fused Phase 22 CRT, and residue planes.
 *
 * Built for sm_90a only (meson: kernels_sm90). One kernel template; the mode
 * policy decides what happens each time a modulus's K range of a tile is
 * done (oz_engine_cfg in engine_cfg.h says how the work is split).
 *
 * Schedule, the same for the producer and the consumers: tiles t =
 * blockIdx.x, + gridDim.x, ... (grouped rasterization); per tile, K chunks
 * in ascending order; per chunk, the moduli in order; per modulus, the K
 * stages of the chunk. The int32 accumulators of a (tile, chunk, modulus)
 * are exact (|residue| <= 128, K chunk <= 65536) and are reduced once. */
#include <cuda.h>
#include <cudaTypedefs.h>

#include "../crt/crt.h"
#include "engine.h"
#include "engine_cfg.h"
#include "epilogue.cuh"
#include "sm90_ptx.cuh"

typedef oz_engine_cfg Cfg;

#define OZ_EM_(i, m) (m),
static __constant__ int32_t c_emod[OZ_ENGINE_NMODULI] = {OZ_ENGINE_MODULI(OZ_EM_)};
#undef OZ_EM_
#define OZ_EMU_(i, m) (uint32_t)(UINT64_C(4294967296) / (m)),
static __constant__ uint32_t c_emu[OZ_ENGINE_NMODULI] = {OZ_ENGINE_MODULI(OZ_EMU_)};
#undef OZ_EMU_

struct oz_engine_params {
    int64_t kpad;                /* K bytes per plane row, a multiple of BLOCK_K */
    int nmod;
    int32_t tiles_m, tiles_n;    /* per batch item */
    int64_t tiles_total;
    /* Phase 22 */
    int64_t m, n;
    const int32_t *scale_a, *scale_b;
    int64_t scale_stride_a, scale_stride_b;
    oz_out c, acc;
    int64_t c_off, acc_off;
    int first, last;
    oz_scalars sc;
    char *scratch;               /* oz_engine_p22::SCRATCH_BYTES per CTA */
    /* residue planes */
    uint8_t *res;
    int64_t res_item_bytes, res_rows, res_cols;
};

/* Unit t of the schedule: batch item, tile row, and tile column (a unit is
 * CLUSTER neighbouring tiles of one tile row; P.tiles_n counts units). */
__device__ __forceinline__ void oz_engine_tile(const oz_engine_params &P, int64_t t, int64_t &b, int &tm, int &tn)
{
    const int64_t per = (int64_t)P.tiles_m * P.tiles_n;
    b = t / per;
    const int64_t r = t - b * per;
    const int64_t gsz = (int64_t)Cfg::GROUP_M * P.tiles_n;
    const int64_t g = r / gsz;
    const int first = (int)(g * Cfg::GROUP_M);
    const int gm = min(P.tiles_m - first, Cfg::GROUP_M);
    const int64_t rr = r - g * gsz;
    tm = first + (int)(rr % gm);
    tn = (int)(rr / gm);
}

/* Row and column, in the consumer's 64 x 128 block, of accumulator idx
 * (wgmma m64nN layout: warp v, g = lane/4, t = lane%4). */
struct oz_frag {
    int row0, col0;
    __device__ explicit oz_frag(int ctid)
    {
        const int v = (ctid >> 5) & 3, lane = ctid & 31;
        row0 = 16 * v + (lane >> 2);
        col0 = 2 * (lane & 3);
    }
    __device__ int row(int idx) const { return row0 + 8 * ((idx & 3) >> 1); }
    __device__ int col(int idx) const { return col0 + 8 * (idx >> 2) + (idx & 1); }
};

/* x mod m_q in [0, m_q) for |x| <= 2^30 (every accumulator of a K chunk):
 * shifted by a multiple of m_q above 2^30 to be non-negative, then one
 * multiply-high with floor(2^32 / m_q), whose quotient is exact or one
 * short (y < 2^32), and one correction. */
#define OZ_EOFF_(i, m) (uint32_t)(((UINT32_C(1) << 30) + (m) - 1) / (m) * (m)),
static __constant__ uint32_t c_eoff[OZ_ENGINE_NMODULI] = {OZ_ENGINE_MODULI(OZ_EOFF_)};
#undef OZ_EOFF_
__device__ __forceinline__ int32_t oz_engine_mod(int32_t x, int q)
{
    const uint32_t m = (uint32_t)c_emod[q];
    const uint32_t y = (uint32_t)x + c_eoff[q];
    const uint32_t r = y - __umulhi(y, c_emu[q]) * m;
    return (int32_t)(r >= m ? r - m : r);
}

/* Keeps the compiler from batching the per-element work (register pressure). */
__device__ __forceinline__ void oz_fence_regs() { asm volatile("" ::: "memory"); }

/* Phase 22: moduli 0..NMOD-2 leave their residues in the CTA's scratch; the
 * last one rebuilds X of the four passes of each element (they are in this
 * thread), adds them in the order of phase22.md step 6 to the element's
 * double accumulator, and after the last K chunk writes C. */
struct oz_mode_p22 {
    typedef oz_engine_p22 M;
    static constexpr int KCHUNK = M::KCHUNK;

    static __device__ __forceinline__ void modulus_done(const oz_engine_params &P, int32_t (&acc0)[Cfg::ACC],
                                                        int32_t (&acc1)[Cfg::ACC], int q, int64_t c, int64_t nchunks,
                                                        int64_t b, int64_t row0, int64_t col0, int ctid)
    {
        char *scr = P.scratch + (int64_t)blockIdx.x * M::SCRATCH_BYTES;
        uint32_t *res = (uint32_t *)scr + ctid;
        if (q < M::NMOD - 1) {
#pragma unroll
            for (int w = 0; w < M::WORDS; w++) {
                uint32_t word = 0;
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int v = 4 * w + e;
                    const int32_t x = v < Cfg::ACC ? acc0[v] : acc1[v - Cfg::ACC];
                    word |= (uint32_t)oz_engine_mod(x, q) << (8 * e);
                }
                res[(q * M::WORDS + w) * Cfg::CTHREADS] = word;
            }
            return;
        }
        double *dacc = (double *)(scr + M::RES_BYTES) + ctid;
        const bool end = c == nchunks - 1;          /* of the slab */
        const bool last = end && P.last;            /* of the call: C gets the epilogue */
        const bool from_acc = c == 0 && !P.first;   /* the previous slabs' sum */
        double alpha = 0.0, beta = 0.0;
        const int32_t *sA = nullptr, *sB = nullptr;
        double *C = nullptr, *Acc = nullptr;
        if (last) {
            P.sc.load(&alpha, &beta);
            sA = P.scale_a + b * P.scale_stride_a;
            sB = P.scale_b + b * P.scale_stride_b;
            C = P.c.ptr(b) + P.c_off;
        }
        if (from_acc || (end && !P.last))
            Acc = P.acc.ptr(b) + P.acc_off;
        const oz_frag fr(ctid);
        const double inv_M = 1.0 / (double)OZ_P22G_M;
        /* pass ps of element idx is value idx + 32 ps: word (idx / 4) + 8 ps, byte idx % 4.
         * The words (and double accumulators) of the next 4 elements are loaded
         * while these are reconstructed: one L2 latency per call, not per group. */
        constexpr int GROUPS = M::OUTPUTS / 4;
        uint32_t wq[M::NMOD - 1][OZ_P22_NPASSES], wn[M::NMOD - 1][OZ_P22_NPASSES];
        double dq[4], dn[4];
        auto load_group = [&](int a, uint32_t (&w)[M::NMOD - 1][OZ_P22_NPASSES], double (&dd)[4]) {
#pragma unroll
            for (int qq = 0; qq < M::NMOD - 1; qq++)
#pragma unroll
                for (int ps = 0; ps < OZ_P22_NPASSES; ps++)
                    w[qq][ps] = res[(qq * M::WORDS + a + 8 * ps) * Cfg::CTHREADS];
#pragma unroll
            for (int bb = 0; bb < 4; bb++) {
                const int idx = 4 * a + bb;
                if (c > 0) {
                    dd[bb] = dacc[idx * Cfg::CTHREADS];
                } else if (from_acc) {
                    const int64_t i = row0 / 2 + fr.row(idx), j = col0 / 2 + fr.col(idx);
                    dd[bb] = i < P.m && j < P.n ? Acc[i + j * P.acc.ldc] : 0.0;
                } else {
                    dd[bb] = 0.0;
                }
            }
        };
        load_group(0, wq, dq);
#pragma unroll
        for (int a = 0; a < GROUPS; a++) {
            if (a + 1 < GROUPS)
                load_group(a + 1, wn, dn);
#pragma unroll
            for (int bb = 0; bb < 4; bb++) {
                const int idx = 4 * a + bb;
                double d = dq[bb];
#pragma unroll
                for (int ps = 0; ps < OZ_P22_NPASSES; ps++) {
                    const int v = idx + 32 * ps;
                    const int32_t x = v < Cfg::ACC ? acc0[v] : acc1[v - Cfg::ACC];
                    const uint32_t r_last = (uint32_t)oz_engine_mod(x, M::NMOD - 1);
                    uint64_t S = 0;
#define OZ_CRT_TERM_(i, m, f, mu)                                                                    \
    S += (uint64_t)((i) == M::NMOD - 1 ? r_last                                                    \
                                       : (wq[(i) < M::NMOD - 1 ? (i) : 0][ps] >> (8 * bb)) & 255u) * (f);
                    OZ_P22G_MODULI(OZ_CRT_TERM_)
#undef OZ_CRT_TERM_
                    /* X = S - q M' with q = rint(S / M'): |X| <= 2^46 is far from M'/2 = 2^46.8,
                     * so the double quotient (error < 2^-40) rounds to the right q. */
                    const long long qd = __double2ll_rn(__dmul_rn(__ull2double_rn(S), inv_M));
                    const int64_t X = (int64_t)(S - (uint64_t)qd * OZ_P22G_M);
                    const double unit = ps == 0 ? 0x1p-34 : ps == 3 ? 0x1p-68 : 0x1p-51;
                    d = __dadd_rn(d, __dmul_rn((double)X, unit));
                }
                const int64_t i = row0 / 2 + fr.row(idx); /* 128 logical rows: hi and lo of 64 */
                const int64_t j = col0 / 2 + fr.col(idx);
                if (!end) {
                    dacc[idx * Cfg::CTHREADS] = d;
                } else if (!last) {
                    if (i < P.m && j < P.n)
                        Acc[i + j * P.acc.ldc] = d;
                } else {
                    if (i < P.m && j < P.n) {
                        const int s = sA[i], t = sB[j];
                        if (s != OZ_SCALE_SPECIAL && t != OZ_SCALE_SPECIAL) /* else the fix-up kernel writes it */
                            oz_store_epilogue(&C[i + j * P.c.ldc], alpha, beta, ldexp(d, s + t), false);
                    }
                }
            }
            if (a + 1 < GROUPS) {
#pragma unroll
                for (int qq = 0; qq < M::NMOD - 1; qq++)
#pragma unroll
                    for (int ps = 0; ps < OZ_P22_NPASSES; ps++)
                        wq[qq][ps] = wn[qq][ps];
#pragma unroll
                for (int bb = 0; bb < 4; bb++)
                    dq[bb] = dn[bb];
            }
            oz_fence_regs();
        }
    }
};

/* Residue planes: R_q = acc mod m_q, added modulo m_q to the previous K
 * chunks' residue, stored as bytes (column-major, leading dimension res_rows). */
struct oz_mode_res {
    static constexpr int KCHUNK = oz_engine_res::KCHUNK;

    static __device__ __forceinline__ void modulus_done(const oz_engine_params &P, int32_t (&acc0)[Cfg::ACC],
                                                        int32_t (&acc1)[Cfg::ACC], int q, int64_t c, int64_t nchunks,
                                                        int64_t b, int64_t row0, int64_t col0, int ctid)
    {
        (void)nchunks;
        const oz_frag fr(ctid);
        const int32_t mq = c_emod[q];
        uint8_t *plane = P.res + b * P.res_item_bytes + (int64_t)q * P.res_rows * P.res_cols;
#pragma unroll
        for (int h = 0; h < Cfg::BLOCKS_PER_CONSUMER; h++) {
#pragma unroll
            for (int idx = 0; idx < Cfg::ACC; idx++) {
                const int64_t i = row0 + h * Cfg::MMA_M + fr.row(idx);
                const int64_t j = col0 + fr.col(idx);
                if (i >= P.res_rows || j >= P.res_cols)
                    continue;
                int32_t r = oz_engine_mod(h ? acc1[idx] : acc0[idx], q);
                uint8_t *p = plane + i + j * P.res_rows;
                if (c > 0) {
                    r += *p;
                    r -= r >= mq ? mq : 0;
                }
                *p = (uint8_t)r;
            }
            oz_fence_regs();
        }
    }
};

template <class Mode, class Sched>
__global__ void __launch_bounds__(Cfg::THREADS, 1)
    oz_sm90_engine_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                          const oz_engine_params P)
{
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    const uint32_t sraw = (uint32_t)__cvta_generic_to_shared(smem_raw);
    const uint32_t sA = (sraw + 1023) & ~1023u;
    const uint32_t sB = sA + Sched::STAGES * Sched::A_STAGE;
    const uint32_t bars = sB + Sched::STAGES * Cfg::B_STAGE;
    auto full = [&](int s) { return bars + 8 * s; };
    auto empty = [&](int s) { return bars + 8 * (Sched::STAGES + s); };
    /* ping-pong: consumer w may run its MMAs when turn(w) says the other's run is done */
    auto turn = [&](int w) { return bars + 8 * (2 * Sched::STAGES + w); };
    const int wg = threadIdx.x >> 7;

    constexpr int CL = Sched::CLUSTER;
    const uint32_t rank = CL > 1 ? oz_cluster_rank() : 0;

    if (threadIdx.x == 0) {
        for (int s = 0; s < Sched::STAGES; s++) {
            oz_mbar_init(full(s), 1);
            oz_mbar_init(empty(s), Sched::EMPTY_ARRIVALS);
        }
        oz_mbar_init(turn(0), 4);
        oz_mbar_init(turn(1), 4);
        oz_mbar_init_fence();
    }
    if (CL > 1)
        oz_cluster_sync(); /* the peers' barriers exist before any multicast or remote arrive */
    else
        __syncthreads();

    const int64_t nchunks = (P.kpad + Mode::KCHUNK - 1) / Mode::KCHUNK;
    auto kblocks = [&](int64_t c) {
        const int64_t left = P.kpad - c * Mode::KCHUNK;
        return (int)((left < Mode::KCHUNK ? left : Mode::KCHUNK) / Cfg::BLOCK_K);
    };
    /* The CTA's units: u0 + i nunits, over the cluster's units (a cluster
     * walks them together). Cooperative: one unit per step; ping-pong: units
     * i (consumer 0) and i + 1 (consumer 1) per step, their runs of stages
     * interleaved per (chunk, modulus). */
    constexpr int STEP = Sched::PP ? 2 : 1;
    const int64_t u0 = blockIdx.x / CL, nunits = gridDim.x / CL;

    if (wg == 0) { /* producer */
        oz_setmaxnreg_dec<Cfg::PRODUCER_REGS>();
        if (threadIdx.x != 0)
            return;
        oz_tma_prefetch_desc(&tmA);
        oz_tma_prefetch_desc(&tmB);
        int st = 0;
        uint32_t ph = 0;
        auto load_run = [&](int64_t t, int64_t c, int q) {
            int64_t b;
            int tm, tn;
            oz_engine_tile(P, t, b, tm, tn);
            tn = tn * CL + (int)rank;
            const int nk = kblocks(c);
            for (int kb = 0; kb < nk; kb++) {
                oz_mbar_wait(empty(st), ph ^ 1); /* released by the consumers of every CTA it feeds */
                oz_mbar_arrive_expect_tx(full(st), Sched::STAGE_BYTES);
                const int32_t k = (int32_t)(c * Mode::KCHUNK + kb * Cfg::BLOCK_K);
                if (CL > 1)
                    oz_tma_load_4d_multicast(sA + st * Sched::A_STAGE + rank * (Sched::A_BOX * Cfg::BLOCK_K), &tmA,
                                             full(st), k, tm * Sched::BLOCK_M + (int)rank * Sched::A_BOX, q, (int32_t)b,
                                             (uint16_t)((1u << CL) - 1));
                else
                    oz_tma_load_4d(sA + st * Sched::A_STAGE, &tmA, full(st), k, tm * Sched::BLOCK_M, q, (int32_t)b);
                oz_tma_load_4d(sB + st * Cfg::B_STAGE, &tmB, full(st), k, tn * Cfg::BLOCK_N, q, (int32_t)b);
                if (++st == Sched::STAGES) {
                    st = 0;
                    ph ^= 1;
                }
            }
        };
        for (int64_t t = u0; t < P.tiles_total; t += STEP * nunits) {
            const int64_t t1 = t + nunits;
            for (int64_t c = 0; c < nchunks; c++)
                for (int q = 0; q < P.nmod; q++) {
                    load_run(t, c, q);
                    if (Sched::PP && t1 < P.tiles_total)
                        load_run(t1, c, q);
                }
        }
        if (CL > 1) /* stay until every CTA's consumers released every stage: their arrives land here */
            for (int i = 0; i < Sched::STAGES; i++) {
                oz_mbar_wait(empty(st), ph ^ 1);
                if (++st == Sched::STAGES) {
                    st = 0;
                    ph ^= 1;
                }
            }
        return;
    }

    /* consumers */
    oz_setmaxnreg_inc<Cfg::CONSUMER_REGS>();
    const int cw = wg - 1, ctid = threadIdx.x - 128;
    const bool lane0 = (threadIdx.x & 31) == 0;
    int32_t acc0[Cfg::ACC], acc1[Cfg::ACC];
    int st = 0;
    uint32_t ph = 0;
    auto skip = [&](int n) { /* past n stages (the other consumer's run, or the one just used) */
        st += n;
        ph ^= (uint32_t)(st / Sched::STAGES) & 1u;
        st %= Sched::STAGES;
    };
    uint32_t turns = 0; /* runs this consumer has taken its turn for */
    const int a_rows = Sched::PP ? 0 : cw * Cfg::WG_M; /* this consumer's rows of the A stage */
    const uint32_t a_off0 = a_rows * Cfg::BLOCK_K, a_off1 = a_off0 + Cfg::MMA_M * Cfg::BLOCK_K;
    auto release = [&](int stage) { /* lane 0 of each warp, on the stage's empty barrier in every CTA */
        if (!lane0)
            return;
        if (CL > 1) {
#pragma unroll
            for (int r = 0; r < CL; r++)
                oz_mbar_arrive_cluster(oz_mapa(empty(stage), (uint32_t)r));
        } else {
            oz_mbar_arrive(empty(stage));
        }
    };
    for (int64_t t0 = u0; t0 < P.tiles_total; t0 += STEP * nunits) {
        const int64_t t1 = t0 + nunits;
        const bool has1 = Sched::PP && t1 < P.tiles_total;
        if (Sched::PP && cw == 1 && !has1)
            break;
        const int64_t t = Sched::PP && cw == 1 ? t1 : t0;
        int64_t b;
        int tm, tn;
        oz_engine_tile(P, t, b, tm, tn);
        tn = tn * CL + (int)rank;
        const int64_t row0 = (int64_t)tm * Sched::BLOCK_M + a_rows, col0 = (int64_t)tn * Cfg::BLOCK_N;
        for (int64_t c = 0; c < nchunks; c++) {
            const int nk = kblocks(c);
            for (int q = 0; q < P.nmod; q++) {
                if (Sched::PP && cw == 1)
                    skip(nk); /* consumer 0's run comes first */
                /* Ping-pong order: a consumer starts a run only after the other finished its
                 * previous one, so that it never waits on a stage more than one phase ahead
                 * (mbarrier parities alias) and its epilogue overlaps the other's MMAs.
                 * Consumer 0's first wait passes at once (parity of the phase before the
                 * first). In a last step without a tile for consumer 1, consumer 0 waits once,
                 * for consumer 1's last run, then has the ring to itself. */
                if (Sched::PP && (cw == 1 || has1 || (c == 0 && q == 0)))
                    oz_mbar_wait(turn(cw), (turns++ & 1u) ^ (cw == 0 ? 1u : 0u));
#pragma unroll
                for (int i = 0; i < Cfg::ACC; i++)
                    acc0[i] = acc1[i] = 0;
                int prev = -1;
                for (int kb = 0; kb < nk; kb++) {
                    oz_mbar_wait(full(st), ph);
                    const uint64_t da0 = oz_wgmma_desc(sA + st * Sched::A_STAGE + a_off0);
                    const uint64_t da1 = oz_wgmma_desc(sA + st * Sched::A_STAGE + a_off1);
                    const uint64_t db = oz_wgmma_desc(sB + st * Cfg::B_STAGE);
                    oz_wgmma_fence();
#pragma unroll
                    for (int ks = 0; ks < Cfg::BLOCK_K / Cfg::MMA_K; ks++) {
                        oz_wgmma_m64n128k32(acc0, da0 + 2 * ks, db + 2 * ks);
                        oz_wgmma_m64n128k32(acc1, da1 + 2 * ks, db + 2 * ks);
                    }
                    oz_wgmma_commit();
                    oz_wgmma_wait<1>(); /* the previous stage's MMAs are done: give it back */
                    if (prev >= 0)
                        release(prev);
                    prev = st;
                    skip(1);
                }
                oz_wgmma_wait<0>();
                if (prev >= 0)
                    release(prev);
                if (Sched::PP && (cw == 1 || has1) && lane0)
                    oz_mbar_arrive(turn(cw ^ 1)); /* this run's MMAs are done: the other's turn */
                if (Sched::PP && cw == 0 && has1)
                    skip(nk); /* consumer 1's run follows */
#pragma unroll
                for (int i = 0; i < Cfg::ACC; i++) { /* the results exist only now: no read may move above the wait */
                    asm volatile("" : "+r"(acc0[i])::"memory");
                    asm volatile("" : "+r"(acc1[i])::"memory");
                }
                Mode::modulus_done(P, acc0, acc1, q, c, nchunks, b, row0, col0, ctid);
            }
        }
    }
}

/* ---- host side ---- */

/* cuTensorMapEncodeTiled through the runtime's driver entry point: the
 * library links no libcuda. Looked up once. */
static PFN_cuTensorMapEncodeTiled_v12000 oz_encode_fn()
{
    static PFN_cuTensorMapEncodeTiled_v12000 fn;
    static volatile int done;
    if (!done) {
        void *p = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) ==
                cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fn = (PFN_cuTensorMapEncodeTiled_v12000)p;
        else
            (void)cudaGetLastError();
        done = 1;
    }
    return fn;
}

/* A 4-d map over residue planes: (K byte, logical row, modulus, batch item). */
static cudaError_t oz_make_tmap(CUtensorMap *map, const void *base, int64_t kpad, int64_t rows, int nmod,
                                int64_t group, int64_t item_bytes, int box_rows)
{
    PFN_cuTensorMapEncodeTiled_v12000 enc = oz_encode_fn();
    if (!enc)
        return cudaErrorNotSupported;
    cuuint64_t dims[4] = {(cuuint64_t)kpad, (cuuint64_t)rows, (cuuint64_t)nmod, (cuuint64_t)group};
    cuuint64_t strides[3] = {(cuuint64_t)kpad, (cuuint64_t)(rows * kpad), (cuuint64_t)item_bytes};
    cuuint32_t box[4] = {(cuuint32_t)Cfg::BLOCK_K, (cuuint32_t)box_rows, 1, 1};
    cuuint32_t estr[4] = {1, 1, 1, 1};
    CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, const_cast<void *>(base), dims, strides, box, estr,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

#define OZ_ENGINE_MAX_DEVICES 64

/* The schedule the launchers use. Measured on the H200 (BENCHMARKS.md runs
 * 15-17): cooperative 25.0 ms at 8192^3, ping-pong 26.2, cooperative in
 * clusters of 2 with A multicast 34.8; the other two stay in the template,
 * one typedef away, for the next round of tuning. */
typedef oz_engine_sched<false, 1> oz_sched;

/* SM count of the device, and the shared-memory attribute of the
 * instantiation raised once per device (nothing but launches inside a
 * capture after the first call). */
template <class Mode, class Sched>
static cudaError_t oz_engine_prepare(int dev, int *sms)
{
    static volatile int cached_sms[OZ_ENGINE_MAX_DEVICES];
    if (dev < OZ_ENGINE_MAX_DEVICES && cached_sms[dev]) {
        *sms = cached_sms[dev];
        return cudaSuccess;
    }
    cudaError_t e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess)
        return e;
    e = cudaFuncSetAttribute(oz_sm90_engine_kernel<Mode, Sched>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             Sched::SMEM_BYTES);
    if (e != cudaSuccess)
        return e;
    if (dev < OZ_ENGINE_MAX_DEVICES)
        cached_sms[dev] = *sms;
    return cudaSuccess;
}

/* Fills the tile counts from the logical rows and launches a persistent grid. */
template <class Mode, class Sched>
static cudaError_t oz_engine_launch_with(const CUtensorMap &ta, const CUtensorMap &tb, oz_engine_params &p,
                                         int64_t rows_a, int64_t rows_b, int64_t group, cudaStream_t s)
{
    int dev = 0, sms = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    e = oz_engine_prepare<Mode, Sched>(dev, &sms);
    if (e != cudaSuccess)
        return e;
    constexpr int CL = Sched::CLUSTER;
    p.tiles_m = (int32_t)((rows_a + Sched::BLOCK_M - 1) / Sched::BLOCK_M);
    const int64_t tiles_n = (rows_b + Cfg::BLOCK_N - 1) / Cfg::BLOCK_N;
    p.tiles_n = (int32_t)((tiles_n + CL - 1) / CL); /* units of CL tiles */
    p.tiles_total = (int64_t)p.tiles_m * p.tiles_n * group;
    if (p.tiles_total <= 0)
        return cudaSuccess;
    const int64_t per_cta = Sched::PP ? 2 : 1; /* ping-pong: two units in flight per CTA */
    int64_t clusters = (p.tiles_total + per_cta - 1) / per_cta;
    const int64_t max_clusters = (sms < Cfg::MAX_CTAS ? sms : Cfg::MAX_CTAS) / CL;
    clusters = clusters < max_clusters ? clusters : max_clusters;
    if (clusters < 1)
        return cudaErrorInvalidConfiguration;
    if (CL == 1) { /* a plain launch: a cluster attribute, even of 1, measured slower */
        oz_sm90_engine_kernel<Mode, Sched><<<(unsigned)clusters, Cfg::THREADS, Sched::SMEM_BYTES, s>>>(ta, tb, p);
        return cudaGetLastError();
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)(clusters * CL));
    cfg.blockDim = dim3(Cfg::THREADS);
    cfg.dynamicSmemBytes = Sched::SMEM_BYTES;
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = CL;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, oz_sm90_engine_kernel<Mode, Sched>, ta, tb, p);
}

template <class Mode>
static cudaError_t oz_engine_launch(const CUtensorMap &ta, const CUtensorMap &tb, oz_engine_params &p, int64_t rows_a,
                                    int64_t rows_b, int64_t group, cudaStream_t s)
{
    return oz_engine_launch_with<Mode, oz_sched>(ta, tb, p, rows_a, rows_b, group, s);
}

/* Whether this binary holds the engine for device dev (compute capability 9.0, sm_90a image). */
bool oz_engine_usable(int dev)
{
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    if (major != 9 || minor != 0 || !oz_encode_fn())
        return false;
    int optin = 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    if (optin < oz_sched::SMEM_BYTES)
        return false;
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, oz_sm90_engine_kernel<oz_mode_p22, oz_sched>) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return attr.binaryVersion == 90;
}

/* Tiles of a Phase 22 launch counted with 128-row tiles: at least as many
 * as any schedule's CTAs (the scratch bound). */
int64_t oz_engine_p22_tiles(int64_t mpad, int64_t npad, int64_t group)
{
    const int64_t bm = Cfg::WG_M;
    return ((2 * mpad + bm - 1) / bm) * ((2 * npad + Cfg::BLOCK_N - 1) / Cfg::BLOCK_N) * group;
}

int64_t oz_engine_p22_scratch_bytes(int64_t tiles_total)
{
    int64_t ctas = tiles_total < Cfg::MAX_CTAS ? tiles_total : Cfg::MAX_CTAS;
    return ctas * oz_engine_p22::SCRATCH_BYTES;
}

template <class Sched>
static cudaError_t oz_maps(CUtensorMap *ta, CUtensorMap *tb, const oz_operand_ws &a, const oz_operand_ws &b, int nmod,
                           int64_t group)
{
    cudaError_t e = oz_make_tmap(ta, a.plane(0, 0), a.kpad, a.plane_rows, nmod, group, a.slot_bytes, Sched::A_BOX);
    if (e != cudaSuccess)
        return e;
    return oz_make_tmap(tb, b.plane(0, 0), b.kpad, b.plane_rows, nmod, group, b.slot_bytes, Cfg::BLOCK_N);
}

static cudaError_t oz_maps_for_schedule(CUtensorMap *ta, CUtensorMap *tb, const oz_operand_ws &a,
                                        const oz_operand_ws &b, int nmod, int64_t group)
{
    return oz_maps<oz_sched>(ta, tb, a, b, nmod, group);
}

cudaError_t oz_launch_p22_engine(const oz_engine_p22_job &job, int64_t group, cudaStream_t s)
{
    CUtensorMap ta, tb;
    cudaError_t e = oz_maps_for_schedule(&ta, &tb, job.a, job.b, OZ_P22G_NMODULI, group);
    if (e != cudaSuccess)
        return e;
    oz_engine_params p = {};
    p.kpad = job.a.kpad;
    p.nmod = OZ_P22G_NMODULI;
    p.m = job.m;
    p.n = job.n;
    p.scale_a = job.scale_a;
    p.scale_b = job.scale_b;
    p.scale_stride_a = job.scale_stride_a;
    p.scale_stride_b = job.scale_stride_b;
    p.c = job.c;
    p.c_off = job.c_off;
    p.acc = job.acc;
    p.acc_off = job.acc_off;
    p.first = job.first;
    p.last = job.last;
    p.sc = job.sc;
    p.scratch = job.scratch;
    return oz_engine_launch<oz_mode_p22>(ta, tb, p, job.a.plane_rows, job.b.plane_rows, group, s);
}

cudaError_t oz_engine_residues(const oz_engine_residue_job &job, int64_t group, cudaStream_t s)
{
    if (job.nmod < 1 || job.nmod > OZ_ENGINE_NMODULI || job.a.kpad != job.b.kpad)
        return cudaErrorInvalidValue;
    CUtensorMap ta, tb;
    cudaError_t e = oz_maps_for_schedule(&ta, &tb, job.a, job.b, job.nmod, group);
    if (e != cudaSuccess)
        return e;
    oz_engine_params p = {};
    p.kpad = job.a.kpad;
    p.nmod = job.nmod;
    p.res = job.res;
    p.res_item_bytes = job.res_item_bytes;
    p.res_rows = job.a.plane_rows;
    p.res_cols = job.b.plane_rows;
    return oz_engine_launch<oz_mode_res>(ta, tb, p, job.a.plane_rows, job.b.plane_rows, group, s);
}
