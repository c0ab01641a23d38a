/* tests/unit/test_oz2_fast.c: crt/oz2.h's GPU formulations (the tensor-core residues' byte sums, the CRT by CRT coefficients) against the reference functions they replace, bit for bit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <inttypes.h>

#include "crt/oz2.h"
#include "oz2_test_big.h"
#include "oz_test_util.h"

static tbig tb_of_uint_(const oz2_uint *x)
{
    tbig r = {{0}};
    for (int i = 0; i < OZ2_LIMBS; i++)
        r.w[i / 2] |= (uint64_t)x->w[i] << (32 * (i % 2));
    return r;
}

/* ---- step 2: the tensor-core residues against oz2_scaled_int + oz2_residue ---- */

/* K_b(m) is the symmetric residue of 2^(8b) (brute force), fits an s8, and
 * the byte sums stay in the float arithmetic's exact range for every byte
 * value: 16 255 max|K| + 256 < 2^22 - 128. */
static void test_bytes_bound(void **state)
{
    (void)state;
    for (int q = 0; q < 20; q++) {
        const uint32_t m = tb_moduli[q];
        int64_t worst = 256;
        for (int b = 0; b < OZ2_BYTES; b++) {
            const int32_t k = oz2_bytepow(b, m);
            tbig one = tb_from_i64(1);
            int64_t want = (int64_t)tb_mod(tb_shl(one, 8 * b), m);
            if (want > (int64_t)m / 2)
                want -= m;
            assert_int_equal(k, want);
            assert_true(k >= -127 && k <= 127);
            assert_int_equal((oz2_bytepow4(b / 4, m) >> (8 * (b % 4))) & 0xffu, (uint32_t)(uint8_t)k);
            worst += 255 * (int64_t)(k < 0 ? -k : k);
        }
        assert_true(worst < (INT64_C(1) << 22) - 128);
        for (int w = 1; w <= 83; w++) { /* the bias: bits(MAGIC) - (2^(w+1) mod m) */
            const uint32_t r = OZ2_MAGIC_BITS - oz2_bias_bits(w, m);
            assert_int_equal(r, (uint32_t)tb_mod(tb_shl(tb_from_i64(1), w + 1), m));
        }
    }
}

/* One x at width w, row scale s: z = a'' + 2^(w+1) both ways (and the
 * one-word form where w <= 62), and every modulus's residue both ways. */
static void check_bytes(double x, int w, int s)
{
    uint64_t mag;
    int e;
    const int neg = oz2_scaled_int(x, w - s, &mag, &e);
    tbig a = tb_shl(tb_from_i64((int64_t)mag), e);
    tbig z = tb_shl(tb_from_i64(1), w + 1);
    z = neg ? tb_sub(z, a) : tb_add(z, a);
    uint64_t lo, hi;
    oz2_biased_u128(x, oz2_make_shift(w - s), w, &lo, &hi);
    if (lo != z.w[0] || hi != z.w[1] || z.w[2] || z.w[3])
        fail_msg("biased integer of %a (w %d, s %d) differs", x, w, s);
    if (w <= 62 && oz2_biased_u64(x, oz2_make_shift(w - s), w) != lo)
        fail_msg("one-word biased integer of %a (w %d, s %d) differs", x, w, s);
    for (int q = 0; q < 20; q++) {
        const uint32_t m = tb_moduli[q];
        uint8_t want = (uint8_t)oz2_residue(mag, e, neg, m);
        uint8_t got = oz2_byte_residue(x, w - s, w, m);
        if (got != want)
            fail_msg("byte residue of %a (w %d, s %d) mod %u: got %d want %d", x, w, s, m, (int8_t)got, (int8_t)want);
    }
}

static void test_bytes_random(void **state)
{
    (void)state;
    for (int i = 0; i < 300000; i++) {
        double x = oz_rng_double_any();
        int s = oz_model_scale_exponent(fabs(x));
        if (oz_rng_range(0, 3) == 0)
            s += (int)oz_rng_range(0, 80); /* the row's max is larger than x */
        if (s > 1024)
            continue;
        check_bytes(x, (int)oz_rng_range(1, 83), s);
    }
}

/* The edges: |a''| = 2^w, all-ones integers, ties, w around 62/63/64 (one
 * word or two), tiny rows (sh > 1023), zeros of both signs. */
static void test_bytes_edges(void **state)
{
    (void)state;
    for (int w = 1; w <= 83; w++) {
        for (int sg = 0; sg < 2; sg++) {
            double one = sg ? -1.0 : 1.0;
            check_bytes(one * 0x1.fffffffffffffp-1, w, 0); /* rounds to 2^w */
            check_bytes(one * 0.5, w, 0);
            check_bytes(one * 0x1p-1074, w, -1073);
            check_bytes(one * 0x1.8p-1074, w, -1072);
            check_bytes(one * 0.0, w, 0);
            check_bytes(one * 0x1p-1000, w, -990); /* sh > 1023 for large w */
            for (int t = 0; t < 200; t++) {
                /* y = 2^p - u (all ones below p), or an odd multiple of a half (a tie), scaled back to x */
                int p = (int)oz_rng_range(1, w);
                double y = t % 2 ? ldexp(1.0, p) - ldexp((double)oz_rng_range(0, 7), -(int)oz_rng_range(0, 3))
                                 : (double)(2 * oz_rng_range(0, 1 << 20) + 1) * 0.5;
                if (y <= 0.0 || y > ldexp(1.0, w))
                    continue;
                int s = (int)oz_rng_range(-1000, 1000);
                double x = ldexp(y, s - w);
                if (x == 0.0 || fabs(x) >= ldexp(1.0, s))
                    continue;
                check_bytes(one * x, w, s);
                check_bytes(one * nextafter(x, 0.0), w, s);
                check_bytes(one * nextafter(x, 1e300), w, s);
            }
        }
    }
}

/* ---- step 3: the fast CRT against oz2_crt_reconstruct ---- */

/* The test model of the fast CRT's fold: X's sign (1: negative) and its
 * magnitude as nl canonical 36-bit limbs e_l (exact doubles, 0 <= e_l <
 * 2^36), or -1 when X' may lie outside the fold (then oz2_crt_reconstruct).
 * Independent of the kernel's signed form (oz2_cf_fold_limbs): sg (acc_l -
 * qr P_l) with sg the sign of D - qr (the sign of X' unless |X'| < about
 * 2^-34 P; then it is flipped below), carries by exact floors. */
static int cf_finish_limbs(const oz2_crt_fast *f, int nl, const double acc[OZ2_CF_MAXL], double e[OZ2_CF_MAXL])
{
    double qr, fr;
    if (oz2_cf_fold_quotient(f, nl, acc, &qr, &fr) < 0)
        return -1;
    double sg = fr < 0.0 ? -1.0 : 1.0;
    for (int l = 0; l < OZ2_CF_MAXL; l++)
        e[l] = l < nl ? OZ2_DMUL_(sg, OZ2_DFMA_(qr, -f->Pl[l], acc[l])) : 0.0; /* exact, |e_l| < 2^49 */
    oz2_cf_carry(nl, e);
    if (e[nl - 1] < 0.0) { /* sg was not X's sign */
        sg = -sg;
        for (int l = 0; l < nl; l++)
            e[l] = -e[l];
        oz2_cf_carry(nl, e);
    }
    int nonzero = 0;
    for (int l = 0; l < nl; l++)
        nonzero |= e[l] != 0.0;
    return sg < 0.0 && nonzero;
}

/* The CRT kernel's path as it runs there (kernels/oz2_crt.cu): the signed
 * limbs (oz2_cf_fold_limbs), then RN(X) from them (oz2_cf_limbs_rn). 0 and
 * *x = RN(X) (+0 for X = 0), or -1 where the fast path cannot decide the
 * fold. */
static int cf_fold_rn(const oz2_crt_fast *f, int nl, const double acc[OZ2_CF_MAXL], double *x)
{
    double e[OZ2_CF_MAXL];
    for (int l = 0; l < OZ2_CF_MAXL; l++)
        e[l] = acc[l];
    if (oz2_cf_fold_limbs(f, nl, e) < 0)
        return -1;
    *x = oz2_cf_limbs_rn(e, nl);
    return 0;
}

/* The test model of the fast CRT's result: cf_finish_limbs's
 * magnitude packed into three 64-bit words (oz2_crt_reconstruct's form), or
 * -1 where the fast path falls back. */
static int cf_finish_words(const oz2_crt_fast *f, int nl, const double acc[OZ2_CF_MAXL], oz2_u192 *mag)
{
    double e[OZ2_CF_MAXL];
    const int neg = cf_finish_limbs(f, nl, acc, e);
    if (neg < 0)
        return -1;
    uint64_t W[3] = {0, 0, 0};
    for (int l = 0; l < nl; l++) { /* non-overlapping fields (the top below 2^36): OR them in */
        const uint64_t v = oz_f64_bits(OZ2_DADD_(e[l], 4503599627370496.0)) & ((UINT64_C(1) << OZ2_CF_BITS) - 1);
        const int pos = OZ2_CF_BITS * l, wi = pos / 64, sh = pos % 64;
        W[wi] |= v << sh;
        if (sh > 64 - OZ2_CF_BITS && wi + 1 < 3)
            W[wi + 1] |= v >> (64 - sh);
    }
    mag->w0 = W[0];
    mag->w1 = W[1];
    mag->w2 = W[2];
    return neg;
}

/* The whole fast CRT as words: oz2_crt_reconstruct's result, bit for bit
 * (its own fallback included). */
static int crt_reconstruct_fast(const oz2_crt_fast *f, const oz2_crt_consts *c, const uint8_t *r, int64_t stride,
                                oz2_u192 *mag)
{
    double acc[OZ2_CF_MAXL];
    oz2_cf_start(f, f->nl, acc);
    for (int q = 0; q < f->n; q++)
        oz2_cf_accumulate(f, q, f->nl, oz2_cf_residue(r[(int64_t)q * stride], 0), acc);
    int neg = cf_finish_words(f, f->nl, acc, mag);
    if (neg < 0) {
        oz2_uint m;
        neg = oz2_crt_reconstruct(c, r, stride, &m);
        *mag = oz2_u192_of(&m);
    }
    return neg;
}

static tbig tb_of_u192(const oz2_u192 *x)
{
    tbig r = {{x->w0, x->w1, x->w2, 0}};
    return r;
}

static int fast_fallbacks;

/* The kernel's signed path (cf_fold_rn) against the magnitude and sign
 * of cf_finish_limbs: the same fallback decision, the same bits (neg <
 * 0: the fallback; else X's sign and RN(|X|) = mag). */
static void check_fold_rn(const oz2_crt_fast *f, const double *acc, int neg, double mag)
{
    double got = 0.0;
    const int rc = cf_fold_rn(f, f->nl, acc, &got);
    if ((rc < 0) != (neg < 0))
        fail_msg("fold_rn's fallback %d, finish_limbs's %d (nl %d)", rc, neg, f->nl);
    const double want = neg > 0 ? -mag : mag;
    if (rc == 0 && memcmp(&got, &want, sizeof got) != 0)
        fail_msg("fold_rn: got %a want %a (nl %d)", got, want, f->nl);
}

/* Residues r (0 <= r_q < m_q, or any byte): the fast CRT equals the reference. */
static void check_crt(const oz2_crt_fast *f, const oz2_crt_consts *c, const uint8_t *r)
{
    oz2_uint want;
    int want_neg = oz2_crt_reconstruct(c, r, 1, &want);
    oz2_u192 got;
    int got_neg = crt_reconstruct_fast(f, c, r, 1, &got);
    if (got_neg != want_neg || tb_cmp(tb_of_u192(&got), tb_of_uint_(&want)) != 0)
        fail_msg("fast CRT differs for n=%d (neg %d vs %d)", c->n, got_neg, want_neg);
    double acc[OZ2_CF_MAXL];
    oz2_cf_start(f, f->nl, acc);
    for (int q = 0; q < f->n; q++)
        oz2_cf_accumulate(f, q, f->nl, oz2_cf_residue((uint32_t)r[q] << 16 | 0xa5u, 2), acc);
    oz2_u192 m2;
    const int neg2 = cf_finish_words(f, f->nl, acc, &m2);
    if (neg2 < 0) {
        fast_fallbacks++;
        return;
    }
    /* the kernel's conversion: the limbs straight to RN(X), against the words' */
    double lim[OZ2_CF_MAXL];
    assert_int_equal(cf_finish_limbs(f, f->nl, acc, lim), neg2);
    const double x = oz2_cf_limbs_rn(lim, f->nl), xw = oz2_to_double3(&m2, 0, 0);
    if (memcmp(&x, &xw, sizeof x) != 0)
        fail_msg("limbs_rn of the fast CRT: %a, words give %a (n=%d)", x, xw, c->n);
    check_fold_rn(f, acc, neg2, x);
}

static void check_crt_of(const oz2_crt_fast *f, const oz2_crt_consts *c, tbig X)
{
    uint8_t r[OZ2_MAX_MODULI];
    for (int q = 0; q < c->n; q++)
        r[q] = (uint8_t)tb_mod(X, tb_moduli[q]);
    check_crt(f, c, r);
}

static void test_cf_constants(void **state)
{
    (void)state;
    for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; n++) {
        oz2_crt_consts c;
        oz2_crt_init(&c, n);
        oz2_crt_fast f;
        oz2_crt_fast_init(&f, &c);
        assert_int_equal(f.nl, oz2_cf_limbs(n));
        /* nl limbs hold P (and so every f_q < P), nl - 1 do not */
        assert_true(OZ2_CF_BITS * f.nl >= oz2_uint_bitlen(&c.P));
        assert_true(OZ2_CF_BITS * (f.nl - 1) < oz2_uint_bitlen(&c.P));
        assert_true(f.nl <= OZ2_CF_MAXL);
        tbig P = tb_product(n);
        for (int q = 0; q < n; q++) {
            tbig fq = {{0}};
            for (int l = f.nl - 1; l >= 0; l--) {
                double limb = f.F[q][l] / 4096.0;
                assert_true(limb >= 0.0 && limb < 0x1p36 && limb == floor(limb));
                fq = tb_add(tb_shl(fq, OZ2_CF_BITS), tb_from_i64((int64_t)limb));
            }
            assert_true(tb_cmp(fq, P) < 0);
            for (int j = 0; j < n; j++) /* the CRT basis: f_q == [q == j] mod m_j */
                assert_int_equal(tb_mod(fq, tb_moduli[j]), j == q);
        }
        for (int l = 0; l < f.nl; l++) { /* c_l = 2^(36 l) / P within 2^-49; the start: -sum_q F[q][l] */
            double sum = 0.0;
            for (int q = 0; q < n; q++)
                sum += f.F[q][l];
            assert_true(f.acc0[l] == -sum && sum < 0x1p52);
            double want = ldexp(1.0 / tb_to_double(P, 0), OZ2_CF_BITS * l);
            assert_true(fabs(f.c[l] - want) <= want * 0x1p-49);
        }
    }
}

static void test_cf_round_trips(void **state)
{
    (void)state;
    fast_fallbacks = 0;
    int cases = 0;
    for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; n++) {
        oz2_crt_consts c;
        oz2_crt_init(&c, n);
        oz2_crt_fast f;
        oz2_crt_fast_init(&f, &c);
        tbig H = tb_sub(tb_of_uint_(&c.half), tb_from_i64(1)); /* (P - 1) / 2 rounded down */
        for (int d = 0; d < 60; d++) { /* near +-(P-1)/2, near +-P/4, near 0 */
            check_crt_of(&f, &c, tb_sub(H, tb_from_i64(d)));
            check_crt_of(&f, &c, tb_negate(tb_sub(H, tb_from_i64(d))));
            check_crt_of(&f, &c, tb_from_i64(d));
            check_crt_of(&f, &c, tb_from_i64(-d));
            tbig Q = tb_of_uint_(&c.half);
            for (int i = 0; i < TB_LIMBS; i++)
                Q.w[i] = (Q.w[i] >> 1) | (i + 1 < TB_LIMBS ? Q.w[i + 1] << 63 : 0);
            check_crt_of(&f, &c, tb_add(Q, tb_from_i64(d - 30)));
            check_crt_of(&f, &c, tb_negate(tb_add(Q, tb_from_i64(d - 30))));
            cases += 6;
        }
        int pbits = oz2_uint_bitlen(&c.P) - 1;
        for (int i = 0; i < 4000; i++) { /* random X of every size up to |X| < P/2 */
            tbig X = {{oz_rng_u64(), oz_rng_u64(), oz_rng_u64(), 0}};
            int len = (int)oz_rng_range(0, pbits);
            for (int pos = len; pos < 192; pos++)
                X.w[pos / 64] &= ~(UINT64_C(1) << (pos % 64));
            if (tb_cmp(X, H) > 0)
                continue;
            check_crt_of(&f, &c, oz_rng_u64() & 1 ? tb_negate(X) : X);
            cases++;
        }
        for (int i = 0; i < 4000; i++) { /* random residue vectors: any class, the P/2 one included */
            uint8_t r[OZ2_MAX_MODULI];
            for (int q = 0; q < n; q++)
                r[q] = (uint8_t)oz_rng_range(0, i % 5 == 0 ? 255 : tb_moduli[q] - 1);
            check_crt(&f, &c, r);
            cases++;
        }
        for (int64_t k = 1; k <= 100000; k *= 7) { /* the plan's worst products +-k 4^w */
            int w = oz2_wmax(n, k);
            if (w < 0)
                continue;
            check_crt_of(&f, &c, tb_shl(tb_from_i64(k), 2 * w));
            check_crt_of(&f, &c, tb_negate(tb_shl(tb_from_i64(k), 2 * w)));
            cases += 2;
        }
    }
    /* R = 1 + r 2^-12 for every byte position */
    for (uint32_t r = 0; r < 256; r++)
        for (int byte = 0; byte < 4; byte++)
            assert_true(oz2_cf_residue(r << (8 * byte) | (byte ? 0x5au : 0xa500u), byte) == 1.0 + r * 0x1p-12);
    /* the fallback is for X within about 2^-30 P of +-P/2 only */
    print_message("fast CRT: %d of %d cases fell back to oz2_crt_reconstruct\n", fast_fallbacks, cases);
    assert_true(fast_fallbacks > 0 && fast_fallbacks < cases / 10);
}

/* Accumulators built directly: S' = qr P + X with X in {0, +-1, +-7, +-2^40}
 * spread over the limbs in many ways (so that D - qr falls on either side
 * of 0): the sign of zero is +, tiny X get their sign right. */
static void test_cf_small_x(void **state)
{
    (void)state;
    static const int64_t xs[] = {0, 1, -1, 7, -7, INT64_C(1) << 40, -(INT64_C(1) << 40)};
    static const double qrs[] = {0.0, 1.0, 100.0, 5000.0};
    for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; n++) {
        oz2_crt_consts c;
        oz2_crt_init(&c, n);
        oz2_crt_fast f;
        oz2_crt_fast_init(&f, &c);
        for (size_t xi = 0; xi < sizeof xs / sizeof xs[0]; xi++)
            for (size_t qi = 0; qi < sizeof qrs / sizeof qrs[0]; qi++)
                for (int j = -40; j <= 40; j++) {
                    if ((f.nl == 1 && j != 0) || (double)(xs[xi] > 0 ? xs[xi] : -xs[xi]) >= tb_to_double(tb_product(n), -2))
                        continue; /* one limb: no spreading; |X| < P/4 */
                    double acc[OZ2_CF_MAXL] = {0.0, 0.0, 0.0, 0.0, 0.0};
                    for (int l = 0; l < f.nl; l++)
                        acc[l] = qrs[qi] * f.Pl[l];
                    acc[0] += (double)xs[xi] + (f.nl > 1 ? j * 0x1p36 : 0.0);
                    if (f.nl > 1)
                        acc[1] -= j;
                    oz2_u192 mag;
                    int neg = cf_finish_words(&f, f.nl, acc, &mag);
                    int64_t x = xs[xi];
                    uint64_t ax = (uint64_t)(x < 0 ? -x : x);
                    if (neg != (x < 0) || mag.w0 != ax || mag.w1 || mag.w2)
                        fail_msg("n=%d X=%" PRId64 " qr=%g j=%d: neg %d mag %" PRIu64, n, x, qrs[qi], j, neg, mag.w0);
                    check_fold_rn(&f, acc, neg, (double)ax); /* +0 for X = 0, tiny X with their sign */
                }
    }
}

/* ---- step 4: oz2_to_double3 against oz2_to_double ---- */

static void test_to_double3(void **state)
{
    (void)state;
    for (int i = 0; i < 300000; i++) {
        oz2_uint x;
        int bits = (int)oz_rng_range(0, 192);
        for (int l = 0; l < OZ2_LIMBS; l++)
            x.w[l] = (uint32_t)oz_rng_u64();
        for (int pos = bits; pos < 192; pos++)
            x.w[pos / 32] &= ~(UINT32_C(1) << (pos % 32));
        if (i % 3 == 0) { /* sparse: ties and sticky bits far below */
            for (int l = 0; l < OZ2_LIMBS; l++)
                x.w[l] = 0;
            int top = (int)oz_rng_range(0, 191);
            x.w[top / 32] |= UINT32_C(1) << (top % 32);
            for (int t = 0; t < 2; t++) {
                int p = (int)oz_rng_range(0, top);
                x.w[p / 32] |= UINT32_C(1) << (p % 32);
            }
        }
        int neg = (int)(oz_rng_u64() & 1), e = (int)oz_rng_range(-1300, 900);
        if (i % 5 == 0)
            e = (int)oz_rng_range(-1300, -1000) - bits;
        oz2_u192 y = oz2_u192_of(&x);
        double got = oz2_to_double3(&y, neg, e), want = oz2_to_double(&x, neg, e);
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("to_double3: got %a want %a (bits %d, e %d)", got, want, bits, e);
    }
}

/* oz2_cf_limbs_rn against oz2_to_double3 (whose RN is tested above): X of
 * every size up to 5 limbs, dense and sparse, and exact ties at 53 bits
 * with and without a sticky bit far below, the tie at every position
 * around the 36-bit limb boundaries. */
static double limbs_rn_want(const uint64_t x[3])
{
    oz2_u192 y = {x[0], x[1], x[2]};
    return oz2_to_double3(&y, 0, 0);
}

static void check_limbs_rn(const uint64_t x[3], int nl)
{
    double e[OZ2_CF_MAXL] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (int l = 0; l < nl; l++) { /* 36 bits from bit 36 l */
        const int pos = OZ2_CF_BITS * l, wi = pos / 64, sh = pos % 64;
        uint64_t v = x[wi] >> sh;
        if (sh > 64 - OZ2_CF_BITS && wi + 1 < 3)
            v |= x[wi + 1] << (64 - sh);
        e[l] = (double)(v & ((UINT64_C(1) << OZ2_CF_BITS) - 1));
    }
    const double got = oz2_cf_limbs_rn(e, nl), want = limbs_rn_want(x);
    if (memcmp(&got, &want, sizeof got) != 0)
        fail_msg("limbs_rn: got %a want %a (nl %d, x = %016" PRIx64 " %016" PRIx64 " %016" PRIx64 ")", got, want, nl,
                 x[2], x[1], x[0]);
    /* -X in the signed form (floor carries: the limbs below the top in [0, 2^36), the top negative): -RN(X) */
    for (int l = 0; l < nl; l++)
        e[l] = 0.0 - e[l]; /* +0 for 0, as the kernel's exact differences give */
    oz2_cf_carry(nl, e);
    const double gotn = oz2_cf_limbs_rn(e, nl), wantn = want == 0.0 ? 0.0 : -want;
    if (memcmp(&gotn, &wantn, sizeof gotn) != 0)
        fail_msg("limbs_rn of -X: got %a want %a (nl %d, x = %016" PRIx64 " %016" PRIx64 " %016" PRIx64 ")", gotn,
                 wantn, nl, x[2], x[1], x[0]);
}

static void set_bit(uint64_t x[3], int pos)
{
    if (pos >= 0 && pos < 180)
        x[pos / 64] |= UINT64_C(1) << (pos % 64);
}

static void test_limbs_rn(void **state)
{
    (void)state;
    int ties = 0;
    for (int i = 0; i < 400000; i++) {
        const int nl = 1 + (int)oz_rng_range(0, OZ2_CF_MAXL - 1), top_bits = OZ2_CF_BITS * nl;
        uint64_t x[3] = {oz_rng_u64(), oz_rng_u64(), oz_rng_u64()};
        int bits = (int)oz_rng_range(0, top_bits);
        if (i % 3 == 1 && top_bits > 54) { /* an exact tie at 53 bits: 54 bits ending in 1, then zeros or a sticky bit */
            x[0] = x[1] = x[2] = 0;
            const int lsb = (int)oz_rng_range(0, top_bits - 54); /* the tie bit's position */
            uint64_t m = oz_rng_u64() | UINT64_C(1) << 53 | 1;    /* bit 53 on: 54 significant bits */
            for (int b = 0; b < 54; b++)
                if (m >> b & 1)
                    set_bit(x, lsb + b);
            const int kind = (int)(i % 4);
            if (kind == 1 && lsb > 0) /* a sticky bit anywhere below the tie */
                set_bit(x, (int)oz_rng_range(0, lsb - 1));
            if (kind == 2 && lsb > 0) { /* just below the tie: its bit off, every bit under it on */
                x[lsb / 64] &= ~(UINT64_C(1) << (lsb % 64));
                for (int b = 0; b < lsb; b++)
                    set_bit(x, b);
            }
            ties++;
            bits = top_bits;
        }
        for (int pos = bits; pos < 192; pos++)
            x[pos / 64] &= ~(UINT64_C(1) << (pos % 64));
        check_limbs_rn(x, nl);
    }
    for (int nl = 1; nl <= OZ2_CF_MAXL; nl++) /* 0, 1, and the top of each limb count */
        for (int b = -1; b < OZ2_CF_BITS * nl; b++) {
            uint64_t x[3] = {0, 0, 0};
            set_bit(x, b);
            check_limbs_rn(x, nl);
            for (int c = 0; c < b; c++)
                set_bit(x, c); /* 2^(b+1) - 1: all ones */
            check_limbs_rn(x, nl);
        }
    assert_true(ties > 100000);
    /* signed tops at the exactness boundary (+-2^17 and beside): against the magnitude's RN, negated */
    static const double tops[] = {-131073.0, -131072.0, -131071.0, 131071.0, 131072.0, -1.0, -65536.0};
    for (int nl = 2; nl <= OZ2_CF_MAXL; nl++)
        for (size_t t = 0; t < sizeof tops / sizeof tops[0]; t++)
            for (int i = 0; i < 3000; i++) {
                double e[OZ2_CF_MAXL] = {0.0, 0.0, 0.0, 0.0, 0.0}, m[OZ2_CF_MAXL] = {0.0, 0.0, 0.0, 0.0, 0.0};
                e[nl - 1] = tops[t];
                for (int l = 0; l < nl - 1; l++) {
                    const int kind = (int)oz_rng_range(0, 3);
                    e[l] = kind == 0 ? 0.0 : kind == 1 ? 0x1p36 - 1.0 : (double)(oz_rng_u64() >> 28);
                }
                for (int l = 0; l < nl; l++)
                    m[l] = 0.0 - e[l];
                oz2_cf_carry(nl, m); /* |X| in canonical limbs when X < 0, else -X signed */
                const double got = oz2_cf_limbs_rn(e, nl), mag = oz2_cf_limbs_rn(m, nl);
                const double want = mag == 0.0 ? 0.0 : -mag; /* RN(-Y) = -RN(Y) */
                if (memcmp(&got, &want, sizeof got) != 0)
                    fail_msg("limbs_rn with top %g (nl %d): got %a want %a", tops[t], nl, got, want);
            }
}

/* oz2_ldexp_normal (to_double3's scaling) against C's ldexp: normal x of
 * every exponent, e across and beyond the normal range, the boundaries. */
static void test_ldexp_normal(void **state)
{
    (void)state;
    for (int i = 0; i < 400000; i++) {
        const uint64_t bits = (oz_rng_u64() & UINT64_C(0x800FFFFFFFFFFFFF)) |
                              (uint64_t)oz_rng_range(1, 2046) << 52; /* normal, either sign */
        double x;
        memcpy(&x, &bits, sizeof x);
        const int ex = (int)((bits >> 52) & 0x7ff);
        int e = (int)oz_rng_range(-2200, 2200);
        if (i % 4 == 1) /* results at the edges of the normal range */
            e = (int)oz_rng_range(-3, 3) + (i % 8 == 1 ? 1 - ex : 2046 - ex);
        const double got = oz2_ldexp_normal(x, e), want = ldexp(x, e);
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("oz2_ldexp_normal(%a, %d) = %a, ldexp gives %a", x, e, got, want);
    }
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(20261130));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_bound),
        cmocka_unit_test(test_bytes_random),
        cmocka_unit_test(test_bytes_edges),
        cmocka_unit_test(test_cf_constants),
        cmocka_unit_test(test_cf_round_trips),
        cmocka_unit_test(test_cf_small_x),
        cmocka_unit_test(test_to_double3),
        cmocka_unit_test(test_limbs_rn),
        cmocka_unit_test(test_ldexp_normal),
    };
    return OZ_TEST_RUN("test_oz2_fast", "oz2_fast", tests, seed);
}
