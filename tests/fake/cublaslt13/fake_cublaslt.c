/* tests/fake/cublaslt13/fake_cublaslt.c: the recording fake libcublasLt (see fake_cublaslt.h). */
#include "fake_cublaslt.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

/* One attribute's value: its bytes start at offset 0 whatever its type. */
typedef union attr_value {
    int8_t i8;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    void *p;
} attr_value;

enum {
    DESC_ATTRS = CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR + 1,
    LAYOUT_ATTRS = CUBLASLT_MATRIX_LAYOUT_BATCH_MODE + 1,
};

/* Each attribute's size as cublasLt.h documents it; 0: no such id (9, 16, 27-30). */
static const size_t desc_sizes[DESC_ATTRS] = {
    [CUBLASLT_MATMUL_DESC_COMPUTE_TYPE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_SCALE_TYPE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_POINTER_MODE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_TRANSA] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_TRANSB] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_TRANSC] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_FILL_MODE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_EPILOGUE] = sizeof(uint32_t),
    [CUBLASLT_MATMUL_DESC_BIAS_POINTER] = sizeof(void *),
    [CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE] = sizeof(int64_t),
    [CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER] = sizeof(void *),
    [CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD] = sizeof(int64_t),
    [CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE] = sizeof(int64_t),
    [CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE] = sizeof(int64_t),
    [CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_A_SCALE_POINTER] = sizeof(void *),
    [CUBLASLT_MATMUL_DESC_B_SCALE_POINTER] = sizeof(void *),
    [CUBLASLT_MATMUL_DESC_C_SCALE_POINTER] = sizeof(void *),
    [CUBLASLT_MATMUL_DESC_D_SCALE_POINTER] = sizeof(void *),
    [CUBLASLT_MATMUL_DESC_AMAX_D_POINTER] = sizeof(void *),
    [CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER] = sizeof(void *),
    [CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER] = sizeof(void *),
    [CUBLASLT_MATMUL_DESC_FAST_ACCUM] = sizeof(int8_t),
    [CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_A_SCALE_MODE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_B_SCALE_MODE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_C_SCALE_MODE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_D_SCALE_MODE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER] = sizeof(void *),
    [CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE] = sizeof(int32_t),
    [CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR] = sizeof(cublasLtEmulationDesc_t),
};

static const size_t layout_sizes[LAYOUT_ATTRS] = {
    [CUBLASLT_MATRIX_LAYOUT_TYPE] = sizeof(uint32_t),
    [CUBLASLT_MATRIX_LAYOUT_ORDER] = sizeof(int32_t),
    [CUBLASLT_MATRIX_LAYOUT_ROWS] = sizeof(uint64_t),
    [CUBLASLT_MATRIX_LAYOUT_COLS] = sizeof(uint64_t),
    [CUBLASLT_MATRIX_LAYOUT_LD] = sizeof(int64_t),
    [CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT] = sizeof(int32_t),
    [CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET] = sizeof(int64_t),
    [CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET] = sizeof(int64_t),
    [CUBLASLT_MATRIX_LAYOUT_BATCH_MODE] = sizeof(uint32_t),
};

struct cublasLtContext {
    int unused;
};

/* The header's opaque struct first (the handed-out pointer), the attributes after it. */
typedef struct fake_desc {
    cublasLtMatmulDescOpaque_t opaque;
    attr_value v[DESC_ATTRS];
} fake_desc;

typedef struct fake_layout {
    cublasLtMatrixLayoutOpaque_t opaque;
    attr_value v[LAYOUT_ATTRS];
} fake_layout;

static fake_lt_call g_last;
static int g_count;
static atomic_int g_live;
static cublasStatus_t g_status = CUBLAS_STATUS_SUCCESS;

FAKE_EXPORT const fake_lt_call *fake_cublaslt_last(void) { return &g_last; }
FAKE_EXPORT int fake_cublaslt_count(void) { return g_count; }
FAKE_EXPORT void fake_cublaslt_set_status(cublasStatus_t status) { g_status = status; }
FAKE_EXPORT int fake_cublaslt_live(void) { return atomic_load(&g_live); }

FAKE_EXPORT void fake_cublaslt_reset(void)
{
    memset(&g_last, 0, sizeof g_last);
    g_count = 0;
    g_status = CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t set_attr(attr_value *v, const size_t *sizes, int n, int attr, const void *buf, size_t size)
{
    if (!v || attr < 0 || attr >= n || !sizes[attr] || !buf || size != sizes[attr])
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&v[attr], buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

/* cublasLt.h's contract: size 0 asks for the size (into sizeWritten); else the size must match. */
static cublasStatus_t get_attr(const attr_value *v, const size_t *sizes, int n, int attr, void *buf, size_t size,
                               size_t *written)
{
    if (!v || attr < 0 || attr >= n || !sizes[attr])
        return CUBLAS_STATUS_INVALID_VALUE;
    const size_t need = sizes[attr];
    if (size == 0) {
        if (!written)
            return CUBLAS_STATUS_INVALID_VALUE;
        *written = need;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (written)
        *written = need;
    if (!buf || size != need)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, &v[attr], need);
    return CUBLAS_STATUS_SUCCESS;
}

static fake_desc *desc_of(cublasLtMatmulDesc_t d) { return (fake_desc *)(void *)d; }
static fake_layout *layout_of(cublasLtMatrixLayout_t l) { return (fake_layout *)(void *)l; }

FAKE_EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle)
{
    if (!lightHandle)
        return CUBLAS_STATUS_INVALID_VALUE;
    *lightHandle = calloc(1, sizeof **lightHandle);
    if (!*lightHandle)
        return CUBLAS_STATUS_ALLOC_FAILED;
    atomic_fetch_add(&g_live, 1);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle)
{
    if (!lightHandle)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    free(lightHandle);
    atomic_fetch_sub(&g_live, 1);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *matmulDesc, cublasComputeType_t computeType,
                                                    cudaDataType_t scaleType)
{
    if (!matmulDesc)
        return CUBLAS_STATUS_INVALID_VALUE;
    fake_desc *d = calloc(1, sizeof *d); /* every other value 0, every pointer NULL */
    if (!d) {
        *matmulDesc = NULL;
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    d->v[CUBLASLT_MATMUL_DESC_COMPUTE_TYPE].i32 = (int32_t)computeType;
    d->v[CUBLASLT_MATMUL_DESC_SCALE_TYPE].i32 = (int32_t)scaleType;
    d->v[CUBLASLT_MATMUL_DESC_POINTER_MODE].i32 = CUBLASLT_POINTER_MODE_HOST;
    d->v[CUBLASLT_MATMUL_DESC_TRANSA].i32 = CUBLAS_OP_N;
    d->v[CUBLASLT_MATMUL_DESC_TRANSB].i32 = CUBLAS_OP_N;
    d->v[CUBLASLT_MATMUL_DESC_TRANSC].i32 = CUBLAS_OP_N;
    d->v[CUBLASLT_MATMUL_DESC_FILL_MODE].i32 = CUBLAS_FILL_MODE_FULL;
    d->v[CUBLASLT_MATMUL_DESC_EPILOGUE].u32 = CUBLASLT_EPILOGUE_DEFAULT;
    d->v[CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE].i32 = -1;
    d->v[CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE].i32 = -1;
    atomic_fetch_add(&g_live, 1);
    *matmulDesc = &d->opaque;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc)
{
    if (!matmulDesc)
        return CUBLAS_STATUS_SUCCESS;
    free(desc_of(matmulDesc));
    atomic_fetch_sub(&g_live, 1);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                          cublasLtMatmulDescAttributes_t attr, const void *buf,
                                                          size_t sizeInBytes)
{
    return set_attr(matmulDesc ? desc_of(matmulDesc)->v : NULL, desc_sizes, DESC_ATTRS, (int)attr, buf, sizeInBytes);
}

FAKE_EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                          cublasLtMatmulDescAttributes_t attr, void *buf,
                                                          size_t sizeInBytes, size_t *sizeWritten)
{
    return get_attr(matmulDesc ? desc_of(matmulDesc)->v : NULL, desc_sizes, DESC_ATTRS, (int)attr, buf, sizeInBytes,
                    sizeWritten);
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *matLayout, cudaDataType type,
                                                      uint64_t rows, uint64_t cols, int64_t ld)
{
    if (!matLayout)
        return CUBLAS_STATUS_INVALID_VALUE;
    fake_layout *l = calloc(1, sizeof *l);
    if (!l) {
        *matLayout = NULL;
        return CUBLAS_STATUS_ALLOC_FAILED;
    }
    l->v[CUBLASLT_MATRIX_LAYOUT_TYPE].u32 = (uint32_t)type;
    l->v[CUBLASLT_MATRIX_LAYOUT_ORDER].i32 = CUBLASLT_ORDER_COL;
    l->v[CUBLASLT_MATRIX_LAYOUT_ROWS].u64 = rows;
    l->v[CUBLASLT_MATRIX_LAYOUT_COLS].u64 = cols;
    l->v[CUBLASLT_MATRIX_LAYOUT_LD].i64 = ld;
    l->v[CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT].i32 = 1;
    l->v[CUBLASLT_MATRIX_LAYOUT_BATCH_MODE].u32 = CUBLASLT_BATCH_MODE_STRIDED;
    atomic_fetch_add(&g_live, 1);
    *matLayout = &l->opaque;
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout)
{
    if (!matLayout)
        return CUBLAS_STATUS_SUCCESS;
    free(layout_of(matLayout));
    atomic_fetch_sub(&g_live, 1);
    return CUBLAS_STATUS_SUCCESS;
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                            cublasLtMatrixLayoutAttribute_t attr, const void *buf,
                                                            size_t sizeInBytes)
{
    return set_attr(matLayout ? layout_of(matLayout)->v : NULL, layout_sizes, LAYOUT_ATTRS, (int)attr, buf,
                    sizeInBytes);
}

FAKE_EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t matLayout,
                                                            cublasLtMatrixLayoutAttribute_t attr, void *buf,
                                                            size_t sizeInBytes, size_t *sizeWritten)
{
    return get_attr(matLayout ? layout_of(matLayout)->v : NULL, layout_sizes, LAYOUT_ATTRS, (int)attr, buf,
                    sizeInBytes, sizeWritten);
}

FAKE_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                          const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                                          const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                                          const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                          cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                                          void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream)
{
    g_last = (fake_lt_call){
        .handle = lightHandle, .desc = computeDesc, .alpha = alpha, .beta = beta,
        .A = A, .B = B, .C = C, .D = D,
        .Adesc = Adesc, .Bdesc = Bdesc, .Cdesc = Cdesc, .Ddesc = Ddesc,
        .algo = algo, .workspace = workspace, .workspace_size = workspaceSizeInBytes, .stream = stream,
    };
    g_count++;
    return g_status;
}
