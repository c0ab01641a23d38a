/* compare/compare.h: the comparison library's interface to the shim (shadow mode, OZCRT_COMPARE=1): every emulated call also runs native cuBLAS into scratch and is compared on the GPU.
 *
 * compare/ is a static library of its own (host code, its report and its
 * kernels; prefix ozcmp_) linked into libozcrt.so. The shim calls it through
 * ozcmp_gemm() for each call, plus the configuration, the report at exit and
 * the report on request (ozcrt.h). Everything else in compare/ is internal
 * (report.h, metrics.h, kernels.h: also used by its tests).
 *
 * The router calls ozcmp_gemm() IN PLACE OF the emulated path's own run
 * (oz_gemm_run, or oz2_gemm_run in the ozaki2 mode) for a call it has
 * decided to emulate, when shadow mode is on; the path comes as data (an
 * ozcmp_path: its name for the report, its run function and the error bound
 * it obeys). On the caller's stream, in order:
 *   1. scratch from a stream-ordered pool of ozcrt's own (cudaMallocFromPoolAsync;
 *      the application's default pool is not touched), laid out like C (same
 *      element type: 8 bytes an element, 16 for a complex call (d->elem
 *      OZ_ELEM_COMPLEX, ZGEMM); same ldc and strideC in elements, same
 *      address mod 256, so cuBLAS picks the same kernel);
 *   2. C copied into scratch when beta may be non-zero (always in device
 *      pointer mode); for pointer-array batches the scratch pointer array is
 *      built on the device;
 *   3. max |.| of op(A)'s rows and op(B)'s columns (for the error bound);
 *   4. native(native_ctx, &into): the real cuBLAS call with C replaced by
 *      scratch (into.C/ldc/strideC, or into.Carray for pointer arrays);
 *   5. the path's run() into the caller's C;
 *   6. the metric kernel (emulated C vs scratch, with the path's bound; on
 *      the complex modulus for a complex call, compare/metrics.h) into a
 *      device record, copied into a pinned host ring slot with an event;
 *   7. OZCRT_COMPARE_RESULT=native: scratch copied back into C (all of each
 *      element: both parts of a complex one);
 *   8. cudaFreeAsync of the scratch.
 * No host synchronisation: finished records are harvested into the report
 * (compare/report.h) opportunistically (cudaEventQuery) on later calls; when half
 * the ring (OZCMP_RING_SLOTS per device) is in flight the oldest are
 * waited for, and ozcmp_flush() waits for all. A ring slot is copied by
 * the call's own stream: one batched copy on one stream could not be ordered
 * after kernels on the application's other streams without adding
 * dependencies between them.
 *
 * Complex calls are compared like real ones (their report rows are their
 * entry points', cublasZgemm_v2 etc.). Not compared (and counted in the
 * report by reason): a stream under graph capture (still run: emulated, or
 * native when OZCRT_COMPARE_RESULT=native), no scratch memory, a failing
 * native call, CUDA errors. (OZCMP_SKIP_COMPLEX, the reason complex calls
 * had before they were compared, is no longer counted: report.h.) */
#ifndef OZCRT_COMPARE_COMPARE_H
#define OZCRT_COMPARE_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#include "compare/report.h"
#include "kernels/ozcrt_gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OZCMP_RING_SLOTS 1024

/* Runs the real cuBLAS for the same call but writing C per `into`
 * (C/ldc/strideC, or Carray, replaced; everything else as the caller gave
 * it). Returns a cublasStatus_t. */
typedef int (*ozcmp_native_fn)(void *ctx, const oz_gemm_desc *into);

typedef enum { OZCMP_RESULT_EMULATED = 0, OZCMP_RESULT_NATIVE = 1 } ozcmp_result;

/* Runs the emulated path for the call d on `stream` (a cudaStream_t) with
 * the workspace ws (ws_bytes): oz_gemm_run's contract. Returns a cudaError_t. */
typedef int (*ozcmp_emulated_fn)(void *ctx, const oz_gemm_desc *d, void *ws, size_t ws_bytes, void *stream);

/* The emulated path of a call, as ozcmp_gemm runs and judges it. */
typedef struct ozcmp_path {
    const char *mode;           /* its name in the report: "phase22", "ozaki2/53" (bits); copied */
    ozcmp_emulated_fn run;
    void *ctx;                  /* run's first argument */
    ozcmp_bound bound;          /* the error bound it obeys (compare/metrics.h): ozcmp_bound_phase22(),
                                 * or ozcmp_bound_ozaki2(w) for the plan's integer width */
} ozcmp_path;

typedef struct ozcmp_config {
    int enabled;                /* OZCRT_COMPARE: a boolean (1/0, yes/no, true/false, on/off), default 0 */
    ozcmp_result result;        /* OZCRT_COMPARE_RESULT=emulated|native (any case), default emulated */
    const char *report_file;    /* OZCRT_REPORT_FILE=path.csv|path.json (%p, %h expanded), default none */
} ozcmp_config;

/* Read from the environment once (pthread_once), one warning per bad value:
 * the process defaults (the shim's settings may change them per call). */
const ozcmp_config *ozcmp_config_get(void);

/* Parsers, exposed for tests. Return 1 when the value is good (*out set),
 * 0 when unset or empty (*out = default), -1 when bad (*out = default, one
 * warning on stderr naming the variable and the default). */
int ozcmp_parse_compare(const char *value, int *out);
int ozcmp_parse_result(const char *value, ozcmp_result *out);
int ozcmp_parse_report_file(const char *value, const char **out);

/* THE call: the shadow-mode replacement of the emulated path's run (see
 * above). site names the call in the report (its mode is path->mode; the
 * site's own mode is ignored); path the emulated path; d is the call as the
 * router passes it to path->run (arguments already checked), ws and ws_bytes
 * its workspace, stream the handle's cudaStream_t; `result` what the program
 * receives in C. Returns a cublasStatus_t: 0 on success; with
 * OZCMP_RESULT_NATIVE, the native call's status. If the emulated path fails
 * to launch, the program gets the native result (copied from scratch) and
 * the call is counted as not compared (CUDA error). */
int ozcmp_gemm(const ozcmp_site *site, const ozcmp_path *path, const oz_gemm_desc *d, ozcmp_native_fn native,
               void *native_ctx, void *ws, size_t ws_bytes, void *stream, ozcmp_result result);

/* Waits for every record in flight and adds it to the report. Idempotent;
 * safe when shadow mode never ran. Also registered with atexit() the first
 * time a device ring is made (after the CUDA runtime's own handler, so it
 * runs before the runtime is torn down). */
void ozcmp_flush(void);

/* For the shim's exit handler: ozcmp_flush(), then, when OZCRT_COMPARE=1 or
 * ozcmp_gemm ran, the table to `log` (NULL: stderr; pass the OZCRT_LOG_FILE
 * stream) and the file OZCRT_REPORT_FILE (written even when nothing was
 * compared, so tools can tell the shim ran). Runs once; later calls do
 * nothing. */
void ozcmp_report_at_exit(FILE *log);

/* The report now (ozcrt_report_write): ozcmp_flush(), then the file `path`
 * (CSV when it ends in ".csv", JSON otherwise) or, when path is NULL or
 * empty, the table to `log`. Returns 0, or -1 (a message on stderr). */
int ozcmp_report_now(const char *path, FILE *log);

/* Compare regions (ozcrt_compare_begin/end, Python's ozcrt.compare()): from
 * begin to end, every comparison the process finishes also goes into the
 * region's own report. begin waits for the comparisons in flight (they stay
 * out) and returns the region's id (>= 0), or -1 (a message on stderr) when
 * OZCMP_REPORT_MAX_TAPS regions are open. end waits for the comparisons in
 * flight, closes the region and writes its report to `path` (as
 * ozcmp_report_now) or, NULL or "", the table to `log`; -1 for an unknown id
 * or an I/O error (the region is closed all the same). */
int ozcmp_region_begin(void);
int ozcmp_region_end(int id, const char *path, FILE *log);

#ifdef __cplusplus
}
#endif
#endif
