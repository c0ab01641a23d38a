/* tests/gpu/test_blocked.c: the engine path cut into blocks of C and slabs of K (kernels/block_plan.h) under forced small workspaces equals the CPU reference bit for bit. */
#include <string.h>

#include "gemm_case.h"

/* Test hooks of the test build (kernels/gemm_host.cu). */
void oz_gemm_force_budget(size_t bytes);
void oz_gemm_force_p22_path(int which);
int oz_gemm_engine_plan(const oz_gemm_desc *d, size_t bytes, int64_t shape[6]);

#define CHUNK 4096
#define MAX_MACS 8e8 /* m n k batch per case: the CPU reference's time */

static int failures, cases;
/* what the cases covered: row blocks, column blocks, slabs with the
 * accumulators in C and in the workspace, groups of whole items, the
 * smallest workable plan */
static int seen_rows, seen_cols, seen_acc_c, seen_acc_ws, seen_group, seen_min;

/* k near the slab boundaries half the time. */
static int64_t pick_k(void)
{
    static const int64_t edge[] = {1, 127, 129, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK - 1, 2 * CHUNK,
                                   2 * CHUNK + 1, 3 * CHUNK, 3 * CHUNK + 1, 3 * CHUNK + 300};
    if (rng_range(0, 1))
        return edge[rng_range(0, (int64_t)(sizeof edge / sizeof edge[0]) - 1)];
    return rng_range(1, 3 * CHUNK + 300);
}

/* m or n: often near a multiple of the 128-row padding. */
static int64_t pick_dim(int64_t hi)
{
    if (hi >= 130 && rng_range(0, 2) == 0) {
        int64_t x = 128 * rng_range(1, hi / 128) + rng_range(-1, 1);
        return x < 1 ? 1 : x > hi ? hi : x;
    }
    return rng_range(1, hi);
}

/* One random case under forced budget `force` (0: none, 1: the smallest
 * workable plan, else bytes). */
static void run_case(int idx, int engine_runs)
{
    gemm_case c = {0};
    c.ta = (int)rng_range(0, 2), c.tb = (int)rng_range(0, 2);
    int batch_kind = (int)rng_range(0, 3); /* 0,1: single; 2: strided; 3: pointer array */
    c.batch = batch_kind >= 2 ? rng_range(1, 3) : 1;
    c.ptr_array = batch_kind == 3;
    c.bcast_a = c.batch > 1 && idx % 5 == 2, c.bcast_b = c.batch > 1 && idx % 5 == 4; /* broadcast operands */
    c.k = pick_k();
    int64_t mn_max = (int64_t)(MAX_MACS / (double)(c.k * c.batch));
    c.m = pick_dim(600 < mn_max ? 600 : mn_max);
    int64_t n_hi = mn_max / c.m < 600 ? mn_max / c.m : 600;
    c.n = pick_dim(n_hi > 1 ? n_hi : 1);
    c.lda = ((c.ta ? c.k : c.m) > 1 ? (c.ta ? c.k : c.m) : 1) + rng_range(0, 1) * rng_range(1, 9);
    c.ldb = ((c.tb ? c.n : c.k) > 1 ? (c.tb ? c.n : c.k) : 1) + rng_range(0, 1) * rng_range(1, 9);
    c.ldc = c.m + rng_range(0, 1) * rng_range(1, 9);
    c.alpha = gemm_case_scalar(), c.beta = rng_range(0, 1) ? 0.0 : gemm_case_scalar();
    c.device_mode = (int)rng_range(0, 1);
    int dist = (int)rng_range(0, DIST_COUNT - 1);
    int special = idx % 7 == 3; /* Inf/NaN in a few rows of op(A) and columns of op(B) */
    int force_kind = idx % 4;   /* 0: the smallest plan; 1, 2: between it and everything; 3: none */

    gemm_case_alloc(&c);
    const int64_t a_used = (int64_t)c.a_tot - 1, b_used = (int64_t)c.b_tot - 1;
    for (size_t i = 0; i < c.a_tot; i++) c.A[i] = rng_dist(dist);
    for (size_t i = 0; i < c.b_tot; i++) c.B[i] = rng_dist(dist);
    for (size_t i = 0; i < c.c_tot; i++) c.C[i] = c.beta == 0.0 ? NAN : rng_sym(); /* beta == 0: C is not read */
    gemm_case_poison_c(&c);
    if (special)
        for (int s = 0; s < 3; s++) {
            c.A[rng_range(0, a_used - 1)] = rng_range(0, 1) ? NAN : INFINITY;
            c.B[rng_range(0, b_used - 1)] = -INFINITY;
        }
    gemm_case_reference(&c, gemm_case_ref_p22, NULL, idx);
    gemm_case_upload(&c);
    const oz_gemm_desc d = c.d;
    const int64_t m = c.m, n = c.n, k = c.k;

    /* the engine's path, before any plan: fused or unfused, by turns */
    const int p22_path = idx % 2 ? 1 : 2;
    oz_gemm_force_p22_path(p22_path);
    /* the budget: the engine's smallest plan, one in between, or none */
    int64_t shape[6], least[6];
    oz_gemm_force_budget(1);
    if (oz_gemm_engine_plan(&d, (size_t)-1, least) < 0) {
        fprintf(stderr, "no plan for case %d\n", idx);
        exit(2);
    }
    oz_gemm_force_budget(0);
    if (oz_gemm_engine_plan(&d, (size_t)-1, shape) < 0) {
        fprintf(stderr, "no plan for case %d\n", idx);
        exit(2);
    }
    size_t force = force_kind == 0 ? 1
                   : force_kind == 3 ? 0
                                     : (size_t)(least[5] + (int64_t)((double)(shape[5] - least[5]) * rng_unit()));
    oz_gemm_force_budget(force);
    if (oz_gemm_engine_plan(&d, (size_t)-1, shape) < 0) {
        fprintf(stderr, "no plan for case %d\n", idx);
        exit(2);
    }
    /* exactly the plan's bytes on the engine (an overrun lands outside the
     * allocation: compute-sanitizer sees it), else what the path asks for */
    size_t wsb = engine_runs ? (size_t)shape[5] : oz_gemm_workspace_full(&d);
    const int64_t rows = (m + shape[0] - 1) / shape[0], cols = (n + shape[1] - 1) / shape[1];
    const int64_t slabs = (k + shape[2] - 1) / shape[2];
    if (engine_runs) {
        seen_rows += rows > 1;
        seen_cols += cols > 1;
        seen_acc_c += slabs > 1 && shape[4] == 1;
        seen_acc_ws += slabs > 1 && shape[4] == 2;
        seen_group += shape[3] > 1;
        seen_min += memcmp(shape, least, sizeof shape) == 0;
    }
    gemm_case_workspace(&c, wsb);
    if (getenv("OZ_TEST_VERBOSE")) /* the case before it runs: a crash names it */
        fprintf(stderr, "case %d: %c%c m=%ld n=%ld k=%ld lda=%ld ldb=%ld ldc=%ld dev=%d batch=%ld kind=%d beta=%g "
                        "force=%zu plan mb=%ld nb=%ld ks=%ld group=%ld acc=%ld ws=%zu\n",
                idx, "NTC"[c.ta], "NTC"[c.tb], (long)m, (long)n, (long)k, (long)c.lda, (long)c.ldb, (long)c.ldc,
                c.device_mode, (long)c.batch, batch_kind, c.beta, force, (long)shape[0], (long)shape[1], (long)shape[2],
                (long)shape[3], (long)shape[4], wsb);
    int rc = oz_gemm_run(&d, c.ws, wsb, c.st);
    cases++;
    size_t first;
    const int64_t bad = gemm_case_result(&c, rc, &first);
    if (bad) {
        failures++;
        fprintf(stderr, "FAIL case %d: rc=%d %c%c m=%ld n=%ld k=%ld lda=%ld ldb=%ld ldc=%ld alpha=%g beta=%g dev=%d "
                        "batch=%ld kind=%d bcast=%d%d dist=%d special=%d path=%d force=%zu plan mb=%ld nb=%ld ks=%ld group=%ld acc=%ld: "
                        "%lld mismatches, first at %zu: got %.17g want %.17g\n",
                idx, rc, "NTC"[c.ta], "NTC"[c.tb], (long)m, (long)n, (long)k, (long)c.lda, (long)c.ldb, (long)c.ldc,
                c.alpha, c.beta, c.device_mode, (long)c.batch, batch_kind, c.bcast_a, c.bcast_b, dist, special, p22_path, force, (long)shape[0],
                (long)shape[1], (long)shape[2], (long)shape[3], (long)shape[4], (long long)bad, first, c.C[first],
                c.R[first]);
    }
    oz_gemm_force_budget(0);
    oz_gemm_force_p22_path(0);
    gemm_case_free(&c);
}

int main(int argc, char **argv)
{
    /* test_blocked [cases [seed [--any]]]: --any drops the coverage demand (short runs, e.g. under memcheck) */
    int ncases = argc > 1 ? atoi(argv[1]) : 160;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20261130;
    const int need_cover = !(argc > 3 && !strcmp(argv[3], "--any"));
    rng_state ^= seed;
    /* the plan of a Hopper-sized call tells whether this device runs the engine */
    double one = 1.0;
    oz_gemm_desc probe = {0, 0, 256, 256, 256, NULL, 256, 0, NULL, 256, 0, NULL, 256, 0,
                          NULL, NULL, NULL, 1, &one, &one, 0, OZ_ELEM_REAL, NULL};
    int64_t shape[6];
    int engine_runs = oz_gemm_engine_plan(&probe, (size_t)-1, shape) == 0;
    printf("test_blocked: %d cases, seed %llu%s\n", ncases, (unsigned long long)seed,
           engine_runs ? "" : " (this device does not run the sm_90a engine: the mma.sync path is checked instead)");
    for (int i = 0; i < ncases; i++)
        run_case(i, engine_runs);
    printf("test_blocked: %d cases, %d bit-identical, %d failures; cases with row blocks %d, column blocks %d, "
           "slabs with accumulators in C %d / in the workspace %d, groups of items %d, the smallest plan %d\n",
           cases, cases - failures, failures, seen_rows, seen_cols, seen_acc_c, seen_acc_ws, seen_group, seen_min);
    int covered = !engine_runs || !need_cover || (seen_rows && seen_cols && seen_acc_c && seen_acc_ws && seen_group && seen_min);
    if (!covered)
        printf("FAIL: the cases did not cover every kind of plan\n");
    printf("%s\n", failures || !covered ? "FAIL" : "PASS");
    printf("%d passed, %d failed\n", cases - failures, failures + !covered);
    return failures || !covered ? 1 : 0;
}
