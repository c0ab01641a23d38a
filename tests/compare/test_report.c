/* tests/compare/test_report.c: report aggregation, sorting, the 100-column table, and CSV/JSON round-trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare/report.h"

/* cmocka 1.1.5 has no assert_double_equal */
#define assert_close(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol))

static ozcmp_call_metrics met(double nw, double abs_, double rel, uint64_t bound, uint64_t nonfin)
{
    ozcmp_call_metrics m = {abs_, rel, nw, bound, nonfin, 100};
    return m;
}

/* Seven sites: one with a NaN mismatch (must come first), two ordered by
 * normwise, two with equal normwise ordered by max abs, the 4096 one's key
 * also in the ozaki2 mode (a row of its own), one never compared. */
static ozcmp_report *sample(void)
{
    ozcmp_report *r = ozcmp_report_new();
    ozcmp_site a = {"cublasDgemm_v2", 0, 0, 4096, 4096, 4096, 1, "phase22"};
    ozcmp_site a2 = {"cublasDgemm_v2", 0, 0, 4096, 4096, 4096, 1, "ozaki2/53"};
    ozcmp_site b = {"cublasDgemmStridedBatched", 1, 0, 128, 64, 256, 32, "phase22"};
    ozcmp_site c = {"cublasGemmEx", 0, 1, 100, 200, 300, 1, "phase22"};
    ozcmp_site d = {"cublasDgemm_v2_64", 0, 0, 10, 10, 10, 1, "phase22"};
    ozcmp_site e = {"cublasDgemmBatched", 1, 1, 7, 61, 68, 3, "ozaki2/40"};
    ozcmp_site z = {"cublasGemmBatchedEx", 0, 0, 5, 5, 5, 1, "phase22"};
    ozcmp_call_metrics ma1 = met(1e-10, 2e-9, 1e-6, 0, 0), ma2 = met(3e-10, 1e-9, 5e-6, 2, 0);
    ozcmp_report_add(r, &a, &ma1);
    ozcmp_report_add(r, &a, &ma2);
    ozcmp_call_metrics ma3 = met(1e-16, 1e-15, 1e-12, 1, 0);
    ozcmp_report_add(r, &a2, &ma3);
    ozcmp_call_metrics mb = met(5e-10, 1e-9, 1e-7, 0, 0);
    ozcmp_report_add(r, &b, &mb);
    ozcmp_call_metrics mc = met(5e-10, 4e-9, INFINITY, 0, 0);
    ozcmp_report_add(r, &c, &mc);
    ozcmp_call_metrics md = met(1e-16, 1e-17, 1e-16, 0, 3);
    ozcmp_report_add(r, &d, &md);
    ozcmp_call_metrics me = met(INFINITY, 1e-300, 0.5, 0, 0);
    ozcmp_report_add(r, &e, &me);
    ozcmp_report_add_skipped(r, &a, OZCMP_SKIP_CAPTURE);
    ozcmp_report_add_skipped(r, &z, OZCMP_SKIP_NO_MEMORY);
    return r;
}

static void test_aggregate_and_sort(void **state)
{
    (void)state;
    ozcmp_report *r = sample();
    ozcmp_report_row *rows, total;
    size_t n = ozcmp_report_rows(r, &rows, &total);
    assert_int_equal(n, 7);
    assert_string_equal(rows[0].entry, "cublasDgemm_v2_64");          /* NaN/Inf mismatch */
    assert_string_equal(rows[1].entry, "cublasDgemmBatched");         /* normwise inf */
    assert_string_equal(rows[1].mode, "ozaki2/40");
    assert_string_equal(rows[2].entry, "cublasGemmEx");               /* 5e-10, abs 4e-9 */
    assert_string_equal(rows[3].entry, "cublasDgemmStridedBatched");  /* 5e-10, abs 1e-9 */
    assert_string_equal(rows[4].entry, "cublasDgemm_v2");
    assert_string_equal(rows[4].mode, "phase22");
    assert_string_equal(rows[5].entry, "cublasDgemm_v2");             /* the same key, ozaki2: its own row */
    assert_string_equal(rows[5].mode, "ozaki2/53");
    assert_string_equal(rows[6].entry, "cublasGemmBatchedEx");        /* never compared */
    const ozcmp_report_row *a = &rows[4];
    assert_int_equal(a->calls, 2);
    assert_int_equal(a->not_compared[OZCMP_SKIP_CAPTURE], 1);
    assert_true(a->normwise_worst == 3e-10);
    assert_close(a->normwise_mean, 2e-10, 1e-25);
    assert_true(a->max_abs_worst == 2e-9);
    assert_close(a->max_abs_mean, 1.5e-9, 1e-24);
    assert_int_equal(a->beyond_bound_total, 2);
    assert_int_equal(a->beyond_bound_worst, 2);
    assert_int_equal(a->elements, 200);
    const ozcmp_report_row *a2 = &rows[5];
    assert_int_equal(a2->calls, 1);
    assert_int_equal(a2->not_compared[OZCMP_SKIP_CAPTURE], 0);
    assert_true(a2->normwise_worst == 1e-16 && a2->max_abs_worst == 1e-15);
    assert_int_equal(a2->beyond_bound_total, 1);
    assert_int_equal(rows[6].calls, 0);
    assert_int_equal(rows[6].not_compared[OZCMP_SKIP_NO_MEMORY], 1);
    assert_int_equal(total.calls, 7);
    assert_string_equal(total.mode, "");
    assert_int_equal(total.beyond_bound_total, 3);
    assert_true(isinf(total.normwise_worst));
    assert_int_equal(total.nonfinite_total, 3);
    assert_int_equal(total.not_compared[OZCMP_SKIP_CAPTURE], 1);
    assert_int_equal(total.not_compared[OZCMP_SKIP_NO_MEMORY], 1);
    free(rows);
    ozcmp_report_free(r);
}

static void test_render_width(void **state)
{
    (void)state;
    ozcmp_report *r = sample();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ozcmp_report_render(r, f);
    fclose(f);
    int lines = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        assert_true(strlen(line) <= 100);
        lines++;
    }
    assert_true(lines >= 10);
    free(buf);
    /* the content, on a fresh copy */
    f = open_memstream(&buf, &len);
    ozcmp_report_render(r, f);
    fclose(f);
    assert_non_null(strstr(buf, "entry mode ops m x n x k*batch"));
    assert_non_null(strstr(buf, "cublasDgemmStridedBatched phase22 TN 128x64x256*32"));
    assert_non_null(strstr(buf, "cublasDgemm_v2 phase22 NN 4096x4096x4096"));
    assert_non_null(strstr(buf, "cublasDgemm_v2 ozaki2/53 NN 4096x4096x4096"));
    assert_non_null(strstr(buf, "cublasDgemmBatched ozaki2/40 TT 7x61x68*3"));
    assert_non_null(strstr(buf, "1.0e-16/1.0e-16"));
    assert_non_null(strstr(buf, "3.0e-10/2.0e-10"));
    assert_non_null(strstr(buf, "graph capture 1"));
    assert_non_null(strstr(buf, "no scratch memory 1"));
    assert_non_null(strstr(buf, "total"));
    /* worst first: the NaN site is printed before the 4096 one */
    assert_true(strstr(buf, "cublasDgemm_v2_64") < strstr(buf, "cublasDgemm_v2 phase22 NN"));
    assert_true(strstr(buf, "cublasDgemm_v2 phase22 NN") < strstr(buf, "cublasDgemm_v2 ozaki2/53 NN"));
    free(buf);
    ozcmp_report_free(r);
}

/* ---- a CSV reader for exactly the format written ---- */

static int op_of(const char *s)
{
    return s[0] == 'N' ? 0 : s[0] == 'T' ? 1 : s[0] == 'C' ? 2 : -1;
}

/* Sets the field `key` of row from text `val`; returns 1 if known. */
static int set_field(ozcmp_report_row *row, const char *key, const char *val)
{
    if (!strcmp(key, "entry"))
        return snprintf(row->entry, sizeof row->entry, "%s", val), 1;
    if (!strcmp(key, "mode"))
        return snprintf(row->mode, sizeof row->mode, "%s", val), 1;
    if (!strcmp(key, "transa"))
        return row->transa = op_of(val), 1;
    if (!strcmp(key, "transb"))
        return row->transb = op_of(val), 1;
#define OZCMP_X_INT(name, member) \
    if (!strcmp(key, name))    \
        return row->member = strtoull(val, NULL, 10), 1;
#define OZCMP_X_DBL(name, member) \
    if (!strcmp(key, name))    \
        return row->member = strtod(val, NULL), 1;
    OZCMP_REPORT_NUM_FIELDS(OZCMP_X_INT, OZCMP_X_DBL)
#undef OZCMP_X_INT
#undef OZCMP_X_DBL
    for (int s = 0; s < OZCMP_SKIP_COUNT; s++)
        if (!strcmp(key, ozcmp_skip_reason_name((ozcmp_skip_reason)s)))
            return row->not_compared[s] = strtoull(val, NULL, 10), 1;
    return 0;
}

static size_t parse_csv(char *text, ozcmp_report_row *rows, size_t max)
{
    char *save = NULL;
    char *header = strtok_r(text, "\n", &save);
    char *keys[64];
    int nkeys = 0;
    char *hs = NULL;
    for (char *k = strtok_r(header, ",", &hs); k && nkeys < 64; k = strtok_r(NULL, ",", &hs))
        keys[nkeys++] = k;
    size_t n = 0;
    for (char *line = strtok_r(NULL, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save)) {
        memset(&rows[n], 0, sizeof rows[n]);
        int i = 0;
        char *fs = NULL;
        for (char *v = strtok_r(line, ",", &fs); v; v = strtok_r(NULL, ",", &fs), i++) {
            assert_true(i < nkeys);
            assert_true(set_field(&rows[n], keys[i], v));
        }
        assert_int_equal(i, nkeys);
        n++;
    }
    return n;
}

/* ---- a JSON reader for the report's shape: objects of strings and numbers ---- */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

static const char *read_string(const char *p, char *out, size_t len)
{
    assert_true(*p == '"');
    p++;
    size_t i = 0;
    while (*p && *p != '"') {
        assert_true(*p != '\\');
        if (i + 1 < len)
            out[i++] = *p;
        p++;
    }
    assert_true(*p == '"');
    out[i] = 0;
    return p + 1;
}

static const char *read_object(const char *p, ozcmp_report_row *row)
{
    memset(row, 0, sizeof *row);
    p = skip_ws(p);
    assert_true(*p == '{');
    p = skip_ws(p + 1);
    while (*p != '}') {
        char key[64], val[64];
        p = skip_ws(read_string(p, key, sizeof key));
        assert_true(*p == ':');
        p = skip_ws(p + 1);
        if (*p == '"') {
            p = read_string(p, val, sizeof val);
        } else {
            size_t i = 0;
            while (*p && strchr("+-.0123456789eE", *p) && i + 1 < sizeof val)
                val[i++] = *p++;
            val[i] = 0;
            assert_true(i > 0);
        }
        assert_true(set_field(row, key, val));
        p = skip_ws(p);
        if (*p == ',')
            p = skip_ws(p + 1);
        else
            assert_true(*p == '}');
    }
    return p + 1;
}

static size_t parse_json(const char *text, ozcmp_report_row *rows, size_t max, ozcmp_report_row *total)
{
    const char *p = strstr(text, "\"ozcrt_report\": 1");
    assert_non_null(p);
    p = strstr(text, "\"sites\": [");
    assert_non_null(p);
    p = skip_ws(p + strlen("\"sites\": ["));
    size_t n = 0;
    while (*p == '{' && n < max) {
        p = skip_ws(read_object(p, &rows[n++]));
        if (*p == ',')
            p = skip_ws(p + 1);
    }
    assert_true(*p == ']');
    p = strstr(p, "\"total\": ");
    assert_non_null(p);
    read_object(p + strlen("\"total\": "), total);
    snprintf(total->entry, sizeof total->entry, "total");
    return n;
}

static void assert_rows_equal(const ozcmp_report_row *a, const ozcmp_report_row *b)
{
    /* memcmp would see padding and the unused tail of entry: compare fields */
    assert_string_equal(a->entry, b->entry);
    assert_string_equal(a->mode, b->mode);
    assert_int_equal(a->transa, b->transa);
    assert_int_equal(a->transb, b->transb);
#define OZCMP_X_INT(name, member) assert_true(a->member == b->member);
#define OZCMP_X_DBL(name, member) assert_memory_equal(&a->member, &b->member, sizeof(double));
    OZCMP_REPORT_NUM_FIELDS(OZCMP_X_INT, OZCMP_X_DBL)
#undef OZCMP_X_INT
#undef OZCMP_X_DBL
    assert_memory_equal(a->not_compared, b->not_compared, sizeof a->not_compared);
}

static void test_csv_roundtrip(void **state)
{
    (void)state;
    ozcmp_report *r = sample();
    ozcmp_report_row *rows, total, back[16];
    size_t n = ozcmp_report_rows(r, &rows, &total);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(ozcmp_report_write_csv(r, f), 0);
    fclose(f);
    assert_int_equal(parse_csv(buf, back, 16), n);
    for (size_t i = 0; i < n; i++)
        assert_rows_equal(&rows[i], &back[i]);
    assert_true(isinf(back[1].normwise_worst)); /* "inf" read back */
    free(buf);
    free(rows);
    ozcmp_report_free(r);
}

static void test_json_roundtrip(void **state)
{
    (void)state;
    ozcmp_report *r = sample();
    ozcmp_report_row *rows, total, back[16], back_total;
    size_t n = ozcmp_report_rows(r, &rows, &total);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(ozcmp_report_write_json(r, f), 0);
    fclose(f);
    assert_non_null(strstr(buf, "1e999"));
    /* the mode next to the entry point; the total has neither */
    assert_non_null(strstr(buf, "{\"entry\": \"cublasDgemm_v2\", \"mode\": \"ozaki2/53\", \"transa\": \"N\""));
    assert_null(strstr(strstr(buf, "\"total\": "), "\"mode\""));
    assert_int_equal(parse_json(buf, back, 16, &back_total), n);
    for (size_t i = 0; i < n; i++)
        assert_rows_equal(&rows[i], &back[i]);
    assert_rows_equal(&total, &back_total);
    free(buf);
    free(rows);
    ozcmp_report_free(r);
}

static void test_empty_report(void **state)
{
    (void)state;
    ozcmp_report *r = ozcmp_report_new();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(ozcmp_report_write_json(r, f), 0);
    fclose(f);
    ozcmp_report_row back[2], total;
    assert_int_equal(parse_json(buf, back, 2, &total), 0);
    assert_int_equal(total.calls, 0);
    free(buf);
    f = open_memstream(&buf, &len);
    ozcmp_report_render(r, f);
    fclose(f);
    assert_non_null(strstr(buf, "0 call sites"));
    free(buf);
    ozcmp_report_free(r);
}

static void test_global_write_file(void **state)
{
    (void)state;
    ozcmp_site s = {"cublasDgemm_v2", 1, 1, 33, 44, 55, 1, "ozaki2/53"};
    ozcmp_call_metrics m = met(0.125, 0.25, 0.5, 1, 0);
    ozcmp_report_add(ozcmp_report_global(), &s, &m);
    char dir[] = "/tmp/ozcrt-report-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char csv[64], json[80];
    snprintf(csv, sizeof csv, "%s/r.csv", dir);
    snprintf(json, sizeof json, "%s/r.json", dir);
    assert_int_equal(ozcmp_report_write_file(csv), 0);
    assert_int_equal(ozcmp_report_write_file(json), 0);
    char text[4096];
    FILE *f = fopen(csv, "r");
    size_t got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = 0;
    const char *head = "entry,mode,transa,transb,m,n,k,batch,calls,";
    assert_true(strncmp(text, head, strlen(head)) == 0);
    assert_non_null(strstr(text, "\ncublasDgemm_v2,ozaki2/53,T,T,33,44,55,1,1,"));
    ozcmp_report_row back[2], total;
    assert_int_equal(parse_csv(text, back, 2), 1);
    assert_string_equal(back[0].mode, "ozaki2/53");
    assert_int_equal(back[0].m, 33);
    assert_true(back[0].max_rel_worst == 0.5);
    f = fopen(json, "r");
    got = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[got] = 0;
    assert_int_equal(parse_json(text, back, 2, &total), 1);
    assert_int_equal(back[0].transa, 1);
    assert_string_equal(back[0].mode, "ozaki2/53");
    assert_int_equal(total.beyond_bound_total, 1);
    assert_int_equal(ozcmp_report_write_file("/nonexistent-dir/x.json"), -1);
    unlink(csv);
    unlink(json);
    rmdir(dir);
}

/* The mode is part of a site's key: one row per (site, mode); a site
 * without a mode is "?"; separate rows even where entry and mode strings
 * concatenate alike. */
static void test_mode_rows(void **state)
{
    (void)state;
    ozcmp_report *r = ozcmp_report_new();
    ozcmp_site p = {"cublasGemmEx", 0, 1, 64, 64, 64, 1, "phase22"};
    ozcmp_site o = {"cublasGemmEx", 0, 1, 64, 64, 64, 1, "ozaki2/53"};
    ozcmp_site o40 = {"cublasGemmEx", 0, 1, 64, 64, 64, 1, "ozaki2/40"};
    ozcmp_site none = {"cublasGemmEx", 0, 1, 64, 64, 64, 1, NULL};
    ozcmp_site x1 = {"ab", 0, 0, 8, 8, 8, 1, "c"}, x2 = {"a", 0, 0, 8, 8, 8, 1, "bc"};
    ozcmp_call_metrics m1 = met(1e-10, 1e-9, 1e-8, 0, 0), m2 = met(1e-16, 1e-16, 1e-16, 0, 0);
    ozcmp_report_add(r, &p, &m1);
    ozcmp_report_add(r, &o, &m2);
    ozcmp_report_add(r, &o, &m2);
    ozcmp_report_add(r, &p, &m1);
    ozcmp_report_add(r, &o40, &m1);
    ozcmp_report_add_skipped(r, &o, OZCMP_SKIP_CAPTURE);
    ozcmp_report_add(r, &none, &m2);
    ozcmp_report_add(r, &x1, &m2);
    ozcmp_report_add(r, &x2, &m2);
    ozcmp_report_row *rows, total;
    size_t n = ozcmp_report_rows(r, &rows, &total);
    assert_int_equal(n, 6);
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        const ozcmp_report_row *w = &rows[i];
        if (!strcmp(w->entry, "cublasGemmEx") && !strcmp(w->mode, "phase22")) {
            assert_int_equal(w->calls, 2);
            assert_true(w->normwise_worst == 1e-10);
            seen |= 1;
        } else if (!strcmp(w->entry, "cublasGemmEx") && !strcmp(w->mode, "ozaki2/53")) {
            assert_int_equal(w->calls, 2);
            assert_int_equal(w->not_compared[OZCMP_SKIP_CAPTURE], 1);
            assert_true(w->normwise_worst == 1e-16);
            seen |= 2;
        } else if (!strcmp(w->entry, "cublasGemmEx") && !strcmp(w->mode, "ozaki2/40")) {
            assert_int_equal(w->calls, 1);
            seen |= 4;
        } else if (!strcmp(w->entry, "cublasGemmEx") && !strcmp(w->mode, "?")) {
            assert_int_equal(w->calls, 1);
            seen |= 8;
        } else if (!strcmp(w->entry, "ab") && !strcmp(w->mode, "c")) {
            seen |= 16;
        } else if (!strcmp(w->entry, "a") && !strcmp(w->mode, "bc")) {
            seen |= 32;
        }
    }
    assert_int_equal(seen, 63);
    assert_int_equal(total.calls, 8);
    free(rows);
    /* the same rows in the table, the CSV and the JSON */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ozcmp_report_render(r, f);
    fclose(f);
    assert_non_null(strstr(buf, "cublasGemmEx phase22 NT 64x64x64"));
    assert_non_null(strstr(buf, "cublasGemmEx ozaki2/53 NT 64x64x64"));
    assert_non_null(strstr(buf, "cublasGemmEx ozaki2/40 NT 64x64x64"));
    assert_non_null(strstr(buf, "ozaki2/B = ozaki2 at B bits"));
    free(buf);
    f = open_memstream(&buf, &len);
    assert_int_equal(ozcmp_report_write_csv(r, f), 0);
    fclose(f);
    assert_non_null(strstr(buf, "\ncublasGemmEx,phase22,N,T,64,64,64,1,2,"));
    assert_non_null(strstr(buf, "\ncublasGemmEx,ozaki2/53,N,T,64,64,64,1,2,"));
    assert_non_null(strstr(buf, "\ncublasGemmEx,ozaki2/40,N,T,64,64,64,1,1,"));
    free(buf);
    ozcmp_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aggregate_and_sort), cmocka_unit_test(test_render_width),
        cmocka_unit_test(test_csv_roundtrip),      cmocka_unit_test(test_json_roundtrip),
        cmocka_unit_test(test_empty_report),       cmocka_unit_test(test_global_write_file),
        cmocka_unit_test(test_mode_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
