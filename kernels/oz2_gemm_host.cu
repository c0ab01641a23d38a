/* kernels/oz2_gemm_host.cu: the host entry points of the GPU ozaki2 path (kernels/oz2_gemm.h): plan, workspace sizing and the launch sequence. */
#include "oz2_gemm.h"
#include "operand_views.h"
#include "oz2_params.h"

extern "C" int oz2_gemm_moduli(int64_t k, int bits, int *w)
{
    oz2_plan p = oz2_make_plan(k, bits);
    if (w)
        *w = p.w;
    return p.n;
}

static oz2_layout oz2_layout_of(const oz_gemm_desc *d, int bits)
{
    return oz2_make_layout(d->m, d->n, d->k, oz2_make_plan(d->k, bits));
}

extern "C" size_t oz2_gemm_workspace_min(const oz_gemm_desc *d, int bits)
{
    oz2_layout L = oz2_layout_of(d, bits);
    return L.plan.n ? (size_t)L.slot_bytes : 0;
}

extern "C" size_t oz2_gemm_workspace_full(const oz_gemm_desc *d, int bits)
{
    return oz2_gemm_workspace_min(d, bits) * (size_t)(d->batch > 0 ? d->batch : 1);
}

#ifdef OZ_TEST_HOOKS /* tests only: 1 the portable engine, 2 the sm_90a one, 0 the device's */
static int g_force_engine;
extern "C" void oz2_gemm_force_engine(int which)
{
    g_force_engine = which;
}
#else
static const int g_force_engine = 0;
#endif

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

extern "C" int oz2_gemm_layout(const oz_gemm_desc *d, int bits, oz2_gemm_layout_info *out)
{
    const oz2_layout L = oz2_layout_of(d, bits);
    if (L.plan.n == 0)
        return cudaErrorInvalidValue;
    *out = oz2_gemm_layout_info{L.plan.n, L.plan.w, L.Mpad, L.Npad, L.Kpad, L.offA, L.offB, L.offScaleA, L.offScaleB,
                                L.offSpecial, L.offRes, L.slot_bytes};
    return cudaSuccess;
}

/* The launch sequence; stage 0 runs it all, 1 stops after the residue
 * planes, 2 after the engine's R_q planes (layer tests). */
static int oz2_run(const oz_gemm_desc *d, int bits, void *workspace, size_t workspace_bytes, void *stream, int stage)
{
    if (d->m <= 0 || d->n <= 0 || d->batch <= 0)
        return cudaSuccess;
    cudaStream_t s = (cudaStream_t)stream;
    const oz2_layout L = oz2_layout_of(d, bits);
    if (L.plan.n == 0 || workspace == nullptr)
        return cudaErrorInvalidValue;
    bool sm90 = false;
    OZ2_TRY(oz2_use_sm90_engine(&sm90));
    int64_t per_group = (int64_t)(workspace_bytes / (size_t)L.slot_bytes);
    const int64_t max_group = sm90 ? 65535 : 65535 / L.plan.n; /* grid z limits */
    if (per_group < 1)
        return cudaErrorInvalidValue;
    if (per_group > max_group)
        per_group = max_group;

    oz2_crt_consts cc;
    oz2_crt_init(&cc, L.plan.n);
    char *ws = (char *)workspace;
    const oz_operand_ws wa = {ws, L.slot_bytes, L.offA, L.offScaleA, L.offSpecial, L.Mpad, L.Kpad, L.Mpad};
    const oz_operand_ws wb = {ws, L.slot_bytes, L.offB, L.offScaleB, L.offSpecial + 4, L.Npad, L.Kpad, L.Npad};
    const oz_view va0 = oz_view_a(d), vb0 = oz_view_b(d);
    const oz_scalars sc = oz_scalars_of(d);

    for (int64_t b0 = 0; b0 < d->batch; b0 += per_group) {
        const int64_t group = d->batch - b0 < per_group ? d->batch - b0 : per_group;
        const oz_view va = oz_view_from(va0, b0), vb = oz_view_from(vb0, b0);
        const oz_out c = oz_out_from(d, b0);
        oz2_crt_job job = {ws, L.slot_bytes, L.offScaleA, L.offScaleB, L.offRes, L.Mpad, L.Npad, d->m, d->n,
                           L.plan.w, d->k == 0, c, sc};
        if (d->k > 0) {
            /* the special flags of A and B, one word each, in every item's slot */
            OZ2_TRY(cudaMemset2DAsync(wa.special(0), (size_t)L.slot_bytes, 0, 8, (size_t)group, s));
            OZ2_TRY(oz_launch_operand_scale(va, wa, group, s));
            OZ2_TRY(oz_launch_operand_scale(vb, wb, group, s));
            OZ2_TRY(oz2_launch_residues(va, wa, L.plan.n, L.plan.w, group, s));
            OZ2_TRY(oz2_launch_residues(vb, wb, L.plan.n, L.plan.w, group, s));
            if (stage == 1)
                continue;
            oz_engine_residue_job ej = {wa, wb, d->m, d->n, L.plan.n, (uint8_t *)(ws + L.offRes), L.slot_bytes};
            OZ2_TRY(sm90 ? oz_engine_residues(ej, group, s) : oz2_engine_residues_portable(ej, group, s));
        }
        if (stage != 0)
            continue;
        OZ2_TRY(oz2_launch_crt(cc, job, group, s));
        if (d->k > 0)
            OZ2_TRY(oz_launch_special_fixup(va, vb, wa, wb, c, sc, d->m, d->n, group, s));
    }
    return cudaSuccess;
}

extern "C" int oz2_gemm_run(const oz_gemm_desc *d, int bits, void *workspace, size_t workspace_bytes, void *stream)
{
    return oz2_run(d, bits, workspace, workspace_bytes, stream, 0);
}

#ifdef OZ_TEST_HOOKS
extern "C" int oz2_gemm_run_stage(const oz_gemm_desc *d, int bits, void *workspace, size_t workspace_bytes,
                                  int stage, void *stream)
{
    return oz2_run(d, bits, workspace, workspace_bytes, stream, stage);
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
