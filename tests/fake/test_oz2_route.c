/* tests/fake/test_oz2_route.c: the ozaki2 mode under LD_PRELOAD over the fake cuBLAS, no GPU: OZCRT_MODE=ozaki2 and OZCRT_BITS accepted or warned, bits-unreachable forwarding at the plan's exact boundary, the log and the stats table.
 *
 * Suites (argv[1]), environment from tests/fake/meson.build:
 *   bits64    OZCRT_MODE=ozaki2 OZCRT_BITS=64: no warning; k = 86809817, the
 *             largest k that 20 moduli serve at 64 bits (floor(((P_20 - 1)/2) / 4^64),
 *             computed with Python integers), goes on to the GPU check (no-gpu),
 *             k + 1 is forwarded as bits-unreachable; stats table names both;
 *             a complex call (cublasZgemm_v2) the same at its own boundary,
 *             k = 43404908 (docs/ozaki2-complex.md: 2 k 4^64 <= (P_20 - 1)/2)
 *   badbits   OZCRT_MODE=ozaki2 OZCRT_BITS=65: one warning naming OZCRT_BITS,
 *             bits 53 (the default) in force, mode still ozaki2
 *   (both with the thresholds at 1 and OZCRT_MIN_SPEEDUP unset, i.e. auto:
 *   sizes chosen, so the speed rule is off and small calls reach the GPU check)
 *   speed     OZCRT_MODE=ozaki2, thresholds and OZCRT_MIN_SPEEDUP unset (auto
 *             at the default sizes: 1): calls the speed model says emulation
 *             slows down are forwarded as slower-than-native (2048^3, 8192 x
 *             8192 x 1024, and 8192 x 8192 x 2048 under auto but not at the
 *             fixed 53 bits), faster ones go on (8192^3, 4096^3: no-gpu); the
 *             knob reads auto; a thread's 0 lets a small call through, 125
 *             keeps 4096^3 out; a thread's min_k of 0 (auto again) turns the
 *             rule off; complex calls under auto are judged by the
 *             complex model (8192^3 on to no-gpu, 2048^3 slower-than-native)
 *   speedbad  OZCRT_MIN_SPEEDUP=-1: one warning naming it, auto in force
 *   z53       OZCRT_BITS=53, thresholds and OZCRT_MIN_SPEEDUP unset: complex
 *             calls are planned and judged by the complex speed model
 *             (speed_model.h): 2048^3 slower-than-native, 8192^3 on to the
 *             GPU check (no-gpu), through cublasZgemm_v2 and cublasGemmEx */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_cublas.h"
#include "stderr_capture.h"
#include "interpose/ozcrt.h"

#define PA ((const double *)0x1000)
#define PB ((const double *)0x2000)
#define PC ((double *)0x3000)
#define FAKE_STATUS CUBLAS_STATUS_ARCH_MISMATCH /* proves the real status comes back */
#define K_MAX_BITS64 86809817
#define K_MAX_Z_BITS64 43404908 /* the complex plan's: docs/ozaki2-complex.md, step 1 */

static const double one = 1.0, half = 0.5;
static const char *g_suite = "bits64";
static cublasHandle_t g_h;
static char g_stderr[8192];

/* The shim's API, from the preloaded library. */
static void *api(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (!f)
        fail_msg("%s not found: is libozcrt.so preloaded?", name);
    return f;
}

static void last_log_line(char *out, size_t size)
{
    const char *path = getenv("OZCRT_LOG_FILE");
    out[0] = '\0';
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        fail_msg("no log file");
    char line[1024];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "ozcrt: cublas", 13) == 0)
            snprintf(out, size, "%s", line);
    fclose(f);
}

static void dgemm_shape_expect(int m, int n, int k, const char *want_in_log)
{
    fake_cublas_reset();
    fake_cublas_set_status(FAKE_STATUS);
    cublasStatus_t st = cublasDgemm_v2(g_h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, PA, m, PB, k, &half, PC, m);
    assert_int_equal(st, FAKE_STATUS);
    assert_int_equal(fake_cublas_count(), 1);
    assert_int_equal(fake_cublas_last()->k, k);
    char line[1024];
    last_log_line(line, sizeof line);
    if (!strstr(line, want_in_log))
        fail_msg("log line \"%s\" lacks \"%s\"", line, want_in_log);
}

static void dgemm_expect(int k, const char *want_in_log) { dgemm_shape_expect(300, 200, k, want_in_log); }

/* A complex call, m x n x k NN, through cublasZgemm_v2 or (ex) cublasGemmEx with CUDA_C_64F. */
static void zgemm_shape_expect(int ex, int m, int n, int k, const char *want_in_log)
{
    static const cuDoubleComplex zone = {1.0, 0.0}, zhalf = {0.5, 0.5};
    const cuDoubleComplex *A = (const cuDoubleComplex *)PA, *B = (const cuDoubleComplex *)PB;
    cuDoubleComplex *C = (cuDoubleComplex *)PC;
    fake_cublas_reset();
    fake_cublas_set_status(FAKE_STATUS);
    cublasStatus_t st = ex ? cublasGemmEx(g_h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &zone, A, CUDA_C_64F, m, B,
                                          CUDA_C_64F, k, &zhalf, C, CUDA_C_64F, m, CUBLAS_COMPUTE_64F,
                                          CUBLAS_GEMM_DEFAULT)
                           : cublasZgemm_v2(g_h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &zone, A, m, B, k, &zhalf, C, m);
    assert_int_equal(st, FAKE_STATUS);
    assert_int_equal(fake_cublas_count(), 1);
    assert_string_equal(fake_cublas_last()->name, ex ? "cublasGemmEx" : "cublasZgemm_v2");
    assert_int_equal(fake_cublas_last()->k, k);
    char line[1024];
    last_log_line(line, sizeof line);
    if (!strstr(line, want_in_log))
        fail_msg("log line \"%s\" lacks \"%s\"", line, want_in_log);
}

static int64_t knob(int scope, int which)
{
    int64_t v = -1;
    int (*get)(int, int, int64_t *) = (int (*)(int, int, int64_t *))api("ozcrt_get");
    assert_int_equal(get(scope, which, &v), 0);
    return v;
}

/* The process's policy as the runtime API reports it: mode ozaki2, `bits` bits. */
static void expect_ozaki2_bits(int64_t bits)
{
    int64_t v = -1;
    int (*get)(int, int, int64_t *) = (int (*)(int, int, int64_t *))api("ozcrt_get");
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_MODE, &v), 0);
    assert_int_equal(v, OZCRT_OZAKI2);
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_BITS, &v), 0);
    assert_int_equal(v, bits);
}

/* The stats table's row of `entry` holds `text`. */
static int row_has(const char *table, const char *entry, const char *text)
{
    const size_t n = strlen(entry);
    for (const char *line = table; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (strncmp(line, entry, n) == 0 && line[n] == ' ') {
            const char *end = strchr(line, '\n');
            const char *hit = strstr(line, text);
            return hit && (!end || hit < end + 1);
        }
    return 0;
}

static void t_bits64(void **state)
{
    (void)state;
    expect_ozaki2_bits(64);
    dgemm_expect(K_MAX_BITS64, "k=86809817 ops=NN batch=1 -> forward: no-gpu");
    dgemm_expect(K_MAX_BITS64 + 1, "k=86809818 ops=NN batch=1 -> forward: bits-unreachable");
    dgemm_expect(256, "-> forward: no-gpu");
    zgemm_shape_expect(0, 300, 200, K_MAX_Z_BITS64, "k=43404908 ops=NN batch=1 -> forward: no-gpu");
    zgemm_shape_expect(0, 300, 200, K_MAX_Z_BITS64 + 1, "k=43404909 ops=NN batch=1 -> forward: bits-unreachable");
    zgemm_shape_expect(1, 300, 200, K_MAX_Z_BITS64 + 1, "cublasGemmEx m=300 n=200 k=43404909 ops=NN batch=1 -> "
                                                        "forward: bits-unreachable");
    assert_null(strstr(g_stderr, "OZCRT_MODE"));
    assert_null(strstr(g_stderr, "OZCRT_BITS"));
    /* the stats table: mode and bits in its title, the reasons counted */
    char path[256];
    snprintf(path, sizeof path, "%s.stats", getenv("OZCRT_LOG_FILE"));
    int (*write_stats)(const char *) = (int (*)(const char *))api("ozcrt_stats_write");
    assert_int_equal(write_stats(path), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char table[8192];
    size_t n = fread(table, 1, sizeof table - 1, f);
    table[n] = '\0';
    fclose(f);
    if (!strstr(table, "ozcrt stats (mode ozaki2, bits 64)") || !strstr(table, "bits-unreachable=1") ||
        !row_has(table, "cublasZgemm_v2", " no-gpu=1,bits-unreachable=1\n") ||
        !row_has(table, "cublasGemmEx", " bits-unreachable=1\n") ||
        !strstr(table, "no-gpu=2") || !strstr(table, "emulated calls by mode: -") ||
        strstr(table, "accuracy of the emulated calls")) /* nothing emulated: no accuracy line */
        fail_msg("unexpected stats table:\n%s", table);
}

static void t_badbits(void **state)
{
    (void)state;
    expect_ozaki2_bits(-53); /* the default: auto */
    dgemm_expect(256, "-> forward: no-gpu");
    if (!strstr(g_stderr, "OZCRT_BITS=\"65\""))
        fail_msg("no warning about OZCRT_BITS in:\n%s", g_stderr);
    assert_null(strstr(g_stderr, "OZCRT_MODE"));
}

static void t_speed(void **state)
{
    (void)state;
    expect_ozaki2_bits(-53); /* OZCRT_BITS unset: auto, predicted by its own model (the N its even data needs, the estimate) */
    assert_int_equal(knob(OZCRT_ENV, OZCRT_KNOB_MIN_SPEEDUP), OZCRT_MIN_SPEEDUP_AUTO); /* unset: auto */
    assert_int_equal(knob(OZCRT_THREAD, OZCRT_KNOB_MIN_SPEEDUP), OZCRT_MIN_SPEEDUP_AUTO);
    /* auto, measured on the H200 (BENCHMARKS.md 2026-12-03 sweep): 0.58x, 0.64x; 1.30x, 1.04x */
    dgemm_shape_expect(2048, 2048, 2048, "-> forward: slower-than-native");
    dgemm_shape_expect(8192, 8192, 1024, "-> forward: slower-than-native");
    dgemm_shape_expect(8192, 8192, 8192, "-> forward: no-gpu");
    dgemm_shape_expect(4096, 4096, 4096, "-> forward: no-gpu");
    /* auto at 8192 x 8192 x 2048: 16 moduli and the estimate predict no gain (0.99x measured);
     * the fixed 53 bits do (1.08x) */
    dgemm_shape_expect(8192, 8192, 2048, "-> forward: slower-than-native");
    int (*set)(int, int, int64_t) = (int (*)(int, int, int64_t))api("ozcrt_set");
    int (*reset)(int, int) = (int (*)(int, int))api("ozcrt_reset");
    assert_int_equal(set(OZCRT_THREAD, OZCRT_KNOB_BITS, 53), 0); /* the fixed 53 bits from here to the reset */
    dgemm_shape_expect(8192, 8192, 2048, "-> forward: no-gpu");
    assert_int_equal(set(OZCRT_THREAD, OZCRT_KNOB_MIN_SPEEDUP, 0), 0);
    dgemm_shape_expect(2048, 2048, 2048, "-> forward: no-gpu");
    assert_int_equal(set(OZCRT_THREAD, OZCRT_KNOB_MIN_SPEEDUP, 125), 0);
    dgemm_shape_expect(4096, 4096, 4096, "-> forward: slower-than-native");
    dgemm_shape_expect(8192, 8192, 8192, "-> forward: no-gpu");
    assert_int_equal(set(OZCRT_THREAD, OZCRT_KNOB_MIN_SPEEDUP, -2), -1);
    assert_int_equal(set(OZCRT_THREAD, OZCRT_KNOB_MIN_SPEEDUP, 10001), -1);
    assert_int_equal(set(OZCRT_THREAD, OZCRT_KNOB_MIN_SPEEDUP, OZCRT_MIN_SPEEDUP_AUTO), 0);
    dgemm_shape_expect(2048, 2048, 2048, "-> forward: slower-than-native");
    assert_int_equal(set(OZCRT_THREAD, OZCRT_KNOB_MIN_K, 0), 0); /* sizes chosen: auto is off */
    dgemm_shape_expect(2048, 2048, 2048, "-> forward: no-gpu");
    assert_int_equal(reset(OZCRT_THREAD, OZCRT_KNOB_ALL), 0);
    dgemm_shape_expect(2048, 2048, 2048, "-> forward: slower-than-native");
    assert_null(strstr(g_stderr, "OZCRT_MIN_SPEEDUP"));
    /* complex calls under auto: the complex model at the fixed 53 bits' N' and the estimate's share */
    zgemm_shape_expect(0, 8192, 8192, 8192, "cublasZgemm_v2 m=8192 n=8192 k=8192 ops=NN batch=1 -> forward: no-gpu");
    zgemm_shape_expect(1, 8192, 8192, 8192, "cublasGemmEx m=8192 n=8192 k=8192 ops=NN batch=1 -> forward: no-gpu");
    zgemm_shape_expect(0, 2048, 2048, 2048, "-> forward: slower-than-native");
    zgemm_shape_expect(0, 256, 8192, 8192, "-> forward: below-threshold");
}

static void t_z53(void **state)
{
    (void)state;
    expect_ozaki2_bits(53);
    for (int ex = 0; ex < 2; ex++) {
        zgemm_shape_expect(ex, 2048, 2048, 2048, "m=2048 n=2048 k=2048 ops=NN batch=1 -> forward: slower-than-native");
        zgemm_shape_expect(ex, 8192, 8192, 8192, "m=8192 n=8192 k=8192 ops=NN batch=1 -> forward: no-gpu");
    }
    /* the same real shapes for comparison: the real plan and model */
    dgemm_shape_expect(8192, 8192, 8192, "-> forward: no-gpu");
}

static void t_speedbad(void **state)
{
    (void)state;
    assert_int_equal(knob(OZCRT_ENV, OZCRT_KNOB_MIN_SPEEDUP), OZCRT_MIN_SPEEDUP_AUTO);
    if (!strstr(g_stderr, "OZCRT_MIN_SPEEDUP=\"-1\""))
        fail_msg("no warning about OZCRT_MIN_SPEEDUP in:\n%s", g_stderr);
    dgemm_shape_expect(2048, 2048, 2048, "-> forward: slower-than-native");
}

/* The first call (cublasCreate) reads the policy: its stderr is kept. */
static int setup(void **state)
{
    (void)state;
    oz_stderr_capture cap;
    if (oz_stderr_capture_begin(&cap) != 0)
        return -1;
    cublasStatus_t st = cublasCreate_v2(&g_h);
    int64_t v;
    ((int (*)(int, int, int64_t *))dlsym(RTLD_DEFAULT, "ozcrt_get"))(OZCRT_THREAD, OZCRT_KNOB_MODE, &v);
    oz_stderr_capture_end(&cap, g_stderr, sizeof g_stderr);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_suite = argv[1];
    const struct CMUnitTest bits64[] = {cmocka_unit_test(t_bits64)};
    const struct CMUnitTest badbits[] = {cmocka_unit_test(t_badbits)};
    const struct CMUnitTest speed[] = {cmocka_unit_test(t_speed)};
    const struct CMUnitTest speedbad[] = {cmocka_unit_test(t_speedbad)};
    const struct CMUnitTest z53[] = {cmocka_unit_test(t_z53)};
    if (strcmp(g_suite, "badbits") == 0)
        return cmocka_run_group_tests_name("oz2-badbits", badbits, setup, NULL);
    if (strcmp(g_suite, "speed") == 0)
        return cmocka_run_group_tests_name("oz2-speed", speed, setup, NULL);
    if (strcmp(g_suite, "z53") == 0)
        return cmocka_run_group_tests_name("oz2-z53", z53, setup, NULL);
    if (strcmp(g_suite, "speedbad") == 0)
        return cmocka_run_group_tests_name("oz2-speedbad", speedbad, setup, NULL);
    return cmocka_run_group_tests_name("oz2-bits64", bits64, setup, NULL);
}
