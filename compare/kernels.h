/* compare/kernels.h: the C API of the shadow-mode GPU kernels (emulated vs native C, scale exponents, scratch copies), real and complex.
 *
 * Three kernels, one per file: kernel_metrics.cu (the per-call metrics of
 * compare/metrics.h), kernel_scales.cu (max |.| of the rows of op(A) and
 * columns of op(B), for the error bound), kernel_copy.cu (C <-> scratch for
 * strided and pointer-array batches); the first two are templates over the
 * element type (real, or complex: d->elem), one source for both, the copy
 * takes complex matrices as real ones. Every function enqueues on `stream` (a
 * cudaStream_t), never synchronises or allocates, initialises its own
 * outputs, and returns a cudaError_t (0 = cudaSuccess, else the first error,
 * also printed with file and line on stderr). */
#ifndef OZCRT_COMPARE_KERNELS_H
#define OZCRT_COMPARE_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include "compare/metrics.h"
#include "kernels/ozcrt_gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A batch of column-major matrices on the device: item b is array[b] when
 * array is not NULL (a device array of device pointers), else base + b stride.
 * ld and stride count the call's elements (ozcmp_scales, ozcmp_metrics: a
 * complex call's, d->elem OZ_ELEM_COMPLEX, are interleaved re/im pairs of
 * doubles, as cuDoubleComplex); ozcmp_copy copies doubles, so a complex
 * matrix goes to it as the real one of its parts: 2m rows, ld and stride
 * doubled. */
typedef struct ozcmp_mat_view {
    const double *base;
    const double *const *array;
    int64_t ld, stride;
} ozcmp_mat_view;

/* Writable form, for copy destinations. */
typedef struct ozcmp_mat_out {
    double *base;
    double *const *array;
    int64_t ld, stride;
} ozcmp_mat_out;

/* max |.| (complex calls: of max(|Re|, |Im|), the complex path's scale) of
 * every row of op(A) into absmax_a[b m + i] and every column of
 * op(B) into absmax_b[b n + j], as bit patterns (oz_f64_bits: for x >= 0
 * and +Inf they order like unsigned integers; NaN beats +Inf beats
 * everything), for batch items b < d->batch. oz_scale_exponent() of
 * the value gives the s_i, t_j of the error bounds (the same in both modes).
 * Reads A, B as described by d (pointer arrays when d->Aarray is set). */
int ozcmp_scales(const oz_gemm_desc *d, uint64_t *absmax_a, uint64_t *absmax_b, void *stream);

/* Compares the m x n (x batch) emulated result against the native one and
 * reduces the metrics of the whole call into *record (device memory, zeroed
 * here first). absmax_a / absmax_b from ozcmp_scales(), or both NULL to skip
 * the bound check; `bound`: the emulated path's error bound
 * (ozcmp_allowed_elem). m, n, k, batch, alpha, beta, scalars_on_device and
 * elem are taken from d (alpha and beta are read on the device in device
 * pointer mode; complex calls: the metrics on |.|, compare/metrics.h). */
int ozcmp_metrics(const oz_gemm_desc *d, ozcmp_mat_view emulated, ozcmp_mat_view native,
                   const uint64_t *absmax_a, const uint64_t *absmax_b, ozcmp_bound bound, ozcmp_accum *record,
                   void *stream);

/* Copies the m x n (x batch) matrices src into dst when `copy` is set.
 * When ptrs_out is not NULL (a device array of batch pointers) it also
 * receives each destination item's address: with dst.array NULL that is
 * dst.base + b dst.stride, moved up by (address of src item b mod 256) when
 * `mirror_align` is set (so a scratch copy has the caller's alignment; leave
 * 256 bytes of room per item). With copy == 0 only the pointers are written. */
int ozcmp_copy(int64_t m, int64_t n, int64_t batch, ozcmp_mat_view src, ozcmp_mat_out dst,
                double **ptrs_out, int mirror_align, int copy, void *stream);

#ifdef __cplusplus
}
#endif
#endif
