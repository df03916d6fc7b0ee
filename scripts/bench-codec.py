#!/usr/bin/env python3
"""Side-by-side comparison of `wavelane encode/decode` (CPU backend) with
OpenJPEG (`opj_compress`/`opj_decompress`, JPEG 2000 Part 1) and OpenJPH
(`ojph_compress`/`ojph_expand`, HTJ2K) on the same images, as reported in
docs/history/codec.md:

- lossless: file bytes, encode and decode wall time (best of --repeat runs);
- lossy at 0.5, 1 and 2 bpp: file bytes and PSNR (OpenJPH has no rate
  control, so it is left out of the lossy rows).

Usage: scripts/bench-codec.py [--wavelane PATH] [--repeat N] [--json OUT]
       scripts/bench-codec.py --write-images DIR  (the images only)
(default binary: target/release/wavelane, built with
`cargo build --release -p wavelane-cli`). Every tool must be installed: a
missing one is an error, not a skipped row. Images: the built-in demo image
(cli/assets/astronaut-384.png) in RGB and gray, and a 1536x1536 mirror
tiling of it (speed on a larger image); all are converted to PPM/PGM with
wavelane itself.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATES = [0.5, 1.0, 2.0]
# The comparison is of the CPU backend (--backend auto would pick a GPU).
CPU = ["--backend", "cpu"]


def need(tool):
    path = shutil.which(tool)
    if path is None:
        sys.exit(f"bench-codec: `{tool}` is not installed (./scripts/setup.sh installs it)")
    return path


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.exit(f"bench-codec: {' '.join(cmd)} failed:\n{r.stderr.decode()}")


def best_time(cmd, repeat):
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        run(cmd)
        best = min(best, time.perf_counter() - t)
    return best


def read_pnm(path):
    """Binary P5/P6 with maxval <= 255: (width, height, channels, bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos : pos + 1].isspace():
            pos += 1
        if data[pos : pos + 1] == b"#":
            while data[pos : pos + 1] not in (b"\n", b""):
                pos += 1
            continue
        start = pos
        while not data[pos : pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    magic, w, h, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    if maxval > 255:
        sys.exit(f"bench-codec: {path}: only 8-bit PNM is compared")
    channels = {b"P5": 1, b"P6": 3}[magic]
    return w, h, channels, data[pos + 1 : pos + 1 + w * h * channels]


def psnr(a_path, b_path):
    a, b = read_pnm(a_path), read_pnm(b_path)
    if a[:3] != b[:3]:
        sys.exit(f"bench-codec: {a_path} and {b_path} differ in size")
    se = sum((x - y) * (x - y) for x, y in zip(a[3], b[3]))
    return math.inf if se == 0 else 10 * math.log10(255 * 255 * len(a[3]) / se)


def mirror_tile(src, dst, times):
    """Writes a (w*times)x(h*times) mirror tiling of a PNM (no hard seams)."""
    w, h, c, px = read_pnm(src)
    rows = []
    for y in range(h):
        row = px[y * w * c : (y + 1) * w * c]
        flipped = b"".join(row[x * c : (x + 1) * c] for x in reversed(range(w)))
        rows.append(b"".join(row if k % 2 == 0 else flipped for k in range(times)))
    out = []
    for k in range(times):
        out.extend(rows if k % 2 == 0 else reversed(rows))
    magic = b"P6" if c == 3 else b"P5"
    with open(dst, "wb") as f:
        f.write(magic + f"\n{w * times} {h * times}\n255\n".encode() + b"".join(out))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--wavelane", default=os.path.join(ROOT, "target/release/wavelane"))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--json", help="also write the results here")
    p.add_argument("--write-images", metavar="DIR",
                   help="only write the three images to DIR (for scripts/bench-lossless-speed.sh)")
    a = p.parse_args()
    wl = a.wavelane
    if not os.access(wl, os.X_OK):
        sys.exit(f"bench-codec: {wl} not found: run `cargo build --release -p wavelane-cli`")
    opj_c, opj_d = need("opj_compress"), need("opj_decompress")
    ojph_c, ojph_d = need("ojph_compress"), need("ojph_expand")
    tmp = tempfile.mkdtemp(prefix="wavelane-bench-")
    png = os.path.join(ROOT, "cli/assets/astronaut-384.png")
    images = {}
    rgb = os.path.join(tmp, "astronaut-rgb.ppm")
    run([wl, "encode", png, "-o", os.path.join(tmp, "x.wl"), "--lossless"])
    run([wl, "decode", os.path.join(tmp, "x.wl"), "-o", rgb])
    images["astronaut 384x384 RGB"] = rgb
    big = os.path.join(tmp, "astronaut-x4-rgb.ppm")
    mirror_tile(rgb, big, 4)
    images["astronaut mirror-tiled 1536x1536 RGB"] = big
    # Gray: the luma of the RGB image, rounded.
    w, h, _, px = read_pnm(rgb)
    gray = os.path.join(tmp, "astronaut-gray.pgm")
    with open(gray, "wb") as f:
        luma = bytes(
            min(255, (299 * px[i] + 587 * px[i + 1] + 114 * px[i + 2] + 500) // 1000)
            for i in range(0, len(px), 3)
        )
        f.write(f"P5\n{w} {h}\n255\n".encode() + luma)
    images["astronaut 384x384 gray"] = gray
    if a.write_images:
        os.makedirs(a.write_images, exist_ok=True)
        for src, name in [(rgb, "rgb.ppm"), (gray, "gray.pgm"), (big, "big.ppm")]:
            shutil.copy(src, os.path.join(a.write_images, name))
        print(f"wrote rgb.ppm, gray.pgm and big.ppm to {a.write_images}")
        return

    results = []
    for name, src in images.items():
        ext = os.path.splitext(src)[1]
        w, h, c, _ = read_pnm(src)
        pixels = w * h
        row = {"image": name, "width": w, "height": h, "components": c}
        out = os.path.join(tmp, "out" + ext)
        # Lossless.
        tools = {
            "wavelane": ([wl, "encode", src, "-o", f"{tmp}/l.wl", "--lossless", *CPU], f"{tmp}/l.wl",
                         [wl, "decode", f"{tmp}/l.wl", "-o", out, *CPU]),
            "openjpeg": ([opj_c, "-i", src, "-o", f"{tmp}/l.j2k"], f"{tmp}/l.j2k",
                         [opj_d, "-i", f"{tmp}/l.j2k", "-o", out]),
            "openjph": ([ojph_c, "-i", src, "-o", f"{tmp}/l.j2c", "-reversible", "true"],
                        f"{tmp}/l.j2c", [ojph_d, "-i", f"{tmp}/l.j2c", "-o", out]),
        }
        lossless = {}
        for tool, (enc, file, dec) in tools.items():
            te = best_time(enc, a.repeat)
            td = best_time(dec, a.repeat)
            exact = psnr(src, out) == math.inf
            if not exact:
                sys.exit(f"bench-codec: {tool} lossless is not exact on {name}")
            lossless[tool] = {
                "bytes": os.path.getsize(file),
                "bpp": os.path.getsize(file) * 8 / pixels,
                "encode_s": te,
                "decode_s": td,
            }
        row["lossless"] = lossless
        lossy = []
        for bpp in RATES:
            entry = {"bpp": bpp}
            ratio = 8 * c / bpp
            for tool, enc, file, dec in [
                ("wavelane", [wl, "encode", src, "-o", f"{tmp}/r.wl", "--bpp", str(bpp), *CPU],
                 f"{tmp}/r.wl", [wl, "decode", f"{tmp}/r.wl", "-o", out, *CPU]),
                ("openjpeg", [opj_c, "-i", src, "-o", f"{tmp}/r.j2k", "-I", "-r", f"{ratio}"],
                 f"{tmp}/r.j2k", [opj_d, "-i", f"{tmp}/r.j2k", "-o", out]),
            ]:
                te = best_time(enc, a.repeat)
                td = best_time(dec, a.repeat)
                entry[tool] = {
                    "bytes": os.path.getsize(file),
                    "bpp": os.path.getsize(file) * 8 / pixels,
                    "psnr_db": psnr(src, out),
                    "encode_s": te,
                    "decode_s": td,
                }
            lossy.append(entry)
        row["lossy"] = lossy
        results.append(row)

    for r in results:
        print(f"\n{r['image']}")
        ll = r["lossless"]
        print("  lossless     bytes     bpp   enc ms   dec ms")
        for tool, v in ll.items():
            print(f"  {tool:9} {v['bytes']:8} {v['bpp']:7.3f} {v['encode_s']*1e3:8.1f} {v['decode_s']*1e3:8.1f}")
        wlb = ll["wavelane"]
        print(f"  size wavelane/openjpeg {wlb['bytes'] / ll['openjpeg']['bytes']:.4f}, "
              f"encode speed vs openjpeg {ll['openjpeg']['encode_s'] / wlb['encode_s']:.2f}x, "
              f"vs openjph {ll['openjph']['encode_s'] / wlb['encode_s']:.2f}x")
        print("  lossy   tool       bytes     bpp  PSNR dB   enc ms   dec ms")
        for e in r["lossy"]:
            for tool in ("wavelane", "openjpeg"):
                v = e[tool]
                print(f"  {e['bpp']:5} {tool:9} {v['bytes']:8} {v['bpp']:7.3f} {v['psnr_db']:8.2f} "
                      f"{v['encode_s']*1e3:8.1f} {v['decode_s']*1e3:8.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
