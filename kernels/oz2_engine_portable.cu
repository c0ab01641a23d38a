/* kernels/oz2_engine_portable.cu: the residue engine by plain int8 dot products (dp4a, any sm_61+ GPU), for devices without the sm_90a engine and as the tests' second opinion. */
#include "engine_cfg.h"
#include "oz2_params.h"
#include "res_layout.h"
#include "../crt/oz2_complex.h"

/* Output tile and K step of one block: 32 x 32 residues of one modulus, K in
 * steps of 64 bytes (16 words of 4 int8), 32 x 8 threads, 4 columns each. */
#define OZ2_PE_TILE 32
#define OZ2_PE_KSTEP 64
#define OZ2_PE_KW (OZ2_PE_KSTEP / 4)
static_assert(OZ_PAD_K % OZ2_PE_KSTEP == 0, "K padding is whole steps");
static_assert(OZ_PAD_ROWS_A % OZ2_PE_TILE == 0 && OZ_PAD_ROWS_B % OZ2_PE_TILE == 0, "row padding is whole tiles");
static_assert(oz_engine_res::KCHUNK % OZ2_PE_KSTEP == 0, "K chunks are whole steps");

__device__ __forceinline__ int32_t oz2_pe_modulus(int q, bool split)
{
    if (split) /* plane q: split modulus q / 2 (engine.h) */
        return (int32_t)oz2z_split_mod(q / 2).p;
    switch (q) {
#define OZ2_PE_CASE_(i, m) \
    case (i):              \
        return (m);
        OZ_ENGINE_MODULI(OZ2_PE_CASE_)
#undef OZ2_PE_CASE_
    default:
        return 1;
    }
}

/* blockIdx.z = b * nmod + q. int32 sums over K chunks of oz_engine_res::KCHUNK
 * (|sum| <= 65536 * 128^2 = 2^30: exact), reduced and added modulo m_q. */
__global__ void __launch_bounds__(256) oz2_engine_portable_kernel(const oz_engine_residue_job job)
{
    __shared__ int32_t sa[OZ2_PE_TILE][OZ2_PE_KW + 1], sb[OZ2_PE_TILE][OZ2_PE_KW + 1];
    const int q = (int)(blockIdx.z % job.nmod);
    const int64_t b = blockIdx.z / job.nmod;
    if (job.dev_nmod && q >= *job.dev_nmod) /* the automatic plan keeps fewer moduli */
        return;
    const int tx = threadIdx.x, ty = threadIdx.y, t = ty * 32 + tx;
    const int64_t i0 = (int64_t)blockIdx.x * OZ2_PE_TILE, j0 = (int64_t)blockIdx.y * OZ2_PE_TILE;
    const int8_t *A = job.a.plane(b, q), *B = job.b.plane(b, q);
    const int64_t kpad = job.a.kpad; /* the row stride; K summed: [kb, ke) */
    const int64_t kb = job.k_begin, ke = job.k_len ? kb + job.k_len : kpad;
    const int32_t mq = oz2_pe_modulus(q, job.split);
    uint8_t *plane = job.res + b * job.res_item_bytes + (int64_t)q * job.a.rows_pad * job.b.rows_pad;
    int32_t res[4] = {0, 0, 0, 0}, acc[4] = {0, 0, 0, 0};
    if (job.accumulate) /* an earlier slab's residues */
        for (int jj = 0; jj < 4; jj++)
            res[jj] = plane[oz_res_pos(i0 + tx, j0 + ty + 8 * jj, job.a.rows_pad)];
    for (int64_t k0 = kb; k0 < ke; k0 += OZ2_PE_KSTEP) {
        __syncthreads();
        for (int l = t; l < OZ2_PE_TILE * OZ2_PE_KW; l += 256) { /* 2 words of each operand per thread */
            int row = l / OZ2_PE_KW, kw = l % OZ2_PE_KW;
            sa[row][kw] = *(const int32_t *)(A + (i0 + row) * kpad + k0 + 4 * kw);
            sb[row][kw] = *(const int32_t *)(B + (j0 + row) * kpad + k0 + 4 * kw);
        }
        __syncthreads();
#pragma unroll
        for (int kw = 0; kw < OZ2_PE_KW; kw++) {
            int32_t a = sa[tx][kw];
#pragma unroll
            for (int jj = 0; jj < 4; jj++)
                acc[jj] = __dp4a(a, sb[ty + 8 * jj][kw], acc[jj]);
        }
        const int64_t next = k0 + OZ2_PE_KSTEP;
        if ((next - kb) % oz_engine_res::KCHUNK == 0 || next >= ke) {
            for (int jj = 0; jj < 4; jj++) {
                int32_t r = acc[jj] % mq;
                r += r < 0 ? mq : 0;
                r += res[jj];
                res[jj] = r >= mq ? r - mq : r;
                acc[jj] = 0;
            }
        }
    }
    for (int jj = 0; jj < 4; jj++)
        plane[oz_res_pos(i0 + tx, j0 + ty + 8 * jj, job.a.rows_pad)] = (uint8_t)res[jj];
}

cudaError_t oz2_engine_residues_portable(const oz_engine_residue_job &job, int64_t group, cudaStream_t s)
{
    if (job.nmod < 1 || job.nmod > (job.split ? 2 * OZ2Z_SPLIT_NMODULI : OZ_ENGINE_NMODULI) || job.a.kpad != job.b.kpad || group * job.nmod > 65535 ||
        job.k_begin < 0 || job.k_len < 0 || job.k_begin % OZ2_PE_KSTEP || job.k_len % OZ2_PE_KSTEP ||
        job.k_begin + job.k_len > job.a.kpad)
        return cudaErrorInvalidValue;
    dim3 grid((unsigned)(job.a.rows_pad / OZ2_PE_TILE), (unsigned)(job.b.rows_pad / OZ2_PE_TILE),
              (unsigned)(group * job.nmod));
    if (grid.y > 65535)
        return cudaErrorInvalidValue;
    oz2_engine_portable_kernel<<<grid, dim3(32, 8), 0, s>>>(job);
    return cudaGetLastError();
}
