/* interpose/dlhook.h: the shim's dlsym and dlvsym (dlhook.c): a caller that takes a cuBLAS or cuBLASLt function with dlsym on its own handle of that library (XLA, JAX) gets the shim's, tied to that library. */
#ifndef OZCRT_INTERPOSE_DLHOOK_H
#define OZCRT_INTERPOSE_DLHOOK_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "symbols.h"

/* The cuBLAS (or cuBLASLt) libraries whose functions were handed out by the
 * dlsym hook: at most this many of each, a slot each. */
#define OZCRT_DL_SLOTS 8

/* A slot: the library's load address (0: free) and its file. */
typedef struct ozcrt_dl_lib {
    _Atomic(uintptr_t) base;
    char path[512];
} ozcrt_dl_lib;

/* The slot of the library loaded at `base` (file `path`) in
 * libs[OZCRT_DL_SLOTS], taken on first sight; -1 when every slot is taken.
 * Lock-free: a free slot is claimed by compare-and-swap, its path written,
 * then its base published, so a slot whose base was seen has its path (two
 * threads that meet a new library at once may claim a slot each: both
 * name the same library). */
static inline int ozcrt_dl_slot(ozcrt_dl_lib *libs, uintptr_t base, const char *path)
{
    const uintptr_t claimed = 1; /* no library is loaded at 1 */
    for (int i = 0; i < OZCRT_DL_SLOTS; i++) {
        uintptr_t b = atomic_load_explicit(&libs[i].base, memory_order_acquire);
        if (b == base)
            return i;
        if (b == 0 && atomic_compare_exchange_strong(&libs[i].base, &b, claimed)) {
            size_t n = strlen(path);
            n = n < sizeof libs[i].path - 1 ? n : sizeof libs[i].path - 1;
            memcpy(libs[i].path, path, n);
            libs[i].path[n] = '\0';
            atomic_store_explicit(&libs[i].base, base, memory_order_release);
            return i;
        }
    }
    return -1;
}

/* What the hook hands out for entry point `ep` (an OZCRT_INTERCEPTED name)
 * of the cuBLAS (exported.c) or the cuBLASLt (lt.c) loaded at `base`, file
 * `path`: the shim's exported function where its call finds its library by
 * itself (a handle: every GEMM, cublasDestroy_v2; the legacy context), else
 * a function of the shim tied to that library (cublasCreate_v2 and
 * cublasInit tie what they create to it, as real.h's two-copies rule does
 * for a caller that links its cuBLAS; cublasLtMatmul and cublasLtDestroy
 * call it). NULL when none can be had (every slot taken): the real
 * function is handed out. Called by the hook, outside the loader's lock and
 * without loading anything: the library's table is made at the first call. */
void *ozcrt_dl_cublas_function(ozcrt_entry ep, uintptr_t base, const char *path);
void *ozcrt_dl_lt_function(ozcrt_entry ep, uintptr_t base, const char *path);

/* Points the dlsym / dlvsym GOT slots of every object loaded now at the
 * hook (dlhook.c, x86_64): for a shim loaded after the program started.
 * Returns the slots on the hook, -1 when one could not be written (or not
 * x86_64). */
int ozcrt_dl_hook_objects(void);

#endif
