/* tests/fake/legacy_proto.c: interpose/legacy_decl.h's declarations compiled after cuBLAS's own cublas.h, so that one that does not match cuBLAS's fails the build (the shim cannot include cublas.h: cublas_v2.h excludes it). */
#include <cublas.h>

#include "interpose/legacy_decl.h"

int main(void)
{
    /* the shim's stand-ins must be the very functions cublas.h declares */
    void (*dgemm)(char, char, int, int, int, double, const double *, int, const double *, int, double, double *, int) =
        cublasDgemm;
    void (*zgemm)(char, char, int, int, int, cuDoubleComplex, const cuDoubleComplex *, int, const cuDoubleComplex *,
                  int, cuDoubleComplex, cuDoubleComplex *, int) = cublasZgemm;
    cublasStatus_t (*init)(void) = cublasInit, (*shutdown)(void) = cublasShutdown, (*error)(void) = cublasGetError;
    cublasStatus_t (*stream)(cudaStream_t) = cublasSetKernelStream;
    return !(dgemm && zgemm && init && shutdown && error && stream);
}
