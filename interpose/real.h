/* interpose/real.h: the real cuBLAS functions, resolved once from the copy the process loaded. */
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

/* The table, resolved at the first call (pthread_once, thread-safe).
 * Never NULL; members are NULL when not found (ozcrt_real_missing reports). */
const ozcrt_real_table *ozcrt_real(void);

/* Reports that the real `name` is missing, once per name, on stderr with what
 * was tried, and returns CUBLAS_STATUS_NOT_INITIALIZED for the caller. */
cublasStatus_t ozcrt_real_missing(const char *name);

/* Thread-local depth of calls into the real cuBLAS: a GEMM the real library
 * makes while we forward to it is forwarded too, never emulated. */
extern _Thread_local int ozcrt_in_real;

/* Calls the real `name` with the arguments, or reports it missing. */
#define OZCRT_FORWARD(name, ...)                                    \
    do {                                                            \
        const ozcrt_real_table *real_ = ozcrt_real();               \
        if (!real_->name)                                           \
            return ozcrt_real_missing(#name);                       \
        ozcrt_in_real++;                                            \
        cublasStatus_t status_ = real_->name(__VA_ARGS__);          \
        ozcrt_in_real--;                                            \
        return status_;                                             \
    } while (0)

#endif
