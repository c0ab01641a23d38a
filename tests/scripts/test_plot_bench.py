#!/usr/bin/env python3
"""test_plot_bench: runs scripts/plot-bench on sample CSVs in a temp dir and checks the SVG charts it draws.

usage: test_plot_bench.py PATH/TO/scripts/plot-bench

Checked: --help (exit 0, on stdout) and usage errors (exit 2); on sample CSVs
(read here with the csv module, apart from the script's reader): exit 0, both
output paths printed, each SVG's structure (check_svg.read_svg), the title
naming the device and the dates of the CSV's first comment, that comment
under it, and per chart:
- speed: a panel per product in CSV order of DGEMM, ZGEMM; y tick labels
  evenly spaced from 0, x tick labels the CSV's sizes at log2-spaced places;
  the dashed native line at the height of 1.0; per product and method one
  series with one polyline through its points (in size order, each vertex
  where the tick labels put its size and ratio) and a marker on each vertex
  (hollow where the source starts with "kernels alone"); ozcrt's lines solid
  and coloured, the peers' dashed and grey; the last value of each line
  written beside it; a legend entry per method;
- accuracy: y tick labels every decade over 1e-17..1e+03 (wider when a value
  needs it), x group labels the datasets in order; per method one path whose
  segments join its median to its max in each dataset's group, a filled
  marker at the max and a hollow one at the median, on the log scale the tick
  labels give; the FP64 unit roundoff line; a legend entry per method; every
  note;
and the same bytes on a second run. Bad CSVs exit 1 naming the file and line
and write nothing; a missing CSV exits 1 naming it. Then the repository's own
docs/speed-h200.csv and docs/accuracy-h200.csv go through the same checks,
and docs/speed-h200.svg and docs/accuracy-h200.svg must be the bytes the
script draws from them (regenerate: scripts/plot-bench); their text carries
no development history. Prints PASS/FAIL per check, exits 1 on any failure.
"""
import csv
import math
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True     # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_svg import SvgError, by_class, centre, local, path_segments, points, read_svg, text_of  # noqa: E402

SPEED_HEADER = "product,method,size,ratio,source"
ACCURACY_HEADER = "dataset,method,max,median,note"
SPEED_SAMPLE = """# Sample GPU X (sm_00), made-up numbers; measured 2026-01-02 and 2026-01-05; ratio = native time / method time
# a second comment
%s
DGEMM,ozcrt fast,1024,1.5,"timed, twice"
DGEMM,ozcrt fast,4096,2.25,t
DGEMM,ozcrt fast,2048,1.75,t
DGEMM,ozcrt slow,1024,0.5,t
DGEMM,ozcrt slow,4096,0.8,t
# a comment between rows
DGEMM,PeerLib 1.0,2048,1.1,peer
DGEMM,PeerLib 1.0,4096,1.3,peer
ZGEMM,ozcrt fast,1024,3.0,kernels alone: a bench
ZGEMM,ozcrt fast,4096,3.6,t
ZGEMM,OtherPeer,2048,0.4,peer

""" % SPEED_HEADER
ACCURACY_SAMPLE = """# Sample GPU X, 512^3, made-up errors; measured 2026-01-03
%s
"U(-1,1)",native DGEMM,1e-12,1e-15,
"U(-1,1)",ozcrt fast,3.5e-03,2e-11,
"U(-1,1)",ozcrt exact,1.1e-16,4e-17,"N=3, chosen"
phi=1,native DGEMM,2e-10,3e-15,
phi=1,ozcrt fast,1.0e+02,5e-09,
phi=1,PeerLib 1.0,1e-13,1e-16,a peer
""" % ACCURACY_HEADER
ACCURACY_WIDE = """# Sample GPU X, measured 2026-01-03
%s
d1,ozcrt fast,5.0e+04,3e-19,
""" % ACCURACY_HEADER

S, A = "speed", "accuracy"
BAD = [  # (name, which CSV, text, the line the message must name)
    ("unknown column", S, "# G, 2026-01-01\nproduct,method,size,ratio,source,extra\n", 2),
    ("missing column", S, "# G, 2026-01-01\nproduct,method,size,ratio\nDGEMM,m,4,1\n", 2),
    ("column twice", S, "# G, 2026-01-01\nproduct,method,size,ratio,source,ratio\n", 2),
    ("bad ratio", S, "# G, 2026-01-01\n%s\nDGEMM,m,4,1,s\nDGEMM,m,8,fast,s\n" % SPEED_HEADER, 4),
    ("nan ratio", S, "# G, 2026-01-01\n%s\nDGEMM,m,4,nan,s\n" % SPEED_HEADER, 3),
    ("zero ratio", S, "# G, 2026-01-01\n%s\nDGEMM,m,4,0,s\n" % SPEED_HEADER, 3),
    ("negative ratio", S, "# G, 2026-01-01\n%s\nDGEMM,m,4,-1.2,s\n" % SPEED_HEADER, 3),
    ("bad size", S, "# G, 2026-01-01\n%s\nDGEMM,m,4.5,1,s\n" % SPEED_HEADER, 3),
    ("zero size", S, "# G, 2026-01-01\n%s\nDGEMM,m,0,1,s\n" % SPEED_HEADER, 3),
    ("unknown product", S, "# G, 2026-01-01\n%s\nDGEMM,m,4,1,s\nSGEMM,m,4,1,s\n" % SPEED_HEADER, 4),
    ("fields", S, "# G, 2026-01-01\n%s\nDGEMM,m,4,1\n" % SPEED_HEADER, 3),
    ("unquoted comma", S, "# G, 2026-01-01\n%s\nDGEMM,m,4,1,a,b\n" % SPEED_HEADER, 3),
    ("empty method", S, "# G, 2026-01-01\n%s\nDGEMM,,4,1,s\n" % SPEED_HEADER, 3),
    ("repeated point", S, "# G, 2026-01-01\n%s\nDGEMM,m,4,1,s\nZGEMM,m,4,1,s\nDGEMM,m,4,2,s\n" % SPEED_HEADER, 5),
    ("no rows", S, "# G, 2026-01-01\n%s\n" % SPEED_HEADER, 2),
    ("no comment", S, "%s\nDGEMM,m,4,1,s\n" % SPEED_HEADER, 1),
    ("no date", S, "# G, some day\n%s\nDGEMM,m,4,1,s\n" % SPEED_HEADER, 1),
    ("empty", S, "", 1),
    ("unknown column", A, "# G, 2026-01-01\ndataset,method,max,mean,note\n", 2),
    ("bad max", A, "# G, 2026-01-01\n%s\nd,m,1e-3,1e-5,\nd,n,1e--3,1e-5,\n" % ACCURACY_HEADER, 4),
    ("zero median", A, "# G, 2026-01-01\n%s\nd,m,1e-3,0,\n" % ACCURACY_HEADER, 3),
    ("median above max", A, "# G, 2026-01-01\n%s\nd,m,1e-5,1e-3,\n" % ACCURACY_HEADER, 3),
    ("repeated point", A, "# G, 2026-01-01\n%s\nd,m,1e-3,1e-5,\nd,m,1e-3,1e-5,\n" % ACCURACY_HEADER, 4),
    ("speed header", A, "# G, 2026-01-01\n%s\nDGEMM,m,4,1,s\n" % SPEED_HEADER, 2),
]
HISTORY = [r"\b[Ss]essions? [0-9]", r"\b[Cc]alls? [0-9]", r"\b[Rr]uns? [0-9]", r"\b[Ii]ssues? #?[0-9]",
           r"\b[Hh]elpers? [0-9]", r"\blanded\b", r"\b(exp|pending)-[a-z0-9]"]
HEX = re.compile(r"\b[0-9a-f]{7,40}\b")     # a commit hash: with a letter and a digit

failures = 0


def check(ok, what):
    global failures
    print("%s %s" % ("PASS" if ok else "FAIL", what))
    if not ok:
        failures += 1
    return ok


def run(script, *args):
    return subprocess.run([sys.executable, script] + list(args), capture_output=True, text=True)


def read_rows(path):
    """(first comment, rows as dicts): the CSV read here, apart from the script."""
    with open(path, encoding="utf-8", newline="") as f:
        lines = f.read().splitlines()
    comment = lines[0].lstrip("#").strip()
    body = [l for l in lines if l.strip() and not l.lstrip().startswith("#")]
    return comment, [{k: v.strip() for k, v in r.items()} for r in csv.DictReader(body)]


def unique(items):
    out = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def grey(colour):
    return bool(re.fullmatch(r"#([0-9a-f]{2})\1\1", colour or ""))


def ticks(root, axis):
    """[(label, position)]: each tick label with its tick mark's x or y, in document order."""
    labels, marks = by_class(root, "text", axis + "tick"), by_class(root, "line", axis + "tick-mark")
    if not check(len(labels) == len(marks) > 1, "%d %s tick labels, %d tick marks" % (len(labels), axis, len(marks))):
        return []
    c = "x1" if axis == "x" else "y1"
    other = "x" if axis == "x" else "y"
    out = []
    for t, m in zip(labels, marks):
        pos = float(m.get(c))
        check(abs(float(t.get(other)) - pos) < 25, "%s tick %r beside its mark (%s vs %.1f)"
              % (axis, text_of(t), t.get(other), pos))
        out.append((text_of(t), pos))
    return out


def linear_map(pairs, what):
    """From [(value, position)] evenly related: a function value -> position (checked on every pair)."""
    (v0, p0), (v1, p1) = pairs[0], pairs[-1]
    scale = (p1 - p0) / (v1 - v0)

    def f(v):
        return p0 + (v - v0) * scale
    bad = [(v, p) for v, p in pairs if abs(f(v) - p) > 0.02]
    check(not bad, "%s: tick positions linear in their values (off: %r)" % (what, bad[:3]))
    return f


def check_title(root, comment):
    device = re.split(r",| \(", comment, 1)[0].strip()
    dates = sorted(set(re.findall(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", comment)))
    dates = unique([dates[0], dates[-1]]) if dates else ["(no date)"]
    title = [text_of(t) for t in by_class(root, "text", "title")]
    check(len(title) == 1 and device in title[0] and all(d in title[0] for d in dates),
          "title %r names %r and %s" % (title, device, dates))
    sub = " ".join(text_of(t) for t in by_class(root, "text", "subtitle"))
    check(sub == " ".join(comment.split()), "the first comment under the title (%r)" % sub[:80])
    svg_title = [e for e in root if local(e) == "title"]
    check(len(svg_title) == 1 and text_of(svg_title[0]) == title[0], "the picture's <title> is the chart's title")


def close(a, b, tol=0.02):
    return abs(a - b) <= tol


def check_speed(path, csv_path):
    try:
        root = read_svg(path)
    except (OSError, SvgError) as e:
        return check(False, "speed SVG readable: %s" % e)
    comment, rows = read_rows(csv_path)
    check_title(root, comment)
    products = [p for p in ("DGEMM", "ZGEMM") if any(r["product"] == p for r in rows)]
    panels = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "panel"]
    check([g.get("data-product") for g in panels] == products, "panels %r, expected %r"
          % ([g.get("data-product") for g in panels], products))
    sizes = sorted(set(int(r["size"]) for r in rows))
    methods = unique(r["method"] for r in rows)
    legend = [text_of(t) for t in by_class(root, "text", "legend")]
    for m in methods:
        check(m in legend, "speed legend names %r" % m)
    for g in panels:
        product = g.get("data-product")
        titles = [text_of(t) for t in by_class(g, "text", "panel-title")]
        check(titles == [product], "panel title %r" % titles)
        yt = ticks(g, "y")
        xt = ticks(g, "x")
        if not yt or not xt:
            continue
        yvals = [float(t) for t, _ in yt]
        steps = [b - a for a, b in zip(yvals, yvals[1:])]
        check(yvals[0] == 0 and all(close(s, steps[0], 1e-9) and s > 0 for s in steps),
              "%s: y ticks from 0 in even steps %r" % (product, yvals))
        mine = [r for r in rows if r["product"] == product]
        check(yvals[-1] >= max(float(r["ratio"]) for r in mine) and yvals[-1] > 1, "%s: y axis reaches %s"
              % (product, yvals[-1]))
        Y = linear_map([(float(t), p) for t, p in yt], product + " y")
        check([t for t, _ in xt] == [str(s) for s in sizes], "%s: x tick labels %r, the sizes %r"
              % (product, [t for t, _ in xt], sizes))
        Xl = linear_map([(math.log2(int(t)), p) for t, p in xt], product + " x (log2)") if len(xt) > 1 else None

        def X(s):
            return Xl(math.log2(s))
        native = by_class(g, "line", "native")
        check(len(native) == 1 and native[0].get("stroke-dasharray") and close(float(native[0].get("y1")), Y(1.0))
              and native[0].get("y1") == native[0].get("y2"),
              "%s: a dashed native line at the height of 1.0" % product)
        series = [s for s in g.iter("{http://www.w3.org/2000/svg}g") if s.get("class") == "series"]
        got = sorted(s.get("data-method") for s in series)
        want = sorted(unique(r["method"] for r in mine))
        check(got == want, "%s: one series per method %r (found %r)" % (product, want, got))
        values = [text_of(t) for t in by_class(g, "text", "value")]
        for s in series:
            m = s.get("data-method")
            pts = sorted((r for r in mine if r["method"] == m), key=lambda r: int(r["size"]))
            lines = [e for e in s if local(e) == "polyline"]
            if not check(len(lines) == 1, "%s %s: one polyline" % (product, m)):
                continue
            verts = points(lines[0])
            expect = [(X(int(r["size"])), Y(float(r["ratio"]))) for r in pts]
            check(len(verts) == len(expect) and all(close(a[0], b[0]) and close(a[1], b[1])
                                                    for a, b in zip(verts, expect)),
                  "%s %s: polyline %r through its points %r" % (product, m, verts, expect))
            marks = [e for e in s if e.get("class") == "point"]
            check(len(marks) == len(pts) and all(close(centre(e)[0], x) and close(centre(e)[1], y)
                                                 for e, (x, y) in zip(marks, expect)),
                  "%s %s: a marker on each of its %d points" % (product, m, len(pts)))
            for e, r in zip(marks, pts):
                hollow = r["source"].lower().startswith("kernels alone")
                check((e.get("fill") == "#ffffff") == hollow, "%s %s %s: marker %s" %
                      (product, m, r["size"], "hollow" if hollow else "filled"))
            stroke, dash = lines[0].get("stroke"), lines[0].get("stroke-dasharray")
            if m.startswith("ozcrt"):
                check(dash is None and not grey(stroke), "%s %s: solid and coloured (%s)" % (product, m, stroke))
            else:
                check(dash is not None and grey(stroke), "%s %s: dashed and grey (%s, %s)" % (product, m, stroke, dash))
            check("%.2fx" % float(pts[-1]["ratio"]) in values, "%s %s: its last value %.2fx written"
                  % (product, m, float(pts[-1]["ratio"])))


def check_accuracy(path, csv_path):
    try:
        root = read_svg(path)
    except (OSError, SvgError) as e:
        return check(False, "accuracy SVG readable: %s" % e)
    comment, rows = read_rows(csv_path)
    check_title(root, comment)
    datasets = unique(r["dataset"] for r in rows)
    methods = unique(r["method"] for r in rows)
    yt = ticks(root, "y")
    if not yt:
        return
    exps = [round(math.log10(float(t))) for t, _ in yt]
    lo = min(-17, math.floor(math.log10(min(float(r["median"]) for r in rows))))
    hi = max(3, math.ceil(math.log10(max(float(r["max"]) for r in rows))))
    check(exps == list(range(lo, hi + 1)) and all(float(t) == 10.0 ** e for (t, _), e in zip(yt, exps)),
          "y ticks every decade 1e%+03d..1e%+03d (%r)" % (lo, hi, [t for t, _ in yt][:3] + ["..."]))
    Yl = linear_map([(e, p) for e, (_, p) in zip(exps, yt)], "accuracy y (log10)")

    def Y(v):
        return Yl(math.log10(v))
    groups = [(text_of(t), float(t.get("x"))) for t in by_class(root, "text", "xtick")]
    check([g for g, _ in groups] == datasets, "x groups %r, the datasets %r" % ([g for g, _ in groups], datasets))
    width = (groups[1][1] - groups[0][1]) if len(groups) > 1 else 1e9
    legend = [text_of(t) for t in by_class(root, "text", "legend")]
    rline = by_class(root, "line", "roundoff")
    check(len(rline) == 1 and close(float(rline[0].get("y1")), Y(2.0 ** -53)), "the unit roundoff line at 2^-53")
    series = [s for s in root.iter("{http://www.w3.org/2000/svg}g") if s.get("class") == "series"]
    check(sorted(s.get("data-method") for s in series) == sorted(methods), "one series per method %r" % methods)
    slot = {}
    for s in series:
        m = s.get("data-method")
        check(m in legend, "accuracy legend names %r" % m)
        mine = [r for r in rows if r["method"] == m]
        paths = [e for e in s if local(e) == "path"]
        if not check(len(paths) == 1, "%s: one path" % m):
            continue
        try:
            segs = path_segments(paths[0].get("d"))
        except SvgError as e:
            check(False, "%s: %s" % (m, e))
            continue
        mine.sort(key=lambda r: datasets.index(r["dataset"]))
        check(len(segs) == len(mine), "%s: a segment per dataset (%d, %d)" % (m, len(segs), len(mine)))
        marks = [e for e in s if e.get("class") == "point"]
        check(len(marks) == 2 * len(mine), "%s: two markers per dataset" % m)
        for (x, y0, y1), r in zip(segs, mine):
            gx = dict(groups)[r["dataset"]]
            off = x - gx
            check(abs(off) < width / 2, "%s %s: in its group (x %.1f, the group's middle %.1f)" % (m, r["dataset"], x, gx))
            slot.setdefault(m, []).append(off)
            check(close(y0, Y(float(r["median"]))) and close(y1, Y(float(r["max"]))),
                  "%s %s: from the median %s to the max %s on the log scale" % (m, r["dataset"], r["median"], r["max"]))
            at = [(centre(e), e.get("fill")) for e in marks if close(centre(e)[0], x)]
            filled = [c for c, f in at if f != "#ffffff"]
            hollow = [c for c, f in at if f == "#ffffff"]
            check(len(filled) == 1 and close(filled[0][1], y1) and len(hollow) == 1 and close(hollow[0][1], y0),
                  "%s %s: max filled, median hollow" % (m, r["dataset"]))
    for m, offs in slot.items():
        check(all(close(o, offs[0]) for o in offs), "%s: the same place in every group" % m)
    notes = " ".join(text_of(t) for t in by_class(root, "text", "note"))
    for r in rows:
        if r["note"]:
            check(" ".join(r["note"].split()) in notes, "note %r listed" % r["note"])


def check_history(path):
    text = " ".join(text_of(e) for e in read_svg(path).iter() if local(e) in ("text", "title"))
    bad = [p for p in HISTORY if re.search(p, text)]
    bad += [w for w in HEX.findall(text) if re.search("[a-f]", w) and re.search("[0-9]", w)]
    check(not bad, "%s: no development history in its text (%r)" % (os.path.basename(path), bad))


def same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    script = os.path.abspath(argv[0])
    root = os.path.dirname(os.path.dirname(script))
    r = run(script, "--help")
    check(r.returncode == 0 and "usage" in r.stdout and all(o in r.stdout for o in
                                                            ("--speed-csv", "--accuracy-csv", "--out-dir")),
          "--help exits 0 with a usage line and the options (rc %d)" % r.returncode)
    for bad_args in (["--no-such-option"], ["extra"], ["--out-dir"]):
        r = run(script, *bad_args)
        check(r.returncode == 2, "usage error %r exits 2 (rc %d)" % (bad_args, r.returncode))
    with tempfile.TemporaryDirectory(prefix="plot-bench-") as tmp:
        speed_csv, accuracy_csv = os.path.join(tmp, "speed.csv"), os.path.join(tmp, "accuracy.csv")
        for p, text in ((speed_csv, SPEED_SAMPLE), (accuracy_csv, ACCURACY_SAMPLE)):
            with open(p, "w") as f:
                f.write(text)
        out = os.path.join(tmp, "out", "new")                      # made by the script
        r = run(script, "--speed-csv", speed_csv, "--accuracy-csv", accuracy_csv, "--out-dir", out)
        speed_svg, accuracy_svg = os.path.join(out, "speed-h200.svg"), os.path.join(out, "accuracy-h200.svg")
        check(r.returncode == 0, "sample CSVs exit 0 (rc %d, stderr %r)" % (r.returncode, r.stderr))
        check(r.stdout.splitlines() == [speed_svg, accuracy_svg], "prints both output paths (%r)" % r.stdout)
        check_speed(speed_svg, speed_csv)
        check_accuracy(accuracy_svg, accuracy_csv)
        out2 = os.path.join(tmp, "again")
        run(script, "--speed-csv", speed_csv, "--accuracy-csv", accuracy_csv, "--out-dir", out2)
        for name in ("speed-h200.svg", "accuracy-h200.svg"):
            check(os.path.exists(os.path.join(out2, name)) and same_file(os.path.join(out, name), os.path.join(out2, name)),
                  "%s: same input, same bytes" % name)

        wide = os.path.join(tmp, "wide.csv")
        with open(wide, "w") as f:
            f.write(ACCURACY_WIDE)
        r = run(script, "--speed-csv", speed_csv, "--accuracy-csv", wide, "--out-dir", os.path.join(tmp, "wide"))
        check(r.returncode == 0, "an accuracy CSV past 1e-17..1e+03 exits 0 (rc %d, %r)" % (r.returncode, r.stderr))
        check_accuracy(os.path.join(tmp, "wide", "accuracy-h200.svg"), wide)

        for n, (name, which, text, line) in enumerate(BAD):
            bad = os.path.join(tmp, "bad.csv")
            with open(bad, "w") as f:
                f.write(text)
            bad_out = os.path.join(tmp, "bad%d" % n)
            args = ["--speed-csv", bad if which == S else speed_csv,
                    "--accuracy-csv", bad if which == A else accuracy_csv, "--out-dir", bad_out]
            r = run(script, *args)
            check(r.returncode == 1 and ("bad.csv:%d:" % line) in r.stderr,
                  "bad %s CSV (%s) exits 1 naming bad.csv:%d (rc %d, stderr %r)"
                  % (which, name, line, r.returncode, r.stderr.strip()))
            check(not os.path.exists(bad_out), "bad %s CSV (%s) writes nothing" % (which, name))
        missing = os.path.join(tmp, "missing.csv")
        r = run(script, "--speed-csv", missing, "--accuracy-csv", accuracy_csv, "--out-dir", os.path.join(tmp, "m"))
        check(r.returncode == 1 and missing in r.stderr, "a missing CSV exits 1 naming it (rc %d)" % r.returncode)

        # the repository's own charts
        docs = os.path.join(root, "docs")
        fresh = os.path.join(tmp, "docs")
        r = run(script, "--out-dir", fresh)
        check(r.returncode == 0, "docs/speed-h200.csv and docs/accuracy-h200.csv draw (rc %d, stderr %r)"
              % (r.returncode, r.stderr.strip()))
        if r.returncode == 0:
            check_speed(os.path.join(fresh, "speed-h200.svg"), os.path.join(docs, "speed-h200.csv"))
            check_accuracy(os.path.join(fresh, "accuracy-h200.svg"), os.path.join(docs, "accuracy-h200.csv"))
            for name in ("speed-h200.svg", "accuracy-h200.svg"):
                committed = os.path.join(docs, name)
                check(os.path.exists(committed) and same_file(committed, os.path.join(fresh, name)),
                      "docs/%s is what plot-bench draws from its CSV (regenerate: scripts/plot-bench)" % name)
                check_history(os.path.join(fresh, name))
    print("%s: %d failure(s)" % ("FAIL" if failures else "PASS", failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
