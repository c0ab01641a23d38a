/* kernels/sm90_engine.cu: the sm_90a INT8 engine (TMA ring, warp-specialized, persistent, wgmma) with its two epilogues: fused Phase 22 CRT, and residue planes.
 *
 * Built for sm_90a only (meson: kernels_sm90). One kernel template; the mode
 * policy decides what happens each time a modulus's K range of a tile is
 * done, what the consumers do in the shadow of their MMAs, and the order of
 * the work (oz_engine_cfg in engine_cfg.h says how the work is split).
 *
 * Schedule: CTA x starts with work item x; the loads' walk (oz_feed: a
 * producer warpgroup's thread 0, or consumer thread 0 where the tile has no
 * producer warpgroup) takes each next item from the job's tickets (the items in flight stay a window of
 * consecutive items), or, without tickets, w + gridDim.x, and tells the
 * consumers through a slot per stage (the item whose first stage it is; -1:
 * done). An item is a tile (grouped
 * rasterization) and every modulus, or, where the mode says MODULUS_SLOWEST,
 * one modulus of a tile, all tiles of a modulus before the next; per item,
 * K chunks in ascending order; per chunk, its moduli in order; per modulus,
 * the K stages of the chunk. The int32 accumulators of a (tile,
 * chunk, modulus) are exact (|residue| <= 128, K chunk <= 65536) and are
 * reduced once. */
#include <cuda.h>
#include <cudaTypedefs.h>

#include "../crt/crt.h"
#include "../crt/oz2_auto.h"
#include "../crt/oz2_complex.h"
#include "../slicing/slice_fast.h" /* oz_fast_pack4 */
#include "block_plan.h"             /* oz_bp_res_tall */
#include "engine.h"
#include "engine_cfg.h"
#include "epilogue.cuh"
#include "res_layout.h"
#include "sm90_ptx.cuh"

typedef oz_engine_cfg Cfg;

/* The moduli of the planes, as data (crt/moduli.h, crt/oz2_complex.h): a
 * job's plane q has modulus entry qbase + q. Entries 0 .. 19 are the engine
 * moduli (the real modes); from OZ_EMOD_SPLIT on, the split moduli of the
 * complex path twice each (plane 2 q: the u operands of split modulus q,
 * 2 q + 1 its v operands; docs/ozaki2-complex.md). Per entry: m, 2^32 - m
 * (oz_acc_mod's neg_m), its magic and shift, and the accumulators' start. */
#define OZ_EMOD_SPLIT OZ_ENGINE_NMODULI
#define OZ_EMOD_ALL (OZ_ENGINE_NMODULI + 2 * OZ2Z_SPLIT_NMODULI)
struct oz_emod_tab {
    int32_t mod[OZ_EMOD_ALL];
    uint32_t neg[OZ_EMOD_ALL], magic[OZ_EMOD_ALL], shift[OZ_EMOD_ALL], off[OZ_EMOD_ALL];
};
#define OZ_EM_(i, m) (m),
#define OZ_EMS_(i, p, r, inv2r) (p),
static constexpr uint32_t kEngineModuli[OZ_ENGINE_NMODULI] = {OZ_ENGINE_MODULI(OZ_EM_)};
static constexpr uint32_t kSplitModuli[OZ2Z_SPLIT_NMODULI] = {OZ2Z_SPLIT_MODULI(OZ_EMS_)};
#undef OZ_EM_
#undef OZ_EMS_
static constexpr oz_emod_tab oz_make_emod_tab()
{
    oz_emod_tab t{};
    for (int e = 0; e < OZ_EMOD_ALL; e++) {
        const uint32_t m = e < OZ_EMOD_SPLIT ? kEngineModuli[e] : kSplitModuli[(e - OZ_EMOD_SPLIT) / 2];
        t.mod[e] = (int32_t)m;
        t.neg[e] = (uint32_t)(UINT64_C(4294967296) - m);
        t.magic[e] = OZ_ACC_MAGIC(m);
        t.shift[e] = OZ_ACC_SHIFT(m);
        t.off[e] = OZ_ACC_OFFSET(m);
    }
    return t;
}
static __constant__ oz_emod_tab c_em = oz_make_emod_tab();
constexpr bool oz_emod_ok()
{
    for (uint32_t m : kEngineModuli)
        if (m <= 128 || m > 256)
            return false;
    for (uint32_t m : kSplitModuli)
        if (m <= 2 || m > 256 || m % 2 == 0)
            return false;
    return true;
}
static_assert(oz_emod_ok(), "oz_acc_mod: engine moduli in (128, 256], split moduli odd in (2, 256)");
static_assert(oz_engine_res::KCHUNK <= 65536 && oz_engine_p22::KCHUNK <= 65536,
              "oz_acc_mod's offset holds the sums of K chunks of up to 65536");

struct oz_engine_params {
    int64_t kpad;                /* K bytes the job sums, a multiple of BLOCK_K */
    int64_t kbase;               /* the first of them in a plane row */
    int nmod;
    int qbase;                   /* plane q's modulus: entry qbase + q of c_em */
    int32_t tiles_m, tiles_n;    /* per batch item */
    int64_t tiles_total;
    int qsplit;                  /* 1: a work item is a tile, all moduli; nmod: (modulus, tile), modulus slowest */
    int64_t items;               /* tiles_total * qsplit */
    oz_p22_target t;             /* Phase 22 (oz_engine_p22_job) */
    char *scratch;               /* oz_engine_p22::SCRATCH_BYTES per CTA */
    /* residue planes */
    uint8_t *res;
    int64_t res_item_bytes, res_rows, res_cols;
    int res_accumulate; /* the planes hold an earlier slab's residues: add to them */
    unsigned long long *tickets; /* oz_engine_residue_job::tickets; NULL: a fixed round robin */
    const int *dev_nmod;         /* oz_engine_residue_job::dev_nmod (modulus-slowest modes only) */
    /* the estimate (oz_engine_est_job) */
    const unsigned long long *est_a1, *est_b1;
    const int32_t *est_ga, *est_gb;
    const oz2a_skip_pq *est_pa, *est_pb;
    uint32_t *est_g;
    int64_t est_ldg;
    int64_t est_m, est_n, est_k;
    int est_target;
    int *est_need;
    int est_acc;                 /* oz_engine_est_job::accumulate */
    int group_m;                 /* tile rows walked together: Cfg::group_rows(kpad) */
};

/* Tile t of the schedule: batch item, tile row, and tile column. */
__device__ __forceinline__ void oz_engine_tile(const oz_engine_params &P, int64_t t, int64_t &b, int &tm, int &tn)
{
    const int64_t per = (int64_t)P.tiles_m * P.tiles_n;
    b = t / per;
    const int64_t r = t - b * per;
    const int64_t gsz = (int64_t)P.group_m * P.tiles_n;
    const int64_t g = r / gsz;
    const int first = (int)(g * P.group_m);
    const int gm = min(P.tiles_m - first, P.group_m);
    const int64_t rr = r - g * gsz;
    tm = first + (int)(rr % gm);
    tn = (int)(rr / gm);
}

/* Work item w of the schedule: its tile, and the moduli [q0, q1) it runs. */
__device__ __forceinline__ void oz_engine_item(const oz_engine_params &P, int64_t w, int64_t &b, int &tm, int &tn,
                                               int &q0, int &q1)
{
    if (P.qsplit > 1) {
        q0 = (int)(w / P.tiles_total);
        q1 = q0 + 1;
        w -= (int64_t)q0 * P.tiles_total;
    } else {
        q0 = 0;
        q1 = P.nmod;
    }
    oz_engine_tile(P, w, b, tm, tn);
}

/* Row and column, in the consumer's 64 x 128 block, of accumulator idx
 * (wgmma m64nN layout: warp v, g = lane/4, t = lane%4) of consumer thread
 * ctid (its warpgroup's thread ctid % 128). */
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

/* Phase 22, per consumer thread. At the end of each modulus's run the
 * accumulators are reduced mod m_q and packed as bytes into the thread's
 * words of the CTA scratch. The CRT of a (tile, K chunk) is deferred to the
 * first run of the next chunk and done in the shadow of its MMAs (wgmma is
 * asynchronous: between issuing a stage and waiting for it the thread is
 * free): a unit = one pass of 4 elements (the 6 residues of each in one word
 * per modulus): X rebuilt by the CRT and added in the order of phase22.md
 * step 6 to the element's double accumulator, which after the last pass goes
 * to the scratch (next chunk), to acc (next slab), or through the alpha/beta
 * epilogue to C. A thread reads only words it wrote itself, so no barrier is
 * needed; units left when a chunk's first run is short are done before its
 * words are overwritten, the last chunk's after the mainloop. */
struct oz_mode_p22 {
    typedef oz_engine_cfg Cfg;
    typedef oz_engine_p22 M;
    static constexpr int KCHUNK = M::KCHUNK;
    static constexpr bool MODULUS_SLOWEST = false; /* the CRT needs every modulus of a tile in one CTA */
    static constexpr int UNITS = M::GROUPS * OZ_P22_NPASSES; /* per thread and chunk */
    static constexpr int WARM = 3; /* units whose inputs are on their way to L1 */

    const oz_engine_params &P;
    uint32_t *res;  /* this thread's words (word_of) */
    double *dacc;   /* this thread's double accumulators (dacc_of) */
    oz_frag fr;
    double alpha, beta;
    /* the pending (tile, chunk) */
    int unit; /* next unit; UNITS: none */
    int64_t pb, pi0, pj0;
    bool pmid, pend, plast, pfrom_acc; /* c > 0; last chunk of the slab; of the call; acc start */
    /* the next unit's inputs, loaded a unit ahead */
    uint32_t wn[M::NMOD];
    double dn[4];
    int32_t sn[4]; /* scale exponents: rows 0, 8 and columns 0, 1 of the next group (last chunk) */
    double d[4];
    int32_t sc[4];

    __device__ oz_mode_p22(const oz_engine_params &p, int ctid) : P(p), fr(ctid), unit(UNITS)
    {
        char *scr = P.scratch + (int64_t)blockIdx.x * M::SCRATCH_BYTES;
        res = (uint32_t *)scr + ctid;
        dacc = (double *)(scr + M::RES_BYTES) + ctid;
        P.t.sc.load(&alpha, &beta);
    }

    __device__ __forceinline__ void modulus_done(int32_t (&acc)[Cfg::ACC_ALL], int q, int64_t c, int64_t nchunks,
                                                 int64_t b, int64_t row0, int64_t col0)
    {
        if (q == 0)
            finish(); /* the previous chunk's words are about to be overwritten */
        const uint32_t neg = c_em.neg[q], magic = c_em.magic[q], sh = c_em.shift[q]; /* the accumulators started at c_em.off[q]: oz_acc_mod */
        auto r = [&](int a) { return oz_acc_mod((uint32_t)acc[a], neg, magic, sh); };
#pragma unroll
        for (int w = 0; w < M::WORDS; w++)
            word_of(q, w) = oz_fast_pack4(r(4 * w), r(4 * w + 1), r(4 * w + 2), r(4 * w + 3));
        if (q == M::NMOD - 1) { /* the chunk is complete: its CRT is pending */
            pb = b;
            pi0 = row0 / 2 + fr.row0; /* 128 logical rows per consumer: hi and lo of 64 real rows */
            pj0 = col0 / 2 + fr.col0;
            pmid = c > 0;
            pend = c == nchunks - 1;
            plast = pend && P.t.last;
            pfrom_acc = c == 0 && !P.t.first;
            unit = 0;
#pragma unroll
            for (int u = 1; u < WARM; u++)
                warm(u);
            prefetch(0);
        }
    }

    /* Unit u's words (and, at a group's first pass, its accumulators) into
     * L1 ahead of time: the words were written a chunk ago and sit in L2,
     * whose latency under the mainloop's traffic is longer than a stage. */
    __device__ __forceinline__ void warm(int u)
    {
        const int a = u / OZ_P22_NPASSES, ps = u % OZ_P22_NPASSES;
#pragma unroll
        for (int q = 0; q < M::NMOD; q++)
            oz_prefetch_l1(&word_of(q, a + M::GROUPS * ps));
        if (ps == 0 && pmid)
            oz_prefetch_l1(&dacc_of(4 * a));
    }

    /* This thread's word w of modulus q (pass ps of group a: w = a + GROUPS ps),
     * and its double accumulator of element idx. */
    __device__ __forceinline__ uint32_t &word_of(int q, int w) const { return res[(q * M::WORDS + w) * Cfg::CTHREADS]; }
    __device__ __forceinline__ double &dacc_of(int idx) const { return dacc[idx * Cfg::CTHREADS]; }

    /* Element bb of group a: row pi0 + 8 (bb >> 1), column pj0 + 8 a + (bb & 1). */
    __device__ __forceinline__ void prefetch(int u)
    {
        if (u + WARM < UNITS)
            warm(u + WARM);
        const int a = u / OZ_P22_NPASSES, ps = u % OZ_P22_NPASSES;
#pragma unroll
        for (int q = 0; q < M::NMOD; q++)
            wn[q] = word_of(q, a + M::GROUPS * ps);
        if (ps != 0)
            return;
#pragma unroll
        for (int bb = 0; bb < 4; bb++) {
            const int64_t i = pi0 + 8 * (bb >> 1), j = pj0 + 8 * a + (bb & 1);
            if (pmid)
                dn[bb] = dacc_of(4 * a + bb);
            else if (pfrom_acc && i < P.t.m && j < P.t.n)
                dn[bb] = P.t.acc.ptr(pb)[P.t.acc_off + i + j * P.t.acc.ldc];
            else
                dn[bb] = 0.0;
        }
        if (plast) {
            const int32_t *sA = P.t.scale_a + pb * P.t.scale_stride_a, *sB = P.t.scale_b + pb * P.t.scale_stride_b;
            const int64_t i = pi0, j = pj0 + 8 * a;
            sn[0] = i < P.t.m ? sA[i] : 0;
            sn[1] = i + 8 < P.t.m ? sA[i + 8] : 0;
            sn[2] = j < P.t.n ? sB[j] : 0;
            sn[3] = j + 1 < P.t.n ? sB[j + 1] : 0;
        }
    }

    __device__ __forceinline__ void do_unit()
    {
        const int a = unit / OZ_P22_NPASSES, ps = unit % OZ_P22_NPASSES;
        uint32_t w[M::NMOD];
#pragma unroll
        for (int q = 0; q < M::NMOD; q++)
            w[q] = wn[q];
        if (ps == 0) {
#pragma unroll
            for (int bb = 0; bb < 4; bb++) {
                d[bb] = dn[bb];
                sc[bb] = sn[bb];
            }
        }
        if (unit + 1 < UNITS)
            prefetch(unit + 1);
        const double scale = oz_p22_pass_scale(ps);
#pragma unroll
        for (int bb = 0; bb < 4; bb++)
            d[bb] = __dadd_rn(d[bb], __dmul_rn(oz_p22_rebuild(w, bb), scale));
        if (ps == OZ_P22_NPASSES - 1) {
#pragma unroll
            for (int bb = 0; bb < 4; bb++) {
                const int64_t i = pi0 + 8 * (bb >> 1), j = pj0 + 8 * a + (bb & 1);
                if (!pend) {
                    dacc_of(4 * a + bb) = d[bb];
                } else if (i < P.t.m && j < P.t.n) {
                    if (!plast) {
                        P.t.acc.ptr(pb)[P.t.acc_off + i + j * P.t.acc.ldc] = d[bb];
                    } else {
                        const int s = sc[bb >> 1], t = sc[2 + (bb & 1)];
                        if (s != OZ_SCALE_SPECIAL && t != OZ_SCALE_SPECIAL) /* else the fix-up writes it */
                            oz_store_epilogue(&P.t.c.ptr(pb)[P.t.c_off + i + j * P.t.c.ldc], alpha, beta,
                                              ldexp(d[bb], s + t), false);
                    }
                }
            }
        }
        unit++;
    }

    /* In the shadow of one stage's MMAs of a run of nk stages: enough units
     * that the pending chunk is done within the run. */
    __device__ __forceinline__ void shadow(int nk)
    {
        if (unit >= UNITS)
            return;
        const int per = (UNITS + nk - 1) / nk;
        for (int i = 0; i < per && unit < UNITS; i++)
            do_unit();
    }
    __device__ __forceinline__ void finish()
    {
        while (unit < UNITS)
            do_unit();
    }
};

/* Residue planes: R_q = acc mod m_q, added modulo m_q to the previous K
 * chunks' residue (and to the planes' where the job accumulates), stored as
 * bytes in the word layout of kernels/res_layout.h: each thread's four
 * accumulators 4 i + {0, 1, 2, 3} of an m64 block (rows 16 v + g + {0, 8},
 * columns 8 i + 2 t + {0, 1}) are one 32-bit word, whatever the tile shape. */
template <class C>
struct oz_mode_res {
    typedef C Cfg;
    static constexpr int KCHUNK = oz_engine_res::KCHUNK;
    /* all tiles of modulus 0, then of modulus 1, ...: the grouped raster's
     * panels of one modulus stay in L2 across waves (run 37: DRAM reads of
     * an 8192^3 ozaki2 call 20.2 -> 12.3 GB, 16384^3 6% faster) */
    static constexpr bool MODULUS_SLOWEST = true;
    static_assert(Cfg::MMA_M == 64 && Cfg::WG_M % OZ_RES_ROWS == 0 && Cfg::MMA_N % 8 == 0,
                  "a consumer's m64 blocks are whole row blocks of res_layout.h, its columns whole pairs");
    const oz_engine_params &P;
    oz_frag fr;
    int32_t wpos; /* this thread's word in a column pair's row block of 16: rows 16 v + g + {0, 8} */
    __device__ oz_mode_res(const oz_engine_params &p, int ctid) : P(p), fr(ctid)
    {
        wpos = 4 * (8 * (fr.row0 >> 4) + (fr.row0 & 7));
    }

    /* The residues of accumulators a0 + {0, 1, 2, 3} as one word: byte
     * 2 c + s is column parity c, row 8 s (accumulator a0 + c + 2 s). */
    __device__ __forceinline__ static uint32_t word_of(const int32_t (&acc)[Cfg::ACC_ALL], int a0, uint32_t neg,
                                                       uint32_t magic, uint32_t sh)
    {
        auto r = [&](int a) { return oz_acc_mod((uint32_t)acc[a], neg, magic, sh); };
        return oz_fast_pack4(r(a0), r(a0 + 2), r(a0 + 1), r(a0 + 3));
    }

    /* Thread's word i of block blk goes to column pair (col0 + fr.col0) / 2
     * + 4 i (columns col0 + fr.col(4 i) and the next: the same in every
     * block), row block (row0 + 64 blk) / 16: 2 res_rows bytes a column
     * pair, 8 res_rows bytes from word i to i + 1. Words past res_cols are
     * not written; a tile wholly inside and not accumulating (the common
     * case) takes a path without tests. */
    __device__ __forceinline__ void modulus_done(int32_t (&acc)[Cfg::ACC_ALL], int q, int64_t c, int64_t, int64_t b,
                                                 int64_t row0, int64_t col0)
    {
        if (row0 >= P.res_rows) /* res_rows is whole tiles' worth of 64 rows: all of this consumer's rows are beyond it */
            return;
        constexpr int WORDS = Cfg::MMA_N / 8;
        const int e = P.qbase + q;
        const uint32_t mq = (uint32_t)c_em.mod[e], neg = c_em.neg[e], magic = c_em.magic[e], sh = c_em.shift[e];
        const bool add = c > 0 || P.res_accumulate;
        const int64_t jb = col0 + fr.col0, left = P.res_cols - jb; /* jb even: its pair's words at jb res_rows */
        const int nw = left >= 8 * WORDS ? WORDS : left > 0 ? (int)((left + 7) / 8) : 0; /* words i with 8 i < left */
        const int64_t stride = 8 * P.res_rows;
        uint8_t *plane = P.res + b * P.res_item_bytes + (int64_t)q * P.res_rows * P.res_cols + jb * P.res_rows + wpos;
#pragma unroll
        for (int blk = 0; blk < Cfg::BLOCKS_PER_CONSUMER; blk++) {
            uint8_t *base = plane + 2 * (row0 + 64 * blk);
            if (nw == WORDS && !add) {
#pragma unroll
                for (int i = 0; i < WORDS; i++)
                    *(uint32_t *)(base + i * stride) = word_of(acc, blk * Cfg::ACC + 4 * i, neg, magic, sh);
                continue;
            }
#pragma unroll
            for (int i = 0; i < WORDS; i++) {
                if (i >= nw)
                    continue;
                uint32_t word = word_of(acc, blk * Cfg::ACC + 4 * i, neg, magic, sh);
                uint32_t *p = (uint32_t *)(base + i * stride);
                if (add) {
                    const uint32_t old = *p;
                    uint32_t sum = 0;
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        uint32_t r = ((word >> (8 * e)) & 255u) + ((old >> (8 * e)) & 255u);
                        r -= r >= mq ? mq : 0;
                        sum |= r << (8 * e);
                    }
                    word = sum;
                }
                *p = word;
            }
        }
    }
    __device__ __forceinline__ void shadow(int) {}
    __device__ __forceinline__ void finish() {}
};

/* The exact rule of the estimate's epilogue, out of line: it runs for the
 * few elements the skip test (oz2a_skip) cannot rule out, and keeping it out of
 * the fully unrolled loop below keeps the kernel small (its operands are
 * loaded there, not held in the loop's registers). */
__device__ __noinline__ int oz_est_elem_w(const unsigned long long *a1, const unsigned long long *b1,
                                          const int32_t *ga, const int32_t *gb, int64_t i, int64_t j, uint32_t G,
                                          int64_t k, int target)
{
    return oz2a_elem_w(a1[i], b1[j], ga[i], gb[j], G, k, target);
}

/* The automatic precision's estimate: each element's need from its exact
 * int32 sum (the accumulators start at OZ_ACC_OFFSET(m_0), taken off), the
 * row's and column's norm sums; the thread's max over its tiles, then the
 * warp's, into P.est_need once. An element costs the skip test on the
 * row's and column's (P, p), made once a call (a 16-byte load a column and
 * row), and the need's (c1, c2), once a tile. Every loop over the
 * accumulators is fully unrolled: an accumulator indexed at run time puts
 * the whole array in local memory, and ptxas then serializes the wgmma
 * pipeline (C7514). */
template <class C>
struct oz_mode_est {
    typedef C Cfg;
    static constexpr int KCHUNK = oz_engine_res::KCHUNK;
    static constexpr bool MODULUS_SLOWEST = true;
    static_assert(Cfg::MMA_M == 64 && Cfg::MMA_N % 8 == 0, "accumulators in m64 blocks of 8-column groups");
    const oz_engine_params &P;
    oz_frag fr;
    int need;
    __device__ oz_mode_est(const oz_engine_params &p, int ctid) : P(p), fr(ctid), need(OZ2A_W_NONE) {}

    /* (P, p) of row or column i of n: 0 past n (no need) */
    __device__ __forceinline__ static oz2a_skip_pq pq_at(const oz2a_skip_pq *v, int64_t i, int64_t n)
    {
        oz2a_skip_pq r = {0.0, 0.0};
        if (i < n) {
            const double2 t = __ldg((const double2 *)(v + i));
            r.P = t.x;
            r.p = t.y;
        }
        return r;
    }

    __device__ __forceinline__ void modulus_done(int32_t (&acc)[Cfg::ACC_ALL], int, int64_t, int64_t, int64_t,
                                                 int64_t row0, int64_t col0)
    {
        const uint32_t off = (uint32_t)c_em.off[0];
        /* the skip test for the need at the tile's start (a larger need later only
         * makes the test more cautious than it could be, never wrong) */
        const oz2a_skip_c cst = oz2a_skip_c_of(P.est_k, P.est_target, need);
#pragma unroll
        for (int blk = 0; blk < Cfg::BLOCKS_PER_CONSUMER; blk++) {
            int64_t i[2];
            oz2a_skip_row rs[2];
            bool live[2];
#pragma unroll
            for (int h = 0; h < 2; h++) { /* the thread's two rows of the block: fr.row(2 h) */
                i[h] = row0 + 64 * blk + fr.row(2 * h);
                const oz2a_skip_pq a = pq_at(P.est_pa, i[h], P.est_m);
                live[h] = a.P != 0.0;
                rs[h] = oz2a_skip_row_of(a, cst);
            }
            if (!live[0] && !live[1])
                continue;
#pragma unroll
            for (int wd = 0; wd < Cfg::MMA_N / 8; wd++) {
#pragma unroll
                for (int cc = 0; cc < 2; cc++) {
                    const int idx0 = 4 * wd + cc; /* fr.col(idx0) = col0 + 8 wd + 2 t + cc */
                    const int64_t j = col0 + fr.col(idx0);
                    const oz2a_skip_pq cb = pq_at(P.est_pb, j, P.est_n); /* once for both rows */
                    if (cb.P == 0.0)
                        continue;
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const uint32_t G = (uint32_t)acc[blk * Cfg::ACC + idx0 + 2 * h] - off;
                        /* the exact rule only where the element could raise the max */
                        if (!live[h] || oz2a_skip(&rs[h], &cb, G))
                            continue;
                        const int w = oz_est_elem_w(P.est_a1, P.est_b1, P.est_ga, P.est_gb, i[h], j, G, P.est_k,
                                                    P.est_target);
                        need = w > need ? w : need;
                    }
                }
            }
        }
    }
    __device__ __forceinline__ void shadow(int) {}
    __device__ __forceinline__ void finish()
    {
        const int wmax = __reduce_max_sync(0xffffffffu, need);
        if ((threadIdx.x & 31) == 0 && wmax != OZ2A_W_NONE)
            atomicMax(P.est_need, wmax);
    }
};

/* The estimate's sums stored (oz_engine_est_job::g set): G_ij = the exact
 * int32 sum (the accumulators start at OZ_ACC_OFFSET(m_0), taken off) as a
 * 32-bit word at g[i ldg + j] for i < est_m, j < ldg (columns j and j + 1
 * of a thread in one 8-byte store), the need taken by a pass of its own
 * (kernels/oz2_auto_estimate.cu). Its few registers let the 192-row tile
 * take it, whose consumers have 168 a thread (the need in the epilogue
 * did not fit them). */
template <class C>
struct oz_mode_est_store {
    typedef C Cfg;
    static constexpr int KCHUNK = oz_engine_res::KCHUNK;
    static constexpr bool MODULUS_SLOWEST = true;
    static_assert(Cfg::MMA_M == 64 && Cfg::MMA_N % 8 == 0, "accumulators in m64 blocks of 8-column groups");
    const oz_engine_params &P;
    oz_frag fr;
    __device__ oz_mode_est_store(const oz_engine_params &p, int ctid) : P(p), fr(ctid) {}

    __device__ __forceinline__ void modulus_done(int32_t (&acc)[Cfg::ACC_ALL], int, int64_t, int64_t, int64_t,
                                                 int64_t row0, int64_t col0)
    {
        const uint32_t off = (uint32_t)c_em.off[0];
        const int64_t jb = col0 + fr.col0, left = P.est_ldg - jb; /* column pair 8 wd: jb + 8 wd and the next */
#pragma unroll
        for (int blk = 0; blk < Cfg::BLOCKS_PER_CONSUMER; blk++) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int64_t i = row0 + 64 * blk + fr.row(2 * h);
                if (i >= P.est_m)
                    continue;
                uint2 *row = (uint2 *)(P.est_g + i * P.est_ldg + jb); /* jb and ldg even: 8-byte aligned */
#pragma unroll
                for (int wd = 0; wd < Cfg::MMA_N / 8; wd++)
                    if (8 * wd < left) { /* ldg even: the pair's second column too */
                        uint2 v = make_uint2((uint32_t)acc[blk * Cfg::ACC + 4 * wd + 2 * h] - off,
                                             (uint32_t)acc[blk * Cfg::ACC + 4 * wd + 1 + 2 * h] - off);
                        if (P.est_acc) { /* the rest of K onto the first part's sums (exact: K_E 127^2 < 2^31) */
                            const uint2 o = row[4 * wd];
                            v.x += o.x;
                            v.y += o.y;
                        }
                        row[4 * wd] = v;
                    }
            }
        }
    }
    __device__ __forceinline__ void shadow(int) {}
    __device__ __forceinline__ void finish() {}
};

/* The loads of the work items' stages, in the order the consumers take
 * them: items, then K chunks, moduli and K stages; past the last item, a
 * stage with no loads whose slot says that no item is left. With a producer
 * warpgroup its thread 0 walks them in nested loops without pause (run());
 * without one, consumer thread 0 walks the same order one stage a step
 * (step(): STAGES steps up front, then one for each stage its warp gives
 * back), the walk kept in shared memory between steps: the consumers'
 * registers hold their accumulators. */
template <class Mode>
struct oz_feed {
    typedef typename Mode::Cfg Cfg;
    int64_t w, next, b; /* item, the one after it (asked for at its start), its batch item */
    int64_t items;      /* P.items, or the items of the moduli the device plan keeps */
    int c, q, kb, q0, q1, tm, tn, st;
    uint32_t ph;
    int head, done; /* the stage is the item's first; the last stage was issued */

    __device__ static int kblocks(const oz_engine_params &P, int64_t c)
    {
        const int64_t left = P.kpad - c * Mode::KCHUNK;
        return (int)((left < Mode::KCHUNK ? left : Mode::KCHUNK) / Cfg::BLOCK_K);
    }
    __device__ static int64_t nchunks(const oz_engine_params &P) { return (P.kpad + Mode::KCHUNK - 1) / Mode::KCHUNK; }
    /* Item w's tile and moduli; the next item, asked for now: the answer is
     * back long before this item's loads are issued. */
    __device__ void start_item(const oz_engine_params &P)
    {
        c = 0;
        kb = 0;
        head = 1;
        if (w < items) {
            oz_engine_item(P, w, b, tm, tn, q0, q1);
            q = q0;
            next = P.tickets ? (int64_t)gridDim.x + (int64_t)atomicAdd(&P.tickets[0], 1ull) : w + gridDim.x;
        }
    }
    __device__ void begin(const oz_engine_params &P)
    {
        w = blockIdx.x;
        items = P.items;
        if (P.dev_nmod) { /* moduli slowest: the kept moduli's items come first */
            const int64_t kept = P.tiles_total * (int64_t)*P.dev_nmod;
            items = kept < items ? kept : items;
        }
        st = 0;
        ph = 0;
        done = 0;
        start_item(P);
    }
    /* The loads of stage (c, q, kb) of the item into ring stage st. */
    __device__ __forceinline__ void issue(const oz_engine_params &P, const CUtensorMap *tmA, const CUtensorMap *tmB,
                                          uint32_t sA, volatile int64_t *slot, int64_t c, int q, int kb)
    {
        const uint32_t sB = sA + Cfg::STAGES * Cfg::A_STAGE, bars = sB + Cfg::STAGES * Cfg::B_STAGE;
        const uint32_t full = bars + 8 * st, empty = bars + 8 * (Cfg::STAGES + st);
        oz_mbar_wait(empty, ph ^ 1);
        if (head) /* the consumers learn the item from its first stage */
            slot[st] = w;
        head = 0;
        oz_mbar_arrive_expect_tx(full, Cfg::STAGE_BYTES);
        const int32_t k = (int32_t)(P.kbase + c * Mode::KCHUNK + kb * Cfg::BLOCK_K);
        oz_tma_load_4d(sA + st * Cfg::A_STAGE, tmA, full, k, tm * Cfg::BLOCK_M, q, (int32_t)b);
        oz_tma_load_4d(sB + st * Cfg::B_STAGE, tmB, full, k, tn * Cfg::BLOCK_N, q, (int32_t)b);
        if (++st == Cfg::STAGES) {
            st = 0;
            ph ^= 1;
        }
    }
    /* Past the last item. Each CTA asks once past the end; the last to do so
     * puts the counters back to zero (the fences order every CTA's last
     * ticket before the reset). */
    __device__ void end(const oz_engine_params &P, uint32_t sA, volatile int64_t *slot)
    {
        const uint32_t bars = sA + Cfg::STAGES * Cfg::STAGE_BYTES;
        if (P.tickets) {
            __threadfence();
            if (atomicAdd(&P.tickets[1], 1ull) == gridDim.x - 1) {
                __threadfence();
                atomicExch(&P.tickets[0], 0ull);
                atomicExch(&P.tickets[1], 0ull);
            }
        }
        oz_mbar_wait(bars + 8 * (Cfg::STAGES + st), ph ^ 1);
        slot[st] = -1;
        oz_mbar_arrive(bars + 8 * st);
        done = 1;
    }
    /* The whole walk (a producer warpgroup's thread 0). */
    __device__ void run(const oz_engine_params &P, const CUtensorMap *tmA, const CUtensorMap *tmB, uint32_t sA,
                        volatile int64_t *slot)
    {
        const int64_t nc = nchunks(P);
        for (begin(P); w < items; w = next, start_item(P))
            for (int64_t cc = 0; cc < nc; cc++) {
                const int nk = kblocks(P, cc);
                for (int qq = q0; qq < q1; qq++)
                    for (int k = 0; k < nk; k++)
                        issue(P, tmA, tmB, sA, slot, cc, qq, k);
            }
        end(P, sA, slot);
    }
    /* One stage of the walk (consumer thread 0); nothing once it is done. */
    __device__ void step(const oz_engine_params &P, const CUtensorMap *tmA, const CUtensorMap *tmB, uint32_t sA,
                         volatile int64_t *slot)
    {
        if (done)
            return;
        if (w >= items) {
            end(P, sA, slot);
            return;
        }
        issue(P, tmA, tmB, sA, slot, c, q, kb);
        if (++kb == kblocks(P, c)) {
            kb = 0;
            if (++q == q1) {
                q = q0;
                if (++c == nchunks(P)) {
                    w = next;
                    start_item(P);
                }
            }
        }
    }
};

template <class Mode>
__global__ void __launch_bounds__(Mode::Cfg::THREADS, 1)
    oz_sm90_engine_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
                          const oz_engine_params P)
{
    typedef typename Mode::Cfg Cfg;
    typedef oz_feed<Mode> Feed;
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    const uint32_t sraw = (uint32_t)__cvta_generic_to_shared(smem_raw);
    const uint32_t sA = (sraw + 1023) & ~1023u;
    const uint32_t sB = sA + Cfg::STAGES * Cfg::A_STAGE;
    const uint32_t bars = sB + Cfg::STAGES * Cfg::B_STAGE;
    auto full = [&](int s) { return bars + 8 * s; };
    auto empty = [&](int s) { return bars + 8 * (Cfg::STAGES + s); };
    /* slot[s]: the work item whose first stage is stage s (-1: none left) */
    volatile int64_t *slot = (volatile int64_t *)(smem_raw + (bars + Cfg::BARRIERS * 8 - sraw));
    /* without a producer warpgroup: the walk between consumer thread 0's steps */
    Feed *feed_state = (Feed *)(smem_raw + (bars + Cfg::BARRIERS * 8 + Cfg::STAGES * 8 - sraw));
    static_assert(Cfg::PRODUCER_WG || sizeof(Feed) <= Cfg::FEED_STATE, "the walk fits its room");
    const int wg = threadIdx.x >> 7;

    if (threadIdx.x == 0) {
        for (int s = 0; s < Cfg::STAGES; s++) {
            oz_mbar_init(full(s), 1);
            oz_mbar_init(empty(s), Cfg::EMPTY_ARRIVALS);
        }
        oz_mbar_init_fence();
    }
    __syncthreads();

    const int64_t nchunks = Feed::nchunks(P);

    if (Cfg::PRODUCER_WG && wg == 0) { /* producer warpgroup */
        oz_setmaxnreg_dec<Cfg::PRODUCER_REGS>();
        if (threadIdx.x != 0)
            return;
        oz_tma_prefetch_desc(&tmA);
        oz_tma_prefetch_desc(&tmB);
        Feed f;
        f.run(P, &tmA, &tmB, sA, slot);
        return;
    }

    /* consumers */
    if (Cfg::PRODUCER_WG)
        oz_setmaxnreg_inc<Cfg::CONSUMER_REGS>();
    const int cw = wg - Cfg::PRODUCER_WG, ctid = threadIdx.x - 128 * Cfg::PRODUCER_WG;
    const bool lane0 = (threadIdx.x & 31) == 0;
    const bool feeder = !Cfg::PRODUCER_WG && threadIdx.x == 0;
    /* the feeder's step: one stage's loads, after its warp gave a stage back */
    auto feed_one = [&]() { feed_state->step(P, &tmA, &tmB, sA, slot); };
    if (feeder) {
        oz_tma_prefetch_desc(&tmA);
        oz_tma_prefetch_desc(&tmB);
        feed_state->begin(P);
        for (int s = 0; s < Cfg::STAGES; s++)
            feed_one();
    }
    int32_t acc[Cfg::ACC_ALL]; /* m64 block i at [i ACC, (i + 1) ACC) */
    int st = 0;
    uint32_t ph = 0;
    const uint32_t a_off = cw * Cfg::WG_M * Cfg::BLOCK_K; /* block i: + i MMA_M BLOCK_K */
    Mode mode(P, ctid);
    for (;;) {
        oz_mbar_wait(full(st), ph); /* the item's first stage (waited for again below: it stays complete) */
        const int64_t w = slot[st];
        if (w < 0)
            break;
        int64_t b;
        int tm, tn, q0, q1;
        oz_engine_item(P, w, b, tm, tn, q0, q1);
        const int64_t row0 = (int64_t)tm * Cfg::BLOCK_M + cw * Cfg::WG_M, col0 = (int64_t)tn * Cfg::BLOCK_N;
        for (int64_t c = 0; c < nchunks; c++) {
            const int nk = Feed::kblocks(P, c);
            for (int q = q0; q < q1; q++) {
                const int32_t acc0 = (int32_t)c_em.off[P.qbase + q]; /* a multiple of m_q: the modes reduce with oz_acc_mod */
#pragma unroll
                for (int i = 0; i < Cfg::ACC_ALL; i++)
                    acc[i] = acc0;
                int prev = -1;
                for (int kb = 0; kb < nk; kb++) {
                    oz_mbar_wait(full(st), ph);
                    const uint64_t da = oz_wgmma_desc(sA + st * Cfg::A_STAGE + a_off);
                    const uint64_t db = oz_wgmma_desc(sB + st * Cfg::B_STAGE);
                    oz_wgmma_fence();
#pragma unroll
                    for (int ks = 0; ks < Cfg::BLOCK_K / Cfg::MMA_K; ks++) {
#pragma unroll
                        for (int i = 0; i < Cfg::BLOCKS_PER_CONSUMER; i++) {
                            /* block i's A rows: + i MMA_M BLOCK_K bytes, >> 4 in the descriptor */
                            const uint64_t dai = da + 2 * ks + i * (Cfg::MMA_M * Cfg::BLOCK_K >> 4);
                            oz_wgmma_s8<Cfg::MMA_N>(acc + i * Cfg::ACC, dai, db + 2 * ks);
                        }
                    }
                    oz_wgmma_commit();
                    mode.shadow(nk);    /* while the tensor cores run this stage */
                    oz_wgmma_wait<1>(); /* the previous stage's MMAs are done: give it back */
                    if (prev >= 0 && lane0)
                        oz_mbar_arrive(empty(prev));
                    if (prev >= 0 && feeder)
                        feed_one();
                    prev = st;
                    if (++st == Cfg::STAGES) {
                        st = 0;
                        ph ^= 1;
                    }
                }
                oz_wgmma_wait<0>();
                if (prev >= 0 && lane0)
                    oz_mbar_arrive(empty(prev));
                if (prev >= 0 && feeder)
                    feed_one();
#pragma unroll
                for (int i = 0; i < Cfg::ACC_ALL; i++) /* the results exist only now: no read may move above the wait */
                    asm volatile("" : "+r"(acc[i])::"memory");
                mode.modulus_done(acc, q, c, nchunks, b, row0, col0);
            }
        }
    }
    mode.finish();
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

/* SM count of the device, and the shared-memory attribute of the
 * instantiation raised once per device (nothing but launches inside a
 * capture after the first call). */
template <class Mode>
static cudaError_t oz_engine_prepare(int dev, int *sms)
{
    typedef typename Mode::Cfg Cfg;
    static volatile int cached_sms[OZ_ENGINE_MAX_DEVICES];
    if (dev < OZ_ENGINE_MAX_DEVICES && cached_sms[dev]) {
        *sms = cached_sms[dev];
        return cudaSuccess;
    }
    cudaError_t e = cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess)
        return e;
    e = cudaFuncSetAttribute(oz_sm90_engine_kernel<Mode>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             Cfg::SMEM_BYTES);
    if (e != cudaSuccess)
        return e;
    if (dev < OZ_ENGINE_MAX_DEVICES)
        cached_sms[dev] = *sms;
    return cudaSuccess;
}

/* Fills the tile counts from the logical rows and launches a persistent grid. */
template <class Mode>
static cudaError_t oz_engine_launch(const CUtensorMap &ta, const CUtensorMap &tb, oz_engine_params &p, int64_t rows_a,
                                    int64_t rows_b, int64_t group, cudaStream_t s)
{
    typedef typename Mode::Cfg Cfg;
    int dev = 0, sms = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    e = oz_engine_prepare<Mode>(dev, &sms);
    if (e != cudaSuccess)
        return e;
    p.tiles_m = (int32_t)((rows_a + Cfg::BLOCK_M - 1) / Cfg::BLOCK_M);
    p.tiles_n = (int32_t)((rows_b + Cfg::BLOCK_N - 1) / Cfg::BLOCK_N);
    p.tiles_total = (int64_t)p.tiles_m * p.tiles_n * group;
    if (p.tiles_total <= 0)
        return cudaSuccess;
    p.group_m = Cfg::group_rows(p.kpad);
    p.qsplit = Mode::MODULUS_SLOWEST ? p.nmod : 1;
    p.items = p.tiles_total * p.qsplit;
    const int64_t max_ctas = sms < Cfg::MAX_CTAS ? sms : Cfg::MAX_CTAS;
    const int64_t ctas = p.items < max_ctas ? p.items : max_ctas;
    if (ctas < 1)
        return cudaErrorInvalidConfiguration;
    oz_sm90_engine_kernel<Mode><<<(unsigned)ctas, Cfg::THREADS, Cfg::SMEM_BYTES, s>>>(ta, tb, p);
    return cudaGetLastError();
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
    const int need = oz_engine_cfg::SMEM_BYTES > oz_engine_cfg_res3::SMEM_BYTES ? oz_engine_cfg::SMEM_BYTES
                                                                                 : oz_engine_cfg_res3::SMEM_BYTES;
    static_assert(oz_engine_cfg_res3::SMEM_BYTES >= oz_engine_cfg_res::SMEM_BYTES, "the largest residue tile");
    if (optin < need)
        return false;
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, oz_sm90_engine_kernel<oz_mode_p22>) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    if (attr.binaryVersion != 90)
        return false;
    /* Every instantiation prepared now, at the device's first use (its
     * callers ask once per device): inside a stream capture nothing but
     * launches follows, whichever tile a later call takes first. */
    int sms = 0;
    if (oz_engine_prepare<oz_mode_p22>(dev, &sms) != cudaSuccess ||
        oz_engine_prepare<oz_mode_res<oz_engine_cfg_res>>(dev, &sms) != cudaSuccess ||
        oz_engine_prepare<oz_mode_res<oz_engine_cfg_res3>>(dev, &sms) != cudaSuccess ||
        oz_engine_prepare<oz_mode_est<oz_engine_cfg_res>>(dev, &sms) != cudaSuccess ||
        oz_engine_prepare<oz_mode_est_store<oz_engine_cfg_res>>(dev, &sms) != cudaSuccess ||
        oz_engine_prepare<oz_mode_est_store<oz_engine_cfg_res3>>(dev, &sms) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return true;
}

/* Tiles of a Phase 22 launch (the scratch bound: at most one CTA per tile). */
int64_t oz_engine_p22_tiles(int64_t mpad, int64_t npad, int64_t group)
{
    const int64_t bm = Cfg::BLOCK_M;
    return ((2 * mpad + bm - 1) / bm) * ((2 * npad + Cfg::BLOCK_N - 1) / Cfg::BLOCK_N) * group;
}

int64_t oz_engine_p22_scratch_bytes(int64_t tiles_total)
{
    int64_t ctas = tiles_total < Cfg::MAX_CTAS ? tiles_total : Cfg::MAX_CTAS;
    return ctas * oz_engine_p22::SCRATCH_BYTES;
}

template <class Cfg>
static cudaError_t oz_maps(CUtensorMap *ta, CUtensorMap *tb, const oz_operand_ws &a, const oz_operand_ws &b, int nmod,
                           int64_t group)
{
    cudaError_t e = oz_make_tmap(ta, a.plane(0, 0), a.kpad, a.plane_rows, nmod, group, a.slot_bytes, Cfg::BLOCK_M);
    if (e != cudaSuccess)
        return e;
    return oz_make_tmap(tb, b.plane(0, 0), b.kpad, b.plane_rows, nmod, group, b.slot_bytes, Cfg::BLOCK_N);
}

cudaError_t oz_launch_p22_engine(const oz_engine_p22_job &job, int64_t group, cudaStream_t s)
{
    CUtensorMap ta, tb;
    cudaError_t e = oz_maps<oz_mode_p22::Cfg>(&ta, &tb, job.a, job.b, OZ_P22G_NMODULI, group);
    if (e != cudaSuccess)
        return e;
    oz_engine_params p = {};
    p.kpad = job.a.kpad;
    p.nmod = OZ_P22G_NMODULI;
    p.t = job.t;
    p.scratch = job.scratch;
    return oz_engine_launch<oz_mode_p22>(ta, tb, p, job.a.plane_rows, job.b.plane_rows, group, s);
}

template <class Cfg>
static cudaError_t oz_residues_launch(const oz_engine_residue_job &job, int64_t group, cudaStream_t s)
{
    CUtensorMap ta, tb;
    cudaError_t e = oz_maps<Cfg>(&ta, &tb, job.a, job.b, job.nmod, group);
    if (e != cudaSuccess)
        return e;
    oz_engine_params p = {};
    p.kbase = job.k_begin;
    p.kpad = job.k_len ? job.k_len : job.a.kpad - job.k_begin;
    p.nmod = job.nmod;
    p.qbase = job.split ? OZ_EMOD_SPLIT : 0;
    p.res = job.res;
    p.res_item_bytes = job.res_item_bytes;
    p.res_rows = job.a.plane_rows;
    p.res_cols = job.b.plane_rows;
    p.res_accumulate = job.accumulate;
    p.tickets = job.tickets;
    p.dev_nmod = job.dev_nmod;
    return oz_engine_launch<oz_mode_res<Cfg>>(ta, tb, p, job.a.plane_rows, job.b.plane_rows, group, s);
}

cudaError_t oz_engine_residues(const oz_engine_residue_job &job, int64_t group, cudaStream_t s)
{
    if (job.nmod < 1 || job.nmod > (job.split ? 2 * OZ2Z_SPLIT_NMODULI : OZ_ENGINE_NMODULI) || job.a.kpad != job.b.kpad || job.k_begin < 0 ||
        job.k_len < 0 || job.k_begin % OZ_PAD_K || job.k_len % OZ_PAD_K ||
        job.k_begin + (job.k_len ? job.k_len : job.a.kpad - job.k_begin) > job.a.kpad ||
        (job.tile_rows != 0 && job.tile_rows != oz_engine_cfg_res::BLOCK_M &&
         job.tile_rows != oz_engine_cfg_res3::BLOCK_M))
        return cudaErrorInvalidValue;
    const bool tall = job.tile_rows ? job.tile_rows == oz_engine_cfg_res3::BLOCK_M : oz_bp_res_tall(job.a.plane_rows);
    return tall ? oz_residues_launch<oz_engine_cfg_res3>(job, group, s)
                : oz_residues_launch<oz_engine_cfg_res>(job, group, s);
}

cudaError_t oz_engine_estimate(const oz_engine_est_job &job, cudaStream_t s)
{
    /* The need in the epilogue: the 128-row tile, whose consumers have 232
     * registers a thread (on the 192-row one, 168, it spilled and took 1.58
     * ms against 1.28 at 8192^3: BENCHMARKS.md 2026-12-02, session 25). The
     * sums stored: the main product's tile rule. */
    const int64_t klen = job.k_len ? job.k_len : job.a.kpad - job.k_begin;
    if (job.a.kpad != job.b.kpad || job.a.kpad > oz_engine_res::KCHUNK || job.a.kpad % OZ_PAD_K || job.a.kpad <= 0 ||
        (job.g && (job.ldg < job.n || job.ldg % 2)) || job.k_begin < 0 || job.k_begin % OZ_PAD_K || klen <= 0 ||
        klen % OZ_PAD_K || job.k_begin + klen > job.a.kpad || (job.accumulate && !job.g))
        return cudaErrorInvalidValue;
    const bool tall = job.g && oz_bp_res_tall(job.a.plane_rows);
    CUtensorMap ta, tb;
    cudaError_t e = tall ? oz_maps<oz_engine_cfg_res3>(&ta, &tb, job.a, job.b, 1, 1)
                         : oz_maps<oz_engine_cfg_res>(&ta, &tb, job.a, job.b, 1, 1);
    if (e != cudaSuccess)
        return e;
    oz_engine_params p = {};
    p.kbase = job.k_begin;
    p.kpad = klen;
    p.nmod = 1;
    p.tickets = job.tickets;
    p.dev_nmod = job.run; /* one modulus: *run items of each tile, 1 or 0 */
    p.est_acc = job.accumulate;
    p.est_a1 = job.a1;
    p.est_b1 = job.b1;
    p.est_ga = job.ga;
    p.est_gb = job.gb;
    p.est_pa = job.pa;
    p.est_pb = job.pb;
    p.est_g = job.g;
    p.est_ldg = job.ldg;
    p.est_m = job.m;
    p.est_n = job.n;
    p.est_k = job.k;
    p.est_target = job.target;
    p.est_need = job.need;
    const int64_t ra = job.a.plane_rows, rb = job.b.plane_rows;
    if (job.g)
        return tall ? oz_engine_launch<oz_mode_est_store<oz_engine_cfg_res3>>(ta, tb, p, ra, rb, 1, s)
                    : oz_engine_launch<oz_mode_est_store<oz_engine_cfg_res>>(ta, tb, p, ra, rb, 1, s);
    if (!job.ga || !job.gb || !job.pa || !job.pb)
        return cudaErrorInvalidValue;
    return oz_engine_launch<oz_mode_est<oz_engine_cfg_res>>(ta, tb, p, ra, rb, 1, s);
}
