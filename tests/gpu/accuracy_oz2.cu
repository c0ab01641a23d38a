/* tests/gpu/accuracy_oz2.cu: the README's accuracy table: max and median elementwise relative error against a double-double reference for native DGEMM, phase22 and ozaki2 (bits 34/45/53/60), with times; checks the ozaki2 bound on every element.
 *
 *   accuracy_oz2 [n ...]          square sizes, default 4096 (the README also wants 8192)
 *
 * Data: U(-1,1), and a = (U - 1/2) exp(phi N(0,1)) for phi = 0.5, 2, 4
 * (exponent spread). The reference is a double-double dot product on the GPU
 * (TwoProd by fma, TwoSum), whose own error (about k 2^-104 relative to
 * sum |a b|) is far below every error measured here. Relative errors are
 * |C - ref| / |ref| per element (elements with ref == 0 are skipped).
 * Checks (exit 1 on failure): every ozaki2 element within
 * reference/oz2bound.h; the issue's accuracy acceptance at 53 bits on U(-1,1)
 * (max no worse than native DGEMM's, median better) is printed as PASS/FAIL. */
#include <algorithm>
#include <vector>


#include "crt/oz2.h"
#include "crt/oz2_auto.h"
#include "cublas_util.h"
#include "kernels/oz2_auto_estimate.h"
#include <string>
#include "kernels/oz2_gemm.h"
#include "kernels/ozcrt_gemm.h"
#include "reference/oz2bound.h"
#include "slicing/slicing.h"


#define DD_TILE 16

/* C = A B (column-major, n x n) in double-double: hi and lo parts. */
__global__ void dd_gemm_kernel(const double *A, const double *B, double *hi_out, double *lo_out, int64_t n)
{
    __shared__ double sa[DD_TILE][DD_TILE + 1], sb[DD_TILE][DD_TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t i = (int64_t)blockIdx.x * DD_TILE + tx, j = (int64_t)blockIdx.y * DD_TILE + ty;
    double hi = 0.0, lo = 0.0;
    for (int64_t k0 = 0; k0 < n; k0 += DD_TILE) {
        /* sa[kk][row]: A[row, k0 + kk]; sb[col][kk]: B[k0 + kk, col] */
        int64_t ar = (int64_t)blockIdx.x * DD_TILE + tx, ak = k0 + ty;
        sa[ty][tx] = (ar < n && ak < n) ? A[ar + ak * n] : 0.0;
        int64_t bk = k0 + tx, bc = (int64_t)blockIdx.y * DD_TILE + ty;
        sb[ty][tx] = (bk < n && bc < n) ? B[bk + bc * n] : 0.0;
        __syncthreads();
        for (int kk = 0; kk < DD_TILE; kk++) {
            double a = sa[kk][tx], b = sb[ty][kk];
            double p = __dmul_rn(a, b);
            double e = fma(a, b, -p);               /* a b = p + e exactly */
            double s = __dadd_rn(hi, p);            /* TwoSum(hi, p) */
            double bb = __dsub_rn(s, hi);
            double err = __dadd_rn(__dsub_rn(hi, __dsub_rn(s, bb)), __dsub_rn(p, bb));
            double t = __dadd_rn(lo, __dadd_rn(err, e));
            hi = __dadd_rn(s, t);                   /* FastTwoSum(s, t) */
            lo = __dsub_rn(t, __dsub_rn(hi, s));
        }
        __syncthreads();
    }
    if (i < n && j < n) {
        hi_out[i + j * n] = hi;
        lo_out[i + j * n] = lo;
    }
}

enum { D_U, D_PHI05, D_PHI2, D_PHI4, D_N };
static const char *const dist_name[D_N] = {"U(-1,1)", "phi=0.5", "phi=2", "phi=4"};
static const double dist_phi[D_N] = {0.0, 0.5, 2.0, 4.0};

static double gen(int dist)
{
    if (dist == D_U)
        return rng_sym();
    return (rng_unit() - 0.5) * exp(dist_phi[dist] * rng_normal());
}

struct errstats {
    double max_rel, median_rel;
    size_t beyond_bound;
};

static int g_failures;

/* Max and median relative error of C against (hi + lo); with bits > 0 also
 * the ozaki2 bound, element by element. */
static errstats measure(const std::vector<double> &C, const std::vector<double> &hi, const std::vector<double> &lo,
                        int64_t n, int bits, const std::vector<double> &A, const std::vector<double> &B)
{
    errstats r = {0.0, 0.0, 0};
    std::vector<double> rel;
    rel.reserve((size_t)(n * n));
    std::vector<int> s, t;
    std::vector<double> na, nb;
    int w = 0;
    if (bits > 0) {
        oz2_plan plan = oz2_make_plan(n, bits);
        w = plan.w;
        s.resize(n), t.resize(n), na.resize(n), nb.resize(n);
        for (int64_t i = 0; i < n; i++) {
            double ma = 0, mb = 0, sa = 0, sb = 0;
            for (int64_t kk = 0; kk < n; kk++) {
                double x = A[i + kk * n], y = B[kk + i * n];
                ma = fmax(ma, fabs(x)), mb = fmax(mb, fabs(y));
                sa += fabs(x), sb += fabs(y);
            }
            s[i] = oz_scale_exponent(ma), t[i] = oz_scale_exponent(mb);
            na[i] = sa, nb[i] = sb;
        }
    }
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            size_t x = (size_t)(i + j * n);
            double ref = hi[x] + lo[x];
            double err = fabs((C[x] - hi[x]) - lo[x]);
            if (ref != 0.0)
                rel.push_back(err / fabs(ref));
            if (bits > 0) {
                double term = oz2_rounding_term(na[i], nb[j], s[i], t[j], w, n);
                double P_ub = fabs(ref) * (1 + 0x1p-50) + 2 * term;
                double bound = oz2_error_bound(1.0, 0.0, 0.0, P_ub, na[i], nb[j], s[i], t[j], w, n);
                double tol = ldexp((double)n, s[i] + t[j] - 100); /* the reference's own error */
                if (!(err <= bound + tol))
                    r.beyond_bound++;
            }
        }
    if (!rel.empty()) {
        r.max_rel = *std::max_element(rel.begin(), rel.end());
        std::nth_element(rel.begin(), rel.begin() + rel.size() / 2, rel.end());
        r.median_rel = rel[rel.size() / 2];
    }
    return r;
}

/* Median of 3 timed runs of fn (ms). */
template <class F> static float time_ms(F fn)
{
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    float t[3];
    for (int r = 0; r < 3; r++) {
        CUDA_CHECK(cudaEventRecord(e0));
        fn();
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaEventElapsedTime(&t[r], e0, e1));
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    std::sort(t, t + 3);
    return t[1];
}

static void run_size(cublasHandle_t h, int64_t n)
{
    const size_t nn = (size_t)(n * n);
    std::vector<double> A(nn), B(nn), C(nn), hi(nn), lo(nn);
    double *dA, *dB, *dC, *dH, *dL;
    CUDA_CHECK(cudaMalloc((void **)&dA, 8 * nn));
    CUDA_CHECK(cudaMalloc((void **)&dB, 8 * nn));
    CUDA_CHECK(cudaMalloc((void **)&dC, 8 * nn));
    CUDA_CHECK(cudaMalloc((void **)&dH, 8 * nn));
    CUDA_CHECK(cudaMalloc((void **)&dL, 8 * nn));
    const double one = 1.0, zero = 0.0;
    oz_gemm_desc d = {0, 0, n, n, n, dA, n, 0, dB, n, 0, dC, n, 0, NULL, NULL, NULL, 1, &one, &zero, 0, OZ_ELEM_REAL, NULL};
    /* fixed widths, then automatic precision at 2^-53 and 2^-45 (docs/ozaki2-auto.md) */
    static const int bits_list[6] = {34, 45, 53, 60, OZ2A_AUTO(53), OZ2A_AUTO(45)};
    size_t wsb = oz_gemm_workspace_min(&d);
    for (int b = 0; b < 6; b++)
        wsb = std::max(wsb, oz2_gemm_workspace_min(&d, bits_list[b]));
    void *ws;
    CUDA_CHECK(cudaMalloc(&ws, wsb));
    const double flop = 2.0 * (double)n * (double)n * (double)n;

    for (int dist = 0; dist < D_N; dist++) {
        for (size_t i = 0; i < nn; i++) A[i] = gen(dist);
        for (size_t i = 0; i < nn; i++) B[i] = gen(dist);
        CUDA_CHECK(cudaMemcpy(dA, A.data(), 8 * nn, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(dB, B.data(), 8 * nn, cudaMemcpyHostToDevice));
        dim3 grid((unsigned)((n + DD_TILE - 1) / DD_TILE), (unsigned)((n + DD_TILE - 1) / DD_TILE));
        dd_gemm_kernel<<<grid, dim3(DD_TILE, DD_TILE)>>>(dA, dB, dH, dL, n);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(hi.data(), dH, 8 * nn, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(lo.data(), dL, 8 * nn, cudaMemcpyDeviceToHost));
        printf("\n%ld^3, %s\n", (long)n, dist_name[dist]);
        printf("| method | N | max rel err | median rel err | time ms | TFLOPS | beyond bound |\n|---|---|---|---|---|---|---|\n");

        float ms = time_ms([&] { CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, dA,
                                                          (int)n, dB, (int)n, &zero, dC, (int)n)); });
        CUDA_CHECK(cudaMemcpy(C.data(), dC, 8 * nn, cudaMemcpyDeviceToHost));
        errstats native = measure(C, hi, lo, n, 0, A, B);
        printf("| native DGEMM | - | %.3e | %.3e | %.2f | %.1f | - |\n", native.max_rel, native.median_rel, ms,
               flop / ms * 1e-9);

        int rc = 0;
        ms = time_ms([&] { rc |= oz_gemm_run(&d, ws, wsb, NULL); });
        CUDA_CHECK(cudaMemcpy(C.data(), dC, 8 * nn, cudaMemcpyDeviceToHost));
        errstats p22 = measure(C, hi, lo, n, 0, A, B);
        printf("| phase22 | - | %.3e | %.3e | %.2f | %.1f | - |%s\n", p22.max_rel, p22.median_rel, ms,
               flop / ms * 1e-9, rc ? " launch FAILED" : "");
        g_failures += rc != 0;

        for (int b = 0; b < 6; b++) {
            const int bits = bits_list[b], is_auto = oz2a_is_auto(bits);
            rc = 0;
            ms = time_ms([&] { rc |= oz2_gemm_run(&d, bits, ws, wsb, NULL); });
            CUDA_CHECK(cudaMemcpy(C.data(), dC, 8 * nn, cudaMemcpyDeviceToHost));
            errstats o = measure(C, hi, lo, n, is_auto ? 0 : bits, A, B); /* auto: its guarantee is test_oz2auto's */
            int N = oz2_gemm_moduli(n, bits, NULL), w = 0;
            if (is_auto) { /* the plan the device chose: at the workspace's start */
                oz2a_dev_plan p;
                CUDA_CHECK(cudaMemcpy(&p, ws, sizeof p, cudaMemcpyDeviceToHost));
                N = p.n, w = p.w;
            }
            char label[48];
            snprintf(label, sizeof label, is_auto ? "ozaki2 auto:%d (w %d)" : "ozaki2 bits %d", is_auto ? oz2a_target(bits) : bits, w);
            printf("| %s | %d | %.3e | %.3e | %.2f | %.1f | %s |%s\n", label, N, o.max_rel, o.median_rel, ms,
                   flop / ms * 1e-9, is_auto ? "-" : std::to_string(o.beyond_bound).c_str(), rc ? " launch FAILED" : "");
            if (is_auto && oz2a_target(bits) == 53)
                printf("auto vs native (%s): max %s, median %s\n", dist_name[dist], o.max_rel <= native.max_rel ? "<=" : ">",
                       o.median_rel <= native.median_rel ? "<=" : ">");
            g_failures += rc != 0 || o.beyond_bound != 0;
            if (dist == D_U && bits_list[b] == 53)
                printf("acceptance (bits 53, U(-1,1)): max %s native's, median %s native's: %s\n",
                       o.max_rel <= native.max_rel ? "<=" : ">", o.median_rel < native.median_rel ? "<" : ">=",
                       o.max_rel <= native.max_rel && o.median_rel < native.median_rel ? "PASS" : "FAIL (target)");
        }
    }
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    CUDA_CHECK(cudaFree(dH));
    CUDA_CHECK(cudaFree(dL));
}

int main(int argc, char **argv)
{
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    rng_state ^= 20261130;
    std::vector<int64_t> sizes;
    for (int i = 1; i < argc; i++)
        sizes.push_back(atoll(argv[i]));
    if (sizes.empty())
        sizes.push_back(4096);
    int dev = 0;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    printf("accuracy_oz2 on %s; reference: double-double; residue engine: %s\n", prop.name,
           oz2_gemm_sm90_engine() ? "sm_90a" : "portable");
    for (int64_t n : sizes)
        run_size(h, n);
    CUBLAS_CHECK(cublasDestroy(h));
    printf("\naccuracy_oz2: %d failures (launch errors or elements beyond the ozaki2 bound)\n", g_failures);
    printf("%d passed, %d failed\n", g_failures ? 0 : 1, g_failures ? 1 : 0);
    return g_failures ? 1 : 0;
}
