/* reference/oz2bound.h: the per-element error bound of the ozaki2 path, plain C for host and device.
 *
 * Against the exact value of alpha * op(A) op(B) + beta * C_old (derivation
 * in docs/error-bound.md, section "The ozaki2 path"):
 *
 *   |C - C_exact| <= |alpha| ( 2^(s+t-w-1) (|a|_1 2^-s + |b|_1 2^-t + k 2^-(w+1))     (1) integer rounding
 *                              + 2^-53 |P| + 2^-1074 )                                (2) RN(X), ldexp
 *                    + 2^-52 (|alpha P| + |beta C_old|) + 2^-1073 (|alpha| + 1)       (3) epilogue, (4) subnormals
 *
 * s, t: scale exponents of row i of op(A) and column j of op(B); w: the
 * plan's integer width; |a|_1, |b|_1: the 1-norms of that row and column
 * (as summed in double by the caller over k terms: the factor 1 + k 2^-52
 * below covers that summation's rounding); P the product scaled back (or an
 * upper bound of its magnitude); C_old the value C held before the call (0 if
 * beta == 0). The bound's own evaluation in double is covered by 1 + 2^-40. */
#ifndef OZCRT_REFERENCE_OZ2BOUND_H
#define OZCRT_REFERENCE_OZ2BOUND_H

#include <math.h>
#include <stdint.h>
#include "../crt/oz_hd.h"

/* Term (1) alone: the rounding of a'' and b'' to integers. */
OZ_HD double oz2_rounding_term(double norm_a, double norm_b, int s, int t, int w, int64_t k)
{
    double kd = (double)k;
    double slack = 1.0 + kd * ldexp(1.0, -52);
    double inner = ldexp(norm_a * slack, -s) + ldexp(norm_b * slack, -t) + ldexp(kd, -(w + 1));
    return ldexp(inner, s + t - w - 1);
}

OZ_HD double oz2_error_bound(double alpha, double beta, double c_old, double P, double norm_a, double norm_b,
                             int s, int t, int w, int64_t k)
{
    double path = oz2_rounding_term(norm_a, norm_b, s, t, w, k) + ldexp(fabs(P), -53) + ldexp(1.0, -1074);
    double epilogue = ldexp(1.0, -52) * (fabs(alpha * P) + fabs(beta * c_old));
    return (fabs(alpha) * path + epilogue + ldexp(1.0, -1073) * (fabs(alpha) + 1.0)) * (1.0 + ldexp(1.0, -40));
}

#endif
