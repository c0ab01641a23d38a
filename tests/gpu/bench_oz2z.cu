/* tests/gpu/bench_oz2z.cu: the complex ozaki2 path against native ZGEMM: times (events, after warm-up, the two interleaved) and the max / median elementwise relative error (on |z|) against a double-double reference over sampled rows, for complex U(-1,1).
 *
 *   bench_oz2z [n ...]      square sizes (default 4096 8192); OZ_BENCH_BITS="53 34" the bits
 *                           ("auto" or "auto:B": automatic precision); OZ_BENCH_PHI=2: both
 *                           parts (U - 0.5) exp(phi N(0,1)) instead of U(-1,1)
 *
 * The reference: per element the complex dot product in double-double
 * (TwoProd by fma, TwoSum), for 1024 rows spread over the matrix (all rows
 * below 1024). Exit 1 when an automatic row, or a 53-bit one on U(-1,1), is
 * less accurate than native (max or median), 2 on a setup error. */
#include <algorithm>
#include <vector>

#include "cublas_util.h"
#include "crt/oz2_auto.h"
#include "kernels/oz2_gemm.h"

__device__ __forceinline__ void dd_add_prod(double &hi, double &lo, double a, double b)
{
    const double p = __dmul_rn(a, b), e = fma(a, b, -p);
    const double s = __dadd_rn(hi, p), bb = __dsub_rn(s, hi);
    const double err = __dadd_rn(__dsub_rn(hi, __dsub_rn(s, bb)), __dsub_rn(p, bb));
    const double t = __dadd_rn(lo, __dadd_rn(err, e));
    hi = __dadd_rn(s, t);
    lo = __dsub_rn(t, __dsub_rn(hi, s));
}

/* ref[r + j ns] (re, im) = sum_k A[rows[r], k] B[k, j] in double-double, rounded to double. */
__global__ void ref_kernel(const double *A, const double *B, const int64_t *rows, int64_t ns, int64_t n, double *ref)
{
    const int64_t r = (int64_t)blockIdx.x * 32 + threadIdx.x, j = (int64_t)blockIdx.y * 8 + threadIdx.y;
    if (r >= ns || j >= n)
        return;
    const int64_t i = rows[r];
    double rh = 0, rl = 0, ih = 0, il = 0;
    for (int64_t k = 0; k < n; k++) {
        const double ar = A[2 * (i + k * n)], ai = A[2 * (i + k * n) + 1];
        const double br = B[2 * (k + j * n)], bi = B[2 * (k + j * n) + 1];
        dd_add_prod(rh, rl, ar, br);
        dd_add_prod(rh, rl, -ai, bi);
        dd_add_prod(ih, il, ar, bi);
        dd_add_prod(ih, il, ai, br);
    }
    ref[2 * (r + j * ns)] = rh + rl;
    ref[2 * (r + j * ns) + 1] = ih + il;
}

struct errs {
    double max, median;
};

static errs measure(const std::vector<double> &C, const std::vector<double> &ref, const std::vector<int64_t> &rows,
                    int64_t n)
{
    const int64_t ns = (int64_t)rows.size();
    std::vector<double> rel;
    rel.reserve((size_t)(ns * n));
    for (int64_t j = 0; j < n; j++)
        for (int64_t r = 0; r < ns; r++) {
            const double *c = &C[2 * (size_t)(rows[r] + j * n)], *f = &ref[2 * (size_t)(r + j * ns)];
            const double den = hypot(f[0], f[1]);
            if (den > 0)
                rel.push_back(hypot(c[0] - f[0], c[1] - f[1]) / den);
        }
    errs e = {0, 0};
    if (!rel.empty()) {
        e.max = *std::max_element(rel.begin(), rel.end());
        std::nth_element(rel.begin(), rel.begin() + rel.size() / 2, rel.end());
        e.median = rel[rel.size() / 2];
    }
    return e;
}

int main(int argc, char **argv)
{
    std::vector<int64_t> sizes;
    for (int i = 1; i < argc; i++)
        sizes.push_back(atoll(argv[i]));
    if (sizes.empty())
        sizes = {4096, 8192};
    std::vector<int> bits_list;
    const char *eb = getenv("OZ_BENCH_BITS");
    for (const char *p = eb ? eb : "53 34"; *p;) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        const bool autop = strncmp(p, "auto", 4) == 0, target = autop && p[4] == ':';
        if (autop)
            p += target ? 5 : 4;
        char *end = (char *)p;
        const long b = autop && !target ? OZ2A_B_DEFAULT : strtol(p, &end, 10);
        if (end == p && !(autop && !target))
            break;
        bits_list.push_back(autop ? OZ2A_AUTO((int)b) : (int)b);
        p = end;
    }
    const char *ephi = getenv("OZ_BENCH_PHI");
    const double phi = ephi ? atof(ephi) : 0.0;
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    int fails = 0;
    printf("%-8s %-10s %10s %8s %10s %10s\n", "n", "method", "ms", "vs-zgemm", "max-err", "median-err");
    for (int64_t n : sizes) {
        const size_t nn = (size_t)(n * n);
        std::vector<double> A(2 * nn), B(2 * nn), C(2 * nn);
        rng_state = 0x5eed5eedULL + (uint64_t)n;
        for (auto &x : A)
            x = phi > 0 ? (rng_unit() - 0.5) * exp(phi * rng_normal()) : rng_sym();
        for (auto &x : B)
            x = phi > 0 ? (rng_unit() - 0.5) * exp(phi * rng_normal()) : rng_sym();
        double *dA = (double *)dev_upload(A.data(), 16 * nn), *dB = (double *)dev_upload(B.data(), 16 * nn);
        double *dC = nullptr;
        CUDA_CHECK(cudaMalloc((void **)&dC, 16 * nn));
        const int64_t ns = n < 1024 ? n : 1024;
        std::vector<int64_t> rows((size_t)ns);
        for (int64_t r = 0; r < ns; r++)
            rows[(size_t)r] = r * (n / ns);
        int64_t *drows = (int64_t *)dev_upload(rows.data(), 8 * (size_t)ns);
        double *dref = nullptr;
        CUDA_CHECK(cudaMalloc((void **)&dref, 16 * (size_t)(ns * n)));
        ref_kernel<<<dim3((unsigned)((ns + 31) / 32), (unsigned)((n + 7) / 8)), dim3(32, 8)>>>(dA, dB, drows, ns, n, dref);
        CUDA_CHECK(cudaGetLastError());
        std::vector<double> ref(2 * (size_t)(ns * n));
        CUDA_CHECK(cudaDeviceSynchronize());
        dev_download(ref.data(), dref, ref.size() * 8);

        const cuDoubleComplex one = {1.0, 0.0}, zero = {0.0, 0.0};
        auto native = [&] {
            CUBLAS_CHECK(cublasZgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one,
                                     (const cuDoubleComplex *)dA, (int)n, (const cuDoubleComplex *)dB, (int)n, &zero,
                                     (cuDoubleComplex *)dC, (int)n));
        };
        struct method {
            int bits;
            void *ws;
            size_t bytes;
            float ms;
            errs e;
        };
        std::vector<method> ms;
        for (int b : bits_list) {
            oz_gemm_desc d = {};
            d.m = d.n = d.k = n;
            d.lda = d.ldb = d.ldc = n;
            d.batch = 1;
            d.elem = OZ_ELEM_COMPLEX;
            size_t sz[OZ_GEMM_WS_SIZES];
            oz2_gemm_workspace_sizes(&d, b, (size_t)1 << 36, sz);
            method mm = {b, nullptr, sz[0], 0, {0, 0}};
            if (sz[0] == 0) {
                printf("%-8lld bits %d: not served\n", (long long)n, b);
                continue;
            }
            CUDA_CHECK(cudaMalloc(&mm.ws, sz[0]));
            ms.push_back(mm);
        }
        const double one2[2] = {1.0, 0.0}, zero2[2] = {0.0, 0.0};
        auto emulated = [&](method &mm) {
            oz_gemm_desc d = {};
            d.m = d.n = d.k = n;
            d.A = dA;
            d.B = dB;
            d.C = dC;
            d.lda = d.ldb = d.ldc = n;
            d.batch = 1;
            d.alpha = one2;
            d.beta = zero2;
            d.elem = OZ_ELEM_COMPLEX;
            const int rc = oz2_gemm_run(&d, mm.bits, mm.ws, mm.bytes, 0);
            if (rc != 0) {
                fprintf(stderr, "oz2_gemm_run: %s\n", cudaGetErrorString((cudaError_t)rc));
                exit(2);
            }
        };
        /* accuracy (C poisoned before each) */
        CUDA_CHECK(cudaMemset(dC, 0xff, 16 * nn));
        native();
        CUDA_CHECK(cudaDeviceSynchronize());
        dev_download(C.data(), dC, 16 * nn);
        const errs en = measure(C, ref, rows, n);
        for (auto &mm : ms) {
            CUDA_CHECK(cudaMemset(dC, 0xff, 16 * nn));
            emulated(mm);
            CUDA_CHECK(cudaDeviceSynchronize());
            dev_download(C.data(), dC, 16 * nn);
            mm.e = measure(C, ref, rows, n);
        }
        /* times: warm-up, then 5 rounds, each method once a round; medians */
        cudaEvent_t e0, e1;
        CUDA_CHECK(cudaEventCreate(&e0));
        CUDA_CHECK(cudaEventCreate(&e1));
        auto timed = [&](auto fn) {
            CUDA_CHECK(cudaEventRecord(e0));
            fn();
            CUDA_CHECK(cudaEventRecord(e1));
            CUDA_CHECK(cudaEventSynchronize(e1));
            float t;
            CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
            return t;
        };
        native();
        for (auto &mm : ms)
            emulated(mm);
        std::vector<float> tn;
        std::vector<std::vector<float>> te(ms.size());
        for (int r = 0; r < 5; r++) {
            tn.push_back(timed(native));
            for (size_t i = 0; i < ms.size(); i++)
                te[i].push_back(timed([&] { emulated(ms[i]); }));
        }
        auto med = [](std::vector<float> v) {
            std::sort(v.begin(), v.end());
            return v[v.size() / 2];
        };
        const float tnat = med(tn);
        printf("%-8lld %-10s %10.2f %8.2f %10.2e %10.2e%s\n", (long long)n, "zgemm", tnat, 1.0, en.max, en.median,
               phi > 0 ? "  (spread data)" : "");
        for (size_t i = 0; i < ms.size(); i++) {
            ms[i].ms = med(te[i]);
            char name[32];
            if (oz2a_is_auto(ms[i].bits))
                snprintf(name, sizeof name, "ozaki2:auto:%d", oz2a_target(ms[i].bits));
            else
                snprintf(name, sizeof name, "ozaki2:%d", ms[i].bits);
            const bool held = ms[i].bits == OZ2A_AUTO(OZ2A_B_DEFAULT) || (ms[i].bits == 53 && phi == 0);
            const bool bad = held && (ms[i].e.max > en.max || ms[i].e.median > en.median);
            fails += bad;
            printf("%-8lld %-10s %10.2f %8.2f %10.2e %10.2e%s\n", (long long)n, name, ms[i].ms, tnat / ms[i].ms,
                   ms[i].e.max, ms[i].e.median, bad ? "  LESS ACCURATE THAN NATIVE" : "");
            CUDA_CHECK(cudaFree(ms[i].ws));
        }
        CUDA_CHECK(cudaEventDestroy(e0));
        CUDA_CHECK(cudaEventDestroy(e1));
        CUDA_CHECK(cudaFree(dA));
        CUDA_CHECK(cudaFree(dB));
        CUDA_CHECK(cudaFree(dC));
        CUDA_CHECK(cudaFree(dref));
        CUDA_CHECK(cudaFree(drows));
    }
    CUBLAS_CHECK(cublasDestroy(h));
    printf("bench_oz2z: %s\n", fails ? "FAIL" : "ok");
    return fails ? 1 : 0;
}
