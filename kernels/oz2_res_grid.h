/* kernels/oz2_res_grid.h: which rows and K tiles each block of the ozaki2 residue kernel takes (plain C, host and device: the kernel and its CPU test read it from here). */
#ifndef OZCRT_KERNELS_OZ2_RES_GRID_H
#define OZCRT_KERNELS_OZ2_RES_GRID_H

#include <stdint.h>

#include "../crt/oz_hd.h"

/* The kernel's grid is gx row blocks by gy K groups (gy = the group count,
 * or 65535 where there are more). K group kg is the tiles kg, kg + kgroups,
 * kg + 2 kgroups, ... (at most `tiles` of them, below ktiles), so the
 * groups of one row block in flight together work on adjacent tiles.
 * Where the grid has every group (gy == kgroups), consecutive blocks (x
 * fastest) take the groups of one row block in turn, so that the blocks in
 * flight write whole plane rows in long runs (BENCHMARKS.md session 13,
 * calls 5-6: the residues of 16384^3 2.27 + 2.23 -> 1.97 + 1.80 ms); else
 * block (x, y) is row block x and walks the groups y, y + gy, ... */
OZ_HD int oz2_res_kgroups(int ktiles, int tiles) { return (ktiles + tiles - 1) / tiles; }

/* Block (bx, by) of a gx x gy grid: its row block *rblk and its K groups
 * *kg_first, *kg_first + *kg_step, ... below kgroups. */
OZ_HD void oz2_res_block_of(uint32_t bx, uint32_t by, uint32_t gx, uint32_t gy, int kgroups, int64_t *rblk,
                            int *kg_first, int *kg_step)
{
    *rblk = bx;
    *kg_first = (int)by;
    *kg_step = (int)gy;
    if ((int)gy == kgroups) {
        const int64_t id = (int64_t)by * gx + bx;
        *rblk = id / kgroups;
        *kg_first = (int)(id - *rblk * kgroups);
        *kg_step = kgroups;
    }
}

#endif
