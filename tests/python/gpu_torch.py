"""tests/python/gpu_torch.py: GPU check (scripts/gpu-check) of `import ozcrt` in PyTorch without LD_PRELOAD: phase22 region within the bound, off region bit-identical, compare region equal to the shadow report.

Run with OZCRT_LIB (or from the source tree) and no LD_PRELOAD, either as a
script or, as a notebook would, imported from `python3 -c` after `import ozcrt`:

    python3 tests/python/gpu_torch.py
    python3 -c "import ozcrt, sys; sys.path.insert(0, 'tests/python'); import gpu_torch; sys.exit(gpu_torch.main())"

Checks, on float64 products of U(-1,1) data at 1024^3 and 768x640x896 (NT):
 1. `with ozcrt.mode("off")`: bit-identical to the native product computed
    before (torch.equal), and the stats count those calls as mode-off;
 2. `with ozcrt.region(mode="phase22", min_m=1, ...)`: every element within
    2^(s+t) k 2^-33 of native (s, t: the scale exponents of row i of op(A)
    and column j of op(B), reference/bound.h: the Phase 22 bound is about
    2^(s+t) k 2^-34; the factor 2 covers native's own rounding), normwise
    relative difference in (0, 1e-9), and the stats count them emulated;
 3. `with ozcrt.compare() as rep`: one site per shape; its calls, normwise and
    max relative differences equal those computed here from the region's
    result (the emulated C) and the native product (relative 1e-6: the
    report's sums run in another order), 0 elements beyond the bound; and
    the process-wide report (ozcrt.write_report) holds the same worst values.
Prints PASS/FAIL per check and a last line "N passed, N failed"; exit 1 on any
failure; SKIP (exit 0) when PyTorch or a CUDA GPU is missing.
"""
import json
import os
import sys
import tempfile

import ozcrt  # first: before torch loads cuBLAS

results = []


def check(name, ok, detail=""):
    results.append(bool(ok))
    print("%s: %s%s" % ("PASS" if ok else "FAIL", name, " (%s)" % detail if detail else ""), flush=True)


def calls(reason):
    return sum(e["reasons"].get(reason, 0) for e in ozcrt.stats().values())


def main():
    del results[:]
    try:
        import torch
    except ImportError as e:
        print("SKIP: PyTorch is not importable (%s)" % e)
        return 0
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA GPU")
        return 0
    print("ozcrt library:", ozcrt.library_path(), "| torch", torch.__version__, "|", torch.cuda.get_device_name())
    check("libozcrt.so loaded without LD_PRELOAD", ozcrt.loaded() and "libozcrt" not in os.environ.get("LD_PRELOAD", ""))
    g = torch.Generator(device="cuda").manual_seed(20261130)
    thresholds = dict(min_m=1, min_n=1, min_k=1)
    cases = []
    for (m, n, k, transb) in ((1024, 1024, 1024, False), (768, 640, 896, True)):
        a = torch.rand(m, k, dtype=torch.float64, device="cuda", generator=g) * 2 - 1
        b = torch.rand((n, k) if transb else (k, n), dtype=torch.float64, device="cuda", generator=g) * 2 - 1
        cases.append((a, b, transb))

    def product(a, b, transb):
        return a @ (b.t() if transb else b)

    ozcrt.set(mode="phase22")
    # native, by the process mode off
    ozcrt.mode("off")
    off0 = calls("mode-off")
    native = [product(*c) for c in cases]
    torch.cuda.synchronize()
    ozcrt.reset("process")
    check("process mode off: calls forwarded as mode-off", calls("mode-off") - off0 >= len(cases),
          "%d calls" % (calls("mode-off") - off0))

    # 1. off region
    off0 = calls("mode-off")
    with ozcrt.mode("off"):
        off = [product(*c) for c in cases]
        torch.cuda.synchronize()
    check("off region: bit-identical to native", all(torch.equal(x, y) for x, y in zip(off, native)))
    check("off region: stats say mode-off", calls("mode-off") - off0 >= len(cases))

    # 2. phase22 region
    emu0 = calls("emulated")
    with ozcrt.region(mode="phase22", **thresholds):
        emu = [product(*c) for c in cases]
        torch.cuda.synchronize()
    check("phase22 region: stats say emulated", calls("emulated") - emu0 >= len(cases),
          "%d emulated" % (calls("emulated") - emu0))
    for (a, b, transb), e, nat in zip(cases, emu, native):
        bm = b.t() if transb else b
        k = a.shape[1]
        s = torch.floor(torch.log2(a.abs().amax(dim=1))) + 1
        t = torch.floor(torch.log2(bm.abs().amax(dim=0))) + 1
        bound = torch.exp2(s[:, None] + t[None, :]) * k * 2.0**-33
        d = (e - nat).abs()
        nw = (torch.linalg.norm(e - nat) / torch.linalg.norm(nat)).item()
        shape = "%dx%dx%d%s" % (a.shape[0], bm.shape[1], k, " NT" if transb else "")
        check("phase22 %s: every element within 2^(s+t) k 2^-33 of native" % shape, bool((d <= bound).all()),
              "max |diff|/bound %.3g" % (d / bound).max().item())
        check("phase22 %s: normwise relative difference in (0, 1e-9)" % shape, 0 < nw < 1e-9, "%.3g" % nw)

    # 3. compare region against numbers computed here
    with ozcrt.compare(**thresholds) as rep:
        cmp_out = [product(*c) for c in cases]
    sites = rep.sites
    check("compare region: one site per shape", len(sites) == len(cases), "%d sites" % len(sites))
    for (a, b, transb), e, nat in zip(cases, cmp_out, native):
        m, k = a.shape
        n = b.shape[0] if transb else b.shape[1]
        site = [x for x in sites if (x["m"], x["n"], x["k"]) in ((m, n, k), (n, m, k))]
        if len(site) != 1:
            check("compare region: site %dx%dx%d" % (m, n, k), False, "sites %s" % sites)
            continue
        site = site[0]
        d = (e - nat).abs()
        nw = (torch.linalg.norm(e - nat) / torch.linalg.norm(nat)).item()
        mr = (d / nat.abs().clamp_min(2.0**-1022)).max().item()
        check("compare %dx%dx%d: 1 call, 0 beyond the bound" % (m, n, k),
              site["calls"] == 1 and site["beyond_bound_total"] == 0 and site["nonfinite_total"] == 0,
              "calls %d, beyond %d" % (site["calls"], site["beyond_bound_total"]))
        check("compare %dx%dx%d: normwise = here's" % (m, n, k),
              abs(site["normwise_worst"] - nw) <= 1e-6 * nw, "report %.6g, here %.6g" % (site["normwise_worst"], nw))
        check("compare %dx%dx%d: max relative = here's" % (m, n, k),
              abs(site["max_rel_worst"] - mr) <= 1e-6 * mr, "report %.6g, here %.6g" % (site["max_rel_worst"], mr))
        check("compare %dx%dx%d: the program got the emulated C (bit-identical to the phase22 region)" % (m, n, k),
              any(torch.equal(e, x) for x in emu))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "report.json")
        ozcrt.write_report(path)
        with open(path) as f:
            whole = json.load(f)
    for site in sites:
        same = [x for x in whole["sites"] if all(x[f] == site[f] for f in ("entry", "m", "n", "k", "batch"))]
        check("process report holds the region's site %s %dx%dx%d" % (site["entry"], site["m"], site["n"], site["k"]),
              len(same) == 1 and same[0]["normwise_worst"] >= site["normwise_worst"]
              and same[0]["calls"] >= site["calls"])

    passed = sum(results)
    print("%d passed, %d failed" % (passed, len(results) - passed))
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
