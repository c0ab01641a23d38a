/* interpose/stats.h: the decisions the router makes, and the exit table of them (OZCRT_STATS=1). */
#ifndef OZCRT_INTERPOSE_STATS_H
#define OZCRT_INTERPOSE_STATS_H

#include <stdint.h>

#include "symbols.h"

/* Every decision with its name in the log and the stats table. All but
 * EMULATED and FAILED mean "forwarded to the real cuBLAS". FAILED: taken
 * but failed (shadow mode's run); a Phase 22 launch that fails is forwarded
 * as LAUNCH_FAILED instead. */
#define OZCRT_REASONS(X)                                   \
    X(EMULATED, "emulated")                                \
    X(FAILED, "failed")                                    \
    X(MODE_OFF, "mode-off")                                \
    X(NESTED, "nested")                                    \
    X(INVALID_ARGS, "invalid-args")                        \
    X(EMPTY, "empty")                                      \
    X(TRIVIAL, "k0-or-alpha0")                             \
    X(TYPE, "type")                                        \
    X(MATH_MODE, "math-mode")                              \
    X(SMALL, "below-threshold")                            \
    X(NO_GPU, "no-gpu")                                    \
    X(OLD_GPU, "gpu-below-sm80")                           \
    X(HANDLE_QUERY, "handle-query-failed")                 \
    X(CAPTURE_NO_WS, "capture-no-workspace")               \
    X(NO_WORKSPACE, "no-workspace")                        \
    X(BITS_UNREACHABLE, "bits-unreachable")                \
    X(NO_KERNEL_IMAGE, "no-kernel-image")                  \
    X(LAUNCH_FAILED, "launch-failed")                      \
    X(SLOWER, "slower-than-native")                        \
    X(LEGACY_CONTEXT, "legacy-context")                    \
    X(GROUPED_DEVICE_MODE, "grouped-device-pointer-mode") \
    X(LT_UNSUPPORTED, "lt-unsupported")                    \
    X(COMPLEX_PHASE22, "complex-phase22")                  \
    X(NONFINITE_SCALAR, "nonfinite-scalar")

typedef enum ozcrt_reason {
#define OZCRT_X_REASON(id, str) OZCRT_R_##id,
    OZCRT_REASONS(OZCRT_X_REASON)
#undef OZCRT_X_REASON
    OZCRT_R_COUNT
} ozcrt_reason;

const char *ozcrt_reason_name(ozcrt_reason r);

/* Counts one call of `ep` with its decision; flop = 2 m n k batch when
 * emulated. No-op unless OZCRT_STATS=1 or counting was turned on by
 * ozcrt_stats_set_counting; the table is written at exit when OZCRT_STATS=1. */
void ozcrt_stats_record(ozcrt_entry ep, ozcrt_reason r, double flop);

/* Counts one emulated call by the path that ran it: nmod == 0 for Phase 22,
 * else the ozaki2 mode with nmod moduli (2..20), or OZCRT_PATH_AUTO for
 * ozaki2 with automatic precision. `elem` is the call's element type
 * (OZ_ELEM_REAL, OZ_ELEM_COMPLEX: kernels/ozcrt_gemm.h): complex calls are
 * counted apart, by their plan's N (the engine moduli that fix its w).
 * Printed under the table. */
#define OZCRT_PATH_AUTO 21 /* OZ2_MAX_MODULI + 1 (crt/moduli.h) */
void ozcrt_stats_record_path(int nmod, int elem);
/* Whether calls are being counted (OZCRT_STATS=1 or the API's counting). */
int ozcrt_stats_counting(void);

/* For the public API (api.c): counting on/off (returns the previous state),
 * one entry point's counters read together (-1 when ep is out of range),
 * every counter to zero, and the table written now to `path` (NULL: where
 * the exit table goes). */
int ozcrt_stats_set_counting(int on);
int ozcrt_stats_read(ozcrt_entry ep, uint64_t *calls, uint64_t by_reason[OZCRT_R_COUNT], double *flop);
void ozcrt_stats_reset_all(void);
int ozcrt_stats_write_table(const char *path);

#endif
