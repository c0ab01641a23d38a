/* kernels/oz2_crt.cu: the ozaki2 CRT and epilogue: N residue bytes per element -> exact X, signed fold, RN to double, ldexp(s + t - 2w), alpha/beta (ozaki2.md steps 3-4). */
#include "epilogue.cuh"
#include "oz2_params.h"

/* A thread per element of C, i along the warp (coalesced in the residue
 * planes and in C). Elements of special rows/columns are left to the
 * Inf/NaN fix-up, which runs after this kernel on the same stream. The CRT
 * constants stay in parameter space (__grid_constant__: no local copy). */
__global__ void __launch_bounds__(256) oz2_crt_kernel(const __grid_constant__ oz2_crt_consts cc, const oz2_crt_job job)
{
    const int64_t b = blockIdx.z;
    const int64_t i = (int64_t)blockIdx.x * 32 + threadIdx.x;
    if (i >= job.m)
        return;
    const char *slot = job.ws + b * job.slot_bytes;
    const int32_t s = ((const int32_t *)(slot + job.off_scale_a))[i];
    const uint8_t *res = (const uint8_t *)(slot + job.off_res);
    const int64_t plane = job.Mpad * job.Npad;
    double *C = job.c.ptr(b);
    double alpha, beta;
    job.sc.load(&alpha, &beta);
    for (int64_t j = (int64_t)blockIdx.y * 8 + threadIdx.y; j < job.n; j += (int64_t)gridDim.y * 8) {
        double P = 0.0;
        if (!job.vanish) {
            const int32_t t = ((const int32_t *)(slot + job.off_scale_b))[j];
            if (s == OZ_SCALE_SPECIAL || t == OZ_SCALE_SPECIAL)
                continue;
            oz2_uint mag;
            int neg = oz2_crt_reconstruct(&cc, res + i + j * job.Mpad, plane, &mag);
            P = oz2_to_double(&mag, neg, s + t - 2 * job.w);
        }
        oz_store_epilogue(&C[i + j * job.c.ldc], alpha, beta, P, job.vanish);
    }
}

cudaError_t oz2_launch_crt(const oz2_crt_consts &cc, const oz2_crt_job &job, int64_t group, cudaStream_t s)
{
    int64_t by = (job.n + 7) / 8;
    dim3 grid((unsigned)((job.m + 31) / 32), (unsigned)(by < 65535 ? by : 65535), (unsigned)group);
    oz2_crt_kernel<<<grid, dim3(32, 8), 0, s>>>(cc, job);
    return cudaGetLastError();
}
