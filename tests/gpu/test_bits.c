/* tests/gpu/test_bits.c: the GPU path equals the CPU reference bit for bit on random cases (phase22.md layer 4). */
#include "gemm_case.h"

void oz_gemm_force_tiles(int which);
void oz_gemm_force_p22_path(int which);
static int failures, cases;

/* One random case: shapes, ops, lds, scalars, pointer mode, batch kind, special values. */
static void run_case(int idx, int64_t maxdim, int64_t maxk)
{
    gemm_case c = {0};
    c.ta = (int)rng_range(0, 2), c.tb = (int)rng_range(0, 2);
    c.m = rng_range(1, maxdim), c.n = rng_range(1, maxdim), c.k = rng_range(1, maxk);
    if (idx % 10 == 3) c.k = 0;
    c.lda = ((c.ta ? c.k : c.m) > 1 ? (c.ta ? c.k : c.m) : 1) + rng_range(0, 1) * rng_range(1, 9);
    c.ldb = ((c.tb ? c.n : c.k) > 1 ? (c.tb ? c.n : c.k) : 1) + rng_range(0, 1) * rng_range(1, 9);
    c.ldc = c.m + rng_range(0, 1) * rng_range(1, 9);
    c.alpha = gemm_case_scalar(), c.beta = gemm_case_scalar();
    c.device_mode = (int)rng_range(0, 1);
    int batch_kind = (int)rng_range(0, 3); /* 0,1: single; 2: strided; 3: pointer array */
    c.batch = batch_kind >= 2 ? rng_range(1, 3) : 1;
    c.ptr_array = batch_kind == 3;
    c.bcast_a = c.batch > 1 && idx % 5 == 2, c.bcast_b = c.batch > 1 && idx % 5 == 4; /* broadcast operands */
    int dist = (int)rng_range(0, DIST_COUNT + EXTREME_REGIMES - 1); /* from DIST_COUNT: rng_extreme's regimes */
    int special = idx % 9 == 5;  /* Inf/NaN somewhere */
    int nan_c = c.beta == 0.0 && rng_range(0, 1);

    gemm_case_alloc(&c);
    for (size_t i = 0; i < c.a_tot; i++) c.A[i] = dist < DIST_COUNT ? rng_dist(dist) : rng_extreme(dist - DIST_COUNT, 0, i, c.lda);
    for (size_t i = 0; i < c.b_tot; i++) c.B[i] = dist < DIST_COUNT ? rng_dist(dist) : rng_extreme(dist - DIST_COUNT, 1, i, c.ldb);
    for (size_t i = 0; i < c.c_tot; i++) c.C[i] = nan_c ? NAN : rng_sym();
    gemm_case_poison_c(&c);
    if (special && c.sa > 0 && c.sb > 0) { /* k = 0: A or B may hold nothing */
        c.A[rng_range(0, (int64_t)c.sa - 1)] = rng_range(0, 1) ? NAN : INFINITY;
        c.B[rng_range(0, (int64_t)c.sb - 1)] = -INFINITY;
    }
    gemm_case_reference(&c, gemm_case_ref_p22, NULL, idx);
    gemm_case_upload(&c);
    /* on the engine: the fused kernel (idx % 4 == 0) or the device's rule
     * (unfused at these sizes); set before the sizes, which follow the path */
    const int p22_path = idx % 4 == 0 ? 1 : 0;
    oz_gemm_force_p22_path(p22_path);
    /* a workspace for one item only, some of the time: batches then run in groups */
    size_t wsb = rng_range(0, 1) ? oz_gemm_workspace_full(&c.d) : oz_gemm_workspace_min(&c.d);
    gemm_case_workspace(&c, wsb);
    /* half the cases on the device's kernel (wgmma on an H200), a quarter on
     * each mma.sync tile configuration */
    oz_gemm_force_tiles(idx % 4 == 1 ? 1 : idx % 4 == 2 ? 2 : 0);
    if (getenv("OZ_TEST_VERBOSE")) /* the case before it runs: a crash names it */
        fprintf(stderr, "case %d: %c%c m=%ld n=%ld k=%ld lda=%ld ldb=%ld ldc=%ld dev=%d batch=%ld kind=%d tiles=%d ws=%zu\n",
                idx, "NTC"[c.ta], "NTC"[c.tb], (long)c.m, (long)c.n, (long)c.k, (long)c.lda, (long)c.ldb, (long)c.ldc,
                c.device_mode, (long)c.batch, batch_kind, idx % 4 == 1 ? 1 : idx % 4 == 2 ? 2 : 0, wsb);
    int rc = oz_gemm_run(&c.d, c.ws, wsb, c.st);
    cases++;
    size_t first;
    const int64_t bad = gemm_case_result(&c, rc, &first);
    if (bad) {
        failures++;
        fprintf(stderr, "FAIL case %d: rc=%d %c%c m=%ld n=%ld k=%ld lda=%ld ldb=%ld ldc=%ld alpha=%g beta=%g dev=%d batch=%ld kind=%d bcast=%d%d dist=%d special=%d p22_path=%d: %lld mismatches, first at %zu: got %.17g want %.17g\n",
                idx, rc, "NTC"[c.ta], "NTC"[c.tb], (long)c.m, (long)c.n, (long)c.k, (long)c.lda, (long)c.ldb,
                (long)c.ldc, c.alpha, c.beta, c.device_mode, (long)c.batch, batch_kind, c.bcast_a, c.bcast_b, dist, special, p22_path, (long long)bad,
                first, c.C[first], c.R[first]);
    }
    oz_gemm_force_p22_path(0);
    gemm_case_free(&c);
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
