/* kernels/engine_cfg.h: the sm_90a INT8 engine's tile, pipeline and scratch parameters, the one place they are set (CUDA C++). */
#ifndef OZCRT_KERNELS_ENGINE_CFG_H
#define OZCRT_KERNELS_ENGINE_CFG_H

#include <stdint.h>

#include "../crt/moduli.h"
#include "../slicing/slicing.h"
#include "block_plan.h"
#include "p22_layout.h"
#include "tiles.h"

/* One CTA, persistent over tiles: TMA loads into a STAGES-deep ring of
 * shared-memory stages (full/empty mbarriers), issued by one thread, and
 * CONSUMERS warpgroups that share each stage (cooperative): consumer w
 * multiplies logical rows [w WG_M, (w+1) WG_M) of the A stage, as
 * BLOCKS_PER_CONSUMER wgmma m64nMMA_N blocks, by the whole B stage: one
 * BLOCK_M x BLOCK_N tile. Three shapes:
 * - oz_engine_cfg (Phase 22): two consumers of two m64n128 blocks, tile
 *   256 x 128, and a producer warpgroup (its thread 0 issues the loads; the
 *   consumers take its registers with setmaxnreg for the CRT they run in the
 *   shadow of their MMAs). Logical rows are the rows of the residue planes as
 *   the mode lays them out (Phase 22 interleaves the hi and lo slices of each
 *   64 real rows, so a consumer's two blocks are the hi and lo slices of the
 *   same 64 rows, and its 128 columns the hi and lo slices of the same 64
 *   columns: the four passes of an element of C meet in one thread).
 * - oz_engine_cfg_res (residue mode): two consumers of one m64n256 block,
 *   tile 128 x 256, a producer warpgroup.
 * - oz_engine_cfg_res3 (residue mode): three consumers of one m64n256 block,
 *   tile 192 x 256, no producer warpgroup: consumer thread 0 issues each
 *   next stage's loads as its warp gives a stage back. A fourth
 *   warpgroup would cap every thread at 128 registers (65536 / 512), fewer
 *   than an m64n256 wgmma needs; 384 threads get 168. The tile moves 448
 *   bytes from L2 a K byte for 49152 products, 22% fewer than 128 x 256
 *   (384 for 32768): at the power cap the feed's data movement costs about
 *   a quarter of the engine's energy (BENCHMARKS.md session 17, call 1).
 *
 * Measured and dropped (BENCHMARKS.md runs 17-20): ping-pong (each consumer
 * its own 128 x 128 tile, 7 stages): the mainloop lost more than the
 * overlapped epilogue won; clusters of 2 with A multicast: every stage
 * waited for the slower CTA's release. */
template <int MMA_N_, int BLOCKS_PER_CONSUMER_, int CONSUMERS_, int GROUP_M_, int GROUP_PANEL_MB_>
struct oz_engine_tile_cfg {
    static constexpr int MMA_M = 64, MMA_N = MMA_N_, MMA_K = 32; /* wgmma.m64nNk32.s8 */
    static constexpr int CONSUMERS = CONSUMERS_;
    /* a producer warpgroup, or the loads issued by consumer thread 0 */
    static constexpr bool PRODUCER_WG = CONSUMERS < 3;
    static constexpr int BLOCKS_PER_CONSUMER = BLOCKS_PER_CONSUMER_; /* m64 blocks */
    static constexpr int WG_M = MMA_M * BLOCKS_PER_CONSUMER;  /* logical rows per consumer */
    static constexpr int BLOCK_M = WG_M * CONSUMERS;          /* logical rows of A per tile */
    static constexpr int BLOCK_N = MMA_N;                     /* logical rows of B per tile */
    static constexpr int BLOCK_K = 128;                       /* bytes of K per stage: one 128-byte swizzle row */
    static constexpr int THREADS = 128 * (PRODUCER_WG + CONSUMERS);
    static constexpr int A_STAGE = BLOCK_M * BLOCK_K;
    static constexpr int B_STAGE = BLOCK_N * BLOCK_K;
    static constexpr int STAGE_BYTES = A_STAGE + B_STAGE;
    static constexpr int STAGES = 4;
    static constexpr int BARRIERS = 2 * STAGES;               /* full, empty per stage */
    static constexpr int FEED_STATE = PRODUCER_WG ? 0 : 128;  /* the loads' walk between a consumer's steps */
    /* + 1024: the base is aligned to the 1024-byte swizzle atom; after the
     * barriers, the item of each stage (the tile scheduler's slots) */
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 1024 + BARRIERS * 8 + STAGES * 8 + FEED_STATE;
    static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232; /* setmaxnreg (with a producer warpgroup) */
    /* Tile rasterization: up to GROUP_M tile rows walked together (L2
     * reuse); with GROUP_PANEL_MB > 0, fewer where the group's panel of A
     * (its rows times K bytes) would pass that many MiB. */
    static constexpr int GROUP_M = GROUP_M_;
    static constexpr int GROUP_PANEL_MB = GROUP_PANEL_MB_;
    static int group_rows(int64_t kpad)
    {
        if (GROUP_PANEL_MB == 0)
            return GROUP_M;
        const int64_t g = ((int64_t)GROUP_PANEL_MB << 20) / ((int64_t)BLOCK_M * kpad);
        return g < 1 ? 1 : g > GROUP_M ? GROUP_M : (int)g;
    }
    static constexpr int MAX_CTAS = 160;  /* persistent grid cap: the per-CTA scratch is sized for it */
    static constexpr int ACC = MMA_M * MMA_N / 128; /* accumulators per thread per block */
    static constexpr int ACC_ALL = ACC * BLOCKS_PER_CONSUMER; /* per thread: block i at [i ACC, (i + 1) ACC) */
    static constexpr int CTHREADS = 128 * CONSUMERS;
    static constexpr int SMEM_LIMIT = 227 * 1024;
    static constexpr int EMPTY_ARRIVALS = CONSUMERS * 4; /* lane 0 of each consuming warp */

    static_assert(THREADS == 384, "three warpgroups: 168 registers a thread at launch");
    static_assert(MMA_N == 128 || MMA_N == 256, "the wgmma wrappers of sm90_ptx.cuh");
    static_assert(ACC_ALL == 128, "128 accumulators a consumer thread (the register budget)");
    static_assert(BLOCK_K == 128 && BLOCK_K % MMA_K == 0, "a stage row is one 128-byte swizzle row");
    static_assert(A_STAGE % 1024 == 0 && B_STAGE % 1024 == 0, "stages keep the 1024-byte swizzle alignment");
    static_assert(!PRODUCER_WG || CONSUMER_REGS * CTHREADS + PRODUCER_REGS * 128 <= 65536, "register file");
    static_assert(OZ_PAD_K % BLOCK_K == 0, "K padding is whole stages");
    static_assert(SMEM_BYTES <= SMEM_LIMIT, "fits Hopper's 227 KB of shared memory per block");
    static_assert(SMEM_BYTES + STAGE_BYTES + 16 > SMEM_LIMIT, "as many stages as fit");
    static_assert(BLOCK_M <= 256 && BLOCK_N <= 256, "TMA box dimensions");
    static_assert(BLOCK_M % 64 == 0 && OZ_PAD_ROWS_A % 64 == 0,
                  "a consumer's 64 rows lie wholly inside or past the padded rows");
};
/* Phase 22: 8 tile rows of 256 (BENCHMARKS.md run 49: the best of six).
 * The wide tiles (residue mode, the dynamic scheduler): up to 16 rows of
 * 128, A's panel within 24 MiB: 16 rows up to K = 12288, 12 at 16384, 6 at
 * 32768 (session 7, call 4: at K = 16384 8 rows were 2.3% faster than 16,
 * at K = 8192 16 rows 1.6% faster than 8; 4 and 32 slower at both, column
 * groups slower; session 15, call 4, with tickets: 24 MiB against 16, five
 * alternating pairs at 16384^3 all faster, -0.9%, 8192x8192x32768 -1.0%,
 * 12288^3 -0.4%; the engine's DRAM reads (89-110 GB at 16384^3 for 8 to 16
 * rows) do not set its time). The 192-row tiles keep the same 24 MiB panel
 * (8 rows at K = 16384, 16 up to K = 8192). */
typedef oz_engine_tile_cfg<128, 2, 2, 8, 0> oz_engine_cfg;
/* The residue mode runs wide tiles at every K: with residue words of two
 * rows by two columns (res_layout.h) they need no exchange, and they were as
 * fast or faster than the 256 x 128 ones from k = 1024 to 16384
 * (BENCHMARKS.md session 7, call 3). 128 x 256 (two consumers), or 192 x 256
 * (three) where A's rows fill its tiles (block_plan.h, oz_bp_res_tall). */
typedef oz_engine_tile_cfg<256, 1, 2, 16, 24> oz_engine_cfg_res;
typedef oz_engine_tile_cfg<256, 1, 3, 16, 24> oz_engine_cfg_res3;
static_assert(oz_engine_cfg_res::BLOCK_M == OZ_PAD_ROWS_A && oz_engine_cfg_res3::BLOCK_M == OZ_BP_RES_TALL_ROWS,
              "the tiles block_plan.h's oz_bp_res_tall chooses between");

/* Phase 22 on the engine: the moduli set, the K chunk, and the per-CTA
 * scratch: the residues of all NMOD moduli of a (tile, K chunk) (uint32
 * words of 4 residues, [modulus][word][consumer thread]), kept until the
 * CRT of the chunk, deferred to the next chunk's first run; then the double
 * accumulators across K chunks ([element][consumer thread]). */
struct oz_engine_p22 {
    static constexpr int NMOD = OZ_P22G_NMODULI;
    static constexpr int KCHUNK = OZ_P22_KCHUNK;
    static constexpr int VALUES = oz_engine_cfg::BLOCKS_PER_CONSUMER * oz_engine_cfg::ACC; /* 128 per thread */
    static constexpr int WORDS = VALUES / 4;
    static constexpr int OUTPUTS = VALUES / OZ_P22_NPASSES; /* 32 elements of C per consumer thread */
    static constexpr int GROUPS = OUTPUTS / 4;              /* 4 elements: one word per pass and modulus */
    static constexpr int64_t RES_BYTES = (int64_t)NMOD * WORDS * oz_engine_cfg::CTHREADS * 4;
    static constexpr int64_t DACC_BYTES = (int64_t)OUTPUTS * oz_engine_cfg::CTHREADS * 8;
    static constexpr int64_t SCRATCH_BYTES = RES_BYTES + DACC_BYTES;
    static_assert(KCHUNK % oz_engine_cfg::BLOCK_K == 0, "K chunks are whole stages");
    static_assert(OZ_NSLICES == oz_engine_cfg::BLOCKS_PER_CONSUMER, "a consumer's two m64 blocks are hi and lo of A");
    static_assert(OZ_NSLICES * 64 == oz_engine_cfg::BLOCK_N, "the B stage holds hi and lo of 64 columns");
    static_assert(WORDS == GROUPS * OZ_P22_NPASSES, "word a + GROUPS ps holds pass ps of elements 4a..4a+3");
};

/* The residue mode (ozaki2's input): K chunk for exact int32 accumulation
 * with |residue| <= 128: KCHUNK * 2^14 < 2^31. */
struct oz_engine_res {
    static constexpr int KCHUNK = 65536;
    static_assert((int64_t)KCHUNK * 128 * 128 < ((int64_t)1 << 31), "int32 accumulation is exact");
    static_assert(KCHUNK % oz_engine_cfg::BLOCK_K == 0, "K chunks are whole stages");
};


#endif
