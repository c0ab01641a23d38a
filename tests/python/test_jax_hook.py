#!/usr/bin/env python3
"""test_jax_hook: `import ozcrt` (no LD_PRELOAD) reaches a library that takes cuBLAS as XLA does.

A stand-in jaxlib (a temporary package: jaxlib.xla_client with a
load_pjrt_plugin_dynamically that dlopens a library RTLD_LOCAL, as JAX loads
its CUDA plugin) and the XLA-like client of tests/fake/xla: after `import
ozcrt` and the plugin's load, the client's dlsym of an intercepted name on
its own fake libcublas handle answers with the shim's function (an address
in libozcrt.so), other names with the fake's, and a GEMM through it is
counted by the shim. Without the wrap (ozcrt's hook on the loader removed),
the client's lookups are the fake's: the test would fail.

Environment: OZCRT_LIB, OZCRT_TEST_XLA_CLIENT, OZCRT_TEST_FAKE (libcublas.so.13),
OZCRT_TEST_FAKE_LT (libcublasLt.so.13). Standard library only.
"""
import ctypes
import os
import platform
import sys
import tempfile
import unittest


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def object_of(addr):
    libc = ctypes.CDLL(None)
    info = _DlInfo()
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    if not addr or not libc.dladdr(ctypes.c_void_p(addr), ctypes.byref(info)) or not info.dli_fname:
        return "?"
    return os.path.basename(info.dli_fname.decode())


@unittest.skipUnless(platform.machine() == "x86_64", "the dlsym hook is x86_64 only")
class JaxHook(unittest.TestCase):
    def test_import_reaches_plugin(self):
        import ozcrt

        ozcrt.load(os.environ["OZCRT_LIB"])
        self.assertGreater(ozcrt.hook_dlsym(), 0)
        with tempfile.TemporaryDirectory(prefix="ozcrt-fake-jaxlib-") as tmp:
            pkg = os.path.join(tmp, "jaxlib")
            os.mkdir(pkg)
            open(os.path.join(pkg, "__init__.py"), "w").close()
            with open(os.path.join(pkg, "xla_client.py"), "w") as fh:
                fh.write("import ctypes, os\n"
                         "def load_pjrt_plugin_dynamically(plugin_name, library_path):\n"
                         "    return ctypes.CDLL(library_path, mode=os.RTLD_LOCAL | os.RTLD_NOW)\n")
            sys.path.insert(0, tmp)
            try:
                import jaxlib.xla_client as xc
            finally:
                sys.path.remove(tmp)
            self.assertTrue(getattr(xc.load_pjrt_plugin_dynamically, "_ozcrt_hooked", False))
            # the modules keep their own loaders (importlib.resources asks them)
            import importlib.machinery
            self.assertIsInstance(xc.__spec__.loader, importlib.machinery.SourceFileLoader)
            self.assertIsInstance(sys.modules["jaxlib"].__loader__, importlib.machinery.SourceFileLoader)
            plugin = xc.load_pjrt_plugin_dynamically("cuda", os.environ["OZCRT_TEST_XLA_CLIENT"])
        plugin.xla_client_open.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        self.assertEqual(plugin.xla_client_open(os.environ["OZCRT_TEST_FAKE"].encode(),
                                                os.environ["OZCRT_TEST_FAKE_LT"].encode()), 0)
        plugin.xla_client_sym.restype = ctypes.c_void_p
        plugin.xla_client_sym.argtypes = [ctypes.c_char_p]
        plugin.xla_client_lt_sym.restype = ctypes.c_void_p
        plugin.xla_client_lt_sym.argtypes = [ctypes.c_char_p]
        for name in ("cublasDgemm_v2", "cublasGemmEx", "cublasZgemm_v2", "cublasCreate_v2"):
            self.assertEqual(object_of(plugin.xla_client_sym(name.encode())), "libozcrt.so", name)
        self.assertEqual(object_of(plugin.xla_client_lt_sym(b"cublasLtMatmul")), "libozcrt.so")
        self.assertEqual(object_of(plugin.xla_client_sym(b"cublasSetStream_v2")), "libcublas.so.13")
        # a GEMM through the client: counted by the shim, forwarded (no GPU here) to the client's fake,
        # whose status (MAPPING_ERROR, 11) comes back
        before = ozcrt.stats().get("cublasDgemm_v2", {}).get("calls", 0)
        handle = ctypes.c_void_p()
        plugin.xla_client_dgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)]
        self.assertEqual(plugin.xla_client_dgemm(64, 64, 64, ctypes.byref(handle)), 11)
        self.assertEqual(ozcrt.stats()["cublasDgemm_v2"]["calls"], before + 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
