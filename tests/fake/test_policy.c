/* tests/fake/test_policy.c: the OZCRT_* parsers and the policy read from the environment (includes policy.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../interpose/policy.c"

#include <unistd.h>

#include "stderr_capture.h"

static char g_err[4096];
static oz_stderr_capture g_cap;

static void capture_begin(void)
{
    assert_int_equal(oz_stderr_capture_begin(&g_cap), 0);
}

static const char *capture_end(void)
{
    return oz_stderr_capture_end(&g_cap, g_err, sizeof g_err);
}

static void t_parse_int_good(void **state)
{
    (void)state;
    int64_t v = -1;
    assert_int_equal(ozcrt_parse_int("X", "256", 0, 1000, 7, &v), 1);
    assert_int_equal(v, 256);
    assert_int_equal(ozcrt_parse_int("X", " 12 ", 0, 1000, 7, &v), 1);
    assert_int_equal(v, 12);
    assert_int_equal(ozcrt_parse_int("X", "0", 0, 1000, 7, &v), 1);
    assert_int_equal(v, 0);
    assert_int_equal(ozcrt_parse_int("X", "1000", 0, 1000, 7, &v), 1);
    assert_int_equal(v, 1000);
}

static void t_parse_int_empty(void **state)
{
    (void)state;
    int64_t v = -1;
    capture_begin();
    int a = ozcrt_parse_int("X", NULL, 0, 10, 7, &v);
    int64_t va = v;
    int b = ozcrt_parse_int("X", "", 0, 10, 7, &v);
    const char *err = capture_end();
    assert_int_equal(a, 0);
    assert_int_equal(va, 7);
    assert_int_equal(b, 0);
    assert_int_equal(v, 7);
    assert_string_equal(err, ""); /* unset and empty are silent */
}

static void t_parse_int_bad(void **state)
{
    (void)state;
    static const char *const bad[] = {"abc", "12abc", "-5", "11", "1e3", "0x10", "99999999999999999999999", " ", "+"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = -1;
        capture_begin();
        int r = ozcrt_parse_int("OZCRT_LOG", bad[i], 0, 10, 7, &v);
        const char *err = capture_end();
        if (r != -1 || v != 7)
            fail_msg("\"%s\": returned %d, value %lld", bad[i], r, (long long)v);
        char want[128];
        snprintf(want, sizeof want,
                 "ozcrt: warning: OZCRT_LOG=\"%s\" is not valid (an integer in 0..10); using the default 7\n", bad[i]);
        assert_string_equal(err, want);
    }
}

/* OZCRT_BITS: 1..64, auto (-53), auto:B (-B, B 20..64), any case; anything else warned, the default kept. */
static void t_parse_bits(void **state)
{
    (void)state;
    static const struct { const char *in; int want; } good[] = {
        {"53", 53}, {"1", 1}, {"64", 64}, {" 34 ", 34}, {"auto", -53}, {"AUTO", -53}, {"auto:45", -45},
        {"Auto:20", -20}, {"auto:64", -64}, {" auto : 30 ", -30}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int v = 0;
        assert_int_equal(ozcrt_parse_bits("OZCRT_BITS", good[i].in, -53, &v), 1);
        assert_int_equal(v, good[i].want);
        assert_true(ozcrt_bits_valid(v));
    }
    static const char *const bad[] = {"0", "65", "-53", "auto:19", "auto:65", "auto:", "autox", "fast", "53x", "auto:4.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int v = 7;
        capture_begin();
        int r = ozcrt_parse_bits("OZCRT_BITS", bad[i], -53, &v);
        const char *err = capture_end();
        if (r != -1 || v != -53)
            fail_msg("\"%s\": returned %d, value %d", bad[i], r, v);
        char want[192];
        snprintf(want, sizeof want,
                 "ozcrt: warning: OZCRT_BITS=\"%s\" is not valid (an integer in 1..64, auto, or auto:B with B in "
                 "20..64); using the default auto\n", bad[i]);
        assert_string_equal(err, want);
    }
    char b[16];
    assert_string_equal(ozcrt_bits_name(-53, b, sizeof b), "auto");
    assert_string_equal(ozcrt_bits_name(-45, b, sizeof b), "auto:45");
    assert_string_equal(ozcrt_bits_name(34, b, sizeof b), "34");
    assert_false(ozcrt_bits_valid(0) || ozcrt_bits_valid(65) || ozcrt_bits_valid(-19) || ozcrt_bits_valid(-65));
}

/* OZCRT_MIN_SPEEDUP: a decimal ratio to whole percent, or "auto"; anything else warned, the default kept. */
static void t_min_speedup_auto(void **state)
{
    (void)state;
    ozcrt_settings s = {.mode = OZCRT_MODE_OZAKI2, .min_m = OZCRT_DEFAULT_MIN_DIM, .min_n = OZCRT_DEFAULT_MIN_DIM,
                        .min_k = OZCRT_DEFAULT_MIN_DIM, .min_speedup = OZCRT_MIN_SPEEDUP_AUTO};
    assert_int_equal(ozcrt_min_speedup_pct(&s), 100); /* the default sizes: the rule on */
    s.min_k = 0;
    assert_int_equal(ozcrt_min_speedup_pct(&s), 0); /* sizes chosen: exactly those emulated */
    s.min_speedup = 120;
    assert_int_equal(ozcrt_min_speedup_pct(&s), 120); /* an explicit ratio always wins */
    s.min_k = OZCRT_DEFAULT_MIN_DIM, s.min_speedup = 0;
    assert_int_equal(ozcrt_min_speedup_pct(&s), 0);
}

static void t_parse_pct(void **state)
{
    (void)state;
    static const struct { const char *in; int64_t pct; } good[] = {
        {"1", 100},          {"1.0", 100},          {"0", 0},   {" 1.25 ", 125}, {"0.999", 100}, {"2.5e1", 2500},
        {"100", 10000},      {"auto", OZCRT_MIN_SPEEDUP_AUTO}, {" auto ", OZCRT_MIN_SPEEDUP_AUTO}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int64_t v = -1;
        if (ozcrt_parse_pct("X", good[i].in, 10000, 100, &v) != 1 || v != good[i].pct)
            fail_msg("\"%s\": %lld, want %lld", good[i].in, (long long)v, (long long)good[i].pct);
    }
    int64_t v = -1;
    assert_int_equal(ozcrt_parse_pct("X", "", 10000, 100, &v), 0);
    assert_int_equal(v, 100);
    static const char *const bad[] = {"-1", "abc", "1x", "inf", "nan", "0x10", "100.01", " ", "1,5", "autox", "Auto"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = -1;
        capture_begin();
        int r = ozcrt_parse_pct("OZCRT_MIN_SPEEDUP", bad[i], 10000, OZCRT_MIN_SPEEDUP_AUTO, &v);
        const char *err = capture_end();
        if (r != -1 || v != OZCRT_MIN_SPEEDUP_AUTO)
            fail_msg("\"%s\": returned %d, value %lld", bad[i], r, (long long)v);
        char want[128];
        snprintf(want, sizeof want,
                 "ozcrt: warning: OZCRT_MIN_SPEEDUP=\"%s\" is not valid (a ratio in 0..100, or auto); "
                 "using the default auto\n", bad[i]);
        assert_string_equal(err, want);
    }
}

/* Mode names in any case; a bad name runs off (native), never phase22. */
static void t_parse_mode(void **state)
{
    (void)state;
    static const struct { const char *in; ozcrt_mode m; } good[] = {
        {"phase22", OZCRT_MODE_PHASE22}, {"PHASE22", OZCRT_MODE_PHASE22}, {"off", OZCRT_MODE_OFF},
        {"OFF ", OZCRT_MODE_OFF},        {" Off", OZCRT_MODE_OFF},         {"ozaki2", OZCRT_MODE_OZAKI2},
        {"Ozaki2", OZCRT_MODE_OZAKI2}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        ozcrt_mode m = OZCRT_MODE_COUNT;
        if (ozcrt_parse_mode("OZCRT_MODE", good[i].in, &m) != 1 || m != good[i].m)
            fail_msg("\"%s\": mode %d, want %d", good[i].in, (int)m, (int)good[i].m);
        if (ozcrt_mode_parse_name(good[i].in) != (int)good[i].m)
            fail_msg("ozcrt_mode_parse_name(\"%s\")", good[i].in);
    }
    ozcrt_mode m = OZCRT_MODE_OFF;
    assert_int_equal(ozcrt_parse_mode("OZCRT_MODE", "", &m), 0);
    assert_int_equal(m, OZCRT_MODE_PHASE22);
    assert_int_equal(ozcrt_parse_mode("OZCRT_MODE", NULL, &m), 0);
    assert_int_equal(m, OZCRT_MODE_PHASE22);
    static const char *const bad[] = {"fast", "phase-22", "ozaki", "of f", "phase22x", " "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        m = OZCRT_MODE_PHASE22;
        capture_begin();
        int r = ozcrt_parse_mode("OZCRT_MODE", bad[i], &m);
        const char *err = capture_end();
        if (r != -1 || m != OZCRT_MODE_OFF)
            fail_msg("\"%s\": returned %d, mode %d (want -1, off)", bad[i], r, (int)m);
        char want[256];
        snprintf(want, sizeof want,
                 "ozcrt: warning: OZCRT_MODE=\"%s\" is not a mode (phase22, ozaki2 or off, in any case); "
                 "running off: every call goes to the native cuBLAS\n", bad[i]);
        assert_string_equal(err, want);
    }
    assert_int_equal(ozcrt_mode_parse_name(NULL), -1);
}

/* One boolean syntax: 1/0, yes/no, true/false, on/off in any case; anything else warned, the default kept. */
static void t_parse_bool(void **state)
{
    (void)state;
    static const struct { const char *in; int v; } good[] = {
        {"1", 1},    {"0", 0},     {"yes", 1},  {"no", 0},   {"true", 1}, {"false", 0}, {"on", 1},
        {"off", 0},  {"YES", 1},   {"No", 0},   {"TRUE", 1}, {"False", 0}, {"On", 1},  {"OFF", 0}, {" on ", 1}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int v = -1;
        if (ozcrt_parse_bool("X", good[i].in, 1 - good[i].v, &v) != 1 || v != good[i].v)
            fail_msg("\"%s\": %d, want %d", good[i].in, v, good[i].v);
    }
    int v = -1;
    assert_int_equal(ozcrt_parse_bool("X", "", 1, &v), 0);
    assert_int_equal(v, 1);
    assert_int_equal(ozcrt_parse_bool("X", NULL, 0, &v), 0);
    assert_int_equal(v, 0);
    static const char *const bad[] = {"2", "-1", "y", "n", "enable", "maybe", "10", "o n", " "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = -1;
        capture_begin();
        int r = ozcrt_parse_bool("OZCRT_STATS", bad[i], 0, &v);
        const char *err = capture_end();
        if (r != -1 || v != 0)
            fail_msg("\"%s\": returned %d, value %d", bad[i], r, v);
        char want[192];
        snprintf(want, sizeof want,
                 "ozcrt: warning: OZCRT_STATS=\"%s\" is not valid (1/0, yes/no, true/false, on/off); "
                 "using the default 0\n", bad[i]);
        assert_string_equal(err, want);
    }
}

/* %p, %h and %% in file names; any other % kept. */
static void t_expand_path(void **state)
{
    (void)state;
    char host[256] = "", want[1024], out[1024];
    assert_int_equal(gethostname(host, sizeof host - 1), 0);
    snprintf(want, sizeof want, "/tmp/stats.%ld.%s.txt", (long)getpid(), host);
    assert_int_equal(ozcrt_env_expand_path("/tmp/stats.%p.%h.txt", out, sizeof out), 0);
    assert_string_equal(out, want);
    assert_int_equal(ozcrt_env_expand_path("a%%p%x%", out, sizeof out), 0);
    assert_string_equal(out, "a%p%x%");
    assert_int_equal(ozcrt_env_expand_path("plain.csv", out, sizeof out), 0);
    assert_string_equal(out, "plain.csv");
    char tiny[8];
    assert_int_equal(ozcrt_env_expand_path("abcdef%p", tiny, sizeof tiny), -1); /* does not fit */
    const char *p = NULL;
    capture_begin();
    int r = ozcrt_parse_path("OZCRT_LOG_FILE", "abcdef%p", tiny, sizeof tiny, &p);
    const char *err = capture_end();
    assert_int_equal(r, -1);
    assert_ptr_equal(p, tiny);
    assert_non_null(strstr(err, "OZCRT_LOG_FILE=\"abcdef%p\" is too long"));
    assert_int_equal(ozcrt_parse_path("OZCRT_LOG_FILE", "", out, sizeof out, &p), 0);
    assert_null(p);
    /* a file per process: a %p that is not the second half of a %% */
    assert_true(ozcrt_env_path_per_process("/tmp/stats.%p.txt"));
    assert_true(ozcrt_env_path_per_process("%%%p"));
    assert_true(ozcrt_env_path_per_process("%p"));
    assert_false(ozcrt_env_path_per_process("a%%p%x%"));
    assert_false(ozcrt_env_path_per_process("/tmp/stats.%h.txt"));
    assert_false(ozcrt_env_path_per_process("plain%"));
    assert_false(ozcrt_env_path_per_process(""));
    assert_false(ozcrt_env_path_per_process(NULL));
}

static void clear_env(void)
{
    static const char *const vars[] = {"OZCRT_MODE", "OZCRT_MIN_M", "OZCRT_MIN_N", "OZCRT_MIN_K", "OZCRT_LOG",
                                       "OZCRT_LOG_FILE", "OZCRT_STATS", "OZCRT_STATS_FILE", "OZCRT_MAX_WORKSPACE_MB",
                                       "OZCRT_MIN_SPEEDUP"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    memset(&g_policy, 0, sizeof g_policy);
}

static void t_policy_defaults(void **state)
{
    (void)state;
    clear_env();
    read_policy();
    assert_int_equal(g_policy.mode, OZCRT_MODE_PHASE22);
    assert_int_equal(g_policy.min_m, OZCRT_DEFAULT_MIN_DIM);
    assert_int_equal(g_policy.min_n, OZCRT_DEFAULT_MIN_DIM);
    assert_int_equal(g_policy.min_k, OZCRT_DEFAULT_MIN_DIM);
    assert_int_equal(g_policy.log_level, 0);
    assert_ptr_equal(g_policy.log, stderr);
    assert_int_equal(g_policy.stats, 0);
    assert_null(g_policy.stats_file);
    assert_int_equal(g_policy.max_workspace_bytes, (size_t)OZCRT_DEFAULT_MAX_WORKSPACE_MB << 20);
    assert_int_equal(g_policy.min_speedup, OZCRT_MIN_SPEEDUP_AUTO);
    assert_int_equal(g_policy.bits, -53); /* ozaki2's default: automatic precision */
}

static void t_policy_set(void **state)
{
    (void)state;
    clear_env();
    char path[] = "/tmp/ozcrt-test-policy-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    setenv("OZCRT_MODE", "off", 1);
    setenv("OZCRT_MIN_M", "1", 1);
    setenv("OZCRT_MIN_N", "2", 1);
    setenv("OZCRT_MIN_K", "3000", 1);
    setenv("OZCRT_LOG", "2", 1);
    setenv("OZCRT_LOG_FILE", path, 1);
    setenv("OZCRT_STATS", "Yes", 1);
    setenv("OZCRT_STATS_FILE", "/tmp/x-stats.%p", 1);
    setenv("OZCRT_MAX_WORKSPACE_MB", "16", 1);
    read_policy();
    assert_int_equal(g_policy.mode, OZCRT_MODE_OFF);
    assert_int_equal(g_policy.min_m, 1);
    assert_int_equal(g_policy.min_n, 2);
    assert_int_equal(g_policy.min_k, 3000);
    assert_int_equal(g_policy.log_level, 2);
    assert_ptr_not_equal(g_policy.log, stderr);
    assert_int_equal(g_policy.stats, 1);
    char want[64];
    snprintf(want, sizeof want, "/tmp/x-stats.%ld", (long)getpid());
    assert_string_equal(g_policy.stats_file, want);
    assert_int_equal(g_policy.max_workspace_bytes, (size_t)16 << 20);
    fclose(g_policy.log);
    unlink(path);
}

static void t_policy_bad_values(void **state)
{
    (void)state;
    clear_env();
    setenv("OZCRT_MODE", "fast", 1);
    setenv("OZCRT_MIN_M", "-1", 1);
    setenv("OZCRT_MIN_N", "", 1);
    setenv("OZCRT_MIN_K", "lots", 1);
    setenv("OZCRT_LOG", "3", 1);
    setenv("OZCRT_STATS", "2", 1);
    setenv("OZCRT_MAX_WORKSPACE_MB", "4G", 1);
    capture_begin();
    read_policy();
    const char *err = capture_end();
    assert_int_equal(g_policy.mode, OZCRT_MODE_OFF); /* a bad mode runs native, never phase22 */
    assert_int_equal(g_policy.min_m, OZCRT_DEFAULT_MIN_DIM);
    assert_int_equal(g_policy.min_n, OZCRT_DEFAULT_MIN_DIM);
    assert_int_equal(g_policy.min_k, OZCRT_DEFAULT_MIN_DIM);
    assert_int_equal(g_policy.log_level, 0);
    assert_int_equal(g_policy.stats, 0);
    assert_int_equal(g_policy.max_workspace_bytes, (size_t)OZCRT_DEFAULT_MAX_WORKSPACE_MB << 20);
    static const char *const warned[] = {"OZCRT_MODE=\"fast\" is not a mode", "OZCRT_MIN_M=\"-1\" is not valid (an integer >= 0)",
                                         "OZCRT_MIN_K=\"lots\"", "OZCRT_LOG=\"3\" is not valid (an integer in 0..2)",
                                         "OZCRT_STATS=\"2\" is not valid (1/0, yes/no",
                                         "OZCRT_MAX_WORKSPACE_MB=\"4G\" is not valid (an integer >= 0)"};
    for (size_t i = 0; i < sizeof warned / sizeof warned[0]; i++)
        if (!strstr(err, warned[i]))
            fail_msg("no warning about %s in:\n%s", warned[i], err);
    assert_null(strstr(err, "OZCRT_MIN_N"));
    int lines = 0;
    for (const char *p = err; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 6); /* one line per bad variable */
}

static void t_log_file_unwritable(void **state)
{
    (void)state;
    clear_env();
    setenv("OZCRT_LOG", "1", 1);
    setenv("OZCRT_LOG_FILE", "/nonexistent-dir/ozcrt.log", 1);
    capture_begin();
    read_policy();
    const char *err = capture_end();
    assert_ptr_equal(g_policy.log, stderr);
    assert_non_null(strstr(err, "OZCRT_LOG_FILE=\"/nonexistent-dir/ozcrt.log\" cannot be opened"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_parse_int_good),   cmocka_unit_test(t_parse_int_empty),
        cmocka_unit_test(t_parse_int_bad),    cmocka_unit_test(t_parse_mode), cmocka_unit_test(t_parse_pct),
        cmocka_unit_test(t_parse_bool),       cmocka_unit_test(t_expand_path),
        cmocka_unit_test(t_min_speedup_auto), cmocka_unit_test(t_parse_bits),
        cmocka_unit_test(t_policy_defaults),  cmocka_unit_test(t_policy_set),
        cmocka_unit_test(t_policy_bad_values), cmocka_unit_test(t_log_file_unwritable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
