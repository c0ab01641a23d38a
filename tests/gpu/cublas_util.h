/* tests/gpu/cublas_util.h: checked cuBLAS calls for the GPU test programs, with gpu_util.h's checked CUDA calls and random data (plain C / C++). */
#ifndef OZCRT_TESTS_GPU_CUBLAS_UTIL_H
#define OZCRT_TESTS_GPU_CUBLAS_UTIL_H

#include <cublas_v2.h>

#include "gpu_util.h"

#define CUBLAS_CHECK(call)                                                                        \
    do {                                                                                          \
        cublasStatus_t s_ = (call);                                                               \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                        \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_); \
            exit(2);                                                                              \
        }                                                                                         \
    } while (0)

#endif
