"""tests/python/check_pip.py: `pip install --no-build-isolation .` into a fresh venv builds the package with meson-python and it imports from outside the tree.

usage: check_pip.py SOURCE_ROOT TREE_LIB [NVCC]

The source tree is copied to a temporary folder first (tracked and untracked
files that git does not ignore, or everything but build*/ without git), so that
meson-python's scratch never lands in it. A venv (python3 -m venv
--system-site-packages: meson-python, meson, ninja and pip from the system) gets
the package, offline (--no-index --no-build-isolation --no-cache-dir):

 1. built with -Dcuda=disabled (a machine without nvcc): it installs; from a
    folder outside the tree `import ozcrt` works and warns that the package was
    installed WITHOUT the library, ozcrt.get() raises LibraryNotFound saying
    so; OZCRT_LIB=TREE_LIB still loads that library; python -m ozcrt --help and
    the installed ozcrt-ab --help work;
 2. where NVCC is given (the build found nvcc): built as `pip install .` builds
    it (the CUDA sources, about a minute on two cores): libozcrt.so is inside
    the installed package, `import ozcrt` loads that copy (no GPU needed to
    load it), OZCRT_LIB still wins, and the venv's ozcrt-run preloads the
    bundled copy.

Needs an interpreter with pip, venv and meson-python (Debian: python3-pip,
python3-venv, python3-mesonpy; scripts/run-tests installs them): tries this
one, then /usr/bin/python3; skips (exit 77) when none has them.
"""
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
failures = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        if detail:
            print("     " + detail.replace("\n", "\n     "))
        failures.append(what)
    return cond


def usable(py):
    code = "import mesonpy, pip, venv"
    try:
        return subprocess.run([py, "-c", code], capture_output=True, timeout=60).returncode == 0
    except OSError:
        return False


def copy_tree(root, dst):
    """The project's files (git's view when there is one) into dst."""
    try:
        names = subprocess.run(["git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard"], check=True,
                               capture_output=True, timeout=60).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        names = None
    if names is None:
        shutil.copytree(root, dst, ignore=shutil.ignore_patterns("build*", ".git", ".mesonpy*", "__pycache__",
                                                                  ".deps"))
        return
    for n in names:
        if n and os.path.isfile(os.path.join(root, n)):
            os.makedirs(os.path.dirname(os.path.join(dst, n)), exist_ok=True)
            shutil.copy2(os.path.join(root, n), os.path.join(dst, n))


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OZCRT_") and k not in ("PYTHONPATH", "LD_PRELOAD", "VIRTUAL_ENV")}
    env.update(CUDA_VISIBLE_DEVICES="", PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def make_venv(py, path):
    r = subprocess.run([py, "-m", "venv", "--system-site-packages", path], capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:  # no ensurepip (Debian without python3-venv): the system's pip serves the venv too
        shutil.rmtree(path, ignore_errors=True)
        r = subprocess.run([py, "-m", "venv", "--system-site-packages", "--without-pip", path],
                           capture_output=True, text=True, timeout=300)
    if not check(r.returncode == 0, "python3 -m venv %s" % path, r.stdout + r.stderr):
        return None
    return os.path.join(path, "bin", "python")


def pip_install(vpy, src, setup_arg, env):
    cmd = [vpy, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-cache-dir", "-v", src]
    if setup_arg:
        cmd[4:4] = ["--config-settings=setup-args=" + setup_arg]
    print("+ " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    out = r.stdout + r.stderr
    print(out[-3000:])
    return r.returncode, out


def run(cmd, cwd, env):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def site_packages(vpy, cwd, env):
    r = run([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"], cwd, env)
    return r.stdout.strip()


def main():
    root, tree_lib = sys.argv[1], os.path.abspath(sys.argv[2])
    nvcc = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
    pys = [p for p in dict.fromkeys([sys.executable, "/usr/bin/python3"]) if os.path.exists(p)]
    py = next((p for p in pys if usable(p)), None)
    if py is None:
        print("SKIP: no interpreter here has pip, venv and meson-python (mesonpy) (tried %s); on Debian: "
              "apt-get install python3-pip python3-venv python3-mesonpy" % ", ".join(pys))
        return SKIP
    with tempfile.TemporaryDirectory(prefix="ozcrt-pip-") as d:
        src, outside = os.path.join(d, "src"), os.path.join(d, "elsewhere")
        os.makedirs(outside)
        copy_tree(root, src)

        # 1. no nvcc: the package without the library
        vpy = make_venv(py, os.path.join(d, "venv-nolib"))
        if vpy is None:
            return 1
        rc, out = pip_install(vpy, src, "-Dcuda=disabled", clean_env())
        if not check(rc == 0, "pip install (-Dcuda=disabled) into a fresh venv"):
            return 1
        site = site_packages(vpy, outside, clean_env())
        check(not os.path.exists(os.path.join(site, "ozcrt", "libozcrt.so")), "no library installed without CUDA")
        code = ("import ozcrt\n"
                "print('FILE', ozcrt.__file__)\n"
                "try:\n    ozcrt.get()\nexcept ozcrt.LibraryNotFound as e:\n    print('RAISED', e)\n")
        r = run([vpy, "-c", code], outside, clean_env())
        check(r.returncode == 0 and ("FILE " + os.path.join(site, "ozcrt", "__init__.py")) in r.stdout,
              "import ozcrt from outside the tree: the venv's copy", r.stdout + r.stderr)
        check("RuntimeWarning" in r.stderr and "installed WITHOUT the library: it was built with -Dcuda=disabled"
              in r.stderr, "the import warns: installed without the library, and why", r.stderr)
        check("RAISED libozcrt.so not found" in r.stdout and "installed WITHOUT the library" in r.stdout,
              "ozcrt.get() raises LibraryNotFound, saying so", r.stdout)
        r = run([vpy, "-c", "import ozcrt; print('LIB', ozcrt.library_path(), ozcrt.get()['mode'])"], outside,
                clean_env(OZCRT_LIB=tree_lib))
        check(r.returncode == 0 and "LIB %s phase22" % tree_lib in r.stdout, "OZCRT_LIB still loads a library",
              r.stdout + r.stderr)
        r = run([vpy, "-m", "ozcrt", "--help"], outside, clean_env())
        check(r.returncode == 0 and "--mode" in r.stdout, "python -m ozcrt --help from the venv", r.stderr)
        r = run([os.path.join(d, "venv-nolib", "bin", "ozcrt-ab"), "--help"], outside, clean_env())
        check(r.returncode == 0 and "--rtol" in r.stdout, "the venv's ozcrt-ab --help", r.stdout + r.stderr)

        # 2. with nvcc: libozcrt.so built by the package's Meson build, inside the package
        if not nvcc:
            print("(this build has no CUDA: the install with the library is not tested)")
        else:
            vdir = os.path.join(d, "venv")
            vpy = make_venv(py, vdir)
            if vpy is None:
                return 1
            env = clean_env(PATH=os.path.dirname(nvcc) + os.pathsep + os.environ.get("PATH", ""))
            rc, out = pip_install(vpy, src, None, env)
            if not check(rc == 0, "pip install (the default build, CUDA) into a fresh venv"):
                return 1
            site = site_packages(vpy, outside, clean_env())
            bundled = os.path.join(site, "ozcrt", "libozcrt.so")
            check(os.path.isfile(bundled), "libozcrt.so installed inside the package (%s)" % bundled)
            r = run([vpy, "-c", "import ozcrt; print('LIB', ozcrt.library_path(), ozcrt.get()['mode'])"], outside,
                    clean_env())
            check(r.returncode == 0 and r.stderr == "" and "LIB %s phase22" % bundled in r.stdout,
                  "import ozcrt from outside the tree loads the bundled library", r.stdout + r.stderr)
            r = run([vpy, "-c", "import ozcrt; print('LIB', ozcrt.library_path())"], outside,
                    clean_env(OZCRT_LIB=tree_lib))
            check(r.returncode == 0 and "LIB %s" % tree_lib in r.stdout, "OZCRT_LIB wins over the bundled copy",
                  r.stdout + r.stderr)
            r = run([os.path.join(vdir, "bin", "ozcrt-run"), "--", "sh", "-c", 'echo "PRELOAD $LD_PRELOAD"'],
                    outside, clean_env())
            got = r.stdout.strip()[len("PRELOAD "):]
            check(r.returncode == 0 and os.path.realpath(got) == os.path.realpath(bundled),
                  "the venv's ozcrt-run preloads the bundled library", r.stdout + r.stderr)
    print("\n%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
