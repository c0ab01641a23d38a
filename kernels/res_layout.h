/* kernels/res_layout.h: where the engine's residue output puts element (i, j) of a plane (plain C, host and device: the kernels and the tests read it from here). */
#ifndef OZCRT_KERNELS_RES_LAYOUT_H
#define OZCRT_KERNELS_RES_LAYOUT_H

#include <stdint.h>

#include "../crt/oz_hd.h"

/* A residue output plane (oz_engine_residues) of rows_pad x cols_pad bytes
 * (rows_pad a multiple of OZ_RES_ROWS, cols_pad even) is a sequence of
 * column pairs, 2 rows_pad bytes each, made of 32-bit words: word w of
 * column pair J holds rows r and r + 8, r = 16 (w / 8) + w % 8, of columns
 * 2 J and 2 J + 1, byte 2 c + s = row r + 8 s of column 2 J + c. That is
 * what one engine thread owns of an m64 block of the wgmma accumulator
 * layout (warp v, lane 4 g + t: rows 16 v + g + {0, 8}, columns 8 i + 2 t +
 * {0, 1}: accumulators 4 i + c + 2 s), so every tile shape stores whole
 * words of its own (no exchange between threads), and the CRT kernel reads
 * one word per modulus for two rows of two columns. */
#define OZ_RES_ROWS 16 /* rows_pad is a multiple of this */

/* Byte of element (i, j). */
OZ_HD int64_t oz_res_pos(int64_t i, int64_t j, int64_t rows_pad)
{
    return (j >> 1) * 2 * rows_pad + 4 * (8 * (i >> 4) + (i & 7)) + 2 * (j & 1) + ((i >> 3) & 1);
}

/* The first row of word w of a column pair (its other row is 8 below). */
OZ_HD int64_t oz_res_word_row(int64_t w)
{
    return 16 * (w >> 3) + (w & 7);
}

#endif
