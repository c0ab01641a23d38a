/* kernels/oz2_residues.cu: an operand's scaled integers a'' = rne(x 2^(w - s)) reduced into the symmetric int8 residue planes of the first N engine moduli (ozaki2.md step 2). */
#include "oz2_params.h"

/* The kernel's tile: OZ2_RT_ROWS rows x OZ2_RT_K k of the padded operand,
 * 256 threads, each OZ2_RT_E consecutive k of one row (one 8-byte store per
 * plane; a warp writes 4 rows x 64 contiguous bytes of each plane). */
#define OZ2_RT_ROWS 32
#define OZ2_RT_K 64
#define OZ2_RT_E 8
#define OZ2_RT_MINB 3 /* blocks per SM: at most 80 registers, no spills (ptxas -v) */
static_assert(OZ2_RT_ROWS * OZ2_RT_K == 256 * OZ2_RT_E, "one tile per block pass");
static_assert(OZ_PAD_K % OZ2_RT_K == 0 && OZ_PAD_ROWS_A % OZ2_RT_ROWS == 0 && OZ_PAD_ROWS_B % OZ2_RT_ROWS == 0,
              "tiles cover the padding");

/* The doubles are staged through shared memory so that the global reads are
 * coalesced along whichever of r or kk is contiguous. Each thread turns its
 * 8 elements into float digits once (crt/oz2.h's oz2_fd_digits: a few
 * double operations), then every modulus costs ND + 1 float operations and
 * one integer multiply-add per element (oz2_fd_residue_bits, m a
 * compile-time constant) and a byte permute;
 * 8 residues go out as one 8-byte word per plane. Padding gets zeros, and
 * so do special (Inf/NaN) rows, which the fix-up kernel computes instead. */
template <int ND>
__global__ void __launch_bounds__(256, OZ2_RT_MINB) oz2_residues_kernel(oz_view v, oz_operand_ws w, int nmod, int wbits)
{
    __shared__ double tile[OZ2_RT_ROWS][OZ2_RT_K + 1]; /* + 1: no bank conflicts on the transposed write */
    const int64_t b = blockIdx.z;
    const double *x = v.ptr(b);
    const int64_t r0 = (int64_t)blockIdx.x * OZ2_RT_ROWS;
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    const int rr = threadIdx.x / (OZ2_RT_K / OZ2_RT_E), kq = (threadIdx.x % (OZ2_RT_K / OZ2_RT_E)) * OZ2_RT_E;
    const int64_t r = r0 + rr;
    const int sc = w.scale(b)[r];
    const bool live = r < v.rows && sc != OZ_SCALE_SPECIAL;
    const oz2_fd_scale fs = oz2_fd_make_scale(live ? wbits - sc : 0, ND);
    const int64_t ktiles = w.kpad / OZ2_RT_K;

    for (int64_t kt = blockIdx.y; kt < ktiles; kt += gridDim.y) {
        const int64_t k0 = kt * OZ2_RT_K;
        __syncthreads(); /* the previous tile is consumed */
        if (v.rs == 1) { /* rows contiguous: lanes along r */
            const int64_t rg = r0 + tx;
#pragma unroll
            for (int i = 0; i < OZ2_RT_K / 8; i++) {
                const int64_t kg = k0 + ty + 8 * i;
                tile[tx][ty + 8 * i] = (rg < v.rows && kg < v.k) ? x[rg + kg * v.ks] : 0.0;
            }
        } else { /* K contiguous: lanes along k */
#pragma unroll
            for (int i = 0; i < OZ2_RT_ROWS / 8 * (OZ2_RT_K / 32); i++) {
                const int row = ty + 8 * (i / (OZ2_RT_K / 32)), kk = tx + 32 * (i % (OZ2_RT_K / 32));
                const int64_t rg = r0 + row, kg = k0 + kk;
                tile[row][kk] = (rg < v.rows && kg < v.k) ? x[rg * v.rs + kg] : 0.0;
            }
        }
        __syncthreads();

        float dig[OZ2_RT_E][OZ2_FD_MAXD];
#pragma unroll
        for (int e = 0; e < OZ2_RT_E; e++)
            oz2_fd_digits(live ? tile[rr][kq + e] : 0.0, &fs, ND, dig[e]);
        int8_t *out = w.plane(b, 0) + r * w.kpad + k0 + kq;
        const int64_t plane_bytes = w.plane_rows * w.kpad;
#define OZ2_RESIDUE_PLANE_(q, m)                                                                 \
        if ((q) < nmod) {                                                                        \
            uint32_t u[OZ2_RT_E];                                                                \
            _Pragma("unroll") for (int e = 0; e < OZ2_RT_E; e++) u[e] = oz2_fd_residue_bits(dig[e], ND, (m)); \
            uint2 word;                                                                          \
            word.x = __byte_perm(__byte_perm(u[0], u[1], 0x0040), __byte_perm(u[2], u[3], 0x0040), 0x5410); \
            word.y = __byte_perm(__byte_perm(u[4], u[5], 0x0040), __byte_perm(u[6], u[7], 0x0040), 0x5410); \
            *(uint2 *)out = word;                                                                \
            out += plane_bytes;                                                                  \
        }
        OZ_ENGINE_MODULI(OZ2_RESIDUE_PLANE_)
#undef OZ2_RESIDUE_PLANE_
    }
}

cudaError_t oz2_launch_residues(const oz_view &v, const oz_operand_ws &w, int nmod, int wbits, int64_t group,
                                cudaStream_t s)
{
    const int64_t ktiles = w.kpad / OZ2_RT_K;
    dim3 grid((unsigned)(w.rows_pad / OZ2_RT_ROWS), (unsigned)(ktiles < 65535 ? (ktiles > 0 ? ktiles : 1) : 65535),
              (unsigned)group);
    switch (oz2_fd_ndigits(wbits)) {
    case 3: oz2_residues_kernel<3><<<grid, 256, 0, s>>>(v, w, nmod, wbits); break;
    case 4: oz2_residues_kernel<4><<<grid, 256, 0, s>>>(v, w, nmod, wbits); break;
    case 5: oz2_residues_kernel<5><<<grid, 256, 0, s>>>(v, w, nmod, wbits); break;
    case 6: oz2_residues_kernel<6><<<grid, 256, 0, s>>>(v, w, nmod, wbits); break;
    default: oz2_residues_kernel<7><<<grid, 256, 0, s>>>(v, w, nmod, wbits); break;
    }
    return cudaGetLastError();
}
