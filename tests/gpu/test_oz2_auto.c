/* tests/gpu/test_oz2_auto.c: the GPU's automatic plan (kernels/oz2_auto_estimate.cu) against the CPU reference's (oz2_ref_auto_plan; complex calls, every third case: oz2z_ref_auto_plan): the same w_need, N (N') and w on every case, and the byte sums' starts of that width. */
#include "gpu_util.h"

#include <float.h>

#include "crt/oz2.h"
#include "crt/oz2_auto.h"
#include "crt/oz2_complex.h"
#include "kernels/oz2_auto_estimate.h"
#include "reference/oz2gemm.h"
#include "reference/oz2zgemm.h"
#include "slicing/slicing.h"

enum { S_UNIFORM, S_SPREAD05, S_SPREAD1, S_SPREAD2, S_SPREAD4, S_SPREAD8, S_POW2, S_SPARSE, S_BIG40, S_INT, S_CONST,
       S_ALIGNED, S_SPECIAL, S_COUNT };
static const char *const names[S_COUNT] = {"uniform", "phi0.5", "phi1", "phi2", "phi4", "phi8", "pow2-300",
                                           "90%zero", "one-2^40", "integer", "const", "aligned", "inf-nan"};

static double gen(int ds, int64_t row, int64_t kk, int big)
{
    switch (ds) {
    case S_SPREAD05: return (rng_unit() - 0.5) * exp(0.5 * rng_normal());
    case S_SPREAD1: return (rng_unit() - 0.5) * exp(1.0 * rng_normal());
    case S_SPREAD2: return (rng_unit() - 0.5) * exp(2.0 * rng_normal());
    case S_SPREAD4: return (rng_unit() - 0.5) * exp(4.0 * rng_normal());
    case S_SPREAD8: return (rng_unit() - 0.5) * exp(8.0 * rng_normal());
    case S_POW2: return ldexp(rng_sym() / 3.0, (int)((row * 131) % 601) - 300);
    case S_SPARSE: return rng_range(0, 9) ? 0.0 : rng_sym() / 3.0;
    case S_BIG40: return rng_sym() / 3.0 * (kk == big ? 0x1p40 : 1.0);
    case S_INT: return (double)rng_range(-100000, 100000);
    case S_CONST: return 0x1.fffffffffffffp-1;
    case S_ALIGNED: return 1.0 - ldexp(rng_unit(), -30);
    case S_SPECIAL: return rng_range(0, 4000) ? rng_sym() / 3.0 : (rng_range(0, 1) ? INFINITY : NAN);
    default: return rng_sym() / 3.0;
    }
}

/* `bench M N K [REPS [DATASET]]`: the estimate alone (enqueued, events
 * around REPS back to back after a warm-up) on U(-1,1) (or a dataset by its
 * name, e.g. phi2), ops N N, with the one-pass row kernel or the separate
 * passes; the plans must agree. */
static int bench(int64_t m, int64_t n, int64_t k, int reps, int ds)
{
    double *A = malloc(sizeof(double) * (size_t)(m * k)), *Bm = malloc(sizeof(double) * (size_t)(k * n));
    if (!A || !Bm)
        return 2;
    for (int64_t i = 0; i < m * k; i++)
        A[i] = ds < 0 ? rng_sym() : gen(ds, i % m, i / m, -1);
    for (int64_t i = 0; i < k * n; i++)
        Bm[i] = ds < 0 ? rng_sym() : gen(ds, i / k, i % k, -1);
    double *dA, *dB;
    CUDA_CHECK(cudaMalloc((void **)&dA, sizeof(double) * (size_t)(m * k)));
    CUDA_CHECK(cudaMalloc((void **)&dB, sizeof(double) * (size_t)(k * n)));
    CUDA_CHECK(cudaMemcpy(dA, A, sizeof(double) * (size_t)(m * k), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, Bm, sizeof(double) * (size_t)(k * n), cudaMemcpyHostToDevice));
    oz_gemm_desc d = {0};
    d.m = m, d.n = n, d.k = k, d.elem = OZ_ELEM_REAL, d.A = dA, d.lda = m, d.B = dB, d.ldb = k, d.batch = 1;
    const size_t bytes = oz2a_estimate_workspace(&d), sbytes = (size_t)(m * ((n + 127) / 128 * 128) * 4);
    void *ws, *scratch;
    CUDA_CHECK(cudaMalloc(&ws, bytes));
    CUDA_CHECK(cudaMalloc(&scratch, sbytes));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    int first_n = -1, bad = 0;
    enum { NV = OZ2A_TEST_PANEL_SHAPES > OZ2A_TEST_ROW_VARIANTS ? OZ2A_TEST_PANEL_SHAPES : OZ2A_TEST_ROW_VARIANTS };
    for (int v = 0; v < NV + 3; v++) { /* the one-pass kernels (every panel shape and row variant) / passes; the sums stored by the rule / the need in the epilogue / the sums always stored */
        const int shape = v < OZ2A_TEST_PANEL_SHAPES ? v : 0, variant = v < OZ2A_TEST_ROW_VARIANTS ? v : 0;
        oz2a_force_panel_shape(shape);
        oz2a_force_row_variant(variant);
        oz2a_force_est_passes(v == NV);
        oz2a_force_est_store(v == NV + 1 ? 1 : v == NV + 2 ? 2 : 0);
        for (int r = 0; r < 3; r++)
            CUDA_CHECK((cudaError_t)oz2a_estimate(&d, 53, ws, bytes, scratch, sbytes, 0));
        CUDA_CHECK(cudaEventRecord(e0, 0));
        for (int r = 0; r < reps; r++)
            CUDA_CHECK((cudaError_t)oz2a_estimate(&d, 53, ws, bytes, scratch, sbytes, 0));
        CUDA_CHECK(cudaEventRecord(e1, 0));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        oz2a_dev_plan p;
        CUDA_CHECK(cudaMemcpy(&p, ws, sizeof p, cudaMemcpyDeviceToHost));
        printf("bench %lldx%lldx%lld %s (panel shape %d, row variant %d), %s: %.4f ms an estimate; need %d N %d w %d (%s part)\n",
               (long long)m, (long long)n, (long long)k, v == NV ? "passes" : "row pass", shape, variant,
               v == NV + 1 ? "need in the epilogue" : v == NV + 2 ? "sums always stored" : "sums stored by the rule", ms / reps,
               p.w_need, p.n, p.w,
               p.second ? "both" : "first");
        if (first_n < 0)
            first_n = p.w_need;
        bad += p.w_need != first_n;
    }
    oz2a_force_panel_shape(0);
    oz2a_force_row_variant(0);
    oz2a_force_est_passes(0);
    oz2a_force_est_store(0);
    CUDA_CHECK(cudaFree(scratch));
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    free(A), free(Bm);
    return bad ? 1 : 0;
}

/* A real call's per-row results in the workspace against the host's
 * (crt/oz2_auto.h): every row's scale, norm sum, g and estimate operands
 * (0 from K_E to kep); the number of differing rows. */
static int check_arrays(const oz_gemm_desc *d, const void *ws, const double *A, const double *Bm)
{
    oz2a_est_arrays ar;
    oz2a_estimate_arrays(d, ws, &ar);
    const int32_t *dscale[2], *special;
    oz2a_estimate_scales(d, ws, &dscale[0], &dscale[1], &special);
    const int64_t ke = d->k < OZ2A_KEST ? d->k : OZ2A_KEST, kep = ar.kep;
    int bad = 0;
    for (int o = 0; o < 2; o++) {
        const int64_t rows = o ? d->n : d->m, ld = o ? d->ldb : d->lda;
        const int tr = o ? d->transb == 0 : d->transa != 0; /* the view's K contiguous */
        const double *x = o ? Bm : A;
        int32_t *sc = malloc(sizeof(int32_t) * (size_t)rows), *g = malloc(sizeof(int32_t) * (size_t)rows);
        uint64_t *a1 = malloc(sizeof(uint64_t) * (size_t)rows);
        uint8_t *q = malloc((size_t)(rows * kep));
        CUDA_CHECK(cudaMemcpy(sc, dscale[o], sizeof(int32_t) * (size_t)rows, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(g, ar.g[o], sizeof(int32_t) * (size_t)rows, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(a1, ar.norm[o], sizeof(uint64_t) * (size_t)rows, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(q, ar.q[o], (size_t)(rows * kep), cudaMemcpyDeviceToHost));
        for (int64_t r = 0; r < rows; r++) {
            double mx = 0.0;
            int special_row = 0;
            for (int64_t kk = 0; kk < d->k; kk++) {
                const double v = fabs(x[tr ? kk + r * ld : r + kk * ld]);
                special_row |= !(v <= DBL_MAX);
                mx = v > mx ? v : mx;
            }
            const int s = special_row ? OZ_SCALE_SPECIAL : oz_scale_exponent(mx);
            uint64_t sum = 0;
            for (int64_t kk = 0; !special_row && kk < d->k; kk++)
                sum += oz2a_norm_term(x[tr ? kk + r * ld : r + kk * ld], s);
            const int gr = oz2a_row_scale(sum, d->k);
            int ok = sc[r] == s && a1[r] == sum && (special_row || g[r] == gr);
            for (int64_t kk = 0; ok && kk < kep; kk++) {
                const uint32_t e = kk < ke && !special_row && sum ? oz2a_quant(x[tr ? kk + r * ld : r + kk * ld], s, gr) : 0u;
                ok = q[r * kep + kk] == e;
            }
            if (!ok && bad++ < 4)
                printf("  %s row %lld: scale %d (%d), A1 %llu (%llu), g %d (%d)\n", o ? "B" : "A", (long long)r, sc[r], s,
                       (unsigned long long)a1[r], (unsigned long long)sum, g[r], gr);
        }
        free(sc), free(g), free(a1), free(q);
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 4 && strcmp(argv[1], "bench") == 0) {
        int ds = -1;
        for (int i = 0; argc > 6 && i < S_COUNT; i++)
            ds = strcmp(argv[6], names[i]) == 0 ? i : ds;
        return bench(atoll(argv[2]), atoll(argv[3]), atoll(argv[4]), argc > 5 ? atoi(argv[5]) : 20, ds);
    }
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x0a070a07ULL;
    rng_state = seed;
    int cases = argc > 2 ? atoi(argv[2]) : 120, bad = 0, emulated = 0, native = 0, seconds = 0;
    printf("test_oz2_auto: seed %#llx, %d cases\n", (unsigned long long)seed, cases);
    for (int c = 0; c < cases; c++) {
        const int ds = c % S_COUNT;
        const int targets[4] = {53, 20, 40, 64};
        const int B = targets[(c / S_COUNT) % 4];
        const int ta = (int)rng_range(0, 1), tb = (int)rng_range(0, 1);
        int64_t m = rng_range(1, 300), n = rng_range(1, 300), k = rng_range(1, 3000);
        if (c % 5 == 1) /* A's rows padded to 768 fill the 192-row tile: the sums stored by the rule */
            m = 768 - rng_range(0, 100);
        if (c % 8 == 4) { /* long rows: the panel kernel's clusters of 1 to 8 CTAs (k to 16384), and past them */
            m = rng_range(1, 40), n = rng_range(1, 40), k = rng_range(1500, 17500);
        }
        if (c % 8 == 6) { /* whole panels and rows: the row and panel kernels' FULL forms (no predicates) */
            m = 8 * rng_range(1, 40), n = 8 * rng_range(1, 40), k = 1024 * rng_range(1, 4);
        }
        if (c % 17 == 5) { /* past the estimate's K_E: only its first 65536 are used */
            m = rng_range(1, 8), n = rng_range(1, 8), k = rng_range(65537, 90000);
        }
        const int cx = c % 3 == 2, el = cx ? 2 : 1; /* complex: both parts from the dataset, ops N, T, C */
        const int ta_cx = cx && ta ? (int)rng_range(1, 2) : ta, tb_cx = cx && tb ? (int)rng_range(1, 2) : tb;
        const int64_t ra = ta ? k : m, ca = ta ? m : k, rb = tb ? n : k, cb = tb ? k : n;
        const int64_t lda = ra + rng_range(0, 3), ldb = rb + rng_range(0, 3);
        double *A = calloc((size_t)(el * lda * ca), sizeof(double)), *Bm = calloc((size_t)(el * ldb * cb), sizeof(double));
        for (int64_t i = 0; i < m; i++) {
            int big = (int)rng_range(0, k - 1);
            for (int64_t kk = 0; kk < k; kk++)
                for (int p = 0; p < el; p++)
                    A[el * (ta ? kk + i * lda : i + kk * lda) + p] = gen(ds, i, kk, big);
        }
        for (int64_t j = 0; j < n; j++)
            for (int64_t kk = 0; kk < k; kk++)
                for (int p = 0; p < el; p++)
                    Bm[el * (tb ? j + kk * ldb : kk + j * ldb) + p] = gen(ds == S_BIG40 ? S_UNIFORM : ds, j, kk, -1);
        if (ds == S_SPARSE) /* a zero row of op(A) */
            for (int64_t kk = 0; kk < k; kk++)
                for (int p = 0; p < el; p++)
                    A[el * (ta ? kk : kk * lda) + p] = 0.0;
        int N, w, wn;
        const int rrc = cx ? oz2z_ref_auto_plan((oz_op)ta_cx, (oz_op)tb_cx, m, n, k, A, lda, Bm,
                                                ldb, B, &N, &w, &wn)
                           : oz2_ref_auto_plan(ta, tb, m, n, k, A, lda, Bm, ldb, B, &N, &w, &wn);
        if (rrc != 0) {
            printf("  case %d: the reference refused\n", c);
            return 2;
        }
        double *dA, *dB;
        CUDA_CHECK(cudaMalloc((void **)&dA, sizeof(double) * (size_t)(el * lda * ca)));
        CUDA_CHECK(cudaMalloc((void **)&dB, sizeof(double) * (size_t)(el * ldb * cb)));
        CUDA_CHECK(cudaMemcpy(dA, A, sizeof(double) * (size_t)(el * lda * ca), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(dB, Bm, sizeof(double) * (size_t)(el * ldb * cb), cudaMemcpyHostToDevice));
        oz_gemm_desc d = {0};
        d.transa = ta_cx, d.transb = tb_cx, d.m = m, d.n = n, d.k = k;
        d.elem = cx ? OZ_ELEM_COMPLEX : OZ_ELEM_REAL;
        d.A = dA, d.lda = lda, d.B = dB, d.ldb = ldb, d.batch = 1;
        size_t bytes = oz2a_estimate_workspace(&d), sbytes = (size_t)(m * ((n + 127) / 128 * 128) * 4);
        void *ws, *scratch;
        CUDA_CHECK(cudaMalloc(&ws, bytes));
        CUDA_CHECK(cudaMalloc(&scratch, sbytes));
        CUDA_CHECK(cudaMemset(scratch, 0xa5, sbytes));
        CUDA_CHECK(cudaMemset(ws, 0x5a, bytes)); /* poisoned: the estimate must set what it reads */
        oz2a_force_portable(c % 2); /* the engine's estimate and the dp4a one, alternately */
        oz2a_force_est_passes((c / 2) % 2); /* the one-pass row kernel where it serves, or the separate passes */
        const int store = (c / 4) % 3; /* the sums stored by the rule, never, always (both engine tiles) */
        oz2a_force_est_store(store);
        oz2a_force_panel_shape((c / 4) % OZ2A_TEST_PANEL_SHAPES); /* every panel shape and row variant in turn */
        oz2a_force_row_variant((c / 4) % OZ2A_TEST_ROW_VARIANTS);
        CUDA_CHECK((cudaError_t)oz2a_estimate(&d, B, ws, bytes, c % 8 == 3 ? NULL : scratch, sbytes, 0));
        CUDA_CHECK(cudaDeviceSynchronize());
        oz2a_dev_plan p;
        CUDA_CHECK(cudaMemcpy(&p, ws, sizeof p, cudaMemcpyDeviceToHost));
        int ok = p.w_need == wn && p.n == N && (N == 0 || p.w == w) && p.planes == (cx ? 2 * N : N);
        for (int q = 0; ok && q < N; q++) {
            if (cx) {
                const oz2z_split_modulus sm = oz2z_split_mod(q);
                ok = p.zbias[q] == oz2_bias_bits(w, sm.p) &&
                     p.zbias[OZ2Z_SPLIT_NMODULI + q] == oz2z_bias_r_bits(w, &sm);
            } else {
                ok = p.bias[q] == oz2_bias_bits(w, oz2_modulus(q));
            }
        }
        const int rows_bad = cx ? 0 : check_arrays(&d, ws, A, Bm);
        if (rows_bad)
            printf("  case %d: %d rows' scales, norm sums, g or operands differ from the host's\n", c, rows_bad);
        ok = ok && rows_bad == 0;
        if (!ok) {
            printf("  MISMATCH (%s estimate, %s, store %d%s) case %d %s B=%d ops %d%d m=%lld n=%lld k=%lld: gpu need %d N %d w %d, reference need %d N %d w %d\n",
                   c % 2 ? "dp4a" : "engine", 
                   (c / 2) % 2 ? "passes" : "row pass", store, cx ? ", complex" : "", c, names[ds], B, (int)d.transa, (int)d.transb,
                   (long long)m, (long long)n, (long long)k, p.w_need, p.n, p.w, wn, N, w);
            bad++;
        }
        N ? emulated++ : native++;
        seconds += p.second;
        CUDA_CHECK(cudaFree(ws));
        CUDA_CHECK(cudaFree(scratch));
        CUDA_CHECK(cudaFree(dA));
        CUDA_CHECK(cudaFree(dB));
        free(A), free(Bm);
    }
    printf("test_oz2_auto: %d of %d cases differ (%d emulated, %d not; %d summed all of K_E after the first part)\n",
           bad, cases, emulated, native, seconds);
    return bad ? 1 : 0;
}
