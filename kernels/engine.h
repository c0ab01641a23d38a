/* kernels/engine.h: the INT8 engine's interface to the modes (CUDA C++): exact int8 GEMMs per modulus, reduced mod the modulus.
 *
 * Every mode runs on one engine: operands are int8 residue planes, one per
 * modulus of crt/moduli.h's OZ_ENGINE_MODULI (plane q holds residues modulo
 * engine modulus q), K-major (a row of op(A), or a column of op(B), is
 * contiguous in K), rows padded to OZ_PAD_ROWS_A/B, K to OZ_PAD_K, padding
 * zero. The engine computes, exactly, for q in [0, nmod):
 *     R_q[i, j] = (sum_k A_q[i, k] * B_q[j, k]) mod m_q      in [0, m_q)
 * for any K (it splits K so that int32 accumulation stays exact and adds the
 * parts modulo m_q), and stores it as bytes (oz_engine_residues): the input of
 * each mode's CRT kernel (Phase 22: kernels/p22_crt.cu, ozaki2:
 * kernels/oz2_crt.cu). */
#ifndef OZCRT_KERNELS_ENGINE_H
#define OZCRT_KERNELS_ENGINE_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "p22_params.h"

/* One residue job: batch items b in [0, group), modulus planes q in [0, nmod).
 * Output plane q of item b: res + b * res_item_bytes + q * Npad * Mpad, element
 * (i, j) at [oz_res_row_pos(i) + j * Mpad] (column-major, leading dimension
 * Mpad, rows permuted within groups of 128: kernels/res_layout.h), uint8 in
 * [0, m_q). Rows i >= m or columns j >= n of the output are written too
 * (their residues are 0: the padding is zero). */
struct oz_engine_residue_job {
    oz_operand_ws a, b;     /* a.plane(b, q), b.plane(b, q): rows_pad x kpad int8, K contiguous */
    int64_t m, n;           /* the real sizes */
    int nmod;               /* 1 .. OZ_ENGINE_NMODULI */
    uint8_t *res;
    int64_t res_item_bytes;
    /* the K bytes of the planes multiplied: [k_begin, k_begin + k_len), both
     * multiples of 128 (k_len 0: to the end of the planes); the sm_90a engine
     * only (the portable one takes all of K) */
    int64_t k_begin, k_len;
};

/* Enqueues the job on s; returns the first launch error. */
cudaError_t oz_engine_residues(const oz_engine_residue_job &job, int64_t group, cudaStream_t s);

/* Whether this binary holds the engine for device dev (sm_90a image, compute
 * capability 9.0, TMA encoder reachable, shared memory enough). */
bool oz_engine_usable(int dev);

#endif
