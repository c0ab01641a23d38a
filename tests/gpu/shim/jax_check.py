#!/usr/bin/env python3
"""tests/gpu/shim/jax_check.py: JAX (XLA) float64 and complex128 work natively and under libozcrt.so, which sees XLA's cuBLAS only through its dlsym hook (interpose/dlhook.c).

    python3 tests/gpu/shim/jax_check.py BUILD_DIR

XLA dlopens libcublas / libcublasLt itself and takes every function with
dlsym on its own handle; this checks that, preloaded, the shim receives its
float64 products. The script runs itself as child processes, each one JAX
process with jax_enable_x64 and XLA_PYTHON_CLIENT_PREALLOCATE=false:

  native          no LD_PRELOAD: the reference results and |A||B|;
  phase22         preloaded, the default environment (the user's view) but
                  for --xla_gpu_enable_triton_gemm=false (below);
  ozaki2-lt       preloaded, OZCRT_MODE=ozaki2 OZCRT_MIN_SPEEDUP=0 (FP64
                  accuracy), XLA_FLAGS=--xla_gpu_enable_cublaslt=true
                  (XLA's cublasLtMatmul path);
  ozaki2-legacy   the same with --xla_gpu_enable_cublaslt=false (XLA's
                  cublasDgemm_v2 / cublasGemmEx / ...StridedBatched path);
  ozaki2-import   not preloaded: `import ozcrt` before `import jax` (the
                  shim then puts the loaded objects' dlsym slots on its hook,
                  and the CUDA plugin's once JAX loads it), as ozaki2-lt.
  ozaki2-launcher `python -m ozcrt --mode ozaki2 -- jax_check.py ...` (the
                  package's launcher preloads the library), as ozaki2-lt.
  Every preloaded run sets --xla_gpu_enable_triton_gemm=false: with Triton
  GEMMs on, XLA's autotuner times the shim's product against its own Triton
  kernel and keeps the faster (docs/jax.md), so at 2048^3 no cuBLAS call
  would be left to count.

Two plain dots (float64 and complex128, 512x576 @ 576x640) are held bit for
bit to the CPU reference of the mode that emulated them (tests/tools/ref_gemm),
or to native where the shim forwarded them.
Cases at 2048: jnp.dot, matmul with a transposed operand, einsum, batched
matmul (4 x 2048^3), batched einsum, a broadcast batch, dot + bias, dot +
ReLU (an epilogue the shim does not take: may be forwarded), complex128
dot / batched matmul / einsum (emulated in the ozaki2 mode, automatic
precision included), and float64 jnp.linalg.solve
(cuSOLVER inside).

Checked, every element against the native result:
  ozaki2-*:  |C - C_native| <= 8 (k+2) 2^-53 (|A||B|)_ij + k 2^-52 rowmax colmax   (FP64 tolerance)
  phase22:   |C - C_native| <= k 2^-32 rowmax|op(A)_i| colmax|op(B)_j| + 8 (k+2) 2^-53 (|A||B|)_ij
  (+ 2^-51 |bias| where a bias is added); solve: backward error
  ||A x - b||_inf / (||A||_inf ||x||_inf + ||b||_inf) <= 1e-12 (ozaki2, native), 1e-8 (phase22);
and from the shim's own stats (ozcrt.stats() around each case, the
preloaded copy): every float64 product case emulated (>= 1 call), no call
failed. Each case's entry points and reasons are printed (what XLA calls).
At 8192: jnp.dot, matmul a @ b.T and einsum, each emulated, 256 sampled
rows within the tolerance above; then the speed there: a float64 jnp.dot
timed natively and under the shim (phase22, ozaki2), the 8192 products
emulated, each ozaki2 run's speed-up at least 95% of the same product called
from C in the same check (tests/gpu/shim/time_dgemm, natively and under the
shim): the JAX route adds no cost of its own (a faster JAX run is reported, not
failed: the layout XLA passes, and its timing of single calls, can favour it).
Prints PASS/FAIL per check, then "N passed, M failed"; exit 1 on any
failure; SKIP (exit 0) when JAX or a CUDA GPU is missing.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from verdicts import Verdicts

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
# the sizes (the environment's only for a dry run of the script itself, e.g. against a stand-in jax)
N = int(os.environ.get("JAX_CHECK_N", "2048"))
BATCH = 4
SPEED_N = int(os.environ.get("JAX_CHECK_SPEED_N", "8192"))
SPEED_REPS = 5
# plain dots held to the CPU reference bit for bit (tests/tools/ref_gemm): m x k @ k x n, small enough
# for the reference, at the shim's default size thresholds
EXACT_MKN = (512, 576, 640)
EXACT = ("f64 jnp.dot %dx%d @ %dx%d" % (EXACT_MKN[0], EXACT_MKN[1], EXACT_MKN[1], EXACT_MKN[2]),
         "c128 jnp.dot %dx%d @ %dx%d" % (EXACT_MKN[0], EXACT_MKN[1], EXACT_MKN[1], EXACT_MKN[2]))


def cases():
    """(name, kind, operands (numpy), (ta, tb), expect_emulated): deterministic, the same in every process."""
    rng = np.random.default_rng(20261201)

    def u(*shape):
        return rng.uniform(-1.0, 1.0, shape)

    def cu(*shape):
        return u(*shape) + 1j * u(*shape)

    out = [
        ("f64 jnp.dot", "dot", (u(N, N), u(N, N)), (0, 0), True),
        ("f64 matmul a @ b.T", "matmul", (u(N, N), u(N, N)), (0, 1), True),
        ("f64 einsum ij,jk->ik", "einsum", (u(N, N // 2), u(N // 2, N)), (0, 0), True),
        ("f64 batched matmul %dx%d^3" % (BATCH, N), "matmul", (u(BATCH, N, N), u(BATCH, N, N)), (0, 0), True),
        ("f64 batched einsum bij,bkj->bik", "einsum_bt", (u(BATCH, N, N // 2), u(BATCH, N, N // 2)), (0, 1), True),
        ("f64 broadcast (%d,%d,%d) @ (%d,%d)" % (BATCH, N, N, N, N), "matmul", (u(BATCH, N, N), u(N, N)), (0, 0), True),
        ("f64 dot + bias", "dot_bias", (u(N, N), u(N, N), u(N)), (0, 0), True),
        ("f64 relu(dot)", "dot_relu", (u(N, N), u(N, N)), (0, 0), False),
        ("c128 jnp.dot", "dot", (cu(N, N), cu(N, N)), (0, 0), False),
        ("c128 batched matmul %dx%d^3" % (BATCH, N), "matmul", (cu(BATCH, N, N), cu(BATCH, N, N)), (0, 0), False),
        ("c128 einsum ij,kj->ik", "einsum_t", (cu(N, N), cu(N, N)), (0, 1), False),
        (EXACT[0], "dot", (u(*EXACT_MKN[:2]), u(*EXACT_MKN[1:])), (0, 0), True),
        (EXACT[1], "dot", (cu(*EXACT_MKN[:2]), cu(*EXACT_MKN[1:])), (0, 0), False),
    ]
    return out


def solve_operands():
    rng = np.random.default_rng(20261202)
    a = rng.uniform(-1.0, 1.0, (N, N)) + N ** 0.5 * np.eye(N)  # well conditioned
    return a, rng.uniform(-1.0, 1.0, (N, 64))


def speed_operands():
    rng = np.random.default_rng(20261203)
    return rng.uniform(-1.0, 1.0, (SPEED_N, SPEED_N)), rng.uniform(-1.0, 1.0, (SPEED_N, SPEED_N))


# the rows of the 8192 products compared (every 32nd: 256 of 8192)
SAMPLE_ROWS = slice(0, None, 32)


def large_cases(fns, mm_t):
    """(name, function, transposed B) of the products at SPEED_N (on speed_operands())"""
    return [("f64 jnp.dot %d^3" % SPEED_N, fns["dot"]), ("f64 matmul a @ b.T %d^3" % SPEED_N, mm_t),
            ("f64 einsum ij,jk->ik %d^3" % SPEED_N, fns["einsum"])]


def op(x, t):
    return np.swapaxes(x, -1, -2) if t else x


# ---------------------------------------------------------------- the child: one JAX process


def child(role, outdir):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    ozcrt = None
    if role != "native":
        sys.path.insert(0, ROOT)
        import ozcrt as oz  # the preloaded copy (ozaki2-import: loaded here, before jax): its stats

        ozcrt = oz
    try:
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
    except Exception as e:  # noqa: BLE001 (any import failure is a SKIP)
        print("SKIP: JAX is not importable (%s)" % e)
        return 3
    try:
        gpus = [d for d in jax.devices() if d.platform == "gpu"]
    except Exception as e:  # noqa: BLE001
        gpus, err = [], e
    else:
        err = "no gpu device"
    if not gpus:
        print("SKIP: JAX sees no CUDA GPU (%s)" % err)
        return 3
    print("%s: jax %s, %s, XLA_FLAGS=%r, LD_PRELOAD=%r" % (role, jax.__version__, gpus[0].device_kind,
                                                          os.environ.get("XLA_FLAGS", ""),
                                                          os.environ.get("LD_PRELOAD", "")), flush=True)
    fns = {
        "dot": jax.jit(lambda a, b: jnp.dot(a, b)),
        "einsum": jax.jit(lambda a, b: jnp.einsum("ij,jk->ik", a, b)),
        "einsum_bt": jax.jit(lambda a, b: jnp.einsum("bij,bkj->bik", a, b)),
        "einsum_t": jax.jit(lambda a, b: jnp.einsum("ij,kj->ik", a, b)),
        "dot_bias": jax.jit(lambda a, b, c: jnp.dot(a, b) + c[None, :]),
        "dot_relu": jax.jit(lambda a, b: jnp.maximum(jnp.dot(a, b), 0.0)),
    }
    mm = jax.jit(lambda a, b: jnp.matmul(a, b))
    mm_t = jax.jit(lambda a, b: jnp.matmul(a, jnp.swapaxes(b, -1, -2)))

    def stats():
        return ozcrt.stats() if ozcrt else {}

    def delta(s0, s1):
        d = {}
        for ep, s in s1.items():
            p = s0.get(ep, {"calls": 0, "emulated": 0, "failed": 0, "reasons": {}})
            calls = s["calls"] - p["calls"]
            if calls:
                d[ep] = {"calls": calls, "emulated": s["emulated"] - p["emulated"], "failed": s["failed"] - p["failed"],
                         "reasons": {r: v - p["reasons"].get(r, 0) for r, v in s["reasons"].items()
                                     if v - p["reasons"].get(r, 0)}}
        return d

    report = {"role": role, "cases": {}, "speed": {}}
    results = {}
    for i, (name, kind, operands, (ta, tb), _) in enumerate(cases()):
        dev = [jax.device_put(x) for x in operands]
        f = (mm_t if tb else mm) if kind == "matmul" else fns[kind]
        sc = stats()
        f(*dev).block_until_ready()  # compile (and XLA's autotuning), counted apart
        s0 = stats()
        out = f(*dev)
        out.block_until_ready()
        s1 = stats()
        report.setdefault("first", {})[name] = delta(sc, s0)
        results["c%d" % i] = np.asarray(out)
        if role == "native":  # |A||B| through the same product: the tolerance's scale
            absd = [jax.device_put(np.abs(x)) for x in operands[:2]]
            if kind == "dot_bias":
                absd.append(jax.device_put(np.zeros(operands[2].shape)))
            results["b%d" % i] = np.asarray((fns["dot"] if kind == "dot_relu" else f)(*absd))
        report["cases"][name] = delta(s0, s1)
        print("  %-44s %s (first run, with compilation: %s)" % (name, json.dumps(report["cases"][name], sort_keys=True),
                                                               json.dumps(report["first"][name], sort_keys=True)),
              flush=True)
        del dev
    # jnp.linalg.solve: the backward error here, in float64
    a, b = solve_operands()
    da, db = jax.device_put(a), jax.device_put(b)
    solve = jax.jit(jnp.linalg.solve)
    solve(da, db).block_until_ready()
    s0 = stats()
    x = np.asarray(solve(da, db))
    s1 = stats()
    r = a @ x - b
    report["solve"] = {
        "backward": float(np.abs(r).max() / (np.abs(a).sum(axis=1).max() * np.abs(x).max() + np.abs(b).max())),
        "stats": delta(s0, s1)}
    print("  %-44s backward error %.3g %s" % ("f64 jnp.linalg.solve %d (64 rhs)" % N, report["solve"]["backward"],
                                             json.dumps(report["solve"]["stats"], sort_keys=True)), flush=True)
    # at 8192: jnp.dot, matmul a @ b.T and einsum on the speed operands, once each, their sampled rows kept
    sa, sb = (jax.device_put(x) for x in speed_operands())
    for name, g in large_cases(fns, mm_t):
        g(sa, sb).block_until_ready()
        s0 = stats()
        out = g(sa, sb)
        out.block_until_ready()
        s1 = stats()
        report["cases"][name] = delta(s0, s1)
        results["L%d" % len([x for x in results if x.startswith("L")])] = np.asarray(out)[SAMPLE_ROWS]
        print("  %-44s %s" % (name, json.dumps(report["cases"][name], sort_keys=True)), flush=True)
        del out
    # the speed at 8192: a float64 jnp.dot
    f = fns["dot"]
    f(sa, sb).block_until_ready()
    f(sa, sb).block_until_ready()
    s0 = stats()
    times = []
    for _ in range(SPEED_REPS):
        t = time.perf_counter()
        f(sa, sb).block_until_ready()
        times.append(time.perf_counter() - t)
    s1 = stats()
    report["speed"] = {"ms": 1e3 * float(np.median(times)), "min_ms": 1e3 * min(times), "stats": delta(s0, s1)}
    print("  %-44s median %.2f ms (min %.2f) %s" % ("f64 jnp.dot %d^3 x%d" % (SPEED_N, SPEED_REPS), report["speed"]["ms"],
                                                    report["speed"]["min_ms"],
                                                    json.dumps(report["speed"]["stats"], sort_keys=True)), flush=True)
    np.savez(os.path.join(outdir, role + ".npz"), **results)
    with open(os.path.join(outdir, role + ".json"), "w") as fh:
        json.dump(report, fh)
    return 0


# ---------------------------------------------------------------- the parent: runs and compares

VERDICTS = Verdicts()
check = VERDICTS.check


def run_child(role, outdir, lib, env_extra):
    env = dict(os.environ)
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("LD_PRELOAD", None)
    for k in [k for k in env if k.startswith("OZCRT_")]:
        del env[k]
    if role != "native":
        env["OZCRT_LIB"] = lib
        if role not in ("ozaki2-import", "ozaki2-launcher"):
            env["LD_PRELOAD"] = lib
    env.update(env_extra)
    print("-- %s: %s" % (role, " ".join("%s=%s" % kv for kv in sorted(env_extra.items()))), flush=True)
    t = time.time()
    launcher = ["-m", "ozcrt", "--mode", "ozaki2", "--"] if role == "ozaki2-launcher" else []
    p = subprocess.run([sys.executable] + launcher + [os.path.abspath(__file__), "--child", role, outdir], env=env)
    print("-- %s: exit %d after %.0f s" % (role, p.returncode, time.time() - t), flush=True)
    return p.returncode


def tolerances(kind, operands, ta, tb, bound, mode):
    a, b = op(operands[0], ta), op(operands[1], tb)
    k = a.shape[-1]
    rmax = np.abs(a).max(axis=-1)[..., :, None]
    cmax = np.abs(b).max(axis=-2)[..., None, :]
    if mode == "phase22":
        tol = k * 2.0 ** -32 * rmax * cmax + 8 * (k + 2) * 2.0 ** -53 * bound
    else:
        tol = 8 * (k + 2) * 2.0 ** -53 * bound + k * 2.0 ** -52 * rmax * cmax
    if kind == "dot_bias":
        tol = tol + 2.0 ** -51 * np.abs(operands[2])[None, :]
    return tol + 1e-300


def reference(build, mode, operands, outdir):
    """C = A B (row-major) by the CPU reference of `mode` (tests/tools/ref_gemm), or None with why"""
    a, b = operands[0], operands[1]
    (m, k), n = a.shape, b.shape[1]
    tool = os.path.join(os.path.abspath(build), "tests", "tools", "ref_gemm")
    pa, pb, pc = (os.path.join(outdir, x) for x in ("ref-a.bin", "ref-b.bin", "ref-c.bin"))
    np.ascontiguousarray(b).tofile(pa)  # row-major C = A B is column-major C^T = B^T A^T
    np.ascontiguousarray(a).tofile(pb)
    p = subprocess.run([tool, mode, str(n), str(m), str(k), pa, pb, pc], capture_output=True, text=True)
    if p.returncode != 0:
        return None, "%s exit %d: %s" % (tool, p.returncode, p.stderr.strip())
    return np.fromfile(pc, dtype=a.dtype).reshape(m, n), ""


def same_bits(x, y):
    return x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x.view(np.uint64), y.view(np.uint64))


def parent(build):
    lib = os.path.join(os.path.abspath(build), "interpose", "libozcrt.so")
    if not os.path.isfile(lib):
        print("FAIL: no %s" % lib)
        return 1
    runs = [
        ("phase22", {"XLA_FLAGS": "--xla_gpu_enable_triton_gemm=false"}),
        ("ozaki2-lt", {"OZCRT_MODE": "ozaki2", "OZCRT_MIN_SPEEDUP": "0",
                       "XLA_FLAGS": "--xla_gpu_enable_cublaslt=true --xla_gpu_enable_triton_gemm=false"}),
        ("ozaki2-legacy", {"OZCRT_MODE": "ozaki2", "OZCRT_MIN_SPEEDUP": "0",
                           "XLA_FLAGS": "--xla_gpu_enable_cublaslt=false --xla_gpu_enable_triton_gemm=false"}),
        ("ozaki2-import", {"OZCRT_MODE": "ozaki2", "OZCRT_MIN_SPEEDUP": "0",
                           "XLA_FLAGS": "--xla_gpu_enable_cublaslt=true --xla_gpu_enable_triton_gemm=false"}),
        ("ozaki2-launcher", {"OZCRT_MIN_SPEEDUP": "0",
                             "XLA_FLAGS": "--xla_gpu_enable_cublaslt=true --xla_gpu_enable_triton_gemm=false"}),
    ]
    with tempfile.TemporaryDirectory(prefix="ozcrt-jax-") as outdir:
        rc = run_child("native", outdir, lib, {})
        if rc == 3:
            print("SKIP: JAX or its GPU is missing")
            return 0
        check("native JAX run", rc == 0)
        if rc != 0:
            return 1
        native = np.load(os.path.join(outdir, "native.npz"))
        with open(os.path.join(outdir, "native.json")) as fh:
            native_rep = json.load(fh)
        check("native: jnp.linalg.solve backward error <= 1e-12", native_rep["solve"]["backward"] <= 1e-12,
              "%.3g" % native_rep["solve"]["backward"])
        speeds = [("native", native_rep["speed"]["ms"])]
        all_cases = cases()
        large_a, large_b = speed_operands()
        large_names = [(name, "b.T" in name) for name, _ in large_cases({"dot": None, "einsum": None}, None)]
        large_bound = {tb: np.abs(large_a[SAMPLE_ROWS]) @ np.abs(large_b.T if tb else large_b) for tb in (False, True)}
        for role, extra in runs:
            rc = run_child(role, outdir, lib, extra)
            check("%s: JAX run under the shim" % role, rc == 0, "exit %d" % rc)
            if rc != 0:
                continue
            got = np.load(os.path.join(outdir, role + ".npz"))
            with open(os.path.join(outdir, role + ".json")) as fh:
                rep = json.load(fh)
            mode = "phase22" if role == "phase22" else "ozaki2"
            for i, (name, kind, operands, (ta, tb), expect) in enumerate(all_cases):
                c, ref, bound = got["c%d" % i], native["c%d" % i], native["b%d" % i]
                tol = tolerances(kind, operands, ta, tb, bound, mode)
                err = np.abs(c - ref)
                bad = int(np.count_nonzero(~(err <= tol)))
                check("%s: %s within the %s tolerance of native" % (role, name,
                                                                    "phase22" if mode == "phase22" else "FP64"),
                      bad == 0 and c.shape == ref.shape,
                      "%d elements beyond, max |diff|/tol %.3g" % (bad, float(np.max(err / tol))))
                st = rep["cases"][name]
                emulated = sum(s["emulated"] for s in st.values())
                fails = sum(s["failed"] for s in st.values())
                what = ", ".join("%s: %d calls, %d emulated%s" % (
                    ep, s["calls"], s["emulated"],
                    "".join(" %s=%d" % kv for kv in sorted(s["reasons"].items()) if kv[0] != "emulated"))
                    for ep, s in sorted(st.items())) or "no cuBLAS call seen by the shim"
                if expect:
                    check("%s: %s emulated by the shim, none failed" % (role, name), emulated >= 1 and fails == 0,
                          what)
                else:
                    check("%s: %s: no call failed" % (role, name), fails == 0, what)
                if name in EXACT:  # emulated: the CPU reference's bits; forwarded: native's
                    if emulated:
                        cplx = np.iscomplexobj(operands[0])
                        rmode = "phase22" if mode == "phase22" else ("complex:" if cplx else "real:") + "auto"
                        want, why = reference(build, rmode, operands, outdir)
                        check("%s: %s bit-identical to the CPU reference (%s)" % (role, name, rmode),
                              want is not None and same_bits(c, want),
                              why or "%d elements differ" % int(np.count_nonzero(c != want)))
                    else:
                        check("%s: %s forwarded: bit-identical to native" % (role, name), same_bits(c, ref), what)
            for li, (name, tb) in enumerate(large_names):
                c, ref = got["L%d" % li], native["L%d" % li]
                a, b = large_a[SAMPLE_ROWS], (large_b.T if tb else large_b)
                tol = tolerances("dot", (a, b), 0, 0, large_bound[tb], mode)
                err = np.abs(c - ref)
                bad = int(np.count_nonzero(~(err <= tol)))
                check("%s: %s within the %s tolerance of native (%d rows)" % (
                    role, name, "phase22" if mode == "phase22" else "FP64", c.shape[0]),
                    bad == 0 and c.shape == ref.shape, "%d elements beyond, max |diff|/tol %.3g" % (
                        bad, float(np.max(err / tol))))
                st = rep["cases"][name]
                check("%s: %s emulated by the shim, none failed" % (role, name),
                      sum(x["emulated"] for x in st.values()) >= 1 and sum(x["failed"] for x in st.values()) == 0,
                      json.dumps(st, sort_keys=True))
            tol = 1e-8 if mode == "phase22" else 1e-12
            check("%s: jnp.linalg.solve backward error <= %g" % (role, tol), rep["solve"]["backward"] <= tol,
                  "%.3g; %s" % (rep["solve"]["backward"], json.dumps(rep["solve"]["stats"], sort_keys=True)))
            sp = rep["speed"]["stats"]
            check("%s: the %d^3 products emulated" % (role, SPEED_N),
                  sum(s["emulated"] for s in sp.values()) >= SPEED_REPS and sum(s["failed"] for s in sp.values()) == 0,
                  json.dumps(sp, sort_keys=True))
            speeds.append((role, rep["speed"]["ms"]))
            os.remove(os.path.join(outdir, role + ".npz"))
    print("-- float64 jnp.dot %d^3, median of %d:" % (SPEED_N, SPEED_REPS))
    for role, ms in speeds:
        print("   %-14s %9.2f ms   speed-up over native %.3fx" % (role, ms, speeds[0][1] / ms))
    c_speedup = time_from_c(build, lib)
    if c_speedup:
        print("   the same product from C (tests/gpu/shim/time_dgemm %d, ozaki2): %.3fx" % (SPEED_N, c_speedup))
        for role, ms in speeds:
            if role.startswith("ozaki2"):
                jx = speeds[0][1] / ms
                check("%s: the %d^3 speed-up at least 95%% of the same call's from C" % (role, SPEED_N),
                      jx >= 0.95 * c_speedup, "%.3fx against %.3fx" % (jx, c_speedup))
    return VERDICTS.summary()


def time_from_c(build, lib):
    """time_dgemm SPEED_N natively and under the shim (ozaki2, as the JAX runs): the speed-up, or None"""
    tool = os.path.join(os.path.abspath(build), "tests", "gpu", "shim", "time_dgemm")
    if not os.path.isfile(tool):
        print("   (no %s: the C comparison is skipped)" % tool)
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith("OZCRT_") and k != "LD_PRELOAD"}
    times = []
    for extra in ({}, {"LD_PRELOAD": lib, "OZCRT_MODE": "ozaki2", "OZCRT_MIN_SPEEDUP": "0"}):
        p = subprocess.run([tool, str(SPEED_N)], env=dict(env, **extra), capture_output=True, text=True)
        fields = p.stdout.split()
        if p.returncode != 0 or len(fields) < 2:
            check("time_dgemm %d runs (%s)" % (SPEED_N, "shim" if extra else "native"), False, p.stderr.strip())
            return None
        times.append(float(fields[1]))
    return times[0] / times[1]


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "--child":
        sys.exit(child(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 2:
        print("usage: %s BUILD_DIR" % sys.argv[0], file=sys.stderr)
        sys.exit(2)
    sys.exit(parent(sys.argv[1]))
