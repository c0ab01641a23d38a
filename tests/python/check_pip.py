"""tests/python/check_pip.py: `pip install --target DIR .` of the package works and the installed copy loads libozcrt.so.

The package files (pyproject.toml, README.md, ozcrt/) are copied to a temporary
folder first, so that setuptools' scratch folders never land in the source
tree. Installs offline (--no-index --no-build-isolation): needs an interpreter
with pip, setuptools and wheel (or setuptools >= 70.1) at hand; tries this
one, then /usr/bin/python3; skips (exit 77) with a message when none has them.
argv: the source root. OZCRT_LIB: the library the installed copy must load.
"""
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def can_build(py):
    code = ("import importlib.util, setuptools\n"  # setuptools before pip (its distutils hack)
            "v = tuple(int(x) for x in setuptools.__version__.split('.')[:2])\n"
            "if v < (70, 1): import wheel\n"
            "assert importlib.util.find_spec('pip')\n")
    try:
        return subprocess.run([py, "-c", code], capture_output=True, timeout=60).returncode == 0
    except OSError:
        return False


def main():
    root = sys.argv[1]
    pys = [p for p in dict.fromkeys([sys.executable, "/usr/bin/python3"]) if os.path.exists(p)]
    py = next((p for p in pys if can_build(p)), None)
    if py is None:
        print("SKIP: no interpreter here has pip, setuptools and wheel for an offline build (tried %s)"
              % ", ".join(pys))
        return SKIP
    with tempfile.TemporaryDirectory() as d:
        src, target = os.path.join(d, "src"), os.path.join(d, "target")
        os.mkdir(src)
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(os.path.join(root, name), src)
        shutil.copytree(os.path.join(root, "ozcrt"), os.path.join(src, "ozcrt"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        r = subprocess.run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--target", target,
                            src], capture_output=True, text=True, timeout=300)
        print(r.stdout[-2000:], r.stderr[-2000:])
        if r.returncode != 0:
            print("FAIL: pip install exited with %d" % r.returncode)
            return 1
        for f in ("ozcrt/__init__.py", "ozcrt/__main__.py"):
            if not os.path.isfile(os.path.join(target, f)):
                print("FAIL: %s not installed" % f)
                return 1
        want_lib = os.path.abspath(os.environ["OZCRT_LIB"])
        env = dict(os.environ, PYTHONPATH=target, OZCRT_LIB=want_lib)
        r = subprocess.run([py, "-c", "import ozcrt; print(ozcrt.__file__); print(ozcrt.library_path()); "
                            "print(ozcrt.get()['mode'])"], capture_output=True, text=True, env=env, cwd=d,
                           timeout=60)
        out = r.stdout.split()
        if r.returncode != 0 or len(out) != 3 or not out[0].startswith(target) or out[1] != want_lib \
                or out[2] != "phase22":
            print("FAIL: the installed package does not load %s:\n%s%s" % (want_lib, r.stdout, r.stderr))
            return 1
    print("PASS: pip install --target with %s; the installed ozcrt loads %s" % (py, want_lib))
    return 0


if __name__ == "__main__":
    sys.exit(main())
