/* tests/gpu/bench_bw.cu: the DRAM floors of the ozaki2 path's memory-bound kernels: a residue-like stream (8 bytes read, 16 written an element), a CRT-like one (16 read, 8 written) and a read-only one (the scales), at 16384^2 elements, N = 16 planes (BENCHMARKS.md session 13, call 1). */
#include <cstdint>
#include <cstdio>

#include "gpu_util.h"

constexpr int NP = 16;
/* residue-like: each thread reads 8 doubles (64 B), writes 8 bytes to each of NP planes */
__global__ void expand(const double2 *__restrict__ x, uint2 *__restrict__ out, int64_t nthreads, int64_t plane_words)
{
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < nthreads;
         t += (int64_t)gridDim.x * blockDim.x) {
        double2 v0 = x[4 * t], v1 = x[4 * t + 1], v2 = x[4 * t + 2], v3 = x[4 * t + 3];
        uint32_t h =
            (uint32_t)__double2int_rz(v0.x + v0.y + v1.x + v1.y) ^ (uint32_t)__double2int_rz(v2.x + v2.y + v3.x + v3.y);
#pragma unroll
        for (int q = 0; q < NP; q++)
            out[q * plane_words + t] = make_uint2(h + q, h * q);
    }
}
/* CRT-like: each thread reads one word from each of NP planes (4 elements), writes 4 doubles */
__global__ void contract(const uint32_t *__restrict__ in, double *__restrict__ c, int64_t nthreads, int64_t plane_words)
{
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < nthreads;
         t += (int64_t)gridDim.x * blockDim.x) {
        uint32_t s = 0;
#pragma unroll
        for (int q = 0; q < NP; q++)
            s += in[q * plane_words + t] * (q + 1);
        double d = (double)s;
        c[4 * t] = d;
        c[4 * t + 1] = d + 1;
        c[4 * t + 2] = d + 2;
        c[4 * t + 3] = d + 3;
    }
}
__global__ void readonly(const double2 *__restrict__ x, double *out, int64_t n2)
{
    double s = 0;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n2; t += (int64_t)gridDim.x * blockDim.x) {
        double2 v = x[t];
        s += v.x + v.y;
    }
    if (s == 1.2345)
        out[0] = s;
}
int main()
{
    const int64_t n = 16384LL * 16384; /* elements */
    double *x, *c;
    uint8_t *planes;
    CUDA_CHECK(cudaMalloc(&x, n * 8));
    CUDA_CHECK(cudaMalloc(&c, n * 8));
    CUDA_CHECK(cudaMalloc(&planes, n * NP));
    CUDA_CHECK(cudaMemset(x, 0x3f, n * 8));
    CUDA_CHECK(cudaMemset(planes, 1, n * NP));
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int kind = 0; kind < 3; kind++)
        for (int bps = 2; bps <= 16; bps *= 2) {
            auto launch = [&]() {
                const int g = sms * bps;
                if (kind == 0)
                    expand<<<g, 256>>>((const double2 *)x, (uint2 *)planes, n / 8, n / 8);
                else if (kind == 1)
                    contract<<<g, 256>>>((const uint32_t *)planes, c, n / 4, n / 4);
                else
                    readonly<<<g, 256>>>((const double2 *)x, c, n / 2);
            };
            for (int i = 0; i < 5; i++)
                launch();
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaEventRecord(e0));
            const int it = 50;
            for (int i = 0; i < it; i++)
                launch();
            CUDA_CHECK(cudaEventRecord(e1));
            CUDA_CHECK(cudaEventSynchronize(e1));
            float ms;
            CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
            ms /= it;
            const double bytes = kind < 2 ? n * (8.0 + NP) : n * 8.0; /* expand and contract move the same bytes */
            const char *nm[] = {"expand(res-like) 2.1R+4.3W", "contract(crt-like) 4.3R+2.1W", "read-only 2.1R"};
            printf("%-30s blocks/SM %2d: %.3f ms  %.2f TB/s\n", nm[kind], bps, ms, bytes / ms / 1e9);
        }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(c));
    CUDA_CHECK(cudaFree(planes));
    return 0;
}
