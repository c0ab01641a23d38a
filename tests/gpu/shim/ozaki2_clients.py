#!/usr/bin/env python3
"""tests/gpu/shim/ozaki2_clients.py: PyTorch and CuPy float64 work against NumPy, for the ozaki2 mode (FP64 accuracy).

Run under libozcrt.so with OZCRT_MODE=ozaki2 and the thresholds at 0 (ozaki2.sh).
Well-conditioned data; every result must agree with NumPy's float64 to rtol 1e-12
(normwise for products and solves, on eigenvalues for eigh). Prints PASS/FAIL per
case and 'N passed, M failed'; exit status 1 if any fails, 0 with SKIP lines when
torch or cupy or the GPU is missing.
"""
import sys

import numpy as np

RTOL = 1e-12
rng = np.random.default_rng(20261130)
passed = failed = 0


def check(name, got, ref, rtol=RTOL):
    global passed, failed
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    rel = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300))
    ok = rel <= rtol and np.all(np.isfinite(got))
    print(f"{'PASS' if ok else 'FAIL'}: {name}: normwise rel diff {rel:.3g} (<= {rtol:g})")
    if ok:
        passed += 1
    else:
        failed += 1


def well_conditioned(n):
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (q * np.linspace(1.0, 4.0, n)) @ q.T  # symmetric, condition number 4


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
    a, b, c = (rng.standard_normal(s) for s in [(600, 500), (500, 700), (600, 700)])
    ta, tb, tc = (torch.from_numpy(x).to(dev) for x in (a, b, c))
    check("torch mm 600x500x700", (ta @ tb).cpu().numpy(), a @ b)
    check("torch addmm beta=0.5 alpha=2", torch.addmm(tc, ta, tb, beta=0.5, alpha=2.0).cpu().numpy(),
          0.5 * c + 2.0 * (a @ b))
    x, y = rng.standard_normal((4, 256, 320)), rng.standard_normal((4, 320, 192))
    check("torch bmm 4x256x320x192", torch.bmm(torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)).cpu().numpy(),
          x @ y)
    m = well_conditioned(768)
    rhs = rng.standard_normal((768, 16))
    tm = torch.from_numpy(m).to(dev)
    check("torch linalg.solve 768", torch.linalg.solve(tm, torch.from_numpy(rhs).to(dev)).cpu().numpy(),
          np.linalg.solve(m, rhs))
    check("torch linalg.inv 768", torch.linalg.inv(tm).cpu().numpy(), np.linalg.inv(m))
    check("torch linalg.eigh 768 (eigenvalues)", torch.linalg.eigh(tm)[0].cpu().numpy(), np.linalg.eigh(m)[0])
    # a 1-D bias: PyTorch's cublasLtMatmul with the BIAS epilogue (nn.Linear, F.linear, addmm)
    w, bias, xin = rng.standard_normal((700, 500)), rng.standard_normal(700), rng.standard_normal((600, 500))
    tw, tbias, tx = (torch.from_numpy(v).to(dev) for v in (w, bias, xin))
    lin = torch.nn.Linear(500, 700, dtype=torch.float64, device=dev)
    with torch.no_grad():
        lin.weight.copy_(tw)
        lin.bias.copy_(tbias)
        check("torch nn.Linear 600x500 -> 700 (bias)", lin(tx).cpu().numpy(), xin @ w.T + bias)
    check("torch F.linear (bias)", torch.nn.functional.linear(tx, tw, tbias).cpu().numpy(), xin @ w.T + bias)
    check("torch addmm 1-D bias", torch.addmm(tbias, tx, tw.t()).cpu().numpy(), bias + xin @ w.T)
    # not FP64: the shim's cublasLtMatmul passes them through (their own precision's tolerance)
    check("torch float32 mm (untouched)", (tx.float() @ tw.t().float()).cpu().numpy(), xin @ w.T, rtol=1e-5)
    check("torch bfloat16 linear (untouched)",
          torch.nn.functional.linear(tx.bfloat16(), tw.bfloat16(), tbias.bfloat16()).float().cpu().numpy(),
          xin @ w.T + bias, rtol=2e-2)
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
    a, b = rng.standard_normal((640, 520)), rng.standard_normal((520, 600))
    ca, cb = cp.asarray(a), cp.asarray(b)
    check("cupy matmul 640x520x600", cp.asnumpy(ca @ cb), a @ b)
    check("cupy dot", cp.asnumpy(cp.dot(ca, cb)), a @ b)
    t1, t2 = rng.standard_normal((16, 24, 300)), rng.standard_normal((300, 24, 20))
    check("cupy tensordot", cp.asnumpy(cp.tensordot(cp.asarray(t1), cp.asarray(t2), axes=([2], [0]))),
          np.tensordot(t1, t2, axes=([2], [0])))
    x, y = rng.standard_normal((3, 200, 260)), rng.standard_normal((3, 260, 180))
    check("cupy batched matmul 3x200x260x180", cp.asnumpy(cp.matmul(cp.asarray(x), cp.asarray(y))), x @ y)
    m = well_conditioned(640)
    rhs = rng.standard_normal((640, 8))
    check("cupy linalg.solve 640", cp.asnumpy(cp.linalg.solve(cp.asarray(m), cp.asarray(rhs))), np.linalg.solve(m, rhs))
    cp.cuda.Device().synchronize()


torch_cases()
cupy_cases()
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
