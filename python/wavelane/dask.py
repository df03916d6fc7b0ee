"""Encoding on a Dask cluster: many image files, or one large array chunk by chunk.

Dask schedules the work; wavelane adds nothing to it but tasks that are
safe to run twice. :func:`encode_files` makes one task per file, each
writing its output atomically (a temporary file renamed over the target
when complete), so a worker that dies mid-task leaves no partial output:
the scheduler reruns the task on another worker and the file appears
complete, byte for byte what a single process writes (the encoder is
deterministic and its bytes do not depend on the machine or the number
of threads). :func:`to_zarr` writes an array as a Zarr array coded with
:class:`wavelane.numcodecs.Wavelane`, one task per chunk; a chunk is
written whole or rewritten by the rerun task.

Usage, with a local cluster or any ``distributed`` scheduler::

    from distributed import Client, LocalCluster
    client = Client(LocalCluster(n_workers=4, threads_per_worker=1))
    wavelane.dask.encode_files(sorted(glob("scans/*.png")), "archive/",
                               client=client, lossless=True)
    wavelane.dask.to_zarr(big_array, "big.zarr", chunks=(1024, 1024),
                          client=client, lossless=True)

Each worker process codes with every core it has (the library's rayon
pool); with several workers per machine set ``RAYON_NUM_THREADS`` in
their environment to share the cores (``LocalCluster(...,
env={"RAYON_NUM_THREADS": "1"})``).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

from . import _wavelane

__all__ = ["encode_files", "output_paths", "to_zarr"]

PathLike = Union[str, "os.PathLike[str]"]


def output_paths(paths: Iterable[PathLike], out_dir: PathLike, suffix: str = ".wl") -> List[Path]:
    """The output of each input: ``out_dir / (stem + suffix)``.

    Two inputs with the same stem would write one output: a ``ValueError``.

    >>> [str(p) for p in output_paths(["a/x.png", "b/y.tif"], "out")]
    ['out/x.wl', 'out/y.wl']
    """
    out = [Path(out_dir) / (Path(p).stem + suffix) for p in paths]
    seen = set()
    for p in out:
        if p in seen:
            raise ValueError(f"two inputs would both write {p}")
        seen.add(p)
    return out


def _encode_one(src: str, dst: str, options: dict) -> int:
    return _wavelane.encode_file(src, dst, **options)


def encode_files(
    paths: Sequence[PathLike],
    out_dir: PathLike,
    *,
    client: Any = None,
    suffix: str = ".wl",
    retries: int = 2,
    **options: Any,
) -> List[Tuple[Path, int]]:
    """Encodes image files (PNG/PNM/TIFF) into ``out_dir``, one Dask task per file.

    ``options`` are those of :func:`wavelane.encode` (``lossless``,
    ``bpp``, ``psnr``, ``layers``, ``levels``, ``backend``). ``client`` is a
    ``distributed.Client`` (default: the current one). Returns
    ``(output path, bytes)`` per input, in order, once every file is
    written. A worker lost mid-run costs nothing but time: its tasks run
    again elsewhere (the scheduler's ``allowed-failures`` bounds how often);
    ``retries`` reruns a task that raised. An input that fails every try
    raises its error here.
    """
    from distributed import get_client

    client = client if client is not None else get_client()
    srcs = [os.fspath(p) for p in paths]
    dsts = output_paths(srcs, out_dir, suffix)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    # Check the options once here rather than in every task.
    _check_options(options)
    task = functools.partial(_encode_one, options=options)
    futures = client.map(
        task,
        srcs,
        [os.fspath(d) for d in dsts],
        key=[f"wavelane-encode-{i}-{os.path.basename(s)}" for i, s in enumerate(srcs)],
        pure=False,
        retries=retries,
    )
    sizes = client.gather(futures)
    return list(zip(dsts, sizes))


def _check_options(options: dict) -> None:
    import numpy as np

    known = {"lossless", "bpp", "psnr", "layers", "levels", "backend"}
    unknown = set(options) - known
    if unknown:
        raise ValueError(f"unknown encoder options {sorted(unknown)} (known: {sorted(known)})")
    probe = {k: v for k, v in options.items() if k not in ("levels", "backend")}
    _wavelane.encode(np.zeros((1, 1), np.uint8), backend="cpu", **probe)


def to_zarr(
    array: Any,
    store: Any,
    *,
    chunks: Tuple[int, ...],
    client: Any = None,
    zarr_format: int = 2,
    overwrite: bool = False,
    **options: Any,
) -> Any:
    """Writes ``array`` (numpy or Dask, H x W or H x W x C) to a Zarr array, one task per chunk.

    Chunks are coded with :class:`wavelane.numcodecs.Wavelane` (``options``
    as :func:`wavelane.encode`); ``chunks`` must be image-shaped (for
    H x W x C arrays, all C in one chunk). ``store`` is anything
    ``zarr.create_array`` takes that the workers reach (a path on a shared
    file system, an object-store URL). ``zarr_format`` 2 stores the codec as
    the ``compressor``, 3 as the ``serializer``. Runs on ``client`` (default:
    the current one, or Dask's local scheduler without one). Returns the
    Zarr array. The chunks are the bytes a single process writes.
    """
    import dask.array as da
    import numpy as np
    import zarr

    from .numcodecs import Wavelane

    _check_options(options)
    source = array if isinstance(array, da.Array) else da.from_array(np.asarray(array))
    if source.ndim == 3 and chunks[2:] != (source.shape[2],):
        raise ValueError(f"an H x W x C array needs all C={source.shape[2]} in each chunk, got chunks {chunks}")
    source = source.rechunk(chunks)
    if zarr_format == 2:
        codec_args = {"compressors": Wavelane(**options)}
    elif zarr_format == 3:
        from .zarr3 import Wavelane as Wavelane3

        options3 = {k: v for k, v in options.items() if v is not None}
        codec_args = {"serializer": Wavelane3(**options3), "compressors": None}
    else:
        raise ValueError(f"zarr_format={zarr_format} (2 or 3)")
    target = zarr.create_array(
        store,
        shape=source.shape,
        chunks=chunks,
        dtype=source.dtype,
        zarr_format=zarr_format,
        overwrite=overwrite,
        fill_value=0,
        **codec_args,
    )
    # Aligned chunks need no lock: each task writes whole chunks of its own.
    stored = da.store(source, target, lock=False, compute=False)
    if client is not None:
        client.compute(stored).result()
    else:
        stored.compute()
    return target
