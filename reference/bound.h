/* reference/bound.h: the per-element error bound of the Phase 22 path, plain C for host and device.
 *
 * Against the exact value of alpha * op(A) op(B) + beta * C_old (derivation
 * in docs/error-bound.md):
 *
 *   |C - C_exact| <= |alpha| 2^(s+t) k (2^-34 (1 + 2^-34) + 4 ceil(k/4096) 2^-53 (1 + 2^-33))
 *                    + 2^-52 (|alpha P| + |beta C_old|) + 2^-1073 (|alpha| + 1)
 *
 * s: scale exponent of row i of op(A), t: of column j of op(B)
 * (oz_scale_exponent), P = the product scaled back (or an upper bound of
 * |op(A) op(B)|_ij), C_old the value C held before the call (0 if beta == 0).
 * The first term is the slicing truncation (|d| <= 2^-35 per factor), the
 * second the 4 roundings per K chunk of the double accumulation, the third
 * the epilogue's two products and one sum, the fourth the subnormal range. */
#ifndef OZCRT_REFERENCE_BOUND_H
#define OZCRT_REFERENCE_BOUND_H

#include <math.h>
#include <stdint.h>
#include "../crt/oz_hd.h"
#include "../slicing/slicing.h"

OZ_HD double oz_error_bound(double alpha, double beta, double c_old, double P, int s, int t, int64_t k)
{
    double kd = (double)k;
    double chunks = ceil(kd / (double)OZ_P22_KCHUNK);
    double trunc = ldexp(1.0, -34) * (1.0 + ldexp(1.0, -34));
    double accum = 4.0 * chunks * ldexp(1.0, -53) * (1.0 + ldexp(1.0, -33));
    double path = fabs(alpha) * ldexp(kd * (trunc + accum), s + t);
    double epilogue = ldexp(1.0, -52) * (fabs(alpha * P) + fabs(beta * c_old));
    return path + epilogue + ldexp(1.0, -1073) * (fabs(alpha) + 1.0);
}

#endif
