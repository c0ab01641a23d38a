/* slicing/slicing.h: Phase 22 scaling, hi/lo 17-bit slicing and residues, plain C for host and device.
 *
 * A value a of row i (column j) is scaled into (-1, 1) by 2^-s with s the
 * frexp exponent of the row's (column's) largest magnitude, then split
 *   hi = rne(v * 2^17)                  |hi| <= 2^17
 *   lo = rne((v - hi * 2^-17) * 2^34)   |lo| <= 2^16
 *   v  = hi 2^-17 + lo 2^-34 + d,       |d|  <= 2^-35
 * and each slice is reduced to the SYMMETRIC residue in [-(p-1)/2, (p-1)/2],
 * stored as int8_t (|r| <= 63, so an int32 MMA accumulator is exact for
 * k < 541064; the K chunk of 4096 keeps it far inside). */
#ifndef OZCRT_SLICING_SLICING_H
#define OZCRT_SLICING_SLICING_H

#include <math.h>
#include <stdint.h>
#include "../crt/oz_hd.h"

#define OZ_SLICE_BITS 17 /* bits per slice; hi carries 2^-17, lo 2^-34 */
#define OZ_SLICE_HI_SCALE 131072.0            /* 2^17 */
#define OZ_SLICE_LO_SCALE 17179869184.0       /* 2^34 */
#define OZ_SLICE_HI_UNIT (1.0 / 131072.0)     /* 2^-17 */

/* Scale exponent marking a row/column holding Inf or NaN: such rows and
 * columns are not sliced; their elements of C are computed by a plain FP64
 * dot product so that non-finite values propagate as in DGEMM. */
#define OZ_SCALE_SPECIAL (-0x7fffffff)

/* The exponent s with absmax < 2^s (frexp's), 0 for absmax == 0,
 * OZ_SCALE_SPECIAL when absmax is Inf or NaN. absmax must be >= 0 or NaN. */
OZ_HD int oz_scale_exponent(double absmax)
{
    if (!(absmax <= 1.79769313486231570815e+308)) /* Inf or NaN */
        return OZ_SCALE_SPECIAL;
    if (absmax == 0.0)
        return 0;
    int e;
    (void)frexp(absmax, &e);
    return e;
}

/* The hi and lo slices of a value already scaled into (-1, 1).
 * Every operation but the two rint()s is exact. */
OZ_HD void oz_slice(double v, int32_t *hi, int32_t *lo)
{
    double h = rint(v * OZ_SLICE_HI_SCALE);
    double l = rint((v - h * OZ_SLICE_HI_UNIT) * OZ_SLICE_LO_SCALE);
    *hi = (int32_t)h;
    *lo = (int32_t)l;
}

/* The symmetric residue of x modulo p (2 <= p <= 256), stored as int8_t:
 * in [-(p-1)/2, (p-1)/2] for odd p, in [-p/2, p/2 - 1] for even p (for 256:
 * the low byte of x read as int8). */
OZ_HD int8_t oz_residue(int32_t x, int32_t p)
{
    int32_t r = x % p; /* in (-p, p), sign of x */
    int32_t lo = -(p / 2), hi = lo + p - 1;
    if (r > hi)
        r -= p;
    else if (r < lo)
        r += p;
    return (int8_t)r;
}

#endif

#ifndef OZCRT_SLICING_PLAN
#define OZCRT_SLICING_PLAN
/* The Phase 22 slice plan: the passes, their operands and the power of two
 * of their integer result, IN THE ORDER THEY ARE ADDED (part of the spec).
 * X(index, slice of A, slice of B, shift): result scale 2^-shift. */
enum { OZ_SLICE_HI = 0, OZ_SLICE_LO = 1, OZ_NSLICES = 2 };
#define OZ_P22_PASSES(X)                  \
    X(0, OZ_SLICE_HI, OZ_SLICE_HI, 34)    \
    X(1, OZ_SLICE_HI, OZ_SLICE_LO, 51)    \
    X(2, OZ_SLICE_LO, OZ_SLICE_HI, 51)    \
    X(3, OZ_SLICE_LO, OZ_SLICE_LO, 68)
#define OZ_P22_NPASSES 4
/* K is cut into chunks of this many, in ascending k; every pass of a chunk
 * stays inside the CRT range: 4096 * 2^34 = 2^46 < M/2 (k <= 4915 for HH). */
#define OZ_P22_KCHUNK 4096
#endif
