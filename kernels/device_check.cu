/* kernels/device_check.cu: whether this binary holds a kernel image a device can run (oz_gemm_device_supported). */
#include <cuda_runtime.h>

#include "kernels/ozcrt_gemm.h"

/* Never launched. Built with the same -gencode flags as the Phase 22 kernels
 * (meson option `gencode`), so the runtime has an image of it for a device
 * exactly when it has one of them: machine code for that architecture, or
 * the embedded PTX, compiled by the driver at the first use. */
__global__ void oz_device_check_probe_kernel() {}

extern "C" int oz_gemm_device_supported(int device)
{
    int cur = -1;
    cudaError_t e = cudaGetDevice(&cur);
    if (e == cudaSuccess && cur != device)
        e = cudaSetDevice(device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    cudaFuncAttributes attr;
    e = cudaFuncGetAttributes(&attr, oz_device_check_probe_kernel);
    int ok = e == cudaSuccess;
    if (!ok)
        (void)cudaGetLastError(); /* cudaErrorNoKernelImageForDevice, cudaErrorInvalidDeviceFunction: not sticky */
    if (cur != device && cudaSetDevice(cur) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0; /* the caller's device could not be restored: do not run there either */
    }
    return ok;
}
