#!/usr/bin/env python3
"""Lossy PSNR of `wavelane encode --bpp` against OpenJPEG at the same rate,
on the images of scripts/bench-codec.py (astronaut 384² RGB and gray, the
1536² mirror tiling), without the timing runs: the quick loop for rate
control and quantization experiments (docs/history/codec.md).

Usage: scripts/bench-lossy.py [--wavelane PATH] [--rates 0.5,1,2]
       [--images rgb,gray,big] [-- EXTRA wavelane encode ARGS...]

Prints per image and rate: wavelane bytes and PSNR, OpenJPEG's PSNR (cached
in $TMPDIR/wavelane-bench-lossy/, it never changes) and the difference.
PSNR is exact and deterministic, so the machine's load does not matter.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
bench = __import__("bench-codec")

ROOT = bench.ROOT
CACHE = os.path.join(tempfile.gettempdir(), "wavelane-bench-lossy")


def prepare(wl):
    """The three benchmark images (made once, like bench-codec.py does)."""
    os.makedirs(CACHE, exist_ok=True)
    rgb = os.path.join(CACHE, "astronaut-rgb.ppm")
    big = os.path.join(CACHE, "astronaut-x4-rgb.ppm")
    gray = os.path.join(CACHE, "astronaut-gray.pgm")
    if not all(os.path.exists(p) for p in (rgb, big, gray)):
        png = os.path.join(ROOT, "cli/assets/astronaut-384.png")
        bench.run([wl, "encode", png, "-o", f"{CACHE}/x.wl", "--lossless", *bench.CPU])
        bench.run([wl, "decode", f"{CACHE}/x.wl", "-o", rgb, *bench.CPU])
        bench.mirror_tile(rgb, big, 4)
        w, h, _, px = bench.read_pnm(rgb)
        with open(gray, "wb") as f:
            luma = bytes(
                min(255, (299 * px[i] + 587 * px[i + 1] + 114 * px[i + 2] + 500) // 1000)
                for i in range(0, len(px), 3)
            )
            f.write(f"P5\n{w} {h}\n255\n".encode() + luma)
    return {"rgb": rgb, "gray": gray, "big": big}


def openjpeg_psnr(name, src, bpp, channels):
    path = os.path.join(CACHE, f"opj-{name}-{bpp}.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    ext = os.path.splitext(src)[1]
    j2k, out = f"{CACHE}/r.j2k", f"{CACHE}/opj-out{ext}"
    bench.run([bench.need("opj_compress"), "-i", src, "-o", j2k, "-I", "-r", f"{8 * channels / bpp}"])
    bench.run([bench.need("opj_decompress"), "-i", j2k, "-o", out])
    r = {"bytes": os.path.getsize(j2k), "psnr": bench.psnr(src, out)}
    with open(path, "w") as f:
        json.dump(r, f)
    return r


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--wavelane", default=os.path.join(ROOT, "target/release/wavelane"))
    p.add_argument("--rates", default="0.5,1,2")
    p.add_argument("--images", default="rgb,gray,big")
    p.add_argument("extra", nargs="*", help="more `wavelane encode` arguments (after --)")
    a = p.parse_args()
    images = prepare(a.wavelane)
    tmp = tempfile.mkdtemp(prefix="wavelane-lossy-")
    diffs = []
    for name in a.images.split(","):
        src = images[name]
        w, h, c, _ = bench.read_pnm(src)
        ext = os.path.splitext(src)[1]
        for bpp in [float(r) for r in a.rates.split(",")]:
            wl_file, out = f"{tmp}/r.wl", f"{tmp}/out{ext}"
            bench.run([a.wavelane, "encode", src, "-o", wl_file, "--bpp", str(bpp), *bench.CPU, *a.extra])
            bench.run([a.wavelane, "decode", wl_file, "-o", out, *bench.CPU])
            size, q = os.path.getsize(wl_file), bench.psnr(src, out)
            opj = openjpeg_psnr(name, src, bpp, c)
            diffs.append(q - opj["psnr"])
            print(f"{name:5} {bpp:4} wavelane {size:7} B {q:6.2f} dB  openjpeg {opj['bytes']:7} B "
                  f"{opj['psnr']:6.2f} dB  diff {q - opj['psnr']:+.2f}", flush=True)
    print(f"mean diff {sum(diffs) / len(diffs):+.3f} dB")
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
