/* compare/kernel_check.cuh: the error check of the shadow-mode kernels' launchers (kernel_*.cu). */
#ifndef OZCRT_COMPARE_KERNEL_CHECK_CUH
#define OZCRT_COMPARE_KERNEL_CHECK_CUH

#include <cuda_runtime.h>
#include <stdio.h>

/* Returns the cudaError_t of `call` from the enclosing function when it is
 * not cudaSuccess, after one line on stderr naming the call, file and line. */
#define OZCMP_CHECK(call)                                                                  \
    do {                                                                                    \
        cudaError_t ozcmp_err_ = (call);                                                   \
        if (ozcmp_err_ != cudaSuccess) {                                                   \
            fprintf(stderr, "ozcrt: %s failed at %s:%d: %s\n", #call, __FILE__, __LINE__,  \
                    cudaGetErrorString(ozcmp_err_));                                       \
            return (int)ozcmp_err_;                                                        \
        }                                                                                   \
    } while (0)

/* Grid limits of the y and z dimensions. */
#define OZCMP_GRID_YZ_MAX 65535

static inline unsigned ozcmp_blocks(int64_t n, int64_t per, int64_t cap)
{
    int64_t b = (n + per - 1) / per;
    return (unsigned)(b < 1 ? 1 : b > cap ? cap : b);
}

#endif
