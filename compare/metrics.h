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
 *                               rounding (see ozcmp_allowed).
 *
 * Complex calls (ZGEMM, d->elem OZ_ELEM_COMPLEX): the same metrics on the
 * complex modulus. An element pair is non-finite when any of its four parts
 * is, a mismatch when either part's pair is one (ozcmp_nonfinite_mismatch,
 * part by part); otherwise d = |e - n| = ozcmp_modulus(e_re - n_re,
 * e_im - n_im), the relative difference d / max(|n|, OZCMP_REL_FLOOR) with
 * |n| = ozcmp_modulus(n_re, n_im), the Frobenius sums over both parts, and
 * the bound ozcmp_allowed_z (the ozaki2 complex bound of
 * reference/oz2zbound.h on |.|, plus native ZGEMM's rounding). One
 * definition for both element types: ozcmp_accum_add_elem and
 * ozcmp_allowed_elem take the type as a flag. */
#ifndef OZCRT_COMPARE_METRICS_H
#define OZCRT_COMPARE_METRICS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "crt/oz_hd.h"
#include "reference/bound.h"
#include "reference/oz2bound.h"
#include "reference/oz2zbound.h"
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

/* |x + iy| for finite x, y, robustly: h sqrt(1 + (l/h)^2) with h = max(|x|,
 * |y|) and l = min(|x|, |y|), so no square overflows or underflows. Only
 * correctly rounded operations, and the build contracts none of them
 * (-ffp-contract=off, -fmad=false): host and device get the same bits (libm's
 * hypot and CUDA's differ in the last bit). Within 3 ulp of the modulus;
 * ozcmp_modulus(x, 0) == |x| exactly. Inf or NaN in: their sum |x| + |y|. */
OZ_HD double ozcmp_modulus(double x, double y)
{
    const double a = fabs(x), b = fabs(y);
    if (!ozcmp_is_finite(a) || !ozcmp_is_finite(b))
        return a + b;
    const double h = a > b ? a : b, l = a > b ? b : a;
    if (h == 0.0)
        return 0.0;
    const double r = l / h;
    return h * sqrt(1.0 + r * r);
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

/* The complex form of ozcmp_allowed (d->elem OZ_ELEM_COMPLEX): the largest
 * |e - n| (complex modulus) the two paths may differ by at one element,
 * given alpha and beta as (re, im) pairs, |n| (ozcmp_modulus of the native
 * value), the scale exponents s and t of max(|Re|, |Im|) over row i of
 * op(A) and column j of op(B) (the path's own, reference/oz2zgemm.c) and k.
 * Only the ozaki2 path takes complex calls: another bound kind gives +Inf
 * (not checked), as do rows or columns with Inf/NaN. docs/compare.md
 * ("Complex calls") derives it; in short, with pz = 2k 2^(s+t) and
 * |alpha|_1 = |alpha_re| + |alpha_im|:
 *  - each part of the exact product Q and of the path's P, and |Q|, are at
 *    most pz (|a|, |b| parts below 2^s, 2^t; |a''|, |b''| parts <= 2^w);
 *  - the 1-norms |a|_1, |b|_1 (sum |Re| + |Im|) at most 2k 2^s, 2k 2^t;
 *  - |beta C_old| at most c = 2 (|n| + 2 |alpha|_1 pz + 2 h) (0 when beta
 *    == 0), and each part's two beta products sum to at most |beta C_old|
 *    (|beta_re C_re| + |beta_im C_im| <= |beta| |C_old|);
 *  - native ZGEMM's own error in each part at most
 *    gamma_(2k+8) (2 |alpha|_1 pz + c) + h, h = (|alpha|_1 + 1)(2k + 8) 2^-1074
 *    (subnormal products): the 2k real products of a part in any order,
 *    with or without FMA, or the Gauss (3M) form of cublasZgemm3m, then the
 *    complex epilogue; valid while gamma_(2k+8) <= 1/8 (k < 2^48);
 *  - the path's, per part: oz2z_error_bound with P = (pz, pz), the norms
 *    above, beta = (1, 0) and C_old = (c, c) (the beta products as c; g
 *    then 3 2^-53, its largest);
 *  - |e - n| <= |e - exact| + |exact - n| <= (path_re + path_im) + 2 native,
 *    times 1 + 2^-40 for this evaluation and ozcmp_modulus's rounding. */
OZ_HD double ozcmp_allowed_z(ozcmp_bound b, const double alpha[2], const double beta[2], double n_abs, int s, int t,
                             int64_t k)
{
    if (b.kind != OZCMP_BOUND_OZAKI2 || s == OZ_SCALE_SPECIAL || t == OZ_SCALE_SPECIAL)
        return INFINITY;
    const double k2 = 2.0 * (double)k;
    const double pz = ldexp(k2, s + t);
    const double a1 = fabs(alpha[0]) + fabs(alpha[1]);
    const double abs_ap = a1 * pz;
    const double j = k2 + 8.0;
    const double h = (a1 + 1.0) * ldexp(j, -1074);
    const double c_term = beta[0] == 0.0 && beta[1] == 0.0 ? 0.0 : 2.0 * (n_abs + 2.0 * abs_ap + 2.0 * h);
    const double gamma = j * 0x1p-53 / (1.0 - j * 0x1p-53);
    const double native = gamma * (2.0 * abs_ap + c_term) + h;
    const double beta_as_c[2] = {1.0, 0.0}, c_old[2] = {c_term, c_term}, P[2] = {pz, pz};
    const double norm_a = ldexp(k2, s), norm_b = ldexp(k2, t);
    const double path = oz2z_error_bound(alpha, beta_as_c, c_old, P, norm_a, norm_b, s, t, b.w, k, 0) +
                        oz2z_error_bound(alpha, beta_as_c, c_old, P, norm_a, norm_b, s, t, b.w, k, 1);
    return (path + 2.0 * native) * (1.0 + 0x1p-40);
}

/* The bound of one element of either type: ozcmp_allowed (cplx 0: alpha[0],
 * beta[0], n[0]) or ozcmp_allowed_z (cplx 1: |n| of n[0], n[1]). */
OZ_HD double ozcmp_allowed_elem(ozcmp_bound b, int cplx, const double *alpha, const double *beta, const double *n,
                                int s, int t, int64_t k)
{
    return cplx ? ozcmp_allowed_z(b, alpha, beta, ozcmp_modulus(n[0], n[1]), s, t, k)
                : ozcmp_allowed(b, alpha[0], beta[0], n[0], s, t, k);
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

/* Adds one element pair (e emulated, n native; cplx 0: e[0] and n[0], real;
 * cplx 1: (re, im) pairs) to acc; `allowed` is ozcmp_allowed_elem() for it
 * (+Inf: not checked). THE definition of the metrics, for both element
 * types: the host model and the GPU kernel both call this (the kernel with
 * cplx a compile-time constant). */
OZ_HD void ozcmp_accum_add_elem(ozcmp_accum *acc, int cplx, const double *e, const double *n, double allowed)
{
    const double e_im = cplx ? e[1] : 0.0, n_im = cplx ? n[1] : 0.0;
    if (!ozcmp_is_finite(e[0]) || !ozcmp_is_finite(n[0]) || !ozcmp_is_finite(e_im) || !ozcmp_is_finite(n_im)) {
        acc->nonfinite_mismatch +=
            (uint64_t)(ozcmp_nonfinite_mismatch(e[0], n[0]) | ozcmp_nonfinite_mismatch(e_im, n_im));
        return;
    }
    const double dr = e[0] - n[0], di = e_im - n_im;
    const double d = cplx ? ozcmp_modulus(dr, di) : fabs(dr);
    const double n_abs = cplx ? ozcmp_modulus(n[0], n_im) : fabs(n[0]);
    uint64_t db = oz_f64_bits(d), rb = oz_f64_bits(ozcmp_rel(d, n_abs));
    if (db > acc->max_abs_bits)
        acc->max_abs_bits = db;
    if (rb > acc->max_rel_bits)
        acc->max_rel_bits = rb;
    ozcmp_add_square(acc->sq_diff, dr);
    ozcmp_add_square(acc->sq_native, n[0]);
    if (cplx) {
        ozcmp_add_square(acc->sq_diff, di);
        ozcmp_add_square(acc->sq_native, n_im);
    }
    acc->beyond_bound += (uint64_t)(d > allowed);
    acc->finite_pairs++;
}

/* One real element pair: ozcmp_accum_add_elem with cplx 0. */
OZ_HD void ozcmp_accum_add(ozcmp_accum *acc, double e, double n, double allowed)
{
    ozcmp_accum_add_elem(acc, 0, &e, &n, allowed);
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
 * (oz_scale_exponent of the max |.|, NaN and Inf giving OZ_SCALE_SPECIAL).
 * ozcmp_zscales_host: complex A and B (interleaved re/im, lda and ldb in
 * complex elements; op C reads like op T), the max over max(|Re|, |Im|). */
void ozcmp_scales_host(int transa, int transb, int64_t m, int64_t n, int64_t k,
                        const double *A, int64_t lda, const double *B, int64_t ldb, int *s, int *t);
void ozcmp_zscales_host(int transa, int transb, int64_t m, int64_t n, int64_t k,
                         const double *A, int64_t lda, const double *B, int64_t ldb, int *s, int *t);

/* Compares one m x n matrix: emulated E (lde) against native N (ldn), with
 * the scale exponents s, t of the call (NULL: no bound check, nothing counts
 * as beyond the bound) and the emulated path's bound, accumulating into acc.
 * ozcmp_zmatrix_host: complex E and N (interleaved, lde and ldn in complex
 * elements), alpha and beta (re, im) pairs. */
void ozcmp_matrix_host(ozcmp_accum *acc, int64_t m, int64_t n, const double *E, int64_t lde,
                        const double *N, int64_t ldn, const int *s, const int *t, ozcmp_bound bound,
                        double alpha, double beta, int64_t k);
void ozcmp_zmatrix_host(ozcmp_accum *acc, int64_t m, int64_t n, const double *E, int64_t lde,
                         const double *N, int64_t ldn, const int *s, const int *t, ozcmp_bound bound,
                         const double alpha[2], const double beta[2], int64_t k);

#ifdef __cplusplus
}
#endif
#endif
