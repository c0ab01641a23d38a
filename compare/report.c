/* compare/report.c: per-site aggregation of the shadow-mode metrics and its terminal, CSV and JSON forms. */
#include "compare/report.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* While aggregating, the *_mean fields of a row hold sums; rows() divides. */
struct ozcmp_report {
    pthread_mutex_t lock;
    ozcmp_report_row *sites;
    size_t nsites, cap;
    size_t *index;      /* open addressing: site number + 1, 0 = empty */
    size_t index_cap;   /* a power of two, at least 2 nsites */
};

static const char *const g_skip_names[] = {
#define OZCMP_X_NAME(id, name, words) name,
    OZCMP_SKIP_REASONS(OZCMP_X_NAME)
#undef OZCMP_X_NAME
};
static const char *const g_skip_words[] = {
#define OZCMP_X_WORDS(id, name, words) words,
    OZCMP_SKIP_REASONS(OZCMP_X_WORDS)
#undef OZCMP_X_WORDS
};

const char *ozcmp_skip_reason_name(ozcmp_skip_reason why)
{
    return (unsigned)why < OZCMP_SKIP_COUNT ? g_skip_names[why] : "?";
}

const char *ozcmp_skip_reason_words(ozcmp_skip_reason why)
{
    return (unsigned)why < OZCMP_SKIP_COUNT ? g_skip_words[why] : "?";
}

ozcmp_report *ozcmp_report_new(void)
{
    ozcmp_report *r = calloc(1, sizeof *r);
    if (r)
        pthread_mutex_init(&r->lock, NULL);
    return r;
}

void ozcmp_report_free(ozcmp_report *r)
{
    if (!r)
        return;
    pthread_mutex_destroy(&r->lock);
    free(r->sites);
    free(r->index);
    free(r);
}

static uint64_t site_hash(const char *entry, const char *mode, int ta, int tb, const int64_t dims[4])
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)entry; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    h = (h ^ 0xffu) * 1099511628211ull; /* a separator no name holds */
    for (const unsigned char *p = (const unsigned char *)mode; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    h = (h ^ (uint64_t)(ta * 3 + tb)) * 1099511628211ull;
    for (int i = 0; i < 4; i++)
        h = (h ^ (uint64_t)dims[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int row_is(const ozcmp_report_row *row, const ozcmp_site *s, const char *entry, const char *mode)
{
    return row->transa == s->transa && row->transb == s->transb && row->m == s->m && row->n == s->n &&
           row->k == s->k && row->batch == s->batch && strcmp(row->entry, entry) == 0 &&
           strcmp(row->mode, mode) == 0;
}

static size_t row_slot(const ozcmp_report *r, const ozcmp_report_row *row)
{
    int64_t dims[4] = {row->m, row->n, row->k, row->batch};
    return (size_t)site_hash(row->entry, row->mode, row->transa, row->transb, dims) & (r->index_cap - 1);
}

static int grow_index(ozcmp_report *r)
{
    size_t cap = r->index_cap ? r->index_cap * 2 : 64;
    size_t *idx = calloc(cap, sizeof *idx);
    if (!idx)
        return -1;
    free(r->index);
    r->index = idx;
    r->index_cap = cap;
    for (size_t i = 0; i < r->nsites; i++) {
        size_t h = row_slot(r, &r->sites[i]);
        while (r->index[h])
            h = (h + 1) & (cap - 1);
        r->index[h] = i + 1;
    }
    return 0;
}

/* The row of a site, created when new; NULL when out of memory. Lock held. */
static ozcmp_report_row *find_row(ozcmp_report *r, const ozcmp_site *s)
{
    char entry[OZCMP_SITE_ENTRY_MAX], mode[OZCMP_SITE_MODE_MAX];
    snprintf(entry, sizeof entry, "%s", s->entry ? s->entry : "?");
    snprintf(mode, sizeof mode, "%s", s->mode ? s->mode : "?");
    if (2 * (r->nsites + 1) > r->index_cap && grow_index(r) != 0)
        return NULL;
    int64_t dims[4] = {s->m, s->n, s->k, s->batch};
    size_t h = (size_t)site_hash(entry, mode, s->transa, s->transb, dims) & (r->index_cap - 1);
    for (; r->index[h]; h = (h + 1) & (r->index_cap - 1))
        if (row_is(&r->sites[r->index[h] - 1], s, entry, mode))
            return &r->sites[r->index[h] - 1];
    if (r->nsites == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        ozcmp_report_row *ns = realloc(r->sites, cap * sizeof *ns);
        if (!ns)
            return NULL;
        r->sites = ns;
        r->cap = cap;
    }
    ozcmp_report_row *row = &r->sites[r->nsites];
    memset(row, 0, sizeof *row);
    memcpy(row->entry, entry, sizeof entry);
    memcpy(row->mode, mode, sizeof mode);
    row->transa = s->transa;
    row->transb = s->transb;
    row->m = s->m;
    row->n = s->n;
    row->k = s->k;
    row->batch = s->batch;
    r->index[h] = ++r->nsites;
    return row;
}

static double dmax(double a, double b)
{
    return b > a ? b : a;
}

static uint64_t umax(uint64_t a, uint64_t b)
{
    return b > a ? b : a;
}

/* Adds row b (sums in its mean fields) into a. */
static void fold_row(ozcmp_report_row *a, const ozcmp_report_row *b)
{
    a->calls += b->calls;
    for (int i = 0; i < OZCMP_SKIP_COUNT; i++)
        a->not_compared[i] += b->not_compared[i];
    a->elements += b->elements;
    a->normwise_worst = dmax(a->normwise_worst, b->normwise_worst);
    a->normwise_mean += b->normwise_mean;
    a->max_abs_worst = dmax(a->max_abs_worst, b->max_abs_worst);
    a->max_abs_mean += b->max_abs_mean;
    a->max_rel_worst = dmax(a->max_rel_worst, b->max_rel_worst);
    a->max_rel_mean += b->max_rel_mean;
    a->beyond_bound_total += b->beyond_bound_total;
    a->beyond_bound_worst = umax(a->beyond_bound_worst, b->beyond_bound_worst);
    a->nonfinite_total += b->nonfinite_total;
    a->nonfinite_worst = umax(a->nonfinite_worst, b->nonfinite_worst);
}

static void tap_add(const ozcmp_report *r, const ozcmp_site *site, const ozcmp_call_metrics *m, int why);

void ozcmp_report_add(ozcmp_report *r, const ozcmp_site *site, const ozcmp_call_metrics *m)
{
    tap_add(r, site, m, -1);
    ozcmp_report_row one;
    memset(&one, 0, sizeof one);
    one.calls = 1;
    one.elements = m->elements;
    one.normwise_worst = one.normwise_mean = m->normwise;
    one.max_abs_worst = one.max_abs_mean = m->max_abs;
    one.max_rel_worst = one.max_rel_mean = m->max_rel;
    one.beyond_bound_total = one.beyond_bound_worst = m->beyond_bound;
    one.nonfinite_total = one.nonfinite_worst = m->nonfinite_mismatch;
    pthread_mutex_lock(&r->lock);
    ozcmp_report_row *row = find_row(r, site);
    if (row)
        fold_row(row, &one);
    pthread_mutex_unlock(&r->lock);
}

void ozcmp_report_add_skipped(ozcmp_report *r, const ozcmp_site *site, ozcmp_skip_reason why)
{
    if ((unsigned)why >= OZCMP_SKIP_COUNT)
        return;
    tap_add(r, site, NULL, (int)why);
    pthread_mutex_lock(&r->lock);
    ozcmp_report_row *row = find_row(r, site);
    if (row)
        row->not_compared[why]++;
    pthread_mutex_unlock(&r->lock);
}

static void finish_means(ozcmp_report_row *row)
{
    double c = row->calls ? (double)row->calls : 1.0;
    row->normwise_mean /= c;
    row->max_abs_mean /= c;
    row->max_rel_mean /= c;
}

static int cmp_rows(const void *pa, const void *pb)
{
    const ozcmp_report_row *a = pa, *b = pb;
    if ((a->calls == 0) != (b->calls == 0))
        return a->calls == 0 ? 1 : -1;
    if ((a->nonfinite_total > 0) != (b->nonfinite_total > 0))
        return a->nonfinite_total > 0 ? -1 : 1;
    if (a->normwise_worst != b->normwise_worst)
        return a->normwise_worst > b->normwise_worst ? -1 : 1;
    if (a->max_abs_worst != b->max_abs_worst)
        return a->max_abs_worst > b->max_abs_worst ? -1 : 1;
    if (a->calls != b->calls)
        return a->calls > b->calls ? -1 : 1;
    int c = strcmp(a->entry, b->entry);
    if (c)
        return c;
    c = strcmp(a->mode, b->mode);
    if (c)
        return c;
    const int64_t ka[6] = {a->transa, a->transb, a->m, a->n, a->k, a->batch};
    const int64_t kb[6] = {b->transa, b->transb, b->m, b->n, b->k, b->batch};
    for (int i = 0; i < 6; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

size_t ozcmp_report_rows(ozcmp_report *r, ozcmp_report_row **rows, ozcmp_report_row *total)
{
    memset(total, 0, sizeof *total);
    snprintf(total->entry, sizeof total->entry, "total");
    pthread_mutex_lock(&r->lock);
    size_t n = r->nsites;
    ozcmp_report_row *out = n ? malloc(n * sizeof *out) : NULL;
    if (out)
        memcpy(out, r->sites, n * sizeof *out);
    pthread_mutex_unlock(&r->lock);
    if (!out)
        n = 0;
    for (size_t i = 0; i < n; i++) {
        fold_row(total, &out[i]);
        finish_means(&out[i]);
    }
    finish_means(total);
    if (n > 1)
        qsort(out, n, sizeof *out, cmp_rows);
    *rows = out;
    return n;
}

/* ---- terminal ---- */

static char op_letter(int op)
{
    return op == 0 ? 'N' : op == 1 ? 'T' : op == 2 ? 'C' : '?';
}

static void fmt_num(char *buf, size_t len, double x)
{
    if (x == 0.0)
        snprintf(buf, len, "0");
    else if (x == INFINITY)
        snprintf(buf, len, "inf");
    else if (fabs(x) < 1e-99 || fabs(x) >= 1e100)
        snprintf(buf, len, "%.0e", x); /* 3-digit exponent: keep 7 characters */
    else
        snprintf(buf, len, "%.1e", x);
}

static void fmt_pair(char *buf, size_t len, double worst, double mean)
{
    char a[24], b[24];
    fmt_num(a, sizeof a, worst);
    fmt_num(b, sizeof b, mean);
    snprintf(buf, len, "%s/%s", a, b);
}

#define SITE_W 31

static void render_row(FILE *f, const ozcmp_report_row *row, const char *label)
{
    char nw[48], ab[48], rl[48];
    fmt_pair(nw, sizeof nw, row->normwise_worst, row->normwise_mean);
    fmt_pair(ab, sizeof ab, row->max_abs_worst, row->max_abs_mean);
    fmt_pair(rl, sizeof rl, row->max_rel_worst, row->max_rel_mean);
    if (strlen(label) > SITE_W) {
        fprintf(f, "%s\n", label);
        label = "";
    }
    if (row->calls == 0)
        fprintf(f, "%-*s %6s  (not compared)\n", SITE_W, label, "0");
    else
        fprintf(f, "%-*s %6llu %15s %15s %15s %6llu %6llu\n", SITE_W, label, (unsigned long long)row->calls,
                nw, ab, rl, (unsigned long long)row->beyond_bound_total, (unsigned long long)row->nonfinite_total);
}

void ozcmp_report_render(ozcmp_report *r, FILE *f)
{
    ozcmp_report_row *rows, total;
    size_t n = ozcmp_report_rows(r, &rows, &total);
    uint64_t skipped = 0;
    for (int i = 0; i < OZCMP_SKIP_COUNT; i++)
        skipped += total.not_compared[i];
    fprintf(f, "ozcrt compare: emulated vs native cuBLAS; %zu call site%s\n", n, n == 1 ? "" : "s");
    fprintf(f, "mode: phase22 = Phase 22 (about 34-bit mantissa), ozaki2/B = ozaki2 at B bits\n");
    fprintf(f, "values are worst/mean over the calls of a site; >bound and NaN/Inf count elements\n");
    fprintf(f, "%-*s %6s %15s %15s %15s %6s %6s\n", SITE_W, "entry mode ops m x n x k*batch", "calls",
            "normwise rel", "max abs diff", "max rel diff", ">bound", "nonfin");
    for (size_t i = 0; i < n; i++) {
        char label[128];
        const ozcmp_report_row *row = &rows[i];
        if (row->batch > 1)
            snprintf(label, sizeof label, "%s %s %c%c %lldx%lldx%lld*%lld", row->entry, row->mode,
                     op_letter(row->transa), op_letter(row->transb), (long long)row->m, (long long)row->n,
                     (long long)row->k, (long long)row->batch);
        else
            snprintf(label, sizeof label, "%s %s %c%c %lldx%lldx%lld", row->entry, row->mode, op_letter(row->transa),
                     op_letter(row->transb), (long long)row->m, (long long)row->n, (long long)row->k);
        render_row(f, row, label);
    }
    render_row(f, &total, "total");
    if (skipped) {
        fprintf(f, "not compared: %llu call%s (", (unsigned long long)skipped, skipped == 1 ? "" : "s");
        const char *sep = "";
        for (int i = 0; i < OZCMP_SKIP_COUNT; i++) {
            if (total.not_compared[i]) {
                fprintf(f, "%s%s %llu", sep, g_skip_words[i], (unsigned long long)total.not_compared[i]);
                sep = ", ";
            }
        }
        fprintf(f, ")\n");
    }
    fprintf(f, "max rel = |emulated - native| / max(|native|, 2^-1022) per element (complex entry points:\n"
               "|.| the modulus); >bound = beyond the bound of the row's mode plus native rounding\n"
               "(compare/metrics.h); nonfin = NaN/Inf mismatches\n");
    free(rows);
}

/* ---- CSV and JSON ---- */

static void put_double(FILE *f, double x, int json)
{
    if (x != x)
        fputs(json ? "null" : "nan", f);
    else if (x == INFINITY)
        fputs(json ? "1e999" : "inf", f);
    else if (x == -INFINITY)
        fputs(json ? "-1e999" : "-inf", f);
    else
        fprintf(f, "%.17g", x);
}

int ozcmp_report_write_csv(ozcmp_report *r, FILE *f)
{
    ozcmp_report_row *rows, total;
    size_t n = ozcmp_report_rows(r, &rows, &total);
    fputs("entry,mode,transa,transb", f);
#define OZCMP_X_HEAD(name, member) fputs("," name, f);
    OZCMP_REPORT_NUM_FIELDS(OZCMP_X_HEAD, OZCMP_X_HEAD)
#undef OZCMP_X_HEAD
    for (int i = 0; i < OZCMP_SKIP_COUNT; i++)
        fprintf(f, ",%s", g_skip_names[i]);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        const ozcmp_report_row *row = &rows[i];
        fprintf(f, "%s,%s,%c,%c", row->entry, row->mode, op_letter(row->transa), op_letter(row->transb));
#define OZCMP_X_INT(name, member) fprintf(f, ",%lld", (long long)row->member);
#define OZCMP_X_DBL(name, member) fputc(',', f), put_double(f, row->member, 0);
        OZCMP_REPORT_NUM_FIELDS(OZCMP_X_INT, OZCMP_X_DBL)
#undef OZCMP_X_INT
#undef OZCMP_X_DBL
        for (int s = 0; s < OZCMP_SKIP_COUNT; s++)
            fprintf(f, ",%llu", (unsigned long long)row->not_compared[s]);
        fputc('\n', f);
    }
    free(rows);
    return ferror(f) ? -1 : 0;
}

static void json_row(FILE *f, const ozcmp_report_row *row, int with_site)
{
    fputc('{', f);
    if (with_site)
        fprintf(f, "\"entry\": \"%s\", \"mode\": \"%s\", \"transa\": \"%c\", \"transb\": \"%c\", ", row->entry,
                row->mode, op_letter(row->transa), op_letter(row->transb));
    const char *sep = "";
#define OZCMP_X_INT(name, member) \
    fprintf(f, "%s\"" name "\": %lld", sep, (long long)row->member), sep = ", ";
#define OZCMP_X_DBL(name, member) \
    fprintf(f, "%s\"" name "\": ", sep), put_double(f, row->member, 1), sep = ", ";
    OZCMP_REPORT_NUM_FIELDS(OZCMP_X_INT, OZCMP_X_DBL)
#undef OZCMP_X_INT
#undef OZCMP_X_DBL
    for (int s = 0; s < OZCMP_SKIP_COUNT; s++)
        fprintf(f, ", \"%s\": %llu", g_skip_names[s], (unsigned long long)row->not_compared[s]);
    fputc('}', f);
}

int ozcmp_report_write_json(ozcmp_report *r, FILE *f)
{
    ozcmp_report_row *rows, total;
    size_t n = ozcmp_report_rows(r, &rows, &total);
    fputs("{\"ozcrt_report\": 1, \"sites\": [", f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n  " : "\n  ", f);
        json_row(f, &rows[i], 1);
    }
    fputs(n ? "\n], \"total\": " : "], \"total\": ", f);
    json_row(f, &total, 0);
    fputs("}\n", f);
    free(rows);
    return ferror(f) ? -1 : 0;
}

/* ---- the process-wide report ---- */

static ozcmp_report *g_report;
static pthread_once_t g_report_once = PTHREAD_ONCE_INIT;

static void make_global(void)
{
    g_report = ozcmp_report_new();
}

ozcmp_report *ozcmp_report_global(void)
{
    pthread_once(&g_report_once, make_global);
    return g_report;
}

void ozcmp_report_print(FILE *f)
{
    ozcmp_report *r = ozcmp_report_global();
    if (r) {
        ozcmp_report_render(r, f ? f : stderr);
        fflush(f ? f : stderr);
    }
}

int ozcmp_report_write_file(const char *path)
{
    return ozcmp_report_save(ozcmp_report_global(), path);
}

int ozcmp_report_save(ozcmp_report *r, const char *path)
{
    if (!r || !path || !*path)
        return -1;
    size_t len = strlen(path);
    int csv = len >= 4 && strcmp(path + len - 4, ".csv") == 0;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "ozcrt: cannot write the shadow report to \"%s\": %s\n", path, strerror(errno));
        return -1;
    }
    int rc = csv ? ozcmp_report_write_csv(r, f) : ozcmp_report_write_json(r, f);
    if (fclose(f) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "ozcrt: error writing the shadow report to \"%s\"\n", path);
    return rc;
}

/* ---- region reports attached to the process-wide one ---- */

static pthread_mutex_t g_tap_lock = PTHREAD_MUTEX_INITIALIZER;
static ozcmp_report *g_taps[OZCMP_REPORT_MAX_TAPS]; /* under g_tap_lock */

/* A record for the process-wide report goes to the attached ones too:
 * metrics m, or (m NULL) a call not compared for `why`. */
static void tap_add(const ozcmp_report *r, const ozcmp_site *site, const ozcmp_call_metrics *m, int why)
{
    if (!r || r != ozcmp_report_global())
        return;
    pthread_mutex_lock(&g_tap_lock);
    for (int i = 0; i < OZCMP_REPORT_MAX_TAPS; i++) {
        if (!g_taps[i])
            continue;
        if (m)
            ozcmp_report_add(g_taps[i], site, m);
        else
            ozcmp_report_add_skipped(g_taps[i], site, (ozcmp_skip_reason)why);
    }
    pthread_mutex_unlock(&g_tap_lock);
}

int ozcmp_report_tap_attach(ozcmp_report *r)
{
    int slot = -1;
    (void)ozcmp_report_global(); /* g_report is set before any tap can see a record */
    pthread_mutex_lock(&g_tap_lock);
    for (int i = 0; r && slot < 0 && i < OZCMP_REPORT_MAX_TAPS; i++)
        if (!g_taps[i]) {
            g_taps[i] = r;
            slot = i;
        }
    pthread_mutex_unlock(&g_tap_lock);
    return slot;
}

ozcmp_report *ozcmp_report_tap_detach(int slot)
{
    if (slot < 0 || slot >= OZCMP_REPORT_MAX_TAPS)
        return NULL;
    pthread_mutex_lock(&g_tap_lock);
    ozcmp_report *r = g_taps[slot];
    g_taps[slot] = NULL;
    pthread_mutex_unlock(&g_tap_lock);
    return r;
}
