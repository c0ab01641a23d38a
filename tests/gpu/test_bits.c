/* tests/gpu/test_bits.c: the GPU path equals the CPU reference bit for bit on random cases (phase22.md layer 4). */
#include "gpu_util.h"
#include "kernels/ozcrt_gemm.h"
#include "reference/refgemm.h"

void oz_gemm_force_tiles(int which);
static int failures, cases;

static double pick_scalar(void)
{
    switch (rng_range(0, 4)) {
    case 0: return 0.0;
    case 1: return 1.0;
    case 2: return -1.0;
    default: return rng_sym() * 4.0;
    }
}

#define POISON 1.2345678e300

/* One random case: shapes, ops, lds, scalars, pointer mode, batch kind, special values. */
static void run_case(int idx, int64_t maxdim, int64_t maxk)
{
    int ta = (int)rng_range(0, 2), tb = (int)rng_range(0, 2);
    int64_t m = rng_range(1, maxdim), n = rng_range(1, maxdim), k = rng_range(1, maxk);
    if (idx % 10 == 3) k = 0;
    int64_t lda = ((ta ? k : m) > 1 ? (ta ? k : m) : 1) + rng_range(0, 1) * rng_range(1, 9);
    int64_t ldb = ((tb ? n : k) > 1 ? (tb ? n : k) : 1) + rng_range(0, 1) * rng_range(1, 9);
    int64_t ldc = m + rng_range(0, 1) * rng_range(1, 9);
    double alpha = pick_scalar(), beta = pick_scalar();
    int device_mode = (int)rng_range(0, 1);
    int batch_kind = (int)rng_range(0, 3); /* 0,1: single; 2: strided; 3: pointer array */
    int64_t batch = batch_kind >= 2 ? rng_range(1, 3) : 1;
    int dist = (int)rng_range(0, DIST_COUNT - 1);
    int special = idx % 9 == 5;  /* Inf/NaN somewhere */
    int nan_c = beta == 0.0 && rng_range(0, 1);

    size_t sa = (size_t)lda * (size_t)(ta ? m : k), sb = (size_t)ldb * (size_t)(tb ? k : n), sc = (size_t)ldc * n;
    size_t ta_tot = sa * batch + 1, tb_tot = sb * batch + 1, tc_tot = sc * batch;
    double *A = malloc(8 * ta_tot), *B = malloc(8 * tb_tot), *C = malloc(8 * tc_tot), *R = malloc(8 * tc_tot);
    for (size_t i = 0; i < ta_tot; i++) A[i] = rng_dist(dist);
    for (size_t i = 0; i < tb_tot; i++) B[i] = rng_dist(dist);
    for (size_t i = 0; i < tc_tot; i++) C[i] = nan_c ? NAN : rng_sym();
    for (int64_t b = 0; b < batch; b++)   /* rows m..ldc of C are not ours: poison them */
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = m; i < ldc; i++) C[b * sc + i + j * ldc] = POISON;
    if (special && sa > 0) {
        A[rng_range(0, (int64_t)sa - 1)] = rng_range(0, 1) ? NAN : INFINITY;
        B[rng_range(0, (int64_t)sb - 1)] = -INFINITY;
    }
    memcpy(R, C, 8 * tc_tot);
    for (int64_t b = 0; b < batch; b++)
        if (oz_ref_dgemm(ta, tb, m, n, k, alpha, A + b * sa, lda, B + b * sb, ldb, beta, R + b * sc, ldc) != 0) {
            fprintf(stderr, "reference rejected case %d\n", idx);
            exit(2);
        }

    double *dA = dev_upload(A, 8 * ta_tot), *dB = dev_upload(B, 8 * tb_tot), *dC = dev_upload(C, 8 * tc_tot);
    double *dScal = dev_upload((double[]){alpha, beta}, 16);
    oz_gemm_desc d = {ta, tb, m, n, k, dA, lda, (int64_t)sa, dB, ldb, (int64_t)sb, dC, ldc, (int64_t)sc,
                      NULL, NULL, NULL, batch, &alpha, &beta, 0};
    void **parr = NULL;
    if (batch_kind == 3) {
        void *ptrs[9];
        for (int64_t b = 0; b < batch; b++) {
            ptrs[b] = dA + b * sa;
            ptrs[3 + b] = dB + b * sb;
            ptrs[6 + b] = dC + b * sc;
        }
        parr = dev_upload(ptrs, sizeof ptrs);
        d.Aarray = (const double *const *)parr;
        d.Barray = (const double *const *)(parr + 3);
        d.Carray = (double *const *)(parr + 6);
        d.A = NULL, d.B = NULL, d.C = NULL;
    }
    if (device_mode) {
        d.alpha = dScal;
        d.beta = dScal + 1;
        d.scalars_on_device = 1;
    }
    /* a workspace for one item only, some of the time: batches then run in groups */
    size_t wsb = rng_range(0, 1) ? oz_gemm_workspace_full(&d) : oz_gemm_workspace_min(&d);
    void *ws;
    cudaStream_t st;
    CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&ws, wsb));
    CUDA_CHECK(cudaMemsetAsync(ws, 0x77, wsb, st)); /* residue padding must not depend on old contents */
    /* half the cases on the device's kernel (wgmma on an H200), a quarter on
     * each mma.sync tile configuration */
    oz_gemm_force_tiles(idx % 4 == 1 ? 1 : idx % 4 == 2 ? 2 : 0);
    if (getenv("OZ_TEST_VERBOSE")) /* the case before it runs: a crash names it */
        fprintf(stderr, "case %d: %c%c m=%ld n=%ld k=%ld lda=%ld ldb=%ld ldc=%ld dev=%d batch=%ld kind=%d tiles=%d ws=%zu\n",
                idx, "NTC"[ta], "NTC"[tb], (long)m, (long)n, (long)k, (long)lda, (long)ldb, (long)ldc, device_mode,
                (long)batch, batch_kind, idx % 4 == 1 ? 1 : idx % 4 == 2 ? 2 : 0, wsb);
    int rc = oz_gemm_run(&d, ws, wsb, st);
    CUDA_CHECK(cudaStreamSynchronize(st));
    CUDA_CHECK(cudaGetLastError());
    dev_download(C, dC, 8 * tc_tot);
    cases++;
    int bad = rc != 0;
    size_t first = 0;
    for (size_t i = 0; i < tc_tot; i++)
        if (!same_double(C[i], R[i])) {
            if (!bad) first = i;
            bad++;
        }
    if (bad) {
        failures++;
        fprintf(stderr, "FAIL case %d: rc=%d %c%c m=%ld n=%ld k=%ld lda=%ld ldb=%ld ldc=%ld alpha=%g beta=%g dev=%d batch=%ld kind=%d dist=%d special=%d: %d mismatches, first at %zu: got %.17g want %.17g\n",
                idx, rc, "NTC"[ta], "NTC"[tb], (long)m, (long)n, (long)k, (long)lda, (long)ldb, (long)ldc, alpha, beta,
                device_mode, (long)batch, batch_kind, dist, special, bad, first, C[first], R[first]);
    }
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaStreamDestroy(st));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    CUDA_CHECK(cudaFree(dScal));
    if (parr) CUDA_CHECK(cudaFree(parr));
    free(A), free(B), free(C), free(R);
}

int main(int argc, char **argv)
{
    int ncases = argc > 1 ? atoi(argv[1]) : 240;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20261129;
    int64_t maxdim = argc > 3 ? atoll(argv[3]) : 700, maxk = argc > 4 ? atoll(argv[4]) : 700;
    rng_state ^= seed;
    printf("test_bits: %d cases, seed %llu\n", ncases, (unsigned long long)seed);
    if (argc > 3) /* small cases only, e.g. under compute-sanitizer */
        for (int i = 0; i < ncases; i++) run_case(i, maxdim, maxk);
    else
        for (int i = 0; i < ncases; i++)
        run_case(i, i < ncases - 8 ? maxdim : 300, i < ncases - 8 ? maxk : 9000);
    printf("test_bits: %d cases, %d bit-identical, %d failures\n", cases, cases - failures, failures);
    printf("%d passed, %d failed\n", cases - failures, failures);
    return failures ? 1 : 0;
}
