/* kernels/oz2_params.h: what the GPU ozaki2 kernels share: the workspace layout, the CRT job, launch declarations (CUDA C++). */
#ifndef OZCRT_KERNELS_OZ2_PARAMS_H
#define OZCRT_KERNELS_OZ2_PARAMS_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "../crt/oz2.h"
#include "engine.h"
#include "oz2_auto_estimate.h"
#include "p22_params.h"

/* One batch item's part of the workspace (ozaki2.md steps 2-3) is laid out
 * by kernels/block_plan.h (oz_bp_call_oz2) for a block of mb rows and nb
 * columns of C and a slab of K:
 *   residues of op(A)   N planes of mb x kpad int8 (symmetric residues of a'', K contiguous)
 *   residues of op(B)   N planes of nb x kpad int8
 *   scales              int32 per row of op(A), per column of op(B), whole
 *                       (oz_scale_exponent; OZ_SCALE_SPECIAL: Inf/NaN)
 *   special             int32[2]: nonzero when any row of A / column of B of the item is special;
 *                       then the engine's tickets (block_plan.h's special area)
 *   out                 N planes of mb x nb uint8: the engine's R_q in column pairs of
 *                       32-bit words, two rows of two columns each (kernels/res_layout.h),
 *                       the slabs' residues added modulo m_q
 * Padding rows/columns and K hold zeros. */

/* The CRT kernels' grid (real and complex: blocks of 32 x 8 threads, a
 * warp 64 rows and column pairs J, J + 8 gridDim.y, ...): column pairs, 8
 * a block row, each warp OZ2_CRT_PAIRS_PER_WARP of them (its set-up, ~100
 * instructions, paid once: with one pair a warp it took 8% of the kernel)
 * while the grid keeps OZ2_CRT_MIN_BLOCKS blocks. The automatic plan
 * launches every N's kernel and all but one return at once: there the grid
 * is held to OZ2_CRT_AUTO_BLOCKS, about four waves of 3 blocks an SM on 132
 * SMs (each warp takes more pairs), so that a kernel that returns costs a
 * launch and not thousands of blocks (7.3 us each at 8192^2, 18 a call). */
#define OZ2_CRT_PAIRS_PER_WARP 8
#define OZ2_CRT_MIN_BLOCKS 2048 /* ~5 waves of 3 blocks an SM on 132 SMs */
#define OZ2_CRT_AUTO_BLOCKS 1584
static inline dim3 oz2_crt_grid(int64_t m, int64_t n, int64_t group, bool autoplan)
{
    const int64_t gx = (m + 63) / 64, pairs8 = ((n + 1) / 2 + 7) / 8;
    const int64_t fill = (OZ2_CRT_MIN_BLOCKS + gx * group - 1) / (gx * group);
    int64_t by = (pairs8 + OZ2_CRT_PAIRS_PER_WARP - 1) / OZ2_CRT_PAIRS_PER_WARP;
    by = by > fill ? by : fill;
    by = by < pairs8 ? by : pairs8;
    const int64_t few = (OZ2_CRT_AUTO_BLOCKS + gx * group - 1) / (gx * group);
    by = autoplan && few < by ? few : by;
    return dim3((unsigned)gx, (unsigned)(by < 65535 ? by : 65535), (unsigned)group);
}

/* The CRT and epilogue kernel's work for one group of batch items. */
struct oz2_crt_job {
    const char *ws;
    int64_t slot_bytes, off_scale_a, off_scale_b, off_res;
    int64_t Mpad, Npad, m, n;
    int w;
    bool vanish;    /* k == 0: C = beta C */
    oz_out c;
    int64_t c_off;  /* element (0, 0) of the block in each item's C */
    oz_scalars sc;
    /* the automatic plan in device memory: N and w from it (the launch
     * runs the kernel of every N, and all but the plan's return); NULL: fixed */
    const oz2a_dev_plan *plan;
    /* real automatic plans: oz2a_n_least for the call's k and target (the
     * kernels of N >= nlo are launched, and N = 2's also for the plans below
     * nlo, whose products are all zero); 0: every N's */
    int nlo;
};

/* The complex CRT's work (kernels/oz2z_crt.cu): the real job's layout,
 * read for complex elements (c's base and stride in doubles, its ldc and
 * c_off in complex elements; 2 N planes: U_q at 2 q, V_q at 2 q + 1), w the
 * plan's, and complex scalars (base.sc unused; base.plan: the automatic
 * plan, N' and w from it, every N' kernel launched). */
struct oz2z_crt_job {
    oz2_crt_job base;
    oz_zscalars zsc;
};

/* Launchers, one per kernel file. */
cudaError_t oz2_launch_residues(const oz_view &v, const oz_operand_ws &w, int nmod, int wbits, int64_t group,
                                cudaStream_t s, const oz2a_dev_plan *plan = nullptr);
/* Complex calls (docs/ozaki2-complex.md): the split operands of the first
 * nsplit split moduli (planes 2 q, 2 q + 1) from the operand's doubles v
 * (oz2z_real_view: 2 rows of doubles a complex row where rows are
 * contiguous, else 2 doubles of K a complex k); w's rows, K and scales are
 * the complex operand's. conj (op C): the imaginary parts negated, which
 * swaps u and v. plan: the automatic plan's N', w and starts from device
 * memory (nsplit, wbits then unused). */
cudaError_t oz2z_launch_residues(const oz_view &v, const oz_operand_ws &w, int nsplit, int wbits, bool conj,
                                 int64_t group, cudaStream_t s, const oz2a_dev_plan *plan = nullptr);
cudaError_t oz2_launch_crt(const oz2_crt_consts &cc, const oz2_crt_job &job, int64_t group, cudaStream_t s);
cudaError_t oz2z_launch_crt(const oz2z_crt_job &job, int nsplit, int64_t group, cudaStream_t s);
/* The complex Inf/NaN fix-up (kernels/special_fixup.cu): va, vb are the
 * complex operands in doubles (element (r, k): re at ptr[r rs + k ks], im
 * after it), conj_a/conj_b for op C; c as in oz2z_crt_job. */
cudaError_t oz2z_launch_special_fixup(const oz_view &va, const oz_view &vb, bool conj_a, bool conj_b,
                                      const oz_operand_ws &wa, const oz_operand_ws &wb, const oz_out &c,
                                      const oz_zscalars &sc, int64_t m, int64_t n, int64_t group, cudaStream_t s,
                                      const oz2a_dev_plan *skip_native = nullptr);
/* The automatic plan's auto-native elements (plan->n == 0; batch item 0). */
cudaError_t oz2_launch_auto_native(const oz_view &va, const oz_view &vb, const int32_t *scale_a,
                                   const int32_t *scale_b, const oz_out &c, const oz_scalars &sc,
                                   const oz2a_dev_plan *plan, cudaStream_t s);
/* The same for complex calls: views in doubles (oz2z_view_a/b), op C's conj, C as in oz2z_crt_job. */
cudaError_t oz2z_launch_auto_native(const oz_view &va, const oz_view &vb, bool conj_a, bool conj_b,
                                    const int32_t *scale_a, const int32_t *scale_b, const oz_out &c,
                                    const oz_zscalars &sc, const oz2a_dev_plan *plan, cudaStream_t s);
/* The residue engine by plain int8 dot products (dp4a), for devices without
 * the sm_90a engine and as the tests' second opinion: the same contract as
 * engine.h's oz_engine_residues. group * nmod <= 65535. */
cudaError_t oz2_engine_residues_portable(const oz_engine_residue_job &job, int64_t group, cudaStream_t s);

#endif
