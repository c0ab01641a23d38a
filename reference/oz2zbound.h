/* reference/oz2zbound.h: the per-element, per-part error bound of the ozaki2 ZGEMM, plain C for host and device.
 *
 * Against the exact value of alpha * op(A) op(B) + beta * C_old, each part
 * (derivation in docs/ozaki2-complex.md, section "Accuracy"):
 *
 *   T   = 2^(s+t-w-1) ( |a|_1 2^-s + |b|_1 2^-t + k 2^-w )                 (1) integers, either part of X
 *   E_x = T + 2^-53 |P_x| + 2^-1074                 (x = re, im)          (2) RN(X_x), ldexp
 *   |C_re - exact_re| <= |alpha_re| E_re + |alpha_im| E_im
 *                        + g (|alpha_re P_re| + |alpha_im P_im| + |beta_re C_re| + |beta_im C_im|)   (3)
 *                        + 2^-1072                                                                   (4)
 *   |C_im - exact_im| <= |alpha_re| E_im + |alpha_im| E_re
 *                        + g (|alpha_re P_im| + |alpha_im P_re| + |beta_re C_im| + |beta_im C_re|)
 *                        + 2^-1072
 *
 * with g = 2^-52 when beta == 0 (a product and a difference: two
 * roundings; the beta terms are 0) and 3 2^-53 otherwise (three roundings
 * on every path to the result). s, t: the scale exponents of row i of
 * op(A) and column j of op(B) over both parts; w: the plan's integer
 * width; |a|_1, |b|_1: the 1-norms over both parts, sum_k |Re| + |Im| (as
 * summed in double by the caller over 2k terms: the factor 1 + 2k 2^-52
 * covers that summation); P: the product scaled back (or upper bounds of
 * its parts' magnitudes); C_old: C before the call (0 if beta == 0). The
 * bound's own evaluation in double is covered by 1 + 2^-40. */
#ifndef OZCRT_REFERENCE_OZ2ZBOUND_H
#define OZCRT_REFERENCE_OZ2ZBOUND_H

#include <math.h>
#include <stdint.h>

#include "../crt/oz_hd.h"
#include "oz2bound.h"

/* Term (1): each part of X sums 2k real products of rounded integers, so
 * it is oz2_rounding_term with 2k in place of k: 2^(s+t-w-1) (|a|_1 2^-s +
 * |b|_1 2^-t + 2k 2^-(w+1)), its norm slack 1 + 2k 2^-52 the 2k-term sums'. */
OZ_HD double oz2z_rounding_term(double norm_a, double norm_b, int s, int t, int w, int64_t k)
{
    return oz2_rounding_term(norm_a, norm_b, s, t, w, 2 * k);
}

/* The bound of the re part (part 0) or the im part (part 1) of element
 * (i, j); alpha, beta, c_old, P as (re, im) pairs. */
OZ_HD double oz2z_error_bound(const double alpha[2], const double beta[2], const double c_old[2], const double P[2],
                              double norm_a, double norm_b, int s, int t, int w, int64_t k, int part)
{
    const double T = oz2z_rounding_term(norm_a, norm_b, s, t, w, k);
    const double E_re = T + ldexp(fabs(P[0]), -53) + ldexp(1.0, -1074);
    const double E_im = T + ldexp(fabs(P[1]), -53) + ldexp(1.0, -1074);
    const double ar = fabs(alpha[0]), ai = fabs(alpha[1]);
    const int beta0 = beta[0] == 0.0 && beta[1] == 0.0;
    /* the part's two alpha products and two beta products (of the computed P) */
    const double aprods = part ? ar * fabs(P[1]) + ai * fabs(P[0]) : ar * fabs(P[0]) + ai * fabs(P[1]);
    const double bprods = beta0 ? 0.0 /* C not read */
                          : part ? fabs(beta[0] * c_old[1]) + fabs(beta[1] * c_old[0])
                                 : fabs(beta[0] * c_old[0]) + fabs(beta[1] * c_old[1]);
    const double prods = aprods + bprods;
    const double g = beta0 ? ldexp(1.0, -52) : 3.0 * ldexp(1.0, -53);
    const double path = part ? ar * E_im + ai * E_re : ar * E_re + ai * E_im;
    /* (4): four product remainders below 2^-1075 each through two more
     * roundings (< 2^-1073 (1 + 2^-51)), doubled for the evaluation */
    return (path + g * prods + ldexp(1.0, -1072)) * (1.0 + ldexp(1.0, -40));
}

#endif
