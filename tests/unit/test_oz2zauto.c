/* tests/unit/test_oz2zauto.c: automatic precision for complex products (crt/oz2_complex.h's oz2za_*, reference/oz2zgemm.c with bits = OZ2A_AUTO(B)): the estimate's integers against quad-precision models, the complex range test against exact integers, and on hard datasets the guarantee itself per part against exact products, the range holding, and the reference's result equal to a big-integer model of the plan's w (or, with no plan, to the plain complex dot product). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crt/oz2_complex.h"
#include "slicing/slicing.h"
#include "reference/oz2zgemm.h"
#include "oz2_test_big.h"
#include "oz_test_util.h"

typedef __float128 q128;

static q128 q_ldexp(q128 x, int e)
{
    while (e > 0) {
        const int s = e > 60 ? 60 : e;
        x *= (q128)(UINT64_C(1) << s);
        e -= s;
    }
    while (e < 0) {
        const int s = -e > 60 ? 60 : -e;
        x /= (q128)(UINT64_C(1) << s);
        e += s;
    }
    return x;
}

static q128 q_abs(q128 x) { return x < 0 ? -x : x; }

/* ---- the estimate's integers ---- */

/* floor and ceil of |x| 2^sh (exact in quad: 53 bits shifted) */
static void model_floor_ceil(double x, int sh, uint64_t *fl, uint64_t *ce)
{
    const q128 y = q_ldexp((q128)fabs(x), sh);
    const uint64_t f = (uint64_t)y;
    *fl = f;
    *ce = f + ((q128)f != y);
}

static void test_integers(void **state)
{
    (void)state;
    for (int it = 0; it < 200000; it++) {
        const int s = (int)oz_rng_range(-40, 40);
        double re = ldexp(oz_rng_sym(), s), im = ldexp(oz_rng_sym(), s - (int)oz_rng_range(0, 70));
        if (it % 7 == 0)
            im = 0.0;
        if (it % 11 == 0)
            re = -0.0;
        const int g = (int)oz_rng_range(OZ2A_GMIN, OZ2A_GMAX);
        uint64_t fr, cr, fi, ci;
        model_floor_ceil(re, OZ2A_E - s, &fr, &cr);
        model_floor_ceil(im, OZ2A_E - s, &fi, &ci);
        assert_int_equal(oz2za_norm_term(re, im, s), cr + ci);
        /* the norm term bounds |z|_1 2^(E - s) from above, at most 2^(E+1) */
        assert_true((q128)(cr + ci) >= q_ldexp((q128)fabs(re) + (q128)fabs(im), OZ2A_E - s));
        assert_true(cr + ci <= (UINT64_C(2) << OZ2A_E));
        model_floor_ceil(re, g - s, &fr, &cr);
        model_floor_ceil(im, g - s, &fi, &ci);
        const uint64_t want = fr + fi > OZ2A_QMAX ? OZ2A_QMAX : fr + fi;
        const uint32_t q = oz2za_quant(re, im, s, g);
        assert_int_equal(q, want);
        /* and it bounds |z|_1 2^(g - s) from below */
        assert_true((q128)q <= q_ldexp((q128)fabs(re) + (q128)fabs(im), g - s));
    }
}

/* ---- the range ---- */

/* The complex range test against exact integers: R(w) = 2 4^w mn 2^-E +
 * 2^(w-E) (A1M + B1M) + k scaled by 2^E (an integer for w >= 0):
 * oz2za_range_ok true implies 2^E R <= 2^E (P'_n - 1)/2, and it holds a
 * little inside the boundary. */
static void test_range(void **state)
{
    (void)state;
    for (int n = OZ2Z_MIN_SPLIT; n <= OZ2Z_SPLIT_NMODULI; n++) {
        const double H = oz2za_half_range(n);
        const oz2_uint P = oz2z_split_product(n);
        const oz2_uint h = oz2z_half_range(&P);
        tbig hb = tb_from_i64(0);
        for (int l = OZ2_LIMBS - 1; l >= 0; l--)
            hb = tb_add(tb_shl(hb, 32), tb_from_i64((int64_t)h.w[l]));
        for (int it = 0; it < 2000; it++) {
            const int64_t k = oz_rng_range(1, INT64_C(1) << (int)oz_rng_range(1, 31));
            const uint64_t a1 = (uint64_t)oz_rng_range(1, (int64_t)((uint64_t)k << (OZ2A_E + 1) > (UINT64_C(1) << 52) ? (UINT64_C(1) << 52) : (uint64_t)k << (OZ2A_E + 1)));
            const uint64_t b1 = (uint64_t)oz_rng_range(1, (int64_t)a1);
            const int w = (int)oz_rng_range(0, 76);
            const int ok = oz2za_range_ok(w, a1, b1, k, H);
            /* the plan's form of the same test: the real one at 2k against H/2 */
            if (ok != oz2a_range_ok(w, a1, b1, 2 * k, 0.5 * H))
                fail_msg("n %d w %d k %" PRId64 ": the complex range test and the real one at 2k disagree", n, w, k);
            const uint64_t mn = a1 < b1 ? a1 : b1;
            /* 2^E R = 2^(2w+1) mn + 2^w (a1 + b1) + k 2^E */
            const tbig R = tb_add(tb_add(tb_shl(tb_from_i64((int64_t)mn), 2 * w + 1),
                                         tb_shl(tb_from_i64((int64_t)(a1 + b1)), w)),
                                  tb_shl(tb_from_i64(k), OZ2A_E));
            const tbig lim = tb_shl(hb, OZ2A_E);
            if (ok && tb_cmp(R, lim) > 0)
                fail_msg("n %d w %d k %" PRId64 ": the range test passed a range beyond (P' - 1)/2", n, w, k);
            /* well inside (R below lim / 2): the test must pass */
            if (!ok && tb_cmp(tb_shl(R, 1), lim) < 0)
                fail_msg("n %d w %d k %" PRId64 ": the range test failed half the range", n, w, k);
        }
    }
}

/* The plan (oz2za_make_plan: the real plan's loop at 2k over the halved
 * table) against the spec's rule written out with the complex range test:
 * N' the least in 2..24 holding w_need, w raised while the range holds, up
 * to max(w_need, W_SOFT). */
static void test_plan_rule(void **state)
{
    (void)state;
    double H[OZ2Z_SPLIT_NMODULI + 1];
    for (int n = OZ2Z_MIN_SPLIT; n <= OZ2Z_SPLIT_NMODULI; n++)
        H[n] = oz2za_half_range(n);
    for (int it = 0; it < 20000; it++) {
        const int64_t k = it % 97 == 0 ? OZ2ZA_KMAX - (it % 2) : oz_rng_range(1, INT64_C(1) << (int)oz_rng_range(1, 31));
        const uint64_t cap = (UINT64_C(1) << 52);
        const uint64_t a1 = (uint64_t)oz_rng_range(1, (int64_t)cap), b1 = (uint64_t)oz_rng_range(1, (int64_t)cap);
        const int need = (int)oz_rng_range(-1, 80);
        oz2za_plan want = {0, 0};
        if (k < OZ2ZA_KMAX && need <= OZ2A_W_MAX) {
            const int wn = need < 1 ? 1 : need;
            for (int n = OZ2Z_MIN_SPLIT; n <= OZ2Z_SPLIT_NMODULI && want.n_split == 0; n++) {
                if (!oz2za_range_ok(wn, a1, b1, k, H[n]))
                    continue;
                int w = wn;
                while (w < (wn > OZ2A_W_SOFT ? wn : OZ2A_W_SOFT) && oz2za_range_ok(w + 1, a1, b1, k, H[n]))
                    w++;
                want.n_split = n;
                want.w = w;
            }
        }
        const oz2za_plan got = oz2za_make_plan(need, a1, b1, k);
        if (got.n_split != want.n_split || got.w != want.w)
            fail_msg("need %d k %" PRId64 ": plan (%d, %d), the rule (%d, %d)", need, k, got.n_split, got.w,
                     want.n_split, want.w);
    }
}

/* ---- datasets ---- */

enum { Z_UNIFORM, Z_SPREAD1, Z_SPREAD2, Z_SPREAD4, Z_SPREAD8, Z_POW2, Z_APART, Z_SPARSE, Z_BIG40, Z_INT, Z_CONST,
       Z_IMAG, Z_COUNT };
static const char *const z_names[Z_COUNT] = {"uniform", "phi1", "phi2", "phi4", "phi8", "pow2-300",
                                             "parts apart", "90%zero", "one-2^40", "integer", "const", "imaginary"};

/* op(A) rows (side 0) or op(B) columns (side 1) as rows x k complex, interleaved: x[2 (r k + kk) + part] */
static void zfill(double *x, int64_t rows, int64_t k, int ds, int side, uint64_t salt)
{
    for (int64_t r = 0; r < rows; r++) {
        const int rs = (int)((r * 131 + salt) % 601) - 300;
        const int64_t big = (int64_t)((r * 7 + salt) % (uint64_t)k);
        for (int64_t kk = 0; kk < k; kk++)
            for (int p = 0; p < 2; p++) {
                double v;
                switch (ds) {
                case Z_SPREAD1: v = (oz_rng_unit() - 0.5) * exp(1.0 * oz_rng_normal()); break;
                case Z_SPREAD2: v = (oz_rng_unit() - 0.5) * exp(2.0 * oz_rng_normal()); break;
                case Z_SPREAD4: v = (oz_rng_unit() - 0.5) * exp(4.0 * oz_rng_normal()); break;
                case Z_SPREAD8: v = (oz_rng_unit() - 0.5) * exp(8.0 * oz_rng_normal()); break;
                case Z_POW2: v = ldexp(oz_rng_sym() * 0.7853981633974483, rs); break;
                case Z_APART: v = p ? ldexp(oz_rng_sym(), -60) : oz_rng_sym(); break;
                case Z_SPARSE: v = oz_rng_range(0, 9) ? 0.0 : oz_rng_sym() / 3.0; break;
                case Z_BIG40: v = oz_rng_sym() / 3.0 * (kk == big && !side ? 0x1p40 : 1.0); break;
                case Z_INT: v = (double)oz_rng_range(-100000, 100000); break;
                case Z_CONST: v = 0x1.fffffffffffffp-1; break;
                case Z_IMAG: v = p ? oz_rng_sym() : 0.0; break;
                default: v = oz_rng_sym() * 0.7853981633974483; break;
                }
                x[2 * (r * k + kk) + p] = v;
            }
    }
}

/* the complex scale of a row: the frexp exponent of its largest part */
static int zscale(const double *x, int64_t r, int64_t k)
{
    double mx = 0.0;
    for (int64_t kk = 0; kk < 2 * k; kk++)
        mx = fmax(mx, fabs(x[2 * r * k + kk]));
    return oz_scale_exponent(mx);
}

/* The spec's product, as oz2zgemm.c computes it (no FMA: separate statements). */
static void zmul(double ur, double ui, double vr, double vi, double *zr, double *zi)
{
    const double rr = ur * vr, ii = ui * vi, ri = ur * vi, ir = ui * vr;
    *zr = rr - ii;
    *zi = ri + ir;
}

/* One dataset at m x n x k and target B: the plan; per element and part the
 * guarantee against quad-precision exact products and the range against
 * (P' - 1)/2; the reference's C (alpha 1, beta 0) against the model's P from
 * big integers at the plan's w. Returns the worst error / bound. */
static double check_dataset(int ds, int64_t m, int64_t n, int64_t k, int B, uint64_t salt, int *n_split_out)
{
    double *a = malloc(sizeof(double) * 2 * (size_t)(m * k)), *b = malloc(sizeof(double) * 2 * (size_t)(n * k));
    double *A = malloc(sizeof(double) * 2 * (size_t)(m * k)), *Bm = malloc(sizeof(double) * 2 * (size_t)(k * n));
    double *C = malloc(sizeof(double) * 2 * (size_t)(m * n));
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(A);
    assert_non_null(Bm);
    assert_non_null(C);
    zfill(a, m, k, ds, 0, salt);
    zfill(b, n, k, ds, 1, salt + 1);
    for (int64_t i = 0; i < m; i++) /* op N: A is m x k column-major, B k x n */
        for (int64_t kk = 0; kk < k; kk++)
            for (int p = 0; p < 2; p++)
                A[2 * (i + kk * m) + p] = a[2 * (i * k + kk) + p];
    for (int64_t j = 0; j < n; j++)
        for (int64_t kk = 0; kk < k; kk++)
            for (int p = 0; p < 2; p++)
                Bm[2 * (kk + j * k) + p] = b[2 * (j * k + kk) + p];
    int ns = 0, w = 0, wn = 0;
    assert_int_equal(oz2z_ref_auto_plan(OZ_OP_N, OZ_OP_N, m, n, k, A, m, Bm, k, B, &ns, &w, &wn), 0);
    *n_split_out = ns;
    for (size_t i = 0; i < 2 * (size_t)(m * n); i++)
        C[i] = NAN;
    const oz_cplx one = {1.0, 0.0}, zero = {0.0, 0.0};
    assert_int_equal(oz2_ref_zgemm(OZ_OP_N, OZ_OP_N, m, n, k, one, A, m, Bm, k, zero, C, m, OZ2A_AUTO(B)), 0);
    double worst = 0.0;
    tbig half = tb_from_i64(0);
    if (ns) {
        const oz2_uint P = oz2z_split_product(ns);
        const oz2_uint h = oz2z_half_range(&P);
        for (int l = OZ2_LIMBS - 1; l >= 0; l--)
            half = tb_add(tb_shl(half, 32), tb_from_i64((int64_t)h.w[l]));
    }
    for (int64_t i = 0; i < m; i++) {
        const int s = zscale(a, i, k);
        for (int64_t j = 0; j < n; j++) {
            const int t = zscale(b, j, k);
            const double *c = &C[2 * (i + j * m)];
            if (!ns) { /* auto-native: the plain complex dot product */
                double dr = 0.0, di = 0.0;
                for (int64_t kk = 0; kk < k; kk++) {
                    double pr, pi;
                    zmul(a[2 * (i * k + kk)], a[2 * (i * k + kk) + 1], b[2 * (j * k + kk)], b[2 * (j * k + kk) + 1], &pr,
                         &pi);
                    dr = dr + pr;
                    di = di + pi;
                }
                double zr, zi;
                zmul(1.0, 0.0, dr, di, &zr, &zi);
                if (memcmp(&zr, &c[0], 8) || memcmp(&zi, &c[1], 8))
                    fail_msg("%s: auto-native element (%" PRId64 ", %" PRId64 ") is not the plain dot", z_names[ds], i, j);
                continue;
            }
            tbig X[2] = {tb_from_i64(0), tb_from_i64(0)};
            q128 ex[2] = {0, 0}, mag = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                const double ar = a[2 * (i * k + kk)], ai = a[2 * (i * k + kk) + 1];
                const double br = b[2 * (j * k + kk)], bi = b[2 * (j * k + kk) + 1];
                const tbig Ar = tb_rne_scaled(ar, w - s), Ai = tb_rne_scaled(ai, w - s);
                const tbig Br = tb_rne_scaled(br, w - t), Bi = tb_rne_scaled(bi, w - t);
                X[0] = tb_add(X[0], tb_sub(tb_mul(Ar, Br), tb_mul(Ai, Bi)));
                X[1] = tb_add(X[1], tb_add(tb_mul(Ar, Bi), tb_mul(Ai, Br)));
                ex[0] += (q128)ar * (q128)br - (q128)ai * (q128)bi;
                ex[1] += (q128)ar * (q128)bi + (q128)ai * (q128)br;
                mag += ((q128)fabs(ar) + (q128)fabs(ai)) * ((q128)fabs(br) + (q128)fabs(bi));
            }
            double P[2];
            for (int part = 0; part < 2; part++) {
                const int neg = tb_neg_p(&X[part]);
                const tbig ax = neg ? tb_negate(X[part]) : X[part];
                if (tb_cmp(ax, half) > 0)
                    fail_msg("%s: element (%" PRId64 ", %" PRId64 ") part %d: |X| past (P' - 1)/2 at N' %d w %d",
                             z_names[ds], i, j, part, ns, w);
                q128 xq = 0;
                for (int l = TB_LIMBS - 1; l >= 0; l--)
                    xq = xq * (q128)0x1p32 * (q128)0x1p32 + (q128)ax.w[l];
                xq = q_ldexp(neg ? -xq : xq, s + t - 2 * w);
                const q128 err = q_abs(xq - ex[part]), bound = q_ldexp(mag, -B) * (1 + (q128)0x1p-90);
                if (err > bound)
                    fail_msg("%s: element (%" PRId64 ", %" PRId64 ") part %d beyond the guarantee at w %d B %d: %.3e > %.3e",
                             z_names[ds], i, j, part, w, B, (double)err, (double)bound);
                if (bound > 0 && (double)(err / bound) > worst)
                    worst = (double)(err / bound);
                P[part] = tb_to_double(X[part], s + t - 2 * w);
            }
            double zr, zi;
            zmul(1.0, 0.0, P[0], P[1], &zr, &zi);
            if (memcmp(&zr, &c[0], 8) || memcmp(&zi, &c[1], 8))
                fail_msg("%s: element (%" PRId64 ", %" PRId64 "): the reference %a %a, the model %a %a", z_names[ds], i, j,
                         c[0], c[1], zr, zi);
        }
    }
    free(a);
    free(b);
    free(A);
    free(Bm);
    free(C);
    return worst;
}

static void test_guarantee(void **state)
{
    (void)state;
    static const int targets[] = {53, 45, 64, 30};
    int native = 0, emulated = 0;
    for (int ds = 0; ds < Z_COUNT; ds++)
        for (int ti = 0; ti < 4; ti++) {
            const int64_t m = oz_rng_range(1, 9), n = oz_rng_range(1, 9);
            const int64_t k = ds == Z_CONST ? oz_rng_range(500, 3000) : oz_rng_range(1, 160);
            int ns;
            const double worst = check_dataset(ds, m, n, k, targets[ti], (uint64_t)(ds * 17 + ti), &ns);
            native += ns == 0;
            emulated += ns != 0;
            if (ti == 0)
                print_message("complex auto %-12s B %d: N' %d, worst error / bound %.3f\n", z_names[ds], targets[ti], ns,
                              worst);
        }
    assert_true(emulated > 0);
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(0x2a2a0d0d));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_plan_rule),
        cmocka_unit_test(test_guarantee),
    };
    return OZ_TEST_RUN("test_oz2zauto", "oz2zauto", tests, seed);
}
