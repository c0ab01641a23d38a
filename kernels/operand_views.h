/* kernels/operand_views.h: a GEMM call's operands, C and scalars as the kernels see them (op(A) as m rows of k, op(B) as n rows of k), shared by the modes' host entries (CUDA C++). */
#ifndef OZCRT_KERNELS_OPERAND_VIEWS_H
#define OZCRT_KERNELS_OPERAND_VIEWS_H

#include "ozcrt_gemm.h"
#include "p22_params.h"

/* A knob of a host entry for the tests (the library's test build,
 * OZ_TEST_HOOKS): a file-scope value and its extern "C" setter; in the
 * shipped library the constant `off`, and no setter. */
#ifdef OZ_TEST_HOOKS
#define OZ_TEST_KNOB(type, knob, setter, off) \
    static type knob;                          \
    extern "C" void setter(type v) { knob = v; }
#else
#define OZ_TEST_KNOB(type, knob, setter, off) static const type knob = (off);
#endif

/* op(A) as m rows of k. */
static inline oz_view oz_view_a(const oz_gemm_desc *d)
{
    oz_view v = {d->A, d->Aarray, d->strideA, d->m, d->k, 1, d->lda, 0};
    if (d->transa != 0)
        v.rs = d->lda, v.ks = 1;
    return v;
}

/* op(B) as n rows (its columns) of k. */
static inline oz_view oz_view_b(const oz_gemm_desc *d)
{
    oz_view v = {d->B, d->Barray, d->strideB, d->n, d->k, d->ldb, 1, 0};
    if (d->transb != 0)
        v.rs = 1, v.ks = d->ldb;
    return v;
}

/* Complex calls (d->elem == OZ_ELEM_COMPLEX): op(A) as m rows of k complex
 * elements, in doubles: element (r, kk) has its re at ptr(b)[r rs + kk ks]
 * and its im after it (rs, ks, the stride and offsets count doubles). */
static inline oz_view oz2z_view_a(const oz_gemm_desc *d)
{
    oz_view v = {d->A, d->Aarray, 2 * d->strideA, d->m, d->k, 2, 2 * d->lda, 0};
    if (d->transa != 0)
        v.rs = 2 * d->lda, v.ks = 2;
    return v;
}

/* op(B) as n rows (its columns) of k complex elements, in doubles. */
static inline oz_view oz2z_view_b(const oz_gemm_desc *d)
{
    oz_view v = {d->B, d->Barray, 2 * d->strideB, d->n, d->k, 2 * d->ldb, 2, 0};
    if (d->transb != 0)
        v.rs = 2, v.ks = 2 * d->ldb;
    return v;
}

/* A complex view (or a part of one) as plain doubles, for the scale and
 * residue kernels: rows contiguous (rs == 2), the parts' rows in turn (2
 * rows a complex row, rs 1); else K contiguous, the parts in turn along K
 * (2 k, ks 1). */
static inline oz_view oz2z_real_view(oz_view v)
{
    if (v.rs == 2) {
        v.rows *= 2;
        v.rs = 1;
    } else {
        v.k *= 2;
        v.ks = 1;
    }
    return v;
}

/* Complex alpha and beta as the kernels read them. */
static inline oz_zscalars oz_zscalars_of(const oz_gemm_desc *d)
{
    oz_zscalars sc = {};
    if (d->scalars_on_device) {
        sc.alpha_ptr = d->alpha;
        sc.beta_ptr = d->beta;
    } else {
        sc.alpha = make_double2(d->alpha[0], d->alpha[1]);
        sc.beta = make_double2(d->beta[0], d->beta[1]);
    }
    return sc;
}

/* alpha == 0 (both parts of a complex one) given on the host: C = beta C
 * with A and B not read, as BLAS (the host entries run the call as k == 0).
 * A device alpha of 0 is the kernels' to see: they multiply it (epilogue.cuh). */
static inline bool oz_host_alpha_zero(const oz_gemm_desc *d)
{
    return !d->scalars_on_device && d->alpha[0] == 0.0 && (d->elem != OZ_ELEM_COMPLEX || d->alpha[1] == 0.0);
}

/* The view advanced to batch item b0. */
static inline oz_view oz_view_from(oz_view v, int64_t b0)
{
    if (v.array)
        v.array += b0;
    else
        v.base += b0 * v.stride;
    return v;
}

/* C from batch item b0 on. */
static inline oz_out oz_out_from(const oz_gemm_desc *d, int64_t b0)
{
    oz_out c = {d->C, d->Carray, d->strideC, d->ldc};
    if (c.array)
        c.array += b0;
    else
        c.base += b0 * d->strideC;
    return c;
}

/* alpha and beta as the kernels read them: values, or device pointers. */
static inline oz_scalars oz_scalars_of(const oz_gemm_desc *d)
{
    oz_scalars sc = {};
    if (d->scalars_on_device) {
        sc.alpha_ptr = d->alpha;
        sc.beta_ptr = d->beta;
    } else {
        sc.alpha = *d->alpha;
        sc.beta = *d->beta;
    }
    return sc;
}

/* Rows r0 .. r0 + rows - 1 and k0 .. k0 + kl - 1 of the view, as a view of
 * its own (a block's rows or columns over a slab of K). */
static inline oz_view oz_view_part(oz_view v, int64_t r0, int64_t rows, int64_t k0, int64_t kl)
{
    v.off += r0 * v.rs + k0 * v.ks;
    v.rows = rows;
    v.k = kl;
    return v;
}

#endif
