#!/usr/bin/env python3
"""test_auto_accuracy_table: tests/gpu/shim/auto_accuracy_table.py on hand-made runs: an emulated case no worse than
native passes, one beyond the guarantee, worse in max or median, or with new non-finite elements fails; a call sent
to cuBLAS or with no plan (the native branch) must equal native, its hash included; runs with other cases fail.

usage: test_auto_accuracy_table.py PATH/TO/auto_accuracy_table.py
"""
import os
import subprocess
import sys
import tempfile


def line(name="U(-1,1)", mx=1e-15, med=2e-16, beyond=0, nonfinite=0, plan="native", h="00ff"):
    return "case %-18s %6d %6d %7d rows=%-5d max=%.3e median=%.3e beyond=%d nonfinite=%d plan=%s ms=1.000 hash=%s\n" % (
        name, 2048, 2048, 2048, 2048, mx, med, beyond, nonfinite, plan, h)


def main():
    tool = sys.argv[1]
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        nat, run = os.path.join(d, "native.txt"), os.path.join(d, "run.txt")

        def case(native_lines, run_lines, want_rc, what):
            nonlocal failures
            with open(nat, "w") as f:
                f.write("".join(native_lines))
            with open(run, "w") as f:
                f.write("".join(run_lines))
            p = subprocess.run([sys.executable, tool, nat, run], capture_output=True, text=True)
            if p.returncode != want_rc:
                print("FAIL: %s: exit %d, want %d\n%s%s" % (what, p.returncode, want_rc, p.stdout, p.stderr))
                failures += 1
            return p.stdout

        base = [line(), line("phi=2", 1e-12, 3e-16, 5), line("phi=8", 1e-9, 3e-16, 9)]
        out = case(base, [line(plan="-"), line("phi=2", 1e-16, 0, 0, 0, "N=17"), line("phi=8", 1e-9, 3e-16, 9, 0, "none")],
                   0, "emulated no worse, cuBLAS equal, no plan equal")
        if "ok (no plan: native)" not in out or "ok (cuBLAS)" not in out:
            print("FAIL: the verdicts are not named\n%s" % out)
            failures += 1
        case(base, [line(plan="-"), line("phi=2", 1e-16, 0, 1, 0, "N=17"), base[2]], 1, "one element beyond")
        case(base, [line(plan="-"), line("phi=2", 2e-12, 0, 0, 0, "N=17"), base[2]], 1, "max worse")
        case(base, [line(plan="-"), line("phi=2", 1e-16, 4e-16, 0, 0, "N=17"), base[2]], 1, "median worse")
        case(base, [line(plan="-"), line("phi=2", 1e-16, 0, 0, 2, "N=17"), base[2]], 1, "new non-finite elements")
        case(base, [line(mx=2e-15, plan="-"), base[1], base[2]], 1, "sent to cuBLAS but not native's")
        case(base, [line(plan="-"), base[1]], 1, "a case missing")
        case(base, [line(plan="-", h="01ff"), base[1], base[2]], 1, "sent to cuBLAS, other bits")
        case(base, [line(plan="-"), base[1], line("phi=8", 1e-9, 3e-16, 9, 0, "none", "0fff")], 1,
             "no plan, other bits (the plain dot product)")
        case(base, [line("phi=4", plan="-"), base[1], base[2]], 1, "another case")
        case([], [], 1, "no cases")
    print("test_auto_accuracy_table: %s" % ("passed" if not failures else "%d failed" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
