/* crt/oz_hd.h: marks the plain-C math that device code shares with the host. */
#ifndef OZCRT_OZ_HD_H
#define OZCRT_OZ_HD_H
#ifdef __CUDACC__
#define OZ_HD __host__ __device__ __forceinline__
#else
#define OZ_HD static inline
#endif
#endif
