/* kernels/engine.h: the INT8 engine's interface to the modes (CUDA C++): exact int8 GEMMs per modulus, reduced mod the modulus.
 *
 * Every mode runs on one engine: operands are int8 residue planes, one per
 * modulus of crt/moduli.h's OZ_ENGINE_MODULI (plane q holds residues modulo
 * engine modulus q), K-major (a row of op(A), or a column of op(B), is
 * contiguous in K), rows padded to OZ_PAD_ROWS_A/B, K to OZ_PAD_K, padding
 * zero. The engine computes, exactly, for q in [0, nmod):
 *     R_q[i, j] = (sum_k A_q[i, k] * B_q[j, k]) mod m_q      in [0, m_q)
 * for any K (it splits K so that int32 accumulation stays exact and adds the
 * parts modulo m_q), and either hands R_q to a fused epilogue (Phase 22) or
 * stores it as bytes (oz_engine_residues, the ozaki2 mode's input to its CRT). */
#ifndef OZCRT_KERNELS_ENGINE_H
#define OZCRT_KERNELS_ENGINE_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "p22_params.h"
#include "../crt/oz2_auto.h" /* oz2a_skip_pq */

/* One residue job: batch items b in [0, group), modulus planes q in [0, nmod).
 * Output plane q of item b: res + b * res_item_bytes + q * Npad * Mpad, element
 * (i, j) at [oz_res_pos(i, j, Mpad)] (column pairs of 32-bit words, each
 * two rows of two columns: kernels/res_layout.h), uint8 in [0, m_q). Rows i >= m or columns j >= n of the output are written too
 * (their residues are 0: the padding is zero). */
struct oz_engine_residue_job {
    oz_operand_ws a, b;     /* a.plane(b, q), b.plane(b, q): rows_pad x kpad int8, K contiguous */
    int64_t m, n;           /* the real sizes */
    int nmod;               /* 1 .. OZ_ENGINE_NMODULI, or 1 .. 2 OZ2Z_SPLIT_NMODULI with split */
    uint8_t *res;
    int64_t res_item_bytes;
    bool accumulate;        /* add to the planes' residues (a later slab of K) instead of writing them */
    /* The sm_90a engine's tile scheduler: two counters, zero when the job is
     * enqueued, zero again when its launch ends (the last CTA resets them, so
     * one zeroing serves every launch of a stream that reuses them). CTAs
     * past the first wave take their next item from them in the schedule's
     * order, so the items in flight stay a window of consecutive items
     * whatever each CTA's speed (a fixed round robin lets CTAs drift apart
     * and the L2 lose the panels they share: BENCHMARKS.md session 7).
     * NULL: the fixed round robin. */
    unsigned long long *tickets;
    /* The K bytes of the planes the job sums: [k_begin, k_begin + k_len),
     * multiples of OZ_PAD_K; k_len 0: from k_begin to kpad (Phase 22 runs
     * one K chunk of its planes at a time). */
    int64_t k_begin, k_len;
    /* Rows of A a tile: 0, the engine picks; 128 or 192 (tests). */
    int tile_rows;
    /* The automatic plan's moduli count in device memory (kernels/oz2_auto_estimate.h),
     * read when the launch runs: planes q >= *dev_nmod are skipped (nmod is then
     * the most it may be). NULL: nmod. */
    const int *dev_nmod;
    /* The complex path's planes (docs/ozaki2-complex.md): plane q's modulus is
     * split modulus q / 2 of crt/oz2_complex.h (the u and v operands of each
     * in turn) instead of engine modulus q. */
    bool split;
};

/* Enqueues the job on s; returns the first launch error. */
cudaError_t oz_engine_residues(const oz_engine_residue_job &job, int64_t group, cudaStream_t s);

/* The automatic precision's estimate (docs/ozaki2-auto.md) on the engine:
 * G_ij = sum_k A[i, k] B[j, k] over one plane of each operand (int8 in [0,
 * 127], kpad <= 65536: one K chunk, exact in int32), or a part of K. With g NULL the
 * epilogue takes each element's need (crt/oz2_auto.h's oz2a_elem_w from the
 * rows' and columns' norm sums) and the max into *need (atomicMax; it
 * starts at OZ2A_W_NONE), on the 128-row tile; else it stores G (on the
 * main product's tile) for a pass of the caller's. Batch 1. */
struct oz_engine_est_job {
    oz_operand_ws a, b;                  /* plane 0 of each: rows_pad x kpad, K contiguous */
    int64_t m, n, k;                     /* the call's sizes (k: all of K, for the rule) */
    const unsigned long long *a1, *b1;   /* the norm sums, zero for zero and special rows */
    const int32_t *ga, *gb;              /* the rows' and columns' estimate scales (oz2a_row_scale) */
    const oz2a_skip_pq *pa, *pb;         /* the skip test's (P, p) of each row and column (oz2a_skip_pq_of), 16-byte aligned */
    uint32_t *g;                         /* non-NULL: G stored at g[i ldg + j] (i < m, j < ldg) instead of the need
                                          * taken (the main product's tile; 8-byte aligned) */
    int64_t ldg;                         /* even, >= n */
    int target;                          /* B */
    int *need;
    unsigned long long *tickets;         /* as oz_engine_residue_job's; NULL: round robin */
    /* the part of K summed: [k_begin, k_begin + k_len) of the planes' K
     * (multiples of OZ_PAD_K; k_len 0: to kpad); accumulate: G stored is
     * added to, not replaced (g set); run non-NULL: the launch does
     * nothing unless *run is 1 once the stream reaches it */
    int64_t k_begin, k_len;
    bool accumulate;
    const int *run;
};
cudaError_t oz_engine_estimate(const oz_engine_est_job &job, cudaStream_t s);

/* Where a Phase 22 launch over one block of C puts its sums (both paths):
 * the double accumulator of element (i, j) of the block (phase22.md step 6)
 * starts at 0 when `first`, else at acc(i, j); after the launch's K it goes
 * to acc(i, j) unless `last`, when C(i, j) gets the alpha/beta epilogue
 * (elements of special rows/columns are left to the fix-up). acc may be C
 * itself (beta == 0: C is not read). */
struct oz_p22_target {
    int64_t m, n;           /* real rows and columns of the block */
    const int32_t *scale_a; /* the block's first row's scale exponent, batch item 0 */
    const int32_t *scale_b;
    int64_t scale_stride_a, scale_stride_b; /* int32 elements between batch items */
    oz_out c;               /* the call's C (batch item 0 of the group) */
    oz_out acc;             /* accumulators across launches, item b's element (i, j) at */
    int64_t c_off;          /* element (0, 0) of the block in an item's C: m0 + n0 ldc */
    int64_t acc_off;        /* acc.ptr(b)[acc_off + i + j acc.ldc]; unused when first && last */
    int first, last;
    oz_scalars sc;
};

/* Phase 22 on the engine, CRT fused, over one block of C and one slab of K:
 * planes of the first OZ_P22G_NMODULI moduli, each plane_rows = 2 rows_pad
 * logical rows (oz_p22g_row: hi and lo of every 64 rows) of the block's rows
 * of op(A) / columns of op(B), kpad bytes of the slab's K (the slab starts
 * at a multiple of OZ_P22_KCHUNK of the call's K, so that its chunks are the
 * call's chunks). */
struct oz_engine_p22_job {
    oz_operand_ws a, b;
    oz_p22_target t;
    char *scratch;          /* oz_engine_p22_scratch_bytes(tiles) */
};
cudaError_t oz_launch_p22_engine(const oz_engine_p22_job &job, int64_t group, cudaStream_t s);

/* Phase 22 unfused, one K chunk over a block of C (kernels/p22_crt.cu): the
 * engine's residue planes of the chunk (oz_engine_residues over the block's
 * Phase 22 planes, OZ_P22G_NMODULI moduli, logical rows and columns by
 * oz_p22g_row, res_layout.h words), X of each pass rebuilt and added to the
 * target's accumulators in the order of phase22.md step 6. */
struct oz_p22_crt_job {
    const uint8_t *res;     /* item b's planes at res + b res_item_bytes, plane q at + q res_rows res_cols */
    int64_t res_item_bytes, res_rows, res_cols;
    oz_p22_target t;
};
cudaError_t oz_launch_p22_crt(const oz_p22_crt_job &job, int64_t group, cudaStream_t s);
/* Scratch bytes the Phase 22 engine needs for a launch of tiles_total tiles. */
int64_t oz_engine_p22_scratch_bytes(int64_t tiles_total);
/* Tiles of a Phase 22 engine launch (rows_pad of A and B, batch items). */
int64_t oz_engine_p22_tiles(int64_t mpad, int64_t npad, int64_t group);
/* Whether this binary holds the engine for device dev (sm_90a image, compute
 * capability 9.0, TMA encoder reachable, shared memory enough). */
bool oz_engine_usable(int dev);

#endif
