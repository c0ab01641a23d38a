/* kernels/p22_layout.h: Phase 22 on the engine's residue mode: where the hi and lo slices of a row sit in a plane, and the CRT of one K chunk for the four elements of one residue word (plain C, host and device: kernels/p22_crt.cu runs it, tests/unit/test_p22_crt.c checks it). */
#ifndef OZCRT_KERNELS_P22_LAYOUT_H
#define OZCRT_KERNELS_P22_LAYOUT_H

#include <stdint.h>
#include <string.h>

#include "../crt/crt.h"
#include "../slicing/slicing.h"
#include "res_layout.h"

/* Logical row of real row r, slice sl, in a Phase 22 engine plane: the hi
 * and lo slices of each 64 rows follow each other (a consumer's two m64
 * blocks of the fused kernel are the hi and lo of the same 64 rows). */
OZ_HD int64_t oz_p22g_row(int64_t r, int sl)
{
    return (r >> 6) * 128 + sl * 64 + (r & 63);
}

#ifdef __CUDA_ARCH__
#define OZ_P22_UNROLL _Pragma("unroll")
#else
#define OZ_P22_UNROLL
#endif

/* A 32-bit word of a residue plane. */
OZ_HD uint32_t oz_p22_word(const uint8_t *p)
{
#ifdef __CUDA_ARCH__
    return *(const uint32_t *)p;
#else
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
#endif
}

/* X of one pass of one element from the residues of the OZ_P22G moduli
 * (byte `byte` of w[q]): S = sum r_q f_q, then its signed representative
 * modulo M' as an exact double (crt/crt.h oz_p22g_centered: |X| <= 2^46,
 * no conversions). The fused engine's epilogue and the unfused CRT kernel
 * both rebuild X with it. */
OZ_HD double oz_p22_rebuild(const uint32_t w[OZ_P22G_NMODULI], int byte)
{
    uint64_t S = 0;
#define OZ_P22_CRT_TERM_(q, m, f, mu) S += (uint64_t)((w[q] >> (8 * byte)) & 255u) * (f);
    OZ_P22G_MODULI(OZ_P22_CRT_TERM_)
#undef OZ_P22_CRT_TERM_
    return oz_p22g_centered(S);
}

/* The weight of pass p = 2 slA + slB of phase22.md step 6 (HH 2^-34, HL
 * and LH 2^-51, LL 2^-68), as constants. */
OZ_HD double oz_p22_pass_scale(int p)
{
    return p == 0 ? 0x1p-34 : p == 3 ? 0x1p-68 : 0x1p-51;
}

/* One K chunk's four passes for the elements of one word: rows r0 and r0 +
 * 8 (r0 with bit 3 clear), columns j0 and j0 + 1 (j0 even). Their hi and lo
 * slices sit at logical rows and columns oz_p22g_row(., sl), which keep bit
 * 3 of the row and the parity of the column, so each pass (hi or lo rows by
 * hi or lo columns) of the four elements is one word of each modulus's
 * residue plane (res_layout.h: byte 2 c + s = row r0 + 8 s, column j0 + c).
 * X of each pass (S = sum r_q f_q over the OZ_P22G moduli, its signed
 * representative: oz_p22g_centered) is added to d[2 c + s] in the order of
 * phase22.md step 6: HH 2^-34, HL 2^-51, LH 2^-51, LL 2^-68, each product
 * and sum rounded (the build never contracts them). res: plane 0 of the
 * item, planes `plane` bytes apart, res_rows logical rows a column. */
OZ_HD void oz_p22_crt_word(const uint8_t *res, int64_t res_rows, int64_t plane, int64_t r0, int64_t j0, double d[4])
{
    uint32_t wd[OZ_P22_NPASSES][OZ_P22G_NMODULI];
    OZ_P22_UNROLL
    for (int p = 0; p < OZ_P22_NPASSES; p++) { /* p = 2 slA + slB: HH, HL, LH, LL */
        const uint8_t *at = res + oz_res_pos(oz_p22g_row(r0, p >> 1), oz_p22g_row(j0, p & 1), res_rows);
        OZ_P22_UNROLL
        for (int q = 0; q < OZ_P22G_NMODULI; q++)
            wd[p][q] = oz_p22_word(at + q * plane);
    }
    OZ_P22_UNROLL
    for (int e = 0; e < 4; e++)
        OZ_P22_UNROLL
        for (int p = 0; p < OZ_P22_NPASSES; p++) {
            d[e] = d[e] + oz_p22_rebuild(wd[p], e) * oz_p22_pass_scale(p);
        }
}

#endif
