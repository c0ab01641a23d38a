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

# option -> (variable, takes a value, help); flags set the variable to "1".
OPTIONS = {
    "--mode": ("OZCRT_MODE", True, "phase22 (Phase 22, about 34 bits; the default), ozaki2 (the Ozaki scheme II, "
               "OZCRT_BITS bits) or off (native cuBLAS only); any case"),
    "--bits": ("OZCRT_BITS", True, "ozaki2: an integer 1..64, or auto, or auto:B with B in 20..64"),
    "--min-speedup": ("OZCRT_MIN_SPEEDUP", True, "ozaki2: emulate a call only if its predicted speed-up over "
                      "native DGEMM is at least R (a ratio >= 0, or auto)"),
    "--log": ("OZCRT_LOG", True, "0 (nothing), 1 (a line per call), 2 (also nested calls, details)"),
    "--log-file": ("OZCRT_LOG_FILE", True, "the log's file (appended); %p = process id, %h = host name"),
    "--stats": ("OZCRT_STATS", False, "at exit, a table of the calls per entry point and reason"),
    "--stats-file": ("OZCRT_STATS_FILE", True, "the table's file (sets OZCRT_STATS=1 too); %p and %h as above, "
                     "e.g. stats.%p.txt: one file per process"),
    "--min-m": ("OZCRT_MIN_M", True, "emulate a call only if m is at least N"),
    "--min-n": ("OZCRT_MIN_N", True, "emulate a call only if n is at least N"),
    "--min-k": ("OZCRT_MIN_K", True, "emulate a call only if k is at least N"),
    "--max-workspace-mb": ("OZCRT_MAX_WORKSPACE_MB", True, "the cap on all workspaces together (MiB)"),
    "--cublas": ("OZCRT_CUBLAS_LIBRARY", True, "take the real cuBLAS from this file"),
    "--compare": ("OZCRT_COMPARE", False, "shadow mode: every emulated call also run natively and compared on "
                  "the GPU; the report is printed at exit"),
    "--compare-result": ("OZCRT_COMPARE_RESULT", True, "which result the program gets: emulated or native"),
    "--report-file": ("OZCRT_REPORT_FILE", True, "also write the shadow report there (.csv or .json); %p and %h "
                      "as above"),
}
METAVAR = {"--mode": "M", "--bits": "B", "--min-speedup": "R", "--log": "L", "--log-file": "F", "--stats-file": "F",
           "--min-m": "N", "--min-n": "N", "--min-k": "N", "--max-workspace-mb": "N", "--cublas": "PATH",
           "--compare-result": "R", "--report-file": "F"}
MODES = ("phase22", "ozaki2", "off")


def help_text():
    import textwrap

    lines = [__doc__.split("\n\n")[1], "", "Runs a Python script (or -m module, -c code) with libozcrt.so preloaded "
             "(appended to LD_PRELOAD)\nand the OZCRT_* variables set from the options: the twin of ozcrt-run.", "",
             "options (each sets the OZCRT_* variable named):"]
    rows = [("%s %s" % (o, METAVAR[o]) if o in METAVAR else o, "%s%s: %s" % (v, "" if t else "=1", h))
            for o, (v, t, h) in OPTIONS.items()]
    rows.append(("--lib PATH", "libozcrt.so to preload (default: the search of `import ozcrt`)"))
    rows.append(("-h, --help", "this help"))
    for opt, text in rows:
        body = textwrap.wrap(text, 76)
        lines.append("  %-22s %s" % (opt, body[0]) if len(opt) <= 22 else "  %s\n  %-22s %s" % (opt, "", body[0]))
        lines += ["  %-22s %s" % ("", b) for b in body[1:]]
    lines += ["", "Exit status: the script's; 2 on a usage error, 1 when libozcrt.so is not found."]
    return "\n".join(lines) + "\n"


def check_mode(value):
    """--mode: a mode name in any case, returned in lower case."""
    m = value.strip().lower()
    if m not in MODES:
        usage("--mode %r is not a mode: phase22, ozaki2 or off (any case)" % value)
    return m


def _in_range(text, lo, hi):
    return text.isdigit() and len(text) <= 3 and lo <= int(text) <= hi


def check_bits(value):
    """--bits: 1..64, auto, or auto:B with B in 20..64 (passed on; auto in lower case)."""
    b = value.lower()
    if b == "auto":
        return b
    if b.startswith("auto:"):
        if not _in_range(b[5:], 20, 64):
            usage("--bits %r: auto:B needs B in 20..64" % value)
        return b
    if not _in_range(b, 1, 64):
        usage("--bits %r is not valid: an integer 1..64, auto, or auto:B with B in 20..64" % value)
    return b


def usage(msg=None, code=2):
    if code == 0:
        sys.stdout.write(help_text())
        sys.exit(0)
    if msg:
        sys.stderr.write("python -m ozcrt: %s\n" % msg)
    sys.stderr.write(__doc__.split("\n\n")[1] + "\n(python -m ozcrt --help: the options)\n")
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
                if a == "--mode":
                    value = check_mode(value)
                elif a == "--bits":
                    value = check_bits(value)
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
