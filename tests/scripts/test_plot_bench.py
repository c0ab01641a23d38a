#!/usr/bin/env python3
"""test_plot_bench: runs scripts/plot-bench on sample CSVs in a temp dir and checks the PNG it draws.

usage: test_plot_bench.py PATH/TO/scripts/plot-bench

Checked: --help (exit 0) and a bad option (exit 2); on a sample CSV, exit 0,
the output path printed, the PNG's structure (check_png.read_png), both bar
colours and the 1.0 line present, one bar of each colour per shape on the
base line, bar heights in the ratios of the values the script's formulas give
(native_ms / p22_ms, oz2_native_ms / oz2_ms; the engine's columns are not drawn), the 1.0 line at the
height of 1.0 on that scale, and the same bytes on a second run; bad CSVs
exit 1 naming their line. The colours and formulas are read from the script
itself (one place); the formulas are written here again, to check the script's. Prints PASS/FAIL per check, exits 1 on any failure.
"""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True     # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_png import PngError, read_png  # noqa: E402

HEADER = "shape,native_ms,int8_cublas_ms,engine_ms,p22_ms,oz2_native_ms,oz2_ms"
SAMPLE = """# 2026-11-30, sample device, made-up numbers for the test
%s
1024x1024x1024,1.0,0.05,2.0,2.0,1.1,2.5
2048x2048x512,3.0,0.10,1.2,2.5,3.2,2.0
16384x16384x16384,10.0,0.50,9.0,8.0,9.5,6.0
""" % HEADER
BAD = {  # name: (CSV text, the line the message must name)
    "header": ("# c\nshape,native,int8,engine,p22\n4x4x4,1,1,1,1\n", 2),
    "number": ("# c\n%s\n4x4x4,1,1,1,1,1,1\n4x4x4,1,fast,1,1,1,1\n" % HEADER, 4),
    "fields": ("%s\n4x4x4,1,1,1,1,1\n" % HEADER, 2),
    "shape": ("%s\n4x4,1,1,1,1,1,1\n" % HEADER, 2),
    "negative": ("%s\n4x4x4,1,1,-1,1,1,1\n" % HEADER, 2),
    "no rows": ("# c\n%s\n" % HEADER, 2),
}

EXPECTED = [  # the bars' values, written here independently of the script's formulas
    lambda r: r["native_ms"] / r["p22_ms"],
    lambda r: r["oz2_native_ms"] / r["oz2_ms"],
]

failures = 0


def check(ok, what):
    global failures
    print("%s %s" % ("PASS" if ok else "FAIL", what))
    if not ok:
        failures += 1
    return ok


def load_script(path):
    loader = importlib.machinery.SourceFileLoader("plot_bench", path)
    spec = importlib.util.spec_from_loader("plot_bench", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def run(script, *args):
    return subprocess.run([sys.executable, script] + list(args), capture_output=True, text=True)


def bars_on_base_line(rows, colour):
    """(x0, x1) of each run of colour on the lowest row that has it."""
    for y in range(len(rows) - 1, -1, -1):
        xs = [x for x, p in enumerate(rows[y]) if p == colour]
        if xs:
            runs, start = [], xs[0]
            for a, b in zip(xs, xs[1:] + [None]):
                if b != a + 1:
                    runs.append((start, a + 1))
                    start = b
            return y, runs
    return None, []


def bar_height(rows, base, x, colour, crossing):
    """Pixels of colour (or of the line crossing it) from the base row up in column x, to the top bar pixel."""
    top, y = base, base
    while y >= 0 and rows[y][x] in (colour, crossing):
        if rows[y][x] == colour:
            top = y
        y -= 1
    return base - top + 1


def check_chart(pb, path, csv_rows):
    try:
        width, height, rows = read_png(path)
    except (OSError, PngError) as e:
        return check(False, "PNG readable: %s" % e)
    check((width, height) == (pb.WIDTH, pb.HEIGHT), "size %dx%d is %dx%d" % (width, height, pb.WIDTH, pb.HEIGHT))
    counts = {}
    for row in rows:
        for p in row:
            counts[p] = counts.get(p, 0) + 1
    check(len(pb.SERIES) == len(pb.BAR_COLOURS) == len(EXPECTED),
          "%d series, %d colours, %d expected formulas" % (len(pb.SERIES), len(pb.BAR_COLOURS), len(EXPECTED)))
    for colour in pb.BAR_COLOURS:
        check(counts.get(colour, 0) > 1000, "bar colour %s present (%d pixels)" % (colour, counts.get(colour, 0)))
    line_rows = [y for y, row in enumerate(rows) if sum(p == pb.REF_COLOUR for p in row) > width // 2]
    check(bool(line_rows), "the 1.0 line: a row over half the width in %s" % (pb.REF_COLOUR,))
    base = None
    heights = []
    for i, colour in enumerate(pb.BAR_COLOURS):
        y, runs = bars_on_base_line(rows, colour)
        check(len(runs) == len(csv_rows), "colour %s: %d bars on the base line, expected %d"
              % (colour, len(runs), len(csv_rows)))
        if base is None:
            base = y
        check(y == base, "colour %s: bars stand on the same base line (row %s vs %s)" % (colour, y, base))
        for (x0, x1), r in zip(runs, csv_rows):
            h = bar_height(rows, y, (x0 + x1) // 2, colour, pb.REF_COLOUR)
            heights.append((h, EXPECTED[i](r), "%s %s" % (r["shape"], pb.SERIES[i][0])))
    if line_rows and base is not None and heights:
        line_height = base - (line_rows[0] + line_rows[-1]) / 2 + 0.5    # pixels per 1.0
        for h, v, what in heights:
            check(abs(h - v * line_height) <= 2.0, "%s: bar %d px, expected %.1f (value %.3f, 1.0 = %.1f px)"
                  % (what, h, v * line_height, v, line_height))


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    script = argv[0]
    pb = load_script(script)
    r = run(script, "--help")
    check(r.returncode == 0 and "usage" in r.stdout, "--help exits 0 with a usage line (rc %d)" % r.returncode)
    r = run(script, "--no-such-option")
    check(r.returncode == 2, "a bad option exits 2 (rc %d)" % r.returncode)
    with tempfile.TemporaryDirectory(prefix="plot-bench-") as tmp:
        csv_path = os.path.join(tmp, "sample.csv")
        with open(csv_path, "w") as f:
            f.write(SAMPLE)
        out = os.path.join(tmp, "chart.png")
        r = run(script, "--csv", csv_path, "--out", out)
        check(r.returncode == 0, "sample CSV exits 0 (rc %d, stderr %r)" % (r.returncode, r.stderr))
        check(r.stdout.strip() == out, "prints the output path (%r)" % r.stdout.strip())
        _, csv_rows = pb.read_csv(csv_path)
        check_chart(pb, out, csv_rows)
        out2 = os.path.join(tmp, "again.png")
        run(script, "--csv", csv_path, "--out", out2)
        with open(out, "rb") as a, open(out2, "rb") as b:
            check(a.read() == b.read(), "same input, same bytes")
        for name, (text, line) in sorted(BAD.items()):
            bad = os.path.join(tmp, "bad.csv")
            with open(bad, "w") as f:
                f.write(text)
            r = run(script, "--csv", bad, "--out", os.path.join(tmp, "bad.png"))
            check(r.returncode == 1 and ("bad.csv:%d:" % line) in r.stderr,
                  "bad CSV (%s) exits 1 naming line %d (rc %d, stderr %r)" % (name, line, r.returncode, r.stderr.strip()))
            check(not os.path.exists(os.path.join(tmp, "bad.png")), "bad CSV (%s) writes no PNG" % name)
        r = run(script, "--csv", os.path.join(tmp, "missing.csv"), "--out", os.path.join(tmp, "bad.png"))
        check(r.returncode == 1, "a missing CSV exits 1 (rc %d)" % r.returncode)
    print("%s: %d failure(s)" % ("FAIL" if failures else "PASS", failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
