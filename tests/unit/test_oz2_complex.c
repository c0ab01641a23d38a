/* tests/unit/test_oz2_complex.c: crt/oz2_complex.h against docs/ozaki2-complex.md: the split moduli table (rebuilt from the primes), split and unsplit exhaustively, the odd-P CRT against big integers, the complex plans' exact range tests, and the split method's Gaussian dot products against exact ones. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>

#include "crt/oz2_complex.h"
#include "oz2_test_big.h"
#include "oz_test_util.h"

static tbig tb_of_uint(const oz2_uint *x)
{
    tbig r = {{0}};
    for (int i = 0; i < OZ2_LIMBS; i++)
        r.w[i / 2] |= (uint64_t)x->w[i] << (32 * (i % 2));
    return r;
}

static tbig tb_shr1(tbig a) /* arithmetic for a >= 0 */
{
    for (int i = 0; i < TB_LIMBS; i++)
        a.w[i] = (a.w[i] >> 1) | (i + 1 < TB_LIMBS ? a.w[i + 1] << 63 : 0);
    return a;
}

static int tb_bitlen(tbig a) /* a >= 0 */
{
    for (int i = TB_LIMBS - 1; i >= 0; i--)
        if (a.w[i])
            return 64 * i + 64 - __builtin_clzll(a.w[i]);
    return 0;
}

/* floor((P - 1)/2) */
static tbig tb_half_range(tbig P)
{
    return tb_shr1(tb_sub(P, tb_from_i64(1)));
}

static uint32_t gcd32(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The split moduli typed here again from their definition: for every odd
 * prime p = 1 mod 4 below 256, the largest power of p <= 256, largest
 * first. (The product of a pairwise coprime set of such moduli divides the
 * product of these powers: no set has a larger one.) */
static int model_split_moduli(uint32_t out[32])
{
    int n = 0;
    for (uint32_t p = 5; p < 256; p += 4) {
        int prime = 1;
        for (uint32_t d = 2; d * d <= p; d++)
            prime &= p % d != 0;
        if (!prime)
            continue;
        uint32_t q = p;
        while (q * p <= 256)
            q *= p;
        out[n++] = q;
    }
    for (int i = 0; i < n; i++) /* sort descending */
        for (int j = i + 1; j < n; j++)
            if (out[j] > out[i]) {
                uint32_t t = out[i];
                out[i] = out[j];
                out[j] = t;
            }
    return n;
}

static tbig model_split_product(int n)
{
    uint32_t ms[32];
    model_split_moduli(ms);
    tbig p = tb_from_i64(1);
    for (int q = 0; q < n; q++)
        p = tb_mul(p, tb_from_i64(ms[q]));
    return p;
}

/* ---- the table ---- */

static void test_split_table(void **state)
{
    (void)state;
    uint32_t ms[32];
    assert_int_equal(model_split_moduli(ms), OZ2Z_SPLIT_NMODULI);
    for (int q = 0; q < OZ2Z_SPLIT_NMODULI; q++) {
        const oz2z_split_modulus m = oz2z_split_mod(q);
        assert_int_equal(m.p, ms[q]);
        assert_true(m.p % 2 == 1 && m.p <= 256);
        /* every prime factor 1 mod 4 */
        uint32_t x = m.p;
        for (uint32_t d = 2; d <= x; d++)
            while (x % d == 0) {
                assert_int_equal(d % 4, 1);
                x /= d;
            }
        /* r: the positive symmetric root of -1, the smaller of the two */
        assert_true(m.r > 0 && m.r < m.p / 2 + 1 && 2 * m.r < m.p);
        assert_int_equal((m.r * m.r) % m.p, m.p - 1);
        int roots = 0;
        for (uint32_t y = 1; y < m.p; y++)
            roots += (y * y) % m.p == m.p - 1 && y < m.r;
        assert_int_equal(roots, 0);
        assert_int_equal((2 * m.r * m.inv2r) % m.p, 1);
        assert_true(m.inv2r < m.p);
        if (q > 0)
            assert_true(m.p < oz2z_split_mod(q - 1).p);
        for (int j = 0; j < q; j++)
            assert_int_equal(gcd32(m.p, oz2z_split_mod(j).p), 1);
    }
    assert_int_equal(oz2z_split_mod(OZ2Z_SPLIT_NMODULI).p, 0);
    assert_int_equal(oz2z_split_mod(-1).p, 0);
    /* the products, against the model's */
    for (int n = 1; n <= OZ2Z_SPLIT_NMODULI; n++) {
        oz2_uint P = oz2z_split_product(n);
        assert_int_equal(tb_cmp(tb_of_uint(&P), model_split_product(n)), 0);
    }
}

/* ---- split and unsplit ---- */

static void test_split_roundtrip_exhaustive(void **state)
{
    (void)state;
    static unsigned char seen[256 * 256];
    for (int q = 0; q < OZ2Z_SPLIT_NMODULI; q++) {
        const oz2z_split_modulus m = oz2z_split_mod(q);
        const int64_t p = m.p, r = m.r;
        memset(seen, 0, sizeof seen);
        for (uint32_t x = 0; x < m.p; x++)
            for (uint32_t y = 0; y < m.p; y++) {
                uint32_t u, v, x2, y2;
                oz2z_split(x, y, &m, &u, &v);
                assert_true(u < m.p && v < m.p);
                assert_int_equal(u, (uint32_t)((x + r * y) % p));           /* i -> r */
                assert_int_equal(v, (uint32_t)(((x - r * y) % p + p) % p)); /* i -> -r */
                assert_int_equal(seen[u * m.p + v], 0);                     /* a bijection */
                seen[u * m.p + v] = 1;
                oz2z_unsplit(u, v, &m, &x2, &y2);
                if (x2 != x || y2 != y)
                    fail_msg("p %u: (%u, %u) -> (%u, %u) -> (%u, %u)", m.p, x, y, u, v, x2, y2);
                /* and from the int8 residues: symmetric, the same classes */
                int8_t ui, vi;
                oz2z_split_i8((int8_t)(x >= 128 ? (int)x - (int)m.p : (int)x), (int8_t)oz2z_sym(y, m.p), &m, &ui, &vi);
                assert_true(2 * abs(ui) <= (int)m.p - 1 && 2 * abs(vi) <= (int)m.p - 1);
                assert_int_equal(((int64_t)ui - (int64_t)u) % p, 0);
                assert_int_equal(((int64_t)vi - (int64_t)v) % p, 0);
            }
    }
}

/* The residue kernel's split, oz2z_split_one, on every pair of int8
 * representatives x, y (any value in [-128, 127], as the kernel's byte
 * residues are), equals oz2z_split_i8 for every split modulus. */
static void test_split_one_exhaustive(void **state)
{
    (void)state;
    for (int q = 0; q < OZ2Z_SPLIT_NMODULI; q++) {
        const oz2z_split_modulus m = oz2z_split_mod(q);
        for (int x = -128; x < 128; x++)
            for (int y = -128; y < 128; y++) {
                int8_t u, v;
                oz2z_split_i8((int8_t)x, (int8_t)y, &m, &u, &v);
                const int32_t u1 = oz2z_split_one(x, y, (int32_t)m.r, m.p), v1 = oz2z_split_one(x, y, -(int32_t)m.r, m.p);
                if (u1 != u || v1 != v)
                    fail_msg("p %u x %d y %d: (%d, %d) want (%d, %d)", m.p, x, y, u1, v1, u, v);
            }
    }
}

/* The residue kernel's u and v from its byte sums (oz2z_uv_from_sums), for
 * every split modulus: the sums MAGIC + v_x and MAGIC + v_y are built from
 * v_x, v_y across their whole range |v| < 2^19 (edges and random), and the
 * results must be int8 representatives in [128 - p, 127] of v_x + v_y and
 * v_x - v_y modulo p. */
static void test_uv_from_sums(void **state)
{
    (void)state;
    const int32_t lim = (1 << 19) - 1;
    for (int q = 0; q < OZ2Z_SPLIT_NMODULI; q++) {
        const int32_t p = (int32_t)oz2z_split_mod(q).p;
        for (int it = 0; it < 40000; it++) {
            const int32_t edge[6] = {0, 1, -1, lim, -lim, p};
            const int32_t vx = it < 36 ? edge[it % 6] : (int32_t)oz_rng_range(-lim, lim);
            const int32_t vy = it < 36 ? edge[it / 6] : (int32_t)oz_rng_range(-lim, lim);
            const uint32_t X = OZ2_MAGIC_BITS + (uint32_t)vx, Y = OZ2_MAGIC_BITS + (uint32_t)vy;
            uint32_t uw, vw;
            oz2z_uv_from_sums(X, Y, (uint32_t)p, &uw, &vw);
            const int32_t u = (int8_t)(uw & 0xffu), v = (int8_t)(vw & 0xffu);
            if (u < 128 - p || u > 127 || v < 128 - p || v > 127)
                fail_msg("p %d: u %d v %d outside [128 - p, 127]", p, u, v);
            if ((((int64_t)u - vx - vy) % p) != 0 || (((int64_t)v - vx + vy) % p) != 0)
                fail_msg("p %d vx %d vy %d: u %d v %d not x + r y, x - r y", p, vx, vy, u, v);
        }
    }
}

/* The split turns the Gaussian product mod p into two products mod p:
 * split(z1 z2) = split(z1) split(z2), every z1, random z2. */
static void test_split_multiplicative(void **state)
{
    (void)state;
    for (int q = 0; q < OZ2Z_SPLIT_NMODULI; q++) {
        const oz2z_split_modulus m = oz2z_split_mod(q);
        const uint64_t p = m.p;
        for (uint32_t x1 = 0; x1 < m.p; x1++)
            for (uint32_t y1 = 0; y1 < m.p; y1 += 1 + (uint32_t)oz_rng_range(0, 6)) {
                const uint32_t x2 = (uint32_t)oz_rng_range(0, m.p - 1), y2 = (uint32_t)oz_rng_range(0, m.p - 1);
                const uint32_t x3 = (uint32_t)((x1 * x2 + (p - y1) * y2) % p); /* (x1 + i y1)(x2 + i y2) */
                const uint32_t y3 = (uint32_t)((x1 * y2 + y1 * x2) % p);
                uint32_t u1, v1, u2, v2, u3, v3;
                oz2z_split(x1, y1, &m, &u1, &v1);
                oz2z_split(x2, y2, &m, &u2, &v2);
                oz2z_split(x3, y3, &m, &u3, &v3);
                assert_int_equal(u3, (uint32_t)(u1 * u2 % p));
                assert_int_equal(v3, (uint32_t)(v1 * v2 % p));
            }
    }
}

/* ---- the odd CRT ---- */

static tbig tb_random_below_bits(int bits)
{
    tbig r;
    for (int i = 0; i < TB_LIMBS; i++) {
        int lo = 64 * i;
        r.w[i] = bits <= lo ? 0 : bits >= lo + 64 ? oz_rng_u64() : oz_rng_u64() & ((UINT64_C(1) << (bits - lo)) - 1);
    }
    return r;
}

static void check_crt_value(const oz2z_crt_consts *c, tbig X)
{
    uint8_t r[OZ2Z_SPLIT_NMODULI * 3];
    for (int q = 0; q < c->n; q++) {
        r[3 * q] = (uint8_t)tb_mod(X, c->m[q]);
        r[3 * q + 1] = 0xee; /* the stride skips these */
        r[3 * q + 2] = 0xee;
    }
    oz2_uint mag;
    const int neg = oz2z_crt_reconstruct(c, r, 3, &mag);
    tbig got = tb_of_uint(&mag);
    if (neg)
        got = tb_negate(got);
    if (tb_cmp(got, X) != 0)
        fail_msg("odd CRT over %d moduli: wrong value (neg %d, X negative %d)", c->n, neg, tb_neg_p(&X));
    if (tb_cmp(X, tb_from_i64(0)) == 0)
        assert_int_equal(neg, 0);
}

static void test_odd_crt(void **state)
{
    (void)state;
    for (int n = OZ2Z_MIN_SPLIT; n <= OZ2Z_SPLIT_NMODULI; n++) {
        oz2z_crt_consts c;
        oz2z_crt_init(&c, n);
        const tbig P = model_split_product(n), h = tb_half_range(P); /* P odd: h = (P - 1)/2 */
        assert_int_equal(tb_mod(P, 2), 1);
        assert_int_equal(tb_cmp(tb_of_uint(&c.half), h), 0);
        /* the constants: cof_q = P / p_q, cof_q inv_q == 1 (mod p_q) */
        for (int q = 0; q < n; q++) {
            assert_int_equal(tb_cmp(tb_mul(tb_of_uint(&c.cof[q]), tb_from_i64(c.m[q])), P), 0);
            assert_int_equal((uint64_t)tb_mod(tb_of_uint(&c.cof[q]), c.m[q]) * c.inv[q] % c.m[q], 1);
        }
        /* the edges, both signs: 0, 1, h, h - 1, and the fold's neighbours */
        const int64_t small[] = {0, 1, 2, 3, 255, 256};
        for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
            check_crt_value(&c, tb_from_i64(small[i]));
            check_crt_value(&c, tb_from_i64(-small[i]));
            check_crt_value(&c, tb_sub(h, tb_from_i64(small[i])));
            check_crt_value(&c, tb_negate(tb_sub(h, tb_from_i64(small[i]))));
        }
        /* h + 1 is -h mod P: the fold gives -h, never h + 1 */
        {
            uint8_t r[OZ2Z_SPLIT_NMODULI];
            const tbig h1 = tb_add(h, tb_from_i64(1));
            for (int q = 0; q < n; q++)
                r[q] = (uint8_t)tb_mod(h1, c.m[q]);
            oz2_uint mag;
            assert_int_equal(oz2z_crt_reconstruct(&c, r, 1, &mag), 1);
            assert_int_equal(tb_cmp(tb_of_uint(&mag), h), 0);
            /* every residue p_q - 1: S is as large as it gets; X = -1 */
            for (int q = 0; q < n; q++)
                r[q] = (uint8_t)(c.m[q] - 1);
            assert_int_equal(oz2z_crt_reconstruct(&c, r, 1, &mag), 1);
            assert_int_equal(tb_cmp(tb_of_uint(&mag), tb_from_i64(1)), 0);
        }
        /* random values of every size up to the range, both signs */
        const int len = tb_bitlen(h);
        for (int it = 0; it < 400; it++) {
            tbig X = tb_random_below_bits((int)oz_rng_range(1, len));
            if (tb_cmp(X, h) > 0)
                X = tb_sub(X, h);
            check_crt_value(&c, oz_rng_range(0, 1) ? tb_negate(X) : X);
        }
    }
}

/* Both parts from the split products, as the complex CRT kernel computes
 * them: Gaussian X = X_re + i X_im with both parts in the odd range; U, V its
 * split residues; s, d by oz2z_unsplit_sums; then the exact CRT with the
 * parts' consts gives X_re and X_im, and the fast CRT (the kernel's float
 * form: oz2_cf_*) gives RN of each, or declines (fold < 0) only near the
 * range's edge. Edges, both signs, and random values for every n; the
 * limbs' count against the bit lengths of P'_n. */
static void check_parts(const oz2z_crt_consts *cre, const oz2z_crt_consts *cim, const oz2_crt_fast *fre,
                        const oz2_crt_fast *fim, tbig xr, tbig xi)
{
    const int n = cre->n;
    uint8_t sr[OZ2Z_SPLIT_NMODULI], dr[OZ2Z_SPLIT_NMODULI];
    double acc_re[OZ2_CF_MAXL], acc_im[OZ2_CF_MAXL];
    oz2_cf_start(fre, fre->nl, acc_re);
    oz2_cf_start(fim, fim->nl, acc_im);
    for (int q = 0; q < n; q++) {
        const oz2z_split_modulus m = oz2z_split_mod(q);
        uint32_t U, V, sq, dq;
        oz2z_split(tb_mod(xr, m.p), tb_mod(xi, m.p), &m, &U, &V);
        oz2z_unsplit_sums(U, V, m.p, &sq, &dq);
        assert_true(sq < m.p && dq < m.p);
        sr[q] = (uint8_t)sq;
        dr[q] = (uint8_t)dq;
        oz2_cf_accumulate(fre, q, fre->nl, oz2_cf_residue(sq, 0), acc_re);
        oz2_cf_accumulate(fim, q, fim->nl, oz2_cf_residue(dq, 0), acc_im);
    }
    const tbig want[2] = {xr, xi};
    const oz2z_crt_consts *cs[2] = {cre, cim};
    const uint8_t *rs[2] = {sr, dr};
    double *accs[2] = {acc_re, acc_im};
    const oz2_crt_fast *fs[2] = {fre, fim};
    for (int part = 0; part < 2; part++) {
        oz2_uint mag;
        const int neg = oz2z_crt_reconstruct(cs[part], rs[part], 1, &mag);
        tbig got = tb_of_uint(&mag);
        if (neg)
            got = tb_negate(got);
        if (tb_cmp(got, want[part]) != 0)
            fail_msg("n %d part %d: the exact CRT of the unsplit sums is not X", n, part);
        const oz2_u192 m3 = oz2_u192_of(&mag);
        const double rn = oz2_to_double3(&m3, neg, 0);
        if (oz2_cf_fold_limbs(fs[part], fs[part]->nl, accs[part]) == 0) {
            const double fast = oz2_cf_limbs_rn(accs[part], fs[part]->nl);
            if (fast != rn && !(fast == 0.0 && rn == 0.0))
                fail_msg("n %d part %d: fast CRT %a, exact %a", n, part, fast, rn);
        } else {
            /* only near +-(P-1)/2: |X| > (P-1)/2 (1 - 2^-28) */
            const tbig h = tb_half_range(model_split_product(n));
            const tbig ax = tb_neg_p(&want[part]) ? tb_negate(want[part]) : want[part];
            if (tb_cmp(tb_shl(ax, 28), tb_sub(tb_shl(h, 28), h)) < 0)
                fail_msg("n %d part %d: the fast CRT declined far from the range's edge", n, part);
        }
    }
}

static void test_split_crt_parts(void **state)
{
    (void)state;
    static const int bits[OZ2Z_SPLIT_NMODULI] = {8,  16, 24,  32,  39,  47,  54,  62,  69,  76,  83,  90,
                                                 97, 104, 110, 117, 124, 130, 136, 141, 147, 152, 157, 161};
    for (int n = OZ2Z_MIN_SPLIT; n <= OZ2Z_SPLIT_NMODULI; n++) {
        const tbig P = model_split_product(n), h = tb_half_range(P);
        assert_int_equal(tb_bitlen(P), bits[n - 1]);
        assert_int_equal(OZ2Z_CF_LIMBS(n), (bits[n - 1] + OZ2_CF_BITS - 1) / OZ2_CF_BITS);
        oz2z_crt_consts cre, cim;
        oz2z_crt_init_parts(&cre, &cim, n);
        oz2_crt_fast fre, fim;
        oz2z_crt_fast_init(&fre, &cre);
        oz2z_crt_fast_init(&fim, &cim);
        const tbig edge[] = {tb_from_i64(0), tb_from_i64(1), tb_from_i64(-1), h, tb_negate(h),
                             tb_sub(h, tb_from_i64(1)), tb_negate(tb_sub(h, tb_from_i64(1)))};
        const int ne = (int)(sizeof edge / sizeof edge[0]);
        for (int i = 0; i < ne; i++)
            for (int j = 0; j < ne; j++)
                check_parts(&cre, &cim, &fre, &fim, edge[i], edge[j]);
        const int len = tb_bitlen(h);
        for (int it = 0; it < 300; it++) {
            tbig v[2];
            for (int part = 0; part < 2; part++) {
                tbig X = tb_random_below_bits((int)oz_rng_range(1, len));
                if (tb_cmp(X, h) > 0)
                    X = tb_sub(X, h);
                v[part] = oz_rng_range(0, 1) ? tb_negate(X) : X;
            }
            check_parts(&cre, &cim, &fre, &fim, v[0], v[1]);
        }
    }
}

/* ---- the plans ---- */

/* Hand-computed (Python integers, outside this code base): the complex
 * w_max(N, k) = max{b : 2 k 4^b <= floor((P - 1)/2)} for k = 1, 1024, 4096,
 * 16384, 100000 over the first N engine moduli (N = 1..20) and, after
 * P'_N's bit length, over the first N split moduli (N = 1..24). */
static const int64_t plan_ks[5] = {1, 1024, 4096, 16384, 100000};
static const int engine_table[20][5] = {
    {2, -1, -1, -1, -1},   {6, 1, 0, -1, -1},     {10, 5, 4, 3, 2},      {14, 9, 8, 7, 6},      {18, 13, 12, 11, 10},
    {22, 17, 16, 15, 14},  {26, 21, 20, 19, 18},  {30, 25, 24, 23, 22},  {34, 29, 28, 27, 26},  {38, 33, 32, 31, 30},
    {42, 37, 36, 35, 34},  {46, 41, 40, 39, 38},  {50, 45, 44, 43, 41},  {54, 49, 48, 47, 45},  {57, 52, 51, 50, 49},
    {61, 56, 55, 54, 53},  {65, 60, 59, 58, 57},  {69, 64, 63, 62, 60},  {72, 67, 66, 65, 64},  {76, 71, 70, 69, 68},
};
static const int split_table[24][6] = {
    {8, 2, -1, -1, -1, -1},     {16, 6, 1, 0, -1, -1},      {24, 10, 5, 4, 3, 2},       {32, 14, 9, 8, 7, 6},
    {39, 18, 13, 12, 11, 10},   {47, 22, 17, 16, 15, 13},   {54, 25, 20, 19, 18, 17},   {62, 29, 24, 23, 22, 21},
    {69, 33, 28, 27, 26, 24},   {76, 36, 31, 30, 29, 28},   {83, 40, 35, 34, 33, 32},   {90, 43, 38, 37, 36, 35},
    {97, 47, 42, 41, 40, 38},   {104, 50, 45, 44, 43, 42},  {110, 53, 48, 47, 46, 45},  {117, 57, 52, 51, 50, 48},
    {124, 60, 55, 54, 53, 52},  {130, 63, 58, 57, 56, 55},  {136, 66, 61, 60, 59, 58},  {141, 69, 64, 63, 62, 61},
    {147, 72, 67, 66, 65, 63},  {152, 74, 69, 68, 67, 66},  {157, 77, 72, 71, 70, 68},  {161, 79, 74, 73, 72, 70},
};

/* {k, bits, N, w, N'} (the same Python): the plans of the GPU tests' sizes
 * and the edges; bits 64 ends at k = 43404908, bits 77 never fits. */
static const int64_t plan_cases[][5] = {
    {1, 1, 2, 6, 2},          {4096, 1, 3, 4, 3},           {536870912, 1, 5, 4, 6},
    {1, 34, 9, 34, 10},       {1024, 34, 11, 37, 12},       {4096, 34, 11, 36, 12},
    {100000, 34, 11, 34, 12}, {16777216, 34, 12, 34, 13},   {536870912, 34, 13, 35, 14},
    {1, 53, 14, 54, 16},      {1024, 53, 16, 56, 18},       {4096, 53, 16, 55, 18},
    {16384, 53, 16, 54, 18},  {100000, 53, 16, 53, 18},     {16777216, 53, 17, 53, 19},
    {536870912, 53, 18, 54, 20},
    {1, 64, 17, 65, 19},      {1024, 64, 18, 64, 20},       {4096, 64, 19, 66, 21},
    {16384, 64, 19, 65, 21},  {100000, 64, 19, 64, 22},     {16777216, 64, 20, 64, 23},
    {43404908, 64, 20, 64, 23}, {43404909, 64, 0, 0, 0},    {536870912, 64, 0, 0, 0},
    {1, 77, 0, 0, 0},
};

static void test_plan_table(void **state)
{
    (void)state;
    for (int n = 1; n <= 20; n++)
        for (int c = 0; c < 5; c++) {
            assert_int_equal(oz2z_wmax(n, plan_ks[c]), engine_table[n - 1][c]);
            /* the complex range is the real one at 2k */
            assert_int_equal(oz2z_wmax(n, plan_ks[c]), oz2_wmax(n, 2 * plan_ks[c]));
        }
    for (int n = 1; n <= 24; n++) {
        oz2_uint P = oz2z_split_product(n);
        assert_int_equal(oz2_uint_bitlen(&P), split_table[n - 1][0]);
        for (int c = 0; c < 5; c++)
            assert_int_equal(oz2z_split_wmax(n, plan_ks[c]), split_table[n - 1][c + 1]);
    }
    for (size_t i = 0; i < sizeof plan_cases / sizeof plan_cases[0]; i++) {
        const oz2z_plan p = oz2z_make_plan(plan_cases[i][0], (int)plan_cases[i][1]);
        if (p.n != plan_cases[i][2] || p.w != plan_cases[i][3] || p.n_split != plan_cases[i][4])
            fail_msg("k %" PRId64 " bits %" PRId64 ": plan (%d, %d, %d), want (%" PRId64 ", %" PRId64 ", %" PRId64 ")",
                     plan_cases[i][0], plan_cases[i][1], p.n, p.w, p.n_split, plan_cases[i][2], plan_cases[i][3],
                     plan_cases[i][4]);
    }
    assert_int_equal(oz2z_make_plan(1, 76).n, 20);
    assert_int_equal(oz2z_make_plan(0, 1).n, 2); /* k < 1 is taken as 1 */
    assert_int_equal(oz2z_make_plan(-5, 1).w, 6);
}

/* The range test is exact: at k = floor(h / (2 4^b)) it holds and at k + 1
 * it fails (h = floor((P - 1)/2)), for the engine products (even) and the
 * split products (odd), against the big-integer model. */
static void check_boundary(const oz2_uint *P, tbig Pt)
{
    const tbig h = tb_half_range(Pt);
    for (int b = 0; b < 80; b++) {
        tbig q = h;
        for (int s = 0; s < 2 * b + 1; s++)
            q = tb_shr1(q);
        if (q.w[1] || q.w[2] || q.w[3] || q.w[0] == 0 || q.w[0] >> 61)
            continue;
        const int64_t k = (int64_t)q.w[0];
        /* the model: 2 k 4^b <= h < 2 (k + 1) 4^b */
        assert_true(tb_cmp(tb_shl(tb_from_i64(k), 2 * b + 1), h) <= 0);
        assert_true(tb_cmp(tb_shl(tb_from_i64(k + 1), 2 * b + 1), h) > 0);
        assert_true(oz2z_range_holds(P, k, b));
        assert_false(oz2z_range_holds(P, k + 1, b));
        assert_true(oz2z_wmax_of(P, k) >= b);
        assert_true(oz2z_wmax_of(P, k + 1) < b);
        assert_false(oz2z_range_holds(P, k, b + 1));
    }
}

static void test_plan_boundary(void **state)
{
    (void)state;
    for (int n = 1; n <= 20; n++) {
        const oz2_uint P = oz2_product(n);
        check_boundary(&P, tb_product(n));
    }
    for (int n = 1; n <= 24; n++) {
        const oz2_uint P = oz2z_split_product(n);
        check_boundary(&P, model_split_product(n));
    }
}

/* w_max grows with N and shrinks with k; N is the smallest reaching bits,
 * N' the smallest holding w; both grow with bits and k. */
static void test_plan_monotone(void **state)
{
    (void)state;
    int64_t ks[64];
    int nk = 0;
    for (int e = 0; e <= 40; e += 2) {
        ks[nk++] = (int64_t)1 << e;
        ks[nk++] = ((int64_t)1 << e) + 1 + (int64_t)oz_rng_range(0, (int64_t)1 << e);
    }
    for (int i = 1; i < nk; i++) /* sort */
        for (int j = i; j > 0 && ks[j] < ks[j - 1]; j--) {
            int64_t t = ks[j];
            ks[j] = ks[j - 1];
            ks[j - 1] = t;
        }
    for (int c = 0; c < nk; c++) {
        const int64_t k = ks[c];
        for (int n = 2; n <= 24; n++) {
            if (n <= 20) {
                assert_true(oz2z_wmax(n, k) >= oz2z_wmax(n - 1, k));
                if (c > 0)
                    assert_true(oz2z_wmax(n, k) <= oz2z_wmax(n, ks[c - 1]));
            }
            assert_true(oz2z_split_wmax(n, k) >= oz2z_split_wmax(n - 1, k));
            if (c > 0)
                assert_true(oz2z_split_wmax(n, k) <= oz2z_split_wmax(n, ks[c - 1]));
        }
        oz2z_plan prev = {2, 0, 2};
        for (int bits = 1; bits <= 78; bits++) {
            const oz2z_plan p = oz2z_make_plan(k, bits);
            if (p.n == 0) {
                assert_true(oz2z_wmax(20, k) < bits);
                prev.n = 21;
                continue;
            }
            assert_true(p.w >= bits && p.w == oz2z_wmax(p.n, k));
            assert_true(p.n == 2 || oz2z_wmax(p.n - 1, k) < bits);
            assert_true(p.n >= prev.n);
            const oz2_uint Ps = oz2z_split_product(p.n_split);
            assert_true(p.n_split >= 2 && oz2z_range_holds(&Ps, k, p.w));
            if (p.n_split > 2) {
                const oz2_uint Pm = oz2z_split_product(p.n_split - 1);
                assert_false(oz2z_range_holds(&Pm, k, p.w));
            }
            if (c > 0 && oz2z_make_plan(ks[c - 1], bits).n)
                assert_true(p.n >= oz2z_make_plan(ks[c - 1], bits).n);
            prev = p;
        }
        for (int w = 0; w < 70; w++) {
            const int a = oz2z_split_count(k, w), b = oz2z_split_count(k, w + 1);
            assert_true(b == 0 || (a != 0 && a <= b));
            if (c > 0 && a)
                assert_true(oz2z_split_count(ks[c - 1], w) <= a);
        }
    }
}

/* Every plan the engine moduli serve, the split moduli hold: P'_24 > P_20,
 * so 2 k 4^w <= (P_N - 1)/2 implies it for P'_24. */
static void test_split_holds_every_plan(void **state)
{
    (void)state;
    assert_true(tb_cmp(model_split_product(24), tb_product(20)) > 0);
    for (int it = 0; it < 3000; it++) {
        const int64_t k = it < 63 ? (int64_t)1 << (it % 62) : oz_rng_range(1, (int64_t)1 << oz_rng_range(1, 61));
        const int bits = (int)oz_rng_range(1, 77);
        const oz2z_plan p = oz2z_make_plan(k, bits);
        if (p.n)
            assert_true(p.n_split >= 2 && p.n_split <= 24);
        else
            assert_int_equal(p.n_split, 0);
        /* and at the plan's largest w for this k */
        const int wm = oz2z_wmax(20, k);
        if (wm >= 0)
            assert_true(oz2z_split_count(k, wm) > 0);
    }
}

/* ---- the split method end to end ---- */

/* X = sum_k a_k b_k over Gaussian integers with parts |.| <= 2^w: by the
 * split moduli (two integer dot products of symmetric residues per modulus,
 * unsplit, odd CRT per part) against the exact big-integer sum. */
static void check_split_dot(int64_t k, int w, const tbig *ar, const tbig *ai, const tbig *br, const tbig *bi)
{
    const int ns = oz2z_split_count(k, w);
    assert_true(ns >= 2);
    oz2z_crt_consts c;
    oz2z_crt_init(&c, ns);
    uint8_t rre[OZ2Z_SPLIT_NMODULI], rim[OZ2Z_SPLIT_NMODULI];
    for (int q = 0; q < ns; q++) {
        const oz2z_split_modulus m = oz2z_split_mod(q);
        int64_t U = 0, V = 0;
        for (int64_t kk = 0; kk < k; kk++) {
            int8_t ua, va, ub, vb;
            /* the int8 residues as crt/oz2.h stores them (r - p for r >= 128) */
            const uint32_t x[4] = {tb_mod(ar[kk], m.p), tb_mod(ai[kk], m.p), tb_mod(br[kk], m.p), tb_mod(bi[kk], m.p)};
            int8_t x8[4];
            for (int i = 0; i < 4; i++)
                x8[i] = (int8_t)(x[i] >= 128 ? (int)x[i] - (int)m.p : (int)x[i]);
            oz2z_split_i8(x8[0], x8[1], &m, &ua, &va);
            oz2z_split_i8(x8[2], x8[3], &m, &ub, &vb);
            U += (int32_t)ua * ub;
            V += (int32_t)va * vb;
        }
        uint32_t xr, xi;
        oz2z_unsplit(oz2z_mod(U, m.p), oz2z_mod(V, m.p), &m, &xr, &xi);
        rre[q] = (uint8_t)xr;
        rim[q] = (uint8_t)xi;
    }
    tbig Xr = tb_from_i64(0), Xi = tb_from_i64(0);
    for (int64_t kk = 0; kk < k; kk++) {
        Xr = tb_add(Xr, tb_sub(tb_mul(ar[kk], br[kk]), tb_mul(ai[kk], bi[kk])));
        Xi = tb_add(Xi, tb_add(tb_mul(ar[kk], bi[kk]), tb_mul(ai[kk], br[kk])));
    }
    for (int part = 0; part < 2; part++) {
        oz2_uint mag;
        const int neg = oz2z_crt_reconstruct(&c, part ? rim : rre, 1, &mag);
        tbig got = tb_of_uint(&mag);
        if (neg)
            got = tb_negate(got);
        if (tb_cmp(got, part ? Xi : Xr) != 0)
            fail_msg("split dot: k %" PRId64 " w %d N' %d: part %d wrong", k, w, ns, part);
    }
}

static void test_split_dot_exact(void **state)
{
    (void)state;
    const int64_t ks[] = {1, 2, 3, 7, 64, 1000, 4097};
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
        const int64_t k = ks[ki];
        tbig *v = calloc((size_t)(4 * k), sizeof(tbig));
        assert_non_null(v);
        tbig *ar = v, *ai = v + k, *br = v + 2 * k, *bi = v + 3 * k;
        for (int bits = 1; bits <= 76; bits += (k > 100 ? 11 : 3)) {
            const oz2z_plan p = oz2z_make_plan(k, bits);
            if (!p.n)
                continue;
            const tbig top = tb_pow2(p.w);
            /* the range's edges: X_re = +-2 k 4^w, X_im = +-2 k 4^w */
            for (int edge = 0; edge < 4; edge++) {
                for (int64_t kk = 0; kk < k; kk++) {
                    ar[kk] = ai[kk] = br[kk] = top;
                    if (edge & 1) /* b = 2^w (1 - i): a b = 2 4^w */
                        bi[kk] = tb_negate(top);
                    if (edge & 2) { /* negated */
                        br[kk] = tb_negate(br[kk]);
                        bi[kk] = tb_negate(bi[kk]);
                    }
                }
                check_split_dot(k, p.w, ar, ai, br, bi);
            }
            /* random parts of every size up to 2^w, signs mixed */
            for (int it = 0; it < (k > 100 ? 2 : 10); it++) {
                const int len = (int)oz_rng_range(1, p.w);
                for (int64_t kk = 0; kk < 4 * k; kk++) {
                    tbig x = tb_random_below_bits(len);
                    v[kk] = oz_rng_range(0, 1) ? tb_negate(x) : x;
                }
                check_split_dot(k, p.w, ar, ai, br, bi);
            }
        }
        free(v);
    }
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(0x2c0a71e5));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_table),
        cmocka_unit_test(test_split_roundtrip_exhaustive),
        cmocka_unit_test(test_split_one_exhaustive),
        cmocka_unit_test(test_uv_from_sums),
        cmocka_unit_test(test_split_multiplicative),
        cmocka_unit_test(test_odd_crt),
        cmocka_unit_test(test_split_crt_parts),
        cmocka_unit_test(test_plan_table),
        cmocka_unit_test(test_plan_boundary),
        cmocka_unit_test(test_plan_monotone),
        cmocka_unit_test(test_split_holds_every_plan),
        cmocka_unit_test(test_split_dot_exact),
    };
    return OZ_TEST_RUN("test_oz2_complex", "oz2_complex", tests, seed);
}
