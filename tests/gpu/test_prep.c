/* tests/gpu/test_prep.c: the operand preparation (scale and residue kernels) at the edges of the double range equals the CPU reference bit for bit: rows and columns scaled from the subnormals to near DBL_MAX, ties of the hi/lo split, every op, both plane layouts, blocked views. */
#include "gemm_case.h"

/* Test hooks of the test build (kernels/gemm_host.cu). */
void oz_gemm_force_tiles(int which);
void oz_gemm_force_budget(size_t bytes);

static int failures, cases;

/* A row's (or column's) scale: tiny (below 2^-989, where slice_fast.h
 * pre-scales; subnormal maxima included), near 1, or huge. */
static int pick_exponent(void)
{
    switch (rng_range(0, 5)) {
    case 0: return (int)rng_range(-1074, -1020);
    case 1: return (int)rng_range(-1000, -980);
    case 2: return (int)rng_range(980, 1024);
    default: return (int)rng_range(-30, 30);
    }
}

/* A value of (-1, 1) that stresses the split. */
static double pick_unit(void)
{
    switch (rng_range(0, 9)) {
    case 0: return ldexp((double)(2 * rng_range(0, 131071) + 1), -18) * (rng_range(0, 1) ? 1 : -1); /* tie of hi */
    case 1: return ldexp((double)(2 * rng_range(0, (1LL << 34) - 1) + 1), -35) * (rng_range(0, 1) ? 1 : -1); /* of lo */
    case 2: return rng_range(0, 1) ? 0x1.fffffffffffffp-1 : -0x1.fffffffffffffp-1;
    case 3: return 0.0;
    case 4: return ldexp(rng_sym(), -(int)rng_range(1, 60)); /* far below the row's max */
    default: return rng_sym();
    }
}

/* op(X)[i][kk] of a column-major X with leading dimension ld. */
static double *at(double *X, int trans, int64_t ld, int64_t i, int64_t kk)
{
    return trans ? &X[kk + i * ld] : &X[i + kk * ld];
}

static void run_case(int idx)
{
    const int ta = (int)rng_range(0, 1), tb = (int)rng_range(0, 1);
    const int mode = idx % 4; /* 0: the device's path; 1: its smallest plan (blocks, slabs); 2, 3: mma.sync tiles */
    const int ptr_array = rng_range(0, 3) == 0;
    const int64_t batch = ptr_array || rng_range(0, 1) ? rng_range(1, 3) : 1;
    const int64_t m = rng_range(1, 200), n = rng_range(1, 200);
    static const int64_t ks[] = {1, 7, 128, 129, 300, 4096, 4097, 5000};
    const int64_t k = rng_range(0, 2) ? ks[rng_range(0, 7)] : rng_range(1, 5000);
    const int64_t lda = (ta ? k : m) + rng_range(0, 3), ldb = (tb ? n : k) + rng_range(0, 3), ldc = m + rng_range(0, 2);
    gemm_case c = {0};
    c.ta = ta, c.tb = tb, c.m = m, c.n = n, c.k = k, c.lda = lda, c.ldb = ldb, c.ldc = ldc, c.batch = batch;
    c.ptr_array = ptr_array;
    c.alpha = rng_range(0, 1) ? 1.0 : -0.75, c.beta = rng_range(0, 1) ? 0.0 : 0.5;
    gemm_case_alloc(&c);
    const size_t sa = c.sa, sb = c.sb;
    double *A = c.A, *B = c.B, *C = c.C;
    for (size_t i = 0; i < c.a_tot; i++) A[i] = GEMM_CASE_POISON; /* outside op(A): never read */
    for (size_t i = 0; i < c.b_tot; i++) B[i] = GEMM_CASE_POISON;
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t i = 0; i < m; i++) { /* rows of op(A), each at its own scale */
            const int e = pick_exponent();
            for (int64_t kk = 0; kk < k; kk++)
                *at(A + b * sa, ta, lda, i, kk) = ldexp(pick_unit(), e);
        }
        for (int64_t j = 0; j < n; j++) { /* columns of op(B) */
            const int e = pick_exponent();
            for (int64_t kk = 0; kk < k; kk++)
                *at(B + b * sb, !tb, ldb, j, kk) = ldexp(pick_unit(), e);
        }
    }
    for (size_t i = 0; i < c.c_tot; i++) C[i] = c.beta == 0.0 ? NAN : rng_sym();
    gemm_case_poison_c(&c);
    gemm_case_reference(&c, gemm_case_ref_p22, NULL, idx);
    gemm_case_upload(&c);
    const oz_gemm_desc d = c.d;
    oz_gemm_force_tiles(mode >= 2 ? mode - 1 : 0);
    oz_gemm_force_budget(mode == 1 ? 1 : 0);
    const size_t wsb = oz_gemm_workspace_full(&d);
    gemm_case_workspace(&c, wsb);
    if (getenv("OZ_TEST_VERBOSE"))
        fprintf(stderr, "case %d: %c%c m=%ld n=%ld k=%ld lda=%ld ldb=%ld batch=%ld ptrs=%d mode=%d ws=%zu\n", idx,
                "NT"[ta], "NT"[tb], (long)m, (long)n, (long)k, (long)lda, (long)ldb, (long)batch, ptr_array, mode, wsb);
    const int rc = oz_gemm_run(&d, c.ws, wsb, c.st);
    oz_gemm_force_tiles(0);
    oz_gemm_force_budget(0);
    cases++;
    size_t first;
    const int64_t bad = gemm_case_result(&c, rc, &first);
    if (bad) {
        failures++;
        fprintf(stderr, "FAIL case %d: rc=%d %c%c m=%ld n=%ld k=%ld lda=%ld ldb=%ld batch=%ld ptrs=%d mode=%d: %lld "
                        "mismatches, first at %zu: got %a want %a\n",
                idx, rc, "NT"[ta], "NT"[tb], (long)m, (long)n, (long)k, (long)lda, (long)ldb, (long)batch, ptr_array,
                mode, (long long)bad, first, c.C[first], c.R[first]);
    }
    gemm_case_free(&c);
}

int main(int argc, char **argv)
{
    /* test_prep [cases [seed]] */
    const int ncases = argc > 1 ? atoi(argv[1]) : 48;
    const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 20261130;
    rng_state ^= seed;
    printf("test_prep: %d cases, seed %llu\n", ncases, (unsigned long long)seed);
    for (int i = 0; i < ncases; i++)
        run_case(i);
    printf("test_prep: %d cases, %d bit-identical, %d failures\n", cases, cases - failures, failures);
    printf("%s\n", failures || cases == 0 ? "FAIL" : "PASS");
    printf("%d passed, %d failed\n", cases - failures, failures);
    return failures || cases == 0 ? 1 : 0;
}
