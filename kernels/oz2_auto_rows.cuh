/* kernels/oz2_auto_rows.cuh: what the automatic precision's one-read row kernels (oz2_auto_estimate.cu's row kernel, oz2_auto_panel.cu) write of a row once its norm sum is known (CUDA C++). */
#ifndef OZCRT_KERNELS_OZ2_AUTO_ROWS_CUH
#define OZCRT_KERNELS_OZ2_AUTO_ROWS_CUH

#include "p22_params.h"
#include "../crt/oz2_auto.h"

/* Row r's scale sc (OZ_SCALE_SPECIAL where bad, the view's special flag
 * set), norm sum, g and (P, p), and the call's largest norm sum and g of
 * nonzero rows (the plan reads them). One thread a row. */
__device__ __forceinline__ void oz2a_store_row(const oz_operand_ws &ws, int64_t r, int sc, int bad,
                                               unsigned long long sum, int gr, unsigned long long *A1, int32_t *g,
                                               oz2a_skip_pq *pq, unsigned long long *a1max, int *gmax)
{
    ws.scale(0)[r] = sc;
    if (bad)
        atomicOr(ws.special(0), 1);
    A1[r] = sum;
    g[r] = gr;
    pq[r] = oz2a_skip_pq_of(sum, gr);
    if (sum) {
        atomicMax(a1max, sum);
        atomicMax(gmax, gr);
    }
}

/* oz2a_norm_term_fp and oz2a_quant_fp where the factor's hi is 1 (a row
 * whose d is at most 1000, every row but those of the tiniest maxima): the
 * product by hi = 1 is exact, so the same values with one product fewer. */
__device__ __forceinline__ uint32_t oz2a_norm_term_fp1(double x, double lo)
{
    return (uint32_t)__double2loint(__dadd_ru(__dmul_ru(fabs(x), lo), 0x1p52));
}
__device__ __forceinline__ uint32_t oz2a_quant_fp1(double x, double lo)
{
    /* y >= 0 below 2^GMAX: min(floor(y), 127) is floor(y) where y < 128 (its high word below 128's), whose sum
     * with 2^52 toward zero is exact; else 127 */
    const double y = __dmul_rz(fabs(x), lo);
    const uint32_t f = (uint32_t)__double2loint(__dadd_rz(y, 0x1p52));
    return (uint32_t)__double2hiint(y) < 0x40600000u ? f : (uint32_t)OZ2A_QMAX;
}

#endif
