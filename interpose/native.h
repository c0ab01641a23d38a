/* interpose/native.h: shadow mode's native run: the caller's own call to its real cuBLAS with only C redirected. */
#ifndef OZCRT_INTERPOSE_NATIVE_H
#define OZCRT_INTERPOSE_NATIVE_H

#include "kernels/ozcrt_gemm.h"

/* ctx is the call (const ozcrt_call *, route.h). Runs it on the cuBLAS that
 * owns its handle with every argument as the caller gave it (the GemmEx
 * family's algo included, so the result is exactly the native one) except C
 * (C/ldc/strideC, or Carray), taken from `into`. Returns a cublasStatus_t.
 * The compare library's oz_native_gemm_fn. */
int ozcrt_native_into(void *ctx, const oz_gemm_desc *into);

#endif
