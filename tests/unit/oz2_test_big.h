/* tests/unit/oz2_test_big.h: an independent model of the ozaki2 integers for the unit tests: 256-bit two's complement integers, rne scaling, RN to double.
 *
 * Written from ozaki2.md without crt/oz2.h (64-bit limbs over unsigned
 * __int128 where crt/oz2.h uses 32-bit limbs; scaling through frexp where it
 * decodes bits; conversion by explicit rounding and libc's ldexp), so that a
 * test comparing the two compares two independent readings of the spec. */
#ifndef OZCRT_TESTS_UNIT_OZ2_TEST_BIG_H
#define OZCRT_TESTS_UNIT_OZ2_TEST_BIG_H

#include <math.h>
#include <stdint.h>

#define TB_LIMBS 4
typedef struct tbig {
    uint64_t w[TB_LIMBS]; /* little-endian, two's complement, 256 bits */
} tbig;

typedef unsigned __int128 tb_u128;

/* The spec's moduli, typed here again on purpose (ozaki2.md step 1). */
static const uint32_t tb_moduli[20] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227,
                                       223, 217, 211, 199, 197, 193, 191, 181, 179, 173};

static inline tbig tb_from_i64(int64_t v)
{
    tbig r;
    r.w[0] = (uint64_t)v;
    for (int i = 1; i < TB_LIMBS; i++)
        r.w[i] = v < 0 ? ~UINT64_C(0) : 0;
    return r;
}

static inline int tb_neg_p(const tbig *a) { return (int)(a->w[TB_LIMBS - 1] >> 63); }

static inline tbig tb_add(tbig a, tbig b)
{
    tbig r;
    tb_u128 c = 0;
    for (int i = 0; i < TB_LIMBS; i++) {
        c += (tb_u128)a.w[i] + b.w[i];
        r.w[i] = (uint64_t)c;
        c >>= 64;
    }
    return r;
}

static inline tbig tb_negate(tbig a)
{
    for (int i = 0; i < TB_LIMBS; i++)
        a.w[i] = ~a.w[i];
    return tb_add(a, tb_from_i64(1));
}

static inline tbig tb_sub(tbig a, tbig b) { return tb_add(a, tb_negate(b)); }

/* a * b modulo 2^256 (two's complement makes it right for signed values in range) */
static inline tbig tb_mul(tbig a, tbig b)
{
    tbig r = {{0}};
    for (int i = 0; i < TB_LIMBS; i++) {
        tb_u128 c = 0;
        for (int j = 0; i + j < TB_LIMBS; j++) {
            c += (tb_u128)a.w[i] * b.w[j] + r.w[i + j];
            r.w[i + j] = (uint64_t)c;
            c >>= 64;
        }
    }
    return r;
}

static inline tbig tb_shl(tbig a, int n)
{
    for (int s = 0; s < n; s++) {
        for (int i = TB_LIMBS - 1; i > 0; i--)
            a.w[i] = (a.w[i] << 1) | (a.w[i - 1] >> 63);
        a.w[0] <<= 1;
    }
    return a;
}

static inline tbig tb_pow2(int n) { return tb_shl(tb_from_i64(1), n); }

static inline int tb_cmp(tbig a, tbig b) /* signed */
{
    tbig d = tb_sub(a, b);
    if (tb_neg_p(&d))
        return -1;
    for (int i = 0; i < TB_LIMBS; i++)
        if (d.w[i])
            return 1;
    return 0;
}

/* a mod m in [0, m) for m > 0 small */
static inline uint32_t tb_mod(tbig a, uint32_t m)
{
    int neg = tb_neg_p(&a);
    if (neg)
        a = tb_negate(a);
    tb_u128 r = 0;
    for (int i = TB_LIMBS - 1; i >= 0; i--)
        r = ((r << 64) | a.w[i]) % m;
    uint32_t v = (uint32_t)r;
    return neg && v ? m - v : v;
}

/* P_n as tbig */
static inline tbig tb_product(int n)
{
    tbig p = tb_from_i64(1);
    for (int q = 0; q < n; q++)
        p = tb_mul(p, tb_from_i64(tb_moduli[q]));
    return p;
}

/* rne(x * 2^sh) for finite x as a tbig: x = f 2^e (frexp), f 2^53 an integer. */
static inline tbig tb_rne_scaled(double x, int sh)
{
    if (x == 0.0)
        return tb_from_i64(0);
    int e;
    double f = frexp(fabs(x), &e);
    int64_t mant = (int64_t)ldexp(f, 53); /* exact */
    int shift = e - 53 + sh;
    tbig r;
    if (shift >= 0) {
        r = tb_shl(tb_from_i64(mant), shift);
    } else if (shift < -60) {
        r = tb_from_i64(0);
    } else {
        int64_t q = mant >> -shift;
        int64_t rem = mant - (q << -shift);
        int64_t half = (int64_t)1 << (-shift - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
        r = tb_from_i64(q);
    }
    return x < 0 ? tb_negate(r) : r;
}

/* ldexp(RN(a), e) with RN to nearest, ties to even, done by hand on the top
 * 54 bits and a sticky flag; the final ldexp is libc's. */
static inline double tb_to_double(tbig a, int e)
{
    int neg = tb_neg_p(&a);
    if (neg)
        a = tb_negate(a);
    int len = 0;
    for (int i = TB_LIMBS - 1; i >= 0 && !len; i--)
        if (a.w[i])
            len = 64 * i + 64 - __builtin_clzll(a.w[i]);
    if (len == 0)
        return neg ? -0.0 : 0.0;
    double v;
    if (len <= 53) {
        v = (double)a.w[0];
    } else {
        int drop = len - 53; /* keep 53 bits */
        uint64_t keep = 0;
        for (int b = 0; b < 53; b++) {
            int pos = drop + b;
            keep |= ((a.w[pos / 64] >> (pos % 64)) & 1) << b;
        }
        int round = (int)((a.w[(drop - 1) / 64] >> ((drop - 1) % 64)) & 1);
        int sticky = 0;
        for (int pos = 0; pos < drop - 1; pos++)
            sticky |= (int)((a.w[pos / 64] >> (pos % 64)) & 1);
        if (round && (sticky || (keep & 1)))
            keep++;
        v = ldexp((double)keep, drop); /* exact: keep <= 2^53 */
    }
    return ldexp(neg ? -v : v, e);
}

#endif
