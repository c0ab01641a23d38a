/* kernels/gemm_host.cu: the host entry points of the GPU Phase 22 path (kernels/ozcrt_gemm.h): workspace sizing and the launch sequence. */
#include "engine.h"
#include "engine_cfg.h"
#include "operand_views.h"
#include "ozcrt_gemm.h"
#include "p22_params.h"
#include "block_plan.h"

/* Tests only (the test build of this library, tests/gpu): 1 forces the
 * mma.sync kernel's small tile configuration, 2 its large one; 0 lets the
 * device decide. */
OZ_TEST_KNOB(int, g_force_tiles, oz_gemm_force_tiles, 0)
/* Tests only: the most the engine path plans with (its least need if that
 * is more), instead of the bound of block_plan.h and the workspace it is
 * given, so that blocks of C and slabs of K happen at small sizes; 0: off. */
OZ_TEST_KNOB(size_t, g_force_budget, oz_gemm_force_budget, 0)
/* Tests only: Phase 22 on the engine fused (1) or unfused (2) whatever
 * the shape; 0: the rule (p22_unfused). */
OZ_TEST_KNOB(int, g_force_p22, oz_gemm_force_p22_path, 0)

/* The fused kernel's parameters for one group. */
static oz_gemm_params make_params(const oz_gemm_desc *d, const oz_layout &L, char *ws, int64_t b0)
{
    oz_gemm_params p = {};
    p.L = L;
    p.a = oz_operand_ws{ws, L.slot_bytes, L.offA, L.offScaleA, L.offSpecial, L.Mpad, L.Kpad, L.Mpad};
    p.b = oz_operand_ws{ws, L.slot_bytes, L.offB, L.offScaleB, L.offSpecial + 4, L.Npad, L.Kpad, L.Npad};
    p.tile_override = g_force_tiles;
    p.c = oz_out_from(d, b0);
    p.sc = oz_scalars_of(d);
    return p;
}

#define OZ_HOST_MAX_DEVICES 64

/* Attribute A of device dev, asked once per device (nothing but launches
 * inside a stream capture after the first use). */
template <cudaDeviceAttr A>
static cudaError_t device_attr(int dev, int *v)
{
    static volatile int known[OZ_HOST_MAX_DEVICES], value[OZ_HOST_MAX_DEVICES];
    if (dev < OZ_HOST_MAX_DEVICES && known[dev]) {
        *v = value[dev];
        return cudaSuccess;
    }
    const cudaError_t e = cudaDeviceGetAttribute(v, A, dev);
    if (e != cudaSuccess)
        return e;
    if (dev < OZ_HOST_MAX_DEVICES) {
        value[dev] = *v;
        known[dev] = 1;
    }
    return cudaSuccess;
}

/* The mma.sync fused kernel for the current device: the large tile
 * configuration where the shared memory allows it, else the small one. */
static cudaError_t launch_fused(oz_gemm_params &p, int64_t group, cudaStream_t s)
{
    int dev = 0, smem = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = device_attr<cudaDevAttrMaxSharedMemoryPerBlockOptin>(dev, &smem);
    if (e != cudaSuccess)
        return e;
    const bool large = p.tile_override != 1 && smem >= oz_tiles_large::SMEM_BYTES;
    return oz_launch_p22_sm80(p, group, s, dev, large);
}

#define OZ_TRY(call)                                                                                 \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess)                                                                       \
            return e_;                                                                               \
    } while (0)

/* Residue tiling of both operands of one group into the workspace. */
static cudaError_t tile_operands(const oz_view &va, const oz_view &vb, const oz_gemm_params &p, int64_t group,
                                 cudaStream_t s)
{
    /* the special flags of A and B, one word each, in every item's slot */
    OZ_TRY(cudaMemset2DAsync(p.a.special(0), (size_t)p.a.slot_bytes, 0, 8, (size_t)group, s));
    OZ_TRY(oz_launch_operand_scale(va, p.a, group, s));
    OZ_TRY(oz_launch_operand_scale(vb, p.b, group, s));
    OZ_TRY(oz_launch_operand_residues(va, p.a, group, s, false));
    OZ_TRY(oz_launch_operand_residues(vb, p.b, group, s, false));
    return cudaSuccess;
}

#ifdef OZ_TEST_HOOKS
/* Layer-test entry (tests/gpu): runs one group with a debug output of the
 * fused kernel. Not part of the public API. */
extern "C" int oz_gemm_run_layer(const oz_gemm_desc *d, void *workspace, int out_kind, int pass, int prime,
                                 int64_t *out, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    oz_layout L = oz_make_layout(d->m, d->n, d->k);
    oz_gemm_params p = make_params(d, L, (char *)workspace, 0);
    p.out_kind = out_kind;
    p.dbg_pass = pass;
    p.dbg_prime = prime;
    p.dbg_out = out;
    oz_view va = oz_view_a(d), vb = oz_view_b(d);
    OZ_TRY(tile_operands(va, vb, p, 1, s));
    return launch_fused(p, 1, s);
}
#endif

/* Whether the current device runs the sm_90a engine (cached per device). */
static cudaError_t use_engine(bool *yes)
{
    static volatile int known[OZ_HOST_MAX_DEVICES], usable[OZ_HOST_MAX_DEVICES];
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    if (dev < OZ_HOST_MAX_DEVICES && known[dev]) {
        *yes = usable[dev];
        return cudaSuccess;
    }
    *yes = oz_engine_usable(dev);
    if (dev < OZ_HOST_MAX_DEVICES) {
        usable[dev] = *yes;
        known[dev] = 1;
    }
    return cudaSuccess;
}

/* The engine's scratch for a launch over blocks of mpad x npad padded rows
 * (the planner's callback, fused path). */
static int64_t engine_scratch(int64_t mpad, int64_t npad, int64_t group)
{
    return oz_engine_p22_scratch_bytes(oz_engine_p22_tiles(mpad, npad, group));
}

/* The current device's SMs; 0 when it cannot be asked. */
static int device_sms(void)
{
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || device_attr<cudaDevAttrMultiProcessorCount>(dev, &n) != cudaSuccess)
        return 0;
    return n;
}

/* Phase 22 on the engine, fused or unfused (block_plan.h's rule). Sizing
 * and running ask the same question, so they agree. */
static bool p22_unfused(const oz_gemm_desc *d)
{
    if (g_force_p22)
        return g_force_p22 == 2;
    const int64_t tiles = oz_engine_p22_tiles(oz_bp_rup(d->m, OZ_PAD_ROWS_A), oz_bp_rup(d->n, OZ_PAD_ROWS_B),
                                              d->batch);
    return oz_bp_p22_unfused(tiles, device_sms()) != 0;
}

/* The call as the planner sees it (m, n, k, batch >= 1). */
static oz_bp_call engine_call(const oz_gemm_desc *d)
{
    const int c_unread = !d->scalars_on_device && *d->beta == 0.0;
    return p22_unfused(d) ? oz_bp_call_p22_unfused(d->m, d->n, d->k, d->batch, c_unread)
                          : oz_bp_call_p22_fused(d->m, d->n, d->k, d->batch, c_unread, engine_scratch);
}

/* The most the engine path asks for: the bound of block_plan.h, or a test's. */
static int64_t engine_ceiling(const oz_bp_call &c)
{
    return g_force_budget ? (int64_t)g_force_budget : oz_bp_budget(&c);
}

/* The engine path's plan of call c for a workspace of `bytes`; false when none fits. */
static bool engine_plan(const oz_bp_call &c, size_t bytes, oz_bp_plan *p)
{
    return oz_bp_plan_for(&c, oz_bp_budget_of(bytes), (int64_t)g_force_budget, p);
}

/* Phase 22 on the engine, by plan (block_plan.h), batch items in groups: the
 * scales and special flags of whole items; then per block of C and slab of
 * K, the residues of the block's rows of op(A) and columns of op(B) over the
 * slab, and either the engine with the CRT fused, its double accumulators
 * carried from slab to slab (in C or the workspace), or (unfused) per K
 * chunk of the slab the engine's residue planes of the chunk's four passes
 * (6 moduli of [A_hi; A_lo] x [B_hi | B_lo]) and the CRT kernel, which adds
 * them to the double accumulators in the order of phase22.md step 6; then
 * the Inf/NaN fix-up of whole items. Items that fit whole are one block and
 * one slab. */
static cudaError_t run_engine(const oz_gemm_desc *d, char *ws, size_t bytes, cudaStream_t s)
{
    const oz_bp_call call = engine_call(d);
    oz_bp_plan P;
    if (!engine_plan(call, bytes, &P))
        return cudaErrorInvalidValue;
    const bool unfused = call.carry_k > 0; /* the unfused call carries its accumulators across K chunks */
    char *scratch = ws + P.off_scratch;
    const oz_scalars sc = oz_scalars_of(d);
    const oz_view va0 = oz_view_a(d), vb0 = oz_view_b(d);
    /* whole items: scales and flags (no residues here) */
    const oz_operand_ws wa = {ws, P.slot_bytes, 0, P.off_scale_a, P.off_special, P.Mpad, 0, 0};
    const oz_operand_ws wb = {ws, P.slot_bytes, 0, P.off_scale_b, P.off_special + 4, P.Npad, 0, 0};
    unsigned long long *const tickets = (unsigned long long *)(ws + P.off_special + OZ_BP_TICKETS_OFF);
    for (int64_t b0 = 0; b0 < d->batch; b0 += P.group) {
        const int64_t group = d->batch - b0 < P.group ? d->batch - b0 : P.group;
        const oz_view va = oz_view_from(va0, b0), vb = oz_view_from(vb0, b0);
        const oz_out c = oz_out_from(d, b0);
        OZ_TRY(cudaMemset2DAsync(wa.special(0), (size_t)P.slot_bytes, 0, OZ_BP_SPECIAL_USED, (size_t)group, s));
        OZ_TRY(oz_launch_operand_scale(va, wa, group, s));
        OZ_TRY(oz_launch_operand_scale(vb, wb, group, s));
        for (int64_t m0 = 0; m0 < d->m; m0 += P.mb) {
            const int64_t rows = d->m - m0 < P.mb ? d->m - m0 : P.mb;
            for (int64_t n0 = 0; n0 < d->n; n0 += P.nb) {
                const int64_t cols = d->n - n0 < P.nb ? d->n - n0 : P.nb;
                for (int64_t k0 = 0; k0 < d->k; k0 += P.ks) {
                    const int64_t kl = d->k - k0 < P.ks ? d->k - k0 : P.ks;
                    const oz_operand_ws ba = oz_operand_block(wa, 0, m0, rows, OZ_PAD_ROWS_A, kl, OZ_NSLICES);
                    const oz_operand_ws bb = oz_operand_block(wb, P.off_res_b, n0, cols, OZ_PAD_ROWS_B, kl, OZ_NSLICES);
                    OZ_TRY(oz_launch_operand_residues(oz_view_part(va, m0, rows, k0, kl), ba, group, s, true));
                    OZ_TRY(oz_launch_operand_residues(oz_view_part(vb, n0, cols, k0, kl), bb, group, s, true));
                    /* what the fused engine or the CRT kernel adds to, over K [kfrom, kto) */
                    auto target = [&](int64_t kfrom, int64_t kto) {
                        oz_p22_target t = {};
                        t.m = rows;
                        t.n = cols;
                        t.scale_a = ba.scale(0);
                        t.scale_b = bb.scale(0);
                        t.scale_stride_a = t.scale_stride_b = P.slot_bytes / 4;
                        t.c = c;
                        t.c_off = m0 + n0 * d->ldc;
                        if (P.acc_in_c) {
                            t.acc = c;
                            t.acc_off = t.c_off;
                        } else if (P.acc_in_ws) {
                            t.acc = oz_out{(double *)(ws + P.off_acc), nullptr, P.slot_bytes / 8, P.mb};
                        }
                        t.first = kfrom == 0;
                        t.last = kto == d->k;
                        t.sc = sc;
                        return t;
                    };
                    if (!unfused) {
                        const oz_engine_p22_job job = {ba, bb, target(k0, k0 + kl), scratch};
                        OZ_TRY(oz_launch_p22_engine(job, group, s));
                        continue;
                    }
                    for (int64_t c0 = 0; c0 < kl; c0 += OZ_P22_KCHUNK) {
                        const int64_t cl = kl - c0 < OZ_P22_KCHUNK ? kl - c0 : OZ_P22_KCHUNK;
                        oz_engine_residue_job ej = {};
                        ej.a = ba;
                        ej.b = bb;
                        ej.m = ba.plane_rows;
                        ej.n = bb.plane_rows;
                        ej.nmod = OZ_P22G_NMODULI;
                        ej.res = (uint8_t *)(ws + P.off_out);
                        ej.res_item_bytes = P.slot_bytes;
                        ej.tickets = tickets;
                        ej.k_begin = c0;
                        ej.k_len = c0 + cl < kl ? cl : ba.kpad - c0; /* the last chunk to the padded end */
                        OZ_TRY(oz_engine_residues(ej, group, s));
                        const oz_p22_crt_job cj = {ej.res, P.slot_bytes, ba.plane_rows, bb.plane_rows,
                                                   target(k0 + c0, k0 + c0 + cl)};
                        OZ_TRY(oz_launch_p22_crt(cj, group, s));
                    }
                }
            }
        }
        OZ_TRY(oz_launch_special_fixup(va, vb, wa, wb, c, sc, d->m, d->n, group, s));
    }
    return cudaSuccess;
}

/* Workspace bytes of the mma.sync kernels within `budget`: residues of all
 * of K, for all batch items if that fits, else one (their layout is not
 * blocked: on GPUs without the sm_90a engine the workspace is not bounded,
 * a known limitation). */
static size_t mma_bytes(const oz_gemm_desc *d, size_t budget)
{
    const size_t item = (size_t)oz_make_layout(d->m, d->n, d->k).slot_bytes;
    const size_t all = item * (size_t)(d->batch > 1 ? d->batch : 1);
    return all <= budget ? all : item;
}

/* Workspace bytes of the engine: its best plan within `budget` and the
 * bound, or its least need. */
static size_t engine_bytes(const oz_gemm_desc *d, size_t budget)
{
    const oz_bp_call c = engine_call(d);
    return (size_t)oz_bp_bytes_within(&c, engine_ceiling(c), oz_bp_budget_of(budget));
}

/* What the path of the current device needs (only that path is sized). The
 * test build asks for the larger of the two (its tests size the workspace,
 * then may force the mma.sync kernels), and so does a device that cannot be
 * asked (the run then fails with its error). */
static size_t oz_workspace_for(const oz_gemm_desc *d, size_t budget)
{
    if (d->m <= 0 || d->n <= 0 || d->k <= 0 || d->batch <= 0)
        return mma_bytes(d, budget); /* the engine runs none of these */
    bool engine = false;
#ifdef OZ_TEST_HOOKS
    const bool either = true;
#else
    const bool either = use_engine(&engine) != cudaSuccess;
#endif
    if (!either)
        return engine ? engine_bytes(d, budget) : mma_bytes(d, budget);
    const size_t mma = mma_bytes(d, budget), eng = engine_bytes(d, budget);
    return mma > eng ? mma : eng;
}

extern "C" size_t oz_gemm_workspace_min(const oz_gemm_desc *d)
{
    return oz_workspace_for(d, 0);
}

extern "C" size_t oz_gemm_workspace_full(const oz_gemm_desc *d)
{
    return oz_workspace_for(d, SIZE_MAX);
}

extern "C" void oz_gemm_workspace_sizes(const oz_gemm_desc *d, size_t cap, size_t sizes[OZ_GEMM_WS_SIZES])
{
    sizes[0] = oz_workspace_for(d, SIZE_MAX);
    sizes[1] = sizes[0] <= cap ? sizes[0] : oz_workspace_for(d, cap);
    sizes[2] = sizes[1]; /* the most is the bound's plan already */
    sizes[3] = oz_workspace_for(d, 0);
}

#ifdef OZ_TEST_HOOKS
/* Tests only: the engine's plan for d with a workspace of `bytes`, as
 * oz_gemm_run would make it: shape = {mb, nb, ks, group, acc (0 none, 1 in
 * C, 2 in the workspace), plan bytes}. Returns 0, 1 when the current device
 * does not run the engine (oz_gemm_run takes the mma.sync path), -1 when no
 * plan fits or the device cannot be asked. */
extern "C" int oz_gemm_engine_plan(const oz_gemm_desc *d, size_t bytes, int64_t shape[6])
{
    oz_bp_plan p;
    bool engine = false;
    if (d->m <= 0 || d->n <= 0 || d->k <= 0 || d->batch <= 0 || !engine_plan(engine_call(d), bytes, &p) ||
        use_engine(&engine) != cudaSuccess)
        return -1;
    shape[0] = p.mb;
    shape[1] = p.nb;
    shape[2] = p.ks;
    shape[3] = p.group;
    shape[4] = p.acc_in_c ? 1 : p.acc_in_ws ? 2 : 0;
    shape[5] = p.bytes;
    return engine ? 0 : 1;
}
#endif

extern "C" int oz_gemm_run(const oz_gemm_desc *d, void *workspace, size_t workspace_bytes, void *stream)
{
    if (d->m <= 0 || d->n <= 0 || d->batch <= 0)
        return cudaSuccess;
    if (workspace == nullptr)
        return cudaErrorInvalidValue;
    if (d->k > 0 && oz_host_alpha_zero(d)) { /* C = beta C: A and B not read */
        oz_gemm_desc z = *d;
        z.k = 0;
        return oz_gemm_run(&z, workspace, workspace_bytes, stream);
    }
    cudaStream_t s = (cudaStream_t)stream;
    bool engine = false;
    if (d->k > 0 && !g_force_tiles)
        OZ_TRY(use_engine(&engine));
    if (engine)
        return run_engine(d, (char *)workspace, workspace_bytes, s);

    oz_layout L = oz_make_layout(d->m, d->n, d->k);
    int64_t per_group = (int64_t)(workspace_bytes / (size_t)L.slot_bytes);
    if (per_group < 1)
        return cudaErrorInvalidValue;
    if (per_group > 65535)
        per_group = 65535;

    oz_view va0 = oz_view_a(d), vb0 = oz_view_b(d);
    for (int64_t b0 = 0; b0 < d->batch; b0 += per_group) {
        int64_t group = d->batch - b0 < per_group ? d->batch - b0 : per_group;
        oz_gemm_params p = make_params(d, L, (char *)workspace, b0);
        p.out_kind = OZ_OUT_C;
        oz_view va = oz_view_from(va0, b0), vb = oz_view_from(vb0, b0);
        OZ_TRY(tile_operands(va, vb, p, group, s));
        OZ_TRY(launch_fused(p, group, s));
        OZ_TRY(oz_launch_special_fixup(va, vb, p.a, p.b, p.c, p.sc, d->m, d->n, group, s));
    }
    return cudaSuccess;
}
