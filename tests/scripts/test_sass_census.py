#!/usr/bin/env python3
"""test_sass_census: runs scripts/sass-census on cubins nvcc makes from one-instruction kernels, and on files that are not cubins.

usage: test_sass_census.py PATH/TO/scripts/sass-census

Checked: a kernel with one register FMA in FP64 counts one DFMA and no
DFMA.ur; one with two FMAs by __constant__ operands counts two DFMA.ur and
one ULDC more than the first (the opcodes the script names are these);
--kernel selects; a file that is not an ELF and a missing kernel exit 1.
Exit 77 (skipped) when nvcc is not there. Prints PASS/FAIL per check.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = r"""
__constant__ double cK[4];
__global__ void k_reg(const double *a, double *out) { int t = threadIdx.x; out[t] = __fma_rn(a[t], a[t + 32], a[t + 64]); }
__global__ void k_const2(const double *a, double *out)
{
    int t = threadIdx.x;
    out[t] = __fma_rn(a[t], cK[1], __fma_rn(a[t + 32], cK[2], a[t + 64]));
}
"""


def census(script, args):
    r = subprocess.run([sys.executable, script] + args, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def count(line, name):
    m = re.search(r"(?:^|[;,] )%s (\d+)" % re.escape(name), line)
    return int(m.group(1)) if m else 0


def main():
    script = sys.argv[1]
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if not nvcc:
        print("SKIP: no nvcc")
        return 77
    fails = 0

    def check(ok, what):
        nonlocal fails
        print(("PASS: " if ok else "FAIL: ") + what)
        fails += not ok

    with tempfile.TemporaryDirectory() as d:
        src, cub = os.path.join(d, "k.cu"), os.path.join(d, "k.cubin")
        open(src, "w").write(SRC)
        r = subprocess.run([nvcc, "-O3", "-arch=sm_90", "-cubin", src, "-o", cub], capture_output=True, text=True)
        if r.returncode:
            print("FAIL: nvcc: " + r.stderr[-500:])
            return 1
        rc, out, _ = census(script, [cub])
        lines = {("const2" if "k_const2" in l else "reg"): l for l in out.splitlines()}
        check(rc == 0 and len(lines) == 2, "two kernels listed, exit 0")
        reg, c2 = lines.get("reg", ""), lines.get("const2", "")
        check(count(reg, "DFMA") == 1 and count(reg, "DFMA.ur") == 0, "k_reg: one DFMA, no DFMA.ur (%s)" % reg)
        check(count(c2, "DFMA.ur") == 2, "k_const2: two DFMA.ur (%s)" % c2)
        check(count(c2, "ULDC") == count(reg, "ULDC") + 2, "k_const2: two ULDC more than k_reg")
        rc, out, _ = census(script, [cub, "--kernel", "k_reg"])
        check(rc == 0 and len(out.splitlines()) == 1 and "k_reg" in out, "--kernel selects one")
        rc, _, err = census(script, [cub, "--kernel", "nothing"])
        check(rc == 1 and "no kernel" in err, "no matching kernel: exit 1")
        open(os.path.join(d, "x.txt"), "w").write("not an elf")
        rc, _, err = census(script, [os.path.join(d, "x.txt")])
        check(rc == 1 and "not an ELF64" in err, "not a cubin: exit 1")
    print("test_sass_census: %d failed" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
