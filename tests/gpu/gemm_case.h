/* tests/gpu/gemm_case.h: one DGEMM call as the GPU bit tests build it (sizes, host operands, C poisoned between m and ldc, the reference, the device copies and descriptor for one item, strided or pointer-array batches with host or device scalars) and the bit-for-bit check of its result (plain C). */
#ifndef OZCRT_TESTS_GPU_GEMM_CASE_H
#define OZCRT_TESTS_GPU_GEMM_CASE_H

#include "gpu_util.h"
#include "kernels/ozcrt_gemm.h"
#include "reference/refgemm.h"

#define GEMM_CASE_POISON 1.2345678e300
#define GEMM_CASE_MAX_BATCH 3

typedef struct gemm_case {
    /* set by the test before gemm_case_alloc */
    int ta, tb;                 /* 0 = N, 1 = T, 2 = C */
    int64_t m, n, k, lda, ldb, ldc, batch;
    int ptr_array;              /* cublasDgemmBatched's pointer arrays (batch <= GEMM_CASE_MAX_BATCH) */
    int bcast_a, bcast_b;       /* every item reads item 0's A / B (stride 0, or one pointer repeated) */
    int device_mode;            /* alpha and beta on the device */
    double alpha, beta;
    /* sizes: per item, and in all (A and B with one spare element: k may be 0) */
    size_t sa, sb, sc, a_tot, b_tot, c_tot;
    size_t ia, ib;              /* elements from one item's A / B to the next: sa / sb, or 0 when broadcast */
    double *A, *B, *C, *R;      /* host: operands, C (the input, then the result), the reference */
    double *dA, *dB, *dC, *dScal;
    void **parr;
    oz_gemm_desc d;             /* after gemm_case_upload */
    void *ws;                   /* after gemm_case_workspace */
    cudaStream_t st;
} gemm_case;

/* The sizes from the shape, and the host arrays (contents for the test to fill). */
static inline void gemm_case_alloc(gemm_case *c)
{
    c->sa = (size_t)c->lda * (size_t)(c->ta ? c->m : c->k);
    c->sb = (size_t)c->ldb * (size_t)(c->tb ? c->k : c->n);
    c->sc = (size_t)c->ldc * (size_t)c->n;
    c->ia = c->bcast_a ? 0 : c->sa;
    c->ib = c->bcast_b ? 0 : c->sb;
    c->a_tot = c->sa * (size_t)(c->bcast_a ? 1 : c->batch) + 1;
    c->b_tot = c->sb * (size_t)(c->bcast_b ? 1 : c->batch) + 1;
    c->c_tot = c->sc * (size_t)c->batch;
    c->A = malloc(8 * c->a_tot);
    c->B = malloc(8 * c->b_tot);
    c->C = malloc(8 * c->c_tot);
    c->R = malloc(8 * c->c_tot);
    if (!c->A || !c->B || !c->C || !c->R) {
        fprintf(stderr, "out of host memory\n");
        exit(2);
    }
}

/* Rows m .. ldc of C are not the call's: poison them (they must come back as they were). */
static inline void gemm_case_poison_c(gemm_case *c)
{
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t j = 0; j < c->n; j++)
            for (int64_t i = c->m; i < c->ldc; i++)
                c->C[(size_t)b * c->sc + (size_t)(i + j * c->ldc)] = GEMM_CASE_POISON;
}

/* R = the reference on a copy of C, item by item: ref(c, b, R of item b)
 * returns 0 or the reference's error (then the program stops: the case is
 * one the reference rejects). */
typedef int (*gemm_case_ref_fn)(const gemm_case *c, int64_t b, double *r, void *ctx);
static inline void gemm_case_reference(gemm_case *c, gemm_case_ref_fn ref, void *ctx, int idx)
{
    memcpy(c->R, c->C, 8 * c->c_tot);
    for (int64_t b = 0; b < c->batch; b++) {
        const int rc = ref(c, b, c->R + (size_t)b * c->sc, ctx);
        if (rc != 0) {
            fprintf(stderr, "reference rejected case %d (rc %d)\n", idx, rc);
            exit(2);
        }
    }
}

/* The Phase 22 CPU reference (oz_ref_dgemm) as a gemm_case_ref_fn. */
static inline int gemm_case_ref_p22(const gemm_case *c, int64_t b, double *r, void *ctx)
{
    (void)ctx;
    return oz_ref_dgemm_pm(c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->A + (size_t)b * c->ia, c->lda,
                           c->B + (size_t)b * c->ib, c->ldb, c->beta, r, c->ldc, c->device_mode);
}

/* alpha or beta: 0, 1, -1 or a random value in (-4, 4). */
static inline double gemm_case_scalar(void)
{
    switch (rng_range(0, 4)) {
    case 0: return 0.0;
    case 1: return 1.0;
    case 2: return -1.0;
    default: return rng_sym() * 4.0;
    }
}

/* Device copies and the descriptor. */
static inline void gemm_case_upload(gemm_case *c)
{
    c->dA = dev_upload(c->A, 8 * c->a_tot);
    c->dB = dev_upload(c->B, 8 * c->b_tot);
    c->dC = dev_upload(c->C, 8 * c->c_tot);
    c->dScal = dev_upload((double[]){c->alpha, c->beta}, 16);
    const oz_gemm_desc d = {c->ta, c->tb, c->m, c->n, c->k, c->dA, c->lda, (int64_t)c->ia, c->dB, c->ldb,
                            (int64_t)c->ib, c->dC, c->ldc, (int64_t)c->sc, NULL, NULL, NULL, c->batch,
                            &c->alpha, &c->beta, 0, OZ_ELEM_REAL, NULL};
    c->d = d;
    c->parr = NULL;
    if (c->ptr_array) {
        void *ptrs[3 * GEMM_CASE_MAX_BATCH] = {0};
        if (c->batch > GEMM_CASE_MAX_BATCH) {
            fprintf(stderr, "gemm_case: pointer-array batch of %lld > %d\n", (long long)c->batch,
                    GEMM_CASE_MAX_BATCH);
            exit(2);
        }
        for (int64_t b = 0; b < c->batch; b++) {
            ptrs[b] = c->dA + (size_t)b * c->ia;
            ptrs[GEMM_CASE_MAX_BATCH + b] = c->dB + (size_t)b * c->ib;
            ptrs[2 * GEMM_CASE_MAX_BATCH + b] = c->dC + (size_t)b * c->sc;
        }
        c->parr = dev_upload(ptrs, sizeof ptrs);
        c->d.Aarray = (const double *const *)c->parr;
        c->d.Barray = (const double *const *)(c->parr + GEMM_CASE_MAX_BATCH);
        c->d.Carray = (double *const *)(c->parr + 2 * GEMM_CASE_MAX_BATCH);
        c->d.A = NULL, c->d.B = NULL, c->d.C = NULL;
    }
    if (c->device_mode) {
        c->d.alpha = c->dScal;
        c->d.beta = c->dScal + 1;
        c->d.scalars_on_device = 1;
    }
}

/* After the call (its status rc) on the case's stream: the number of
 * elements of the device's C that differ from the reference (bits, NaN =
 * NaN), the first at *first, plus one when rc is not 0. */
static inline int64_t gemm_case_result(gemm_case *c, int rc, size_t *first)
{
    CUDA_CHECK(cudaStreamSynchronize(c->st));
    CUDA_CHECK(cudaGetLastError());
    dev_download(c->C, c->dC, 8 * c->c_tot);
    int64_t bad = 0;
    *first = 0;
    for (size_t i = 0; i < c->c_tot; i++)
        if (!same_double(c->C[i], c->R[i])) {
            if (!bad)
                *first = i;
            bad++;
        }
    return bad + (rc != 0);
}

/* A stream of its own and a workspace of `bytes`, filled with 0x77 on it:
 * nothing may depend on a workspace's old contents. */
static inline void gemm_case_workspace(gemm_case *c, size_t bytes)
{
    CUDA_CHECK(cudaStreamCreateWithFlags(&c->st, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&c->ws, bytes));
    CUDA_CHECK(cudaMemsetAsync(c->ws, 0x77, bytes, c->st));
}

static inline void gemm_case_free(gemm_case *c)
{
    if (c->ws)
        CUDA_CHECK(cudaFree(c->ws));
    if (c->st)
        CUDA_CHECK(cudaStreamDestroy(c->st));
    CUDA_CHECK(cudaFree(c->dA));
    CUDA_CHECK(cudaFree(c->dB));
    CUDA_CHECK(cudaFree(c->dC));
    CUDA_CHECK(cudaFree(c->dScal));
    if (c->parr)
        CUDA_CHECK(cudaFree(c->parr));
    free(c->A), free(c->B), free(c->C), free(c->R);
}

#endif
