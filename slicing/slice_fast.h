/* slicing/slice_fast.h: slicing.h's scaling, hi/lo split and residues in the few operations the GPU's residue kernels use (the same integers, bit for bit), plain C for host and device.
 *
 * slicing.h states the spec: v = ldexp(x, -s), hi = rint(v 2^17),
 * lo = rint((v - hi 2^-17) 2^34), r = x mod p by an integer division. On
 * the GPU that is a few hundred instructions per element (ldexp, two rints,
 * two conversions, twelve divisions), which made the residue kernel
 * arithmetic-bound. Here:
 *
 * Slicing, three double multiply-adds (one more multiply for rows whose
 * scale is below OZ_FAST_MIN_SCALE). With R = 1.5 2^52, a double t in
 * [2^52, 2^53) is an integer and its low 32 bits are t - R as int32:
 *   tH = fma(x, 2^(17-s), R)                = R + rint(x 2^(17-s)) = R + hi
 *   c  = fma(tH, -2^17, R (1 + 2^17))       = R - hi 2^17 (exact)
 *   tL = fma(x, 2^(34-s), c)                = R + rint(x 2^(34-s) - hi 2^17) = R + lo
 * Each fma rounds once, to the nearest integer with ties to even, which is
 * rint; x 2^(34-s) - hi 2^17 is slicing.h's (v - hi 2^-17) 2^34, which
 * slicing.h computes exactly whenever ldexp(x, -s) is exact. When it is not
 * (v below 2^-1022), |x 2^(34-s)| < 2^-988 and both give hi = lo = 0.
 *
 * Residue of a slice |x| <= 2^18 modulo an odd p <= 256, single precision:
 *   q = rn(x (1/p)_f + 1.5 2^23) - 1.5 2^23 = round(x / p)
 * because x / p is never within 1 / (2p) of a half-integer (p odd) and the
 * float error of x (1/p)_f is below 2^18 / p 2^-24; then x - p q is the
 * symmetric residue, and the low byte of x - p bits(rn(...)) is its int8
 * (bits = 0x4B400000 + q, and p 0x4B400000 = 0 mod 2^8). For p = 256 the
 * residue is the low byte of x. tests/unit/test_slice_fast.c checks every
 * slice value against slicing.h for every modulus of both sets. */
#ifndef OZCRT_SLICING_SLICE_FAST_H
#define OZCRT_SLICING_SLICE_FAST_H

#include <math.h>
#include <stdint.h>

#include "slicing.h" /* and crt/oz_hd.h: OZ_HD, the bit casts */

#define OZ_FAST_RNE52 0x1.8p52                /* 1.5 2^52 */
#define OZ_FAST_RNE52_SHIFTED 0x1.8000Cp69    /* 1.5 2^52 (1 + 2^17) = 1.5 2^69 + 1.5 2^52 */
#define OZ_FAST_RNE23 0x1.8p23f              /* 1.5 2^23 */
#define OZ_FAST_RNE23_BITS 0x4B400000        /* its bits */
/* 2^(34-s) is a double for s >= OZ_FAST_MIN_SCALE; rows below (max < 2^-990)
 * multiply by 2^OZ_FAST_PRE first (exact: it scales up, below 2^-390). */
#define OZ_FAST_MIN_SCALE (34 - 1023)
#define OZ_FAST_PRE 600

/* Per-row constants of the slicing. */
typedef struct oz_fast_row {
    double pre, fhi, flo; /* 2^p, 2^(17-s-p), 2^(34-s-p); p = 0 or OZ_FAST_PRE */
} oz_fast_row;

/* 2^e for -1022 <= e <= 1023, from its bits. */
OZ_HD double oz_fast_pow2(int e)
{
    return oz_bits_f64((uint64_t)(e + 1023) << 52);
}

/* The constants of a row with scale exponent s (oz_scale_exponent, not
 * OZ_SCALE_SPECIAL: -1073 <= s <= 1024). */
OZ_HD oz_fast_row oz_fast_row_of(int s)
{
    const int p = s < OZ_FAST_MIN_SCALE ? OZ_FAST_PRE : 0;
    oz_fast_row c;
    c.pre = oz_fast_pow2(p);
    c.fhi = oz_fast_pow2(OZ_SLICE_BITS - s - p);
    c.flo = oz_fast_pow2(2 * OZ_SLICE_BITS - s - p);
    return c;
}

/* The low 32 bits of a double's representation, as int32. */
OZ_HD int32_t oz_fast_lo32(double t)
{
#ifdef __CUDA_ARCH__
    return __double2loint(t);
#else
    return (int32_t)(uint32_t)oz_f64_bits(t);
#endif
}

/* hi and lo of x (an element of the row of c, |x| < 2^s): slicing.h's
 * oz_slice(ldexp(x, -s)). */
OZ_HD void oz_slice_fast(double x, oz_fast_row c, int32_t *hi, int32_t *lo)
{
    const double xp = x * c.pre;
    const double th = fma(xp, c.fhi, OZ_FAST_RNE52);
    const double cl = fma(th, -OZ_SLICE_HI_SCALE, OZ_FAST_RNE52_SHIFTED);
    const double tl = fma(xp, c.flo, cl);
    *hi = oz_fast_lo32(th);
    *lo = oz_fast_lo32(tl);
}

/* x as a float, exact for |x| < 2^22. */
OZ_HD float oz_fast_float(int32_t x)
{
    return oz_bits_f32((uint32_t)(OZ_FAST_RNE23_BITS + x)) - OZ_FAST_RNE23;
}

/* (1/p) rounded to float. */
OZ_HD float oz_fast_inv(int32_t p) { return 1.0f / (float)p; }

/* A word whose low byte is oz_residue(x, p), for |x| <= 2^18, xf =
 * oz_fast_float(x), inv = oz_fast_inv(p), p odd and <= 256, or p = 256. */
OZ_HD int32_t oz_residue_fast(int32_t x, float xf, int32_t p, float inv)
{
    if (p == 256)
        return x;
    const float q = fmaf(xf, inv, OZ_FAST_RNE23);
    return (int32_t)((uint32_t)x - (uint32_t)p * oz_f32_bits(q));
}

/* The low bytes of four words, in order, as one word (byte e from word e). */
OZ_HD uint32_t oz_fast_pack4(int32_t a, int32_t b, int32_t c, int32_t d)
{
#ifdef __CUDA_ARCH__
    return __byte_perm(__byte_perm(a, b, 0x0040), __byte_perm(c, d, 0x0040), 0x5410);
#else
    return (uint32_t)(uint8_t)a | (uint32_t)(uint8_t)b << 8 | (uint32_t)(uint8_t)c << 16 |
           (uint32_t)(uint8_t)d << 24;
#endif
}

#endif
