/* crt/oz2_auto.h: the ozaki2 mode's automatic precision (docs/ozaki2-auto.md), plain C for host and device.
 *
 * With OZCRT_BITS=auto:B the plan (N, w) comes from the data, so that every
 * element of the result meets
 *     |X 2^(s+t-2w) - (op(A) op(B))_ij| <= 2^-B (|op(A)| |op(B)|)_ij
 * (the fixed-point truncation's share of the error; the rounding of X and
 * the epilogue add what they add in the fixed-width mode). Everything the
 * choice reads is an exact integer, so the CPU reference and the GPU make
 * the same choice whatever the order of their sums:
 *
 *   alpha_ik = |a_ik| 2^-s_i in [0, 1), beta_kj likewise with t_j;
 *   A1_i = sum_k ceil(alpha_ik 2^E)        >= 2^E ||alpha_i||_1   (all k)
 *   g_i  = the row's estimate scale (oz2a_row_scale, from A1_i and k)
 *   qa_ik = min(floor(alpha_ik 2^g_i), 127) for k < K_E = min(k, OZ2A_KEST)
 *   G_ij = sum_{k < K_E} qa_ik qb_kj        <= 2^(g_i+h_j) sum_k alpha beta
 *       (one INT8 GEMM, exact in int32: K_E 127^2 < 2^31)
 *   w_ij = the least w meeting the guarantee at (i, j) (oz2a_elem_w),
 *   w_need = max_ij w_ij; N the least with w_range(N) >= w_need (the range
 *   from A1 and B1, oz2a_range_ok); w = min(w_range(N), max(w_need, W_SOFT)).
 * In two parts where every nonzero row's g and column's h is 7
 * (oz2a_two_parts): the plan first from G' (the sums over k < K_1, 3/8 or
 * 5/8 of K_E, oz2a_k_first), taken when it emulates with at most the fixed width's
 * moduli count at B bits (oz2a_first_taken); else from G.
 * No N <= 20 (or w_need > OZ2A_W_MAX, or G_ij = 0 where row i and column j
 * are both nonzero): the call runs natively ("auto-native"). */
#ifndef OZCRT_CRT_OZ2_AUTO_H
#define OZCRT_CRT_OZ2_AUTO_H

#include <fenv.h>
#include <math.h>
#include <stdint.h>

#include "oz2.h"
#include "../slicing/slicing.h" /* OZ_SCALE_SPECIAL */

#define OZ2A_E 20          /* bits of the 1-norm sums' terms: ceil(alpha 2^E) <= 2^E */
#define OZ2A_QMAX 127      /* the estimate's operands are int8 in [0, 127] */
#define OZ2A_GMIN 7        /* g >= 7: alpha < 1 gives floor(alpha 2^7) <= 127 unclipped */
#define OZ2A_GMAX 60       /* g <= 60 */
#define OZ2A_TARGET 3      /* a row's mean alpha goes to [2^3, 2^4) of the 127 */
#define OZ2A_KEST 65536    /* K_E: the estimate's inner length at most (int32 exact) */
#define OZ2A_KMAX (INT64_C(1) << 33) /* beyond: native (the sums' bounds below) */
#define OZ2A_W_MAX 77      /* |a''| <= 2^w: oz2_scaled_int's range */
#define OZ2A_W_SOFT 62     /* w above max(w_need, 62) buys nothing and costs a second word */
#define OZ2A_W_NONE (-1)   /* no constraint: row i or column j is zero */
#define OZ2A_W_INF 1000    /* unreachable: G_ij = 0 for a nonzero row and column */
#define OZ2A_B_MIN 20      /* auto:B, B in [20, 64] */
#define OZ2A_B_MAX 64
#define OZ2A_B_DEFAULT 53
#define OZ2A_K1_NUM 5      /* K_1: OZ2A_K1_NUM / OZ2A_K1_DEN of K_E, */
#define OZ2A_K1_SHORT_NUM 3 /* or OZ2A_K1_SHORT_NUM / OZ2A_K1_DEN (oz2a_k1_short), */
#define OZ2A_K1_DEN 8
#define OZ2A_K1_ROUND 128  /* rounded up to a multiple of this (the engine's K padding) */

/* The bits argument of the ozaki2 path: B in 1..64 fixed (ozaki2.md),
 * OZ2A_AUTO(B) = -B automatic with target 2^-B. */
#define OZ2A_AUTO(B) (-(B))
OZ_HD int oz2a_is_auto(int bits) { return bits < 0; }
OZ_HD int oz2a_target(int bits) { return -bits; }

/* floor(|x| 2^sh) and whether bits were dropped, for finite x with |x| 2^sh
 * < 2^63: from x's significand and exponent, exact (no ldexp rounding). */
OZ_HD uint64_t oz2a_floor_scaled(double x, int sh, int *inexact)
{
    const uint64_t u = oz_f64_bits(x);
    const int ef = (int)((u >> 52) & 0x7ff);
    uint64_t m = u & ((UINT64_C(1) << 52) - 1);
    int ex = -1074;
    if (ef != 0) {
        m |= UINT64_C(1) << 52;
        ex = ef - 1075;
    }
    const int shift = ex + sh; /* |x| 2^sh = m 2^shift */
    *inexact = 0;
    if (m == 0)
        return 0;
    if (shift >= 0)
        return m << shift; /* < 2^63 by the caller's bound */
    if (shift <= -64) {
        *inexact = 1;
        return 0;
    }
    *inexact = (m & ((UINT64_C(1) << -shift) - 1)) != 0;
    return m >> -shift;
}

/* The fast forms below: |x| 2^sh = m 2^-r for a normal x (m = 2^52 + its
 * 52 stored bits, r = 1075 - ef - sh); mh = m >> 32 (21 bits) and lo = its
 * low 32 bits. For r >= 32, floor(m 2^-r) = mh >> (r - 32), and bits are
 * dropped when lo or mh's low r - 32 bits are not zero: 32-bit operations
 * only. Zero and subnormal x, and r < 32, take oz2a_floor_scaled. */
OZ_HD uint32_t oz2a_mh(uint64_t u) { return (uint32_t)(u >> 32) & 0xfffffu; }

/* ceil(|x| 2^(E - s)): a term of A1 (|x| < 2^s, so at most 2^E). */
OZ_HD uint64_t oz2a_norm_term(double x, int s)
{
    const uint64_t u = oz_f64_bits(x);
    const int ef = (int)((u >> 52) & 0x7ff);
    const int r = 1075 - ef - (OZ2A_E - s);
    if (ef != 0 && r >= 32) {
        if (r >= 64)
            return 1; /* 0 < |x| 2^sh < 2^-11: floor 0, bits dropped */
        const int rr = r - 32;
        const uint32_t mh = oz2a_mh(u) | 0x100000u, lo = (uint32_t)u;
        const uint32_t f = rr < 32 ? mh >> rr : 0u;
        const uint32_t low = rr < 32 ? mh & ((1u << rr) - 1u) : mh;
        return (uint64_t)f + (uint64_t)((lo | low) != 0);
    }
    int inexact;
    const uint64_t f = oz2a_floor_scaled(x, OZ2A_E - s, &inexact);
    return f + (uint64_t)inexact;
}

/* The estimate's operand: min(floor(|x| 2^(g - s)), 127). */
OZ_HD uint32_t oz2a_quant(double x, int s, int g)
{
    const uint64_t u = oz_f64_bits(x);
    const int ef = (int)((u >> 52) & 0x7ff);
    const int r = 1075 - ef - (g - s);
    if (ef != 0) {
        if (r <= 45)
            return OZ2A_QMAX; /* m 2^-r >= 2^52 2^-45 = 2^7 */
        const int rr = r - 32; /* >= 14 */
        return rr < 32 ? (oz2a_mh(u) | 0x100000u) >> rr : 0u;
    }
    int inexact;
    const uint64_t f = oz2a_floor_scaled(x, g - s, &inexact); /* alpha 2^g < 2^GMAX */
    return f > OZ2A_QMAX ? OZ2A_QMAX : (uint32_t)f;
}

/* The same two integers through the FP64 unit, for the GPU's row kernels
 * (about 4 FP64 instructions where the forms above take some 20 integer
 * ones): a row's factor 2^d as lo * hi, both normal (oz2a_pow2_of, d >=
 * -1022), and
 *   ceil(|x| 2^d)            = low word of ((|x| *ru lo) *ru hi) +ru 2^52    (d = E - s: oz2a_norm_term)
 *   min(floor(|x| 2^d), 127) = low word of min((|x| *rz lo) *rz hi, 127) +rz 2^52   (d = g - s: oz2a_quant)
 * where *ru, +ru round up and *rz, +rz toward zero. Exact for |x| < 2^s: a
 * product by a power of two is exact unless subnormal, and a subnormal
 * product is below 1, where rounding up keeps it above 0 (ceiling 1) and
 * toward zero below 1 (floor 0); hi > 1 only where lo = 2^1000 and |x| lo >=
 * 2^-74 (normal). The sum lies in [2^52, 2^53), whose unit is 1: 2^52 plus
 * the ceiling (floor) of y, whose low word is it (< 2^32). */
typedef struct {
    double lo, hi;
} oz2a_pow2;
OZ_HD double oz2a_exp2i(int e) { return oz_bits_f64((uint64_t)(e + 1023) << 52); } /* e in [-1022, 1023] */
OZ_HD oz2a_pow2 oz2a_pow2_of(int d)
{
    oz2a_pow2 f;
    f.lo = oz2a_exp2i(d < 1000 ? d : 1000);
    f.hi = oz2a_exp2i(d > 1000 ? d - 1000 : 0);
    return f;
}
/* The factors of a row with scale s (not special) and estimate scale g. */
OZ_HD oz2a_pow2 oz2a_norm_factor(int s) { return oz2a_pow2_of(OZ2A_E - s); }
OZ_HD oz2a_pow2 oz2a_quant_factor(int s, int g) { return oz2a_pow2_of(g - s); }
#ifndef __CUDA_ARCH__
/* a op b in rounding mode `mode` (the host's model of the device's
 * directed roundings: the tests only) */
static inline double oz2a_host_rounded(double a, double b, int add, int mode)
{
    const int old = fegetround();
    fesetround(mode);
    volatile double va = a, vb = b;
    volatile double r = add ? va + vb : va * vb;
    fesetround(old);
    return r;
}
#endif
OZ_HD uint32_t oz2a_norm_term_fp(double x, oz2a_pow2 f)
{
#ifdef __CUDA_ARCH__
    return (uint32_t)__double2loint(__dadd_ru(__dmul_ru(__dmul_ru(fabs(x), f.lo), f.hi), 0x1p52));
#else
    const double y = oz2a_host_rounded(oz2a_host_rounded(fabs(x), f.lo, 0, FE_UPWARD), f.hi, 0, FE_UPWARD);
    return (uint32_t)oz_f64_bits(oz2a_host_rounded(y, 0x1p52, 1, FE_UPWARD));
#endif
}
OZ_HD uint32_t oz2a_quant_fp(double x, oz2a_pow2 f)
{
#ifdef __CUDA_ARCH__
    const double y = fmin(__dmul_rz(__dmul_rz(fabs(x), f.lo), f.hi), (double)OZ2A_QMAX);
    return (uint32_t)__double2loint(__dadd_rz(y, 0x1p52));
#else
    double y = oz2a_host_rounded(oz2a_host_rounded(fabs(x), f.lo, 0, FE_TOWARDZERO), f.hi, 0, FE_TOWARDZERO);
    y = y < (double)OZ2A_QMAX ? y : (double)OZ2A_QMAX;
    return (uint32_t)oz_f64_bits(oz2a_host_rounded(y, 0x1p52, 1, FE_TOWARDZERO));
#endif
}

/* The number of significant bits of v (0 for 0). */
OZ_HD int oz2a_bitlen(uint64_t v) { return v ? 64 - oz2_clz64(v) : 0; }

/* A row's scale s (oz_scale_exponent of its max |x|) from the max of its
 * elements' keys, 32-bit integers in the order of |x|'s exponent (the GPU's
 * panel kernel reduces them): the high word of |x| where it is at least
 * 2^20 (normal; Inf and NaN clamped to 0x7ff00000, the special row), else
 * the bit length of |x|'s bits (subnormal, at most 52; 0 for 0). */
OZ_HD uint32_t oz2a_elem_key(double x)
{
    const uint64_t b = oz_f64_bits(x) & UINT64_C(0x7fffffffffffffff);
    const uint32_t hi = (uint32_t)(b >> 32);
    return hi >= 0x00100000u ? (hi < 0x7ff00000u ? hi : 0x7ff00000u) : (uint32_t)oz2a_bitlen(b);
}
OZ_HD int oz2a_key_scale(uint32_t key)
{
    if (key >= 0x7ff00000u)
        return OZ_SCALE_SPECIAL;
    if (key >= 0x00100000u)
        return (int)(key >> 20) - 1022; /* |x| in [2^(e-1023), 2^(e-1022)), e the biased exponent */
    return key ? (int)key - 1074 : 0;   /* |x| = m 2^-1074, m of key bits */
}

/* g of a row with norm sum A1 over k >= 1 terms: the mean of alpha, A1 /
 * (k 2^E), lies in [2^(L-1-E), 2^(L-E)) for L = bitlen(floor(A1 / k)) (and
 * below 2^-E when L = 0); g = E + TARGET + 1 - L puts it in [2^TARGET,
 * 2^(TARGET+1)) of the 127, clamped to [GMIN, GMAX]. Larger elements clip
 * at 127 (still a lower bound), smaller ones keep a few bits. */
OZ_HD int oz2a_row_scale(uint64_t A1, int64_t k)
{
    /* L without a division: with d = bitlen(A1) - bitlen(k), A1 / k lies in
     * (2^(d-1), 2^(d+1)), so L = d + 1 where A1 >= k 2^d (< 2^bitlen(A1):
     * no overflow), else d; 0 where d < 0 (A1 < k) */
    const uint64_t kk = (uint64_t)(k > 0 ? k : 1);
    const int d = oz2a_bitlen(A1) - oz2a_bitlen(kk);
    const int L = d < 0 ? 0 : d + (A1 >= kk << d);
    const int g = OZ2A_E + OZ2A_TARGET + 1 - L;
    return g < OZ2A_GMIN ? OZ2A_GMIN : g > OZ2A_GMAX ? OZ2A_GMAX : g;
}

/* K_1, the estimate's first part (docs/ozaki2-auto.md step 2): the least
 * multiple of OZ2A_K1_ROUND at or above 3/8 (shorter) or 5/8 of K_E, at
 * most K_E (K_1 = K_E: one part). */
OZ_HD int64_t oz2a_k_first(int64_t ke, int shorter)
{
    const int64_t u = OZ2A_K1_DEN * OZ2A_K1_ROUND, num = shorter ? OZ2A_K1_SHORT_NUM : OZ2A_K1_NUM;
    const int64_t k1 = (num * ke + u - 1) / u * OZ2A_K1_ROUND;
    return k1 < ke ? k1 : ke;
}

/* Whether the estimate has two parts: K_1 < K_E, and every nonzero row's
 * g and column's h (their largest, gmax; 0: none) is OZ2A_GMIN, magnitudes
 * even within them (a row's mean alpha at least about 2^-4); spread data
 * would take both parts. */
OZ_HD int oz2a_two_parts(int64_t k1, int64_t ke, int gmax) { return k1 < ke && gmax <= OZ2A_GMIN; }

/* Whether the first part's plan, n1 moduli (0: none), is the call's: it
 * emulates with at most nfix moduli, the fixed width's count at B bits and
 * this k (0 where B bits cannot be had: never). */
OZ_HD int oz2a_first_taken(int n1, int nfix) { return n1 != 0 && n1 <= nfix; }

/* The least integer e with x <= y 2^e, x >= 1, y >= 1 (exact). */
OZ_HD int oz2a_ceil_log2_ratio(uint64_t x, uint64_t y)
{
    const int e = oz2a_bitlen(x) - oz2a_bitlen(y); /* x / y in (2^(e-1), 2^(e+1)) */
    /* x <= y 2^e ? compare x 2^-e (e >= 0) or x against y 2^e (e < 0) exactly */
    int le;
    if (e >= 0) {
        const uint64_t q = x >> e;
        le = q < y || (q == y && (x & ((UINT64_C(1) << e) - 1)) == 0);
    } else {
        le = (x << -e) <= y; /* x 2^-e has bitlen(y) bits: no overflow */
    }
    return le ? e : e + 1;
}

/* The least w meeting the guarantee at element (i, j) for target 2^-B,
 * from the row's A1 and g, the column's B1 and h, and G_ij. The error of
 * the integer product is at most, in units of 2^(s+t),
 *     T1 + T2 = 2^(-w-1) (||alpha_i||_1 + ||beta_j||_1) + k 2^(-2w-2)
 * (|a - a''2^(s-w)| <= 2^(s-w-1); docs/ozaki2-auto.md), and the target is
 * 2^-B sum_k alpha beta >= 2^-B G 2^(-g-h). T1 gets 1023/1024 of it:
 *     1024 (A1 + B1) 2^(-w-1-E) <= 1023 G 2^(-B-g-h)
 *         <=>  w >= e1 + B + g + h - E - 1,  e1 = ceil(log2(1024 (A1+B1) / (1023 G)));
 * T2 the rest:  k 2^(-2w-2) <= 2^-10 G 2^(-B-g-h)
 *         <=>  2w + 2 >= e2 + B + 10 + g + h,  e2 = ceil(log2(k / G)).
 * A1 or B1 zero: row i or column j is zero, its integers exact, no
 * constraint. G zero otherwise: no w certifies the element. Needs A1, B1 <
 * 2^53 (k < 2^33) and G < 2^41. */
OZ_HD int oz2a_elem_w(uint64_t A1, uint64_t B1, int g, int h, uint32_t G, int64_t k, int B)
{
    if (A1 == 0 || B1 == 0)
        return OZ2A_W_NONE;
    if (G == 0)
        return OZ2A_W_INF;
    const int e1 = oz2a_ceil_log2_ratio(1024 * (A1 + B1), UINT64_C(1023) * G);
    const int w1 = e1 + B + g + h - OZ2A_E - 1;
    const int e2 = oz2a_ceil_log2_ratio((uint64_t)k, G);
    const int t = e2 + B + 10 + g + h - 2; /* 2w >= t */
    const int w2 = t > 0 ? (t + 1) / 2 : -((-t) / 2);
    return w1 > w2 ? w1 : w2;
}

/* The GPU's skip test: whether oz2a_elem_w(...) <= need for certain, in
 * doubles, split into a row's part and a column's so that an element costs
 * two products, an FMA and two compares. The rule's two conditions
 *     w1 <= need <=> 1024 (A1 + B1) <= 1023 G 2^t1,  t1 = need - B - g - h + E + 1
 *     w2 <= need <=> k <= G 2^t2,                   t2 = 2 need - B - g - h - 8
 * read, with P = A1 2^g, p = 2^g (the row), Q = B1 2^h, q = 2^h (the column),
 *     (P q + p Q) c1 <= G,  c1 = (1024/1023) 2^-(need - B + E + 1)
 *     p q c2 <= G,          c2 = k 2^(B + 8 - 2 need).
 * c1 and c2 carry a factor 1 + 2^-45, far above the handful of roundings to
 * nearest (2^-53 each) of the left sides, whose exact values they bound
 * from above (A1, B1 < 2^53 and G < 2^32 convert exactly; the scalings by
 * powers of two are exact: every value stays far inside double's range,
 * the exponents clamped at -1000 only where need is W_INF). 1 is never
 * wrong; 0 may be (the exact rule then decides). A row's or column's part
 * (P, p) is made once a call (oz2a_skip_pq_of), the need's (c1, c2) once a
 * tile; the GPU's estimate skips the exact rule where this says 1 for its
 * largest need so far. */
typedef struct oz2a_skip_pq {
    double P, p; /* A1 2^g (0: the row is zero or special), 2^g */
} oz2a_skip_pq;
typedef struct oz2a_skip_c {
    double c1, c2;
} oz2a_skip_c;
typedef struct oz2a_skip_row {
    double Pc1, pc1, pc2; /* P c1, p c1, p c2 */
} oz2a_skip_row;

OZ_HD int oz2a_clamp_exp(int e) { return e < -1000 ? -1000 : e; }

OZ_HD oz2a_skip_pq oz2a_skip_pq_of(uint64_t A1, int g)
{
    oz2a_skip_pq r;
    r.p = oz2_pow2(g);
    r.P = OZ2_DMUL_((double)A1, r.p);
    return r;
}

OZ_HD oz2a_skip_c oz2a_skip_c_of(int64_t k, int B, int need)
{
    const double margin = 1.0 + 0x1p-45;
    oz2a_skip_c c;
    c.c1 = OZ2_DMUL_(OZ2_DMUL_(1024.0 / 1023.0, margin), oz2_pow2(oz2a_clamp_exp(B - need - OZ2A_E - 1)));
    c.c2 = OZ2_DMUL_(OZ2_DMUL_((double)k, margin), oz2_pow2(oz2a_clamp_exp(B + 8 - 2 * need)));
    return c;
}

OZ_HD oz2a_skip_row oz2a_skip_row_of(oz2a_skip_pq a, oz2a_skip_c c)
{
    oz2a_skip_row r;
    r.Pc1 = OZ2_DMUL_(a.P, c.c1);
    r.pc1 = OZ2_DMUL_(a.p, c.c1);
    r.pc2 = OZ2_DMUL_(a.p, c.c2);
    return r;
}

/* G as a double, exactly, by its bits (2^52 + G) - 2^52: no conversion unit. */
OZ_HD double oz2a_u32_double(uint32_t G)
{
    return OZ2_DADD_(oz_bits_f64(UINT64_C(0x4330000000000000) | G), -4503599627370496.0);
}

/* Needs A1 and B1 nonzero (else the element sets no need: skip it). */
OZ_HD int oz2a_skip(const oz2a_skip_row *r, const oz2a_skip_pq *c, uint32_t G)
{
    const double x = OZ2_DFMA_(r->Pc1, c->p, OZ2_DMUL_(r->pc1, c->P));
    const double y = OZ2_DMUL_(r->pc2, c->p);
    const double gd = oz2a_u32_double(G);
    return x <= gd && y <= gd;
}

/* The range at width w: every |X_ij| <= sum_k |a''| |b''| <= sum_k
 * (alpha 2^w + 1/2)(beta 2^w + 1/2) = 4^w sum alpha beta + 2^(w-1)
 * (sum alpha + sum beta) + k/4, with sum alpha beta <= min(||alpha_i||_1,
 * ||beta_j||_1) (both < 1), so with A1M, B1M the largest A1 and B1
 *     R(w) = 4^w min(A1M, B1M) 2^-E + 2^(w-1-E) (A1M + B1M) + k/4
 * must be at most P_N/2 - 1 (P_N even). Evaluated in double, each of its
 * few operations rounding by at most 2^-53: R (1 + 2^-40) <= H (1 - 2^-40)
 * with H = RN(P_N/2 - 1) is then a certain test, the same on every machine
 * (basic operations, rounded to nearest, no contraction). */
OZ_HD double oz2a_half_range(int n)
{
    oz2_uint h = oz2_product(n);
    oz2_uint one;
    oz2_uint_set(&one, 1);
    for (int i = 0; i < OZ2_LIMBS; i++)
        h.w[i] = (h.w[i] >> 1) | (i + 1 < OZ2_LIMBS ? h.w[i + 1] << 31 : 0);
    oz2_uint_sub(&h, &one);
    return oz2_to_double(&h, 0, 0);
}

OZ_HD int oz2a_range_ok(int w, uint64_t A1M, uint64_t B1M, int64_t k, double H)
{
    const uint64_t mn = A1M < B1M ? A1M : B1M;
    const double t1 = OZ2_DMUL_((double)mn, oz2_pow2(2 * w - OZ2A_E));
    const double t2 = OZ2_DMUL_(OZ2_DADD_((double)A1M, (double)B1M), oz2_pow2(w - 1 - OZ2A_E));
    const double r = OZ2_DADD_(OZ2_DADD_(t1, t2), OZ2_DMUL_((double)k, 0.25));
    return OZ2_DMUL_(r, 1.0 + 0x1p-40) <= OZ2_DMUL_(H, 1.0 - 0x1p-40);
}

/* The plan from w_need (the max of oz2a_elem_w over the call, OZ2A_W_NONE
 * when no element constrains it) and the largest norm sums: N the least in
 * 2..20 whose range holds w_need, w = min(w_range(N), max(w_need, W_SOFT)).
 * n == 0: native. k >= 1. */
/* H[n] = oz2a_half_range(n), n = 2..20 (a table the GPU gets made). */
typedef struct oz2a_ranges {
    double H[OZ2_MAX_MODULI + 1];
} oz2a_ranges;

OZ_HD oz2a_ranges oz2a_make_ranges(void)
{
    oz2a_ranges r;
    for (int n = 0; n <= OZ2_MAX_MODULI; n++)
        r.H[n] = n >= OZ2_MIN_MODULI ? oz2a_half_range(n) : 0.0;
    return r;
}

/* The plan over the range table H[nmin .. nmax] (H[n] the half range of n
 * moduli): n the least whose range holds w_need, w as above. */
OZ_HD oz2_plan oz2a_plan_over(int w_need, uint64_t A1M, uint64_t B1M, int64_t k, const double *H, int nmin, int nmax)
{
    oz2_plan p = {0, 0};
    if (k >= OZ2A_KMAX || w_need > OZ2A_W_MAX)
        return p;
    if (w_need < 1)
        w_need = 1;
    for (int n = nmin; n <= nmax; n++) {
        if (!oz2a_range_ok(w_need, A1M, B1M, k, H[n]))
            continue;
        const int cap = w_need > OZ2A_W_SOFT ? w_need : OZ2A_W_SOFT;
        int w = w_need;
        while (w < cap && oz2a_range_ok(w + 1, A1M, B1M, k, H[n]))
            w++;
        p.n = n;
        p.w = w;
        return p;
    }
    return p;
}

OZ_HD oz2_plan oz2a_make_plan_r(int w_need, uint64_t A1M, uint64_t B1M, int64_t k, const oz2a_ranges *R)
{
    return oz2a_plan_over(w_need, A1M, B1M, k, R->H, OZ2_MIN_MODULI, OZ2_MAX_MODULI);
}

/* The least N a plan can take where some element constrains it (w_need !=
 * OZ2A_W_NONE), for target 2^-B and this k: such a need is at least B + 1
 * (G <= 2^(g+h-E) min(A1, B1), since q <= alpha 2^g and beta < 1, so
 * 1024 (A1 + B1) / (1023 G) > 2^(E-g-h+1) and oz2a_elem_w's e1 >= E - g - h +
 * 2), and the range test is monotone in w, A1M, B1M (>= 1) and N. Plans below
 * it belong to calls whose every product is zero (X = 0 whatever N): the GPU
 * launches the CRT kernels of N >= this only, and N = 2's for the rest.
 * OZ2_MAX_MODULI + 1: none. */
OZ_HD int oz2a_n_least(int64_t k, int B, const oz2a_ranges *R)
{
    for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; n++)
        if (oz2a_range_ok(B + 1, 1, 1, k, R->H[n]))
            return n;
    return OZ2_MAX_MODULI + 1;
}

OZ_HD oz2_plan oz2a_make_plan(int w_need, uint64_t A1M, uint64_t B1M, int64_t k)
{
    const oz2a_ranges R = oz2a_make_ranges();
    return oz2a_make_plan_r(w_need, A1M, B1M, k, &R);
}

/* Whether a real call's first part is the shorter one (3/8 of K_E): where
 * the fixed width's count nfix at B bits holds w = B + 3 with both norm sums
 * 9 k 2^(E-4) (9/16 of their most, a little above the k 2^(E-1) of data even
 * within its rows and columns). On such data the ratio of the norm sums to
 * the first part's G is about 4 / f for a fraction f of K: the need is
 * B + 2 up to a ratio of 8 and B + 3 up to 16, so where nfix holds B + 3, 3/8
 * (about 10.7) gives the plan of 5/8 (6.4) for less of the product. */
OZ_HD int oz2a_k1_short(int64_t k, int B, int nfix, const oz2a_ranges *R)
{
    const uint64_t a = (uint64_t)(9 * k) << (OZ2A_E - 4);
    return nfix >= OZ2_MIN_MODULI && nfix <= OZ2_MAX_MODULI && k < OZ2A_KMAX &&
           oz2a_range_ok(B + 3, a, a, k, R->H[nfix]);
}

/* The real call's K_1 for K_E = ke. */
OZ_HD int64_t oz2a_k_first_real(int64_t ke, int64_t k, int B, int nfix, const oz2a_ranges *R)
{
    return oz2a_k_first(ke, oz2a_k1_short(k, B, nfix, R));
}

#endif
