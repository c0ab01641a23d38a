/* kernels/oz2_auto_panel.h: the automatic precision's one-read row work on an operand whose rows are contiguous (kernels/oz2_auto_panel.cu), CUDA C++. */
#ifndef OZCRT_KERNELS_OZ2_AUTO_PANEL_H
#define OZCRT_KERNELS_OZ2_AUTO_PANEL_H

#include <cuda_runtime.h>

#include "p22_params.h"
#include "../crt/oz2_auto.h"

#define OZ2A_PANEL_SHAPE 0         /* the shape the library takes (oz2_auto_panel.cu's OZ2A_PANEL_SHAPES) */
#define OZ2A_PANEL_CLUSTER_MAX 16  /* CTAs of a cluster at most (16: the H100's non-portable size) */

/* Whether the panel kernel serves view v (real, rows contiguous, k within
 * OZ2A_PANEL_CLUSTER_MAX CTAs of its shape) on the current device. */
cudaError_t oz2a_panel_serves(const oz_view &v, bool *serves);

/* The scale (w's scales and special flag, as oz_launch_operand_scale
 * writes them), A1, g, (P, p), the largest norm sum into *a1max and g into
 * *gmax, and the estimate's operands q (rows kep bytes apart, 0 from k to
 * kep) of every row of v, for K_E = k; enqueued on s. */
cudaError_t oz2a_launch_panel_prep(const oz_view &v, const oz_operand_ws &w, unsigned long long *A1, int32_t *g,
                                   oz2a_skip_pq *pq, unsigned long long *a1max, int *gmax, int64_t kep, uint8_t *q,
                                   cudaStream_t s);

#endif
