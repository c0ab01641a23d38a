/* tests/gpu/bench_p22.cu: native DGEMM, cuBLAS's own INT8 GEMM (the engine's yardstick), the engine alone and the whole Phase 22 path, side by side in one process. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "cublas_util.h"
#include "kernels/engine.h"
#include "kernels/ozcrt_gemm.h"

/* Test hooks of the test build (kernels/gemm_host.cu): plan the engine path
 * for this budget; run the mma.sync kernels (2: large tiles) instead. */
extern "C" void oz_gemm_force_budget(size_t bytes);
extern "C" void oz_gemm_force_tiles(int which);
extern "C" void oz_gemm_force_p22_path(int which);

/* n bytes of a fixed pseudo-random sequence (splitmix64 of the index) */
__global__ void fill_random_bytes(int8_t *p, size_t n, uint64_t seed)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        p[i] = (int8_t)(z ^ (z >> 31));
    }
}

/* Sustained time per call in ms: warm-up, a first estimate, then enough
 * back-to-back calls between two events for about `target_ms` (>= 10 calls). */
template <class F>
static double sustained_ms(F f, double target_ms = 1000.0)
{
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    f();
    f();
    CUDA_CHECK(cudaEventRecord(e0));
    f();
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float est = 0;
    CUDA_CHECK(cudaEventElapsedTime(&est, e0, e1));
    int iters = (int)(target_ms / (est > 0.01 ? est : 0.01));
    iters = iters < 10 ? 10 : iters > 200 ? 200 : iters;
    CUDA_CHECK(cudaEventRecord(e0));
    for (int i = 0; i < iters; i++)
        f();
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    return t / iters;
}

/* The Phase 22 column's workspace: planned for `budget` (test hook) when it
 * is set, else at least what the shim asks for (oz_gemm_workspace_full: its
 * plan in the bound). The budget stays forced until the caller clears it. */
static size_t p22_workspace(const oz_gemm_desc *d, size_t budget)
{
    oz_gemm_force_budget(budget);
    if (budget)
        return oz_gemm_workspace_full(d);
    /* the mma.sync layout's residues of all of K (the test
     * build's minimum, ~36-44 MiB at 1024^3) are smaller than the engine
     * path's whole plan at small sizes (1024^3: residues 24 MiB and the
     * fused kernel's scratch 32 MiB), which then ran in blocks of C
     * (likely why session 9 read 0.18 ms at 1024^3 here against the
     * shim's 0.107; not GPU-run yet) */
    return std::max(oz_gemm_workspace_min(d), oz_gemm_workspace_full(d));
}

int main(int argc, char **argv)
{
    /* shapes: "n" (square) or "mxnxk" */
    std::vector<int64_t> ms, ns, ks;
    bool p22_only = false; /* --p22-only: two calls of the Phase 22 path per shape, nothing else (for ncu) */
    size_t budget = 0;     /* --budget MiB: the p22 column planned for this workspace instead of the bound */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--budget") && i + 1 < argc) {
            budget = (size_t)strtoull(argv[++i], NULL, 10) << 20;
            continue;
        }
        if (!strcmp(argv[i], "--p22-only")) {
            p22_only = true;
            continue;
        }
        if (!strcmp(argv[i], "--sm80")) { /* the Phase 22 columns time the mma.sync path (A100's) */
            oz_gemm_force_tiles(2);
            continue;
        }
        if (!strcmp(argv[i], "--fused") || !strcmp(argv[i], "--unfused")) { /* the engine's Phase 22 path, whatever the rule */
            oz_gemm_force_p22_path(argv[i][2] == 'f' ? 1 : 2);
            continue;
        }
        long long a = 0, b = 0, c = 0;
        if (sscanf(argv[i], "%lldx%lldx%lld", &a, &b, &c) == 3) {
            ms.push_back(a), ns.push_back(b), ks.push_back(c);
        } else if (sscanf(argv[i], "%lld", &a) == 1) {
            ms.push_back(a), ns.push_back(a), ks.push_back(a);
        }
    }
    if (ms.empty())
        for (int64_t s : {2048, 4096, 8192})
            ms.push_back(s), ns.push_back(s), ks.push_back(s);
    size_t amax = 0, bmax = 0, cmax = 0;
    for (size_t i = 0; i < ms.size(); i++) {
        amax = std::max(amax, (size_t)(ms[i] * ks[i]));
        bmax = std::max(bmax, (size_t)(ks[i] * ns[i]));
        cmax = std::max(cmax, (size_t)(ms[i] * ns[i]));
    }
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    std::vector<double> H(std::max(amax, bmax));
    double *dA, *dB, *dC;
    CUDA_CHECK(cudaMalloc(&dA, 8 * amax));
    CUDA_CHECK(cudaMalloc(&dB, 8 * bmax));
    CUDA_CHECK(cudaMalloc(&dC, 8 * cmax));
    for (size_t i = 0; i < amax; i++) H[i] = rng_sym();
    CUDA_CHECK(cudaMemcpy(dA, H.data(), 8 * amax, cudaMemcpyHostToDevice));
    for (size_t i = 0; i < bmax; i++) H[i] = rng_sym();
    CUDA_CHECK(cudaMemcpy(dB, H.data(), 8 * bmax, cudaMemcpyHostToDevice));
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));

    const bool engine = oz_engine_usable(dev);

    printf("%-17s %9s %7s %9s %8s %9s %9s %8s %8s %9s %7s %9s %9s\n", "m x n x k", "native", "TFLOPS", "int8 cuB", "TOPS",
           "i8 const", "engine", "TOPS", "eng/cuB", "p22 ms", "p22/nat", "bounded", "max|diff|");
    for (size_t s = 0; s < ms.size(); s++) {
        const int64_t m = ms[s], n = ns[s], k = ks[s];
        const double one = 1.0, zero = 0.0;
        if (p22_only) {
            oz_gemm_desc d = {0, 0, m, n, k, dA, m, 0, dB, k, 0, dC, m, 0, NULL, NULL, NULL, 1, &one, &zero, 0, OZ_ELEM_REAL, NULL};
            size_t wsb = p22_workspace(&d, budget);
            void *ws;
            CUDA_CHECK(cudaMalloc(&ws, wsb));
            for (int i = 0; i < 2; i++)
                CUDA_CHECK((cudaError_t)oz_gemm_run(&d, ws, wsb, 0));
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaFree(ws));
            oz_gemm_force_budget(0);
            continue;
        }
        double tn = sustained_ms([&] {
            CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &one, dA, (int)m, dB, (int)k, &zero,
                               dC, (int)m));
        });
        std::vector<double> Cn((size_t)(m * n)), Cp((size_t)(m * n));
        CUDA_CHECK(cudaMemcpy(Cn.data(), dC, 8 * m * n, cudaMemcpyDeviceToHost));

        /* cuBLAS INT8 (s8 x s8 -> s32, TN: both K-major), on the same m x n x k */
        int8_t *i8a, *i8b;
        int32_t *i32c;
        CUDA_CHECK(cudaMalloc(&i8a, (size_t)(m * k)));
        CUDA_CHECK(cudaMalloc(&i8b, (size_t)(n * k)));
        CUDA_CHECK(cudaMalloc(&i32c, (size_t)(4 * m * n)));
        const int32_t ione = 1, izero = 0;
        auto int8_ms = [&] {
            return sustained_ms([&] {
                CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)m, (int)n, (int)k, &ione, i8a, CUDA_R_8I,
                                          (int)k, i8b, CUDA_R_8I, (int)k, &izero, i32c, CUDA_R_32I, (int)m,
                                          CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
            });
        };
        /* the yardstick on random bytes, as the engine's residues are; constant
         * bytes (as run 35 and before) toggle fewer bits, draw less power and
         * run at higher clocks: printed beside it */
        fill_random_bytes<<<1024, 256>>>(i8a, (size_t)(m * k), 0x9e3779b97f4a7c15ULL);
        fill_random_bytes<<<1024, 256>>>(i8b, (size_t)(n * k), 0xd1b54a32d192ed03ULL);
        CUDA_CHECK(cudaGetLastError());
        const double ti = int8_ms();
        CUDA_CHECK(cudaMemset(i8a, 0x35, (size_t)(m * k)));
        CUDA_CHECK(cudaMemset(i8b, 0xc7, (size_t)(n * k)));
        const double ti_const = int8_ms();
        CUDA_CHECK(cudaFree(i8a));
        CUDA_CHECK(cudaFree(i8b));
        CUDA_CHECK(cudaFree(i32c));

        /* the engine alone: Phase 22's 24 GEMMs as 6 moduli of (2m x k) x (2n x k), residues out */
        double te = 0;
        if (engine) {
            const int64_t ra = 2 * ((m + 127) / 128 * 128), rb = 2 * ((n + 127) / 128 * 128);
            const int64_t kp = (k + 127) / 128 * 128, nmod = OZ_P22G_NMODULI;
            int8_t *ws;
            uint8_t *res;
            CUDA_CHECK(cudaMalloc(&ws, (size_t)(nmod * (ra + rb) * kp)));
            CUDA_CHECK(cudaMalloc(&res, (size_t)(nmod * ra * rb)));
            /* random bytes, as the yardstick's (constant bytes run ~15-25% faster: power) */
            fill_random_bytes<<<1024, 256>>>((int8_t *)ws, (size_t)(nmod * (ra + rb) * kp), 0x2545f4914f6cdd1dULL);
            CUDA_CHECK(cudaGetLastError());
            oz_engine_residue_job job = {};
            job.a = oz_operand_ws{(char *)ws, 0, 0, 0, 0, ra, kp, ra};
            job.b = oz_operand_ws{(char *)ws, 0, nmod * ra * kp, 0, 0, rb, kp, rb};
            job.m = ra;
            job.n = rb;
            job.nmod = (int)nmod;
            job.res = res;
            job.res_item_bytes = nmod * ra * rb;
            CUDA_CHECK(cudaMalloc(&job.tickets, 2 * sizeof(unsigned long long)));
            CUDA_CHECK(cudaMemset(job.tickets, 0, 2 * sizeof(unsigned long long)));
            te = sustained_ms([&] { CUDA_CHECK(oz_engine_residues(job, 1, 0)); });
            CUDA_CHECK(cudaFree(job.tickets));
            CUDA_CHECK(cudaFree(ws));
            CUDA_CHECK(cudaFree(res));
        }

        oz_gemm_desc d = {0, 0, m, n, k, dA, m, 0, dB, k, 0, dC, m, 0, NULL, NULL, NULL, 1, &one, &zero, 0, OZ_ELEM_REAL, NULL};
        size_t wsb = p22_workspace(&d, budget);
        void *ws;
        CUDA_CHECK(cudaMalloc(&ws, wsb));
        CUDA_CHECK(cudaMemset(dC, 0xff, 8 * m * n)); /* poison */
        double tp = sustained_ms([&] { CUDA_CHECK((cudaError_t)oz_gemm_run(&d, ws, wsb, 0)); });
        oz_gemm_force_budget(0);
        /* the same in the shipped library's bounded workspace (kernels/block_plan.h:
         * max(1 GiB, a quarter of the operands' bytes)): blocks of C, slabs of K */
        const double quarter = 0.25 * 8.0 * ((double)m * k + (double)k * n + (double)m * n);
        oz_gemm_force_budget((size_t)std::max(quarter, (double)(1ull << 30)));
        double tb = sustained_ms([&] { CUDA_CHECK((cudaError_t)oz_gemm_run(&d, ws, wsb, 0)); });
        oz_gemm_force_budget(0);
        CUDA_CHECK(cudaFree(ws));
        CUDA_CHECK(cudaMemcpy(Cp.data(), dC, 8 * m * n, cudaMemcpyDeviceToHost));
        double err = 0;
        for (size_t i = 0; i < Cp.size(); i++) {
            double e = fabs(Cp[i] - Cn[i]);
            if (!(e <= err))
                err = e;
        }
        const double flop = 2.0 * m * n * k, p22ops = 4.0 * OZ_P22G_NMODULI * flop;
        char shape[40];
        snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)m, (long long)n, (long long)k);
        printf("%-17s %9.3f %7.2f %9.3f %8.1f %9.3f %9.3f %8.1f %8.3f %9.3f %7.3f %9.3f %9.2e\n", shape, tn,
               flop / tn / 1e9, ti, flop / ti / 1e9, ti_const, te, te > 0 ? p22ops / te / 1e9 : 0.0, te > 0 ? (p22ops / te) / (flop / ti) : 0.0, tp,
               tn / tp, tb, err);
        fflush(stdout);
    }
    printf("(ms per call, sustained; int8 cuB: cuBLAS's INT8 GemmEx on random bytes, i8 const: on constant bytes;\n"
           " TOPS of the engine count Phase 22's %d INT8 GEMMs; p22/nat = native time / Phase 22 time;\n"
           " p22 with the residues of all of K at once (--budget: in a workspace planned for that budget),\n"
           " bounded: in the shipped workspace bound)\n",
           4 * OZ_P22G_NMODULI);
    return 0;
}
