/* tests/unit/oz_test_util.h: shared helpers of the unit tests: a seeded RNG, an independent integer model of the slicing, exact sums.
 *
 * Everything here is written from phase22.md without using slicing/ or crt/
 * code, so that a test comparing the two compares two independent readings
 * of the spec. Header-only (static functions): each test program is one .c. */
#ifndef OZCRT_TESTS_UNIT_OZ_TEST_UTIL_H
#define OZCRT_TESTS_UNIT_OZ_TEST_UTIL_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef __SIZEOF_FLOAT128__
#error "the unit tests need __float128 (gcc or clang on x86-64) for exact reference sums"
#endif
/* Exact for products of two doubles (106 bits < 113) and for sums spanning
 * fewer than 113 bits; arithmetic only, no libquadmath needed. */
typedef __float128 oz_quad;

/* ---- seeded RNG (splitmix64); OZ_TEST_SEED=<n> in the environment replays a run ---- */

static uint64_t oz_rng_state = UINT64_C(0x0123456789abcdef);

static inline uint64_t oz_rng_u64(void)
{
    uint64_t z = (oz_rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Seeds from OZ_TEST_SEED if set; returns the seed so main() can print it. */
static inline uint64_t oz_rng_seed_from_env(uint64_t fallback)
{
    const char *s = getenv("OZ_TEST_SEED");
    oz_rng_state = s && *s ? strtoull(s, NULL, 0) : fallback;
    return oz_rng_state;
}

/* The end of a seeded test program: the summary line naming the seed (a
 * failure reruns with OZ_TEST_SEED set to it), exit status 1 on a failure. */
static inline int oz_test_summary(const char *prog, int failed, size_t n, uint64_t seed)
{
    printf("ozcrt %s: %d of %zu tests failed (OZ_TEST_SEED=%#" PRIx64 ")\n", prog, failed, n, seed);
    return failed ? 1 : 0;
}
/* Runs the cmocka group `tests` (an array) as `group`, then the summary. */
#define OZ_TEST_RUN(prog, group, tests, seed) \
    oz_test_summary((prog), cmocka_run_group_tests_name((group), (tests), NULL, NULL), sizeof(tests) / sizeof((tests)[0]), (seed))

/* uniform in [0, 1) with 53 random bits */
static inline double oz_rng_unit(void) { return (double)(oz_rng_u64() >> 11) * 0x1p-53; }
/* uniform in (-1, 1) */
static inline double oz_rng_sym(void) { return 2.0 * oz_rng_unit() - 1.0; }
/* uniform integer in [lo, hi] (hi - lo < 2^63) */
static inline int64_t oz_rng_range(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(oz_rng_u64() % (uint64_t)(hi - lo + 1));
}
/* standard normal, Box-Muller */
static inline double oz_rng_normal(void)
{
    double u = oz_rng_unit(), v = oz_rng_unit();
    if (u < 0x1p-60)
        u = 0x1p-60;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}
/* a double with uniformly random bits: any finite value, subnormals included */
static inline double oz_rng_any_finite(void)
{
    for (;;) {
        uint64_t b = oz_rng_u64();
        double d;
        memcpy(&d, &b, sizeof d);
        if (isfinite(d))
            return d;
    }
}

/* a double of any kind, each a quarter of the time: random bits (any finite
 * value), any exponent, subnormal, or moderate (|x| up to 2^60) */
static inline double oz_rng_double_any(void)
{
    switch (oz_rng_range(0, 3)) {
    case 0: return oz_rng_any_finite();
    case 1: return ldexp(oz_rng_sym(), (int)oz_rng_range(-1074, 1023));
    case 2: return ldexp((double)oz_rng_range(1, 1000), (int)oz_rng_range(-1080, -1060)); /* subnormal */
    default: return ldexp(oz_rng_sym(), (int)oz_rng_range(-60, 60));
    }
}

/* ---- an independent integer model of the spec's scaling and slicing ---- */

/* Smallest s with |x| < 2^s for x != 0 (ilogb-based, not frexp), 0 for 0. */
static inline int oz_model_scale_exponent(double absmax)
{
    return absmax == 0.0 ? 0 : ilogb(absmax) + 1;
}

/* rne(x * 2^sh) for finite x, computed on the integer significand:
 * x = m * 2^e exactly with m a 53-bit integer, then a rounding right shift
 * with ties to even. Valid when the result fits in int64 (|x 2^sh| < 2^62). */
static inline int64_t oz_model_rne_scaled(double x, int sh)
{
    if (x == 0.0)
        return 0;
    int e;
    double fr = frexp(fabs(x), &e); /* |x| = fr 2^e, fr in [0.5, 1) */
    uint64_t m = (uint64_t)ldexp(fr, 53); /* exact: 53-bit integer */
    int shift = e - 53 + sh;               /* |x| 2^sh = m 2^shift */
    uint64_t q;
    if (shift >= 0) {
        q = m << shift; /* caller guarantees it fits */
    } else if (shift <= -64) {
        q = 0; /* far below one half */
    } else {
        int r = -shift;
        q = m >> r;
        uint64_t rem = m & ((UINT64_C(1) << r) - 1); /* r <= 63 */
        uint64_t half = UINT64_C(1) << (r - 1);
        if (rem > half || (rem == half && (q & 1)))
            q++;
    }
    return x < 0 ? -(int64_t)q : (int64_t)q;
}

/* The spec's slices of a * 2^-s (the value the spec scales into (-1, 1)):
 * hi = rne(v 2^17), lo = rne(v 2^34) - hi 2^17 (ties to even agree because
 * hi 2^17 is even), all from the significand of a, without ldexp. */
static inline void oz_model_slice(double a, int s, int64_t *hi, int64_t *lo)
{
    *hi = oz_model_rne_scaled(a, 17 - s);
    *lo = oz_model_rne_scaled(a, 34 - s) - *hi * 131072;
}

#endif
