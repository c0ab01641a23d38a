/* interpose/speed_model.h: the ozaki2 mode's predicted speed-up over native DGEMM, from which the router forwards calls emulation would slow down (plain C, host only).
 *
 * A four-term model of the emulated call and a two-term model of native
 * DGEMM, fitted (least squares, relative error) to the H200 size sweep of
 * BENCHMARKS.md (2026-12-03: 32 shapes from 1024^3 to 12288^3, short and
 * long K, tall and wide, every call emulated at 53 and 34 bits and with
 * automatic precision): it predicts the measured emulated time within 11%
 * on every shape (most within 5%), native's within 10%, and the sign of the
 * speed-up on every automatic point and on 61 of the 64 fixed-width ones
 * (the misses within 7% of 1); tests/unit/test_speed_model.c holds it to
 * that. Milliseconds:
 *   emulated ~ t0 + batch N (e m n k + c m n + d (m + n) k)
 *            (the engine's N INT8 GEMMs, the per-element CRT and epilogue,
 *            the operands' scaling and residues)
 *   native   ~ t0' + batch f m n k
 * Automatic precision adds its estimate (below). The numbers are the
 * H200's; on other GPUs the model is only a guide (the thresholds and
 * OZCRT_MIN_SPEEDUP still apply).
 *
 * Complex calls (ZGEMM, ozcrt_oz2z_speedup) are predicted from the same
 * constants: the emulated call is the real model's with 2 N' moduli (N'
 * split moduli, two INT8 GEMMs each: docs/ozaki2-complex.md), its
 * per-element term (C) and per-operand term (op(A), op(B)) each weighted by
 * OZCRT_OZ2Z_BYTES; native ZGEMM is 4.2x native DGEMM's multiply-add term
 * (four real products a complex one), with the same t0. */
#ifndef OZCRT_INTERPOSE_SPEED_MODEL_H
#define OZCRT_INTERPOSE_SPEED_MODEL_H

#include <stdint.h>

#include "crt/oz2.h"
#include "crt/oz2_auto.h"

#define OZCRT_OZ2_T0_MS 0.038        /* launches and the smallest grids */
#define OZCRT_OZ2_MNK_MS 1.229e-12   /* per modulus and multiply-add */
#define OZCRT_OZ2_MN_MS 1.402e-9     /* per modulus and element of C */
#define OZCRT_OZ2_MNK_IN_MS 0.679e-9 /* per modulus and element of op(A), op(B) */
#define OZCRT_NATIVE_T0_MS 0.0036
#define OZCRT_NATIVE_MNK_MS 35.79e-12 /* 2 / 55.9 TFLOPS */

/* Predicted native time / emulated time of an ozaki2 call with nmod moduli. */
static inline double ozcrt_oz2_speedup(int64_t m, int64_t n, int64_t k, int64_t batch, int nmod)
{
    const double M = (double)m, N = (double)n, K = (double)k, B = (double)batch, Q = (double)nmod;
    const double emulated = OZCRT_OZ2_T0_MS +
                            B * Q * (OZCRT_OZ2_MNK_MS * M * N * K + OZCRT_OZ2_MN_MS * M * N + OZCRT_OZ2_MNK_IN_MS * (M + N) * K);
    const double native = OZCRT_NATIVE_T0_MS + B * OZCRT_NATIVE_MNK_MS * M * N * K;
    return native / emulated;
}

/* Automatic precision (docs/ozaki2-auto.md), predicted as what data even
 * within its rows and columns gets (U(-1,1): a need of B + 2 from all of K):
 * the moduli of that need at norm sums k/2 (at least the fixed count nfix
 * at B bits), and the estimate: a fixed cost (its small kernels, the CRT
 * kernels that return, the native branch's graph), its INT8 product over the
 * part of K it sums at the engine's rate of a modulus, and per element of C
 * and part taken the stored sums and the pass over them. The first part (K_1)
 * is the plan where that need fits nfix moduli (k >= 2048 at 53 bits), else
 * both parts run. Its row passes cost about the fixed path's scale passes,
 * which they replace. Fitted to the same sweep (within 16%, most within 5%;
 * 1024 x 1024 x 8192 the worst, predicted slower than it is, and forwarded
 * either way). */
#define OZCRT_OZ2_AUTO_T0_MS 0.151  /* the estimate's fixed cost */
#define OZCRT_OZ2_AUTO_MN_MS 4.62e-9 /* per element of C and part of the estimate */

typedef struct ozcrt_oz2_auto_even {
    int nmod;       /* the moduli count (0: even data would not be emulated) */
    double k_frac;  /* the fraction of K the estimate product sums */
    int parts;      /* 1 or 2: the need passes */
} ozcrt_oz2_auto_even;

static inline ozcrt_oz2_auto_even ozcrt_oz2_auto_even_plan(int64_t k, int B, int nfix)
{
    ozcrt_oz2_auto_even r = {0, 1.0, 1};
    if (k < 1 || k >= OZ2A_KMAX || nfix < OZ2_MIN_MODULI || nfix > OZ2_MAX_MODULI)
        return r;
    const oz2a_ranges R = oz2a_make_ranges();
    const uint64_t half = (uint64_t)k << (OZ2A_E - 1); /* the norm sums of even data */
    for (int n = nfix; n <= OZ2_MAX_MODULI && r.nmod == 0; n++)
        if (oz2a_range_ok(B + 2, half, half, k, R.H[n]))
            r.nmod = n;
    const int64_t ke = k < OZ2A_KEST ? k : OZ2A_KEST;
    const int64_t k1 = oz2a_k_first_real(ke, k, B, nfix, &R);
    const int two = oz2a_two_parts(k1, ke, OZ2A_GMIN);
    const int first = two && r.nmod == nfix;
    r.k_frac = (double)(first ? k1 : ke) / (double)k;
    r.parts = two && !first ? 2 : 1;
    return r;
}

/* Predicted native time / emulated time of an automatic call at target
 * 2^-B whose fixed plan at B bits takes nfix moduli. */
static inline double ozcrt_oz2_auto_speedup(int64_t m, int64_t n, int64_t k, int64_t batch, int B, int nfix)
{
    const ozcrt_oz2_auto_even p = ozcrt_oz2_auto_even_plan(k, B, nfix);
    const int nmod = p.nmod ? p.nmod : OZ2_MAX_MODULI; /* even data native: the most moduli */
    const double M = (double)m, N = (double)n, K = (double)k, Bt = (double)batch;
    const double native = OZCRT_NATIVE_T0_MS + Bt * OZCRT_NATIVE_MNK_MS * M * N * K;
    const double estimate = OZCRT_OZ2_AUTO_T0_MS + Bt * (OZCRT_OZ2_MNK_MS * p.k_frac * M * N * K +
                                                        OZCRT_OZ2_AUTO_MN_MS * (double)p.parts * M * N);
    return native / (native / ozcrt_oz2_speedup(m, n, k, batch, nmod) + estimate);
}

/* The complex model over the real one: a split modulus is two planes, each
 * costing what a real modulus does in the engine; a plane's per-element and
 * per-operand work (residues, CRT share) costs OZCRT_OZ2Z_BYTES times a real
 * modulus's; native ZGEMM's multiply-add term is 4.2x DGEMM's; and a fixed
 * OZCRT_OZ2Z_T0_MS (36 planes of launches, the CRT's fallback tables).
 * Checked on the H200 (BENCHMARKS.md, 2026-12-02: cublasZgemm_v2 under the
 * shim, 53 bits, N' = 18): 8192^3 predicted 33.2 ms, measured 33.1;
 * 16384^3 predicted 228 ms, measured 246 (the chip's power cap, as for the
 * real fit); native 83 and 700 ms measured against 83 and 661 predicted.
 * Speed-up 2.51x / 2.84x measured, 2.49x / 2.89x predicted; 4096^3
 * (tests/gpu/bench_oz2z, the kernels alone) 1.62x measured, 1.82x
 * predicted; it errs on the native side at the small end (2048^3: 0.90x,
 * forwarded). */
#define OZCRT_OZ2Z_GEMMS_PER_SPLIT 2.0 /* INT8 GEMMs (planes) a split modulus */
#define OZCRT_OZ2Z_BYTES 1.25          /* the per-element and per-operand terms per plane, over the real model's */
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
