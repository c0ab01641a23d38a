#!/usr/bin/env python3
"""Tests scripts/ozcrt-ab on a stand-in program (no GPU) and report.c's CSV/JSON with Python's parsers.

usage: test_ab.py OZCRT_AB AB_PROGRAM REPORT_DUMP [LIBOZCRT SHIM_PROGRAM LOCAL_CLIENT]

With the last three (where the shim and tests/fake's fake cuBLAS are built),
ozcrt-ab also runs a cuBLAS program under the real libozcrt.so in the ozaki2
mode (no GPU: the call is forwarded to the fake)."""
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
sites = {(s["entry"], s["mode"]): s for s in rep["sites"]}
check(rep["ozcrt_report"] == 1 and len(rep["sites"]) == 4 and len(sites) == 4, "json: four sites")
a, b = sites[("cublasDgemm_v2", "phase22")], sites[("cublasDgemmStridedBatched", "phase22")]
a2 = sites.get(("cublasDgemm_v2", "ozaki2/53"), {})
check((a["transa"], a["transb"], a["m"], a["n"], a["k"], a["batch"], a["calls"]) == ("N", "T", 1000, 900, 800, 1, 2),
      "json: site key and calls")
check((a2.get("m"), a2.get("calls"), a2.get("max_abs_worst"), a2.get("normwise_worst")) == (1000, 1, 2.5e-16, 1.5e-17),
      "json: the same site in the ozaki2 mode is a row of its own")
check(list(rep["sites"][0].keys())[:4] == ["entry", "mode", "transa", "transb"] and "mode" not in rep["total"],
      "json: mode next to the entry point; none in the total")
check(a["max_abs_worst"] == 1.5e-9 and a["max_abs_mean"] == 1.0e-9 and a["max_rel_worst"] == 3.25e-7,
      "json: worst and mean exact")
check(math.isinf(b["normwise_worst"]) and b["nonfinite_total"] == 2 and b["not_compared_capture"] == 1,
      "json: inf as 1e999, counts")
check(rep["sites"][0]["entry"] == "cublasDgemmStridedBatched", "json: NaN/Inf site sorted first")
check(rep["total"]["calls"] == 5 and rep["total"]["not_compared_capture"] == 1, "json: total")
z = sites.get(("cublasZgemm_v2", "ozaki2/53"), {})
check((z.get("transa"), z.get("transb"), z.get("m"), z.get("calls"), z.get("max_abs_worst"), z.get("not_compared_complex"))
      == ("C", "N", 500, 1, 3.0e-16, 0), "json: a complex site is a row like the others (op C, its metrics)")
with open(os.path.join(tmp, "r.csv"), newline="") as f:
    header = next(csv.reader(f))
rows = list(csv.DictReader(open(os.path.join(tmp, "r.csv"))))
check(len(rows) == 4, "csv: four rows")
crow = {(r["entry"], r["mode"]): r for r in rows}
c22 = crow[("cublasDgemm_v2", "phase22")]
check(float(c22["max_rel_worst"]) == 3.25e-7 and int(c22["calls"]) == 2, "csv: values")
check(float(crow[("cublasDgemm_v2", "ozaki2/53")]["normwise_worst"]) == 1.5e-17, "csv: the ozaki2 row")
check(math.isinf(float(crow[("cublasDgemmStridedBatched", "phase22")]["normwise_worst"])), "csv: inf")
check(header == list(a.keys()), "csv columns == json keys, same order")
check(header[:5] == ["entry", "mode", "transa", "transb", "m"], "csv: mode next to the entry point")

# 2. ozcrt-ab on the stand-in program
lib = find_libm()
out = os.path.join(tmp, "out")
files = ["table.csv", "data.npy", "vec.npy", "idx.npy", "log.txt"]
base_env = dict(os.environ, AB_EXPECT_LIB=os.path.basename(lib), AB_FAKE_REPORT=os.path.join(tmp, "r.json"),
                LD_PRELOAD="/nonexistent/libozcrt.so", OZCRT_MODE="", OZCRT_BITS="")


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
check("cublasDgemm_v2 phase22 NT 1000x900x800" in text and "not compared: capture 1" in text, "shadow report printed")
check("cublasDgemm_v2 ozaki2/53 NT 1000x900x800" in text, "shadow report: the ozaki2 row named")
check("cublasZgemm_v2 ozaki2/53 CN 500x400x300" in text and "3e-16/3e-16" in text,
      "shadow report: the complex row printed like the real ones")
check("emulated run: OZCRT_MODE=phase22 (" in text, "the default mode said")
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
check(rc == 3 and "no shadow report" in text and "FAILED: no call was emulated" in text,
      "no report (the no-GPU case): exit 3, says no call was emulated")
empty = os.path.join(tmp, "empty.json")
none_total = {k: (0 if isinstance(v, (int, float)) else v) for k, v in rep["total"].items()}
with open(empty, "w") as f:
    json.dump({"ozcrt_report": 1, "sites": [], "total": none_total}, f)
rc, text = run_ab(["--rtol", "1e-6"], AB_FAKE_REPORT=empty)
check(rc == 3 and "FAILED: no call was emulated" in text, "a report of no call: exit 3")
with open(empty, "w") as f:
    json.dump({"ozcrt_report": 1, "sites": [], "total": dict(none_total, not_compared_capture=2)}, f)
rc, text = run_ab(["--rtol", "1e-6"], AB_FAKE_REPORT=empty)
check(rc == 0 and "not compared: capture 2" in text, "calls emulated but not compared (capture) count as emulated")
with open(empty, "w") as f:
    json.dump({"ozcrt_report": 1, "sites": [], "total": dict(none_total, not_compared_complex=2)}, f)
rc, text = run_ab(["--rtol", "1e-6"], AB_FAKE_REPORT=empty)
check(rc == 0 and "not compared: complex 2" in text,
      "a report of an older shim, whose complex calls ran uncompared: said, and counted as emulated")
rc, text = run_ab(["--rtol", "1e-6"], OZCRT_MODE="Fast", AB_EXPECT_MODE="Fast")
check("emulated run: OZCRT_MODE=Fast: not a mode, so the shim runs off" in text, "a bad OZCRT_MODE: said to run off")
rc, text = run_ab(["--rtol", "1e-6"], OZCRT_MODE="OZAKI2", OZCRT_BITS="40", AB_EXPECT_MODE="OZAKI2 40")
check(rc == 0 and "emulated run: OZCRT_MODE=ozaki2 OZCRT_BITS=40" in text, "OZCRT_MODE in any case")
for opts in (["--help"], ["-h"]):
    p = subprocess.run([sys.executable, ab] + opts, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    check(p.returncode == 0 and p.stderr == "" and all(
        o in p.stdout for o in ("--rtol", "--atol", "--file", "--lib", "--keep", "exit status")),
        "ozcrt-ab %s: every option on stdout, exit 0" % opts[0])
# idx.npy is integer and identical
check(any(l.startswith("idx.npy") and " 0 " in l for l in text.splitlines()), "integer .npy identical")
# the ozaki2 mode from the environment reaches the emulated run (ab_program exits 5 otherwise) and is said
rc, text = run_ab(["--rtol", "1e-6"], OZCRT_MODE="ozaki2", OZCRT_BITS="40", AB_EXPECT_MODE="ozaki2 40")
check(rc == 0 and "emulated run: OZCRT_MODE=ozaki2 OZCRT_BITS=40" in text, "OZCRT_MODE=ozaki2 OZCRT_BITS=40")
HINT = "calls predicted slower than native DGEMM run natively in both runs"
rc, text = run_ab(["--rtol", "1e-6"], OZCRT_MODE="ozaki2", OZCRT_BITS="", AB_EXPECT_MODE="ozaki2", OZCRT_MIN_M="",
                  OZCRT_MIN_N="", OZCRT_MIN_K="", OZCRT_MIN_SPEEDUP="")
check(rc == 0 and "emulated run: OZCRT_MODE=ozaki2 OZCRT_BITS=auto" in text, "OZCRT_MODE=ozaki2: default bits (auto) said")
check(HINT in text, "ozaki2 at the default sizes: the speed rule said")
rc, text = run_ab(["--rtol", "1e-6"], OZCRT_MODE="ozaki2", OZCRT_BITS="", AB_EXPECT_MODE="ozaki2", OZCRT_MIN_M="1",
                  OZCRT_MIN_N="", OZCRT_MIN_K="", OZCRT_MIN_SPEEDUP="")
check(rc == 0 and HINT not in text, "ozaki2 with a size set (auto: the rule off): no such line")
rc, text = run_ab(["--rtol", "1e-6"], OZCRT_MODE="ozaki2", OZCRT_BITS="", AB_EXPECT_MODE="ozaki2", OZCRT_MIN_M="",
                  OZCRT_MIN_N="", OZCRT_MIN_K="", OZCRT_MIN_SPEEDUP="0")
check(rc == 0 and HINT not in text, "ozaki2 with OZCRT_MIN_SPEEDUP=0: no such line")
rc, text = run_ab(["--rtol", "1e-6"], OZCRT_MODE="ozaki2", OZCRT_BITS="40", AB_EXPECT_MODE="phase22")
check(rc == 1 and "exit status differs: 0 (native) vs 5 (emulated)" in text, "a mode not passed on would be seen")

# 3. ozcrt-ab with the real libozcrt.so in the ozaki2 mode, on a program calling the fake cuBLAS
if len(sys.argv) > 6:
    shim, shim_prog, client = sys.argv[4:7]
    stats = os.path.join(tmp, "stats.txt")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OZCRT_") and k != "LD_PRELOAD"}
    env.update(OZCRT_MODE="ozaki2", OZCRT_BITS="40", OZCRT_MIN_M="1", OZCRT_MIN_N="1", OZCRT_MIN_K="1", OZCRT_MIN_SPEEDUP="0",
               OZCRT_STATS="1", OZCRT_STATS_FILE=stats, CUDA_VISIBLE_DEVICES="")
    p = subprocess.run([sys.executable, ab, "--lib", shim, "--rtol", "1e-12", "--", sys.executable, shim_prog, client],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    print("---- ozcrt-ab (libozcrt.so, OZCRT_MODE=ozaki2) -> %d\n%s" % (p.returncode, p.stdout))
    check(p.returncode == 3 and "FAILED: no call was emulated" in p.stdout and "stdout " in p.stdout,
          "shim, ozaki2, no GPU: compared (the same result in both runs) but exit 3: no call was emulated")
    check("emulated run: OZCRT_MODE=ozaki2 OZCRT_BITS=40" in p.stdout, "shim, ozaki2: the mode said")
    check("no shadow report: the emulated run compared nothing" in p.stdout,
          "shim, ozaki2: no GPU, so no call compared and no report (said)")
    table = open(stats).read() if os.path.exists(stats) else ""
    check("ozcrt stats (mode ozaki2, bits 40)" in table and "no-gpu" in table,
          "shim, ozaki2: the emulated run's shim ran in the ozaki2 mode (stats: forwarded, no-gpu)")
else:
    print("(libozcrt.so or the fake cuBLAS not built: ozcrt-ab under the real shim not tested)")

print("\n%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
