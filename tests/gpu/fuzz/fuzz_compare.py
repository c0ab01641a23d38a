#!/usr/bin/env python3
"""tests/gpu/fuzz/fuzz_compare.py: compares two runs of fuzz_client (natively, and under libozcrt.so) call by call.

usage: fuzz_compare.py NATIVE SHIM --mode phase22|ozaki2 [--max-report N]

For every call: the same status; no write outside C in either run (canary
0) and none on an error (written 0); where the client could not predict
cuBLAS's answer (canary 2: a cublasLtMatmul that cuBLAS's documented rules
refuse and cuBLASLt may take) the outputs' bits instead, by the hash of a
fourteenth field, equal in both runs; the same number of elements; per
element and part the same class (finite, +Inf, -Inf, NaN) for real calls
with finite alpha and beta, where the class of a sum does not depend on the
order of its terms; for complex calls and non-finite scalars, where it does
(cuBLAS's own kernels differ among themselves there: docs/semantics.md),
each element finite in both runs or in neither; alpha == 0 in device pointer
mode with Inf or NaN in A or B, where cuBLAS itself gives NaN (0 x P) or beta
C by the kernel it picks (docs/semantics.md), an element non-finite in
either run is not compared; finite values within the mode's tolerance of the
native ones:
  ozaki2:  |d| <= |alpha|_1 (8 (k+2) 2^-53 S + k 2^-52 R) + 2^-50 (|alpha|_1 S + |beta|_1 C0) + 2^-1000
  phase22: the same with k 2^-32 R in place of k 2^-52 R
(S = sum_k |a|_1 |b|_1, R = rowmax colmax, C0 = |C_old|_1, all from the
client; cuBLASLt's BIAS epilogue adds 2^-50 |bias_i|_1, a sixth field). Prints each difference (at most --max-report, with the call's index:
fuzz_client SEED COUNT OUT --only INDEX replays it), then per class of
difference and entry point the count of calls and up to three of them, then
one summary line.
Exit 0 when there is none, 1 otherwise, 2 on a usage or format error.
Standard library only.
"""
import argparse
import math
import sys


def parse(path):
    """The calls of one run: index -> (header fields, [element rows])."""
    calls = {}
    with open(path) as fh:
        lines = fh.read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line:
            continue
        f = line.split()
        if len(f) not in (11, 13, 14):
            raise ValueError("%s:%d: a call line has 11, 13 or 14 fields, not %d" % (path, i, len(f)))
        hdr = {"index": int(f[0]), "ep": f[1], "status": int(f[2]), "canary": int(f[3]), "written": int(f[4]),
               "k": int(f[5]), "alpha": (float.fromhex(f[6]), float.fromhex(f[7])),
               "beta": (float.fromhex(f[8]), float.fromhex(f[9])), "count": int(f[10]),
               "complex": int(f[11]) if len(f) >= 13 else 0, "device": int(f[12]) if len(f) >= 13 else 0,
               "hash": f[13] if len(f) == 14 else None}
        rows = []
        for _ in range(hdr["count"]):
            if i >= len(lines):
                raise ValueError("%s: call %d ends early" % (path, hdr["index"]))
            e = lines[i].split()
            i += 1
            if len(e) not in (5, 6):
                raise ValueError("%s:%d: an element line has 5 or 6 fields" % (path, i))
            rows.append(tuple(float.fromhex(x) for x in e) + ((0.0,) if len(e) == 5 else ()))
        calls[hdr["index"]] = (hdr, rows)
    return calls


def kind(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return "finite"


def tolerance(mode, hdr, row):
    _, _, S, R, C0, bias = row
    a = abs(hdr["alpha"][0]) + abs(hdr["alpha"][1])
    b = abs(hdr["beta"][0]) + abs(hdr["beta"][1])
    k = hdr["k"]
    prod = 8 * (k + 2) * 2.0 ** -53 * S + k * (2.0 ** -32 if mode == "phase22" else 2.0 ** -52) * R
    return a * prod + 2.0 ** -50 * (a * S + b * C0 + bias) + 2.0 ** -1000


def compare(native, shim, mode):
    """The differences, as (index, text, class)."""
    out = []
    for idx in sorted(set(native) | set(shim)):
        if idx not in native or idx not in shim:
            out.append((idx, "the call is in one run only", "missing"))
            continue
        (hn, rn), (hs, rs) = native[idx], shim[idx]
        name = hn["ep"]
        if hn["ep"] != hs["ep"]:
            out.append((idx, "different entry points (%s, %s): the runs are not of one seed" % (hn["ep"], hs["ep"]),
                        "seed"))
            continue
        if hn["status"] != hs["status"]:
            out.append((idx, "%s: status %d natively, %d under the shim" % (name, hn["status"], hs["status"]),
                        "status"))
        if hn["canary"] == 2 or hs["canary"] == 2:  # not predicted: the outputs' bits compared
            if hn["canary"] != hs["canary"] or hn["hash"] is None or hn["hash"] != hs["hash"]:
                out.append((idx, "%s: not predicted, and the output buffers' bits differ (hash %s natively, %s under "
                            "the shim)" % (name, hn["hash"], hs["hash"]), "bits"))
            for run, h in (("natively", hn), ("under the shim", hs)):
                if h["written"]:
                    out.append((idx, "%s: C written on an error %s" % (name, run), "written"))
            continue
        for run, h in (("natively", hn), ("under the shim", hs)):
            if h["canary"]:
                out.append((idx, "%s: a write outside C %s" % (name, run), "canary"))
            if h["written"]:
                out.append((idx, "%s: C written on an error %s" % (name, run), "written"))
        if hn["count"] != hs["count"]:
            if hn["status"] == hs["status"]:
                out.append((idx, "%s: %d elements natively, %d under the shim" % (name, hn["count"], hs["count"]),
                            "count"))
            continue
        scalars = hn["alpha"] + hn["beta"]
        loose = hn["complex"] or not all(math.isfinite(x) for x in scalars)
        dev_alpha0 = hn["device"] and hn["alpha"] == (0.0, 0.0)
        for e, (a, b) in enumerate(zip(rn, rs)):
            if dev_alpha0 and not all(math.isfinite(x) for x in (a[0], a[1], b[0], b[1])):
                continue
            if loose and not (math.isfinite(a[0]) and math.isfinite(a[1]) and math.isfinite(b[0]) and math.isfinite(b[1])):
                fa, fb = math.isfinite(a[0]) and math.isfinite(a[1]), math.isfinite(b[0]) and math.isfinite(b[1])
                if fa != fb:
                    out.append((idx, "%s: element %d: %s natively, %s under the shim" %
                                (name, e, "finite" if fa else "non-finite", "finite" if fb else "non-finite"),
                                "finiteness"))
                continue
            for part in (0, 1):
                if kind(a[part]) != kind(b[part]):
                    out.append((idx, "%s: element %d part %d: %s natively, %s under the shim" %
                                (name, e, part, kind(a[part]), kind(b[part])),
                                "class %s->%s" % (kind(a[part]), kind(b[part]))))
                elif kind(a[part]) == "finite":
                    tol = tolerance(mode, hn, a)
                    if abs(a[part] - b[part]) > tol:
                        out.append((idx, "%s: element %d part %d: |%r - %r| beyond %r" %
                                    (name, e, part, a[part], b[part], tol), "bound"))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description="Compares a native and a shim run of fuzz_client call by call.")
    ap.add_argument("native")
    ap.add_argument("shim")
    ap.add_argument("--mode", required=True, choices=("phase22", "ozaki2"))
    ap.add_argument("--max-report", type=int, default=50)
    args = ap.parse_args(argv)
    try:
        native, shim = parse(args.native), parse(args.shim)
    except (OSError, ValueError) as e:
        print("fuzz_compare: %s" % e, file=sys.stderr)
        return 2
    diffs = compare(native, shim, args.mode)
    for idx, text, _ in diffs[:args.max_report]:
        print("DIFF call %d: %s" % (idx, text))
    classes = {}  # (class, entry point) -> the calls
    for idx, _, cls in diffs:
        calls = classes.setdefault((cls, native.get(idx, shim.get(idx, ({"ep": "?"}, [])))[0]["ep"]), [])
        if not calls or calls[-1] != idx:
            calls.append(idx)
    for (cls, ep), calls in sorted(classes.items()):
        print("CLASS %-22s %-32s %5d calls, e.g. %s" % (cls, ep, len(calls), " ".join(str(c) for c in calls[:3])))
    ok = sum(1 for h, _ in native.values() if h["status"] == 0)
    ok_real = sum(1 for h, _ in native.values() if h["status"] == 0 and not h["complex"])
    print("fuzz_compare (%s): %d calls (%d succeeded natively, %d of them real), %d differences" %
          (args.mode, len(native), ok, ok_real, len(diffs)))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
