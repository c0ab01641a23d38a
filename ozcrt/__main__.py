"""python -m ozcrt: the Python twin of scripts/ozcrt-run: runs a Python script (or -m module, -c code) with libozcrt.so preloaded and the OZCRT_* policy set.

    python -m ozcrt [--mode phase22|ozaki2|off] [--bits N] [--min-speedup R] [--log 0|1|2] [--log-file F]
                    [--stats] [--stats-file F] [--min-m N] [--min-n N] [--min-k N]
                    [--max-workspace-mb N] [--cublas PATH] [--compare]
                    [--compare-result emulated|native] [--report-file F] [--lib PATH]
                    [--] script.py [args...] | -m module [args...] | -c code [args...]

How: the options become the OZCRT_* variables (exactly as ozcrt-run sets
them; --bits sets OZCRT_BITS), the library's absolute path is appended to
LD_PRELOAD, and this interpreter is re-executed (os.execve) on the script.
A re-exec rather than loading the library here and running the script with
runpy: with LD_PRELOAD the shim comes before every library the interpreter
or the script loads, even ones loaded at start-up or by a subprocess, just
as under ozcrt-run, and the script runs as its own __main__ with untouched
sys.argv, sys.path and exit status. `import ozcrt` inside the script then
uses the preloaded copy (no refusal).

The library: --lib, else the search of `import ozcrt` ($OZCRT_LIB, next to
the package, the source tree's build*/interpose/libozcrt.so)."""

import os
import sys

# option -> (variable, takes a value); flags set the variable to "1".
OPTIONS = {
    "--mode": ("OZCRT_MODE", True),
    "--bits": ("OZCRT_BITS", True),
    "--min-speedup": ("OZCRT_MIN_SPEEDUP", True),
    "--log": ("OZCRT_LOG", True),
    "--log-file": ("OZCRT_LOG_FILE", True),
    "--stats": ("OZCRT_STATS", False),
    "--stats-file": ("OZCRT_STATS_FILE", True),
    "--min-m": ("OZCRT_MIN_M", True),
    "--min-n": ("OZCRT_MIN_N", True),
    "--min-k": ("OZCRT_MIN_K", True),
    "--max-workspace-mb": ("OZCRT_MAX_WORKSPACE_MB", True),
    "--cublas": ("OZCRT_CUBLAS_LIBRARY", True),
    "--compare": ("OZCRT_COMPARE", False),
    "--compare-result": ("OZCRT_COMPARE_RESULT", True),
    "--report-file": ("OZCRT_REPORT_FILE", True),
}


def usage(msg=None, code=2):
    if msg:
        sys.stderr.write("python -m ozcrt: %s\n" % msg)
    sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
    sys.exit(code)


def parse(argv):
    """(environment changes, library or None, the interpreter's arguments)."""
    env, lib, i = {}, None, 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            usage(code=0)
        if a == "--":
            i += 1
            break
        if a == "--lib" or a in OPTIONS:
            takes = a == "--lib" or OPTIONS[a][1]
            if takes and i + 1 >= len(argv):
                usage("%s needs a value" % a)
            value = argv[i + 1] if takes else "1"
            if a == "--lib":
                lib = value
            else:
                env[OPTIONS[a][0]] = value
                if a == "--stats-file":
                    env["OZCRT_STATS"] = "1"
            i += 2 if takes else 1
            continue
        if a.startswith("--"):
            usage("unknown option %s" % a)
        break
    rest = argv[i:]
    if not rest:
        usage("no script given")
    if rest[0] in ("-m", "-c") and len(rest) < 2:
        usage("%s needs a value" % rest[0])
    return env, lib, rest


def find_library(lib):
    """The absolute path of libozcrt.so, without loading it."""
    import ozcrt  # not loaded: see ozcrt._running_launcher


    cands = [lib] if lib else ozcrt._candidates()
    found = next((p for p in cands if p and os.path.isfile(p)), None)
    if not found:
        sys.stderr.write("python -m ozcrt: libozcrt.so not found (tried: %s); set OZCRT_LIB or use --lib\n"
                         % ", ".join(c for c in cands if c))
        sys.exit(1)
    return os.path.abspath(found)


def main(argv):
    env, lib, rest = parse(argv)
    path = find_library(lib)
    new_env = dict(os.environ)
    new_env.update(env)
    pre = new_env.get("LD_PRELOAD", "")
    new_env["LD_PRELOAD"] = pre + ":" + path if pre else path
    # Used from the source tree: the package stays importable in the script.
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pp = new_env.get("PYTHONPATH", "")
    if os.path.isfile(os.path.join(pkg_root, "pyproject.toml")) and pkg_root not in pp.split(os.pathsep):
        new_env["PYTHONPATH"] = pp + os.pathsep + pkg_root if pp else pkg_root
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable] + rest, new_env)


if __name__ == "__main__":
    main(sys.argv[1:])
