/* interpose/policy.h: the shim's policy from the environment (read once) and its log. */
#ifndef OZCRT_INTERPOSE_POLICY_H
#define OZCRT_INTERPOSE_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ozcrt.h"

/* A call is emulated only if m, n and k are all at least this. From the
 * H200 size sweep (BENCHMARKS.md, 2026-11-29): below 512 the emulated call
 * costs a near-constant ~0.2 ms, 10x to 15x the native call, so such calls
 * (which rarely carry a program's time) stay native. */
#define OZCRT_DEFAULT_MIN_DIM 512
/* Workspace cap (MiB), all handles together: 16 GiB covers one 16384^3 call
 * (about 9.5 GiB: 14 int8 residue planes per operand plus the double
 * accumulators); past it, calls are forwarded (no-workspace). */
#define OZCRT_DEFAULT_MAX_WORKSPACE_MB 16384

/* OZCRT_MIN_SPEEDUP, in percent: in the ozaki2 mode a call is emulated only
 * if its predicted speed-up over native DGEMM (speed_model.h) is at least
 * this; 0 turns the rule off. The default, "auto" (-1), is 100 while the
 * size thresholds are all at their default and 0 once one is not: a program
 * (or user) that sets the sizes itself, e.g. OZCRT_MIN_M=0 to emulate every
 * call, gets exactly those sizes emulated (ozcrt_min_speedup_pct). */
#define OZCRT_AUTO_MIN_SPEEDUP_PCT 100 /* OZCRT_MIN_SPEEDUP_AUTO (ozcrt.h) at the default thresholds */
#define OZCRT_MAX_MIN_SPEEDUP_PCT 10000

/* OZCRT_BITS: N in 1..64, the bits ozaki2 keeps of each row's/column's
 * largest element; or automatic precision (docs/ozaki2-auto.md), `auto`
 * (2^-53) or `auto:B` (B in 20..64), held as -B (crt/oz2_auto.h's
 * OZ2A_AUTO(B)), the default. */
#define OZCRT_DEFAULT_BITS (-53)
#define OZCRT_MIN_BITS 1
#define OZCRT_MAX_BITS 64
#define OZCRT_MIN_AUTO_BITS 20
#define OZCRT_MAX_AUTO_BITS 64
/* Whether v is a valid OZCRT_BITS value in its held form. */
static inline int ozcrt_bits_valid(int64_t v)
{
    return (v >= OZCRT_MIN_BITS && v <= OZCRT_MAX_BITS) || (v <= -OZCRT_MIN_AUTO_BITS && v >= -OZCRT_MAX_AUTO_BITS);
}
/* "53", "auto" or "auto:45" into buf. */
const char *ozcrt_bits_name(int bits, char *buf, size_t size);

/* OZCRT_MODE. The values are the public ones of ozcrt.h (OZCRT_API_MODE_*). */
typedef enum { OZCRT_MODE_PHASE22 = 0, OZCRT_MODE_OFF = 1, OZCRT_MODE_OZAKI2 = 2, OZCRT_MODE_COUNT } ozcrt_mode;

typedef struct ozcrt_policy {
    ozcrt_mode mode;                 /* OZCRT_MODE */
    int64_t min_m, min_n, min_k;     /* OZCRT_MIN_M, _N, _K */
    int bits;                        /* OZCRT_BITS (ozaki2) */
    int64_t min_speedup;             /* OZCRT_MIN_SPEEDUP, percent, or OZCRT_MIN_SPEEDUP_AUTO (ozaki2) */
    int log_level;                   /* OZCRT_LOG: 0, 1, 2 */
    FILE *log;                       /* OZCRT_LOG_FILE, default stderr */
    int stats;                       /* OZCRT_STATS: a boolean (ozcrt_parse_bool) */
    const char *stats_file;          /* OZCRT_STATS_FILE (%p, %h expanded), NULL: the log */
    size_t max_workspace_bytes;      /* OZCRT_MAX_WORKSPACE_MB */
} ozcrt_policy;

/* The policy, read from the environment at the first call (pthread_once).
 * Its mode, min_* and bits are the PROCESS DEFAULTS only: the values a call
 * obeys are those of ozcrt_effective_policy(). */
const ozcrt_policy *ozcrt_policy_get(void);

/* 1 when OZCRT_STATS_FILE names a file per process (a %p in it), with this
 * process's name in buf (the process id now, so a fork child's own); 0
 * otherwise (unset, one file for all, or a name that does not fit). */
int ozcrt_policy_own_stats_file(char *buf, size_t size);

/* The values a program may change at run time (ozcrt.h), per process and per
 * thread. Starts as the environment's: the policy above and OZCRT_COMPARE,
 * OZCRT_COMPARE_RESULT (shadow mode). */
typedef struct ozcrt_settings {
    ozcrt_mode mode;
    int64_t min_m, min_n, min_k;
    int bits;
    int64_t min_speedup;             /* percent; 0: off; OZCRT_MIN_SPEEDUP_AUTO */
    int compare;                     /* shadow mode on (1) or off (0) */
    int compare_result;              /* 0: the program gets the emulated C, 1: the native C */
} ozcrt_settings;

/* The settings the calling thread's GEMM obeys now: its own overrides over
 * the process values. Call it once per GEMM and read the values from the
 * result; the cost is one atomic load and a thread-local compare (the values
 * are recomputed only after a change). Valid in this thread until its next
 * ozcrt_set_* / ozcrt_reset_* call (interpose/api.c). */
const ozcrt_settings *ozcrt_effective_policy(void);

/* "phase22", "off", "ozaki2"; "?" when out of range. */
const char *ozcrt_mode_name(ozcrt_mode m);

/* Parsers, exposed for the unit tests. Each returns 1 when `value` is good
 * (result in *out), 0 when it is unset or empty (default, silently), -1 when
 * it is bad (default, and one warning on stderr naming `var` and the default). */
int ozcrt_parse_int(const char *var, const char *value, int64_t lo, int64_t hi, int64_t dflt, int64_t *out);
/* OZCRT_MODE: a name in any case; a bad one warns and gives OZCRT_MODE_OFF
 * (native cuBLAS), unset or empty the default phase22. */
int ozcrt_parse_mode(const char *var, const char *value, ozcrt_mode *out);
/* The mode named `name` (any case, blanks around ignored), or -1. */
int ozcrt_mode_parse_name(const char *name);
/* A boolean variable (OZCRT_STATS, ...): 1/0, yes/no, true/false, on/off, any case. */
int ozcrt_parse_bool(const char *var, const char *value, int dflt, int *out);
/* A file name with %p (process id), %h (host name) and %% expanded into buf
 * (size bytes); *out = buf, or NULL when unset or empty. */
#define OZCRT_PATH_MAX 4096
int ozcrt_parse_path(const char *var, const char *value, char *buf, size_t size, const char **out);
/* A ratio such as "1", "1.25" or "0" (0 .. max_pct / 100) as a whole
 * percent, or "auto" as OZCRT_MIN_SPEEDUP_AUTO. */
/* OZCRT_BITS: an integer 1..64, `auto` or `auto:B` (B 20..64), into the held form. */
int ozcrt_parse_bits(const char *var, const char *value, int dflt, int *out);
int ozcrt_parse_pct(const char *var, const char *value, int64_t max_pct, int64_t dflt, int64_t *out);

/* The speed rule's threshold in force for settings s (percent; 0: off). */
static inline int64_t ozcrt_min_speedup_pct(const ozcrt_settings *s)
{
    if (s->min_speedup != OZCRT_MIN_SPEEDUP_AUTO)
        return s->min_speedup;
    return s->min_m == OZCRT_DEFAULT_MIN_DIM && s->min_n == OZCRT_DEFAULT_MIN_DIM && s->min_k == OZCRT_DEFAULT_MIN_DIM
               ? OZCRT_AUTO_MIN_SPEEDUP_PCT
               : 0;
}

/* One log line (a newline is added) when level <= OZCRT_LOG. */
void ozcrt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Errors are never swallowed: always on stderr, and in the log file too. */
void ozcrt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
