/* kernels/oz2_crt.cu: the ozaki2 CRT and epilogue: N residue bytes per element -> exact X, signed fold, RN to double, ldexp(s + t - 2w), alpha/beta (ozaki2.md steps 3-4). */
#include "cp_async.cuh"
#include "epilogue.cuh"
#include "oz2_params.h"
#include "res_layout.h"

#define OZ2_CRT_E 4 /* the elements of one 32-bit word of a residue plane per thread */
/* A thread per word w of one column pair J of the residue planes: rows r0 =
 * oz_res_word_row(w) and r0 + 8 of columns 2 J and 2 J + 1, byte 2 c + s
 * the element of row r0 + 8 s, column 2 J + c (kernels/res_layout.h; a
 * warp's 32 words are 64 rows of the pair, 128 bytes a plane, coalesced).
 * X by crt/oz2.h's fast CRT (oz2_cf_*: one FP64 FMA per modulus and 36-bit
 * limb, N and the limb count compile-time, the constants in parameter
 * space) and RN(X) from its limbs in floating point (oz2_cf_limbs_rn: no
 * packing into 64-bit words, no integer conversion), falling back to
 * oz2_crt_reconstruct and oz2_to_double3 where the fast path cannot decide
 * the fold; the same bits either way. Elements of special
 * rows/columns are left to the Inf/NaN fix-up, which runs after this kernel
 * on the same stream. */
/* The fallback (X within about 2^-30 P of +-P/2, never for typical data):
 * the exact reconstruction and its conversion, out of line so that the
 * fast path's registers are not planned around it. */
static __device__ __noinline__ double oz2_crt_slow(const oz2_crt_consts &cc, const uint8_t *r, int64_t plane)
{
    oz2_uint m;
    const int neg = oz2_crt_reconstruct(&cc, r, plane, &m);
    const oz2_u192 mag = oz2_u192_of(&m);
    return oz2_to_double3(&mag, neg, 0); /* RN(X), signed: X < 2^157, no scaling */
}

template <int N>
__global__ void __launch_bounds__(256, 3) /* 3 blocks an SM (80 registers; a few spills from N = 13 on): 1.19 -> 1.05 ms at 8192^3 N = 16 against 2 blocks without spills (run 56) */
oz2_crt_kernel(const __grid_constant__ oz2_crt_consts cc,
                                                      const __grid_constant__ oz2_crt_fast cf, const oz2_crt_job job)
{
    static_assert(OZ2_CRT_E == 4, "a word: two rows of two columns");
    constexpr int NL = OZ2_CF_LIMBS(N);
    if (job.plan && job.plan->n != N && /* the automatic plan chose another N (or none) */
        !(N == OZ2_MIN_MODULI && job.plan->n > N && job.plan->n < job.nlo)) /* N = 2 serves plans below nlo (X = 0) */
        return;
    const int wbits = job.plan ? job.plan->w : job.w;
    const int64_t b = blockIdx.z;
    const int64_t w = (int64_t)blockIdx.x * 32 + threadIdx.x; /* word of a column pair */
    const char *slot = job.ws + b * job.slot_bytes;
    const int64_t row[2] = {oz_res_word_row(w), oz_res_word_row(w) + 8}; /* < Mpad: the grid covers m */
    const int32_t *scale_a = (const int32_t *)(slot + job.off_scale_a);
    const int32_t *scale_b = (const int32_t *)(slot + job.off_scale_b);
    const int32_t sa[2] = {scale_a[row[0]], scale_a[row[1]]};
    const uint8_t *res = (const uint8_t *)(slot + job.off_res);
    const int64_t plane = job.Mpad * job.Npad;
    double *C = job.c.ptr(b) + job.c_off;
    double alpha, beta;
    job.sc.load(&alpha, &beta);
    for (int64_t J = (int64_t)blockIdx.y * 8 + threadIdx.y; 2 * J < job.n; J += (int64_t)gridDim.y * 8) {
        const int64_t col[2] = {2 * J, 2 * J + 1};
        if (job.vanish) {
#pragma unroll
            for (int e = 0; e < OZ2_CRT_E; e++)
                if (row[e & 1] < job.m && col[e >> 1] < job.n)
                    oz_store_epilogue(&C[col[e >> 1] * job.c.ldc + row[e & 1]], alpha, beta, 0.0, true);
            continue;
        }
        const int32_t t[2] = {scale_b[col[0]], scale_b[col[1]]}; /* col[1] < Npad (even) */
        if (t[0] == OZ_SCALE_SPECIAL && t[1] == OZ_SCALE_SPECIAL)
            continue;
        const uint8_t *rw = res + J * 2 * job.Mpad + 4 * w;
        uint32_t word[N];
#pragma unroll
        for (int q = 0; q < N; q++)
            word[q] = *(const uint32_t *)(rw + q * plane);
        /* the warp's next column pair into L2 while this one computes: lane
         * q < N its 128-byte line of plane q (ncu, session 16: -2.4% of
         * the kernel's cycles at 8192^3 and 16384^3; into L1 the same, two
         * pairs ahead or cp.async into shared memory less) */
        const int64_t Jn = J + (int64_t)gridDim.y * 8;
        if (threadIdx.x < N && 2 * Jn < job.n)
            oz_prefetch_l2(res + Jn * 2 * job.Mpad + 128 * (int64_t)blockIdx.x + threadIdx.x * plane);
        /* the four elements' limb sums side by side: each constant F[q][l]
         * (a uniform-register load on sm_90) serves four FMAs; every
         * element's sums see the same operations in the same order as alone */
        double acc[OZ2_CRT_E][OZ2_CF_MAXL];
#pragma unroll
        for (int e = 0; e < OZ2_CRT_E; e++)
            oz2_cf_start(&cf, NL, acc[e]);
#pragma unroll
        for (int q = 0; q < N; q++) {
            double R[OZ2_CRT_E];
#pragma unroll
            for (int e = 0; e < OZ2_CRT_E; e++)
                R[e] = oz2_cf_residue(word[q], e);
#pragma unroll
            for (int l = 0; l < NL; l++) {
                const double F = cf.F[q][l];
#pragma unroll
                for (int e = 0; e < OZ2_CRT_E; e++)
                    acc[e][l] = OZ2_DFMA_(R[e], F, acc[e][l]);
            }
        }
        /* the four folds side by side (branch-free: their FP64 chains
         * interleave), then each element's rounding and store */
        int fold[OZ2_CRT_E];
#pragma unroll
        for (int e = 0; e < OZ2_CRT_E; e++)
            fold[e] = oz2_cf_fold_limbs(&cf, NL, acc[e]);
#pragma unroll
        for (int e = 0; e < OZ2_CRT_E; e++) { /* byte e: row 8 (e % 2), column e / 2 of the pair */
            const int s = e & 1, c = e >> 1;
            if (row[s] >= job.m || col[c] >= job.n || sa[s] == OZ_SCALE_SPECIAL || t[c] == OZ_SCALE_SPECIAL)
                continue;
            const double x = fold[e] < 0 ? oz2_crt_slow(cc, rw + e, plane) /* X near +-P/2: the exact reference decides */
                                         : oz2_cf_limbs_rn(acc[e], NL);    /* RN(X): from the signed limbs in floating point */
            const double P = x == 0.0 ? 0.0 : oz2_ldexp_normal(x, sa[s] + t[c] - 2 * wbits);
            oz_store_epilogue(&C[col[c] * job.c.ldc + row[s]], alpha, beta, P, false);
        }
    }
}

/* The constants of every N, made once (the automatic plan launches them all). */
struct oz2_crt_tables {
    oz2_crt_consts cc[OZ2_MAX_MODULI + 1];
    oz2_crt_fast cf[OZ2_MAX_MODULI + 1];
};
static const oz2_crt_tables &oz2_tables()
{
    static const oz2_crt_tables *t = [] {
        oz2_crt_tables *x = new oz2_crt_tables();
        for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; n++) {
            oz2_crt_init(&x->cc[n], n);
            oz2_crt_fast_init(&x->cf[n], &x->cc[n]);
        }
        return x;
    }();
    return *t;
}

static cudaError_t oz2_launch_crt_n(const oz2_crt_consts &cc, const oz2_crt_fast &cf, const oz2_crt_job &job,
                                    dim3 grid, dim3 block, cudaStream_t s);

cudaError_t oz2_launch_crt(const oz2_crt_consts &cc, const oz2_crt_job &job, int64_t group, cudaStream_t s)
{
    const dim3 grid = oz2_crt_grid(job.m, job.n, group, job.plan != nullptr);
    const dim3 block(32, 8);
    if (job.plan) { /* N on the device: every N's kernel from nlo (and 2's), all but the plan's return at once */
        const oz2_crt_tables &t = oz2_tables();
        for (int n = OZ2_MIN_MODULI; n <= OZ2_MAX_MODULI; n = n == OZ2_MIN_MODULI && job.nlo > n + 1 ? job.nlo : n + 1) {
            const cudaError_t e = oz2_launch_crt_n(t.cc[n], t.cf[n], job, grid, block, s);
            if (e != cudaSuccess)
                return e;
        }
        return cudaSuccess;
    }
    oz2_crt_fast cf;
    oz2_crt_fast_init(&cf, &cc);
    return oz2_launch_crt_n(cc, cf, job, grid, block, s);
}

static cudaError_t oz2_launch_crt_n(const oz2_crt_consts &cc, const oz2_crt_fast &cf, const oz2_crt_job &job,
                                    dim3 grid, dim3 block, cudaStream_t s)
{
    switch (cc.n) {
#define OZ2_CRT_CASE_(q, m)                                                                                  \
    case (q) + 1:                                                                                            \
        if ((q) + 1 < OZ2_MIN_MODULI)                                                                        \
            return cudaErrorInvalidValue;                                                                    \
        oz2_crt_kernel<((q) + 1 >= OZ2_MIN_MODULI ? (q) + 1 : OZ2_MIN_MODULI)><<<grid, block, 0, s>>>(cc, cf, job); \
        break;
        OZ_ENGINE_MODULI(OZ2_CRT_CASE_)
#undef OZ2_CRT_CASE_
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}
