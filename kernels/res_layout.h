/* kernels/res_layout.h: where the engine's residue output puts row i of a column (plain C, host and device: the kernels and the tests read it from here). */
#ifndef OZCRT_KERNELS_RES_LAYOUT_H
#define OZCRT_KERNELS_RES_LAYOUT_H

#include <stdint.h>

#include "../crt/oz_hd.h"

/* A residue output plane (oz_engine_residues) is column-major, a column of
 * rows_pad bytes (a multiple of OZ_RES_GROUP), but within each group of
 * OZ_RES_GROUP = 128 rows the rows are permuted so that one 32-bit word
 * holds the four rows one engine thread owns in a column: a consumer
 * warpgroup's 128 x 128 tile is two wgmma m64 blocks h, and thread (warp
 * v, lane 4 g + t) holds rows 64 h + 16 v + 8 s + g (s = 0, 1) of them. Row
 * 64 h + 16 v + 8 s + g of a group is byte 2 h + s of word 8 v + g: the
 * engine stores a word per column instead of four bytes, and the CRT reads
 * a word per column and modulus for four rows. */
#define OZ_RES_GROUP 128

/* Byte of row i within its column. */
OZ_HD int64_t oz_res_row_pos(int64_t i)
{
    const int r = (int)(i & (OZ_RES_GROUP - 1));
    const int h = r >> 6, v = (r >> 4) & 3, s = (r >> 3) & 1, g = r & 7;
    return (i - r) + 4 * (8 * v + g) + 2 * h + s;
}

/* Row of byte p within its column (the inverse). */
OZ_HD int64_t oz_res_row_at(int64_t p)
{
    const int r = (int)(p & (OZ_RES_GROUP - 1));
    const int word = r >> 2, e = r & 3;
    return (p - r) + 64 * (e >> 1) + 16 * (word >> 3) + 8 * (e & 1) + (word & 7);
}

#endif
