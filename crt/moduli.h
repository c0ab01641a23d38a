/* crt/moduli.h: the moduli sets and CRT constants, as data, in one place.
 *
 * A mode is a table: a new mode (an FP64-accurate one with more moduli, say)
 * is a new X-macro list and a new oz_moduli_set, not a copy of the code.
 * Plain C, usable from host code and (through the X-macro lists, which expand
 * into compile-time constants) from device code.
 *
 * For each prime p:  f_p = (M/p) * ((M/p)^-1 mod p),  so that
 *   X = (sum_p r_p * f_p) mod M  reconstructs X mod M from its residues r_p.
 * mu_p = floor(2^32 / p) is the Barrett multiplier used by oz_mod_p().
 * The tests recompute every number here from first principles. */
#ifndef OZCRT_CRT_MODULI_H
#define OZCRT_CRT_MODULI_H

#include <stdint.h>

/* Phase 22: 7 primes, M = 168897325606883 (about 2^47.26).
 * X(index, p, f_p, mu_p) */
#define OZ_P22_MODULI(X)                                  \
    X(0, 127, UINT64_C(147618922380819), UINT32_C(33818640)) \
    X(1, 113, UINT64_C(112099994871825), UINT32_C(38008560)) \
    X(2, 109, UINT64_C(134807957135769), UINT32_C(39403369)) \
    X(3, 107, UINT64_C(34726552928518),  UINT32_C(40139881)) \
    X(4, 103, UINT64_C(96747011755399),  UINT32_C(41698711)) \
    X(5, 101, UINT64_C(130435558389474), UINT32_C(42524428)) \
    X(6, 97,  UINT64_C(19153304965729),  UINT32_C(44278013))

#define OZ_P22_NPRIMES 7
#define OZ_P22_M UINT64_C(168897325606883)
#define OZ_P22_HALF_M (OZ_P22_M / 2) /* M is odd: X > HALF_M folds to X - M */

typedef struct oz_modulus {
    int32_t p;      /* the prime */
    uint64_t f;     /* CRT coefficient (M/p) * ((M/p)^-1 mod p) */
    uint32_t mu;    /* floor(2^32 / p) */
} oz_modulus;

typedef struct oz_moduli_set {
    const char *name;
    int count;
    uint64_t M;                /* product of the primes, < 2^63 / (count * max p) */
    const oz_modulus *moduli;  /* count entries */
} oz_moduli_set;

#define OZ_MODULUS_ENTRY_(i, p, f, mu) {(p), (f), (mu)},
static const oz_modulus oz_p22_moduli[OZ_P22_NPRIMES] = {OZ_P22_MODULI(OZ_MODULUS_ENTRY_)};
#undef OZ_MODULUS_ENTRY_

static const oz_moduli_set oz_p22_set = {"phase22", OZ_P22_NPRIMES, OZ_P22_M, oz_p22_moduli};

/* The moduli of the GPU engine: pairwise coprime, all <= 256, so that every
 * residue is one int8 (symmetric, [-128, 127]; for 256 the low byte). The
 * ozaki2 mode (ozaki2.md) uses the first N of them, in this order; the GPU
 * Phase 22 path uses the first OZ_P22G_NMODULI (phase22.md step 3 allows any
 * coprime set whose product covers 2^47: its results are bit-identical to the
 * seven primes', which the CPU reference keeps). X(index, modulus) */
#define OZ_ENGINE_MODULI(X)                                                     \
    X(0, 256) X(1, 255) X(2, 253) X(3, 251) X(4, 247) X(5, 241) X(6, 239)      \
    X(7, 233) X(8, 229) X(9, 227) X(10, 223) X(11, 217) X(12, 211) X(13, 199)  \
    X(14, 197) X(15, 193) X(16, 191) X(17, 181) X(18, 179) X(19, 173)
#define OZ_ENGINE_NMODULI 20

/* The ozaki2 mode (ozaki2.md step 1, crt/oz2.h) runs on the first N engine
 * moduli, N in OZ2_MIN_MODULI .. OZ2_MAX_MODULI: their product P_N is even
 * (m_0 = 256) and below 2^156 (P_20). */
#define OZ2_MIN_MODULI 2
#define OZ2_MAX_MODULI OZ_ENGINE_NMODULI

/* The GPU Phase 22 set: the first six engine moduli, M' = 246767740327680
 * (about 2^47.81, even: X > M'/2 folds to X - M'; (M'-1)/2 >= 4096 * 2^34).
 * X(index, m, f_m = (M'/m) * ((M'/m)^-1 mod m), floor(2^32 / m)) */
#define OZ_P22G_MODULI(X)                                          \
    X(0, 256, UINT64_C(160977393104385), UINT32_C(16777216))       \
    X(1, 255, UINT64_C(141286627795456), UINT32_C(16843009))       \
    X(2, 253, UINT64_C(51694427815680),  UINT32_C(16976155))       \
    X(3, 251, UINT64_C(238902633066240), UINT32_C(17111423))       \
    X(4, 247, UINT64_C(205806293552640), UINT32_C(17388531))       \
    X(5, 241, UINT64_C(188403585976320), UINT32_C(17821441))
#define OZ_P22G_NMODULI 6
#define OZ_P22G_M UINT64_C(246767740327680)

#endif
