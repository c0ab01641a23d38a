/* reference/refcommon.c: the parts both CPU references share (refcommon.h). Built with -ffp-contract=off. */
#include "refcommon.h"

#include <math.h>

oz_ref_view oz_ref_view_a(oz_op op, const double *A, int64_t lda, int64_t m, int64_t k)
{
    oz_ref_view v = {A, m, k, 1, lda};
    if (op != OZ_OP_N) {
        v.row_stride = lda;
        v.k_stride = 1;
    }
    return v;
}

oz_ref_view oz_ref_view_b(oz_op op, const double *B, int64_t ldb, int64_t k, int64_t n)
{
    oz_ref_view v = {B, n, k, ldb, 1};
    if (op != OZ_OP_N) {
        v.row_stride = 1;
        v.k_stride = ldb;
    }
    return v;
}

static int valid_op(oz_op op)
{
    return op == OZ_OP_N || op == OZ_OP_T || op == OZ_OP_C;
}

static int64_t max1(int64_t x)
{
    return x > 1 ? x : 1;
}

int oz_ref_args_valid(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                      int64_t ldc)
{
    return valid_op(transa) && valid_op(transb) && m >= 0 && n >= 0 && k >= 0 &&
           lda >= max1(transa == OZ_OP_N ? m : k) && ldb >= max1(transb == OZ_OP_N ? k : n) && ldc >= max1(m);
}

int oz_ref_contract(oz_op transa, oz_op transb, int64_t m, int64_t n, int64_t k, int alpha_zero_host, int64_t lda,
                    int64_t ldb, double beta, double *C, int64_t ldc, int *done)
{
    *done = 1;
    if (!oz_ref_args_valid(transa, transb, m, n, k, lda, ldb, ldc))
        return OZ_REF_INVALID;
    if (m == 0 || n == 0)
        return OZ_REF_OK;
    if (k == 0 || alpha_zero_host) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++)
                C[i + j * ldc] = beta == 0.0 ? 0.0 : beta * C[i + j * ldc];
        return OZ_REF_OK;
    }
    *done = 0;
    return OZ_REF_OK;
}

double oz_ref_row_absmax(const oz_ref_view *v, int64_t r)
{
    double mx = 0.0;
    for (int64_t kk = 0; kk < v->k; kk++) {
        double a = fabs(oz_ref_at(v, r, kk));
        if (!(a <= mx)) /* also takes NaN, which then stays */
            mx = a;
        if (isnan(mx))
            break;
    }
    return mx;
}

double oz_ref_plain_dot(const oz_ref_view *va, const oz_ref_view *vb, int64_t i, int64_t j)
{
    double dot = 0.0;
    for (int64_t kk = 0; kk < va->k; kk++)
        dot = dot + oz_ref_at(va, i, kk) * oz_ref_at(vb, j, kk);
    return dot;
}

void oz_ref_epilogue(int64_t m, int64_t n, double alpha, double beta, double *C, int64_t ldc,
                     oz_ref_product_fn product, const void *ctx)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic)
#endif
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < m; i++) {
            double P = product(ctx, i, j);
            double *c = &C[i + j * ldc];
            if (alpha == 0.0 && isfinite(P)) /* 0 * P: beta C; a non-finite P gives NaN by the formula */
                *c = beta == 0.0 ? 0.0 : beta * *c;
            else
                *c = beta == 0.0 ? alpha * P : (alpha * P) + (beta * *c);
        }
    }
}
