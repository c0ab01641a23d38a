/* interpose/capture_mode.h: this thread into relaxed stream-capture mode, and back.
 *
 * While any thread captures a stream in global mode (PyTorch's default), a
 * "potentially unsafe" CUDA call (an allocation, a free, an event
 * synchronisation, a graph's instantiation, cuBLAS's own set-up) made by a
 * thread in global mode fails and invalidates that other thread's capture.
 * The shim's own such calls are made between ozcrt_capture_relax() and
 * ozcrt_capture_restore(), so that a call it takes never breaks another
 * thread's capture (the calls do not touch the other thread's streams). */
#ifndef OZCRT_CAPTURE_MODE_H
#define OZCRT_CAPTURE_MODE_H

#include <cuda_runtime_api.h>

/* Returns the thread's previous mode (relaxed where it cannot be asked: restoring it is then a no-op). */
static inline int ozcrt_capture_relax(void)
{
    enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    if (cudaThreadExchangeStreamCaptureMode(&mode) != cudaSuccess) {
        (void)cudaGetLastError(); /* the shim's, not the application's */
        mode = cudaStreamCaptureModeRelaxed;
    }
    return (int)mode;
}

static inline void ozcrt_capture_restore(int previous)
{
    enum cudaStreamCaptureMode mode = (enum cudaStreamCaptureMode)previous;
    if (previous != (int)cudaStreamCaptureModeRelaxed && cudaThreadExchangeStreamCaptureMode(&mode) != cudaSuccess)
        (void)cudaGetLastError();
}

#endif
