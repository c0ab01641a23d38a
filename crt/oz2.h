/* crt/oz2.h: the ozaki2 mode's integer math (ozaki2.md steps 1-4), plain C for host and device.
 *
 *   plan:      N and w from (k, bits): w_max(N, k) = the largest b with
 *              k * 4^b <= (P_N - 1) / 2 (exact, on multi-word integers);
 *              N the smallest in 2..20 with w_max >= bits; w = w_max(N, k).
 *   scaling:   a'' = rne(x * 2^(w - s)) from x's significand and exponent
 *              (|a''| <= 2^w can exceed 2^64), and its symmetric int8
 *              residues modulo the engine moduli.
 *   CRT:       X from its residues R_q in [0, m_q): c_q = R_q (P/m_q)^-1 mod m_q,
 *              S = sum_q c_q (P/m_q) < N P, X = S mod P, folded into
 *              [-(P/2 - 1), P/2 - 1] (P_N is even: (P_N - 1)/2 rounds to P/2 - 1).
 *   to double: RN(X) from the top 64 bits with a sticky bit, then ldexp by
 *              s + t - 2w, which rounds again only for subnormal results.
 *
 * Multi-word integers are OZ2_LIMBS little-endian 32-bit limbs, so the same
 * code runs in CUDA device code (no __int128). */
#ifndef OZCRT_CRT_OZ2_H
#define OZCRT_CRT_OZ2_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "moduli.h"
#include "oz_hd.h"

/* 192 bits: S < 20 P_20 < 2^161. */
#define OZ2_LIMBS 6

typedef struct oz2_uint {
    uint32_t w[OZ2_LIMBS];
} oz2_uint;

/* ---- multi-word unsigned integers ---- */

OZ_HD void oz2_uint_set(oz2_uint *x, uint64_t v)
{
    for (int i = 0; i < OZ2_LIMBS; i++)
        x->w[i] = 0;
    x->w[0] = (uint32_t)v;
    x->w[1] = (uint32_t)(v >> 32);
}

/* x = x * m + a (no overflow past OZ2_LIMBS limbs: the callers' values are bounded) */
OZ_HD void oz2_uint_mul_add(oz2_uint *x, uint32_t m, uint32_t a)
{
    uint64_t carry = a;
    for (int i = 0; i < OZ2_LIMBS; i++) {
        uint64_t t = (uint64_t)x->w[i] * m + carry;
        x->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
}

/* -1, 0, 1 as a <, ==, > b */
OZ_HD int oz2_uint_cmp(const oz2_uint *a, const oz2_uint *b)
{
    for (int i = OZ2_LIMBS - 1; i >= 0; i--)
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

/* a = a - b, for a >= b */
OZ_HD void oz2_uint_sub(oz2_uint *a, const oz2_uint *b)
{
    int64_t borrow = 0;
    for (int i = 0; i < OZ2_LIMBS; i++) {
        int64_t t = (int64_t)a->w[i] - (int64_t)b->w[i] - borrow;
        borrow = t < 0;
        a->w[i] = (uint32_t)(t + (borrow ? (INT64_C(1) << 32) : 0));
    }
}

/* r = a - b, for a >= b */
OZ_HD oz2_uint oz2_uint_diff(const oz2_uint *a, const oz2_uint *b)
{
    oz2_uint r = *a;
    oz2_uint_sub(&r, b);
    return r;
}

/* Leading zero bits of a nonzero 32-bit word. */
OZ_HD int oz2_clz32(uint32_t v)
{
#ifdef __CUDA_ARCH__
    return __clz((int)v);
#else
    return __builtin_clz(v);
#endif
}

/* The number of significant bits (0 for 0). */
OZ_HD int oz2_uint_bitlen(const oz2_uint *x)
{
    for (int i = OZ2_LIMBS - 1; i >= 0; i--)
        if (x->w[i])
            return 32 * i + 32 - oz2_clz32(x->w[i]);
    return 0;
}

/* Bit `pos` and up, 64 of them (bits past the top are 0); pos >= 0. */
OZ_HD uint64_t oz2_uint_bits64(const oz2_uint *x, int pos)
{
    uint64_t r = 0;
    for (int j = 0; j < 3; j++) { /* the three limbs that can hold bits pos .. pos + 63 */
        int li = pos / 32 + j;
        if (li >= OZ2_LIMBS)
            break;
        int sh = 32 * j - pos % 32; /* where limb li's bit 0 lands in r */
        uint64_t v = x->w[li];
        if (sh >= 0)
            r |= sh < 64 ? v << sh : 0;
        else
            r |= v >> -sh;
    }
    return r;
}

/* Whether any bit below `pos` is set. */
OZ_HD int oz2_uint_any_below(const oz2_uint *x, int pos)
{
    for (int i = 0; i < OZ2_LIMBS && 32 * i < pos; i++) {
        int n = pos - 32 * i;
        uint32_t mask = n >= 32 ? 0xffffffffu : ((UINT32_C(1) << n) - 1);
        if (x->w[i] & mask)
            return 1;
    }
    return 0;
}

/* x as a double, approximately (relative error below 2^-50); for quotient estimates. */
OZ_HD double oz2_uint_approx(const oz2_uint *x)
{
    double d = 0.0;
    for (int i = OZ2_LIMBS - 1; i >= 0; i--)
        d = d * 4294967296.0 + (double)x->w[i];
    return d;
}

/* ---- the engine moduli as a runtime table ---- */

/* m_q, q = 0 .. OZ_ENGINE_NMODULI - 1 (crt/moduli.h's list, in its order). */
OZ_HD uint32_t oz2_modulus(int q)
{
    switch (q) {
#define OZ2_MODULUS_CASE_(i, m) \
    case (i):                  \
        return (m);
        OZ_ENGINE_MODULI(OZ2_MODULUS_CASE_)
#undef OZ2_MODULUS_CASE_
    default:
        return 0;
    }
}

/* P_n = m_0 ... m_{n-1}, n <= OZ2_MAX_MODULI. */
OZ_HD oz2_uint oz2_product(int n)
{
    oz2_uint p;
    oz2_uint_set(&p, 1);
    for (int q = 0; q < n; q++)
        oz2_uint_mul_add(&p, oz2_modulus(q), 0);
    return p;
}

/* ---- step 1: the plan ---- */

typedef struct oz2_plan {
    int n; /* moduli count, 2..20; 0 when no N <= 20 reaches `bits` */
    int w; /* integer width: |a''|, |b''| <= 2^w */
} oz2_plan;

/* The largest b >= 0 with k * 4^b <= (P_n - 1) / 2, or -1 when even b = 0
 * fails. k >= 1. Exact: every comparison is on multi-word integers. */
OZ_HD int oz2_wmax(int n, int64_t k)
{
    oz2_uint h = oz2_product(n); /* P_n even (m_0 = 256): (P_n - 1) / 2 = P_n / 2 - 1 */
    oz2_uint one;
    oz2_uint_set(&one, 1);
    for (int i = 0; i < OZ2_LIMBS; i++) /* h = P_n / 2 */
        h.w[i] = (h.w[i] >> 1) | (i + 1 < OZ2_LIMBS ? h.w[i + 1] << 31 : 0);
    oz2_uint_sub(&h, &one);
    oz2_uint kk;
    oz2_uint_set(&kk, (uint64_t)k);
    /* k 4^b as k shifted left by 2b: start at the largest b the bit lengths allow */
    int b = (oz2_uint_bitlen(&h) - oz2_uint_bitlen(&kk)) / 2 + 1;
    for (; b >= 0; b--) {
        if (oz2_uint_bitlen(&kk) + 2 * b > 32 * OZ2_LIMBS)
            continue;
        oz2_uint t = kk;
        for (int i = 0; i < 2 * b; i++)
            oz2_uint_mul_add(&t, 2, 0);
        if (oz2_uint_cmp(&t, &h) <= 0)
            return b;
    }
    return -1;
}

/* N and w for a call with inner dimension k (k < 1 is taken as 1) and the
 * target `bits` (>= 1): ozaki2.md step 1. n == 0 when 20 moduli cannot serve. */
OZ_HD oz2_plan oz2_make_plan(int64_t k, int bits)
{
    oz2_plan p = {0, 0};
    if (k < 1)
        k = 1;
    for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; n++) {
        int w = oz2_wmax(n, k);
        if (w >= bits) {
            p.n = n;
            p.w = w;
            return p;
        }
    }
    return p;
}

/* ---- step 2: the scaled integer and its residues ---- */

OZ_HD int oz2_clz64(uint64_t x)
{
#ifdef __CUDA_ARCH__
    return __clzll((long long)x);
#else
    return x ? __builtin_clzll(x) : 64;
#endif
}

/* a'' = rne(x * 2^sh) for finite x, as |a''| = mag * 2^e with mag <= 2^53
 * and 0 <= e <= 25 (mag >= 2^52 whenever e > 0), and its sign. Exact: from
 * x's significand and exponent, no ldexp. |x| < 2^s and sh = w - s with
 * w <= 77 give |a''| <= 2^w, so e stays small. Returns 1 when a'' < 0. */
OZ_HD int oz2_scaled_int(double x, int sh, uint64_t *mag, int *e)
{
    uint64_t u = oz_f64_bits(x);
    int neg = (int)(u >> 63);
    int ef = (int)((u >> 52) & 0x7ff);
    uint64_t m = u & ((UINT64_C(1) << 52) - 1);
    int ex;
    if (ef == 0) {
        ex = -1074; /* subnormal (or zero): no implicit bit */
    } else {
        m |= UINT64_C(1) << 52;
        ex = ef - 1075;
    }
    int shift = ex + sh; /* |x| 2^sh = m 2^shift */
    *e = 0;
    if (m == 0) {
        *mag = 0;
        return 0;
    }
    if (shift >= 0) {
        int lz = oz2_clz64(m) - 11; /* normalise: bit 52 set */
        int t = lz < shift ? lz : shift;
        *mag = m << t;
        *e = shift - t;
    } else if (shift < -54) {
        *mag = 0; /* m 2^shift < 2^53 2^-55 < 1/2 */
    } else {
        int r = -shift; /* 1 .. 54 */
        uint64_t q = m >> r;
        uint64_t rem = m & ((UINT64_C(1) << r) - 1);
        uint64_t half = UINT64_C(1) << (r - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        *mag = q;
    }
    return *mag ? neg : 0;
}

/* a'' = mag 2^e (e <= 25, so a'' < 2^79) as four 22-bit pieces, lowest
 * first: a'' = c0 + c1 2^22 + c2 2^44 + c3 2^66. Done once per element;
 * every modulus then costs three multiply-adds and one remainder. */
OZ_HD void oz2_split22(uint64_t mag, int e, uint32_t c[4])
{
    const uint64_t mask = (UINT64_C(1) << 22) - 1;
    uint64_t lo = mag << e, hi = e ? mag >> (64 - e) : 0; /* bits 0..63 and 64..127 */
    c[0] = (uint32_t)(lo & mask);
    c[1] = (uint32_t)((lo >> 22) & mask);
    c[2] = (uint32_t)(((lo >> 44) | (hi << 20)) & mask);
    c[3] = (uint32_t)((hi >> 2) & mask);
}

/* The symmetric int8 residue modulo m (m <= 256) of (-1)^neg times the
 * integer in pieces c (oz2_split22): the residue r in [0, m) is stored as
 * r - m when r >= 128, so that it lies in [-128, 127] (for 256: the low
 * byte as int8). The sum stays below 2^32 (c3 < 2^13, the others < 2^22,
 * the powers' residues < 256); with m a compile-time constant the powers
 * fold and the remainder is a multiplication. */
OZ_HD int8_t oz2_residue22(const uint32_t c[4], int neg, uint32_t m)
{
    const uint32_t k1 = (UINT32_C(1) << 22) % m;
    const uint32_t k2 = (uint32_t)((UINT64_C(1) << 44) % m);
    const uint32_t k3 = (k2 * k1) % m; /* 2^66 mod m */
    uint32_t r = (c[3] * k3 + c[2] * k2 + c[1] * k1 + c[0]) % m;
    if (neg && r)
        r = m - r;
    return (int8_t)(r >= 128 ? (int32_t)r - (int32_t)m : (int32_t)r);
}

/* The same for (-1)^neg mag 2^e (oz2_scaled_int's form), one modulus. */
OZ_HD int8_t oz2_residue(uint64_t mag, int e, int neg, uint32_t m)
{
    uint32_t c[4];
    oz2_split22(mag, e, c);
    return oz2_residue22(c, neg, m);
}

/* ---- step 3: the CRT ---- */

/* The constants of the CRT over the first n engine moduli. */
typedef struct oz2_crt_consts {
    int n;
    uint32_t m[OZ2_MAX_MODULI];     /* m_q */
    uint32_t inv[OZ2_MAX_MODULI];   /* (P/m_q)^-1 mod m_q */
    uint32_t mu[OZ2_MAX_MODULI];    /* floor(2^32 / m_q): x mod m_q for x < 2^16 */
    oz2_uint cof[OZ2_MAX_MODULI];   /* P / m_q */
    oz2_uint P, half;               /* P = P_n, half = P / 2 */
    double inv_P;                   /* 1 / P, approximately */
} oz2_crt_consts;

/* a^-1 mod m for a, m coprime, m >= 2 (extended Euclid on small integers). */
OZ_HD uint32_t oz2_inverse_mod(uint32_t a, uint32_t m)
{
    int64_t r0 = m, r1 = a % m, t0 = 0, t1 = 1;
    while (r1) {
        int64_t q = r0 / r1, t;
        t = r0 - q * r1;
        r0 = r1;
        r1 = t;
        t = t0 - q * t1;
        t0 = t1;
        t1 = t;
    }
    return (uint32_t)(((t0 % (int64_t)m) + (int64_t)m) % (int64_t)m);
}

/* x mod m for x < 2^16, m <= 256, by multiply-high (exact after one correction). */
OZ_HD uint32_t oz2_mod_small(uint32_t x, uint32_t m, uint32_t mu)
{
    uint32_t q = (uint32_t)(((uint64_t)x * mu) >> 32);
    uint32_t r = x - q * m;
    return r >= m ? r - m : r;
}

/* x mod m for any x >= 0 and small m, on the multi-word integer. */
OZ_HD uint32_t oz2_uint_mod(const oz2_uint *x, uint32_t m)
{
    uint64_t r = 0;
    for (int i = OZ2_LIMBS - 1; i >= 0; i--)
        r = ((r << 32) | x->w[i]) % m;
    return (uint32_t)r;
}

/* Fills c for n moduli, 2 <= n <= OZ2_MAX_MODULI. */
OZ_HD void oz2_crt_init(oz2_crt_consts *c, int n)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->P = oz2_product(n);
    for (int i = 0; i < OZ2_LIMBS; i++)
        c->half.w[i] = (c->P.w[i] >> 1) | (i + 1 < OZ2_LIMBS ? c->P.w[i + 1] << 31 : 0);
    c->inv_P = 1.0 / oz2_uint_approx(&c->P);
    for (int q = 0; q < n; q++) {
        uint32_t m = oz2_modulus(q);
        c->m[q] = m;
        c->mu[q] = (uint32_t)((UINT64_C(1) << 32) / m);
        oz2_uint cof;
        oz2_uint_set(&cof, 1);
        for (int j = 0; j < n; j++)
            if (j != q)
                oz2_uint_mul_add(&cof, oz2_modulus(j), 0);
        c->cof[q] = cof;
        c->inv[q] = oz2_inverse_mod(oz2_uint_mod(&cof, m), m);
    }
}

/* The exact integer X (|X| <= P/2 - 1) from its residues r[q * stride] in
 * [0, m_q), q < n, as a magnitude and a sign (returns 1 for X < 0).
 * Residues at or above m_q are taken modulo m_q. */
OZ_HD int oz2_crt_reconstruct(const oz2_crt_consts *c, const uint8_t *r, int64_t stride, oz2_uint *mag)
{
    /* S = sum_q c_q cof_q, limb by limb in 64 bits: each term < 2^40, 20 of them < 2^45 */
    uint64_t acc[OZ2_LIMBS];
    for (int i = 0; i < OZ2_LIMBS; i++)
        acc[i] = 0;
    for (int q = 0; q < c->n; q++) {
        uint32_t rq = r[(int64_t)q * stride];
        uint32_t cq = oz2_mod_small(rq * c->inv[q], c->m[q], c->mu[q]);
        for (int i = 0; i < OZ2_LIMBS; i++)
            acc[i] += (uint64_t)cq * c->cof[q].w[i];
    }
    oz2_uint s;
    uint64_t carry = 0;
    for (int i = 0; i < OZ2_LIMBS; i++) {
        uint64_t t = acc[i] + carry;
        s.w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    /* X = S mod P, S < n P: the quotient estimate through doubles is off by at most one */
    double qd = oz2_uint_approx(&s) * c->inv_P;
    uint32_t qe = qd > 0.0 ? (uint32_t)qd : 0;
    oz2_uint t = c->P;
    oz2_uint_mul_add(&t, qe, 0); /* t = qe P */
    if (oz2_uint_cmp(&t, &s) > 0)
        oz2_uint_sub(&t, &c->P);
    oz2_uint_sub(&s, &t);
    if (oz2_uint_cmp(&s, &c->P) >= 0)
        oz2_uint_sub(&s, &c->P);
    /* the signed fold */
    if (oz2_uint_cmp(&s, &c->half) >= 0) {
        *mag = oz2_uint_diff(&c->P, &s);
        return 1;
    }
    *mag = s;
    return 0;
}

/* ---- step 4: back to double ---- */

/* 2^e exactly, -1074 <= e <= 1023. */
OZ_HD double oz2_pow2(int e)
{
    return oz_bits_f64(e >= -1022 ? (uint64_t)(e + 1023) << 52 : UINT64_C(1) << (e + 1074));
}

/* ldexp(x, e), correctly rounded (to nearest even) like C's ldexp, from
 * multiplications by exact powers of two of which at most the last rounds. */
OZ_HD double oz2_ldexp(double x, int e)
{
    if (x == 0.0 || e == 0 || !(x - x == 0.0)) /* zero, no shift, Inf or NaN */
        return x;
    if (e > 0) {
        while (e > 1023) { /* exact until it overflows, and then the result does too */
            x = x * oz2_pow2(1023);
            e -= 1023;
        }
        return x * oz2_pow2(e);
    }
    int ef = (int)((oz_f64_bits(x) >> 52) & 0x7ff);
    if (ef == 0) { /* subnormal x: made normal by an exact factor */
        x = x * oz2_pow2(54);
        e -= 54;
        ef = (int)((oz_f64_bits(x) >> 52) & 0x7ff);
    }
    int ex = ef - 1022; /* |x| in [2^(ex-1), 2^ex) */
    if (ex + e >= -1021) { /* normal result: every factor exact */
        while (e < -1022) {
            x = x * oz2_pow2(-1022);
            e += 1022;
        }
        return x * oz2_pow2(e);
    }
    /* subnormal or zero result: y = x 2^(1 - ex) 2^-1022 in [2^-1022, 2^-1021),
     * exact; then one rounding multiplication by 2^(e + ex - 1 + 1022) */
    x = x * oz2_pow2(1 - ex);
    x = x * oz2_pow2(-1022);
    int rest = e + ex - 1 + 1022; /* < 0 */
    if (rest < -1074)
        return x * 0.0; /* |result| < 2^-2095: rounds to a signed zero */
    return x * oz2_pow2(rest);
}

/* RN(X) for X = (-1)^neg mag, then ldexp by e: ozaki2.md step 4's P.
 * The top 64 bits of mag with the bits below ORed into the lowest (sticky)
 * convert to double with the same rounding as mag itself: the rounding
 * position (bit 11 of those 64) lies above the sticky bit. */
OZ_HD double oz2_to_double(const oz2_uint *mag, int neg, int e)
{
    int len = oz2_uint_bitlen(mag);
    uint64_t top;
    int shift = 0;
    if (len <= 64) {
        top = oz2_uint_bits64(mag, 0);
    } else {
        shift = len - 64;
        top = oz2_uint_bits64(mag, shift) | (uint64_t)oz2_uint_any_below(mag, shift);
    }
    double d = (double)top; /* RN, ties to even; X < 2^156: the shift below is exact */
    if (neg)
        d = -d;
    return oz2_ldexp(d, shift + e);
}

/* ---- step 2 on the tensor cores: the GPU's residue arithmetic ----
 *
 * The same residues as oz2_scaled_int + oz2_residue22. The integer goes
 * to the tensor cores biased to be nonnegative, z = a'' + 2^(w+1) (|a''|
 * <= 2^w), as 128 bits (oz2_biased_u128; one 64-bit word while w <= 62:
 * oz2_biased_u64, a rounding conversion and an add). Its bytes B_b
 * (b = 0..15) are the unsigned operand of an INT8 product with the
 * symmetric residues K_b(m) of 2^(8 b) mod m (oz2_bytepow: |K_b| <= 127;
 * for 256, K_0 = 1 and the others 0), accumulated onto the constant
 * oz2_bias_bits(w, m) = bits(MAGIC) - (2^(w+1) mod m):
 *     X = bits(MAGIC) + v,  v = sum_b B_b K_b(m) - (2^(w+1) mod m) == a'' (mod m),
 * |v| < 16 255 127 + 256 < 2^19, one row of an mma.sync u8 x s8
 * (kernels/oz2_residues.cu). Then the reduction, on the float units
 * (oz2_byte_residue_bits): with X read as the float MAGIC + v,
 *     Q = rint((v + (m+1)/2 - 128) / m) = floor((v + m - 128) / m)
 * (no ties: the quotient's fraction is at least 1/(2m) from 1/2, and the
 * float product is within 2^22 2^-32 = 2^-10 of it), and
 *     F = X - m Q = MAGIC + r,  r in [128 - m, 127], r == a'' (mod m),
 * exactly: the low byte of F's bits is the symmetric int8 residue (r - m
 * stored for r >= 128), computed as the low byte of bits(X) - m
 * bits(MAGIC + Q), one integer multiply-add (bits(MAGIC) = 0x4B400000 has a
 * zero low byte). For m = 256 it is the low byte of X. Every float here is
 * an integer near MAGIC = 1.5 2^23 (|v| < 2^22 - 128: exact).
 * tests/unit/test_oz2_fast.c checks all of it against oz2_residue22. */

#define OZ2_MAGIC 12582912.0f /* 1.5 2^23: integers near it are exact, their low bits the integer's */
#define OZ2_MAGIC_BITS UINT32_C(0x4B400000)
#define OZ2_BYTES 16             /* bytes of |a''| (w <= 127) */

#ifdef __CUDA_ARCH__
#define OZ2_FMAF_(a, b, c) __fmaf_rn((a), (b), (c))
#define OZ2_FADD_(a, b) __fadd_rn((a), (b))
#define OZ2_DFMA_(a, b, c) __fma_rn((a), (b), (c))
#define OZ2_DMUL_(a, b) __dmul_rn((a), (b))
#define OZ2_DADD_(a, b) __dadd_rn((a), (b))
#else
#define OZ2_FMAF_(a, b, c) fmaf((a), (b), (c))
#define OZ2_FADD_(a, b) ((float)(a) + (float)(b))
#define OZ2_DFMA_(a, b, c) fma((a), (b), (c))
#define OZ2_DMUL_(a, b) ((double)(a) * (double)(b))
#define OZ2_DADD_(a, b) ((double)(a) + (double)(b))
#endif

/* K_b(m): the symmetric residue of 2^(8 b) mod m (m = 256, or odd m > 128),
 * in [-(m-1)/2, (m-1)/2]. Compile-time where b and m are. */
OZ_HD OZ_CONSTEXPR int32_t oz2_bytepow(int b, uint32_t m)
{
    uint32_t k = 1;
    for (int i = 0; i < b; i++)
        k = (k * 256u) % m; /* for m = 256: 0 from b = 1 on */
    return k > m / 2 ? (int32_t)k - (int32_t)m : (int32_t)k;
}

/* K_{4j}(m) .. K_{4j+3}(m) as the four bytes of one word (lowest first). */
OZ_HD OZ_CONSTEXPR uint32_t oz2_bytepow4(int j, uint32_t m)
{
    return (uint32_t)(uint8_t)oz2_bytepow(4 * j, m) | (uint32_t)(uint8_t)oz2_bytepow(4 * j + 1, m) << 8 |
           (uint32_t)(uint8_t)oz2_bytepow(4 * j + 2, m) << 16 | (uint32_t)(uint8_t)oz2_bytepow(4 * j + 3, m) << 24;
}

/* 2^sh as a product of two powers of two, f1 = 2^min(sh, 1023) and f2 <=
 * 2^127 (sh = w - s <= w + 1074), for oz2_scaled_u128: |x| f1 is exact or
 * below 2^-1022 (where a'' = 0 either way: then f2 = 1), and f2 is exact. */
typedef struct oz2_shift {
    double f1, f2;
} oz2_shift;

OZ_HD oz2_shift oz2_make_shift(int sh)
{
    const int e1 = sh > 1023 ? 1023 : sh;
    oz2_shift r = {oz2_pow2(e1), oz2_pow2(sh - e1)};
    return r;
}

/* Double to unsigned 64-bit integer, rounded to nearest even / toward zero
 * (the argument below 2^64). */
OZ_HD uint64_t oz2_u64_rn(double y)
{
#ifdef __CUDA_ARCH__
    return __double2ull_rn(y);
#else
    return (uint64_t)nearbyint(y); /* the default rounding mode: to nearest even */
#endif
}
OZ_HD uint64_t oz2_u64_rz(double y)
{
#ifdef __CUDA_ARCH__
    return __double2ull_rz(y);
#else
    return (uint64_t)y;
#endif
}

/* oz2_scaled_int's integer in two words, |a''| = lo + 2^64 hi, and its sign
 * (1: a'' < 0): y = |x| 2^sh exactly (or below 2^-1022), hi = floor(y
 * 2^-64), lo = rne(y - 2^64 hi) (exact: at or above 2^64, y is a multiple
 * of 2^12, and below it a double under 2^64 rounds to at most 2^64 - 2^11).
 * |a''| <= 2^w < 2^84. */
OZ_HD int oz2_scaled_u128(double x, oz2_shift s, uint64_t *lo, uint64_t *hi)
{
    const double y = OZ2_DMUL_(OZ2_DMUL_(fabs(x), s.f1), s.f2);
    const uint64_t h = oz2_u64_rz(OZ2_DMUL_(y, 0x1p-64));
    const uint64_t l = oz2_u64_rn(OZ2_DFMA_(-(double)h, 0x1p64, y));
    *lo = l;
    *hi = h;
    return (int)(oz_f64_bits(x) >> 63) & (int)((l | h) != 0);
}

/* z = a'' + 2^(w+1) as an unsigned 128-bit integer lo + 2^64 hi (w <= 83). */
OZ_HD void oz2_biased_u128(double x, oz2_shift s, int w, uint64_t *lo, uint64_t *hi)
{
    uint64_t l, h;
    if (oz2_scaled_u128(x, s, &l, &h)) { /* two's complement */
        l = ~l + 1;
        h = ~h + (uint64_t)(l == 0);
    }
    if (w + 1 < 64) {
        const uint64_t b = UINT64_C(1) << (w + 1);
        l += b;
        h += (uint64_t)(l < b);
    } else {
        h += UINT64_C(1) << (w + 1 - 64);
    }
    *lo = l;
    *hi = h;
}

/* The same for w <= 62, in one word: rne(x 2^sh) as a signed 64-bit
 * integer (|a''| <= 2^62), plus 2^(w+1). */
OZ_HD uint64_t oz2_biased_u64(double x, oz2_shift s, int w)
{
    const double y = OZ2_DMUL_(OZ2_DMUL_(x, s.f1), s.f2);
#ifdef __CUDA_ARCH__
    const int64_t a = __double2ll_rn(y);
#else
    const int64_t a = (int64_t)nearbyint(y);
#endif
    return (uint64_t)a + (UINT64_C(1) << (w + 1));
}

/* bits(MAGIC) - (2^(w+1) mod m): the byte sums' start for modulus m. */
OZ_HD uint32_t oz2_bias_bits(int w, uint32_t m)
{
    uint32_t r = 1;
    for (int i = 0; i <= w; i++)
        r = (r * 2u) % m;
    return OZ2_MAGIC_BITS - r;
}

/* The low byte of the result is the symmetric int8 residue modulo m of
 * a'', from X = bits(MAGIC + v) (v == a'' mod m, |v| < 2^22 - 128). */
OZ_HD uint32_t oz2_byte_residue_bits(uint32_t X, uint32_t m)
{
    if (m == 256)
        return X;
    const float xpp = OZ2_FADD_(oz_bits_f32(X), -(float)(12582912 - (int)((m + 1) / 2) + 128)); /* v + (m+1)/2 - 128 */
    const float t = OZ2_FMAF_(xpp, 1.0f / (float)m, OZ2_MAGIC); /* MAGIC + Q */
    return X - m * oz_f32_bits(t);
}

/* The same on the host, end to end (the tests' model of the kernel): the
 * residue modulo m of a'' = rne(x 2^sh) at width w. */
OZ_HD uint8_t oz2_byte_residue(double x, int sh, int w, uint32_t m)
{
    uint64_t lo, hi;
    oz2_biased_u128(x, oz2_make_shift(sh), w, &lo, &hi);
    uint32_t X = oz2_bias_bits(w, m);
    for (int b = 0; b < OZ2_BYTES; b++)
        X += (uint32_t)((int32_t)((b < 8 ? lo >> (8 * b) : hi >> (8 * (b - 8))) & 0xffu) * oz2_bytepow(b, m));
    return (uint8_t)(oz2_byte_residue_bits(X, m) & 0xffu);
}

/* ---- step 3 in floating point: the GPU's CRT ----
 *
 * S' = sum_q r_q f_q with f_q = inv_q cof_q (< P; f_q == [q == j] mod m_j),
 * so S' == X (mod P) without a per-modulus reduction, S' < n 256 P (n <= 24
 * moduli: 20 engine moduli, or the complex path's split moduli, whose fold
 * is the same for odd P). f_q is held as nl limbs of 36 bits, f_ql, and S'
 * as nl exact double accumulators
 * acc_l = sum_q r_q f_ql < 24 255 2^36 < 2^49, one FP64 FMA per modulus and
 * limb: the residue byte goes into the mantissa as R = 1 + r 2^-12 (one byte
 * permute, no conversion), F[q][l] = 4096 f_ql, and acc_l starts at
 * -sum_q 4096 f_ql, so that acc_l = sum_q (R_q F[q][l]) - sum_q 4096 f_ql,
 * every partial sum an integer below 24 2^48 < 2^52.6 (exact). Then
 *     D = sum_l acc_l c_l ~ S'/P   (c_l = 2^(36 l) / P, D within 2^-34 of S'/P),
 *     qr = rint(D),  e_l = acc_l - qr P_l  (exact, |e_l| < 2^49),
 *     X' = sum_l e_l 2^(36 l) = S' - qr P.
 * When |D - qr| <= 1/2 - 2^-30, |X'| < P/2, so X' is the fold's X (P even:
 * |X'| <= P/2 - 1), whatever oz2_crt_reconstruct gives; otherwise (X within
 * about 2^-30 P of +-P/2: never for typical data) the caller falls back to
 * oz2_crt_reconstruct. Carries (exact floors in FP64) make the limbs
 * 0 <= e_l < 2^36, and oz2_cf_limbs_rn rounds X from them (the tests pack
 * them into oz2_u192 words to compare with the exact reconstruction). */

#define OZ2_CF_BITS 36
#define OZ2_CF_MAXL 5 /* 5 36 = 180 >= 156 bits of P_20 */

#define OZ2_CF_MAXQ 24 /* the most moduli: the complex path's split moduli (crt/oz2_complex.h) */

typedef struct oz2_crt_fast {
    int n, nl;                                  /* moduli, limbs */
    double F[OZ2_CF_MAXQ][OZ2_CF_MAXL];         /* 4096 times the 36-bit limbs of f_q */
    double acc0[OZ2_CF_MAXL];                   /* the accumulators' start: -sum_q F[q][l] */
    double Pl[OZ2_CF_MAXL];                     /* 36-bit limbs of P */
    double c[OZ2_CF_MAXL];                      /* about 2^(36 l) / P (relative error below 2^-49) */
} oz2_crt_fast;

/* The limbs of P_n (n = 2..20): ceil(bitlen(P_n) / 36), a compile-time
 * constant for the kernel's template (bit lengths: test_oz2_crt's table). */
#define OZ2_CF_LIMBS(n) ((n) <= 4 ? 1 : (n) <= 9 ? 2 : (n) <= 13 ? 3 : (n) <= 18 ? 4 : 5)
OZ_HD int oz2_cf_limbs(int n) { return OZ2_CF_LIMBS(n); }

/* 36 bits of x from bit pos, as a double (exact). */
OZ_HD double oz2_cf_limb(const oz2_uint *x, int pos)
{
    uint64_t v = oz2_uint_bits64(x, pos) & ((UINT64_C(1) << OZ2_CF_BITS) - 1);
    return (double)v;
}

/* The tables for n <= OZ2_CF_MAXQ moduli of product P (inv_P about 1/P), nl
 * limbs of 36 bits holding P, f_q = inv[q] cof[q] (cof[q] = P / m_q, inv[q]
 * any multiplier: (P/m_q)^-1 mod m_q reconstructs X from its residues; the
 * complex path folds its unsplit's constants into it). */
OZ_HD void oz2_crt_fast_init_of(oz2_crt_fast *f, int n, int nl, const oz2_uint *P, double inv_P, const oz2_uint *cof,
                                const uint32_t *inv)
{
    memset(f, 0, sizeof *f);
    f->n = n;
    f->nl = nl;
    for (int l = 0; l < f->nl; l++) {
        f->Pl[l] = oz2_cf_limb(P, OZ2_CF_BITS * l);
        f->c[l] = oz2_pow2(OZ2_CF_BITS * l) * inv_P;
    }
    for (int q = 0; q < n; q++) {
        oz2_uint fq = cof[q];
        oz2_uint_mul_add(&fq, inv[q], 0);
        for (int l = 0; l < f->nl; l++) {
            f->F[q][l] = 4096.0 * oz2_cf_limb(&fq, OZ2_CF_BITS * l);
            f->acc0[l] -= f->F[q][l]; /* exact: below 24 2^48 < 2^53 */
        }
    }
}

OZ_HD void oz2_crt_fast_init(oz2_crt_fast *f, const oz2_crt_consts *c)
{
    oz2_crt_fast_init_of(f, c->n, oz2_cf_limbs(c->n), &c->P, c->inv_P, c->cof, c->inv);
}

/* The accumulators' start (before the first oz2_cf_accumulate). */
OZ_HD void oz2_cf_start(const oz2_crt_fast *f, int nl, double acc[OZ2_CF_MAXL])
{
    for (int l = 0; l < OZ2_CF_MAXL; l++)
        acc[l] = l < nl ? f->acc0[l] : 0.0;
}

/* R = 1 + r 2^-12 for the residue r in byte `byte` (0..3) of `word`: the
 * high word 0x3FF0rr00 by one byte permute, the low word 0. */
OZ_HD double oz2_cf_residue(uint32_t word, int byte)
{
#ifdef __CUDA_ARCH__
    const uint32_t hi = __byte_perm(word, UINT32_C(0x3FF00000), UINT32_C(0x7604) | ((uint32_t)byte << 4));
#else
    const uint32_t hi = UINT32_C(0x3FF00000) | (((word >> (8 * byte)) & 0xffu) << 8);
#endif
    return oz_bits_f64((uint64_t)hi << 32);
}

/* acc_l += R F[q][l] for R = oz2_cf_residue(...) of modulus q, nl limbs. */
OZ_HD void oz2_cf_accumulate(const oz2_crt_fast *f, int q, int nl, double R, double acc[OZ2_CF_MAXL])
{
    for (int l = 0; l < nl; l++)
        acc[l] = OZ2_DFMA_(R, f->F[q][l], acc[l]);
}

/* A magnitude as three 64-bit words (little-endian): the fast CRT's output,
 * kept in registers (no indexed limbs). */
typedef struct oz2_u192 {
    uint64_t w0, w1, w2;
} oz2_u192;

OZ_HD oz2_u192 oz2_u192_of(const oz2_uint *x)
{
    oz2_u192 r = {x->w[0] | (uint64_t)x->w[1] << 32, x->w[2] | (uint64_t)x->w[3] << 32,
                  x->w[4] | (uint64_t)x->w[5] << 32};
    return r;
}

/* ldexp(x, e) for a finite nonzero normal x: one exact multiplication when
 * 2^e and the result are normal (the kernels' case), else oz2_ldexp. */
OZ_HD double oz2_ldexp_normal(double x, int e)
{
    const int r = (int)((oz_f64_bits(x) >> 52) & 0x7ff) + e; /* the result's biased exponent */
    if (e >= -1022 && e <= 1023 && r >= 1 && r <= 2046)
        return x * oz2_pow2(e);
    return oz2_ldexp(x, e);
}

/* oz2_to_double on the three-word form, bit for bit (test_oz2_fast): the
 * 64 bits from the magnitude's highest set bit (the highest nonzero word
 * shifted up, the next word's top bits after it) with every bit below ORed
 * into the lowest (sticky) convert once, rounding as the magnitude itself
 * would; then 2^(64 k - s + e) for word k and shift s. Few branches: the
 * CRT kernel runs it for every element. */
OZ_HD double oz2_to_double3(const oz2_u192 *x, int neg, int e)
{
    const int k = x->w2 ? 2 : x->w1 ? 1 : 0;
    const uint64_t hi = k == 2 ? x->w2 : k == 1 ? x->w1 : x->w0;
    if (hi == 0)
        return neg ? -0.0 : 0.0; /* X = 0 */
    const uint64_t mid = k == 2 ? x->w1 : k == 1 ? x->w0 : 0, lo = k == 2 ? x->w0 : 0;
    const int s = oz2_clz64(hi); /* 0 .. 63 */
    const uint64_t top = (hi << s) | ((mid >> 1) >> (63 - s)) | (uint64_t)(((mid << s) | lo) != 0);
#ifdef __CUDA_ARCH__
    double d = __ull2double_rn(top);
#else
    double d = (double)top; /* RN, ties to even */
#endif
    if (neg)
        d = -d;
    return oz2_ldexp_normal(d, 64 * k - s + e);
}

/* floor(e s) for a power of two s, |e s| < 2^51, e s a multiple of 2^-20. */
OZ_HD double oz2_cf_floor(double e, double s)
{
#ifdef __CUDA_ARCH__
    return __dadd_rn(__fma_rd(e, s, 6755399441055744.0), -6755399441055744.0); /* 1.5 2^52 + floor, rounded down */
#else
    return floor(e * s);
#endif
}

/* Carries over nl limbs of 36 bits held in doubles (integers, |e_l| < 2^50):
 * afterwards 0 <= e_l < 2^36 for l < nl - 1, the sum unchanged (exact). */
OZ_HD void oz2_cf_carry(int nl, double e[OZ2_CF_MAXL])
{
    for (int l = 0; l + 1 < nl; l++) {
        const double c = oz2_cf_floor(e[l], 0x1p-36);
        e[l] = OZ2_DFMA_(c, -0x1p36, e[l]);
        e[l + 1] = OZ2_DADD_(e[l + 1], c);
    }
}

/* The fold's quotient: qr = rint(D) for D = sum_l acc_l c_l (about X' / P,
 * 0 <= D < 2^13) and fr = D - qr (exact); -1 when |fr| is within 2^-30 of
 * 1/2 (X' too near +-P/2 for the estimate: the exact CRT decides). */
OZ_HD int oz2_cf_fold_quotient(const oz2_crt_fast *f, int nl, const double acc[OZ2_CF_MAXL], double *qr, double *fr)
{
    const double M = 6755399441055744.0; /* 1.5 2^52 */
    double D = 0.0;
    for (int l = nl - 1; l >= 0; l--)
        D = OZ2_DFMA_(acc[l], f->c[l], D);
    *qr = OZ2_DADD_(OZ2_DADD_(D, M), -M); /* rint(D) */
    *fr = OZ2_DADD_(D, -*qr);             /* exact */
    return fabs(*fr) <= 0.5 - 0x1p-30 ? 0 : -1;
}

/* RN(X) for X = sum_l e_l 2^(36 l) given by canonical limbs (0 <= e_l <
 * 2^36 below the top; the top limb may be negative, carrying X's sign), in
 * floating point only: from the top, V = V 2^36 + e_l while that is exact
 * (-2^17 <= V < 2^17: the sum stays in [-2^53, 2^53 - 1]). At the first
 * limb l where V is outside, |h| = |RN(V 2^36 + e_l)| >= 2^53 (above 2^53
 * for V < -2^17) and its error r (FastTwoSum: |V 2^36| >= e_l) are exact; in
 * units of 2^(36 l) X is h + r + L with L in [0, 1) from the limbs below,
 * and every midpoint between the doubles of magnitude 2^53 and up is an
 * integer, so L only breaks a tie: RN(X) = 2^(36 l) RN(h + (r + L/2 rounded
 * to 0 or 1/2)), one rounding of exact operands, for either sign.
 * Bit for bit oz2_to_double3's RN (test_oz2_fast), without 64-bit integer
 * work. */
OZ_HD double oz2_cf_limbs_rn(const double e[OZ2_CF_MAXL], int nl)
{
    double V = e[nl - 1];
    for (int l = nl - 2; l >= 0; l--) {
        if (V >= -131072.0 && V < 131072.0) { /* |V| <= 2^17: V 2^36 + e_l in [-2^53, 2^53 - 1], exact */
            V = OZ2_DFMA_(V, 0x1p36, e[l]);
            continue;
        }
        const double h = OZ2_DFMA_(V, 0x1p36, e[l]);          /* RN(V 2^36 + e_l) >= 2^53 */
        const double r = OZ2_DADD_(e[l], -OZ2_DFMA_(V, -0x1p36, h)); /* (V 2^36 + e_l) - h, exact */
        int below = 0;
        for (int j = 0; j < l; j++)
            below |= e[j] != 0.0;
        const double y = OZ2_DADD_(h, OZ2_DADD_(r, below ? 0.5 : 0.0)); /* r + 1/2 exact: |r| <= 2^36 */
        return OZ2_DMUL_(y, oz2_pow2(OZ2_CF_BITS * l));                 /* exact: below 2^157 */
    }
    return V;
}

/* X from the accumulators as signed limbs, in place of them: e_l = acc_l -
 * qr P_l (exact), carries by floors leave the limbs below the top in [0,
 * 2^36) and X's sign in the top limb, the form oz2_cf_limbs_rn takes as it
 * is: no sign folding, no second carry. 0, or -1 where the fast path cannot
 * decide the fold (oz2_cf_fold_quotient's margin; the limbs are then not
 * X's). Branch-free: the CRT kernel folds its four elements side by side
 * before rounding any, then oz2_cf_limbs_rn gives RN(X) (test_oz2_fast
 * checks the pair against the magnitude model, sign and limbs of |X|). */
OZ_HD int oz2_cf_fold_limbs(const oz2_crt_fast *f, int nl, double acc[OZ2_CF_MAXL])
{
    double qr, fr;
    const int rc = oz2_cf_fold_quotient(f, nl, acc, &qr, &fr);
    for (int l = 0; l < OZ2_CF_MAXL; l++)
        acc[l] = l < nl ? OZ2_DFMA_(qr, -f->Pl[l], acc[l]) : 0.0; /* exact, |e_l| < 2^49 */
    oz2_cf_carry(nl, acc);
    return rc;
}

#endif
