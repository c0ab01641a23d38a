/* kernels/operand_tile.cuh: one OZ_RT_ROWS x OZ_RT_K tile of an operand staged through shared memory, read coalesced whichever of its dimensions is contiguous; shared by the residue kernels of both modes. */
#ifndef OZCRT_KERNELS_OPERAND_TILE_CUH
#define OZCRT_KERNELS_OPERAND_TILE_CUH

#include "p22_params.h"

typedef double oz_operand_tile[OZ_RT_ROWS][OZ_RT_K + 1]; /* + 1: no bank conflicts on the transposed read */

/* Rows r0.. and k0.. of x (batch item's data, view v) into tile, zeros past
 * the operand's rows and k. A 32 x 8 block; the caller synchronises before
 * (the previous tile consumed) and after (the tile landed). */
__device__ __forceinline__ void oz_stage_operand_tile(oz_operand_tile &tile, const oz_view &v, const double *x,
                                                      int64_t r0, int64_t k0, int tx, int ty)
{
    if (v.rs == 1) { /* rows contiguous: lanes along r */
        for (int kk = ty; kk < OZ_RT_K; kk += 8) {
            int64_t r = r0 + tx, kg = k0 + kk;
            tile[tx][kk] = (r < v.rows && kg < v.k) ? x[r + kg * v.ks] : 0.0;
        }
    } else { /* K contiguous: lanes along k */
        for (int rr = ty; rr < OZ_RT_ROWS; rr += 8) {
            int64_t r = r0 + rr, kg = k0 + tx;
            tile[rr][tx] = (r < v.rows && kg < v.k) ? x[r * v.rs + kg] : 0.0;
        }
    }
}

#endif
