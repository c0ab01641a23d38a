#!/usr/bin/env python3
"""test_fuzz_compare: tests/gpu/fuzz/fuzz_compare.py on hand-made runs: identical runs pass, and each class of difference (status, a write outside C, a write on an error, element count, Inf/NaN class, a value beyond the tolerance, a call missing) is reported and fails.

usage: test_fuzz_compare.py PATH/TO/fuzz_compare.py
"""
import os
import subprocess
import sys
import tempfile


def call(index, ep="cublasZgemm_v2", status=0, canary=0, written=0, k=4, alpha=(1.0, 0.0), beta=(0.0, 0.0), rows=(),
         cx=None, device=0, hash=None):
    head = "%d %s %d %d %d %d %s %s %s %s %d" % (index, ep, status, canary, written, k, alpha[0].hex(), alpha[1].hex(),
                                                beta[0].hex(), beta[1].hex(), len(rows))
    if cx is not None:  # the client's two last fields: complex, device pointer mode
        head += " %d %d" % (cx, device)
    if hash is not None:  # the 14-field form: the outputs' hash
        head += " %016x" % hash
    return [head] + [" ".join(float(x).hex() for x in r) for r in rows]


BASE = [
    (0, dict(rows=[(1.0, 2.0, 3.0, 1.0, 0.0), (-0.5, float("inf"), 2.0, 1.0, 0.0)])),
    (1, dict(ep="cublasDgemm_v2", status=7)),
    (2, dict(ep="cublasGemmEx", rows=[(float("nan"), 0.0, 1.0, 1.0, 0.0)])),
]


def write(path, calls):
    with open(path, "w") as fh:
        for idx, kw in calls:
            fh.write("\n".join(call(idx, **kw)) + "\n")


def run(tool, native, shim, mode="ozaki2"):
    p = subprocess.run([sys.executable, tool, native, shim, "--mode", mode], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main():
    tool = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="fuzz-compare-") as tmp:
        nat = os.path.join(tmp, "native.txt")
        write(nat, BASE)
        shim = os.path.join(tmp, "shim.txt")
        write(shim, BASE)
        rc, out = run(tool, nat, shim)
        if rc != 0 or "0 differences" not in out:
            print("FAIL: identical runs: rc %d\n%s" % (rc, out))
            failures += 1
        # within the tolerance: 8 (k+2) 2^-53 S + k 2^-52 R with k 4, S 3, R 1 is about 1.2e-14
        near = [(0, dict(rows=[(1.0 + 2e-15, 2.0, 3.0, 1.0, 0.0), (-0.5, float("inf"), 2.0, 1.0, 0.0)]))] + BASE[1:]
        write(shim, near)
        rc, out = run(tool, nat, shim)
        if rc != 0:
            print("FAIL: a difference within the tolerance was reported\n%s" % out)
            failures += 1
        # phase22's tolerance is wider: 1e-10 passes there, not in ozaki2
        wide = [(0, dict(rows=[(1.0 + 1e-10, 2.0, 3.0, 1.0, 0.0), (-0.5, float("inf"), 2.0, 1.0, 0.0)]))] + BASE[1:]
        write(shim, wide)
        if run(tool, nat, shim, "phase22")[0] != 0 or run(tool, nat, shim, "ozaki2")[0] != 1:
            print("FAIL: the modes' tolerances")
            failures += 1
        cases = {
            "status": [(0, BASE[0][1]), (1, dict(ep="cublasDgemm_v2", status=0)), BASE[2]],
            "a write outside C": [(0, dict(BASE[0][1], canary=1))] + BASE[1:],
            "C written on an error": [BASE[0], (1, dict(ep="cublasDgemm_v2", status=7, written=1)), BASE[2]],
            "elements": [BASE[0], BASE[1], (2, dict(ep="cublasGemmEx", rows=[]))],
            "nan natively, finite": [BASE[0], BASE[1], (2, dict(ep="cublasGemmEx", rows=[(1.0, 0.0, 1.0, 1.0, 0.0)]))],
            "+inf natively, -inf": [(0, dict(rows=[(1.0, 2.0, 3.0, 1.0, 0.0), (-0.5, -float("inf"), 2.0, 1.0, 0.0)]))]
            + BASE[1:],
            "beyond": [(0, dict(rows=[(1.001, 2.0, 3.0, 1.0, 0.0), (-0.5, float("inf"), 2.0, 1.0, 0.0)]))] + BASE[1:],
            "one run only": BASE[:2],
        }
        for what, calls in cases.items():
            write(shim, calls)
            rc, out = run(tool, nat, shim)
            if rc != 1 or what not in out:
                print("FAIL: %s: rc %d, output:\n%s" % (what, rc, out))
                failures += 1
        # complex calls and non-finite scalars: an element non-finite in both runs passes whatever its classes
        inf, nan = float("inf"), float("nan")
        zn = [(0, dict(cx=1, rows=[(inf, 1.0, 3.0, 1.0, 0.0), (0.5, 0.25, 2.0, 1.0, 0.0)])),
              (1, dict(ep="cublasGemmEx", cx=0, device=1, alpha=(inf, 0.0), rows=[(inf, 0.0, 1.0, 1.0, 0.0)]))]
        write(nat, zn)
        loose_ok = [(0, dict(cx=1, rows=[(nan, inf, 3.0, 1.0, 0.0), (0.5, 0.25, 2.0, 1.0, 0.0)])),
                    (1, dict(ep="cublasGemmEx", cx=0, device=1, alpha=(inf, 0.0), rows=[(nan, 0.0, 1.0, 1.0, 0.0)]))]
        write(shim, loose_ok)
        rc, out = run(tool, nat, shim)
        if rc != 0:
            print("FAIL: complex / non-finite-scalar classes compared strictly\n%s" % out)
            failures += 1
        for what, rows in (("non-finite natively, finite", [(1.0, 1.0, 3.0, 1.0, 0.0), (0.5, 0.25, 2.0, 1.0, 0.0)]),
                           ("finite natively, non-finite", [(inf, nan, 3.0, 1.0, 0.0), (0.5, inf, 2.0, 1.0, 0.0)])):
            write(shim, [(0, dict(cx=1, rows=rows))] + loose_ok[1:])
            rc, out = run(tool, nat, shim)
            if rc != 1 or what not in out:
                print("FAIL: %s: rc %d, output:\n%s" % (what, rc, out))
                failures += 1
        # device alpha == 0: cuBLAS's NaN (0 x P) or beta C, by its kernel: a non-finite element on either side passes
        write(nat, [(0, dict(ep="cublasDgemm_v2", cx=0, device=1, alpha=(0.0, 0.0), rows=[(0.5, 0.0, 1.0, 1.0, 0.5)]))])
        write(shim, [(0, dict(ep="cublasDgemm_v2", cx=0, device=1, alpha=(0.0, 0.0), rows=[(nan, 0.0, 1.0, 1.0, 0.5)]))])
        if run(tool, nat, shim)[0] != 0:
            print("FAIL: device alpha 0: NaN against beta C was reported")
            failures += 1
        write(shim, [(0, dict(ep="cublasDgemm_v2", cx=0, device=0, alpha=(0.0, 0.0), rows=[(nan, 0.0, 1.0, 1.0, 0.5)]))])
        write(nat, [(0, dict(ep="cublasDgemm_v2", cx=0, device=0, alpha=(0.0, 0.0), rows=[(0.5, 0.0, 1.0, 1.0, 0.5)]))])
        if run(tool, nat, shim)[0] != 1:
            print("FAIL: host alpha 0: NaN against beta C passed")
            failures += 1
        # a real call with finite scalars stays strict in the 13-field form
        write(nat, [(0, dict(ep="cublasDgemm_v2", cx=0, rows=[(inf, 0.0, 1.0, 1.0, 0.0)]))])
        write(shim, [(0, dict(ep="cublasDgemm_v2", cx=0, rows=[(nan, 0.0, 1.0, 1.0, 0.0)]))])
        if run(tool, nat, shim)[0] != 1:
            print("FAIL: a real call's Inf/NaN class is not compared")
            failures += 1
        # cuBLASLt's BIAS term (a sixth element field) widens the tolerance by 2^-50 |bias|
        write(nat, [(0, dict(ep="cublasLtMatmul", cx=0, rows=[(1.0, 0.0, 0.0, 0.0, 0.0, 100.0)]))])
        write(shim, [(0, dict(ep="cublasLtMatmul", cx=0, rows=[(1.0 + 1e-14, 0.0, 0.0, 0.0, 0.0, 100.0)]))])
        if run(tool, nat, shim)[0] != 0:
            print("FAIL: the BIAS term's tolerance")
            failures += 1
        write(nat, [(0, dict(ep="cublasLtMatmul", cx=0, rows=[(1.0, 0.0, 0.0, 0.0, 0.0, 0.0)]))])
        write(shim, [(0, dict(ep="cublasLtMatmul", cx=0, rows=[(1.0 + 1e-14, 0.0, 0.0, 0.0, 0.0)]))])
        if run(tool, nat, shim)[0] != 1:
            print("FAIL: without a BIAS term the difference passed")
            failures += 1
        # a call the client could not predict (canary 2): the outputs' hashes must agree, nothing else is judged
        write(nat, [(0, dict(ep="cublasLtMatmul", cx=0, canary=2, hash=0x1234))])
        write(shim, [(0, dict(ep="cublasLtMatmul", cx=0, canary=2, hash=0x1234))])
        if run(tool, nat, shim)[0] != 0:
            print("FAIL: an unpredicted call with equal outputs was reported")
            failures += 1
        write(shim, [(0, dict(ep="cublasLtMatmul", cx=0, canary=2, hash=0x1235))])
        rc, out = run(tool, nat, shim)
        if rc != 1 or "CLASS bits" not in out:
            print("FAIL: an unpredicted call whose outputs differ passed\n%s" % out)
            failures += 1
        write(shim, [(0, dict(ep="cublasLtMatmul", cx=0, canary=0, hash=0x1234))])
        if run(tool, nat, shim)[0] != 1:
            print("FAIL: an unpredicted call against a predicted one passed")
            failures += 1
        write(shim, [(0, dict(ep="cublasLtMatmul", cx=0, canary=2, written=1, status=7, hash=0x1234))])
        if run(tool, nat, shim)[0] != 1:
            print("FAIL: an unpredicted call written on an error passed")
            failures += 1
        # a malformed file: exit 2
        with open(shim, "w") as fh:
            fh.write("0 cublasZgemm_v2 0\n")
        if run(tool, nat, shim)[0] != 2:
            print("FAIL: a malformed run is not a format error")
            failures += 1
    print("test_fuzz_compare: %s" % ("passed" if failures == 0 else "%d failed" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
