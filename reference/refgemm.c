/* reference/refgemm.c: the CPU reference of the complete Phase 22 DGEMM (the specification in code).
 *
 * Every step is the one of docs (phase22.md): per-row / per-column power-of-two
 * scaling, the hi/lo 17-bit split, symmetric residues modulo the 7 primes,
 * 4 passes x 7 primes = 28 integer GEMMs per K chunk of 4096, the CRT with its
 * signed fold, then the double operations IN THIS ORDER, each rounded to
 * nearest even and never contracted (built with -ffp-contract=off):
 *
 *   for each K chunk, ascending:
 *     for pass in HH(2^-34), HL(2^-51), LH(2^-51), LL(2^-68):
 *       acc = acc + X * 2^-shift        (the product is exact; one rounding)
 *   P = ldexp(acc, s_i + t_j)
 *   C = alpha * P                       if beta == 0 (C not read)
 *   C = (alpha * P) + (beta * C)        otherwise
 *
 * Rows of op(A) / columns of op(B) holding Inf or NaN are not sliced: their
 * elements take P = the plain double dot product in ascending k (product,
 * then sum, each rounded), so non-finite values propagate as in DGEMM.
 * k == 0, or alpha == 0 in host pointer mode: C = beta * C (0 when beta ==
 * 0), A and B not read; alpha == 0 in device pointer mode: the same where P
 * is finite, the formula (NaN) where it is not. */
#include "refgemm.h"
#include "refcommon.h"

#include <math.h>
#include <stdlib.h>

#include "../crt/crt.h"
#include "../crt/moduli.h"
#include "../slicing/slicing.h"

/* Residues of one operand: res[((p * OZ_NSLICES + slice) * rows + r) * k + kk]. */
typedef struct sliced_operand {
    int64_t rows, k;
    int *scale;   /* per row: oz_scale_exponent of its max |value| */
    int8_t *res;
} sliced_operand;

static int8_t *residue_row(const sliced_operand *s, int prime, int slice, int64_t r)
{
    return s->res + ((int64_t)(prime * OZ_NSLICES + slice) * s->rows + r) * s->k;
}

static int slice_operand(const oz_ref_view *v, sliced_operand *s)
{
    s->rows = v->rows;
    s->k = v->k;
    s->scale = malloc((size_t)(v->rows > 0 ? v->rows : 1) * sizeof *s->scale);
    s->res = calloc((size_t)(OZ_P22_NPRIMES * OZ_NSLICES) * (size_t)v->rows * (size_t)v->k + 1, 1);
    if (!s->scale || !s->res)
        return OZ_REF_NOMEM;
    for (int64_t r = 0; r < v->rows; r++) {
        int sc = oz_scale_exponent(oz_ref_row_absmax(v, r));
        s->scale[r] = sc;
        if (sc == OZ_SCALE_SPECIAL)
            continue; /* residues stay 0; the element takes the plain dot product */
        for (int64_t kk = 0; kk < v->k; kk++) {
            int32_t hl[OZ_NSLICES];
            oz_slice(ldexp(oz_ref_at(v, r, kk), -sc), &hl[OZ_SLICE_HI], &hl[OZ_SLICE_LO]);
            for (int p = 0; p < OZ_P22_NPRIMES; p++)
                for (int sl = 0; sl < OZ_NSLICES; sl++)
                    residue_row(s, p, sl, r)[kk] = oz_residue(hl[sl], oz_p22_moduli[p].p);
        }
    }
    return OZ_REF_OK;
}

static void sliced_free(sliced_operand *s)
{
    free(s->scale);
    free(s->res);
}

/* One of the 28 integer GEMMs, one element: exact in int32 (|r| <= 63, n <= 4096). */
static int32_t dot_i8(const int8_t *a, const int8_t *b, int64_t n)
{
    int32_t acc = 0;
    for (int64_t kk = 0; kk < n; kk++)
        acc += (int32_t)a[kk] * (int32_t)b[kk];
    return acc;
}

/* The exact integer dot product of one pass over one K chunk, through the
 * 7 residue GEMMs and the CRT: in (-M/2, M/2]. */
static int64_t pass_value(const sliced_operand *sa, const sliced_operand *sb, int64_t i, int64_t j,
                          int slice_a, int slice_b, int64_t k0, int64_t len)
{
    uint64_t sum = 0;
    for (int p = 0; p < OZ_P22_NPRIMES; p++) {
        const oz_modulus *md = &oz_p22_moduli[p];
        int32_t acc = dot_i8(residue_row(sa, p, slice_a, i) + k0, residue_row(sb, p, slice_b, j) + k0, len);
        sum += (uint64_t)oz_mod_p(acc, md->p, md->mu) * md->f;
    }
    return oz_crt_fold(oz_crt_reduce(sum, OZ_P22_M), OZ_P22_M);
}

/* The scaled-back product P of element (i, j), before alpha and beta. */
static double product_element(const sliced_operand *sa, const sliced_operand *sb,
                              const oz_ref_view *va, const oz_ref_view *vb, int64_t i, int64_t j)
{
    int s = sa->scale[i], t = sb->scale[j];
    if (s == OZ_SCALE_SPECIAL || t == OZ_SCALE_SPECIAL)
        return oz_ref_plain_dot(va, vb, i, j);
    static const struct { int sa, sb, shift; } passes[OZ_P22_NPASSES] = {
#define OZ_PASS_ENTRY_(q, a, b, sh) {(a), (b), (sh)},
        OZ_P22_PASSES(OZ_PASS_ENTRY_)
#undef OZ_PASS_ENTRY_
    };
    double acc = 0.0;
    for (int64_t k0 = 0; k0 < sa->k; k0 += OZ_P22_KCHUNK) {
        int64_t len = sa->k - k0 < OZ_P22_KCHUNK ? sa->k - k0 : OZ_P22_KCHUNK;
        for (int q = 0; q < OZ_P22_NPASSES; q++) {
            int64_t X = pass_value(sa, sb, i, j, passes[q].sa, passes[q].sb, k0, len);
            acc = acc + ldexp((double)X, -passes[q].shift);
        }
    }
    return ldexp(acc, s + t);
}

/* What the epilogue needs to form P(i, j). */
typedef struct p22_ctx {
    const sliced_operand *sa, *sb;
    const oz_ref_view *va, *vb;
} p22_ctx;

static double p22_product(const void *ctx, int64_t i, int64_t j)
{
    const p22_ctx *x = ctx;
    return product_element(x->sa, x->sb, x->va, x->vb, i, j);
}

int oz_ref_dgemm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                 double alpha, const double *A, int64_t lda,
                 const double *B, int64_t ldb, double beta, double *C, int64_t ldc)
{
    return oz_ref_dgemm_pm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 0);
}

int oz_ref_dgemm_pm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                    double alpha, const double *A, int64_t lda,
                    const double *B, int64_t ldb, double beta, double *C, int64_t ldc, int device_pm)
{
    int done;
    int rc = oz_ref_contract(transa, transb, m, n, k, alpha == 0.0 && !device_pm, lda, ldb, beta, C, ldc, &done);
    if (done)
        return rc;
    oz_ref_view va = oz_ref_view_a(transa, A, lda, m, k);
    oz_ref_view vb = oz_ref_view_b(transb, B, ldb, k, n);
    sliced_operand sa = {0}, sb = {0};
    rc = slice_operand(&va, &sa);
    if (rc == OZ_REF_OK)
        rc = slice_operand(&vb, &sb);
    if (rc == OZ_REF_OK) {
        p22_ctx ctx = {&sa, &sb, &va, &vb};
        oz_ref_epilogue(m, n, alpha, beta, C, ldc, p22_product, &ctx);
    }
    sliced_free(&sa);
    sliced_free(&sb);
    return rc;
}
