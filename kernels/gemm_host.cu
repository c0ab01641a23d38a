/* kernels/gemm_host.cu: the host entry points of the GPU Phase 22 path (kernels/ozcrt_gemm.h): workspace sizing and the launch sequence. */
#include "engine.h"
#include "engine_cfg.h"
#include "operand_views.h"
#include "ozcrt_gemm.h"
#include "p22_params.h"

/* The sm_90a engine's workspace: per batch item, the residue planes of
 * OZ_P22G_NMODULI moduli (2 Mpad and 2 Npad logical rows of Kpad), the
 * scales and the special flags; after the items, the engine's per-CTA
 * scratch for the launch. */
struct oz_engine_layout {
    int64_t Mpad, Npad, Kpad, offB, offScaleA, offScaleB, offSpecial, slot_bytes;
};
static oz_engine_layout oz_make_engine_layout(int64_t m, int64_t n, int64_t k)
{
    oz_engine_layout L;
    L.Mpad = oz_round_up(m, OZ_PAD_ROWS_A);
    L.Npad = oz_round_up(n, OZ_PAD_ROWS_B);
    L.Kpad = oz_round_up(k, OZ_PAD_K);
    L.offB = oz_align256(OZ_P22G_NMODULI * 2 * L.Mpad * L.Kpad);
    L.offScaleA = L.offB + oz_align256(OZ_P22G_NMODULI * 2 * L.Npad * L.Kpad);
    L.offScaleB = L.offScaleA + oz_align256(4 * L.Mpad);
    L.offSpecial = L.offScaleB + oz_align256(4 * L.Npad);
    L.slot_bytes = L.offSpecial + 256;
    return L;
}
static size_t oz_engine_bytes(const oz_engine_layout &L, int64_t group)
{
    return (size_t)(L.slot_bytes * group +
                    oz_align256(oz_engine_p22_scratch_bytes(oz_engine_p22_tiles(L.Mpad, L.Npad, group))));
}

/* Either path may run (the device decides): the larger need of the two. */
static size_t oz_workspace_for(const oz_gemm_desc *d, int64_t group)
{
    size_t mma = (size_t)oz_make_layout(d->m, d->n, d->k).slot_bytes * (size_t)group;
    size_t eng = oz_engine_bytes(oz_make_engine_layout(d->m, d->n, d->k), group);
    return mma > eng ? mma : eng;
}

extern "C" size_t oz_gemm_workspace_min(const oz_gemm_desc *d)
{
    return oz_workspace_for(d, 1);
}

extern "C" size_t oz_gemm_workspace_full(const oz_gemm_desc *d)
{
    return oz_workspace_for(d, d->batch > 0 ? d->batch : 1);
}

#ifdef OZ_TEST_HOOKS
/* Tests only (the test build of this library, tests/gpu): 1 forces the
 * mma.sync kernel's small tile configuration, 2 its large one; 0 lets the
 * device decide. The shipped library has none of this. */
static int g_force_tiles;
extern "C" void oz_gemm_force_tiles(int which)
{
    g_force_tiles = which;
}
#else
#define g_force_tiles 0
#endif

/* The fused kernel's parameters for one group. */
static oz_gemm_params make_params(const oz_gemm_desc *d, const oz_layout &L, char *ws, int64_t b0)
{
    oz_gemm_params p = {};
    p.L = L;
    p.a = oz_operand_ws{ws, L.slot_bytes, L.offA, L.offScaleA, L.offSpecial, L.Mpad, L.Kpad, L.Mpad};
    p.b = oz_operand_ws{ws, L.slot_bytes, L.offB, L.offScaleB, L.offSpecial + 4, L.Npad, L.Kpad, L.Npad};
    p.tile_override = g_force_tiles;
    p.c = oz_out{d->C, d->Carray, d->strideC, d->ldc};
    if (p.c.array)
        p.c.array += b0;
    else
        p.c.base += b0 * d->strideC;
    if (d->scalars_on_device) {
        p.sc.alpha_ptr = d->alpha;
        p.sc.beta_ptr = d->beta;
    } else {
        p.sc.alpha = *d->alpha;
        p.sc.beta = *d->beta;
    }
    return p;
}

/* The mma.sync fused kernel for the current device: the large tile
 * configuration where the shared memory allows it, else the small one. The
 * device's answer is cached, so that inside a stream capture nothing but
 * launches is called after the first use. */
#define OZ_HOST_MAX_DEVICES 64
static cudaError_t launch_fused(oz_gemm_params &p, int64_t group, cudaStream_t s)
{
    static volatile int known[OZ_HOST_MAX_DEVICES], optin[OZ_HOST_MAX_DEVICES];
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    int smem;
    if (dev < OZ_HOST_MAX_DEVICES && known[dev]) {
        smem = optin[dev];
    } else {
        e = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
        if (e != cudaSuccess)
            return e;
        if (dev < OZ_HOST_MAX_DEVICES) {
            optin[dev] = smem;
            known[dev] = 1;
        }
    }
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

/* Phase 22 on the engine: residues of both operands in its layout, the
 * engine with the CRT fused, the Inf/NaN fix-up; batch items in groups. */
static cudaError_t run_engine(const oz_gemm_desc *d, char *ws, size_t bytes, cudaStream_t s)
{
    const oz_engine_layout L = oz_make_engine_layout(d->m, d->n, d->k);
    int64_t per_group = d->batch;
    while (per_group > 1 && oz_engine_bytes(L, per_group) > bytes)
        per_group = (per_group + 1) / 2;
    if (oz_engine_bytes(L, per_group) > bytes)
        return cudaErrorInvalidValue;
    if (per_group > 65535)
        per_group = 65535;
    char *scratch = ws + L.slot_bytes * per_group;
    oz_view va0 = oz_view_a(d), vb0 = oz_view_b(d);
    for (int64_t b0 = 0; b0 < d->batch; b0 += per_group) {
        const int64_t group = d->batch - b0 < per_group ? d->batch - b0 : per_group;
        oz_gemm_params p = make_params(d, oz_make_layout(d->m, d->n, d->k), ws, b0); /* c and scalars */
        oz_engine_p22_job job = {};
        job.a = oz_operand_ws{ws, L.slot_bytes, 0, L.offScaleA, L.offSpecial, L.Mpad, L.Kpad, 2 * L.Mpad};
        job.b = oz_operand_ws{ws, L.slot_bytes, L.offB, L.offScaleB, L.offSpecial + 4, L.Npad, L.Kpad, 2 * L.Npad};
        job.m = d->m;
        job.n = d->n;
        job.scale_a = job.a.scale(0);
        job.scale_b = job.b.scale(0);
        job.scale_stride_a = job.scale_stride_b = L.slot_bytes / 4;
        job.c = p.c;
        job.first = job.last = 1;
        job.sc = p.sc;
        job.scratch = scratch;
        oz_view va = oz_view_from(va0, b0), vb = oz_view_from(vb0, b0);
        OZ_TRY(cudaMemset2DAsync(job.a.special(0), (size_t)L.slot_bytes, 0, 8, (size_t)group, s));
        OZ_TRY(oz_launch_operand_scale(va, job.a, group, s));
        OZ_TRY(oz_launch_operand_scale(vb, job.b, group, s));
        OZ_TRY(oz_launch_operand_residues(va, job.a, group, s, true));
        OZ_TRY(oz_launch_operand_residues(vb, job.b, group, s, true));
        OZ_TRY(oz_launch_p22_engine(job, group, s));
        OZ_TRY(oz_launch_special_fixup(va, vb, job.a, job.b, job.c, job.sc, d->m, d->n, group, s));
    }
    return cudaSuccess;
}

extern "C" int oz_gemm_run(const oz_gemm_desc *d, void *workspace, size_t workspace_bytes, void *stream)
{
    if (d->m <= 0 || d->n <= 0 || d->batch <= 0)
        return cudaSuccess;
    if (workspace == nullptr)
        return cudaErrorInvalidValue;
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
