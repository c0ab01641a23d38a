/* kernels/block_plan.h: how the sm_90a engine paths (Phase 22, ozaki2) cut a call into blocks of C and slabs of K so that their workspace fits a budget, and that workspace's layout (plain C, host only: tests/unit/test_block_plan.c runs it on the CPU).
 *
 * The workspace holds, per batch item, the int8 residue planes of op(A) and
 * op(B) (res_bytes per row and byte of K: Phase 22's 6 moduli x hi and lo,
 * ozaki2's N moduli), their scales and special flags, what a block of C
 * keeps (out_bytes per element: ozaki2's N residue planes of the product),
 * and after the items the engine's scratch (Phase 22's). Residues of all of
 * K take res_bytes (Mpad + Npad) Kpad bytes, about 6 GiB at 16384^3 for
 * either mode. A plan bounds that: C is cut into blocks of mb x nb, K into
 * slabs of ks (a multiple of OZ_P22_KCHUNK, so that a slab's chunks are the
 * call's chunks: phase22.md step 6), and only one block's residues over one
 * slab are held at a time. From one slab to the next, Phase 22 carries its
 * double accumulators (step 6) through an mb x nb buffer (acc_bytes per
 * element), or through C itself when C is not read (beta == 0 known on the
 * host); ozaki2 adds each slab's residues of the product to its planes
 * (modulo each modulus). Scales and special flags stay whole (the scale of
 * a row is the max over all its K).
 *
 * What a plan costs: the residues of A are computed once per column block
 * (ceil(n / nb) times), those of B once per row block (ceil(m / mb) times;
 * once where the path keeps them, b_once, and C's columns are whole and K is
 * one slab: then row blocks cost nothing more), and every slab boundary
 * writes and reads slab_bytes per element of C. */
#ifndef OZCRT_KERNELS_P22_PLAN_H
#define OZCRT_KERNELS_P22_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "../crt/moduli.h"
#include "../slicing/slicing.h"
#include "tiles.h"

/* Batch items per launch at most (the grid's z dimension). */
#define OZ_BP_MAX_GROUP 65535
/* The workspace the path asks for at most, unless its least need is more:
 * the larger of 1 GiB and a quarter of the call's operand bytes. */
#define OZ_BP_MIN_BUDGET ((int64_t)1 << 30)

/* A slot's special area: the special flags of op(A) and op(B) (an int32
 * each), then the sm_90a engine's two tile-scheduler counters (ozaki2,
 * engine.h); the first OZ_BP_SPECIAL_USED bytes are zeroed per call. */
#define OZ_BP_SPECIAL_AREA 256
#define OZ_BP_TICKETS_OFF 8
#define OZ_BP_SPECIAL_USED 24

/* One call as the planner sees it. */
typedef struct oz_bp_call {
    int64_t m, n, k, batch; /* all >= 1 */
    int c_unread;           /* beta == 0 known on the host: C may hold the accumulators */
    /* The engine's scratch bytes for a launch over blocks of mpad x npad
     * padded rows and `group` batch items (engine.h; a model in the CPU
     * test); NULL: none. */
    int64_t (*scratch)(int64_t mpad, int64_t npad, int64_t group);
    int res_bytes;  /* residue bytes per operand row and byte of K */
    int out_bytes;  /* bytes per element of a block of C held in the slot */
    int acc_bytes;  /* bytes per element of the accumulators between slabs where C cannot hold them (0: none needed) */
    int slab_bytes; /* bytes read and written per element of C at a slab boundary */
    int64_t carry_k; /* > 0: accumulators carry across K chunks of this size even within a slab (Phase 22 unfused) */
    int b_once;      /* B's residues made once for all row blocks when nb covers n and ks covers k (ozaki2) */
} oz_bp_call;

/* The calls of the two modes. Phase 22 (6 moduli, hi and lo; double
 * accumulators between slabs) fused: the engine's epilogue rebuilds and adds
 * each chunk's passes, with its scratch; unfused: per K chunk the residue
 * planes of its four passes, 6 x 2 x 2 bytes per element of C, added to the
 * double accumulators by the CRT kernel, so the accumulators carry across
 * chunks. ozaki2 with n moduli: its product's residue planes carry the
 * slabs. */
static inline oz_bp_call oz_bp_call_p22_fused(int64_t m, int64_t n, int64_t k, int64_t batch, int c_unread,
                                              int64_t (*scratch)(int64_t, int64_t, int64_t))
{
    oz_bp_call c = {m, n, k, batch, c_unread, scratch, 2 * OZ_P22G_NMODULI, 0, 8, 16, 0, 0};
    return c;
}
static inline oz_bp_call oz_bp_call_p22_unfused(int64_t m, int64_t n, int64_t k, int64_t batch, int c_unread)
{
    oz_bp_call c = {m,  n, k, batch, c_unread, (int64_t(*)(int64_t, int64_t, int64_t))0, 2 * OZ_P22G_NMODULI,
                    4 * OZ_P22G_NMODULI, 8, 16, OZ_P22_KCHUNK, 0};
    return c;
}
static inline oz_bp_call oz_bp_call_oz2(int64_t m, int64_t n, int64_t k, int64_t batch, int nmod)
{
    oz_bp_call c = {m, n, k, batch, 0, (int64_t(*)(int64_t, int64_t, int64_t))0, nmod, nmod, 0, 2 * nmod, 0, 1};
    return c;
}

/* Phase 22 on the engine, fused or unfused: 1 for unfused. The fused
 * kernel's items are `tiles` tiles with all 6 moduli and 4 passes each (few,
 * long, the same time each, on a persistent grid of at most one CTA an SM);
 * where they fill less than OZ_BP_P22_FUSED_MIN_FILL_PCT percent of the SM
 * slots of the waves they take (ceil(tiles / sms) waves), the unfused path's
 * items (a tile of one modulus's 4-pass GEMM over one K chunk: 6x as many,
 * dealt by the tickets) fill the machine instead; they cost ~2-11% more
 * where the fused waves are full. Measured under the shim (BENCHMARKS.md
 * session 9, calls 3-4, H200, 18 shapes from 768^3 to 3328^3): fused faster
 * at every fill of 0.97-0.99, unfused faster at every fill of 0.55-0.93
 * (by 3% at 0.93, 3328^3, and 0.92, 2816^3; 6% at 0.87; 13% at 0.73). The
 * rule is only used below 12 waves (the measured range, up to 11 waves):
 * larger calls stay fused, where the unfused path's residue planes would be
 * cut by the workspace bound into blocks (slower, session 8). sms <= 0
 * (unknown): fused. */
#define OZ_BP_P22_FUSED_MIN_FILL_PCT 95
#define OZ_BP_P22_RULE_WAVES 12
static inline int oz_bp_p22_unfused(int64_t tiles, int64_t sms)
{
    if (sms <= 0 || tiles >= OZ_BP_P22_RULE_WAVES * sms)
        return 0;
    const int64_t slots = (tiles + sms - 1) / sms * sms;
    return tiles * 100 < (int64_t)OZ_BP_P22_FUSED_MIN_FILL_PCT * slots;
}

/* A plan and its workspace layout. Residues of A at offset 0 of a slot. */
typedef struct oz_bp_plan {
    int64_t group;    /* batch items per step; > 1 only when whole items fit */
    int64_t mb, nb;   /* block rows / columns: multiples of OZ_PAD_ROWS_A / _B, at most Mpad / Npad */
    int64_t ks;       /* slab K: a multiple of OZ_P22_KCHUNK below k, or k (one slab) */
    int acc_in_c;     /* several slabs, and their accumulators live in C */
    int acc_in_ws;    /* several slabs, accumulators in the slot's mb x nb doubles at off_acc */
    int64_t Mpad, Npad;
    int64_t off_res_b, off_scale_a, off_scale_b, off_special, off_acc, off_out, slot_bytes;
    int64_t off_scratch; /* after `group` slots */
    int64_t bytes;       /* all of it */
} oz_bp_plan;

static inline int64_t oz_bp_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
/* A workspace size as a plan's budget (size_t may exceed int64_t). */
static inline int64_t oz_bp_budget_of(size_t bytes) { return bytes < (size_t)INT64_MAX ? (int64_t)bytes : INT64_MAX; }
static inline int64_t oz_bp_rup(int64_t x, int64_t to) { return oz_bp_cdiv(x, to) * to; }
static inline int64_t oz_bp_a256(int64_t x) { return oz_bp_rup(x, 256); }

/* The residue mode's tile on the sm_90a engine: OZ_BP_RES_TALL_ROWS rows of
 * A (engine_cfg.h: oz_engine_cfg_res3, three consumers) where its last tile
 * row's padding is at most OZ_BP_RES_TALL_MAX_PAD_PCT percent of A's rows,
 * else OZ_PAD_ROWS_A (oz_engine_cfg_res). BENCHMARKS.md session 18: 192 x 256
 * saves 0.8-2% at 8192^3 to 16384^3 (0.8% padding) and 3% at 12288^3 (none),
 * and loses 1.7% at 4096^3 (3.1%). */
#define OZ_BP_RES_TALL_ROWS 192
#define OZ_BP_RES_TALL_MAX_PAD_PCT 1
static inline int oz_bp_res_tall(int64_t rows)
{
    const int64_t pad = oz_bp_rup(rows, OZ_BP_RES_TALL_ROWS) - rows;
    return rows > 0 && pad * 100 <= (int64_t)OZ_BP_RES_TALL_MAX_PAD_PCT * rows;
}

/* Blocks along a dimension of `len` with blocks of `blk`. */
static inline int64_t oz_bp_count(int64_t len, int64_t blk) { return oz_bp_cdiv(len, blk); }

/* The smallest multiple of `unit` that cuts `len` into as many pieces as
 * pieces of `blk` do (the same count, less memory). */
static inline int64_t oz_bp_balance(int64_t len, int64_t blk, int64_t unit)
{
    return oz_bp_rup(oz_bp_cdiv(len, oz_bp_count(len, blk)), unit);
}

/* Fills p's layout for p->group, mb, nb, ks. */
static inline void oz_bp_plan_layout(const oz_bp_call *c, oz_bp_plan *p)
{
    const int64_t kpad = oz_bp_rup(p->ks, OZ_PAD_K);
    const int slabs = p->ks < c->k || (c->carry_k > 0 && c->k > c->carry_k); /* accumulators carried */
    p->Mpad = oz_bp_rup(c->m, OZ_PAD_ROWS_A);
    p->Npad = oz_bp_rup(c->n, OZ_PAD_ROWS_B);
    p->acc_in_c = slabs && c->acc_bytes && c->c_unread;
    p->acc_in_ws = slabs && c->acc_bytes && !c->c_unread;
    p->off_res_b = oz_bp_a256((int64_t)c->res_bytes * p->mb * kpad);
    p->off_scale_a = p->off_res_b + oz_bp_a256((int64_t)c->res_bytes * p->nb * kpad);
    p->off_scale_b = p->off_scale_a + oz_bp_a256(4 * p->Mpad);
    p->off_special = p->off_scale_b + oz_bp_a256(4 * p->Npad);
    p->off_acc = p->off_special + OZ_BP_SPECIAL_AREA;
    p->off_out = p->off_acc + (p->acc_in_ws ? oz_bp_a256((int64_t)c->acc_bytes * p->mb * p->nb) : 0);
    p->slot_bytes = p->off_out + oz_bp_a256((int64_t)c->out_bytes * p->mb * p->nb);
    p->off_scratch = p->slot_bytes * p->group;
    p->bytes = p->off_scratch + (c->scratch ? oz_bp_a256(c->scratch(p->mb, p->nb, p->group)) : 0);
}

static inline oz_bp_plan oz_bp_plan_of(const oz_bp_call *c, int64_t group, int64_t mb, int64_t nb, int64_t ks)
{
    oz_bp_plan p;
    p.group = group;
    p.mb = mb;
    p.nb = nb;
    p.ks = ks;
    oz_bp_plan_layout(c, &p);
    return p;
}

/* Bytes of work the plan adds to the call, per batch item (header comment):
 * residue computations (8 bytes read, res_bytes written per element) and
 * the round trips between slabs. */
static inline double oz_bp_plan_cost(const oz_bp_call *c, const oz_bp_plan *p)
{
    const double m = (double)c->m, n = (double)c->n, k = (double)c->k;
    const double per_elem = 8.0 + (double)c->res_bytes;
    const int b_kept = c->b_once && p->nb >= c->n && p->ks >= c->k;
    const double res =
        per_elem * k * (m * (double)oz_bp_count(c->n, p->nb) + n * (double)(b_kept ? 1 : oz_bp_count(c->m, p->mb)));
    return res + (double)c->slab_bytes * m * n * (double)(oz_bp_count(c->k, p->ks) - 1);
}

/* The bound B: max(1 GiB, 0.25 x 8 (mk + kn + mn) x batch). */
static inline int64_t oz_bp_budget(const oz_bp_call *c)
{
    const double ops = 8.0 * ((double)c->m * (double)c->k + (double)c->k * (double)c->n + (double)c->m * (double)c->n) *
                       (double)c->batch;
    const double q = 0.25 * ops;
    if (q >= 0x1p62)
        return INT64_C(1) << 62;
    return q > (double)OZ_BP_MIN_BUDGET ? (int64_t)q : OZ_BP_MIN_BUDGET;
}

/* Slab candidate i, largest first: 0 is all of K; i >= 1 the slab of the
 * i-th largest multiple of OZ_P22_KCHUNK below k, balanced; 0 past the last. */
static inline int64_t oz_bp_slab(const oz_bp_call *c, int i)
{
    if (i == 0)
        return c->k;
    const int64_t ks = ((c->k - 1) / OZ_P22_KCHUNK - (i - 1)) * OZ_P22_KCHUNK;
    return ks >= OZ_P22_KCHUNK ? oz_bp_balance(c->k, ks, OZ_P22_KCHUNK) : 0;
}

/* The smallest workable plan: one block of OZ_PAD_ROWS_A x OZ_PAD_ROWS_B,
 * one chunk of K (or all of it when that is smaller). */
static inline oz_bp_plan oz_bp_plan_min(const oz_bp_call *c)
{
    oz_bp_plan p = oz_bp_plan_of(c, 1, OZ_PAD_ROWS_A, OZ_PAD_ROWS_B, c->k);
    if (c->k > OZ_P22_KCHUNK) {
        oz_bp_plan q = oz_bp_plan_of(c, 1, OZ_PAD_ROWS_A, OZ_PAD_ROWS_B, OZ_P22_KCHUNK);
        if (q.bytes < p.bytes)
            p = q;
    }
    return p;
}

/* The plan for a workspace of `budget` bytes; 0 when none fits. In order of
 * preference: (a) whole items, as many per group as fit (the batch halved
 * until a group fits); (b) one item at a time, C whole, the largest slab
 * that fits (not for b_once paths, whose row blocks over all of K may cost
 * less: (c) weighs them); (c) blocks of C too, the least cost (then the
 * fewest steps, then the fewest bytes). A plan that fits `budget` is chosen again for its
 * own bytes (the caller sizes the workspace from one and runs with it). */
static inline int oz_bp_plan_make(const oz_bp_call *c, int64_t budget, oz_bp_plan *out)
{
    const int64_t Mpad = oz_bp_rup(c->m, OZ_PAD_ROWS_A), Npad = oz_bp_rup(c->n, OZ_PAD_ROWS_B);
    /* (a) */
    int64_t g = c->batch < OZ_BP_MAX_GROUP ? c->batch : OZ_BP_MAX_GROUP;
    for (;;) {
        oz_bp_plan p = oz_bp_plan_of(c, g, Mpad, Npad, c->k);
        if (p.bytes <= budget) {
            *out = p;
            return 1;
        }
        if (g == 1)
            break;
        g = (g + 1) / 2;
    }
    /* (b) C whole, the largest slab that fits */
    for (int i = 1; !c->b_once && oz_bp_slab(c, i) > 0; i++) {
        oz_bp_plan p = oz_bp_plan_of(c, 1, Mpad, Npad, oz_bp_slab(c, i));
        if (p.bytes <= budget) {
            *out = p;
            return 1;
        }
    }
    /* (c) every slab and every count of row blocks; for each, the widest
     * column blocks that fit (the bytes grow with nb, the cost falls) */
    int found = 0;
    oz_bp_plan best = oz_bp_plan_min(c); /* a value; found says whether it is chosen */
    double best_cost = 0.0;
    int64_t best_steps = 0;
    for (int i = 0; oz_bp_slab(c, i) > 0; i++) {
        const int64_t ks = oz_bp_slab(c, i);
        int64_t prev_mb = 0;
        for (int64_t rows = 1; rows <= Mpad / OZ_PAD_ROWS_A; rows++) {
            const int64_t mb = oz_bp_balance(c->m, oz_bp_cdiv(c->m, rows), OZ_PAD_ROWS_A);
            if (mb == prev_mb)
                continue;
            prev_mb = mb;
            /* the largest nb, in units of OZ_PAD_ROWS_B, that fits: lo fits (0: none), hi + 1 does not */
            int64_t lo = 0, hi = Npad / OZ_PAD_ROWS_B;
            while (lo < hi) {
                const int64_t mid = (lo + hi + 1) / 2;
                if (oz_bp_plan_of(c, 1, mb, mid * OZ_PAD_ROWS_B, ks).bytes <= budget)
                    lo = mid;
                else
                    hi = mid - 1;
            }
            if (lo == 0)
                continue;
            oz_bp_plan p = oz_bp_plan_of(c, 1, mb, oz_bp_balance(c->n, lo * OZ_PAD_ROWS_B, OZ_PAD_ROWS_B), ks);
            const double cost = oz_bp_plan_cost(c, &p);
            const int64_t steps = oz_bp_count(c->m, p.mb) * oz_bp_count(c->n, p.nb) * oz_bp_count(c->k, p.ks);
            if (!found || cost < best_cost ||
                (cost == best_cost && (steps < best_steps || (steps == best_steps && p.bytes < best.bytes)))) {
                best = p;
                best_cost = cost;
                best_steps = steps;
                found = 1;
            }
        }
    }
    if (found)
        *out = best;
    return found;
}

/* The plan the path asks for: the best that fits max(ceiling, the least
 * need). With ceiling = oz_bp_budget(c) its bytes are min(everything at
 * once, max(B, min)). */
static inline oz_bp_plan oz_bp_plan_full(const oz_bp_call *c, int64_t ceiling)
{
    oz_bp_plan p = oz_bp_plan_min(c);
    if (ceiling > p.bytes)
        (void)oz_bp_plan_make(c, ceiling, &p); /* fits: the least plan does */
    return p;
}

/* The bytes of oz_bp_plan_full for the smaller of `ceiling` and `budget`:
 * the most a path asks for within a budget (e.g. OZCRT_MAX_WORKSPACE_MB). */
static inline int64_t oz_bp_bytes_within(const oz_bp_call *c, int64_t ceiling, int64_t budget)
{
    return oz_bp_plan_full(c, budget < ceiling ? budget : ceiling).bytes;
}

/* One batch item's whole call: one block of all of C, one slab of all of K. */
static inline oz_bp_plan oz_bp_plan_item(const oz_bp_call *c)
{
    return oz_bp_plan_of(c, 1, oz_bp_rup(c->m, OZ_PAD_ROWS_A), oz_bp_rup(c->n, OZ_PAD_ROWS_B), c->k);
}

/* The plan a run makes of a workspace of `bytes`: the best that fits; when
 * a test forces a ceiling (forced > 0), at most that ceiling's plan, so that
 * blocks and slabs happen with a large workspace too. 0 when none fits. */
static inline int oz_bp_plan_for(const oz_bp_call *c, int64_t bytes, int64_t forced, oz_bp_plan *p)
{
    if (forced > 0) {
        const int64_t f = oz_bp_plan_full(c, forced).bytes;
        bytes = bytes < f ? bytes : f;
    }
    return oz_bp_plan_make(c, bytes, p);
}

#endif
