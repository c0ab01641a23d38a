/* compare/report.h: the shadow-mode report, aggregated per call site, for a terminal and as CSV or JSON. Plain C.
 *
 * A call site is (entry point, mode, transa, transb, m, n, k, batch): the
 * mode names the emulated path ("phase22", "ozaki2/53": ozaki2 at 53 bits),
 * so a program that switches mode per call gets one row per mode. Per site: the
 * calls compared, the calls not compared by reason, and for each metric of
 * metrics.h its worst value and its typical value, the arithmetic MEAN over
 * the compared calls; for the two element counts the total and the worst
 * call. Rows are sorted worst first: sites with NaN/Inf mismatches first
 * (a non-finite difference is worse than any finite one, and the normwise
 * value does not see it), then by worst normwise relative difference, then
 * by worst max abs difference; sites never compared go last.
 *
 * Thread-safe: every function on an ozcmp_report takes its lock. */
#ifndef OZCRT_COMPARE_REPORT_H
#define OZCRT_COMPARE_REPORT_H

#include <stdint.h>
#include <stdio.h>
#include "compare/metrics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A call site. `entry` and `mode` are copied (at most OZCMP_SITE_ENTRY_MAX - 1
 * and OZCMP_SITE_MODE_MAX - 1 chars; NULL: "?"). ozcmp_gemm sets `mode`
 * from its ozcmp_path (compare.h). */
typedef struct ozcmp_site {
    const char *entry;
    int transa, transb;         /* 0 = N, 1 = T, 2 = C */
    int64_t m, n, k, batch;
    const char *mode;           /* the emulated path: "phase22", "ozaki2/<bits>" */
} ozcmp_site;

#define OZCMP_SITE_ENTRY_MAX 48
#define OZCMP_SITE_MODE_MAX 16

/* Why a call was not compared: X(id, csv/json name, words for the terminal).
 * OZCMP_SKIP_COMPLEX is no longer counted (complex calls are compared since
 * compare/metrics.h took the complex modulus): kept, always 0, so that the
 * files keep their columns and older reports read the same. */
#define OZCMP_SKIP_REASONS(X)                                              \
    X(OZCMP_SKIP_CAPTURE, "not_compared_capture", "graph capture")         \
    X(OZCMP_SKIP_NO_MEMORY, "not_compared_no_memory", "no scratch memory") \
    X(OZCMP_SKIP_NATIVE_FAILED, "not_compared_native_failed", "native call failed") \
    X(OZCMP_SKIP_CUDA_ERROR, "not_compared_cuda_error", "CUDA error")      \
    X(OZCMP_SKIP_LOST, "not_compared_lost", "record lost at exit")         \
    X(OZCMP_SKIP_COMPLEX, "not_compared_complex", "complex")
#define OZCMP_X_ENUM(id, name, words) id,
typedef enum { OZCMP_SKIP_REASONS(OZCMP_X_ENUM) OZCMP_SKIP_COUNT } ozcmp_skip_reason;
#undef OZCMP_X_ENUM

/* One row of the report (a site, or the total with entry "total", mode ""
 * and the shape fields 0). Means are over the compared calls (0 when there
 * are none). */
typedef struct ozcmp_report_row {
    char entry[OZCMP_SITE_ENTRY_MAX];
    char mode[OZCMP_SITE_MODE_MAX];
    int transa, transb;
    int64_t m, n, k, batch;
    uint64_t calls;                     /* compared */
    uint64_t not_compared[OZCMP_SKIP_COUNT];
    uint64_t elements;                  /* summed over compared calls */
    double normwise_worst, normwise_mean;
    double max_abs_worst, max_abs_mean;
    double max_rel_worst, max_rel_mean;
    uint64_t beyond_bound_total, beyond_bound_worst;
    uint64_t nonfinite_total, nonfinite_worst;
} ozcmp_report_row;

/* The numeric fields in file order (CSV columns, JSON keys), after the
 * entry, mode and ops: X(name, member) for integers, D(name, member) for doubles. */
#define OZCMP_REPORT_NUM_FIELDS(X, D)                  \
    X("m", m) X("n", n) X("k", k) X("batch", batch) \
    X("calls", calls) X("elements", elements)       \
    D("normwise_worst", normwise_worst) D("normwise_mean", normwise_mean) \
    D("max_abs_worst", max_abs_worst) D("max_abs_mean", max_abs_mean)     \
    D("max_rel_worst", max_rel_worst) D("max_rel_mean", max_rel_mean)     \
    X("beyond_bound_total", beyond_bound_total) X("beyond_bound_worst", beyond_bound_worst) \
    X("nonfinite_total", nonfinite_total) X("nonfinite_worst", nonfinite_worst)

typedef struct ozcmp_report ozcmp_report;

ozcmp_report *ozcmp_report_new(void);
void ozcmp_report_free(ozcmp_report *r);

/* Records one compared call / one call not compared. */
void ozcmp_report_add(ozcmp_report *r, const ozcmp_site *site, const ozcmp_call_metrics *m);
void ozcmp_report_add_skipped(ozcmp_report *r, const ozcmp_site *site, ozcmp_skip_reason why);

/* The rows sorted worst first, and the total row. Returns the number of
 * rows; *rows is malloc'ed (free it), NULL when there are none. */
size_t ozcmp_report_rows(ozcmp_report *r, ozcmp_report_row **rows, ozcmp_report_row *total);

/* The table for a terminal, at most 100 columns. */
void ozcmp_report_render(ozcmp_report *r, FILE *f);

/* Machine-readable forms. CSV: a header line and one line per site (no total
 * line), columns entry, mode, transa, transb, then OZCMP_REPORT_NUM_FIELDS and
 * the not_compared_* counts. JSON: {"ozcrt_report": 1, "sites": [...],
 * "total": {...}}, a site's keys in the CSV's order (the total has no entry,
 * mode or ops). Numbers
 * round-trip exactly (%.17g); +Inf is "inf" in CSV and 1e999 in JSON (a
 * valid JSON number that parsers read as +Inf). Return 0, or -1 on an I/O
 * error (errno set). */
int ozcmp_report_write_csv(ozcmp_report *r, FILE *f);
int ozcmp_report_write_json(ozcmp_report *r, FILE *f);

/* The name of a skip reason in files and its words for the terminal. */
const char *ozcmp_skip_reason_name(ozcmp_skip_reason why);
const char *ozcmp_skip_reason_words(ozcmp_skip_reason why);

/* The process-wide report that shadow mode fills, and the two calls the
 * shim makes from its exit handler (after ozcmp_flush(), shadow.h):
 * ozcmp_report_print: the table to f (stderr, or the OZCRT_LOG_FILE stream);
 * ozcmp_report_write_file: CSV when path ends in ".csv", JSON otherwise; returns
 * 0, or -1 with a message on stderr. */
ozcmp_report *ozcmp_report_global(void);
void ozcmp_report_print(FILE *f);
int ozcmp_report_write_file(const char *path);

/* Any report r to the file `path`, as ozcmp_report_write_file does. */
int ozcmp_report_save(ozcmp_report *r, const char *path);

/* Region reports (compare regions: ozcmp_region_begin/end, compare.h): while
 * attached, every record added to the process-wide report is also added to
 * each attached report. attach returns the slot (>= 0), or -1 when all
 * OZCMP_REPORT_MAX_TAPS are taken; detach returns the report of a slot and
 * frees the slot (NULL for a slot not attached); once it has returned, no
 * record is added to that report any more. */
#define OZCMP_REPORT_MAX_TAPS 16
int ozcmp_report_tap_attach(ozcmp_report *r);
ozcmp_report *ozcmp_report_tap_detach(int slot);

#ifdef __cplusplus
}
#endif
#endif
