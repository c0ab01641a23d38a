"""tests/python/test_ozcrt.py: the Python package `ozcrt` on the CPU, against the fake cuBLAS: loading, refusal, modes per process/thread/region, stats, python -m ozcrt.

Run by meson (tests/python/meson.build) with OZCRT_LIB (libozcrt.so), OZCRT_TEST_CLIENT
(tests/fake's local_client13: a library linking the fake libcublas.so.13, loaded
RTLD_LOCAL as Python loads torch), OZCRT_TEST_FAKE (that fake libcublas),
CUDA_VISIBLE_DEVICES='' and PYTHONPATH at the source root. Without a GPU every
call the shim decides to emulate is forwarded with the reason no-gpu; a call in
mode off is forwarded with mode-off: the reasons prove which mode the call saw.
"""

import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import unittest

import ozcrt  # first: before the fake cuBLAS is loaded

LIB = os.environ["OZCRT_LIB"]
CLIENT = os.environ["OZCRT_TEST_CLIENT"]
FAKE = os.environ["OZCRT_TEST_FAKE"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MAPPING_ERROR = 11  # CUBLAS_STATUS_MAPPING_ERROR: what the client makes the fake return


class FakeCall(ctypes.Structure):  # tests/fake/fake_cublas.h's fake_call
    _fields_ = [("name", ctypes.c_char * 48), ("handle", ctypes.c_void_p), ("transa", ctypes.c_int),
                ("transb", ctypes.c_int), ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64)]


client = ctypes.CDLL(CLIENT)  # RTLD_LOCAL, like torch's libraries
client.local_client_dgemm.restype = ctypes.c_int
client.local_client_dgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                      ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
client.local_client_last.restype = ctypes.POINTER(FakeCall)
fake = ctypes.CDLL(FAKE)  # the same object the client loaded
fake.fake_cublas_count.restype = ctypes.c_int
# The shim's own cublasDgemm_v2, as a program linking cuBLAS would call it
# (libozcrt.so is first in the global scope), with a handle of the fake.
shim_dgemm = ctypes.CDLL(None).cublasDgemm_v2
shim_dgemm.restype = ctypes.c_int
shim_dgemm.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                       ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, ctypes.c_int]
# the shim's cublasZgemm_v2 (complex scalars: two doubles each)
shim_zgemm = ctypes.CDLL(None).cublasZgemm_v2
shim_zgemm.restype = ctypes.c_int
shim_zgemm.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                       ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                       ctypes.POINTER(ctypes.c_double), ctypes.c_void_p, ctypes.c_int]
HANDLE = ctypes.c_void_p()
assert fake.cublasCreate_v2(ctypes.byref(HANDLE)) == 0
ONE = ctypes.c_double(1.0)


def dgemm(m=300, n=200, k=256):
    """One cublasDgemm_v2 through the client; returns its status (the fake's
    MAPPING_ERROR when forwarded) and the fake's record."""
    fake.fake_cublas_reset()  # SUCCESS for the client's cublasCreate; it then sets MAPPING_ERROR
    h = ctypes.c_void_p()
    st = client.local_client_dgemm(m, n, k, 0x1000, 0x2000, 0x3000, ctypes.byref(h))
    return st, client.local_client_last().contents


def global_dgemm(m=300, n=200, k=256):
    """cublasDgemm_v2 by the global symbol (the shim's), thread-safe on our side."""
    return shim_dgemm(HANDLE, 0, 1, m, n, k, ONE, 0x1000, m, 0x2000, n, ONE, 0x3000, m)


def reasons():
    return ozcrt.stats().get("cublasDgemm_v2", {}).get("reasons", {})


def run_py(code, env_extra=None, args=()):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)] + list(args), env=env,
                          capture_output=True, text=True, timeout=120)


class Loading(unittest.TestCase):
    def test_loaded_from_ozcrt_lib(self):
        self.assertTrue(ozcrt.loaded())
        self.assertEqual(os.path.realpath(ozcrt.library_path()), os.path.realpath(LIB))
        with open("/proc/self/maps") as f:
            self.assertIn(os.path.realpath(LIB), f.read())
        env = ozcrt.get("env")
        self.assertEqual(env["mode"], "phase22")
        self.assertEqual(env["bits"], "auto")
        self.assertEqual(env["min_m"], 512)

    def test_load_twice_same_ok_other_refused(self):
        self.assertEqual(ozcrt.load(), ozcrt.library_path())
        with self.assertRaises(ozcrt.LoadError):
            ozcrt.load(FAKE)

    def test_refused_after_torch(self):
        r = run_py("""
            import sys, types
            sys.modules["torch"] = types.ModuleType("torch")
            import ozcrt
        """)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("ozcrt.LoadError", r.stderr)
        self.assertIn("the module 'torch' was imported before ozcrt", r.stderr)

    def test_refused_after_cupy(self):
        r = run_py("""
            import sys, types
            sys.modules["cupy"] = types.ModuleType("cupy")
            import ozcrt
        """)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("the module 'cupy' was imported before ozcrt", r.stderr)

    def test_refused_after_libcublas(self):
        r = run_py("""
            import ctypes, sys
            ctypes.CDLL(sys.argv[1])
            import ozcrt
        """, args=[FAKE])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("a cuBLAS library (%s) is already loaded" % os.path.realpath(FAKE), r.stderr)

    def test_preloaded_is_accepted_after_torch(self):
        r = run_py("""
            import sys, types
            sys.modules["torch"] = types.ModuleType("torch")
            import ozcrt
            print("LIB", ozcrt.library_path())
        """, {"LD_PRELOAD": os.path.abspath(LIB)})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("LIB " + os.path.abspath(LIB), r.stdout)

    def test_jax_after_import_hooks_instead_of_warning(self):
        # a stand-in jax package: importing it after a load without LD_PRELOAD puts the loaded objects'
        # dlsym slots on the shim's hook (x86_64) and does not warn; preloaded, the hook needs nothing
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "jax"))
            open(os.path.join(d, "jax", "__init__.py"), "w").close()
            code = """
                import platform, warnings
                warnings.simplefilter("always")
                import ozcrt
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    import jax
                    import jax
                print("WARNINGS", sum("products stay native" in str(x.message) for x in w))
                print("HOOK", ozcrt.hook_dlsym() > 0 if platform.machine() == "x86_64" else True)
                print("PRELOADED", ozcrt.hook_dlsym() == 0)
            """
            pp = {"PYTHONPATH": ROOT + os.pathsep + d}
            r = run_py(code, pp)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("WARNINGS 0", r.stdout)
            self.assertIn("HOOK True", r.stdout)
            self.assertIn("PRELOADED False", r.stdout)
            r = run_py(code, dict(pp, LD_PRELOAD=os.path.abspath(LIB)))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("WARNINGS 0", r.stdout)
            self.assertIn("PRELOADED True", r.stdout)

    def test_not_found_then_load(self):
        r = run_py("""
            import sys
            import ozcrt                      # warns: not found
            assert not ozcrt.loaded()
            try:
                ozcrt.stats()
            except ozcrt.LibraryNotFound as e:
                print("RAISED", e)
            print("LOADED", ozcrt.load(sys.argv[1]), ozcrt.get()["mode"])
        """, {"OZCRT_LIB": "/nonexistent/libozcrt.so"}, args=[os.path.abspath(LIB)])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("RuntimeWarning: libozcrt.so not found (tried: /nonexistent/libozcrt.so)", r.stderr)
        self.assertIn("RAISED libozcrt.so not found", r.stdout)
        self.assertIn("LOADED %s phase22" % os.path.abspath(LIB), r.stdout)

    def test_no_autoload_then_explicit_path(self):
        r = run_py("""
            import sys
            import ozcrt
            assert not ozcrt.loaded()
            print("LOADED", ozcrt.load(sys.argv[1]))
        """, {"OZCRT_NO_AUTOLOAD": "1", "OZCRT_LIB": "/nonexistent/libozcrt.so"}, args=[os.path.abspath(LIB)])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assertIn("LOADED " + os.path.abspath(LIB), r.stdout)

    def test_no_autoload_words(self):
        for word in ("yes", "TRUE", "on", "1"):
            r = run_py("import ozcrt; print('LOADED', ozcrt.loaded())", {"OZCRT_NO_AUTOLOAD": word})
            self.assertEqual((r.returncode, r.stdout.strip(), r.stderr), (0, "LOADED False", ""), word)
        for word in ("no", "Off", "0"):
            r = run_py("import ozcrt; print('LOADED', ozcrt.loaded())", {"OZCRT_NO_AUTOLOAD": word})
            self.assertEqual((r.returncode, r.stdout.strip()), (0, "LOADED True"), word + r.stderr)
        r = run_py("import ozcrt; print('LOADED', ozcrt.loaded())", {"OZCRT_NO_AUTOLOAD": "maybe"})
        self.assertIn("OZCRT_NO_AUTOLOAD='maybe' is not valid (1/0, yes/no, true/false, on/off)", r.stderr)
        self.assertEqual(r.stdout.strip(), "LOADED True")

    def test_search_order(self):
        # without OZCRT_LIB: libozcrt.so next to the package first, then <root>/build*/interpose/ (by name)
        env = {k: v for k, v in os.environ.items() if k not in ("OZCRT_LIB", "PYTHONPATH")}
        with tempfile.TemporaryDirectory() as d:
            shutil.copytree(os.path.join(ROOT, "ozcrt"), os.path.join(d, "ozcrt"),
                            ignore=shutil.ignore_patterns("__pycache__"))
            for b in ("build-b", "build-a"):
                os.makedirs(os.path.join(d, b, "interpose"))
                os.symlink(os.path.abspath(LIB), os.path.join(d, b, "interpose", "libozcrt.so"))
            code = "import ozcrt; print(ozcrt.library_path())"
            r = subprocess.run([sys.executable, "-c", code], env=env, cwd=d, capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), os.path.join(d, "build-a", "interpose", "libozcrt.so"))
            os.symlink(os.path.abspath(LIB), os.path.join(d, "ozcrt", "libozcrt.so"))
            r = subprocess.run([sys.executable, "-c", code], env=env, cwd=d, capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), os.path.join(d, "ozcrt", "libozcrt.so"))


class Modes(unittest.TestCase):
    def setUp(self):
        ozcrt.reset("process")
        ozcrt.reset("thread")
        ozcrt.set(min_m=1, min_n=1, min_k=1)  # the calls reach the GPU check: no-gpu
        ozcrt.stats_clear()

    def tearDown(self):
        ozcrt.reset("process")
        ozcrt.reset("thread")

    def expect_forwarded(self, reason_counts):
        st, rec = dgemm()
        self.assertEqual(st, MAPPING_ERROR)  # the fake's status: the call was forwarded to it
        self.assertEqual(fake.fake_cublas_count(), 1)  # exactly one call reached it (since the client's reset)
        self.assertEqual((rec.name, rec.m, rec.n, rec.k), (b"cublasDgemm_v2", 300, 200, 256))
        self.assertEqual(reasons(), reason_counts)

    def test_process_mode_and_regions(self):
        self.expect_forwarded({"no-gpu": 1})
        ozcrt.mode("off")
        self.assertEqual(ozcrt.get("process")["mode"], "off")
        self.expect_forwarded({"no-gpu": 1, "mode-off": 1})
        with ozcrt.mode("phase22"):
            self.assertEqual(ozcrt.get()["mode"], "phase22")
            self.assertEqual(ozcrt.get("process")["mode"], "off")  # the region is this thread's only
            self.expect_forwarded({"no-gpu": 2, "mode-off": 1})
            with ozcrt.mode("off"):
                self.expect_forwarded({"no-gpu": 2, "mode-off": 2})
            self.expect_forwarded({"no-gpu": 3, "mode-off": 2})
        self.assertEqual(ozcrt.get()["mode"], "off")
        self.expect_forwarded({"no-gpu": 3, "mode-off": 3})
        ozcrt.reset("process")
        self.assertEqual(ozcrt.get("process")["mode"], "phase22")
        self.assertEqual(ozcrt.get()["min_m"], 512)  # the environment's again
        self.expect_forwarded({"no-gpu": 3, "mode-off": 3, "below-threshold": 1})
        s = ozcrt.stats(clear=True)["cublasDgemm_v2"]
        self.assertEqual((s["calls"], s["emulated"], s["failed"], s["forwarded"]), (7, 0, 0, 7))
        self.assertEqual(ozcrt.stats(), {})

    def test_ozaki2_and_bits_are_carried(self):
        with ozcrt.region(mode="ozaki2", bits=40):
            self.assertEqual((ozcrt.get()["mode"], ozcrt.get()["bits"]), ("ozaki2", 40))
            self.assertEqual(ozcrt.get()["min_speedup"], "auto")  # OZCRT_MIN_SPEEDUP unset
            self.expect_forwarded({"no-gpu": 1})  # sizes chosen (setUp): auto leaves the speed rule off
            with ozcrt.region(min_speedup=1):
                self.assertEqual(ozcrt.get()["min_speedup"], 1.0)
                self.expect_forwarded({"no-gpu": 1, "slower-than-native": 1})  # the small call: native is faster
            with ozcrt.region(min_speedup=0):
                self.expect_forwarded({"no-gpu": 2, "slower-than-native": 1})
            with self.assertRaises(ValueError):
                ozcrt.set(min_speedup=-1)
        self.assertEqual((ozcrt.get()["mode"], ozcrt.get()["bits"]), ("phase22", "auto"))
        with ozcrt.region(bits="auto:45"):
            self.assertEqual(ozcrt.get()["bits"], "auto:45")
        for bad in ("auto:19", "auto:65", "fast", -53):
            with self.assertRaises((ValueError, TypeError)):
                ozcrt.set(bits=bad)

    def test_complex_calls(self):
        # cublasZgemm_v2 (the shim's, a handle of the fake): its own stats row and reasons per mode
        z = (ctypes.c_double * 2)(1.0, -1.0)

        def zgemm():
            fake.fake_cublas_reset()
            return shim_zgemm(HANDLE, 2, 0, 300, 200, 100, z, 0x1000, 100, 0x2000, 100, z, 0x3000, 300)

        self.assertEqual(zgemm(), 0)  # forwarded: the fake's SUCCESS
        with ozcrt.region(mode="ozaki2"):  # automatic precision, the default: complex products too
            self.assertEqual(zgemm(), 0)
            with ozcrt.region(bits=53):
                self.assertEqual(zgemm(), 0)
        self.assertEqual(fake.fake_cublas_count(), 1)
        row = ozcrt.stats()["cublasZgemm_v2"]
        self.assertEqual((row["calls"], row["emulated"], row["forwarded"]), (3, 0, 3))
        self.assertEqual(row["reasons"], {"complex-phase22": 1, "no-gpu": 2})
        self.assertNotIn("cublasDgemm_v2", ozcrt.stats())

    def test_region_thresholds(self):
        with ozcrt.region(min_m=301):
            self.expect_forwarded({"below-threshold": 1})
        self.expect_forwarded({"below-threshold": 1, "no-gpu": 1})

    def test_mode_names_any_case(self):
        ozcrt.mode("OFF")
        self.assertEqual(ozcrt.get("process")["mode"], "off")
        with ozcrt.region(mode="Phase22"):
            self.assertEqual(ozcrt.get()["mode"], "phase22")
        self.expect_forwarded({"mode-off": 1})

    def test_bad_values_change_nothing(self):
        before = ozcrt.get()
        for kw in ({"bits": 0}, {"bits": 65}, {"min_m": -1}, {"mode": "fast"}, {"compare_result": "x"}):
            with self.assertRaises((ValueError, TypeError)):
                ozcrt.set(**kw)
        with self.assertRaises(ValueError):
            ozcrt.mode("phase-22")
        with self.assertRaises(KeyError):
            ozcrt.region(speed=1)
        self.assertEqual(ozcrt.get(), before)

    def test_threads(self):
        ozcrt.mode("phase22")
        n = 40
        errors = []
        start = threading.Barrier(3)

        def worker(mode):
            try:
                start.wait()
                with ozcrt.region(mode=mode):
                    for _ in range(n):
                        if ozcrt.get()["mode"] != mode:
                            errors.append("thread saw %s" % ozcrt.get()["mode"])
                        global_dgemm()
            except Exception as e:  # reported below
                errors.append(repr(e))

        ts = [threading.Thread(target=worker, args=(m,)) for m in ("off", "phase22")]
        for t in ts:
            t.start()
        start.wait()
        with ozcrt.mode("off"):  # the main thread's own region does not leak into the workers
            for t in ts:
                t.join()
        self.assertEqual(errors, [])
        self.assertEqual(reasons(), {"mode-off": n, "no-gpu": n})
        self.assertEqual(ozcrt.get()["mode"], "phase22")


class Output(unittest.TestCase):
    def test_auto_plans_without_a_gpu(self):
        # no GPU here: no plan was made (the counters are the GPU's); the shape of the answer
        ozcrt.stats_clear()
        with ozcrt.region(mode="ozaki2", bits="auto"):
            dgemm()
        self.assertEqual(ozcrt.auto_plans(), {"real": {}, "complex": {}})

    def test_stats_table_now(self):
        ozcrt.stats_clear()
        with ozcrt.region(mode="off"):
            dgemm()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "stats.txt")
            ozcrt.write_stats(path)
            with open(path) as f:
                table = f.read()
        row = [l for l in table.splitlines() if l.startswith("cublasDgemm_v2 ")]
        self.assertEqual(len(row), 1, table)
        self.assertEqual(row[0].split()[1:5], ["1", "0", "0", "1"])
        self.assertIn("mode-off=1", row[0])
        with self.assertRaises(OSError):
            ozcrt.write_stats("/nonexistent-dir/stats.txt")

    def test_report_now(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "report.json")
            ozcrt.write_report(path)  # nothing compared on a CPU: an empty report, still valid
            with open(path) as f:
                rep = json.load(f)
        self.assertEqual(rep["ozcrt_report"], 1)
        self.assertEqual(rep["sites"], [])

    def test_compare_region_cpu(self):
        # no GPU: nothing is compared; the region turns shadow mode on for this thread only
        other = {}
        t = threading.Thread(target=lambda: other.update(ozcrt.get()))
        with ozcrt.compare(result="native", min_m=1, min_n=1, min_k=1) as rep:
            self.assertEqual((ozcrt.get()["compare"], ozcrt.get()["compare_result"]), (True, "native"))
            t.start()
            t.join()
            dgemm()
            with ozcrt.compare() as inner:
                self.assertEqual(ozcrt.get()["compare_result"], "emulated")
            self.assertEqual(ozcrt.get()["compare_result"], "native")
        self.assertEqual((other["compare"], ozcrt.get()["compare"]), (False, False))
        self.assertEqual(rep.sites, [])
        self.assertEqual(inner.sites, [])
        self.assertEqual(rep.total["calls"], 0)

    def test_log_names_the_reasons(self):
        log = os.environ.get("OZCRT_LOG_FILE")
        if not log:
            self.skipTest("OZCRT_LOG_FILE not set")
        ozcrt.set(min_m=1, min_n=1, min_k=1)
        try:
            with ozcrt.region(mode="off"):
                dgemm(301, 201, 257)
            dgemm(302, 202, 258)
        finally:
            ozcrt.reset("process")
        with open(log) as f:
            text = f.read()
        self.assertIn("cublasDgemm_v2 m=301 n=201 k=257 ops=NT batch=1 -> forward: mode-off", text)
        self.assertIn("cublasDgemm_v2 m=302 n=202 k=258 ops=NT batch=1 -> forward: no-gpu", text)


class Launcher(unittest.TestCase):
    SCRIPT = """
        import ctypes, os, sys
        import types
        sys.modules["torch"] = types.ModuleType("torch")  # before ozcrt: allowed, the library is preloaded
        import ozcrt
        c = ctypes.CDLL(os.environ["OZCRT_TEST_CLIENT"])
        h = ctypes.c_void_p()
        st = c.local_client_dgemm(300, 200, 256, 0x1000, 0x2000, 0x3000, ctypes.byref(h))
        print("ARGV", sys.argv[1:])
        print("ENV", os.environ["OZCRT_MODE"], os.environ["OZCRT_BITS"], os.environ["OZCRT_MIN_M"],
              os.environ["OZCRT_MIN_SPEEDUP"])
        print("STATUS", st)
        print("REASONS", ozcrt.stats()["cublasDgemm_v2"]["reasons"])
        sys.exit(7)
    """

    def test_python_m_ozcrt(self):
        with tempfile.TemporaryDirectory() as d:
            script = os.path.join(d, "s.py")
            with open(script, "w") as f:
                f.write(textwrap.dedent(self.SCRIPT))
            env = dict(os.environ)
            env.pop("LD_PRELOAD", None)
            r = subprocess.run([sys.executable, "-m", "ozcrt", "--mode", "off", "--bits", "40", "--min-m", "1", "--min-speedup", "0.5",
                                "--stats-file", os.path.join(d, "t.txt"), script, "a b", ""],
                               env=env, capture_output=True, text=True, timeout=120)
            table = ""
            if os.path.exists(os.path.join(d, "t.txt")):
                with open(os.path.join(d, "t.txt")) as f:
                    table = f.read()
        self.assertEqual(r.returncode, 7, r.stdout + r.stderr)  # the script's own exit status
        self.assertIn("ARGV ['a b', '']", r.stdout)
        self.assertIn("ENV off 40 1 0.5", r.stdout)
        self.assertIn("STATUS %d" % MAPPING_ERROR, r.stdout)
        self.assertIn("REASONS {'mode-off': 1}", r.stdout)
        self.assertIn("mode-off=1", table)  # --stats-file: OZCRT_STATS=1, the table at exit

    def test_bad_option(self):
        r = subprocess.run([sys.executable, "-m", "ozcrt", "--bogus", "x.py"], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown option --bogus", r.stderr)

    def test_help(self):
        import re
        from ozcrt import __main__ as launcher
        for opt in ("--help", "-h"):
            r = subprocess.run([sys.executable, "-m", "ozcrt", opt], capture_output=True, text=True, timeout=60)
            self.assertEqual((r.returncode, r.stderr), (0, ""))
            for o in list(launcher.OPTIONS) + ["--lib", "--help"]:  # an option line with its description
                self.assertRegex(r.stdout, r"(?m)^  (-h, )?%s( [A-Z]+)?  +\S" % re.escape(o), o)
            self.assertIn("%p", r.stdout)

    def test_mode_and_bits_checked(self):
        for bad in (["--mode", "fast"], ["--mode", "phase-22"], ["--bits", "0"], ["--bits", "65"], ["--bits", "x"],
                    ["--bits", "auto:19"], ["--bits", "auto:65"], ["--bits", "1.5"], ["--bits", "auto:"]):
            r = subprocess.run([sys.executable, "-m", "ozcrt"] + bad + ["-c", "pass"], capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(r.returncode, 2, bad)
            self.assertIn("python -m ozcrt: %s %r" % tuple(bad), r.stderr)
        code = "import os; print(os.environ['OZCRT_MODE'], os.environ['OZCRT_BITS'])"
        for mode, bits, want in (("OZAKI2", "AUTO:30", "ozaki2 auto:30"), ("Off", "64", "off 64"),
                                 ("phase22", "auto", "phase22 auto"), ("ozaki2", "1", "ozaki2 1")):
            r = subprocess.run([sys.executable, "-m", "ozcrt", "--mode", mode, "--bits", bits, "-c", code],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual((r.returncode, r.stdout.strip()), (0, want), r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
