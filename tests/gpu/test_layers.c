/* tests/gpu/test_layers.c: the fused kernel checked layer by layer (phase22.md "How to check it"): int32 accumulators, mod p, CRT. */
#include "gpu_util.h"
#include "kernels/ozcrt_gemm.h"
#include "crt/moduli.h"
#include "slicing/slicing.h"

void oz_gemm_force_tiles(int which);
int oz_gemm_run_layer(const oz_gemm_desc *d, void *workspace, int out_kind, int pass, int prime, int64_t *out,
                      void *stream);
enum { OUT_ACC = 1, OUT_MOD = 2, OUT_CRT = 3 };
static const int pass_slices[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};

typedef struct host_case {
    int ta, tb;
    int64_t m, n, k, lda, ldb;
    double *A, *B;
    int32_t *hiloA, *hiloB; /* [slice][rows][k] of op(A) rows, op(B) columns */
} host_case;

static double op_at(const double *X, int64_t ld, int t, int64_t r, int64_t c) { return t ? X[c + r * ld] : X[r + c * ld]; }

/* The slices of one operand row computed on the CPU, independently of the GPU path. */
static void slice_rows(int64_t rows, int64_t k, double (*at)(const host_case *, int64_t, int64_t), const host_case *hc,
                       int32_t *out)
{
    for (int64_t r = 0; r < rows; r++) {
        double mx = 0.0;
        for (int64_t kk = 0; kk < k; kk++)
            mx = fmax(mx, fabs(at(hc, r, kk)));
        int s = oz_scale_exponent(mx);
        for (int64_t kk = 0; kk < k; kk++) {
            int32_t hi, lo;
            oz_slice(ldexp(at(hc, r, kk), -s), &hi, &lo);
            out[(0 * rows + r) * k + kk] = hi;
            out[(1 * rows + r) * k + kk] = lo;
        }
    }
}
static double a_at(const host_case *h, int64_t i, int64_t kk) { return op_at(h->A, h->lda, h->ta, i, kk); }
static double b_at(const host_case *h, int64_t j, int64_t kk) { return op_at(h->B, h->ldb, !h->tb, j, kk); }

static int sym_mod(int32_t x, int32_t p) /* naive symmetric residue */
{
    int32_t r = ((x % p) + p) % p;
    return r > (p - 1) / 2 ? r - p : r;
}

static int failures, checks;

static void run_case(int ta, int tb, int64_t m, int64_t n, int64_t k, double fill_a, double fill_b)
{
    host_case hc = {ta, tb, m, n, k, (ta ? k : m) + 3, (tb ? n : k) + 2, NULL, NULL, NULL, NULL};
    size_t na = (size_t)hc.lda * (size_t)(ta ? m : k), nb = (size_t)hc.ldb * (size_t)(tb ? k : n);
    hc.A = malloc(na * 8);
    hc.B = malloc(nb * 8);
    for (size_t i = 0; i < na; i++)
        hc.A[i] = fill_a != 0.0 ? fill_a : rng_sym() * (i % 7 == 0 ? 1e-3 : 1.0);
    for (size_t i = 0; i < nb; i++)
        hc.B[i] = fill_b != 0.0 ? fill_b : rng_sym();
    hc.hiloA = malloc(sizeof(int32_t) * 2 * m * k);
    hc.hiloB = malloc(sizeof(int32_t) * 2 * n * k);
    slice_rows(m, k, a_at, &hc, hc.hiloA);
    slice_rows(n, k, b_at, &hc, hc.hiloB);

    double *dA = dev_upload(hc.A, na * 8), *dB = dev_upload(hc.B, nb * 8);
    double one = 1.0, zero = 0.0;
    oz_gemm_desc d = {ta, tb, m, n, k, dA, hc.lda, 0, dB, hc.ldb, 0, NULL, m, 0, NULL, NULL, NULL, 1, &one, &zero, 0, OZ_ELEM_REAL, NULL};
    size_t wsb = oz_gemm_workspace_min(&d);
    void *ws;
    int64_t *dout, *out = malloc(8 * m * n);
    CUDA_CHECK(cudaMalloc(&ws, wsb));
    CUDA_CHECK(cudaMalloc((void **)&dout, 8 * m * n));
    int64_t klen = k < OZ_P22_KCHUNK ? k : OZ_P22_KCHUNK;
    int8_t *resA = malloc((size_t)(m * klen + 1)), *resB = malloc((size_t)(n * klen + 1));

    for (int kind = OUT_ACC; kind <= OUT_CRT; kind++) {
        for (int q = 0; q < 4; q++) {
            for (int pi = 0; pi < (kind == OUT_CRT ? 1 : OZ_P22_NPRIMES); pi++) {
                int p = oz_p22_moduli[pi].p;
                CUDA_CHECK(cudaMemset(dout, 0x5a, 8 * m * n)); /* poison */
                int rc = oz_gemm_run_layer(&d, ws, kind, q, pi, dout, NULL);
                if (rc != 0) {
                    fprintf(stderr, "layer launch failed: %d\n", rc);
                    exit(2);
                }
                CUDA_CHECK(cudaDeviceSynchronize());
                dev_download(out, dout, 8 * m * n);
                /* this prime's residues of this pass's slices, computed once */
                for (int64_t i = 0; i < m; i++)
                    for (int64_t kk = 0; kk < klen; kk++)
                        resA[i * klen + kk] = (int8_t)sym_mod(hc.hiloA[(pass_slices[q][0] * m + i) * k + kk], p);
                for (int64_t j = 0; j < n; j++)
                    for (int64_t kk = 0; kk < klen; kk++)
                        resB[j * klen + kk] = (int8_t)sym_mod(hc.hiloB[(pass_slices[q][1] * n + j) * k + kk], p);
                int bad = 0;
                for (int64_t j = 0; j < n && bad < 3; j++)
                    for (int64_t i = 0; i < m && bad < 3; i++) {
                        const int32_t *ra = hc.hiloA + (pass_slices[q][0] * m + i) * k;
                        const int32_t *rb = hc.hiloB + (pass_slices[q][1] * n + j) * k;
                        int64_t want = 0;
                        if (kind == OUT_CRT) {
                            for (int64_t kk = 0; kk < klen; kk++)
                                want += (int64_t)ra[kk] * rb[kk];
                        } else {
                            int32_t acc = 0;
                            for (int64_t kk = 0; kk < klen; kk++)
                                acc += resA[i * klen + kk] * resB[j * klen + kk];
                            want = kind == OUT_ACC ? acc : ((acc % p) + p) % p;
                        }
                        checks++;
                        if (out[i + j * m] != want) {
                            bad++;
                            fprintf(stderr, "FAIL layer %d pass %d prime %d  %c%c m=%ld n=%ld k=%ld (i=%ld j=%ld): got %ld want %ld\n",
                                    kind, q, p, "NT"[ta], "NT"[tb], (long)m, (long)n, (long)k, (long)i, (long)j,
                                    (long)out[i + j * m], (long)want);
                        }
                    }
                failures += bad;
            }
        }
    }
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(dout));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    free(resA), free(resB);
    free(out), free(hc.A), free(hc.B), free(hc.hiloA), free(hc.hiloB);
}

int main(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1}, {7, 61, 68}, {128, 64, 32}, {129, 65, 33}, {16, 8, 31},
                                        {255, 130, 100}, {300, 70, 4096}, {40, 33, 5000}, {3, 200, 1}};
    int ns = (int)(sizeof shapes / sizeof shapes[0]);
    for (int tiles = 0; tiles < 3; tiles++) { /* the device's kernel, then mma.sync small and large */
        oz_gemm_force_tiles(tiles);
        for (int s = 0; s < ns; s++)
            run_case(s % 2, (s / 2) % 2, shapes[s][0], shapes[s][1], shapes[s][2], 0.0, 0.0);
        run_case(0, 1, 130, 66, 4096, 0.999, -0.999); /* X near -M/2: the signed fold */
        run_case(1, 0, 17, 9, 4096, -0.7, -0.999);    /* near +M/2 */
    }
    printf("test_layers: %d checks, %d failures\n", checks, failures);
    printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
    return failures ? 1 : 0;
}
