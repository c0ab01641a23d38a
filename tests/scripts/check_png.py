#!/usr/bin/env python3
"""check_png: reads an RGB PNG written by scripts/plot-bench and checks its structure (stdlib only).

usage: check_png.py PNG WIDTH HEIGHT

Checks the signature, IHDR (size, bit depth 8, colour type 2 = RGB, no
interlace), every chunk's CRC, IEND last, and that the IDAT data decompresses
to height * (1 + 3 * width) bytes with filter type 0 on every row. As a module:
read_png(path) returns (width, height, rows of (r, g, b) tuples) or raises
PngError; the chart checks live in test_plot_bench.py.
"""
import struct
import sys
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"


class PngError(Exception):
    pass


def read_chunks(data):
    if data[:8] != SIGNATURE:
        raise PngError("bad signature %r" % data[:8])
    pos, chunks = 8, []
    while pos < len(data):
        if pos + 8 > len(data):
            raise PngError("truncated chunk header at byte %d" % pos)
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc_bytes = data[pos + 8 + length:pos + 12 + length]
        if len(body) != length or len(crc_bytes) != 4:
            raise PngError("truncated %r chunk at byte %d" % (kind, pos))
        (crc,) = struct.unpack(">I", crc_bytes)
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise PngError("bad CRC in %r chunk at byte %d" % (kind, pos))
        chunks.append((kind, body))
        pos += 12 + length
    return chunks


def read_png(path):
    with open(path, "rb") as f:
        chunks = read_chunks(f.read())
    if not chunks or chunks[0][0] != b"IHDR" or len(chunks[0][1]) != 13:
        raise PngError("first chunk is not a 13-byte IHDR")
    if chunks[-1] != (b"IEND", b""):
        raise PngError("last chunk is not an empty IEND")
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if (depth, colour, compression, filtering, interlace) != (8, 2, 0, 0, 0):
        raise PngError("IHDR: bit depth %d colour type %d compression %d filter %d interlace %d, "
                       "expected 8 2 0 0 0" % (depth, colour, compression, filtering, interlace))
    idat = b"".join(body for kind, body in chunks if kind == b"IDAT")
    if not idat:
        raise PngError("no IDAT chunk")
    try:
        raw = zlib.decompress(idat)
    except zlib.error as e:
        raise PngError("IDAT does not decompress: %s" % e)
    stride = 1 + 3 * width
    if len(raw) != height * stride:
        raise PngError("IDAT holds %d bytes, expected height*(1+3*width) = %d" % (len(raw), height * stride))
    rows = []
    for y in range(height):
        line = raw[y * stride:(y + 1) * stride]
        if line[0] != 0:
            raise PngError("row %d has filter type %d, expected 0" % (y, line[0]))
        rows.append([tuple(line[1 + 3 * x:4 + 3 * x]) for x in range(width)])
    return width, height, rows


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        width, height, _ = read_png(argv[0])
    except (OSError, PngError) as e:
        print("FAIL %s: %s" % (argv[0], e))
        return 1
    if (width, height) != (int(argv[1]), int(argv[2])):
        print("FAIL %s: %dx%d, expected %sx%s" % (argv[0], width, height, argv[1], argv[2]))
        return 1
    print("PASS %s: %dx%d RGB" % (argv[0], width, height))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
