/* interpose/plan_counts.h: the automatic precision's plans as the GPU makes them. */
#ifndef OZCRT_INTERPOSE_PLAN_COUNTS_H
#define OZCRT_INTERPOSE_PLAN_COUNTS_H

#include <stdint.h>

/* Devices with counters of their own (device numbers 0 .. 63). */
#define OZCRT_PLAN_DEVICES 64

/* Device dev's counters that the plan kernel adds to
 * (kernels/oz2_auto_estimate.h: OZ2A_PLAN_COUNTS entries, entry n a real
 * product planned with n moduli, 0 for one with no plan,
 * OZ2A_PLAN_COUNTS_CX + n a complex one), in mapped host memory: the GPU
 * writes them as each plan is made, the host reads them without a
 * synchronisation (complete once the products have run). A row a device:
 * a device's atomics on mapped memory are atomic among its own threads
 * only. Allocated at the first call (once a process, in relaxed
 * stream-capture mode, so that a capture on another thread is not
 * invalidated); NULL for a device number past the rows or when the
 * allocation failed (said once with OZCRT_LOG=1: the plans are then not
 * counted). */
unsigned long long *ozcrt_plan_counters(int dev);

/* Entries 0 .. n-1 of the real (complex_ 0) or complex counters, summed
 * over the devices, into out (n at most OZ2A_PLAN_COUNTS_CX); zeros before
 * the first automatic call and in a fork child (the parent's counters are
 * not mapped there). */
void ozcrt_plan_counts_read(int complex_, uint64_t *out, int n);

/* Every counter back to zero (products in flight may still add theirs). */
void ozcrt_plan_counts_clear(void);

#endif
