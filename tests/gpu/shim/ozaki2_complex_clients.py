#!/usr/bin/env python3
"""tests/gpu/shim/ozaki2_complex_clients.py: PyTorch and CuPy complex128 work against NumPy, for the ozaki2 mode's complex products.

Run under libozcrt.so with OZCRT_MODE=ozaki2 (OZCRT_BITS auto or a number) and the
thresholds at 0 (ozaki2.sh complex). Well-conditioned data; every result must
agree with NumPy's complex128 to rtol 1e-12 (normwise; eigenvalues for eigh,
singular values for svd). Prints PASS/FAIL per case and 'N passed, M failed';
exit status 1 if any fails, 0 with SKIP lines when torch or cupy or the GPU is
missing.
"""
import sys

import numpy as np

RTOL = 1e-12
rng = np.random.default_rng(20261202)
passed = failed = 0


def check(name, got, ref, rtol=RTOL):
    global passed, failed
    got = np.asarray(got)
    ref = np.asarray(ref)
    rel = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300))
    ok = rel <= rtol and bool(np.all(np.isfinite(got)))
    print(f"{'PASS' if ok else 'FAIL'}: {name}: normwise rel diff {rel:.3g} (<= {rtol:g})")
    if ok:
        passed += 1
    else:
        failed += 1


def cplx(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def hermitian_pd(n):
    q, _ = np.linalg.qr(cplx(n, n))
    return (q * np.linspace(1.0, 4.0, n)) @ q.conj().T  # Hermitian, condition number 4


def torch_cases():
    try:
        import torch
    except ImportError:
        print("SKIP: torch not importable")
        return
    if not torch.cuda.is_available():
        print("SKIP: torch sees no GPU")
        return
    dev = "cuda"
    t = lambda x: torch.from_numpy(x).to(dev)  # noqa: E731
    a, b, c = cplx(600, 500), cplx(500, 700), cplx(600, 700)
    ta, tb, tc = t(a), t(b), t(c)
    check("torch complex128 mm 600x500x700", (ta @ tb).cpu().numpy(), a @ b)
    check("torch complex128 addmm beta=0.5-1j alpha=2+0.5j",
          torch.addmm(tc, ta, tb, beta=0.5 - 1j, alpha=2 + 0.5j).cpu().numpy(), (0.5 - 1j) * c + (2 + 0.5j) * (a @ b))
    check("torch complex128 a.mH @ a", (ta.mH @ ta).cpu().numpy(), a.conj().T @ a)
    w, bias, xin = cplx(700, 500), cplx(700), cplx(600, 500)
    check("torch complex128 F.linear (bias)", torch.nn.functional.linear(t(xin), t(w), t(bias)).cpu().numpy(),
          xin @ w.T + bias)
    x, y = cplx(4, 256, 320), cplx(4, 320, 192)
    check("torch complex128 bmm 4x256x320x192", torch.bmm(t(x), t(y)).cpu().numpy(), x @ y)
    m = hermitian_pd(512)
    rhs = cplx(512, 16)
    tm = t(m)
    check("torch complex128 linalg.solve 512", torch.linalg.solve(tm, t(rhs)).cpu().numpy(), np.linalg.solve(m, rhs))
    check("torch complex128 linalg.eigh 512 (eigenvalues)", torch.linalg.eigh(tm)[0].cpu().numpy(),
          np.linalg.eigh(m)[0])
    g = cplx(384, 256)
    check("torch complex128 linalg.svd 384x256 (singular values)", torch.linalg.svdvals(t(g)).cpu().numpy(),
          np.linalg.svd(g, compute_uv=False))
    torch.cuda.synchronize()


def cupy_cases():
    try:
        import cupy as cp
    except ImportError:
        print("SKIP: cupy not importable")
        return
    try:
        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - any CUDA failure means no GPU here
        print(f"SKIP: cupy sees no GPU ({e})")
        return
    a, b = cplx(640, 520), cplx(520, 600)
    ca, cb = cp.asarray(a), cp.asarray(b)
    check("cupy complex128 matmul 640x520x600", cp.asnumpy(ca @ cb), a @ b)
    check("cupy complex128 dot", cp.asnumpy(cp.dot(ca, cb)), a @ b)
    x, y = cplx(3, 200, 260), cplx(3, 260, 180)
    check("cupy complex128 batched matmul 3x200x260x180", cp.asnumpy(cp.matmul(cp.asarray(x), cp.asarray(y))), x @ y)
    bx, by = cplx(2, 3, 120, 140), cplx(3, 140, 90)
    check("cupy complex128 broadcast matmul 2x3x120x140 @ 3x140x90",
          cp.asnumpy(cp.matmul(cp.asarray(bx), cp.asarray(by))), bx @ by)
    m = hermitian_pd(512)
    rhs = cplx(512, 8)
    check("cupy complex128 linalg.solve 512", cp.asnumpy(cp.linalg.solve(cp.asarray(m), cp.asarray(rhs))),
          np.linalg.solve(m, rhs))
    cp.cuda.Device().synchronize()


torch_cases()
cupy_cases()
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
