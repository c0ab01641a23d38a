/* kernels/sm90_p22_gemm.cu: the fused Phase 22 kernel on wgmma.mma_async m64n128k32 s8 (sm_90a): its Mma policy and launcher.
 *
 * Built for sm_90a only (meson: kernels_sm90). Two warpgroups per 128x128
 * CTA tile, each 64 x 128; both operands K-major in shared memory, in the
 * 128-byte swizzle layout the fused kernel already writes (piece c of row r
 * at c ^ (r % 8), rows of 128 bytes, 1024-byte aligned atoms of 8 rows). */
#include "p22_fused.cuh"

/* Shared-memory matrix descriptor: start address, stride between 8-row
 * atoms (1024 bytes), 128-byte swizzle; the leading offset is unused for
 * swizzled K-major layouts. */
__device__ __forceinline__ uint64_t oz_wgmma_desc(uint32_t smem)
{
    return (uint64_t)((smem & 0x3FFFF) >> 4) | ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 62);
}

/* d (64 x 128 s32, this thread's 64) += A (64 x 32 s8) * B (32 x 128 s8), both from shared memory. */
__device__ __forceinline__ void oz_wgmma_m64n128k32(int32_t *d, uint64_t da, uint64_t db)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("{\n"
                 "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1;\n"
                 "}\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])
                 : "l"(da), "l"(db)
                 : "memory");
#else
    (void)d, (void)da, (void)db;
    __trap(); /* never launched: oz_p22_sm90_usable() checks the binary */
#endif
}

__device__ __forceinline__ void oz_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void oz_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void oz_wgmma_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }

/* Warpgroup w (threads 128w..) owns rows 64w.. of the tile. Element idx of a
 * thread (warp v of its warpgroup, g = lane/4, t = lane%4) is at row
 * 16v + g + 8((idx%4)/2), column 8(idx/4) + 2t + idx%2 of its 64 x 128. */
template <class Cfg>
struct oz_mma_sm90 {
    static_assert(Cfg::THREADS == 256 && Cfg::CTA_M == 128 && Cfg::CTA_N == 128 && Cfg::K_STAGE == 128,
                  "two warpgroups of m64n128, 128-byte rows");
    static constexpr int ELEMS = 64;
    int row0, col0;
    uint32_t a_off;

    __device__ explicit oz_mma_sm90(int tid)
    {
        const int wg = tid >> 7, v = (tid >> 5) & 3, lane = tid & 31;
        row0 = wg * 64 + 16 * v + (lane >> 2);
        col0 = 2 * (lane & 3);
        a_off = wg * 64 * Cfg::K_STAGE;
    }
    __device__ int row(int idx) const { return row0 + 8 * ((idx & 3) >> 1); }
    __device__ int col(int idx) const { return col0 + 8 * (idx >> 2) + (idx & 1); }
    /* cp.async wrote the stage through the generic proxy; wgmma reads it through the async proxy. */
    static __device__ void stage_landed() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

    __device__ void stage(int32_t (&acc)[ELEMS], uint32_t sa_stage, uint32_t sb_stage) const
    {
        const uint64_t da = oz_wgmma_desc(sa_stage + a_off), db = oz_wgmma_desc(sb_stage);
        oz_wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < Cfg::K_STAGE / OZ_MMA_K; ks++) /* +32 bytes along K: +2 in the descriptor */
            oz_wgmma_m64n128k32(acc, da + 2 * ks, db + 2 * ks);
        oz_wgmma_commit();
        oz_wgmma_wait_all();
#pragma unroll
        for (int idx = 0; idx < ELEMS; idx++) /* the results exist only now: no read may move above the wait */
            asm volatile("" : "+r"(acc[idx])::"memory");
    }
};

/* Whether this binary holds the sm_90a kernel for device dev (compute capability 9.0). */
bool oz_p22_sm90_usable(int dev)
{
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    if (major != 9 || minor != 0)
        return false;
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, oz_p22_fused_kernel<oz_tiles_large, oz_mma_sm90<oz_tiles_large>, OZ_OUT_C>) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return attr.binaryVersion == 90;
}

cudaError_t oz_launch_p22_sm90(oz_gemm_params &p, int64_t group, cudaStream_t s, int dev)
{
    return oz_p22_launch<oz_tiles_large, oz_mma_sm90<oz_tiles_large>>(p, group, s, dev);
}
