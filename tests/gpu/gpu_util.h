/* tests/gpu/gpu_util.h: checked CUDA calls, random data and small helpers for the GPU test programs (plain C, no cmocka). */
#ifndef OZCRT_TESTS_GPU_UTIL_H
#define OZCRT_TESTS_GPU_UTIL_H

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_CHECK(call)                                                                            \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
            exit(2);                                                                                \
        }                                                                                           \
    } while (0)

/* xorshift64*: reproducible inputs; the seed is printed by every test. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static inline uint64_t rng_u64(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}
static inline double rng_unit(void) { return (double)(rng_u64() >> 11) * 0x1.0p-53; }     /* [0, 1) */
static inline double rng_sym(void) { return 2.0 * rng_unit() - 1.0; }                     /* (-1, 1) */
static inline int64_t rng_range(int64_t lo, int64_t hi) { return lo + (int64_t)(rng_u64() % (uint64_t)(hi - lo + 1)); }
static inline double rng_normal(void)
{
    double u = rng_unit() + 1e-300, v = rng_unit();
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Distributions of test inputs. */
enum { DIST_UNIFORM, DIST_NORMAL, DIST_WIDE, DIST_INT, DIST_COUNT };
static inline double rng_dist(int dist)
{
    switch (dist) {
    case DIST_NORMAL: return rng_normal();
    case DIST_WIDE: return ldexp(rng_sym(), (int)rng_range(-60, 60));
    case DIST_INT: return (double)rng_range(-1000, 1000);
    default: return rng_sym();
    }
}

/* Values at the ends of the double range (the GPU bit tests' extreme
 * cases), for operand A (b = 0) or B (b = 1): regime 0 A subnormal or tiny
 * and B huge (products in the normal range), 1 both huge (results overflow
 * to Inf), 2 A near 2^-600 and B near 2^-460 (results in the subnormals, the
 * last rounding's range), 3 the exponent set by the storage column idx / ld
 * over the whole range 2^-1074 .. 2^1023, 4 huge and subnormal elements
 * mixed in one operand (a row's huge maximum puts its tiny elements below
 * its fixed point). */
enum { EXTREME_REGIMES = 5 };
static inline double rng_extreme(int regime, int b, size_t idx, int64_t ld)
{
    const int tiny = (int)rng_range(-1074, -1000), huge = (int)rng_range(960, 1024); /* |sym| < 1: below DBL_MAX */
    switch (regime) {
    case 0: return ldexp(rng_sym(), b ? huge : tiny);
    case 1: return ldexp(rng_sym(), huge);
    case 2: return ldexp(rng_sym(), b ? (int)rng_range(-480, -440) : (int)rng_range(-620, -580));
    case 3: return ldexp(rng_sym(), (int)(((int64_t)(idx / (size_t)(ld > 0 ? ld : 1)) * 97) % 2098) - 1074);
    default: return ldexp(rng_sym(), rng_range(0, 1) ? tiny : huge);
    }
}

static inline void *dev_upload(const void *host, size_t bytes)
{
    void *d = NULL;
    CUDA_CHECK(cudaMalloc(&d, bytes ? bytes : 8));
    if (bytes)
        CUDA_CHECK(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice));
    return d;
}

static inline void dev_download(void *host, const void *dev, size_t bytes)
{
    if (bytes)
        CUDA_CHECK(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
}

/* Same bits, or both NaN. */
static inline int same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* FNV-1a hash of `bytes` bytes (a result's bits, compared between runs). */
static inline uint64_t hash_bytes(const void *p, size_t bytes)
{
    const unsigned char *c = (const unsigned char *)p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ c[i]) * 0x100000001b3ULL;
    return h;
}


#endif
