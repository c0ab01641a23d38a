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
#ifdef __CUDA_ARCH__
#define OZ_BIT_CAST_(name, To, From, intrinsic) \
    OZ_HD To name(From x) { return (To)intrinsic(x); }
#else
#define OZ_BIT_CAST_(name, To, From, intrinsic) \
    OZ_HD To name(From x)                       \
    {                                           \
        To y;                                   \
        memcpy(&y, &x, sizeof y);               \
        return y;                               \
    }
#endif
OZ_BIT_CAST_(oz_bits_f32, float, uint32_t, __uint_as_float)
OZ_BIT_CAST_(oz_f32_bits, uint32_t, float, __float_as_uint)
OZ_BIT_CAST_(oz_bits_f64, double, uint64_t, __longlong_as_double)
OZ_BIT_CAST_(oz_f64_bits, uint64_t, double, __double_as_longlong)
#undef OZ_BIT_CAST_

#endif
