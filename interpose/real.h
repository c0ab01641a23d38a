/* interpose/real.h: the real cuBLAS functions: the copy the process loaded, and per handle the copy that created it. */
#ifndef OZCRT_INTERPOSE_REAL_H
#define OZCRT_INTERPOSE_REAL_H

#include "symbols.h"

typedef struct ozcrt_real_table {
#define OZCRT_X_MEMBER(name) ozcrt_##name##_fn name;
    OZCRT_ALL_SYMBOLS(OZCRT_X_MEMBER)
#undef OZCRT_X_MEMBER
    const char *how;     /* which lookup found the library, for the log */
    char path[512];      /* the library's file, "" when unknown */
} ozcrt_real_table;

/* The process's default table, resolved at the first call (pthread_once,
 * thread-safe). Never NULL; members are NULL when not found
 * (ozcrt_real_missing reports). */
const ozcrt_real_table *ozcrt_real(void);

/* Two cuBLAS copies in one process (say PyTorch's and CuPy's, each loaded
 * RTLD_LOCAL): a handle belongs to the library that created it, and every
 * call on it goes there.
 *
 * ozcrt_real_for_caller: the table of the cuBLAS that the code at `ret_addr`
 * (the caller of the shim's cublasCreate_v2) reaches through its own
 * dependencies; the default table for the main program, when
 * OZCRT_CUBLAS_LIBRARY is set, or when that cannot be told.
 * ozcrt_real_remember: ties a new handle to its table (nothing is stored for
 * the default one). ozcrt_real_for: the handle's table, the default one for
 * handles the shim did not see created. ozcrt_real_forget: the same, and the
 * tie is dropped (cublasDestroy_v2). */
const ozcrt_real_table *ozcrt_real_for_caller(const void *ret_addr);
/* The same for the cuBLAS in file `path` (loaded: its cublasCreate_v2 by
 * dlopen(RTLD_NOLOAD) and dlsym): the table of a caller that took the
 * shim's function with dlsym on that library's handle (dlhook.h). */
const ozcrt_real_table *ozcrt_real_for_library(const char *path);
void ozcrt_real_remember(cublasHandle_t handle, const ozcrt_real_table *table);
const ozcrt_real_table *ozcrt_real_for(cublasHandle_t handle);
const ozcrt_real_table *ozcrt_real_forget(cublasHandle_t handle);

/* The loader's view, shared with lt.c: whether a file's base name starts
 * with `prefix`; the first loaded object whose base name does (its path in
 * path[size], 0 when none); the definition of `name` that the object
 * holding ret_addr reaches through its own scope (itself and its
 * dependencies, never the preloaded shim), with *is_cublas telling whether
 * that object is a libcublas.so* (not libcublasLt): NULL for the main
 * program (its scope is the global one), an unknown address, or none. */
int ozcrt_basename_is(const char *path, const char *prefix);
int ozcrt_find_loaded(const char *prefix, char *path, size_t size);
void *ozcrt_caller_symbol(const void *ret_addr, const char *name, int *is_cublas);

/* Reports that the real `name` is missing, once per name, on stderr with what
 * was tried, and returns CUBLAS_STATUS_NOT_INITIALIZED for the caller. */
cublasStatus_t ozcrt_real_missing(const char *name);

/* Thread-local depth of calls into the real cuBLAS: a GEMM the real library
 * makes while we forward to it is forwarded too, never emulated. */
extern _Thread_local int ozcrt_in_real;

/* Calls `name` of `table` (a const ozcrt_real_table *) with the arguments
 * and stores its status in `status`, or reports it missing (status
 * NOT_INITIALIZED). */
#define OZCRT_CALL_INTO(status, table, name, ...)                   \
    do {                                                            \
        const ozcrt_real_table *real_ = (table);                    \
        if (!real_->name) {                                         \
            (status) = ozcrt_real_missing(#name);                   \
            break;                                                  \
        }                                                           \
        ozcrt_in_real++;                                            \
        (status) = real_->name(__VA_ARGS__);                        \
        ozcrt_in_real--;                                            \
    } while (0)

/* The same, returning the status. */
#define OZCRT_FORWARD_TO(table, name, ...)                          \
    do {                                                            \
        cublasStatus_t status_;                                     \
        OZCRT_CALL_INTO(status_, table, name, __VA_ARGS__);         \
        return status_;                                             \
    } while (0)

/* Calls the real `name` of the library that owns `handle` (the first argument). */
#define OZCRT_FORWARD(name, handle, ...) OZCRT_FORWARD_TO(ozcrt_real_for(handle), name, handle, __VA_ARGS__)

#endif
