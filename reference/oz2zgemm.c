/* reference/oz2zgemm.c: the CPU reference of the complete ozaki2 ZGEMM (docs/ozaki2-complex.md in code).
 *
 *   plan:   N, w from (k, bits) with the complex range 2 k 4^w <= (P_N - 1)/2
 *           (crt/oz2_complex.h)
 *   scale:  s_i, t_j: the frexp exponent of the largest |Re| or |Im| of the
 *           row / column; a''_re = rne(Re op(A) 2^(w - s_i)), a''_im likewise
 *           (after conjugation for op C), b'' with t_j
 *   X:      per engine modulus m_q (q < N), the four real products of the
 *           Gaussian-integer dot product over the int8 residues,
 *           R_re = sum (a_re b_re - a_im b_im), R_im = sum (a_re b_im + a_im b_re)
 *           mod m_q (exact in int64 for any k here), then crt/oz2.h's exact
 *           CRT for X_re and X_im (P_N even, |X| <= P_N/2 - 1: its fold)
 *   P:      ldexp(RN(X_re), s_i + t_j - 2w), the same for im
 *   C:      alpha * P (beta == 0, C not read), else (alpha * P) + (beta * C),
 *           u * v = (fl(fl(u_re v_re) - fl(u_im v_im)), fl(fl(u_re v_im) + fl(u_im v_re))),
 *           every operation rounded to nearest even, never contracted
 *           (built with -ffp-contract=off).
 * The split moduli of crt/oz2_complex.h are the GPU's road to the same X;
 * this file keeps the plain one, so that the two can be compared. */
#include "oz2zgemm.h"
#include "refcommon.h"

#include <math.h>
#include <stdlib.h>

#include "../crt/oz2.h"
#include "../crt/oz2_complex.h"
#include "../slicing/slicing.h"

/* An R x K complex operand seen row by row (rows of op(A), columns of
 * op(B)) as two real views over the interleaved storage, and whether op
 * conjugates. */
typedef struct zview {
    oz_ref_view re, im;
    int conj;
} zview;

/* The real view of the first doubles (strides in complex elements), made
 * into the re and im views of interleaved storage. */
static zview zview_of(oz_ref_view v, int conj)
{
    zview z;
    v.row_stride *= 2;
    v.k_stride *= 2;
    z.re = v;
    z.im = v;
    z.im.base = v.base + 1;
    z.conj = conj;
    return z;
}

static oz_cplx zat(const zview *v, int64_t r, int64_t kk)
{
    oz_cplx x = {oz_ref_at(&v->re, r, kk), oz_ref_at(&v->im, r, kk)};
    if (v->conj)
        x.im = -x.im;
    return x;
}

/* The spec's complex product: four products, a difference and a sum, each
 * rounded (never an FMA: -ffp-contract=off and separate statements). */
static oz_cplx cmul(oz_cplx u, oz_cplx v)
{
    const double rr = u.re * v.re, ii = u.im * v.im;
    const double ri = u.re * v.im, ir = u.im * v.re;
    oz_cplx z = {rr - ii, ri + ir};
    return z;
}

static int is_zero(oz_cplx x)
{
    return x.re == 0.0 && x.im == 0.0;
}

/* Residues of one operand: res[((part * n + q) * rows + r) * k + kk],
 * part 0 re, 1 im; int8 as crt/oz2.h's oz2_residue22. */
typedef struct zscaled {
    int64_t rows, k;
    int n;
    int *scale;
    int8_t *res;
} zscaled;

static int8_t *zres_row(const zscaled *s, int part, int q, int64_t r)
{
    return s->res + (((int64_t)part * s->n + q) * s->rows + r) * s->k;
}

/* max(|Re|, |Im|) over row r; NaN once seen stays (oz_scale_exponent then
 * marks the row special, as an Inf does). */
static double zrow_absmax(const zview *v, int64_t r)
{
    const double a = oz_ref_row_absmax(&v->re, r), b = oz_ref_row_absmax(&v->im, r);
    if (isnan(a) || isnan(b))
        return NAN;
    return a > b ? a : b;
}

/* Modulus q of the residues: the engine moduli (fixed bits), or the split
 * moduli (automatic precision: its range can pass P_20). */
static uint32_t zmodulus(int q, int split)
{
    return split ? oz2z_split_mod(q).p : oz2_modulus(q);
}

static int scale_operand(const zview *v, int n, int w, int split, zscaled *s)
{
    s->rows = v->re.rows;
    s->k = v->re.k;
    s->n = n;
    s->scale = malloc((size_t)(s->rows > 0 ? s->rows : 1) * sizeof *s->scale);
    s->res = calloc(2 * (size_t)n * (size_t)s->rows * (size_t)s->k + 1, 1);
    if (!s->scale || !s->res)
        return OZ_REF_NOMEM;
    for (int64_t r = 0; r < s->rows; r++) {
        const int sc = oz_scale_exponent(zrow_absmax(v, r));
        s->scale[r] = sc;
        if (sc == OZ_SCALE_SPECIAL)
            continue; /* residues stay 0; the element takes the plain dot product */
        for (int64_t kk = 0; kk < s->k; kk++) {
            const oz_cplx x = zat(v, r, kk);
            for (int part = 0; part < 2; part++) {
                uint64_t mag;
                int e;
                const int neg = oz2_scaled_int(part ? x.im : x.re, w - sc, &mag, &e);
                uint32_t pieces[4];
                oz2_split22(mag, e, pieces);
                for (int q = 0; q < n; q++)
                    zres_row(s, part, q, r)[kk] = oz2_residue22(pieces, neg, zmodulus(q, split));
            }
        }
    }
    return OZ_REF_OK;
}

static void zscaled_free(zscaled *s)
{
    free(s->scale);
    free(s->res);
}

/* The plain complex dot product in ascending k (the spec's product, then
 * one sum per part): the elements of rows/columns with Inf or NaN. */
static oz_cplx plain_zdot(const zview *va, const zview *vb, int64_t i, int64_t j)
{
    oz_cplx d = {0.0, 0.0};
    for (int64_t kk = 0; kk < va->re.k; kk++) {
        const oz_cplx p = cmul(zat(va, i, kk), zat(vb, j, kk));
        d.re = d.re + p.re;
        d.im = d.im + p.im;
    }
    return d;
}

/* What an element needs to form P(i, j). */
typedef struct zctx {
    const zscaled *sa, *sb;
    const zview *va, *vb;
    const oz2_crt_consts *cc;   /* the engine moduli's CRT, or */
    const oz2z_crt_consts *zc;  /* the split moduli's (automatic precision) */
    int w;
} zctx;

/* P of element (i, j), before alpha and beta. */
static oz_cplx product_element(const zctx *x, int64_t i, int64_t j)
{
    const int s = x->sa->scale[i], t = x->sb->scale[j];
    if (s == OZ_SCALE_SPECIAL || t == OZ_SCALE_SPECIAL)
        return plain_zdot(x->va, x->vb, i, j);
    const int64_t k = x->sa->k;
    uint8_t r_re[OZ2Z_SPLIT_NMODULI], r_im[OZ2Z_SPLIT_NMODULI];
    const int nmod = x->zc ? x->zc->n : x->cc->n;
    for (int q = 0; q < nmod; q++) {
        const uint32_t mq = x->zc ? x->zc->m[q] : x->cc->m[q];
        const int8_t *ar = zres_row(x->sa, 0, q, i), *ai = zres_row(x->sa, 1, q, i);
        const int8_t *br = zres_row(x->sb, 0, q, j), *bi = zres_row(x->sb, 1, q, j);
        int64_t acc_re = 0, acc_im = 0; /* |acc| <= k 2^15: exact for k < 2^48 */
        for (int64_t kk = 0; kk < k; kk++) {
            acc_re += (int32_t)ar[kk] * br[kk] - (int32_t)ai[kk] * bi[kk];
            acc_im += (int32_t)ar[kk] * bi[kk] + (int32_t)ai[kk] * br[kk];
        }
        r_re[q] = (uint8_t)oz2z_mod(acc_re, mq);
        r_im[q] = (uint8_t)oz2z_mod(acc_im, mq);
    }
    oz2_uint mag;
    oz_cplx P;
    int neg = x->zc ? oz2z_crt_reconstruct(x->zc, r_re, 1, &mag) : oz2_crt_reconstruct(x->cc, r_re, 1, &mag);
    P.re = oz2_to_double(&mag, neg, s + t - 2 * x->w);
    neg = x->zc ? oz2z_crt_reconstruct(x->zc, r_im, 1, &mag) : oz2_crt_reconstruct(x->cc, r_im, 1, &mag);
    P.im = oz2_to_double(&mag, neg, s + t - 2 * x->w);
    return P;
}

/* C[i, j] = alpha P when beta == 0 (C not read), else (alpha P) + (beta C),
 * one sum per part; alpha == 0 with P finite: beta C (+0 when beta == 0);
 * columns in parallel with OpenMP. */
static void zepilogue(int64_t m, int64_t n, oz_cplx alpha, oz_cplx beta, double *C, int64_t ldc, const zctx *x,
                      int native)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic)
#endif
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < m; i++) {
            double *c = &C[2 * (i + j * ldc)];
            const oz_cplx P = native ? plain_zdot(x->va, x->vb, i, j) : product_element(x, i, j);
            const oz_cplx ap = cmul(alpha, P);
            if (is_zero(alpha) && isfinite(P.re) && isfinite(P.im)) { /* 0 P: beta C (a non-finite P: NaN below) */
                const oz_cplx old = {c[0], c[1]};
                const oz_cplx bc = is_zero(beta) ? (oz_cplx){0.0, 0.0} : cmul(beta, old);
                c[0] = bc.re;
                c[1] = bc.im;
            } else if (is_zero(beta)) {
                c[0] = ap.re;
                c[1] = ap.im;
            } else {
                const oz_cplx old = {c[0], c[1]};
                const oz_cplx bc = cmul(beta, old);
                c[0] = ap.re + bc.re;
                c[1] = ap.im + bc.im;
            }
        }
    }
}

/* Automatic precision (crt/oz2_complex.h, "automatic precision"): one
 * operand's norm sums A1, scales g and estimate operands q[r * ke + kk] from
 * both parts; special rows keep A1 = 0 (no constraint, no range: their
 * elements take the plain dot product). */
typedef struct zest {
    uint64_t *A1;
    int *g;
    uint8_t *q;
} zest;

static int zest_make(const zview *v, int64_t ke, zest *e)
{
    const int64_t rows = v->re.rows, k = v->re.k;
    const size_t nr = (size_t)(rows > 0 ? rows : 1);
    e->A1 = calloc(nr, sizeof *e->A1);
    e->g = calloc(nr, sizeof *e->g);
    e->q = calloc(nr * (size_t)(ke > 0 ? ke : 1), 1);
    if (!e->A1 || !e->g || !e->q)
        return OZ_REF_NOMEM;
    for (int64_t r = 0; r < rows; r++) {
        const int sc = oz_scale_exponent(zrow_absmax(v, r));
        if (sc == OZ_SCALE_SPECIAL)
            continue;
        uint64_t a1 = 0;
        for (int64_t kk = 0; kk < k; kk++) {
            const oz_cplx x = zat(v, r, kk);
            a1 += oz2za_norm_term(x.re, x.im, sc);
        }
        e->A1[r] = a1;
        e->g[r] = oz2a_row_scale(a1, k);
        for (int64_t kk = 0; kk < ke; kk++) {
            const oz_cplx x = zat(v, r, kk);
            e->q[r * ke + kk] = (uint8_t)oz2za_quant(x.re, x.im, sc, e->g[r]);
        }
    }
    return OZ_REF_OK;
}

static void zest_free(zest *e)
{
    free(e->A1);
    free(e->g);
    free(e->q);
}

static int zauto_plan(const zview *va, const zview *vb, int target, oz2za_plan *plan, int *w_need_out)
{
    const int64_t k = va->re.k, ke = k < OZ2A_KEST ? k : OZ2A_KEST;
    plan->n_split = 0;
    plan->w = 0;
    *w_need_out = OZ2A_W_INF;
    if (k >= OZ2ZA_KMAX)
        return OZ_REF_OK;
    zest ea = {0}, eb = {0};
    int rc = zest_make(va, ke, &ea);
    if (rc == OZ_REF_OK)
        rc = zest_make(vb, ke, &eb);
    if (rc == OZ_REF_OK) {
        /* the needs from the first part's sums (k < K_1) and from all of K_E */
        int gmax = 0; /* the largest g and h of nonzero rows and columns */
        for (int64_t i = 0; i < va->re.rows; i++)
            gmax = ea.A1[i] && ea.g[i] > gmax ? ea.g[i] : gmax;
        for (int64_t j = 0; j < vb->re.rows; j++)
            gmax = eb.A1[j] && eb.g[j] > gmax ? eb.g[j] : gmax;
        const int64_t k1f = oz2a_k_first(ke, 0); /* complex calls: 5/8 */
        const int64_t k1 = oz2a_two_parts(k1f, ke, gmax) ? k1f : ke;
        int w_need1 = OZ2A_W_NONE, w_need = OZ2A_W_NONE;
        uint64_t a1m = 0, b1m = 0;
        for (int64_t i = 0; i < va->re.rows; i++)
            a1m = ea.A1[i] > a1m ? ea.A1[i] : a1m;
        for (int64_t j = 0; j < vb->re.rows; j++)
            b1m = eb.A1[j] > b1m ? eb.A1[j] : b1m;
        for (int64_t i = 0; i < va->re.rows && w_need < OZ2A_W_INF; i++) {
            if (ea.A1[i] == 0)
                continue;
            for (int64_t j = 0; j < vb->re.rows; j++) {
                uint32_t G = 0, G1 = 0;
                const uint8_t *qa = ea.q + i * ke, *qb = eb.q + j * ke;
                for (int64_t kk = 0; kk < ke; kk++) {
                    if (kk == k1)
                        G1 = G;
                    G += (uint32_t)qa[kk] * qb[kk];
                }
                G1 = k1 < ke ? G1 : G;
                const int w1 = oz2za_elem_w(ea.A1[i], eb.A1[j], ea.g[i], eb.g[j], G1, k, target);
                const int wij = oz2za_elem_w(ea.A1[i], eb.A1[j], ea.g[i], eb.g[j], G, k, target);
                w_need1 = w1 > w_need1 ? w1 : w_need1;
                w_need = wij > w_need ? wij : w_need;
            }
        }
        if (w_need >= OZ2A_W_INF)
            w_need1 = w_need; /* the loop stopped early: no plan either way */
        const oz2za_plan p1 = oz2za_make_plan(w_need1, a1m, b1m, k);
        const int first = oz2a_first_taken(p1.n_split, oz2z_make_plan(k, target).n_split);
        *w_need_out = first ? w_need1 : w_need;
        *plan = first ? p1 : oz2za_make_plan(w_need, a1m, b1m, k);
    }
    zest_free(&ea);
    zest_free(&eb);
    return rc;
}

int oz2_ref_zgemm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                  oz_cplx alpha, const double *A, int64_t lda,
                  const double *B, int64_t ldb, oz_cplx beta, double *C, int64_t ldc, int bits)
{
    return oz2_ref_zgemm_pm(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, bits, 0);
}

int oz2_ref_zgemm_pm(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k,
                     oz_cplx alpha, const double *A, int64_t lda,
                     const double *B, int64_t ldb, oz_cplx beta, double *C, int64_t ldc, int bits, int device_pm)
{
    const int autop = oz2a_is_auto(bits);
    if ((autop ? oz2a_target(bits) < OZ2A_B_MIN || oz2a_target(bits) > OZ2A_B_MAX : bits < 1) ||
        !oz_ref_args_valid(transa, transb, m, n, k, lda, ldb, ldc))
        return OZ_REF_INVALID;
    if (m == 0 || n == 0)
        return OZ_REF_OK;
    if (k == 0 || (is_zero(alpha) && !device_pm)) { /* C = beta C, A and B not read */
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                double *c = &C[2 * (i + j * ldc)];
                if (is_zero(beta)) {
                    c[0] = c[1] = 0.0;
                } else {
                    const oz_cplx old = {c[0], c[1]};
                    const oz_cplx bc = cmul(beta, old);
                    c[0] = bc.re;
                    c[1] = bc.im;
                }
            }
        return OZ_REF_OK;
    }
    const zview va = zview_of(oz_ref_view_a(transa, A, lda, m, k), transa == OZ_OP_C);
    const zview vb = zview_of(oz_ref_view_b(transb, B, ldb, k, n), transb == OZ_OP_C);
    int nmod, w, rc = OZ_REF_OK;
    if (autop) {
        oz2za_plan ap;
        int w_need;
        rc = zauto_plan(&va, &vb, oz2a_target(bits), &ap, &w_need);
        if (rc != OZ_REF_OK)
            return rc;
        if (ap.n_split == 0) { /* auto-native: the plain complex dot product, every element */
            const zctx ctx = {NULL, NULL, &va, &vb, NULL, NULL, 0};
            zepilogue(m, n, alpha, beta, C, ldc, &ctx, 1);
            return OZ_REF_OK;
        }
        nmod = ap.n_split;
        w = ap.w;
    } else {
        const oz2z_plan plan = oz2z_make_plan(k, bits);
        if (plan.n == 0)
            return OZ2_REF_UNREACHABLE;
        nmod = plan.n;
        w = plan.w;
    }
    oz2_crt_consts cc;
    oz2z_crt_consts zc;
    if (autop)
        oz2z_crt_init(&zc, nmod);
    else
        oz2_crt_init(&cc, nmod);
    zscaled sa = {0}, sb = {0};
    rc = scale_operand(&va, nmod, w, autop, &sa);
    if (rc == OZ_REF_OK)
        rc = scale_operand(&vb, nmod, w, autop, &sb);
    if (rc == OZ_REF_OK) {
        const zctx ctx = {&sa, &sb, &va, &vb, autop ? NULL : &cc, autop ? &zc : NULL, w};
        zepilogue(m, n, alpha, beta, C, ldc, &ctx, 0);
    }
    zscaled_free(&sa);
    zscaled_free(&sb);
    return rc;
}

int oz2z_ref_auto_plan(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
                       const double *B, int64_t ldb, int target, int *n_split, int *w, int *w_need)
{
    if (m < 0 || n < 0 || k < 1 || target < OZ2A_B_MIN || target > OZ2A_B_MAX)
        return OZ_REF_INVALID;
    const zview va = zview_of(oz_ref_view_a(transa, A, lda, m, k), transa == OZ_OP_C);
    const zview vb = zview_of(oz_ref_view_b(transb, B, ldb, k, n), transb == OZ_OP_C);
    oz2za_plan p;
    int wn;
    const int rc = zauto_plan(&va, &vb, target, &p, &wn);
    *n_split = p.n_split;
    *w = p.w;
    if (w_need)
        *w_need = wn;
    return rc;
}
