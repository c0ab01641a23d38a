/* compare/metrics.c: the host model of the shadow-mode metrics (definitions in metrics.h). */
#include "compare/metrics.h"

#include <string.h>

static double bits_to_double(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

void ozcmp_accum_init(ozcmp_accum *acc)
{
    memset(acc, 0, sizeof *acc);
}

void ozcmp_accum_merge(ozcmp_accum *a, const ozcmp_accum *b)
{
    if (b->max_abs_bits > a->max_abs_bits)
        a->max_abs_bits = b->max_abs_bits;
    if (b->max_rel_bits > a->max_rel_bits)
        a->max_rel_bits = b->max_rel_bits;
    for (int i = 0; i < OZCMP_NBINS; i++) {
        a->sq_diff[i] += b->sq_diff[i];
        a->sq_native[i] += b->sq_native[i];
    }
    a->beyond_bound += b->beyond_bound;
    a->nonfinite_mismatch += b->nonfinite_mismatch;
    a->finite_pairs += b->finite_pairs;
}

/* The highest non-empty bin, -1 if all are zero. */
static int top_bin(const double q[OZCMP_NBINS])
{
    for (int i = OZCMP_NBINS - 1; i >= 0; i--)
        if (q[i] > 0.0)
            return i;
    return -1;
}

/* sum_i q[i] 2^(1200 (i - top)): the sum in units of the top bin. */
static double in_top_units(const double q[OZCMP_NBINS], int top)
{
    double v = 0.0;
    for (int i = 0; i <= top; i++)
        v += ldexp(q[i], 1200 * (i - top));
    return v;
}

double ozcmp_norm_ratio(const double num[OZCMP_NBINS], const double den[OZCMP_NBINS])
{
    int tn = top_bin(num), td = top_bin(den);
    if (tn < 0)
        return 0.0;
    if (td < 0)
        return INFINITY;
    double vn = in_top_units(num, tn), vd = in_top_units(den, td);
    return ldexp(sqrt(vn / vd), 600 * (tn - td));
}

ozcmp_call_metrics ozcmp_finish(const ozcmp_accum *acc, uint64_t elements)
{
    ozcmp_call_metrics r;
    r.max_abs = bits_to_double(acc->max_abs_bits);
    r.max_rel = bits_to_double(acc->max_rel_bits);
    r.normwise = ozcmp_norm_ratio(acc->sq_diff, acc->sq_native);
    r.beyond_bound = acc->beyond_bound;
    r.nonfinite_mismatch = acc->nonfinite_mismatch;
    r.elements = elements;
    return r;
}

/* max |.| of `len` elements x[0], x[step], ... (es doubles an element: 1
 * real, 2 complex, whose max is over both parts), NaN if any is NaN. */
static double absmax_strided(const double *x, int64_t len, int64_t step, int es)
{
    double mx = 0.0;
    for (int64_t l = 0; l < len; l++) {
        for (int p = 0; p < es; p++) {
            double a = fabs(x[es * l * step + p]);
            if (a != a)
                return a;
            if (a > mx)
                mx = a;
        }
    }
    return mx;
}

/* ozcmp_scales_host and ozcmp_zscales_host: es doubles an element, x + es i
 * the address of element i. */
static void scales_host(int es, int transa, int transb, int64_t m, int64_t n, int64_t k, const double *A,
                        int64_t lda, const double *B, int64_t ldb, int *s, int *t)
{
    /* op(A)[i, l] is A[i + l lda] (N) or A[l + i lda] (T, C). */
    for (int64_t i = 0; i < m; i++)
        s[i] = oz_scale_exponent(transa == 0 ? absmax_strided(A + es * i, k, lda, es)
                                             : absmax_strided(A + es * i * lda, k, 1, es));
    /* op(B)[l, j] is B[l + j ldb] (N) or B[j + l ldb] (T, C). */
    for (int64_t j = 0; j < n; j++)
        t[j] = oz_scale_exponent(transb == 0 ? absmax_strided(B + es * j * ldb, k, 1, es)
                                             : absmax_strided(B + es * j, k, ldb, es));
}

void ozcmp_scales_host(int transa, int transb, int64_t m, int64_t n, int64_t k,
                        const double *A, int64_t lda, const double *B, int64_t ldb, int *s, int *t)
{
    scales_host(1, transa, transb, m, n, k, A, lda, B, ldb, s, t);
}

void ozcmp_zscales_host(int transa, int transb, int64_t m, int64_t n, int64_t k,
                         const double *A, int64_t lda, const double *B, int64_t ldb, int *s, int *t)
{
    scales_host(2, transa, transb, m, n, k, A, lda, B, ldb, s, t);
}

/* ozcmp_matrix_host and ozcmp_zmatrix_host: the element type a flag of the shared definitions. */
static void matrix_host(ozcmp_accum *acc, int cplx, int64_t m, int64_t n, const double *E, int64_t lde,
                        const double *N, int64_t ldn, const int *s, const int *t, ozcmp_bound bound,
                        const double *alpha, const double *beta, int64_t k)
{
    const int64_t es = cplx ? 2 : 1;
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < m; i++) {
            const double *e = E + es * (i + j * lde), *nv = N + es * (i + j * ldn);
            double allowed = (s && t) ? ozcmp_allowed_elem(bound, cplx, alpha, beta, nv, s[i], t[j], k) : INFINITY;
            ozcmp_accum_add_elem(acc, cplx, e, nv, allowed);
        }
    }
}

void ozcmp_matrix_host(ozcmp_accum *acc, int64_t m, int64_t n, const double *E, int64_t lde,
                        const double *N, int64_t ldn, const int *s, const int *t, ozcmp_bound bound,
                        double alpha, double beta, int64_t k)
{
    matrix_host(acc, 0, m, n, E, lde, N, ldn, s, t, bound, &alpha, &beta, k);
}

void ozcmp_zmatrix_host(ozcmp_accum *acc, int64_t m, int64_t n, const double *E, int64_t lde,
                         const double *N, int64_t ldn, const int *s, const int *t, ozcmp_bound bound,
                         const double alpha[2], const double beta[2], int64_t k)
{
    matrix_host(acc, 1, m, n, E, lde, N, ldn, s, t, bound, alpha, beta, k);
}
