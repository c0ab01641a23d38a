/* interpose/workspace.h: device workspaces for the emulated calls: per handle, reused across streams once idle, a captured call's owned by its graph.
 *
 * The rules are those of workspace_table.h; this is their CUDA side. */
#ifndef OZCRT_INTERPOSE_WORKSPACE_H
#define OZCRT_INTERPOSE_WORKSPACE_H

#include <stddef.h>
#include <cublas_v2.h>

#include "stats.h"
#include "workspace_table.h"

/* A workspace of one of `sizes` (best first, as ozcrt_ws_request's: the
 * first that can be had), for one call of `handle` on `stream` of device
 * `dev`, within OZCRT_MAX_WORKSPACE_MB.
 * On a stream being captured, a fresh buffer that the graph owns. Returns
 * OZCRT_R_EMULATED with the lease held (call ozcrt_workspace_release after
 * enqueueing the work), else OZCRT_R_CAPTURE_NO_WS or OZCRT_R_NO_WORKSPACE. */
ozcrt_reason ozcrt_workspace_acquire(cublasHandle_t handle, int dev, cudaStream_t stream,
                                     const size_t sizes[OZCRT_WS_SIZES], ozcrt_ws_lease *lease);
void ozcrt_workspace_release(ozcrt_ws_lease *lease);

/* Frees every workspace of `handle` (all devices and streams), each after its
 * last use. For cublasDestroy_v2. */
void ozcrt_workspace_destroy_handle(cublasHandle_t handle);

#endif
