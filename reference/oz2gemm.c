/* reference/oz2gemm.c: the CPU reference of the complete ozaki2 DGEMM (ozaki2.md in code).
 *
 *   plan:   N, w from (k, bits)                              (crt/oz2.h)
 *   scale:  s_i, t_j as Phase 22; a'' = rne(op(A) 2^(w - s_i)), b'' likewise
 *   X:      per modulus m_q (q < N): R_q = (sum_k a''_q b''_q) mod m_q over the
 *           symmetric int8 residues (exact in int64 for any k here; the GPU
 *           splits K for int32), then the exact CRT with signed fold
 *   P:      ldexp(RN(X), s_i + t_j - 2w)
 *   C:      alpha * P (beta == 0, C not read), else (alpha * P) + (beta * C),
 *           each operation rounded to nearest even, never contracted
 *           (built with -ffp-contract=off).
 * Rows/columns with Inf or NaN take the plain double dot product in ascending
 * k (product, then sum, each rounded), so non-finite values propagate. */
#include "oz2gemm.h"
#include "refcommon.h"

#include <math.h>
#include <stdlib.h>

#include "../crt/oz2.h"
#include "../slicing/slicing.h"

/* Residues of one operand: res[(q * rows + r) * k + kk], int8 symmetric. */
typedef struct scaled2 {
    int64_t rows, k;
    int n;
    int *scale;
    int8_t *res;
} scaled2;

static int8_t *res_row(const scaled2 *s, int q, int64_t r)
{
    return s->res + ((int64_t)q * s->rows + r) * s->k;
}

static int scale_operand(const oz_ref_view *v, int n, int w, scaled2 *s)
{
    s->rows = v->rows;
    s->k = v->k;
    s->n = n;
    s->scale = malloc((size_t)(v->rows > 0 ? v->rows : 1) * sizeof *s->scale);
    s->res = calloc((size_t)n * (size_t)v->rows * (size_t)v->k + 1, 1);
    if (!s->scale || !s->res)
        return OZ_REF_NOMEM;
    for (int64_t r = 0; r < v->rows; r++) {
        int sc = oz_scale_exponent(oz_ref_row_absmax(v, r));
        s->scale[r] = sc;
        if (sc == OZ_SCALE_SPECIAL)
            continue; /* residues stay 0; the element takes the plain dot product */
        for (int64_t kk = 0; kk < v->k; kk++) {
            uint64_t mag;
            int e;
            int neg = oz2_scaled_int(oz_ref_at(v, r, kk), w - sc, &mag, &e);
            uint32_t pieces[4];
            oz2_split22(mag, e, pieces);
            for (int q = 0; q < n; q++)
                res_row(s, q, r)[kk] = oz2_residue22(pieces, neg, oz2_modulus(q));
        }
    }
    return OZ_REF_OK;
}

static void scaled_free(scaled2 *s)
{
    free(s->scale);
    free(s->res);
}

/* P of element (i, j), before alpha and beta. */
static double product_element(const scaled2 *sa, const scaled2 *sb, const oz_ref_view *va, const oz_ref_view *vb,
                              const oz2_crt_consts *cc, int w, int64_t i, int64_t j)
{
    int s = sa->scale[i], t = sb->scale[j];
    if (s == OZ_SCALE_SPECIAL || t == OZ_SCALE_SPECIAL)
        return oz_ref_plain_dot(va, vb, i, j);
    uint8_t r[OZ2_MAX_MODULI];
    for (int q = 0; q < cc->n; q++) {
        const int8_t *a = res_row(sa, q, i), *b = res_row(sb, q, j);
        int64_t acc = 0; /* |acc| <= k 2^14: exact for k < 2^49 */
        for (int64_t kk = 0; kk < va->k; kk++)
            acc += (int32_t)a[kk] * (int32_t)b[kk];
        int64_t mq = (int64_t)cc->m[q];
        r[q] = (uint8_t)(((acc % mq) + mq) % mq);
    }
    oz2_uint mag;
    int neg = oz2_crt_reconstruct(cc, r, 1, &mag);
    return oz2_to_double(&mag, neg, s + t - 2 * w);
}

/* What the epilogue needs to form P(i, j). */
typedef struct oz2_ref_ctx {
    const scaled2 *sa, *sb;
    const oz_ref_view *va, *vb;
    const oz2_crt_consts *cc;
    int w;
} oz2_ref_ctx;

static double oz2_ref_product(const void *ctx, int64_t i, int64_t j)
{
    const oz2_ref_ctx *x = ctx;
    return product_element(x->sa, x->sb, x->va, x->vb, x->cc, x->w, i, j);
}

int oz2_ref_dgemm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                  double alpha, const double *A, int64_t lda,
                  const double *B, int64_t ldb, double beta, double *C, int64_t ldc, int bits)
{
    if (bits < 1)
        return OZ_REF_INVALID;
    int done;
    int rc = oz_ref_contract(transa, transb, m, n, k, alpha, lda, ldb, beta, C, ldc, &done);
    if (done)
        return rc;
    oz2_plan plan = oz2_make_plan(k, bits);
    if (plan.n == 0)
        return OZ2_REF_UNREACHABLE;

    oz_ref_view va = oz_ref_view_a(transa, A, lda, m, k);
    oz_ref_view vb = oz_ref_view_b(transb, B, ldb, k, n);
    oz2_crt_consts cc;
    oz2_crt_init(&cc, plan.n);
    scaled2 sa = {0}, sb = {0};
    rc = scale_operand(&va, plan.n, plan.w, &sa);
    if (rc == OZ_REF_OK)
        rc = scale_operand(&vb, plan.n, plan.w, &sb);
    if (rc == OZ_REF_OK) {
        oz2_ref_ctx ctx = {&sa, &sb, &va, &vb, &cc, plan.w};
        oz_ref_epilogue(m, n, alpha, beta, C, ldc, oz2_ref_product, &ctx);
    }
    scaled_free(&sa);
    scaled_free(&sb);
    return rc;
}
