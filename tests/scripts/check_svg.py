#!/usr/bin/env python3
"""check_svg: reads an SVG chart written by scripts/plot-bench and checks its structure (stdlib only).

usage: check_svg.py SVG...

Checks that the file is well-formed XML (xml.etree) in UTF-8 with an XML
declaration, that the root is an <svg> in the SVG namespace with positive
integer width and height and viewBox "0 0 width height", that every element
is in the SVG namespace, and that the picture is self-contained and inert: no
<script>, <foreignObject>, <image>, <style> or <a>, no href or on* attribute.
Prints PASS/FAIL per file, exits 1 on any failure.

As a module: read_svg(path) returns the root element or raises SvgError;
local(element) is its tag without the namespace; by_class(root, tag, cls)
lists the elements of that tag and class (document order); text_of(element)
its whole text; centre(element) the middle of a circle, rect or polygon's
bounding box; points(polyline) its vertices. The chart checks live in
test_plot_bench.py.
"""
import re
import sys
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
FORBIDDEN = {"script", "foreignObject", "image", "style", "a"}


class SvgError(Exception):
    pass


def local(element):
    return element.tag.split("}", 1)[1] if element.tag.startswith("{") else element.tag


def read_svg(path):
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b'<?xml version="1.0" encoding="UTF-8"?>'):
        raise SvgError("no XML declaration naming UTF-8 at the start")
    try:
        data.decode("utf-8")
        root = ET.fromstring(data)
    except (UnicodeDecodeError, ET.ParseError) as e:
        raise SvgError("not well-formed: %s" % e)
    if root.tag != "{%s}svg" % SVG_NS:
        raise SvgError("the root is %r, expected {%s}svg" % (root.tag, SVG_NS))
    try:
        width, height = int(root.get("width", "")), int(root.get("height", ""))
    except ValueError:
        raise SvgError("width %r / height %r are not integers" % (root.get("width"), root.get("height")))
    if width <= 0 or height <= 0:
        raise SvgError("size %dx%d" % (width, height))
    if root.get("viewBox") != "0 0 %d %d" % (width, height):
        raise SvgError("viewBox %r, expected '0 0 %d %d'" % (root.get("viewBox"), width, height))
    for e in root.iter():
        if not e.tag.startswith("{%s}" % SVG_NS):
            raise SvgError("element %r outside the SVG namespace" % e.tag)
        if local(e) in FORBIDDEN:
            raise SvgError("a <%s> element" % local(e))
        for name in e.attrib:
            bare = name.split("}", 1)[-1]
            if bare == "href" or bare.lower().startswith("on"):
                raise SvgError("attribute %r on <%s>" % (name, local(e)))
    return root


def by_class(root, tag, cls):
    return [e for e in root.iter("{%s}%s" % (SVG_NS, tag)) if e.get("class") == cls]


def text_of(element):
    return "".join(element.itertext())


def points(polyline):
    return [tuple(float(v) for v in p.split(",")) for p in polyline.get("points", "").split()]


def centre(element):
    """(x, y): the middle of the bounding box of a circle, rect or polygon."""
    kind = local(element)
    if kind == "circle":
        return float(element.get("cx")), float(element.get("cy"))
    if kind == "rect":
        return (float(element.get("x")) + float(element.get("width")) / 2,
                float(element.get("y")) + float(element.get("height")) / 2)
    if kind == "polygon":
        pts = points(element)
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        return (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
    raise SvgError("<%s> is not a marker" % kind)


def path_segments(d):
    """The 'Mx yVy' segments of a path: [(x, y0, y1)]."""
    segs = re.findall(r"M(-?[0-9.]+) (-?[0-9.]+)V(-?[0-9.]+)", d)
    if " ".join("M%s %sV%s" % s for s in segs) != d.strip():
        raise SvgError("path d %r is not a list of 'Mx yVy'" % d)
    return [tuple(float(v) for v in s) for s in segs]


def main(argv):
    if not argv:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    failed = 0
    for path in argv:
        try:
            root = read_svg(path)
        except (OSError, SvgError) as e:
            print("FAIL %s: %s" % (path, e))
            failed += 1
            continue
        print("PASS %s: %sx%s SVG, %d elements" % (path, root.get("width"), root.get("height"),
                                                  sum(1 for _ in root.iter())))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
