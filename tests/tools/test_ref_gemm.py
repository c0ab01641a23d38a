#!/usr/bin/env python3
"""tests/tools/test_ref_gemm.py: tests/tools/ref_gemm on the CPU (standard library only).

    python3 test_ref_gemm.py REF_GEMM

On integer-valued operands every mode's product is exact (phase22's slices and ozaki2's integers
hold them whole), so each MODE must give the exact integer product, column-major, complex parts
interleaved; the row-major recipe of its usage (pass N, M, K, B, A) must give the row-major product;
bad arguments and files of the wrong size exit 2 and write nothing; a fixed BITS beyond what 20
moduli reach exits 3.
"""
import os
import random
import struct
import subprocess
import sys
import tempfile

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    print("%s: %s%s" % ("PASS" if ok else "FAIL", name, " (%s)" % detail if detail else ""))
    if ok:
        passed += 1
    else:
        failed += 1


def write(path, values):
    with open(path, "wb") as f:
        f.write(struct.pack("<%dd" % len(values), *values))


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    return list(struct.unpack("<%dd" % (len(data) // 8), data))


def matmul_colmajor(a, b, m, n, k, cplx):
    """exact C = A B, column-major (complex: Python complex numbers)"""
    return [sum(a[i + p * m] * b[p + j * k] for p in range(k)) for j in range(n) for i in range(m)]


def main(tool):
    rng = random.Random(20261202)
    m, n, k = 7, 5, 11
    with tempfile.TemporaryDirectory(prefix="ref-gemm-") as d:
        pa, pb, pc = (os.path.join(d, x) for x in ("a.bin", "b.bin", "c.bin"))

        def run(*args):
            if os.path.exists(pc):
                os.remove(pc)
            return subprocess.run([tool] + [str(x) for x in args], capture_output=True, text=True).returncode

        ra = [float(rng.randint(-300, 300)) for _ in range(m * k)]
        rb = [float(rng.randint(-300, 300)) for _ in range(k * n)]
        want = matmul_colmajor(ra, rb, m, n, k, False)
        write(pa, ra)
        write(pb, rb)
        for mode in ("phase22", "real:auto", "real:auto:30", "real:auto:64", "real:53", "real:34"):
            rc = run(mode, m, n, k, pa, pb, pc)
            got = read(pc) if rc == 0 else None
            check("%s: the exact integer product" % mode, rc == 0 and got == want, "exit %d" % rc)
        # the row-major recipe: C (m x n, row-major) = A (m x k) B (k x n), both row-major
        a_rm = [ra[i + p * m] for i in range(m) for p in range(k)]
        b_rm = [rb[p + j * k] for p in range(k) for j in range(n)]
        write(pa, b_rm)
        write(pb, a_rm)
        rc = run("real:auto", n, m, k, pa, pb, pc)
        want_rm = [want[i + j * m] for i in range(m) for j in range(n)]
        check("row-major recipe (N, M, K, B, A)", rc == 0 and read(pc) == want_rm, "exit %d" % rc)
        # complex: interleaved parts
        za = [complex(rng.randint(-99, 99), rng.randint(-99, 99)) for _ in range(m * k)]
        zb = [complex(rng.randint(-99, 99), rng.randint(-99, 99)) for _ in range(k * n)]
        zw = matmul_colmajor(za, zb, m, n, k, True)
        write(pa, [x for z in za for x in (z.real, z.imag)])
        write(pb, [x for z in zb for x in (z.real, z.imag)])
        for mode in ("complex:auto", "complex:53", "complex:auto:40"):
            rc = run(mode, m, n, k, pa, pb, pc)
            got = read(pc) if rc == 0 else []
            check("%s: the exact complex product" % mode,
                  rc == 0 and [complex(got[2 * i], got[2 * i + 1]) for i in range(len(got) // 2)] == zw, "exit %d" % rc)
        # refusals: nothing written
        write(pa, ra)
        write(pb, rb)
        for args, name in (((), "no arguments"), (("real:auto", m, n, k, pa, pb), "an argument missing"),
                           (("real:auto:19", m, n, k, pa, pb, pc), "auto:19"),
                           (("real:abc", m, n, k, pa, pb, pc), "bits not a number"),
                           (("ozaki3", m, n, k, pa, pb, pc), "an unknown mode"),
                           (("real:auto", 0, n, k, pa, pb, pc), "M = 0"),
                           (("real:auto", m + 1, n, k, pa, pb, pc), "A's file too short"),
                           (("real:auto", m, n, k - 1, pa, pb, pc), "the files too long"),
                           (("complex:auto", m, n, k, pa, pb, pc), "real files for a complex product")):
            rc = run(*args)
            check("refused: %s (exit 2, no C)" % name, rc == 2 and not os.path.exists(pc), "exit %d" % rc)
        rc = run("real:120", m, n, k, pa, pb, pc)
        check("a fixed BITS no N reaches: exit 3, no C", rc == 3 and not os.path.exists(pc), "exit %d" % rc)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: test_ref_gemm.py REF_GEMM", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
