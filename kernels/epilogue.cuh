/* kernels/epilogue.cuh: the alpha/beta epilogue of phase22.md step 6, shared by the fused kernel and the Inf/NaN fix-up. */
#ifndef OZCRT_KERNELS_EPILOGUE_CUH
#define OZCRT_KERNELS_EPILOGUE_CUH

/* C = alpha * P (beta == 0: C not read), else (alpha * P) + (beta * C), each
 * operation rounded to nearest even, never contracted. k == 0, or alpha ==
 * 0 with P finite: C = beta * C (0 when beta == 0), as cuBLAS. alpha == 0
 * with P Inf or NaN (a special row or column, or a product beyond the
 * double range) takes the formula, so NaN, as cuBLAS's 0 * dot does: with
 * alpha on the device it cannot skip the product. */
__device__ __forceinline__ void oz_store_epilogue(double *c, double alpha, double beta, double P, bool product_vanishes)
{
    double out;
    if (product_vanishes || (alpha == 0.0 && isfinite(P)))
        out = beta == 0.0 ? 0.0 : __dmul_rn(beta, *c);
    else if (beta == 0.0)
        out = __dmul_rn(alpha, P);
    else
        out = __dadd_rn(__dmul_rn(alpha, P), __dmul_rn(beta, *c));
    *c = out;
}

/* The complex product of docs/ozaki2-complex.md step 5: four rounded
 * products, then a rounded difference and a rounded sum; no FMA. */
__device__ __forceinline__ double2 oz_zmul(double2 u, double2 v)
{
    return make_double2(__dsub_rn(__dmul_rn(u.x, v.x), __dmul_rn(u.y, v.y)),
                        __dadd_rn(__dmul_rn(u.x, v.y), __dmul_rn(u.y, v.x)));
}

/* The complex epilogue (a scalar is zero when both parts are): C = alpha *
 * P (beta == 0: C not read), else one rounded sum per part of alpha * P and
 * beta * C; k == 0, or alpha == 0 with both parts of P finite: C = beta * C
 * (+0 when beta == 0); alpha == 0 with a part of P Inf or NaN: the formula
 * (NaN in both parts), as the real epilogue. */
__device__ __forceinline__ void oz_store_zepilogue(double *c, double2 alpha, double2 beta, double2 P,
                                                   bool product_vanishes)
{
    /* c: re at c[0], im at c[1] (8-byte accesses: cuBLAS takes C at any double's alignment) */
    const bool beta0 = beta.x == 0.0 && beta.y == 0.0;
    double2 out;
    if (product_vanishes || (alpha.x == 0.0 && alpha.y == 0.0 && isfinite(P.x) && isfinite(P.y))) {
        out = beta0 ? make_double2(0.0, 0.0) : oz_zmul(beta, make_double2(c[0], c[1]));
    } else {
        const double2 ap = oz_zmul(alpha, P);
        if (beta0) {
            out = ap;
        } else {
            const double2 bc = oz_zmul(beta, make_double2(c[0], c[1]));
            out = make_double2(__dadd_rn(ap.x, bc.x), __dadd_rn(ap.y, bc.y));
        }
    }
    c[0] = out.x;
    c[1] = out.y;
}

#endif
