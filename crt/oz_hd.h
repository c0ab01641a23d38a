/* crt/oz_hd.h: marks the plain-C math that device code shares with the host, and its bit casts. */
#ifndef OZCRT_OZ_HD_H
#define OZCRT_OZ_HD_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define OZ_HD __host__ __device__ __forceinline__
#else
#define OZ_HD static inline
#endif

/* constexpr where the compiler is C++ (a table of constants built at
 * compile time in a kernel file), nothing in C. */
#ifdef __cplusplus
#define OZ_CONSTEXPR constexpr
#else
#define OZ_CONSTEXPR
#endif

/* A value's bits and back, no conversion: the intrinsics on the device,
 * memcpy on the host. */
OZ_HD float oz_bits_f32(uint32_t u)
{
#ifdef __CUDA_ARCH__
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}
OZ_HD uint32_t oz_f32_bits(float f)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(f);
#else
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
#endif
}
OZ_HD double oz_bits_f64(uint64_t u)
{
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)u);
#else
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
#endif
}
OZ_HD uint64_t oz_f64_bits(double d)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(d);
#else
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
#endif
}

#endif
