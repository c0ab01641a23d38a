/* tests/api/test_api.c: the public ozcrt_* C API (interpose/ozcrt.h) under LD_PRELOAD against the fake cuBLAS: layers, bad values, calls seeing the mode, threads switching modes while others call.
 *
 * Environment (tests/api/meson.build): OZCRT_MODE=ozaki2, OZCRT_BITS=40,
 * OZCRT_MIN_M=7 and the other thresholds unset (512), no GPU
 * (CUDA_VISIBLE_DEVICES=''): a call that reaches the GPU check is forwarded
 * with reason no-gpu, one in mode off with mode-off. */
#include <pthread.h>
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
#include "ozcrt.h"

static int reason_index(const char *name)
{
    for (int r = 0; r < ozcrt_stats_reason_count(); r++)
        if (strcmp(ozcrt_stats_reason_name(r), name) == 0)
            return r;
    fail_msg("no stats reason named %s", name);
    return -1;
}

static int entry_index(const char *name)
{
    for (int e = 0; e < ozcrt_stats_entry_count(); e++)
        if (strcmp(ozcrt_stats_entry_name(e), name) == 0)
            return e;
    fail_msg("no stats entry named %s", name);
    return -1;
}

/* Calls of `entry` with reason `reason` so far. */
static uint64_t count(const char *entry, const char *reason)
{
    uint64_t by[64] = {0}, calls = 0;
    assert_true(ozcrt_stats_reason_count() <= 64);
    assert_int_equal(ozcrt_stats_get(entry_index(entry), &calls, by, 64, NULL), 0);
    return reason ? by[reason_index(reason)] : calls;
}

static int64_t get(int scope, int knob)
{
    int64_t v = -12345;
    assert_int_equal(ozcrt_get(scope, knob, &v), 0);
    return v;
}

static void t_layers(void **state)
{
    (void)state;
    assert_int_equal(ozcrt_api_version(), OZCRT_API_VERSION);
    assert_int_equal(get(OZCRT_ENV, OZCRT_KNOB_MODE), OZCRT_OZAKI2);
    assert_int_equal(get(OZCRT_ENV, OZCRT_KNOB_BITS), 40);
    assert_int_equal(get(OZCRT_ENV, OZCRT_KNOB_MIN_M), 7);
    assert_int_equal(get(OZCRT_ENV, OZCRT_KNOB_MIN_N), 512);
    assert_int_equal(get(OZCRT_ENV, OZCRT_KNOB_COMPARE), 0);
    assert_int_equal(get(OZCRT_ENV, OZCRT_KNOB_COMPARE_RESULT), OZCRT_RESULT_EMULATED);
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_BITS), 40);

    assert_int_equal(ozcrt_set(OZCRT_PROCESS, OZCRT_KNOB_BITS, 30), 0);
    assert_int_equal(ozcrt_set(OZCRT_THREAD, OZCRT_KNOB_BITS, 20), 0);
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_BITS), 20);
    assert_int_equal(get(OZCRT_PROCESS, OZCRT_KNOB_BITS), 30);
    assert_int_equal(get(OZCRT_ENV, OZCRT_KNOB_BITS), 40);
    assert_int_equal(ozcrt_set(OZCRT_PROCESS, OZCRT_KNOB_BITS, 25), 0);
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_BITS), 20); /* the override wins */
    assert_int_equal(ozcrt_reset(OZCRT_THREAD, OZCRT_KNOB_BITS), 0);
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_BITS), 25);
    assert_int_equal(ozcrt_set(OZCRT_PROCESS, OZCRT_KNOB_MODE, OZCRT_OFF), 0);
    assert_int_equal(ozcrt_reset(OZCRT_PROCESS, OZCRT_KNOB_BITS), 0); /* one knob: the mode stays */
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_BITS), 40);
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_MODE), OZCRT_OFF);
    assert_int_equal(ozcrt_reset(OZCRT_PROCESS, OZCRT_KNOB_ALL), 0);
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_MODE), OZCRT_OZAKI2);
}

static void t_bad_values(void **state)
{
    (void)state;
    static const int64_t bad[][3] = {
        {OZCRT_PROCESS, OZCRT_KNOB_BITS, 0},  {OZCRT_PROCESS, OZCRT_KNOB_BITS, 65},
        {OZCRT_THREAD, OZCRT_KNOB_MODE, 3},   {OZCRT_THREAD, OZCRT_KNOB_MODE, -1},
        {OZCRT_PROCESS, OZCRT_KNOB_MIN_K, -1}, {OZCRT_PROCESS, OZCRT_KNOB_COMPARE, 2},
        {OZCRT_PROCESS, OZCRT_KNOB_COMPARE_RESULT, 2}, {OZCRT_ENV, OZCRT_KNOB_BITS, 30},
        {OZCRT_PROCESS, OZCRT_KNOB_COUNT, 1}, {7, OZCRT_KNOB_BITS, 30},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (ozcrt_set((int)bad[i][0], (int)bad[i][1], bad[i][2]) != -1)
            fail_msg("ozcrt_set(%lld, %lld, %lld) accepted", (long long)bad[i][0], (long long)bad[i][1],
                     (long long)bad[i][2]);
    }
    for (int k = 0; k < OZCRT_KNOB_COUNT; k++) {
        assert_int_equal(get(OZCRT_THREAD, k), get(OZCRT_ENV, k)); /* nothing changed */
        assert_non_null(ozcrt_knob_name(k));
    }
    int64_t v;
    assert_int_equal(ozcrt_get(OZCRT_PROCESS, OZCRT_KNOB_COUNT, &v), -1);
    assert_int_equal(ozcrt_get(9, OZCRT_KNOB_MODE, &v), -1);
    assert_int_equal(ozcrt_reset(OZCRT_ENV, OZCRT_KNOB_ALL), -1);
    assert_int_equal(ozcrt_reset(OZCRT_THREAD, OZCRT_KNOB_COUNT), -1);
    assert_null(ozcrt_knob_name(OZCRT_KNOB_COUNT));
    assert_string_equal(ozcrt_knob_name(OZCRT_KNOB_COMPARE_RESULT), "compare_result");
    assert_string_equal(ozcrt_mode_to_name(OZCRT_OZAKI2), "ozaki2");
    assert_null(ozcrt_mode_to_name(3));
    assert_int_equal(ozcrt_mode_from_name("off"), OZCRT_OFF);
    assert_int_equal(ozcrt_mode_from_name("phase22"), OZCRT_PHASE22);
    assert_int_equal(ozcrt_mode_from_name("Off"), OZCRT_OFF); /* any case, as OZCRT_MODE */
    assert_int_equal(ozcrt_mode_from_name("OZAKI2"), OZCRT_OZAKI2);
    assert_int_equal(ozcrt_mode_from_name("fast"), -1);
    assert_int_equal(ozcrt_mode_from_name(NULL), -1);
    assert_int_equal(ozcrt_stats_get(ozcrt_stats_entry_count(), NULL, NULL, 0, NULL), -1);
}

static cublasHandle_t g_handle;
static const double g_one = 1.0;

static cublasStatus_t call_v2(void)
{
    return cublasDgemm_v2(g_handle, CUBLAS_OP_N, CUBLAS_OP_N, 300, 200, 256, &g_one, (const double *)0x1000, 300,
                          (const double *)0x2000, 256, &g_one, (double *)0x3000, 300);
}

static cublasStatus_t call_v2_64(void)
{
    return cublasDgemm_v2_64(g_handle, CUBLAS_OP_N, CUBLAS_OP_N, 300, 200, 256, &g_one, (const double *)0x1000,
                             300, (const double *)0x2000, 256, &g_one, (double *)0x3000, 300);
}

static cublasStatus_t call_strided(void)
{
    return cublasDgemmStridedBatched(g_handle, CUBLAS_OP_N, CUBLAS_OP_N, 300, 200, 256, &g_one,
                                     (const double *)0x1000, 300, 300 * 256, (const double *)0x2000, 256, 256 * 200,
                                     &g_one, (double *)0x3000, 300, 300 * 200, 3);
}

static void t_calls_see_the_mode(void **state)
{
    (void)state;
    ozcrt_stats_enable(1);
    ozcrt_stats_clear();
    assert_int_equal(ozcrt_set(OZCRT_PROCESS, OZCRT_KNOB_MIN_N, 1), 0);
    assert_int_equal(ozcrt_set(OZCRT_PROCESS, OZCRT_KNOB_MIN_K, 1), 0);
    fake_cublas_reset();
    fake_cublas_set_status(CUBLAS_STATUS_MAPPING_ERROR);
    assert_int_equal(call_v2(), CUBLAS_STATUS_MAPPING_ERROR); /* ozaki2 (env), forwarded: no GPU */
    assert_int_equal(ozcrt_set(OZCRT_THREAD, OZCRT_KNOB_MODE, OZCRT_OFF), 0);
    assert_int_equal(call_v2(), CUBLAS_STATUS_MAPPING_ERROR);
    assert_int_equal(ozcrt_set(OZCRT_THREAD, OZCRT_KNOB_MIN_M, 301), 0);
    assert_int_equal(ozcrt_reset(OZCRT_THREAD, OZCRT_KNOB_MODE), 0);
    assert_int_equal(call_v2(), CUBLAS_STATUS_MAPPING_ERROR);
    assert_int_equal(ozcrt_reset(OZCRT_THREAD, OZCRT_KNOB_ALL), 0);
    assert_int_equal(fake_cublas_count(), 3);
    assert_string_equal(fake_cublas_last()->name, "cublasDgemm_v2");
    assert_int_equal(fake_cublas_last()->m, 300);
    assert_int_equal(count("cublasDgemm_v2", NULL), 3);
    assert_int_equal(count("cublasDgemm_v2", "no-gpu"), 1);
    assert_int_equal(count("cublasDgemm_v2", "mode-off"), 1);
    assert_int_equal(count("cublasDgemm_v2", "below-threshold"), 1);

    char path[] = "/tmp/ozcrt-test-api-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(ozcrt_stats_write(path), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "cublasDgemm_v2 ", 15) == 0)
            found = strstr(line, "mode-off=1") && strstr(line, "no-gpu=1") && strstr(line, "below-threshold=1");
    fclose(f);
    unlink(path);
    assert_true(found);
    assert_int_equal(ozcrt_stats_write("/nonexistent-dir/stats"), -1);
    ozcrt_stats_clear();
    assert_int_equal(count("cublasDgemm_v2", NULL), 0);
    ozcrt_reset(OZCRT_PROCESS, OZCRT_KNOB_ALL);
}

/* Compare regions without a GPU: nothing is compared, the reports are empty
 * and valid, ids are checked. */
static void t_compare_regions(void **state)
{
    (void)state;
    fake_cublas_reset();
    int a = ozcrt_compare_begin(), b = ozcrt_compare_begin();
    assert_true(a >= 0 && b >= 0 && a != b);
    assert_int_equal(ozcrt_set(OZCRT_THREAD, OZCRT_KNOB_COMPARE, 1), 0);
    assert_int_equal(call_v2(), CUBLAS_STATUS_SUCCESS); /* forwarded: below the thresholds */
    char path[] = "/tmp/ozcrt-test-region-XXXXXX.json";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(ozcrt_compare_end(b, path), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[512] = {0};
    assert_true(fread(text, 1, sizeof text - 1, f) > 0);
    fclose(f);
    unlink(path);
    assert_non_null(strstr(text, "{\"ozcrt_report\": 1, \"sites\": []"));
    assert_int_equal(ozcrt_compare_end(b, NULL), -1);  /* closed already */
    assert_int_equal(ozcrt_compare_end(-1, NULL), -1);
    assert_int_equal(ozcrt_compare_end(1000, NULL), -1);
    assert_int_equal(ozcrt_compare_end(a, "/nonexistent-dir/r.json"), -1); /* closed all the same */
    assert_int_equal(ozcrt_compare_end(a, NULL), -1);
    int ids[17], n = 0;
    while (n < 17 && (ids[n] = ozcrt_compare_begin()) >= 0)
        n++;
    assert_int_equal(n, 16); /* OZCMP_REPORT_MAX_TAPS */
    while (n > 0)
        assert_int_equal(ozcrt_compare_end(ids[--n], NULL), 0);
}

/* ---- threads ---- */

#define CALLS 20000
#define SWITCHES 20000

static pthread_barrier_t g_start;
static int g_errors;
static pthread_mutex_t g_err_lock = PTHREAD_MUTEX_INITIALIZER;

static void error(const char *what, long long got)
{
    pthread_mutex_lock(&g_err_lock);
    if (g_errors++ < 10)
        fprintf(stderr, "thread error: %s (got %lld)\n", what, got);
    pthread_mutex_unlock(&g_err_lock);
}

typedef struct {
    int override_mode; /* -1: none */
    cublasStatus_t (*call)(void);
} caller_arg;

static void *caller(void *p)
{
    const caller_arg *a = p;
    if (a->override_mode >= 0) {
        ozcrt_set(OZCRT_THREAD, OZCRT_KNOB_MODE, a->override_mode);
        for (int k = OZCRT_KNOB_MIN_M; k <= OZCRT_KNOB_MIN_K; k++) /* the switchers reset the process's */
            ozcrt_set(OZCRT_THREAD, k, 1);
    } else if (ozcrt_get(OZCRT_THREAD, OZCRT_KNOB_MODE, &(int64_t){0}) != 0) {
        error("get", -1);
    }
    pthread_barrier_wait(&g_start);
    for (int i = 0; i < CALLS; i++) {
        if (a->call() != CUBLAS_STATUS_SUCCESS)
            error("a forwarded call did not return the fake's status", i);
        int64_t m = -1;
        if (a->override_mode >= 0 && (ozcrt_get(OZCRT_THREAD, OZCRT_KNOB_MODE, &m) != 0 || m != a->override_mode))
            error("the thread's override was lost", m);
    }
    return NULL;
}

static void *switcher(void *p)
{
    int id = (int)(intptr_t)p;
    pthread_barrier_wait(&g_start);
    for (int i = 0; i < SWITCHES; i++) {
        /* process values, and this thread's own overrides in between */
        ozcrt_set(OZCRT_PROCESS, OZCRT_KNOB_MODE, (i + id) % 2 ? OZCRT_OFF : OZCRT_PHASE22);
        ozcrt_set(OZCRT_PROCESS, OZCRT_KNOB_MIN_M, i % 3 ? 1 : 1000000);
        ozcrt_set(OZCRT_THREAD, OZCRT_KNOB_BITS, 1 + i % 64);
        int64_t b = -1;
        if (ozcrt_get(OZCRT_THREAD, OZCRT_KNOB_BITS, &b) != 0 || b != 1 + i % 64)
            error("the switcher's own bits", b);
        if (i % 100 == 0)
            ozcrt_reset(OZCRT_PROCESS, OZCRT_KNOB_ALL);
    }
    return NULL;
}

static void t_threads(void **state)
{
    (void)state;
    ozcrt_stats_enable(1);
    ozcrt_stats_clear();
    fake_cublas_reset(); /* status SUCCESS for every thread; its records race, we never read them here */
    ozcrt_set(OZCRT_PROCESS, OZCRT_KNOB_MIN_N, 1);
    ozcrt_set(OZCRT_PROCESS, OZCRT_KNOB_MIN_K, 1);
    caller_arg off = {OZCRT_OFF, call_v2}, on = {OZCRT_PHASE22, call_v2_64}, none = {-1, call_strided};
    const caller_arg *callers[] = {&off, &off, &on, &on, &none, &none};
    enum { NC = sizeof callers / sizeof callers[0], NS = 2 };
    pthread_t t[NC + NS];
    assert_int_equal(pthread_barrier_init(&g_start, NULL, NC + NS), 0);
    for (int i = 0; i < NC; i++)
        assert_int_equal(pthread_create(&t[i], NULL, caller, (void *)callers[i]), 0);
    for (int i = 0; i < NS; i++)
        assert_int_equal(pthread_create(&t[NC + i], NULL, switcher, (void *)(intptr_t)i), 0);
    for (int i = 0; i < NC + NS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&g_start);
    assert_int_equal(g_errors, 0);
    ozcrt_stats_write(NULL); /* to stderr, for the test log */
    /* The overriding threads saw only their mode, whatever the process did. */
    assert_int_equal(count("cublasDgemm_v2", NULL), 2 * CALLS);
    assert_int_equal(count("cublasDgemm_v2", "mode-off"), 2 * CALLS);
    assert_int_equal(count("cublasDgemm_v2_64", NULL), 2 * CALLS);
    assert_int_equal(count("cublasDgemm_v2_64", "no-gpu"), 2 * CALLS);
    /* The others saw whatever the process said at each call: one of its states. */
    uint64_t off_n = count("cublasDgemmStridedBatched", "mode-off"), gpu = count("cublasDgemmStridedBatched", "no-gpu");
    uint64_t small = count("cublasDgemmStridedBatched", "below-threshold");
    fprintf(stderr, "strided calls without override: mode-off %llu, no-gpu %llu, below-threshold %llu\n",
            (unsigned long long)off_n, (unsigned long long)gpu, (unsigned long long)small);
    assert_int_equal(count("cublasDgemmStridedBatched", NULL), 2 * CALLS);
    assert_int_equal(off_n + gpu + small, 2 * CALLS);
    /* The main thread's view is untouched by the others' overrides. */
    ozcrt_reset(OZCRT_PROCESS, OZCRT_KNOB_ALL);
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_MODE), OZCRT_OZAKI2);
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_BITS), 40);
}

static void *read_mode(void *p)
{
    *(int64_t *)p = -1;
    ozcrt_get(OZCRT_THREAD, OZCRT_KNOB_MODE, p);
    return NULL;
}

static void t_new_thread_has_no_override(void **state)
{
    (void)state;
    assert_int_equal(ozcrt_set(OZCRT_THREAD, OZCRT_KNOB_MODE, OZCRT_OFF), 0);
    int64_t seen = -1;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_mode, &seen), 0);
    pthread_join(t, NULL);
    assert_int_equal(seen, OZCRT_OZAKI2);
    assert_int_equal(get(OZCRT_THREAD, OZCRT_KNOB_MODE), OZCRT_OFF);
    ozcrt_reset(OZCRT_THREAD, OZCRT_KNOB_ALL);
}

/* Every test starts from the environment's values. */
static int reset_all(void **state)
{
    (void)state;
    ozcrt_reset(OZCRT_PROCESS, OZCRT_KNOB_ALL);
    ozcrt_reset(OZCRT_THREAD, OZCRT_KNOB_ALL);
    return 0;
}

int main(void)
{
    if (cublasCreate_v2(&g_handle) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "cublasCreate_v2 of the fake failed\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(t_layers, reset_all, reset_all),
        cmocka_unit_test_setup_teardown(t_bad_values, reset_all, reset_all),
        cmocka_unit_test_setup_teardown(t_calls_see_the_mode, reset_all, reset_all),
        cmocka_unit_test_setup_teardown(t_compare_regions, reset_all, reset_all),
        cmocka_unit_test_setup_teardown(t_threads, reset_all, reset_all),
        cmocka_unit_test_setup_teardown(t_new_thread_has_no_override, reset_all, reset_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
