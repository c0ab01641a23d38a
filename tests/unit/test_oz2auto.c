/* tests/unit/test_oz2auto.c: automatic precision (crt/oz2_auto.h, reference/oz2gemm.c): the estimate's integers against exact models, the element rule's minimality, the plan against an independent model, and the guarantee itself against exact products (quad precision) on hard datasets. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <inttypes.h>
#include <stdio.h>

#include "crt/oz2_auto.h"
#include "reference/oz2gemm.h"
#include "oz2_test_big.h"
#include "oz_test_gemm.h"

typedef __float128 q128;
typedef unsigned __int128 u128;

static q128 q_ldexp(q128 x, int e)
{
    while (e > 0) {
        int s = e > 60 ? 60 : e;
        x *= (q128)(UINT64_C(1) << s);
        e -= s;
    }
    while (e < 0) {
        int s = -e > 60 ? 60 : -e;
        x /= (q128)(UINT64_C(1) << s);
        e += s;
    }
    return x;
}

/* ---- the estimate's integers ---- */

/* floor and ceil of |x| 2^sh from quad precision (exact: 53 bits shifted). */
static void model_floor_ceil(double x, int sh, uint64_t *fl, uint64_t *ce)
{
    q128 y = q_ldexp((q128)fabs(x), sh);
    uint64_t f = (uint64_t)y; /* truncation = floor for y >= 0 */
    *fl = f;
    *ce = f + ((q128)f != y);
}

static void test_integers(void **state)
{
    (void)state;
    for (int it = 0; it < 200000; it++) {
        double x;
        switch (it % 4) {
        case 0: x = oz_rng_sym(); break;
        case 1: x = ldexp(oz_rng_sym(), (int)oz_rng_range(-1074, 1000)); break;
        case 2: x = ldexp((double)oz_rng_range(-1000, 1000), (int)oz_rng_range(-40, 40)); break;
        default: x = ldexp(1.0, (int)oz_rng_range(-1074, 1000)) * (oz_rng_range(0, 1) ? -1 : 1); break;
        }
        if (x == 0.0)
            continue;
        int s;
        frexp(fabs(x), &s);
        s += (int)oz_rng_range(0, 70); /* |x| < 2^s: a row whose max is larger */
        uint64_t fl, ce;
        model_floor_ceil(x, OZ2A_E - s, &fl, &ce);
        assert_true(oz2a_norm_term(x, s) == ce);
        int g = (int)oz2a_row_scale(oz_rng_u64() >> (int)oz_rng_range(11, 63), (int64_t)oz_rng_range(1, 100000));
        assert_true(g >= OZ2A_GMIN && g <= OZ2A_GMAX);
        model_floor_ceil(x, g - s, &fl, &ce);
        assert_true(oz2a_quant(x, s, g) == (fl > 127 ? 127 : fl));
        /* the FP64-unit forms of the GPU's row kernels: the same integers (a row's s is at most 1024) */
        if (s > 1024)
            continue;
        assert_true(oz2a_norm_term_fp(x, oz2a_pow2_of(OZ2A_E - s)) == oz2a_norm_term(x, s));
        assert_true(oz2a_quant_fp(x, oz2a_pow2_of(g - s)) == oz2a_quant(x, s, g));
    }
    assert_true(oz2a_norm_term(0.0, 5) == 0 && oz2a_quant(-0.0, 5, 7) == 0);
    assert_true(oz2a_norm_term(0x1p-1074, 1000) == 1); /* tiny but nonzero: the ceiling is 1 */
    assert_true(oz2a_norm_term_fp(0.0, oz2a_pow2_of(5)) == 0 && oz2a_quant_fp(-0.0, oz2a_pow2_of(2)) == 0);
    assert_true(oz2a_norm_term_fp(0x1p-1074, oz2a_pow2_of(OZ2A_E - 1000)) == 1); /* the product underflows */
    /* every row scale's extremes: s from -1073 to 1024, x at the row's max, just below, and tiny */
    for (int s = -1073; s <= 1024; s++) {
        const double xs[] = {nextafter(ldexp(1.0, s), 0.0), ldexp(1.0, s - 1), ldexp(1.5, s - 2), 0x1p-1074,
                             ldexp(1.0, s - 60 > -1074 ? s - 60 : -1074) * 3.0};
        for (int e = 0; e < 5; e++) {
            const double x = xs[e];
            if (!(fabs(x) < ldexp(1.0, s)) || x == 0.0)
                continue;
            assert_true(oz2a_norm_term_fp(x, oz2a_pow2_of(OZ2A_E - s)) == oz2a_norm_term(x, s));
            for (int g = OZ2A_GMIN; g <= OZ2A_GMAX; g += 53)
                assert_true(oz2a_quant_fp(-x, oz2a_pow2_of(g - s)) == oz2a_quant(x, s, g));
        }
    }
}

/* The division-free row scale against L = bitlen(floor(A1 / k)) (exhaustive
 * on small values, at every k 2^d boundary, random elsewhere); the scale from
 * the elements' keys against oz_scale_exponent of the row's max |x|. */
static int model_row_scale(uint64_t A1, int64_t k)
{
    const int g = OZ2A_E + OZ2A_TARGET + 1 - oz2a_bitlen(A1 / (uint64_t)k);
    return g < OZ2A_GMIN ? OZ2A_GMIN : g > OZ2A_GMAX ? OZ2A_GMAX : g;
}
static double key_sample(int kind)
{
    switch (kind) {
    case 0: return 0.0;
    case 1: return ldexp((double)oz_rng_range(1, (INT64_C(1) << 52) - 1), -1074) * (oz_rng_range(0, 1) ? -1 : 1); /* subnormal */
    case 2: return ldexp(1.0, -1074 + (int)oz_rng_range(0, 52));
    case 3: return ldexp(oz_rng_sym(), (int)oz_rng_range(-1022, 1024));
    case 4: return nextafter(ldexp(1.0, (int)oz_rng_range(-1021, 1024)), 0.0);
    case 5: return oz_rng_range(0, 1) ? INFINITY : -INFINITY;
    case 6: return nan("");
    default: return oz_rng_sym();
    }
}
static void test_scales(void **state)
{
    (void)state;
    for (uint64_t a = 0; a < 4096; a++)
        for (int64_t k = 1; k < 300; k++)
            assert_int_equal(oz2a_row_scale(a, k), model_row_scale(a, k));
    for (int i = 0; i < 200000; i++) {
        const int64_t k = oz_rng_range(1, i % 2 ? 100000 : (INT64_C(1) << 40));
        const int d = (int)oz_rng_range(0, 63 - oz2a_bitlen((uint64_t)k));
        const uint64_t edge = (uint64_t)k << d, r = oz_rng_u64() >> (int)oz_rng_range(0, 63);
        const uint64_t as[] = {edge, edge - 1, edge + 1, r};
        for (int j = 0; j < 4; j++)
            assert_int_equal(oz2a_row_scale(as[j], k), model_row_scale(as[j], k));
    }
    assert_int_equal(oz2a_row_scale(UINT64_MAX, 1), model_row_scale(UINT64_MAX, 1));
    for (int i = 0; i < 100000; i++) {
        const int n = (int)oz_rng_range(1, 6), mix = (int)oz_rng_range(0, 127);
        uint32_t key = 0;
        double mx = 0.0;
        int bad = 0;
        for (int j = 0; j < n; j++) {
            /* rows of one kind, or mixed (the subnormal and zero rows most often) */
            const int kind = mix < 64 ? mix % 3 : mix < 100 ? (int)oz_rng_range(0, 4) : (int)oz_rng_range(0, 7);
            const double x = key_sample(kind);
            const uint32_t kx = oz2a_elem_key(x);
            key = kx > key ? kx : key;
            bad |= !(fabs(x) <= DBL_MAX);
            mx = fabs(x) > mx ? fabs(x) : mx;
        }
        assert_int_equal(oz2a_key_scale(key), bad ? OZ_SCALE_SPECIAL : oz_scale_exponent(mx));
    }
    assert_int_equal(oz2a_key_scale(oz2a_elem_key(DBL_MAX)), 1024);
    assert_int_equal(oz2a_key_scale(oz2a_elem_key(0x1p-1074)), -1073);
    assert_int_equal(oz2a_key_scale(oz2a_elem_key(0x1p-1022)), -1021);
    assert_int_equal(oz2a_key_scale(oz2a_elem_key(nextafter(0x1p-1022, 0.0))), -1022);
    assert_int_equal(oz2a_key_scale(oz2a_elem_key(-0.0)), 0);
}

static void test_ceil_log2(void **state)
{
    (void)state;
    for (uint64_t x = 1; x < 300; x++)
        for (uint64_t y = 1; y < 300; y++) {
            int e = -20;
            while (!((e >= 0 && (u128)x <= ((u128)y << e)) || (e < 0 && ((u128)x << -e) <= y)))
                e++;
            assert_int_equal(oz2a_ceil_log2_ratio(x, y), e);
        }
    for (int it = 0; it < 100000; it++) {
        uint64_t x = (oz_rng_u64() >> oz_rng_range(0, 63)) | 1, y = (oz_rng_u64() >> oz_rng_range(1, 63)) | 1;
        int e = oz2a_ceil_log2_ratio(x, y);
        /* x <= y 2^e and not x <= y 2^(e-1) */
        u128 X = x, Y = y;
        if (e >= 0)
            assert_true(X <= (Y << e) && (e == 0 ? X > (Y >> 1) || (X << 1) > Y : X > (Y << (e - 1))));
        else
            assert_true((X << -e) <= Y && (X << (1 - e)) > Y);
    }
}

/* The element rule: the w it gives meets both conditions exactly, w - 1 fails one. */
static int cond_ok(uint64_t A1, uint64_t B1, int g, int h, uint32_t G, int64_t k, int B, int w)
{
    /* T1: 1024 (A1 + B1) <= 1023 G 2^(w + 1 + E - B - g - h) */
    int e1 = w + 1 + OZ2A_E - B - g - h;
    u128 x = (u128)1024 * (A1 + B1), y = (u128)1023 * G;
    int ok1 = e1 >= 0 ? (e1 > 80 ? 1 : x <= (y << e1)) : (-e1 > 60 ? 0 : (x << -e1) <= y);
    /* T2: k 2^(B + 10 + g + h) <= G 2^(2w + 2) */
    int e2 = 2 * w + 2 - (B + 10 + g + h);
    u128 kk = (u128)k, gg = G;
    int ok2 = e2 >= 0 ? (e2 > 80 ? 1 : kk <= (gg << e2)) : (-e2 > 80 ? 0 : (kk << -e2) <= gg);
    return ok1 && ok2;
}

static void test_elem_rule(void **state)
{
    (void)state;
    int skip_ok = 0, skip_all = 0;
    for (int it = 0; it < 200000; it++) {
        int64_t k = oz_rng_range(1, it % 2 ? 100 : 1 << 20);
        uint64_t A1 = oz_rng_u64() % ((uint64_t)k << OZ2A_E) + 1, B1 = oz_rng_u64() % ((uint64_t)k << OZ2A_E) + 1;
        int g = (int)oz_rng_range(OZ2A_GMIN, 40), h = (int)oz_rng_range(OZ2A_GMIN, 40);
        int64_t ke = k < OZ2A_KEST ? k : OZ2A_KEST;
        uint32_t G = (uint32_t)(oz_rng_u64() % (uint64_t)(ke * 127 * 127)) + 1;
        int B = (int)oz_rng_range(OZ2A_B_MIN, OZ2A_B_MAX);
        int w = oz2a_elem_w(A1, B1, g, h, G, k, B);
        assert_true(cond_ok(A1, B1, g, h, G, k, B, w));
        assert_false(cond_ok(A1, B1, g, h, G, k, B, w - 1));
        /* the GPU's skip test: never "at most" below the rule, and "at most" at it but near powers of two */
        const oz2a_skip_pq col = oz2a_skip_pq_of(B1, h);
        for (int d = -3; d <= 3; d++) {
            const oz2a_skip_row row = oz2a_skip_row_of(oz2a_skip_pq_of(A1, g), oz2a_skip_c_of(k, B, w + d));
            if (oz2a_skip(&row, &col, G))
                assert_true(d >= 0); /* "at most w + d" with d < 0 would be wrong */
            if (d >= 1)
                assert_true(oz2a_skip(&row, &col, G)); /* a need above the rule: skipped */
        }
        const oz2a_skip_row row0 = oz2a_skip_row_of(oz2a_skip_pq_of(A1, g), oz2a_skip_c_of(k, B, w));
        skip_ok += oz2a_skip(&row0, &col, G);
        skip_all++;
        /* at the edge: the least G' whose rule gives at most w; G' - 1 must not be skipped */
        uint32_t lo = 1, hi = G; /* oz2a_elem_w(.., hi, ..) <= w */
        while (lo < hi) {
            const uint32_t mid = lo + (hi - lo) / 2;
            if (oz2a_elem_w(A1, B1, g, h, mid, k, B) <= w)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (lo > 1)
            assert_false(oz2a_skip(&row0, &col, lo - 1));
    }
    /* need at W_INF (an element no w certifies): every other element is at most that */
    const oz2a_skip_row rinf = oz2a_skip_row_of(oz2a_skip_pq_of(UINT64_C(1) << 40, OZ2A_GMAX),
                                                oz2a_skip_c_of(INT64_C(1) << 33, OZ2A_B_MAX, OZ2A_W_INF));
    const oz2a_skip_pq cinf = oz2a_skip_pq_of(UINT64_C(1) << 40, OZ2A_GMAX);
    assert_true(oz2a_skip(&rinf, &cinf, 1));
    for (uint32_t G = 0; G < 70000; G += 7) /* the exact conversion */
        assert_true(oz2a_u32_double(G) == (double)G && oz2a_u32_double(UINT32_MAX - G) == (double)(UINT32_MAX - G));
    print_message("skip test holds at the rule's own w on %d of %d\n", skip_ok, skip_all);
    assert_true(skip_ok > skip_all * 99 / 100);
    assert_int_equal(oz2a_elem_w(0, 5, 7, 7, 0, 10, 53), OZ2A_W_NONE);
    assert_int_equal(oz2a_elem_w(5, 0, 7, 7, 0, 10, 53), OZ2A_W_NONE);
    assert_int_equal(oz2a_elem_w(5, 5, 7, 7, 0, 10, 53), OZ2A_W_INF);
}

/* The range test against exact integers: 4^(w+1) mn + 2^(w+1) (A1M + B1M) +
 * k 2^E <= 2^(E+2) (P_N/2 - 1) decides it, except within 2^-38 of the edge,
 * where the double test may say no (it must never say yes wrongly). */
static void test_range(void **state)
{
    (void)state;
    for (int it = 0; it < 20000; it++) {
        int64_t k = oz_rng_range(1, it % 3 ? 5000 : 1 << 30);
        uint64_t A1M = oz_rng_u64() % ((uint64_t)k << OZ2A_E) + 1, B1M = oz_rng_u64() % ((uint64_t)k << OZ2A_E) + 1;
        int n = (int)oz_rng_range(2, 20), w = (int)oz_rng_range(0, 78);
        double H = oz2a_half_range(n);
        tbig h = tb_sub(tb_product(n), tb_from_i64(2)); /* P - 2 = 2 (P/2 - 1) */
        tbig rhs = tb_shl(h, OZ2A_E + 1);
        uint64_t mn = A1M < B1M ? A1M : B1M;
        if (2 * w + 2 + 64 > 250)
            continue;
        tbig lhs = tb_add(tb_add(tb_shl(tb_from_i64((int64_t)mn), 2 * w + 2),
                                 tb_mul(tb_shl(tb_from_i64(1), w + 1), tb_add(tb_from_i64((int64_t)A1M), tb_from_i64((int64_t)B1M)))),
                          tb_shl(tb_from_i64(k), OZ2A_E));
        int exact = tb_cmp(lhs, rhs) <= 0;
        int got = oz2a_range_ok(w, A1M, B1M, k, H);
        if (got)
            assert_true(exact);
        /* and the double test says yes with a little room */
        tbig lhs2 = tb_shl(lhs, 30), rhs2 = tb_sub(tb_shl(rhs, 30), rhs);
        if (tb_cmp(lhs2, rhs2) <= 0)
            assert_true(got);
    }
}

/* ---- the plan against an independent model ---- */

/* rows of op(A) / columns of op(B) as arrays rows x k */
typedef struct mat {
    int64_t rows, k;
    double *x;
} mat;

static int model_scale(const mat *a, int64_t r)
{
    double mx = 0;
    for (int64_t kk = 0; kk < a->k; kk++) {
        double v = fabs(a->x[r * a->k + kk]);
        if (!(v - v == 0))
            return INT32_MIN;
        mx = v > mx ? v : mx;
    }
    if (mx == 0)
        return 0;
    int e;
    frexp(mx, &e);
    return e;
}

static int model_plan(const mat *a, const mat *b, int B, int *w_out, int *wneed_out)
{
    int64_t k = a->k, ke = k < OZ2A_KEST ? k : OZ2A_KEST;
    uint64_t A1[64], B1[64];
    int g[64], h[64], sa[64], sb[64];
    const mat *ops[2] = {a, b};
    for (int side = 0; side < 2; side++) {
        const mat *v = ops[side];
        for (int64_t r = 0; r < v->rows; r++) {
            int s = model_scale(v, r);
            (side ? sb : sa)[r] = s;
            uint64_t n1 = 0;
            for (int64_t kk = 0; s != INT32_MIN && kk < k; kk++) {
                uint64_t fl, ce;
                model_floor_ceil(v->x[r * k + kk], OZ2A_E - s, &fl, &ce);
                n1 += ce;
            }
            (side ? B1 : A1)[r] = n1;
            /* g from the mean: the least g >= 7 (<= 60) with mean 2^g >= 8, by brute force on the rule's integer form */
            uint64_t mean = n1 / (uint64_t)k;
            int L = 0;
            while (L < 64 && (mean >> L))
                L++;
            int gg = OZ2A_E + OZ2A_TARGET + 1 - L;
            (side ? h : g)[r] = gg < 7 ? 7 : gg > 60 ? 60 : gg;
        }
    }
    int wneed = OZ2A_W_NONE;
    uint64_t a1m = 0, b1m = 0;
    for (int64_t i = 0; i < a->rows; i++)
        a1m = A1[i] > a1m ? A1[i] : a1m;
    for (int64_t j = 0; j < b->rows; j++)
        b1m = B1[j] > b1m ? B1[j] : b1m;
    /* the first part: 3/8 of K_E up to a multiple of 128 where the fixed
     * count holds B + 3 bits for norm sums 9 k 2^(E-4) (the range in long
     * double, test_first_part checks the rounding's margin), else 5/8 (all
     * of it: one part) */
    const int nfix = oz2_make_plan(k, B).n;
    const long double n9 = 9.0L * (long double)k / 16.0L;
    const int shorter = nfix >= 2 && ldexpl(n9, 2 * (B + 3)) + ldexpl(2.0L * n9, B + 2) + (long double)k / 4.0L <=
                                         (long double)oz2a_half_range(nfix);
    int64_t k1 = 0;
    while (8 * k1 < (shorter ? 3 : 5) * ke)
        k1 += 128;
    k1 = k1 < ke ? k1 : ke;
    int gm = 0; /* two parts only where every nonzero row's g and column's h is 7 */
    for (int64_t i = 0; i < a->rows; i++)
        gm = A1[i] && g[i] > gm ? g[i] : gm;
    for (int64_t j = 0; j < b->rows; j++)
        gm = B1[j] && h[j] > gm ? h[j] : gm;
    k1 = gm == 7 || gm == 0 ? k1 : ke;
    int wneed1 = OZ2A_W_NONE;
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < b->rows; j++) {
            if (A1[i] == 0 || B1[j] == 0)
                continue;
            uint64_t G = 0, G1 = 0;
            for (int64_t kk = 0; kk < ke; kk++) {
                uint64_t fa, fb, c;
                model_floor_ceil(a->x[i * k + kk], g[i] - sa[i], &fa, &c);
                model_floor_ceil(b->x[j * k + kk], h[j] - sb[j], &fb, &c);
                G += (fa > 127 ? 127 : fa) * (fb > 127 ? 127 : fb);
                G1 = kk + 1 == k1 ? G : G1;
            }
            for (int part = 0; part < 2; part++) {
                const uint64_t Gp = part ? G : G1;
                int w = OZ2A_W_INF;
                if (Gp)
                    for (w = -200; !cond_ok(A1[i], B1[j], g[i], h[j], (uint32_t)Gp, k, B, w); w++)
                        ;
                if (part)
                    wneed = w > wneed ? w : wneed;
                else
                    wneed1 = w > wneed1 ? w : wneed1;
            }
        }
    /* the first part's plan where it emulates with at most the fixed width's moduli at B bits */
    oz2_plan p = oz2a_make_plan(wneed1, a1m, b1m, k); /* the range test: test_range */
    if (p.n == 0 || p.n > oz2_make_plan(k, B).n)
        p = oz2a_make_plan(wneed, a1m, b1m, k);
    else
        wneed = wneed1;
    *wneed_out = wneed;
    *w_out = p.w;
    return p.n;
}

/* ---- datasets ---- */

enum { S_UNIFORM, S_SPREAD05, S_SPREAD1, S_SPREAD2, S_SPREAD4, S_SPREAD8, S_POW2, S_CANCEL, S_SPARSE, S_BIG40,
       S_INT, S_CONST, S_ALIGNED, S_COUNT };
static const char *const s_names[S_COUNT] = {"uniform", "phi0.5", "phi1", "phi2", "phi4", "phi8", "pow2-300",
                                             "cancel", "90%zero", "one-2^40", "integer", "const", "aligned"};

static void fill(mat *m, int ds, int side, uint64_t salt)
{
    for (int64_t r = 0; r < m->rows; r++) {
        int rs = (int)((r * 131 + salt) % 601) - 300;
        int64_t big = (int64_t)((r * 7 + salt) % (uint64_t)m->k);
        for (int64_t kk = 0; kk < m->k; kk++) {
            double v;
            switch (ds) {
            case S_SPREAD05: v = (oz_rng_unit() - 0.5) * exp(0.5 * oz_rng_normal()); break;
            case S_SPREAD1: v = (oz_rng_unit() - 0.5) * exp(1.0 * oz_rng_normal()); break;
            case S_SPREAD2: v = (oz_rng_unit() - 0.5) * exp(2.0 * oz_rng_normal()); break;
            case S_SPREAD4: v = (oz_rng_unit() - 0.5) * exp(4.0 * oz_rng_normal()); break;
            case S_SPREAD8: v = (oz_rng_unit() - 0.5) * exp(8.0 * oz_rng_normal()); break;
            case S_POW2: v = ldexp(oz_rng_sym() * 0.7853981633974483, rs); break;
            case S_CANCEL: /* row r of op(A) and column r of op(B) orthogonal-ish: pairs (x, x) against (y, -y) */
                v = side ? ((kk & 1) ? -1.0 : 1.0) * (1.0 + ldexp((double)(kk / 2 % 7), -20)) : 1.0 + ldexp((double)(kk % 5), -30);
                break;
            case S_SPARSE: v = oz_rng_range(0, 9) ? 0.0 : oz_rng_sym() / 3.0; break;
            case S_BIG40: v = oz_rng_sym() / 3.0 * (kk == big && !side ? 0x1p40 : 1.0); break;
            case S_INT: v = (double)oz_rng_range(-100000, 100000); break;
            case S_CONST: v = 0x1.fffffffffffffp-1; break;
            case S_ALIGNED: v = 1.0 - ldexp(oz_rng_unit(), -30); break;
            default: v = oz_rng_sym() * 0.7853981633974483; break; /* full significands, off any fixed grid */
            }
            m->x[r * m->k + kk] = v;
        }
    }
}

/* the column-major operands of a call with op N on both: A m x k, B k x n */
static void to_colmajor(const mat *a, const mat *b, double *A, double *Bm)
{
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t kk = 0; kk < a->k; kk++)
            A[i + kk * a->rows] = a->x[i * a->k + kk];
    for (int64_t j = 0; j < b->rows; j++)
        for (int64_t kk = 0; kk < b->k; kk++)
            Bm[kk + j * b->k] = b->x[j * b->k + kk];
}

/* The guarantee at the plan (n, w): for every element, with X exact (big
 * integers from the spec's a'', b''), |X 2^(s+t-2w) - sum a b| <= 2^-B sum
 * |a| |b|, all in quad precision (products exact, the sums' rounding far
 * below the margin allowed here, 2^-90 of the bound). Returns the largest
 * ratio error / bound seen. */
static double check_guarantee(const mat *a, const mat *b, int w, int B, const char *what)
{
    int64_t k = a->k;
    double worst = 0;
    for (int64_t i = 0; i < a->rows; i++) {
        int s = model_scale(a, i);
        for (int64_t j = 0; j < b->rows; j++) {
            int t = model_scale(b, j);
            tbig X = tb_from_i64(0);
            q128 exact = 0, mag = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                double x = a->x[i * k + kk], y = b->x[j * k + kk];
                X = tb_add(X, tb_mul(tb_rne_scaled(x, w - s), tb_rne_scaled(y, w - t)));
                exact += (q128)x * (q128)y;
                mag += (q128)fabs(x) * (q128)fabs(y);
            }
            /* X as quad: from its limbs */
            int neg = tb_neg_p(&X);
            tbig ax = neg ? tb_negate(X) : X;
            q128 xq = 0;
            for (int l = TB_LIMBS - 1; l >= 0; l--)
                xq = xq * (q128)0x1p32 * (q128)0x1p32 + (q128)ax.w[l];
            xq = q_ldexp(neg ? -xq : xq, s + t - 2 * w);
            q128 err = xq - exact;
            err = err < 0 ? -err : err;
            q128 bound = q_ldexp(mag, -B) * (1 + (q128)0x1p-90);
            if (err > bound) {
                print_error("%s: element (%" PRId64 ", %" PRId64 ") beyond the guarantee at w = %d, B = %d: err %.3e bound %.3e\n",
                            what, i, j, w, B, (double)err, (double)bound);
                fail();
            }
            if (bound > 0 && (double)(err / bound) > worst)
                worst = (double)(err / bound);
        }
    }
    return worst;
}

/* K_1: the least multiple of 128 at or above 3/8 or 5/8 of K_E, at most
 * K_E; the shorter part where the fixed count holds B + 3 bits for norm
 * sums 9/16 of their most; the first part's plan taken only where it
 * emulates within the fixed count. */
static void test_first_part(void **state)
{
    (void)state;
    for (int sh = 0; sh < 2; sh++) {
        const int64_t num = sh ? 3 : 5;
        for (int64_t ke = 1; ke <= OZ2A_KEST; ke += ke < 3000 ? 1 : 61) {
            const int64_t k1 = oz2a_k_first(ke, sh);
            assert_true(k1 >= 1 && k1 <= ke);
            if (k1 < ke) {
                assert_int_equal(k1 % 128, 0);
                assert_true(8 * k1 >= num * ke && 8 * (k1 - 128) < num * ke);
            } else {
                assert_true(8 * (ke - ke % 128) < num * ke + 8 * 128); /* no smaller multiple of 128 would do */
            }
        }
    }
    assert_int_equal(oz2a_k_first(8192, 0), 5120);
    assert_int_equal(oz2a_k_first(8192, 1), 3072);
    assert_int_equal(oz2a_k_first(16384, 0), 10240);
    assert_int_equal(oz2a_k_first(65536, 0), 40960);
    assert_int_equal(oz2a_k_first(256, 0), 256);
    assert_int_equal(oz2a_k_first(384, 0), 256);
    assert_int_equal(oz2a_k_first(384, 1), 256);
    assert_int_equal(oz2a_k_first(1024, 1), 384);
    /* the shorter part: against the range written out in long double (4^w a + 2^(w-1-E) 2a + k/4 <= P/2 - 1 with margin) */
    const oz2a_ranges R = oz2a_make_ranges();
    int shorter = 0, longer = 0;
    for (int B = 20; B <= 64; B++)
        for (int64_t k = 1; k <= (INT64_C(1) << 32); k = k * 3 / 2 + 1) {
            const int nfix = oz2_make_plan(k, B).n;
            const int got = oz2a_k1_short(k, B, nfix, &R);
            if (nfix < OZ2_MIN_MODULI) {
                assert_false(got);
                continue;
            }
            const long double a = 9.0L * (long double)k / 16.0L; /* the norm sums in units of 2^E */
            const long double r = ldexpl(a, 2 * (B + 3)) + ldexpl(2.0L * a, B + 2) + (long double)k / 4.0L;
            const long double h = (long double)R.H[nfix];
            if (r < h * (1.0L - 0x1p-38L))
                assert_true(got);
            else if (r > h * (1.0L + 0x1p-38L))
                assert_false(got);
            shorter += got;
            longer += !got;
            assert_int_equal(oz2a_k_first_real(65536, k, B, nfix, &R), oz2a_k_first(65536, got));
        }
    assert_true(shorter > 0 && longer > 0);
    /* U(-1,1)'s sizes at 53 bits: 3/8 at k = 4096 and 8192 (16 moduli hold 56 bits), 5/8 at 16384 */
    assert_true(oz2a_k1_short(4096, 53, oz2_make_plan(4096, 53).n, &R));
    assert_true(oz2a_k1_short(8192, 53, oz2_make_plan(8192, 53).n, &R));
    assert_false(oz2a_k1_short(16384, 53, oz2_make_plan(16384, 53).n, &R));
    assert_false(oz2a_first_taken(0, 16));
    assert_false(oz2a_first_taken(17, 16));
    assert_false(oz2a_first_taken(5, 0));
    assert_true(oz2a_first_taken(16, 16));
    assert_true(oz2a_first_taken(2, 16));
    assert_true(oz2a_two_parts(5120, 8192, 7));
    assert_true(oz2a_two_parts(3072, 8192, 0));
    assert_false(oz2a_two_parts(5120, 8192, 8));
    assert_false(oz2a_two_parts(256, 256, 7));
}

static void test_plan_and_guarantee(void **state)
{
    (void)state;
    const int Bs[4] = {53, 20, 40, 64};
    int native = 0, emulated = 0;
    for (int it = 0; it < 3 * S_COUNT * 4; it++) {
        int ds = it % S_COUNT, B = Bs[(it / S_COUNT) % 4];
        int64_t m = oz_rng_range(1, 6), n = oz_rng_range(1, 6);
        int64_t k = it % 7 == 0 ? oz_rng_range(1000, 3000) : oz_rng_range(1, 300);
        mat a = {m, k, xcalloc((size_t)(m * k), sizeof(double))}, b = {n, k, xcalloc((size_t)(n * k), sizeof(double))};
        uint64_t salt = oz_rng_u64() % 1000;
        fill(&a, ds, 0, salt);
        fill(&b, ds, 1, salt + 17);
        if (ds == S_SPARSE && m > 1) /* and a whole zero row */
            for (int64_t kk = 0; kk < k; kk++)
                a.x[kk] = 0.0;
        double *A = xcalloc((size_t)(m * k), sizeof(double)), *Bm = xcalloc((size_t)(k * n), sizeof(double));
        to_colmajor(&a, &b, A, Bm);
        int N, w, wn, mw, mwn;
        assert_int_equal(oz2_ref_auto_plan(OZ_OP_N, OZ_OP_N, m, n, k, A, m, Bm, k, B, &N, &w, &wn), OZ_REF_OK);
        int mN = model_plan(&a, &b, B, &mw, &mwn);
        { /* a constrained plan takes at least oz2a_n_least moduli (the GPU's CRT launches rely on it) */
            const oz2a_ranges R = oz2a_make_ranges();
            assert_true(N == 0 || wn == OZ2A_W_NONE || N >= oz2a_n_least(k, B, &R));
            assert_true(wn == OZ2A_W_NONE || wn == OZ2A_W_INF || wn >= B + 1);
        }
        if (N != mN || w != mw || wn != mwn) {
            print_error("%s k=%" PRId64 " B=%d: plan N=%d w=%d need=%d, model N=%d w=%d need=%d\n", s_names[ds], k, B, N,
                        w, wn, mN, mw, mwn);
            fail();
        }
        if (N == 0) {
            native++;
            double C[36], Cm[36];
            for (int q = 0; q < 36; q++)
                C[q] = 7.0;
            assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, m, n, k, 1.0, A, m, Bm, k, 0.0, C, m, OZ2A_AUTO(B)),
                             OZ_REF_OK);
            for (int64_t j = 0; j < n; j++) /* auto-native: the plain dot product in ascending k */
                for (int64_t i = 0; i < m; i++) {
                    double dot = 0.0;
                    for (int64_t kk = 0; kk < k; kk++)
                        dot = dot + a.x[i * k + kk] * b.x[j * k + kk];
                    Cm[i + j * m] = dot;
                }
            assert_same_bits("auto-native", C, Cm, m, n, m);
        } else {
            emulated++;
            assert_true(w >= wn && w <= OZ2A_W_MAX);
            check_guarantee(&a, &b, w, B, s_names[ds]);
            /* and the reference's result is the fixed-plan result at (N, w):
             * P = ldexp(RN(X), ...), the model's X */
            double C[36], Cm[36];
            assert_int_equal(oz2_ref_dgemm(OZ_OP_N, OZ_OP_N, m, n, k, 1.0, A, m, Bm, k, 0.0, C, m, OZ2A_AUTO(B)), OZ_REF_OK);
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = 0; i < m; i++) {
                    int s = model_scale(&a, i), t = model_scale(&b, j);
                    tbig X = tb_from_i64(0);
                    for (int64_t kk = 0; kk < k; kk++)
                        X = tb_add(X, tb_mul(tb_rne_scaled(a.x[i * k + kk], w - s), tb_rne_scaled(b.x[j * k + kk], w - t)));
                    Cm[i + j * m] = tb_to_double(X, s + t - 2 * w);
                }
            assert_same_bits(s_names[ds], C, Cm, m, n, m);
        }
        free(a.x), free(b.x), free(A), free(Bm);
    }
    print_message("auto plans: %d emulated, %d native\n", emulated, native);
    assert_true(emulated > native);
}

/* On uniform data the plan costs at most one modulus more than the fixed
 * 53 bits, none at large k; the worst error is well inside the guarantee. */
static void test_uniform_cost(void **state)
{
    (void)state;
    const int64_t ks[3] = {1024, 4096, 8192};
    for (int c = 0; c < 3; c++) {
        int64_t m = 8, k = ks[c];
        mat a = {m, k, xcalloc((size_t)(m * k), sizeof(double))}, b = {m, k, xcalloc((size_t)(m * k), sizeof(double))};
        fill(&a, S_UNIFORM, 0, 1);
        fill(&b, S_UNIFORM, 1, 2);
        double *A = xcalloc((size_t)(m * k), sizeof(double)), *Bm = xcalloc((size_t)(k * m), sizeof(double));
        to_colmajor(&a, &b, A, Bm);
        int N, w, wn, wfix;
        assert_int_equal(oz2_ref_auto_plan(OZ_OP_N, OZ_OP_N, m, m, k, A, m, Bm, k, 53, &N, &w, &wn), OZ_REF_OK);
        int Nfix = oz2_make_plan(k, 53).n;
        wfix = oz2_make_plan(k, 53).w;
        print_message("uniform k=%" PRId64 ": auto N=%d w=%d (need %d); fixed 53: N=%d w=%d\n", k, N, w, wn, Nfix, wfix);
        /* the guarantee needs w ~ B + 2 on uniform data: one modulus more than
         * the fixed 53 bits at small k, none from k ~ 4096 on (its w > 53) */
        assert_true(N >= 2 && N <= Nfix + (k < 4096));
        double r = check_guarantee(&a, &b, w, 53, "uniform");
        print_message("  worst error / guarantee: %.3g\n", r);
        free(a.x), free(b.x), free(A), free(Bm);
    }
    /* the plans of the spread datasets at k = 8192 (docs/ozaki2-auto.md quotes them) */
    const int sets[4] = {S_SPREAD05, S_SPREAD1, S_SPREAD2, S_SPREAD4};
    for (int c = 0; c < 4; c++) {
        int64_t m = 8, k = 8192;
        mat a = {m, k, xcalloc((size_t)(m * k), sizeof(double))}, b = {m, k, xcalloc((size_t)(m * k), sizeof(double))};
        fill(&a, sets[c], 0, 1);
        fill(&b, sets[c], 1, 2);
        double *A = xcalloc((size_t)(m * k), sizeof(double)), *Bm = xcalloc((size_t)(k * m), sizeof(double));
        to_colmajor(&a, &b, A, Bm);
        int N, w, wn;
        assert_int_equal(oz2_ref_auto_plan(OZ_OP_N, OZ_OP_N, m, m, k, A, m, Bm, k, 53, &N, &w, &wn), OZ_REF_OK);
        print_message("%s k=8192: auto N=%d w=%d (need %d)\n", s_names[sets[c]], N, w, wn);
        if (N)
            check_guarantee(&a, &b, w, 53, s_names[sets[c]]);
        free(a.x), free(b.x), free(A), free(Bm);
    }
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(0xa070a070));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_scales),
        cmocka_unit_test(test_ceil_log2),
        cmocka_unit_test(test_elem_rule),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_first_part),
        cmocka_unit_test(test_plan_and_guarantee),
        cmocka_unit_test(test_uniform_cost),
    };
    return OZ_TEST_RUN("test_oz2auto", "oz2auto", tests, seed);
}
