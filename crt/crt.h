/* crt/crt.h: modular reduction and CRT reconstruction, plain C for host and device.
 *
 * Reconstruction of one dot product X from its residues r_p in [0, p):
 *   sum = sum_p r_p * f_p          (< count * max_p * M < 2^63: exact in uint64)
 *   X   = sum mod M                (oz_crt_reduce)
 *   X   = X > M/2 ? X - M : X      (oz_crt_fold; signed, in (-M/2, M/2])
 * X is the exact integer dot product whenever that lies in (-M/2, M/2]. */
#ifndef OZCRT_CRT_CRT_H
#define OZCRT_CRT_CRT_H

#include <stdint.h>
#include "moduli.h"
#include "oz_hd.h"

/* x mod p in [0, p) for any int32 x, by a multiply-high (Barrett) reduction.
 * mu = floor(2^32 / p). q = floor(x * mu / 2^32) is floor(x / p) or one off
 * (below for x >= 0, above for x < 0), so one correction each way suffices. */
OZ_HD int32_t oz_mod_p(int32_t x, int32_t p, uint32_t mu)
{
    int32_t q = (int32_t)(((int64_t)x * (int64_t)mu) >> 32);
    /* x - q*p can leave int32 for x near INT32_MIN before the correction:
     * computed modulo 2^32 (no signed overflow), it is exact in [-p, 2p). */
    int32_t r = (int32_t)((uint32_t)x - (uint32_t)q * (uint32_t)p);
    r += (r < 0) ? p : 0;
    r -= (r >= p) ? p : 0;
    return r;
}

/* The INT8 engine's reduction of its int32 accumulators (kernels/
 * sm90_engine.cu), for any modulus 2 < m <= 256 that is not a power of two
 * (the engine's and the split moduli; 256 reduces by its low byte, which
 * this also gives: see below). A (tile, K chunk, modulus)'s accumulators
 * start at OZ_ACC_OFFSET(m), the largest multiple of m below 2^30 (>= 2^30 -
 * 256), instead of 0: the chunk's exact sum x of products of residues in
 * [-128, 127] over at most 65536 terms lies in [-(2^30 - 2^23), 2^30], so
 * y = offset + x is in [0, 2^31) (no int32 overflow, never negative) and
 * y == x (mod m). With j = OZ_ACC_J(m) (2^(j-1) < m <= 2^j) and
 * M = OZ_ACC_MAGIC(m) = ceil(2^(31+j) / m) (below 2^32: m > 2^(j-1)),
 *     y mod m = y - floor(y M / 2^(31+j)) m        exactly:
 * y M / 2^(31+j) = y / m + y e 2^-(31+j) with 0 <= e < 1, the second term
 * below 2^-j <= 1/m, and y/m's fraction at most (m - 1)/m, so the floor is
 * floor(y / m). On the GPU: a multiply-high, a shift by j - 1
 * (OZ_ACC_SHIFT), a multiply-add. For m = 256 (j = 8, M = 2^31) it is the
 * low byte, as well. */
#define OZ_ACC_OFFSET(m) ((uint32_t)((((UINT32_C(1) << 30) - 1) / (uint32_t)(m)) * (uint32_t)(m)))
#define OZ_ACC_J(m) ((m) <= 4 ? 2 : (m) <= 8 ? 3 : (m) <= 16 ? 4 : (m) <= 32 ? 5 : (m) <= 64 ? 6 : (m) <= 128 ? 7 : 8)
#define OZ_ACC_SHIFT(m) (OZ_ACC_J(m) - 1)
#define OZ_ACC_MAGIC(m) ((uint32_t)(((UINT64_C(1) << (31 + OZ_ACC_J(m))) + (uint64_t)(m) - 1) / (uint64_t)(m)))
/* neg_m = 2^32 - m: y - q m as one multiply-add modulo 2^32 (y + q neg_m),
 * no negation of q; shift = OZ_ACC_SHIFT(m) */
OZ_HD uint32_t oz_acc_mod(uint32_t y, uint32_t neg_m, uint32_t magic, uint32_t shift)
{
#ifdef __CUDA_ARCH__
    const uint32_t q = __umulhi(y, magic) >> shift;
#else
    const uint32_t q = (uint32_t)((((uint64_t)y * magic) >> 32) >> shift);
#endif
    return y + q * neg_m;
}

/* sum mod M for sum < 2^63 and M < 2^53. The quotient estimate through a
 * double (a multiplication by 1/M, which the compiler folds for a constant
 * M: no division in the kernel) is off by at most one either way; the
 * correction makes it exact. */
OZ_HD uint64_t oz_crt_reduce(uint64_t sum, uint64_t M)
{
    uint64_t q = (uint64_t)((double)sum * (1.0 / (double)M));
    int64_t r = (int64_t)(sum - q * M);
    if (r < 0)
        r += (int64_t)M;
    if (r >= (int64_t)M)
        r -= (int64_t)M;
    return (uint64_t)r;
}

/* The signed representative in (-M/2, M/2] of x in [0, M), M odd. */
OZ_HD int64_t oz_crt_fold(uint64_t x, uint64_t M)
{
    return x > M / 2 ? (int64_t)x - (int64_t)M : (int64_t)x;
}

/* The GPU Phase 22 set (OZ_P22G_MODULI): X, the signed representative of
 * S = sum r_q f_q (r_q in [0, m_q)) modulo M', as an exact double, for the
 * X of a chunk: |X| <= 2^46 (phase22.md step 3; M'/2 is 2^46.8). No
 * int<->float conversion instruction (a quarter of the rate of plain
 * arithmetic on the GPU, with long latency):
 *  - q = rint(S / M'): S / M' lies within 2^46 / M' < 0.29 of the integer
 *    q. From the top bits: hi = S >> 36 < 2^23 (S < 6 * 256 * M' < 2^59) is
 *    an exact float by the 2^23 magic; hi * fl(2^36 / M') differs from
 *    S / M' by less than 2^-11.8 + 2^-12; adding 1.5 * 2^23 rounds it to the
 *    nearest integer in the low mantissa bits: q.
 *  - X = S - q M' in 64-bit integers (|X| <= 2^46);
 *  - X as a double: 1.5 * 2^52 + X is exact by its bits (|X| < 2^51), and
 *    subtracting 1.5 * 2^52 again is exact. */
OZ_HD double oz_p22g_centered(uint64_t S)
{
    const float c = (float)(68719476736.0 / (double)OZ_P22G_M); /* 2^36 / M' */
    const float hi = oz_bits_f32(0x4B000000u | (uint32_t)(S >> 36)) - 8388608.0f;
    const float qf = hi * c + 12582912.0f;
    const uint64_t q = (uint64_t)(oz_f32_bits(qf) - 0x4B400000u);
    const uint64_t x = S - q * OZ_P22G_M; /* X modulo 2^64 */
    return oz_bits_f64(UINT64_C(0x4338000000000000) + x) - 6755399441055744.0;
}

#endif
