#!/usr/bin/env python3
"""Encode a directory of images on a Dask cluster, then check every output.

    python python/examples/dask_encode.py IMAGES_DIR OUT_DIR [--workers 4]
    python python/examples/dask_encode.py IMAGES_DIR OUT_DIR --scheduler tcp://host:8786
    python python/examples/dask_encode.py --demo OUT_DIR      # makes its own images

Each file is one task (wavelane.dask.encode_files); a worker that dies is
replaced and its files are encoded again elsewhere, and every output is
written atomically, so OUT_DIR never holds a partial file. With --bpp the
files are lossy, else lossless. At the end every output is decoded and,
for lossless runs, compared with its input.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from distributed import Client, LocalCluster

import wavelane
import wavelane.dask

EXTENSIONS = {".png", ".pgm", ".ppm", ".pnm", ".tif", ".tiff"}


def demo_images(directory: Path, count: int = 16) -> list[Path]:
    """Smooth 16-bit gray images with noise, as binary PGM files."""
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:1024, 0:1024]
    paths = []
    for i in range(count):
        image = ((x * (i + 1) + y * 7) % 4096 + rng.integers(0, 64, x.shape)).astype(">u2")
        path = directory / f"demo{i:02}.pgm"
        path.write_bytes(b"P5 1024 1024 65535\n" + image.tobytes())
        paths.append(path)
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="?", type=Path, help="directory of PNG/PNM/TIFF images")
    parser.add_argument("out", type=Path, help="output directory for the .wl files")
    parser.add_argument("--demo", action="store_true", help="encode generated images instead of INPUTS")
    parser.add_argument("--workers", type=int, default=2, help="local worker processes (default 2)")
    parser.add_argument("--scheduler", help="address of a running scheduler instead of a local cluster")
    parser.add_argument("--bpp", type=float, help="lossy target in bits per pixel (default lossless)")
    args = parser.parse_args()

    if args.demo:
        paths = demo_images(Path(tempfile.mkdtemp(prefix="wavelane-demo-")))
    elif args.inputs is not None:
        paths = sorted(p for p in args.inputs.iterdir() if p.suffix.lower() in EXTENSIONS)
    else:
        parser.error("give INPUTS or --demo")
    if not paths:
        parser.error(f"no images in {args.inputs}")

    if args.scheduler:
        client = Client(args.scheduler)
    else:
        # One coding thread per worker process, so the workers share the cores.
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                               env={"RAYON_NUM_THREADS": "1"}, dashboard_address=None)
        client = Client(cluster)
    options = {"bpp": args.bpp} if args.bpp else {"lossless": True}
    start = time.perf_counter()
    written = wavelane.dask.encode_files(paths, args.out, client=client, **options)
    seconds = time.perf_counter() - start
    total = sum(size for _, size in written)
    print(f"{len(written)} files, {total} bytes in {seconds:.2f} s on {len(client.scheduler_info()['workers'])} workers")

    # Check: every output decodes, and is the file one process writes.
    with tempfile.TemporaryDirectory() as scratch:
        for (dst, _), src in zip(written, paths):
            wavelane.decode(dst.read_bytes())
            here = Path(scratch) / dst.name
            wavelane.encode_file(src, here, **options)
            if here.read_bytes() != dst.read_bytes():
                print(f"{dst}: differs from a single-process encode of {src}", file=sys.stderr)
                return 1
    print("every output decodes and equals a single-process encode")
    client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
