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

#endif
