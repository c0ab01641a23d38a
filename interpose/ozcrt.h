/* ozcrt.h: the public C API of libozcrt.so (prefix ozcrt_): the mode and policy at run time, per process and per thread; stats and reports now.
 *
 * libozcrt.so exports these functions beside the cuBLAS names it intercepts.
 * A program may call them when it links libozcrt.so, or find them with
 * dlsym (the Python package `ozcrt` does, through ctypes). Every function is
 * thread-safe and never aborts; the ones that can fail return 0 on success
 * and -1 on a bad argument or an I/O error (with a message on stderr).
 *
 * THE VALUES ("knobs"). Each has three layers:
 *   environment  the OZCRT_* variable read at the first call (or its
 *                default): OZCRT_MODE, OZCRT_MIN_M, OZCRT_MIN_N, OZCRT_MIN_K,
 *                OZCRT_BITS, OZCRT_COMPARE, OZCRT_COMPARE_RESULT, OZCRT_MIN_SPEEDUP;
 *   process      starts as the environment; ozcrt_set(OZCRT_PROCESS, ...)
 *                changes it for every thread that has no override;
 *   thread       ozcrt_set(OZCRT_THREAD, ...) overrides one knob for the
 *                calling thread only, until ozcrt_reset(OZCRT_THREAD, ...).
 * A GEMM obeys the calling thread's override where there is one, else the
 * process value, read once per call: a change made while a call is in flight
 * applies from the next call. The cost on the call path is one atomic load
 * and a thread-local compare.
 *
 * Knob values: OZCRT_KNOB_MODE one of OZCRT_PHASE22, OZCRT_OZAKI2, OZCRT_OFF;
 * OZCRT_KNOB_MIN_M/N/K >= 0 (a call is emulated only if m, n, k are all at
 * least these); OZCRT_KNOB_BITS 1..64 (ozaki2: bits kept of each row's and
 * column's largest element) or -B for automatic precision to 2^-B, B in
 * 20..64 (-53, `OZCRT_BITS=auto`, the default); OZCRT_KNOB_COMPARE 0/1 (shadow mode: emulated
 * calls also run natively and are compared); OZCRT_KNOB_COMPARE_RESULT
 * OZCRT_RESULT_EMULATED or OZCRT_RESULT_NATIVE (which C the program gets in
 * shadow mode); OZCRT_KNOB_MIN_SPEEDUP 0..10000, percent, or
 * OZCRT_MIN_SPEEDUP_AUTO (-1, the default) (ozaki2: a call is emulated only
 * if its predicted speed-up over native DGEMM is at least this; 0: every
 * call past the thresholds; auto: 100 while min_m, min_n, min_k are all at
 * their default 512, else 0; the environment's OZCRT_MIN_SPEEDUP is a ratio
 * or "auto").
 *
 * Loading: the interception works only when libozcrt.so is loaded before
 * libcublas (LD_PRELOAD, or dlopen(RTLD_GLOBAL) before anything that loads
 * cuBLAS); loaded later, the API still works but no call is intercepted.
 *
 * Symbol versions: the ozcrt_ names are listed in the library's version
 * script (interpose/libozcrt.map) but carry no version node: the cuBLAS
 * names must stay unversioned so that a program's versioned references bind
 * to them, and ld does not mix an anonymous version node with named ones.
 * Compatibility is by ozcrt_api_version() instead: a change that breaks a
 * caller raises OZCRT_API_VERSION. */
#ifndef OZCRT_H
#define OZCRT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OZCRT_API_VERSION 1

/* Modes (OZCRT_MODE). */
#define OZCRT_PHASE22 0   /* Phase 22: 28 INT8 GEMMs, ~34 bits (the default) */
#define OZCRT_OFF 1       /* every call forwarded to the real cuBLAS (reason mode-off) */
#define OZCRT_OZAKI2 2    /* Ozaki scheme II, OZCRT_BITS bits */

/* OZCRT_KNOB_MIN_SPEEDUP's default: 100 (percent) at the default thresholds, 0 at others. */
#define OZCRT_MIN_SPEEDUP_AUTO (-1)

/* OZCRT_KNOB_COMPARE_RESULT values. */
#define OZCRT_RESULT_EMULATED 0
#define OZCRT_RESULT_NATIVE 1

typedef enum ozcrt_scope {
    OZCRT_THREAD = 0,     /* get: what the calling thread's calls obey; set/reset: its overrides */
    OZCRT_PROCESS = 1,    /* every thread without an override */
    OZCRT_ENV = 2         /* get only: the environment's value (the process default) */
} ozcrt_scope;

typedef enum ozcrt_knob {
    OZCRT_KNOB_MODE = 0,
    OZCRT_KNOB_MIN_M = 1,
    OZCRT_KNOB_MIN_N = 2,
    OZCRT_KNOB_MIN_K = 3,
    OZCRT_KNOB_BITS = 4,
    OZCRT_KNOB_COMPARE = 5,
    OZCRT_KNOB_COMPARE_RESULT = 6,
    OZCRT_KNOB_MIN_SPEEDUP = 7,
    OZCRT_KNOB_COUNT = 8,
    OZCRT_KNOB_ALL = -1   /* ozcrt_reset only: every knob */
} ozcrt_knob;

/* OZCRT_API_VERSION of the library. */
int ozcrt_api_version(void);

/* The knob's value in `scope` into *value. -1 for an unknown knob or scope. */
int ozcrt_get(int scope, int knob, int64_t *value);
/* Sets the knob for the calling thread (OZCRT_THREAD) or the process
 * (OZCRT_PROCESS). -1, nothing changed, for a value out of range, an unknown
 * knob, or OZCRT_ENV. */
int ozcrt_set(int scope, int knob, int64_t value);
/* OZCRT_THREAD: drops the calling thread's override of `knob` (or of every
 * knob, OZCRT_KNOB_ALL): it follows the process value again.
 * OZCRT_PROCESS: the process value back to the environment's. */
int ozcrt_reset(int scope, int knob);

/* The name of a knob ("mode", "min_m", "min_n", "min_k", "bits", "compare",
 * "compare_result", "min_speedup") or a mode ("phase22", "off", "ozaki2"); NULL when out of
 * range. ozcrt_mode_from_name: the mode (the name in any case), or -1. */
const char *ozcrt_knob_name(int knob);
const char *ozcrt_mode_to_name(int mode);
int ozcrt_mode_from_name(const char *name);

/* ---- stats: per entry point, per decision (what OZCRT_STATS=1 counts) ----
 * Calls are counted when OZCRT_STATS=1 or after ozcrt_stats_enable(1);
 * only OZCRT_STATS=1 writes the table at exit. */

/* Turns counting on (1) or off (0); returns whether it was on before. */
int ozcrt_stats_enable(int on);
/* The rows and columns of the table: entry points (cublasDgemm_v2, ...) and
 * decisions: reason 0 is "emulated", reason 1 a call taken that failed, every
 * other one ("mode-off", "no-gpu", "below-threshold", ...) a call forwarded
 * to the real cuBLAS for that reason. Names are NULL out of range. */
int ozcrt_stats_entry_count(void);
const char *ozcrt_stats_entry_name(int entry);
int ozcrt_stats_reason_count(void);
const char *ozcrt_stats_reason_name(int reason);
/* One entry point's counters: *calls (may be NULL), by_reason[0..nreasons)
 * (the first min(nreasons, ozcrt_stats_reason_count()) are written), and
 * *emulated_flop (2 m n k batch summed over emulated calls; may be NULL).
 * The counters of one entry point are read atomically together. */
int ozcrt_stats_get(int entry, uint64_t *calls, uint64_t *by_reason, int nreasons, double *emulated_flop);
/* Every counter back to zero. */
void ozcrt_stats_clear(void);
/* The automatic precision's plans (OZCRT_BITS=auto or auto:B), counted on
 * the GPU as each product's plan is made, while calls are counted (above):
 * counts[n] for n < ncounts = the real (complex_ 0) or complex (complex_ 1)
 * products planned with n moduli (complex: n split moduli), counts[0] =
 * those no plan certified (computed by the plain FP64 dot product). A
 * product's count lands once the GPU has made its plan: after a
 * synchronisation all of them have. Returns the number of entries there are
 * (32), -1 for bad arguments. */
int ozcrt_stats_auto_plans(int complex_, uint64_t *counts, int ncounts);
/* Writes the table now: to `path` (NULL or "": where the exit table goes,
 * OZCRT_STATS_FILE or the log). */
int ozcrt_stats_write(const char *path);

/* ---- shadow mode's report (OZCRT_COMPARE=1 or the compare knob) ----
 * Waits for the comparisons in flight, then writes the report of every call
 * compared so far: to `path` (".csv": CSV, else JSON), or, NULL or "", the
 * table to the log (OZCRT_LOG_FILE, else stderr). */
int ozcrt_report_write(const char *path);

/* A compare region. From ozcrt_compare_begin to ozcrt_compare_end, every
 * comparison the process finishes is also added to the region's own report
 * (those in flight at begin are waited for first and stay out; finished
 * comparisons of other threads' calls during the region are in it too).
 * Turning shadow mode on for the calls of interest is the caller's part:
 * OZCRT_KNOB_COMPARE for the thread (what Python's ozcrt.compare() does) or
 * the process. begin returns the region's id (>= 0), or -1 when too many are
 * open (16). end waits for the comparisons in flight, closes the region and
 * writes its report to `path` (".csv": CSV, else JSON, the formats of
 * OZCRT_REPORT_FILE; NULL or "": the table to the log); -1 for an unknown id
 * or an I/O error (the region is closed all the same). */
int ozcrt_compare_begin(void);
int ozcrt_compare_end(int id, const char *path);

/* For a shim loaded after the program started (dlopen: Python's `import
 * ozcrt`), where its dlsym hook comes after libc's: points the dlsym and
 * dlvsym slots of every object loaded now (the program and its libraries;
 * not libc, the loader, cuBLAS or the shim) at the hook, so that a library
 * that takes cuBLAS with dlsym on its own handle (XLA) gets the shim's
 * functions for the names it intercepts, every other lookup unchanged.
 * Objects loaded later need another call. Returns the number of slots on
 * the hook, or -1 when one could not be written or the machine has no hook
 * (not x86_64). A preloaded shim needs none of this. */
int ozcrt_hook_dlsym(void);

#ifdef __cplusplus
}
#endif
#endif
