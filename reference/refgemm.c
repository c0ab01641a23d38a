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
 * k == 0 or alpha == 0: C = beta * C (0 when beta == 0), A and B not read. */
#include "refgemm.h"

#include <math.h>
#include <stdlib.h>

#include "../crt/crt.h"
#include "../crt/moduli.h"
#include "../slicing/slicing.h"

/* An R x K operand seen row by row: rows of op(A), or columns of op(B)
 * (element (r, kk) of the view is op(B)[kk, r]). */
typedef struct operand_view {
    const double *base;
    int64_t rows, k;
    int64_t row_stride, k_stride;
} operand_view;

static double view_at(const operand_view *v, int64_t r, int64_t kk)
{
    return v->base[r * v->row_stride + kk * v->k_stride];
}

/* op(A) (m x k): element (i, kk) is A[i + kk*lda] for N, A[kk + i*lda] for T/C. */
static operand_view view_of_a(oz_op op, const double *A, int64_t lda, int64_t m, int64_t k)
{
    operand_view v = {A, m, k, 1, lda};
    if (op != OZ_OP_N) {
        v.row_stride = lda;
        v.k_stride = 1;
    }
    return v;
}

/* op(B) (k x n) as n rows of k: element (j, kk) = op(B)[kk, j], that is
 * B[kk + j*ldb] for N, B[j + kk*ldb] for T/C. */
static operand_view view_of_b(oz_op op, const double *B, int64_t ldb, int64_t k, int64_t n)
{
    operand_view v = {B, n, k, ldb, 1};
    if (op != OZ_OP_N) {
        v.row_stride = 1;
        v.k_stride = ldb;
    }
    return v;
}

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

static double row_absmax(const operand_view *v, int64_t r)
{
    double mx = 0.0;
    for (int64_t kk = 0; kk < v->k; kk++) {
        double a = fabs(view_at(v, r, kk));
        if (!(a <= mx)) /* also takes NaN, which then stays */
            mx = a;
        if (isnan(mx))
            break;
    }
    return mx;
}

static int slice_operand(const operand_view *v, sliced_operand *s)
{
    s->rows = v->rows;
    s->k = v->k;
    s->scale = malloc((size_t)(v->rows > 0 ? v->rows : 1) * sizeof *s->scale);
    s->res = calloc((size_t)(OZ_P22_NPRIMES * OZ_NSLICES) * (size_t)v->rows * (size_t)v->k + 1, 1);
    if (!s->scale || !s->res)
        return OZ_REF_NOMEM;
    for (int64_t r = 0; r < v->rows; r++) {
        int sc = oz_scale_exponent(row_absmax(v, r));
        s->scale[r] = sc;
        if (sc == OZ_SCALE_SPECIAL)
            continue; /* residues stay 0; the element takes the plain dot product */
        for (int64_t kk = 0; kk < v->k; kk++) {
            int32_t hl[OZ_NSLICES];
            oz_slice(ldexp(view_at(v, r, kk), -sc), &hl[OZ_SLICE_HI], &hl[OZ_SLICE_LO]);
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
                              const operand_view *va, const operand_view *vb, int64_t i, int64_t j)
{
    int s = sa->scale[i], t = sb->scale[j];
    if (s == OZ_SCALE_SPECIAL || t == OZ_SCALE_SPECIAL) {
        double dot = 0.0;
        for (int64_t kk = 0; kk < va->k; kk++)
            dot = dot + view_at(va, i, kk) * view_at(vb, j, kk);
        return dot;
    }
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

static int valid_op(oz_op op)
{
    return op == OZ_OP_N || op == OZ_OP_T || op == OZ_OP_C;
}

static int64_t max1(int64_t x)
{
    return x > 1 ? x : 1;
}

int oz_ref_dgemm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                 double alpha, const double *A, int64_t lda,
                 const double *B, int64_t ldb, double beta, double *C, int64_t ldc)
{
    if (!valid_op(transa) || !valid_op(transb) || m < 0 || n < 0 || k < 0 ||
        lda < max1(transa == OZ_OP_N ? m : k) || ldb < max1(transb == OZ_OP_N ? k : n) || ldc < max1(m))
        return OZ_REF_INVALID;
    if (m == 0 || n == 0)
        return OZ_REF_OK;

    if (k == 0 || alpha == 0.0) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                C[i + j * ldc] = beta == 0.0 ? 0.0 : beta * C[i + j * ldc];
        return OZ_REF_OK;
    }

    operand_view va = view_of_a(transa, A, lda, m, k);
    operand_view vb = view_of_b(transb, B, ldb, k, n);
    sliced_operand sa = {0}, sb = {0};
    int rc = slice_operand(&va, &sa);
    if (rc == OZ_REF_OK)
        rc = slice_operand(&vb, &sb);
    if (rc == OZ_REF_OK) {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic)
#endif
        for (int64_t j = 0; j < n; j++) {
            for (int64_t i = 0; i < m; i++) {
                double P = product_element(&sa, &sb, &va, &vb, i, j);
                double *c = &C[i + j * ldc];
                *c = beta == 0.0 ? alpha * P : (alpha * P) + (beta * *c);
            }
        }
    }
    sliced_free(&sa);
    sliced_free(&sb);
    return rc;
}
