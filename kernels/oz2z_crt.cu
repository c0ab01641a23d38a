/* kernels/oz2z_crt.cu: the complex ozaki2 CRT and epilogue: the split products' residues (U_q, V_q) per element -> exact X_re and X_im, RN to double, ldexp(s + t - 2w), the complex alpha/beta epilogue (docs/ozaki2-complex.md steps 3-5). */
#include "cp_async.cuh"
#include "epilogue.cuh"
#include "oz2_params.h"
#include "res_layout.h"
#include "../crt/oz2_complex.h"

/* The layout is the real kernel's (kernels/oz2_crt.cu): a thread per word w
 * of one column pair J of the planes, four elements (rows r0, r0 + 8 of
 * columns 2 J, 2 J + 1), now 2 N planes: U_q of split modulus q at plane
 * 2 q, V_q at 2 q + 1. Per modulus and element, s = U + V and d = U - V
 * modulo p_q (oz2z_unsplit_sums: a compare and a subtraction each; the
 * divisions by 2 and 2r are in the parts' CRT multipliers,
 * oz2z_crt_init_parts), then the fast CRT of crt/oz2.h for each part (one
 * FP64 FMA per modulus and 36-bit limb), falling back to the exact
 * reconstruction where it cannot decide the fold. Elements of special
 * rows/columns are left to the Inf/NaN fix-up. */
struct oz2z_crt_tabs {
    oz2z_crt_consts cre, cim; /* the exact CRT of s (X_re) and of d (X_im) */
    oz2_crt_fast fre, fim;
};

/* The fallback (X near +-(P-1)/2, never for typical data): part 0 from
 * s_q, part 1 from d_q, rebuilt from the planes' bytes. */
static __device__ __noinline__ double oz2z_crt_slow(const oz2z_crt_consts &cc, const uint8_t *r, int64_t plane,
                                                    int part)
{
    uint8_t sd[OZ2Z_SPLIT_NMODULI];
    for (int q = 0; q < cc.n; q++) {
        uint32_t s, d;
        oz2z_unsplit_sums(r[2 * q * plane], r[(2 * q + 1) * plane], cc.m[q], &s, &d);
        sd[q] = (uint8_t)(part ? d : s);
    }
    oz2_uint m;
    const int neg = oz2z_crt_reconstruct(&cc, sd, 1, &m);
    const oz2_u192 mag = oz2_u192_of(&m);
    return oz2_to_double3(&mag, neg, 0);
}

template <int N>
__global__ void __launch_bounds__(256, 2)
oz2z_crt_kernel(const __grid_constant__ oz2z_crt_tabs t, const oz2z_crt_job job)
{
    constexpr int E = 4, NL = OZ2Z_CF_LIMBS(N);
    const oz2_crt_job &jb = job.base;
    if (jb.plan && jb.plan->n != N) /* the automatic plan chose another N' (or none) */
        return;
    const int wbits = jb.plan ? jb.plan->w : jb.w;
    const int64_t b = blockIdx.z;
    const int64_t w = (int64_t)blockIdx.x * 32 + threadIdx.x;
    const char *slot = jb.ws + b * jb.slot_bytes;
    const int64_t row[2] = {oz_res_word_row(w), oz_res_word_row(w) + 8};
    const int32_t *scale_a = (const int32_t *)(slot + jb.off_scale_a);
    const int32_t *scale_b = (const int32_t *)(slot + jb.off_scale_b);
    const int32_t sa[2] = {scale_a[row[0]], scale_a[row[1]]};
    const uint8_t *res = (const uint8_t *)(slot + jb.off_res);
    const int64_t plane = jb.Mpad * jb.Npad;
    double *C = jb.c.ptr(b) + 2 * jb.c_off;
    double2 alpha, beta;
    job.zsc.load(&alpha, &beta);
    for (int64_t J = (int64_t)blockIdx.y * 8 + threadIdx.y; 2 * J < jb.n; J += (int64_t)gridDim.y * 8) {
        const int64_t col[2] = {2 * J, 2 * J + 1};
        if (jb.vanish) {
#pragma unroll
            for (int e = 0; e < E; e++)
                if (row[e & 1] < jb.m && col[e >> 1] < jb.n)
                    oz_store_zepilogue(&C[2 * (col[e >> 1] * jb.c.ldc + row[e & 1])], alpha, beta,
                                       make_double2(0.0, 0.0), true);
            continue;
        }
        const int32_t tb[2] = {scale_b[col[0]], scale_b[col[1]]};
        if (tb[0] == OZ_SCALE_SPECIAL && tb[1] == OZ_SCALE_SPECIAL)
            continue;
        const uint8_t *rw = res + J * 2 * jb.Mpad + 4 * w;
        const int64_t Jn = J + (int64_t)gridDim.y * 8; /* the next pair's lines into L2, a lane a plane */
        if (threadIdx.x < 2 * N && 2 * Jn < jb.n)
            oz_prefetch_l2(res + Jn * 2 * jb.Mpad + 128 * (int64_t)blockIdx.x + threadIdx.x * plane);
        double ar[E][OZ2_CF_MAXL], ai[E][OZ2_CF_MAXL];
#pragma unroll
        for (int e = 0; e < E; e++) {
            oz2_cf_start(&t.fre, NL, ar[e]);
            oz2_cf_start(&t.fim, NL, ai[e]);
        }
#pragma unroll
        for (int q = 0; q < N; q++) {
            const uint32_t wu = *(const uint32_t *)(rw + 2 * q * plane), wv = *(const uint32_t *)(rw + (2 * q + 1) * plane);
            const uint32_t p = t.cre.m[q];
            double Rs[E], Rd[E];
#pragma unroll
            for (int e = 0; e < E; e++) {
                uint32_t s, d;
                oz2z_unsplit_sums((wu >> (8 * e)) & 0xffu, (wv >> (8 * e)) & 0xffu, p, &s, &d);
                Rs[e] = oz2_cf_residue(s, 0);
                Rd[e] = oz2_cf_residue(d, 0);
            }
#pragma unroll
            for (int l = 0; l < NL; l++) {
                const double Fr = t.fre.F[q][l], Fi = t.fim.F[q][l];
#pragma unroll
                for (int e = 0; e < E; e++) {
                    ar[e][l] = OZ2_DFMA_(Rs[e], Fr, ar[e][l]);
                    ai[e][l] = OZ2_DFMA_(Rd[e], Fi, ai[e][l]);
                }
            }
        }
        int fr[E], fi[E];
#pragma unroll
        for (int e = 0; e < E; e++) {
            fr[e] = oz2_cf_fold_limbs(&t.fre, NL, ar[e]);
            fi[e] = oz2_cf_fold_limbs(&t.fim, NL, ai[e]);
        }
#pragma unroll
        for (int e = 0; e < E; e++) { /* byte e: row 8 (e % 2), column e / 2 of the pair */
            const int s = e & 1, c = e >> 1;
            if (row[s] >= jb.m || col[c] >= jb.n || sa[s] == OZ_SCALE_SPECIAL || tb[c] == OZ_SCALE_SPECIAL)
                continue;
            const double xr = fr[e] < 0 ? oz2z_crt_slow(t.cre, rw + e, plane, 0) : oz2_cf_limbs_rn(ar[e], NL);
            const double xi = fi[e] < 0 ? oz2z_crt_slow(t.cim, rw + e, plane, 1) : oz2_cf_limbs_rn(ai[e], NL);
            const int sh = sa[s] + tb[c] - 2 * wbits;
            const double2 P = make_double2(xr == 0.0 ? 0.0 : oz2_ldexp_normal(xr, sh),
                                           xi == 0.0 ? 0.0 : oz2_ldexp_normal(xi, sh));
            oz_store_zepilogue(&C[2 * (col[c] * jb.c.ldc + row[s])], alpha, beta, P, false);
        }
    }
}

/* The tables of every N', made once. */
static const oz2z_crt_tabs &oz2z_tables(int n)
{
    static const oz2z_crt_tabs *all = [] {
        oz2z_crt_tabs *x = new oz2z_crt_tabs[OZ2Z_SPLIT_NMODULI + 1]();
        for (int k = OZ2Z_MIN_SPLIT; k <= OZ2Z_SPLIT_NMODULI; k++) {
            oz2z_crt_init_parts(&x[k].cre, &x[k].cim, k);
            oz2z_crt_fast_init(&x[k].fre, &x[k].cre);
            oz2z_crt_fast_init(&x[k].fim, &x[k].cim);
        }
        return x;
    }();
    return all[n];
}

static cudaError_t oz2z_launch_crt_n(const oz2z_crt_job &job, int nsplit, dim3 grid, dim3 block, cudaStream_t s)
{
    const oz2z_crt_tabs &t = oz2z_tables(nsplit);
    switch (nsplit) {
#define OZ2Z_CRT_CASE_(q, p, r, inv2r)                                                             \
    case (q) + 1:                                                                                  \
        if ((q) + 1 < OZ2Z_MIN_SPLIT)                                                              \
            return cudaErrorInvalidValue;                                                          \
        oz2z_crt_kernel<((q) + 1 >= OZ2Z_MIN_SPLIT ? (q) + 1 : OZ2Z_MIN_SPLIT)><<<grid, block, 0, s>>>(t, job); \
        break;
        OZ2Z_SPLIT_MODULI(OZ2Z_CRT_CASE_)
#undef OZ2Z_CRT_CASE_
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

cudaError_t oz2z_launch_crt(const oz2z_crt_job &job, int nsplit, int64_t group, cudaStream_t s)
{
    if (nsplit < OZ2Z_MIN_SPLIT || nsplit > OZ2Z_SPLIT_NMODULI)
        return cudaErrorInvalidValue;
    const oz2_crt_job &jb = job.base;
    const dim3 grid = oz2_crt_grid(jb.m, jb.n, group, jb.plan != nullptr);
    const dim3 block(32, 8);
    if (jb.plan) { /* N' on the device: every N' kernel, all but the plan's return at once */
        for (int n = OZ2Z_MIN_SPLIT; n <= OZ2Z_SPLIT_NMODULI; n++) {
            const cudaError_t e = oz2z_launch_crt_n(job, n, grid, block, s);
            if (e != cudaSuccess)
                return e;
        }
        return cudaSuccess;
    }
    return oz2z_launch_crt_n(job, nsplit, grid, block, s);
}
