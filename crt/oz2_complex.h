/* crt/oz2_complex.h: the ozaki2 mode's complex (ZGEMM) integer math (docs/ozaki2-complex.md), plain C for host and device.
 *
 *   plan:          w_max(N, k) = the largest b with 2 k 4^b <= (P_N - 1)/2
 *                  over the engine moduli (crt/moduli.h), N the smallest in
 *                  2..20 with w_max >= bits, w = w_max: the result's w.
 *   split moduli:  odd p <= 256 with r^2 == -1 (mod p). x + iy -> (x + r y,
 *                  x - r y) mod p is a ring isomorphism Z[i]/p -> Z/p x Z/p,
 *                  so one Gaussian-integer dot product mod p is two
 *                  independent integer ones: 2 INT8 GEMMs per modulus where
 *                  the engine moduli need 4 (or 3, Karatsuba). The plan adds
 *                  N', the count of split moduli whose product holds the
 *                  plan's w (never their own w_max: the result is pinned by
 *                  the engine moduli's w).
 *   odd CRT:       X from its residues over the first N' split moduli, folded
 *                  into [-(P-1)/2, (P-1)/2] (P odd: oz2_crt_reconstruct's
 *                  fold assumes P even).
 *
 * Multi-word integers and their helpers are crt/oz2.h's (oz2_uint). */
#ifndef OZCRT_CRT_OZ2_COMPLEX_H
#define OZCRT_CRT_OZ2_COMPLEX_H

#include <stdint.h>
#include <string.h>

#include "oz2.h"
#include "oz2_auto.h"
#include "oz_hd.h"

/* ---- the split moduli, as data ----
 *
 * Pairwise coprime, odd, <= 256, every prime factor 1 mod 4 (exactly the
 * odd moduli with a square root of -1), largest first. Each prime p = 1
 * mod 4 divides at most one of them, so a set's product is at most the
 * product of the largest such prime powers <= 256: this set is all of them
 * (125 = 5^3 and 169 = 13^2 rather than 205 = 5 41 and 221 = 13 17, which
 * would spend two primes on one modulus), the largest product any such set
 * can have, P'_24 ~ 2^160.43 > P_20 ~ 2^155.9: it holds every plan the
 * engine moduli serve (test_oz2_complex: test_split_holds_every_plan).
 *
 * X(index, p, r, inv2r): r in (0, p/2) with r^2 == -1 (mod p) (the
 * positive one of the two symmetric roots +-r), inv2r = (2r)^-1 mod p;
 * 2^-1 mod p is (p + 1)/2. The tests recompute every number. */
#define OZ2Z_SPLIT_MODULI(X)                                                                  \
    X(0, 241, 64, 209) X(1, 233, 89, 72) X(2, 229, 107, 61) X(3, 197, 14, 190)                \
    X(4, 193, 81, 56) X(5, 181, 19, 81) X(6, 173, 80, 133) X(7, 169, 70, 134)                 \
    X(8, 157, 28, 143) X(9, 149, 44, 127) X(10, 137, 37, 50) X(11, 125, 57, 34)               \
    X(12, 113, 15, 49) X(13, 109, 33, 38) X(14, 101, 10, 96) X(15, 97, 22, 86)                \
    X(16, 89, 34, 72) X(17, 73, 27, 23) X(18, 61, 11, 25) X(19, 53, 23, 15)                   \
    X(20, 41, 9, 16) X(21, 37, 6, 34) X(22, 29, 12, 23) X(23, 17, 4, 15)
#define OZ2Z_SPLIT_NMODULI 24
#define OZ2Z_MIN_SPLIT 2

/* One split modulus: p, its root r and (2r)^-1 mod p. */
typedef struct oz2z_split_modulus {
    uint32_t p, r, inv2r;
} oz2z_split_modulus;

/* Split modulus q (0 .. OZ2Z_SPLIT_NMODULI - 1); p = 0 past the end. */
OZ_HD oz2z_split_modulus oz2z_split_mod(int q)
{
    oz2z_split_modulus s = {0, 0, 0};
    switch (q) {
#define OZ2Z_SPLIT_CASE_(i, p_, r_, inv2r_) \
    case (i):                              \
        s.p = (p_);                        \
        s.r = (r_);                        \
        s.inv2r = (inv2r_);                \
        break;
        OZ2Z_SPLIT_MODULI(OZ2Z_SPLIT_CASE_)
#undef OZ2Z_SPLIT_CASE_
    default:
        break;
    }
    return s;
}

/* P'_n = p_0 ... p_{n-1}, n <= OZ2Z_SPLIT_NMODULI (below 2^161). */
OZ_HD oz2_uint oz2z_split_product(int n)
{
    oz2_uint p;
    oz2_uint_set(&p, 1);
    for (int q = 0; q < n; q++)
        oz2_uint_mul_add(&p, oz2z_split_mod(q).p, 0);
    return p;
}

/* ---- the complex range ---- */

/* x << n (bits shifted past the top are lost; the callers check the length first). */
OZ_HD oz2_uint oz2z_uint_shl(const oz2_uint *x, int n)
{
    oz2_uint r;
    const int lw = n / 32, bs = n % 32;
    for (int i = OZ2_LIMBS - 1; i >= 0; i--) {
        const int j = i - lw;
        uint32_t v = j >= 0 ? x->w[j] << bs : 0;
        if (bs && j - 1 >= 0)
            v |= x->w[j - 1] >> (32 - bs);
        r.w[i] = v;
    }
    return r;
}

/* floor((P - 1) / 2) for P >= 1, either parity: P/2 - 1 for the engine
 * moduli (P even), (P - 1)/2 for the split moduli (P odd). */
OZ_HD oz2_uint oz2z_half_range(const oz2_uint *P)
{
    oz2_uint h = *P, one;
    oz2_uint_set(&one, 1);
    oz2_uint_sub(&h, &one);
    for (int i = 0; i < OZ2_LIMBS; i++)
        h.w[i] = (h.w[i] >> 1) | (i + 1 < OZ2_LIMBS ? h.w[i + 1] << 31 : 0);
    return h;
}

/* Whether 2 k 4^b <= floor((P - 1)/2): the complex range test, exact on
 * multi-word integers (|X_re|, |X_im| <= 2 k 4^b when |a''|, |b''| parts
 * <= 2^b). k >= 1, b >= 0. */
OZ_HD int oz2z_range_holds(const oz2_uint *P, int64_t k, int b)
{
    oz2_uint h = oz2z_half_range(P), t;
    oz2_uint_set(&t, 2 * (uint64_t)k); /* k < 2^63: 2k fits in 64 bits */
    if (oz2_uint_bitlen(&t) + 2 * b > 32 * OZ2_LIMBS - 1)
        return 0; /* 2 k 4^b >= 2^191 > every h here (P < 2^161) */
    t = oz2z_uint_shl(&t, 2 * b);
    return oz2_uint_cmp(&t, &h) <= 0;
}

/* The largest b >= 0 with 2 k 4^b <= floor((P - 1)/2), or -1 when even
 * b = 0 fails. k >= 1. */
OZ_HD int oz2z_wmax_of(const oz2_uint *P, int64_t k)
{
    oz2_uint t;
    oz2_uint_set(&t, 2 * (uint64_t)k);
    /* the largest b the bit lengths allow (2k 4^b >= 2^(len(2k) - 1 + 2b)), then down */
    int b = (oz2_uint_bitlen(P) - oz2_uint_bitlen(&t)) / 2 + 1;
    for (; b >= 0; b--)
        if (oz2z_range_holds(P, k, b))
            return b;
    return -1;
}

/* w_max(n, k) over the first n engine moduli, the complex range. */
OZ_HD int oz2z_wmax(int n, int64_t k)
{
    const oz2_uint P = oz2_product(n);
    return oz2z_wmax_of(&P, k);
}

/* The same over the first n split moduli (their own reach; the plan does
 * not take it as w, see oz2z_make_plan). */
OZ_HD int oz2z_split_wmax(int n, int64_t k)
{
    const oz2_uint P = oz2z_split_product(n);
    return oz2z_wmax_of(&P, k);
}

/* N': the smallest n in 2..24 whose split product holds 2 k 4^w, or 0
 * when none does (w beyond every plan the engine moduli serve). */
OZ_HD int oz2z_split_count(int64_t k, int w)
{
    if (k < 1)
        k = 1;
    for (int n = OZ2Z_MIN_SPLIT; n <= OZ2Z_SPLIT_NMODULI; n++) {
        const oz2_uint P = oz2z_split_product(n);
        if (oz2z_range_holds(&P, k, w))
            return n;
    }
    return 0;
}

typedef struct oz2z_plan {
    int n;       /* engine moduli count, 2..20; 0 when no N <= 20 reaches `bits` */
    int w;       /* integer width of both parts: |a''_re|, |a''_im| <= 2^w */
    int n_split; /* split moduli that hold 2 k 4^w (the GPU's count); 0 with n */
} oz2z_plan;

/* N, w (the result's, from the engine moduli) and N' for a complex call
 * with inner dimension k (k < 1 is taken as 1) and the target bits (>= 1).
 * w_max is the engine moduli's, not the split moduli's: a different w is a
 * different a'' and a different result. */
OZ_HD oz2z_plan oz2z_make_plan(int64_t k, int bits)
{
    oz2z_plan p = {0, 0, 0};
    if (k < 1)
        k = 1;
    for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; n++) {
        const int w = oz2z_wmax(n, k);
        if (w >= bits) {
            p.n = n;
            p.w = w;
            p.n_split = oz2z_split_count(k, w);
            return p;
        }
    }
    return p;
}

/* ---- the split: x + iy <-> (u, v) mod p ---- */

/* x mod p in [0, p) for any signed x. */
OZ_HD uint32_t oz2z_mod(int64_t x, uint32_t p)
{
    const int64_t r = x % (int64_t)p;
    return (uint32_t)(r < 0 ? r + (int64_t)p : r);
}

/* The symmetric representative of x in [0, p) for odd p: in
 * [-(p-1)/2, (p-1)/2], so |u| <= 120 for p <= 241 (an int8, and
 * k 120^2 < 2^31 for k <= 149130 in an int32 accumulator). */
OZ_HD int32_t oz2z_sym(uint32_t x, uint32_t p)
{
    return x > p / 2 ? (int32_t)x - (int32_t)p : (int32_t)x;
}

/* (u, v) = (x + r y, x - r y) mod p for x, y in [0, p): the images of
 * x + iy under i -> r and i -> -r. Products < 2^16. */
OZ_HD void oz2z_split(uint32_t x, uint32_t y, const oz2z_split_modulus *m, uint32_t *u, uint32_t *v)
{
    const uint32_t ry = (m->r * y) % m->p;
    *u = (x + ry) % m->p;
    *v = (x + m->p - ry) % m->p;
}

/* The inverse for u, v in [0, p): x = (u + v)/2, y = (u - v)/(2r) mod p. */
OZ_HD void oz2z_unsplit(uint32_t u, uint32_t v, const oz2z_split_modulus *m, uint32_t *x, uint32_t *y)
{
    const uint32_t inv2 = (m->p + 1) / 2;
    *x = ((u + v) % m->p) * inv2 % m->p;
    *y = ((u + m->p - v) % m->p) * m->inv2r % m->p;
}

/* The same from the int8 residues of x and y (any representatives, e.g.
 * oz2_residue22's), to the symmetric int8 operands of the two GEMMs. */
OZ_HD void oz2z_split_i8(int8_t x, int8_t y, const oz2z_split_modulus *m, int8_t *u, int8_t *v)
{
    uint32_t uu, vv;
    oz2z_split(oz2z_mod(x, m->p), oz2z_mod(y, m->p), m, &uu, &vv);
    *u = (int8_t)oz2z_sym(uu, m->p);
    *v = (int8_t)oz2z_sym(vv, m->p);
}

/* One operand of the split from int8 representatives x (re) and y (im) of
 * an element's residues modulo p: sr = r gives u = x + r y, sr = -r gives
 * v = x - r y, symmetric in [-(p-1)/2, (p-1)/2]. |t| <= 128 + 120 128 <
 * 2^14, so t + off (off the least multiple of p >= 2^14) is positive; with p
 * a compile-time constant the remainder is a multiplication (the residue
 * kernel's form of oz2z_split_i8, test_oz2_complex checks them equal). */
OZ_HD int32_t oz2z_split_one(int32_t x, int32_t y, int32_t sr, uint32_t p)
{
    const int32_t t = x + sr * y;
    const uint32_t off = p * ((UINT32_C(16384) + p - 1) / p);
    const uint32_t v = (uint32_t)(t + (int32_t)off) % p;
    return v > p / 2 ? (int32_t)v - (int32_t)p : (int32_t)v;
}

/* The residue kernel's split (kernels/oz2_residues.cu), from its byte sums
 * (crt/oz2.h's form MAGIC + v as float bits): X of the re part against
 * K_b(p), which is x == a''_re (mod p), and Yr of the im part against
 * K'_b = r K_b mod p, which is r y == r a''_im (mod p), both |v| < 2^19.
 * u = x + r y and v = x - r y come out of one exact float addition each
 * (|v_x +- v_y| < 2^20) and oz2_byte_residue_bits: int8 representatives in
 * [128 - p, 127] (not symmetric for p < 128; the engine only needs |u| <=
 * 128). test_oz2_complex checks them against the exact residues. */
OZ_HD void oz2z_uv_from_sums(uint32_t X, uint32_t Yr, uint32_t p, uint32_t *u, uint32_t *v)
{
    /* *u, *v: oz2_byte_residue_bits's words; the int8 is the low byte */
    const float x = oz_bits_f32(X), ry = OZ2_FADD_(oz_bits_f32(Yr), -OZ2_MAGIC);
    *u = oz2_byte_residue_bits(oz_f32_bits(OZ2_FADD_(x, ry)), p);
    *v = oz2_byte_residue_bits(oz_f32_bits(OZ2_FADD_(x, -ry)), p);
}

/* ---- the exact CRT over odd P ---- */

/* The constants of the CRT over the first n split moduli. */
typedef struct oz2z_crt_consts {
    int n;
    uint32_t m[OZ2Z_SPLIT_NMODULI];   /* p_q */
    uint32_t inv[OZ2Z_SPLIT_NMODULI]; /* (P/p_q)^-1 mod p_q */
    uint32_t mu[OZ2Z_SPLIT_NMODULI];  /* floor(2^32 / p_q): x mod p_q for x < 2^16 */
    oz2_uint cof[OZ2Z_SPLIT_NMODULI]; /* P / p_q */
    oz2_uint P, half;                 /* P = P'_n, half = (P - 1)/2 */
    double inv_P;                     /* 1 / P, approximately */
} oz2z_crt_consts;

/* Fills c for n split moduli, 2 <= n <= OZ2Z_SPLIT_NMODULI. */
OZ_HD void oz2z_crt_init(oz2z_crt_consts *c, int n)
{
    memset(c, 0, sizeof *c);
    c->n = n;
    c->P = oz2z_split_product(n);
    c->half = oz2z_half_range(&c->P);
    c->inv_P = 1.0 / oz2_uint_approx(&c->P);
    for (int q = 0; q < n; q++) {
        const uint32_t m = oz2z_split_mod(q).p;
        c->m[q] = m;
        c->mu[q] = (uint32_t)((UINT64_C(1) << 32) / m);
        oz2_uint cof;
        oz2_uint_set(&cof, 1);
        for (int j = 0; j < n; j++)
            if (j != q)
                oz2_uint_mul_add(&cof, oz2z_split_mod(j).p, 0);
        c->cof[q] = cof;
        c->inv[q] = oz2_inverse_mod(oz2_uint_mod(&cof, m), m);
    }
}

/* The exact integer X, |X| <= (P - 1)/2, from its residues r[q * stride]
 * in [0, p_q), q < n, as a magnitude and a sign (returns 1 for X < 0).
 * S = sum_q c_q (P/p_q) with c_q = r_q (P/p_q)^-1 mod p_q, X = S mod P,
 * then the odd fold: S mod P above (P - 1)/2 is X + P, X < 0 (P odd: the
 * P integers of [-(P-1)/2, (P-1)/2] are one of each residue class, no tie). */
OZ_HD int oz2z_crt_reconstruct(const oz2z_crt_consts *c, const uint8_t *r, int64_t stride, oz2_uint *mag)
{
    /* limb by limb in 64 bits: each term c_q cof_q.w[i] < 2^40, 24 of them < 2^45 */
    uint64_t acc[OZ2_LIMBS];
    for (int i = 0; i < OZ2_LIMBS; i++)
        acc[i] = 0;
    for (int q = 0; q < c->n; q++) {
        const uint32_t rq = r[(int64_t)q * stride] % c->m[q];
        const uint32_t cq = oz2_mod_small(rq * c->inv[q], c->m[q], c->mu[q]);
        for (int i = 0; i < OZ2_LIMBS; i++)
            acc[i] += (uint64_t)cq * c->cof[q].w[i];
    }
    oz2_uint s;
    uint64_t carry = 0;
    for (int i = 0; i < OZ2_LIMBS; i++) {
        const uint64_t t = acc[i] + carry;
        s.w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    /* S < n P < 2^166: the quotient through doubles is off by at most one either way */
    const double qd = oz2_uint_approx(&s) * c->inv_P;
    const uint32_t qe = qd > 0.0 ? (uint32_t)qd : 0;
    oz2_uint t = c->P;
    oz2_uint_mul_add(&t, qe, 0);
    if (oz2_uint_cmp(&t, &s) > 0)
        oz2_uint_sub(&t, &c->P);
    oz2_uint_sub(&s, &t);
    if (oz2_uint_cmp(&s, &c->P) >= 0)
        oz2_uint_sub(&s, &c->P);
    if (oz2_uint_cmp(&s, &c->half) > 0) {
        *mag = oz2_uint_diff(&c->P, &s);
        return 1;
    }
    *mag = s;
    return 0;
}

/* ---- the CRT of both parts from the split products ----
 *
 * The engine gives U_q = sum u_A u_B and V_q = sum v_A v_B mod p_q, in
 * [0, p_q). X_re = (U + V) / 2 and X_im = (U - V) / (2r) mod p_q; the
 * divisions go into the CRT's multipliers instead (f_q = inv_q cof_q
 * reconstructs from r_q; with inv_q 2^-1 or inv_q (2r)^-1 mod p_q in place
 * of inv_q it reconstructs from r_q = U + V or U - V), so the per-element
 * work is one sum and one difference reduced once: oz2z_unsplit_sums. */

/* s = (U + V) mod p and d = (U - V) mod p for U, V in [0, p). */
OZ_HD void oz2z_unsplit_sums(uint32_t U, uint32_t V, uint32_t p, uint32_t *s, uint32_t *d)
{
    const uint32_t t = U + V;
    *s = t >= p ? t - p : t;
    *d = U >= V ? U - V : U + p - V;
}

/* The consts of both parts' CRT (oz2z_crt_reconstruct of s_q gives X_re,
 * of d_q X_im), n split moduli. */
OZ_HD void oz2z_crt_init_parts(oz2z_crt_consts *re, oz2z_crt_consts *im, int n)
{
    oz2z_crt_init(re, n);
    *im = *re;
    for (int q = 0; q < n; q++) {
        const oz2z_split_modulus m = oz2z_split_mod(q);
        re->inv[q] = (uint32_t)((uint64_t)re->inv[q] * ((m.p + 1) / 2) % m.p);
        im->inv[q] = (uint32_t)((uint64_t)im->inv[q] * m.inv2r % m.p);
    }
}

/* The fast CRT's limbs for P'_n (bit lengths 8 16 24 32 39 47 54 62 69 76
 * 83 90 97 104 110 117 124 130 136 141 147 152 157 161: test_oz2_complex). */
#define OZ2Z_CF_LIMBS(n) ((n) <= 4 ? 1 : (n) <= 9 ? 2 : (n) <= 14 ? 3 : (n) <= 20 ? 4 : 5)
#if OZ2Z_SPLIT_NMODULI > OZ2_CF_MAXQ
#error "the fast CRT's tables must hold every split modulus"
#endif

/* The fast CRT's tables of one part from its consts. */
OZ_HD void oz2z_crt_fast_init(oz2_crt_fast *f, const oz2z_crt_consts *c)
{
    oz2_crt_fast_init_of(f, c->n, OZ2Z_CF_LIMBS(c->n), &c->P, c->inv_P, c->cof, c->inv);
}

/* ---- automatic precision for complex products (docs/ozaki2-complex.md, "Automatic precision") ----
 *
 * The real mode's rule (crt/oz2_auto.h) on the complex magnitudes
 * |z|_1 = |Re z| + |Im z|: alpha_ik = |a_ik|_1 2^-s_i in [0, 2) with s_i the
 * complex scale (the largest part's exponent), and the same for beta:
 *   A1_i = sum_k ceil(|Re a| 2^(E - s)) + ceil(|Im a| 2^(E - s))  >= 2^E ||alpha_i||_1
 *   qa_ik = min(floor(|Re a| 2^(g - s)) + floor(|Im a| 2^(g - s)), 127) <= alpha_ik 2^g
 *   G_ij = sum_{k < K_E} qa qb (one INT8 GEMM)                     <= 2^(g+h) sum alpha beta
 * The truncation error of each part is at most T = 2^(-w-1) (||alpha_i|| +
 * ||beta_j||) + 2k 2^(-2w-2) (units of 2^(s+t); the real bound at 2k), so
 * w_ij = oz2a_elem_w(A1, B1, g, h, G, 2k, B) certifies
 *   |2^(s+t-2w) X_x - (op(A) op(B))_x| <= 2^-B sum_k |a_ik|_1 |b_kj|_1   for x = re, im.
 * The range: |X_x| <= sum_k (|a''_re| + |a''_im|)(|b''_re| + |b''_im|) <=
 * sum (alpha 2^w + 1)(beta 2^w + 1), with sum alpha beta <= 2 min(||alpha||,
 * ||beta||) (alpha, beta < 2):
 *   R(w) = 2 4^w min(A1M, B1M) 2^-E + 2^(w-E) (A1M + B1M) + k  <=  (P'_N' - 1)/2
 * over the split moduli, tested in doubles with the real test's margins.
 * N' the least in 2..24 holding w_need, w = min(w_range(N'), max(w_need,
 * W_SOFT)); none (or k >= 2^32, which keeps A1 < 2^53): the call runs the
 * plain complex dot product ("auto-native"). */
#define OZ2ZA_KMAX (INT64_C(1) << 32)

/* A1's term of a complex element of a row with scale s (both parts below 2^s). */
OZ_HD uint64_t oz2za_norm_term(double re, double im, int s)
{
    return oz2a_norm_term(re, s) + oz2a_norm_term(im, s);
}

/* The estimate's operand of a complex element: min(floor(|Re| 2^(g-s)) + floor(|Im| 2^(g-s)), 127). */
OZ_HD uint32_t oz2za_quant(double re, double im, int s, int g)
{
    const uint32_t q = oz2a_quant(re, s, g) + oz2a_quant(im, s, g); /* each <= 127: min of the sum is the same */
    return q > OZ2A_QMAX ? OZ2A_QMAX : q;
}

/* The least w certifying element (i, j) of a complex product (both parts). */
OZ_HD int oz2za_elem_w(uint64_t A1, uint64_t B1, int g, int h, uint32_t G, int64_t k, int B)
{
    return oz2a_elem_w(A1, B1, g, h, G, 2 * k, B);
}

/* RN((P'_n - 1)/2): the split moduli's half range, n = 2..24. */
OZ_HD double oz2za_half_range(int n)
{
    const oz2_uint P = oz2z_split_product(n);
    const oz2_uint h = oz2z_half_range(&P);
    return oz2_to_double(&h, 0, 0);
}

/* R(w) (1 + 2^-40) <= H (1 - 2^-40): the complex range test, certain.
 * It is the real test (oz2a_range_ok) at 2k against H/2, operation for
 * operation: each of R's terms is twice the real one's at 2k (t1, t2 by
 * their powers of two, k = 2 (2k/4)), and doubling is exact, so both sides
 * scale by 2 exactly (test_oz2zauto checks the two forms agree). */
OZ_HD int oz2za_range_ok(int w, uint64_t A1M, uint64_t B1M, int64_t k, double H)
{
    const uint64_t mn = A1M < B1M ? A1M : B1M;
    const double t1 = OZ2_DMUL_((double)mn, oz2_pow2(2 * w + 1 - OZ2A_E));
    const double t2 = OZ2_DMUL_(OZ2_DADD_((double)A1M, (double)B1M), oz2_pow2(w - OZ2A_E));
    const double r = OZ2_DADD_(OZ2_DADD_(t1, t2), (double)k);
    return OZ2_DMUL_(r, 1.0 + 0x1p-40) <= OZ2_DMUL_(H, 1.0 - 0x1p-40);
}

/* The complex automatic plan: n_split 0 runs the call natively. */
typedef struct oz2za_plan {
    int n_split, w;
} oz2za_plan;

/* H[n] = oz2za_half_range(n) / 2, n = 2..24: the real test's table for
 * the complex range (oz2za_range_ok), made once (the GPU gets it made). */
typedef struct oz2za_ranges {
    double H[OZ2Z_SPLIT_NMODULI + 1];
} oz2za_ranges;

OZ_HD oz2za_ranges oz2za_make_ranges(void)
{
    oz2za_ranges r;
    for (int n = 0; n <= OZ2Z_SPLIT_NMODULI; n++)
        r.H[n] = n >= OZ2Z_MIN_SPLIT ? 0.5 * oz2za_half_range(n) : 0.0;
    return r;
}

/* N' the least in 2..24 whose complex range holds w_need, w as the real
 * plan's (oz2a_plan_over at 2k: its k bound 2^33 is k < 2^32 here). */
OZ_HD oz2za_plan oz2za_make_plan_r(int w_need, uint64_t A1M, uint64_t B1M, int64_t k, const oz2za_ranges *R)
{
    const oz2_plan p = oz2a_plan_over(w_need, A1M, B1M, 2 * k, R->H, OZ2Z_MIN_SPLIT, OZ2Z_SPLIT_NMODULI);
    const oz2za_plan z = {p.n, p.w};
    return z;
}

OZ_HD oz2za_plan oz2za_make_plan(int w_need, uint64_t A1M, uint64_t B1M, int64_t k)
{
    const oz2za_ranges R = oz2za_make_ranges();
    return oz2za_make_plan_r(w_need, A1M, B1M, k, &R);
}

/* The residue kernel's byte sums' start of split modulus m's r K_b columns
 * at width w (kernels/oz2_residues.cu; its K_b columns start at
 * oz2_bias_bits(w, p)): MAGIC's bits less r 2^(w+1) mod p. */
OZ_HD uint32_t oz2z_bias_r_bits(int w, const oz2z_split_modulus *m)
{
    const uint32_t c = oz2_bias_bits(w, m->p);
    return OZ2_MAGIC_BITS - (uint32_t)((uint64_t)(OZ2_MAGIC_BITS - c) * m->r % m->p);
}

#endif
