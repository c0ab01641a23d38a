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


#endif
