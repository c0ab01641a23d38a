"""ozcrt: the ozcrt shim (libozcrt.so) from Python, without LD_PRELOAD; runtime mode switches, stats and shadow comparisons.

Import it FIRST, before torch, cupy or anything else that loads cuBLAS:

    import ozcrt                 # finds and loads libozcrt.so (RTLD_GLOBAL)
    import torch

    ozcrt.mode("off")            # process-wide: every thread, from now on
    with ozcrt.mode("phase22"):  # this thread only, restored on exit
        y = a @ b
    print(ozcrt.stats())         # {entry point: {"calls": .., "emulated": .., ...}}
    with ozcrt.compare() as report:   # shadow mode for the calls inside
        y = a @ b
    print(report.sites)          # one dict per call site

The library is found, in this order: ozcrt.load(path) called before any
other use (set OZCRT_NO_AUTOLOAD=1 to keep `import ozcrt` from loading one);
$OZCRT_LIB; libozcrt.so next to this package (where `pip install .` puts
it); the libdir `meson install` put it in (ozcrt/_build.py); the source
tree's build folders (<repo>/build*/interpose/libozcrt.so, sorted by name,
the first one present). A copy already in the process (LD_PRELOAD, `python
-m ozcrt`) is always the one used. When none is found (e.g. the package was
installed on a machine without nvcc: then it says so), the import warns
(RuntimeWarning) and every use raises LibraryNotFound until ozcrt.load(path)
succeeds.

JAX (XLA) takes cuBLAS with dlsym on its own handle, which a preloaded shim
sees through its dlsym hook. Loaded by `import ozcrt` instead, the shim puts
the dlsym slots of the loaded objects on that hook (ozcrt_hook_dlsym, x86_64)
and again once JAX has loaded its GPU plugin (jaxlib's
load_pjrt_plugin_dynamically, wrapped when it is imported), so `import ozcrt`
before `import jax` reaches XLA's products too. Where the hook cannot be set
(not x86_64), importing jax warns (RuntimeWarning) that its products stay
native; `python -m ozcrt script.py` (a preload) always works.

Loaded after cuBLAS, the shim would intercept nothing: the import refuses
(raises ozcrt.LoadError naming the module or the library) when a cuBLAS
user (torch, cupy, jax, tensorflow, ...) is already imported or a libcublas
is already mapped into the process, unless libozcrt.so was preloaded.

Everything here is a thin ctypes layer over the C API of interpose/ozcrt.h.
"""

import contextlib
import ctypes
import glob
import json
import os
import sys
import tempfile
import threading

__all__ = [
    "LoadError", "load", "loaded", "library_path", "mode", "region", "set", "get", "reset",
    "stats", "stats_clear", "write_stats", "write_report", "compare", "hook_dlsym", "MODES", "KNOBS",
]

MODES = ("phase22", "off", "ozaki2")  # the numbers of ozcrt.h: OZCRT_PHASE22 = 0, OZCRT_OFF = 1, OZCRT_OZAKI2 = 2
KNOBS = ("mode", "min_m", "min_n", "min_k", "bits", "compare", "compare_result",
         "min_speedup")  # ozcrt_knob order
RESULTS = ("emulated", "native")  # compare_result values
_THREAD, _PROCESS, _ENV = 0, 1, 2  # ozcrt_scope
_KNOB_ALL = -1
_API_VERSION = 1

# Modules that load cuBLAS when imported (or their own copy of it).
CUBLAS_MODULES = (
    "torch", "cupy", "cupy_backends", "cupyx", "jax", "jaxlib", "tensorflow", "nvmath",
    "skcuda", "mxnet", "paddle", "cudf", "cuml", "cupy_cuda12x", "cupy_cuda11x",
)


class LoadError(ImportError):
    """libozcrt.so cannot be used: not found, loaded too late, or not an ozcrt library."""


class LibraryNotFound(LoadError):
    """No libozcrt.so where the package looks for one."""


_lib = None
_preloaded = False
_lib_path = None
_load_lock = threading.Lock()

try:  # written by meson.build into an installed copy; absent in the source tree
    from . import _build
except ImportError:
    _build = None

BOOL_WORDS = {"1": True, "yes": True, "true": True, "on": True, "0": False, "no": False, "false": False, "off": False}


def _env_bool(name, default=False):
    """A boolean variable, with the library's syntax: 1/0, yes/no, true/false, on/off in any case."""
    v = os.environ.get(name, "").strip().lower()
    if not v:
        return default
    if v in BOOL_WORDS:
        return BOOL_WORDS[v]
    import warnings

    warnings.warn("%s=%r is not valid (1/0, yes/no, true/false, on/off); using the default %d"
                  % (name, os.environ[name], default), RuntimeWarning, stacklevel=3)
    return default


def _mapped_libraries():
    """The paths of the shared objects mapped into this process (Linux)."""
    paths = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/"):
                    p = parts[5].strip()
                    if p not in paths:
                        paths.append(p)
    except OSError:
        pass
    return paths


def _is_libozcrt(path):
    return os.path.basename(path).startswith("libozcrt.so")


def _is_libcublas(path):
    base = os.path.basename(path)
    return base.startswith("libcublas.so") or base == "libcublas.so"


def _late_reason():
    """Why loading now would be too late (a sentence naming the culprit), or None."""
    for name in CUBLAS_MODULES:
        if name in sys.modules:
            return ("the module '%s' was imported before ozcrt; it loads cuBLAS, whose calls the shim "
                    "would then not see" % name)
    for p in _mapped_libraries():
        if _is_libcublas(p):
            return "a cuBLAS library (%s) is already loaded in this process" % p
    return None


def _candidates():
    env = os.environ.get("OZCRT_LIB")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, "libozcrt.so")]
    if _build is not None and _build.LIBDIR:
        # meson install: libdir as seen from this package's folder (right under
        # DESTDIR or a moved prefix too), then the absolute path
        rel = os.path.relpath(_build.LIBDIR, _build.PKGDIR) if _build.PKGDIR else None
        if rel:
            out.append(os.path.normpath(os.path.join(here, rel, "libozcrt.so")))
        out.append(os.path.join(_build.LIBDIR, "libozcrt.so"))
    out += sorted(glob.glob(os.path.join(os.path.dirname(here), "build*", "interpose", "libozcrt.so")))
    return list(dict.fromkeys(out))


def _not_found_message(cands):
    msg = "libozcrt.so not found (tried: %s)" % ", ".join(c for c in cands if c)
    if _build is not None and not _build.LIBRARY and not os.environ.get("OZCRT_LIB"):
        msg += ("; this ozcrt package was installed WITHOUT the library: %s. Install the CUDA toolkit "
                "(12 or newer, nvcc on PATH) and reinstall (pip install .), or " % _build.WHY_NOT)
    else:
        msg += "; build ozcrt (scripts/run-tests, or pip install .), "
    return msg + "set OZCRT_LIB=/path/to/libozcrt.so or call ozcrt.load(path)"


def _declare(lib):
    c = ctypes
    sigs = {
        "ozcrt_api_version": (c.c_int, []),
        "ozcrt_get": (c.c_int, [c.c_int, c.c_int, c.POINTER(c.c_int64)]),
        "ozcrt_set": (c.c_int, [c.c_int, c.c_int, c.c_int64]),
        "ozcrt_reset": (c.c_int, [c.c_int, c.c_int]),
        "ozcrt_mode_from_name": (c.c_int, [c.c_char_p]),
        "ozcrt_stats_enable": (c.c_int, [c.c_int]),
        "ozcrt_stats_entry_count": (c.c_int, []),
        "ozcrt_stats_entry_name": (c.c_char_p, [c.c_int]),
        "ozcrt_stats_reason_count": (c.c_int, []),
        "ozcrt_stats_reason_name": (c.c_char_p, [c.c_int]),
        "ozcrt_stats_get": (c.c_int, [c.c_int, c.POINTER(c.c_uint64), c.POINTER(c.c_uint64), c.c_int,
                                      c.POINTER(c.c_double)]),
        "ozcrt_stats_clear": (None, []),
        "ozcrt_stats_auto_plans": (c.c_int, [c.c_int, c.POINTER(c.c_uint64), c.c_int]),
        "ozcrt_stats_write": (c.c_int, [c.c_char_p]),
        "ozcrt_report_write": (c.c_int, [c.c_char_p]),
        "ozcrt_compare_begin": (c.c_int, []),
        "ozcrt_compare_end": (c.c_int, [c.c_int, c.c_char_p]),
        "ozcrt_hook_dlsym": (c.c_int, []),
    }
    for name, (res, args) in sigs.items():
        try:
            f = getattr(lib, name)
        except AttributeError:
            raise LoadError("%s is not an ozcrt library with the C API (no %s)" % (_lib_path, name)) from None
        f.restype = res
        f.argtypes = args
    v = lib.ozcrt_api_version()
    if v != _API_VERSION:
        raise LoadError("%s has C API version %d; this package speaks version %d" % (_lib_path, v, _API_VERSION))


_JAX_NOTE = ("ozcrt: JAX (XLA) takes its cuBLAS functions with dlsym on its own handle; loaded by `import "
             "ozcrt`, the shim could not put those lookups on its hook here (ozcrt_hook_dlsym failed), so JAX's "
             "products stay native. Run the program with `python -m ozcrt script.py`, ozcrt-run or "
             "LD_PRELOAD=libozcrt.so (an `import ozcrt` then uses that copy)")


def hook_dlsym():
    """Puts the dlsym / dlvsym slots of every object loaded now on the shim's
    dlsym hook (ozcrt_hook_dlsym of ozcrt.h): what a shim loaded by `import
    ozcrt` needs for libraries that take cuBLAS with dlsym on their own
    handle (XLA). Returns the slot count, -1 where it cannot (not x86_64), 0
    when the shim is preloaded (its hook already sees every lookup)."""
    if _preloaded:
        return 0
    return _L().ozcrt_hook_dlsym()


# The module that loads JAX's PJRT plugins (the CUDA backend, which dlopens
# cuBLAS) and the function that does it, wrapped to hook the new objects.
_JAX_PLUGIN_LOADERS = {"jaxlib.xla_client": "load_pjrt_plugin_dynamically"}


def _wrap_plugin_loader(module, name):
    f = getattr(module, name, None)
    if f is None or getattr(f, "_ozcrt_hooked", False):
        return
    import functools

    @functools.wraps(f)
    def loader(*args, **kwargs):
        r = f(*args, **kwargs)
        _hook_or_warn()
        return r

    loader._ozcrt_hooked = True
    setattr(module, name, loader)


_warned_jax = False


def _hook_or_warn():
    global _warned_jax
    if hook_dlsym() < 0 and not _warned_jax:
        _warned_jax = True
        import warnings

        warnings.warn(_JAX_NOTE, RuntimeWarning, stacklevel=3)


class _JaxHook:
    """On sys.meta_path after a load without LD_PRELOAD: once jaxlib's plugin
    loader is imported, it is wrapped so that the objects it loads (the CUDA
    plugin) get their dlsym slots on the shim's hook; the objects of jax and
    jaxlib themselves are hooked as their modules load."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _JAX_PLUGIN_LOADERS and fullname not in ("jax", "jaxlib"):
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None  # the import goes on as usual
        # the module's own loader stays (importlib.resources and the like ask it); only this
        # instance's exec_module is wrapped, to act once the module has run
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            if fullname in _JAX_PLUGIN_LOADERS:
                _wrap_plugin_loader(module, _JAX_PLUGIN_LOADERS[fullname])
            _hook_or_warn()

        spec.loader.exec_module = exec_module
        return spec


def load(path=None):
    """Loads libozcrt.so (RTLD_GLOBAL) and returns its path; idempotent.

    path: the library; default: the search order of the module docstring.
    Raises LoadError when none is found, when it is too late (a cuBLAS user
    was imported first), or when another copy is already loaded."""
    global _lib, _lib_path
    with _load_lock:
        mapped = [p for p in _mapped_libraries() if _is_libozcrt(p)]
        if _lib is not None:
            if path and os.path.realpath(path) != os.path.realpath(_lib_path):
                raise LoadError("ozcrt is already loaded from %s; cannot load %s too" % (_lib_path, path))
            return _lib_path
        if mapped:  # preloaded (LD_PRELOAD, python -m ozcrt): that copy is the shim
            chosen = mapped[0]
            if path and os.path.realpath(path) != os.path.realpath(chosen):
                raise LoadError("libozcrt.so is already in this process (%s, preloaded?); cannot load %s"
                                % (chosen, path))
        else:
            cands = [path] if path else _candidates()
            chosen = next((p for p in cands if p and os.path.isfile(p)), None)
            if chosen is None:
                raise LibraryNotFound(_not_found_message(cands))
            late = _late_reason()
            if late:
                raise LoadError("ozcrt refuses to load: %s. Import ozcrt first (before torch, cupy, ...), "
                                "or run the program with `python -m ozcrt script.py` or LD_PRELOAD." % late)
        chosen = os.path.abspath(chosen)
        try:
            lib = ctypes.CDLL(chosen, mode=os.RTLD_GLOBAL | os.RTLD_NOW)
        except OSError as e:
            raise LoadError("cannot load %s: %s" % (chosen, e)) from None
        _lib_path = chosen
        _declare(lib)
        lib.ozcrt_stats_enable(1)  # so that stats() counts; the exit table stays OZCRT_STATS's
        _lib = lib
        global _preloaded
        _preloaded = bool(mapped)
        if not mapped:  # not preloaded: the loaded objects' dlsym slots on the hook, and JAX's as it loads
            lib.ozcrt_hook_dlsym()  # -1 (not x86_64): said when jax is imported
            sys.meta_path.insert(0, _JaxHook())
        return chosen


def loaded():
    """True when libozcrt.so is loaded."""
    return _lib is not None


def library_path():
    """The path of the loaded libozcrt.so, or None."""
    return _lib_path


def _L():
    if _lib is None:
        load()
    return _lib


def _encode(knob, value):
    if knob == "mode":  # any case, as OZCRT_MODE
        name = value.strip().lower() if isinstance(value, str) else value
        if name not in MODES:
            raise ValueError("mode must be one of %s (any case), not %r" % (", ".join(MODES), value))
        return MODES.index(name)
    if knob == "compare":
        return 1 if value else 0
    if knob == "compare_result":
        if value not in RESULTS:
            raise ValueError("compare_result must be 'emulated' or 'native', not %r" % (value,))
        return RESULTS.index(value)
    if knob == "min_speedup":  # a ratio (1.0: only calls predicted faster than native; 0: off) or "auto"
        if value == "auto":
            return -1  # OZCRT_MIN_SPEEDUP_AUTO
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError("min_speedup must be a ratio >= 0 or 'auto', not %r" % (value,))
        return int(round(value * 100))
    if knob == "bits" and isinstance(value, str):  # "auto" (2^-53) or "auto:B", B in 20..64: held as -B
        w = value.strip().lower()
        if w == "auto":
            return -53
        if w.startswith("auto:") and w[5:].strip().isdigit() and 20 <= int(w[5:]) <= 64:
            return -int(w[5:])
        raise ValueError("bits must be 1..64, 'auto' or 'auto:B' with B in 20..64, not %r" % (value,))
    if isinstance(value, bool) or not isinstance(value, int) or (knob == "bits" and value < 0):
        raise TypeError("%s must be an int, not %r" % (knob, value))
    return value


def _decode(knob, v):
    if knob == "mode":
        return MODES[v]
    if knob == "compare":
        return bool(v)
    if knob == "compare_result":
        return RESULTS[v]
    if knob == "min_speedup":
        return "auto" if v < 0 else v / 100.0
    if knob == "bits" and v < 0:  # automatic precision to 2^-B
        return "auto" if v == -53 else "auto:%d" % -v
    return v


# This thread's overrides as set through this package, to restore nested
# regions exactly (the C side keeps only the effective values).
_tls = threading.local()


def _set(scope, knob, value):
    if knob not in KNOBS:
        raise KeyError("unknown knob %r (one of %s)" % (knob, ", ".join(KNOBS)))
    if _L().ozcrt_set(scope, KNOBS.index(knob), _encode(knob, value)) != 0:
        raise ValueError("ozcrt: %s=%r is out of range" % (knob, value))
    if scope == _THREAD:
        if not hasattr(_tls, "over"):
            _tls.over = {}
        _tls.over[knob] = value


def _get(scope):
    out = {}
    v = ctypes.c_int64()
    for i, knob in enumerate(KNOBS):
        if _L().ozcrt_get(scope, i, ctypes.byref(v)) != 0:
            raise RuntimeError("ozcrt_get(%d, %s) failed" % (scope, knob))
        out[knob] = _decode(knob, v.value)
    return out


def get(scope="thread"):
    """The knobs as a dict: what this thread's calls obey ("thread"), the
    process values ("process") or the environment's ("env")."""
    return _get({"thread": _THREAD, "process": _PROCESS, "env": _ENV}[scope])


def set(**knobs):  # noqa: A001 (the module's verb)
    """Sets process values (every thread without its own override), e.g.
    ozcrt.set(mode="off", min_m=1024). Knobs: mode, min_m, min_n, min_k,
    bits (1..64, or "auto" / "auto:B": automatic precision, the default), compare (bool), compare_result ("emulated" or "native"),
    min_speedup (a ratio: ozaki2 emulates a call only if its predicted
    speed-up over native DGEMM is at least this; 0: every call; "auto", the
    default: 1 at the default min_m/n/k, else 0)."""
    for knob, value in knobs.items():
        _set(_PROCESS, knob, value)


def reset(scope="thread"):
    """"thread": drops this thread's overrides; "process": the process values
    back to the environment's."""
    sc = {"thread": _THREAD, "process": _PROCESS}[scope]
    if _L().ozcrt_reset(sc, _KNOB_ALL) != 0:
        raise RuntimeError("ozcrt_reset failed")
    if sc == _THREAD:
        _tls.over = {}


class region:
    """A thread-local region: `with ozcrt.region(mode="phase22", min_m=1):`.
    Inside, this thread's calls obey the given knobs; on exit the thread's
    previous overrides (or none) come back. Other threads are not affected."""

    def __init__(self, **knobs):
        for knob, value in knobs.items():
            if knob not in KNOBS:
                raise KeyError("unknown knob %r (one of %s)" % (knob, ", ".join(KNOBS)))
            _encode(knob, value)
        self._knobs = knobs
        self._saved = []

    def __enter__(self):
        saved = _thread_overrides()
        for knob, value in self._knobs.items():
            _set(_THREAD, knob, value)
        self._saved.append(saved)
        return self

    def __exit__(self, *exc):
        _restore_thread_overrides(self._saved.pop())
        return False


def _thread_overrides():
    return dict(getattr(_tls, "over", {}))


def _restore_thread_overrides(over):
    if _L().ozcrt_reset(_THREAD, _KNOB_ALL) != 0:
        raise RuntimeError("ozcrt_reset failed")
    _tls.over = {}
    for knob, value in over.items():
        _set(_THREAD, knob, value)


class mode(region):
    """ozcrt.mode("off"): sets the PROCESS mode now (every thread without an
    override). `with ozcrt.mode("phase22"):` makes a THREAD-LOCAL region
    instead: entering it puts the process mode back as it was and overrides
    the mode for this thread only, until the block ends. (Between the call and
    the `with` entry the process mode is briefly the new one; use
    ozcrt.region(mode=...) where other threads must never see it.)"""

    def __init__(self, name):
        super().__init__(mode=name)
        v = ctypes.c_int64()
        _L().ozcrt_get(_PROCESS, 0, ctypes.byref(v))
        self._process_before = v.value
        _set(_PROCESS, "mode", name)

    def __enter__(self):
        _L().ozcrt_set(_PROCESS, 0, self._process_before)
        return super().__enter__()


class compare(region):
    """`with ozcrt.compare() as rep:` shadow mode for this thread's calls in
    the block: every call emulated there also runs natively into scratch and
    is compared on the GPU. On exit (after waiting for the comparisons in
    flight) rep.sites is the report of the calls compared during the block,
    one dict per call site (entry, mode, transa, transb, m, n, k, batch, calls,
    normwise_worst/_mean, max_rel_worst/_mean, max_abs_worst/_mean,
    beyond_bound_total/_worst, nonfinite_total/_worst, not_compared_*), worst
    first, and rep.total the total row. result="native" gives the program the
    native C instead; other knobs (min_m=1, ...) apply to the block too.
    Comparisons of other threads' calls that finish during the block are in
    the report as well (it is process-wide)."""

    def __init__(self, result="emulated", **knobs):
        super().__init__(compare=True, compare_result=result, **knobs)
        self.sites = None
        self.total = None
        self._ids = []

    def __enter__(self):
        rid = _L().ozcrt_compare_begin()
        if rid < 0:
            raise RuntimeError("ozcrt_compare_begin failed (too many compare regions open?)")
        self._ids.append(rid)
        try:
            return super().__enter__()
        except BaseException:
            _L().ozcrt_compare_end(self._ids.pop(), None)
            raise

    def __exit__(self, *exc):
        super().__exit__(*exc)
        rid = self._ids.pop()
        with tempfile.TemporaryDirectory(prefix="ozcrt-compare-") as d:
            path = os.path.join(d, "report.json")
            if _L().ozcrt_compare_end(rid, os.fsencode(path)) != 0:
                raise OSError("ozcrt: the compare region's report could not be written")
            with open(path) as f:
                rep = json.load(f)
        self.sites = rep["sites"]
        self.total = rep["total"]
        return False


def stats(clear=False):
    """The calls seen so far, per entry point with at least one call:
    {"cublasDgemm_v2": {"calls": 3, "emulated": 1, "failed": 0, "forwarded": 2,
    "emulated_gflop": 0.54, "reasons": {"emulated": 1, "mode-off": 2}}, ...}.
    Counting starts when the library is loaded through this package (or at
    start with OZCRT_STATS=1). clear=True zeroes the counters after reading."""
    L = _L()
    nr = L.ozcrt_stats_reason_count()
    names = [L.ozcrt_stats_reason_name(r).decode() for r in range(nr)]
    out = {}
    calls = ctypes.c_uint64()
    flop = ctypes.c_double()
    by = (ctypes.c_uint64 * nr)()
    for e in range(L.ozcrt_stats_entry_count()):
        if L.ozcrt_stats_get(e, ctypes.byref(calls), by, nr, ctypes.byref(flop)) != 0:
            raise RuntimeError("ozcrt_stats_get(%d) failed" % e)
        if calls.value == 0:
            continue
        reasons = {names[r]: by[r] for r in range(nr) if by[r]}
        emulated, failed = by[0], by[1]  # ozcrt.h: reasons 0 and 1 are the calls taken
        out[L.ozcrt_stats_entry_name(e).decode()] = {
            "calls": calls.value, "emulated": emulated, "failed": failed,
            "forwarded": calls.value - emulated - failed, "emulated_gflop": flop.value * 1e-9,
            "reasons": reasons,
        }
    if clear:
        L.ozcrt_stats_clear()
    return out


def auto_plans():
    """The automatic precision's plans (OZCRT_BITS=auto), as the GPU made them, a
    product each: {"real": {16: 530, 0: 4}, "complex": {17: 45}}: the moduli count N
    (complex: split moduli) -> products, 0 for those no plan certified (run
    natively). Counted while calls are counted (stats()); a product's plan
    is in once the GPU has made it (after a synchronisation, all are)."""
    L = _L()
    out = {}
    buf = (ctypes.c_uint64 * 32)()
    for name, cx in (("real", 0), ("complex", 1)):
        n = L.ozcrt_stats_auto_plans(cx, buf, 32)
        if n < 0:
            raise RuntimeError("ozcrt_stats_auto_plans failed")
        out[name] = {i: buf[i] for i in range(min(n, 32)) if buf[i]}
    return out


def stats_clear():
    """Every counter back to zero."""
    _L().ozcrt_stats_clear()


def write_stats(path=None):
    """Writes the stats table now: to path, or (None) where the exit table goes."""
    if _L().ozcrt_stats_write(os.fsencode(path) if path else None) != 0:
        raise OSError("ozcrt: cannot write the stats table to %r" % (path,))


def write_report(path=None):
    """Writes the shadow report of every call compared so far: to path
    (.csv or .json), or (None) the table to the log."""
    if _L().ozcrt_report_write(os.fsencode(path) if path else None) != 0:
        raise OSError("ozcrt: cannot write the shadow report to %r" % (path,))


def _running_launcher():
    """True while `python -m ozcrt` imports this package: the launcher finds
    the library but must not load it (the script gets it by LD_PRELOAD)."""
    argv = getattr(sys, "orig_argv", None)
    if argv is None:
        return sys.argv[:1] == ["-m"]
    for i, a in enumerate(argv[1:], 1):
        if a == "-m":
            return argv[i + 1:i + 2] == ["ozcrt"]
        if a == "-c" or not a.startswith("-"):
            return False
    return False


if not _env_bool("OZCRT_NO_AUTOLOAD") and not _running_launcher():
    try:
        load()
    except LibraryNotFound as e:  # ozcrt.load(path) may still come; every other use raises until then
        import warnings

        warnings.warn("%s. Nothing is intercepted until ozcrt.load(path) is called (before torch, cupy, ...)."
                      % e, RuntimeWarning, stacklevel=2)
