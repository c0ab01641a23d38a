/* tests/unit/test_oz2_crt.c: crt/oz2.h against ozaki2.md: the plan (N, w), the CRT constants and round trips for every N, scaling, residues, and the rounding to double. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <inttypes.h>

#include "crt/oz2.h"
#include "oz2_test_big.h"
#include "oz_test_util.h"

static tbig tb_of_uint(const oz2_uint *x)
{
    tbig r = {{0}};
    for (int i = 0; i < OZ2_LIMBS; i++)
        r.w[i / 2] |= (uint64_t)x->w[i] << (32 * (i % 2));
    return r;
}

/* ---- step 1: the plan ---- */

/* Hand-computed (Python integers, outside this code base): for N = 1..20 the
 * bit length of P_N and w_max(N, k) for k = 1, 1024, 4096, 16384, 100000
 * (-1: not even b = 0). */
static const int plan_table[20][6] = {
    {9, 3, -1, -1, -1, -1},     {16, 7, 2, 1, 0, -1},      {24, 11, 6, 5, 4, 3},     {32, 15, 10, 9, 8, 7},
    {40, 19, 14, 13, 12, 11},   {48, 23, 18, 17, 16, 15},  {56, 27, 22, 21, 20, 19}, {64, 31, 26, 25, 24, 22},
    {72, 35, 30, 29, 28, 26},   {80, 39, 34, 33, 32, 30},  {88, 43, 38, 37, 36, 34}, {95, 46, 41, 40, 39, 38},
    {103, 50, 45, 44, 43, 42},  {111, 54, 49, 48, 47, 46}, {118, 58, 53, 52, 51, 50}, {126, 62, 57, 56, 55, 53},
    {133, 65, 60, 59, 58, 57},  {141, 69, 64, 63, 62, 61}, {148, 73, 68, 67, 66, 65}, {156, 77, 72, 71, 70, 68},
};
static const int64_t plan_ks[5] = {1, 1024, 4096, 16384, 100000};

static void test_plan_table(void **state)
{
    (void)state;
    for (int n = 1; n <= 20; n++) {
        oz2_uint p = oz2_product(n);
        assert_int_equal(oz2_uint_bitlen(&p), plan_table[n - 1][0]);
        for (int c = 0; c < 5; c++)
            assert_int_equal(oz2_wmax(n, plan_ks[c]), plan_table[n - 1][c + 1]);
    }
}

static void test_plan_examples(void **state)
{
    (void)state;
    /* ozaki2.md step 1 */
    oz2_plan p = oz2_make_plan(1024, 53);
    assert_int_equal(p.n, 15);
    assert_int_equal(p.w, 53);
    p = oz2_make_plan(4096, 53);
    assert_int_equal(p.n, 16);
    assert_int_equal(p.w, 56);
    p = oz2_make_plan(16384, 53);
    assert_int_equal(p.n, 16);
    assert_int_equal(p.w, 55);
    p = oz2_make_plan(4096, 34);
    assert_int_equal(p.n, 11);
    assert_int_equal(p.w, 37);
    /* 20 moduli hold at most 77 bits (k = 1); N starts at 2 */
    assert_int_equal(oz2_make_plan(1, 77).n, 20);
    assert_int_equal(oz2_make_plan(1, 77).w, 77);
    assert_int_equal(oz2_make_plan(1, 78).n, 0);
    assert_int_equal(oz2_make_plan(100000, 69).n, 0);
    assert_int_equal(oz2_make_plan(100000, 68).n, 20);
    assert_int_equal(oz2_make_plan(1, 1).n, 2);
    assert_int_equal(oz2_make_plan(1, 1).w, 7);
    assert_int_equal(oz2_make_plan(0, 1).n, 2); /* k < 1 is taken as 1 */
    /* bits 1..64 at the k of the GPU tests: N, w consistent with the table */
    for (int bits = 1; bits <= 64; bits++)
        for (int c = 0; c < 5; c++) {
            p = oz2_make_plan(plan_ks[c], bits);
            if (p.n == 0) {
                assert_true(plan_table[19][c + 1] < bits);
                continue;
            }
            assert_int_equal(p.w, plan_table[p.n - 1][c + 1]);
            assert_true(p.w >= bits);
            assert_true(p.n == 2 || plan_table[p.n - 2][c + 1] < bits);
        }
}

/* The exact boundary: k * 4^b == (P_N - 1)/2 rounded down gives b, one more gives less. */
static void test_plan_boundary(void **state)
{
    (void)state;
    for (int n = 2; n <= 20; n++) {
        tbig h = tb_sub(tb_product(n), tb_from_i64(2)); /* P - 2, then / 2: (P - 1) / 2 rounded down */
        for (int i = 0; i < TB_LIMBS; i++)
            h.w[i] = (h.w[i] >> 1) | (i + 1 < TB_LIMBS ? h.w[i + 1] << 63 : 0);
        for (int b = 0; b < 80; b += 7) {
            /* k = floor(h / 4^b) when that fits in int62 */
            tbig q = h;
            for (int s = 0; s < 2 * b; s++)
                for (int i = 0; i < TB_LIMBS; i++)
                    q.w[i] = (q.w[i] >> 1) | (i + 1 < TB_LIMBS ? q.w[i + 1] << 63 : 0);
            if (q.w[1] || q.w[2] || q.w[3] || q.w[0] == 0 || q.w[0] >> 62)
                continue;
            int64_t k = (int64_t)q.w[0];
            assert_true(oz2_wmax(n, k) >= b);
            /* (k + 1) 4^b > h by construction */
            int wk1 = oz2_wmax(n, k + 1);
            assert_true(wk1 < b);
            /* cross-check with the model: (k+1) 4^(wk1) <= h < (k+1) 4^(wk1+1) */
            tbig t = tb_shl(tb_from_i64(k + 1), 2 * wk1);
            if (wk1 >= 0)
                assert_true(tb_cmp(t, h) <= 0);
            assert_true(tb_cmp(tb_shl(tb_from_i64(k + 1), 2 * (wk1 + 1)), h) > 0);
        }
    }
}

/* ---- step 3: the CRT ---- */

static void test_crt_constants(void **state)
{
    (void)state;
    for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; n++) {
        oz2_crt_consts c;
        oz2_crt_init(&c, n);
        tbig P = tb_product(n);
        assert_int_equal(c.n, n);
        assert_int_equal(tb_cmp(tb_of_uint(&c.P), P), 0);
        assert_int_equal(tb_cmp(tb_add(tb_of_uint(&c.half), tb_of_uint(&c.half)), P), 0);
        for (int q = 0; q < n; q++) {
            assert_int_equal(c.m[q], tb_moduli[q]);
            assert_int_equal(tb_cmp(tb_mul(tb_of_uint(&c.cof[q]), tb_from_i64(tb_moduli[q])), P), 0);
            /* cof * inv == 1 mod m_q */
            assert_int_equal(tb_mod(tb_mul(tb_of_uint(&c.cof[q]), tb_from_i64(c.inv[q])), tb_moduli[q]), 1);
            assert_true(c.inv[q] < tb_moduli[q]);
            for (uint32_t x = 0; x < 65536; x += 97)
                assert_int_equal(oz2_mod_small(x, c.m[q], c.mu[q]), x % c.m[q]);
            assert_int_equal(oz2_mod_small(65535, c.m[q], c.mu[q]), 65535 % c.m[q]);
        }
    }
    /* pairwise coprime */
    for (int a = 0; a < 20; a++)
        for (int b = a + 1; b < 20; b++) {
            uint32_t x = tb_moduli[a], y = tb_moduli[b];
            while (y) {
                uint32_t t = x % y;
                x = y;
                y = t;
            }
            assert_int_equal(x, 1);
        }
}

static void round_trip(const oz2_crt_consts *c, tbig X)
{
    uint8_t r[OZ2_MAX_MODULI];
    for (int q = 0; q < c->n; q++)
        r[q] = (uint8_t)tb_mod(X, tb_moduli[q]);
    oz2_uint mag;
    int neg = oz2_crt_reconstruct(c, r, 1, &mag);
    tbig got = tb_of_uint(&mag);
    if (neg)
        got = tb_negate(got);
    if (tb_cmp(got, X) != 0)
        fail_msg("CRT round trip failed for n=%d (X limbs %016" PRIx64 " %016" PRIx64 " %016" PRIx64 ")", c->n,
                 X.w[2], X.w[1], X.w[0]);
    assert_int_equal(neg, tb_neg_p(&X));
}

/* A random integer of up to `bits` bits, either sign. */
static tbig random_tb(int bits)
{
    tbig r = {{oz_rng_u64(), oz_rng_u64(), oz_rng_u64(), 0}};
    int len = (int)oz_rng_range(0, bits);
    for (int pos = len; pos < 192; pos++)
        r.w[pos / 64] &= ~(UINT64_C(1) << (pos % 64));
    return oz_rng_u64() & 1 ? tb_negate(r) : r;
}

static void test_crt_round_trips(void **state)
{
    (void)state;
    for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; n++) {
        oz2_crt_consts c;
        oz2_crt_init(&c, n);
        tbig P = tb_product(n);
        tbig H = tb_sub(tb_of_uint(&c.half), tb_from_i64(1)); /* (P - 1) / 2 rounded down */
        assert_int_equal(tb_cmp(tb_add(tb_add(H, H), tb_from_i64(2)), P), 0);
        for (int d = 0; d < 40; d++) { /* near +-(P-1)/2 and near 0 */
            round_trip(&c, tb_sub(H, tb_from_i64(d)));
            round_trip(&c, tb_negate(tb_sub(H, tb_from_i64(d))));
            round_trip(&c, tb_from_i64(d));
            round_trip(&c, tb_from_i64(-d));
        }
        int pbits = oz2_uint_bitlen(&c.P) - 2;
        for (int i = 0; i < 3000; i++)
            round_trip(&c, random_tb(pbits));
        /* the worst exact products: +-k 4^w for the plan's w */
        for (int64_t k = 1; k <= 100000; k *= 7) {
            int w = oz2_wmax(n, k);
            if (w < 0)
                continue;
            tbig x = tb_shl(tb_from_i64(k), 2 * w);
            assert_true(tb_cmp(x, H) <= 0);
            round_trip(&c, x);
            round_trip(&c, tb_negate(x));
        }
        /* residues given as m_q (not reduced) still work */
        uint8_t r[OZ2_MAX_MODULI];
        for (int q = 0; q < n; q++)
            r[q] = (uint8_t)(q == 0 ? 0 : tb_moduli[q]); /* == 0 mod m_q, except 256 wraps to 0 anyway */
        oz2_uint mag;
        assert_int_equal(oz2_crt_reconstruct(&c, r, 1, &mag), 0);
        assert_int_equal(oz2_uint_bitlen(&mag), 0);
    }
}

/* ---- step 2: scaled integers and residues ---- */

static void test_scaled_int_and_residues(void **state)
{
    (void)state;
    for (int i = 0; i < 200000; i++) {
        double x = oz_rng_double_any();
        int s = oz_model_scale_exponent(fabs(x));
        if (oz_rng_range(0, 3) == 0)
            s += (int)oz_rng_range(0, 80); /* the row's max is larger than x */
        if (s > 1024)
            continue;
        int w = (int)oz_rng_range(1, 77);
        uint64_t mag;
        int e;
        int neg = oz2_scaled_int(x, w - s, &mag, &e);
        tbig want = tb_rne_scaled(x, w - s);
        tbig got = tb_shl(tb_from_i64((int64_t)mag), e);
        if (neg)
            got = tb_negate(got);
        if (tb_cmp(got, want) != 0)
            fail_msg("a'' of %a at w=%d s=%d: got mag %" PRIu64 " e %d neg %d", x, w, s, mag, e, neg);
        assert_true(e >= 0 && e <= 25);
        assert_true(mag <= (UINT64_C(1) << 53));
        assert_true(e == 0 || mag >= (UINT64_C(1) << 52));
        assert_true(tb_cmp(got, tb_pow2(w)) <= 0 && tb_cmp(got, tb_negate(tb_pow2(w))) >= 0);
        /* the spec's formula, rint(ldexp(x, w - s)), where it is a plain integer double */
        double y = rint(ldexp(x, w - s));
        assert_true(ldexp((double)mag, e) == fabs(y));
        assert_int_equal(neg, y < 0);
        for (int q = 0; q < 20; q++) {
            int8_t r = oz2_residue(mag, e, neg, tb_moduli[q]);
            uint32_t want_r = tb_mod(want, tb_moduli[q]);
            int32_t sym = want_r >= 128 ? (int32_t)want_r - (int32_t)tb_moduli[q] : (int32_t)want_r;
            if (r != sym)
                fail_msg("residue of %a mod %u: got %d want %d", x, tb_moduli[q], r, sym);
        }
    }
    /* ties to even at the integer boundary */
    uint64_t mag;
    int e;
    assert_int_equal(oz2_scaled_int(2.5, 0, &mag, &e), 0);
    assert_true(mag == 2 && e == 0);
    assert_int_equal(oz2_scaled_int(-3.5, 0, &mag, &e), 1);
    assert_true(mag == 4 && e == 0);
    assert_int_equal(oz2_scaled_int(-0.5, 0, &mag, &e), 0); /* rounds to 0: no sign */
    assert_true(mag == 0);
    assert_int_equal(oz2_scaled_int(0x1.fffffffffffffp-1, 20, &mag, &e), 0); /* |a''| = 2^w */
    assert_true(ldexp((double)mag, e) == 0x1p20);
    assert_int_equal(oz2_scaled_int(-0x1.fffffffffffffp-1, 77, &mag, &e), 1); /* exact: (2^53 - 1) 2^24 */
    assert_true(mag == (UINT64_C(1) << 53) - 1 && e == 24);
}

/* ---- step 4: the rounding to double ---- */

static void test_ldexp(void **state)
{
    (void)state;
    for (int i = 0; i < 500000; i++) {
        double x = oz_rng_double_any();
        int e = (int)oz_rng_range(-2300, 2300);
        if (i % 3 == 0)
            e = (int)oz_rng_range(-1140, -1000) - ilogb(x == 0.0 ? 1.0 : x); /* subnormal results */
        double got = oz2_ldexp(x, e), want = ldexp(x, e);
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("oz2_ldexp(%a, %d) = %a, ldexp gives %a", x, e, got, want);
    }
    /* ties in the subnormal range: 3 * 2^-1076 is 1.5 ulps: to even (2 ulps); 5 * 2^-1076 to 1 ulp... */
    assert_true(oz2_ldexp(3.0, -1076) == ldexp(3.0, -1076));
    assert_true(oz2_ldexp(5.0, -1076) == 0x1p-1074);
    assert_true(oz2_ldexp(1.0, -1075) == 0.0);
    assert_true(oz2_ldexp(1.5, -1075) == 0x1p-1074);
    assert_true(oz2_ldexp(-1.0, 1024) == -INFINITY);
    assert_true(oz2_ldexp(0x1p-1074, 2097) == 0x1p1023);
    assert_true(isnan(oz2_ldexp(NAN, -5)));
}

static void test_to_double(void **state)
{
    (void)state;
    for (int i = 0; i < 200000; i++) {
        int bits = (int)oz_rng_range(0, 156);
        tbig X = random_tb(bits);
        if (i % 4 == 1) { /* exact ties and near-ties: 53 bits, then 1, then zeros or a low bit */
            int len = (int)oz_rng_range(55, 155);
            tbig t = tb_shl(tb_from_i64((int64_t)(oz_rng_u64() >> 11) | (INT64_C(1) << 52)), len - 53);
            t = tb_add(t, tb_pow2(len - 54));
            if (oz_rng_range(0, 1))
                t = tb_add(t, tb_from_i64(oz_rng_range(-1, 1)));
            X = oz_rng_range(0, 1) ? tb_negate(t) : t;
        }
        int e = (int)oz_rng_range(-1300, 900);
        if (i % 3 == 0)
            e = (int)oz_rng_range(-1300, -1000) - bits;
        int neg = tb_neg_p(&X);
        tbig a = neg ? tb_negate(X) : X;
        oz2_uint mag;
        for (int l = 0; l < OZ2_LIMBS; l++)
            mag.w[l] = (uint32_t)(a.w[l / 2] >> (32 * (l % 2)));
        double got = oz2_to_double(&mag, neg, e), want = tb_to_double(X, e);
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("to_double: got %a want %a (bits %d, e %d)", got, want, bits, e);
    }
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(20261130));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_table),
        cmocka_unit_test(test_plan_examples),
        cmocka_unit_test(test_plan_boundary),
        cmocka_unit_test(test_crt_constants),
        cmocka_unit_test(test_crt_round_trips),
        cmocka_unit_test(test_scaled_int_and_residues),
        cmocka_unit_test(test_ldexp),
        cmocka_unit_test(test_to_double),
    };
    return OZ_TEST_RUN("test_oz2_crt", "oz2_crt", tests, seed);
}
