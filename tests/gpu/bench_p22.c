/* tests/gpu/bench_p22.c: native cuBLAS DGEMM and the Phase 22 path side by side in one process (CUDA events, warm-up, median). */
#include <cublas_v2.h>

#include "gpu_util.h"
#include "kernels/ozcrt_gemm.h"

void oz_gemm_force_variant(int variant);
void oz_gemm_force_tiles(int which);

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median of `reps` timed runs of fn after `warm` warm-ups. */
typedef void (*run_fn)(void *ctx);
static float time_median(run_fn fn, void *ctx, int warm, int reps)
{
    cudaEvent_t e0, e1;
    float t[32];
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int i = 0; i < warm; i++) fn(ctx);
    for (int i = 0; i < reps; i++) {
        CUDA_CHECK(cudaEventRecord(e0, NULL));
        fn(ctx);
        CUDA_CHECK(cudaEventRecord(e1, NULL));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaEventElapsedTime(&t[i], e0, e1));
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    qsort(t, (size_t)reps, sizeof t[0], cmp_float);
    return t[reps / 2];
}

typedef struct bench_ctx {
    cublasHandle_t h;
    int64_t n;
    double *dA, *dB, *dC;
    void *ws;
    size_t wsb;
} bench_ctx;

static void run_native(void *p)
{
    bench_ctx *c = p;
    double one = 1.0, zero = 0.0;
    int n = (int)c->n;
    if (cublasDgemm(c->h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, c->dA, n, c->dB, n, &zero, c->dC, n) != 0) exit(2);
}

static void run_p22(void *p)
{
    bench_ctx *c = p;
    double one = 1.0, zero = 0.0;
    oz_gemm_desc d = {0, 0, c->n, c->n, c->n, c->dA, c->n, 0, c->dB, c->n, 0, c->dC, c->n, 0,
                      NULL, NULL, NULL, 1, &one, &zero, 0};
    CUDA_CHECK((cudaError_t)oz_gemm_run(&d, c->ws, c->wsb, NULL));
}

/* Where the time goes: the fused kernel with one stage left out (wrong results). */
static void variants(bench_ctx *c)
{
    static const struct { int v; const char *name; } vs[] = {
        {0, "full path"}, {4, "no cp.async loads"}, {5, "no mma.sync"}, {6, "no mod/CRT/accumulate"}};
    printf("-- where the time goes at n=%ld (median ms; variants compute wrong results):\n", (long)c->n);
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        oz_gemm_force_variant(vs[i].v);
        float t = time_median(run_p22, c, 1, 5);
        printf("   %-24s %9.3f ms\n", vs[i].name, t);
    }
    oz_gemm_force_variant(0);
    oz_gemm_force_tiles(2); /* the mma.sync kernel, for comparison where wgmma is the default */
    printf("   %-24s %9.3f ms\n", "mma.sync kernel (full)", time_median(run_p22, c, 1, 5));
    oz_gemm_force_tiles(0);
}

int main(int argc, char **argv)
{
    int64_t sizes[16];
    int ns = 0, sweep = 0, with_variants = 0;
    for (int i = 1; i < argc && ns < 16; i++) {
        if (!strcmp(argv[i], "--variants")) with_variants = 1;
        else if (!strcmp(argv[i], "--sweep")) sweep = 1;
        else sizes[ns++] = atoll(argv[i]);
    }
    if (sweep) {
        static const int64_t sw[] = {64, 128, 256, 384, 512, 768, 1024, 1536};
        for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) sizes[ns++] = sw[i];
    }
    if (ns == 0) sizes[ns++] = 2048, sizes[ns++] = 4096, sizes[ns++] = 8192;
    int64_t nmax = 0;
    for (int i = 0; i < ns; i++) nmax = sizes[i] > nmax ? sizes[i] : nmax;

    bench_ctx c = {0};
    if (cublasCreate(&c.h) != 0) return 2;
    size_t nn = (size_t)nmax * nmax;
    double *H = malloc(8 * nn), *Cn = malloc(8 * nn), *Cp = malloc(8 * nn);
    for (size_t i = 0; i < nn; i++) H[i] = rng_sym();
    c.dA = dev_upload(H, 8 * nn);
    for (size_t i = 0; i < nn; i++) H[i] = rng_sym();
    c.dB = dev_upload(H, 8 * nn);
    CUDA_CHECK(cudaMalloc((void **)&c.dC, 8 * nn));

    printf("%6s %10s %8s %10s %8s %7s %9s %10s\n", "n", "native ms", "TFLOPS", "p22 ms", "TFLOPS", "ratio", "INT8 TOPS", "max err");
    for (int s = 0; s < ns; s++) {
        c.n = sizes[s];
        oz_gemm_desc d = {0, 0, c.n, c.n, c.n, c.dA, c.n, 0, c.dB, c.n, 0, c.dC, c.n, 0, NULL, NULL, NULL, 1, NULL, NULL, 0};
        c.wsb = oz_gemm_workspace_min(&d);
        CUDA_CHECK(cudaMalloc(&c.ws, c.wsb));
        int reps = c.n >= 16384 ? 3 : c.n <= 1024 ? 21 : 7;
        float tn = time_median(run_native, &c, 2, reps);
        size_t cnt = (size_t)c.n * c.n;
        dev_download(Cn, c.dC, 8 * cnt);
        CUDA_CHECK(cudaMemset(c.dC, 0xff, 8 * cnt));
        float tp = time_median(run_p22, &c, 2, reps);
        dev_download(Cp, c.dC, 8 * cnt);
        double err = 0.0;
        for (size_t i = 0; i < cnt; i++) {
            double e = fabs(Cp[i] - Cn[i]);
            if (!(e <= err)) err = e;
        }
        double flop = 2.0 * c.n * c.n * c.n;
        printf("%6ld %10.3f %8.2f %10.3f %8.2f %7.3f %9.1f %10.2e\n", (long)c.n, tn, flop / tn / 1e9, tp,
               flop / tp / 1e9, tn / tp, 28.0 * flop / tp / 1e9, err);
        fflush(stdout);
        if (with_variants && c.n == nmax) variants(&c);
        CUDA_CHECK(cudaFree(c.ws));
    }
    return 0;
}
