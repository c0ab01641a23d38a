/* kernels/epilogue.cuh: the alpha/beta epilogue of phase22.md step 6, shared by the fused kernel and the Inf/NaN fix-up. */
#ifndef OZCRT_KERNELS_EPILOGUE_CUH
#define OZCRT_KERNELS_EPILOGUE_CUH

/* C = alpha * P (beta == 0: C not read), else (alpha * P) + (beta * C), each
 * operation rounded to nearest even, never contracted. k == 0 or alpha == 0:
 * C = beta * C (0 when beta == 0), as cuBLAS. */
__device__ __forceinline__ void oz_store_epilogue(double *c, double alpha, double beta, double P, bool product_vanishes)
{
    double out;
    if (product_vanishes || alpha == 0.0)
        out = beta == 0.0 ? 0.0 : __dmul_rn(beta, *c);
    else if (beta == 0.0)
        out = __dmul_rn(alpha, P);
    else
        out = __dadd_rn(__dmul_rn(alpha, P), __dmul_rn(beta, *c));
    *c = out;
}

#endif
