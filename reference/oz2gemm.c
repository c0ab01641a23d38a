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
#include "../crt/oz2_auto.h"
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

static double oz2_ref_native(const void *ctx, int64_t i, int64_t j)
{
    const oz2_ref_ctx *x = ctx;
    return oz_ref_plain_dot(x->va, x->vb, i, j);
}

/* Automatic precision (crt/oz2_auto.h): one operand's norm sums A1, scales
 * g and estimate operands q[r * ke + kk] (k < ke); special rows get A1 = 0
 * (their elements take the plain dot product: no constraint, no range). */
typedef struct est_operand {
    uint64_t *A1;
    int *g;
    uint8_t *q;
} est_operand;

static int est_operand_make(const oz_ref_view *v, int64_t ke, est_operand *e)
{
    const size_t rows = (size_t)(v->rows > 0 ? v->rows : 1);
    e->A1 = calloc(rows, sizeof *e->A1);
    e->g = calloc(rows, sizeof *e->g);
    e->q = calloc(rows * (size_t)(ke > 0 ? ke : 1), 1);
    if (!e->A1 || !e->g || !e->q)
        return OZ_REF_NOMEM;
    for (int64_t r = 0; r < v->rows; r++) {
        const int sc = oz_scale_exponent(oz_ref_row_absmax(v, r));
        if (sc == OZ_SCALE_SPECIAL)
            continue;
        uint64_t a1 = 0;
        for (int64_t kk = 0; kk < v->k; kk++)
            a1 += oz2a_norm_term(oz_ref_at(v, r, kk), sc);
        e->A1[r] = a1;
        e->g[r] = oz2a_row_scale(a1, v->k);
        for (int64_t kk = 0; kk < ke; kk++)
            e->q[r * ke + kk] = (uint8_t)oz2a_quant(oz_ref_at(v, r, kk), sc, e->g[r]);
    }
    return OZ_REF_OK;
}

static void est_operand_free(est_operand *e)
{
    free(e->A1);
    free(e->g);
    free(e->q);
}

static int auto_plan(const oz_ref_view *va, const oz_ref_view *vb, int target, oz2_plan *plan, int *w_need_out)
{
    const int64_t k = va->k, ke = k < OZ2A_KEST ? k : OZ2A_KEST;
    plan->n = 0;
    plan->w = 0;
    *w_need_out = OZ2A_W_INF;
    if (k >= OZ2A_KMAX)
        return OZ_REF_OK;
    est_operand ea = {0}, eb = {0};
    int rc = est_operand_make(va, ke, &ea);
    if (rc == OZ_REF_OK)
        rc = est_operand_make(vb, ke, &eb);
    if (rc == OZ_REF_OK) {
        /* the needs from the first part's sums (k < K_1) and from all of K_E */
        int gmax = 0; /* the largest g and h of nonzero rows and columns */
        for (int64_t i = 0; i < va->rows; i++)
            gmax = ea.A1[i] && ea.g[i] > gmax ? ea.g[i] : gmax;
        for (int64_t j = 0; j < vb->rows; j++)
            gmax = eb.A1[j] && eb.g[j] > gmax ? eb.g[j] : gmax;
        const oz2a_ranges R = oz2a_make_ranges();
        const int nfix = oz2_make_plan(k, target).n;
        const int64_t k1f = oz2a_k_first_real(ke, k, target, nfix, &R);
        const int64_t k1 = oz2a_two_parts(k1f, ke, gmax) ? k1f : ke;
        int w_need1 = OZ2A_W_NONE, w_need = OZ2A_W_NONE;
        uint64_t a1m = 0, b1m = 0;
        for (int64_t i = 0; i < va->rows; i++)
            a1m = ea.A1[i] > a1m ? ea.A1[i] : a1m;
        for (int64_t j = 0; j < vb->rows; j++)
            b1m = eb.A1[j] > b1m ? eb.A1[j] : b1m;
        for (int64_t i = 0; i < va->rows && w_need < OZ2A_W_INF; i++) {
            if (ea.A1[i] == 0)
                continue;
            for (int64_t j = 0; j < vb->rows; j++) {
                uint32_t G = 0, G1 = 0;
                const uint8_t *qa = ea.q + i * ke, *qb = eb.q + j * ke;
                for (int64_t kk = 0; kk < ke; kk++) {
                    if (kk == k1)
                        G1 = G;
                    G += (uint32_t)qa[kk] * qb[kk];
                }
                G1 = k1 < ke ? G1 : G;
                const int w1 = oz2a_elem_w(ea.A1[i], eb.A1[j], ea.g[i], eb.g[j], G1, k, target);
                const int w = oz2a_elem_w(ea.A1[i], eb.A1[j], ea.g[i], eb.g[j], G, k, target);
                w_need1 = w1 > w_need1 ? w1 : w_need1;
                w_need = w > w_need ? w : w_need;
            }
        }
        if (w_need >= OZ2A_W_INF)
            w_need1 = w_need; /* the loop stopped early: no plan either way */
        const oz2_plan p1 = oz2a_make_plan(w_need1, a1m, b1m, k);
        const int first = oz2a_first_taken(p1.n, nfix);
        *w_need_out = first ? w_need1 : w_need;
        *plan = first ? p1 : oz2a_make_plan(w_need, a1m, b1m, k);
    }
    est_operand_free(&ea);
    est_operand_free(&eb);
    return rc;
}

int oz2_ref_auto_plan(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
                      const double *B, int64_t ldb, int target, int *N, int *w, int *w_need)
{
    if (m < 0 || n < 0 || k < 1 || target < OZ2A_B_MIN || target > OZ2A_B_MAX)
        return OZ_REF_INVALID;
    oz_ref_view va = oz_ref_view_a(transa, A, lda, m, k);
    oz_ref_view vb = oz_ref_view_b(transb, B, ldb, k, n);
    oz2_plan plan;
    int wn;
    int rc = auto_plan(&va, &vb, target, &plan, &wn);
    *N = plan.n;
    *w = plan.w;
    if (w_need)
        *w_need = wn;
    return rc;
}

int oz2_ref_dgemm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                  double alpha, const double *A, int64_t lda,
                  const double *B, int64_t ldb, double beta, double *C, int64_t ldc, int bits)
{
    return oz2_ref_dgemm_pm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, bits, 0);
}

int oz2_ref_dgemm_pm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                     double alpha, const double *A, int64_t lda,
                     const double *B, int64_t ldb, double beta, double *C, int64_t ldc, int bits, int device_pm)
{
    if (bits == 0 || (oz2a_is_auto(bits) && (oz2a_target(bits) < OZ2A_B_MIN || oz2a_target(bits) > OZ2A_B_MAX)))
        return OZ_REF_INVALID;
    int done;
    int rc = oz_ref_contract(transa, transb, m, n, k, alpha == 0.0 && !device_pm, lda, ldb, beta, C, ldc, &done);
    if (done)
        return rc;
    oz_ref_view va = oz_ref_view_a(transa, A, lda, m, k);
    oz_ref_view vb = oz_ref_view_b(transb, B, ldb, k, n);
    oz2_plan plan;
    if (oz2a_is_auto(bits)) {
        int w_need;
        rc = auto_plan(&va, &vb, oz2a_target(bits), &plan, &w_need);
        if (rc != OZ_REF_OK)
            return rc;
    } else {
        plan = oz2_make_plan(k, bits);
    }
    if (plan.n == 0 && oz2a_is_auto(bits)) { /* auto-native: the plain dot product, every element */
        oz2_ref_ctx ctx = {NULL, NULL, &va, &vb, NULL, 0};
        oz_ref_epilogue(m, n, alpha, beta, C, ldc, oz2_ref_native, &ctx);
        return OZ_REF_OK;
    }
    if (plan.n == 0)
        return OZ2_REF_UNREACHABLE;

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
