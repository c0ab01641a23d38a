/* tests/gpu/fuzz/fuzz_gen.h: the differential fuzzer's call generator (plain C, no CUDA: tests/scripts tests it on the CPU).
 *
 * Call `index` of run `seed` is a pure function of the two (fz_make), so a
 * failing call replays alone (fuzz_client --only INDEX). Each call draws an
 * entry point of the cuBLAS API the shim exports (the real and complex
 * GEMM families, their _64 and Ex forms, the grouped ones, cublasLtMatmul),
 * ops N/T/C and invalid values,
 * sizes from 0 to FZ_MAX_DIM and negative ones, leading dimensions at, above
 * and below the minimum, batch counts and strides (0 and overlapping for
 * A and B), host or device scalars in {0, 1, -1.5, tiny, NaN, Inf} (both
 * parts for complex), data with Inf/NaN and wide exponents, for the Ex
 * calls the algo (documented values and others), and the stream (the
 * default one or one of two created ones). fz_valid says
 * whether cuBLAS's documented rules accept it: the client then expects
 * CUBLAS_STATUS_SUCCESS natively, and nothing written otherwise. */
#ifndef OZCRT_TESTS_GPU_FUZZ_GEN_H
#define OZCRT_TESTS_GPU_FUZZ_GEN_H

#include <stdint.h>

#define FZ_MAX_DIM 48
#define FZ_MAX_BATCH 3 /* batch items of a call at most (a grouped call's items too) */
#define FZ_MAX_GROUPS 3
#define FZ_STREAMS 3 /* the legacy default stream and two created ones */

/* X(id, name, complex, kind, ex): kind 0 plain, 1 strided batch, 2 pointer-array batch, 3 grouped
 * (pointer arrays, per group its own ops, m, n, lds and size; k, alpha and beta shared by the
 * groups here), 4 cuBLASLt's matmul (layouts, D in place or not, orders, epilogue, a strided
 * batch); ex: the Ex forms take types (and, but for the grouped ones and Lt, an algo) */
#define FZ_ENTRY_POINTS(X)                                              \
    X(DGEMM, "cublasDgemm_v2", 0, 0, 0) X(DGEMM64, "cublasDgemm_v2_64", 0, 0, 0) \
    X(DSB, "cublasDgemmStridedBatched", 0, 1, 0) X(DSB64, "cublasDgemmStridedBatched_64", 0, 1, 0) \
    X(DB, "cublasDgemmBatched", 0, 2, 0) X(DB64, "cublasDgemmBatched_64", 0, 2, 0)                 \
    X(EX, "cublasGemmEx", -1, 0, 1) X(EX64, "cublasGemmEx_64", -1, 0, 1)                          \
    X(SBEX, "cublasGemmStridedBatchedEx", -1, 1, 1) X(SBEX64, "cublasGemmStridedBatchedEx_64", -1, 1, 1) \
    X(BEX, "cublasGemmBatchedEx", -1, 2, 1) X(BEX64, "cublasGemmBatchedEx_64", -1, 2, 1)           \
    X(ZGEMM, "cublasZgemm_v2", 1, 0, 0) X(ZGEMM64, "cublasZgemm_v2_64", 1, 0, 0)                   \
    X(Z3M, "cublasZgemm3m", 1, 0, 0) X(ZSB, "cublasZgemmStridedBatched", 1, 1, 0)                  \
    X(ZSB64, "cublasZgemmStridedBatched_64", 1, 1, 0) X(ZB, "cublasZgemmBatched", 1, 2, 0)         \
    X(ZB64, "cublasZgemmBatched_64", 1, 2, 0)                                                      \
    X(DGG, "cublasDgemmGroupedBatched", 0, 3, 0) X(DGG64, "cublasDgemmGroupedBatched_64", 0, 3, 0) \
    X(GGEX, "cublasGemmGroupedBatchedEx", -1, 3, 1) X(GGEX64, "cublasGemmGroupedBatchedEx_64", -1, 3, 1) \
    X(LT, "cublasLtMatmul", -1, 4, 1)

enum {
#define FZ_X_ID_(id, name, cx, kind, ex) FZ_EP_##id,
    FZ_ENTRY_POINTS(FZ_X_ID_)
#undef FZ_X_ID_
    FZ_EP_COUNT
};

static const char *const fz_ep_name[FZ_EP_COUNT] = {
#define FZ_X_NAME_(id, name, cx, kind, ex) name,
    FZ_ENTRY_POINTS(FZ_X_NAME_)
#undef FZ_X_NAME_
};
static const int fz_ep_complex[FZ_EP_COUNT] = { /* -1: by the Ex call's types */
#define FZ_X_CX_(id, name, cx, kind, ex) cx,
    FZ_ENTRY_POINTS(FZ_X_CX_)
#undef FZ_X_CX_
};
static const int fz_ep_kind[FZ_EP_COUNT] = {
#define FZ_X_KIND_(id, name, cx, kind, ex) kind,
    FZ_ENTRY_POINTS(FZ_X_KIND_)
#undef FZ_X_KIND_
};
static const int fz_ep_ex[FZ_EP_COUNT] = {
#define FZ_X_EX_(id, name, cx, kind, ex) ex,
    FZ_ENTRY_POINTS(FZ_X_EX_)
#undef FZ_X_EX_
};

/* The scalars' values (each part drawn from these). */
#define FZ_NSCALARS 6
static const double fz_scalars[FZ_NSCALARS] = {0.0, 1.0, -1.5, 0x1p-1000, __builtin_nan(""), __builtin_inf()};

/* The Ex calls' type sets: 0 all CUDA_R_64F, 1 all CUDA_C_64F, 2 mixed (cuBLAS refuses or computes
 * another type: the shim must forward), each with compute 64F (or 64F pedantic in 1 of 8). */
enum { FZ_T_REAL, FZ_T_COMPLEX, FZ_T_MIXED };

/* Data distributions. */
enum { FZ_D_UNIFORM, FZ_D_WIDE, FZ_D_INT, FZ_D_SPECIAL, FZ_D_COUNT };

/* One group of a grouped call (group 0 is the call's own ta, tb, m, n, lds). */
typedef struct fz_group {
    int ta, tb;
    int64_t m, n, lda, ldb, ldc, size;
} fz_group;

typedef struct fz_call {
    uint64_t index;
    int ep, complex_, types, pedantic;
    int ta, tb; /* raw: 0 N, 1 T, 2 C, or an invalid value */
    int64_t m, n, k, lda, ldb, ldc, batch, strideA, strideB, strideC;
    int device_scalars;
    int algo; /* the Ex calls' cublasGemmAlgo_t: -1 (default), 0..23, 99..115, or (1 in 10) a value outside */
    double alpha[2], beta[2];
    int dist;
    uint64_t data_seed;
    int groups; /* grouped calls: group_count (0..FZ_MAX_GROUPS), grp[] and batch = the items of all */
    fz_group grp[FZ_MAX_GROUPS];
    /* cublasLtMatmul: D's leading dimension and batch stride, D at C's address (in place) or its own
     * buffer, A and B in row order (CUBLASLT_ORDER_ROW, as XLA passes them), the BIAS epilogue */
    int64_t ldd, strideD;
    int in_place, row_order, bias;
    int stream; /* which of FZ_STREAMS streams the call runs on (0: the default stream) */
} fz_call;

/* splitmix64: the generator's stream for (seed, index) */
static inline uint64_t fz_mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static inline int64_t fz_range(uint64_t *s, int64_t lo, int64_t hi) { return lo + (int64_t)(fz_mix(s) % (uint64_t)(hi - lo + 1)); }

/* rows of A and B as stored, for op values N (0) or not */
static inline int64_t fz_rows_a(const fz_call *c) { return c->ta == 0 ? c->m : c->k; }
static inline int64_t fz_cols_a(const fz_call *c) { return c->ta == 0 ? c->k : c->m; }
static inline int64_t fz_rows_b(const fz_call *c) { return c->tb == 0 ? c->k : c->n; }
static inline int64_t fz_cols_b(const fz_call *c) { return c->tb == 0 ? c->n : c->k; }
/* The least leading dimension of A and B: the stored rows, or in row order (cuBLASLt) the columns. */
static inline int64_t fz_min_lda(const fz_call *c) { return c->row_order ? fz_cols_a(c) : fz_rows_a(c); }
static inline int64_t fz_min_ldb(const fz_call *c) { return c->row_order ? fz_cols_b(c) : fz_rows_b(c); }
/* How many matrices a row-order A or B spans in memory: ld per stored row instead of per column. */
static inline int64_t fz_span_a(const fz_call *c) { return c->row_order ? fz_rows_a(c) : fz_cols_a(c); }
static inline int64_t fz_span_b(const fz_call *c) { return c->row_order ? fz_rows_b(c) : fz_cols_b(c); }

static inline int64_t fz_max1(int64_t x) { return x > 1 ? x : 1; }

/* Whether an algo value is one cuBLAS documents: CUBLAS_GEMM_DEFAULT (-1),
 * CUBLAS_GEMM_ALGO0..23, CUBLAS_GEMM_DEFAULT_TENSOR_OP (99) and
 * CUBLAS_GEMM_ALGO0..15_TENSOR_OP (100..115). */
static inline int fz_algo_known(int algo) { return algo == -1 || (algo >= 0 && algo <= 23) || (algo >= 99 && algo <= 115); }

/* Whether one group's own arguments are valid (k the call's). */
static inline int fz_group_valid(const fz_group *g, int64_t k)
{
    if (g->ta < 0 || g->ta > 2 || g->tb < 0 || g->tb > 2 || g->m < 0 || g->n < 0 || g->size < 0)
        return 0;
    return g->lda >= fz_max1(g->ta == 0 ? g->m : k) && g->ldb >= fz_max1(g->tb == 0 ? k : g->n) && g->ldc >= fz_max1(g->m);
}

/* Whether cuBLAS's documented rules accept the call (and it computes a product: types all one, a documented algo). */
static inline int fz_valid(const fz_call *c)
{
    if (fz_ep_kind[c->ep] == 3) {
        if (c->k < 0 || c->groups < 0 || (fz_ep_ex[c->ep] && c->types == FZ_T_MIXED))
            return 0;
        for (int g = 0; g < c->groups; g++)
            if (!fz_group_valid(&c->grp[g], c->k))
                return 0;
        return 1;
    }
    if (c->ta < 0 || c->ta > 2 || c->tb < 0 || c->tb > 2)
        return 0;
    if (c->m < 0 || c->n < 0 || c->k < 0 || c->batch < 0)
        return 0;
    if (c->lda < fz_max1(fz_min_lda(c)) || c->ldb < fz_max1(fz_min_ldb(c)) || c->ldc < fz_max1(c->m))
        return 0;
    if (fz_ep_kind[c->ep] == 4) /* Lt: sizes >= 1 here, D's layout as C's when in place, both types one */
        return c->types != FZ_T_MIXED && c->m >= 1 && c->n >= 1 && c->k >= 1 && c->batch >= 1 &&
               c->ldd >= fz_max1(c->m) && (!c->in_place || c->ldd == c->ldc);
    if (fz_ep_ex[c->ep] && (c->types == FZ_T_MIXED || !fz_algo_known(c->algo)))
        return 0;
    return 1;
}

/* Call `index` of run `seed`. */
static inline void fz_make(uint64_t seed, uint64_t index, fz_call *c)
{
    uint64_t s = seed ^ (index * 0xD1B54A32D192ED03ULL);
    (void)fz_mix(&s);
    c->index = index;
    c->ep = (int)fz_range(&s, 0, FZ_EP_COUNT - 1);
    c->types = fz_ep_ex[c->ep] ? (int)fz_range(&s, 0, 9) : 0;
    c->types = c->types < 5 ? FZ_T_REAL : c->types < 9 ? FZ_T_COMPLEX : FZ_T_MIXED;
    c->pedantic = fz_ep_ex[c->ep] && fz_range(&s, 0, 7) == 0;
    c->complex_ = fz_ep_complex[c->ep] < 0 ? c->types == FZ_T_COMPLEX : fz_ep_complex[c->ep];
    /* ops: mostly valid; 1 in 25 an invalid value */
    c->ta = (int)fz_range(&s, 0, 2);
    c->tb = (int)fz_range(&s, 0, 2);
    if (fz_range(&s, 0, 24) == 0)
        c->ta = fz_range(&s, 0, 1) ? 3 : 111;
    if (fz_range(&s, 0, 24) == 0)
        c->tb = fz_range(&s, 0, 1) ? -1 : 5;
    /* sizes: 0 in 1 of 12, negative in 1 of 40 */
    int64_t *dims[3] = {&c->m, &c->n, &c->k};
    for (int i = 0; i < 3; i++) {
        const int64_t r = fz_range(&s, 0, 119);
        *dims[i] = r < 10 ? 0 : r < 13 ? -fz_range(&s, 1, 5) : fz_range(&s, 1, FZ_MAX_DIM);
    }
    /* lds: the minimum, above it, or (1 in 20) below it */
    int64_t *lds[3] = {&c->lda, &c->ldb, &c->ldc};
    const int64_t mins[3] = {fz_max1(fz_rows_a(c)), fz_max1(fz_rows_b(c)), fz_max1(c->m)};
    for (int i = 0; i < 3; i++) {
        const int64_t r = fz_range(&s, 0, 19);
        *lds[i] = r == 0 ? mins[i] - 1 : r < 10 ? mins[i] : mins[i] + fz_range(&s, 1, 5);
    }
    c->batch = fz_ep_kind[c->ep] == 0 ? 1 : fz_range(&s, 0, 9) == 0 ? 0 : fz_range(&s, 1, FZ_MAX_BATCH);
    /* strides (strided kind): whole matrices apart, more, or 0 for A and B (one operand for every item) */
    const int64_t ea = c->lda * fz_max1(fz_cols_a(c)), eb = c->ldb * fz_max1(fz_cols_b(c)), ec = c->ldc * fz_max1(c->n);
    c->strideA = fz_range(&s, 0, 9) == 0 ? 0 : ea + fz_range(&s, 0, 3);
    c->strideB = fz_range(&s, 0, 9) == 0 ? 0 : eb + fz_range(&s, 0, 3);
    c->strideC = ec + fz_range(&s, 0, 3);
    c->device_scalars = (int)fz_range(&s, 0, 1);
    for (int p = 0; p < 2; p++) {
        /* mostly ordinary values: NaN and Inf in 1 of 10 */
        const int64_t ra = fz_range(&s, 0, 29), rb = fz_range(&s, 0, 29);
        c->alpha[p] = fz_scalars[ra < 3 ? FZ_NSCALARS - 1 - ra % 2 : 1 + ra % 3];
        c->beta[p] = fz_scalars[rb < 3 ? FZ_NSCALARS - 1 - rb % 2 : rb % 4];
        if (!c->complex_)
            break;
    }
    if (!c->complex_)
        c->alpha[1] = c->beta[1] = 0.0;
    if (fz_range(&s, 0, 14) == 0) /* alpha zero (both parts) */
        c->alpha[0] = c->alpha[1] = 0.0;
    c->dist = (int)fz_range(&s, 0, FZ_D_COUNT - 1);
    c->data_seed = fz_mix(&s);
    /* drawn last, so that the calls of a seed keep their other fields */
    static const int bad_algos[5] = {24, 98, 116, 9999, -2};
    const int64_t ra = fz_range(&s, 0, 19);
    c->algo = !fz_ep_ex[c->ep] || fz_ep_kind[c->ep] == 3 ? -1 : ra < 2 ? bad_algos[fz_range(&s, 0, 4)] : ra < 14 ? -1
              : fz_range(&s, 0, 1) ? (int)fz_range(&s, 0, 23) : (int)fz_range(&s, 99, 115);
    /* grouped: 0..3 groups (0 in 1 of 10), group 0 the call's own shape, the others drawn the
     * same way; sizes 0..2 (-1 in 1 of 30) within FZ_MAX_BATCH items */
    c->groups = 0;
    if (fz_ep_kind[c->ep] == 3) {
        c->groups = fz_range(&s, 0, 9) == 0 ? 0 : (int)fz_range(&s, 1, FZ_MAX_GROUPS);
        int64_t items = 0;
        for (int g = 0; g < c->groups; g++) {
            fz_group *x = &c->grp[g];
            if (g == 0) {
                x->ta = c->ta, x->tb = c->tb, x->m = c->m, x->n = c->n, x->lda = c->lda, x->ldb = c->ldb, x->ldc = c->ldc;
            } else {
                x->ta = (int)fz_range(&s, 0, 2);
                x->tb = (int)fz_range(&s, 0, 2);
                x->m = fz_range(&s, 0, 11) == 0 ? 0 : fz_range(&s, 1, FZ_MAX_DIM);
                x->n = fz_range(&s, 0, 11) == 0 ? 0 : fz_range(&s, 1, FZ_MAX_DIM);
                const int64_t gmins[3] = {fz_max1(x->ta == 0 ? x->m : c->k), fz_max1(x->tb == 0 ? c->k : x->n),
                                          fz_max1(x->m)};
                int64_t *glds[3] = {&x->lda, &x->ldb, &x->ldc};
                for (int i = 0; i < 3; i++) {
                    const int64_t r = fz_range(&s, 0, 29);
                    *glds[i] = r == 0 ? gmins[i] - 1 : r < 15 ? gmins[i] : gmins[i] + fz_range(&s, 1, 5);
                }
            }
            x->size = fz_range(&s, 0, 29) == 0 ? -1 : fz_range(&s, 0, 2);
            if (x->size > FZ_MAX_BATCH - items)
                x->size = FZ_MAX_BATCH - items;
            items += x->size > 0 ? x->size : 0;
        }
        c->batch = items;
    }
    c->stream = (int)fz_range(&s, 0, FZ_STREAMS - 1);
    /* cuBLASLt: sizes 1..48 (its rules for 0 are its own), lds redrawn for the order, D in place in
     * half the calls (ldd == ldc but 1 in 10), BIAS in 1 of 5, a batch of 1 or 2 */
    c->in_place = c->row_order = c->bias = 0;
    c->ldd = c->ldc;
    c->strideD = c->strideC;
    if (fz_ep_kind[c->ep] == 4) {
        c->m = fz_range(&s, 1, FZ_MAX_DIM), c->n = fz_range(&s, 1, FZ_MAX_DIM), c->k = fz_range(&s, 1, FZ_MAX_DIM);
        c->row_order = fz_range(&s, 0, 3) == 0;
        c->in_place = (int)fz_range(&s, 0, 1);
        c->bias = fz_range(&s, 0, 4) == 0;
        c->batch = fz_range(&s, 1, 2);
        const int64_t lmins[4] = {fz_max1(fz_min_lda(c)), fz_max1(fz_min_ldb(c)), fz_max1(c->m), fz_max1(c->m)};
        int64_t *llds[4] = {&c->lda, &c->ldb, &c->ldc, &c->ldd};
        for (int i = 0; i < 4; i++) {
            const int64_t r = fz_range(&s, 0, 19);
            *llds[i] = r == 0 ? lmins[i] - 1 : r < 12 ? lmins[i] : lmins[i] + fz_range(&s, 1, 5);
        }
        if (c->in_place && fz_range(&s, 0, 9) != 0)
            c->ldd = c->ldc;
        c->strideA = c->lda * fz_max1(fz_span_a(c)) + fz_range(&s, 0, 3);
        c->strideB = c->ldb * fz_max1(fz_span_b(c)) + fz_range(&s, 0, 3);
        c->strideC = c->ldc * fz_max1(c->n) + fz_range(&s, 0, 3);
        c->strideD = c->in_place ? c->strideC : c->ldd * fz_max1(c->n) + fz_range(&s, 0, 3);
        c->algo = -1;
    }
}

#endif
