/* tests/unit/test_crt.c: crt/moduli.h constants recomputed from first principles, oz_mod_p, the CRT round trip over (-M/2, M/2], and the engine's conversion-free centered reconstruction. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>

#include "crt/crt.h"
#include "crt/moduli.h"
#include "crt/oz2_complex.h"
#include "slicing/slicing.h"
#include "oz_test_util.h"

/* The spec's primes, in the spec's order (phase22.md step 3). Only the primes
 * are typed here; everything else is derived from them. */
static const int64_t spec_primes[7] = {127, 113, 109, 107, 103, 101, 97};

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a < 0 ? -a : a;
}

/* a^-1 mod p by the extended Euclidean algorithm (a, p coprime) */
static int64_t inverse_mod(int64_t a, int64_t p)
{
    int64_t r0 = p, r1 = ((a % p) + p) % p, t0 = 0, t1 = 1;
    while (r1) {
        int64_t q = r0 / r1, t;
        t = r0 - q * r1; r0 = r1; r1 = t;
        t = t0 - q * t1; t0 = t1; t1 = t;
    }
    assert_int_equal(r0, 1);
    return ((t0 % p) + p) % p;
}

static int is_prime(int64_t p)
{
    if (p < 2)
        return 0;
    for (int64_t d = 2; d * d <= p; d++)
        if (p % d == 0)
            return 0;
    return 1;
}

/* ---- the constants ---- */

static void test_constants(void **state)
{
    (void)state;
    const oz_moduli_set *set = &oz_p22_set;
    assert_int_equal(set->count, 7);
    assert_int_equal(OZ_P22_NPRIMES, 7);

    unsigned __int128 M = 1;
    for (int i = 0; i < 7; i++) {
        assert_int_equal(set->moduli[i].p, spec_primes[i]);
        assert_true(is_prime(spec_primes[i]));
        assert_true(spec_primes[i] - 1 <= 126); /* unsigned residues fit int8 too */
        for (int j = 0; j < i; j++)
            assert_int_equal(gcd64(spec_primes[i], spec_primes[j]), 1);
        M *= (unsigned __int128)spec_primes[i];
    }
    assert_true(M == set->M);
    assert_true(M == OZ_P22_M);
    assert_true(OZ_P22_HALF_M == (uint64_t)(M / 2));
    assert_true(M % 2 == 1); /* the fold X > M/2 -> X - M needs M odd */

    int64_t maxp = 0;
    for (int i = 0; i < 7; i++) {
        int64_t p = spec_primes[i];
        uint64_t Mp = (uint64_t)(M / (uint64_t)p);
        assert_true((unsigned __int128)Mp * (uint64_t)p == M);
        uint64_t f = Mp * (uint64_t)inverse_mod((int64_t)(Mp % (uint64_t)p), p);
        if (set->moduli[i].f != f)
            fail_msg("f_%" PRId64 " = %" PRIu64 ", computed %" PRIu64, p, set->moduli[i].f, f);
        assert_true(f < M);
        /* the CRT identity: f_p = 1 mod p, 0 mod every other prime */
        for (int j = 0; j < 7; j++)
            assert_int_equal(f % (uint64_t)spec_primes[j], i == j ? 1 : 0);
        uint32_t mu = (uint32_t)((UINT64_C(1) << 32) / (uint64_t)p);
        if (set->moduli[i].mu != mu)
            fail_msg("mu_%" PRId64 " = %" PRIu32 ", floor(2^32/p) = %" PRIu32, p, set->moduli[i].mu, mu);
        maxp = p > maxp ? p : maxp;
    }
    /* sum_p r_p f_p < count * max_p * M < 2^63: exact in uint64 (and int64) */
    assert_true((unsigned __int128)set->count * (uint64_t)maxp * M < ((unsigned __int128)1 << 63));
    /* M < 2^53: oz_crt_reduce's quotient through a double is off by at most one */
    assert_true(M < ((unsigned __int128)1 << 53));

    /* the K chunk keeps every pass inside the CRT range, 4915 being the limit */
    assert_true((uint64_t)OZ_P22_KCHUNK << 34 <= OZ_P22_HALF_M);
    assert_true((UINT64_C(4915) << 34) <= OZ_P22_HALF_M);
    assert_true((UINT64_C(4916) << 34) > OZ_P22_HALF_M);
    /* and the int32 accumulator of symmetric residues (|r| <= 63) cannot overflow */
    assert_true((int64_t)OZ_P22_KCHUNK * 63 * 63 < INT64_C(2147483647));
    assert_int_equal(OZ_P22_KCHUNK % 32, 0); /* a multiple of the kernel's K step */
}

/* ---- oz_mod_p ---- */

static void check_mod_p(int32_t x, int pi)
{
    int32_t p = oz_p22_moduli[pi].p;
    int32_t r = oz_mod_p(x, p, oz_p22_moduli[pi].mu);
    int64_t want = (((int64_t)x % p) + p) % p;
    if (r != want)
        fail_msg("oz_mod_p(%" PRId32 ", %" PRId32 ") = %" PRId32 ", want %" PRId64, x, p, r, want);
}

static void test_mod_p_exhaustive(void **state)
{
    (void)state;
    /* |acc| <= 4096 * 63^2 < 2^24 for a chunk: all of it and more, exhaustively */
    for (int pi = 0; pi < 7; pi++) {
        int32_t p = oz_p22_moduli[pi].p;
        uint32_t mu = oz_p22_moduli[pi].mu;
        for (int32_t x = -(1 << 25); x <= (1 << 25); x++) {
            int32_t r = oz_mod_p(x, p, mu);
            int64_t want = (((int64_t)x % p) + p) % p;
            if (r != want)
                fail_msg("oz_mod_p(%" PRId32 ", %" PRId32 ") = %" PRId32 ", want %" PRId64, x, p, r, want);
        }
    }
}

/* ---- oz_acc_mod: the engine's accumulator reduction ---- */

/* Exhaustive by monotonicity: floor(y M / 2^(31+j)) is non-decreasing in
 * y, so if it is i at y = i m and at y = i m + m - 1 (or 2^31 - 1), it is i
 * on the whole block; every block of [0, 2^31) is checked, for every engine
 * modulus and every split modulus (crt/oz2_complex.h, down to 17). Then the
 * engine's use: offset + x for |x| <= 2^30. */
static void test_acc_mod(void **state)
{
    (void)state;
#define OZ_AM_(i, mod) mods[i] = (mod);
#define OZ_AMS_(i, p, r, inv2r) mods[OZ_ENGINE_NMODULI + (i)] = (p);
    uint32_t mods[OZ_ENGINE_NMODULI + OZ2Z_SPLIT_NMODULI];
    OZ_ENGINE_MODULI(OZ_AM_)
    OZ2Z_SPLIT_MODULI(OZ_AMS_)
#undef OZ_AM_
#undef OZ_AMS_
    for (int i = 0; i < OZ_ENGINE_NMODULI + OZ2Z_SPLIT_NMODULI; i++) {
        const uint32_t m = mods[i], off = OZ_ACC_OFFSET(m);
        const int j = OZ_ACC_J(m);
        assert_true(m > 2 && m <= 256);
        assert_true((UINT32_C(1) << (j - 1)) < m && m <= (UINT32_C(1) << j));
        const uint64_t magic64 = ((UINT64_C(1) << (31 + j)) + m - 1) / m;
        assert_true(magic64 < (UINT64_C(1) << 32) || m == 256);
        assert_int_equal(OZ_ACC_MAGIC(m), (uint32_t)magic64);
        assert_int_equal(OZ_ACC_SHIFT(m), j - 1);
        assert_int_equal(off % m, 0);
        const uint32_t M = OZ_ACC_MAGIC(m), sh = OZ_ACC_SHIFT(m);
        const int64_t xmin = -INT64_C(65536) * 128 * 127, xmax = INT64_C(65536) * 128 * 128; /* K chunk 65536 */
        assert_true(off < (UINT32_C(1) << 30) && off + m >= (UINT32_C(1) << 30));
        assert_true((int64_t)off + xmin >= 0 && (int64_t)off + xmax < (INT64_C(1) << 31));
        const uint32_t top = (UINT32_C(1) << 31) - 1;
        for (uint32_t b = 0; (uint64_t)b * m <= top; b++) {
            const uint32_t lo = b * m, hi = (uint64_t)lo + m - 1 > top ? top : lo + m - 1;
            if (oz_acc_mod(lo, 0u - m, M, sh) != 0 || oz_acc_mod(hi, 0u - m, M, sh) != hi - lo)
                fail_msg("oz_acc_mod wrong for m %u at block %u", m, b);
        }
        for (int t = 0; t < 20000; t++) {
            const int64_t x = t < 4 ? (t & 1 ? xmax : xmin) + (t & 2 ? 0 : (t & 1 ? -1 : 1)) : oz_rng_range(xmin, xmax);
            const uint32_t y = (uint32_t)((int64_t)off + x);
            const int64_t want = ((x % (int64_t)m) + m) % m;
            if ((int64_t)oz_acc_mod(y, 0u - m, M, sh) != want)
                fail_msg("oz_acc_mod(offset + %" PRId64 ") mod %u wrong", x, m);
        }
    }
}

static void test_mod_p_extremes(void **state)
{
    (void)state;
    for (int pi = 0; pi < 7; pi++) {
        check_mod_p(INT32_MIN, pi);
        check_mod_p(INT32_MAX, pi);
        for (int32_t d = 0; d < (1 << 16); d++) {
            check_mod_p(INT32_MIN + d, pi);
            check_mod_p(INT32_MAX - d, pi);
        }
        for (int i = 0; i < 2000000; i++)
            check_mod_p((int32_t)(uint32_t)oz_rng_u64(), pi);
    }
}

/* ---- CRT: residues of X, reconstructed, give X back for X in (-M/2, M/2] ---- */

static int64_t crt_round_trip(int64_t X)
{
    uint64_t sum = 0;
    for (int i = 0; i < OZ_P22_NPRIMES; i++) {
        int64_t p = oz_p22_moduli[i].p;
        int64_t r = ((X % p) + p) % p;
        sum += (uint64_t)r * oz_p22_moduli[i].f;
    }
    return oz_crt_fold(oz_crt_reduce(sum, OZ_P22_M), OZ_P22_M);
}

static void check_crt(int64_t X)
{
    int64_t got = crt_round_trip(X);
    if (got != X)
        fail_msg("CRT of %" PRId64 " gives %" PRId64, X, got);
}

static void test_crt_round_trip(void **state)
{
    (void)state;
    const int64_t H = (int64_t)OZ_P22_HALF_M; /* (M-1)/2: the range is [-H, H] */
    int64_t ends[] = {0, 1, -1, 2, -2, H, -H, H - 1, -H + 1, H / 2, -H / 2,
                      INT64_C(1) << 46, -(INT64_C(1) << 46), (INT64_C(1) << 46) - 1, 4915 * (INT64_C(1) << 34),
                      -4915 * (INT64_C(1) << 34), 4096 * (INT64_C(1) << 34) - 7};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
        check_crt(ends[i]);
    for (int64_t X = -100000; X <= 100000; X++)
        check_crt(X);
    for (int64_t d = 0; d < 100000; d++) {
        check_crt(H - d);
        check_crt(-H + d);
    }
    for (int i = 0; i < 2000000; i++) {
        check_crt(oz_rng_range(-H, H));
        check_crt(-oz_rng_range(0, 1 << 30)); /* negatives of every size */
        check_crt(-(int64_t)(oz_rng_u64() >> (18 + oz_rng_u64() % 46)));
    }
    /* one past the ends: the fold maps them to the other end (X -+ M) */
    assert_int_equal(crt_round_trip(H + 1), H + 1 - (int64_t)OZ_P22_M);
    assert_int_equal(crt_round_trip(-H - 1), -H - 1 + (int64_t)OZ_P22_M);
}

static void test_crt_reduce_fold(void **state)
{
    (void)state;
    const uint64_t M = OZ_P22_M;
    const uint64_t top = 7 * 127 * M; /* the largest sum the reconstruction forms */
    uint64_t probes[] = {0, 1, M - 1, M, M + 1, 2 * M - 1, 2 * M, top - 1, top, top - M, 6 * M + M / 2};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        assert_true(oz_crt_reduce(probes[i], M) == probes[i] % M);
    for (uint64_t q = 0; q <= 7 * 127; q++) /* every quotient, at both edges */
        for (uint64_t r = 0; r < 64; r++) {
            assert_true(oz_crt_reduce(q * M + r, M) == r);
            if (q * M + M - 1 - r <= top)
                assert_true(oz_crt_reduce(q * M + M - 1 - r, M) == M - 1 - r);
        }
    for (int i = 0; i < 2000000; i++) {
        uint64_t s = oz_rng_u64() % (top + 1);
        assert_true(oz_crt_reduce(s, M) == s % M);
    }
    assert_true(oz_crt_fold(0, M) == 0);
    assert_true(oz_crt_fold(M / 2, M) == (int64_t)(M / 2));
    assert_true(oz_crt_fold(M / 2 + 1, M) == -(int64_t)(M / 2));
    assert_true(oz_crt_fold(M - 1, M) == -1);
}

/* ---- the chunk pipeline: int8 residues, int32 accumulation, mod p, CRT ---- */

/* Exact dot of two slice vectors through the Phase 22 integer path. */
static int64_t crt_dot(const int32_t *a, const int32_t *b, int n)
{
    uint64_t sum = 0;
    for (int i = 0; i < OZ_P22_NPRIMES; i++) {
        int32_t p = oz_p22_moduli[i].p;
        int32_t acc = 0;
        for (int k = 0; k < n; k++)
            acc += (int32_t)oz_residue(a[k], p) * (int32_t)oz_residue(b[k], p);
        sum += (uint64_t)oz_mod_p(acc, p, oz_p22_moduli[i].mu) * oz_p22_moduli[i].f;
    }
    return oz_crt_fold(oz_crt_reduce(sum, OZ_P22_M), OZ_P22_M);
}

enum { NMAX = 4916 };

static void test_crt_chunk_dot(void **state)
{
    (void)state;
    static int32_t a[NMAX], b[NMAX];
    /* sign-aligned extremes: the largest |X| a chunk of 4096 can produce, both signs */
    for (int k = 0; k < NMAX; k++) {
        a[k] = 131072;
        b[k] = 131072;
    }
    assert_true(crt_dot(a, b, 4096) == INT64_C(4096) << 34);
    assert_true(crt_dot(a, b, 4915) == INT64_C(4915) << 34);
    for (int k = 0; k < NMAX; k++)
        b[k] = -131072;
    assert_true(crt_dot(a, b, 4096) == -(INT64_C(4096) << 34));
    /* one more term and the HH pass leaves the range: this is why K is chunked */
    assert_true(crt_dot(a, b, 4916) == -(INT64_C(4916) << 34) + (int64_t)OZ_P22_M);
    /* random slices of each pass's ranges, random lengths up to a chunk */
    for (int t = 0; t < 300; t++) {
        int n = (int)oz_rng_range(0, 4096);
        int32_t ra = t % 2 ? 65536 : 131072, rb = t % 3 ? 131072 : 65536;
        int64_t want = 0;
        for (int k = 0; k < n; k++) {
            a[k] = (int32_t)oz_rng_range(-ra, ra);
            b[k] = (int32_t)oz_rng_range(-rb, rb);
            if (t % 5 == 0) /* sign-aligned large negatives */
                b[k] = -(int32_t)oz_rng_range(rb / 2, rb), a[k] = (int32_t)oz_rng_range(ra / 2, ra);
            want += (int64_t)a[k] * b[k];
        }
        int64_t got = crt_dot(a, b, n);
        if (got != want)
            fail_msg("chunk dot n=%d: CRT %" PRId64 ", exact %" PRId64, n, got, want);
    }
}

/* S = sum r_q f_q over the GPU Phase 22 moduli for the integer x. */
static uint64_t p22g_sum(int64_t x)
{
    uint64_t S = 0;
#define OZ_SUM_(i, m, f, mu) S += (uint64_t)(((x % (m)) + (m)) % (m)) * (f);
    OZ_P22G_MODULI(OZ_SUM_)
#undef OZ_SUM_
    return S;
}

/* oz_p22g_centered (the engine's conversion-free X): every X of a chunk,
 * |X| <= 2^46, comes back exactly from its residues; the edges, and random
 * residue tuples whose centered value is in range, agree with the reference
 * reduction (oz_crt_reduce, oz_crt_fold). */
static void test_p22g_centered(void **state)
{
    (void)state;
    const int64_t lim = INT64_C(1) << 46;
    const int64_t edge[] = {0, 1, -1, 2, -2, 255, -256, 65535, -65536, lim, -lim, lim - 1, -lim + 1,
                            lim / 2, -lim / 2, INT64_C(4096) << 34, -(INT64_C(4096) << 34)};
    for (size_t e = 0; e < sizeof edge / sizeof edge[0]; e++) {
        double got = oz_p22g_centered(p22g_sum(edge[e]));
        if (got != (double)edge[e])
            fail_msg("X = %" PRId64 ": got %.17g", edge[e], got);
    }
    for (int t = 0; t < 2000000; t++) {
        int64_t x = oz_rng_range(-lim, lim);
        if (t % 4 == 1) /* near the ends */
            x = (t & 8 ? lim : -lim) + (t & 8 ? -1 : 1) * oz_rng_range(0, 1 << 20);
        double got = oz_p22g_centered(p22g_sum(x));
        if (got != (double)x)
            fail_msg("X = %" PRId64 ": got %.17g", x, got);
    }
    /* arbitrary residues (S up to its maximum): where the centered value is a chunk's, the same */
    int checked = 0;
    for (int t = 0; t < 2000000; t++) {
        uint64_t S = 0;
#define OZ_RSUM_(i, m, f, mu) S += (uint64_t)(t % 3 == 0 ? (m) - 1 - oz_rng_range(0, 3) : oz_rng_range(0, (m) - 1)) * (f);
        OZ_P22G_MODULI(OZ_RSUM_)
#undef OZ_RSUM_
        int64_t want = oz_crt_fold(oz_crt_reduce(S, OZ_P22G_M), OZ_P22G_M);
        if (want > lim || want < -lim)
            continue;
        checked++;
        double got = oz_p22g_centered(S);
        if (got != (double)want)
            fail_msg("S = %" PRIu64 ": got %.17g, want %" PRId64, S, got, want);
    }
    assert_true(checked > 1000000);
}

int main(void)
{
    uint64_t seed = oz_rng_seed_from_env(UINT64_C(0x5eed0c27));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constants),
        cmocka_unit_test(test_mod_p_exhaustive),
        cmocka_unit_test(test_mod_p_extremes),
        cmocka_unit_test(test_acc_mod),
        cmocka_unit_test(test_crt_round_trip),
        cmocka_unit_test(test_crt_reduce_fold),
        cmocka_unit_test(test_crt_chunk_dot),
        cmocka_unit_test(test_p22g_centered),
    };
    return OZ_TEST_RUN("test_crt", "crt", tests, seed);
}
