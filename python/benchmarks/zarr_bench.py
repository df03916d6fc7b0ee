#!/usr/bin/env python3
"""Writing a large uint16 Zarr array through Dask: wavelane against JPEG 2000 and Blosc+Zstd.

    .venv/bin/python python/benchmarks/zarr_bench.py                    # 1 GiB, 1/2/4 workers
    .venv/bin/python python/benchmarks/zarr_bench.py --gib 0.25 --workers 1,2
    .venv/bin/python python/benchmarks/zarr_bench.py --overhead-only    # the Python call overhead

Every codec writes the same array (zarr format 2, chunks of --chunk
pixels square) into a fresh directory store with 1, 2 and 4 Dask worker
processes of one thread each; the figure is the array's bytes over the
wall time of the write (the cluster is started before the clock), and the
ratio is the array's bytes over the bytes stored. Each worker codes on one
thread (RAYON_NUM_THREADS=1, Blosc nthreads=1, OpenJPEG numthreads=1), so
the worker count is the parallelism. After each write a sample of chunks
is read back and compared with the source (every codec here is lossless).

The array is synthetic microscopy-like data, 12 significant bits: smooth
blobs on a background with noise, tiled from --tiles distinct chunk
images (zarr_tiles.py), which every worker makes before the clock starts
(so the figure is the codecs', not the data generation's).

--overhead-only measures what the Python call adds to the Rust library on
512 x 512 chunks: the wall time of ``wavelane.encode`` and
``wavelane.decode`` against the coder's own time (its report's total,
measured inside the Rust call), the median over many calls on one thread
of each call's difference (overhead()).

Needs python/requirements-test.txt and python/requirements-bench.txt
(imagecodecs) in the venv, and the package built with --release
(WAVELANE_PYTHON_RELEASE=1 scripts/setup.sh --test).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SIDE = 512

# The chunk images come from a module of their own, so that Dask ships the
# functions by reference and each worker keeps its cache (zarr_tiles.py).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from zarr_tiles import block, tile, warm  # noqa: E402

TILES_MODULE = Path(__file__).resolve().parent / "zarr_tiles.py"


def codecs(names):
    from numcodecs import Blosc

    import wavelane

    made = {}
    for name in names:
        if name == "wavelane":
            made[name] = wavelane.Wavelane(lossless=True, backend="cpu")
        elif name == "jpeg2000":
            try:
                from imagecodecs.numcodecs import Jpeg2k, register_codecs
            except ImportError:
                print("imagecodecs is not installed: no JPEG 2000 figures", file=sys.stderr)
                continue
            # Reading the array back finds the codec by its id.
            register_codecs()
            made[name] = Jpeg2k(level=0, reversible=True, codecformat="j2k", numthreads=1)
        elif name == "blosc-zstd":
            made[name] = Blosc(cname="zstd", clevel=5, shuffle=Blosc.BITSHUFFLE)
        else:
            raise SystemExit(f"unknown codec {name}")
    return made


def run_write(client, shape, chunk, tiles, codec, store):
    import dask.array as da
    import zarr

    rows, cols = shape[0] // chunk, shape[1] // chunk
    source = da.map_blocks(
        block, dtype=np.uint16, chunks=((chunk,) * rows, (chunk,) * cols), tiles=tiles, side=chunk,
        meta=np.empty((0, 0), np.uint16),
    )
    target = zarr.create_array(store, shape=shape, chunks=(chunk, chunk), dtype="uint16",
                               zarr_format=2, compressors=codec, fill_value=0, overwrite=True)
    stored = da.store(source, target, lock=False, compute=False)
    start = time.perf_counter()
    client.compute(stored).result()
    seconds = time.perf_counter() - start
    # Check a sample of chunks against their source.
    back = zarr.open_array(store, mode="r")
    for i, j in [(0, 0), (rows - 1, cols - 1), (rows // 2, cols // 3)]:
        want = block({None: {"chunk-location": (i, j)}}, tiles=tiles, side=chunk)
        got = back[i * chunk:(i + 1) * chunk, j * chunk:(j + 1) * chunk]
        if not np.array_equal(got, want):
            raise SystemExit(f"chunk ({i}, {j}) does not read back")
    stored_bytes = sum(p.stat().st_size for p in Path(store).iterdir() if not p.name.startswith("."))
    return seconds, stored_bytes


def overhead(reps: int) -> dict:
    """What the Python call adds to the library's own time, 512 x 512, encode and decode.

    Each call returns the coder's own seconds (its report's total, timed
    inside the library function: ``_encode_seconds``/``_decode_seconds``);
    the overhead is the median over calls of (the call's wall time in
    Python - that call's own seconds), over the median own seconds. Paired
    per call, so that a slow call (the machine is shared) counts against
    itself, not against the median of the other series. What it charges
    the binding: checking the arguments, copying the array, handing the
    work to the thread that codes and back, and making the result.
    """
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    from wavelane import _wavelane

    results = {}
    for name, chunk in [("uint16 gray", tile(0, SIDE)), ("uint8 gray", (tile(1, SIDE) >> 4).astype(np.uint8))]:
        data = _wavelane.encode(chunk, lossless=True, backend="cpu")
        for _ in range(5):
            _wavelane.encode(chunk, lossless=True, backend="cpu")
            _wavelane.decode(data, backend="cpu")
        calls = {"encode": [], "decode": []}
        for _ in range(reps):
            # Interleaved, so that both see the same load.
            start = time.perf_counter()
            _, inside = _wavelane._encode_seconds(chunk, lossless=True, backend="cpu")
            calls["encode"].append((time.perf_counter() - start, inside))
            start = time.perf_counter()
            _, inside = _wavelane._decode_seconds(data, backend="cpu")
            calls["decode"].append((time.perf_counter() - start, inside))
        for op, pairs in calls.items():
            wall = statistics.median(w for w, _ in pairs)
            inside = statistics.median(i for _, i in pairs)
            added = statistics.median(w - i for w, i in pairs)
            results[f"{name} {op}"] = {"python_call_ms": wall * 1e3, "rust_ms": inside * 1e3,
                                       "added_us": added * 1e6, "overhead_percent": added / inside * 100}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gib", type=float, default=1.0, help="array size in GiB (default 1)")
    parser.add_argument("--chunk", type=int, default=1024, help="chunk side in pixels (default 1024)")
    parser.add_argument("--workers", default="1,2,4", help="Dask worker processes to try (default 1,2,4)")
    parser.add_argument("--codecs", default="wavelane,jpeg2000,blosc-zstd")
    parser.add_argument("--tiles", type=int, default=16, help="distinct chunk images (default 16)")
    parser.add_argument("--overhead-only", action="store_true")
    parser.add_argument("--reps", type=int, default=200, help="calls for the overhead figure")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()

    report = {"overhead_512": overhead(args.reps)}
    if not args.overhead_only:
        from distributed import Client, LocalCluster

        chunk = args.chunk
        pixels = args.gib * 2**30 / 2
        cols = max(1, round(np.sqrt(pixels / 2) / chunk)) * 2
        rows = max(1, round(pixels / (cols * chunk * chunk)))
        shape = (rows * chunk, cols * chunk)
        nbytes = shape[0] * shape[1] * 2
        report["array"] = {"shape": shape, "chunks": [chunk, chunk], "bytes": nbytes}
        rows_out = []
        scratch = Path(tempfile.mkdtemp(prefix="zarr-bench-"))
        try:
            for workers in [int(w) for w in args.workers.split(",")]:
                env = {"RAYON_NUM_THREADS": "1", "BLOSC_NTHREADS": "1", "OMP_NUM_THREADS": "1"}
                with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None, env=env) as cluster, Client(cluster) as client:
                    client.run(lambda: __import__("numcodecs").blosc.set_nthreads(1))
                    client.upload_file(str(TILES_MODULE))
                    client.run(warm, args.tiles, chunk)
                    for name, codec in codecs(args.codecs.split(",")).items():
                        store = scratch / f"{name}-{workers}.zarr"
                        seconds, stored = run_write(client, shape, chunk, args.tiles, codec, store)
                        shutil.rmtree(store)
                        row = {"codec": name, "workers": workers, "seconds": seconds,
                               "MB_per_s": nbytes / seconds / 1e6, "ratio": nbytes / stored}
                        rows_out.append(row)
                        if not args.json:
                            print(f"{name:12} {workers} worker(s): {row['MB_per_s']:7.1f} MB/s, "
                                  f"ratio {row['ratio']:.3f} ({seconds:.1f} s)", flush=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        report["writes"] = rows_out
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for name, r in report["overhead_512"].items():
            print(f"512x512 {name}: Python call {r['python_call_ms']:.3f} ms, inside the library "
                  f"{r['rust_ms']:.3f} ms, added {r['added_us']:.0f} us, overhead {r['overhead_percent']:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
