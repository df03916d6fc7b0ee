#!/usr/bin/env python3
"""Trains the codec's built-in "natural" probability-table presets and
regenerates their Rust source.

The corpus is the public-domain / CC0 sample images bundled with
scikit-image 0.26.0 (listed in CORPUS below with their licences; the
benchmark image, astronaut, is held out). Each is written as an 8-bit PNG
and its pixels are checked against the SHA-256 recorded here, so a
different scikit-image release cannot silently change the tables. Then

    wavelane train-lut --codec {lossless,lossy} --passes {2,3} corpus/*.png

writes core/data/bpc/natural-{lossless,lossy}-{2,3}pass.json, and
scripts/gen_bpc_tables.py turns every JSON into core/src/bpc/lut_*.rs.
The JSON and the generated source are committed: building and testing
never need this script, the corpus or the network.

Usage (from the repository root, after `cargo build --release -p wavelane-cli`):

    python3 -m venv /tmp/skvenv
    /tmp/skvenv/bin/pip install scikit-image==0.26.0
    scripts/train-natural-tables.py --python /tmp/skvenv/bin/python
"""

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "core", "data", "bpc")

# (file in skimage/data, licence as skimage's docstring states it,
#  SHA-256 of the 8-bit pixel bytes, row-major, channels interleaved).
CORPUS = [
    ("camera.png", "CC0 (Lav Varshney)",
     "5cb24482a53416f99052258be2b1ee38cd31c559a70c8a8b321cba231b332e21"),
    ("coffee.png", "CC0 (Rachel Michetti)",
     "0ce2b51640b9c95f19617f03eabf40c3f0368589cc1ee1190b70966165ac184f"),
    ("chelsea.png", "CC0 (Stefan van der Walt)",
     "416b729128bfb2c3d1eb69bf9b1734a796293abc17939267b2dc94f8a5784031"),
    ("rocket.jpg", "public domain (SpaceX)",
     "3d4435cc745752b7f9724df88c6e18817de3ce7e3d2d71c55f85f7831e68f197"),
    ("hubble_deep_field.jpg", "public domain (NASA)",
     "9a3ea9548188f81e63435188456e74de45a981ebeb791e265abe79a26d3b528b"),
    ("retina.jpg", "CC0 (Mikael Haggstrom)",
     "3670e389d0dae9f755cc1bb7e4da4c3d2cdf10eba2dc3060836d8d4b8024d860"),
    ("clock_motion.png", "public domain (Stefan van der Walt)",
     "ad313afa739ea86c00ce55d190f1fa284c1982e9bc70eb4c9b21ac29c5c7a85c"),
    ("brick.png", "CC0 (CC0Textures)",
     "664a145c5253f0d66db1a12776785f0ea35a44cc7447ffc933f6d6118dc58643"),
    ("grass.png", "CC0 (linolafett, DeviantArt)",
     "b18dae4c68bf850a7a7b28a29d1846c76be890665117b57fd125fe29c4d4ede6"),
    ("gravel.png", "CC0 (CC0Textures)",
     "3d51ad45f789cd8b98534b7af6bce774e499ead45421135afd757358c7230009"),
    ("cell.png", "CC0 (qpformat authors)",
     "dc464a59c68346fbe7a36fb75421d02a5e29780874b92efd3c920a319bfcb3b0"),
]

EXPORT = r"""
import hashlib, os, sys
import numpy as np
import skimage, skimage.io
src = os.path.join(os.path.dirname(skimage.__file__), "data")
out = sys.argv[1]
for name in sys.argv[2:]:
    a = skimage.io.imread(os.path.join(src, name))
    assert a.dtype == np.uint8 and a.ndim in (2, 3), (name, a.dtype, a.shape)
    if a.ndim == 3:
        a = a[:, :, :3]
    a = np.ascontiguousarray(a)
    dst = os.path.join(out, os.path.splitext(name)[0] + ".png")
    skimage.io.imsave(dst, a, check_contrast=False)
    print(name, dst, hashlib.sha256(a.tobytes()).hexdigest(), skimage.__version__)
"""


def export(python, out):
    names = [n for n, _, _ in CORPUS]
    r = subprocess.run([python, "-c", EXPORT, out, *names], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"train-natural-tables: exporting the corpus failed:\n{r.stderr}")
    paths, bad = [], []
    for line, (name, _, want) in zip(r.stdout.splitlines(), CORPUS):
        got_name, path, digest, version = line.split()
        assert got_name == name
        if version != "0.26.0":
            sys.exit(f"train-natural-tables: scikit-image {version}; the corpus is 0.26.0's")
        if digest != want:
            bad.append(f"{name}: pixels {digest}, expected {want}")
        paths.append(path)
    if bad:
        sys.exit("train-natural-tables: corpus differs:\n" + "\n".join(bad))
    return paths


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", required=True, help="a Python with scikit-image 0.26.0")
    p.add_argument("--wavelane", default=os.path.join(ROOT, "target/release/wavelane"))
    p.add_argument("--corpus", help="keep the exported PNGs here (default: a temporary folder)")
    a = p.parse_args()
    out = a.corpus or tempfile.mkdtemp(prefix="wavelane-corpus-")
    os.makedirs(out, exist_ok=True)
    images = export(a.python, out)
    for path in ("lossless", "lossy"):
        for passes in (2, 3):
            dst = os.path.join(DATA, f"natural-{path}-{passes}pass.json")
            cmd = [a.wavelane, "train-lut", "--codec", path, "--passes", str(passes),
                   "-o", dst, *images]
            if subprocess.run(cmd).returncode != 0:
                sys.exit(f"train-natural-tables: {' '.join(cmd)} failed")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_bpc_tables.py")], check=True)


if __name__ == "__main__":
    main()
