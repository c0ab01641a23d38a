#!/usr/bin/env python3
"""A stand-in program for the ozcrt-ab test: prints numbers and writes text, CSV and .npy files into argv[1].

The "emulated" run (OZCRT_COMPARE=1, set by ozcrt-ab) perturbs every value by
a relative 1e-9, as emulation would. AB_TEXT_CHANGE=1 also changes a word in
that run. AB_FAKE_REPORT=path: copied to OZCRT_REPORT_FILE, standing in for
the shim's report. Exit 3 when LD_PRELOAD and OZCRT_COMPARE disagree, 4 when
a libozcrt entry leaked into the native run, 5 when the emulated run does not
see the mode AB_EXPECT_MODE (as "OZCRT_MODE" or "OZCRT_MODE OZCRT_BITS")."""
import os
import shutil
import struct
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
emulated = os.environ.get("OZCRT_COMPARE") == "1"
preload = os.environ.get("LD_PRELOAD", "")
if emulated != bool(os.environ.get("AB_EXPECT_LIB", "") and os.environ["AB_EXPECT_LIB"] in preload):
    sys.exit(3)
if "libozcrt" in preload:
    sys.exit(4)
want_mode = os.environ.get("AB_EXPECT_MODE")
if emulated and want_mode and " ".join(os.environ.get(v, "") for v in ("OZCRT_MODE", "OZCRT_BITS")).strip() != want_mode:
    sys.exit(5)
f = 1.0 + 1e-9 if emulated else 1.0


def write_npy(path, descr, fmt, shape, values, fortran=False):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, fortran, "".join("%d, " % s for s in shape) if len(shape) == 1 else ", ".join(map(str, shape)))
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as fh:
        fh.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        fh.write(struct.pack("<%d%s" % (len(values), fmt), *values))


word = "converged" if not (emulated and os.environ.get("AB_TEXT_CHANGE") == "1") else "diverged"
print("solver %s after 12 iterations" % word)
print("energy = %.15e   residual %.6e" % (-1.2345678901234 * f, 3.5e-12 * f))
print("hex 0x3ff0 stays text, x86_64 stays equal")

with open(os.path.join(out, "table.csv"), "w") as fh:
    fh.write("step,energy,label\n")
    for i in range(5):
        fh.write("%d,%.17g,run%d\n" % (i, (i + 0.5) * 100.0 * f, i))

rows, cols = 4, 3
vals = [(r * cols + c + 1) * 0.25 * f for r in range(rows) for c in range(cols)]
write_npy(os.path.join(out, "data.npy"), "<f8", "d", (rows, cols), vals)
write_npy(os.path.join(out, "vec.npy"), "<f4", "f", (6,), [i * 1.5 * f for i in range(6)])
write_npy(os.path.join(out, "idx.npy"), "<i8", "q", (3,), [7, 8, 9])

with open(os.path.join(out, "log.txt"), "w") as fh:
    fh.write("mean %.12f\nmax %.12f\n" % (0.75 * f, 3.0 * f))

report = os.environ.get("OZCRT_REPORT_FILE")
fake = os.environ.get("AB_FAKE_REPORT")
if emulated and report and fake:
    shutil.copyfile(fake, report)
