"""The synthetic chunk images of zarr_bench.py, in a module of their own.

Dask pickles a function of the script's ``__main__`` by value, globals
and all, so a cache kept there arrives empty with every task and each
chunk regenerated its image: the benchmark then timed numpy, not the
codecs. Functions of an importable module travel by reference instead;
zarr_bench.py ships this file to the workers (``Client.upload_file``)
and fills each worker's cache (``warm``) before its clock starts.
"""

from __future__ import annotations

import numpy as np

_TILES: dict = {}


def tile(index: int, side: int) -> np.ndarray:
    """Chunk image `index`: Gaussian blobs on a slow background, with noise."""
    rng = np.random.default_rng(1000 + index)
    y, x = np.mgrid[0:side, 0:side].astype(np.float32)
    image = 300 + 200 * np.sin(x / side * 3 + index) * np.cos(y / side * 2)
    for _ in range(40):
        cy, cx = rng.uniform(0, side, 2)
        r = rng.uniform(4, side / 12)
        image += rng.uniform(300, 3000) * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * r * r))
    image += rng.normal(0, 12, image.shape)
    return np.clip(image, 0, 4095).astype(np.uint16)


def cached(key: int, side: int) -> np.ndarray:
    """Tile `key`, made once per process."""
    if (key, side) not in _TILES:
        _TILES[(key, side)] = tile(key, side)
    return _TILES[(key, side)]


def warm(tiles: int, side: int) -> int:
    """Makes every tile of this process's cache; returns how many there are."""
    for key in range(tiles):
        cached(key, side)
    return len(_TILES)


def block(block_info=None, *, tiles: int, side: int):
    """The chunk at `block_info`'s location (a Dask map_blocks function)."""
    i, j = block_info[None]["chunk-location"]
    return cached((i * 7 + j * 3) % tiles, side)
