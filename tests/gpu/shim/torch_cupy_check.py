#!/usr/bin/env python3
"""tests/gpu/shim/torch_cupy_check.py: PyTorch and CuPy float64 workloads, checked against NumPy on the CPU.

Run natively and under libozcrt.so (run.sh). Every product is compared element
by element with a tolerance from the Phase 22 bound (reference/bound.h):

    |C - C_ref| <= k * 2^-32 * rowmax|op(A)_i| * colmax|op(B)_j|      (34-bit slicing, 2^(s+t) <= 4 rowmax colmax)
                   + 4 (k + 2) 2^-53 (|A||B|)_ij + 2^-52 |beta C_old|  (rounding, both sides)

Solves are checked by their normwise backward error
||A x - b||_inf / (||A||_inf ||x||_inf + ||b||_inf) <= 1e-8 (34-bit products inside LU).
Prints PASS/FAIL per case; exit status 1 if any fails.
"""
import sys

import numpy as np

SOLVE_BACKWARD_TOL = 1e-8
rng = np.random.default_rng(20261129)
failures = 0


def product_tol(a, b, beta=0.0, c_old=None):
    """Per-element tolerance of a @ b (+ beta c_old), a: (..., m, k), b: (..., k, n)."""
    k = a.shape[-1]
    rmax = np.abs(a).max(axis=-1)[..., :, None]
    cmax = np.abs(b).max(axis=-2)[..., None, :]
    tol = k * 2.0**-32 * rmax * cmax + 4 * (k + 2) * 2.0**-53 * (np.abs(a) @ np.abs(b))
    if c_old is not None:
        tol = tol + 2.0**-52 * np.abs(beta * c_old)
    return tol + 1e-300


def report(name, got, ref, tol):
    global failures
    err = np.abs(got - ref)
    bad = int(np.count_nonzero(~(err <= tol)))
    worst = float(np.max(err / tol)) if err.size else 0.0
    status = "PASS" if bad == 0 else "FAIL"
    failures += bad != 0
    print(f"{status}: {name}: {bad} of {err.size} elements outside the bound, worst err/bound {worst:.3g}, "
          f"max abs err {float(err.max()):.3g}")


def report_solve(name, a, x, b):
    global failures
    r = a @ x - b
    berr = np.abs(r).max() / (np.abs(a).sum(axis=1).max() * np.abs(x).max() + np.abs(b).max())
    status = "PASS" if berr <= SOLVE_BACKWARD_TOL else "FAIL"
    failures += status == "FAIL"
    print(f"{status}: {name}: backward error {berr:.3g} (limit {SOLVE_BACKWARD_TOL:g})")


def rand(*shape):
    return rng.uniform(-1.0, 1.0, size=shape)


def well_conditioned(n):
    return rand(n, n) + n ** 0.5 * np.eye(n)


def torch_cases():
    import torch
    dev = torch.device("cuda")
    torch.backends.cuda.preferred_linalg_library("cusolver")

    a, b = rand(512, 640), rand(640, 384)
    got = (torch.from_numpy(a).to(dev) @ torch.from_numpy(b).to(dev)).cpu().numpy()
    report("torch mm 512x640 @ 640x384", got, a @ b, product_tol(a, b))

    at, bt = rand(700, 300), rand(500, 700)  # transposed operands: a.T @ b.T
    got = torch.mm(torch.from_numpy(at).to(dev).t(), torch.from_numpy(bt).to(dev).t()).cpu().numpy()
    report("torch mm transposed 300x700 @ 700x500", got, at.T @ bt.T, product_tol(at.T, bt.T))

    c, a, b = rand(256, 320), rand(256, 288), rand(288, 320)
    got = torch.addmm(torch.from_numpy(c).to(dev), torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev),
                      beta=0.5, alpha=-2.0).cpu().numpy()
    report("torch addmm beta=0.5 alpha=-2", got, 0.5 * c - 2.0 * (a @ b), 2.0 * product_tol(a, b, 0.25, c))

    a, b = rand(8, 256, 320), rand(8, 320, 192)
    got = torch.bmm(torch.from_numpy(a).to(dev), torch.from_numpy(b).to(dev)).cpu().numpy()
    report("torch bmm 8 x 256x320 @ 320x192", got, a @ b, product_tol(a, b))

    a, rhs = well_conditioned(1024), rand(1024, 4)
    x = torch.linalg.solve(torch.from_numpy(a).to(dev), torch.from_numpy(rhs).to(dev)).cpu().numpy()
    report_solve("torch linalg.solve 1024 (cuSOLVER)", a, x, rhs)
    torch.cuda.synchronize()


def cupy_cases():
    import cupy as cp

    a, b = rand(384, 512), rand(512, 256)
    got = cp.asnumpy(cp.matmul(cp.asarray(a), cp.asarray(b)))
    report("cupy matmul 384x512 @ 512x256", got, a @ b, product_tol(a, b))

    a, b = rand(6, 200, 300), rand(6, 300, 160)
    got = cp.asnumpy(cp.matmul(cp.asarray(a), cp.asarray(b)))
    report("cupy batched matmul 6 x 200x300 @ 300x160", got, a @ b, product_tol(a, b))

    a, b = rand(300, 260), rand(260, 330)
    got = cp.asnumpy(cp.dot(cp.asarray(a), cp.asarray(b)))
    report("cupy dot 300x260 . 260x330", got, a @ b, product_tol(a, b))

    a, rhs = well_conditioned(1024), rand(1024, 3)
    x = cp.asnumpy(cp.linalg.solve(cp.asarray(a), cp.asarray(rhs)))
    report_solve("cupy linalg.solve 1024 (cuSOLVER)", a, x, rhs)
    cp.cuda.Device().synchronize()


def main():
    for name, fn in (("torch", torch_cases), ("cupy", cupy_cases)):
        try:
            fn()
        except Exception as e:  # a crash or missing package is a failure, reported, not hidden
            global failures
            failures += 1
            print(f"FAIL: {name}: {type(e).__name__}: {e}")
    print(f"{'PASS' if failures == 0 else 'FAIL'}: torch_cupy_check, {failures} failing case(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
