#!/usr/bin/env python3
"""tests/gpu/shim/auto_accuracy_table.py: automatic precision's accuracy table from auto_accuracy runs.

usage: auto_accuracy_table.py NATIVE RUN [RUN ...]

NATIVE is auto_accuracy's output without the shim, each RUN its output under libozcrt.so
(the same cases in the same order). Prints one table row per case and run: the native
max / median relative error, the run's plan (N=.. emulated, none: no plan certified the
call, which then ran natively on the GPU's native branch; -: the call went to cuBLAS), its
max / median, the elements beyond the guarantee, and a verdict:
  emulated (N=..):  no element beyond the guarantee, no non-finite element where native has
                    none, max and median no worse than native's          -> ok, else FAIL
  - (to cuBLAS),
  none (native):    C's hash, max, median and counts equal to native's (its bits) -> ok, else
                    FAIL
Exit 1 when a row FAILs or the runs do not match NATIVE's cases, 2 on a usage error.
Standard library only.
"""
import re
import sys

LINE = re.compile(r"^case (.+?)\s+(\d+)\s+(\d+)\s+(\d+) rows=(\d+)\s+max=(\S+) median=(\S+) beyond=(\d+) "
                  r"nonfinite=(\d+) plan=(\S+) ms=(\S+) hash=([0-9a-f]+)$")


def parse(path):
    rows = []
    with open(path) as fh:
        for line in fh:
            m = LINE.match(line.strip())
            if m:
                g = m.groups()
                rows.append({"name": g[0], "shape": "%sx%sx%s" % g[1:4], "rows": int(g[4]), "max": float(g[5]),
                             "median": float(g[6]), "beyond": int(g[7]), "nonfinite": int(g[8]), "plan": g[9],
                             "ms": float(g[10]), "hash": g[11]})
    return rows


def verdict(nat, run):
    if run["plan"] in ("-", "none"):
        same = all(nat[k] == run[k] for k in ("hash", "max", "median", "beyond", "nonfinite"))
        what = "cuBLAS" if run["plan"] == "-" else "no plan: native"
        return "ok (%s)" % what if same else "FAIL: %s, yet not native's result" % what
    bad = []
    if run["beyond"]:
        bad.append("%d beyond the guarantee" % run["beyond"])
    if run["nonfinite"] > nat["nonfinite"]:
        bad.append("%d non-finite" % run["nonfinite"])
    if run["max"] > nat["max"]:
        bad.append("max worse than native")
    if run["median"] > nat["median"]:
        bad.append("median worse than native")
    return "FAIL: " + ", ".join(bad) if bad else "ok"


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        native, runs = parse(argv[0]), [parse(p) for p in argv[1:]]
    except OSError as e:
        print("auto_accuracy_table: %s" % e, file=sys.stderr)
        return 2
    failed = 0
    print("%-18s %-17s %10s %10s | %-6s %-10s %10s %10s %7s %8s  %s" % (
        "dataset", "m x n x k", "native max", "median", "run", "plan", "max", "median", "beyond", "ms", "verdict"))
    for r, run in enumerate(runs):
        if [x["name"] + x["shape"] for x in run] != [x["name"] + x["shape"] for x in native] or not native:
            print("FAIL: run %d does not hold the native run's cases" % (r + 1))
            failed += 1
            continue
        for nat, x in zip(native, run):
            v = verdict(nat, x)
            failed += v.startswith("FAIL")
            print("%-18s %-17s %10.2e %10.2e | %-6d %-10s %10.2e %10.2e %7d %8.2f  %s" % (
                x["name"], x["shape"], nat["max"], nat["median"], r + 1, x["plan"], x["max"], x["median"], x["beyond"],
                x["ms"], v))
    print("auto_accuracy_table: %d cases x %d runs, %d failed" % (len(native), len(runs), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
