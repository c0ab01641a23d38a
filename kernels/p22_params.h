/* kernels/p22_params.h: what the GPU Phase 22 kernels share: operand views, workspace layout, launch declarations (CUDA C++). */
#ifndef OZCRT_KERNELS_P22_PARAMS_H
#define OZCRT_KERNELS_P22_PARAMS_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "../crt/moduli.h"
#include "../slicing/slicing.h"
#include "tiles.h"

#define OZ_NPLANES (OZ_P22_NPRIMES * OZ_NSLICES) /* int8 residue matrices per operand */

/* An operand seen as `rows` rows of k: rows of op(A), or columns of op(B),
 * or a part of them (oz_view_part). Element (r, kk) of batch item b is
 * ptr(b)[r * rs + kk * ks]. */
struct oz_view {
    const double *base;
    const double *const *array; /* pointer-array batches, else NULL */
    int64_t stride;             /* between batch items when array == NULL */
    int64_t rows, k, rs, ks;
    int64_t off;                /* elements from an item's pointer to element (0, 0) (a pointer array cannot fold it into base) */
    __host__ __device__ const double *ptr(int64_t b) const { return (array ? array[b] : base + b * stride) + off; }
};

/* The output C of batch item b. */
struct oz_out {
    double *base;
    double *const *array;
    int64_t stride, ldc;
    __host__ __device__ double *ptr(int64_t b) const { return array ? array[b] : base + b * stride; }
};

/* alpha and beta: values (host pointer mode) or device pointers. */
struct oz_scalars {
    double alpha, beta;
    const double *alpha_ptr, *beta_ptr; /* non-NULL in device pointer mode */
    __device__ void load(double *a, double *b) const
    {
        *a = alpha_ptr ? *alpha_ptr : alpha;
        *b = beta_ptr ? *beta_ptr : beta;
    }
};

/* Complex alpha and beta (cuDoubleComplex: re, im), values or device pointers. */
struct oz_zscalars {
    double2 alpha, beta;
    const double *alpha_ptr, *beta_ptr; /* non-NULL in device pointer mode (re, im; 8-byte aligned) */
    __device__ void load(double2 *a, double2 *b) const
    {
        *a = alpha_ptr ? make_double2(alpha_ptr[0], alpha_ptr[1]) : alpha;
        *b = beta_ptr ? make_double2(beta_ptr[0], beta_ptr[1]) : beta;
    }
};

static inline __host__ __device__ int64_t oz_round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }
static inline __host__ __device__ int64_t oz_align256(int64_t x) { return oz_round_up(x, 256); }

/* One batch item's part of the workspace:
 *   resA  OZ_NPLANES planes of Mpad x Kpad int8 (plane = prime * 2 + slice; K contiguous)
 *   resB  OZ_NPLANES planes of Npad x Kpad int8
 *   scaleA int32[Mpad], scaleB int32[Npad]   (oz_scale_exponent; OZ_SCALE_SPECIAL marks Inf/NaN)
 *   special int32: nonzero when any row or column of this item is special
 *   dacc  double[Mpad * Npad]: the fused kernel's double accumulators, per
 *         CTA tile in the order of its threads' fragments (coalesced)
 *   crt   uint64[Mpad * Npad]: its CRT sums, same order (configurations that
 *         keep them in the workspace)
 * Padding rows and columns hold zeros (residues) and 0 (scales). */
struct oz_layout {
    int64_t m, n, k, Mpad, Npad, Kpad;
    int64_t offA, offB, offScaleA, offScaleB, offSpecial, offDacc, offCrt, slot_bytes;
};

/* Whether a configuration of the tile table keeps its CRT sums in the workspace. */
static constexpr bool oz_crt_in_workspace = !oz_tiles_large::CRT_IN_SMEM || !oz_tiles_small::CRT_IN_SMEM;

static inline __host__ __device__ oz_layout oz_make_layout(int64_t m, int64_t n, int64_t k)
{
    oz_layout L;
    L.m = m;
    L.n = n;
    L.k = k;
    L.Mpad = oz_round_up(m, OZ_PAD_ROWS_A);
    L.Npad = oz_round_up(n, OZ_PAD_ROWS_B);
    L.Kpad = oz_round_up(k, OZ_PAD_K);
    L.offA = 0;
    L.offB = L.offA + oz_align256(OZ_NPLANES * L.Mpad * L.Kpad);
    L.offScaleA = L.offB + oz_align256(OZ_NPLANES * L.Npad * L.Kpad);
    L.offScaleB = L.offScaleA + oz_align256(4 * L.Mpad);
    L.offSpecial = L.offScaleB + oz_align256(4 * L.Npad);
    L.offDacc = L.offSpecial + 256;
    L.offCrt = L.offDacc + 8 * L.Mpad * L.Npad;
    L.slot_bytes = L.offCrt + (oz_crt_in_workspace ? 8 * L.Mpad * L.Npad : 0);
    return L;
}

/* Where one operand's residues and scales go. */
struct oz_operand_ws {
    char *ws;            /* workspace of batch item 0 of the group */
    int64_t slot_bytes;
    int64_t off_res, off_scale, off_special;
    int64_t rows_pad, kpad;
    int64_t plane_rows; /* rows of one residue plane: rows_pad, or 2 rows_pad for the engine's hi/lo interleave */
    __host__ __device__ int8_t *plane(int64_t b, int pl) const
    {
        return (int8_t *)(ws + b * slot_bytes + off_res) + (int64_t)pl * plane_rows * kpad;
    }
    __host__ __device__ int32_t *scale(int64_t b) const { return (int32_t *)(ws + b * slot_bytes + off_scale); }
    __host__ __device__ int32_t *special(int64_t b) const { return (int32_t *)(ws + b * slot_bytes + off_special); }
};

/* The part of operand workspace w (whole items: its scales) that one block
 * and slab of a plan uses: rows r0 .. r0 + rows - 1 (scales from row r0 on),
 * kl of K, residue planes at off_res of `slices` x the padded rows each
 * (Phase 22's engine interleaves hi and lo: 2; ozaki2: 1). */
static inline oz_operand_ws oz_operand_block(const oz_operand_ws &w, int64_t off_res, int64_t r0, int64_t rows,
                                             int64_t pad_rows, int64_t kl, int slices)
{
    oz_operand_ws b = w;
    b.off_res = off_res;
    b.off_scale += 4 * r0;
    b.rows_pad = oz_round_up(rows, pad_rows);
    b.kpad = oz_round_up(kl, OZ_PAD_K);
    b.plane_rows = slices * b.rows_pad;
    return b;
}

/* Which part of the (chunk, pass, prime) schedule the fused kernel runs and
 * what it writes. OZ_OUT_C is the product; the others expose one layer of
 * the computation for the layer-by-layer GPU tests (int64 m x n, column-major). */
enum oz_gemm_output { OZ_OUT_C = 0, OZ_OUT_ACC = 1, OZ_OUT_MOD = 2, OZ_OUT_CRT = 3 };

struct oz_gemm_params {
    oz_layout L;
    oz_operand_ws a, b;
    oz_out c;
    oz_scalars sc;
    int64_t tiles_m, tiles_n; /* of the chosen tile configuration */
    /* debug outputs: pass q0 and prime p0 (ACC, MOD) or pass q0 (CRT) over chunk 0 */
    int out_kind, dbg_pass, dbg_prime;
    int tile_override; /* 0: by device; tests: 1 mma.sync small, 2 mma.sync large */
    int64_t *dbg_out;
};

/* Launchers, one per kernel file. */
/* pairs: complex rows as two rows of doubles (kernels/operand_scale.cu). */
cudaError_t oz_launch_operand_scale(const oz_view &v, const oz_operand_ws &w, int64_t group, cudaStream_t s,
                                    bool pairs = false);
cudaError_t oz_launch_operand_residues(const oz_view &v, const oz_operand_ws &w, int64_t group, cudaStream_t s,
                                       bool engine_layout);
/* The fused kernel, by instantiation (p.tiles_* are filled in). */
cudaError_t oz_launch_p22_sm80(oz_gemm_params &p, int64_t group, cudaStream_t s, int dev, bool large);
cudaError_t oz_launch_special_fixup(const oz_view &va, const oz_view &vb, const oz_operand_ws &wa,
                                    const oz_operand_ws &wb, const oz_out &c, const oz_scalars &sc,
                                    int64_t m, int64_t n, int64_t group, cudaStream_t s,
                                    const struct oz2a_dev_plan *skip_native = nullptr);
/* skip_native (automatic precision): the fix-up returns at once where that plan certified
 * nothing, the caller's native branch computing all of C (oz_gemm_desc::native_branch). */

#endif
