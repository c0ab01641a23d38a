"""A float64 product in JAX, natively and emulated, in one process.

    XLA_PYTHON_CLIENT_PREALLOCATE=false python -m ozcrt --mode ozaki2 docs/examples/jax_dot.py

(python -m ozcrt preloads the shim and runs this script; the import below
then uses that copy.) The same compiled product runs with the process mode
off (native cuBLAS) and in ozaki2, is timed both ways, and 64 rows of each
result are checked against NumPy on the CPU.
"""
import time

import jax
import jax.numpy as jnp
import numpy as np

import ozcrt

jax.config.update("jax_enable_x64", True)
n = 8192
ka, kb = jax.random.split(jax.random.key(0))
a = jax.random.uniform(ka, (n, n), jnp.float64, -1.0, 1.0)
b = jax.random.uniform(kb, (n, n), jnp.float64, -1.0, 1.0)
dot = jax.jit(jnp.dot)
dot(a, b).block_until_ready()  # compiles it (XLA's autotuner times cuBLAS, through the shim)

an, bn = np.asarray(a[:64]), np.asarray(b)
ref, mag = an @ bn, np.abs(an) @ np.abs(bn)
for mode in ("off", "ozaki2"):
    ozcrt.mode(mode)  # the process mode: XLA's threads too, from the next call on
    ozcrt.stats_clear()
    c = dot(a, b).block_until_ready()
    t = time.perf_counter()
    for _ in range(10):
        c = dot(a, b)
    c.block_until_ready()
    ms = (time.perf_counter() - t) / 10 * 1e3
    err = np.max(np.abs(np.asarray(c[:64]) - ref) / mag)
    calls = sum(s["calls"] for s in ozcrt.stats().values())
    emulated = sum(s["emulated"] for s in ozcrt.stats().values())
    print(f"{mode:7s} {n}^3: {ms:6.2f} ms a product, |C - C_numpy| / (|A||B|) <= {err:.1e},"
          f" {calls} cuBLAS calls, {emulated} emulated")
print("moduli chosen (automatic precision):", ozcrt.auto_plans()["real"])
