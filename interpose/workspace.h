/* interpose/workspace.h: device workspace per (handle, device, stream), stream-ordered, freed on cublasDestroy_v2. */
#ifndef OZCRT_INTERPOSE_WORKSPACE_H
#define OZCRT_INTERPOSE_WORKSPACE_H

#include <stddef.h>
#include <cublas_v2.h>

#include "stats.h"

typedef struct ozcrt_ws_lease {
    void *entry;  /* locked until ozcrt_workspace_release */
    void *ptr;
    size_t bytes;
} ozcrt_ws_lease;

/* A workspace of at least `min` bytes, `full` when it can be had, for use on
 * `stream` of device `dev` by `handle`. Grows with cudaMallocAsync on the
 * stream (no host sync); never allocates while the stream is being captured.
 * Returns OZCRT_R_EMULATED with the lease held (call ozcrt_workspace_release
 * after enqueueing the work), else OZCRT_R_CAPTURE_NO_WS or OZCRT_R_NO_WORKSPACE. */
ozcrt_reason ozcrt_workspace_acquire(cublasHandle_t handle, int dev, cudaStream_t stream, size_t min, size_t full,
                                     ozcrt_ws_lease *lease);
void ozcrt_workspace_release(ozcrt_ws_lease *lease);

/* Frees every workspace of `handle` (all devices and streams), after the
 * work queued on them is done. For cublasDestroy_v2. */
void ozcrt_workspace_destroy_handle(cublasHandle_t handle);

#endif
