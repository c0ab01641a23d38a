/* tests/api/test_report_tap.c: compare regions' reports: records of the process-wide report reach the attached region reports, and only while attached. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "compare/report.h"

static ozcmp_call_metrics met(double nw)
{
    ozcmp_call_metrics m = {nw * 2, nw * 3, nw, 1, 0, 100};
    return m;
}

static uint64_t calls_of(ozcmp_report *r, size_t *nsites, ozcmp_report_row *total)
{
    ozcmp_report_row *rows;
    *nsites = ozcmp_report_rows(r, &rows, total);
    free(rows);
    return total->calls;
}

static void t_tap(void **state)
{
    (void)state;
    ozcmp_report *g = ozcmp_report_global();
    ozcmp_site a = {"cublasDgemm_v2", 0, 1, 1024, 512, 256, 1, "phase22"},
                b = {"cublasGemmEx", 1, 0, 64, 64, 64, 1, "phase22"};
    ozcmp_report_add(g, &a, &(ozcmp_call_metrics){0});   /* before: stays out of the region */
    ozcmp_report *r1 = ozcmp_report_new(), *r2 = ozcmp_report_new(), *other = ozcmp_report_new();
    int s1 = ozcmp_report_tap_attach(r1);
    assert_true(s1 >= 0);
    ozcmp_report_add(g, &a, &(ozcmp_call_metrics){0});
    ozcmp_call_metrics m = met(1e-10);
    ozcmp_report_add(g, &a, &m);
    int s2 = ozcmp_report_tap_attach(r2);             /* nested region */
    assert_true(s2 >= 0 && s2 != s1);
    ozcmp_report_add_skipped(g, &b, OZCMP_SKIP_CAPTURE);
    ozcmp_report_add(other, &a, &m);                   /* not the process-wide report: nobody else sees it */
    assert_ptr_equal(ozcmp_report_tap_detach(s2), r2);
    ozcmp_report_add(g, &b, &m);
    assert_ptr_equal(ozcmp_report_tap_detach(s1), r1);
    ozcmp_report_add(g, &b, &m);                       /* after: in no region */
    assert_null(ozcmp_report_tap_detach(s1));
    assert_null(ozcmp_report_tap_detach(-1));
    assert_null(ozcmp_report_tap_detach(OZCMP_REPORT_MAX_TAPS));

    size_t n;
    ozcmp_report_row t;
    assert_int_equal(calls_of(r1, &n, &t), 3);     /* a twice, b once */
    assert_int_equal(n, 2);
    assert_int_equal(t.not_compared[OZCMP_SKIP_CAPTURE], 1);
    assert_true(t.normwise_worst == 1e-10);
    assert_int_equal(calls_of(r2, &n, &t), 0);
    assert_int_equal(n, 1);                         /* b, never compared */
    assert_int_equal(t.not_compared[OZCMP_SKIP_CAPTURE], 1);
    assert_int_equal(calls_of(g, &n, &t), 5);
    ozcmp_report_free(r1);
    ozcmp_report_free(r2);
    ozcmp_report_free(other);
}

static void t_full(void **state)
{
    (void)state;
    ozcmp_report *r[OZCMP_REPORT_MAX_TAPS + 1];
    int s[OZCMP_REPORT_MAX_TAPS];
    for (int i = 0; i < OZCMP_REPORT_MAX_TAPS; i++) {
        r[i] = ozcmp_report_new();
        s[i] = ozcmp_report_tap_attach(r[i]);
        assert_true(s[i] >= 0);
    }
    r[OZCMP_REPORT_MAX_TAPS] = ozcmp_report_new();
    assert_int_equal(ozcmp_report_tap_attach(r[OZCMP_REPORT_MAX_TAPS]), -1);
    assert_int_equal(ozcmp_report_tap_attach(NULL), -1);
    for (int i = 0; i < OZCMP_REPORT_MAX_TAPS; i++) {
        assert_ptr_equal(ozcmp_report_tap_detach(s[i]), r[i]);
        ozcmp_report_free(r[i]);
    }
    ozcmp_report_free(r[OZCMP_REPORT_MAX_TAPS]);
}

/* Records added by several threads while a region attaches and detaches: no
 * record is lost from the process-wide report, none reaches a detached one. */
#define ADDS 20000
static void *adder(void *p)
{
    ozcmp_site s = {"cublasDgemm_v2", 0, 0, 8, 8, 8, (int64_t)(intptr_t)p, "phase22"};
    ozcmp_call_metrics m = met(1e-12);
    for (int i = 0; i < ADDS; i++)
        ozcmp_report_add(ozcmp_report_global(), &s, &m);
    return NULL;
}

static void t_threads(void **state)
{
    (void)state;
    size_t n;
    ozcmp_report_row t;
    uint64_t before = calls_of(ozcmp_report_global(), &n, &t);
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, adder, (void *)(intptr_t)(i + 2)), 0);
    uint64_t in_regions = 0;
    for (int k = 0; k < 200; k++) {
        ozcmp_report *r = ozcmp_report_new();
        int slot = ozcmp_report_tap_attach(r);
        assert_true(slot >= 0);
        assert_ptr_equal(ozcmp_report_tap_detach(slot), r);
        uint64_t c = calls_of(r, &n, &t);
        in_regions += c;
        ozcmp_report_free(r); /* freed while the adders go on: detach guarantees nobody adds to it */
    }
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(calls_of(ozcmp_report_global(), &n, &t) - before, 3 * ADDS);
    assert_true(in_regions <= 3 * ADDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_tap),
        cmocka_unit_test(t_full),
        cmocka_unit_test(t_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
