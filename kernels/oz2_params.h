/* kernels/oz2_params.h: what the GPU ozaki2 kernels share: the workspace layout, the CRT job, launch declarations (CUDA C++). */
#ifndef OZCRT_KERNELS_OZ2_PARAMS_H
#define OZCRT_KERNELS_OZ2_PARAMS_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "../crt/oz2.h"
#include "engine.h"
#include "p22_params.h"

/* Alignment of every part of a slot: the engine's TMA maps want 16-byte
 * strides and bases; 1024 keeps the swizzle atom aligned too. */
#define OZ2_ALIGN 1024

/* One batch item's part of the workspace (ozaki2.md steps 2-3):
 *   resA   N planes of Mpad x Kpad int8 (symmetric residues of a'', K contiguous)
 *   resB   N planes of Npad x Kpad int8
 *   scaleA int32[Mpad], scaleB int32[Npad]   (oz_scale_exponent; OZ_SCALE_SPECIAL: Inf/NaN)
 *   special int32[2]: nonzero when any row of A / column of B of the item is special
 *   res    N planes of Mpad x Npad uint8: the engine's R_q, column-major,
 *          rows permuted within groups of 128 (kernels/res_layout.h)
 * Padding rows/columns and K hold zeros. */
struct oz2_layout {
    oz2_plan plan;
    int64_t m, n, k, Mpad, Npad, Kpad;
    int64_t offA, offB, offScaleA, offScaleB, offSpecial, offRes, slot_bytes;
};

static inline __host__ __device__ int64_t oz2_align(int64_t x) { return oz_round_up(x, OZ2_ALIGN); }

static inline oz2_layout oz2_make_layout(int64_t m, int64_t n, int64_t k, oz2_plan plan)
{
    oz2_layout L;
    L.plan = plan;
    L.m = m;
    L.n = n;
    L.k = k;
    L.Mpad = oz_round_up(m, OZ_PAD_ROWS_A);
    L.Npad = oz_round_up(n, OZ_PAD_ROWS_B);
    L.Kpad = oz_round_up(k, OZ_PAD_K);
    const int64_t N = plan.n;
    L.offA = 0;
    L.offB = L.offA + oz2_align(N * L.Mpad * L.Kpad);
    L.offScaleA = L.offB + oz2_align(N * L.Npad * L.Kpad);
    L.offScaleB = L.offScaleA + oz2_align(4 * L.Mpad);
    L.offSpecial = L.offScaleB + oz2_align(4 * L.Npad);
    L.offRes = L.offSpecial + OZ2_ALIGN;
    L.slot_bytes = L.offRes + oz2_align(N * L.Mpad * L.Npad);
    return L;
}

/* The CRT and epilogue kernel's work for one group of batch items. */
struct oz2_crt_job {
    const char *ws;
    int64_t slot_bytes, off_scale_a, off_scale_b, off_res;
    int64_t Mpad, Npad, m, n;
    int w;
    bool vanish;    /* k == 0: C = beta C */
    oz_out c;
    oz_scalars sc;
};

/* Launchers, one per kernel file. */
cudaError_t oz2_launch_residues(const oz_view &v, const oz_operand_ws &w, int nmod, int wbits, int64_t group,
                                cudaStream_t s);
cudaError_t oz2_launch_crt(const oz2_crt_consts &cc, const oz2_crt_job &job, int64_t group, cudaStream_t s);
/* The residue engine by plain int8 dot products (dp4a), for devices without
 * the sm_90a engine and as the tests' second opinion: the same contract as
 * engine.h's oz_engine_residues. group * nmod <= 65535. */
cudaError_t oz2_engine_residues_portable(const oz_engine_residue_job &job, int64_t group, cudaStream_t s);

#endif
