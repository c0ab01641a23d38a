/* interpose/speed_model.h: the ozaki2 mode's predicted speed-up over native DGEMM, from which the router forwards calls emulation would slow down (plain C, host only).
 *
 * A four-term model of the emulated call and a two-term model of native
 * DGEMM, fitted (least squares, relative error) to the H200 size sweep of
 * BENCHMARKS.md (session 7, call 8: 21 shapes from 1024^3 to 16384^3, short
 * and long K, tall and wide, bits 53 and 34, and the full check's 8192^3
 * and 16384^3): it predicts the measured emulated time within 10% on every
 * shape (most within 5%; 16384^3, at the chip's power cap, 8%), native's
 * within 11%, and the sign of the speed-up on 44 of 46 points (the two
 * misses are within 7% of 1); tests/unit/test_speed_model.c holds it to
 * that. Milliseconds:
 *   emulated ~ t0 + batch N (e m n k + c m n + d (m + n) k)
 *            (the engine's N INT8 GEMMs, the per-element CRT and epilogue,
 *            the operands' scaling and residues)
 *   native   ~ t0' + batch f m n k
 * The numbers are the H200's; on other GPUs the model is only a guide (the
 * thresholds and OZCRT_MIN_SPEEDUP still apply).
 *
 * Complex calls (ZGEMM, ozcrt_oz2z_speedup) are predicted from the same
 * constants, not from measurements of their own: PROVISIONAL, to be refitted
 * on the H200 once the complex GPU path runs. The emulated call is the real
 * model's with 2 N' moduli (N' split moduli, two INT8 GEMMs each:
 * docs/ozaki2-complex.md), its per-element term (C) and per-operand term
 * (op(A), op(B)) each doubled, since a complex element is twice the bytes;
 * native ZGEMM is 4x native DGEMM's multiply-add term (four real products a
 * complex one), with the same t0. */
#ifndef OZCRT_INTERPOSE_SPEED_MODEL_H
#define OZCRT_INTERPOSE_SPEED_MODEL_H

#include <stdint.h>

#define OZCRT_OZ2_T0_MS 0.038       /* launches and the smallest grids */
#define OZCRT_OZ2_MNK_MS 1.24e-12   /* per modulus and multiply-add */
#define OZCRT_OZ2_MN_MS 2.11e-9     /* per modulus and element of C */
#define OZCRT_OZ2_MNK_IN_MS 0.69e-9 /* per modulus and element of op(A), op(B) */
/* Automatic precision: its estimate (norm sums, quantization, one INT8
 * product with each element's need) measured at 13-18% of a 16-moduli call
 * at 16384^3 and 8192^3 (BENCHMARKS.md): predicted as this many moduli more
 * than the fixed plan at the same bits. */
#define OZCRT_OZ2_AUTO_EXTRA_MODULI 3
#define OZCRT_NATIVE_T0_MS 0.0032
#define OZCRT_NATIVE_MNK_MS 36.0e-12 /* 2 / 55.5 TFLOPS */

/* Predicted native time / emulated time of an ozaki2 call with nmod moduli. */
static inline double ozcrt_oz2_speedup(int64_t m, int64_t n, int64_t k, int64_t batch, int nmod)
{
    const double M = (double)m, N = (double)n, K = (double)k, B = (double)batch, Q = (double)nmod;
    const double emulated = OZCRT_OZ2_T0_MS +
                            B * Q * (OZCRT_OZ2_MNK_MS * M * N * K + OZCRT_OZ2_MN_MS * M * N + OZCRT_OZ2_MNK_IN_MS * (M + N) * K);
    const double native = OZCRT_NATIVE_T0_MS + B * OZCRT_NATIVE_MNK_MS * M * N * K;
    return native / emulated;
}

/* The complex model over the real one: a split modulus is two planes, each
 * costing what a real modulus does (its residues, engine GEMM and CRT share
 * are per plane of bytes, the same count per element as a real plane), and
 * native ZGEMM's multiply-add term is 4.2x DGEMM's. Checked on the H200
 * (BENCHMARKS.md session 21: cublasZgemm_v2 under the shim, 53 bits, N' =
 * 18): 8192^3 predicted 33.0 ms, measured 33.1; 16384^3 predicted 230 ms,
 * measured 246 (the chip's power cap, as for the real fit); native 83 and
 * 700 ms measured against 83 and 666 predicted. Speed-up 2.51x / 2.84x
 * measured, 2.52x / 2.90x predicted without the fixed term below; 4096^3
 * (tests/gpu/bench_oz2z, the kernels alone) 1.62x measured, 1.99x: the
 * real model's fixed costs are short for complex calls (36 planes of
 * launches, the CRT's fallback tables). OZCRT_OZ2Z_T0_MS, from that point,
 * brings 4096^3 to 1.82x and leaves 8192^3 / 16384^3 at 2.48x / 2.88x; it
 * errs on the native side at the small end (2048^3: 0.90x, forwarded). */
#define OZCRT_OZ2Z_GEMMS_PER_SPLIT 2.0 /* INT8 GEMMs (planes) a split modulus */
#define OZCRT_OZ2Z_BYTES 1.0           /* the per-element and per-operand terms per plane, over the real model's */
#define OZCRT_NATIVE_Z_MNK 4.2         /* native ZGEMM's multiply-add term over DGEMM's (151e-12 ms at 8192^3) */
#define OZCRT_OZ2Z_T0_MS 0.5           /* a complex call's fixed cost beyond the real model's (ms) */
/* Automatic precision for complex calls: the estimate is one INT8 product
 * (a plane) and passes over operands of twice the real bytes: predicted as
 * this many split moduli more than the fixed plan at the same bits. */
#define OZCRT_OZ2Z_AUTO_EXTRA_SPLIT 2

/* Predicted native ZGEMM time / emulated time of a complex ozaki2 call with
 * n_split split moduli. */
static inline double ozcrt_oz2z_speedup(int64_t m, int64_t n, int64_t k, int64_t batch, int n_split)
{
    const double M = (double)m, N = (double)n, K = (double)k, B = (double)batch;
    const double Q = OZCRT_OZ2Z_GEMMS_PER_SPLIT * (double)n_split;
    const double emulated = OZCRT_OZ2_T0_MS + OZCRT_OZ2Z_T0_MS + B * Q * (OZCRT_OZ2_MNK_MS * M * N * K +
                                                       OZCRT_OZ2Z_BYTES * OZCRT_OZ2_MN_MS * M * N +
                                                       OZCRT_OZ2Z_BYTES * OZCRT_OZ2_MNK_IN_MS * (M + N) * K);
    const double native = OZCRT_NATIVE_T0_MS + B * OZCRT_NATIVE_Z_MNK * OZCRT_NATIVE_MNK_MS * M * N * K;
    return native / emulated;
}

#endif
