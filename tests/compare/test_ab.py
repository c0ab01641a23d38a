#!/usr/bin/env python3
"""Tests scripts/ozcrt-ab on a stand-in program (no GPU) and report.c's CSV/JSON with Python's parsers.

usage: test_ab.py OZCRT_AB AB_PROGRAM REPORT_DUMP"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

ab, program, dump = sys.argv[1:4]
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def find_libm():
    """A real shared library to stand in for libozcrt.so: this process's libm or libc."""
    with open("/proc/self/maps") as f:
        paths = [line.split()[-1] for line in f if ".so" in line]
    for key in ("libm.so", "libc.so"):
        for p in paths:
            if key in os.path.basename(p) and os.path.isfile(p):
                return p
    sys.exit("no shared library found to preload")


tmp = tempfile.mkdtemp(prefix="ozcrt-ab-test-")

# 1. report.c's files read by Python's own parsers
for ext in ("json", "csv"):
    path = os.path.join(tmp, "r." + ext)
    check(subprocess.run([dump, path]).returncode == 0, "report_dump writes ." + ext)
rep = json.load(open(os.path.join(tmp, "r.json")))
sites = {s["entry"]: s for s in rep["sites"]}
check(rep["ozcrt_report"] == 1 and len(rep["sites"]) == 2, "json: two sites")
a, b = sites["cublasDgemm_v2"], sites["cublasDgemmStridedBatched"]
check((a["transa"], a["transb"], a["m"], a["n"], a["k"], a["batch"], a["calls"]) == ("N", "T", 1000, 900, 800, 1, 2),
      "json: site key and calls")
check(a["max_abs_worst"] == 1.5e-9 and a["max_abs_mean"] == 1.0e-9 and a["max_rel_worst"] == 3.25e-7,
      "json: worst and mean exact")
check(math.isinf(b["normwise_worst"]) and b["nonfinite_total"] == 2 and b["not_compared_capture"] == 1,
      "json: inf as 1e999, counts")
check(rep["sites"][0]["entry"] == "cublasDgemmStridedBatched", "json: NaN/Inf site sorted first")
check(rep["total"]["calls"] == 3 and rep["total"]["not_compared_capture"] == 1, "json: total")
rows = list(csv.DictReader(open(os.path.join(tmp, "r.csv"))))
check(len(rows) == 2, "csv: two rows")
crow = {r["entry"]: r for r in rows}
check(float(crow["cublasDgemm_v2"]["max_rel_worst"]) == 3.25e-7 and int(crow["cublasDgemm_v2"]["calls"]) == 2,
      "csv: values")
check(math.isinf(float(crow["cublasDgemmStridedBatched"]["normwise_worst"])), "csv: inf")
check(set(rows[0].keys()) == set(k for k in a.keys()), "csv columns == json keys")

# 2. ozcrt-ab on the stand-in program
lib = find_libm()
out = os.path.join(tmp, "out")
files = ["table.csv", "data.npy", "vec.npy", "idx.npy", "log.txt"]
base_env = dict(os.environ, AB_EXPECT_LIB=os.path.basename(lib), AB_FAKE_REPORT=os.path.join(tmp, "r.json"),
                LD_PRELOAD="/nonexistent/libozcrt.so")


def run_ab(opts, **env):
    args = [sys.executable, ab, "--lib", lib] + opts
    for f in files:
        args += ["--file", os.path.join(out, f)]
    args += ["--", sys.executable, program, out]
    e = dict(base_env, **env)
    p = subprocess.run(args, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    print("---- ozcrt-ab %s -> %d\n%s" % (" ".join(opts), p.returncode, p.stdout))
    return p.returncode, p.stdout


rc, text = run_ab(["--rtol", "1e-6"])
check(rc == 0, "rtol 1e-6 passes")
check("table.csv: energy" in text and "data.npy: column 2" in text and "vec.npy" in text, "per file and column")
check("cublasDgemm_v2 NT 1000x900x800" in text and "not compared: capture 1" in text, "shadow report printed")
check("log.txt" in text and "stdout" in text, "text files and stdout compared")

rc, text = run_ab(["--rtol", "1e-12"])
check(rc == 1 and "BEYOND THE THRESHOLDS" in text, "rtol 1e-12 fails")
rc, _ = run_ab(["--atol", "1e-15"])
check(rc == 1, "atol 1e-15 fails")
rc, _ = run_ab(["--atol", "1e-3"])
check(rc == 0, "atol 1e-3 passes")
rc, text = run_ab([])
check(rc == 0 and "not judged" in text, "no thresholds: reported only")
rc, text = run_ab(["--rtol", "1"], AB_TEXT_CHANGE="1")
check(rc == 1 and "'converged' (native) vs 'diverged' (emulated)" in text, "text mismatch fails")
rc, text = run_ab(["--rtol", "1e-6"], AB_FAKE_REPORT="")
check(rc == 0 and "no shadow report" in text, "no report: still works (no GPU case)")
# idx.npy is integer and identical
check(any(l.startswith("idx.npy") and " 0 " in l for l in text.splitlines()), "integer .npy identical")

print("\n%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
