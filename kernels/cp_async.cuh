/* kernels/cp_async.cuh: the sm_80+ asynchronous global -> shared copies (cp.async) and L2 prefetches the mma.sync-era kernels use, one wrapper each. */
#ifndef OZCRT_KERNELS_CP_ASYNC_CUH
#define OZCRT_KERNELS_CP_ASYNC_CUH
#include <stdint.h>

/* 16 bytes, cached in L2 only (shared-memory byte address smem). */
__device__ __forceinline__ void oz_cp_async16(uint32_t smem, const void *gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem));
}
/* 8 bytes, a double; zeros where `live` is false (the source is then not read). */
__device__ __forceinline__ void oz_cp_async8(uint32_t smem, const double *gmem, bool live)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(smem), "l"(gmem), "r"(live ? 8 : 0));
}
__device__ __forceinline__ void oz_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
/* Until at most N of this thread's committed groups are in flight. */
template <int N>
__device__ __forceinline__ void oz_cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
/* Brings the line holding p into L2 (no register, no wait). */
__device__ __forceinline__ void oz_prefetch_l2(const void *p)
{
    asm volatile("prefetch.global.L2 [%0];\n" ::"l"(p));
}

#endif
