/* compare/metrics.h: the shadow-mode comparison metrics of one call (emulated C vs native C), plain C for host and device.
 *
 * The per-element rules are OZ_HD functions shared with the GPU kernel
 * (compare/kernel_metrics.cu) so both sides apply the same definitions;
 * metrics.c is the host model over whole matrices, used by the CPU tests and
 * as the reference the GPU test checks the kernel against.
 *
 * For every element with emulated value e and native value n:
 *  - a NaN/Inf mismatch is one of them NaN or +-Inf and the other not, or
 *    both infinite with different signs (NaN vs NaN, +Inf vs +Inf match).
 *    Pairs with a non-finite member add to nothing else.
 *  - for the finite pairs, d = |e - n|:
 *      max abs difference       max d
 *      max relative difference  max d / max(|n|, OZCMP_REL_FLOOR),
 *                               OZCMP_REL_FLOOR = DBL_MIN = 2^-1022: the
 *                               smallest normal double; it only keeps n == 0
 *                               from dividing by zero, so the value is a true
 *                               elementwise relative difference (large where
 *                               native is near zero by cancellation: the
 *                               emulation is accurate relative to row/column
 *                               maxima, not to each element; read it together
 *                               with the normwise value).
 *      normwise relative        ||E||_F / ||C_native||_F over the finite
 *                               pairs; 0 when E == 0 (so 0/0 -> 0), +Inf when
 *                               C_native == 0 and E != 0. Sums of squares are
 *                               kept in three exponent bins so that neither
 *                               1e200 nor 1e-200 overflows or underflows.
 *      beyond the bound         d > ozcmp_allowed(): the bound of the call's
 *                               emulated path against the exact product (the
 *                               Phase 22 one of reference/bound.h, or the
 *                               ozaki2 one of reference/oz2bound.h for the
 *                               plan's integer width w: ozcmp_bound) plus the
 *                               worst-case bound of native DGEMM's own
 *                               rounding (see ozcmp_allowed). */
#ifndef OZCRT_COMPARE_METRICS_H
#define OZCRT_COMPARE_METRICS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "crt/oz_hd.h"
#include "reference/bound.h"
#include "reference/oz2bound.h"
#include "slicing/slicing.h"

#define OZCMP_REL_FLOOR DBL_MIN
#define OZCMP_NBINS 3 /* sum-of-squares bins: |x| < 2^-400, middle, |x| > 2^400 */

/* The reduction state of one call. The GPU kernel reduces into exactly this
 * layout with atomics (maxima as the bit patterns of non-negative doubles,
 * which order like unsigned integers; sums with double atomicAdd, in no fixed
 * order, so the two sums may differ from the host's in the last bits). */
typedef struct ozcmp_accum {
    uint64_t max_abs_bits;
    uint64_t max_rel_bits;
    double sq_diff[OZCMP_NBINS];   /* bin b holds sum (x 2^(600 (1-b)))^2 */
    double sq_native[OZCMP_NBINS];
    uint64_t beyond_bound;
    uint64_t nonfinite_mismatch;
    uint64_t finite_pairs;
    uint64_t reserved;              /* keeps the size a multiple of 16 */
} ozcmp_accum;

/* The metrics of one call, as the report aggregates them. */
typedef struct ozcmp_call_metrics {
    double max_abs;
    double max_rel;
    double normwise;
    uint64_t beyond_bound;
    uint64_t nonfinite_mismatch;
    uint64_t elements;              /* m n batch */
} ozcmp_call_metrics;

OZ_HD int ozcmp_is_finite(double x)
{
    return x - x == 0.0; /* false for NaN and +-Inf, without isfinite's host/device differences */
}

/* 1 when e and n disagree in their non-finite status (see above). */
OZ_HD int ozcmp_nonfinite_mismatch(double e, double n)
{
    int fe = ozcmp_is_finite(e), fn = ozcmp_is_finite(n);
    if (fe && fn)
        return 0;
    if (fe != fn)
        return 1;
    int nan_e = e != e, nan_n = n != n;
    if (nan_e || nan_n)
        return nan_e != nan_n;      /* NaN vs NaN match; NaN vs Inf does not */
    return (e > 0.0) != (n > 0.0);  /* both infinite: signs must agree */
}

/* The bin of |x| for the sums of squares and its scaled square. */
OZ_HD int ozcmp_sq_bin(double x, double *scaled_sq)
{
    double a = fabs(x);
    if (a > 0x1p400) {
        double y = a * 0x1p-600;
        *scaled_sq = y * y;
        return 2;
    }
    if (a < 0x1p-400) {
        double y = a * 0x1p600;
        *scaled_sq = y * y;
        return 0;
    }
    *scaled_sq = a * a;
    return 1;
}

OZ_HD double ozcmp_rel(double d, double n)
{
    return d / fmax(fabs(n), OZCMP_REL_FLOOR);
}

/* Which error bound of reference/ an emulated path obeys (compare.h's
 * ozcmp_path carries it; the metric kernel and the host model take it as a
 * parameter). */
typedef enum { OZCMP_BOUND_PHASE22 = 0, OZCMP_BOUND_OZAKI2 = 1 } ozcmp_bound_kind;

typedef struct ozcmp_bound {
    int kind;                   /* ozcmp_bound_kind */
    int w;                      /* OZCMP_BOUND_OZAKI2: the plan's integer width (oz2_gemm_moduli's *w) */
} ozcmp_bound;

static inline ozcmp_bound ozcmp_bound_phase22(void)
{
    ozcmp_bound b = {OZCMP_BOUND_PHASE22, 0};
    return b;
}

static inline ozcmp_bound ozcmp_bound_ozaki2(int w)
{
    ozcmp_bound b = {OZCMP_BOUND_OZAKI2, w};
    return b;
}

/* The largest |e - n| the two paths may differ by at one element, given the
 * bound of the emulated path, the scale exponents s (row of op(A)) and t
 * (column of op(B)), alpha, beta, k and the native value n. Conservative
 * where the exact inputs are unknown:
 *  - P (the product) is bounded by k 2^(s+t) (|a| < 2^s, |b| < 2^t);
 *  - the ozaki2 bound's 1-norms of row i of op(A) and column j of op(B) by
 *    k 2^s and k 2^t (exact in double: k is an integer, s, t >= -1073);
 *  - C_old is gone when the metrics run, so |beta C_old| is bounded by
 *    2 (|n| + |alpha| k 2^(s+t)) (n = alpha P + beta C_old up to native's
 *    rounding, far below a factor 2), 0 when beta == 0;
 *  - native DGEMM's own error, any summation order, is at most
 *    gamma_(k+2) (|alpha| k 2^(s+t) + |beta C_old|), gamma_j = j 2^-53 / (1 - j 2^-53).
 * The emulated path's part: oz_error_bound (Phase 22) or oz2_error_bound
 * (ozaki2, width b.w), each with beta = 1 and C_old = the bound of
 * |beta C_old| above. Rows or columns holding Inf/NaN (OZ_SCALE_SPECIAL)
 * are not bounded: +Inf. */
OZ_HD double ozcmp_allowed(ozcmp_bound b, double alpha, double beta, double n, int s, int t, int64_t k)
{
    if (s == OZ_SCALE_SPECIAL || t == OZ_SCALE_SPECIAL)
        return INFINITY;
    double pbound = ldexp((double)k, s + t);
    double abs_ap = fabs(alpha) * pbound;
    double c_term = beta == 0.0 ? 0.0 : 2.0 * (fabs(n) + abs_ap);
    double j = (double)k + 2.0;
    double gamma = j * 0x1p-53 / (1.0 - j * 0x1p-53);
    double native = gamma * (abs_ap + c_term);
    double path = b.kind == OZCMP_BOUND_OZAKI2
                      ? oz2_error_bound(alpha, 1.0, c_term, pbound, ldexp((double)k, s), ldexp((double)k, t), s, t,
                                        b.w, k)
                      : oz_error_bound(alpha, 1.0, c_term, pbound, s, t, k);
    return path + native;
}

/* Adds x^2 to its bin (constant indices, so device code keeps q in registers). */
OZ_HD void ozcmp_add_square(double q[OZCMP_NBINS], double x)
{
    double sq;
    int bin = ozcmp_sq_bin(x, &sq);
    if (bin == 0)
        q[0] += sq;
    else if (bin == 1)
        q[1] += sq;
    else
        q[2] += sq;
}

/* Adds one element pair (e emulated, n native) to acc; `allowed` is
 * ozcmp_allowed() for it (+Inf: not checked). THE definition of the
 * metrics: the host model and the GPU kernel both call this. */
OZ_HD void ozcmp_accum_add(ozcmp_accum *acc, double e, double n, double allowed)
{
    if (!ozcmp_is_finite(e) || !ozcmp_is_finite(n)) {
        acc->nonfinite_mismatch += (uint64_t)ozcmp_nonfinite_mismatch(e, n);
        return;
    }
    double d = fabs(e - n);
    uint64_t db = oz_f64_bits(d), rb = oz_f64_bits(ozcmp_rel(d, n));
    if (db > acc->max_abs_bits)
        acc->max_abs_bits = db;
    if (rb > acc->max_rel_bits)
        acc->max_rel_bits = rb;
    ozcmp_add_square(acc->sq_diff, d);
    ozcmp_add_square(acc->sq_native, n);
    acc->beyond_bound += (uint64_t)(d > allowed);
    acc->finite_pairs++;
}

/* Host model (metrics.c). */
#ifdef __cplusplus
extern "C" {
#endif

void ozcmp_accum_init(ozcmp_accum *acc);

/* Merges b into a (max of maxima, sums of sums). */
void ozcmp_accum_merge(ozcmp_accum *a, const ozcmp_accum *b);

/* The metrics from a reduced state; `elements` is copied into the result. */
ozcmp_call_metrics ozcmp_finish(const ozcmp_accum *acc, uint64_t elements);

/* sqrt(sum num) / sqrt(sum den) from binned sums of squares; 0 when num is 0. */
double ozcmp_norm_ratio(const double num[OZCMP_NBINS], const double den[OZCMP_NBINS]);

/* The scale exponents of op(A)'s rows (s[0..m)) and op(B)'s columns
 * (t[0..n)) of one column-major problem, as the GPU computes them
 * (oz_scale_exponent of the max |.|, NaN and Inf giving OZ_SCALE_SPECIAL). */
void ozcmp_scales_host(int transa, int transb, int64_t m, int64_t n, int64_t k,
                        const double *A, int64_t lda, const double *B, int64_t ldb, int *s, int *t);

/* Compares one m x n matrix: emulated E (lde) against native N (ldn), with
 * the scale exponents s, t of the call (NULL: no bound check, nothing counts
 * as beyond the bound) and the emulated path's bound, accumulating into acc. */
void ozcmp_matrix_host(ozcmp_accum *acc, int64_t m, int64_t n, const double *E, int64_t lde,
                        const double *N, int64_t ldn, const int *s, const int *t, ozcmp_bound bound,
                        double alpha, double beta, int64_t k);

#ifdef __cplusplus
}
#endif
#endif
