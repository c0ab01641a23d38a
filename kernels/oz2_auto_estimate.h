/* kernels/oz2_auto_estimate.h: the automatic precision's plan on the GPU (docs/ozaki2-auto.md), enqueued on a stream, the plan left in device memory. */
#ifndef OZCRT_KERNELS_OZ2_AUTO_ESTIMATE_H
#define OZCRT_KERNELS_OZ2_AUTO_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "ozcrt_gemm.h"
#include "../crt/moduli.h"
#include "../crt/oz2_complex.h"

#ifdef __cplusplus
extern "C" {
#endif

/* At the workspace's start once the stream reaches it: w_need (the max of
 * the elements' needs, -1 = none, 1000 = an element no w certifies: the
 * plan's, from the part it was made from), the
 * plan (n = 0: not emulated) and the byte sums' starts at width w of the
 * residue kernel (crt/oz2.h's oz2_bias_bits). Real calls: n engine moduli,
 * bias[q] for q < n. Complex calls (docs/ozaki2-complex.md, "Automatic
 * precision"): n split moduli, zbias[q] and zbias[OZ2Z_SPLIT_NMODULI + q]
 * the starts of modulus q's K_b and r K_b columns (the residue kernel's
 * oz2z_bias). planes: the engine's residue planes (n, or 2 n complex). */
typedef struct oz2a_dev_plan {
    int32_t w_need, n, w, planes;
    /* the estimate's two parts (docs/ozaki2-auto.md step 2): w_need is the
     * first part's need until the plan is made; second: 1 when the rest of
     * K is summed, its need (from all of K_E) in w_need2 */
    int32_t w_need2, second;
    /* gmax: the largest g (h) of nonzero rows (columns); first, whole: 1
     * when the product runs over the first part (oz2a_two_parts), or over
     * all of K_E in one */
    int32_t gmax, first, whole, unused_;
    unsigned long long a1max, b1max;
    uint32_t bias[OZ_ENGINE_NMODULI];
    uint32_t zbias[2 * OZ2Z_SPLIT_NMODULI];
} oz2a_dev_plan;

/* The plan counters of oz_gemm_desc::plan_counts: entry n (0: no plan,
 * the call run natively (oz2_native_branch.h) or by the plain dot product; else n moduli) for real
 * calls, OZ2A_PLAN_COUNTS_CX + n (n split moduli) for complex ones. */
#define OZ2A_PLAN_COUNTS_CX 32
#define OZ2A_PLAN_COUNTS 64

/* Workspace bytes of oz2a_estimate for the call (batch 1). */
size_t oz2a_estimate_workspace(const oz_gemm_desc *d);

/* Enqueues the estimate and the plan for target 2^-B (B in 20..64) on
 * `stream`, for a real or complex call (d->elem); never synchronises. The
 * plan kernel counts the plan in d->plan_counts when that is not NULL.
 * scratch (may be NULL): device memory free until the stream has run the
 * estimate (the path's own workspace); where it holds m x n words rounded up
 * the estimate product's sums are stored there and the need taken by a
 * pass of its own (else the product's epilogue takes it). batch 1, m, n
 * in 1..65535, k >= 1, else cudaErrorInvalidValue. Returns the first launch
 * error. */
int oz2a_estimate(const oz_gemm_desc *d, int target, void *workspace, size_t bytes, void *scratch,
                  size_t scratch_bytes, void *stream);

/* Where oz2a_estimate(d, ..., workspace, ...) leaves the operands' scales
 * (phase22.md step 1: the path's own kernel on the same views, so the same
 * values; rows up to m and n rounded up to 256, 0 past them) and special
 * flags (A's word, then B's), for the path to take instead of making
 * them again. */
void oz2a_estimate_scales(const oz_gemm_desc *d, const void *workspace, const int32_t **scale_a,
                          const int32_t **scale_b, const int32_t **special);

/* Test build only (OZ_TEST_HOOKS): 1 forces the dp4a estimate (no engine). */
void oz2a_force_portable(int on);
/* 1: the separate scale, norm and operand passes even where the one-pass row or panel kernel serves. */
void oz2a_force_est_passes(int on);
/* Where the estimate product's sums are stored: 0 (the library's rule) and 2 whenever the scratch holds them, 1 never. */
void oz2a_force_est_store(int mode);
/* The row kernel's first variant tried (kernels/oz2_auto_estimate.cu: 0 .. OZ2A_TEST_ROW_VARIANTS - 1). */
void oz2a_force_row_variant(int v);
/* The panel kernel's shape (kernels/oz2_auto_panel.cu: 0 .. OZ2A_TEST_PANEL_SHAPES - 1; another value: never the panel kernel). */
void oz2a_force_panel_shape(int shape);
#define OZ2A_TEST_ROW_VARIANTS 5 /* the test build's row variants and panel shapes */
#define OZ2A_TEST_PANEL_SHAPES 5
/* Where the workspace holds each operand's per-row results: norm sums
 * (uint64 each), g (int32), and the estimate's operands (rows kep bytes
 * apart), A's then B's. */
typedef struct oz2a_est_arrays {
    const void *norm[2], *g[2], *q[2];
    int64_t kep;
} oz2a_est_arrays;
void oz2a_estimate_arrays(const oz_gemm_desc *d, const void *workspace, oz2a_est_arrays *out);

#ifdef __cplusplus
}
#endif
#endif
