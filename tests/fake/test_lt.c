/* tests/fake/test_lt.c: the shim's cublasLtMatmul and cublasLtDestroy under LD_PRELOAD, against the recording fake cuBLASLt (no GPU).
 *
 * With no GPU every FP64 call that decodes is routed and forwarded (no-gpu,
 * or mode-off in that suite) and the others keep their own reasons; every
 * forwarded call reaches the fake with the caller's exact arguments (the
 * bias epilogue's beta 0 too: the shim's beta 1 is for its own run only).
 * A non-FP64 call and one that cuBLAS itself makes (through the fake
 * libcublas, as libcublas calls cuBLASLt for its GEMMs) pass straight
 * through: not logged, not counted. Complex products (scale and layouts
 * CUDA_C_64F) are routed too: complex-phase22 in the phase22 mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_cublas.h"

static int g_off;
static const double one = 1.0, zero = 0.0, half = 0.5;
#define PA ((const void *)0x1000)
#define PB ((const void *)0x2000)
#define PC ((void *)0x3000)
#define PD ((void *)0x4000)
#define PFAR ((void *)0x40000000) /* a D apart from C, not overlapping it */
#define PBIAS ((const void *)0x5000)
#define PWS ((void *)0x6000)
#define PSTREAM ((cudaStream_t)0x7000)
static cublasLtHandle_t g_lt;

static int log_lines(void)
{
    const char *path = getenv("OZCRT_LOG_FILE");
    FILE *f = path ? fopen(path, "r") : NULL;
    int n = 0;
    char line[1024];
    while (f && fgets(line, sizeof line, f))
        n += strncmp(line, "ozcrt: cublasLtMatmul", 21) == 0;
    if (f)
        fclose(f);
    return n;
}

/* The last cublasLtMatmul log line ends with "-> forward: <reason>" and contains `detail`. */
static void assert_logged(const char *reason, const char *detail)
{
    const char *path = getenv("OZCRT_LOG_FILE");
    FILE *f = path ? fopen(path, "r") : NULL;
    char line[1024], last[1024] = "", want[128];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "ozcrt: cublasLtMatmul", 21) == 0)
            snprintf(last, sizeof last, "%s", line);
    if (f)
        fclose(f);
    /* the mode off: every call that reaches the router is mode-off (the decoding's reasons come first) */
    const int routed = strcmp(reason, "no-gpu") == 0 || strcmp(reason, "complex-phase22") == 0;
    snprintf(want, sizeof want, "-> forward: %s\n", g_off && routed ? "mode-off" : reason);
    if (!strstr(last, want) || !strstr(last, detail))
        fail_msg("last cublasLtMatmul log line \"%s\" lacks \"%s\" or \"%s\"", last, want, detail);
}

/* An operation: its descriptor and the four layouts (rows x cols, ld = rows), FP64 unless said. */
typedef struct op {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c, d;
} op;

static op make_typed(cublasComputeType_t compute, cudaDataType scale, cudaDataType dt, int ta, uint64_t m, uint64_t n,
                     uint64_t k)
{
    op o;
    assert_int_equal(cublasLtMatmulDescCreate(&o.desc, compute, scale), CUBLAS_STATUS_SUCCESS);
    const int32_t t = ta;
    assert_int_equal(cublasLtMatmulDescSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t), 0);
    const uint64_t ra = ta == CUBLAS_OP_N ? m : k, ca = ta == CUBLAS_OP_N ? k : m;
    assert_int_equal(cublasLtMatrixLayoutCreate(&o.a, dt, ra, ca, (int64_t)ra), 0);
    assert_int_equal(cublasLtMatrixLayoutCreate(&o.b, dt, k, n, (int64_t)k), 0);
    assert_int_equal(cublasLtMatrixLayoutCreate(&o.c, dt, m, n, (int64_t)m), 0);
    assert_int_equal(cublasLtMatrixLayoutCreate(&o.d, dt, m, n, (int64_t)m), 0);
    return o;
}

static op make(cublasComputeType_t compute, cudaDataType scale, int ta, uint64_t m, uint64_t n, uint64_t k)
{
    return make_typed(compute, scale, compute == CUBLAS_COMPUTE_32F ? CUDA_R_32F : CUDA_R_64F, ta, m, n, k);
}

/* A layout in row order with leading dimension ld (an operand as XLA passes it). */
static void row_order(cublasLtMatrixLayout_t l, int64_t ld)
{
    const int32_t row = CUBLASLT_ORDER_ROW;
    assert_int_equal(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &row, sizeof row), 0);
    assert_int_equal(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_LD, &ld, sizeof ld), 0);
}

static void drop(op *o)
{
    cublasLtMatrixLayoutDestroy(o->a), cublasLtMatrixLayoutDestroy(o->b);
    cublasLtMatrixLayoutDestroy(o->c), cublasLtMatrixLayoutDestroy(o->d);
    cublasLtMatmulDescDestroy(o->desc);
}

/* The call through the shim; the fake answers ARCH_MISMATCH (proves cuBLASLt's status comes back). */
static void call(const op *o, const void *beta, void *D)
{
    fake_cublaslt_reset();
    fake_cublaslt_set_status(CUBLAS_STATUS_ARCH_MISMATCH);
    assert_int_equal(cublasLtMatmul(g_lt, o->desc, &one, PA, o->a, PB, o->b, beta, PC, o->c, D, o->d, NULL, PWS, 4096,
                                    PSTREAM),
                     CUBLAS_STATUS_ARCH_MISMATCH);
}

/* The fake got exactly the caller's call. */
static void assert_untouched(const op *o, const void *beta, void *D)
{
    const fake_lt_call *r = fake_cublaslt_last();
    assert_int_equal(fake_cublaslt_count(), 1);
    assert_ptr_equal(r->handle, g_lt);
    assert_ptr_equal(r->desc, o->desc);
    assert_ptr_equal(r->alpha, &one);
    assert_ptr_equal(r->beta, beta);
    assert_ptr_equal(r->A, PA);
    assert_ptr_equal(r->B, PB);
    assert_ptr_equal(r->C, PC);
    assert_ptr_equal(r->D, D);
    assert_ptr_equal(r->Adesc, o->a);
    assert_ptr_equal(r->Bdesc, o->b);
    assert_ptr_equal(r->Cdesc, o->c);
    assert_ptr_equal(r->Ddesc, o->d);
    assert_null(r->algo);
    assert_ptr_equal(r->workspace, PWS);
    assert_int_equal(r->workspace_size, 4096);
    assert_ptr_equal(r->stream, PSTREAM);
}

/* FP64 products the shim decodes: routed (no GPU here: forwarded, no-gpu), the shapes in the log. */
static void t_routed(void **state)
{
    (void)state;
    op o = make(CUBLAS_COMPUTE_64F, CUDA_R_64F, CUBLAS_OP_T, 768, 640, 700);
    /* in place (C = D: here the fake's pointers differ, so beta 0 makes C unread) */
    call(&o, &zero, PD);
    assert_untouched(&o, &zero, PD);
    assert_logged("no-gpu", "m=768 n=640 k=700 ops=TN batch=1");
    /* the BIAS epilogue, beta 0: as PyTorch's nn.Linear */
    const uint32_t bias_ep = CUBLASLT_EPILOGUE_BIAS;
    const void *bias = PBIAS;
    assert_int_equal(cublasLtMatmulDescSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &bias_ep, sizeof bias_ep), 0);
    assert_int_equal(cublasLtMatmulDescSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias), 0);
    call(&o, &zero, PD);
    assert_untouched(&o, &zero, PD);
    assert_logged("no-gpu", "m=768 n=640 k=700 ops=TN batch=1");
    drop(&o);
    /* a strided batch of 3, in place with beta 0.5 */
    o = make(CUBLAS_COMPUTE_64F, CUDA_R_64F, CUBLAS_OP_N, 600, 500, 400);
    const int32_t three = 3;
    cublasLtMatrixLayout_t ls[4] = {o.a, o.b, o.c, o.d};
    for (int i = 0; i < 4; i++)
        assert_int_equal(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &three, 4), 0);
    fake_cublaslt_reset();
    assert_int_equal(cublasLtMatmul(g_lt, o.desc, &one, PA, o.a, PB, o.b, &half, PC, o.c, PC, o.c, NULL, PWS, 4096,
                                    PSTREAM),
                     CUBLAS_STATUS_SUCCESS);
    assert_logged("no-gpu", "m=600 n=500 k=400 ops=NN batch=3");
    /* D apart from C and beta not 0: C copied into D first (routed); dense batches of any count, others
     * of 16 items at most (else lt-unsupported), C and D not overlapping */
    call(&o, &half, PFAR);
    assert_untouched(&o, &half, PFAR);
    assert_logged("no-gpu", "m=600 n=500 k=400 ops=NN batch=3");
    const int64_t sparse = 600 * 500 + 7;
    const int32_t many = 17;
    assert_int_equal(cublasLtMatrixLayoutSetAttribute(o.c, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &sparse, 8), 0);
    call(&o, &half, PFAR);
    assert_logged("no-gpu", "batch=3");
    for (int i = 0; i < 4; i++)
        assert_int_equal(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &many, 4), 0);
    call(&o, &half, PFAR);
    assert_untouched(&o, &half, PFAR);
    assert_logged("lt-unsupported", "(C apart from D in a batch not dense)");
    const int64_t dense = 600 * 500;
    assert_int_equal(cublasLtMatrixLayoutSetAttribute(o.c, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &dense, 8), 0);
    assert_int_equal(cublasLtMatrixLayoutSetAttribute(o.d, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &dense, 8), 0);
    call(&o, &half, PFAR);
    assert_logged("no-gpu", "batch=17");
    /* D far enough for one item, not for 17 */
    call(&o, &half, (char *)PC + 600 * 500 * 8);
    assert_logged("lt-unsupported", "(C apart from D but overlapping it)");
    drop(&o);
    /* XLA's layouts: A and B in row order (their row-major arrays), D and C
     * in column order: each operand is its column-order transpose under the
     * other op (A row 768 x 700, ld 700, N: the column-order 700 x 768 under T) */
    o = make(CUBLAS_COMPUTE_64F, CUDA_R_64F, CUBLAS_OP_N, 768, 640, 700);
    row_order(o.a, 700);
    row_order(o.b, 640);
    call(&o, &zero, PD);
    assert_untouched(&o, &zero, PD);
    assert_logged("no-gpu", "m=768 n=640 k=700 ops=TT batch=1");
    /* B transposed in row order is B itself in column order: TRANSB T, B row 640 x 700 -> column 700 x 640, N */
    const int32_t t = CUBLAS_OP_T;
    const uint64_t brows = 640, bcols = 700;
    const int64_t ldb_t = 700;
    assert_int_equal(cublasLtMatmulDescSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_TRANSB, &t, sizeof t), 0);
    assert_int_equal(cublasLtMatrixLayoutSetAttribute(o.b, CUBLASLT_MATRIX_LAYOUT_ROWS, &brows, sizeof brows), 0);
    assert_int_equal(cublasLtMatrixLayoutSetAttribute(o.b, CUBLASLT_MATRIX_LAYOUT_COLS, &bcols, sizeof bcols), 0);
    assert_int_equal(cublasLtMatrixLayoutSetAttribute(o.b, CUBLASLT_MATRIX_LAYOUT_LD, &ldb_t, sizeof ldb_t), 0);
    call(&o, &zero, PD);
    assert_untouched(&o, &zero, PD);
    assert_logged("no-gpu", "m=768 n=640 k=700 ops=TN batch=1");
    drop(&o);
}

/* What the shim does not take: forwarded untouched, lt-unsupported (the
 * FP64 variants that ask for cuBLAS's own numerics: type). */
static void t_unsupported(void **state)
{
    (void)state;
    struct {
        const char *what; /* the log's detail */
        int attr;
        int64_t value;
        int layout; /* 0: the descriptor's attribute; 1..4: layout A..D */
        const void *beta;
        void *D;
    } cases[] = {
        {"(epilogue)", CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_RELU_BIAS, 0, &zero, PD},
        {"(BIAS without", CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS, 0, &half, PC},
        {"(C apart from D but overlapping it)", -1, 0, 0, &half, PD},
        {"(TRANSC)", CUBLASLT_MATMUL_DESC_TRANSC, CUBLAS_OP_T, 0, &zero, PD},
        {"(TRANSA or TRANSB not N, T or C)", CUBLASLT_MATMUL_DESC_TRANSA, 3, 0, &zero, PD},
        {"(TRANSA or TRANSB not N, T or C)", CUBLASLT_MATMUL_DESC_TRANSB, -1, 0, &zero, PD},
        {"(TRANSA or TRANSB not N, T or C)", CUBLASLT_MATMUL_DESC_TRANSA, 111, 0, &zero, PD},
        {"(pointer mode)", CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE_VECTOR, 0,
         &zero, PD},
        {"(C or D in row order)", CUBLASLT_MATRIX_LAYOUT_ORDER, CUBLASLT_ORDER_ROW, 4, &zero, PD},
        {"(C or D in row order)", CUBLASLT_MATRIX_LAYOUT_ORDER, CUBLASLT_ORDER_ROW, 3, &zero, PD},
        {"(a layout not FP64 column or row order)", CUBLASLT_MATRIX_LAYOUT_ORDER, 7, 1, &zero, PD},
        {"(a layout not FP64 column or row order)", CUBLASLT_MATRIX_LAYOUT_TYPE, CUDA_R_32F, 3, &zero, PD},
        {"(shapes that disagree)", CUBLASLT_MATRIX_LAYOUT_ROWS, 10, 4, &zero, PD},
        {"(batch counts that disagree)", CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 2, 1, &zero, PD},
        {"(C's ld below its rows)", CUBLASLT_MATRIX_LAYOUT_LD, 10, 3, &zero, PD},
        {"(in place with C's and D's layouts differing)", CUBLASLT_MATRIX_LAYOUT_LD, 1000, 4, &zero, PC},
        {"(a scale, amax or emulation attribute)", CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 0x100, 0, &zero, PD},
        {"(a scale, amax or emulation attribute)", CUBLASLT_MATMUL_DESC_FAST_ACCUM, 1, 0, &zero, PD},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        op o = make(CUBLAS_COMPUTE_64F, CUDA_R_64F, CUBLAS_OP_N, 768, 640, 700);
        if (cases[i].attr >= 0) {
            cublasLtMatrixLayout_t ls[5] = {NULL, o.a, o.b, o.c, o.d};
            size_t size = 0;
            if (cases[i].layout)
                assert_int_equal(cublasLtMatrixLayoutGetAttribute(ls[cases[i].layout], cases[i].attr, NULL, 0, &size), 0);
            else
                assert_int_equal(cublasLtMatmulDescGetAttribute(o.desc, cases[i].attr, NULL, 0, &size), 0);
            const int64_t v = cases[i].value;
            const int32_t v32 = (int32_t)v;
            const int8_t v8 = (int8_t)v;
            const void *p = size == 8 ? (const void *)&v : size == 4 ? (const void *)&v32 : (const void *)&v8;
            if (cases[i].layout)
                assert_int_equal(cublasLtMatrixLayoutSetAttribute(ls[cases[i].layout], cases[i].attr, p, size), 0);
            else
                assert_int_equal(cublasLtMatmulDescSetAttribute(o.desc, cases[i].attr, p, size), 0);
        }
        if (cases[i].attr == CUBLASLT_MATMUL_DESC_EPILOGUE) {
            const void *bias = PBIAS;
            assert_int_equal(cublasLtMatmulDescSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, 8), 0);
        }
        const int before = log_lines();
        print_message("case: %s\n", cases[i].what);
        call(&o, cases[i].beta, cases[i].D);
        assert_untouched(&o, cases[i].beta, cases[i].D);
        if (log_lines() != before + 1)
            fail_msg("%s: not logged once", cases[i].what);
        assert_logged("lt-unsupported", cases[i].what);
        drop(&o);
    }
    /* a row-order operand under an op value outside N, T, C: not taken for its transpose under N */
    {
        op o = make(CUBLAS_COMPUTE_64F, CUDA_R_64F, CUBLAS_OP_N, 768, 640, 700);
        const int32_t bad = 3;
        row_order(o.a, 700);
        assert_int_equal(cublasLtMatmulDescSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_TRANSA, &bad, sizeof bad), 0);
        call(&o, &zero, PD);
        assert_untouched(&o, &zero, PD);
        assert_logged("lt-unsupported", "(TRANSA or TRANSB not N, T or C)");
        drop(&o);
    }
    const cublasComputeType_t own[] = {CUBLAS_COMPUTE_64F_PEDANTIC, CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT};
    for (int i = 0; i < 2; i++) {
        op o = make(own[i], CUDA_R_64F, CUBLAS_OP_N, 768, 640, 700);
        call(&o, &zero, PD);
        assert_untouched(&o, &zero, PD);
        assert_logged("type", "(cuBLAS's own FP64 numerics)");
        drop(&o);
    }
}

/* Complex products (ZGEMM): scale and all four layouts CUDA_C_64F are
 * routed like cublasZgemm_v2 (the phase22 mode forwards them,
 * complex-phase22); a complex zero beta is both parts 0; mixed types, the
 * BIAS epilogue and a row-order operand under C (a conjugate without a
 * transpose) are lt-unsupported. */
static void t_complex(void **state)
{
    (void)state;
    static const double zzero[2] = {0.0, -0.0}, zimag[2] = {0.0, 1.0};
    op o = make_typed(CUBLAS_COMPUTE_64F, CUDA_C_64F, CUDA_C_64F, CUBLAS_OP_C, 768, 640, 700);
    call(&o, zzero, PD); /* C not read: beta 0 in both parts */
    assert_untouched(&o, zzero, PD);
    assert_logged("complex-phase22", "m=768 n=640 k=700 ops=CN batch=1");
    call(&o, zimag, PC); /* in place: D is C */
    assert_untouched(&o, zimag, PC);
    assert_logged("complex-phase22", "ops=CN");
    call(&o, zimag, PD); /* an imaginary beta is no zero: C would be read, copied into a D that overlaps it */
    assert_untouched(&o, zimag, PD);
    assert_logged("lt-unsupported", "(C apart from D but overlapping it)");
    call(&o, zimag, PFAR); /* apart: C copied into D first */
    assert_untouched(&o, zimag, PFAR);
    assert_logged("complex-phase22", "ops=CN");
    /* the BIAS epilogue: the shim's fill of D is a real one */
    const uint32_t bias_ep = CUBLASLT_EPILOGUE_BIAS;
    const void *bias = PBIAS;
    assert_int_equal(cublasLtMatmulDescSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &bias_ep, sizeof bias_ep), 0);
    assert_int_equal(cublasLtMatmulDescSetAttribute(o.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias), 0);
    call(&o, zzero, PD);
    assert_untouched(&o, zzero, PD);
    assert_logged("lt-unsupported", "(BIAS on complex layouts)");
    drop(&o);
    /* A in row order: under T it is its column-order self (routed), under C a conjugate alone (not) */
    const int ops[2] = {CUBLAS_OP_T, CUBLAS_OP_C};
    for (int i = 0; i < 2; i++) {
        o = make_typed(CUBLAS_COMPUTE_64F, CUDA_C_64F, CUDA_C_64F, ops[i], 768, 640, 700);
        row_order(o.a, 768); /* A, 700 x 768, in row order: in memory its 768 x 700 transpose */
        call(&o, zzero, PD);
        assert_untouched(&o, zzero, PD);
        if (i == 0)
            assert_logged("complex-phase22", "m=768 n=640 k=700 ops=NN batch=1");
        else
            assert_logged("lt-unsupported", "(a complex row-order operand under C)");
        drop(&o);
    }
    /* types that disagree: the scale's and a layout's */
    o = make_typed(CUBLAS_COMPUTE_64F, CUDA_C_64F, CUDA_C_64F, CUBLAS_OP_N, 768, 640, 700);
    const int32_t real64 = CUDA_R_64F;
    assert_int_equal(cublasLtMatrixLayoutSetAttribute(o.b, CUBLASLT_MATRIX_LAYOUT_TYPE, &real64, sizeof real64), 0);
    call(&o, zzero, PD);
    assert_untouched(&o, zzero, PD);
    assert_logged("lt-unsupported", "(a layout not of the scale type)");
    drop(&o);
    o = make_typed(CUBLAS_COMPUTE_64F, CUDA_R_64F, CUDA_C_64F, CUBLAS_OP_N, 768, 640, 700);
    call(&o, &zero, PD);
    assert_untouched(&o, &zero, PD);
    assert_logged("lt-unsupported", "(a layout not of the scale type)");
    drop(&o);
    /* cuBLAS's own numerics on complex data: type */
    o = make_typed(CUBLAS_COMPUTE_64F_PEDANTIC, CUDA_C_64F, CUDA_C_64F, CUBLAS_OP_N, 768, 640, 700);
    call(&o, zzero, PD);
    assert_untouched(&o, zzero, PD);
    assert_logged("type", "(cuBLAS's own FP64 numerics)");
    drop(&o);
}

/* Not FP64, or cuBLAS's own call: straight through, not logged. */
static void t_passed_through(void **state)
{
    (void)state;
    op o = make(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, 768, 640, 700);
    int before = log_lines();
    call(&o, &zero, PD);
    assert_untouched(&o, &zero, PD);
    assert_int_equal(log_lines(), before);
    drop(&o);
    o = make(CUBLAS_COMPUTE_64F, CUDA_R_64F, CUBLAS_OP_N, 768, 640, 700);
    fake_cublaslt_reset();
    fake_cublaslt_set_status(CUBLAS_STATUS_ARCH_MISMATCH);
    assert_int_equal(fake_cublas_inner_lt_matmul(g_lt, o.desc, &one, PA, o.a, PB, o.b, &zero, PC, o.c, PD, o.d,
                                                 PSTREAM),
                     CUBLAS_STATUS_ARCH_MISMATCH);
    assert_int_equal(fake_cublaslt_count(), 1);
    assert_ptr_equal(fake_cublaslt_last()->desc, o.desc);
    assert_ptr_equal(fake_cublaslt_last()->D, PD);
    assert_int_equal(log_lines(), before);
    drop(&o);
}

/* cublasLtDestroy reaches the fake (its handle gone from the live count). */
static void t_destroy(void **state)
{
    (void)state;
    cublasLtHandle_t h;
    assert_int_equal(cublasLtCreate(&h), CUBLAS_STATUS_SUCCESS);
    const int live = fake_cublaslt_live();
    assert_int_equal(cublasLtDestroy(h), CUBLAS_STATUS_SUCCESS);
    assert_int_equal(fake_cublaslt_live(), live - 1);
}

int main(int argc, char **argv)
{
    g_off = argc > 1 && strcmp(argv[1], "off") == 0;
    const char *log = getenv("OZCRT_LOG_FILE");
    FILE *f = log ? fopen(log, "w") : NULL;
    if (f)
        fclose(f);
    if (cublasLtCreate(&g_lt) != CUBLAS_STATUS_SUCCESS)
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_routed),
        cmocka_unit_test(t_unsupported),
        cmocka_unit_test(t_complex),
        cmocka_unit_test(t_passed_through),
        cmocka_unit_test(t_destroy),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    cublasLtDestroy(g_lt);
    return failed;
}
