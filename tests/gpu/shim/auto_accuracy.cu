/* tests/gpu/shim/auto_accuracy.cu: a plain cuBLAS program for automatic precision's accuracy table (auto_accuracy.sh runs it natively and under the shim).
 *
 *   auto_accuracy [--quick]
 *
 * Per dataset (docs/ozaki2-auto.md's acceptance list) it makes A (m x k) and
 * B (k x n) on the GPU from a counter-based hash (the same data in every
 * run), calls cublasDgemm_v2 (C = A B, alpha 1, beta 0: under the shim, the
 * call the shim decides about), and holds C against a double-double
 * reference computed here (every row at 2048, every 8th at 8192, every
 * 8th at the long k): max and median elementwise relative error |C - ref| /
 * |ref| (ref 0 skipped), and the number of elements beyond automatic
 * precision's guarantee with the result's rounding,
 *     |C - ref| > 2^-53 (|A||B|)_ij (1 + 2^-30) + 2^-53 |ref| + 2^-1070
 * (the slack 2^-30 covers the reference's own error, about k 2^-105 of |A||B|),
 * and of non-finite ones. Where libozcrt.so is loaded it reads its plans
 * (ozcrt_stats_auto_plans, looked up with dlsym: the program links no
 * ozcrt) and names each call's: N=.. (emulated), none (no plan certified it:
 * the GPU's plain dot product) or "-" (no plan made: the call went to
 * cuBLAS, e.g. by the speed rule). --quick: the 2048 cases only.
 * Prints one "case" line per dataset; exit 0 unless a CUDA or cuBLAS call
 * failed. */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "tests/gpu/cublas_util.h"

enum dataset {
    DS_UNIFORM, DS_PHI05, DS_PHI1, DS_PHI2, DS_PHI4, DS_PHI8, DS_ROWCOL, DS_INNER, DS_CANCEL, DS_SPARSE,
    DS_SPIKE, DS_INTEGER, DS_CONST, DS_POSITIVE, DS_COUNT
};
static const char *const ds_name[DS_COUNT] = {
    "U(-1,1)", "phi=0.5", "phi=1", "phi=2", "phi=4", "phi=8", "rows/cols*2^+-300", "inner*2^+-300",
    "cancelling", "90%-zero", "spike*2^40", "integers", "constant", "sign-aligned"};

__device__ __host__ inline uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
__device__ inline double unit(uint64_t h) { return (double)(h >> 11) * 0x1.0p-53 + 0x1.0p-54; } /* (0, 1) */
__device__ inline double sym(uint64_t h) { return 2.0 * unit(h) - 1.0; }
__device__ inline double normal(uint64_t h)
{
    return sqrt(-2.0 * log(unit(h))) * cos(6.283185307179586 * unit(mix(h ^ 0x5bd1e995ULL)));
}
/* an integer in [-300, 300] from index i of stream s */
__device__ inline int pow300(uint64_t s, int64_t i) { return (int)(mix(s * 0x100000001b3ULL + (uint64_t)i) % 601) - 300; }

/* Element (r, c) of A (which 0, m x k) or B (which 1, k x n). */
__device__ double element(int ds, int which, int64_t r, int64_t c, int64_t k)
{
    const uint64_t seed = 0x6f7a6372ULL * (uint64_t)(ds + 1) + (uint64_t)which;
    auto h = [&](int64_t rr, int64_t cc, uint64_t salt) { return mix(seed ^ mix((uint64_t)rr * 0x9E3779B97F4A7C15ULL ^ (uint64_t)cc ^ salt)); };
    const double u = sym(h(r, c, 0));
    const double phi[6] = {0.0, 0.5, 1.0, 2.0, 4.0, 8.0};
    switch (ds) {
    case DS_UNIFORM: return u;
    case DS_PHI05: case DS_PHI1: case DS_PHI2: case DS_PHI4: case DS_PHI8:
        return (unit(h(r, c, 1)) - 0.5) * exp(phi[ds] * normal(h(r, c, 2)));
    case DS_ROWCOL: /* A's rows and B's columns scaled by powers of two */
        return ldexp(u, which == 0 ? pow300(seed, r) : pow300(seed, c));
    case DS_INNER: { /* A's columns and B's rows by opposite powers: the products unscaled, the rows spread */
        const int64_t kk = which == 0 ? c : r;
        const int e = pow300(0x1234ULL, kk);
        return ldexp(u, which == 0 ? e : -e);
    }
    case DS_CANCEL: { /* A = [A1, A1 (1 + 2^-30 v)], B = [B1; -B1]: C = -2^-30 A1 diag(v) B1 */
        const int64_t half = k / 2, kk = which == 0 ? c : r;
        if (kk < half || kk >= 2 * half)
            return which == 0 ? sym(h(r, kk, 0)) : sym(h(kk, c, 0));
        if (which == 0)
            return sym(h(r, kk - half, 0)) * (1.0 + 0x1p-30 * sym(h(r, kk, 3)));
        return -sym(h(kk - half, c, 0));
    }
    case DS_SPARSE: /* 90% of A's elements zero */
        return which == 0 && unit(h(r, c, 4)) < 0.9 ? 0.0 : u;
    case DS_SPIKE: /* one element a row of A 2^40 times the rest */
        return which == 0 && (uint64_t)c == mix(seed ^ (uint64_t)r) % (uint64_t)k ? ldexp(u, 40) : u;
    case DS_INTEGER: return rint(1000.0 * u);
    case DS_CONST: return 0.7;
    default: return unit(h(r, c, 5)); /* DS_POSITIVE */
    }
}

__global__ void gen_kernel(double *X, int64_t rows, int64_t cols, int ds, int which, int64_t k)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols)
        X[i] = element(ds, which, i % rows, i / rows, k);
}

/* As (rs x k, ld rs): rows idx[0..rs) of A (m x k). */
__global__ void gather_rows(const double *A, int64_t m, int64_t k, const int64_t *idx, int64_t rs, double *As)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rs * k)
        As[i] = A[idx[i % rs] + (i / rs) * m];
}

#define T 16
__device__ inline void dd_add_prod(double &hi, double &lo, double a, double b)
{
    const double p = __dmul_rn(a, b), e = fma(a, b, -p); /* a b = p + e */
    const double s = __dadd_rn(hi, p), bb = __dsub_rn(s, hi);
    const double err = __dadd_rn(__dsub_rn(hi, __dsub_rn(s, bb)), __dsub_rn(p, bb));
    const double t = __dadd_rn(lo, __dadd_rn(err, e));
    hi = __dadd_rn(s, t);
    lo = __dsub_rn(t, __dsub_rn(hi, s));
}
/* ref = As B and S = |As| |B| in double-double (hi + lo), rs x n, ld rs. */
__global__ void dd_kernel(const double *As, const double *B, int64_t rs, int64_t n, int64_t k, double *ref, double *S)
{
    __shared__ double sa[T][T + 1], sb[T][T + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t i = (int64_t)blockIdx.x * T + tx, j = (int64_t)blockIdx.y * T + ty;
    double h = 0, l = 0, sh = 0, sl = 0;
    for (int64_t k0 = 0; k0 < k; k0 += T) {
        const int64_t ar = (int64_t)blockIdx.x * T + tx, ak = k0 + ty, bk = k0 + tx, bc = (int64_t)blockIdx.y * T + ty;
        sa[ty][tx] = ar < rs && ak < k ? As[ar + ak * rs] : 0.0;
        sb[ty][tx] = bk < k && bc < n ? B[bk + bc * k] : 0.0;
        __syncthreads();
        for (int kk = 0; kk < T; kk++) {
            const double a = sa[kk][tx], b = sb[ty][kk];
            dd_add_prod(h, l, a, b);
            dd_add_prod(sh, sl, fabs(a), fabs(b));
        }
        __syncthreads();
    }
    if (i < rs && j < n) {
        ref[i + j * rs] = h + l;
        S[i + j * rs] = sh + sl;
    }
}

/* A hash of all of C's bits (each element's with its index; XOR over the
 * grid, so any order gives the same): equal to native's only for native's bits. */
__global__ void hash_kernel(const double *C, int64_t n, unsigned long long *h)
{
    unsigned long long acc = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        acc ^= mix((unsigned long long)__double_as_longlong(C[i]) + (uint64_t)i * 0x9E3779B97F4A7C15ULL);
    atomicXor(h, acc);
}

/* rel[e] (-1: ref 0, not counted) and the counts beyond the guarantee and non-finite. */
__global__ void err_kernel(const double *C, int64_t m, const int64_t *idx, int64_t rs, int64_t n, const double *ref,
                           const double *S, double *rel, unsigned long long *counts)
{
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= rs * n)
        return;
    const int64_t ri = e % rs, j = e / rs;
    const double c = C[idx[ri] + j * m], r = ref[e];
    if (!isfinite(c)) {
        atomicAdd(&counts[1], 1ull);
        rel[e] = INFINITY;
        return;
    }
    const double d = fabs(c - r);
    if (d > 0x1p-53 * S[e] * (1.0 + 0x1p-30) + 0x1p-53 * fabs(r) + 0x1p-1070)
        atomicAdd(&counts[0], 1ull);
    rel[e] = r != 0.0 ? d / fabs(r) : -1.0;
}

typedef int (*plans_fn)(int, uint64_t *, int);
typedef int (*enable_fn)(int);

struct one_case {
    int ds;
    int64_t m, n, k, step; /* every step-th row checked */
};

static void run_case(cublasHandle_t h, const one_case &c, plans_fn plans)
{
    const int64_t m = c.m, n = c.n, k = c.k, rs = (m + c.step - 1) / c.step;
    double *A, *B, *C, *As, *ref, *S, *rel;
    int64_t *idx;
    unsigned long long *counts;
    CUDA_CHECK(cudaMalloc((void **)&A, sizeof(double) * m * k));
    CUDA_CHECK(cudaMalloc((void **)&B, sizeof(double) * k * n));
    CUDA_CHECK(cudaMalloc((void **)&C, sizeof(double) * m * n));
    CUDA_CHECK(cudaMalloc((void **)&As, sizeof(double) * rs * k));
    CUDA_CHECK(cudaMalloc((void **)&ref, sizeof(double) * rs * n));
    CUDA_CHECK(cudaMalloc((void **)&S, sizeof(double) * rs * n));
    CUDA_CHECK(cudaMalloc((void **)&rel, sizeof(double) * rs * n));
    CUDA_CHECK(cudaMalloc((void **)&idx, sizeof(int64_t) * rs));
    CUDA_CHECK(cudaMalloc((void **)&counts, 3 * sizeof(unsigned long long)));
    std::vector<int64_t> hidx(rs);
    for (int64_t i = 0; i < rs; i++)
        hidx[i] = i * c.step;
    CUDA_CHECK(cudaMemcpy(idx, hidx.data(), sizeof(int64_t) * rs, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(counts, 0, 3 * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemset(C, 0xff, sizeof(double) * m * n)); /* poisoned: NaN */
    gen_kernel<<<(unsigned)((m * k + 255) / 256), 256>>>(A, m, k, c.ds, 0, k);
    gen_kernel<<<(unsigned)((k * n + 255) / 256), 256>>>(B, k, n, c.ds, 1, k);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    uint64_t before[32] = {0}, after[32] = {0};
    if (plans)
        plans(0, before, 32);
    const double one = 1.0, zero = 0.0;
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    CUDA_CHECK(cudaEventRecord(e0, 0));
    CUBLAS_CHECK(cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)n, (int)k, &one, A, (int)m, B, (int)k, &zero,
                                C, (int)m));
    CUDA_CHECK(cudaEventRecord(e1, 0));
    CUDA_CHECK(cudaDeviceSynchronize());
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    char plan[64] = "";
    if (plans) {
        plans(0, after, 32);
        int any = 0;
        for (int q = 0; q < 32; q++)
            if (after[q] != before[q]) {
                snprintf(plan + strlen(plan), sizeof plan - strlen(plan), "%s%s", any ? "+" : "", q ? "" : "none");
                if (q)
                    snprintf(plan + strlen(plan), sizeof plan - strlen(plan), "N=%d", q);
                any = 1;
            }
        if (!any)
            snprintf(plan, sizeof plan, "-");
    } else {
        snprintf(plan, sizeof plan, "native");
    }
    gather_rows<<<(unsigned)((rs * k + 255) / 256), 256>>>(A, m, k, idx, rs, As);
    dd_kernel<<<dim3((unsigned)((rs + T - 1) / T), (unsigned)((n + T - 1) / T)), dim3(T, T)>>>(As, B, rs, n, k, ref, S);
    err_kernel<<<(unsigned)((rs * n + 255) / 256), 256>>>(C, m, idx, rs, n, ref, S, rel, counts);
    hash_kernel<<<1024, 256>>>(C, m * n, counts + 2);
    CUDA_CHECK(cudaGetLastError());
    std::vector<double> hrel(rs * n);
    unsigned long long hc[3];
    CUDA_CHECK(cudaMemcpy(hrel.data(), rel, sizeof(double) * rs * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hc, counts, sizeof hc, cudaMemcpyDeviceToHost));
    std::vector<double> v;
    v.reserve(hrel.size());
    double mx = 0;
    for (double x : hrel)
        if (x >= 0) {
            v.push_back(x);
            mx = x > mx ? x : mx;
        }
    double med = 0;
    if (!v.empty()) {
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        med = v[v.size() / 2];
    }
    printf("case %-18s %6lld %6lld %7lld rows=%-5lld max=%.3e median=%.3e beyond=%llu nonfinite=%llu plan=%s ms=%.3f "
           "hash=%016llx\n",
           ds_name[c.ds], (long long)m, (long long)n, (long long)k, (long long)rs, mx, med, hc[0], hc[1], plan, ms,
           hc[2]);
    fflush(stdout);
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    void *bufs[] = {A, B, C, As, ref, S, rel, idx, counts};
    for (void *p : bufs)
        CUDA_CHECK(cudaFree(p));
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    plans_fn plans = (plans_fn)dlsym(RTLD_DEFAULT, "ozcrt_stats_auto_plans");
    enable_fn enable = (enable_fn)dlsym(RTLD_DEFAULT, "ozcrt_stats_enable");
    if (plans && enable)
        enable(1);
    else
        plans = NULL;
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate_v2(&h));
    std::vector<one_case> cases;
    const int64_t sizes[2] = {2048, 8192};
    for (int s = 0; s < (quick ? 1 : 2); s++)
        for (int ds = 0; ds <= DS_INTEGER; ds++)
            cases.push_back({ds, sizes[s], sizes[s], sizes[s], sizes[s] == 2048 ? 1 : 8});
    /* long k: constant and sign-aligned data */
    for (int ds = DS_CONST; ds <= DS_POSITIVE; ds++)
        cases.push_back({ds, 1024, 1024, quick ? 20000 : 100000, 8});
    for (const one_case &c : cases)
        run_case(h, c, plans);
    CUBLAS_CHECK(cublasDestroy_v2(h));
    printf("auto_accuracy: %zu cases (%s)\n", cases.size(), plans ? "under libozcrt.so" : "native");
    return 0;
}
