/* kernels/sm90_ptx.cuh: the Hopper instructions the sm_90a kernels use (wgmma, mbarrier, TMA, setmaxnreg), one wrapper each. */
#ifndef OZCRT_KERNELS_SM90_PTX_CUH
#define OZCRT_KERNELS_SM90_PTX_CUH
#include <stdint.h>

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define OZ_SM90A 1
#else
#define OZ_SM90A 0
#endif

/* Shared-memory matrix descriptor of a K-major operand in the 128-byte
 * swizzle layout: start address, stride between 8-row atoms (1024 bytes),
 * swizzle mode 1 (128 B); the leading offset is unused for swizzled K-major
 * layouts. Advancing K by 32 bytes is +2 in the address field. */
__device__ __forceinline__ uint64_t oz_wgmma_desc(uint32_t smem)
{
    return (uint64_t)((smem & 0x3FFFF) >> 4) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 62);
}

/* wgmma's accumulator operands: registers %0.. of the instruction, d[0..] of the wrapper. */
#define OZ_WGMMA_REGS_0_63 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define OZ_WGMMA_REGS_64_127 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define OZ_WGMMA_D4(i) "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3])
#define OZ_WGMMA_D16(i) OZ_WGMMA_D4(i), OZ_WGMMA_D4(i + 4), OZ_WGMMA_D4(i + 8), OZ_WGMMA_D4(i + 12)
#define OZ_WGMMA_D64(i) OZ_WGMMA_D16(i), OZ_WGMMA_D16(i + 16), OZ_WGMMA_D16(i + 32), OZ_WGMMA_D16(i + 48)
/* wgmma.m64nNk32.s32.s8.s8, A and B from shared memory, D accumulated (scale-d 1). */
#define OZ_WGMMA_S8(N, REGS, DA, DB, ...)                                                                      \
    asm volatile("{\n"                                                                                       \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k32.s32.s8.s8 {" REGS "}, %" #DA ", %" #DB ", 1;\n" \
                 "}\n"                                                                                         \
                 : __VA_ARGS__                                                                                 \
                 : "l"(da), "l"(db)                                                                            \
                 : "memory")

/* d (64 x N s32, this thread's N / 2) += A (64 x 32 s8) * B (32 x N s8), both from shared memory; N 128 or 256. */
template <int N>
__device__ __forceinline__ void oz_wgmma_s8(int32_t *d, uint64_t da, uint64_t db)
{
    static_assert(N == 128 || N == 256, "the engine's two block widths");
#if OZ_SM90A
    if constexpr (N == 128)
        OZ_WGMMA_S8(128, OZ_WGMMA_REGS_0_63, 64, 65, OZ_WGMMA_D64(0));
    else
        OZ_WGMMA_S8(256, OZ_WGMMA_REGS_0_63 ", " OZ_WGMMA_REGS_64_127, 128, 129, OZ_WGMMA_D64(0), OZ_WGMMA_D64(64));
#else
    (void)d, (void)da, (void)db;
    __trap(); /* never launched: the launchers check the binary */
#endif
}

__device__ __forceinline__ void oz_wgmma_fence()
{
#if OZ_SM90A
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void oz_wgmma_commit()
{
#if OZ_SM90A
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
/* Waits until at most N committed wgmma groups of this warpgroup are pending. */
template <int N>
__device__ __forceinline__ void oz_wgmma_wait()
{
#if OZ_SM90A
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

/* Register budget of a warpgroup (setmaxnreg): producers give registers back, consumers take them. */
template <int N>
__device__ __forceinline__ void oz_setmaxnreg_dec()
{
#if OZ_SM90A
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}
template <int N>
__device__ __forceinline__ void oz_setmaxnreg_inc()
{
#if OZ_SM90A
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
#endif
}

/* mbarriers in shared memory (addresses from __cvta_generic_to_shared). */
__device__ __forceinline__ void oz_mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
/* Makes the initialised barriers visible to the async proxy (TMA). */
__device__ __forceinline__ void oz_mbar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void oz_mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void oz_mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
/* Spins until the phase of parity `parity` of the barrier has completed. */
__device__ __forceinline__ void oz_mbar_wait(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n"
                 ".reg .pred P1;\n"
                 "OZ_WAIT:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
                 "@P1 bra OZ_DONE;\n"
                 "bra OZ_WAIT;\n"
                 "OZ_DONE:\n"
                 "}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

/* Brings the line holding p into L1 (no register, no wait). */
__device__ __forceinline__ void oz_prefetch_l1(const void *p)
{
    asm volatile("prefetch.global.L1 [%0];\n" ::"l"(p));
}

/* TMA: a 4-d box of a tensor map into shared memory, completing on an mbarrier. */
__device__ __forceinline__ void oz_tma_load_4d(uint32_t dst, const void *tmap, uint32_t bar, int32_t c0, int32_t c1,
                                               int32_t c2, int32_t c3)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2];\n" ::"r"(dst),
                 "l"((uint64_t)tmap), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}
__device__ __forceinline__ void oz_tma_prefetch_desc(const void *tmap)
{
    asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)tmap) : "memory");
}

#endif
