/* kernels/oz2_gemm_host.cu: the host entry points of the GPU ozaki2 path (kernels/oz2_gemm.h): plan, workspace sizing and the launch sequence. */
#include "oz2_gemm.h"
#include "operand_views.h"
#include "block_plan.h"
#include "oz2_params.h"
#include "../crt/oz2_auto.h"
#include "../crt/oz2_complex.h"

/* The plan the host lays the workspace out for: the fixed plan, or for the
 * automatic one (bits = OZ2A_AUTO(B)) the most moduli it may choose, its w
 * left to the device (docs/ozaki2-auto.md). n == 0: not emulated. */
static oz2_plan oz2_host_plan(int64_t k, int bits)
{
    if (!oz2a_is_auto(bits))
        return oz2_make_plan(k, bits);
    const int target = oz2a_target(bits);
    oz2_plan p = {0, 0};
    if (target >= OZ2A_B_MIN && target <= OZ2A_B_MAX && k < OZ2A_KMAX) {
        p.n = OZ2_MAX_MODULI;
        p.w = OZ2A_W_MAX;
    }
    return p;
}

/* The same for complex calls: the fixed plan (N, w, N'), or for the
 * automatic one the most it may choose (20, W_MAX, 24). */
static oz2z_plan oz2z_host_plan(int64_t k, int bits)
{
    oz2z_plan p = {0, 0, 0};
    if (!oz2a_is_auto(bits))
        return bits >= 1 ? oz2z_make_plan(k, bits) : p;
    const int target = oz2a_target(bits);
    if (target >= OZ2A_B_MIN && target <= OZ2A_B_MAX && k < OZ2ZA_KMAX)
        p = oz2z_plan{OZ2_MAX_MODULI, OZ2A_W_MAX, OZ2Z_SPLIT_NMODULI};
    return p;
}

/* The plan of a call of either element type: planes is the residue planes
 * per operand (and of R): N for real calls, two per split modulus for
 * complex ones (docs/ozaki2-complex.md, "The GPU method"); 0: not emulated. */
struct oz2_call_plan {
    int planes, w, nsplit;
    bool cx;
};
static oz2_call_plan oz2_plan_of(const oz_gemm_desc *d, int bits)
{
    oz2_call_plan r = {0, 0, 0, d->elem == OZ_ELEM_COMPLEX};
    if (r.cx) {
        const oz2z_plan p = oz2z_host_plan(d->k, bits);
        if (p.n && p.n_split) {
            r.planes = 2 * p.n_split;
            r.w = p.w;
            r.nsplit = p.n_split;
        }
        return r;
    }
    const oz2_plan p = oz2_host_plan(d->k, bits);
    r.planes = p.n;
    r.w = p.w;
    return r;
}

/* The automatic plan's own bytes ahead of the path's (one batch item). */
static int64_t oz2_auto_bytes(const oz_gemm_desc *d, int bits)
{
    if (!oz2a_is_auto(bits))
        return 0;
    oz_gemm_desc one = *d;
    one.batch = 1;
    return oz_align256((int64_t)oz2a_estimate_workspace(&one));
}

extern "C" int oz2_gemm_moduli(int64_t k, int bits, int *w)
{
    oz2_plan p = oz2_host_plan(k, bits);
    if (w)
        *w = p.w;
    return p.n;
}

extern "C" int oz2z_gemm_moduli(int64_t k, int bits, int *w, int *n_split)
{
    const oz2z_plan p = oz2z_host_plan(k, bits);
    if (w)
        *w = p.w;
    if (n_split)
        *n_split = p.n_split;
    return p.n;
}

/* Tests only: 1 the portable engine, 2 the sm_90a one, 0 the device's. */
OZ_TEST_KNOB(int, g_force_engine, oz2_gemm_force_engine, 0)
/* Tests only: the most the path plans with (its least need if that is
 * more), so that blocks of C and slabs of K happen at small sizes; 0: off. */
OZ_TEST_KNOB(size_t, g_force_budget, oz2_gemm_force_budget, 0)

/* The call as kernels/block_plan.h sees it (k >= 1 for the sizes: a call
 * with k == 0 only scales C). */
static oz_bp_call oz2_call(const oz_gemm_desc *d, int nmod)
{
    return oz_bp_call_oz2(d->m, d->n, d->k > 0 ? d->k : 1, d->batch, nmod);
}

/* The most the path asks for: `whole` true, the larger of the Phase 22
 * path's bound and one batch item's whole call (everything at once: N
 * bytes per element of op(A), op(B) and C, 2x the operands' own bytes at
 * N = 16); false, the bound alone (block_plan.h). A test's forced budget
 * replaces both. Measured on the H200 (BENCHMARKS.md run 58): the bound's
 * blocks of C cost 31% at 8192^3 and 22% at 16384^3 (the residues of
 * op(A) made once per column block), hence the whole call first. */
static int64_t oz2_ceiling(const oz_bp_call &c, bool whole)
{
    if (g_force_budget)
        return (int64_t)g_force_budget;
    const int64_t bound = oz_bp_budget(&c);
    if (!whole)
        return bound;
    const int64_t item = oz_bp_plan_item(&c).bytes;
    return item > bound ? item : bound;
}

/* The sizes of oz2_gemm_workspace_sizes (all 0: unreachable plan). */
extern "C" void oz2_gemm_workspace_sizes(const oz_gemm_desc *d, int bits, size_t cap, size_t sizes[OZ_GEMM_WS_SIZES])
{
    for (int i = 0; i < OZ_GEMM_WS_SIZES; i++)
        sizes[i] = 0;
    const int n = oz2_plan_of(d, bits).planes;
    if (n == 0)
        return;
    const oz_bp_call c = oz2_call(d, n);
    /* the automatic plan's estimate comes on top of the path's plan: the cap holds both */
    const int64_t extra = oz2_auto_bytes(d, bits), cap_all = oz_bp_budget_of(cap);
    const int64_t most = oz2_ceiling(c, true), bound = oz2_ceiling(c, false), cp = cap_all > extra ? cap_all - extra : 0;
    const int64_t full = oz_bp_plan_full(&c, most).bytes;
    const int64_t capped = full <= cp ? full : oz_bp_bytes_within(&c, most, cp);
    const int64_t bounded = capped <= bound ? capped : oz_bp_bytes_within(&c, most, cp < bound ? cp : bound);
    sizes[0] = (size_t)(full + extra);
    sizes[1] = (size_t)(capped + extra);
    sizes[2] = (size_t)(bounded + extra);
    sizes[3] = (size_t)(oz_bp_plan_min(&c).bytes + extra);
}

extern "C" size_t oz2_gemm_workspace_min(const oz_gemm_desc *d, int bits)
{
    const int n = oz2_plan_of(d, bits).planes;
    const oz_bp_call c = oz2_call(d, n);
    return n ? (size_t)(oz_bp_plan_min(&c).bytes + oz2_auto_bytes(d, bits)) : 0;
}

extern "C" size_t oz2_gemm_workspace_full(const oz_gemm_desc *d, int bits)
{
    const int n = oz2_plan_of(d, bits).planes;
    const oz_bp_call c = oz2_call(d, n);
    return n ? (size_t)(oz_bp_plan_full(&c, oz2_ceiling(c, true)).bytes + oz2_auto_bytes(d, bits)) : 0;
}

#define OZ2_TRY(call)                                                                                \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess)                                                                       \
            return e_;                                                                               \
    } while (0)

/* Whether the sm_90a engine serves the current device; asked once per device,
 * so that inside a stream capture nothing but launches follows the first use. */
#define OZ2_MAX_DEVICES 64
static cudaError_t oz2_use_sm90_engine(bool *use)
{
    static volatile int known[OZ2_MAX_DEVICES], usable[OZ2_MAX_DEVICES];
    int dev = 0;
    OZ2_TRY(cudaGetDevice(&dev));
    if (dev < OZ2_MAX_DEVICES && known[dev]) {
        *use = usable[dev] != 0;
    } else {
        *use = oz_engine_usable(dev);
        if (dev < OZ2_MAX_DEVICES) {
            usable[dev] = *use;
            known[dev] = 1;
        }
    }
    if (g_force_engine)
        *use = g_force_engine == 2;
    return cudaSuccess;
}

/* The plan for a workspace of `bytes` (0 when none fits), and the call's plan. */
static bool oz2_plan_for(const oz_gemm_desc *d, int bits, size_t bytes, oz_bp_plan *P, oz2_call_plan *plan)
{
    *plan = oz2_plan_of(d, bits);
    if (plan->planes == 0)
        return false;
    const oz_bp_call c = oz2_call(d, plan->planes);
    return oz_bp_plan_for(&c, oz_bp_budget_of(bytes), (int64_t)g_force_budget, P);
}

/* A batch item's whole-call plan (one block, one slab): the layer tests' layout. */
extern "C" int oz2_gemm_layout(const oz_gemm_desc *d, int bits, oz2_gemm_layout_info *out)
{
    const oz2_plan plan = oz2_host_plan(d->k, bits);
    if (plan.n == 0 || oz2a_is_auto(bits) || d->elem != OZ_ELEM_REAL)
        return cudaErrorInvalidValue;
    const oz_bp_call c = oz2_call(d, plan.n);
    const oz_bp_plan P = oz_bp_plan_item(&c);
    *out = oz2_gemm_layout_info{plan.n, plan.w, P.Mpad, P.Npad, oz_round_up(c.k, OZ_PAD_K), 0, P.off_res_b,
                                P.off_scale_a, P.off_scale_b, P.off_special, P.off_out, P.slot_bytes};
    return cudaSuccess;
}

/* The least N of a constrained automatic plan (oz2a_n_least): the CRT launches' lower end. */
static int oz2_auto_nlo(int64_t k, int bits)
{
    static const oz2a_ranges R = oz2a_make_ranges(); /* host, once */
    return oz2a_n_least(k, oz2a_target(bits), &R);
}

/* The launch sequence, by plan (block_plan.h), batch items in groups: the
 * scales and special flags of whole items; per block of C, per slab of K
 * the residues of the block's rows of op(A) and columns of op(B) and the
 * engine, each slab's R_q added to the block's planes (modulo m_q), then
 * the CRT and epilogue of the block; last the Inf/NaN fix-up of whole
 * items. Stage 0 runs it all, 1 stops after the residue planes, 2 after
 * the engine's R_q planes (the layer tests, on whole-call plans). */
static int oz2_run(const oz_gemm_desc *d, int bits, void *workspace, size_t workspace_bytes, void *stream, int stage,
                   const oz2a_dev_plan *dplan)
{
    if (d->m <= 0 || d->n <= 0 || d->batch <= 0)
        return cudaSuccess;
    cudaStream_t s = (cudaStream_t)stream;
    oz_bp_plan P;
    oz2_call_plan plan;
    if (workspace == nullptr || !oz2_plan_for(d, bits, workspace_bytes, &P, &plan))
        return cudaErrorInvalidValue;
    const bool cx = plan.cx;
    const void *const est_ws = dplan; /* the plan opens the estimate's workspace */
    bool sm90 = false;
    OZ2_TRY(oz2_use_sm90_engine(&sm90));
    const int64_t max_group = sm90 ? 65535 : 65535 / plan.planes; /* grid z limits */
    const int64_t per_group = P.group < max_group ? P.group : max_group;

    oz2_crt_consts cc;
    if (!cx)
        oz2_crt_init(&cc, plan.planes);
    char *ws = (char *)workspace;
    /* whole items: scales and flags */
    const oz_operand_ws wa = {ws, P.slot_bytes, 0, P.off_scale_a, P.off_special, P.Mpad, 0, 0};
    const oz_operand_ws wb = {ws, P.slot_bytes, 0, P.off_scale_b, P.off_special + 4, P.Npad, 0, 0};
    /* complex operands: views in doubles, conjugation for op C */
    const oz_view va0 = cx ? oz2z_view_a(d) : oz_view_a(d), vb0 = cx ? oz2z_view_b(d) : oz_view_b(d);
    const bool conj_a = cx && d->transa == 2, conj_b = cx && d->transb == 2;
    unsigned long long *const tickets = (unsigned long long *)(ws + P.off_special + OZ_BP_TICKETS_OFF);
    const oz_scalars sc = cx ? oz_scalars{} : oz_scalars_of(d);
    const oz_zscalars zsc = cx ? oz_zscalars_of(d) : oz_zscalars{};

    for (int64_t b0 = 0; b0 < d->batch; b0 += per_group) {
        const int64_t group = d->batch - b0 < per_group ? d->batch - b0 : per_group;
        const oz_view va = oz_view_from(va0, b0), vb = oz_view_from(vb0, b0);
        oz_out c = oz_out_from(d, b0);
        if (cx) { /* C's stride in doubles (its ldc stays in complex elements) */
            c.stride *= 2;
            if (!c.array)
                c.base = d->C + 2 * b0 * d->strideC;
        }
        if (d->k > 0) {
            /* the special flags of A and B, one word each, and the engine's
             * tickets after them, in every item's slot */
            OZ2_TRY(cudaMemset2DAsync(wa.special(0), (size_t)P.slot_bytes, 0, OZ_BP_SPECIAL_USED, (size_t)group, s));
            if (est_ws) { /* automatic precision (one item): the estimate made them already */
                const int32_t *sa, *sb, *sp;
                oz2a_estimate_scales(d, est_ws, &sa, &sb, &sp);
                OZ2_TRY(cudaMemcpyAsync(wa.special(0), sp, 8, cudaMemcpyDeviceToDevice, s));
                OZ2_TRY(cudaMemcpyAsync(wa.scale(0), sa, (size_t)(4 * P.Mpad), cudaMemcpyDeviceToDevice, s));
                OZ2_TRY(cudaMemcpyAsync(wb.scale(0), sb, (size_t)(4 * P.Npad), cudaMemcpyDeviceToDevice, s));
            } else {
                OZ2_TRY(oz_launch_operand_scale(cx ? oz2z_real_view(va) : va, wa, group, s, cx && va.rs == 2));
                OZ2_TRY(oz_launch_operand_scale(cx ? oz2z_real_view(vb) : vb, wb, group, s, cx && vb.rs == 2));
            }
        }
        for (int64_t m0 = 0; m0 < d->m; m0 += P.mb) {
            const int64_t rows = d->m - m0 < P.mb ? d->m - m0 : P.mb;
            for (int64_t n0 = 0; n0 < d->n; n0 += P.nb) {
                const int64_t cols = d->n - n0 < P.nb ? d->n - n0 : P.nb;
                const int64_t mbp = oz_round_up(rows, OZ_PAD_ROWS_A), nbp = oz_round_up(cols, OZ_PAD_ROWS_B);
                for (int64_t k0 = 0; k0 < d->k; k0 += P.ks) {
                    const int64_t kl = d->k - k0 < P.ks ? d->k - k0 : P.ks;
                    const oz_operand_ws ba = oz_operand_block(wa, 0, m0, rows, OZ_PAD_ROWS_A, kl, 1);
                    const oz_operand_ws bb = oz_operand_block(wb, P.off_res_b, n0, cols, OZ_PAD_ROWS_B, kl, 1);
                    const oz_view pa = oz_view_part(va, m0, rows, k0, kl), pb = oz_view_part(vb, n0, cols, k0, kl);
                    /* B's residues over all of K for all columns stay from the first row block (block_plan.h's b_once) */
                    const bool b_kept = m0 > 0 && P.nb >= d->n && P.ks >= d->k;
                    if (cx) {
                        OZ2_TRY(oz2z_launch_residues(oz2z_real_view(pa), ba, plan.nsplit, plan.w, conj_a, group, s,
                                                     dplan));
                        if (!b_kept)
                            OZ2_TRY(oz2z_launch_residues(oz2z_real_view(pb), bb, plan.nsplit, plan.w, conj_b, group,
                                                         s, dplan));
                    } else {
                        OZ2_TRY(oz2_launch_residues(pa, ba, plan.planes, plan.w, group, s, dplan));
                        if (!b_kept)
                            OZ2_TRY(oz2_launch_residues(pb, bb, plan.planes, plan.w, group, s, dplan));
                    }
                    if (stage == 1)
                        continue;
                    oz_engine_residue_job ej = {ba, bb, rows, cols, plan.planes, (uint8_t *)(ws + P.off_out),
                                                P.slot_bytes, k0 > 0, tickets, 0, 0, 0, dplan ? &dplan->planes : nullptr,
                                                cx};
                    OZ2_TRY(sm90 ? oz_engine_residues(ej, group, s) : oz2_engine_residues_portable(ej, group, s));
                }
                if (stage != 0)
                    continue;
                oz2_crt_job job = {ws, P.slot_bytes, P.off_scale_a + 4 * m0, P.off_scale_b + 4 * n0, P.off_out, mbp,
                                   nbp, rows, cols, plan.w, d->k == 0, c, m0 + n0 * d->ldc, sc, dplan,
                                   dplan && !cx ? oz2_auto_nlo(d->k, bits) : 0};
                if (cx)
                    OZ2_TRY(oz2z_launch_crt(oz2z_crt_job{job, zsc}, plan.nsplit, group, s));
                else
                    OZ2_TRY(oz2_launch_crt(cc, job, group, s));
            }
        }
        /* with the caller's native branch, what no plan certifies is left to it (nothing of C written) */
        const oz2a_dev_plan *const skip_native = d->native_branch ? dplan : nullptr;
        if (stage == 0 && d->k > 0 && dplan && !skip_native) { /* what the plan does not emulate (group 1 here) */
            if (cx)
                OZ2_TRY(oz2z_launch_auto_native(va, vb, conj_a, conj_b, wa.scale(0), wb.scale(0), c, zsc, dplan, s));
            else
                OZ2_TRY(oz2_launch_auto_native(va, vb, wa.scale(0), wb.scale(0), c, sc, dplan, s));
        }
        if (stage == 0 && d->k > 0) {
            if (cx)
                OZ2_TRY(oz2z_launch_special_fixup(va, vb, conj_a, conj_b, wa, wb, c, zsc, d->m, d->n, group, s,
                                                  skip_native));
            else
                OZ2_TRY(oz_launch_special_fixup(va, vb, wa, wb, c, sc, d->m, d->n, group, s, skip_native));
        }
    }
    return cudaSuccess;
}

/* The automatic plan: each batch item its own estimate and plan (the CPU
 * reference's call per item), then the path on that plan, launched for the
 * most moduli, and the auto-native elements; nothing waits for the plan. */
static int oz2_run_auto(const oz_gemm_desc *d, int bits, void *workspace, size_t workspace_bytes, void *stream,
                        int stage)
{
    if (d->m <= 0 || d->n <= 0 || d->batch <= 0)
        return cudaSuccess;
    const int64_t extra = oz2_auto_bytes(d, bits);
    if (workspace == nullptr || workspace_bytes < (size_t)extra)
        return cudaErrorInvalidValue;
    if (d->k == 0) /* C = beta C: no plan needed */
        return oz2_run(d, OZ2A_B_DEFAULT, workspace, workspace_bytes, stream, stage, nullptr);
    char *ws = (char *)workspace;
    const int64_t el = d->elem == OZ_ELEM_COMPLEX ? 2 : 1; /* doubles an element */
    for (int64_t b = 0; b < d->batch; b++) {
        oz_gemm_desc one = *d;
        one.batch = 1;
        if (d->Aarray) {
            one.Aarray += b;
            one.Barray += b;
            one.Carray += b;
        } else {
            one.A += el * b * d->strideA;
            one.B += el * b * d->strideB;
            one.C += el * b * d->strideC;
        }
        /* the path's workspace is free until the estimate has run: its scratch */
        OZ2_TRY((cudaError_t)oz2a_estimate(&one, oz2a_target(bits), ws, (size_t)extra, ws + extra,
                                           workspace_bytes - (size_t)extra, stream));
        OZ2_TRY((cudaError_t)oz2_run(&one, bits, ws + extra, workspace_bytes - (size_t)extra, stream, stage,
                                     (const oz2a_dev_plan *)ws));
    }
    return cudaSuccess;
}

extern "C" int oz2_gemm_run(const oz_gemm_desc *d, int bits, void *workspace, size_t workspace_bytes, void *stream)
{
    if (d->k > 0 && d->m > 0 && d->n > 0 && d->batch > 0 && oz_host_alpha_zero(d)) { /* C = beta C: A and B not read */
        oz_gemm_desc z = *d;
        z.k = 0;
        return oz2_gemm_run(&z, bits, workspace, workspace_bytes, stream);
    }
    if (oz2a_is_auto(bits))
        return oz2_run_auto(d, bits, workspace, workspace_bytes, stream, 0);
    return oz2_run(d, bits, workspace, workspace_bytes, stream, 0, nullptr);
}

#ifdef OZ_TEST_HOOKS
extern "C" int oz2_gemm_run_stage(const oz_gemm_desc *d, int bits, void *workspace, size_t workspace_bytes,
                                  int stage, void *stream)
{
    if (oz2a_is_auto(bits))
        return oz2_run_auto(d, bits, workspace, workspace_bytes, stream, stage);
    return oz2_run(d, bits, workspace, workspace_bytes, stream, stage, nullptr);
}

extern "C" int oz2_gemm_sm90_engine(void)
{
    bool use = false;
    int saved = g_force_engine;
    g_force_engine = 0;
    cudaError_t e = oz2_use_sm90_engine(&use);
    g_force_engine = saved;
    return e == cudaSuccess && use;
}
#endif
