/* compare/kernel_copy.cu: copies C <-> shadow scratch for strided and pointer-array batches, and builds scratch pointer arrays. */
#include <stdint.h>

#include "compare/kernel_check.cuh"
#include "compare/kernels.h"

namespace {

constexpr int kThreads = 256;
constexpr int kAlign = 256; /* bytes: the alignment a scratch item mirrors (cudaMalloc's) */

struct copy_args {
    int64_t m, n, batch;
    ozcmp_mat_view src;
    ozcmp_mat_out dst;
    double **ptrs_out;
    int mirror_align, copy;
};

}  // namespace

/* Grid: x over rows, y over columns, z over batch items (each loops). Block
 * (0, 0, b) writes item b's destination address when ptrs_out is set. */
__global__ void __launch_bounds__(kThreads) ozcmp_copy_kernel(copy_args a)
{
    for (int64_t b = blockIdx.z; b < a.batch; b += gridDim.z) {
        const double *S = a.src.array ? a.src.array[b] : a.src.base + b * a.src.stride;
        double *D;
        if (a.dst.array) {
            D = a.dst.array[b];
        } else {
            D = a.dst.base + b * a.dst.stride;
            if (a.mirror_align)
                D += ((uintptr_t)S % kAlign) / sizeof(double);
        }
        if (a.ptrs_out && blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0)
            a.ptrs_out[b] = D;
        if (!a.copy)
            continue;
        for (int64_t j = blockIdx.y; j < a.n; j += gridDim.y)
            for (int64_t i = (int64_t)blockIdx.x * kThreads + threadIdx.x; i < a.m; i += (int64_t)gridDim.x * kThreads)
                D[i + j * a.dst.ld] = S[i + j * a.src.ld];
    }
}

extern "C" int ozcmp_copy(int64_t m, int64_t n, int64_t batch, ozcmp_mat_view src, ozcmp_mat_out dst,
                           double **ptrs_out, int mirror_align, int copy, void *stream)
{
    if (batch <= 0 || (!ptrs_out && (!copy || m <= 0 || n <= 0)))
        return 0;
    copy_args a = {m, n, batch, src, dst, ptrs_out, mirror_align, copy && m > 0 && n > 0};
    dim3 grid(a.copy ? ozcmp_blocks(m, kThreads, 0x7fffffff) : 1u,
              a.copy ? ozcmp_blocks(n, 1, OZCMP_GRID_YZ_MAX) : 1u, ozcmp_blocks(batch, 1, OZCMP_GRID_YZ_MAX));
    ozcmp_copy_kernel<<<grid, kThreads, 0, (cudaStream_t)stream>>>(a);
    OZCMP_CHECK(cudaGetLastError());
    return 0;
}
