/* tests/gpu/test_oz2_bits.c: the GPU ozaki2 path equals the CPU reference oz2_ref_dgemm bit for bit on random cases (all ops, lds, scalars, pointer modes, batches, Inf/NaN, wide exponents, N 2..20, k up to 100000, graphs, both residue engines).
 *
 *   test_oz2_bits [cases [seed [maxdim maxk]]]
 *   test_oz2_bits native M N K [REPS]     (an uncertified call's plain dot products, timed; native_bench)
 *
 * First layer by layer (scale exponents, residue planes, the engines' R_q
 * planes against the host's), then whole calls. Prints every failing case
 * with its parameters and the first layer that differs, then "N passed, M failed";
 * exits 1 on any failure, 2 on a setup error. */
#include "crt/oz2.h"
#include "crt/oz2_auto.h"
#include "gemm_case.h"
#include "kernels/oz2_auto_estimate.h"
#include "kernels/oz2_gemm.h"
#include "kernels/res_layout.h"
#include "reference/oz2gemm.h"
#include "reference/refcommon.h"
#include "slicing/slicing.h"

static int failures, cases;
static int64_t n_seen[OZ2_MAX_MODULI + 1];

/* Beyond gpu_util.h's distributions: exponents 2^-600..2^600 by storage
 * column (rows of op(A) at different scales, or each row spanning the range,
 * as the op decides), by element, the exact-range hazard data, and the ends
 * of the double range (rng_extreme's regimes). */
enum { D_SPAN_COL = DIST_COUNT, D_SPAN_ELEM, D_CONST, D_ALIGNED, D_EXTREME, D_ALL = D_EXTREME + EXTREME_REGIMES };
static double gen(int dist, int b, size_t idx, int64_t ld)
{
    switch (dist) {
    case D_SPAN_COL: return ldexp(rng_sym(), (int)(((int64_t)(idx / (size_t)ld) * 37) % 1201) - 600);
    case D_SPAN_ELEM: return ldexp(rng_sym(), (int)rng_range(-600, 600));
    case D_CONST: return 0x1.fffffffffffffp-1; /* a'' = 2^w for w < 53: X = k 4^w, the most the plan allows */
    case D_ALIGNED: return 1.0 - ldexp(rng_unit(), -40);
    default: return dist >= D_EXTREME ? rng_extreme(dist - D_EXTREME, b, idx, ld) : rng_dist(dist);
    }
}

/* bits that give exactly `target` moduli at this k, or 0 when none does */
static int bits_for(int target, int64_t k)
{
    int hi = oz2_wmax(target, k < 1 ? 1 : k), lo = target == OZ2_MIN_MODULI ? 1 : oz2_wmax(target - 1, k < 1 ? 1 : k) + 1;
    if (lo < 1)
        lo = 1;
    if (hi < lo)
        return 0;
    return (int)rng_range(lo, hi);
}

/* The ozaki2 CPU reference at *(int *)bits as a gemm_case_ref_fn. */
static int ref_oz2(const gemm_case *c, int64_t b, double *r, void *bits)
{
    return oz2_ref_dgemm_pm(c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->A + (size_t)b * c->ia, c->lda,
                            c->B + (size_t)b * c->ib, c->ldb, c->beta, r, c->ldc, *(const int *)bits, c->device_mode);
}

/* One random case. big: k up to maxk with small m, n and hazard data. */
static void run_case(int idx, int64_t maxdim, int64_t maxk, int big)
{
    int ta = (int)rng_range(0, 2), tb = (int)rng_range(0, 2);
    int64_t m = rng_range(1, big ? 24 : maxdim), n = rng_range(1, big ? 24 : maxdim);
    int64_t k = big ? rng_range(maxk / 2, maxk) : rng_range(1, maxk);
    if (!big && idx % 10 == 3) k = 0;
    int bits = 0;
    for (int tries = 0; tries < 50 && bits == 0; tries++)
        bits = bits_for((int)rng_range(OZ2_MIN_MODULI, OZ2_MAX_MODULI), k);
    if (bits == 0)
        bits = 1;
    if (idx % 3 == 1) { /* automatic precision (docs/ozaki2-auto.md): 2^-53, or 2^-B for B in 20..64 */
        const int B = idx % 2 ? 53 : (int)rng_range(OZ2A_B_MIN, OZ2A_B_MAX);
        bits = OZ2A_AUTO(B);
    }
    int nmod = oz2_gemm_moduli(k, bits, NULL);
    if (nmod == 0) {
        fprintf(stderr, "case %d: no plan for k=%ld bits=%d\n", idx, (long)k, bits);
        exit(2);
    }
    n_seen[nmod]++;
    int64_t lda = ((ta ? k : m) > 1 ? (ta ? k : m) : 1) + rng_range(0, 1) * rng_range(1, 9);
    int64_t ldb = ((tb ? n : k) > 1 ? (tb ? n : k) : 1) + rng_range(0, 1) * rng_range(1, 9);
    int64_t ldc = m + rng_range(0, 1) * rng_range(1, 9);
    double alpha = gemm_case_scalar(), beta = gemm_case_scalar();
    int device_mode = (int)rng_range(0, 1);
    int batch_kind = big ? 0 : (int)rng_range(0, 3); /* 0,1: single; 2: strided; 3: pointer array */
    int64_t batch = batch_kind >= 2 ? rng_range(1, 3) : 1;
    int dist = big ? (int)rng_range(D_CONST, D_ALIGNED) : (int)rng_range(0, D_ALL - 1);
    int special = !big && idx % 9 == 5; /* Inf/NaN somewhere */
    int nan_c = beta == 0.0 && rng_range(0, 1);
    int graph = !big && idx % 7 == 6 && idx > 0;
    int engine = idx % 3 == 1 ? 1 : 0; /* a third on the portable engine, the rest as the device decides */

    gemm_case c = {0};
    c.ta = ta, c.tb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc, c.batch = batch;
    c.alpha = alpha, c.beta = beta, c.device_mode = device_mode, c.ptr_array = batch_kind == 3;
    c.bcast_a = batch > 1 && idx % 5 == 2, c.bcast_b = batch > 1 && idx % 5 == 4; /* broadcast operands */
    gemm_case_alloc(&c);
    double *A = c.A, *B = c.B, *C = c.C;
    const size_t sa = c.sa, sb = c.sb;
    for (size_t i = 0; i < c.a_tot; i++) A[i] = gen(dist, 0, i, lda);
    for (size_t i = 0; i < c.b_tot; i++) B[i] = gen(dist, 1, i, ldb);
    if (dist == D_ALIGNED && (rng_range(0, 1))) /* sign-aligned: all of A negative, B positive */
        for (size_t i = 0; i < c.a_tot; i++) A[i] = -A[i];
    if (idx % 3 == 1 && idx % 11 == 4) /* automatic: one operand zero, no element constrains the plan (N = 2's CRT serves it) */
        for (size_t i = 0; i < (idx % 2 ? c.a_tot : c.b_tot); i++)
            (idx % 2 ? A : B)[i] = 0.0;
    for (size_t i = 0; i < c.c_tot; i++) C[i] = nan_c ? NAN : rng_sym();
    gemm_case_poison_c(&c);
    if (special && sa > 0 && sb > 0) {
        A[rng_range(0, (int64_t)sa - 1)] = rng_range(0, 1) ? NAN : INFINITY;
        B[rng_range(0, (int64_t)sb - 1)] = -INFINITY;
    }
    gemm_case_reference(&c, ref_oz2, &bits, idx);
    gemm_case_upload(&c);
    const oz_gemm_desc d = c.d;
    /* the full workspace, the least (batch items one at a time, blocks of C
     * of one tile, slabs of K of one chunk), or a plan in between (a forced
     * budget: C whole with slabs, or larger blocks; kernels/block_plan.h) */
    const int wsk = (int)rng_range(0, 2);
    if (wsk == 2) {
        const size_t lo = oz2_gemm_workspace_min(&d, bits), hi = oz2_gemm_workspace_full(&d, bits);
        oz2_gemm_force_budget(lo + (size_t)((double)(hi - lo) * rng_unit()));
    }
    size_t wsb = wsk == 0 ? oz2_gemm_workspace_min(&d, bits) : oz2_gemm_workspace_full(&d, bits);
    if (wsb == 0) {
        fprintf(stderr, "case %d: zero workspace for a reachable plan\n", idx);
        exit(2);
    }
    gemm_case_workspace(&c, wsb);
    CUDA_CHECK(cudaStreamSynchronize(c.st));
    oz2_gemm_force_engine(engine);
    int rc;
    if (graph) {
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CUDA_CHECK(cudaStreamBeginCapture(c.st, cudaStreamCaptureModeGlobal));
        rc = oz2_gemm_run(&d, bits, c.ws, wsb, c.st);
        CUDA_CHECK(cudaStreamEndCapture(c.st, &g));
        CUDA_CHECK(cudaGraphInstantiate(&ge, g, 0));
        CUDA_CHECK(cudaGraphLaunch(ge, c.st));
        CUDA_CHECK(cudaStreamSynchronize(c.st));
        CUDA_CHECK(cudaGraphExecDestroy(ge));
        CUDA_CHECK(cudaGraphDestroy(g));
    } else {
        rc = oz2_gemm_run(&d, bits, c.ws, wsb, c.st);
    }
    oz2_gemm_force_budget(0);
    cases++;
    size_t first;
    const int64_t bad = gemm_case_result(&c, rc, &first);
    if (bad) {
        failures++;
        fprintf(stderr, "FAIL case %d: rc=%d %c%c m=%ld n=%ld k=%ld lda=%ld ldb=%ld ldc=%ld alpha=%g beta=%g dev=%d batch=%ld kind=%d bcast=%d%d dist=%d special=%d bits=%d N=%d graph=%d engine=%d: %lld mismatches, first at %zu: got %.17g want %.17g\n",
                idx, rc, "NTC"[ta], "NTC"[tb], (long)m, (long)n, (long)k, (long)lda, (long)ldb, (long)ldc, alpha, beta,
                device_mode, (long)batch, batch_kind, c.bcast_a, c.bcast_b, dist, special, bits, nmod, graph, engine, (long long)bad, first,
                c.C[first], c.R[first]);
    }
    gemm_case_free(&c);
}

/* ---- layer by layer (ozaki2.md steps 2 and 3; phase22.md's "how to check it") ---- */

static int layer_failures;

/* One small case, batch 1: the scale exponents and residue planes (stage 1)
 * against the host's, then the engine's R_q planes (stage 2) against the
 * host's exact sums of those residues, for each residue engine. */
static void run_layers(int idx)
{
    int ta = (int)rng_range(0, 2), tb = (int)rng_range(0, 2);
    int64_t m = rng_range(1, 140), n = rng_range(1, 140), k = rng_range(1, 300);
    int bits = 0;
    for (int tries = 0; tries < 50 && bits == 0; tries++)
        bits = bits_for((int)rng_range(OZ2_MIN_MODULI, OZ2_MAX_MODULI), k);
    int dist = (int)rng_range(0, D_ALL - 1);
    int64_t lda = (ta ? k : m) + rng_range(0, 3), ldb = (tb ? n : k) + rng_range(0, 3);
    size_t sa = (size_t)lda * (size_t)(ta ? m : k), sb = (size_t)ldb * (size_t)(tb ? k : n);
    double *A = malloc(8 * sa), *B = malloc(8 * sb);
    for (size_t i = 0; i < sa; i++) A[i] = gen(dist, 0, i, lda);
    for (size_t i = 0; i < sb; i++) B[i] = gen(dist, 1, i, ldb);
    if (idx % 3 == 2)
        A[rng_range(0, (int64_t)sa - 1)] = NAN;
    double *dA = dev_upload(A, 8 * sa), *dB = dev_upload(B, 8 * sb), *dC = NULL;
    CUDA_CHECK(cudaMalloc((void **)&dC, 8 * (size_t)(m * n)));
    double alpha = 1.0, beta = 0.0;
    oz_gemm_desc d = {ta, tb, m, n, k, dA, lda, 0, dB, ldb, 0, dC, m, 0, NULL, NULL, NULL, 1, &alpha, &beta, 0, OZ_ELEM_REAL, NULL};
    oz2_gemm_layout_info L;
    if (oz2_gemm_layout(&d, bits, &L) != 0) {
        fprintf(stderr, "layers %d: no layout\n", idx);
        exit(2);
    }
    size_t wsb = (size_t)L.slot_bytes; /* the whole call at once: the layout above */
    char *ws, *h = malloc(wsb);
    CUDA_CHECK(cudaMalloc((void **)&ws, wsb));
    CUDA_CHECK(cudaMemset(ws, 0x77, wsb));
    oz2_gemm_force_engine(0);
    int rc = oz2_gemm_run_stage(&d, bits, ws, wsb, 1, NULL);
    CUDA_CHECK(cudaDeviceSynchronize());
    dev_download(h, ws, wsb);
    int bad = rc != 0;
    const char *what = rc ? "launch" : "";
    /* host: scales and residues of both operands, padded */
    int64_t rows[2] = {L.Mpad, L.Npad}, real[2] = {m, n};
    int8_t *res[2] = {NULL, NULL};
    for (int o = 0; o < 2 && !bad; o++) {
        const int32_t *scale = (const int32_t *)(h + (o ? L.offScaleB : L.offScaleA));
        const int8_t *planes = (const int8_t *)(h + (o ? L.offB : L.offA));
        res[o] = calloc((size_t)(L.n * rows[o] * L.Kpad), 1);
        for (int64_t r = 0; r < rows[o] && !bad; r++) {
            double mx = 0.0;
            int special = 0;
            for (int64_t kk = 0; r < real[o] && kk < k; kk++) {
                double x = o ? (tb ? B[r + kk * ldb] : B[kk + r * ldb]) : (ta ? A[kk + r * lda] : A[r + kk * lda]);
                special |= !isfinite(x);
                mx = fmax(mx, fabs(x));
            }
            int sc = special ? OZ_SCALE_SPECIAL : oz_scale_exponent(mx);
            if (scale[r] != sc) {
                bad = 1, what = o ? "scale of B" : "scale of A";
                fprintf(stderr, "  row %ld: scale %d, host %d\n", (long)r, scale[r], sc);
                break;
            }
            for (int64_t kk = 0; kk < L.Kpad; kk++) {
                double x = 0.0;
                if (r < real[o] && kk < k && !special)
                    x = o ? (tb ? B[r + kk * ldb] : B[kk + r * ldb]) : (ta ? A[kk + r * lda] : A[r + kk * lda]);
                uint64_t mag;
                int e;
                int neg = oz2_scaled_int(x, L.w - (special ? 0 : sc), &mag, &e);
                for (int q = 0; q < L.n; q++) {
                    int8_t want = oz2_residue(mag, e, neg, oz2_modulus(q));
                    res[o][(q * rows[o] + r) * L.Kpad + kk] = want;
                    int8_t got = planes[(q * rows[o] + r) * L.Kpad + kk];
                    if (got != want && !bad) {
                        bad = 1, what = o ? "residues of B" : "residues of A";
                        fprintf(stderr, "  plane %d row %ld k %ld: %d, host %d\n", q, (long)r, (long)kk, got, want);
                    }
                }
            }
        }
    }
    /* the engine's R_q planes, on each engine this device has */
    for (int eng = 1; eng <= 2 && !bad; eng++) {
        if (eng == 2 && !oz2_gemm_sm90_engine())
            break;
        CUDA_CHECK(cudaMemset(ws + L.offRes, 0x55, (size_t)(L.n * L.Mpad * L.Npad)));
        oz2_gemm_force_engine(eng);
        rc = oz2_gemm_run_stage(&d, bits, ws, wsb, 2, NULL);
        CUDA_CHECK(cudaDeviceSynchronize());
        dev_download(h, ws, wsb);
        if (rc) {
            bad = 1, what = "engine launch";
            break;
        }
        const uint8_t *R = (const uint8_t *)(h + L.offRes);
        for (int q = 0; q < L.n && !bad; q++) {
            int64_t mq = oz2_modulus(q);
            for (int64_t j = 0; j < L.Npad && !bad; j++)
                for (int64_t i = 0; i < L.Mpad; i++) {
                    const int8_t *a = res[0] + (q * L.Mpad + i) * L.Kpad, *b = res[1] + (q * L.Npad + j) * L.Kpad;
                    int64_t acc = 0;
                    for (int64_t kk = 0; kk < L.Kpad; kk++)
                        acc += a[kk] * b[kk];
                    int want = (int)(((acc % mq) + mq) % mq);
                    int got = R[q * L.Npad * L.Mpad + oz_res_pos(i, j, L.Mpad)];
                    if (got != want) {
                        bad = 1, what = eng == 1 ? "R planes (portable engine)" : "R planes (sm90 engine)";
                        fprintf(stderr, "  modulus %d (m=%ld) i %ld j %ld: %d, host %d\n", q, (long)mq, (long)i,
                                (long)j, got, want);
                        break;
                    }
                }
        }
    }
    oz2_gemm_force_engine(0);
    cases++;
    if (bad) {
        failures++;
        layer_failures++;
        fprintf(stderr, "FAIL layers %d: %s: %c%c m=%ld n=%ld k=%ld lda=%ld ldb=%ld dist=%d bits=%d N=%d w=%d\n", idx,
                what, "NTC"[ta], "NTC"[tb], (long)m, (long)n, (long)k, (long)lda, (long)ldb, dist, bits, L.n, L.w);
    }
    free(res[0]);
    free(res[1]);
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    free(A), free(B), free(h);
}

/* `native M N K [REPS]`: a call no automatic plan certifies (exponents
 * 2^-600..2^600 by element), so every element is the plain dot product of
 * kernels/oz2_auto_native.cu: the whole call timed (events around REPS
 * back to back after a warm-up), and 256 sampled elements against the CPU's
 * plain dot (alpha 1, beta 0: C = P). Exits 1 on a differing element. */
static int native_bench(int64_t m, int64_t n, int64_t k, int reps)
{
    double *A = malloc(sizeof(double) * (size_t)(m * k)), *B = malloc(sizeof(double) * (size_t)(k * n));
    double *C = malloc(sizeof(double) * (size_t)(m * n));
    if (!A || !B || !C)
        return 2;
    for (int64_t i = 0; i < m * k; i++)
        A[i] = gen(D_SPAN_ELEM, 0, (size_t)i, m);
    for (int64_t i = 0; i < k * n; i++)
        B[i] = gen(D_SPAN_ELEM, 1, (size_t)i, k);
    double *dA = dev_upload(A, sizeof(double) * (size_t)(m * k)), *dB = dev_upload(B, sizeof(double) * (size_t)(k * n));
    double *dC;
    CUDA_CHECK(cudaMalloc((void **)&dC, sizeof(double) * (size_t)(m * n)));
    CUDA_CHECK(cudaMemset(dC, 0xff, sizeof(double) * (size_t)(m * n))); /* poison: NaN */
    static const double one = 1.0, zero = 0.0;
    oz_gemm_desc d = {0};
    d.m = m, d.n = n, d.k = k, d.elem = OZ_ELEM_REAL, d.A = dA, d.lda = m, d.B = dB, d.ldb = k, d.C = dC, d.ldc = m;
    d.batch = 1, d.alpha = &one, d.beta = &zero;
    const int bits = OZ2A_AUTO(53);
    const size_t wsb = oz2_gemm_workspace_full(&d, bits);
    void *ws;
    CUDA_CHECK(cudaMalloc(&ws, wsb));
    CUDA_CHECK((cudaError_t)oz2_gemm_run(&d, bits, ws, wsb, NULL));
    CUDA_CHECK(cudaDeviceSynchronize());
    int planned_n = -1;
    CUDA_CHECK(cudaMemcpy(&planned_n, (const char *)ws + offsetof(oz2a_dev_plan, n), sizeof planned_n,
                          cudaMemcpyDeviceToHost));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    CUDA_CHECK(cudaEventRecord(e0, 0));
    for (int r = 0; r < reps; r++)
        CUDA_CHECK((cudaError_t)oz2_gemm_run(&d, bits, ws, wsb, NULL));
    CUDA_CHECK(cudaEventRecord(e1, 0));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    dev_download(C, dC, sizeof(double) * (size_t)(m * n));
    const oz_ref_view va = oz_ref_view_a(OZ_OP_N, A, m, m, k), vb = oz_ref_view_b(OZ_OP_N, B, k, k, n);
    int bad = 0;
    for (int s = 0; s < 256; s++) {
        const int64_t i = s == 0 ? m - 1 : rng_range(0, m - 1), j = s == 0 ? n - 1 : rng_range(0, n - 1);
        const double want = oz_ref_plain_dot(&va, &vb, i, j);
        if (!same_double(C[i + j * m], want) && bad++ < 4)
            printf("  element (%lld, %lld): %.17g, the CPU's plain dot %.17g\n", (long long)i, (long long)j,
                   C[i + j * m], want);
    }
    printf("native %lldx%lldx%lld: plan N = %d (0: none), %.3f ms a call (%.2f TFLOPS); %d of 256 sampled elements "
           "differ from the CPU's plain dot\n",
           (long long)m, (long long)n, (long long)k, planned_n, ms / reps, 2e-9 * (double)m * (double)n * (double)k / (ms / reps),
           bad);
    CUDA_CHECK(cudaFree(ws));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    CUDA_CHECK(cudaFree(dC));
    free(A), free(B), free(C);
    return bad || planned_n != 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 4 && strcmp(argv[1], "native") == 0)
        return native_bench(atoll(argv[2]), atoll(argv[3]), atoll(argv[4]), argc > 5 ? atoi(argv[5]) : 3);
    int ncases = argc > 1 ? atoi(argv[1]) : 200;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20261130;
    int64_t maxdim = argc > 3 ? atoll(argv[3]) : 300, maxk = argc > 4 ? atoll(argv[4]) : 700;
    rng_state ^= seed;
    printf("test_oz2_bits: %d cases, seed %llu\n", ncases, (unsigned long long)seed);
    int nlayers = argc > 3 ? 2 : 12;
    for (int i = 0; i < nlayers; i++)
        run_layers(i);
    printf("layer checks: %d cases, %d failures%s\n", nlayers, layer_failures,
           oz2_gemm_sm90_engine() ? " (both engines)" : " (portable engine only: no sm_90a engine here)");
    for (int i = 0; i < ncases; i++)
        run_case(i, maxdim, maxk, 0);
    if (argc <= 3) /* the exact-range hazard at large k: constant and sign-aligned data */
        for (int i = 0; i < 8; i++)
            run_case(ncases + i, 24, i < 4 ? 100000 : 20000, 1);
    printf("moduli counts seen:");
    for (int q = OZ2_MIN_MODULI; q <= OZ2_MAX_MODULI; q++)
        printf(" N%d:%ld", q, (long)n_seen[q]);
    printf("\ntest_oz2_bits: %d cases, %d bit-identical, %d failures\n", cases, cases - failures, failures);
    printf("%d passed, %d failed\n", cases - failures, failures);
    return failures ? 1 : 0;
}
